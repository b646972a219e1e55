//! Incremental, zero-copy RESP request decoder.
//!
//! A request is either a multibulk (`*N\r\n$len\r\n...`) or an inline command
//! (a line of space-separated words, with Redis's quoting rules). The decoder
//! scans the read buffer with `memchr`, records argument ranges, and only when a
//! whole frame is present splits it off the buffer and hands out `Bytes` slices
//! of it. A partial frame leaves the buffer untouched and returns `Ok(None)`.
//!
//! Limits and error strings follow Redis 7 (`networking.c`): after a protocol
//! error the connection replies `-ERR Protocol error: ...` and closes.

use bytes::{Bytes, BytesMut};
use memchr::memchr;
use smallvec::SmallVec;

/// Largest inline request or multibulk/bulk header line Redis accepts (`PROTO_INLINE_MAX_SIZE`).
pub const PROTO_INLINE_MAX_SIZE: usize = 64 * 1024;
/// Largest multibulk element count (Redis 7: INT_MAX for an authenticated
/// client; the frame's memory is bounded by the query buffer, not the count).
pub const PROTO_MAX_MULTIBULK: i64 = i32::MAX as i64;

/// Limits a decoder enforces; `max_bulk_len` is the `proto-max-bulk-len` config.
#[derive(Clone, Copy, Debug)]
pub struct DecodeLimits {
    pub max_bulk_len: i64,
    /// The client has not authenticated while a password is required: Redis
    /// then refuses more than 10 arguments or a bulk over 16 KB (and closes),
    /// so a stranger cannot make the server buffer much.
    pub unauthenticated: bool,
}

/// The most arguments, and the longest bulk, before AUTH.
const UNAUTH_MAX_MULTIBULK: i64 = 10;
const UNAUTH_MAX_BULK: i64 = 16 * 1024;

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits { max_bulk_len: 512 * 1024 * 1024, unauthenticated: false }
    }
}

/// A protocol violation. `Display` is the text after `-ERR ` in Redis's reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("Protocol error: too big inline request")]
    TooBigInline,
    #[error("Protocol error: too big mbulk count string")]
    TooBigMbulkCount,
    #[error("Protocol error: invalid multibulk length")]
    InvalidMultibulkLen,
    #[error("Protocol error: too big bulk count string")]
    TooBigBulkCount,
    #[error("Protocol error: expected '$', got '{}'", char::from(*.0))]
    ExpectedDollar(u8),
    #[error("Protocol error: invalid bulk length")]
    InvalidBulkLen,
    #[error("Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
    #[error("Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulk,
    #[error("Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulk,
}

impl ProtocolError {
    /// The reply's text after `-`, byte for byte (the offending byte is
    /// quoted as sent, as Redis does).
    pub fn reply_text(&self) -> Vec<u8> {
        match self {
            ProtocolError::ExpectedDollar(b) => [&b"ERR Protocol error: expected '$', got '"[..], &[*b], b"'"].concat(),
            e => format!("ERR {e}").into_bytes(),
        }
    }
}

/// Arguments of one request, each a zero-copy slice of the frame.
pub type Args = SmallVec<[Bytes; 4]>;

/// The decoder keeps no state between calls except its limits: a partial frame is
/// re-scanned when more bytes arrive. Frames are small relative to reads, so the
/// rescans cost little; a large bulk is skipped by length, not scanned.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    pub limits: DecodeLimits,
}

enum Scan {
    Incomplete,
    /// frame length, argument ranges within the frame
    Frame(usize, SmallVec<[(usize, usize); 4]>),
    /// inline command: owned args after unquoting (inline requests are rare)
    Inline(usize, Args),
    /// an empty request (`*0`, `*-1`, blank line): consume and skip
    Empty(usize),
}

impl Decoder {
    pub fn new(limits: DecodeLimits) -> Self {
        Decoder { limits }
    }

    /// Decode one request from the front of `buf`. On success the frame is removed
    /// from `buf`. Empty requests are skipped transparently.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Args>, ProtocolError> {
        loop {
            if buf.is_empty() {
                return Ok(None);
            }
            let scan = if buf[0] == b'*' { self.scan_multibulk(buf)? } else { scan_inline(buf)? };
            match scan {
                Scan::Incomplete => return Ok(None),
                Scan::Empty(n) => {
                    let _ = buf.split_to(n);
                }
                Scan::Inline(n, args) => {
                    let _ = buf.split_to(n);
                    return Ok(Some(args));
                }
                Scan::Frame(n, ranges) => {
                    let frame = buf.split_to(n).freeze();
                    return Ok(Some(ranges.into_iter().map(|(s, e)| frame.slice(s..e)).collect()));
                }
            }
        }
    }

    fn scan_multibulk(&self, buf: &[u8]) -> Result<Scan, ProtocolError> {
        let Some(nl) = memchr(b'\r', buf) else {
            if buf.len() > PROTO_INLINE_MAX_SIZE {
                return Err(ProtocolError::TooBigMbulkCount);
            }
            return Ok(Scan::Incomplete);
        };
        if nl > PROTO_INLINE_MAX_SIZE {
            return Err(ProtocolError::TooBigMbulkCount);
        }
        // Redis requires "\r\n"; it looks for '\r' and then skips two bytes.
        if nl + 1 >= buf.len() {
            return Ok(Scan::Incomplete);
        }
        let count = parse_len(&buf[1..nl]).ok_or(ProtocolError::InvalidMultibulkLen)?;
        if count > PROTO_MAX_MULTIBULK {
            return Err(ProtocolError::InvalidMultibulkLen);
        }
        if count > UNAUTH_MAX_MULTIBULK && self.limits.unauthenticated {
            return Err(ProtocolError::UnauthenticatedMultibulk);
        }
        let mut pos = nl + 2;
        if count <= 0 {
            return Ok(Scan::Empty(pos));
        }
        let mut ranges = SmallVec::with_capacity(count.min(1024) as usize);
        for _ in 0..count {
            if pos >= buf.len() {
                return Ok(Scan::Incomplete);
            }
            let rest = &buf[pos..];
            let Some(nl) = memchr(b'\r', rest) else {
                if rest.len() > PROTO_INLINE_MAX_SIZE {
                    return Err(ProtocolError::TooBigBulkCount);
                }
                return Ok(Scan::Incomplete);
            };
            if nl > PROTO_INLINE_MAX_SIZE {
                return Err(ProtocolError::TooBigBulkCount);
            }
            if rest[0] != b'$' {
                return Err(ProtocolError::ExpectedDollar(rest[0]));
            }
            if nl + 1 >= rest.len() {
                return Ok(Scan::Incomplete);
            }
            let len = parse_len(&rest[1..nl]).ok_or(ProtocolError::InvalidBulkLen)?;
            if len < 0 || len > self.limits.max_bulk_len {
                return Err(ProtocolError::InvalidBulkLen);
            }
            if len > UNAUTH_MAX_BULK && self.limits.unauthenticated {
                return Err(ProtocolError::UnauthenticatedBulk);
            }
            let start = pos + nl + 2;
            let end = start + len as usize;
            if end + 2 > buf.len() {
                return Ok(Scan::Incomplete);
            }
            ranges.push((start, end));
            pos = end + 2;
        }
        Ok(Scan::Frame(pos, ranges))
    }
}

/// Parse a RESP length: optional '-', decimal digits only, fits i64 (Redis `string2ll`).
fn parse_len(s: &[u8]) -> Option<i64> {
    crate::protocol::cursor::parse_i64(s)
}

fn scan_inline(buf: &[u8]) -> Result<Scan, ProtocolError> {
    let Some(nl) = memchr(b'\n', buf) else {
        if buf.len() > PROTO_INLINE_MAX_SIZE {
            return Err(ProtocolError::TooBigInline);
        }
        return Ok(Scan::Incomplete);
    };
    if nl > PROTO_INLINE_MAX_SIZE {
        return Err(ProtocolError::TooBigInline);
    }
    let mut line = &buf[..nl];
    if line.last() == Some(&b'\r') {
        line = &line[..line.len() - 1];
    }
    let args = split_args(line).ok_or(ProtocolError::UnbalancedQuotes)?;
    if args.is_empty() {
        return Ok(Scan::Empty(nl + 1));
    }
    Ok(Scan::Inline(nl + 1, args.into_iter().map(Bytes::from).collect()))
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Redis `sdssplitargs`: whitespace-separated words, "double quotes" with escapes
/// (\n \r \t \b \a \\ \" \xHH) and 'single quotes' (only \' escaped). A closing
/// quote must be followed by a space or the end. `None` = unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut p = 0;
    let n = line.len();
    loop {
        while p < n && line[p].is_ascii_whitespace() {
            p += 1;
        }
        if p >= n {
            return Some(out);
        }
        let mut cur = Vec::new();
        let (mut inq, mut insq, mut done) = (false, false, false);
        while !done {
            if inq {
                if p >= n {
                    return None;
                }
                if line[p] == b'\\' && p + 3 < n && line[p + 1] == b'x' && is_hex(line[p + 2]) && is_hex(line[p + 3]) {
                    cur.push(hex_val(line[p + 2]) * 16 + hex_val(line[p + 3]));
                    p += 3;
                } else if line[p] == b'\\' && p + 1 < n {
                    p += 1;
                    cur.push(match line[p] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        c => c,
                    });
                } else if line[p] == b'"' {
                    if p + 1 < n && !line[p + 1].is_ascii_whitespace() {
                        return None;
                    }
                    done = true;
                } else {
                    cur.push(line[p]);
                }
            } else if insq {
                if p >= n {
                    return None;
                }
                if line[p] == b'\\' && p + 1 < n && line[p + 1] == b'\'' {
                    p += 1;
                    cur.push(b'\'');
                } else if line[p] == b'\'' {
                    if p + 1 < n && !line[p + 1].is_ascii_whitespace() {
                        return None;
                    }
                    done = true;
                } else {
                    cur.push(line[p]);
                }
            } else if p >= n {
                done = true;
            } else {
                match line[p] {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => done = true,
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    c => cur.push(c),
                }
            }
            if p < n {
                p += 1;
            }
        }
        out.push(cur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Decoded = Result<Option<Vec<Vec<u8>>>, ProtocolError>;

    fn dec(input: &[u8]) -> (Decoded, usize) {
        let mut buf = BytesMut::from(input);
        let r = Decoder::default().decode(&mut buf).map(|o| o.map(|a| a.iter().map(|b| b.to_vec()).collect()));
        (r, buf.len())
    }

    #[test]
    fn multibulk_and_partial() {
        let full = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
        assert_eq!(dec(full).0.unwrap().unwrap(), vec![b"SET".to_vec(), b"k".to_vec(), b"value".to_vec()]);
        for cut in 0..full.len() {
            let (r, left) = dec(&full[..cut]);
            assert_eq!(r.unwrap(), None, "cut at {cut}");
            assert_eq!(left, cut, "a partial frame must stay in the buffer");
        }
    }

    #[test]
    fn pipelined_frames_come_out_in_order() {
        let mut buf = BytesMut::from(&b"*1\r\n$4\r\nPING\r\nECHO hi\r\n*2\r\n$3\r\nGET\r\n$1\r\nx\r\n"[..]);
        let d = Decoder::default();
        assert_eq!(d.decode(&mut buf).unwrap().unwrap()[0], "PING");
        assert_eq!(d.decode(&mut buf).unwrap().unwrap()[1], "hi");
        assert_eq!(d.decode(&mut buf).unwrap().unwrap()[1], "x");
        assert!(d.decode(&mut buf).unwrap().is_none());
        assert!(buf.is_empty());
    }

    #[test]
    fn binary_safe_bulk() {
        let (r, _) = dec(b"*1\r\n$4\r\n\r\n\0\n\r\n");
        assert_eq!(r.unwrap().unwrap(), vec![b"\r\n\0\n".to_vec()]);
    }

    #[test]
    fn errors_match_redis() {
        assert_eq!(dec(b"*1\r\nx3\r\nfoo\r\n").0, Err(ProtocolError::ExpectedDollar(b'x')));
        assert_eq!(dec(b"*abc\r\n").0, Err(ProtocolError::InvalidMultibulkLen));
        assert_eq!(dec(b"*2147483648\r\n").0, Err(ProtocolError::InvalidMultibulkLen));
        assert!(matches!(dec(b"*2147483647\r\n").0, Ok(None)), "Redis 7 waits for the elements");
        assert_eq!(dec(b"*1\r\n$-5\r\n").0, Err(ProtocolError::InvalidBulkLen));
        assert_eq!(dec(b"*1\r\n$536870913\r\n").0, Err(ProtocolError::InvalidBulkLen));
        assert_eq!(dec(b"SET \"a\r\n").0, Err(ProtocolError::UnbalancedQuotes));
        assert_eq!(dec(&vec![b'a'; PROTO_INLINE_MAX_SIZE + 1]).0, Err(ProtocolError::TooBigInline));
        assert_eq!(ProtocolError::ExpectedDollar(b'x').to_string(), "Protocol error: expected '$', got 'x'");
        assert_eq!(ProtocolError::ExpectedDollar(0x80).reply_text(), b"ERR Protocol error: expected '$', got '\x80'");
    }

    #[test]
    fn empty_requests_are_skipped() {
        assert_eq!(dec(b"*0\r\n*-1\r\n\r\n  \r\nPING\r\n").0.unwrap().unwrap(), vec![b"PING".to_vec()]);
    }

    #[test]
    fn inline_quoting() {
        let args = split_args(br#"set "a b\x41\n" 'it\'s' plain"#).unwrap();
        assert_eq!(args, vec![b"set".to_vec(), b"a bA\n".to_vec(), b"it's".to_vec(), b"plain".to_vec()]);
        assert!(split_args(br#""a"b"#).is_none());
        assert!(split_args(br#"'abc"#).is_none());
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let mut buf = BytesMut::from(&data[..]);
            let d = Decoder::default();
            for _ in 0..64 {
                match d.decode(&mut buf) {
                    Ok(Some(_)) => continue,
                    _ => break,
                }
            }
        }

        #[test]
        fn roundtrip_any_args(args in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40), 1..8), cut in 0usize..400) {
            let mut wire = format!("*{}\r\n", args.len()).into_bytes();
            for a in &args {
                wire.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                wire.extend_from_slice(a);
                wire.extend_from_slice(b"\r\n");
            }
            let d = Decoder::default();
            let cut = cut.min(wire.len());
            let mut buf = BytesMut::from(&wire[..cut]);
            let first = d.decode(&mut buf).unwrap();
            if cut < wire.len() {
                proptest::prop_assert!(first.is_none());
                buf.extend_from_slice(&wire[cut..]);
                let got = d.decode(&mut buf).unwrap().unwrap();
                proptest::prop_assert_eq!(got.iter().map(|b| b.to_vec()).collect::<Vec<_>>(), args);
            } else {
                proptest::prop_assert_eq!(first.unwrap().iter().map(|b| b.to_vec()).collect::<Vec<_>>(), args);
            }
        }
    }
}
