//! Keys watched by clients (WATCH), and what happened to them since.
//!
//! A node-wide registry: for every watched key, the log index of the last apply
//! batch that modified it and of the last one that deleted it because it had
//! expired. WATCH registers a key and notes the index its region had published
//! at that moment (under the registry's lock, so a batch is either wholly before
//! the watch or recorded after it); a key is dirty for that client if a later
//! batch touched it. Apply publishes its index and records what it touched after
//! every batch; when nobody watches, that is one atomic store and one load.
//!
//! Exactness follows Redis (`touchWatchedKey`, `isWatchedKeyExpired`): any
//! modification counts, a write of the same value too, a write to another key
//! never; a key alive at WATCH time that expires (or is deleted for having
//! expired) counts; a key already expired at WATCH time may be reaped without
//! counting; FLUSH counts for the watched keys that existed.
//!
//! The decision is taken on the node that leads the key's region, where these
//! records live: a transaction with watched keys is checked by the region's
//! proposer after everything proposed before it is applied, and proposed only if
//! clean (see `raft::region`), so every replica applies the same log.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;

use crate::storage::keys::decode_meta_key;
use crate::storage::meta::Meta;
use crate::storage::{Cf, Storage, StorageError};

#[derive(Default)]
struct Entry {
    watchers: usize,
    /// Index of the last batch that modified the key.
    modified: u64,
    /// Index of the last batch that deleted it for having expired.
    expired: u64,
}

/// One key a client watches, as WATCH saw it.
#[derive(Debug, Clone)]
pub struct Watched {
    /// The key's metadata key in the client's logical database: what the
    /// registry files it under (`types::dbs`).
    pub key: Bytes,
    /// Where it was stored at WATCH time (its physical database).
    pub stored: Bytes,
    pub region: u32,
    /// The region's applied index when the key was registered.
    pub since: u64,
    /// The key existed and had not expired at WATCH time.
    pub alive: bool,
}

/// See the module doc.
pub struct Watches {
    /// Registrations (a client watching a key counts once).
    active: AtomicUsize,
    keys: Mutex<HashMap<Bytes, Entry>>,
    /// Per region: the last applied index whose effects were recorded here.
    applied: Mutex<HashMap<u32, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Watches {
    pub fn new() -> Watches {
        Watches { active: AtomicUsize::new(0), keys: Mutex::new(HashMap::new()), applied: Mutex::new(HashMap::new()) }
    }

    /// True if any client watches any key (apply skips its bookkeeping otherwise).
    pub fn any(&self) -> bool {
        self.active.load(Ordering::SeqCst) > 0
    }

    /// Register `key` of `region`; the index its changes are judged from.
    pub fn watch(&self, key: &Bytes, region: u32) -> u64 {
        // Counted before the index is read: a batch that saw no watcher published
        // its index before this load (see `applied_batch`).
        self.active.fetch_add(1, Ordering::SeqCst);
        let mut keys = lock(&self.keys);
        keys.entry(key.clone()).or_default().watchers += 1;
        lock(&self.applied).get(&region).copied().unwrap_or(0)
    }

    /// Forget one registration of `key`.
    pub fn unwatch(&self, key: &[u8]) {
        let mut keys = lock(&self.keys);
        if let Some(e) = keys.get_mut(key) {
            e.watchers -= 1;
            if e.watchers == 0 {
                keys.remove(key);
            }
            self.active.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The watched keys (logical metadata keys) among slots `[start, end)`
    /// (FLUSH, SWAPDB: the ones that exist count as modified).
    pub fn keys_in(&self, start: u16, end: u32) -> Vec<Bytes> {
        lock(&self.keys)
            .keys()
            .filter(|k| decode_meta_key(k).is_some_and(|(s, _)| s as u32 >= start as u32 && (s as u32) < end))
            .cloned()
            .collect()
    }

    /// The slots `[start, end)` moved to another region (a split): indexes
    /// of two regions do not compare, so every key watched there counts as
    /// modified, and a transaction watching it fails (as one does in Redis
    /// when the key changed; here it may not have).
    pub fn moved(&self, start: u16, end: u32) {
        if !self.any() {
            return;
        }
        let mut keys = lock(&self.keys);
        for (k, e) in keys.iter_mut() {
            if decode_meta_key(k).is_some_and(|(s, _)| s as u32 >= start as u32 && (s as u32) < end) {
                e.modified = u64::MAX;
            }
        }
    }

    /// After an apply batch of `region` up to `index` is in storage: publish the
    /// index and record the watched keys it modified or reaped (metadata keys).
    pub fn applied_batch(&self, region: u32, index: u64, modified: &[Vec<u8>], expired: &[Vec<u8>]) {
        lock(&self.applied).insert(region, index);
        if !self.any() {
            return;
        }
        let mut keys = lock(&self.keys);
        for (list, reaped) in [(modified, false), (expired, true)] {
            for mk in list {
                if let Some(e) = keys.get_mut(&mk[..]) {
                    if reaped {
                        e.expired = index;
                    } else {
                        e.modified = index;
                    }
                }
            }
        }
    }

    /// True if any of `watched` changed since it was watched, judged at `now_ms`
    /// (the time of the transaction about to run) against `storage`, which holds
    /// everything applied so far.
    pub fn dirty(&self, storage: &Storage, watched: &[Watched], now_ms: u64) -> Result<bool, StorageError> {
        {
            let keys = lock(&self.keys);
            for w in watched {
                if let Some(e) = keys.get(&w.key) {
                    if e.modified > w.since || (w.alive && e.expired > w.since) {
                        return Ok(true);
                    }
                }
            }
        }
        // A key alive at WATCH time that has expired since, reaped or not.
        for w in watched.iter().filter(|w| w.alive) {
            if let Some(m) = storage.get(Cf::Metadata, &w.stored)?.and_then(Meta::decode) {
                if m.is_expired(now_ms) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk(k: &str) -> Vec<u8> {
        super::super::mkey_in(0, k.as_bytes())
    }

    #[test]
    fn a_batch_is_before_or_after_a_watch_never_both() {
        let w = Watches::new();
        let k = Bytes::from(mk("k"));
        w.applied_batch(0, 5, &[mk("k")], &[]);
        let since = w.watch(&k, 0);
        assert_eq!(since, 5, "the batch that was published before the watch");
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &Default::default()).unwrap();
        let watched = [Watched { key: k.clone(), stored: k.clone(), region: 0, since, alive: false }];
        assert!(!w.dirty(&s, &watched, 0).unwrap(), "a change before the watch is not one");
        w.applied_batch(0, 6, &[mk("other")], &[]);
        assert!(!w.dirty(&s, &watched, 0).unwrap(), "another key never counts");
        w.applied_batch(0, 7, &[], &[mk("k")]);
        assert!(!w.dirty(&s, &watched, 0).unwrap(), "a key that was not alive may be reaped");
        let alive = [Watched { alive: true, ..watched[0].clone() }];
        assert!(w.dirty(&s, &alive, 0).unwrap(), "a live key that expired changed");
        w.applied_batch(0, 8, &[mk("k")], &[]);
        assert!(w.dirty(&s, &watched, 0).unwrap());
        w.unwatch(&k);
        assert!(!w.any());
        assert!(w.keys_in(0, 16384).is_empty());
    }
}
