//! Apply's in-memory index of the members of the sets SPOP draws from.
//!
//! SPOP chooses members by position in key order (see `set::pick_with`). In
//! RocksDB, reaching a position means walking the set, and every member popped
//! before leaves a tombstone the walk steps over until a compaction drops it:
//! popping a set empty cost O(n²). The index keeps each such set's members in
//! order in memory, in chunks of a few hundred, so a position is found by a
//! pass over the chunks' lengths (O(n/256)) whatever was deleted.
//!
//! It is an exact copy, never a guess: apply loads a set by walking it once
//! (through the batch overlay, so it sees the batch's writes), then every
//! element written or deleted through [`ApplyCtx`](super::ApplyCtx) under an
//! indexed prefix updates it. A choice made from the index is the one the walk
//! would make, so a replica with a cold index (after a restart) pops the same
//! members as one with a warm index. Whatever might write elements behind
//! apply's back clears it: a FLUSH, a snapshot install, an apply that failed.
//! The prefix holds the key's version, so a key deleted and written again
//! never meets the old key's entry.

use ahash::AHashMap;
use bytes::Bytes;

use crate::storage::keys::split_subkey;

/// Most members held, over every set of the region (a set bigger than a
/// quarter of this is not indexed: SPOP walks or seeks in storage).
pub const MAX_MEMBERS: usize = 1 << 20;
/// Most bytes of members held, over every set of the region.
pub const MAX_BYTES: usize = 64 << 20;
/// Members per chunk: a chunk that reaches twice this splits.
const CHUNK: usize = 256;
/// What one member costs beside its bytes (its `Bytes` and allocation).
const OVERHEAD: usize = 48;

/// The members of one set in order, in chunks of up to `2 * CHUNK`.
#[derive(Debug, Default)]
pub struct Sorted {
    chunks: Vec<Vec<Bytes>>,
    len: usize,
    bytes: usize,
}

impl Sorted {
    /// From members already in order.
    pub fn from_sorted(members: Vec<Bytes>) -> Sorted {
        debug_assert!(members.windows(2).all(|w| w[0] < w[1]));
        let len = members.len();
        let bytes = members.iter().map(|m| m.len() + OVERHEAD).sum();
        let chunks = members.chunks(CHUNK).map(<[Bytes]>::to_vec).collect();
        Sorted { chunks, len, bytes }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The members at `positions` (ascending, each below `len`), in one pass.
    pub fn at(&self, positions: impl IntoIterator<Item = usize>) -> Vec<Bytes> {
        let mut out = Vec::new();
        let (mut c, mut before) = (0, 0);
        for i in positions {
            while c < self.chunks.len() && before + self.chunks[c].len() <= i {
                before += self.chunks[c].len();
                c += 1;
            }
            match self.chunks.get(c) {
                Some(chunk) => out.push(chunk[i - before].clone()),
                None => break,
            }
        }
        out
    }

    /// The member at position `i` (< `len`).
    pub fn nth(&self, mut i: usize) -> &Bytes {
        for c in &self.chunks {
            if i < c.len() {
                return &c[i];
            }
            i -= c.len();
        }
        panic!("position {i} past the end of a set of {}", self.len)
    }

    /// The position of the first member ≥ `m` (`len` if none).
    pub fn lower_bound(&self, m: &[u8]) -> usize {
        let c = self.chunks.partition_point(|c| c.last().is_some_and(|l| &l[..] < m));
        let before: usize = self.chunks[..c].iter().map(Vec::len).sum();
        before + self.chunks.get(c).map_or(0, |c| c.partition_point(|x| &x[..] < m))
    }

    /// The chunk `m` belongs in, and where in it (found or to insert).
    fn locate(&self, m: &[u8]) -> (usize, Result<usize, usize>) {
        let c = self.chunks.partition_point(|c| c.last().is_some_and(|l| &l[..] < m));
        let c = c.min(self.chunks.len().saturating_sub(1));
        match self.chunks.get(c) {
            Some(chunk) => (c, chunk.binary_search_by(|x| x[..].cmp(m))),
            None => (0, Err(0)),
        }
    }

    /// Add `m`; false if it was there.
    pub fn insert(&mut self, m: &[u8]) -> bool {
        let (c, at) = self.locate(m);
        let Err(at) = at else { return false };
        if self.chunks.is_empty() {
            self.chunks.push(Vec::new());
        }
        let chunk = &mut self.chunks[c];
        chunk.insert(at, Bytes::copy_from_slice(m));
        if chunk.len() >= 2 * CHUNK {
            let tail = chunk.split_off(CHUNK);
            self.chunks.insert(c + 1, tail);
        }
        self.len += 1;
        self.bytes += m.len() + OVERHEAD;
        true
    }

    /// Take `m` out; false if it was not there.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        let (c, at) = self.locate(m);
        let Ok(at) = at else { return false };
        self.chunks[c].remove(at);
        if self.chunks[c].is_empty() {
            self.chunks.remove(c);
        }
        self.len -= 1;
        self.bytes -= m.len() + OVERHEAD;
        true
    }
}

/// The sets indexed in one region, by element prefix (`Found::prefix`).
#[derive(Debug)]
pub struct MemberIndex {
    sets: AHashMap<Vec<u8>, Sorted>,
    members: usize,
    bytes: usize,
    max_members: usize,
    max_bytes: usize,
}

impl Default for MemberIndex {
    fn default() -> Self {
        MemberIndex::with_limits(MAX_MEMBERS, MAX_BYTES)
    }
}

impl MemberIndex {
    /// An index holding at most `max_members` members and `max_bytes` bytes
    /// (0: none; tests compare it with the walk).
    pub fn with_limits(max_members: usize, max_bytes: usize) -> Self {
        MemberIndex { sets: AHashMap::new(), members: 0, bytes: 0, max_members, max_bytes }
    }

    /// How many sets are indexed.
    pub fn sets(&self) -> usize {
        self.sets.len()
    }

    /// The size of the biggest set indexed.
    #[cfg(test)]
    pub fn largest(&self) -> usize {
        self.sets.values().map(Sorted::len).max().unwrap_or(0)
    }

    pub fn get(&self, prefix: &[u8]) -> Option<&Sorted> {
        self.sets.get(prefix)
    }

    /// Whether a set of `size` members could be indexed at all.
    pub fn fits(&self, size: u64) -> bool {
        size <= self.max_members as u64 / 4
    }

    /// Index the set under `prefix` (its members, in order), making room by
    /// dropping other sets. False (nothing kept) when it alone would take more
    /// than a quarter of the limits (two big sets popped in turn would
    /// otherwise evict each other, a full walk for every pop).
    pub fn load(&mut self, prefix: Vec<u8>, members: Vec<Bytes>) -> bool {
        let set = Sorted::from_sorted(members);
        if !self.fits(set.len as u64) || set.bytes > self.max_bytes / 4 {
            return false;
        }
        self.forget(&prefix);
        while self.members + set.len > self.max_members || self.bytes + set.bytes > self.max_bytes {
            let Some(victim) = self.sets.keys().next().cloned() else { break };
            self.forget(&victim);
        }
        self.members += set.len;
        self.bytes += set.bytes;
        self.sets.insert(prefix, set);
        true
    }

    /// Drop the set under `prefix` (deleted: its prefix never comes back).
    pub fn forget(&mut self, prefix: &[u8]) {
        if let Some(s) = self.sets.remove(prefix) {
            self.members -= s.len;
            self.bytes -= s.bytes;
        }
    }

    /// Forget every set (their elements may have changed behind apply's back).
    pub fn clear(&mut self) {
        *self = MemberIndex::with_limits(self.max_members, self.max_bytes);
    }

    /// An element `key` (`Cf::Subkey`) was written (`present`) or deleted.
    pub fn note(&mut self, key: &[u8], present: bool) {
        if self.sets.is_empty() {
            return;
        }
        let Some((mk, _, sub)) = split_subkey(key) else { return };
        let prefix = &key[..mk.len() + 8];
        let Some(set) = self.sets.get_mut(prefix) else { return };
        let (len, bytes) = (set.len, set.bytes);
        if present {
            set.insert(sub);
        } else {
            set.remove(sub);
        }
        self.members = self.members + set.len - len;
        self.bytes = self.bytes + set.bytes - bytes;
        if self.members > self.max_members || self.bytes > self.max_bytes {
            let prefix = prefix.to_vec();
            self.forget(&prefix);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::keys::subkey;
    use std::collections::BTreeSet;

    #[test]
    fn sorted_follows_a_btreeset_through_inserts_and_removes() {
        let mut rng = super::super::coll::Rng::new(7);
        let mut want = BTreeSet::new();
        let mut s = Sorted::default();
        for step in 0..20_000 {
            let m = format!("m{}", rng.below(3000)).into_bytes();
            if rng.below(3) == 0 {
                assert_eq!(s.remove(&m), want.remove(&m), "remove at step {step}");
            } else {
                assert_eq!(s.insert(&m), want.insert(m.clone()), "insert at step {step}");
            }
            assert_eq!(s.len(), want.len());
            if step % 997 == 0 {
                let all: Vec<Vec<u8>> = (0..s.len()).map(|i| s.nth(i).to_vec()).collect();
                assert_eq!(all, want.iter().cloned().collect::<Vec<_>>(), "order at step {step}");
                for probe in ["", "m1", "m15", "m2999", "m5", "n"] {
                    let lb = want.range(probe.as_bytes().to_vec()..).count();
                    assert_eq!(s.lower_bound(probe.as_bytes()), want.len() - lb, "lower bound of {probe:?}");
                }
            }
        }
        assert!(s.chunks.iter().all(|c| !c.is_empty() && c.len() < 2 * CHUNK));
    }

    #[test]
    fn notes_reach_only_the_indexed_set_and_the_limits_drop_it() {
        let mut idx = MemberIndex::default();
        let prefix = crate::storage::keys::subkey_prefix(3, b"s", 9);
        assert!(idx.load(prefix.clone(), vec![Bytes::from_static(b"a"), Bytes::from_static(b"c")]));
        idx.note(&subkey(3, b"s", 9, b"b"), true);
        idx.note(&subkey(3, b"s", 9, b"a"), false);
        // Another version of the same key, and another key: not this set.
        idx.note(&subkey(3, b"s", 10, b"z"), true);
        idx.note(&subkey(3, b"t", 9, b"y"), true);
        let s = idx.get(&prefix).expect("indexed");
        assert_eq!((0..s.len()).map(|i| s.nth(i).clone()).collect::<Vec<_>>(), vec!["b", "c"]);
        assert_eq!((idx.members, idx.bytes), (2, 2 + 2 * OVERHEAD));
        let big = (0..MAX_MEMBERS + 1).map(|i| Bytes::from(format!("{i:08}"))).collect::<BTreeSet<_>>();
        assert!(!idx.load(b"other".to_vec(), big.into_iter().collect()));
        assert!(idx.get(&prefix).is_some(), "a set too big to index leaves the others alone");
    }
}
