//! Tests of the number formatting and parsing: `format_g` and `strtod`
//! against the C library's `snprintf` and `strtod`.

use super::*;
use std::ffi::{c_char, CString};

extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> std::ffi::c_int;
    fn strtod(s: *const c_char, end: *mut *mut c_char) -> f64;
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn libc_g(x: f64, prec: usize) -> String {
    let fmt = CString::new(format!("%.{prec}g")).unwrap();
    let mut buf = vec![0u8; 64];
    let n = unsafe { snprintf(buf.as_mut_ptr() as *mut c_char, buf.len(), fmt.as_ptr(), x) };
    buf.truncate(n as usize);
    String::from_utf8(buf).unwrap()
}

#[test]
fn format_g_matches_libc() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut values = vec![
        0.5,
        1.5,
        2.5,
        0.125,
        0.375,
        1e21,
        1e-5,
        123456.5,
        0.05,
        9.5,
        99.5,
        0.95,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        1e14,
        1e15,
        99999999999999.5,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for _ in 0..100_000 {
        let r = rng.next();
        values.push(match r % 4 {
            0 => f64::from_bits(rng.next()),
            1 => (rng.next() % 100_000) as f64 / [1.0, 4.0, 10.0, 1000.0, 1024.0][(r >> 8) as usize % 5],
            2 => (rng.next() as i64 as f64) * 10f64.powi((r >> 16) as i32 % 40 - 20),
            _ => ((rng.next() % 2_000_000) as f64 - 1_000_000.0) + 0.5,
        });
    }
    for (i, v) in values.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        for prec in [1 + i % 14, 14] {
            let mut out = Vec::new();
            format_g(&mut out, *v, prec);
            assert_eq!(String::from_utf8(out).unwrap(), libc_g(*v, prec), "{v:e} %.{prec}g");
        }
    }
}

#[test]
fn strtod_matches_libc() {
    let mut rng = Rng(0x1234_5678);
    let mut inputs: Vec<Vec<u8>> = [
        "0",
        "-0",
        "1.",
        ".5",
        "1e",
        "1e+",
        "0x",
        "0x1p",
        "0x1.fp+3",
        "0x.8",
        "0x1p-1074",
        "0x1p-1075",
        "0x1.00000000000008p0",
        "0x1.00000000000018p0",
        "0xffffffffffffffffffff",
        "0x1.fffffffffffff8p1023",
        "0x3p-1076",
        "0x1.80000000001p-1075",
        "inf",
        "INFINITY",
        "infinit",
        "nan(12_a)",
        "nan(",
        "-nan",
        "1e400",
        "2.4703282292062328e-324",
        "123456789012345678901234567890",
        "1e99999999999999999999",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let alphabet = b"0123456789.eE+-xXpPabcdefABCDEFinfatyINFATY()_ ";
    for _ in 0..100_000 {
        let mut s = Vec::new();
        if rng.next() % 3 == 0 {
            s.extend_from_slice(b"0x");
        }
        for _ in 0..1 + rng.next() % 12 {
            let r = rng.next();
            s.push(if r % 3 == 0 { b'0' + (r >> 8) as u8 % 10 } else { alphabet[(r >> 8) as usize % alphabet.len()] });
        }
        inputs.push(s);
    }
    for s in &inputs {
        let c = CString::new(s.clone()).unwrap();
        let mut end: *mut c_char = std::ptr::null_mut();
        let want = unsafe { strtod(c.as_ptr(), &mut end) };
        let want_end = end as usize - c.as_ptr() as usize;
        let (got, got_end) = super::strtod(s, 0);
        let same = got.to_bits() == want.to_bits()
            || (got.is_nan() && want.is_nan() && got.is_sign_negative() == want.is_sign_negative());
        assert!(
            same && got_end == want_end,
            "{:?}: libc {want:e}/{want_end}, ours {got:e}/{got_end}",
            String::from_utf8_lossy(s)
        );
    }
}
