//! The storage-free logic of Redis 7.0's bitmap commands (`bitops.c`): argument
//! parsing (bit offsets, BITFIELD types and subcommands), range resolution for
//! BITCOUNT and BITPOS, bit-field reads and writes with the overflow rules, and
//! BITOP.
//!
//! Callers read string values lazily (big strings live in 1 KiB chunks), so
//! nothing here needs a whole value: range functions take the string's length
//! and return a [`Span`] of bytes to read; the scanning functions take exactly
//! those bytes; field accessors take a byte window.
//!
//! Bits are numbered as Redis numbers them: bit 0 is the most significant bit of
//! byte 0, bit 8 the most significant bit of byte 1, and so on.
//!
//! Redis compares keywords (subcommands, `BIT`/`BYTE`, overflow kinds, BITOP
//! operations, field types) as C strings, so an argument holding a NUL byte is
//! cut at it: `GET\0x` is `GET`. This module does the same.

use bytes::Bytes;

/// Redis's error strings (exact texts, with the "ERR " prefix).
pub const BIT_OFFSET_ERR: &str = "ERR bit offset is not an integer or out of range";
pub const BIT_VALUE_ERR: &str = "ERR bit is not an integer or out of range";
pub const FIELD_TYPE_ERR: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
pub const OVERFLOW_TYPE_ERR: &str = "ERR Invalid OVERFLOW type specified";
pub const BITFIELD_RO_ERR: &str = "ERR BITFIELD_RO only supports the GET subcommand";
pub const BITOP_NOT_ERR: &str = "ERR BITOP NOT must be called with a single source key.";
pub const BITPOS_BIT_ERR: &str = "ERR The bit argument must be 1 or 0.";
pub const SYNTAX_ERR: &str = "ERR syntax error";
pub const NOT_INTEGER_ERR: &str = "ERR value is not an integer or out of range";

/// Offsets are refused when `offset >> 3` reaches this many bytes (Redis's
/// default `proto-max-bulk-len`, 512 MiB), i.e. the largest offset is 2^32 - 1.
const MAX_BYTES: i64 = 512 * 1024 * 1024;

/// Redis's `string2ll`: an optional '-', then "0" alone or a digit 1-9 followed by
/// digits; no '+', no spaces, no leading zeros, no "-0", within i64.
fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if neg {
        if v > 1u64 << 63 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// The argument as C sees it: up to its first NUL byte.
fn cstr(arg: &[u8]) -> &[u8] {
    match arg.iter().position(|&b| b == 0) {
        Some(n) => &arg[..n],
        None => arg,
    }
}

/// `strcasecmp(arg, word) == 0`.
fn keyword(arg: &[u8], word: &str) -> bool {
    cstr(arg).eq_ignore_ascii_case(word.as_bytes())
}

/// getBitOffsetFromArgument: a plain non-negative integer (string2ll rules), or
/// with `hash` (BITFIELD) and `bits > 0`, `#N` meaning N * bits. Redis bounds the
/// offset alone (`offset >> 3 < 512 MiB`, so at most 2^32 - 1), not offset + bits:
/// SETBIT grows a string to at most 2^29 bytes (512 MiB), but a BITFIELD write at
/// offset 2^32 - 1 may grow it to 2^29 + 8 bytes (see [`bitfield_grow_len`]).
/// The `#N` product wraps around like Redis's 64-bit multiplication (observed:
/// `GET i64 #1152921504606846976` reads offset 0, `#144115188075855872` is an
/// error because the product wraps to a negative number).
pub fn bit_offset(arg: &[u8], hash: bool, bits: u64) -> Result<u64, &'static str> {
    let use_hash = hash && bits > 0 && arg.first() == Some(&b'#');
    let digits = if use_hash { &arg[1..] } else { arg };
    let mut n = string2ll(digits).ok_or(BIT_OFFSET_ERR)?;
    if use_hash {
        n = n.wrapping_mul(bits as i64);
    }
    if n < 0 || (n >> 3) >= MAX_BYTES {
        return Err(BIT_OFFSET_ERR);
    }
    Ok(n as u64)
}

/// SETBIT's value: exactly "0" or "1" (string2ll rules), else [`BIT_VALUE_ERR`].
pub fn bit_value(arg: &[u8]) -> Result<bool, &'static str> {
    match string2ll(arg) {
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        _ => Err(BIT_VALUE_ERR),
    }
}

/// BITPOS's bit argument: not an integer is [`NOT_INTEGER_ERR`], an integer other
/// than 0 or 1 is [`BITPOS_BIT_ERR`]. Redis parses it before looking the key up.
pub fn bitpos_bit(arg: &[u8]) -> Result<bool, &'static str> {
    match string2ll(arg) {
        None => Err(NOT_INTEGER_ERR),
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        Some(_) => Err(BITPOS_BIT_ERR),
    }
}

/// The BITCOUNT/BITPOS range unit: `BIT` is true, `BYTE` false (any case), else
/// [`SYNTAX_ERR`].
pub fn range_unit(arg: &[u8]) -> Result<bool, &'static str> {
    if keyword(arg, "bit") {
        Ok(true)
    } else if keyword(arg, "byte") {
        Ok(false)
    } else {
        Err(SYNTAX_ERR)
    }
}

/// A BITFIELD type: i1..i64, u1..u63.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldType {
    pub signed: bool,
    pub bits: u32,
}

/// getBitfieldTypeFromArgument: a lowercase `i` or `u` then the width (string2ll
/// rules), 1..=64 signed or 1..=63 unsigned.
pub fn field_type(arg: &[u8]) -> Result<FieldType, &'static str> {
    let arg = cstr(arg);
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(FIELD_TYPE_ERR),
    };
    let max = if signed { 64 } else { 63 };
    match string2ll(&arg[1..]) {
        Some(n) if (1..=max).contains(&n) => Ok(FieldType { signed, bits: n as u32 }),
        _ => Err(FIELD_TYPE_ERR),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// The 9 bytes of `window` from `start` as a big-endian number in the low 72
/// bits of a u128 (bytes past the window read as 0).
fn load9(window: &[u8], start: usize) -> u128 {
    let mut acc = 0u128;
    for i in 0..9 {
        let b = start.checked_add(i).and_then(|k| window.get(k)).copied().unwrap_or(0);
        acc = (acc << 8) | u128::from(b);
    }
    acc
}

/// The low `t.bits` bits of `v`, sign-extended for a signed type.
fn truncate(v: u64, t: FieldType) -> i64 {
    let shift = 64 - t.bits;
    if t.signed {
        ((v << shift) as i64) >> shift
    } else {
        (v << shift >> shift) as i64
    }
}

/// The bits [bit, bit + t.bits) of `window` as a signed or unsigned value
/// (unsigned types have at most 63 bits, so they fit). Bytes past the window's
/// end read as 0.
pub fn get_field(window: &[u8], bit: u64, t: FieldType) -> i64 {
    let start = usize::try_from(bit / 8).unwrap_or(usize::MAX);
    let skip = (bit % 8) as u32;
    let acc = load9(window, start);
    // 72 loaded bits; the field starts `skip` bits in: skip + bits <= 71.
    let raw = (acc >> (72 - skip - t.bits)) as u64;
    truncate(raw, t)
}

/// Write `value`'s low `t.bits` bits at [bit, bit + t.bits) of `window`, which
/// must reach byte `(bit + t.bits - 1) / 8` (it panics otherwise).
pub fn set_field(window: &mut [u8], bit: u64, t: FieldType, value: i64) {
    let start = (bit / 8) as usize;
    let skip = (bit % 8) as u32;
    let nbytes = (skip + t.bits).div_ceil(8) as usize;
    let end = start + nbytes;
    let mut acc = 0u128;
    for &b in &window[start..end] {
        acc = (acc << 8) | u128::from(b);
    }
    let width = nbytes as u32 * 8;
    let low = width - skip - t.bits;
    let field_mask = (u128::from(u64::MAX) >> (64 - t.bits)) << low;
    let bits = (u128::from(value as u64) << low) & field_mask;
    acc = (acc & !field_mask) | bits;
    for (i, b) in window[start..end].iter_mut().enumerate() {
        *b = (acc >> (width - 8 - 8 * i as u32)) as u8;
    }
}

/// The range of a type, as i128 so sums never overflow.
fn type_range(t: FieldType) -> (i128, i128) {
    if t.signed {
        (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
    } else {
        (0, (1i128 << t.bits) - 1)
    }
}

/// BITFIELD INCRBY's arithmetic (checkSignedBitfieldOverflow /
/// checkUnsignedBitfieldOverflow): `old` (a value of type `t`, as [`get_field`]
/// returns it) plus `incr`. In range: the sum. Out of range: WRAP keeps the sum's
/// low bits (sign-extended for signed types), SAT clamps to the type's max or
/// min, FAIL gives None (Redis replies nil and writes nothing).
pub fn incr_field(old: i64, incr: i64, t: FieldType, o: Overflow) -> Option<i64> {
    let (min, max) = type_range(t);
    let sum = i128::from(old) + i128::from(incr);
    if (min..=max).contains(&sum) {
        return Some(sum as i64);
    }
    match o {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > max { max as i64 } else { min as i64 }),
        Overflow::Wrap => Some(truncate(old.wrapping_add(incr) as u64, t)),
    }
}

/// BITFIELD SET's value conversion: Redis checks the new value itself with a zero
/// increment. In range: the value. Out of range: WRAP keeps its low bits
/// (sign-extended for signed types), FAIL gives None, and SAT picks the max or
/// the min with two quirks of Redis's overflow check, both observed on 7.0.15:
/// - unsigned types compare the value as a u64, so a negative value is "too
///   big": `OVERFLOW SAT SET u8 0 -1` stores 255;
/// - signed types below 64 bits compute `max - value` in 64 bits before looking
///   at the low side; when that wraps (value < max + 1 - 2^63) the value is "too
///   big" as well: `SET i8 0 -9223372036854775681` under SAT stores 127 while
///   `-9223372036854775680` stores -128, and for i63 every value below the min
///   saturates to the max.
pub fn set_value(value: i64, t: FieldType, o: Overflow) -> Option<i64> {
    let (min, max) = type_range(t);
    let v = i128::from(value);
    let too_big =
        if t.signed { v > max || (t.bits < 64 && max - v > i128::from(i64::MAX)) } else { !(0..=max).contains(&v) };
    if !too_big && v >= min {
        return Some(value);
    }
    match o {
        Overflow::Fail => None,
        Overflow::Sat => Some(if too_big { max as i64 } else { min as i64 }),
        Overflow::Wrap => Some(truncate(value as u64, t)),
    }
}

/// A resolved BITCOUNT/BITPOS range: the bytes `first_byte..=last_byte` to read,
/// less the `skip_first_bits` most significant bits of the first byte and the
/// `skip_last_bits` least significant bits of the last (both 0 in BYTE mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first_byte: u64,
    pub last_byte: u64,
    pub skip_first_bits: u32,
    pub skip_last_bits: u32,
}

/// Clamp an inclusive [start, end] (negative counts from the end) to `total`
/// units and convert to a Span: None when it selects nothing.
fn resolve(total: i128, start: i128, end: i128, bit_mode: bool) -> Option<Span> {
    let mut s = if start < 0 { start + total } else { start };
    let mut e = if end < 0 { end + total } else { end };
    s = s.max(0);
    e = e.max(0);
    if e >= total {
        e = total - 1;
    }
    if s > e {
        return None;
    }
    let (s, e) = (s as u64, e as u64);
    Some(if bit_mode {
        Span {
            first_byte: s >> 3,
            last_byte: e >> 3,
            skip_first_bits: (s & 7) as u32,
            skip_last_bits: 7 - (e & 7) as u32,
        }
    } else {
        Span { first_byte: s, last_byte: e, skip_first_bits: 0, skip_last_bits: 0 }
    })
}

/// BITCOUNT's range [start, end] (inclusive, negative from the end, in bytes or
/// with `bit_mode` in bits) over a string of `len` bytes: None if it selects
/// nothing (the reply is 0). As in Redis, two negative indexes with start > end
/// select nothing before any clamping (`BITCOUNT k -5 -10` is 0 even though both
/// would clamp to 0). Without a range, BITCOUNT counts `count_span(len, 0, -1,
/// false)`.
pub fn count_span(len: u64, start: i64, end: i64, bit_mode: bool) -> Option<Span> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let total = if bit_mode { i128::from(len) * 8 } else { i128::from(len) };
    resolve(total, i128::from(start), i128::from(end), bit_mode)
}

/// Set bits in `bytes`, a u64 at a time.
fn popcount(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut n: u64 = 0;
    for c in &mut chunks {
        n += u64::from(u64::from_ne_bytes(c.try_into().unwrap()).count_ones());
    }
    n + chunks.remainder().iter().map(|b| u64::from(b.count_ones())).sum::<u64>()
}

/// Mask of the bits of the first byte a span keeps.
fn first_mask(span: &Span) -> u8 {
    0xffu8.checked_shr(span.skip_first_bits).unwrap_or(0)
}

/// Mask of the bits of the last byte a span keeps.
fn last_mask(span: &Span) -> u8 {
    0xffu8.checked_shl(span.skip_last_bits).unwrap_or(0)
}

/// The number of set bits of `bytes` (exactly the bytes first_byte..=last_byte of
/// `span`) minus those the span leaves out.
pub fn count_bits(bytes: &[u8], span: &Span) -> u64 {
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return 0;
    };
    let mut n = popcount(bytes);
    n -= u64::from((first & !first_mask(span)).count_ones());
    n -= u64::from((last & !last_mask(span)).count_ones());
    n
}

/// BITPOS on a missing key: Redis sees an infinite run of 0 bits, so the first 0
/// is at 0 and there is no 1 (-1). In 7.0 this is answered before the range
/// arguments are parsed (`BITPOS missing 1 x` is -1, not an error); only the
/// bit argument is checked first.
pub fn bitpos_missing(bit: bool) -> i64 {
    -i64::from(bit)
}

/// BITPOS key bit [start [end [BYTE|BIT]]]: resolve the range over an existing
/// string of `len` bytes (`start`/`end` None when not given; `bit_mode` only
/// with both). Err(-1) when the range is empty (including an empty string),
/// else Ok(span) of bytes to read. With no end, the range runs to the end of the
/// string. No early check for two negative indexes here, unlike BITCOUNT.
pub fn pos_span(len: u64, start: Option<i64>, end: Option<i64>, bit_mode: bool) -> Result<Span, i64> {
    let total = if bit_mode { i128::from(len) * 8 } else { i128::from(len) };
    let s = start.map_or(0, i128::from);
    let e = end.map_or(total - 1, i128::from);
    resolve(total, s, e, bit_mode).ok_or(-1)
}

/// BITPOS's answer given the span's bytes: the absolute position of the first
/// bit equal to `bit` within the span. None found: -1 when looking for 1; when
/// looking for 0, -1 if an end was given, else the bit just past the span (which
/// is the bit just past the string, the string being treated as 0-padded).
pub fn bitpos(bytes: &[u8], span: &Span, bit: bool, end_given: bool) -> i64 {
    let not_found = if bit || end_given { -1 } else { ((span.last_byte + 1) * 8) as i64 };
    let n = bytes.len();
    if n == 0 {
        return not_found;
    }
    // Look for a 1 in the bytes (inverted when looking for 0), masked to the span.
    let flip = if bit { 0u8 } else { 0xff };
    let masked = |i: usize| {
        let mut x = bytes[i] ^ flip;
        if i == 0 {
            x &= first_mask(span);
        }
        if i == n - 1 {
            x &= last_mask(span);
        }
        x
    };
    let hit = |i: usize, x: u8| ((span.first_byte + i as u64) * 8 + u64::from(x.leading_zeros())) as i64;
    let x = masked(0);
    if x != 0 {
        return hit(0, x);
    }
    if n == 1 {
        return not_found;
    }
    if let Some(k) = bytes[1..n - 1].iter().position(|&b| b != flip) {
        return hit(k + 1, bytes[k + 1] ^ flip);
    }
    let x = masked(n - 1);
    if x != 0 {
        return hit(n - 1, x);
    }
    not_found
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// BITOP's operation name (AND, OR, XOR, NOT in any case, else [`SYNTAX_ERR`]),
/// then NOT's arity with `nsrcs` source keys ([`BITOP_NOT_ERR`] unless 1), in
/// Redis's order. Both come before any key is read.
pub fn parse_bitop(name: &[u8], nsrcs: usize) -> Result<BitOp, &'static str> {
    let op = if keyword(name, "and") {
        BitOp::And
    } else if keyword(name, "or") {
        BitOp::Or
    } else if keyword(name, "xor") {
        BitOp::Xor
    } else if keyword(name, "not") {
        BitOp::Not
    } else {
        return Err(SYNTAX_ERR);
    };
    if op == BitOp::Not && nsrcs != 1 {
        return Err(BITOP_NOT_ERR);
    }
    Ok(op)
}

/// BITOP: the result of `op` over `srcs` (missing keys are empty strings), as
/// long as the longest source; shorter sources are zero-padded, so under AND a
/// missing or short key zeroes the rest. NOT uses the first (only) source. An
/// empty result means Redis deletes the destination and replies 0.
pub fn bitop(op: BitOp, srcs: &[&[u8]]) -> Vec<u8> {
    let Some((first, rest)) = srcs.split_first() else {
        return Vec::new();
    };
    if op == BitOp::Not {
        return first.iter().map(|b| !b).collect();
    }
    let maxlen = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![0u8; maxlen];
    out[..first.len()].copy_from_slice(first);
    for src in rest {
        let n = src.len();
        match op {
            BitOp::And => {
                out[..n].iter_mut().zip(src.iter()).for_each(|(o, b)| *o &= b);
                out[n..].fill(0);
            }
            BitOp::Or => out[..n].iter_mut().zip(src.iter()).for_each(|(o, b)| *o |= b),
            BitOp::Xor => out[..n].iter_mut().zip(src.iter()).for_each(|(o, b)| *o ^= b),
            BitOp::Not => unreachable!(),
        }
    }
    out
}

/// One BITFIELD subcommand, with the OVERFLOW mode in force where it appears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldOp {
    Get { t: FieldType, bit: u64 },
    Set { t: FieldType, bit: u64, value: i64, overflow: Overflow },
    Incr { t: FieldType, bit: u64, incr: i64, overflow: Overflow },
}

/// Parse BITFIELD's (with `read_only`, BITFIELD_RO's) arguments after the key, as
/// Redis does, left to right, stopping at the first error:
/// - a subcommand that is not GET/SET/INCRBY/OVERFLOW (any case), or lacks its
///   arguments: "ERR syntax error";
/// - OVERFLOW's kind not WRAP/SAT/FAIL: [`OVERFLOW_TYPE_ERR`];
/// - then per GET/SET/INCRBY: the type ([`FIELD_TYPE_ERR`]), the offset
///   ([`BIT_OFFSET_ERR`], `#N` allowed), the SET/INCRBY value
///   ([`NOT_INTEGER_ERR`]).
///
/// Only once everything parsed does BITFIELD_RO refuse SET/INCRBY
/// ([`BITFIELD_RO_ERR`]); OVERFLOW alone is fine there. No subcommands at all is
/// valid (an empty array reply).
pub fn parse_bitfield(args: &[Bytes], read_only: bool) -> Result<Vec<FieldOp>, String> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut writes = false;
    let mut j = 0;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let sub = &args[j][..];
        let (writing, nargs) = if keyword(sub, "get") && remaining >= 2 {
            (false, 2)
        } else if (keyword(sub, "set") || keyword(sub, "incrby")) && remaining >= 3 {
            (true, 3)
        } else if keyword(sub, "overflow") && remaining >= 1 {
            let kind = &args[j + 1][..];
            overflow = if keyword(kind, "wrap") {
                Overflow::Wrap
            } else if keyword(kind, "sat") {
                Overflow::Sat
            } else if keyword(kind, "fail") {
                Overflow::Fail
            } else {
                return Err(OVERFLOW_TYPE_ERR.to_string());
            };
            j += 2;
            continue;
        } else {
            return Err(SYNTAX_ERR.to_string());
        };
        let t = field_type(&args[j + 1])?;
        let bit = bit_offset(&args[j + 2], true, u64::from(t.bits))?;
        let op = if writing {
            writes = true;
            let v = string2ll(&args[j + 3]).ok_or(NOT_INTEGER_ERR)?;
            if keyword(sub, "set") {
                FieldOp::Set { t, bit, value: v, overflow }
            } else {
                FieldOp::Incr { t, bit, incr: v, overflow }
            }
        } else {
            FieldOp::Get { t, bit }
        };
        ops.push(op);
        j += 1 + nargs;
    }
    if read_only && writes {
        return Err(BITFIELD_RO_ERR.to_string());
    }
    Ok(ops)
}

/// The length in bytes BITFIELD grows the string to before running `ops`: enough
/// to hold the farthest bit any SET or INCRBY touches, or None with no writes.
/// Redis grows (and creates) the key first, so the growth stays even when every
/// write is refused by OVERFLOW FAIL (`BITFIELD g OVERFLOW FAIL INCRBY u2 100 5`
/// replies nil and leaves `g` 13 zero bytes long).
pub fn bitfield_grow_len(ops: &[FieldOp]) -> Option<u64> {
    ops.iter()
        .filter_map(|op| match *op {
            FieldOp::Get { .. } => None,
            FieldOp::Set { t, bit, .. } | FieldOp::Incr { t, bit, .. } => Some((bit + u64::from(t.bits) - 1) / 8 + 1),
        })
        .max()
}

#[cfg(test)]
mod tests {
    //! Expected values were observed on a local redis-server 7.0.15 (quoted as
    //! `> command` / reply) unless a comment derives them from bitops.c.
    use super::*;

    const I8: FieldType = FieldType { signed: true, bits: 8 };
    const U8: FieldType = FieldType { signed: false, bits: 8 };
    const I64: FieldType = FieldType { signed: true, bits: 64 };
    const U63: FieldType = FieldType { signed: false, bits: 63 };
    const I1: FieldType = FieldType { signed: true, bits: 1 };
    const MAX: i64 = i64::MAX;
    const MIN: i64 = i64::MIN;

    fn args(s: &[&str]) -> Vec<Bytes> {
        s.iter().map(|a| Bytes::from(a.as_bytes().to_vec())).collect()
    }

    /// A whole BITCOUNT over `s` with a range, as the caller would run it.
    fn bitcount(s: &[u8], start: i64, end: i64, bit_mode: bool) -> u64 {
        match count_span(s.len() as u64, start, end, bit_mode) {
            None => 0,
            Some(sp) => count_bits(&s[sp.first_byte as usize..=sp.last_byte as usize], &sp),
        }
    }

    /// A whole BITPOS over an existing `s`, as the caller would run it.
    fn pos(s: &[u8], bit: bool, start: Option<i64>, end: Option<i64>, bit_mode: bool) -> i64 {
        match pos_span(s.len() as u64, start, end, bit_mode) {
            Err(reply) => reply,
            Ok(sp) => bitpos(&s[sp.first_byte as usize..=sp.last_byte as usize], &sp, bit, end.is_some()),
        }
    }

    #[test]
    fn offsets() {
        // > SETBIT k 4294967295 0 -> 0 ; > SETBIT k 4294967296 0 -> ERR bit offset ...
        assert_eq!(bit_offset(b"4294967295", false, 0), Ok(4294967295));
        assert_eq!(bit_offset(b"4294967296", false, 0), Err(BIT_OFFSET_ERR));
        assert_eq!(bit_offset(b"0", false, 0), Ok(0));
        assert_eq!(bit_offset(b"17", false, 0), Ok(17));
        // > SETBIT k2 -1 0 / +1 / 01 / " 1" / 1.0 / x -> ERR bit offset ...
        for bad in [&b"-1"[..], b"+1", b"01", b" 1", b"1 ", b"1.0", b"x", b"", b"-0", b"#1"] {
            assert_eq!(bit_offset(bad, false, 0), Err(BIT_OFFSET_ERR), "{bad:?}");
        }
        // > BITFIELD k3 GET u8 4294967295 -> 0 ; GET u8 4294967296 -> ERR: the offset
        // alone is bounded, not offset + bits.
        assert_eq!(bit_offset(b"4294967295", true, 8), Ok(4294967295));
        assert_eq!(bit_offset(b"4294967296", true, 8), Err(BIT_OFFSET_ERR));
        // > GET i64 #67108863 -> 0 ; GET i64 #67108864 -> ERR
        assert_eq!(bit_offset(b"#67108863", true, 64), Ok(67108863 * 64));
        assert_eq!(bit_offset(b"#67108864", true, 64), Err(BIT_OFFSET_ERR));
        // > GET u8 #536870911 -> 0 ; GET u8 #536870912 -> ERR
        assert_eq!(bit_offset(b"#536870911", true, 8), Ok(4294967288));
        assert_eq!(bit_offset(b"#536870912", true, 8), Err(BIT_OFFSET_ERR));
        assert_eq!(bit_offset(b"#3", true, 5), Ok(15));
        assert_eq!(bit_offset(b"#0", true, 5), Ok(0));
        // > GET u8 #-1 / # / ##1 / #+1 / -0 -> ERR
        for bad in [&b"#-1"[..], b"#", b"##1", b"#+1", b"-0", b"#01"] {
            assert_eq!(bit_offset(bad, true, 8), Err(BIT_OFFSET_ERR), "{bad:?}");
        }
        // The product wraps as in C: 2^60 * 64 = 2^66 wraps to 0.
        // > BITFIELD k3 GET i64 #1152921504606846976 -> 0
        assert_eq!(bit_offset(b"#1152921504606846976", true, 64), Ok(0));
        // 2^57 * 64 wraps to i64::MIN, negative. > GET i64 #144115188075855872 -> ERR
        assert_eq!(bit_offset(b"#144115188075855872", true, 64), Err(BIT_OFFSET_ERR));
        // > GET u8 #1152921504606846976 -> ERR (2^63 wraps negative)
        assert_eq!(bit_offset(b"#1152921504606846976", true, 8), Err(BIT_OFFSET_ERR));
        // Without `hash`, or with bits 0, '#' is just not a number.
        assert_eq!(bit_offset(b"#1", true, 0), Err(BIT_OFFSET_ERR));
        assert_eq!(bit_offset(b"9223372036854775807", false, 0), Err(BIT_OFFSET_ERR));
        assert_eq!(bit_offset(b"9223372036854775808", false, 0), Err(BIT_OFFSET_ERR));
    }

    #[test]
    fn bit_arguments() {
        assert_eq!(bit_value(b"0"), Ok(false));
        assert_eq!(bit_value(b"1"), Ok(true));
        // > SETBIT k2 1 2 / -1 / x / 01 / " 1" -> ERR bit is not an integer or out of range
        for bad in [&b"2"[..], b"-1", b"x", b"01", b" 1", b"", b"+1"] {
            assert_eq!(bit_value(bad), Err(BIT_VALUE_ERR), "{bad:?}");
        }
        assert_eq!(bitpos_bit(b"0"), Ok(false));
        assert_eq!(bitpos_bit(b"1"), Ok(true));
        // > BITPOS ff 2 -> ERR The bit argument must be 1 or 0.
        assert_eq!(bitpos_bit(b"2"), Err(BITPOS_BIT_ERR));
        assert_eq!(bitpos_bit(b"-1"), Err(BITPOS_BIT_ERR));
        // > BITPOS ff x / 01 -> ERR value is not an integer or out of range
        assert_eq!(bitpos_bit(b"x"), Err(NOT_INTEGER_ERR));
        assert_eq!(bitpos_bit(b"01"), Err(NOT_INTEGER_ERR));
        // > BITPOS m 0 1 -1 BiT -> 1 ; BYTE accepted ; > BITPOS ff 0 1 2 foo -> ERR syntax error
        assert_eq!(range_unit(b"BiT"), Ok(true));
        assert_eq!(range_unit(b"bit"), Ok(true));
        assert_eq!(range_unit(b"BYTE"), Ok(false));
        assert_eq!(range_unit(b"foo"), Err(SYNTAX_ERR));
        assert_eq!(range_unit(b"bits"), Err(SYNTAX_ERR));
        // C-string compare: > BITCOUNT k 0 1 "bit\0x" (k = "\xff") -> 2
        assert_eq!(range_unit(b"bit\0x"), Ok(true));
    }

    #[test]
    fn field_types() {
        assert_eq!(field_type(b"i8"), Ok(I8));
        assert_eq!(field_type(b"u8"), Ok(U8));
        assert_eq!(field_type(b"i64"), Ok(I64));
        assert_eq!(field_type(b"u63"), Ok(U63));
        assert_eq!(field_type(b"i1"), Ok(I1));
        assert_eq!(field_type(b"u1"), Ok(FieldType { signed: false, bits: 1 }));
        // > BITFIELD k GET I8 / i08 / i+8 / u64 / i65 / i0 / u0 / i / "" 0 -> ERR Invalid bitfield type ...
        for bad in [&b"I8"[..], b"i08", b"i+8", b"u64", b"i65", b"i0", b"u0", b"i", b"", b"x8", b"i-1", b"i8 "] {
            assert_eq!(field_type(bad), Err(FIELD_TYPE_ERR), "{bad:?}");
        }
        // strlen() cuts at NUL: > BITFIELD k GET "i8\0zz" 0 -> [0]
        assert_eq!(field_type(b"i8\0zz"), Ok(I8));
    }

    #[test]
    fn get_fields() {
        // > BITFIELD h2 SET u5 7 23 ; GET h2 -> "\x01p" (0x01 0x70)
        let h2 = [0x01u8, 0x70];
        let u5 = FieldType { signed: false, bits: 5 };
        let i5 = FieldType { signed: true, bits: 5 };
        let u16t = FieldType { signed: false, bits: 16 };
        // > BITFIELD h SET u5 7 23 GET u5 7 GET i5 7 GET u16 0 -> 0 23 -9 368
        assert_eq!(get_field(&h2, 7, u5), 23);
        assert_eq!(get_field(&h2, 7, i5), -9);
        assert_eq!(get_field(&h2, 0, u16t), 368);
        // > SET w "\xab\xcd" ; BITFIELD w GET u16 0 GET i16 0 GET u8 12 GET i8 12 GET u63 0
        //   GET i64 0 GET i64 1 GET u4 20 GET i64 #0
        // -> 43981 -21555 208 -48 6189775475355680768 -6067193122998190080
        //    6312357827713171456 0 -6067193122998190080
        let w = [0xabu8, 0xcd];
        assert_eq!(get_field(&w, 0, u16t), 43981);
        assert_eq!(get_field(&w, 0, FieldType { signed: true, bits: 16 }), -21555);
        assert_eq!(get_field(&w, 12, U8), 208);
        assert_eq!(get_field(&w, 12, I8), -48);
        assert_eq!(get_field(&w, 0, U63), 6189775475355680768);
        assert_eq!(get_field(&w, 0, I64), -6067193122998190080);
        assert_eq!(get_field(&w, 1, I64), 6312357827713171456);
        assert_eq!(get_field(&w, 20, FieldType { signed: false, bits: 4 }), 0);
        assert_eq!(get_field(&w, 1 << 40, I64), 0);
        assert_eq!(get_field(&[], 0, I64), 0);
        // > BITFIELD h SET i64 13 -2 ; GET h -> "\x00\x07" + 7 * "\xff" + "\xf0"
        let h = [0x00u8, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0];
        // > BITFIELD h GET i64 13 GET u63 13 GET u8 13 GET i3 74 -> -2 MAX 255 -2
        assert_eq!(get_field(&h, 13, I64), -2);
        assert_eq!(get_field(&h, 13, U63), MAX);
        assert_eq!(get_field(&h, 13, U8), 255);
        assert_eq!(get_field(&h, 74, FieldType { signed: true, bits: 3 }), -2);
        // > BITFIELD h3 SET i8 4 -100 GET i8 4 GET u4 4 GET u4 8 GET i12 0 -> 0 -100 9 12 156
        let h3 = [0x09u8, 0xc0];
        assert_eq!(get_field(&h3, 4, I8), -100);
        assert_eq!(get_field(&h3, 4, FieldType { signed: false, bits: 4 }), 9);
        assert_eq!(get_field(&h3, 8, FieldType { signed: false, bits: 4 }), 12);
        assert_eq!(get_field(&h3, 0, FieldType { signed: true, bits: 12 }), 156);
        // > SETBIT b 9 1 ; GETBIT-equivalent via u1
        assert_eq!(get_field(&[0x00, 0x40], 9, FieldType { signed: false, bits: 1 }), 1);
        assert_eq!(get_field(&[0x00, 0x40], 9, I1), -1);
    }

    #[test]
    fn set_fields() {
        let mut h2 = [0u8; 2];
        set_field(&mut h2, 7, FieldType { signed: false, bits: 5 }, 23);
        assert_eq!(h2, [0x01, 0x70]);
        let mut h = [0u8; 10];
        set_field(&mut h, 13, I64, -2);
        assert_eq!(h, [0x00, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0]);
        let mut h3 = [0u8; 2];
        set_field(&mut h3, 4, I8, -100);
        assert_eq!(h3, [0x09, 0xc0]);
        // Only the field's bits change; high bits of `value` are ignored.
        let mut buf = [0xffu8; 3];
        set_field(&mut buf, 6, FieldType { signed: false, bits: 5 }, 0x0007_ffff_ffe0);
        assert_eq!(buf, [0xfc, 0x1f, 0xff]);
        let mut a = [0u8; 8];
        set_field(&mut a, 0, I64, MIN);
        assert_eq!(a, [0x80, 0, 0, 0, 0, 0, 0, 0]);
        set_field(&mut a, 1, U63, MAX);
        assert_eq!(a, [0xff; 8]);
        // > SETBIT b 9 1 ; GET b -> "\x00@" ; > SETBIT b 9 0 ; SETBIT b 15 1 ; GET b -> "\x00\x01"
        let mut b = [0u8; 2];
        set_field(&mut b, 9, FieldType { signed: false, bits: 1 }, 1);
        assert_eq!(b, [0x00, 0x40]);
        set_field(&mut b, 9, FieldType { signed: false, bits: 1 }, 0);
        set_field(&mut b, 15, FieldType { signed: false, bits: 1 }, 1);
        assert_eq!(b, [0x00, 0x01]);
    }

    #[test]
    fn set_overflow() {
        use Overflow::*;
        // > OVERFLOW SAT SET u8 0 -1 GET u8 0 -> 0 255 (a negative value is "too big")
        assert_eq!(set_value(-1, U8, Sat), Some(255));
        // > OVERFLOW WRAP SET u8 0 -1 -> stores 255 ; FAIL -> nil
        assert_eq!(set_value(-1, U8, Wrap), Some(255));
        assert_eq!(set_value(-1, U8, Fail), None);
        // > SAT SET u8 0 256 -> 255 ; WRAP SET u8 0 257 -> 1 ; WRAP SET u8 0 -255 -> 1
        assert_eq!(set_value(256, U8, Sat), Some(255));
        assert_eq!(set_value(257, U8, Wrap), Some(1));
        assert_eq!(set_value(-255, U8, Wrap), Some(1));
        // > OVERFLOW SAT SET u8 0 -9223372036854775808 GET u8 0 -> 1 255
        assert_eq!(set_value(MIN, U8, Sat), Some(255));
        assert_eq!(set_value(255, U8, Fail), Some(255));
        assert_eq!(set_value(0, U8, Fail), Some(0));
        // > SAT SET i8 0 128 -> 127 ; SAT SET i8 0 -129 -> -128
        assert_eq!(set_value(128, I8, Sat), Some(127));
        assert_eq!(set_value(-129, I8, Sat), Some(-128));
        // > WRAP SET i8 0 128 -> -128 ; WRAP -129 -> 127 ; WRAP 255 -> -1
        assert_eq!(set_value(128, I8, Wrap), Some(-128));
        assert_eq!(set_value(-129, I8, Wrap), Some(127));
        assert_eq!(set_value(255, I8, Wrap), Some(-1));
        // > FAIL SET i8 0 128 -> nil ; FAIL SET i8 0 -128 / 127 -> stored
        assert_eq!(set_value(128, I8, Fail), None);
        assert_eq!(set_value(-128, I8, Fail), Some(-128));
        assert_eq!(set_value(127, I8, Fail), Some(127));
        // i64 never overflows on SET.
        assert_eq!(set_value(MIN, I64, Fail), Some(MIN));
        assert_eq!(set_value(MAX, I64, Fail), Some(MAX));
        // > OVERFLOW SAT SET u63 0 -1 -> stores MAX ; WRAP SET u63 0 -1 GET u63 0 -> MAX
        assert_eq!(set_value(-1, U63, Sat), Some(MAX));
        assert_eq!(set_value(-1, U63, Wrap), Some(MAX));
        assert_eq!(set_value(MIN, U63, Wrap), Some(0));
        assert_eq!(set_value(MAX, U63, Fail), Some(MAX));
        // > BITFIELD f SET i1 0 1 GET i1 0 ... OVERFLOW SAT SET i1 0 1 GET i1 0
        //   -> 0 -1 1 -1 0 : WRAP makes 1 into -1, SAT into 0 (i1's max).
        assert_eq!(set_value(1, I1, Wrap), Some(-1));
        assert_eq!(set_value(1, I1, Sat), Some(0));
        // Signed SAT quirk (max - value wraps in 64 bits, so a very negative value is "too big"):
        // > OVERFLOW SAT SET i8 0 -9223372036854775681 GET i8 0 SET i8 0 -9223372036854775680 GET i8 0
        //   -> 0 127 127 -128
        assert_eq!(set_value(MIN + 127, I8, Sat), Some(127));
        assert_eq!(set_value(MIN + 128, I8, Sat), Some(-128));
        assert_eq!(set_value(MIN, I8, Sat), Some(127));
        // > OVERFLOW SAT SET i63 0 -4611686018427387905 GET i63 0 SET i63 0 -4611686018427387904 GET i63 0
        //   -> -4611686018427387904 4611686018427387903 4611686018427387903 -4611686018427387904
        let i63 = FieldType { signed: true, bits: 63 };
        assert_eq!(set_value(-(1 << 62) - 1, i63, Sat), Some((1 << 62) - 1));
        assert_eq!(set_value(-(1 << 62), i63, Sat), Some(-(1 << 62)));
        // > OVERFLOW SAT SET i1 0 MIN GET i1 0 SET i1 0 MIN+1 GET i1 0 -> -1 0 0 -1
        assert_eq!(set_value(MIN, I1, Sat), Some(0));
        assert_eq!(set_value(MIN + 1, I1, Sat), Some(-1));
        // FAIL and WRAP are unaffected: > OVERFLOW FAIL SET i8 0 MIN GET i8 0 OVERFLOW WRAP
        //   SET i8 0 MIN+1 GET i8 0 -> nil -128 -128 1
        assert_eq!(set_value(MIN, I8, Fail), None);
        assert_eq!(set_value(MIN + 1, I8, Wrap), Some(1));
        // i64 is exempt: > OVERFLOW SAT SET i64 0 MIN GET i64 0 -> (old) MIN
        assert_eq!(set_value(MIN, I64, Sat), Some(MIN));
    }

    #[test]
    fn incr_overflow() {
        use Overflow::*;
        // > BITFIELD b SET i8 0 120 INCRBY i8 0 10 OVERFLOW SAT INCRBY i8 0 10
        //   OVERFLOW FAIL INCRBY i8 0 1 INCRBY i8 0 -1 -> 0 -126 -116 -115 -116
        assert_eq!(incr_field(120, 10, I8, Wrap), Some(-126));
        assert_eq!(incr_field(-126, 10, I8, Sat), Some(-116));
        assert_eq!(incr_field(-116, 1, I8, Fail), Some(-115));
        assert_eq!(incr_field(-115, -1, I8, Fail), Some(-116));
        // > ... SET i8 0 -120 INCRBY i8 0 -10 -> 126 ; SAT INCRBY 126 + -10 -> 116
        assert_eq!(incr_field(-120, -10, I8, Wrap), Some(126));
        assert_eq!(incr_field(126, -10, I8, Sat), Some(116));
        assert_eq!(incr_field(127, 1, I8, Sat), Some(127));
        assert_eq!(incr_field(-128, -1, I8, Sat), Some(-128));
        assert_eq!(incr_field(127, 1, I8, Fail), None);
        assert_eq!(incr_field(-128, -1, I8, Fail), None);
        assert_eq!(incr_field(-128, MIN, I8, Wrap), Some(-128));
        // > BITFIELD c SET u8 0 250 INCRBY u8 0 10 OVERFLOW SAT INCRBY u8 0 300
        //   OVERFLOW FAIL INCRBY u8 0 1 INCRBY u8 0 -1 -> 0 4 255 nil 254
        assert_eq!(incr_field(250, 10, U8, Wrap), Some(4));
        assert_eq!(incr_field(4, 300, U8, Sat), Some(255));
        assert_eq!(incr_field(255, 1, U8, Fail), None);
        assert_eq!(incr_field(255, -1, U8, Fail), Some(254));
        // > ... SET u8 0 5 INCRBY u8 0 -10 OVERFLOW SAT INCRBY u8 0 -300
        //   OVERFLOW FAIL INCRBY u8 0 -1 INCRBY u8 0 1 -> 254 251 0 nil 1
        assert_eq!(incr_field(5, -10, U8, Wrap), Some(251));
        assert_eq!(incr_field(251, -300, U8, Sat), Some(0));
        assert_eq!(incr_field(0, -1, U8, Fail), None);
        assert_eq!(incr_field(0, 1, U8, Fail), Some(1));
        // > OVERFLOW WRAP SET u8 0 5 INCRBY u8 0 MIN INCRBY u8 0 MAX -> 1 5 4
        assert_eq!(incr_field(5, MIN, U8, Wrap), Some(5));
        assert_eq!(incr_field(5, MAX, U8, Wrap), Some(4));
        // > BITFIELD d SET i64 0 MAX INCRBY i64 0 1 OVERFLOW SAT INCRBY i64 0 MAX
        //   INCRBY i64 0 MIN INCRBY i64 0 MIN OVERFLOW FAIL INCRBY i64 0 -1 INCRBY i64 0 1
        //   -> 0 MIN -1 MIN MIN nil MIN+1
        assert_eq!(incr_field(MAX, 1, I64, Wrap), Some(MIN));
        assert_eq!(incr_field(MIN, MAX, I64, Sat), Some(-1));
        assert_eq!(incr_field(-1, MIN, I64, Sat), Some(MIN));
        assert_eq!(incr_field(MIN, MIN, I64, Sat), Some(MIN));
        assert_eq!(incr_field(MIN, -1, I64, Fail), None);
        assert_eq!(incr_field(MIN, 1, I64, Fail), Some(MIN + 1));
        assert_eq!(incr_field(MAX, MAX, I64, Sat), Some(MAX));
        assert_eq!(incr_field(MAX, 1, I64, Fail), None);
        // > OVERFLOW WRAP SET i64 0 MIN INCRBY i64 0 -1 INCRBY i64 0 MIN -> (old) MAX -1
        assert_eq!(incr_field(MIN, -1, I64, Wrap), Some(MAX));
        assert_eq!(incr_field(MAX, MIN, I64, Wrap), Some(-1));
        // > BITFIELD e SET u63 0 MAX INCRBY u63 0 1 OVERFLOW SAT INCRBY u63 0 -1
        //   INCRBY u63 0 MAX INCRBY u63 0 2 OVERFLOW FAIL INCRBY u63 0 1 INCRBY u63 0 MIN
        //   -> 0 0 0 MAX MAX nil nil
        assert_eq!(incr_field(MAX, 1, U63, Wrap), Some(0));
        assert_eq!(incr_field(0, -1, U63, Sat), Some(0));
        assert_eq!(incr_field(0, MAX, U63, Sat), Some(MAX));
        assert_eq!(incr_field(MAX, 2, U63, Sat), Some(MAX));
        assert_eq!(incr_field(MAX, 1, U63, Fail), None);
        assert_eq!(incr_field(MAX, MIN, U63, Fail), None);
        // > OVERFLOW WRAP ... INCRBY u63 0 MIN (from MAX) -> MAX
        assert_eq!(incr_field(MAX, MIN, U63, Wrap), Some(MAX));
        // > BITFIELD f ... (i1 at 0) OVERFLOW SAT INCRBY i1 0 -5 OVERFLOW WRAP
        //   INCRBY i1 0 1 INCRBY i1 0 1 -> -1 0 -1
        assert_eq!(incr_field(0, -5, I1, Sat), Some(-1));
        assert_eq!(incr_field(-1, 1, I1, Wrap), Some(0));
        assert_eq!(incr_field(0, 1, I1, Wrap), Some(-1));
    }

    #[test]
    fn bitcount_ranges() {
        let s = b"foobar";
        // > SET s foobar ; BITCOUNT s -> 26 ; 0 0 -> 4 ; 1 1 -> 6 ; 1 1 BYTE -> 6
        assert_eq!(bitcount(s, 0, -1, false), 26);
        assert_eq!(bitcount(s, 0, 0, false), 4);
        assert_eq!(bitcount(s, 1, 1, false), 6);
        // > BITCOUNT s 5 30 BIT -> 17 ; 0 -1 BIT -> 26 ; 7 7 BIT -> 0 ; 1 6 BIT -> 4
        assert_eq!(bitcount(s, 5, 30, true), 17);
        assert_eq!(bitcount(s, 0, -1, true), 26);
        assert_eq!(bitcount(s, 7, 7, true), 0);
        assert_eq!(bitcount(s, 1, 6, true), 4);
        // > -3 -1 BIT -> 1 ; 47 100 BIT -> 0 ; 48 100 BIT -> 0 ; 3 2 BIT -> 0
        assert_eq!(bitcount(s, -3, -1, true), 1);
        assert_eq!(bitcount(s, 47, 100, true), 0);
        assert_eq!(bitcount(s, 48, 100, true), 0);
        assert_eq!(bitcount(s, 3, 2, true), 0);
        // > -5 -10 -> 0 (early check; both would clamp to byte 0) ; -10 -5 -> 10 ; -100 -200 -> 0
        assert_eq!(bitcount(s, -5, -10, false), 0);
        assert_eq!(bitcount(s, -10, -5, false), 10);
        assert_eq!(bitcount(s, -100, -200, false), 0);
        // > BITCOUNT s MIN MAX BIT -> 26 ; MIN MAX -> 26
        assert_eq!(bitcount(s, MIN, MAX, true), 26);
        assert_eq!(bitcount(s, MIN, MAX, false), 26);
        // > SET n 1234 ; BITCOUNT n -> 13
        assert_eq!(bitcount(b"1234", 0, -1, false), 13);
        // An empty string: > BITCOUNT e / e 0 -1 / e 0 -1 BIT -> 0
        assert_eq!(count_span(0, 0, -1, false), None);
        assert_eq!(count_span(0, 0, -1, true), None);
        assert_eq!(count_span(6, -5, -10, false), None);
        assert_eq!(
            count_span(6, 5, 30, true),
            Some(Span { first_byte: 0, last_byte: 3, skip_first_bits: 5, skip_last_bits: 1 })
        );
        assert_eq!(
            count_span(6, -2, 100, false),
            Some(Span { first_byte: 4, last_byte: 5, skip_first_bits: 0, skip_last_bits: 0 })
        );
        assert_eq!(
            count_span(6, 9, 9, true),
            Some(Span { first_byte: 1, last_byte: 1, skip_first_bits: 1, skip_last_bits: 6 })
        );
        // One byte with both edges cut: bits 9..=9 of 0xff.
        let sp = Span { first_byte: 1, last_byte: 1, skip_first_bits: 1, skip_last_bits: 6 };
        assert_eq!(count_bits(&[0xff], &sp), 1);
        assert_eq!(count_bits(&[0xbf], &sp), 0);
        // Long runs go through the u64 path.
        let big = [0xa5u8; 1000];
        assert_eq!(bitcount(&big, 0, -1, false), 4000);
        // 0xa5 = 10100101: bits 0..=2 of the first byte hold 2 ones, bits 4..=7 of the last 2.
        assert_eq!(bitcount(&big, 3, 7995, true), 4000 - 2 - 2);
    }

    #[test]
    fn bitpos_all_ones() {
        let ff = b"\xff\xff\xff";
        // > SET ff "\xff\xff\xff" ; BITPOS ff 0 -> 24 ; 0 0 -> 24 ; 0 1 -> 24
        assert_eq!(pos(ff, false, None, None, false), 24);
        assert_eq!(pos(ff, false, Some(0), None, false), 24);
        assert_eq!(pos(ff, false, Some(1), None, false), 24);
        // > BITPOS ff 0 0 -1 -> -1 ; 0 0 2 -> -1 ; 0 0 100 -> -1
        assert_eq!(pos(ff, false, Some(0), Some(-1), false), -1);
        assert_eq!(pos(ff, false, Some(0), Some(2), false), -1);
        assert_eq!(pos(ff, false, Some(0), Some(100), false), -1);
        // > BITPOS ff 0 5 -1 BIT / 5 23 BIT / 5 1000 BIT -> -1
        assert_eq!(pos(ff, false, Some(5), Some(-1), true), -1);
        assert_eq!(pos(ff, false, Some(5), Some(23), true), -1);
        assert_eq!(pos(ff, false, Some(5), Some(1000), true), -1);
        // > BITPOS ff 0 3 -> -1 ; 0 100 -> -1 (start past the end: empty range)
        assert_eq!(pos(ff, false, Some(3), None, false), -1);
        assert_eq!(pos(ff, false, Some(100), None, false), -1);
        // > BITPOS ff 0 -1 -> 24 ; 0 -100 -> 24
        assert_eq!(pos(ff, false, Some(-1), None, false), 24);
        assert_eq!(pos(ff, false, Some(-100), None, false), 24);
        // > BITPOS ff 1 100 -> -1 ; 1 -1 -> 16 ; 1 -1 -1 BIT -> 23 ; 1 2 1 / 0 2 1 -> -1
        assert_eq!(pos(ff, true, Some(100), None, false), -1);
        assert_eq!(pos(ff, true, Some(-1), None, false), 16);
        assert_eq!(pos(ff, true, Some(-1), Some(-1), true), 23);
        assert_eq!(pos(ff, true, Some(2), Some(1), false), -1);
        assert_eq!(pos(ff, false, Some(2), Some(1), false), -1);
        // The span path for BIT mode without an end: the last bit of the string.
        assert_eq!(
            pos_span(3, Some(5), None, true),
            Ok(Span { first_byte: 0, last_byte: 2, skip_first_bits: 5, skip_last_bits: 0 })
        );
        let sp = pos_span(3, Some(5), None, true).unwrap();
        assert_eq!(bitpos(ff, &sp, false, false), 24);
    }

    #[test]
    fn bitpos_mixed() {
        let z = b"\x00\x00\x00";
        // > SET z "\x00\x00\x00" ; BITPOS z 1 -> -1 ; z 0 -> 0 ; z 1 0 -1 BIT -> -1
        assert_eq!(pos(z, true, None, None, false), -1);
        assert_eq!(pos(z, false, None, None, false), 0);
        assert_eq!(pos(z, true, Some(0), Some(-1), true), -1);
        // > z 0 7 7 BIT -> 7 ; z 1 7 7 BIT -> -1 ; z 0 23 -1 BIT -> 23
        assert_eq!(pos(z, false, Some(7), Some(7), true), 7);
        assert_eq!(pos(z, true, Some(7), Some(7), true), -1);
        assert_eq!(pos(z, false, Some(23), Some(-1), true), 23);
        let m = b"\x00\xff\xf0";
        // > SET m "\x00\xff\xf0" ; BITPOS m 1 -> 8 ; m 0 1 -> 20 ; m 1 2 -> 16
        assert_eq!(pos(m, true, None, None, false), 8);
        assert_eq!(pos(m, false, Some(1), None, false), 20);
        assert_eq!(pos(m, true, Some(2), None, false), 16);
        // > m 0 8 19 BIT -> -1 ; m 0 8 20 BIT -> 20 ; m 0 -4 -1 BIT -> 20 ; m 0 -8 -5 BIT -> -1
        assert_eq!(pos(m, false, Some(8), Some(19), true), -1);
        assert_eq!(pos(m, false, Some(8), Some(20), true), 20);
        assert_eq!(pos(m, false, Some(-4), Some(-1), true), 20);
        assert_eq!(pos(m, false, Some(-8), Some(-5), true), -1);
        // > m 1 3 9 BIT -> 8 ; m 1 3 7 BIT -> -1 ; m 0 9 7 BIT -> -1
        assert_eq!(pos(m, true, Some(3), Some(9), true), 8);
        assert_eq!(pos(m, true, Some(3), Some(7), true), -1);
        assert_eq!(pos(m, false, Some(9), Some(7), true), -1);
        // > m 0 20 21 BIT -> 20 ; m 0 20 100 BIT -> 20
        assert_eq!(pos(m, false, Some(20), Some(21), true), 20);
        assert_eq!(pos(m, false, Some(20), Some(100), true), 20);
        // > m 1 MIN MAX BIT -> 8 ; m 0 MIN MAX -> 0
        assert_eq!(pos(m, true, Some(MIN), Some(MAX), true), 8);
        assert_eq!(pos(m, false, Some(MIN), Some(MAX), false), 0);
        // > m 0 1 1 -> -1 ; m 0 1 1 BIT -> 1 ; m 0 1 -1 BiT -> 1 ; m 0 2 -1 BYTE -> 20
        assert_eq!(pos(m, false, Some(1), Some(1), false), -1);
        assert_eq!(pos(m, false, Some(1), Some(1), true), 1);
        assert_eq!(pos(m, false, Some(1), Some(-1), true), 1);
        assert_eq!(pos(m, false, Some(2), Some(-1), false), 20);
        // > m 1 -1 -100 -> -1 (no early negative check, but end clamps below start)
        assert_eq!(pos(m, true, Some(-1), Some(-100), false), -1);
        // An empty string: > SET e "" ; BITPOS e 0 / e 1 / e 0 0 / e 0 0 -1 BIT -> -1
        assert_eq!(pos_span(0, None, None, false), Err(-1));
        assert_eq!(pos_span(0, Some(0), None, false), Err(-1));
        assert_eq!(pos_span(0, Some(0), Some(-1), true), Err(-1));
        // > BITPOS missing 0 -> 0 ; missing 1 -> -1
        assert_eq!(bitpos_missing(false), 0);
        assert_eq!(bitpos_missing(true), -1);
        // A long run found past the middle.
        let mut big = [0u8; 5000];
        big[4321] = 0x10;
        assert_eq!(pos(&big, true, None, None, false), 4321 * 8 + 3);
        assert_eq!(pos(&big, true, Some(4322), None, false), -1);
        big.fill(0xff);
        assert_eq!(pos(&big, false, None, None, false), 40000);
        assert_eq!(pos(&big, false, Some(3), Some(39998), true), -1);
    }

    #[test]
    fn bitops() {
        let a: &[u8] = b"\xff\x0f";
        let b: &[u8] = b"\xf0";
        // > SET a "\xff\x0f" ; SET b "\xf0" ; BITOP AND d a b -> 2, GET d -> "\xf0\x00"
        assert_eq!(bitop(BitOp::And, &[a, b]), b"\xf0\x00");
        // > BITOP OR d a b missing -> "\xff\x0f" ; XOR d a b -> "\x0f\x0f" ; NOT d a -> "\x00\xf0"
        assert_eq!(bitop(BitOp::Or, &[a, b, b""]), b"\xff\x0f");
        assert_eq!(bitop(BitOp::Xor, &[a, b]), b"\x0f\x0f");
        assert_eq!(bitop(BitOp::Not, &[a]), b"\x00\xf0");
        // > BITOP AND d a missing -> "\x00\x00"
        assert_eq!(bitop(BitOp::And, &[a, b""]), b"\x00\x00");
        assert_eq!(bitop(BitOp::And, &[b"", a]), b"\x00\x00");
        assert_eq!(bitop(BitOp::Xor, &[b, a, a]), b"\xf0\x00");
        // > BITOP NOT d missing -> 0 (d deleted) ; OR d missing missing2 -> 0
        assert_eq!(bitop(BitOp::Not, &[b""]), b"");
        assert_eq!(bitop(BitOp::Or, &[b"", b""]), b"");
        // > BITOP NOT d a b -> ERR BITOP NOT must be called with a single source key.
        assert_eq!(parse_bitop(b"not", 2), Err(BITOP_NOT_ERR));
        assert_eq!(parse_bitop(b"NOT", 1), Ok(BitOp::Not));
        assert_eq!(parse_bitop(b"aNd", 3), Ok(BitOp::And));
        assert_eq!(parse_bitop(b"or", 1), Ok(BitOp::Or));
        assert_eq!(parse_bitop(b"XOR", 1), Ok(BitOp::Xor));
        // > BITOP foo d a / BITOP diff d a b (8.2+ only) -> ERR syntax error
        assert_eq!(parse_bitop(b"foo", 1), Err(SYNTAX_ERR));
        assert_eq!(parse_bitop(b"diff", 2), Err(SYNTAX_ERR));
        // > BITOP "and\0x" d a -> 0 (C-string compare)
        assert_eq!(parse_bitop(b"and\0x", 1), Ok(BitOp::And));
    }

    #[test]
    fn bitfield_parsing() {
        use Overflow::*;
        let p = |a: &[&str]| parse_bitfield(&args(a), false);
        let ro = |a: &[&str]| parse_bitfield(&args(a), true);
        assert_eq!(p(&[]), Ok(vec![]));
        assert_eq!(ro(&[]), Ok(vec![]));
        assert_eq!(
            p(&[
                "get", "u8", "0", "SET", "i5", "#2", "-3", "OVERFLOW", "Sat", "incrby", "u63", "100", "7", "GeT",
                "i64", "#1"
            ]),
            Ok(vec![
                FieldOp::Get { t: U8, bit: 0 },
                FieldOp::Set { t: FieldType { signed: true, bits: 5 }, bit: 10, value: -3, overflow: Wrap },
                FieldOp::Incr { t: U63, bit: 100, incr: 7, overflow: Sat },
                FieldOp::Get { t: I64, bit: 64 },
            ])
        );
        assert_eq!(
            p(&["overflow", "fail", "set", "i8", "0", "1", "overflow", "WRAP", "incrby", "i8", "0", "1"]),
            Ok(vec![
                FieldOp::Set { t: I8, bit: 0, value: 1, overflow: Fail },
                FieldOp::Incr { t: I8, bit: 0, incr: 1, overflow: Wrap },
            ])
        );
        let syntax = Err(SYNTAX_ERR.to_string());
        let ftype = Err(FIELD_TYPE_ERR.to_string());
        // > BITFIELD k GET i8 -> ERR syntax error ; OVERFLOW -> syntax ; GET i8 0 bogus -> syntax
        assert_eq!(p(&["get", "i8"]), syntax);
        assert_eq!(p(&["overflow"]), syntax);
        assert_eq!(p(&["get", "i8", "0", "bogus"]), syntax);
        assert_eq!(p(&["set", "i8", "0"]), syntax);
        // > GET x 0 bogus -> type error (checked before the later syntax error)
        assert_eq!(p(&["get", "x", "0", "bogus"]), ftype);
        // > bogus GET x 0 -> syntax error
        assert_eq!(p(&["bogus", "get", "x", "0"]), syntax);
        // > OVERFLOW foo GET i8 0 -> ERR Invalid OVERFLOW type specified
        assert_eq!(p(&["overflow", "foo", "get", "i8", "0"]), Err(OVERFLOW_TYPE_ERR.to_string()));
        // > SET i8 0 +1 / 01 / 1.5 -> ERR value is not an integer or out of range
        for v in ["+1", "01", "1.5", "9223372036854775808"] {
            assert_eq!(p(&["set", "i8", "0", v]), Err(NOT_INTEGER_ERR.to_string()), "{v}");
        }
        // > SET x 0 y -> type error ; SET i8 y z -> offset error
        assert_eq!(p(&["set", "x", "0", "y"]), ftype);
        assert_eq!(p(&["set", "i8", "y", "z"]), Err(BIT_OFFSET_ERR.to_string()));
        assert_eq!(p(&["get", "u8", "4294967296"]), Err(BIT_OFFSET_ERR.to_string()));
        // > BITFIELD_RO k GET i8 0 SET i8 0 1 -> ERR BITFIELD_RO only supports the GET subcommand
        let ro_err = Err(BITFIELD_RO_ERR.to_string());
        assert_eq!(ro(&["get", "i8", "0", "set", "i8", "0", "1"]), ro_err);
        assert_eq!(ro(&["incrby", "i8", "0", "1"]), ro_err);
        // Parse errors come first: > BITFIELD_RO k SET i8 0 x -> value error ;
        // SET i8 0 1 GET x 0 -> type error ; SET i8 0 1 bogus -> syntax error
        assert_eq!(ro(&["set", "i8", "0", "x"]), Err(NOT_INTEGER_ERR.to_string()));
        assert_eq!(ro(&["set", "i8", "0", "1", "get", "x", "0"]), ftype);
        assert_eq!(ro(&["set", "i8", "0", "1", "bogus"]), syntax);
        // > BITFIELD_RO k OVERFLOW SAT GET i8 0 -> [0] ; OVERFLOW bad GET i8 0 -> OVERFLOW error
        assert_eq!(ro(&["overflow", "sat", "get", "i8", "0"]), Ok(vec![FieldOp::Get { t: I8, bit: 0 }]));
        assert_eq!(ro(&["overflow", "bad", "get", "i8", "0"]), Err(OVERFLOW_TYPE_ERR.to_string()));
        // C-string compares: > BITFIELD k "get\0x" i8 0 -> [0] ; OVERFLOW "sat\0x" GET i8 0 -> [0]
        let nul = vec![Bytes::from(b"get\0x".to_vec()), Bytes::from(b"i8\0zz".to_vec()), Bytes::from(b"0".to_vec())];
        assert_eq!(parse_bitfield(&nul, true), Ok(vec![FieldOp::Get { t: I8, bit: 0 }]));
        // ... but numbers are parsed by length: > BITFIELD k GET i8 "1\0" -> offset error
        let nul = vec![Bytes::from(b"get".to_vec()), Bytes::from(b"i8".to_vec()), Bytes::from(b"1\0".to_vec())];
        assert_eq!(parse_bitfield(&nul, false), Err(BIT_OFFSET_ERR.to_string()));
    }

    #[test]
    fn bitfield_growth() {
        let ops = |a: &[&str]| parse_bitfield(&args(a), false).unwrap();
        // > BITFIELD g OVERFLOW FAIL INCRBY u2 100 5 -> [nil] ; STRLEN g -> 13
        assert_eq!(bitfield_grow_len(&ops(&["overflow", "fail", "incrby", "u2", "100", "5"])), Some(13));
        // > BITFIELD g2 OVERFLOW FAIL SET i8 100 500 GET u8 100 -> [nil, 0] ; STRLEN g2 -> 14
        assert_eq!(
            bitfield_grow_len(&ops(&["overflow", "fail", "set", "i8", "100", "500", "get", "u8", "100"])),
            Some(14)
        );
        assert_eq!(bitfield_grow_len(&ops(&["get", "u8", "1000"])), None);
        assert_eq!(
            bitfield_grow_len(&ops(&["set", "u8", "0", "1", "set", "i64", "8", "1", "get", "u8", "900"])),
            Some(9)
        );
        // With proto-max-bulk-len 1048576: > BITFIELD y SET i64 8388607 -1 ; STRLEN y -> 1048584,
        // i.e. the write may reach 7 bytes past the offset limit; at 512 MiB the most is:
        assert_eq!(bitfield_grow_len(&ops(&["set", "i64", "4294967295", "-1"])), Some((1 << 29) + 8));
    }
}
