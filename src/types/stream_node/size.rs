//! Listpack byte sizes: of each element as `lpAppend` encodes it, and of a
//! stream entry in a node.

use super::Sid;
use crate::protocol::cursor::parse_i64;
use crate::protocol::rdb_value;

/// Entry flags (`STREAM_ITEM_FLAG_*`).
const FLAG_SAMEFIELDS: i64 = 2;

/// Bytes of the backlen that follows an element whose encoding takes `l` bytes.
fn backlen_len(l: u64) -> u64 {
    rdb_value::backlen_size(l) as u64
}

/// Encoded bytes of an integer element (7-bit uint, 13/16/24/32/64-bit int).
fn int_enc_len(v: i64) -> u64 {
    rdb_value::int_size(v) as u64
}

/// Listpack bytes of an integer element, backlen included.
pub(super) fn int_elem(v: i64) -> u64 {
    let l = int_enc_len(v);
    l + backlen_len(l)
}

/// `lpStringToInt64`: Redis's `string2ll` rules ("0", or an optional '-' then
/// a digit 1-9 and more digits, within i64). Anything else stays a string.
fn lp_string_to_i64(s: &[u8]) -> Option<i64> {
    parse_i64(s)
}

/// Listpack bytes of a string element as `lpAppend` stores it (as an integer
/// when it reads as one), backlen included.
pub(super) fn str_elem(s: &[u8]) -> u64 {
    if let Some(v) = lp_string_to_i64(s) {
        return int_elem(v);
    }
    let n = s.len() as u64;
    let l = match n {
        0..=63 => 1 + n,
        64..=4095 => 2 + n,
        _ => 5 + n,
    };
    l + backlen_len(l)
}

/// Bytes one entry takes in a node whose master id is `master`.
pub(super) fn entry_len(master: Sid, same_fields: bool, id: Sid, fv: &[(&[u8], &[u8])]) -> u64 {
    let n = fv.len() as u64;
    // The flags (0 or SAMEFIELDS, later | DELETED) are all one-byte integers.
    let mut b = int_elem(FLAG_SAMEFIELDS);
    b += int_elem(id.ms.wrapping_sub(master.ms) as i64);
    b += int_elem(id.seq.wrapping_sub(master.seq) as i64);
    let mut lp_count = n + 3;
    if !same_fields {
        b += int_elem(n as i64);
        lp_count += n + 1;
    }
    for (f, v) in fv {
        if !same_fields {
            b += str_elem(f);
        }
        b += str_elem(v);
    }
    b + int_elem(lp_count as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_to_int_rules() {
        for (s, v) in [
            ("0", Some(0)),
            ("12", Some(12)),
            ("-5", Some(-5)),
            ("007", None),
            ("-0", None),
            ("", None),
            ("-", None),
            ("+1", None),
            (" 1", None),
            ("1e3", None),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("00000000000000000000001", None),
        ] {
            assert_eq!(lp_string_to_i64(s.as_bytes()), v, "{s:?}");
        }
    }

    #[test]
    fn element_sizes() {
        assert_eq!(str_elem(b""), 2);
        assert_eq!(str_elem(b"127"), 2);
        assert_eq!(str_elem(b"128"), 3);
        assert_eq!(str_elem(b"-4096"), 3);
        assert_eq!(str_elem(b"-4097"), 4);
        assert_eq!(str_elem(b"2147483648"), 10);
        assert_eq!(str_elem(&[b'x'; 63]), 65);
        assert_eq!(str_elem(&[b'x'; 64]), 67);
        // 2+126 = 128 bytes of encoding take a 2-byte backlen.
        assert_eq!(str_elem(&[b'x'; 125]), 128);
        assert_eq!(str_elem(&[b'x'; 126]), 130);
        assert_eq!(str_elem(&[b'x'; 4096]), 4101 + 2);
    }
}
