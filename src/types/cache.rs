//! A per-core cache of metadata values for point reads, kept exact by epochs.
//!
//! RocksDB point lookups walk a skiplist (memtable) or blocks (SSTs); a hash
//! lookup is far cheaper, so each core keeps recently read metadata values. The
//! cache never serves a value older than an acknowledged write:
//!
//! - `Epochs` is one shared array of counters, a key hashing to one of them.
//!   Apply bumps the counter of every key it wrote, *after* the write batch is in
//!   RocksDB and *before* any reply is sent; FLUSH bumps the global generation.
//! - A reader loads the counter first, then uses its cached entry only if that
//!   entry was filled under the same counter value. On a miss it reads RocksDB and
//!   files the result under the counter value it loaded before the read.
//!
//! A write acknowledged before a read began has bumped the counter the read loads,
//! so the read misses and goes to RocksDB, where the write already is. A write
//! racing with a miss may leave an entry filed under an old counter; the next
//! read sees the counter moved and refetches. Memory: each core's cache is
//! bounded in bytes; two generations give approximate LRU in O(1).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use ahash::AHashMap;
use bytes::Bytes;

const BUCKETS: usize = 1 << 16;

/// Write epochs shared by all cores.
pub struct Epochs {
    buckets: Box<[AtomicU64]>,
    generation: AtomicU64,
    hasher: ahash::RandomState,
}

impl Default for Epochs {
    fn default() -> Self {
        Epochs {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            generation: AtomicU64::new(0),
            hasher: ahash::RandomState::with_seeds(0x6e65, 0x6f6b, 0x7620, 0x6361),
        }
    }
}

impl Epochs {
    fn bucket(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) as usize) & (BUCKETS - 1)
    }

    /// The current stamp of `key`: its bucket counter combined with the generation.
    pub fn stamp(&self, key: &[u8]) -> u64 {
        let g = self.generation.load(Ordering::Acquire);
        let b = self.buckets[self.bucket(key)].load(Ordering::Acquire);
        g.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b
    }

    /// Apply wrote `key` (call after the write is in RocksDB, before replying).
    pub fn bump(&self, key: &[u8]) {
        self.buckets[self.bucket(key)].fetch_add(1, Ordering::Release);
    }

    /// Apply deleted a range of keys (FLUSH): every stamp changes.
    pub fn bump_all(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }
}

struct Entry {
    stamp: u64,
    value: Option<Bytes>,
}

struct Gens {
    young: AHashMap<Bytes, Entry>,
    old: AHashMap<Bytes, Entry>,
    young_bytes: usize,
}

/// One core's cache: user key → raw metadata value (or absent).
pub struct ReadCache {
    gens: RefCell<Gens>,
    /// Bytes a generation may hold before it becomes the old one.
    gen_limit: usize,
}

impl ReadCache {
    /// A cache holding roughly up to `capacity_bytes` of keys and values.
    pub fn new(capacity_bytes: usize) -> ReadCache {
        ReadCache {
            gens: RefCell::new(Gens { young: AHashMap::new(), old: AHashMap::new(), young_bytes: 0 }),
            gen_limit: capacity_bytes / 2,
        }
    }

    /// `Some(value)` if the cache holds `key` filed under `stamp`.
    pub fn get(&self, key: &[u8], stamp: u64) -> Option<Option<Bytes>> {
        if self.gen_limit == 0 {
            return None;
        }
        let mut g = self.gens.borrow_mut();
        if let Some(e) = g.young.get(key) {
            return (e.stamp == stamp).then(|| e.value.clone());
        }
        // Promote a valid old entry so that hot keys survive the next rotation.
        let (k, e) = g.old.remove_entry(key)?;
        if e.stamp != stamp {
            return None;
        }
        let v = e.value.clone();
        Self::insert(&mut g, self.gen_limit, k, e);
        Some(v)
    }

    /// File what a RocksDB read returned, under the stamp loaded before the read.
    pub fn put(&self, key: &[u8], stamp: u64, value: Option<Bytes>) {
        if self.gen_limit == 0 {
            return;
        }
        let mut g = self.gens.borrow_mut();
        Self::insert(&mut g, self.gen_limit, Bytes::copy_from_slice(key), Entry { stamp, value });
    }

    /// Bytes an entry is charged: key, value and a fixed overhead.
    fn charge(key_len: usize, value: &Option<Bytes>) -> usize {
        key_len + value.as_ref().map(|v| v.len()).unwrap_or(0) + 64
    }

    fn insert(g: &mut Gens, limit: usize, key: Bytes, e: Entry) {
        let key_len = key.len();
        let size = Self::charge(key_len, &e.value);
        if g.young_bytes + size > limit {
            g.old = std::mem::take(&mut g.young);
            g.young_bytes = 0;
        }
        g.young_bytes += size;
        if let Some(prev) = g.young.insert(key, e) {
            // A replaced entry gives back exactly what it was charged.
            g.young_bytes -= Self::charge(key_len, &prev.value).min(g.young_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bump_invalidates() {
        let ep = Epochs::default();
        let c = ReadCache::new(1 << 20);
        let s = ep.stamp(b"k");
        c.put(b"k", s, Some(Bytes::from_static(b"v1")));
        assert_eq!(c.get(b"k", ep.stamp(b"k")), Some(Some(Bytes::from_static(b"v1"))));
        ep.bump(b"k");
        assert_eq!(c.get(b"k", ep.stamp(b"k")), None, "a write makes the entry stale");
        c.put(b"k", ep.stamp(b"k"), None);
        assert_eq!(c.get(b"k", ep.stamp(b"k")), Some(None), "absence is cached too");
        ep.bump_all();
        assert_eq!(c.get(b"k", ep.stamp(b"k")), None, "a flush makes everything stale");
    }

    #[test]
    fn bounded_by_bytes_and_keeps_hot_keys() {
        let ep = Epochs::default();
        let c = ReadCache::new(64 * 1024);
        let hot = b"hot".to_vec();
        c.put(&hot, ep.stamp(&hot), Some(Bytes::from_static(b"x")));
        for i in 0..10_000u32 {
            let k = i.to_be_bytes();
            c.put(&k, ep.stamp(&k), Some(Bytes::from(vec![0u8; 100])));
            // touching the hot key keeps promoting it
            assert!(c.get(&hot, ep.stamp(&hot)).is_some(), "hot key evicted at {i}");
        }
        let g = c.gens.borrow();
        let total: usize = g.young.len() + g.old.len();
        assert!(total < 1_000, "{total} entries exceed the byte bound");
    }
}
