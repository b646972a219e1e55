//! The byte reader under every payload: RDB lengths and strings (LZF too),
//! raw integers and stream IDs, every read bounds-checked; and the float text
//! Redis writes.

use super::{Sid, LZF_MAX_RATIO};
use crate::protocol::rdb;

/// RDB items from a slice. Every read is bounds-checked; `None` is a bad payload.
/// (`rdb::Reader` has no raw reads and no notion of what is left, which the
/// allocation caps need.)
pub(super) struct In<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> In<'a> {
    pub(super) fn rest(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// A capacity for `n` claimed items, each at least one byte of what is left.
    pub(super) fn cap(&self, n: u64) -> usize {
        usize::try_from(n).unwrap_or(usize::MAX).min(self.rest())
    }

    pub(super) fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    pub(super) fn take(&mut self, n: u64) -> Option<&'a [u8]> {
        let n = usize::try_from(n).ok()?;
        if n > self.rest() {
            return None;
        }
        let s = self.buf.get(self.pos..self.pos + n)?;
        self.pos += n;
        Some(s)
    }

    pub(super) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N as u64)?.try_into().ok()
    }

    /// A millisecond time: eight little-endian bytes.
    pub(super) fn u64_le(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }

    /// A stream ID in raw form: two big-endian u64s, as rax keys hold them.
    pub(super) fn raw_id(&mut self) -> Option<Sid> {
        Some(sid_be(&self.array::<16>()?))
    }

    /// An RDB length, or with `true` the number of a special string encoding.
    pub(super) fn len_or_enc(&mut self) -> Option<(u64, bool)> {
        let b = self.byte()?;
        Some(match b >> 6 {
            0 => ((b & 0x3f) as u64, false),
            1 => ((((b & 0x3f) as u64) << 8) | self.byte()? as u64, false),
            2 => match b {
                0x80 => (u32::from_be_bytes(self.array()?) as u64, false),
                0x81 => (u64::from_be_bytes(self.array()?), false),
                _ => return None,
            },
            _ => ((b & 0x3f) as u64, true),
        })
    }

    pub(super) fn len(&mut self) -> Option<u64> {
        match self.len_or_enc()? {
            (n, false) => Some(n),
            _ => None,
        }
    }

    /// An RDB string: plain, an 8/16/32-bit integer, or LZF-compressed.
    pub(super) fn string(&mut self) -> Option<Vec<u8>> {
        match self.len_or_enc()? {
            (n, false) => Some(self.take(n)?.to_vec()),
            (0, true) => Some((self.byte()? as i8).to_string().into_bytes()),
            (1, true) => Some(i16::from_le_bytes(self.array()?).to_string().into_bytes()),
            (2, true) => Some(i32::from_le_bytes(self.array()?).to_string().into_bytes()),
            (3, true) => {
                let clen = self.len()?;
                let len = self.len()?;
                let compressed = self.take(clen)?;
                // No input can expand further, so a larger claim fails here
                // rather than after allocating it.
                if len > clen.checked_mul(LZF_MAX_RATIO)? {
                    return None;
                }
                rdb::lzf_decompress(compressed, usize::try_from(len).ok()?)
            }
            _ => None,
        }
    }
}

pub(super) fn sid_be(b: &[u8; 16]) -> Sid {
    let (ms, seq) = b.split_at(8);
    Sid {
        ms: u64::from_be_bytes(ms.try_into().unwrap_or_default()),
        seq: u64::from_be_bytes(seq.try_into().unwrap_or_default()),
    }
}

/// A float as Redis wrote it (`%.17g`, "inf", "-inf"). Redis reads these with
/// `strtod`/`sscanf`, which also take a valid prefix or hex; here the whole text
/// (after leading blanks) must be a number.
pub(super) fn parse_f64(s: &[u8]) -> Option<f64> {
    std::str::from_utf8(s).ok()?.trim_start_matches(|c: char| c.is_ascii_whitespace()).parse().ok()
}
