//! A per-core cache of metadata values for point reads, kept exact by epochs.
//!
//! RocksDB point lookups walk a skiplist (memtable) or blocks (SSTs); a hash
//! lookup is far cheaper, so each core keeps recently read metadata values. The
//! cache never serves a value older than an acknowledged write:
//!
//! - `Epochs` is one shared array of counters, a key hashing to one of them,
//!   each with a count of writes in flight. Apply announces every key it is
//!   about to write ([`Epochs::writing`]) *before* the write batch goes to
//!   RocksDB, and bumps the counter ([`Epochs::bump`], which also ends the
//!   announcement) *after* it is in RocksDB and *before* any reply is sent; FLUSH
//!   and snapshot installs do the same with the global generation.
//! - A reader loads the stamp (counter and generation) first; while a write of
//!   the key's bucket is in flight there is none, and the read goes to RocksDB.
//!   It uses a cached entry only if the entry was filed under the same stamp and
//!   the stamp is still the same after the lookup. On a miss it reads RocksDB
//!   and files the result under the stamp it loaded before the read.
//!
//! A write acknowledged before a read began has bumped the counter the read loads,
//! so the read misses and goes to RocksDB, where the write already is. A write
//! racing with a miss may leave an entry filed under an old counter; the next
//! read sees the counter moved and refetches. A write that lands in RocksDB
//! while a cached answer is being looked up is seen by the check after the
//! lookup (the write was announced before it landed): without the announcement,
//! a read on one core could fetch the new value from RocksDB while a read on
//! another, later, still served the old one from its cache, until the bump.
//! Memory: each core's cache is bounded in bytes; two generations give
//! approximate LRU in O(1).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use ahash::AHashMap;
use bytes::Bytes;

/// Keys share a bucket's epoch, so a write invalidates the cached entries of
/// every key in its bucket: with apply filling the cache as it writes, a GET
/// after a load of random writes over 100k keys hit about one time in three
/// with 2^16 buckets (most keys' buckets were bumped again by a later write of
/// another key). 2^20 buckets of 16 bytes are 16 MB of address space, taken
/// from the system only as buckets are first written.
const BUCKETS: usize = 1 << 20;

/// One bucket: its epoch and its writes in flight (announced, not yet bumped;
/// several cores may write keys of one bucket at once, so a count, not a flag),
/// in one cache line (16-byte aligned, so never split across two).
#[repr(align(16))]
struct Bucket {
    epoch: AtomicU64,
    writers: AtomicU32,
}

/// `n` buckets, all zero, in zeroed pages the system lends only as they are
/// written (an `Epochs` per server, most of it never touched in small tests).
fn zeroed_buckets(n: usize) -> Box<[Bucket]> {
    let layout = std::alloc::Layout::array::<Bucket>(n).expect("the bucket array fits in memory");
    // SAFETY: all-zero bytes are a valid `Bucket` (two atomics holding 0); the
    // memory comes from the global allocator with the layout of `[Bucket; n]`,
    // which is what the box frees it with.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut Bucket;
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n))
    }
}

/// Write epochs shared by all cores.
pub struct Epochs {
    buckets: Box<[Bucket]>,
    generation: AtomicU64,
    /// Flushes and snapshot installs in flight.
    writers_all: AtomicU32,
    hasher: ahash::RandomState,
}

impl Default for Epochs {
    fn default() -> Self {
        Epochs {
            buckets: zeroed_buckets(BUCKETS),
            generation: AtomicU64::new(0),
            writers_all: AtomicU32::new(0),
            hasher: ahash::RandomState::with_seeds(0x6e65, 0x6f6b, 0x7620, 0x6361),
        }
    }
}

impl Epochs {
    fn bucket(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) as usize) & (BUCKETS - 1)
    }

    /// The current stamp of `key`: its bucket counter combined with the
    /// generation; `None` while a write of its bucket, or a flush, is in flight
    /// (the cache must not be used then).
    pub fn stamp(&self, key: &[u8]) -> Option<u64> {
        let i = self.bucket(key);
        // SeqCst throughout: a writer announces before its RocksDB write and bumps
        // after it, and a reader's loads must not be reordered around its lookup.
        let g = self.generation.load(Ordering::SeqCst);
        let b = self.buckets[i].epoch.load(Ordering::SeqCst);
        if self.buckets[i].writers.load(Ordering::SeqCst) != 0 || self.writers_all.load(Ordering::SeqCst) != 0 {
            return None;
        }
        Some(g.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b)
    }

    /// Apply is about to write `key` to RocksDB; [`Epochs::bump`] ends it.
    pub fn writing(&self, key: &[u8]) {
        self.buckets[self.bucket(key)].writers.fetch_add(1, Ordering::SeqCst);
    }

    /// Apply wrote `key`, announced by [`Epochs::writing`] (call after the write
    /// is in RocksDB, before replying).
    pub fn bump(&self, key: &[u8]) {
        let i = self.bucket(key);
        self.buckets[i].epoch.fetch_add(1, Ordering::SeqCst);
        self.buckets[i].writers.fetch_sub(1, Ordering::SeqCst);
    }

    /// A range of keys is about to be deleted or replaced (FLUSH, a snapshot
    /// install); [`Epochs::bump_all`] ends it.
    pub fn writing_all(&self) {
        self.writers_all.fetch_add(1, Ordering::SeqCst);
    }

    /// The range write announced by [`Epochs::writing_all`] is done (or gave up):
    /// every stamp changes.
    pub fn bump_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.writers_all.fetch_sub(1, Ordering::SeqCst);
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

    fn stamp(ep: &Epochs, k: &[u8]) -> u64 {
        ep.stamp(k).expect("no write in flight")
    }

    #[test]
    fn a_bump_invalidates() {
        let ep = Epochs::default();
        let c = ReadCache::new(1 << 20);
        let s = stamp(&ep, b"k");
        c.put(b"k", s, Some(Bytes::from_static(b"v1")));
        assert_eq!(c.get(b"k", stamp(&ep, b"k")), Some(Some(Bytes::from_static(b"v1"))));
        ep.writing(b"k");
        ep.bump(b"k");
        assert_eq!(c.get(b"k", stamp(&ep, b"k")), None, "a write makes the entry stale");
        c.put(b"k", stamp(&ep, b"k"), None);
        assert_eq!(c.get(b"k", stamp(&ep, b"k")), Some(None), "absence is cached too");
        ep.writing_all();
        ep.bump_all();
        assert_eq!(c.get(b"k", stamp(&ep, b"k")), None, "a flush makes everything stale");
    }

    /// While a write of a key's bucket (by any core) or a flush is in flight, the
    /// key has no stamp: its RocksDB value may already be new while the counter
    /// is not yet bumped.
    #[test]
    fn no_stamp_while_a_write_is_in_flight() {
        let ep = Epochs::default();
        let before = stamp(&ep, b"k");
        ep.writing(b"k");
        ep.writing(b"k");
        assert_eq!(ep.stamp(b"k"), None);
        ep.bump(b"k");
        assert_eq!(ep.stamp(b"k"), None, "a second writer of the bucket is still in flight");
        ep.bump(b"k");
        let after = stamp(&ep, b"k");
        assert_ne!(before, after);
        ep.writing_all();
        assert_eq!(ep.stamp(b"k"), None, "a flush in flight hides every stamp");
        ep.bump_all();
        assert_ne!(stamp(&ep, b"k"), after);
    }

    #[test]
    fn bounded_by_bytes_and_keeps_hot_keys() {
        let ep = Epochs::default();
        let c = ReadCache::new(64 * 1024);
        let hot = b"hot".to_vec();
        c.put(&hot, stamp(&ep, &hot), Some(Bytes::from_static(b"x")));
        for i in 0..10_000u32 {
            let k = i.to_be_bytes();
            c.put(&k, stamp(&ep, &k), Some(Bytes::from(vec![0u8; 100])));
            // touching the hot key keeps promoting it
            assert!(c.get(&hot, stamp(&ep, &hot)).is_some(), "hot key evicted at {i}");
        }
        let g = c.gens.borrow();
        let total: usize = g.young.len() + g.old.len();
        assert!(total < 1_000, "{total} entries exceed the byte bound");
    }
}
