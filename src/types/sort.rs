//! SORT and SORT_RO over any [`Source`]: the elements of a list, set or sorted
//! set, ordered by themselves or by the keys a BY pattern names, shown as
//! themselves or as the keys GET patterns name. The rules are Redis 7.0's
//! (`sort.c`): numeric weights read by C `strtod`, numeric ties broken by
//! comparing the elements bytewise, ALPHA by the locale's `strcoll` (bytewise
//! when the result is stored), a missing BY weight counted as 0 (or first,
//! with ALPHA), and `BY` without a `*` meaning "do not sort".
//!
//! The caller parses the command (`cmd::sort`); the STORE half (a list written
//! inside apply) is [`super::list::store_list`].

use std::cmp::Ordering;

use bytes::Bytes;

use crate::protocol::cursor::{parse_f64_sort, strcoll};
use crate::storage::keys::KeyType;
use crate::storage::{Cf, StorageError};

use super::coll::{each, Found};
use super::view::Source;
use super::zset::{query, Query, ZRange};
use super::{hash, list, notify, string, ApplyCtx, ApplyResult, ReadResult, TypeError};
use crate::pb;
use crate::protocol::Reply;

/// Redis's error when a weight is not a number.
pub const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// A parsed SORT.
#[derive(Debug, Clone, Default)]
pub struct SortSpec {
    pub desc: bool,
    pub alpha: bool,
    /// LIMIT offset count (Redis's defaults: 0, -1).
    pub offset: i64,
    pub count: i64,
    /// The BY pattern, when it has a `*` (one without means `dontsort`).
    pub by: Option<Bytes>,
    /// BY without a `*`: keep the collection's own order.
    pub dontsort: bool,
    /// GET patterns, in order.
    pub gets: Vec<Bytes>,
    /// The STORE destination.
    pub store: Option<Bytes>,
}

impl SortSpec {
    pub fn new() -> SortSpec {
        SortSpec { count: -1, ..Default::default() }
    }

    /// True if the patterns read keys other than the one sorted (BY with a
    /// `*`, or a GET other than `#`).
    pub fn reads_other_keys(&self) -> bool {
        self.by.is_some() || self.gets.iter().any(|g| !is_hash_pattern(g))
    }
}

impl From<&pb::Sort> for SortSpec {
    fn from(op: &pb::Sort) -> SortSpec {
        SortSpec {
            desc: op.desc,
            alpha: op.alpha,
            offset: op.offset,
            count: op.count,
            by: op.has_by.then(|| op.by.clone()),
            dontsort: op.dontsort,
            gets: op.gets.clone(),
            store: op.has_store.then(|| op.store.clone()),
        }
    }
}

impl SortSpec {
    /// The operation that sorts `key` as this spec says, inside apply.
    pub fn to_op(&self, key: Bytes) -> pb::Sort {
        pb::Sort {
            key,
            by: self.by.clone().unwrap_or_default(),
            has_by: self.by.is_some(),
            dontsort: self.dontsort,
            offset: self.offset,
            count: self.count,
            gets: self.gets.clone(),
            desc: self.desc,
            alpha: self.alpha,
            store: self.store.clone().unwrap_or_default(),
            has_store: self.store.is_some(),
        }
    }
}

/// SORT's reply without STORE: the items, a missing one as nil.
pub fn items_reply(items: Vec<Option<Bytes>>) -> Reply {
    Reply::Array(items.into_iter().map(|i| i.map_or(Reply::Nil, Reply::Bulk)).collect())
}

/// SORT inside apply (`pb::Sort`): over the entry's state, as every replica
/// sees it; with STORE, the result replaces the destination (a list; none if
/// empty), and the reply is its length.
pub fn apply_sort(a: &mut ApplyCtx, op: &pb::Sort) -> ApplyResult {
    let spec = SortSpec::from(op);
    let items = match sort(&*a, &op.key, &spec, true)? {
        Ok(items) => items,
        Err(e) => return Ok(Err(e)),
    };
    let Some(dst) = spec.store else { return Ok(Ok(items_reply(items))) };
    let values: Vec<Bytes> = items.into_iter().map(Option::unwrap_or_default).collect();
    let existed = a.exists_for_events(&dst)?;
    list::store_list(a, &dst, &values)?;
    a.store_event(notify::LIST, "sortstore", &dst, !values.is_empty(), existed);
    Ok(Ok(Reply::Int(values.len() as i64)))
}

/// `#` as Redis reads a pattern (a C string: `#` then its end).
fn is_hash_pattern(p: &[u8]) -> bool {
    p.first() == Some(&b'#') && p.get(1).is_none_or(|&c| c == 0)
}

/// The part of `b` a C string function sees: up to its first NUL byte.
fn c_str(b: &[u8]) -> &[u8] {
    memchr::memchr(0, b).map_or(b, |n| &b[..n])
}

/// Redis's lookupKeyByPattern: `#` is the element itself; else the first `*`
/// is replaced by the element, and a `->field` after it reads that field of a
/// hash instead of a string. A pattern without `*`, a missing key, or a key of
/// the other type give `None`.
pub fn lookup(src: &impl Source, pattern: &[u8], elem: &[u8]) -> Result<Option<Bytes>, StorageError> {
    if is_hash_pattern(pattern) {
        return Ok(Some(Bytes::copy_from_slice(elem)));
    }
    let Some(star) = memchr::memchr(b'*', c_str(pattern)) else { return Ok(None) };
    let after = c_str(&pattern[star + 1..]);
    let field = memchr::memmem::find(after, b"->")
        .map(|f| star + 1 + f)
        .filter(|&f| pattern.get(f + 2).is_some_and(|&c| c != 0))
        .map(|f| (f, &pattern[f + 2..]));
    let key_end = field.map_or(pattern.len(), |(f, _)| f);
    let mut key = Vec::with_capacity(pattern.len() + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    Ok(match field {
        Some((_, field)) => hash::get(src, &key, field)?.ok().flatten(),
        None => string::get(src, &key)?.ok().flatten(),
    })
}

/// One element being sorted, with its weight.
struct Item {
    elem: Bytes,
    score: f64,
    /// ALPHA with BY: the weight's bytes (`None`: missing, sorts first).
    cmp: Option<Bytes>,
}

/// The elements of `found` (a list, set or sorted set) at positions
/// `[start, end]` of its own order, reversed for `desc` (lists and sorted sets).
fn own_order(src: &impl Source, found: &Found, start: u64, end: u64, desc: bool) -> Result<Vec<Bytes>, StorageError> {
    let size = found.coll.size;
    match found.meta.kind {
        KeyType::List => {
            let (from, to) = if desc { (size - 1 - end, size - start) } else { (start, end + 1) };
            let mut v = list::elements(src, found, from, to)?;
            if desc {
                v.reverse();
            }
            Ok(v)
        }
        KeyType::ZSet => {
            let q = Query { range: ZRange::Rank(start as i64, end as i64), rev: desc, offset: 0, count: -1 };
            let mut v = Vec::with_capacity((end - start + 1).min(1 << 20) as usize);
            query(src, found, &q, |m, _| v.push(Bytes::copy_from_slice(m)))?;
            Ok(v)
        }
        _ => {
            let mut v = Vec::with_capacity(size.min(1 << 20) as usize);
            each(src, Cf::Subkey, found, false, |m, _| {
                v.push(Bytes::copy_from_slice(m));
                true
            })?;
            Ok(v.into_iter().skip(start as usize).take((end + 1 - start) as usize).collect())
        }
    }
}

/// Sort `key` as `spec` says. `detached`: inside apply or a script, where
/// every replica must answer alike: an unsorted set is sorted ALPHA (as in
/// Redis's scripts) and ALPHA compares bytes, not by the local locale. The result is one entry per output slot: the
/// elements, or for each element one per GET pattern (`None` for a missing
/// key, which STORE writes as an empty string).
pub fn sort(src: &impl Source, key: &[u8], spec: &SortSpec, detached: bool) -> ReadResult<Vec<Option<Bytes>>> {
    let meta = src.meta(key)?;
    let found = match meta {
        None => None,
        Some(m) if matches!(m.kind, KeyType::List | KeyType::Set | KeyType::ZSet) => Found::from_meta(src.db(), key, m),
        Some(_) => return Ok(Err(TypeError::WrongType)),
    };
    let len = found.as_ref().map_or(0, |f| f.coll.size) as i64;
    let (mut dontsort, mut alpha, mut by) = (spec.dontsort, spec.alpha, spec.by.as_ref());
    let is_set = found.as_ref().is_some_and(|f| f.meta.kind == KeyType::Set);
    if dontsort && is_set && (spec.store.is_some() || detached) {
        (dontsort, alpha, by) = (false, true, None);
    }
    // Redis's LIMIT clamping.
    let start = spec.offset.max(0).min(len);
    let count = spec.count.max(-1).min(len);
    let mut end = if count < 0 { len - 1 } else { start + count - 1 };
    let mut start = start;
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    let Some(found) = found.filter(|_| len > 0) else { return Ok(Ok(Vec::new())) };

    let mut items: Vec<Item>;
    let (first, last);
    if dontsort && found.meta.kind != KeyType::Set {
        // The range is read straight from the list's or sorted set's order.
        let elems =
            if end >= start { own_order(src, &found, start as u64, end as u64, spec.desc)? } else { Vec::new() };
        items = elems.into_iter().map(|elem| Item { elem, score: 0.0, cmp: None }).collect();
        (first, last) = (0i64, items.len() as i64 - 1);
    } else {
        let elems = own_order(src, &found, 0, len as u64 - 1, false)?;
        items = elems.into_iter().map(|elem| Item { elem, score: 0.0, cmp: None }).collect();
        (first, last) = (start, end);
    }

    if !dontsort {
        let mut not_double = false;
        for it in items.iter_mut() {
            let weight = match by {
                Some(p) => match lookup(src, p, &it.elem)? {
                    Some(w) => w,
                    None => continue,
                },
                None => it.elem.clone(),
            };
            if alpha {
                if by.is_some() {
                    it.cmp = Some(weight);
                }
            } else {
                match parse_f64_sort(&weight) {
                    Some(v) => it.score = v,
                    None => not_double = true,
                }
            }
        }
        if not_double {
            return Ok(Err(TypeError::Msg(NOT_DOUBLE)));
        }
        // Stored: bytewise, as Redis compares for STORE. Inside apply or a
        // script (on every replica alike): C strings bytewise, which is
        // strcoll in the C locale. On a connection: the locale's strcoll.
        let stored = spec.store.is_some();
        let text = |a: &[u8], b: &[u8]| {
            if stored {
                a.cmp(b)
            } else if detached {
                c_str(a).cmp(c_str(b))
            } else {
                strcoll(a, b)
            }
        };
        let by_pattern = by.is_some();
        // A stable sort, as glibc's qsort (a merge sort) is for Redis.
        items.sort_by(|a, b| {
            let o = if !alpha {
                a.score.partial_cmp(&b.score).unwrap_or(Ordering::Equal).then_with(|| a.elem.cmp(&b.elem))
            } else if by_pattern {
                match (&a.cmp, &b.cmp) {
                    (Some(x), Some(y)) => text(x, y),
                    (x, y) => x.is_some().cmp(&y.is_some()),
                }
            } else {
                text(&a.elem, &b.elem)
            };
            if spec.desc {
                o.reverse()
            } else {
                o
            }
        });
    }

    let mut out = Vec::new();
    if last < first {
        return Ok(Ok(out));
    }
    for it in &items[first as usize..=last as usize] {
        if spec.gets.is_empty() {
            out.push(Some(it.elem.clone()));
        }
        for g in &spec.gets {
            out.push(lookup(src, g, &it.elem)?);
        }
    }
    Ok(Ok(out))
}
