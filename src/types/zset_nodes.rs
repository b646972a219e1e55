//! Apply's cache of decoded sorted-set rank-counter nodes ([`NodeCache`]),
//! kept from one batch to the next.

/// A node's counters: (next score byte, members), by byte, none zero.
pub type Node = Vec<(u8, u64)>;

/// Apply's decoded rank-counter nodes, carried from one batch to the next
/// (with the member index, see `ApplyCtx::with_kept`), so a ZADD neither reads
/// its five nodes back from the memtable nor decodes them: every ZADD to a big
/// set rewrites the same shallow nodes, and a point read of a key the memtable
/// holds in many versions was most of a ZADD's apply. Written through: each
/// node `zset_counters` writes is also put here, so it always equals what the
/// batch leaves in storage; an absent node is kept as an empty one. Any other
/// write of a `zset_score` entry forgets its key, and whatever writes behind
/// apply's back (a FLUSH, a cross-region entry, a snapshot install, a failed
/// apply) clears it all. A key's versions are never reused, so a deleted set's
/// nodes are never asked for again. Bounded: past [`NodeCache::MAX_BYTES`]
/// (keys included) it starts again empty.
#[derive(Debug, Default)]
pub struct NodeCache {
    nodes: ahash::AHashMap<Vec<u8>, Node>,
    /// What the entries cost, keys included (see [`NodeCache::cost`]).
    bytes: usize,
}

impl NodeCache {
    /// Most bytes held (keys, counters and per-entry overhead) per region.
    pub const MAX_BYTES: usize = 32 << 20;

    /// What an entry costs: its key, its counters, the map's and the vector's
    /// overhead.
    pub(super) fn cost(key: &[u8], node: &Node) -> usize {
        key.len() + node.capacity() * std::mem::size_of::<(u8, u64)>() + 64
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub(super) fn take(&mut self, key: &[u8]) -> Option<Node> {
        let n = self.nodes.remove(key)?;
        self.bytes -= Self::cost(key, &n);
        Some(n)
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<&Node> {
        self.nodes.get(key)
    }

    pub(super) fn put(&mut self, key: Vec<u8>, node: Node) {
        let cost = Self::cost(&key, &node);
        if self.bytes + cost > Self::MAX_BYTES {
            self.clear();
        }
        self.take(&key);
        self.bytes += cost;
        self.nodes.insert(key, node);
    }

    /// Drop `key`'s node (written by other code).
    pub fn forget(&mut self, key: &[u8]) {
        self.take(key);
    }

    pub fn clear(&mut self) {
        self.nodes.clear();
        self.bytes = 0;
    }
}
