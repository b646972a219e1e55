//! The one read interface every command's read logic is written against.
//!
//! [`Source`] is what a read needs: live metadata of a user key, point reads and
//! ordered scans of a column family, and the time expiry is judged at. Three
//! things provide it:
//!
//! - [`Reader`]: a client's point reads on its core, metadata through the core's
//!   read cache (strings, keyspace questions);
//! - [`Snap`]: a client's read over one RocksDB snapshot (composite types: their
//!   metadata and elements from one instant);
//! - [`ApplyCtx`]: apply's batch merged over RocksDB, so a transaction or a
//!   script reads what its own earlier commands wrote.
//!
//! [`ReadView`] is any one of them, so a command's read is written once and runs
//! on a connection's core or inside apply alike.

use bytes::Bytes;

use super::cache::{Epochs, ReadCache};
use super::{mkey_in, TypeError};
use crate::storage::keys::KeyType;
use crate::storage::meta::Meta;
use crate::storage::{Cf, Storage, StorageError, View};

/// Reads of the keyspace, wherever they run.
pub trait Source {
    /// The time expiry is judged at.
    fn now_ms(&self) -> u64;
    /// The (physical) database user keys are read in (`types::dbs`).
    fn db(&self) -> u16;
    /// The metadata key of a user key in this source's database.
    fn mkey(&self, key: &[u8]) -> Vec<u8> {
        mkey_in(self.db(), key)
    }
    /// Live metadata of a user key (`None` if absent or expired).
    fn meta(&self, key: &[u8]) -> Result<Option<Meta>, StorageError>;
    /// A point read of `cf` (element entries; metadata by its encoded key).
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError>;
    /// Visit the entries of `cf` in `[from, to)` in order (or reverse) until `f`
    /// returns false.
    fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError>;

    /// Live metadata, checked to be of type `kind`.
    fn typed(&self, key: &[u8], kind: KeyType) -> Result<Result<Option<Meta>, TypeError>, StorageError> {
        Ok(match self.meta(key)? {
            Some(m) if m.kind != kind => Err(TypeError::WrongType),
            m => Ok(m),
        })
    }
}

/// A client's point reads on its core, judging expiry at `now_ms`; metadata
/// through the core's read cache when it has one. Any core may read: an
/// acknowledged write has already been applied to the shared RocksDB.
pub struct Reader<'a> {
    pub storage: &'a Storage,
    pub now_ms: u64,
    /// The physical database.
    pub db: u16,
    cache: Option<(&'a ReadCache, &'a Epochs)>,
    /// One key's elements through a core's element cache: the cache, the key's
    /// metadata key (its elements' keys start with it, then the version), and
    /// the key's stamp, loaded before the read.
    elements: Option<(&'a ReadCache, Vec<u8>, u64)>,
}

impl<'a> Reader<'a> {
    /// A reader judging expiry at `now_ms`, without the read cache.
    pub fn at(storage: &'a Storage, now_ms: u64) -> Self {
        Reader { storage, now_ms, db: 0, cache: None, elements: None }
    }

    /// A reader whose metadata reads go through a core's read cache.
    pub fn cached(storage: &'a Storage, cache: &'a ReadCache, epochs: &'a Epochs, now_ms: u64) -> Self {
        Reader { storage, now_ms, db: 0, cache: Some((cache, epochs)), elements: None }
    }

    /// A reader of `key` whose point reads of its elements also go through a
    /// core's element cache (`caches.1`), filed under `stamp`, the key's stamp
    /// loaded before the read. Whoever reads through it must check afterwards
    /// that the key's stamp is still `stamp` (no write of the key landed) before
    /// trusting the answer (`Ctx::read_key`).
    pub fn keyed(
        storage: &'a Storage,
        caches: (&'a ReadCache, &'a ReadCache),
        epochs: &'a Epochs,
        now_ms: u64,
        (db, key): (u16, &[u8]),
        stamp: u64,
    ) -> Self {
        let elements = Some((caches.1, mkey_in(db, key), stamp));
        Reader { storage, now_ms, db, cache: Some((caches.0, epochs)), elements }
    }

    /// The same reader in physical database `db`.
    pub fn in_db(mut self, db: u16) -> Self {
        self.db = db;
        self
    }

    /// Where a point read of `key` in `cf` is cached, if it is an element of
    /// the reader's key: the element cache, the entry's key (tagged by column
    /// family) and the stamp to file it under.
    fn element_entry(&self, cf: Cf, key: &[u8]) -> Option<(&'a ReadCache, Vec<u8>, u64)> {
        let (c, mk, stamp) = self.elements.as_ref()?;
        let tag = match cf {
            Cf::Subkey => 0u8,
            Cf::ZsetScore => 1,
            _ => return None,
        };
        // Only the key's own elements: `[slot][len][key][version:8]...`.
        if key.len() < mk.len() + 8 || !key.starts_with(mk) {
            return None;
        }
        let mut ck = Vec::with_capacity(1 + key.len());
        ck.push(tag);
        ck.extend_from_slice(key);
        Some((*c, ck, *stamp))
    }

    fn raw_meta(&self, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        let mk = self.mkey(key);
        let fetch = || self.storage.get(Cf::Metadata, &mk);
        let Some((c, ep)) = self.cache else { return fetch() };
        // No stamp while a write of the key is in flight: RocksDB decides.
        // (Stamps are per user key, whatever the database: a write in one
        // moves the stamp of the name in all, which only costs a re-read.)
        let Some(stamp) = ep.stamp(key) else { return fetch() };
        match c.get(&mk, stamp) {
            // A write that landed during the lookup was announced before it
            // landed, so then the stamp is gone or moved: the entry may be old.
            Some(v) if ep.stamp(key) == Some(stamp) => Ok(v),
            Some(_) => fetch(),
            None => {
                let v = fetch()?;
                c.put(&mk, stamp, v.clone());
                Ok(v)
            }
        }
    }
}

/// Tests: the `slow-reads` failpoint (microseconds) makes each element read
/// of a keyed reader ([`Reader::keyed`]) that misses its cache take that much
/// longer, so that reads span writes.
fn slow_reads() -> Option<std::time::Duration> {
    let us = crate::failpoint::value("slow-reads")?;
    Some(std::time::Duration::from_micros(us.max(0) as u64))
}

impl Source for Reader<'_> {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }
    fn db(&self) -> u16 {
        self.db
    }
    fn meta(&self, key: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(Meta::live(self.raw_meta(key)?, self.now_ms))
    }
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        let Some((c, ck, stamp)) = self.element_entry(cf, key) else { return self.storage.get(cf, key) };
        if let Some(v) = c.get(&ck, stamp) {
            return Ok(v);
        }
        if let Some(d) = slow_reads() {
            std::thread::sleep(d);
        }
        let v = self.storage.get(cf, key)?;
        c.put(&ck, stamp, v.clone());
        Ok(v)
    }
    fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        self.storage.scan(cf, from, to, reverse, f)
    }
}

/// A client read over one RocksDB snapshot, expiry judged at the command's time.
pub struct Snap<'a> {
    pub view: View<'a>,
    pub now_ms: u64,
    /// The physical database (a read-only script's SELECT changes it).
    pub db: std::cell::Cell<u16>,
}

impl<'a> Snap<'a> {
    pub fn new(view: View<'a>, now_ms: u64, db: u16) -> Self {
        Snap { view, now_ms, db: std::cell::Cell::new(db) }
    }
}

impl Source for Snap<'_> {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }
    fn db(&self) -> u16 {
        self.db.get()
    }
    fn meta(&self, key: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(Meta::live(self.view.get(Cf::Metadata, &self.mkey(key))?, self.now_ms))
    }
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        self.view.get(cf, key)
    }
    fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        self.view.scan(cf, from, to, reverse, f)
    }
}
