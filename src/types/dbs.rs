//! Databases: SELECT's numbers, and the mapping SWAPDB changes.
//!
//! A key is stored under a *physical* database (`storage::keys`, `[db]`); a
//! client names a *logical* one (SELECT, MOVE, COPY ... DB). They are the same
//! until a SWAPDB, which swaps two logical databases' physical ones: O(1), as
//! in Redis, whatever the databases hold. The log carries logical databases
//! (apply maps them, so a write proposed before a SWAPDB and applied after it
//! lands where Redis would put it); readers map at read time; the mapping is
//! stored with the apply batch of the SWAPDB (raft state, `StateKind::Databases`,
//! node-wide: SWAPDB is standalone only, one cross-region write).
//!
//! Blocked clients and WATCH are filed under the logical database's key (as
//! Redis files them under the database's number), so a SWAPDB does not move
//! them: writes are mapped back ([`Dbs::logical_mk`]).

use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use crate::storage::keys::{db_of, in_db, state_key, StateKind};
use crate::storage::{Cf, Storage};

/// Redis's default `databases`.
pub const DEFAULT_DATABASES: usize = 16;

/// The most databases a server may have (a database number is 16 bits on disk).
pub const MAX_DATABASES: usize = 1 << 16;

/// See the module doc.
pub struct Dbs {
    count: usize,
    /// True while no SWAPDB is in effect: physical == logical.
    identity: AtomicBool,
    /// logical -> physical, and back: a permutation (at least `count` long).
    /// Each entry is read on its own (a lookup is one load); SWAPDB publishes
    /// a new mapping between two apply batches, when no apply runs.
    forward: Vec<AtomicU16>,
    back: Vec<AtomicU16>,
}

/// Where the mapping is stored.
pub fn map_key() -> [u8; 5] {
    state_key(u32::MAX, StateKind::Databases)
}

/// A mapping as stored: each logical database's physical one, big-endian.
pub fn encode(map: &[u16]) -> Vec<u8> {
    map.iter().flat_map(|p| p.to_be_bytes()).collect()
}

/// A stored mapping, if it is a permutation (a damaged record would lose
/// databases).
pub fn decode(b: &[u8]) -> Option<Vec<u16>> {
    if b.len() % 2 != 0 {
        return None;
    }
    let map: Vec<u16> = b.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    let mut seen = vec![false; map.len()];
    for &p in &map {
        match seen.get_mut(p as usize) {
            Some(s) if !*s => *s = true,
            _ => return None,
        }
    }
    Some(map)
}

impl Dbs {
    /// `count` databases, none swapped.
    pub fn new(count: usize) -> Dbs {
        Dbs::with_map(count, Vec::new())
    }

    fn with_map(count: usize, stored: Vec<u16>) -> Dbs {
        let count = count.clamp(1, MAX_DATABASES);
        let mut map = stored;
        while map.len() < count {
            map.push(map.len() as u16);
        }
        let dbs = Dbs {
            count,
            identity: AtomicBool::new(true),
            forward: map.iter().map(|_| AtomicU16::new(0)).collect(),
            back: map.iter().map(|_| AtomicU16::new(0)).collect(),
        };
        dbs.publish(&map);
        dbs
    }

    /// `count` databases with the mapping `storage` holds. A mapping stored
    /// under a bigger `databases` keeps its length (see `server`: a data
    /// directory with keys past `count` is refused).
    pub fn load(storage: &Storage, count: usize) -> Result<Dbs, String> {
        let stored = match storage.get(Cf::RaftState, &map_key()).map_err(|e| e.to_string())? {
            Some(b) => decode(&b).ok_or("the stored mapping of databases (SWAPDB) is damaged")?,
            None => Vec::new(),
        };
        Ok(Dbs::with_map(count, stored))
    }

    /// The number of databases (`databases`).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The physical database of logical `db`.
    pub fn physical(&self, db: u16) -> u16 {
        if self.identity.load(Ordering::Acquire) {
            return db;
        }
        self.forward.get(db as usize).map_or(db, |p| p.load(Ordering::Acquire))
    }

    /// The logical database whose data physical `db` holds.
    pub fn logical(&self, db: u16) -> u16 {
        if self.identity.load(Ordering::Acquire) {
            return db;
        }
        self.back.get(db as usize).map_or(db, |l| l.load(Ordering::Acquire))
    }

    /// A metadata key of physical storage as its logical database files it
    /// (`None`: the same).
    pub fn logical_mk(&self, mk: &[u8]) -> Option<Vec<u8>> {
        if self.identity.load(Ordering::Acquire) {
            return None;
        }
        let (p, _) = db_of(mk);
        let l = self.logical(p);
        (l != p).then(|| in_db(mk, l))
    }

    /// True while no SWAPDB is in effect.
    pub fn is_identity(&self) -> bool {
        self.identity.load(Ordering::Acquire)
    }

    /// The physical databases that may hold keys (`databases`, or more if a
    /// mapping stored under a bigger `databases` names them).
    pub fn stored_len(&self) -> usize {
        self.forward.len()
    }

    /// The mapping now, logical -> physical.
    pub fn map(&self) -> Vec<u16> {
        self.forward.iter().map(|p| p.load(Ordering::Acquire)).collect()
    }

    /// Make `map` (a permutation as long as this one, from a SWAPDB's apply
    /// batch once it is stored) the mapping.
    pub fn publish(&self, map: &[u16]) {
        let identity = map.iter().enumerate().all(|(i, &p)| i == p as usize);
        // Readers that still see `identity` take logical for physical: the
        // old mapping's answer until the flag turns.
        self.identity.store(false, Ordering::Release);
        for (l, &p) in map.iter().enumerate() {
            if let (Some(f), Some(b)) = (self.forward.get(l), self.back.get(p as usize)) {
                f.store(p, Ordering::Release);
                b.store(l as u16, Ordering::Release);
            }
        }
        self.identity.store(identity, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Reply;
    use crate::storage::keys::meta_key_in;

    /// Data written before databases existed, laid out byte by byte as that
    /// version did (`[slot:2][len:4][key]`, subkeys under it, the expire index
    /// `[slot:2][at:8][len:4][key]`), reads as database 0 and only there, and
    /// its expiry and deletion work as before: no migration.
    #[test]
    fn data_written_before_databases_reads_as_database_0() {
        use crate::pb::{self, write_cmd::Op};
        use crate::storage::keys::KeyType;
        use crate::storage::meta::{composite_payload, encode};
        use crate::storage::{Batch, Storage, StorageOptions};
        use crate::types::{coll, keyspace, write, ApplyCtx, Reader, Source};

        let old_key = |key: &[u8]| {
            let slot = crate::cluster::key_slot(key);
            [&slot.to_be_bytes()[..], &(key.len() as u32).to_be_bytes(), key].concat()
        };
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
        let mut b = Batch::new();
        b.put(Cf::Metadata, old_key(b"str"), encode(KeyType::String, 0, b"old value"));
        b.put(Cf::Metadata, old_key(b"h"), encode(KeyType::Hash, 0, &composite_payload(7, 1)));
        b.put(Cf::Subkey, [old_key(b"h"), 7u64.to_be_bytes().to_vec(), b"f".to_vec()].concat(), b"fv".to_vec());
        b.put(Cf::Metadata, old_key(b"t"), encode(KeyType::String, 5_000, b"ttl"));
        let slot = crate::cluster::key_slot(b"t");
        let index = [&slot.to_be_bytes()[..], &5_000u64.to_be_bytes(), &1u32.to_be_bytes(), b"t"].concat();
        b.put(Cf::ExpireIndex, index, Vec::new());
        s.write(b, true).unwrap();

        let r0 = Reader::at(&s, 1_000);
        assert_eq!(r0.meta(b"str").unwrap().map(|m| m.payload), Some(bytes::Bytes::from_static(b"old value")));
        let h = coll::find(&r0, b"h", KeyType::Hash).unwrap().unwrap().expect("the hash");
        assert_eq!(r0.get(Cf::Subkey, &h.element(b"f")).unwrap().as_deref(), Some(&b"fv"[..]));
        assert!(r0.meta(b"t").unwrap().is_some());
        let r1 = Reader::at(&s, 1_000).in_db(1);
        assert!(r1.meta(b"str").unwrap().is_none() && r1.meta(b"h").unwrap().is_none(), "only database 0 has them");
        let slots = None;
        assert_eq!(keyspace::dbsize(&r0, &slots).unwrap(), 3);
        assert_eq!(keyspace::dbsize(&r1, &slots).unwrap(), 0);

        // Active expiry finds the old index entry and deletes the key; a DEL
        // of an old key (an entry without a database: 0) deletes it.
        // (What active expiry reads: `shard::expire::collect_due`.)
        let due: Vec<_> = s
            .iter_all(Cf::ExpireIndex)
            .filter_map(|(k, _)| crate::storage::keys::decode_expire_index_key(&k))
            .map(|(_, at, mk)| (crate::storage::keys::decode_meta_key_in(&mk).map(|(db, _, k)| (db, k.to_vec())), at))
            .collect();
        assert_eq!(due, vec![(Some((0, b"t".to_vec())), 5_000)]);
        let mut ctx = ApplyCtx::new(&s, 0, 16384);
        ctx.begin_entry(1 << 20, 6_000);
        let expire =
            pb::ExpireKeys { keys: vec![bytes::Bytes::from_static(b"t")], at_ms: vec![5_000], dbs: Vec::new() };
        let del = pb::Del { keys: vec![bytes::Bytes::from_static(b"str")] };
        for op in [Op::ExpireKeys(expire), Op::Del(del)] {
            assert_eq!(
                write::apply_cmd(&mut ctx, &pb::WriteCmd { op: Some(op), db: 0, epoch: 0 }).unwrap(),
                Reply::Int(1)
            );
        }
        s.write(ctx.take().batch, true).unwrap();
        let r0 = Reader::at(&s, 6_000);
        assert!(r0.meta(b"t").unwrap().is_none() && r0.meta(b"str").unwrap().is_none());
        assert!(s.get(Cf::Metadata, &old_key(b"t")).unwrap().is_none(), "the old layout's own key went");
        assert_eq!(keyspace::dbsize(&r0, &slots).unwrap(), 1);
    }

    #[test]
    fn swaps_map_both_ways_and_back() {
        let d = Dbs::new(16);
        assert_eq!((d.physical(3), d.logical(3)), (3, 3));
        assert!(d.logical_mk(&meta_key_in(3, 1, b"k")).is_none());
        let mut m = d.map();
        m.swap(0, 3);
        d.publish(&m);
        assert_eq!((d.physical(0), d.physical(3), d.logical(3), d.logical(0)), (3, 0, 0, 3));
        assert_eq!(d.logical_mk(&meta_key_in(3, 1, b"k")), Some(meta_key_in(0, 1, b"k")));
        let again = Dbs::with_map(16, decode(&encode(&m)).unwrap());
        assert_eq!(again.physical(0), 3, "the stored mapping loads");
        m.swap(3, 0);
        d.publish(&m);
        assert!(d.is_identity());
        assert_eq!(decode(&[0, 1, 0, 1]), None, "a damaged mapping is not taken");
        assert_eq!(Dbs::with_map(4, vec![0, 1, 2, 3, 5, 4]).stored_len(), 6, "a longer stored mapping is kept");
    }
}
