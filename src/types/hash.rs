//! Hash semantics: HSET family, HDEL, HINCRBY(FLOAT) (apply), and the reads.
//! Fields live in `subkey` as `[prefix][field] -> value`; the metadata's size is
//! the field count.

use bytes::Bytes;

use crate::pb;
use crate::protocol::cursor::parse_i64;
use crate::protocol::number::{incr_by_float, FloatIncrError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::Cf;

use super::coll::{each, find, Found};
use super::notify::HASH;
use super::view::Source;
use super::ApplyResult;
use super::{ApplyCtx, ReadResult, TypeError};

/// HSET / HMSET, and HSETNX (`nx`: an existing field is left alone). Result:
/// the number of fields added.
pub fn apply_hset(ctx: &mut ApplyCtx, op: &pb::Hset) -> ApplyResult {
    let key = &op.key;
    let (found, old) = tri!(ctx.open_coll(key, KeyType::Hash)?);
    let mut coll = found.coll.clone();
    let mut added = 0;
    for (field, value) in op.fields.iter().zip(&op.values) {
        let ek = found.element(field);
        if ctx.get_element(Cf::Subkey, &ek)?.is_none() {
            coll.size += 1;
            added += 1;
        } else if op.nx {
            continue;
        }
        ctx.put_element(Cf::Subkey, ek, value.clone());
    }
    if added > 0 || !op.nx {
        save(ctx, key, old.as_ref(), &found, &coll);
        ctx.event(HASH, "hset", key);
    }
    Ok(Ok(Reply::Int(added)))
}

/// Write the metadata back when it changed (or the key is new); otherwise record
/// that the hash was modified all the same (a field overwritten).
fn save(
    ctx: &mut ApplyCtx,
    key: &[u8],
    old: Option<&crate::storage::meta::Meta>,
    found: &Found,
    coll: &crate::storage::meta::Coll,
) {
    let live = old.is_some_and(|m| !m.is_expired(ctx.now_ms));
    if !live || *coll != found.coll {
        ctx.save_coll(key, old, coll);
    } else {
        ctx.touch(key);
    }
}

pub fn apply_hdel(ctx: &mut ApplyCtx, op: &pb::Hdel) -> ApplyResult {
    let n = tri!(ctx.remove_elements(&op.key, KeyType::Hash, &op.fields)?);
    if n > 0 {
        ctx.event(HASH, "hdel", &op.key);
        ctx.event_if_gone(&op.key)?;
    }
    Ok(Ok(Reply::Int(n)))
}

pub fn apply_hincrby(ctx: &mut ApplyCtx, op: &pb::Hincrby) -> ApplyResult {
    let key = &op.key;
    let (found, old) = tri!(ctx.open_coll(key, KeyType::Hash)?);
    let ek = found.element(&op.field);
    let mut coll = found.coll.clone();
    let cur = match ctx.get_element(Cf::Subkey, &ek)? {
        Some(v) => tri!(parse_i64(&v).ok_or(TypeError::HashNotInteger)),
        None => {
            coll.size += 1;
            0
        }
    };
    let new = tri!(cur.checked_add(op.delta).ok_or(TypeError::Overflow));
    ctx.put_element(Cf::Subkey, ek, Bytes::from(new.to_string()));
    save(ctx, key, old.as_ref(), &found, &coll);
    ctx.event(HASH, "hincrby", key);
    Ok(Ok(Reply::Int(new)))
}

pub fn apply_hincrbyfloat(ctx: &mut ApplyCtx, op: &pb::Hincrbyfloat) -> ApplyResult {
    let key = &op.key;
    let (found, old) = tri!(ctx.open_coll(key, KeyType::Hash)?);
    let ek = found.element(&op.field);
    let mut coll = found.coll.clone();
    let cur = ctx.get_element(Cf::Subkey, &ek)?;
    if cur.is_none() {
        coll.size += 1;
    }
    let new = match incr_by_float(cur.as_deref(), &op.incr) {
        Ok(v) => Bytes::from(v),
        Err(FloatIncrError::CurrentNotFloat) => return Ok(Err(TypeError::HashNotFloat)),
        Err(FloatIncrError::IncrNotFloat) => return Ok(Err(TypeError::NotFloat)),
        Err(FloatIncrError::NanOrInf) => return Ok(Err(TypeError::NanOrInf)),
    };
    ctx.put_element(Cf::Subkey, ek, new.clone());
    save(ctx, key, old.as_ref(), &found, &coll);
    ctx.event(HASH, "hincrbyfloat", key);
    Ok(Ok(Reply::Bulk(new)))
}

// ---- reads ----

pub fn get(src: &impl Source, key: &[u8], field: &[u8]) -> ReadResult<Option<Bytes>> {
    let Some(found) = tri!(find(src, key, KeyType::Hash)?) else { return Ok(Ok(None)) };
    Ok(Ok(src.get(Cf::Subkey, &found.element(field))?))
}

pub fn mget(src: &impl Source, key: &[u8], fields: &[Bytes]) -> ReadResult<Vec<Option<Bytes>>> {
    let Some(found) = tri!(find(src, key, KeyType::Hash)?) else { return Ok(Ok(vec![None; fields.len()])) };
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        out.push(src.get(Cf::Subkey, &found.element(f))?);
    }
    Ok(Ok(out))
}

/// Field count (0 if absent).
pub fn len(src: &impl Source, key: &[u8]) -> ReadResult<u64> {
    Ok(Ok(tri!(find(src, key, KeyType::Hash)?).map(|f| f.coll.size).unwrap_or(0)))
}

/// Every (field, value), in field order.
pub fn all(src: &impl Source, key: &[u8]) -> ReadResult<Vec<(Bytes, Bytes)>> {
    let Some(found) = tri!(find(src, key, KeyType::Hash)?) else { return Ok(Ok(Vec::new())) };
    let mut out = Vec::with_capacity(found.coll.size.min(1 << 20) as usize);
    each(src, Cf::Subkey, &found, false, |f, v| {
        out.push((Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)));
        true
    })?;
    Ok(Ok(out))
}
