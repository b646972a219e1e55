//! Data-type semantics over storage, and the replicated write vocabulary.
//!
//! Owns: what each write does to the stored bytes (`apply`, deterministic: time
//! comes from the log entry, never the local clock) and how reads interpret them
//! (`Reader`, on any core, with the local clock). Depends on `storage`, `cluster`
//! (slot of a key) and `protocol` (the `Reply` each write produces). Never touches
//! sockets, Raft or cores.

/// Unwrap an inner `Result<_, TypeError>` or return it as the command's error.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        }
    };
}

pub mod cache;
pub mod coll;
pub mod glob;
pub mod hash;
pub mod keyspace;
pub mod list;
pub mod set;
pub mod string;
pub mod watch;
pub mod write;
pub mod zset;

use std::collections::BTreeMap;

use ahash::AHashMap;
use bytes::Bytes;

use crate::cluster::key_slot;
use crate::storage::keys::{decode_meta_key, expire_index_key, meta_key, slot_lower_bound, slot_upper_bound, KeyType};
use crate::storage::meta::Meta;
use crate::storage::{Batch, Cf, Storage, StorageError};

/// The largest string value (Redis's default `proto-max-bulk-len`); fixed so that
/// every replica applies the same limit.
pub const MAX_STRING_LEN: usize = 512 * 1024 * 1024;

/// A command-level failure. `Display` is Redis's error reply text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    #[error("ERR value is not a valid float")]
    NotFloat,
    #[error("ERR increment or decrement would overflow")]
    Overflow,
    #[error("ERR increment would produce NaN or Infinity")]
    NanOrInf,
    #[error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")]
    TooBig,
    #[error("ERR no such key")]
    NoSuchKey,
    #[error("ERR hash value is not an integer")]
    HashNotInteger,
    #[error("ERR hash value is not a float")]
    HashNotFloat,
    #[error("ERR index out of range")]
    IndexOutOfRange,
    /// Any other fixed error text.
    #[error("{0}")]
    Msg(&'static str),
}

/// What a read returns: storage failure outside, command failure inside.
pub type ReadResult<T> = Result<Result<T, TypeError>, StorageError>;

/// Milliseconds since the Unix epoch from the local clock (handlers and readers only;
/// apply uses the entry's `now_ms`).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The metadata key of a user key.
pub fn mkey(key: &[u8]) -> Vec<u8> {
    meta_key(key_slot(key), key)
}

/// State of one apply batch: writes go to one storage `Batch`; reads see the
/// batch's own earlier writes first (an overlay over RocksDB), so a batch of
/// `SET k 1; INCR k` applies as if the commands ran one by one.
pub struct ApplyCtx<'a> {
    storage: &'a Storage,
    /// The leader's clock, from the log entry.
    pub now_ms: u64,
    slot_start: u16,
    slot_end: u32,
    overlay: AHashMap<Vec<u8>, Option<Bytes>>,
    /// Element writes (`subkey`, `zset_score`) not yet in RocksDB, in key order.
    elements: [BTreeMap<Vec<u8>, Option<Bytes>>; 2],
    flushed: bool,
    batch: Batch,
    /// Versions for new composite keys: `entry index << VERSION_SHIFT`, plus a
    /// counter within the entry. Log indexes only grow, so a new version is
    /// greater than every version the region ever handed out.
    version_base: u64,
    versions_used: u64,
    /// Per log entry: first and last member of sets SPOP drew from (see
    /// `set::pick_with`); cleared at every entry so replicas agree.
    pub pick_ends: AHashMap<Vec<u8>, (Bytes, Bytes)>,
}

/// Bits of a version below the entry's log index (new composite keys per entry).
pub const VERSION_SHIFT: u32 = 24;

fn element_slot(cf: Cf) -> usize {
    match cf {
        Cf::ZsetScore => 1,
        _ => 0,
    }
}

impl<'a> ApplyCtx<'a> {
    /// A context for the region covering slots `[slot_start, slot_end)`.
    pub fn new(storage: &'a Storage, slot_start: u16, slot_end: u32) -> Self {
        ApplyCtx {
            storage,
            now_ms: 0,
            slot_start,
            slot_end,
            overlay: AHashMap::new(),
            elements: [BTreeMap::new(), BTreeMap::new()],
            flushed: false,
            batch: Batch::new(),
            version_base: 1 << VERSION_SHIFT,
            versions_used: 0,
            pick_ends: AHashMap::new(),
        }
    }

    /// Start applying the log entry at `index`, stamped `now_ms` by its leader.
    pub fn begin_entry(&mut self, index: u64, now_ms: u64) {
        self.now_ms = now_ms;
        self.version_base = index << VERSION_SHIFT;
        self.versions_used = 0;
        self.pick_ends.clear();
    }

    /// A version for a new composite key, unique in the region for all time: a
    /// command creates at most one composite key and an entry carries at most
    /// `raft::region::MAX_CMDS_PER_ENTRY` (2^16) commands, well under 2^24.
    pub fn new_version(&mut self) -> u64 {
        self.versions_used += 1;
        debug_assert!(self.versions_used < 1 << VERSION_SHIFT);
        self.version_base + self.versions_used
    }

    /// Read an element entry (`Cf::Subkey` or `Cf::ZsetScore`), seeing this batch's writes.
    pub fn get_element(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        if let Some(v) = self.elements[element_slot(cf)].get(key) {
            return Ok(v.clone());
        }
        if self.flushed {
            return Ok(None);
        }
        self.storage.get(cf, key)
    }

    pub fn put_element(&mut self, cf: Cf, key: Vec<u8>, value: impl Into<Bytes>) {
        self.elements[element_slot(cf)].insert(key, Some(value.into()));
    }

    pub fn del_element(&mut self, cf: Cf, key: Vec<u8>) {
        self.elements[element_slot(cf)].insert(key, None);
    }

    /// Visit element entries in `[from, to)` in order (or reverse), this batch's
    /// writes merged over RocksDB, until `f` says stop.
    pub fn scan_elements(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        let mut pending: Vec<(&[u8], Option<&[u8]>)> = self.elements[element_slot(cf)]
            .range::<[u8], _>((std::ops::Bound::Included(from), std::ops::Bound::Excluded(to)))
            .map(|(k, v)| (&k[..], v.as_deref()))
            .collect();
        if !reverse {
            pending.reverse();
        }
        // `pending` is now consumed from its end, in visiting order.
        let before = |a: &[u8], b: &[u8]| if reverse { a > b } else { a < b };
        let mut go = true;
        if !self.flushed {
            self.storage.scan(cf, from, to, reverse, |k, v| {
                while let Some(&(pk, pv)) = pending.last() {
                    if !before(pk, k) {
                        break;
                    }
                    pending.pop();
                    if let Some(pv) = pv {
                        if !f(pk, pv) {
                            go = false;
                            return false;
                        }
                    }
                }
                if let Some(&(pk, pv)) = pending.last() {
                    if pk == k {
                        pending.pop();
                        return match pv {
                            Some(pv) => {
                                go = f(pk, pv);
                                go
                            }
                            None => true,
                        };
                    }
                }
                go = f(k, v);
                go
            })?;
        }
        while go {
            let Some((pk, pv)) = pending.pop() else { break };
            if let Some(pv) = pv {
                go = f(pk, pv);
            }
        }
        Ok(())
    }

    fn raw_meta(&self, mk: &[u8]) -> Result<Option<Bytes>, StorageError> {
        if let Some(v) = self.overlay.get(mk) {
            return Ok(v.clone());
        }
        if self.flushed {
            return Ok(None);
        }
        self.storage.get(Cf::Metadata, mk)
    }

    /// The key's metadata if it exists and has not expired at the entry's time.
    pub fn live_meta(&self, mk: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(Meta::live(self.raw_meta(mk)?, self.now_ms))
    }

    /// The key's metadata even if expired (for cleanup).
    pub fn any_meta(&self, mk: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(self.raw_meta(mk)?.and_then(Meta::decode))
    }

    /// Write a key's metadata without knowing what it replaces (blind overwrite).
    /// A TTL in `value` is added to the expire index.
    pub fn put_meta(&mut self, mk: Vec<u8>, value: Vec<u8>) {
        self.put_meta_over(mk, None, value);
    }

    /// Write a key's metadata over `old` (what the key held, if anything): the
    /// expire index gains the new TTL and loses the old one when it changes.
    pub fn put_meta_over(&mut self, mk: Vec<u8>, old: Option<&Meta>, value: Vec<u8>) {
        let at = expire_of(&value);
        let old_at = old.map(|m| m.expire_ms).unwrap_or(0);
        if old_at != at {
            if old_at != 0 {
                self.index(&mk, old_at, false);
            }
            if at != 0 {
                self.index(&mk, at, true);
            }
        }
        self.put_raw_meta(mk, value);
    }

    /// Delete a key whose metadata is `old`, with its expire index entry.
    pub fn del_key(&mut self, mk: Vec<u8>, old: &Meta) {
        if old.expire_ms != 0 {
            self.index(&mk, old.expire_ms, false);
        }
        self.del_meta(mk);
    }

    /// Add or remove the expire index entry (`mk`'s key, `at`).
    pub fn index(&mut self, mk: &[u8], at: u64, add: bool) {
        if let Some((slot, key)) = decode_meta_key(mk) {
            let ik = expire_index_key(slot, at, key);
            if add {
                self.batch.put(Cf::ExpireIndex, ik, Vec::new());
            } else {
                self.batch.delete(Cf::ExpireIndex, ik);
            }
        }
    }

    // Metadata writes live in the overlay until `take`, which emits each key's
    // final value once, in key order (see there).
    fn put_raw_meta(&mut self, mk: Vec<u8>, value: Vec<u8>) {
        self.overlay.insert(mk, Some(Bytes::from(value)));
    }

    fn del_meta(&mut self, mk: Vec<u8>) {
        self.overlay.insert(mk, None);
    }

    /// Delete every key of the region (FLUSHDB/FLUSHALL).
    pub fn flush_region(&mut self) {
        let (lo, hi) = (slot_lower_bound(self.slot_start), slot_upper_bound(self.slot_end));
        for cf in [Cf::Metadata, Cf::Subkey, Cf::ZsetScore, Cf::ExpireIndex, Cf::Links] {
            self.batch.delete_range(cf, lo.clone(), hi.clone());
        }
        self.overlay.clear();
        self.elements.iter_mut().for_each(BTreeMap::clear);
        self.flushed = true;
    }

    /// Record a non-metadata write (e.g. Raft applied state) in the same batch.
    pub fn put_raw(&mut self, cf: Cf, key: impl Into<Vec<u8>>, value: impl Into<Bytes>) {
        self.batch.put(cf, key, value);
    }

    /// Forget the overlay (the batch was written) and hand the batch out.
    pub fn take_batch(&mut self) -> Batch {
        self.take().batch
    }

    /// Hand out the batch with what it changed, and start afresh.
    ///
    /// Each metadata key written in the batch is written once, with its final value,
    /// and the keys go in sorted order: RocksDB's memtable skiplist reuses its
    /// search position between consecutive inserts, so sorted inserts cost far less
    /// than random ones, and a key written many times in one batch costs one insert.
    /// They follow any range deletion of a FLUSH in the batch, which the overlay
    /// already accounts for (a flush clears it).
    pub fn take(&mut self) -> Applied {
        let mut entries: Vec<(Vec<u8>, Option<Bytes>)> = self.overlay.drain().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut batch = std::mem::take(&mut self.batch);
        for (i, cf) in [Cf::Subkey, Cf::ZsetScore].into_iter().enumerate() {
            for (k, v) in std::mem::take(&mut self.elements[i]) {
                match v {
                    Some(v) => batch.put(cf, k, v),
                    None => batch.delete(cf, k),
                }
            }
        }
        let mut written = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            match v {
                Some(v) => batch.put(Cf::Metadata, k.clone(), v),
                None => batch.delete(Cf::Metadata, k.clone()),
            }
            written.push(k);
        }
        let flushed = std::mem::replace(&mut self.flushed, false);
        Applied { batch, written, flushed }
    }
}

/// The expire time of an encoded metadata value (0 = none).
fn expire_of(value: &[u8]) -> u64 {
    Meta::decode_header(value).map(|(_, at)| at).unwrap_or(0)
}

/// What an apply batch changed: its writes, the metadata keys it wrote and
/// whether it flushed its region (for read-cache invalidation).
pub struct Applied {
    pub batch: Batch,
    pub written: Vec<Vec<u8>>,
    pub flushed: bool,
}

impl Applied {
    /// After `batch` is in RocksDB: invalidate cached reads of what it changed.
    pub fn invalidate(&self, epochs: &cache::Epochs) {
        if self.flushed {
            epochs.bump_all();
        }
        for mk in &self.written {
            if let Some((_, key)) = decode_meta_key(mk) {
                epochs.bump(key);
            }
        }
    }
}

/// Reads with the local clock. Any core may read: an acknowledged write has
/// already been applied to the shared RocksDB.
pub struct Reader<'a> {
    pub storage: &'a Storage,
    pub now_ms: u64,
    cache: Option<(&'a cache::ReadCache, &'a cache::Epochs)>,
}

impl<'a> Reader<'a> {
    pub fn new(storage: &'a Storage) -> Self {
        Self::at(storage, now_ms())
    }

    /// A reader judging expiry at `now_ms`, without the read cache.
    pub fn at(storage: &'a Storage, now_ms: u64) -> Self {
        Reader { storage, now_ms, cache: None }
    }

    /// A reader whose point reads go through a core's read cache, judging expiry
    /// at `now_ms`.
    pub fn cached(storage: &'a Storage, cache: &'a cache::ReadCache, epochs: &'a cache::Epochs, now_ms: u64) -> Self {
        Reader { storage, now_ms, cache: Some((cache, epochs)) }
    }

    fn raw_meta(&self, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        let Some((c, ep)) = self.cache else {
            return self.storage.get(Cf::Metadata, &mkey(key));
        };
        let stamp = ep.stamp(key);
        if let Some(v) = c.get(key, stamp) {
            return Ok(v);
        }
        let v = self.storage.get(Cf::Metadata, &mkey(key))?;
        c.put(key, stamp, v.clone());
        Ok(v)
    }

    /// Live metadata of `key`, or `None` if absent or expired.
    pub fn meta(&self, key: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(Meta::live(self.raw_meta(key)?, self.now_ms))
    }

    /// Live metadata, checked to be of type `kind`.
    pub fn typed(&self, key: &[u8], kind: KeyType) -> Result<Result<Option<Meta>, TypeError>, StorageError> {
        Ok(match self.meta(key)? {
            Some(m) if m.kind != kind => Err(TypeError::WrongType),
            m => Ok(m),
        })
    }
}
