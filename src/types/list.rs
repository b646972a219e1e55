//! List semantics: pushes, pops, LSET, LINSERT, LREM, LTRIM, LMOVE (apply), and
//! the reads. Elements live in `subkey` as `[prefix][index:8] -> element`; the
//! metadata's `head` is the first element's index and `tail` one past the last
//! (LPUSH takes `head - 1`, RPUSH takes `tail`), so both ends are O(1) and an
//! element at position `i` is a point read of `head + i`.

use bytes::Bytes;

use crate::pb;
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::Coll;
use crate::storage::{Cf, StorageError};

use super::coll::{each, find, Found};
use super::notify::LIST;
use super::view::Source;
use super::ApplyResult;
use super::{ApplyCtx, ReadResult, TypeError};

/// The element key of absolute index `i`.
fn at(found: &Found, i: u64) -> Vec<u8> {
    found.element(&i.to_be_bytes())
}

/// Redis's range rule (LRANGE, LTRIM): negative positions count from the end,
/// `start` is clamped at 0 and `stop` at the last element. The inclusive
/// positions, or `None` when the range is empty.
pub fn range_of(start: i64, stop: i64, len: u64) -> Option<(u64, u64)> {
    let len = len.min(i64::MAX as u64) as i64;
    let s = if start < 0 { start.saturating_add(len) } else { start }.max(0);
    let e = if stop < 0 { stop.saturating_add(len) } else { stop };
    if s > e || s >= len {
        return None;
    }
    Some((s as u64, e.min(len - 1) as u64))
}

/// The position of index `i` (negative counts from the end), if inside a list of `len`.
pub fn position(i: i64, len: u64) -> Option<u64> {
    let len = len.min(i64::MAX as u64) as i64;
    let p = if i < 0 { i.checked_add(len)? } else { i };
    (0..len).contains(&p).then_some(p as u64)
}

/// Visit the elements at positions `[from, to)` (relative to the head), in
/// order or from the back.
fn visit(
    src: &impl Source,
    found: &Found,
    from: u64,
    to: u64,
    reverse: bool,
    mut f: impl FnMut(&[u8]) -> bool,
) -> Result<(), StorageError> {
    let head = found.coll.head;
    src.scan(Cf::Subkey, &at(found, head + from), &at(found, head + to), reverse, |_, v| f(v))
}

/// The elements at positions `[from, to)`.
pub fn elements(src: &impl Source, found: &Found, from: u64, to: u64) -> Result<Vec<Bytes>, StorageError> {
    let mut out = Vec::with_capacity((to - from).min(1 << 20) as usize);
    visit(src, found, from, to, false, |v| {
        out.push(Bytes::copy_from_slice(v));
        true
    })?;
    Ok(out)
}

impl ApplyCtx {
    /// Push `elems` one by one at the head (`left`) or the tail.
    fn list_push(&mut self, found: &Found, coll: &mut Coll, left: bool, elems: &[Bytes]) {
        for e in elems {
            let i = if left {
                coll.head -= 1;
                coll.head
            } else {
                coll.tail += 1;
                coll.tail - 1
            };
            self.put_element(Cf::Subkey, at(found, i), e.clone());
        }
        coll.size += elems.len() as u64;
    }

    /// Pop up to `n` elements from one end; they come back in popping order.
    fn list_pop(&mut self, found: &Found, coll: &mut Coll, left: bool, n: u64) -> Result<Vec<Bytes>, StorageError> {
        let n = n.min(coll.size);
        let (from, to) = if left { (coll.head, coll.head + n) } else { (coll.tail - n, coll.tail) };
        let mut out = Vec::with_capacity(n.min(1 << 20) as usize);
        self.scan_elements(Cf::Subkey, &at(found, from), &at(found, to), !left, |_, v| {
            out.push(Bytes::copy_from_slice(v));
            true
        })?;
        for i in from..to {
            self.del_element(Cf::Subkey, at(found, i));
        }
        if left {
            coll.head += n;
        } else {
            coll.tail -= n;
        }
        coll.size -= n;
        Ok(out)
    }
}

/// Replace `dst` (whatever it held, its TTL included) by a list of `values`
/// in order; none deletes it (SORT ... STORE).
pub fn store_list(ctx: &mut ApplyCtx, dst: &[u8], values: &[Bytes]) -> Result<(), StorageError> {
    let mk = ctx.mkey(dst);
    let old = ctx.any_meta(&mk)?;
    if values.is_empty() {
        if let Some(old) = old {
            ctx.del_any(mk, &old);
        }
        return Ok(());
    }
    let mut coll = Coll::new(KeyType::List, ctx.new_version(dst));
    let found = Found::fresh(ctx.db(), dst, &coll);
    ctx.list_push(&found, &mut coll, false, values);
    ctx.put_meta_over(mk, old.as_ref(), coll.encode());
    Ok(())
}

/// LPUSH / RPUSH / LPUSHX / RPUSHX.
pub fn apply_push(ctx: &mut ApplyCtx, op: &pb::Push) -> ApplyResult {
    let key = &op.key;
    if op.existing && tri!(find(ctx, key, KeyType::List)?).is_none() {
        return Ok(Ok(Reply::Int(0)));
    }
    let (found, old) = tri!(ctx.open_coll(key, KeyType::List)?);
    let mut coll = found.coll.clone();
    ctx.list_push(&found, &mut coll, op.left, &op.values);
    ctx.save_coll(key, old.as_ref(), &coll);
    ctx.event(LIST, if op.left { "lpush" } else { "rpush" }, key);
    Ok(Ok(Reply::Int(coll.size as i64)))
}

/// LPOP / RPOP (one key), LMPOP and the blocking pops: up to `count` elements
/// from the first non-empty list. Result: `[key, [elements]]` or a null array.
pub fn apply_pop(ctx: &mut ApplyCtx, op: &pb::Pop) -> ApplyResult {
    for key in &op.keys {
        let found = match find(ctx, key, KeyType::List)? {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(_) if op.blocked => continue,
            Err(e) => return Ok(Err(e)),
        };
        let mut coll = found.coll.clone();
        let got = ctx.list_pop(&found, &mut coll, op.left, op.count)?;
        if !got.is_empty() {
            ctx.save_coll(key, Some(&found.meta), &coll);
            ctx.event(LIST, if op.left { "lpop" } else { "rpop" }, key);
            ctx.event_if_gone(key)?;
        }
        return Ok(Ok(Reply::Array(vec![
            Reply::Bulk(key.clone()),
            Reply::Array(got.into_iter().map(Reply::Bulk).collect()),
        ])));
    }
    Ok(Ok(Reply::NilArray))
}

pub fn apply_lset(ctx: &mut ApplyCtx, op: &pb::Lset) -> ApplyResult {
    let Some(found) = tri!(find(ctx, &op.key, KeyType::List)?) else { return Ok(Err(TypeError::NoSuchKey)) };
    let i = tri!(crate::protocol::cursor::parse_i64(&op.index).ok_or(TypeError::NotInteger));
    let Some(p) = position(i, found.coll.size) else { return Ok(Err(TypeError::IndexOutOfRange)) };
    ctx.put_element(Cf::Subkey, at(&found, found.coll.head + p), op.value.clone());
    ctx.touch(&op.key);
    ctx.event(LIST, "lset", &op.key);
    Ok(Ok(Reply::Ok))
}

/// LINSERT: the elements on the shorter side of the insertion point move by one.
pub fn apply_linsert(ctx: &mut ApplyCtx, op: &pb::Linsert) -> ApplyResult {
    let key = &op.key;
    let Some(found) = tri!(find(ctx, key, KeyType::List)?) else { return Ok(Ok(Reply::Int(0))) };
    let (pivot, elem) = (&op.pivot, &op.value);
    let mut pos = None;
    let mut i = 0u64;
    each(ctx, Cf::Subkey, &found, false, |_, v| {
        if v == &pivot[..] {
            pos = Some(i);
            return false;
        }
        i += 1;
        true
    })?;
    let Some(p) = pos else { return Ok(Ok(Reply::Int(-1))) };
    // The new element's position once inserted.
    let q = if op.before { p } else { p + 1 };
    let mut coll = found.coll.clone();
    let head = coll.head;
    if q <= coll.size / 2 {
        let moved = elements(ctx, &found, 0, q)?;
        for (j, e) in moved.into_iter().enumerate() {
            ctx.put_element(Cf::Subkey, at(&found, head - 1 + j as u64), e);
        }
        coll.head -= 1;
    } else {
        let moved = elements(ctx, &found, q, coll.size)?;
        for (j, e) in moved.into_iter().enumerate() {
            ctx.put_element(Cf::Subkey, at(&found, head + q + 1 + j as u64), e);
        }
        coll.tail += 1;
    }
    ctx.put_element(Cf::Subkey, at(&found, coll.head + q), elem.clone());
    coll.size += 1;
    ctx.save_coll(key, Some(&found.meta), &coll);
    ctx.event(LIST, "linsert", key);
    Ok(Ok(Reply::Int(coll.size as i64)))
}

/// LREM: the survivors after the first removed element close up towards the head.
pub fn apply_lrem(ctx: &mut ApplyCtx, op: &pb::Lrem) -> ApplyResult {
    let key = &op.key;
    let Some(found) = tri!(find(ctx, key, KeyType::List)?) else { return Ok(Ok(Reply::Int(0))) };
    let elem = &op.value;
    let all = elements(ctx, &found, 0, found.coll.size)?;
    let limit = if op.count == 0 { u64::MAX } else { op.count.unsigned_abs() };
    let mut remove = vec![false; all.len()];
    let mut removed = 0u64;
    let order: Box<dyn Iterator<Item = usize>> =
        if op.count < 0 { Box::new((0..all.len()).rev()) } else { Box::new(0..all.len()) };
    for j in order {
        if removed == limit {
            break;
        }
        if all[j] == elem {
            remove[j] = true;
            removed += 1;
        }
    }
    let Some(first) = remove.iter().position(|r| *r) else { return Ok(Ok(Reply::Int(0))) };
    let mut coll = found.coll.clone();
    let mut next = coll.head + first as u64;
    for (e, _) in all.into_iter().zip(remove).skip(first).filter(|(_, r)| !r) {
        ctx.put_element(Cf::Subkey, at(&found, next), e);
        next += 1;
    }
    for i in next..coll.tail {
        ctx.del_element(Cf::Subkey, at(&found, i));
    }
    coll.tail = next;
    coll.size -= removed;
    ctx.save_coll(key, Some(&found.meta), &coll);
    ctx.event(LIST, "lrem", key);
    ctx.event_if_gone(key)?;
    Ok(Ok(Reply::Int(removed as i64)))
}

/// LTRIM. Trimming away more than is kept copies the kept part into a fresh
/// version (the rest becomes garbage for the collector) instead of deleting
/// element by element.
pub fn apply_ltrim(ctx: &mut ApplyCtx, op: &pb::Ltrim) -> ApplyResult {
    let key = &op.key;
    let Some(found) = tri!(find(ctx, key, KeyType::List)?) else { return Ok(Ok(Reply::Ok)) };
    trim(ctx, op, found)?;
    ctx.event(LIST, "ltrim", key);
    ctx.event_if_gone(key)?;
    Ok(Ok(Reply::Ok))
}

fn trim(ctx: &mut ApplyCtx, op: &pb::Ltrim, found: Found) -> Result<(), StorageError> {
    let key = &op.key;
    let size = found.coll.size;
    let Some((s, e)) = range_of(op.start, op.stop, size) else {
        ctx.del_key(ctx.mkey(key), &found.meta);
        return Ok(());
    };
    let kept = e - s + 1;
    if kept == size {
        // Nothing to remove: Redis still signals the key (WATCH sees it).
        ctx.signal_modified(key);
        return Ok(());
    }
    let mut coll = found.coll.clone();
    if kept < size - kept {
        let elems = elements(ctx, &found, s, e + 1)?;
        let mut fresh = Coll::new(KeyType::List, ctx.new_version(key));
        fresh.expire_ms = coll.expire_ms;
        let to = Found::fresh(ctx.db(), key, &fresh);
        ctx.list_push(&to, &mut fresh, false, &elems);
        ctx.save_coll(key, Some(&found.meta), &fresh);
        return Ok(());
    }
    for i in (coll.head..coll.head + s).chain(coll.head + e + 1..coll.tail) {
        ctx.del_element(Cf::Subkey, at(&found, i));
    }
    coll.tail = coll.head + e + 1;
    coll.head += s;
    coll.size = kept;
    ctx.save_coll(key, Some(&found.meta), &coll);
    Ok(())
}

/// LMOVE / RPOPLPUSH and their blocking forms.
pub fn apply_lmove(ctx: &mut ApplyCtx, op: &pb::Lmove) -> ApplyResult {
    let (src, dst) = (&op.from, &op.to);
    // As Redis: an absent source answers nil before the destination's type is checked.
    let from = match find(ctx, src, KeyType::List)? {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(Ok(Reply::Nil)),
        Err(_) if op.blocked => return Ok(Ok(Reply::Nil)),
        Err(e) => return Ok(Err(e)),
    };
    tri!(find(ctx, dst, KeyType::List)?);
    let mut coll = from.coll.clone();
    let got = ctx.list_pop(&from, &mut coll, op.from_left, 1)?;
    let Some(elem) = got.into_iter().next() else { return Ok(Ok(Reply::Nil)) };
    ctx.save_coll(src, Some(&from.meta), &coll);
    let (to, old) = tri!(ctx.open_coll(dst, KeyType::List)?);
    let mut c = to.coll.clone();
    ctx.list_push(&to, &mut c, op.to_left, std::slice::from_ref(&elem));
    ctx.save_coll(dst, old.as_ref(), &c);
    // Redis's order: the push, then the pop, then the source's deletion.
    ctx.event(LIST, if op.to_left { "lpush" } else { "rpush" }, dst);
    ctx.event(LIST, if op.from_left { "lpop" } else { "rpop" }, src);
    ctx.event_if_gone(src)?;
    Ok(Ok(Reply::Bulk(elem)))
}

// ---- reads ----

pub fn len(src: &impl Source, key: &[u8]) -> ReadResult<u64> {
    Ok(Ok(tri!(find(src, key, KeyType::List)?).map(|f| f.coll.size).unwrap_or(0)))
}

/// LINDEX: the element at index `i` (negative counts from the end).
pub fn index(src: &impl Source, found: &Found, i: i64) -> Result<Option<Bytes>, StorageError> {
    let Some(p) = position(i, found.coll.size) else { return Ok(None) };
    src.get(Cf::Subkey, &at(found, found.coll.head + p))
}

/// LRANGE: the elements at positions `start..=stop` (Redis's range rule).
pub fn range(src: &impl Source, key: &[u8], start: i64, stop: i64) -> ReadResult<Vec<Bytes>> {
    let Some(found) = tri!(find(src, key, KeyType::List)?) else { return Ok(Ok(Vec::new())) };
    let Some((s, e)) = range_of(start, stop, found.coll.size) else { return Ok(Ok(Vec::new())) };
    Ok(Ok(elements(src, &found, s, e + 1)?))
}

/// LPOS's options: `rank` ≠ 0 (negative searches from the tail), `count` 0 =
/// every match, `maxlen` 0 = compare the whole list.
#[derive(Debug, Clone, Copy)]
pub struct PosOpts {
    pub rank: i64,
    pub count: u64,
    pub maxlen: u64,
}

/// LPOS: the positions (from the head) of the matches it asks for.
pub fn pos(src: &impl Source, key: &[u8], elem: &[u8], o: PosOpts) -> ReadResult<Vec<u64>> {
    let Some(found) = tri!(find(src, key, KeyType::List)?) else { return Ok(Ok(Vec::new())) };
    let size = found.coll.size;
    let reverse = o.rank < 0;
    // Redis 7.0 negates the rank; -i64::MIN wraps and then every match qualifies.
    let skip = if o.rank == i64::MIN { 0 } else { o.rank.unsigned_abs() - 1 };
    let want = if o.count == 0 { u64::MAX } else { o.count };
    let (mut seen, mut matched) = (0u64, 0u64);
    let mut out = Vec::new();
    visit(src, &found, 0, size, reverse, |v| {
        let p = if reverse { size - 1 - seen } else { seen };
        seen += 1;
        if v == elem {
            matched += 1;
            if matched > skip {
                out.push(p);
            }
        }
        (out.len() as u64) < want && (o.maxlen == 0 || seen < o.maxlen)
    })?;
    Ok(Ok(out))
}
