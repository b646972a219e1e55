//! String semantics: SET family, INCR family, APPEND, SETRANGE, GETDEL, GETEX
//! (apply), and GET/MGET/STRLEN/GETRANGE/LCS (reads).

use bytes::Bytes;

use crate::pb::WriteCmd;
use crate::protocol::number::{incr_by_float, FloatIncrError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::{self, Meta};
use crate::storage::StorageError;

use super::write::{flags, reply_kind, ApplyResult};
use super::{mkey, ApplyCtx, Reader, TypeError, MAX_STRING_LEN};

fn string_value(m: Option<Meta>) -> Result<Option<Meta>, TypeError> {
    match m {
        Some(m) if m.kind != KeyType::String => Err(TypeError::WrongType),
        m => Ok(m),
    }
}

fn key(cmd: &WriteCmd, i: usize) -> &[u8] {
    cmd.keys.get(i).map(|b| &b[..]).unwrap_or(b"")
}

fn val(cmd: &WriteCmd, i: usize) -> &[u8] {
    cmd.vals.get(i).map(|b| &b[..]).unwrap_or(b"")
}

pub fn apply_set(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    if cmd.flags == 0 && cmd.reply == reply_kind::DEFAULT {
        // A plain SET needs nothing of the old value: write blind (no read). A stale
        // expire index entry of the old value is dropped when it comes due.
        ctx.put_meta(mk, meta::encode(KeyType::String, cmd.at_ms, val(cmd, 0)));
        return Ok(Ok(Reply::Ok));
    }
    let old = ctx.live_meta(&mk)?;
    let get = cmd.flags & flags::SET_GET != 0;
    let mut reply = Reply::Ok;
    if get {
        match &old {
            Some(m) if m.kind != KeyType::String => return Ok(Err(TypeError::WrongType)),
            Some(m) => reply = Reply::Bulk(m.payload.clone()),
            None => reply = Reply::Nil,
        }
    }
    let found = old.is_some();
    if (cmd.flags & flags::SET_NX != 0 && found) || (cmd.flags & flags::SET_XX != 0 && !found) {
        return Ok(Ok(if get {
            reply
        } else if cmd.reply == reply_kind::SETNX {
            Reply::Int(0)
        } else {
            Reply::Nil
        }));
    }
    let expire =
        if cmd.flags & flags::SET_KEEPTTL != 0 { old.as_ref().map(|m| m.expire_ms).unwrap_or(0) } else { cmd.at_ms };
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, val(cmd, 0)));
    Ok(Ok(if cmd.reply == reply_kind::SETNX { Reply::Int(1) } else { reply }))
}

/// MSET (flags 0) and MSETNX (flags SET_NX).
pub fn apply_mset(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let nx = cmd.flags & flags::SET_NX != 0;
    if nx {
        for k in &cmd.keys {
            if ctx.live_meta(&mkey(k))?.is_some() {
                return Ok(Ok(Reply::Int(0)));
            }
        }
    }
    for (k, v) in cmd.keys.iter().zip(&cmd.vals) {
        ctx.put_meta(mkey(k), meta::encode(KeyType::String, 0, v));
    }
    Ok(Ok(if nx { Reply::Int(1) } else { Reply::Ok }))
}

pub fn apply_incrby(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    let old = match string_value(ctx.live_meta(&mk)?) {
        Ok(m) => m,
        Err(e) => return Ok(Err(e)),
    };
    let (cur, expire) = match &old {
        Some(m) => match crate::protocol::cursor::parse_i64(&m.payload) {
            Some(v) => (v, m.expire_ms),
            None => return Ok(Err(TypeError::NotInteger)),
        },
        None => (0, 0),
    };
    let Some(new) = cur.checked_add(cmd.num) else {
        return Ok(Err(TypeError::Overflow));
    };
    let mut buf = itoa::Buffer::new();
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, buf.format(new).as_bytes()));
    Ok(Ok(Reply::Int(new)))
}

pub fn apply_incrbyfloat(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    let old = match string_value(ctx.live_meta(&mk)?) {
        Ok(m) => m,
        Err(e) => return Ok(Err(e)),
    };
    let new = match incr_by_float(old.as_ref().map(|m| &m.payload[..]), val(cmd, 0)) {
        Ok(v) => v,
        Err(FloatIncrError::CurrentNotFloat) | Err(FloatIncrError::IncrNotFloat) => {
            return Ok(Err(TypeError::NotFloat))
        }
        Err(FloatIncrError::NanOrInf) => return Ok(Err(TypeError::NanOrInf)),
    };
    let expire = old.as_ref().map(|m| m.expire_ms).unwrap_or(0);
    ctx.put_meta_over(mk, old.as_ref(), meta::encode(KeyType::String, expire, &new));
    Ok(Ok(Reply::Bulk(Bytes::from(new))))
}

pub fn apply_append(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    let old = match string_value(ctx.live_meta(&mk)?) {
        Ok(m) => m,
        Err(e) => return Ok(Err(e)),
    };
    let add = val(cmd, 0);
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
    Ok(Ok(Reply::Int(len as i64)))
}

pub fn apply_setrange(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    let old = match string_value(ctx.live_meta(&mk)?) {
        Ok(m) => m,
        Err(e) => return Ok(Err(e)),
    };
    let offset = cmd.num as usize;
    let add = val(cmd, 0);
    let Some(m) = old else {
        if add.is_empty() {
            return Ok(Ok(Reply::Int(0)));
        }
        if offset + add.len() > MAX_STRING_LEN {
            return Ok(Err(TypeError::TooBig));
        }
        let mut v = vec![0u8; offset + add.len()];
        v[offset..].copy_from_slice(add);
        ctx.put_meta(mk, meta::encode(KeyType::String, 0, &v));
        return Ok(Ok(Reply::Int(v.len() as i64)));
    };
    if add.is_empty() {
        return Ok(Ok(Reply::Int(m.payload.len() as i64)));
    }
    if offset + add.len() > MAX_STRING_LEN {
        return Ok(Err(TypeError::TooBig));
    }
    let mut v = m.payload.to_vec();
    if v.len() < offset + add.len() {
        v.resize(offset + add.len(), 0);
    }
    v[offset..offset + add.len()].copy_from_slice(add);
    ctx.put_meta_over(mk, Some(&m), meta::encode(KeyType::String, m.expire_ms, &v));
    Ok(Ok(Reply::Int(v.len() as i64)))
}

pub fn apply_getdel(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    match string_value(ctx.live_meta(&mk)?) {
        Err(e) => Ok(Err(e)),
        Ok(None) => Ok(Ok(Reply::Nil)),
        Ok(Some(m)) => {
            ctx.del_key(mk, &m);
            Ok(Ok(Reply::Bulk(m.payload)))
        }
    }
}

pub fn apply_getex(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> ApplyResult {
    let mk = mkey(key(cmd, 0));
    let m = match string_value(ctx.live_meta(&mk)?) {
        Err(e) => return Ok(Err(e)),
        Ok(None) => return Ok(Ok(Reply::Nil)),
        Ok(Some(m)) => m,
    };
    let reply = Reply::Bulk(m.payload.clone());
    if cmd.flags & flags::GETEX_SET != 0 {
        if cmd.at_ms <= ctx.now_ms {
            ctx.del_key(mk, &m);
        } else {
            ctx.put_meta_over(mk, Some(&m), meta::encode(KeyType::String, cmd.at_ms, &m.payload));
        }
    } else if cmd.flags & flags::GETEX_PERSIST != 0 && m.expire_ms != 0 {
        ctx.put_meta_over(mk, Some(&m), meta::encode(KeyType::String, 0, &m.payload));
    }
    Ok(Ok(reply))
}

// ---- reads ----

/// GET: the value, `Nil` if absent.
pub fn get(r: &Reader<'_>, key: &[u8]) -> Result<Result<Option<Bytes>, TypeError>, StorageError> {
    Ok(r.typed(key, KeyType::String)?.map(|m| m.map(|m| m.payload)))
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
