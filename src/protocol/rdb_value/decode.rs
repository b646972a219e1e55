//! Reading the object of a payload (from its RDB items, [`In`]): each object
//! type, and the checks Redis makes on the collections they hold.

use std::collections::HashSet;

use super::listpack::{listpack, Item};
use super::reader::{parse_f64, In};
use super::stream::stream;
use super::ziplist::{intset, ziplist, zipmap};
use super::{
    Value, QL_PACKED, QL_PLAIN, T_HASH, T_HASH_LISTPACK, T_HASH_ZIPLIST, T_HASH_ZIPMAP, T_LIST, T_LIST_QUICKLIST,
    T_LIST_QUICKLIST_2, T_LIST_ZIPLIST, T_SET, T_SET_INTSET, T_STREAM_LISTPACKS, T_STREAM_LISTPACKS_2, T_STRING,
    T_ZSET, T_ZSET_2, T_ZSET_LISTPACK, T_ZSET_ZIPLIST,
};

pub(super) fn object(r: &mut In) -> Option<Value> {
    let t = r.byte()?;
    match t {
        T_STRING => Some(Value::String(r.string()?)),
        T_LIST => {
            let n = r.len()?;
            let mut items = Vec::with_capacity(r.cap(n));
            for _ in 0..n {
                items.push(r.string()?);
            }
            list(items)
        }
        T_SET => {
            let n = r.len()?;
            let mut members = Vec::with_capacity(r.cap(n));
            for _ in 0..n {
                members.push(r.string()?);
            }
            set(members)
        }
        T_ZSET | T_ZSET_2 => {
            let n = r.len()?;
            let mut members = Vec::with_capacity(r.cap(n));
            for _ in 0..n {
                let m = r.string()?;
                let score = if t == T_ZSET_2 { f64::from_le_bytes(r.array()?) } else { text_score(r)? };
                members.push((m, score));
            }
            zset(members)
        }
        T_HASH => {
            let n = r.len()?;
            let mut pairs = Vec::with_capacity(r.cap(n));
            for _ in 0..n {
                let f = r.string()?;
                pairs.push((f, r.string()?));
            }
            hash(pairs)
        }
        T_HASH_ZIPMAP => {
            let blob = r.string()?;
            let pairs = zipmap(&blob)?;
            hash(pairs.into_iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect())
        }
        T_LIST_ZIPLIST => list(ziplist(&r.string()?)?.into_iter().map(Item::bytes).collect()),
        T_SET_INTSET => {
            let members = intset(&r.string()?)?;
            set(members.into_iter().map(|v| v.to_string().into_bytes()).collect())
        }
        T_ZSET_ZIPLIST => zset(scored_pairs(ziplist(&r.string()?)?)?),
        T_ZSET_LISTPACK => zset(scored_pairs(listpack(&r.string()?)?)?),
        T_HASH_ZIPLIST => hash(pairs(ziplist(&r.string()?)?)?),
        T_HASH_LISTPACK => hash(pairs(listpack(&r.string()?)?)?),
        T_LIST_QUICKLIST | T_LIST_QUICKLIST_2 => {
            let nodes = r.len()?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                let container = if t == T_LIST_QUICKLIST_2 { r.len()? } else { QL_PACKED };
                if container != QL_PLAIN && container != QL_PACKED {
                    return None;
                }
                let data = r.string()?;
                if data.is_empty() {
                    return None;
                }
                if container == QL_PLAIN {
                    items.push(data);
                    continue;
                }
                // Redis skips empty nodes; an empty list fails below.
                let node = if t == T_LIST_QUICKLIST_2 { listpack(&data)? } else { ziplist(&data)? };
                items.extend(node.into_iter().map(Item::bytes));
            }
            list(items)
        }
        T_STREAM_LISTPACKS | T_STREAM_LISTPACKS_2 => Some(Value::Stream(stream(r, t == T_STREAM_LISTPACKS_2)?)),
        _ => None,
    }
}

// Redis refuses empty collections ("empty keys") and duplicates.

fn list(items: Vec<Vec<u8>>) -> Option<Value> {
    (!items.is_empty()).then_some(Value::List(items))
}

fn set(members: Vec<Vec<u8>>) -> Option<Value> {
    if members.is_empty() || !distinct(members.iter().map(|m| &m[..])) {
        return None;
    }
    Some(Value::Set(members))
}

fn zset(mut members: Vec<(Vec<u8>, f64)>) -> Option<Value> {
    if members.is_empty() || members.iter().any(|(_, s)| s.is_nan()) || !distinct(members.iter().map(|(m, _)| &m[..])) {
        return None;
    }
    // No NaN is left, so every pair compares; -0 ties with 0 as in Redis.
    members.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.0.cmp(&b.0)));
    Some(Value::ZSet(members))
}

fn hash(pairs: Vec<(Vec<u8>, Vec<u8>)>) -> Option<Value> {
    if pairs.is_empty() || !distinct(pairs.iter().map(|(f, _)| &f[..])) {
        return None;
    }
    Some(Value::Hash(pairs))
}

fn distinct<'a>(keys: impl ExactSizeIterator<Item = &'a [u8]>) -> bool {
    let mut seen = HashSet::with_capacity(keys.len());
    keys.into_iter().all(|k| seen.insert(k))
}

/// Field/value pairs from a ziplist or listpack: an even number of entries.
fn pairs(items: Vec<Item>) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    if items.len() % 2 != 0 {
        return None;
    }
    Some(items.chunks_exact(2).map(|p| (p[0].bytes(), p[1].bytes())).collect())
}

/// Member/score pairs from a ziplist or listpack.
fn scored_pairs(items: Vec<Item>) -> Option<Vec<(Vec<u8>, f64)>> {
    if items.len() % 2 != 0 {
        return None;
    }
    items.chunks_exact(2).map(|p| Some((p[0].bytes(), p[1].score()?))).collect()
}

/// A score of the old ZSET type: a length byte (253 NaN, 254 +inf, 255 -inf)
/// and that many bytes of text.
fn text_score(r: &mut In) -> Option<f64> {
    match r.byte()? {
        253 => Some(f64::NAN),
        254 => Some(f64::INFINITY),
        255 => Some(f64::NEG_INFINITY),
        n => parse_f64(r.take(n as u64)?),
    }
}
