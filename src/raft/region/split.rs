//! Splits by size: the leader of a region whose data passes
//! `--region-split-mb` proposes a split at the slot boundary nearest the
//! middle of its bytes (`pb::Split`, applied by every replica at the same
//! index: `raft::state_machine`).
//!
//! RocksDB's size estimate leaves out the memtables, where a young region
//! lives entirely, so the bytes are counted: a scan of the region's slots
//! (on the blocking pool), made only when the estimate plus the region's
//! part of the memtables (its part of the slots, twice over) could pass the
//! limit, at most once per [`COUNT_EVERY`] (per [`REFUSED_WAIT`] after a
//! region found it cannot split).
//!
//! What it is doing, or why it does not, is the region's `operation`
//! (`cluster::load`, shown by NEOKV.REGIONS).

use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use openraft::async_runtime::WatchReceiver;

use super::Region;
use crate::cluster::load::RegionLoad;
use crate::cluster::{child_id, Descriptor, SLOT_COUNT};
use crate::pb::write_cmd::Op;
use crate::pb::WriteCmd;
use crate::protocol::Reply;
use crate::storage::Storage;

const TICK: Duration = Duration::from_secs(1);

/// The least time between two counts of a region's bytes.
const COUNT_EVERY: Duration = Duration::from_secs(5);

/// The time between counts of a region that could not split.
const REFUSED_WAIT: Duration = Duration::from_secs(60);

/// Where to split a region starting at slot `start` whose slots hold
/// `bytes` (`[i]`: slot `start + i`): the slot boundary that leaves the two
/// halves closest in size, each with at least one slot and one byte. `None`:
/// no such boundary (one slot, or every byte in one slot at an end).
pub fn split_point(start: u16, bytes: &[u64]) -> Option<u16> {
    let total: u64 = bytes.iter().sum();
    let mut left = 0u64;
    let mut best: Option<(u64, usize)> = None;
    for (i, b) in bytes.iter().enumerate().take(bytes.len().saturating_sub(1)) {
        left += b;
        let right = total - left;
        if left == 0 || right == 0 {
            continue;
        }
        let gap = left.abs_diff(right);
        if best.is_none_or(|(g, _)| gap < g) {
            best = Some((gap, i + 1));
        }
    }
    best.map(|(_, i)| start + i as u16)
}

pub(super) async fn run(region: Rc<Region>, storage: Storage, limit: u64, load: Arc<RegionLoad>) {
    if limit == 0 {
        return;
    }
    let Some(nodes) = region.nodes.clone() else { return };
    let mut counted: Option<Instant> = None;
    // How long after a count the next may come: longer after a refusal (a
    // region that cannot split is not scanned every few seconds).
    let mut wait = COUNT_EVERY;
    loop {
        glommio::timer::sleep(TICK).await;
        if region.raft.metrics().borrow_watched().running_state.is_err() {
            return;
        }
        if nodes.leader(region.id) != Some(nodes.me) {
            load.set_operation("");
            continue;
        }
        let d = region.span();
        let estimate = crate::raft::snapshot::ranges(d.id, d.start, d.end)
            .iter()
            .map(|(_, cf, from, to)| storage.range_bytes(*cf, from, to))
            .sum::<u64>();
        // The region's part of the memtables, as its part of the slots (keys
        // hash evenly over slots), twice over for a skewed one.
        let memtable = storage.memtable_bytes() * 2 * (d.end - d.start as u32) as u64 / SLOT_COUNT as u64;
        if estimate < limit && estimate + memtable < limit {
            load.set_operation("");
            continue;
        }
        if counted.is_some_and(|t| t.elapsed() < wait) {
            continue;
        }
        counted = Some(Instant::now());
        wait = COUNT_EVERY;
        let s = storage.clone();
        let bytes = match glommio::executor().spawn_blocking(move || s.slot_bytes(d.start, d.end)).await {
            Ok(b) => b,
            Err(e) => {
                eprintln!("region {}: count its bytes for a split: {e}", d.id);
                continue;
            }
        };
        let total: u64 = bytes.iter().sum();
        if total < limit {
            load.set_operation("");
            continue;
        }
        let Some(at) = split_point(d.start, &bytes) else {
            load.set_operation(&format!(
                "split refused: {total} bytes, over the split size, in {} (one slot cannot split)",
                one_slot(d)
            ));
            wait = REFUSED_WAIT;
            continue;
        };
        if !nodes.status(region.id).learners.is_empty() {
            load.set_operation("split waits: a replica is being added");
            continue;
        }
        let epoch = d.epoch + 1;
        let Some(child) = child_id(epoch, at) else {
            load.set_operation("split refused: no region id left for this slot");
            continue;
        };
        load.set_operation(&format!("split at slot {at} ({total} bytes)"));
        let split = crate::pb::Split { at: at as u32, child, epoch };
        let (tx, rx) = oneshot::channel();
        // Stamped with the epoch it was decided at: a split applied meanwhile
        // makes apply refuse it.
        region.submit(WriteCmd { op: Some(Op::Split(split)), db: 0, epoch }, tx);
        match rx.await {
            Ok(Ok(Reply::Error(e))) => eprintln!("region {}: split at slot {at} not applied: {e}", d.id),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => eprintln!("region {}: split at slot {at} not applied: {e}", d.id),
            Err(_) => return,
        }
        load.set_operation("");
        counted = None;
    }
}

/// How a region of one slot (or whose bytes sit in one slot) is named in
/// its refusal.
fn one_slot(d: Descriptor) -> String {
    if d.end - d.start as u32 == 1 {
        format!("slot {}", d.start)
    } else {
        format!("one slot of {}-{}", d.start, d.end - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_splits_where_its_bytes_halve() {
        assert_eq!(split_point(100, &[10, 10, 10, 10]), Some(102));
        assert_eq!(split_point(0, &[1, 1, 100, 1]), Some(2));
        assert_eq!(split_point(0, &[50, 0, 0, 50]), Some(1));
        // One slot, or every byte in one end slot: nowhere.
        assert_eq!(split_point(7, &[100]), None);
        assert_eq!(split_point(7, &[100, 0, 0]), None);
        assert_eq!(split_point(7, &[0, 0, 100]), None);
        // Bytes in one middle slot: a side gets it, the other the rest.
        assert_eq!(split_point(0, &[1, 100, 1]), Some(1));
    }
}
