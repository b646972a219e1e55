//! Number formatting and parsing with the C library's semantics (glibc, C
//! locale): `%.<prec>g` for the numbers `cjson.encode` writes, and `strtod`
//! (decimal, hexadecimal, `inf`/`nan`) for the numbers `cjson.decode` reads.

/// Append `num` formatted like C's `printf("%.<prec>g", num)` (glibc).
pub(super) fn format_g(out: &mut Vec<u8>, num: f64, prec: usize) {
    let prec = prec.max(1);
    if num.is_nan() {
        out.extend_from_slice(if num.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if num.is_sign_negative() {
        out.push(b'-');
    }
    let a = num.abs();
    if a.is_infinite() {
        out.extend_from_slice(b"inf");
        return;
    }
    if a == 0.0 {
        out.push(b'0');
        return;
    }
    // Correctly rounded scientific form with `prec` significant digits.
    let sci = format!("{:.*e}", prec - 1, a);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let digits: Vec<u8> = mantissa.bytes().filter(|b| b.is_ascii_digit()).collect();
    if exp < -4 || exp >= prec as i32 {
        out.push(digits.first().copied().unwrap_or(b'0'));
        let frac = strip_zeros(&digits[1..]);
        if !frac.is_empty() {
            out.push(b'.');
            out.extend_from_slice(frac);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(e.to_string().as_bytes());
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        out.extend_from_slice(&digits[..int_len]);
        let frac = strip_zeros(&digits[int_len..]);
        if !frac.is_empty() {
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    } else {
        out.extend_from_slice(b"0.");
        for _ in 0..(-exp - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(strip_zeros(&digits));
    }
}

fn strip_zeros(d: &[u8]) -> &[u8] {
    let mut end = d.len();
    while end > 0 && d[end - 1] == b'0' {
        end -= 1;
    }
    &d[..end]
}

/// Byte `i` of a NUL-terminated view of `d` (0 past the end).
#[inline]
pub(super) fn byte_at(d: &[u8], i: usize) -> u8 {
    d.get(i).copied().unwrap_or(0)
}

/// glibc `strtod` in the C locale, reading `d` from `start` as a
/// NUL-terminated string.  Returns the value and the end position; the end
/// equals `start` when no number could be read.
pub(super) fn strtod(d: &[u8], start: usize) -> (f64, usize) {
    let at = |i: usize| byte_at(d, i);
    let lower = |i: usize| byte_at(d, i).to_ascii_lowercase();
    let mut p = start;
    while matches!(at(p), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        p += 1;
    }
    let mut neg = false;
    if at(p) == b'+' || at(p) == b'-' {
        neg = at(p) == b'-';
        p += 1;
    }
    let sign = |v: f64| if neg { -v } else { v };
    let matches_ci = |pos: usize, word: &[u8]| word.iter().enumerate().all(|(k, &c)| lower(pos + k) == c);
    if matches_ci(p, b"inf") {
        p += 3;
        if matches_ci(p, b"inity") {
            p += 5;
        }
        return (sign(f64::INFINITY), p);
    }
    if matches_ci(p, b"nan") {
        p += 3;
        if at(p) == b'(' {
            let mut q = p + 1;
            while at(q).is_ascii_alphanumeric() || at(q) == b'_' {
                q += 1;
            }
            if at(q) == b')' {
                p = q + 1;
            }
        }
        return (sign(f64::NAN), p);
    }
    if at(p) == b'0' && lower(p + 1) == b'x' {
        return match parse_hex_float(d, p + 2) {
            Some((v, end)) => (sign(v), end),
            None => (sign(0.0), p + 1),
        };
    }
    // Decimal: digits [. digits] [e [sign] digits]
    let int_start = p;
    while at(p).is_ascii_digit() {
        p += 1;
    }
    let int_digits = &d[int_start.min(d.len())..p.min(d.len())];
    let mut frac_digits: &[u8] = &[];
    if at(p) == b'.' {
        let q = p + 1;
        let mut r = q;
        while at(r).is_ascii_digit() {
            r += 1;
        }
        if !int_digits.is_empty() || r > q {
            frac_digits = &d[q.min(d.len())..r.min(d.len())];
            p = r;
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return (0.0, start);
    }
    let mut exp: i64 = 0;
    if lower(p) == b'e' {
        let mut q = p + 1;
        let mut eneg = false;
        if at(q) == b'+' || at(q) == b'-' {
            eneg = at(q) == b'-';
            q += 1;
        }
        let es = q;
        while at(q).is_ascii_digit() {
            exp = (exp * 10 + (at(q) - b'0') as i64).min(1_000_000_000);
            q += 1;
        }
        if q > es {
            if eneg {
                exp = -exp;
            }
            p = q;
        } else {
            exp = 0;
        }
    }
    let mut text = String::with_capacity(int_digits.len() + frac_digits.len() + 16);
    if int_digits.is_empty() {
        text.push('0');
    } else {
        text.push_str(std::str::from_utf8(int_digits).unwrap_or("0"));
    }
    if !frac_digits.is_empty() {
        text.push('.');
        text.push_str(std::str::from_utf8(frac_digits).unwrap_or("0"));
    }
    text.push('e');
    text.push_str(&exp.to_string());
    let v = text.parse::<f64>().unwrap_or(0.0);
    (sign(v), p)
}

fn hex_value(c: u8) -> Option<u64> {
    (c as char).to_digit(16).map(|v| v as u64)
}

/// The part of a hexadecimal float after `0x`; `None` when no hex digit
/// follows (strtod then reads just the `0`).
fn parse_hex_float(d: &[u8], start: usize) -> Option<(f64, usize)> {
    let at = |i: usize| byte_at(d, i);
    let mut q = start;
    let mut mant: u64 = 0;
    let mut exp2: i64 = 0;
    let mut sticky = false;
    let mut any = false;
    let mut add = |digit: u64, frac: bool, mant: &mut u64, exp2: &mut i64| {
        if *mant < (1u64 << 60) {
            *mant = *mant * 16 + digit;
            if frac {
                *exp2 -= 4;
            }
        } else {
            if digit != 0 {
                sticky = true;
            }
            if !frac {
                *exp2 += 4;
            }
        }
    };
    while let Some(v) = hex_value(at(q)) {
        any = true;
        add(v, false, &mut mant, &mut exp2);
        q += 1;
    }
    if at(q) == b'.' {
        let mut r = q + 1;
        let mut frac_any = false;
        while let Some(v) = hex_value(at(r)) {
            frac_any = true;
            add(v, true, &mut mant, &mut exp2);
            r += 1;
        }
        if any || frac_any {
            any = true;
            q = r;
        }
    }
    if !any {
        return None;
    }
    if at(q) == b'p' || at(q) == b'P' {
        let mut r = q + 1;
        let mut neg = false;
        if at(r) == b'+' || at(r) == b'-' {
            neg = at(r) == b'-';
            r += 1;
        }
        let es = r;
        let mut e: i64 = 0;
        while at(r).is_ascii_digit() {
            e = (e * 10 + (at(r) - b'0') as i64).min(1_000_000_000);
            r += 1;
        }
        if r > es {
            exp2 += if neg { -e } else { e };
            q = r;
        }
    }
    Some((compose_f64(mant, sticky, exp2), q))
}

/// The double nearest to `(mant + tiny) * 2^exp` (ties to even), where
/// `sticky` says whether non-zero bits were dropped below `mant`.
fn compose_f64(mant: u64, sticky: bool, exp: i64) -> f64 {
    if mant == 0 {
        return 0.0;
    }
    let top = 63 - mant.leading_zeros() as i64;
    let mut msb_exp = top + exp;
    if msb_exp > 1023 {
        return f64::INFINITY;
    }
    let lsb_exp = if msb_exp >= -1022 { msb_exp - 52 } else { -1074 };
    let shift = lsb_exp - exp;
    let m = mant as u128;
    let mut kept: u128 = if shift <= 0 {
        m << ((-shift) as u32)
    } else if shift >= 127 {
        0
    } else {
        let kept = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && (sticky || kept & 1 == 1)) {
            kept + 1
        } else {
            kept
        }
    };
    if msb_exp >= -1022 {
        if kept == 1u128 << 53 {
            kept >>= 1;
            msb_exp += 1;
            if msb_exp > 1023 {
                return f64::INFINITY;
            }
        }
        let bits = (((msb_exp + 1023) as u64) << 52) | ((kept as u64) & ((1u64 << 52) - 1));
        f64::from_bits(bits)
    } else {
        // Subnormal (a carry into bit 52 yields the smallest normal).
        f64::from_bits(kept as u64)
    }
}

#[cfg(test)]
#[path = "number_tests.rs"]
mod tests;
