//! Argument parsing: a cursor over a request's arguments (mini-redis's `Parse`),
//! and number parsers with exactly Redis's acceptance rules.

use bytes::Bytes;

/// A bad argument. `Display` is Redis's reply text (without the leading '-').
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("ERR syntax error")]
    Syntax,
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    #[error("ERR value is not a valid float")]
    NotFloat,
}

/// Walks a request's arguments (after the command name). Handlers take what they
/// need and call [`ArgCursor::finish`] so leftovers are a syntax error.
pub struct ArgCursor<'a> {
    args: &'a [Bytes],
    pos: usize,
}

impl<'a> ArgCursor<'a> {
    /// `args` excludes the command name.
    pub fn new(args: &'a [Bytes]) -> Self {
        ArgCursor { args, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.args.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn peek(&self) -> Option<&'a Bytes> {
        self.args.get(self.pos)
    }

    /// The next argument, or a syntax error if there is none.
    #[allow(clippy::should_implement_trait)] // returns Result, not Option: a missing argument is an error
    pub fn next(&mut self) -> Result<&'a Bytes, ArgError> {
        let a = self.args.get(self.pos).ok_or(ArgError::Syntax)?;
        self.pos += 1;
        Ok(a)
    }

    pub fn next_i64(&mut self) -> Result<i64, ArgError> {
        parse_i64(self.next()?).ok_or(ArgError::NotInteger)
    }

    /// Case-insensitive match of the next argument against `word`; consumes it on match.
    pub fn eat(&mut self, word: &str) -> bool {
        match self.peek() {
            Some(a) if a.eq_ignore_ascii_case(word.as_bytes()) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    pub fn finish(&self) -> Result<(), ArgError> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(ArgError::Syntax)
        }
    }
}

/// What C's `strtol` family skips and reads before the digits: blanks, then
/// one sign. Whether it was a minus, and the rest.
pub fn c_blank_sign(s: &[u8]) -> (bool, &[u8]) {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    match s.get(i) {
        Some(b'-') => (true, &s[i + 1..]),
        Some(b'+') => (false, &s[i + 1..]),
        _ => (false, &s[i..]),
    }
}

/// Redis `string2ll`: optional '-', no '+', no leading zeros, no spaces, fits i64.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = if s[0] == b'-' { (true, &s[1..]) } else { (false, s) };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > (i64::MAX as u64) + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else if v > i64::MAX as u64 {
        None
    } else {
        Some(v as i64)
    }
}

extern "C" {
    fn neokv_string2d(s: *const std::os::raw::c_char, len: usize, out: *mut f64) -> std::os::raw::c_int;
    fn neokv_strtod_bound(s: *const std::os::raw::c_char, len: usize, out: *mut f64) -> std::os::raw::c_int;
    fn neokv_strtod_sort(s: *const std::os::raw::c_char, len: usize, out: *mut f64) -> std::os::raw::c_int;
    fn neokv_strcoll(
        a: *const std::os::raw::c_char,
        alen: usize,
        b: *const std::os::raw::c_char,
        blen: usize,
    ) -> std::os::raw::c_int;
    fn neokv_timeout_ms(s: *const std::os::raw::c_char, len: usize, out: *mut i64) -> std::os::raw::c_int;
}

/// Redis `string2d` (scores, weights, increments): C `strtod` over the whole
/// string, so hex (`0x10`), `inf` and `infinity` are numbers; a leading space,
/// NaN, and overflow (`1e400`) or underflow to zero are not.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let mut v = 0.0;
    // SAFETY: the C side reads `len` bytes of `s` and writes one f64.
    (unsafe { neokv_string2d(s.as_ptr().cast(), s.len(), &mut v) } == 1).then_some(v)
}

/// A score range bound's number as Redis's `zslParseRange` reads it: plain
/// `strtod` to the end of the string (so a leading space, the empty string as
/// 0 and `1e400` as infinity are accepted), NaN refused.
pub fn parse_f64_bound(s: &[u8]) -> Option<f64> {
    let mut v = 0.0;
    // SAFETY: as in `parse_f64`.
    (unsafe { neokv_strtod_bound(s.as_ptr().cast(), s.len(), &mut v) } == 1).then_some(v)
}

/// A SORT weight as Redis's SORT reads it: C `strtod` of the value up to its
/// first NUL byte, which must reach it; a leading space and the empty string
/// (0) are accepted, overflow, underflow and NaN are not.
pub fn parse_f64_sort(s: &[u8]) -> Option<f64> {
    let mut v = 0.0;
    // SAFETY: as in `parse_f64`.
    (unsafe { neokv_strtod_sort(s.as_ptr().cast(), s.len(), &mut v) } == 1).then_some(v)
}

/// C `strcoll` of two values as C strings (each up to its first NUL byte)
/// under the environment's `LC_COLLATE` (made once; the process's own locale
/// stays "C"), as Redis's SORT ALPHA compares on the server it runs on.
pub fn strcoll(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // SAFETY: the C side reads `alen` bytes of `a` and `blen` of `b`.
    let r = unsafe { neokv_strcoll(a.as_ptr().cast(), a.len(), b.as_ptr().cast(), b.len()) };
    r.cmp(&0)
}

/// A blocking timeout in seconds as Redis reads it (a C `long double`), in
/// milliseconds, truncated; `None` if it is not a number. Values beyond what
/// milliseconds hold come back as `i64::MIN`, as on Redis's x86-64 builds.
pub fn parse_timeout_ms(s: &[u8]) -> Option<i64> {
    let mut v = 0i64;
    // SAFETY: as in `parse_f64`.
    (unsafe { neokv_timeout_ms(s.as_ptr().cast(), s.len(), &mut v) } == 1).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string2ll_rules() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [&b""[..], b"-", b"-0", b"01", b"+1", b" 1", b"1 ", b"9223372036854775808", b"1.0", b"abc"] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn sort_weights_read_as_strtod_does() {
        assert_eq!(parse_f64_sort(b"1.5"), Some(1.5));
        assert_eq!(parse_f64_sort(b""), Some(0.0), "the empty string is 0");
        assert_eq!(parse_f64_sort(b" 2"), Some(2.0), "leading space");
        assert_eq!(parse_f64_sort(b"3\0junk"), Some(3.0), "ends at a NUL byte");
        assert_eq!(parse_f64_sort(b"inf"), Some(f64::INFINITY));
        for bad in [&b"nan"[..], b"1e400", b"1e-400", b"2 ", b"abc"] {
            assert_eq!(parse_f64_sort(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(strcoll(b"a", b"b"), std::cmp::Ordering::Less);
        assert_eq!(strcoll(b"a\0z", b"a\0b"), std::cmp::Ordering::Equal, "C strings end at NUL");
    }

    #[test]
    fn string2d_rules_and_nan_rejected() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"0x10"), Some(16.0), "strtod reads hex");
        assert_eq!(parse_f64(b"Infinity"), Some(f64::INFINITY));
        for bad in [&b"nan"[..], b"NaN", b"-nan", b"", b" 1", b"1x", b"inf1", b"1e400", b"-1e400", b"1e-400"] {
            assert_eq!(parse_f64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn range_bounds_and_timeouts_read_as_redis_reads_them() {
        assert_eq!(parse_f64_bound(b""), Some(0.0));
        assert_eq!(parse_f64_bound(b" 1"), Some(1.0));
        assert_eq!(parse_f64_bound(b"1e400"), Some(f64::INFINITY));
        assert_eq!(parse_f64_bound(b"nan"), None);
        assert_eq!(parse_f64_bound(b"1 "), None);
        assert_eq!(parse_timeout_ms(b"1.5"), Some(1500));
        assert_eq!(parse_timeout_ms(b"1e400"), Some(i64::MIN));
        assert_eq!(parse_timeout_ms(b"-0.0001"), Some(0));
        assert_eq!(parse_timeout_ms(b"0.0001"), Some(1), "a positive timeout under 1 ms is 1 ms, not forever");
        assert_eq!(parse_timeout_ms(b"1e-400"), Some(1));
        assert_eq!(parse_timeout_ms(b"0"), Some(0));
        assert_eq!(parse_timeout_ms(b"abc"), None);
    }

    #[test]
    fn cursor_finish_rejects_leftovers() {
        let args = [Bytes::from_static(b"NX"), Bytes::from_static(b"extra")];
        let mut c = ArgCursor::new(&args);
        assert!(c.eat("nx"));
        assert_eq!(c.finish(), Err(ArgError::Syntax));
        assert_eq!(c.next().unwrap(), "extra");
        assert!(c.finish().is_ok());
    }
}
