//! Listpacks, read and written, and the [`Item`]s they and ziplists hold; the
//! little-endian and integer helpers the packed encodings share.

use super::reader::parse_f64;

/// `s` as an i64 if it is exactly the decimal form Redis prints (its
/// `string2ll` / `lpStringToInt64`): no sign but a leading '-', no leading zero,
/// no "-0", in range.
pub(super) fn canonical_i64(s: &[u8]) -> Option<i64> {
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    let first = *digits.first()?;
    if digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if first == b'0' && s.len() != 1 {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// An entry of a listpack or ziplist.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Item<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl Item<'_> {
    pub(super) fn bytes(self) -> Vec<u8> {
        match self {
            Item::Int(v) => v.to_string().into_bytes(),
            Item::Str(s) => s.to_vec(),
        }
    }

    /// The entry as an integer, as `lpGetIntegerIfValid` reads stream metadata.
    pub(super) fn int(self) -> Option<i64> {
        match self {
            Item::Int(v) => Some(v),
            Item::Str(s) => canonical_i64(s),
        }
    }

    pub(super) fn score(self) -> Option<f64> {
        match self {
            Item::Int(v) => Some(v as f64),
            Item::Str(s) => parse_f64(s),
        }
    }
}

pub(super) fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

pub(super) fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

/// `b[at..at + n]`, checked.
pub(super) fn slice(b: &[u8], at: usize, n: usize) -> Option<&[u8]> {
    b.get(at..at.checked_add(n)?)
}

/// Sign-extend the low `bits` bits of `u`.
fn sign_extend(u: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

/// A listpack's entries, validated as `lpValidateIntegrity` does in deep mode:
/// the header's byte count, the terminator, every entry's encoding and back
/// length, and the header's entry count unless it says "unknown" (65535).
pub(super) fn listpack(lp: &[u8]) -> Option<Vec<Item<'_>>> {
    const HDR: usize = 6;
    if lp.len() < HDR + 1 || le_u32(lp, 0)? as usize != lp.len() {
        return None;
    }
    let end = lp.len() - 1; // the terminator
    if lp[end] != 0xff {
        return None;
    }
    let numele = le_u16(lp, 4)?;
    let mut items = Vec::with_capacity((numele as usize).min(lp.len()));
    let mut p = HDR;
    while *lp.get(p)? != 0xff {
        let b = lp[p];
        let (item, len) = match b {
            0x00..=0x7f => (Item::Int(b as i64), 1),
            0x80..=0xbf => {
                let n = (b & 0x3f) as usize;
                (Item::Str(slice(lp, p + 1, n)?), 1 + n)
            }
            0xc0..=0xdf => {
                let u = (((b & 0x1f) as u64) << 8) | *lp.get(p + 1)? as u64;
                (Item::Int(sign_extend(u, 13)), 2)
            }
            0xe0..=0xef => {
                let n = (((b & 0x0f) as usize) << 8) | *lp.get(p + 1)? as usize;
                (Item::Str(slice(lp, p + 2, n)?), 2 + n)
            }
            0xf0 => {
                let n = le_u32(lp, p + 1)? as usize;
                (Item::Str(slice(lp, p + 5, n)?), n.checked_add(5)?)
            }
            0xf1 => (Item::Int(le_uint(slice(lp, p + 1, 2)?, 16)), 3),
            0xf2 => (Item::Int(le_uint(slice(lp, p + 1, 3)?, 24)), 4),
            0xf3 => (Item::Int(le_uint(slice(lp, p + 1, 4)?, 32)), 5),
            0xf4 => (Item::Int(le_uint(slice(lp, p + 1, 8)?, 64)), 9),
            _ => return None,
        };
        let next = p.checked_add(len)?.checked_add(backlen_size(len as u64))?;
        if next > end || decode_backlen(&lp[..next]) != Some(len as u64) {
            return None;
        }
        items.push(item);
        p = next;
    }
    if p != end || (numele != u16::MAX && numele as usize != items.len()) {
        return None;
    }
    Some(items)
}

/// A little-endian two's-complement integer of `bits` bits.
pub(super) fn le_uint(b: &[u8], bits: u32) -> i64 {
    let u = b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | x as u64);
    if bits == 64 {
        u as i64
    } else {
        sign_extend(u, bits)
    }
}

/// How many bytes a listpack integer entry takes (7-bit uint, 13-, 16-, 24-,
/// 32- or 64-bit int), back length excluded.
pub fn int_size(v: i64) -> usize {
    match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32768..=32767 => 3,
        -8388608..=8388607 => 4,
        -2147483648..=2147483647 => 5,
        _ => 9,
    }
}

/// How many bytes the back length of a listpack entry of `l` bytes takes
/// (Redis's thresholds, off-by-one included).
pub fn backlen_size(l: u64) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// Append the back length of an entry of `l` bytes: 7 bits a byte, most
/// significant first, bit 7 set on every byte but the first.
fn put_backlen(out: &mut Vec<u8>, l: u64) {
    let n = backlen_size(l);
    for i in (0..n).rev() {
        let b = ((l >> (7 * i)) & 127) as u8;
        out.push(if i == n - 1 { b } else { b | 128 });
    }
}

/// The back length that ends `b`, read backwards as `lpDecodeBacklen` does.
fn decode_backlen(b: &[u8]) -> Option<u64> {
    let mut val = 0u64;
    let mut shift = 0;
    let mut i = b.len();
    loop {
        i = i.checked_sub(1)?;
        let x = b[i];
        val |= ((x & 127) as u64) << shift;
        if x & 128 == 0 {
            return Some(val);
        }
        shift += 7;
        if shift > 28 {
            return None;
        }
    }
}

/// A listpack under construction. Entries are encoded as `lpAppend` encodes
/// them: strings that are canonical integers become integers.
pub(super) struct Listpack {
    buf: Vec<u8>,
    count: usize,
}

impl Listpack {
    /// Header and terminator.
    pub(super) const EMPTY: usize = 7;

    pub(super) fn new() -> Self {
        Listpack { buf: vec![0; 6], count: 0 }
    }

    /// The finished size so far.
    pub(super) fn size(&self) -> usize {
        self.buf.len() + 1
    }

    /// The bytes `push_str(s)` adds.
    pub(super) fn str_size(s: &[u8]) -> usize {
        let len = match canonical_i64(s) {
            Some(v) => int_size(v),
            None if s.len() < 64 => 1 + s.len(),
            None if s.len() < 4096 => 2 + s.len(),
            None => 5 + s.len(),
        };
        len + backlen_size(len as u64)
    }

    pub(super) fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        let u = v as u64;
        match int_size(v) {
            1 => self.buf.push(v as u8),
            2 => {
                let u = u & 0x1fff;
                self.buf.push(0xc0 | (u >> 8) as u8);
                self.buf.push(u as u8);
            }
            3 => {
                self.buf.push(0xf1);
                self.buf.extend_from_slice(&u.to_le_bytes()[..2]);
            }
            4 => {
                self.buf.push(0xf2);
                self.buf.extend_from_slice(&u.to_le_bytes()[..3]);
            }
            5 => {
                self.buf.push(0xf3);
                self.buf.extend_from_slice(&u.to_le_bytes()[..4]);
            }
            _ => {
                self.buf.push(0xf4);
                self.buf.extend_from_slice(&u.to_le_bytes());
            }
        }
        self.end_entry(start);
    }

    pub(super) fn push_str(&mut self, s: &[u8]) {
        if let Some(v) = canonical_i64(s) {
            return self.push_int(v);
        }
        let start = self.buf.len();
        let n = s.len();
        if n < 64 {
            self.buf.push(0x80 | n as u8);
        } else if n < 4096 {
            self.buf.push(0xe0 | (n >> 8) as u8);
            self.buf.push(n as u8);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(n as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        self.end_entry(start);
    }

    /// Close the entry that began at `start` with its back length.
    fn end_entry(&mut self, start: usize) {
        let len = (self.buf.len() - start) as u64;
        put_backlen(&mut self.buf, len);
        self.count += 1;
    }

    pub(super) fn append(&mut self, other: Listpack) {
        self.buf.extend_from_slice(other.buf.get(6..).unwrap_or_default());
        self.count += other.count;
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xff);
        let total = self.buf.len() as u32;
        let count = self.count.min(u16::MAX as usize) as u16;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    #[test]
    fn listpack_round_trips_every_encoding() {
        // Every integer width at its edges, things that look like integers but
        // are not canonical, and every string length width.
        let ints = "0,127,128,-1,-4096,4095,4096,-32768,32767,-8388608,8388607,8388608,-2147483648,2147483647,\
                    2147483648,9223372036854775807,-9223372036854775808,9223372036854775808,-0,01,+1,,abc";
        let values: Vec<Vec<u8>> = ints
            .split(',')
            .map(b)
            .chain([vec![b'x'; 63], vec![b'y'; 64], vec![b'z'; 4095], vec![b'w'; 4096], vec![b'v'; 20000]])
            .collect();
        let mut lp = Listpack::new();
        let mut size = Listpack::EMPTY;
        for v in &values {
            size += Listpack::str_size(v);
            lp.push_str(v);
        }
        let lp = lp.finish();
        assert_eq!(lp.len(), size);
        let items = listpack(&lp).unwrap();
        let back: Vec<Vec<u8>> = items.iter().map(|i| i.bytes()).collect();
        assert_eq!(back, values);
        assert_eq!(items[1], Item::Int(127));
        assert_eq!(items[18], Item::Str(b"-0"));
    }

    #[test]
    fn backlen_sizes_follow_redis_thresholds() {
        let sizes = [(127u64, 1), (128, 2), (16382, 2), (16383, 3), (2097150, 3), (2097151, 4)];
        for (l, n) in sizes.into_iter().chain([(268435454, 4), (268435455, 5), (1 << 32, 5)]) {
            let mut buf = vec![0x80]; // a byte before that must not be read
            put_backlen(&mut buf, l);
            assert_eq!(buf.len() - 1, n, "{l}");
            assert_eq!(decode_backlen(&buf), Some(l), "{l}");
        }
    }
}
