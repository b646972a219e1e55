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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::storage::keys::{db_of, in_db, state_key, StateKind};
use crate::storage::{Cf, Storage, StorageError};

/// Redis's default `databases`.
pub const DEFAULT_DATABASES: usize = 16;

/// The most databases a server may have (a database number is 16 bits on disk).
pub const MAX_DATABASES: usize = 1 << 16;

/// See the module doc.
pub struct Dbs {
    count: usize,
    /// True while no SWAPDB changed anything: physical == logical, no lock.
    identity: AtomicBool,
    /// logical -> physical, a permutation (at least `count` long).
    map: Mutex<Vec<u16>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the mapping is stored.
pub fn map_key() -> [u8; 5] {
    state_key(u32::MAX, StateKind::Databases)
}

impl Dbs {
    /// `count` databases, none swapped.
    pub fn new(count: usize) -> Dbs {
        let count = count.clamp(1, MAX_DATABASES);
        Dbs { count, identity: AtomicBool::new(true), map: Mutex::new((0..count).map(|d| d as u16).collect()) }
    }

    /// `count` databases with the mapping `storage` holds. A mapping stored
    /// under a bigger `databases` keeps its length (every physical database
    /// stays reachable by its number's swap partner).
    pub fn load(storage: &Storage, count: usize) -> Result<Dbs, StorageError> {
        let dbs = Dbs::new(count);
        if let Some(b) = storage.get(Cf::RaftState, &map_key())? {
            dbs.set_encoded(&b);
        }
        Ok(dbs)
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
        lock(&self.map).get(db as usize).copied().unwrap_or(db)
    }

    /// The logical database whose data physical `db` holds.
    pub fn logical(&self, db: u16) -> u16 {
        if self.identity.load(Ordering::Acquire) {
            return db;
        }
        lock(&self.map).iter().position(|&p| p == db).map_or(db, |l| l as u16)
    }

    /// A metadata key of physical storage as its logical database files it.
    pub fn logical_mk(&self, mk: &[u8]) -> Option<Vec<u8>> {
        if self.identity.load(Ordering::Acquire) {
            return None;
        }
        let (p, _) = db_of(mk);
        let l = self.logical(p);
        (l != p).then(|| in_db(mk, l))
    }

    /// The physical databases that may hold keys (`databases`, or more if a
    /// mapping stored under a bigger `databases` names them).
    pub fn stored_len(&self) -> usize {
        lock(&self.map).len()
    }

    /// True while no SWAPDB is in effect.
    pub fn is_identity(&self) -> bool {
        self.identity.load(Ordering::Acquire)
    }

    /// SWAPDB a b (apply): the mapping after, to be stored with the batch.
    pub fn swap(&self, a: u16, b: u16) -> Vec<u8> {
        let mut m = lock(&self.map);
        let need = a.max(b) as usize + 1;
        while m.len() < need {
            let n = m.len() as u16;
            m.push(n);
        }
        m.swap(a as usize, b as usize);
        let identity = m.iter().enumerate().all(|(i, &p)| i == p as usize);
        self.identity.store(identity, Ordering::Release);
        m.iter().flat_map(|p| p.to_be_bytes()).collect()
    }

    fn set_encoded(&self, b: &[u8]) {
        let stored: Vec<u16> = b.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        // Only a permutation is taken (a damaged record would lose databases).
        let mut seen = vec![false; stored.len()];
        for &p in &stored {
            match seen.get_mut(p as usize) {
                Some(s) if !*s => *s = true,
                _ => return,
            }
        }
        let mut m = lock(&self.map);
        let mut full = stored;
        while full.len() < m.len() {
            let n = full.len() as u16;
            full.push(n);
        }
        let identity = full.iter().enumerate().all(|(i, &p)| i == p as usize);
        *m = full;
        self.identity.store(identity, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::keys::meta_key_in;

    #[test]
    fn swaps_map_both_ways_and_back() {
        let d = Dbs::new(16);
        assert_eq!((d.physical(3), d.logical(3)), (3, 3));
        assert!(d.logical_mk(&meta_key_in(3, 1, b"k")).is_none());
        let stored = d.swap(0, 3);
        assert_eq!((d.physical(0), d.physical(3), d.logical(3), d.logical(0)), (3, 0, 0, 3));
        assert_eq!(d.logical_mk(&meta_key_in(3, 1, b"k")), Some(meta_key_in(0, 1, b"k")));
        let again = Dbs::new(16);
        again.set_encoded(&stored);
        assert_eq!(again.physical(0), 3, "the stored mapping loads");
        d.swap(3, 0);
        assert!(d.is_identity());
        again.set_encoded(&[0, 1, 0, 1]);
        assert_eq!(again.physical(0), 3, "a damaged mapping is not taken");
    }
}
