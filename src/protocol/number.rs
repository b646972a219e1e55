//! Number formatting exactly as Redis prints it (C `long double` via `ldouble.c`).

use std::os::raw::{c_char, c_int};

extern "C" {
    fn neokv_incrbyfloat(
        cur: *const c_char,
        curlen: usize,
        incr: *const c_char,
        incrlen: usize,
        out: *mut c_char,
        outlen: usize,
    ) -> c_int;
    fn neokv_fmt_g17(v: f64, out: *mut c_char, outlen: usize) -> c_int;
}

/// Why an INCRBYFLOAT could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatIncrError {
    /// The stored value is not a float.
    CurrentNotFloat,
    /// The increment is not a float.
    IncrNotFloat,
    /// The result would be NaN or infinite.
    NanOrInf,
}

/// `cur + incr` in long double, printed as Redis's INCRBYFLOAT does. `cur = None`
/// means the key is absent (0).
pub fn incr_by_float(cur: Option<&[u8]>, incr: &[u8]) -> Result<Vec<u8>, FloatIncrError> {
    let mut out = vec![0u8; 5 * 1024 + 64];
    let (cp, cl) = match cur {
        Some(c) => (c.as_ptr() as *const c_char, c.len()),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: all pointers are valid for the given lengths; the C side never writes past outlen.
    let n = unsafe {
        neokv_incrbyfloat(
            cp,
            cl,
            incr.as_ptr() as *const c_char,
            incr.len(),
            out.as_mut_ptr() as *mut c_char,
            out.len(),
        )
    };
    match n {
        -1 => Err(FloatIncrError::CurrentNotFloat),
        -2 => Err(FloatIncrError::IncrNotFloat),
        -3 | -4 => Err(FloatIncrError::NanOrInf),
        n => {
            out.truncate(n as usize);
            Ok(out)
        }
    }
}

/// A double as Redis 7.0 prints it: "%.17g", with "inf"/"-inf".
pub fn fmt_double(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let mut out = [0u8; 64];
    // SAFETY: buffer is 64 bytes; %.17g of a double is at most ~25 chars.
    let n = unsafe { neokv_fmt_g17(v, out.as_mut_ptr() as *mut c_char, out.len()) };
    String::from_utf8_lossy(&out[..n.max(0) as usize]).into_owned()
}

/// A double as C's `%.17g` prints it (Lua numbers passed to `redis.call`).
pub fn fmt_g17(v: f64) -> String {
    let mut out = [0u8; 64];
    // SAFETY: buffer is 64 bytes; %.17g of a double is at most ~25 chars.
    let n = unsafe { neokv_fmt_g17(v, out.as_mut_ptr() as *mut c_char, out.len()) };
    String::from_utf8_lossy(&out[..n.max(0) as usize]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incrbyfloat_matches_redis_long_double() {
        let s = |c: Option<&str>, i: &str| {
            incr_by_float(c.map(|c| c.as_bytes()), i.as_bytes()).map(|v| String::from_utf8(v).unwrap())
        };
        assert_eq!(s(Some("10.50"), "0.1").unwrap(), "10.6");
        assert_eq!(s(Some("0.1"), "0.2").unwrap(), "0.3");
        assert_eq!(s(None, "5.0e3").unwrap(), "5000");
        assert_eq!(s(Some("-0"), "0").unwrap(), "0");
        assert_eq!(s(Some("abc"), "1"), Err(FloatIncrError::CurrentNotFloat));
        assert_eq!(s(Some("1"), " 1"), Err(FloatIncrError::IncrNotFloat));
        assert_eq!(s(Some("1"), "nan"), Err(FloatIncrError::IncrNotFloat));
        assert_eq!(s(Some("1"), "inf"), Err(FloatIncrError::NanOrInf));
    }

    #[test]
    fn g17() {
        assert_eq!(fmt_double(1.5), "1.5");
        assert_eq!(fmt_double(0.1), "0.10000000000000001");
        assert_eq!(fmt_double(f64::NEG_INFINITY), "-inf");
    }
}
