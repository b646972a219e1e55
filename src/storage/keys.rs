//! Every on-disk key and value layout (DESIGN.md §3). All integers big-endian.
//!
//! | what | key | value |
//! |---|---|---|
//! | metadata | `[db][slot:2][key_len:4][key]` | `[flags:1][expire_ms:8]` + String value, or `[version:8][size:8]` (+ `[head:8][tail:8]` for List) |
//! | subkey | `[db][slot:2][key_len:4][key][version:8][subkey]` | type-specific |
//! | zset score | `[db][slot:2][key_len:4][key][version:8][score:8][member]` | empty |
//! | expire index | `[slot:2][expire_ms:8][db][key_len:4][key]` | empty |
//! | links | `[db][slot:2][key_len:4][owner key][version:8]` (a subkey prefix) | metadata key of the renamed key holding that namespace |
//! | raft log | `[region:4][index:8]` | prost `LogEntry` |
//! | raft state | `[region:4][kind:1]` | per kind |
//!
//! `[db]` is the database (SELECT's number, after SWAPDB's mapping: see
//! `types::dbs`): nothing for database 0, `[0xFF][db:2]` for any other. So
//! database 0's keys are laid out exactly as before databases existed (data
//! written then reads as database 0, no migration), each other database is
//! one contiguous range per column family (FLUSHDB is a range deletion, SCAN
//! walks only its own keys), and a slot's keys of database 0 are still the
//! range `[slot]..[slot + 1]` regions, snapshots and cluster mode (database 0
//! only) work by. A slot is below 0x4000, so a key never starts with 0xFF
//! otherwise. The expire index stays ordered by slot then time across every
//! database: active expiry walks one range per region.

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
    meta_key_in(0, slot, key)
}

/// The first byte of every key of a database other than 0 (a slot's first
/// byte is below 0x40).
pub const DB_TAG: u8 = 0xFF;

/// What opens the keys of database `db`: nothing for 0, `[0xFF][db:2]` else.
pub fn db_prefix(db: u16) -> Vec<u8> {
    if db == 0 {
        Vec::new()
    } else {
        let [a, b] = db.to_be_bytes();
        vec![DB_TAG, a, b]
    }
}

/// The database a key of the data column families belongs to, and where its
/// slot starts.
pub fn db_of(k: &[u8]) -> (u16, usize) {
    match k {
        [DB_TAG, a, b, ..] => (u16::from_be_bytes([*a, *b]), 3),
        _ => (0, 0),
    }
}

/// Metadata key of `key` in database `db`: `[db][slot:2][key_len:4][key]`.
pub fn meta_key_in(db: u16, slot: u16, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(9 + key.len());
    if db != 0 {
        k.push(DB_TAG);
        k.extend_from_slice(&db.to_be_bytes());
    }
    k.extend_from_slice(&slot.to_be_bytes());
    k.extend_from_slice(&(key.len() as u32).to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Split a metadata key into (slot, user key), whatever its database. `None`
/// if malformed.
pub fn decode_meta_key(k: &[u8]) -> Option<(u16, &[u8])> {
    decode_meta_key_in(k).map(|(_, slot, key)| (slot, key))
}

/// Split a metadata key into (database, slot, user key). `None` if malformed.
pub fn decode_meta_key_in(k: &[u8]) -> Option<(u16, u16, &[u8])> {
    let (db, at) = db_of(k);
    let k = &k[at..];
    if k.len() < 6 {
        return None;
    }
    let slot = u16::from_be_bytes([k[0], k[1]]);
    let len = u32::from_be_bytes([k[2], k[3], k[4], k[5]]) as usize;
    if k.len() != 6 + len {
        return None;
    }
    Some((db, slot, &k[6..]))
}

/// The same key in database `db` (a metadata key, or any key that starts with one).
pub fn in_db(k: &[u8], db: u16) -> Vec<u8> {
    let (_, at) = db_of(k);
    let mut v = db_prefix(db);
    v.extend_from_slice(&k[at..]);
    v
}

/// `[from, to)` of database `db`'s keys in slots `[slot_start, end_slot)`.
pub fn db_slot_range(db: u16, slot_start: u16, end_slot: u32) -> (Vec<u8>, Vec<u8>) {
    let mut lo = db_prefix(db);
    lo.extend_from_slice(&slot_lower_bound(slot_start));
    let mut hi = db_prefix(db);
    hi.extend_from_slice(&slot_upper_bound(end_slot));
    (lo, hi)
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
    let (_, at) = db_of(k);
    if k.len() < at + 6 {
        return None;
    }
    let len = u32::from_be_bytes([k[at + 2], k[at + 3], k[at + 4], k[at + 5]]) as usize;
    let mk_end = at + 6 + len;
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

/// TTL index entry `[slot:2][expire_ms:8][db][key_len:4][key]` of the key
/// whose metadata key is `mk`: within a slot, keys of every database in expiry
/// order, so active expiry finds exactly the keys due. Written by apply
/// whenever a key gets a TTL; an entry may outlive its key's TTL (overwrites
/// don't read the old value), so readers re-check the key's metadata.
pub fn expire_index_key(mk: &[u8], expire_ms: u64) -> Vec<u8> {
    let (db, at) = db_of(mk);
    let mut k = Vec::with_capacity(10 + mk.len());
    k.extend_from_slice(mk.get(at..at + 2).unwrap_or(&[0, 0]));
    k.extend_from_slice(&expire_ms.to_be_bytes());
    k.extend_from_slice(&db_prefix(db));
    k.extend_from_slice(mk.get(at + 2..).unwrap_or(&[]));
    k
}

/// Split an expire index key into (slot, expire_ms, the key's metadata key).
pub fn decode_expire_index_key(k: &[u8]) -> Option<(u16, u64, Vec<u8>)> {
    if k.len() < 10 {
        return None;
    }
    let slot = u16::from_be_bytes([k[0], k[1]]);
    let at = u64::from_be_bytes(k[2..10].try_into().ok()?);
    let (db, off) = db_of(&k[10..]);
    let rest = &k[10 + off..];
    if rest.len() < 4 || rest.len() != 4 + u32::from_be_bytes(rest[..4].try_into().ok()?) as usize {
        return None;
    }
    let mut mk = db_prefix(db);
    mk.extend_from_slice(&slot.to_be_bytes());
    mk.extend_from_slice(rest);
    Some((slot, at, mk))
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
    /// Under region `u32::MAX`: SWAPDB's mapping of logical to physical
    /// databases (`types::dbs`), absent while none was swapped.
    Databases = 9,
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
        let mk = meta_key(9, b"key");
        let k = expire_index_key(&mk, 1_700_000_000_000);
        assert_eq!(decode_expire_index_key(&k), Some((9, 1_700_000_000_000, mk.clone())));
        let before = [&[0u8, 9][..], &1_700_000_000_000u64.to_be_bytes(), &3u32.to_be_bytes(), b"key"].concat();
        assert_eq!(k, before, "database 0's entries are laid out as before databases");
        let at = |slot, ms, key: &[u8]| expire_index_key(&meta_key(slot, key), ms);
        assert!(at(9, 5, b"zzz") < at(9, 6, b"a"), "time orders before key");
        assert!(at(9, u64::MAX, b"z") < at(10, 0, b"a"), "slot orders first");
        assert!(slot_lower_bound(9) <= k && k < slot_upper_bound(10));
        assert_eq!(decode_expire_index_key(&k[..13]), None);
        let other = meta_key_in(3, 9, b"key");
        let k3 = expire_index_key(&other, 7);
        assert_eq!(decode_expire_index_key(&k3), Some((9, 7, other)));
        assert!(at(9, 6, b"a") < k3 && k3 < at(9, 8, b"a"), "every database in one slot's time order");
    }

    #[test]
    fn databases_are_ranges_and_database_0_is_unchanged() {
        let before = [&[0u8, 42][..], &5u32.to_be_bytes(), b"hello"].concat();
        assert_eq!(meta_key_in(0, 42, b"hello"), before, "database 0 keys are laid out as before databases");
        let k = meta_key_in(7, 42, b"hello");
        assert_eq!(decode_meta_key_in(&k), Some((7, 42, &b"hello"[..])));
        assert_eq!(decode_meta_key_in(&before), Some((0, 42, &b"hello"[..])));
        assert_eq!(in_db(&k, 0), before);
        assert_eq!(in_db(&before, 7), k);
        // Each database is one range per slot range, apart from the others.
        let (lo, hi) = db_slot_range(7, 0, 16384);
        assert!(lo <= k && k < hi);
        assert!(!(lo <= before && before < hi));
        let (lo0, hi0) = db_slot_range(0, 0, 16384);
        assert!(lo0 <= before && before < hi0 && !(lo0 <= k && k < hi0));
        assert!(meta_key_in(6, 16383, &[0xff; 9]) < meta_key_in(7, 0, b""));
        let sub = subkey_prefix(0, b"x", 1);
        let mut in7 = in_db(&sub, 7);
        in7.extend_from_slice(b"f");
        assert_eq!(split_subkey(&in7), Some((&meta_key_in(7, 0, b"x")[..], 1, &b"f"[..])));
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
