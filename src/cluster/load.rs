//! What each region hosted on this node reports of itself: its Raft log's
//! size and what retention by size did, and the writes it proposed (ops/s).
//! Written by the region's owning core (`raft::region::retention`), read on
//! any core by INFO and NEOKV.REGIONS; the figures a placement driver weighs.
//!
//! Pure data shared by all cores; no I/O.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// One region's figures (each an atomic: one writer, any number of readers).
#[derive(Debug, Default)]
pub struct RegionLoad {
    /// Bytes of the entries its Raft log holds.
    pub log_bytes: AtomicU64,
    /// Entries its Raft log holds.
    pub log_entries: AtomicU64,
    /// Bytes of the entries appended since its last snapshot.
    pub log_bytes_since_snapshot: AtomicU64,
    /// Snapshots taken because the log passed its size limit.
    pub snapshots_by_size: AtomicU64,
    /// Writes proposed here as leader (cumulative).
    pub writes: AtomicU64,
    /// Writes per second, over the last measuring period.
    pub ops_per_sec: AtomicU64,
    /// What is being done to the region, or why something is not
    /// (`raft::region::split`); empty: nothing.
    operation: std::sync::Mutex<String>,
}

impl RegionLoad {
    pub fn get(&self, f: impl Fn(&RegionLoad) -> &AtomicU64) -> u64 {
        f(self).load(Ordering::Relaxed)
    }

    pub fn set(&self, f: impl Fn(&RegionLoad) -> &AtomicU64, v: u64) {
        f(self).store(v, Ordering::Relaxed)
    }

    pub fn operation(&self) -> String {
        self.operation.lock().map(|o| o.clone()).unwrap_or_default()
    }

    pub fn set_operation(&self, what: &str) {
        if let Ok(mut o) = self.operation.lock() {
            if *o != what {
                *o = what.to_string();
            }
        }
    }
}

/// Every hosted region's [`RegionLoad`], by id.
#[derive(Debug, Default)]
pub struct Load {
    regions: RwLock<BTreeMap<u32, Arc<RegionLoad>>>,
}

impl Load {
    /// The figures of `region`, made on first use (a region that starts here).
    pub fn region(&self, region: u32) -> Arc<RegionLoad> {
        if let Some(l) = self.get(region) {
            return l;
        }
        let mut m = self.regions.write().unwrap_or_else(|e| e.into_inner());
        m.entry(region).or_default().clone()
    }

    pub fn get(&self, region: u32) -> Option<Arc<RegionLoad>> {
        self.regions.read().unwrap_or_else(|e| e.into_inner()).get(&region).cloned()
    }

    /// The sum of one figure over every region.
    pub fn total(&self, f: impl Fn(&RegionLoad) -> &AtomicU64) -> u64 {
        self.regions.read().unwrap_or_else(|e| e.into_inner()).values().map(|l| l.get(&f)).sum()
    }
}
