//! HyperLogLog values (PFADD, PFCOUNT, PFMERGE), stored as plain strings whose bytes are
//! exactly what Redis 7.0 stores, so a value can move between NeoKV and redis-server.
//!
//! A value is a 16-byte header followed by the registers. The header is the magic "HYLL",
//! one encoding byte (0 dense, 1 sparse), three unused bytes and an 8-byte little-endian
//! cached cardinality; the top bit of its last byte set means the cache is stale. There are
//! 16384 registers. Dense: 6 bits each, packed from the least significant bit of each byte
//! upward, 12288 bytes. Sparse: run-length opcodes, ZERO `00xxxxxx` (1 to 64 zero registers),
//! XZERO `01xxxxxx yyyyyyyy` (1 to 16384 zero registers) and VAL `1vvvvvxx` (1 to 4 registers
//! of value 1 to 32). A new value is sparse; it turns dense when a register needs a value above
//! 32 or the value would grow past `hll-sparse-max-bytes`. Multi-key PFCOUNT and PFMERGE work
//! on "raw" registers, one byte per register, never stored.

// Source followed: Redis's src/hyperloglog.c. The copies of redis/redis held by the reference
// index are older than 7.0 (00cb4c5d, the 2014 version without the sparse encoding, and
// efcdbcb8, a 3.0-era version with the old estimator and without PFMERGE's `use_dense`). The
// code here follows a 7.0-era copy of the file found in the same index (hllSparseSet with the
// `span == 0 || p >= end` check, hllMerge(max, o) returning C_ERR, the Ertl estimator with
// hllSigma/hllTau, PFMERGE converting the target to dense when an input was dense, overflow
// checks that `break` rather than fail). The tests compare the output with GET results of real
// redis-server instances quoted in public material.

use std::fmt;

use super::notify::STRING;
use super::ApplyResult;
use super::{ApplyCtx, TypeError};
use crate::pb;
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::Meta;
use crate::storage::StorageError;

/// Why a value is not usable as an HLL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HllError {
    /// Not an HLL string: "WRONGTYPE Key is not a valid HyperLogLog string value."
    NotHll,
    /// An HLL whose registers do not decode: "INVALIDOBJ Corrupted HLL object detected"
    Corrupt,
}

impl fmt::Display for HllError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HllError::NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
            HllError::Corrupt => "INVALIDOBJ Corrupted HLL object detected",
        })
    }
}

/// Number of registers (HLL_REGISTERS, 2^14).
pub const REGISTERS: usize = 16384;
/// Redis's default `hll-sparse-max-bytes`.
pub const SPARSE_MAX_BYTES: usize = 3000;

/// Bits of the hash that pick the register (HLL_P).
const P: u32 = 14;
/// Bits of the hash left to count the zero run in (HLL_Q = 64 - P).
const Q: usize = 64 - P as usize;
const P_MASK: u64 = (REGISTERS as u64) - 1;
/// Bits per dense register.
const BITS: usize = 6;
const REGISTER_MAX: u8 = (1 << BITS) - 1;
const HDR_SIZE: usize = 16;
/// Header plus 16384 six-bit registers: 16 + 12288.
const DENSE_SIZE: usize = HDR_SIZE + (REGISTERS * BITS).div_ceil(8);
const MAGIC: &[u8; 4] = b"HYLL";
const ENCODING_AT: usize = 4;
const CARD_AT: usize = 8;
const ENC_DENSE: u8 = 0;
const ENC_SPARSE: u8 = 1;
const MAX_ENCODING: u8 = 1;
/// The "cache invalid" flag, in the last card byte.
const CACHE_STALE: u8 = 1 << 7;

const XZERO_BIT: u8 = 0x40;
const VAL_BIT: u8 = 0x80;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;

/// 0.5 / ln(2).
const ALPHA_INF: f64 = 0.721_347_520_444_481_703_680;
const HASH_SEED: u32 = 0xadc8_3b19;

// ---- sparse opcodes ----

fn is_zero(op: u8) -> bool {
    op & 0xc0 == 0
}

fn is_xzero(op: u8) -> bool {
    op & 0xc0 == XZERO_BIT
}

fn is_val(op: u8) -> bool {
    op & VAL_BIT != 0
}

fn zero_len(op: u8) -> usize {
    usize::from(op & 0x3f) + 1
}

fn xzero_len(op: u8, next: u8) -> usize {
    ((usize::from(op & 0x3f) << 8) | usize::from(next)) + 1
}

fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1f) + 1
}

fn val_len(op: u8) -> usize {
    usize::from(op & 0x3) + 1
}

/// VAL opcode for `len` (1..=4) registers of `value` (1..=32).
fn val_op(value: u8, len: usize) -> u8 {
    debug_assert!((1..=VAL_MAX_VALUE).contains(&value) && (1..=VAL_MAX_LEN).contains(&len));
    ((value - 1) << 2) | (len - 1) as u8 | VAL_BIT
}

/// XZERO opcode for `len` (1..=16384) zero registers.
fn xzero_op(len: usize) -> [u8; 2] {
    let l = len - 1;
    [(l >> 8) as u8 | XZERO_BIT, (l & 0xff) as u8]
}

/// Write a run of `len` zero registers at the start of `out` the way hllSparseSet does
/// (ZERO up to 64, XZERO above); returns the bytes written.
fn put_zero_run(out: &mut [u8], len: usize) -> usize {
    if len > ZERO_MAX_LEN {
        out[..2].copy_from_slice(&xzero_op(len));
        2
    } else {
        out[0] = (len - 1) as u8;
        1
    }
}

/// Byte `i` of `v`, or 0 past the end. Redis reads the second byte of an XZERO cut off by the
/// end of the string from the sds terminator, which is 0.
fn byte_or_zero(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

/// The opcode at `p`: (register value, 0 for ZERO/XZERO; registers covered; opcode bytes).
fn sparse_op(v: &[u8], p: usize) -> (u8, usize, usize) {
    let op = v[p];
    if is_zero(op) {
        (0, zero_len(op), 1)
    } else if is_xzero(op) {
        (0, xzero_len(op, byte_or_zero(v, p + 1)), 2)
    } else {
        (val_value(op), val_len(op), 1)
    }
}

// ---- dense registers ----

/// Register `i` of the dense register bytes `regs` (hllDenseGetRegister).
fn dense_get(regs: &[u8], i: usize) -> u8 {
    let bit = i * BITS;
    let byte = bit / 8;
    let fb = (bit & 7) as u32;
    let b0 = u32::from(regs[byte]);
    // The byte after the last register is the sds terminator in Redis; it never contributes.
    let b1 = u32::from(byte_or_zero(regs, byte + 1));
    (((b0 >> fb) | (b1 << (8 - fb))) & u32::from(REGISTER_MAX)) as u8
}

/// Set register `i` of `regs` to `val` (hllDenseSetRegister); `val` must be at most 63.
fn dense_put(regs: &mut [u8], i: usize, val: u8) {
    debug_assert!(val <= REGISTER_MAX);
    let bit = i * BITS;
    let byte = bit / 8;
    let fb = (bit & 7) as u32;
    let fb8 = 8 - fb;
    let v = u32::from(val);
    let max = u32::from(REGISTER_MAX);
    regs[byte] &= !((max << fb) as u8);
    regs[byte] |= (v << fb) as u8;
    // Only registers that straddle two bytes touch the next one (the last register does not).
    if let Some(b1) = regs.get_mut(byte + 1) {
        *b1 &= !((max >> fb8) as u8);
        *b1 |= (v >> fb8) as u8;
    }
}

/// hllDenseSet: raise register `index` to `count`; true if it changed.
fn dense_set(regs: &mut [u8], index: usize, count: u8) -> bool {
    if count > dense_get(regs, index) {
        dense_put(regs, index, count);
        true
    } else {
        false
    }
}

// ---- hashing ----

/// MurmurHash64A as Redis uses it: 8-byte blocks read little-endian on every platform.
fn murmur64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = u64::from(seed) ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut k =
            u64::from_le_bytes([block[0], block[1], block[2], block[3], block[4], block[5], block[6], block[7]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// hllPatLen: the register an element maps to and the length of its "000..1" pattern
/// (1..=Q+1).
fn pat_len(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, HASH_SEED);
    let index = (hash & P_MASK) as usize;
    // The bit at Q guarantees a 1, so the count is at most Q + 1.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// ---- header ----

fn encoding(v: &[u8]) -> u8 {
    v[ENCODING_AT]
}

/// A new, empty HLL as PFADD/PFMERGE create it (sparse).
pub fn new_hll() -> Vec<u8> {
    let ops = REGISTERS.div_ceil(XZERO_MAX_LEN) * 2;
    let mut v = Vec::with_capacity(HDR_SIZE + ops);
    v.extend_from_slice(MAGIC);
    v.push(ENC_SPARSE);
    v.extend_from_slice(&[0; 3]);
    v.extend_from_slice(&[0; 8]);
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(XZERO_MAX_LEN);
        v.extend_from_slice(&xzero_op(run));
        left -= run;
    }
    v
}

/// isHLLObjectOrReply's checks.
pub fn validate(v: &[u8]) -> Result<(), HllError> {
    if v.len() < HDR_SIZE || &v[..4] != MAGIC {
        return Err(HllError::NotHll);
    }
    let enc = encoding(v);
    if enc > MAX_ENCODING || (enc == ENC_DENSE && v.len() != DENSE_SIZE) {
        return Err(HllError::NotHll);
    }
    Ok(())
}

/// Mark the cached cardinality invalid (HLL_INVALIDATE_CACHE).
pub fn invalidate_cache(v: &mut [u8]) {
    if let Some(b) = v.get_mut(CARD_AT + 7) {
        *b |= CACHE_STALE;
    }
}

/// The cached cardinality if the cache is valid.
pub fn cached(v: &[u8]) -> Option<u64> {
    let card: [u8; 8] = v.get(CARD_AT..CARD_AT + 8)?.try_into().ok()?;
    if card[7] & CACHE_STALE != 0 {
        return None;
    }
    Some(u64::from_le_bytes(card))
}

/// Store `card` in the cache bytes, valid (what PFCOUNT does after computing).
pub fn set_cache(v: &mut [u8], card: u64) {
    if let Some(c) = v.get_mut(CARD_AT..CARD_AT + 8) {
        c.copy_from_slice(&card.to_le_bytes());
    }
}

// ---- sparse updates ----

/// hllSparseToDense: rewrite a sparse value as dense, keeping the header (magic, unused bytes
/// and cache bytes). Corrupt if the opcodes do not cover exactly 16384 registers.
fn sparse_to_dense(v: &mut Vec<u8>) -> Result<(), HllError> {
    if encoding(v) == ENC_DENSE {
        return Ok(());
    }
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR_SIZE].copy_from_slice(&v[..HDR_SIZE]);
    dense[ENCODING_AT] = ENC_DENSE;
    let regs = &mut dense[HDR_SIZE..];
    let whole = each_run(v, |idx, run, value| {
        if value != 0 {
            for r in idx..idx + run {
                dense_put(regs, r, value);
            }
        }
    });
    if !whole {
        return Err(HllError::Corrupt);
    }
    *v = dense;
    Ok(())
}

/// Replace the `old_len` bytes at `at` with `new` (the memmove/memcpy of hllSparseSet).
fn replace_bytes(v: &mut Vec<u8>, at: usize, old_len: usize, new: &[u8]) {
    let len = v.len();
    if new.len() > old_len {
        v.resize(len + new.len() - old_len, 0);
        v.copy_within(at + old_len..len, at + new.len());
    } else if new.len() < old_len {
        v.copy_within(at + old_len..len, at + new.len());
        v.truncate(len - (old_len - new.len()));
    }
    v[at..at + new.len()].copy_from_slice(new);
}

/// The promote path of hllSparseSet: convert to dense, then set the register there.
fn promote_and_set(v: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    sparse_to_dense(v)?;
    Ok(dense_set(&mut v[HDR_SIZE..], index, count))
}

/// hllSparseSet: raise register `index` of a sparse value to `count`, editing the opcodes in
/// place exactly as Redis does; true if the register changed. Promotes to dense when `count`
/// is above 32 or the edit would make the value longer than `sparse_max_bytes` (header
/// included). Leaves the cache bytes alone.
fn sparse_set(v: &mut Vec<u8>, index: usize, count: u8, sparse_max_bytes: usize) -> Result<bool, HllError> {
    if count > VAL_MAX_VALUE {
        return promote_and_set(v, index, count);
    }

    // Step 1: find the opcode covering `index`, its first register and the opcode before it.
    let end = v.len();
    let mut p = HDR_SIZE;
    let mut first = 0usize;
    let mut prev: Option<usize> = None;
    let mut span = 0usize;
    while p < end {
        let (_, run, oplen) = sparse_op(v, p);
        span = run;
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += oplen;
        first += span;
    }
    if span == 0 || p >= end {
        return Err(HllError::Corrupt);
    }
    let op = v[p];
    let old_len = if is_xzero(op) { 2 } else { 1 };
    if p + old_len > end {
        // An XZERO cut short by the end of the value. Redis would edit past the end here.
        return Err(HllError::Corrupt);
    }

    // Step 2: the cases updated in place, then the general split.
    let mut in_place = false;
    if is_val(op) {
        if val_value(op) >= count {
            return Ok(false);
        }
        if span == 1 {
            v[p] = val_op(count, 1);
            in_place = true;
        }
    } else if is_zero(op) && span == 1 {
        v[p] = val_op(count, 1);
        in_place = true;
    }

    if !in_place {
        // At most XZERO-VAL-XZERO: 5 bytes.
        let mut seq = [0u8; 5];
        let mut n = 0;
        let last = first + span - 1;
        if is_val(op) {
            let cur = val_value(op);
            if index != first {
                seq[n] = val_op(cur, index - first);
                n += 1;
            }
            seq[n] = val_op(count, 1);
            n += 1;
            if index != last {
                seq[n] = val_op(cur, last - index);
                n += 1;
            }
        } else {
            if index != first {
                n += put_zero_run(&mut seq[n..], index - first);
            }
            seq[n] = val_op(count, 1);
            n += 1;
            if index != last {
                n += put_zero_run(&mut seq[n..], last - index);
            }
        }

        // Step 3: put the new sequence in place of the old opcode, unless that grows the
        // value past the limit.
        if n > old_len && v.len() + (n - old_len) > sparse_max_bytes {
            return promote_and_set(v, index, count);
        }
        replace_bytes(v, p, old_len, &seq[..n]);
    }

    // Step 4: merge adjacent VAL opcodes of equal value, scanning up to 5 opcodes from the
    // one before the edit.
    let mut p = prev.unwrap_or(HDR_SIZE);
    let mut scan = 5;
    while p < v.len() && scan > 0 {
        scan -= 1;
        let op = v[p];
        if is_xzero(op) {
            p += 2;
            continue;
        }
        if is_zero(op) {
            p += 1;
            continue;
        }
        if p + 1 < v.len() && is_val(v[p + 1]) {
            let next = v[p + 1];
            let value = val_value(op);
            if value == val_value(next) {
                let len = val_len(op) + val_len(next);
                if len <= VAL_MAX_LEN {
                    v[p + 1] = val_op(value, len);
                    v.remove(p);
                    // Stay on the merged opcode: it may merge with the one on its right.
                    continue;
                }
            }
        }
        p += 1;
    }
    Ok(true)
}

/// PFADD of one element (hllAdd): true if a register changed. Promotes sparse to dense when
/// Redis would. Does NOT touch the cache bytes (the caller invalidates once per command).
pub fn add(v: &mut Vec<u8>, element: &[u8], sparse_max_bytes: usize) -> Result<bool, HllError> {
    validate(v)?;
    let (index, count) = pat_len(element);
    if encoding(v) == ENC_DENSE {
        Ok(dense_set(&mut v[HDR_SIZE..], index, count))
    } else {
        sparse_set(v, index, count, sparse_max_bytes)
    }
}

// ---- counting ----

/// Visit the runs of a sparse value's opcodes in order, as `f(first register, length,
/// value)`; false (corrupt) if they do not cover exactly 16384 registers. A run of non-zero
/// values past the last register stops the walk before `f` sees it.
fn each_run(v: &[u8], mut f: impl FnMut(usize, usize, u8)) -> bool {
    let mut idx = 0usize;
    let mut p = HDR_SIZE;
    while p < v.len() {
        let (value, run, oplen) = sparse_op(v, p);
        if value != 0 && idx + run > REGISTERS {
            return false;
        }
        f(idx, run, value);
        idx += run;
        p += oplen;
    }
    idx == REGISTERS
}

/// Register histogram of sparse opcodes (hllSparseRegHisto); false if they do not cover
/// exactly 16384 registers.
fn sparse_histogram(v: &[u8], hist: &mut [u64; 64]) -> bool {
    each_run(v, |_, run, value| hist[usize::from(value)] += run as u64)
}

/// hllSigma from Ertl, "New cardinality estimation algorithms for HyperLogLog sketches".
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_prev = z;
        z += x * y;
        y += y;
        if z_prev == z {
            return z;
        }
    }
}

/// hllTau, same paper. Redis writes `pow(1 - x, 2)`, which compilers turn into a product.
fn tau(mut x: f64) -> f64 {
    // Redis checks only 0 and 1; values outside (0, 1) cannot come from 16384 registers.
    if x.is_nan() || x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_prev = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if z_prev == z {
            return z / 3.0;
        }
    }
}

/// The estimator of hllCount over a register histogram, with Redis's order of operations.
fn count_histogram(hist: &[u64; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - hist[Q + 1] as f64) / m);
    for &h in hist[1..=Q].iter().rev() {
        z += h as f64;
        z *= 0.5;
    }
    z += m * sigma(hist[0] as f64 / m);
    // llroundl: nearest, halves away from zero; out of range (possible only for
    // a hand-made value) it gives LLONG_MIN on x86-64, as Redis does there.
    let e = (ALPHA_INF * m * m / z).round();
    if e.is_finite() && e < 9_223_372_036_854_775_808.0 {
        e as u64
    } else {
        i64::MIN as u64
    }
}

/// hllCount of a stored HLL (dense or sparse); Err(Corrupt) where Redis reports a corrupt sparse HLL.
pub fn estimate(v: &[u8]) -> Result<u64, HllError> {
    validate(v)?;
    let mut hist = [0u64; 64];
    if encoding(v) == ENC_DENSE {
        let regs = &v[HDR_SIZE..];
        for i in 0..REGISTERS {
            hist[usize::from(dense_get(regs, i))] += 1;
        }
    } else if !sparse_histogram(v, &mut hist) {
        return Err(HllError::Corrupt);
    }
    Ok(count_histogram(&hist))
}

/// hllCount of raw registers (multi-key PFCOUNT).
pub fn estimate_raw(max: &[u8; REGISTERS]) -> u64 {
    let mut hist = [0u64; 64];
    for &r in max.iter() {
        hist[usize::from(r.min(REGISTER_MAX))] += 1;
    }
    count_histogram(&hist)
}

// ---- merging ----

/// hllMerge: max[i] = max(max[i], register i of v). Returns Ok(true) if v is dense.
pub fn merge_into(max: &mut [u8; REGISTERS], v: &[u8]) -> Result<bool, HllError> {
    validate(v)?;
    if encoding(v) == ENC_DENSE {
        let regs = &v[HDR_SIZE..];
        for (i, m) in max.iter_mut().enumerate() {
            let r = dense_get(regs, i);
            if r > *m {
                *m = r;
            }
        }
        return Ok(true);
    }
    let whole = each_run(v, |i, run, value| {
        if value != 0 {
            for m in &mut max[i..i + run] {
                if value > *m {
                    *m = value;
                }
            }
        }
    });
    if !whole {
        return Err(HllError::Corrupt);
    }
    Ok(false)
}

/// PFMERGE's write-out into an existing or new HLL `dest`: convert to dense first if
/// `to_dense` (Redis 7.0: an input was dense), then set every non-zero register
/// (dense set, or sparse set with promotion), then invalidate the cache.
///
/// As in Redis, an existing `dest` is expected to be one of the inputs already merged into
/// `max` (PFMERGE reads the destination key as its first source).
pub fn store_max(
    dest: &mut Vec<u8>,
    max: &[u8; REGISTERS],
    to_dense: bool,
    sparse_max_bytes: usize,
) -> Result<(), HllError> {
    validate(dest)?;
    if to_dense {
        sparse_to_dense(dest)?;
    }
    for (j, &m) in max.iter().enumerate() {
        if m == 0 {
            continue;
        }
        let m = m.min(REGISTER_MAX);
        if encoding(dest) == ENC_DENSE {
            dense_set(&mut dest[HDR_SIZE..], j, m);
        } else {
            sparse_set(dest, j, m, sparse_max_bytes)?;
        }
    }
    invalidate_cache(dest);
    Ok(())
}

// ---- apply: PFADD, PFCOUNT's cache, PFMERGE ----

/// The Redis error for `e`.
pub fn type_error(e: HllError) -> TypeError {
    match e {
        HllError::NotHll => TypeError::Msg("WRONGTYPE Key is not a valid HyperLogLog string value."),
        HllError::Corrupt => TypeError::Msg("INVALIDOBJ Corrupted HLL object detected"),
    }
}

/// A string key's value, WRONGTYPE for another type.
/// The value of a string to be read as an HLL: inline, or (past 16 KiB)
/// chunked. A chunked value is read whole only when its header is an HLL's
/// (a sparse one, the only kind that long; Redis then reads its opcodes as
/// far as it needs); any other answers Redis's type error at once, as
/// Redis's magic check does, without reading the value.
fn hll_value(
    src: &impl super::view::Source,
    key: &[u8],
    m: &Meta,
) -> Result<Result<bytes::Bytes, TypeError>, StorageError> {
    if !m.chunked {
        return Ok(Ok(m.payload.clone()));
    }
    let head = super::string::read_range(src, key, m, 0, HDR_SIZE as u64)?;
    if &head[..4] != MAGIC || encoding(&head) != ENC_SPARSE {
        return Ok(Err(type_error(HllError::NotHll)));
    }
    Ok(Ok(super::string::value(src, key, m)?))
}

/// `key` for an HLL write: its live metadata and value, `None` if absent.
fn string_of(ctx: &ApplyCtx, key: &[u8]) -> Result<Result<Option<(Meta, bytes::Bytes)>, TypeError>, StorageError> {
    Ok(match ctx.live_meta(&ctx.mkey(key))? {
        Some(m) if m.kind != KeyType::String => Err(TypeError::WrongType),
        Some(m) => match hll_value(ctx, key, &m)? {
            Ok(v) => Ok(Some((m, v))),
            Err(e) => Err(e),
        },
        None => Ok(None),
    })
}

/// The value of `key` for a read of an HLL: `None` if absent; WRONGTYPE for
/// another type (see `hll_value` for a chunked string).
pub fn read(
    src: &impl super::view::Source,
    key: &[u8],
) -> Result<Result<Option<bytes::Bytes>, TypeError>, StorageError> {
    Ok(match src.typed(key, KeyType::String)? {
        Err(e) => Err(e),
        Ok(Some(m)) => hll_value(src, key, &m)?.map(Some),
        Ok(None) => Ok(None),
    })
}

/// Store `v` as the key's value, keeping its TTL.
fn store(ctx: &mut ApplyCtx, key: &[u8], old: Option<&Meta>, v: &[u8]) {
    let expire = old.map(|m| m.expire_ms).unwrap_or(0);
    let meta = ctx.string_meta(key, expire, v);
    ctx.put_meta_over(ctx.mkey(key), old, meta);
}

/// PFADD (Redis's `pfaddCommand`): a new key counts as a change, and any
/// change invalidates the cached cardinality.
pub fn apply_pfadd(ctx: &mut ApplyCtx, op: &pb::Pfadd) -> ApplyResult {
    let old = tri!(string_of(ctx, &op.key)?);
    let (mut v, mut updated) = match &old {
        None => (new_hll(), true),
        Some((_, val)) => {
            tri!(validate(val).map_err(type_error));
            (val.to_vec(), false)
        }
    };
    for e in &op.elements {
        updated |= tri!(add(&mut v, e, SPARSE_MAX_BYTES).map_err(type_error));
    }
    if updated {
        invalidate_cache(&mut v);
        store(ctx, &op.key, old.as_ref().map(|(m, _)| m), &v);
        ctx.event(STRING, "pfadd", &op.key);
    }
    Ok(Ok(Reply::Int(updated as i64)))
}

/// PFCOUNT of one key: count it and store the cache (unless it became valid
/// meanwhile). A change of the key for WATCH, as in Redis; no event.
pub fn apply_pfcount(ctx: &mut ApplyCtx, op: &pb::Pfcount) -> ApplyResult {
    let Some((m, val)) = tri!(string_of(ctx, &op.key)?) else { return Ok(Ok(Reply::Int(0))) };
    tri!(validate(&val).map_err(type_error));
    if let Some(n) = cached(&val) {
        return Ok(Ok(Reply::Int(n as i64)));
    }
    let n = tri!(estimate(&val).map_err(type_error));
    let mut v = val.to_vec();
    set_cache(&mut v, n);
    store(ctx, &op.key, Some(&m), &v);
    Ok(Ok(Reply::Int(n as i64)))
}

/// PFMERGE (Redis 7.0's `pfmergeCommand`): the register-wise maximum of the
/// destination and the sources goes into the destination, made dense first
/// if any input was dense.
pub fn apply_pfmerge(ctx: &mut ApplyCtx, op: &pb::Pfmerge) -> ApplyResult {
    let old = tri!(string_of(ctx, &op.dest)?);
    let mut max = Box::new([0u8; REGISTERS]);
    let mut to_dense = false;
    // The destination is the first input, as in Redis (its errors come first).
    let mut merge = |v: &[u8]| merge_into(&mut max, v).map(|dense| to_dense |= dense).map_err(type_error);
    if let Some((_, val)) = &old {
        tri!(merge(val));
    }
    for k in &op.sources {
        if let Some((_, val)) = tri!(string_of(ctx, k)?) {
            tri!(merge(&val));
        }
    }
    let mut v = match &old {
        Some((_, val)) => val.to_vec(),
        None => new_hll(),
    };
    tri!(store_max(&mut v, &max, to_dense, SPARSE_MAX_BYTES).map_err(type_error));
    store(ctx, &op.dest, old.as_ref().map(|(m, _)| m), &v);
    ctx.event(STRING, "pfadd", &op.dest);
    Ok(Ok(Reply::Ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PFDEBUG DECODE's rendering of sparse opcodes.
    fn decode(v: &[u8]) -> String {
        let mut out = Vec::new();
        let mut p = HDR_SIZE;
        while p < v.len() {
            let op = v[p];
            if is_zero(op) {
                out.push(format!("z:{}", zero_len(op)));
                p += 1;
            } else if is_xzero(op) {
                out.push(format!("Z:{}", xzero_len(op, byte_or_zero(v, p + 1))));
                p += 2;
            } else {
                out.push(format!("v:{},{}", val_value(op), val_len(op)));
                p += 1;
            }
        }
        out.join(" ")
    }

    fn build(elements: impl IntoIterator<Item = Vec<u8>>, limit: usize) -> Vec<u8> {
        let mut v = new_hll();
        for e in elements {
            add(&mut v, &e, limit).unwrap();
        }
        v
    }

    fn numbers(range: std::ops::RangeInclusive<u32>) -> impl Iterator<Item = Vec<u8>> {
        range.map(|i| i.to_string().into_bytes())
    }

    /// PFADD with each element, as the command does it: the value changed, so the cache is
    /// invalidated.
    fn pfadd(elements: &[&str]) -> Vec<u8> {
        let mut v = build(elements.iter().map(|e| e.as_bytes().to_vec()), SPARSE_MAX_BYTES);
        invalidate_cache(&mut v);
        v
    }

    fn registers(v: &[u8]) -> Vec<u8> {
        let mut max = [0u8; REGISTERS];
        merge_into(&mut max, v).unwrap();
        max.to_vec()
    }

    #[test]
    fn murmur64a_vectors() {
        // Seed 0 and no input: h starts at 0 and every step keeps it 0.
        assert_eq!(murmur64a(b"", 0), 0);
        // The rest were computed with an independent model of the same algorithm.
        assert_eq!(murmur64a(b"", HASH_SEED), 0xd8df_ea65_85bc_9732);
        assert_eq!(murmur64a(b"a", HASH_SEED), 0x53d2_470a_9b43_b1a7);
        assert_eq!(murmur64a(b"12345678", HASH_SEED), 0x95eb_b863_8913_2953);
        assert_eq!(murmur64a(b"abcdefghi", HASH_SEED), 0x834f_ba4d_9152_daf7);
        assert_eq!(murmur64a(b"hello world!", HASH_SEED), 0x0fc4_4401_1f57_220c);
        assert_ne!(murmur64a(b"a", 0), murmur64a(b"a", HASH_SEED));
    }

    #[test]
    fn pattern_lengths() {
        assert_eq!(pat_len(b"a"), (12711, 2));
        assert_eq!(pat_len(b"b"), (15780, 1));
        assert_eq!(pat_len(b"c"), (8436, 1));
        assert_eq!(pat_len(b"1"), (7527, 1));
    }

    #[test]
    fn new_hll_bytes() {
        let v = new_hll();
        assert_eq!(v, b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff");
        assert_eq!(v.len(), 18);
        assert_eq!(decode(&v), "Z:16384");
        assert_eq!(validate(&v), Ok(()));
        assert_eq!(estimate(&v), Ok(0));
        assert_eq!(cached(&v), Some(0));
    }

    /// Values GET returned from real redis-server instances after these PFADDs.
    #[test]
    fn matches_redis_values() {
        assert_eq!(
            pfadd(&["a", "b", "c"]),
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80`\xf3\x80P\xb1\x84K\xfb\x80BZ"
        );
        assert_eq!(pfadd(&["1"]), b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80]f\x80b\x97");
        assert_eq!(
            pfadd(&["python", "java", "golang"]),
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80C\x03\x84MK\x80P\xb8\x80^\xf3"
        );
        assert_eq!(
            pfadd(&["1", "1", "2", "2", "3", "3"]),
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80]f\x80Mt\x80Q,\x8cC\xf3"
        );
        // PFADD a..f, PFADD g h, PFCOUNT (8, cached).
        let mut v = pfadd(&["a", "b", "c", "d", "e", "f"]);
        for e in ["g", "h"] {
            add(&mut v, e.as_bytes(), SPARSE_MAX_BYTES).unwrap();
        }
        invalidate_cache(&mut v);
        assert_eq!(cached(&v), None);
        let card = estimate(&v).unwrap();
        assert_eq!(card, 8);
        set_cache(&mut v, card);
        assert_eq!(&v[..HDR_SIZE], b"HYLL\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00");
        assert_eq!(&v[HDR_SIZE..], b"Fm\x80V\x0c\x80D<\x848\x80M\xc2\x80B\xed\x84I\x8c\x80Bm\x80BZ");
    }

    #[test]
    fn add_reports_changes() {
        let mut v = new_hll();
        assert_eq!(add(&mut v, b"a", SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(add(&mut v, b"a", SPARSE_MAX_BYTES), Ok(false));
        assert_eq!(add(&mut v, b"", SPARSE_MAX_BYTES), Ok(true));
        // add leaves the cache bytes alone.
        assert_eq!(cached(&v), Some(0));
    }

    /// The example in hyperloglog.c: registers 1000, 1020, 1021 set to 2, 3, 3.
    #[test]
    fn sparse_opcode_sequences() {
        let mut v = new_hll();
        assert_eq!(sparse_set(&mut v, 1000, 2, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(decode(&v), "Z:1000 v:2,1 Z:15383");
        assert_eq!(sparse_set(&mut v, 1020, 3, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(decode(&v), "Z:1000 v:2,1 z:19 v:3,1 Z:15363");
        assert_eq!(sparse_set(&mut v, 1021, 3, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(decode(&v), "Z:1000 v:2,1 z:19 v:3,2 Z:15362");
        assert_eq!(&v[HDR_SIZE..], &[0x43, 0xe7, 0x84, 0x12, 0x89, 0x7c, 0x01]);
        assert_eq!(sparse_set(&mut v, 1021, 3, SPARSE_MAX_BYTES), Ok(false));

        // VAL runs: merged when equal and adjacent, split when one register rises.
        let mut v = new_hll();
        for i in [10, 11, 12] {
            sparse_set(&mut v, i, 3, SPARSE_MAX_BYTES).unwrap();
        }
        assert_eq!(decode(&v), "z:10 v:3,3 Z:16371");
        assert_eq!(sparse_set(&mut v, 11, 5, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(decode(&v), "z:10 v:3,1 v:5,1 v:3,1 Z:16371");
        assert_eq!(sparse_set(&mut v, 11, 4, SPARSE_MAX_BYTES), Ok(false));

        // A single zero register becomes a VAL in place; a one-register XZERO shrinks.
        let mut v = new_hll();
        sparse_set(&mut v, 1, 1, SPARSE_MAX_BYTES).unwrap();
        assert_eq!(decode(&v), "z:1 v:1,1 Z:16382");
        sparse_set(&mut v, 0, 1, SPARSE_MAX_BYTES).unwrap();
        assert_eq!(decode(&v), "v:1,2 Z:16382");
        let mut v = new_hll();
        sparse_set(&mut v, 0, 7, SPARSE_MAX_BYTES).unwrap();
        assert_eq!(decode(&v), "v:7,1 Z:16383");
    }

    #[test]
    fn promotes_on_value_above_32() {
        let mut v = new_hll();
        set_cache(&mut v, 7);
        assert_eq!(sparse_set(&mut v, 5, 32, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(encoding(&v), ENC_SPARSE);
        assert_eq!(sparse_set(&mut v, 6, 33, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(encoding(&v), ENC_DENSE);
        assert_eq!(v.len(), DENSE_SIZE);
        assert_eq!(validate(&v), Ok(()));
        // The header, cache bytes included, carries over.
        assert_eq!(&v[..4], MAGIC);
        assert_eq!(cached(&v), Some(7));
        let regs = registers(&v);
        assert_eq!((regs[5], regs[6]), (32, 33));
        assert_eq!(regs.iter().filter(|&&r| r != 0).count(), 2);
    }

    #[test]
    fn promotes_at_byte_limit() {
        // Splitting the XZERO makes 5 bytes of 2: 18 + 3 = 21.
        let mut v = new_hll();
        assert_eq!(sparse_set(&mut v, 1000, 1, 21), Ok(true));
        assert_eq!(encoding(&v), ENC_SPARSE);
        assert_eq!(v.len(), 21);
        // At the limit, an edit that does not grow the value stays sparse.
        assert_eq!(sparse_set(&mut v, 1000, 5, 21), Ok(true));
        assert_eq!(encoding(&v), ENC_SPARSE);
        let mut v = new_hll();
        assert_eq!(sparse_set(&mut v, 1000, 1, 20), Ok(true));
        assert_eq!(encoding(&v), ENC_DENSE);
        assert_eq!(registers(&v)[1000], 1);

        // With the default limit, "1".."1648" fill exactly 3000 bytes; "1649" needs more.
        let mut v = build(numbers(1..=1648), SPARSE_MAX_BYTES);
        assert_eq!(encoding(&v), ENC_SPARSE);
        assert_eq!(v.len(), 3000);
        let before = estimate(&v).unwrap();
        assert_eq!(add(&mut v, b"1649", SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(encoding(&v), ENC_DENSE);
        assert!(estimate(&v).unwrap() >= before);
    }

    #[test]
    fn round_trip_estimates() {
        // 1001 is what redis-server answers for PFADD of 1..1000 then PFCOUNT.
        let small = build(numbers(1..=1000), SPARSE_MAX_BYTES);
        assert_eq!(encoding(&small), ENC_SPARSE);
        assert_eq!(small.len(), 1922);
        assert_eq!(estimate(&small), Ok(1001));

        let big = build(numbers(1..=10000), SPARSE_MAX_BYTES);
        assert_eq!(encoding(&big), ENC_DENSE);
        let est = estimate(&big).unwrap();
        assert!((9800..=10200).contains(&est), "estimate {est}");
        assert_eq!(est, 9988);
    }

    #[test]
    fn merge_matches_single_estimate() {
        for v in [build(numbers(1..=1000), SPARSE_MAX_BYTES), build(numbers(1..=10000), SPARSE_MAX_BYTES)] {
            let mut max = [0u8; REGISTERS];
            let dense = merge_into(&mut max, &v).unwrap();
            assert_eq!(dense, encoding(&v) == ENC_DENSE);
            assert_eq!(estimate_raw(&max), estimate(&v).unwrap());
        }
        assert_eq!(estimate_raw(&[0u8; REGISTERS]), 0);
    }

    #[test]
    fn pfmerge_write_out() {
        let foo = build(numbers(1..=1000), SPARSE_MAX_BYTES);
        let bar = build(numbers(2000..=2500), SPARSE_MAX_BYTES);
        let mut max = [0u8; REGISTERS];
        assert_eq!(merge_into(&mut max, &foo), Ok(false));
        assert_eq!(merge_into(&mut max, &bar), Ok(false));
        assert_eq!(estimate_raw(&max), 1505);

        let mut dest = new_hll();
        store_max(&mut dest, &max, false, SPARSE_MAX_BYTES).unwrap();
        assert_eq!(encoding(&dest), ENC_SPARSE);
        assert_eq!(dest.len(), 2732);
        assert_eq!(cached(&dest), None);
        assert_eq!(estimate(&dest), Ok(1505));
        assert_eq!(registers(&dest), max.to_vec());

        let mut dense = new_hll();
        store_max(&mut dense, &max, true, SPARSE_MAX_BYTES).unwrap();
        assert_eq!(encoding(&dense), ENC_DENSE);
        assert_eq!(estimate(&dense), Ok(1505));
        assert_eq!(registers(&dense), max.to_vec());

        // Registers written in index order: the opcodes redis-server produces for this union.
        let mut max = [0u8; REGISTERS];
        merge_into(&mut max, &build(numbers(1..=300), SPARSE_MAX_BYTES)).unwrap();
        merge_into(&mut max, &build(numbers(200..=500), SPARSE_MAX_BYTES)).unwrap();
        let mut dest = new_hll();
        store_max(&mut dest, &max, false, SPARSE_MAX_BYTES).unwrap();
        assert_eq!(dest.len(), 1061);
        assert_eq!(
            &dest[HDR_SIZE..40],
            &[
                0x0b, 0x88, 0x40, 0x66, 0x88, 0x40, 0x46, 0x90, 0x1c, 0x80, 0x06, 0x84, 0x0e, 0x8c, 0x37, 0x80, 0x28,
                0x84, 0x20, 0x8c, 0x06, 0x80, 0x22, 0x8c
            ]
        );
        assert_eq!(estimate(&dest), Ok(503));
    }

    #[test]
    fn validate_checks() {
        assert_eq!(validate(b"HYLL"), Err(HllError::NotHll));
        let mut v = new_hll();
        v[3] = b'X';
        assert_eq!(validate(&v), Err(HllError::NotHll));
        let mut v = new_hll();
        v[ENCODING_AT] = 2;
        assert_eq!(validate(&v), Err(HllError::NotHll));
        let mut v = new_hll();
        v[ENCODING_AT] = ENC_DENSE;
        assert_eq!(validate(&v), Err(HllError::NotHll));
        v.resize(DENSE_SIZE - 1, 0);
        assert_eq!(validate(&v), Err(HllError::NotHll));
        v.push(0);
        assert_eq!(validate(&v), Ok(()));
        v.push(0);
        assert_eq!(validate(&v), Err(HllError::NotHll));
        let mut s = b"not an hll at all".to_vec();
        assert_eq!(add(&mut s, b"x", SPARSE_MAX_BYTES), Err(HllError::NotHll));
        assert_eq!(estimate(&s), Err(HllError::NotHll));
        assert_eq!(merge_into(&mut [0; REGISTERS], &s), Err(HllError::NotHll));
    }

    #[test]
    fn corrupt_sparse() {
        // XZERO:16383 leaves the last register uncovered.
        let mut short = new_hll();
        short[HDR_SIZE + 1] = 0xfe;
        assert_eq!(validate(&short), Ok(()));
        assert_eq!(estimate(&short), Err(HllError::Corrupt));
        assert_eq!(merge_into(&mut [0; REGISTERS], &short), Err(HllError::Corrupt));
        assert_eq!(sparse_set(&mut short, 16383, 1, SPARSE_MAX_BYTES), Err(HllError::Corrupt));
        assert_eq!(sparse_to_dense(&mut short), Err(HllError::Corrupt));

        // One register too many.
        let mut long = new_hll();
        long.push(0x00);
        assert_eq!(estimate(&long), Err(HllError::Corrupt));
        assert_eq!(merge_into(&mut [0; REGISTERS], &long), Err(HllError::Corrupt));
        let mut max = [0u8; REGISTERS];
        max[3] = 40;
        assert_eq!(store_max(&mut long, &max, true, SPARSE_MAX_BYTES), Err(HllError::Corrupt));

        // A header with a single ZERO:1 opcode.
        let one = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x00";
        assert_eq!(estimate(one), Err(HllError::Corrupt));
        // No opcodes at all.
        let mut empty = new_hll();
        empty.truncate(HDR_SIZE);
        assert_eq!(estimate(&empty), Err(HllError::Corrupt));
        assert_eq!(sparse_set(&mut empty, 0, 1, SPARSE_MAX_BYTES), Err(HllError::Corrupt));
    }

    #[test]
    fn cache_bytes() {
        let mut v = new_hll();
        assert_eq!(cached(&v), Some(0));
        set_cache(&mut v, 0x0102_0304_0506);
        assert_eq!(&v[CARD_AT..CARD_AT + 8], &[6, 5, 4, 3, 2, 1, 0, 0]);
        assert_eq!(cached(&v), Some(0x0102_0304_0506));
        invalidate_cache(&mut v);
        assert_eq!(v[CARD_AT + 7], 0x80);
        assert_eq!(cached(&v), None);
        set_cache(&mut v, 42);
        assert_eq!(cached(&v), Some(42));
        assert_eq!(cached(b"HYLL"), None);
    }

    #[test]
    fn dense_registers_round_trip() {
        let mut regs = vec![0u8; DENSE_SIZE - HDR_SIZE];
        let mut want = [0u8; REGISTERS];
        let mut x: u32 = 12345;
        for (i, w) in want.iter_mut().enumerate() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *w = ((x >> 16) as u8) & REGISTER_MAX;
            dense_put(&mut regs, i, *w);
        }
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(dense_get(&regs, i), w, "register {i}");
        }
        // Register 1 spans bytes 0 and 1: bits 6-7 of byte 0, bits 0-3 of byte 1.
        let mut regs = vec![0u8; 3];
        dense_put(&mut regs, 1, 0b11_1111);
        assert_eq!(regs, [0b1100_0000, 0b0000_1111, 0]);
    }

    #[test]
    fn estimator_edges() {
        let mut max = [0u8; REGISTERS];
        max[0] = 51;
        assert_eq!(estimate_raw(&max), 1);
        for r in max.iter_mut().skip(REGISTERS / 2) {
            *r = 51;
        }
        max[0] = 0;
        assert_eq!(estimate_raw(&max), 13268);
        assert_eq!(estimate_raw(&[1u8; REGISTERS]), 23637);
    }
}
