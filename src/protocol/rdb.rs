//! The RDB pieces that DUMP-style payloads are made of (FUNCTION DUMP and
//! FUNCTION RESTORE today): length-prefixed strings (plain, or LZF-compressed
//! as Redis often writes them), the RDB version and the CRC64 footer.
//!
//! A payload is its records, then the RDB version as two little-endian bytes,
//! then the CRC64 (Redis's "Jones" polynomial, reflected) of everything before
//! it as eight little-endian bytes.

/// The RDB version of the payloads written here (Redis 7.0's).
pub const RDB_VERSION: u16 = 10;
/// A function library record (Redis's `RDB_OPCODE_FUNCTION2`).
pub const OPCODE_FUNCTION2: u8 = 245;
/// The pre-7.0 GA function record Redis 7.0 still reads.
pub const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// Redis's CRC64 (Jones polynomial 0xad93d23594c935a9, reflected, init 0).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5; // 0xad93d23594c935a9 reflected
    for &b in data {
        crc ^= b as u64;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ POLY } else { crc >> 1 };
        }
    }
    crc
}

/// Append an RDB length.
pub fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Append an RDB string, uncompressed (Redis reads it whatever its own setting).
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Seal a payload: version and CRC64.
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    body.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, &body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// The records of a payload whose version and checksum hold.
pub fn verify(payload: &[u8]) -> Option<&[u8]> {
    if payload.len() < 10 {
        return None;
    }
    let (body, crc) = payload.split_at(payload.len() - 8);
    let version = u16::from_le_bytes([body[body.len() - 2], body[body.len() - 1]]);
    if version > RDB_VERSION || crc64(0, body).to_le_bytes() != crc {
        return None;
    }
    Some(&body[..body.len() - 2])
}

/// Reads RDB items from a byte slice.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// A length: a plain count, or the encoding of a special string.
enum Len {
    Plain(u64),
    Encoded(u8),
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn len_or_enc(&mut self) -> Option<Len> {
        let b = self.byte()?;
        Some(match b >> 6 {
            0 => Len::Plain((b & 0x3f) as u64),
            1 => Len::Plain((((b & 0x3f) as u64) << 8) | self.byte()? as u64),
            2 => match b {
                0x80 => Len::Plain(u32::from_be_bytes(self.take(4)?.try_into().ok()?) as u64),
                0x81 => Len::Plain(u64::from_be_bytes(self.take(8)?.try_into().ok()?)),
                _ => return None,
            },
            _ => Len::Encoded(b & 0x3f),
        })
    }

    pub fn len(&mut self) -> Option<u64> {
        match self.len_or_enc()? {
            Len::Plain(n) => Some(n),
            Len::Encoded(_) => None,
        }
    }

    /// An RDB string: plain, an integer encoding, or LZF-compressed.
    pub fn string(&mut self) -> Option<Vec<u8>> {
        match self.len_or_enc()? {
            Len::Plain(n) => Some(self.take(usize::try_from(n).ok()?)?.to_vec()),
            Len::Encoded(0) => Some((self.byte()? as i8).to_string().into_bytes()),
            Len::Encoded(1) => Some(i16::from_le_bytes(self.take(2)?.try_into().ok()?).to_string().into_bytes()),
            Len::Encoded(2) => Some(i32::from_le_bytes(self.take(4)?.try_into().ok()?).to_string().into_bytes()),
            Len::Encoded(3) => {
                let clen = usize::try_from(self.len()?).ok()?;
                let len = usize::try_from(self.len()?).ok()?;
                lzf_decompress(self.take(clen)?, len)
            }
            Len::Encoded(_) => None,
        }
    }
}

/// LZF decompression (the format of liblzf, which RDB uses) into exactly `len` bytes.
pub fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    // LZF expands at most about 88 times (a 3-byte back reference makes up to
    // 264 bytes): a claimed length past that is a lie, refused before any
    // allocation, so a few bytes cannot reserve a gigabyte.
    if len > input.len().saturating_mul(88).saturating_add(64) {
        return None;
    }
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            // A literal run of ctrl + 1 bytes.
            let n = ctrl + 1;
            out.extend_from_slice(input.get(i..i + n)?);
            i += n;
        } else {
            // A back reference: length (ctrl >> 5) + 2, more in the next byte if 7.
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *input.get(i)? as usize;
                i += 1;
            }
            n += 2;
            let back = ((ctrl & 0x1f) << 8) + *input.get(i)? as usize + 1;
            i += 1;
            let from = out.len().checked_sub(back)?;
            for k in 0..n {
                let b = out[from + k];
                out.push(b);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_of_the_check_string() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn strings_and_lengths_round_trip() {
        for n in [0u64, 63, 64, 16383, 16384, 1 << 32] {
            let mut b = Vec::new();
            put_len(&mut b, n);
            assert_eq!(Reader::new(&b).len(), Some(n));
        }
        let mut b = Vec::new();
        put_string(&mut b, b"#!lua name=x\nreturn 1");
        assert_eq!(Reader::new(&b).string().unwrap(), b"#!lua name=x\nreturn 1");
        let sealed = seal(b.clone());
        assert_eq!(verify(&sealed), Some(&b[..]));
        let mut bad = sealed.clone();
        bad[0] ^= 1;
        assert_eq!(verify(&bad), None);
    }

    #[test]
    fn lzf_back_references() {
        // "abcabcabc": literal "abc", then a back reference of 6 bytes at distance 3.
        let input = [2u8, b'a', b'b', b'c', (4 << 5), 2];
        assert_eq!(lzf_decompress(&input, 9).unwrap(), b"abcabcabc");
        assert_eq!(lzf_decompress(&input, 8), None);
    }
}
