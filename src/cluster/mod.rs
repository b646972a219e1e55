//! Slot hashing and slot → region → core routing.
//!
//! Owns: Redis Cluster's key → slot function (CRC16/XMODEM with `{hash tags}`)
//! and the table that maps each of the 16384 slots to a region and the core that
//! owns it. Pure data: no I/O, no Raft. Depends on nothing else in the crate.

pub mod load;
pub mod nodes;
pub mod placement;

pub const SLOT_COUNT: u32 = 16384;

/// Redis Cluster's `keyHashSlot`: if the key has a non-empty `{...}` section, only
/// that part is hashed.
pub fn key_slot(key: &[u8]) -> u16 {
    let part = match memchr::memchr(b'{', key) {
        Some(s) => match memchr::memchr(b'}', &key[s + 1..]) {
            Some(e) if e > 0 => &key[s + 1..s + 1 + e],
            _ => key,
        },
        None => key,
    };
    crc16::State::<crc16::XMODEM>::calculate(part) & 0x3fff
}

/// One region: the slot range `[start, end)`, its epoch and the core that owns
/// it on this node.
///
/// The epoch counts the changes of the region's slot range (a split or a
/// merge; never a membership change): every region that ever covered a slot
/// has a lower epoch than the one covering it now, so of two descriptions of
/// a slot the higher epoch is the newer ([`Router::learn`]), and a write
/// routed by an older epoch is refused where it would land in the wrong
/// region (`raft::state_machine`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionRoute {
    pub id: u32,
    pub start: u16,
    pub end: u32,
    pub epoch: u64,
    pub core: usize,
}

/// A region's id, slot range and epoch as nodes tell each other and keep (in
/// its applied-state record, `raft::codec::decode_span`): a [`RegionRoute`]
/// without the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    pub id: u32,
    pub start: u16,
    pub end: u32,
    pub epoch: u64,
}

/// The id of the region a split at slot `at` makes, its epoch `epoch` (the
/// parent's after the split): unique for all time, since the epoch of the
/// region covering a slot only grows. The regions of a fresh cluster are
/// `0..--regions` (epoch 0, below 16384); a split's child is
/// `epoch << 14 | at`, at least 16384.
pub fn child_id(epoch: u64, at: u16) -> Option<u32> {
    let id = (epoch << 14) | at as u64;
    (epoch >= 1 && id < u32::MAX as u64).then_some(id as u32)
}

/// Slot → region → core. Immutable once built: a change (a split applied
/// here, a region learned from another node) builds a new one, which
/// `shard::Shared::router` hands out from then on.
#[derive(Debug, Clone)]
pub struct Router {
    /// Ascending by id.
    regions: Vec<RegionRoute>,
    /// Each slot's region, as a position in `regions`.
    slot_region: Vec<u32>,
    /// The epoch of what told this node the slot's region: the region's,
    /// except for slots of a region seen cut by a newer one it was not told
    /// of (they keep the epoch of the region's older range, so writes routed
    /// there are refused by the region's apply rather than taken).
    slot_epoch: Vec<u64>,
    cores: usize,
}

impl Router {
    /// Split the slots into `regions` contiguous ranges, owned round-robin by `cores` cores.
    pub fn standalone(regions: usize, cores: usize) -> Router {
        let regions = regions.clamp(1, SLOT_COUNT as usize);
        let cores = cores.max(1);
        let out = (0..regions)
            .map(|i| RegionRoute {
                id: i as u32,
                start: (SLOT_COUNT as usize * i / regions) as u16,
                end: (SLOT_COUNT as usize * (i + 1) / regions) as u32,
                epoch: 0,
                core: i % cores,
            })
            .collect();
        Router::build(out, cores)
    }

    fn build(mut regions: Vec<RegionRoute>, cores: usize) -> Router {
        regions.sort_by_key(|r| r.id);
        let mut slot_region = vec![u32::MAX; SLOT_COUNT as usize];
        let mut slot_epoch = vec![0; SLOT_COUNT as usize];
        for (i, r) in regions.iter().enumerate() {
            for s in r.start as u32..r.end {
                slot_region[s as usize] = i as u32;
                slot_epoch[s as usize] = r.epoch;
            }
        }
        Router { regions, slot_region, slot_epoch, cores }
    }

    /// Every region, ascending by id.
    pub fn regions(&self) -> &[RegionRoute] {
        &self.regions
    }

    pub fn get(&self, id: u32) -> Option<&RegionRoute> {
        self.regions.binary_search_by_key(&id, |r| r.id).ok().map(|i| &self.regions[i])
    }

    /// The core that owns `id` on this node (`None`: no such region here).
    pub fn core_of(&self, id: u32) -> Option<usize> {
        self.get(id).map(|r| r.core)
    }

    pub fn region_of_slot(&self, slot: u16) -> &RegionRoute {
        &self.regions[self.slot_region[slot as usize] as usize]
    }

    pub fn region_of_key(&self, key: &[u8]) -> &RegionRoute {
        self.region_of_slot(key_slot(key))
    }

    /// The single region all `keys` belong to, or `None` if they span regions.
    pub fn common_region<'a>(&self, keys: impl IntoIterator<Item = &'a [u8]>) -> Option<u32> {
        let mut region = None;
        for k in keys {
            let r = self.region_of_key(k).id;
            match region {
                None => region = Some(r),
                Some(x) if x != r => return None,
                _ => {}
            }
        }
        Some(region.unwrap_or(0))
    }

    /// This router with `descs` taken in: each claims the slots of its range
    /// now held at a lower epoch (or by itself); a region left with no slot
    /// is gone. A new region goes to the core of the region it takes its
    /// first slot from. `None`: nothing changed.
    pub fn learn(&self, descs: &[Descriptor]) -> Option<Router> {
        let mut slots: Vec<(u32, u64)> =
            self.slot_region.iter().zip(&self.slot_epoch).map(|(&i, &e)| (self.regions[i as usize].id, e)).collect();
        let mut cores: std::collections::BTreeMap<u32, usize> = self.regions.iter().map(|r| (r.id, r.core)).collect();
        let mut changed = false;
        for d in descs {
            for s in &mut slots[d.start as usize..d.end as usize] {
                let (id, epoch) = *s;
                if (id, epoch) != (d.id, d.epoch) && (d.epoch > epoch || (id == d.id && d.epoch >= epoch)) {
                    if !cores.contains_key(&d.id) {
                        let core = cores.get(&id).copied().unwrap_or(0);
                        cores.insert(d.id, core);
                    }
                    *s = (d.id, d.epoch);
                    changed = true;
                }
            }
        }
        if !changed {
            return None;
        }
        // A region's range: its first run of slots (a region is one
        // contiguous range; one seen cut by a newer region it was not told
        // of keeps routing its other run, see `runs`).
        let mut out: Vec<RegionRoute> = Vec::new();
        let mut s = 0usize;
        while s < slots.len() {
            let (id, epoch) = slots[s];
            let mut e = s;
            while e < slots.len() && slots[e].0 == id {
                e += 1;
            }
            if !out.iter().any(|r| r.id == id) {
                out.push(RegionRoute { id, start: s as u16, end: e as u32, epoch, core: cores[&id] });
            }
            s = e;
        }
        let mut r = Router::build(out, self.cores);
        for (slot, &(id, epoch)) in slots.iter().enumerate() {
            if let Ok(i) = r.regions.binary_search_by_key(&id, |x| x.id) {
                r.slot_region[slot] = i as u32;
                r.slot_epoch[slot] = epoch;
            }
        }
        Some(r)
    }

    /// The epoch a write to `slot` is routed by (see `slot_epoch`).
    pub fn slot_epoch(&self, slot: u16) -> u64 {
        self.slot_epoch[slot as usize]
    }

    /// The slots as runs `[start, end)` of one region each, ascending
    /// (CLUSTER SLOTS, SHARDS, NODES).
    pub fn runs(&self) -> Vec<(u16, u32, &RegionRoute)> {
        let mut out = Vec::new();
        let mut s = 0usize;
        while s < self.slot_region.len() {
            let i = self.slot_region[s];
            let mut e = s;
            while e < self.slot_region.len() && self.slot_region[e] == i {
                e += 1;
            }
            out.push((s as u16, e as u32, &self.regions[i as usize]));
            s = e;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from `CLUSTER KEYSLOT` on a real Redis.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"), "empty tag hashes the whole key");
        assert_ne!(key_slot(b"foo{}{bar}"), key_slot(b"bar"));
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn router_covers_every_slot_once() {
        for (regions, cores) in [(1, 1), (4, 2), (7, 3), (16384, 2)] {
            let r = Router::standalone(regions, cores);
            assert_eq!(r.regions().len(), regions);
            let mut next = 0u32;
            for reg in r.regions() {
                assert_eq!(reg.start as u32, next, "contiguous");
                assert!(reg.end > reg.start as u32);
                assert!(reg.core < cores);
                next = reg.end;
            }
            assert_eq!(next, SLOT_COUNT);
            for s in [0u16, 1, 8191, 16383] {
                let reg = r.region_of_slot(s);
                assert!(reg.start <= s && (s as u32) < reg.end);
            }
        }
    }

    #[test]
    fn a_router_learns_newer_descriptors_and_ignores_older_ones() {
        let r = Router::standalone(2, 2);
        // Region 1 ([8192, 16384)) splits at 12000: both at epoch 1.
        let child = child_id(1, 12000).unwrap();
        assert!(child >= SLOT_COUNT);
        let split = [
            Descriptor { id: 1, start: 8192, end: 12000, epoch: 1 },
            Descriptor { id: child, start: 12000, end: 16384, epoch: 1 },
        ];
        let r2 = r.learn(&split).unwrap();
        assert_eq!(r2.regions().len(), 3);
        assert_eq!(r2.region_of_slot(12000).id, child);
        assert_eq!(r2.region_of_slot(11999).id, 1);
        assert_eq!(r2.get(1).unwrap().end, 12000);
        // The child lives on its parent's core here.
        assert_eq!(r2.core_of(child), r.core_of(1));
        // Told again, or told the parent's old range: nothing changes.
        assert!(r2.learn(&split).is_none());
        assert!(r2.learn(&[Descriptor { id: 1, start: 8192, end: 16384, epoch: 0 }]).is_none());
        // Only the child heard of: the parent keeps the rest.
        let r3 = r.learn(&split[1..]).unwrap();
        assert_eq!(r3.get(1).unwrap().end, 12000);
        // A newer region in the middle of an older one: the older one routes
        // both of its runs, and CLUSTER SLOTS shows three.
        let mid = child_id(2, 10000).unwrap();
        let r4 = r.learn(&[Descriptor { id: mid, start: 10000, end: 11000, epoch: 2 }]).unwrap();
        assert_eq!(r4.region_of_slot(11000).id, 1);
        assert_eq!(r4.slot_epoch(11000), 0);
        // The parent's newer range, learned without the middle: the slots it
        // no longer claims keep its old epoch (writes there get refused).
        let r5 = r.learn(&split[..1]).unwrap();
        assert_eq!((r5.region_of_slot(12000).id, r5.slot_epoch(12000)), (1, 0));
        assert_eq!((r5.region_of_slot(8192).id, r5.slot_epoch(8192)), (1, 1));
        assert_eq!(r4.region_of_slot(10500).id, mid);
        let runs: Vec<(u16, u32, u32)> = r4.runs().iter().map(|(s, e, r)| (*s, *e, r.id)).collect();
        assert_eq!(runs, [(0, 8192, 0), (8192, 10000, 1), (10000, 11000, mid), (11000, 16384, 1)]);
    }
}
