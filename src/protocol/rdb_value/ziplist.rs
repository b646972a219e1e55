//! Ziplists, intsets and zipmaps: the packed encodings `decode` reads and
//! `encode` never writes.

use super::listpack::{le_u16, le_u32, le_uint, slice, Item};

/// A ziplist's entries, validated as `ziplistValidateIntegrity` does in deep
/// mode: byte count, tail offset, terminator, every entry's encoding and
/// previous-entry length, and the header count unless it says "unknown".
pub(super) fn ziplist(zl: &[u8]) -> Option<Vec<Item<'_>>> {
    const HDR: usize = 10;
    if zl.len() < HDR + 1 || le_u32(zl, 0)? as usize != zl.len() {
        return None;
    }
    let end = zl.len() - 1;
    let tail = le_u32(zl, 4)? as usize;
    if zl[end] != 0xff || tail > end {
        return None;
    }
    let count = le_u16(zl, 8)?;
    let mut items = Vec::with_capacity((count as usize).min(zl.len()));
    let (mut p, mut prev_len, mut last) = (HDR, 0usize, None);
    while *zl.get(p)? != 0xff {
        let (prevlen, q) = if zl[p] < 254 { (zl[p] as usize, p + 1) } else { (le_u32(zl, p + 1)? as usize, p + 5) };
        let enc = *zl.get(q)?;
        // (length-field size, data size, integer if the entry is one)
        let (lensize, n, int) = match enc {
            0x00..=0x3f => (1, (enc & 0x3f) as usize, None),
            0x40..=0x7f => (2, (((enc & 0x3f) as usize) << 8) | *zl.get(q + 1)? as usize, None),
            0x80..=0xbf => {
                let n = u32::from_be_bytes(slice(zl, q + 1, 4)?.try_into().ok()?);
                (5, n as usize, None)
            }
            0xc0 => (1, 2, Some(16)),
            0xd0 => (1, 4, Some(32)),
            0xe0 => (1, 8, Some(64)),
            0xf0 => (1, 3, Some(24)),
            0xfe => (1, 1, Some(8)),
            0xf1..=0xfd => (1, 0, Some(0)),
            _ => return None,
        };
        let data_at = q.checked_add(lensize)?;
        let next = data_at.checked_add(n)?;
        if next > end || prevlen != prev_len {
            return None;
        }
        let data = &zl[data_at..next];
        items.push(match int {
            None => Item::Str(data),
            Some(0) => Item::Int((enc & 0x0f) as i64 - 1),
            Some(bits) => Item::Int(le_uint(data, bits)),
        });
        prev_len = next - p;
        last = Some(p);
        p = next;
    }
    if p != end || last.is_some_and(|l| l != tail) {
        return None;
    }
    if count != u16::MAX && count as usize != items.len() {
        return None;
    }
    Some(items)
}

/// An intset's members: 2-, 4- or 8-byte little-endian integers, at least one,
/// strictly ascending (Redis checks the order only with sanitization on).
pub(super) fn intset(b: &[u8]) -> Option<Vec<i64>> {
    let width = le_u32(b, 0)? as usize;
    let n = le_u32(b, 4)? as usize;
    if !matches!(width, 2 | 4 | 8) || n == 0 || n.checked_mul(width)?.checked_add(8)? != b.len() {
        return None;
    }
    let members: Vec<i64> = b[8..].chunks_exact(width).map(|c| le_uint(c, width as u32 * 8)).collect();
    members.windows(2).all(|w| w[0] < w[1]).then_some(members)
}

/// A zipmap's field/value pairs (Redis 2.4 hashes), validated as
/// `zipmapValidateIntegrity` does: a count byte, entries of
/// `<len>field<len><free>value<free bytes>`, the 0xff terminator.
pub(super) fn zipmap(zm: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    if zm.len() < 2 || zm[zm.len() - 1] != 0xff {
        return None;
    }
    let end = zm.len() - 1;
    // A length: one byte below 254, else 254 or 255 and four little-endian bytes.
    let len_at = |p: usize| -> Option<(usize, usize)> {
        let b = *zm.get(p)?;
        if b < 254 {
            Some((b as usize, p + 1))
        } else {
            Some((le_u32(zm, p + 1)? as usize, p + 5))
        }
    };
    let mut pairs = Vec::new();
    let mut p = 1;
    while *zm.get(p)? != 0xff {
        let (flen, at) = len_at(p)?;
        let field = slice(zm, at, flen)?;
        let (vlen, at) = len_at(at + flen)?;
        let free = *zm.get(at)? as usize;
        let value = slice(zm, at + 1, vlen)?;
        p = (at + 1).checked_add(vlen)?.checked_add(free)?;
        if p > end {
            return None;
        }
        pairs.push((field, value));
    }
    if pairs.is_empty() || (zm[0] != 254 && zm[0] as usize != pairs.len()) {
        return None;
    }
    Some(pairs)
}
