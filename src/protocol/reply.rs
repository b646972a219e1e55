//! Replies, independent of the protocol version, and their RESP2/RESP3 encoding.
//!
//! Apply and handlers produce a [`Reply`]; the connection encodes it for the
//! protocol its client negotiated (`HELLO 2|3`), as Redis's `addReply*` family does.

use std::borrow::Cow;

use bytes::{BufMut, Bytes, BytesMut};

use super::number::fmt_double;

/// One reply. Errors carry Redis's full text without the leading '-' (e.g.
/// `"ERR syntax error"`, `"WRONGTYPE Operation against ..."`).
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Ok,
    Simple(Cow<'static, str>),
    Error(Cow<'static, str>),
    /// A status line whose text is not UTF-8 (a script's `{ok=...}`); Redis's
    /// lines are binary-safe but for CR and LF.
    StatusBytes(Bytes),
    /// An error line whose text is not UTF-8 (a script's `{err=...}`, a
    /// client's bytes quoted back).
    ErrorBytes(Bytes),
    Int(i64),
    Bulk(Bytes),
    /// A null bulk string: RESP2 `$-1`, RESP3 `_`.
    Nil,
    /// A null array: RESP2 `*-1`, RESP3 `_`.
    NilArray,
    Array(Vec<Reply>),
    /// RESP3 map; RESP2 flattens it into an array of 2n elements.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 set; RESP2 array.
    Set(Vec<Reply>),
    /// Pairs (a sorted set's members with scores): RESP2 one flat array of 2n
    /// elements, RESP3 an array of n two-element arrays.
    Pairs(Vec<(Reply, Reply)>),
    /// RESP3 double; RESP2 bulk string in `%.17g`.
    Double(f64),
    /// A double already written as Redis writes it (GEOPOS's human long
    /// double): RESP3 double, RESP2 bulk string, of this text.
    DoubleText(String),
    /// RESP3 verbatim string (`=len\r\ntxt:...`); RESP2 bulk string.
    Verbatim(Bytes),
    /// A verbatim string of another format than `txt` (scripts return these).
    VerbatimAs([u8; 3], Bytes),
    /// RESP3 big number (`(digits`); RESP2 bulk string.
    BigNumber(String),
    /// RESP3 boolean; RESP2 integer 0/1.
    Bool(bool),
    /// RESP3 push (`>`: Pub/Sub frames); RESP2 array.
    Push(Vec<Reply>),
    /// Several replies in a row for one command (SUBSCRIBE a b answers one
    /// frame per channel).
    Frames(Vec<Reply>),
}

impl Reply {
    pub fn error(msg: impl Into<Cow<'static, str>>) -> Reply {
        Reply::Error(msg.into())
    }

    pub fn bulk(b: impl Into<Bytes>) -> Reply {
        Reply::Bulk(b.into())
    }

    pub fn bulk_str(s: &str) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
    }

    /// True for an out-of-band push (or frames that are all pushes): a Pub/Sub
    /// confirmation, sent even when the client turned replies off.
    pub fn is_push(&self) -> bool {
        match self {
            Reply::Push(_) => true,
            Reply::Frames(items) => !items.is_empty() && items.iter().all(|i| matches!(i, Reply::Push(_))),
            _ => false,
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_) | Reply::ErrorBytes(_))
    }

    /// An error line from bytes: the UTF-8 form when it is UTF-8.
    pub fn error_bytes(b: &[u8]) -> Reply {
        match std::str::from_utf8(b) {
            Ok(s) => Reply::Error(s.to_owned().into()),
            Err(_) => Reply::ErrorBytes(Bytes::copy_from_slice(b)),
        }
    }

    /// A status line from bytes: the UTF-8 form when it is UTF-8.
    pub fn status_bytes(b: &[u8]) -> Reply {
        match std::str::from_utf8(b) {
            Ok(s) => Reply::Simple(s.to_owned().into()),
            Err(_) => Reply::StatusBytes(Bytes::copy_from_slice(b)),
        }
    }

    /// The text of an error reply (lossy for a non-UTF-8 one), for statistics.
    pub fn error_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Reply::Error(e) => Some(Cow::Borrowed(e)),
            Reply::ErrorBytes(b) => Some(String::from_utf8_lossy(b)),
            _ => None,
        }
    }

    /// Encode for protocol version `resp` (2 or 3).
    pub fn encode(&self, resp: u8, out: &mut BytesMut) {
        match self {
            Reply::Ok => out.put_slice(b"+OK\r\n"),
            Reply::Simple(s) => line(out, b'+', s.as_bytes()),
            Reply::Error(s) => line(out, b'-', s.as_bytes()),
            Reply::StatusBytes(b) => line(out, b'+', b),
            Reply::ErrorBytes(b) => line(out, b'-', b),
            Reply::Int(i) => int_line(out, b':', *i),
            Reply::Bulk(b) => bulk(out, b),
            Reply::Nil => {
                if resp >= 3 {
                    out.put_slice(b"_\r\n")
                } else {
                    out.put_slice(b"$-1\r\n")
                }
            }
            Reply::NilArray => {
                if resp >= 3 {
                    out.put_slice(b"_\r\n")
                } else {
                    out.put_slice(b"*-1\r\n")
                }
            }
            Reply::Array(items) => {
                int_line(out, b'*', items.len() as i64);
                for r in items {
                    r.encode(resp, out);
                }
            }
            Reply::Set(items) => {
                int_line(out, if resp >= 3 { b'~' } else { b'*' }, items.len() as i64);
                for r in items {
                    r.encode(resp, out);
                }
            }
            Reply::Map(pairs) => {
                if resp >= 3 {
                    int_line(out, b'%', pairs.len() as i64);
                } else {
                    int_line(out, b'*', 2 * pairs.len() as i64);
                }
                for (k, v) in pairs {
                    k.encode(resp, out);
                    v.encode(resp, out);
                }
            }
            Reply::Pairs(pairs) => {
                int_line(out, b'*', (if resp >= 3 { 1 } else { 2 }) * pairs.len() as i64);
                for (k, v) in pairs {
                    if resp >= 3 {
                        out.put_slice(b"*2\r\n");
                    }
                    k.encode(resp, out);
                    v.encode(resp, out);
                }
            }
            Reply::Double(d) => {
                let s = fmt_double(*d);
                if resp >= 3 {
                    line(out, b',', s.as_bytes());
                } else {
                    bulk(out, s.as_bytes());
                }
            }
            Reply::DoubleText(t) => {
                if resp >= 3 {
                    line(out, b',', t.as_bytes());
                } else {
                    bulk(out, t.as_bytes());
                }
            }
            Reply::Verbatim(b) => verbatim(out, resp, b"txt", b),
            Reply::VerbatimAs(f, b) => verbatim(out, resp, f, b),
            Reply::BigNumber(n) => {
                if resp >= 3 {
                    line(out, b'(', n.as_bytes());
                } else {
                    bulk(out, n.as_bytes());
                }
            }
            Reply::Bool(v) => {
                if resp >= 3 {
                    out.put_slice(if *v { b"#t\r\n" } else { b"#f\r\n" });
                } else {
                    out.put_slice(if *v { b":1\r\n" } else { b":0\r\n" });
                }
            }
            Reply::Push(items) => {
                int_line(out, if resp >= 3 { b'>' } else { b'*' }, items.len() as i64);
                for r in items {
                    r.encode(resp, out);
                }
            }
            Reply::Frames(items) => {
                for r in items {
                    r.encode(resp, out);
                }
            }
        }
    }
}

fn verbatim(out: &mut BytesMut, resp: u8, format: &[u8; 3], b: &[u8]) {
    if resp >= 3 {
        int_line(out, b'=', b.len() as i64 + 4);
        out.put_slice(format);
        out.put_u8(b':');
        out.put_slice(b);
        out.put_slice(b"\r\n");
    } else {
        bulk(out, b);
    }
}

fn line(out: &mut BytesMut, prefix: u8, s: &[u8]) {
    out.reserve(s.len() + 3);
    out.put_u8(prefix);
    // A status or error line must not contain CR/LF (Redis replaces them with spaces).
    if memchr::memchr2(b'\r', b'\n', s).is_some() {
        out.extend(s.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }));
    } else {
        out.put_slice(s);
    }
    out.put_slice(b"\r\n");
}

fn int_line(out: &mut BytesMut, prefix: u8, i: i64) {
    let mut b = itoa::Buffer::new();
    let s = b.format(i);
    out.reserve(s.len() + 3);
    out.put_u8(prefix);
    out.put_slice(s.as_bytes());
    out.put_slice(b"\r\n");
}

/// Append a bulk string `$len\r\n<data>\r\n`.
pub fn bulk(out: &mut BytesMut, data: &[u8]) {
    int_line(out, b'$', data.len() as i64);
    out.reserve(data.len() + 2);
    out.put_slice(data);
    out.put_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(r: &Reply, resp: u8) -> String {
        let mut b = BytesMut::new();
        r.encode(resp, &mut b);
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn resp2_and_resp3_shapes() {
        assert_eq!(enc(&Reply::Nil, 2), "$-1\r\n");
        assert_eq!(enc(&Reply::Nil, 3), "_\r\n");
        assert_eq!(enc(&Reply::NilArray, 2), "*-1\r\n");
        let m = Reply::Map(vec![(Reply::bulk_str("a"), Reply::Int(1))]);
        assert_eq!(enc(&m, 2), "*2\r\n$1\r\na\r\n:1\r\n");
        assert_eq!(enc(&m, 3), "%1\r\n$1\r\na\r\n:1\r\n");
        assert_eq!(enc(&Reply::Double(1.5), 2), "$3\r\n1.5\r\n");
        assert_eq!(enc(&Reply::Double(f64::INFINITY), 3), ",inf\r\n");
        assert_eq!(enc(&Reply::Set(vec![Reply::Int(1)]), 3), "~1\r\n:1\r\n");
        assert_eq!(enc(&Reply::Verbatim(Bytes::from_static(b"hi")), 3), "=6\r\ntxt:hi\r\n");
        assert_eq!(enc(&Reply::error("ERR a\r\nb"), 2), "-ERR a  b\r\n");
        assert_eq!(enc(&Reply::Bool(true), 2), ":1\r\n");
        let p = Reply::Pairs(vec![(Reply::bulk_str("m"), Reply::Double(2.0))]);
        assert_eq!(enc(&p, 2), "*2\r\n$1\r\nm\r\n$1\r\n2\r\n");
        assert_eq!(enc(&p, 3), "*1\r\n*2\r\n$1\r\nm\r\n,2\r\n");
    }
}
