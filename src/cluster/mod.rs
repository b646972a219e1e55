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

/// One region: the slot range `[start, end)` and the core that owns it on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionRoute {
    pub id: u32,
    pub start: u16,
    pub end: u32,
    pub core: usize,
}

/// Slot → region → core. Immutable once built; each core holds an `Rc` of it.
#[derive(Debug, Clone)]
pub struct Router {
    regions: Vec<RegionRoute>,
    slot_region: Vec<u32>,
}

impl Router {
    /// Split the slots into `regions` contiguous ranges, owned round-robin by `cores` cores.
    pub fn standalone(regions: usize, cores: usize) -> Router {
        let regions = regions.clamp(1, SLOT_COUNT as usize);
        let cores = cores.max(1);
        let mut out = Vec::with_capacity(regions);
        let mut slot_region = vec![0u32; SLOT_COUNT as usize];
        for i in 0..regions {
            let start = (SLOT_COUNT as usize * i / regions) as u32;
            let end = (SLOT_COUNT as usize * (i + 1) / regions) as u32;
            for s in start..end {
                slot_region[s as usize] = i as u32;
            }
            out.push(RegionRoute { id: i as u32, start: start as u16, end, core: i % cores });
        }
        Router { regions: out, slot_region }
    }

    pub fn regions(&self) -> &[RegionRoute] {
        &self.regions
    }

    pub fn region(&self, id: u32) -> &RegionRoute {
        &self.regions[id as usize]
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
}
