//! String semantics: SET family, INCR family, APPEND, SETRANGE, GETDEL, GETEX
//! (apply), and GET/MGET/STRLEN/GETRANGE/LCS (reads); and how a value is
//! stored.
//!
//! A value of up to [`INLINE_MAX`] bytes is the key's metadata payload: one
//! point read. A longer one is *chunked* (`storage::meta`): `[CHUNK]`-byte
//! chunks in `subkey` under the key's version, chunk `i` at
//! `[prefix][i:8]` holding bytes `[i * CHUNK, (i + 1) * CHUNK)`. A chunk may
//! be missing or short: the bytes it lacks are zeros (SETBIT far past the end
//! writes one chunk, not the zeros before it). A write of a few bytes
//! ([`ApplyCtx::write_string_range`]: SETRANGE, APPEND, SETBIT, BITFIELD)
//! rewrites the chunks it touches; a read of a range ([`read_range`]) reads
//! only those.

use bytes::Bytes;

use crate::pb;
use crate::protocol::number::{incr_by_float, FloatIncrError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::{self, Coll, Meta};
use crate::storage::{Cf, StorageError};

use super::coll::Found;
use super::notify::{GENERIC, STRING};
use super::view::Source;
use super::ApplyResult;
use super::{ApplyCtx, ReadResult, TypeError, MAX_STRING_LEN};

/// The longest value held inline in its metadata.
pub const INLINE_MAX: usize = 16 * 1024;
/// The size of a chunked value's chunks.
pub const CHUNK: u64 = 1024;

fn chunk_key(found: &Found, i: u64) -> Vec<u8> {
    found.element(&i.to_be_bytes())
}

/// The length in bytes of the string whose live metadata is `m`.
pub fn value_len(m: &Meta) -> u64 {
    if m.chunked {
        m.size().unwrap_or(0)
    } else {
        m.payload.len() as u64
    }
}

/// Bytes `[from, to)` of the string `key` whose live metadata (read from
/// `src`) is `m`, clamped to its length.
pub fn read_range(src: &impl Source, key: &[u8], m: &Meta, from: u64, to: u64) -> Result<Vec<u8>, StorageError> {
    let to = to.min(value_len(m));
    if from >= to {
        return Ok(Vec::new());
    }
    if !m.chunked {
        return Ok(m.payload[from as usize..to as usize].to_vec());
    }
    let mut out = vec![0u8; (to - from) as usize];
    let Some(found) = Found::from_meta(src.db(), key, m.clone()) else { return Ok(out) };
    let n = found.prefix.len();
    let (first, last) = (from / CHUNK, (to - 1) / CHUNK);
    src.scan(Cf::Subkey, &chunk_key(&found, first), &chunk_key(&found, last + 1), false, |k, v| {
        let Some(i) = k.get(n..).and_then(|s| <[u8; 8]>::try_from(s).ok()).map(u64::from_be_bytes) else {
            return true;
        };
        let base = i * CHUNK;
        let (s, e) = (base.max(from), (base + v.len() as u64).min(to));
        if s < e {
            out[(s - from) as usize..(e - from) as usize].copy_from_slice(&v[(s - base) as usize..(e - base) as usize]);
        }
        true
    })?;
    Ok(out)
}

/// The whole value of the string `key` whose live metadata is `m`.
pub fn value(src: &impl Source, key: &[u8], m: &Meta) -> Result<Bytes, StorageError> {
    if !m.chunked {
        return Ok(m.payload.clone());
    }
    Ok(Bytes::from(read_range(src, key, m, 0, value_len(m))?))
}

impl ApplyCtx {
    /// The metadata value of `key` holding the whole new string `value`:
    /// inline, or chunked under a new version with its chunks written (chunks
    /// of zeros left out).
    pub fn string_meta(&mut self, key: &[u8], expire_ms: u64, value: &[u8]) -> Vec<u8> {
        if value.len() <= INLINE_MAX {
            return meta::encode(KeyType::String, expire_ms, value);
        }
        let mut c = Coll::new(KeyType::String, self.new_version(key));
        c.expire_ms = expire_ms;
        c.size = value.len() as u64;
        let found = Found::fresh(self.db(), key, &c);
        for (i, part) in value.chunks(CHUNK as usize).enumerate() {
            if part.iter().any(|&b| b != 0) {
                self.put_element(Cf::Subkey, chunk_key(&found, i as u64), Bytes::copy_from_slice(part));
            }
        }
        c.encode()
    }

    /// Write `bytes` at `offset` of the string `key`, whose live metadata is
    /// `old` (`None`: absent), zero-padding past its end; keeps its TTL.
    /// Returns the new length. A chunked value (or one growing past
    /// [`INLINE_MAX`]) has only the chunks the range touches rewritten.
    pub fn write_string_range(
        &mut self,
        key: &[u8],
        old: Option<&Meta>,
        offset: u64,
        bytes: &[u8],
    ) -> Result<u64, StorageError> {
        let mk = self.mkey(key);
        let end = offset + bytes.len() as u64;
        let new_len = old.map_or(0, value_len).max(end);
        let expire = old.map_or(0, |m| m.expire_ms);
        let chunked = old.and_then(|m| m.chunked.then(|| Found::from_meta(self.db(), key, m.clone())).flatten());
        if chunked.is_none() && new_len <= INLINE_MAX as u64 {
            let mut v = old.map(|m| m.payload.to_vec()).unwrap_or_default();
            if (v.len() as u64) < end {
                v.resize(end as usize, 0);
            }
            v[offset as usize..end as usize].copy_from_slice(bytes);
            self.put_meta_over(mk, old, meta::encode(KeyType::String, expire, &v));
            return Ok(new_len);
        }
        let grew_into_chunks = chunked.is_none();
        let found = match chunked {
            Some(f) => f,
            None => {
                // Inline (or absent) until now: a new version, its bytes as
                // the first chunks.
                let mut c = Coll::new(KeyType::String, self.new_version(key));
                c.expire_ms = expire;
                let f = Found::fresh(self.db(), key, &c);
                let inline = old.map(|m| m.payload.clone()).unwrap_or_default();
                for (i, part) in inline.chunks(CHUNK as usize).enumerate() {
                    self.put_element(Cf::Subkey, chunk_key(&f, i as u64), Bytes::copy_from_slice(part));
                }
                f
            }
        };
        let mut pos = offset;
        while pos < end {
            let base = pos / CHUNK * CHUNK;
            let stop = end.min(base + CHUNK);
            let k = chunk_key(&found, base / CHUNK);
            let mut chunk = self.get(Cf::Subkey, &k)?.map(|b| b.to_vec()).unwrap_or_default();
            let need = (stop - base) as usize;
            if chunk.len() < need {
                chunk.resize(need, 0);
            }
            chunk[(pos - base) as usize..need]
                .copy_from_slice(&bytes[(pos - offset) as usize..(stop - offset) as usize]);
            self.put_element(Cf::Subkey, k, Bytes::from(chunk));
            pos = stop;
        }
        let mut coll = found.coll.clone();
        if grew_into_chunks || coll.size != new_len {
            coll.size = new_len;
            self.put_meta_over(mk, old, coll.encode());
        } else {
            // The chunks changed, the metadata did not: WATCH and the read
            // caches must still see it.
            self.touch(key);
        }
        Ok(new_len)
    }
}

fn string_value(m: Option<Meta>) -> Result<Option<Meta>, TypeError> {
    match m {
        Some(m) if m.kind != KeyType::String => Err(TypeError::WrongType),
        m => Ok(m),
    }
}

pub fn apply_set(ctx: &mut ApplyCtx, op: &pb::Set) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    if !(op.nx || op.xx || op.get || op.keepttl) {
        // A plain SET needs nothing of the old value: write blind (no read). A stale
        // expire index entry of the old value is dropped when it comes due.
        let value = ctx.string_meta(&op.key, op.at_ms, &op.value);
        ctx.put_meta(mk, value);
        set_events(ctx, op);
        return Ok(Ok(Reply::Ok));
    }
    let old = ctx.live_meta(&mk)?;
    let mut reply = Reply::Ok;
    if op.get {
        match &old {
            Some(m) if m.kind != KeyType::String => return Ok(Err(TypeError::WrongType)),
            Some(m) => reply = Reply::Bulk(value(ctx, &op.key, m)?),
            None => reply = Reply::Nil,
        }
    }
    let found = old.is_some();
    if (op.nx && found) || (op.xx && !found) {
        return Ok(Ok(if op.get { reply } else { Reply::Nil }));
    }
    let expire = if op.keepttl { old.as_ref().map(|m| m.expire_ms).unwrap_or(0) } else { op.at_ms };
    let value = ctx.string_meta(&op.key, expire, &op.value);
    ctx.put_meta_over(mk, old.as_ref(), value);
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
            if ctx.live_meta(&ctx.mkey(k))?.is_some() {
                return Ok(Ok(Reply::Nil));
            }
        }
    }
    for (k, v) in op.keys.iter().zip(&op.values) {
        let value = ctx.string_meta(k, 0, v);
        ctx.put_meta(ctx.mkey(k), value);
        ctx.event(STRING, "set", k);
    }
    Ok(Ok(Reply::Ok))
}

pub fn apply_incrby(ctx: &mut ApplyCtx, op: &pb::Incrby) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let (cur, expire) = match &old {
        // A chunked value is longer than any number.
        Some(m) if m.chunked => return Ok(Err(TypeError::NotInteger)),
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
    let mk = ctx.mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    if old.as_ref().is_some_and(|m| m.chunked) {
        // Longer than Redis reads a float (5 KiB).
        return Ok(Err(TypeError::NotFloat));
    }
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
    let mk = ctx.mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let at = old.as_ref().map_or(0, value_len);
    if at as usize + op.value.len() > MAX_STRING_LEN {
        return Ok(Err(TypeError::TooBig));
    }
    let len = ctx.write_string_range(&op.key, old.as_ref(), at, &op.value)?;
    ctx.event(STRING, "append", &op.key);
    Ok(Ok(Reply::Int(len as i64)))
}

pub fn apply_setrange(ctx: &mut ApplyCtx, op: &pb::Setrange) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    let old = tri!(string_value(ctx.live_meta(&mk)?));
    let add = &op.value;
    if add.is_empty() {
        return Ok(Ok(Reply::Int(old.as_ref().map_or(0, value_len) as i64)));
    }
    let Some(end) = usize::try_from(op.offset).ok().and_then(|o| o.checked_add(add.len())) else {
        return Ok(Err(TypeError::TooBig));
    };
    if end > MAX_STRING_LEN {
        return Ok(Err(TypeError::TooBig));
    }
    let len = ctx.write_string_range(&op.key, old.as_ref(), op.offset, add)?;
    ctx.event(STRING, "setrange", &op.key);
    Ok(Ok(Reply::Int(len as i64)))
}

pub fn apply_getdel(ctx: &mut ApplyCtx, op: &pb::Getdel) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    match tri!(string_value(ctx.live_meta(&mk)?)) {
        None => Ok(Ok(Reply::Nil)),
        Some(m) => {
            let v = value(ctx, &op.key, &m)?;
            ctx.del_key(mk, &m);
            ctx.event(GENERIC, "del", &op.key);
            Ok(Ok(Reply::Bulk(v)))
        }
    }
}

pub fn apply_getex(ctx: &mut ApplyCtx, op: &pb::Getex) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    let Some(m) = tri!(string_value(ctx.live_meta(&mk)?)) else { return Ok(Ok(Reply::Nil)) };
    let reply = Reply::Bulk(value(ctx, &op.key, &m)?);
    if let Some(at) = op.at_ms {
        if at <= ctx.now_ms {
            ctx.del_key(mk, &m);
            ctx.event(GENERIC, "del", &op.key);
        } else {
            ctx.put_meta_over(mk, Some(&m), Meta { expire_ms: at, ..m.clone() }.encode());
            ctx.event(GENERIC, "expire", &op.key);
        }
    } else if op.persist && m.expire_ms != 0 {
        ctx.put_meta_over(mk, Some(&m), Meta { expire_ms: 0, ..m.clone() }.encode());
        ctx.event(GENERIC, "persist", &op.key);
    }
    Ok(Ok(reply))
}

// ---- reads ----

/// GET: the value, `None` if absent.
pub fn get(src: &impl Source, key: &[u8]) -> ReadResult<Option<Bytes>> {
    Ok(Ok(match tri!(src.typed(key, KeyType::String)?) {
        Some(m) => Some(value(src, key, &m)?),
        None => None,
    }))
}

/// GETRANGE's byte range `[from, to)` of a string of `len` bytes, with
/// Redis's index clamping (`None`: empty).
pub fn range_of(len: u64, mut start: i64, mut end: i64) -> Option<(u64, u64)> {
    let len = len.min(i64::MAX as u64) as i64;
    if start < 0 && end < 0 && start > end {
        return None;
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
        return None;
    }
    Some((start as u64, end as u64 + 1))
}

/// GETRANGE with Redis's index clamping, over a whole value.
pub fn getrange(v: &[u8], start: i64, end: i64) -> &[u8] {
    range_of(v.len() as u64, start, end).map_or(b"", |(s, e)| &v[s as usize..e as usize])
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
