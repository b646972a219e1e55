//! Every on-disk key and value layout (DESIGN.md §3). All integers big-endian.
//!
//! | what | key | value |
//! |---|---|---|
//! | metadata | `[slot:2][key_len:4][key]` | `[flags:1][expire_ms:8]` + String value, or `[version:8][size:8]` (+ `[head:8][tail:8]` for List) |
//! | subkey | `[slot:2][key_len:4][key][version:8][subkey]` | type-specific |
//! | zset score | `[slot:2][key_len:4][key][version:8][score:8][member]` | empty |
//! | expire index | `[slot:2][expire_ms:8][key_len:4][key]` | empty |
//! | links | `[slot:2][key_len:4][owner key][version:8]` (a subkey prefix) | metadata key of the renamed key holding that namespace |
//! | raft log | `[region:4][index:8]` | prost `LogEntry` |
//! | raft state | `[region:4][kind:1]` | per kind |

/// Key types, as stored in the low bits of the metadata flags byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum KeyType {
    String = 1,
    Hash = 2,
    List = 3,
    Set = 4,
    ZSet = 5,
    Stream = 6,
}

impl KeyType {
    pub fn from_u8(v: u8) -> Option<KeyType> {
        Some(match v {
            1 => KeyType::String,
            2 => KeyType::Hash,
            3 => KeyType::List,
            4 => KeyType::Set,
            5 => KeyType::ZSet,
            6 => KeyType::Stream,
            _ => return None,
        })
    }

    /// The name TYPE replies with.
    pub fn name(self) -> &'static str {
        match self {
            KeyType::String => "string",
            KeyType::Hash => "hash",
            KeyType::List => "list",
            KeyType::Set => "set",
            KeyType::ZSet => "zset",
            KeyType::Stream => "stream",
        }
    }
}

/// Metadata key: `[slot:2][key_len:4][key]`.
/// The key of library `name` of `region` in `Cf::Functions`.
pub fn function_key(region: u32, name: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + name.len());
    k.extend_from_slice(&region.to_be_bytes());
    k.extend_from_slice(name);
    k
}

pub fn meta_key(slot: u16, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(6 + key.len());
    k.extend_from_slice(&slot.to_be_bytes());
    k.extend_from_slice(&(key.len() as u32).to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Split a metadata key into (slot, user key). `None` if malformed.
pub fn decode_meta_key(k: &[u8]) -> Option<(u16, &[u8])> {
    if k.len() < 6 {
        return None;
    }
    let slot = u16::from_be_bytes([k[0], k[1]]);
    let len = u32::from_be_bytes([k[2], k[3], k[4], k[5]]) as usize;
    if k.len() != 6 + len {
        return None;
    }
    Some((slot, &k[6..]))
}

/// First metadata key of a slot (inclusive lower bound of a slot range scan).
pub fn slot_lower_bound(slot: u16) -> Vec<u8> {
    slot.to_be_bytes().to_vec()
}

/// Exclusive upper bound of the slot range `[.., end_slot)`: `end_slot` may be 16384.
pub fn slot_upper_bound(end_slot: u32) -> Vec<u8> {
    if end_slot > u16::MAX as u32 {
        return vec![0xff, 0xff, 0xff];
    }
    (end_slot as u16).to_be_bytes().to_vec()
}

/// Subkey prefix of one version of a composite key: `[slot][len][key][version:8]`.
pub fn subkey_prefix(slot: u16, key: &[u8], version: u64) -> Vec<u8> {
    let mut k = meta_key(slot, key);
    k.extend_from_slice(&version.to_be_bytes());
    k
}

/// Subkey: `[slot][len][key][version:8][subkey]`.
pub fn subkey(slot: u16, key: &[u8], version: u64, sub: &[u8]) -> Vec<u8> {
    let mut k = subkey_prefix(slot, key, version);
    k.extend_from_slice(sub);
    k
}

/// ZSet score index key: `[slot][len][key][version:8][score:8][member]`.
pub fn zset_score_key(slot: u16, key: &[u8], version: u64, score: f64, member: &[u8]) -> Vec<u8> {
    let mut k = subkey_prefix(slot, key, version);
    k.extend_from_slice(&encode_score(score));
    k.extend_from_slice(member);
    k
}

/// Split any subkey or score key into (metadata key, version, rest). The compaction
/// filter uses this to find the live metadata of an entry.
pub fn split_subkey(k: &[u8]) -> Option<(&[u8], u64, &[u8])> {
    if k.len() < 6 {
        return None;
    }
    let len = u32::from_be_bytes([k[2], k[3], k[4], k[5]]) as usize;
    let mk_end = 6 + len;
    if k.len() < mk_end + 8 {
        return None;
    }
    let version = u64::from_be_bytes(k[mk_end..mk_end + 8].try_into().ok()?);
    Some((&k[..mk_end], version, &k[mk_end + 8..]))
}

/// Order-preserving encoding of a double: negative numbers flip every bit,
/// non-negative ones flip the sign bit. -0.0 is normalised to +0.0.
/// NaN must be rejected by the caller before it gets here.
pub fn encode_score(score: f64) -> [u8; 8] {
    debug_assert!(!score.is_nan(), "NaN scores are rejected before storage");
    let s = if score == 0.0 { 0.0f64 } else { score };
    let bits = s.to_bits();
    let enc = if bits & (1 << 63) != 0 { !bits } else { bits | (1 << 63) };
    enc.to_be_bytes()
}

pub fn decode_score(b: [u8; 8]) -> f64 {
    let enc = u64::from_be_bytes(b);
    let bits = if enc & (1 << 63) != 0 { enc & !(1 << 63) } else { !enc };
    f64::from_bits(bits)
}

/// TTL index entry `[slot:2][expire_ms:8][key_len:4][key]`: within a slot, keys in
/// expiry order, so active expiry finds exactly the keys due. Written by apply
/// whenever a key gets a TTL; an entry may outlive its key's TTL (overwrites don't
/// read the old value), so readers re-check the key's metadata.
pub fn expire_index_key(slot: u16, expire_ms: u64, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(14 + key.len());
    k.extend_from_slice(&slot.to_be_bytes());
    k.extend_from_slice(&expire_ms.to_be_bytes());
    k.extend_from_slice(&(key.len() as u32).to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Split an expire index key into (slot, expire_ms, user key).
pub fn decode_expire_index_key(k: &[u8]) -> Option<(u16, u64, &[u8])> {
    if k.len() < 14 {
        return None;
    }
    let slot = u16::from_be_bytes([k[0], k[1]]);
    let at = u64::from_be_bytes(k[2..10].try_into().ok()?);
    let len = u32::from_be_bytes(k[10..14].try_into().ok()?) as usize;
    if k.len() != 14 + len {
        return None;
    }
    Some((slot, at, &k[14..]))
}

/// Raft log key `[region:4][index:8]`.
pub fn log_key(region: u32, index: u64) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..4].copy_from_slice(&region.to_be_bytes());
    k[4..].copy_from_slice(&index.to_be_bytes());
    k
}

pub fn log_index_of(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.get(4..12)?.try_into().ok()?))
}

/// Raft state key kinds.
#[derive(Debug, Clone, Copy)]
#[repr(u8)]
pub enum StateKind {
    Vote = 1,
    Committed = 2,
    /// Applied log id and membership, written in the apply WriteBatch.
    Applied = 3,
    LastPurged = 4,
    Snapshot = 5,
    /// Followed by a log index and a command's position in its entry: that
    /// command (a script stopped by SHUTDOWN NOSAVE) applies as nothing.
    Voided = 6,
    /// Under region `u32::MAX`: the node's region count (u32, big-endian),
    /// fixed when its data directory is created.
    Layout = 7,
    /// A snapshot install under way (`storage::ingest`): the name of its staging
    /// directory (one length byte, then the name) and the applied state it
    /// installs. A restart that finds it finishes the install.
    Installing = 8,
}

pub fn state_key(region: u32, kind: StateKind) -> [u8; 5] {
    let mut k = [0u8; 5];
    k[..4].copy_from_slice(&region.to_be_bytes());
    k[4] = kind as u8;
    k
}

/// The marker of a voided command: [`StateKind::Voided`]'s key, then the entry's
/// log index and the command's position in it (big-endian, so in log order).
pub fn voided_key(region: u32, index: u64, pos: u32) -> [u8; 17] {
    let mut k = [0u8; 17];
    k[..5].copy_from_slice(&state_key(region, StateKind::Voided));
    k[5..13].copy_from_slice(&index.to_be_bytes());
    k[13..].copy_from_slice(&pos.to_be_bytes());
    k
}

/// The log index and position of a [`voided_key`].
pub fn decode_voided_key(k: &[u8]) -> Option<(u64, u32)> {
    let k: &[u8; 17] = k.try_into().ok()?;
    Some((u64::from_be_bytes(k[5..13].try_into().ok()?), u32::from_be_bytes(k[13..].try_into().ok()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_key_roundtrip_and_order() {
        let k = meta_key(42, b"hello");
        assert_eq!(decode_meta_key(&k), Some((42, &b"hello"[..])));
        assert!(meta_key(1, b"zzzz") < meta_key(2, b"a"), "slot orders first");
        assert!(slot_lower_bound(3) <= meta_key(3, b"") && meta_key(3, b"\xff\xff") < slot_upper_bound(4));
        assert!(meta_key(16383, &[0xff; 300]) < slot_upper_bound(16384));
        assert_eq!(decode_meta_key(&k[..5]), None);
    }

    #[test]
    fn expire_index_orders_by_slot_then_time() {
        let k = expire_index_key(9, 1_700_000_000_000, b"key");
        assert_eq!(decode_expire_index_key(&k), Some((9, 1_700_000_000_000, &b"key"[..])));
        assert!(expire_index_key(9, 5, b"zzz") < expire_index_key(9, 6, b"a"), "time orders before key");
        assert!(expire_index_key(9, u64::MAX, b"z") < expire_index_key(10, 0, b"a"), "slot orders first");
        assert!(slot_lower_bound(9) <= k && k < slot_upper_bound(10));
        assert_eq!(decode_expire_index_key(&k[..13]), None);
    }

    #[test]
    fn subkey_split() {
        let k = subkey(7, b"h", 99, b"field");
        let (mk, v, rest) = split_subkey(&k).unwrap();
        assert_eq!((mk, v, rest), (&meta_key(7, b"h")[..], 99, &b"field"[..]));
        let z = zset_score_key(7, b"z", 5, -1.5, b"m");
        let (_, v, rest) = split_subkey(&z).unwrap();
        assert_eq!(v, 5);
        assert_eq!(decode_score(rest[..8].try_into().unwrap()), -1.5);
        assert_eq!(&rest[8..], b"m");
    }

    #[test]
    fn score_encoding_sorts_like_numbers() {
        let mut vals = vec![
            f64::NEG_INFINITY,
            f64::MIN,
            -1e300,
            -2.5,
            -1.0,
            -f64::MIN_POSITIVE,
            -4.9e-324, // negative subnormal
            0.0,
            4.9e-324, // positive subnormal
            f64::MIN_POSITIVE,
            1.0,
            2.5,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        let enc: Vec<[u8; 8]> = vals.iter().map(|&v| encode_score(v)).collect();
        for w in enc.windows(2) {
            assert!(w[0] < w[1], "encoding must be strictly increasing");
        }
        for (&v, e) in vals.iter().zip(&enc) {
            assert_eq!(decode_score(*e).to_bits(), v.to_bits());
        }
        assert_eq!(encode_score(-0.0), encode_score(0.0), "-0.0 normalises to +0.0");
        assert_eq!(decode_score(encode_score(-0.0)).to_bits(), 0.0f64.to_bits());
        vals.reverse();
    }

    proptest::proptest! {
        #[test]
        fn score_order_matches_f64_order(a in proptest::num::f64::ANY, b in proptest::num::f64::ANY) {
            proptest::prop_assume!(!a.is_nan() && !b.is_nan());
            let (ea, eb) = (encode_score(a), encode_score(b));
            proptest::prop_assert_eq!(a.partial_cmp(&b).unwrap(), ea.cmp(&eb));
        }
    }
}
