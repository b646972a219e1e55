//! String semantics: SET family, INCR family, APPEND, SETRANGE, GETDEL, GETEX
//! (apply), and GET/MGET/STRLEN/GETRANGE/LCS (reads).

use bytes::Bytes;

use crate::pb;
use crate::protocol::number::{incr_by_float, FloatIncrError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::{self, Meta};

use super::notify::{GENERIC, STRING};
use super::view::Source;
use super::write::ApplyResult;
use super::{mkey, ApplyCtx, ReadResult, TypeError, MAX_STRING_LEN};

fn string_value(m: Option<Meta>) -> Result<Option<Meta>, TypeError> {
    match m {
        Some(m) if m.kind != KeyType::String => Err(TypeError::WrongType),
        m => Ok(m),
    }
}

pub fn apply_set(ctx: &mut ApplyCtx, op: &pb::Set) -> ApplyResult {
    let mk = mkey(&op.key);
    if !(op.nx || op.xx || op.get || op.keepttl) {
        // A plain SET needs nothing of the old value: write blind (no read). A stale
        // expire index entry of the old value is dropped when it comes due.
        ctx.put_meta(mk, meta::encode(KeyType::String, op.at_ms, &op.value));
        set_events(ctx, op);
        return Ok(Ok(Reply::Ok));
    }
    let old = ctx.live_meta(&mk)?;
    let mut reply = Reply::Ok;
    if op.get {
        match &old {
            Some(m) if m.kind != KeyType::String => return Ok(Err(TypeError::WrongType)),
            Some(m) => reply = Reply::Bulk(m.payload.clone()),
            None => reply = Reply::Nil,
        }
    }
    let found = old.is_some();
    if (op.nx && found) || (op.xx && !found) {
        return Ok(Ok(if op.get { reply } else { Reply::Nil }));
    }
    let expire = if op.keepttl { old.as_ref().map(|m| m.expire_ms).unwrap_or(0) } else { op.at_ms };
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, &op.value));
    set_events(ctx, op);
    Ok(Ok(reply))
}

/// `set`, and `expire` when the SET gave the key a TTL (KEEPTTL does not).
fn set_events(ctx: &mut ApplyCtx, op: &pb::Set) {
    ctx.event(STRING, "set", &op.key);
    if op.at_ms != 0 && !op.keepttl {
        ctx.event(GENERIC, "expire", &op.key);
    }
}

/// MSET, and MSETNX (`nx`: nil if any key exists).
pub fn apply_mset(ctx: &mut ApplyCtx, op: &pb::Mset) -> ApplyResult {
    if op.nx {
        for k in &op.keys {
            if ctx.live_meta(&mkey(k))?.is_some() {
                return Ok(Ok(Reply::Nil));
            }
        }
    }
    for (k, v) in op.keys.iter().zip(&op.values) {
        ctx.put_meta(mkey(k), meta::encode(KeyType::String, 0, v));
        ctx.event(STRING, "set", k);
    }
    Ok(Ok(Reply::Ok))
}

pub fn apply_incrby(ctx: &mut ApplyCtx, op: &pb::Incrby) -> ApplyResult {
    let mk = mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let (cur, expire) = match &old {
        Some(m) => match crate::protocol::cursor::parse_i64(&m.payload) {
            Some(v) => (v, m.expire_ms),
            None => return Ok(Err(TypeError::NotInteger)),
        },
        None => (0, 0),
    };
    let Some(new) = cur.checked_add(op.delta) else {
        return Ok(Err(TypeError::Overflow));
    };
    let mut buf = itoa::Buffer::new();
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, buf.format(new).as_bytes()));
    ctx.event(STRING, "incrby", &op.key);
    Ok(Ok(Reply::Int(new)))
}

pub fn apply_incrbyfloat(ctx: &mut ApplyCtx, op: &pb::Incrbyfloat) -> ApplyResult {
    let mk = mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let new = match incr_by_float(old.as_ref().map(|m| &m.payload[..]), &op.incr) {
        Ok(v) => v,
        Err(FloatIncrError::CurrentNotFloat) | Err(FloatIncrError::IncrNotFloat) => {
            return Ok(Err(TypeError::NotFloat))
        }
        Err(FloatIncrError::NanOrInf) => return Ok(Err(TypeError::NanOrInf)),
    };
    let expire = old.as_ref().map(|m| m.expire_ms).unwrap_or(0);
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, &new));
    ctx.event(STRING, "incrbyfloat", &op.key);
    Ok(Ok(Reply::Bulk(Bytes::from(new))))
}

pub fn apply_append(ctx: &mut ApplyCtx, op: &pb::Append) -> ApplyResult {
    let mk = mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let add = &op.value;
    let (mut v, expire) = match &old {
        Some(m) => (m.payload.to_vec(), m.expire_ms),
        None => (Vec::new(), 0),
    };
    if v.len() + add.len() > MAX_STRING_LEN {
        return Ok(Err(TypeError::TooBig));
    }
    v.extend_from_slice(add);
    let len = v.len();
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, &v));
    ctx.event(STRING, "append", &op.key);
    Ok(Ok(Reply::Int(len as i64)))
}

pub fn apply_setrange(ctx: &mut ApplyCtx, op: &pb::Setrange) -> ApplyResult {
    let mk = mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let add = &op.value;
    let Some(end) = usize::try_from(op.offset).ok().and_then(|o| o.checked_add(add.len())) else {
        return Ok(Err(TypeError::TooBig));
    };
    let offset = op.offset as usize;
    let Some(m) = old else {
        if add.is_empty() {
            return Ok(Ok(Reply::Int(0)));
        }
        if end > MAX_STRING_LEN {
            return Ok(Err(TypeError::TooBig));
        }
        let mut v = vec![0u8; end];
        v[offset..].copy_from_slice(add);
        ctx.put_meta(mk, meta::encode(KeyType::String, 0, &v));
        ctx.event(STRING, "setrange", &op.key);
        return Ok(Ok(Reply::Int(v.len() as i64)));
    };
    if add.is_empty() {
        return Ok(Ok(Reply::Int(m.payload.len() as i64)));
    }
    if end > MAX_STRING_LEN {
        return Ok(Err(TypeError::TooBig));
    }
    let mut v = m.payload.to_vec();
    if v.len() < end {
        v.resize(end, 0);
    }
    v[offset..end].copy_from_slice(add);
    ctx.put_meta_over(mk, Some(&m), meta::encode(KeyType::String, m.expire_ms, &v));
    ctx.event(STRING, "setrange", &op.key);
    Ok(Ok(Reply::Int(v.len() as i64)))
}

pub fn apply_getdel(ctx: &mut ApplyCtx, op: &pb::Getdel) -> ApplyResult {
    let mk = mkey(&op.key);
    match tri!(string_value(ctx.live_meta(&mk)?)) {
        None => Ok(Ok(Reply::Nil)),
        Some(m) => {
            ctx.del_key(mk, &m);
            ctx.event(GENERIC, "del", &op.key);
            Ok(Ok(Reply::Bulk(m.payload)))
        }
    }
}

pub fn apply_getex(ctx: &mut ApplyCtx, op: &pb::Getex) -> ApplyResult {
    let mk = mkey(&op.key);
    let Some(m) = tri!(string_value(ctx.live_meta(&mk)?)) else { return Ok(Ok(Reply::Nil)) };
    let reply = Reply::Bulk(m.payload.clone());
    if let Some(at) = op.at_ms {
        if at <= ctx.now_ms {
            ctx.del_key(mk, &m);
            ctx.event(GENERIC, "del", &op.key);
        } else {
            ctx.put_meta_over(mk, Some(&m), meta::encode(KeyType::String, at, &m.payload));
            ctx.event(GENERIC, "expire", &op.key);
        }
    } else if op.persist && m.expire_ms != 0 {
        ctx.put_meta_over(mk, Some(&m), meta::encode(KeyType::String, 0, &m.payload));
        ctx.event(GENERIC, "persist", &op.key);
    }
    Ok(Ok(reply))
}

// ---- reads ----

/// GET: the value, `None` if absent.
pub fn get(src: &impl Source, key: &[u8]) -> ReadResult<Option<Bytes>> {
    Ok(src.typed(key, KeyType::String)?.map(|m| m.map(|m| m.payload)))
}

/// GETRANGE with Redis's index clamping.
pub fn getrange(v: &[u8], mut start: i64, mut end: i64) -> &[u8] {
    let len = v.len() as i64;
    if start < 0 && end < 0 && start > end {
        return b"";
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return b"";
    }
    &v[start as usize..=end as usize]
}

/// A match of LCS IDX: ((a_start, a_end), (b_start, b_end), length).
pub type LcsMatch = ((usize, usize), (usize, usize), usize);

/// LCS of two strings as Redis's `lcsCommand` computes it: the length, the
/// subsequence, and (if `want_idx`) the matches from the end backwards.
pub fn lcs(a: &[u8], b: &[u8], min_match_len: i64, want_idx: bool) -> (usize, Vec<u8>, Vec<LcsMatch>) {
    let (alen, blen) = (a.len(), b.len());
    let w = blen + 1;
    let mut dp = vec![0u32; (alen + 1) * w];
    for i in 1..=alen {
        for j in 1..=blen {
            dp[i * w + j] = if a[i - 1] == b[j - 1] {
                dp[(i - 1) * w + j - 1] + 1
            } else {
                dp[(i - 1) * w + j].max(dp[i * w + j - 1])
            };
        }
    }
    let len = dp[alen * w + blen] as usize;
    let mut result = vec![0u8; len];
    let (mut i, mut j, mut k) = (alen, blen, len);
    while k > 0 && i > 0 && j > 0 {
        if a[i - 1] == b[j - 1] {
            result[k - 1] = a[i - 1];
            i -= 1;
            j -= 1;
            k -= 1;
        } else if dp[(i - 1) * w + j] > dp[i * w + j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    let matches = if want_idx { lcs_matches(a, b, &dp, w, min_match_len) } else { Vec::new() };
    (len, result, matches)
}

/// Port of the IDX walk of Redis `lcsCommand`.
fn lcs_matches(a: &[u8], b: &[u8], dp: &[u32], w: usize, min_match_len: i64) -> Vec<LcsMatch> {
    let mut out = Vec::new();
    let (mut i, mut j) = (a.len(), b.len());
    // Ranges are tracked with Redis's sentinel: arange_start = alen means "none".
    // Like Redis, walk until one string is exhausted, not until the LCS is: the
    // range pending after the last match is emitted by the mismatch that follows.
    let alen = a.len();
    let (mut arange_start, mut arange_end, mut brange_start, mut brange_end) = (alen, 0usize, 0usize, 0usize);
    while i > 0 && j > 0 {
        let mut emit_range = false;
        if a[i - 1] == b[j - 1] {
            if arange_start == alen {
                arange_start = i - 1;
                arange_end = i - 1;
                brange_start = j - 1;
                brange_end = j - 1;
            } else if arange_start == i && brange_start == j {
                arange_start -= 1;
                brange_start -= 1;
            } else {
                emit_range = true;
            }
            if arange_start == 0 || brange_start == 0 {
                emit_range = true;
            }
            i -= 1;
            j -= 1;
        } else {
            let lcs1 = dp[(i - 1) * w + j];
            let lcs2 = dp[i * w + j - 1];
            if lcs1 > lcs2 {
                i -= 1;
            } else {
                j -= 1;
            }
            if arange_start != alen {
                emit_range = true;
            }
        }
        if emit_range {
            let match_len = arange_end - arange_start + 1;
            if min_match_len == 0 || match_len as i64 >= min_match_len {
                out.push(((arange_start, arange_end), (brange_start, brange_end), match_len));
            }
            arange_start = alen;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getrange_clamps_like_redis() {
        let v = b"This is a string";
        assert_eq!(getrange(v, 0, 3), b"This");
        assert_eq!(getrange(v, -3, -1), b"ing");
        assert_eq!(getrange(v, 0, -1), v);
        assert_eq!(getrange(v, 10, 100), b"string");
        assert_eq!(getrange(v, 5, 3), b"");
        assert_eq!(getrange(v, -1, -5), b"");
        assert_eq!(getrange(b"", 0, -1), b"");
        assert_eq!(getrange(v, -100, 1), b"Th");
    }

    #[test]
    fn lcs_matches_redis_example() {
        let (len, s, m) = lcs(b"ohmytext", b"mynewtext", 0, true);
        assert_eq!(len, 6);
        assert_eq!(s, b"mytext");
        assert_eq!(m, vec![((4, 7), (5, 8), 4), ((2, 3), (0, 1), 2)]);
        // The last range is emitted by the mismatch after it (found by the differential test).
        let (_, _, m) = lcs(b"3.0e-2", b"10.5", 0, true);
        assert_eq!(m, vec![((2, 2), (1, 1), 1)], "the common 0, as redis-server answers");
    }
}
