//! Active expiry: on the core that owns a region, a background task reads the
//! region's expire index (keys in expiry order within each slot) and proposes
//! the deletion of the keys that are due, as Redis's active-expire cycle does for
//! its expires dict. The cost is proportional to the keys with TTLs that are due,
//! not to the keyspace. Apply re-checks each key against the entry's time, so a
//! key whose TTL was extended meanwhile survives; passive expiry keeps reads
//! correct in between.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use futures_channel::oneshot;

use super::Core;
use crate::cluster::RegionRoute;
use crate::pb::{self, write_cmd::Op, WriteCmd};
use crate::protocol::Reply;
use crate::raft::region::Region;
use crate::storage::keys::{decode_expire_index_key, decode_meta_key_in, slot_lower_bound, slot_upper_bound};
use crate::storage::{Cf, Storage, StorageError};
use crate::types::now_ms;

/// Redis's default hz is 10.
const TICK: Duration = Duration::from_millis(100);
/// Slots looked at per tick (empty slots are skipped by the seek itself).
const SLOTS_PER_TICK: usize = 256;
/// Due keys proposed per tick.
const MAX_PER_PROPOSAL: usize = 500;

/// Collect up to `MAX_PER_PROPOSAL` due (key, expire) index entries of slots
/// `[from, route.end)`, visiting at most `SLOTS_PER_TICK` slots. Returns the slot
/// to continue from (`route.start` again once the range is done).
pub fn collect_due(
    storage: &Storage,
    route: &RegionRoute,
    from: u32,
    now: u64,
    out: &mut Vec<(Bytes, u64, u16)>,
) -> Result<u32, StorageError> {
    let (lo, hi) = (slot_lower_bound(route.start), slot_upper_bound(route.end));
    storage.with_iter(Cf::ExpireIndex, &lo, &hi, |c| {
        let mut slot = from;
        for _ in 0..SLOTS_PER_TICK {
            if slot >= route.end {
                return route.start as u32;
            }
            c.seek(&(slot as u16).to_be_bytes());
            let Some((s, _, _)) = c.key().and_then(decode_expire_index_key) else {
                return route.start as u32;
            };
            // Jump over slots without TTLs.
            slot = s as u32;
            while let Some((s2, at, mk)) = c.key().and_then(decode_expire_index_key) {
                if s2 as u32 != slot || at > now {
                    break;
                }
                if let Some((db, _, key)) = decode_meta_key_in(&mk) {
                    out.push((Bytes::copy_from_slice(key), at, db));
                }
                if out.len() >= MAX_PER_PROPOSAL {
                    return slot;
                }
                c.next();
            }
            slot += 1;
        }
        slot
    })
}

pub async fn run(core: Rc<Core>, region: Rc<Region>) {
    let mut next = region.span().start as u32;
    loop {
        glommio::timer::sleep(TICK).await;
        // Tests: keys that expire stay stored (only reads find them expired).
        if crate::failpoint::value("active-expiry-off").is_some() {
            continue;
        }
        // In a cluster only the region's leader proposes deletions.
        if let Some(nodes) = &core.shared.nodes {
            if nodes.leader(region.id) != Some(nodes.me) {
                continue;
            }
        }
        // The region's slots as they are now (a split takes some away).
        let d = region.span();
        let route = RegionRoute { id: d.id, start: d.start, end: d.end, epoch: d.epoch, core: core.id };
        if next < d.start as u32 || next >= d.end {
            next = d.start as u32;
        }
        let mut due = Vec::new();
        match collect_due(&core.shared.storage, &route, next, now_ms(), &mut due) {
            Ok(n) => next = n,
            Err(e) => {
                eprintln!("active expiry, region {}: {e}", route.id);
                continue;
            }
        }
        if due.is_empty() {
            continue;
        }
        let mut op = pb::ExpireKeys::default();
        for (key, at, db) in due {
            op.keys.push(key);
            op.at_ms.push(at);
            op.dbs.push(db as u32);
        }
        if op.dbs.iter().all(|&d| d == 0) {
            op.dbs.clear();
        }
        let (tx, rx) = oneshot::channel();
        // Refused by apply if the region split since the keys were found.
        region.submit(WriteCmd { op: Some(Op::ExpireKeys(op)), db: 0, epoch: d.epoch + 1 }, tx);
        if let Ok(Ok(Reply::Int(n))) = rx.await {
            core.shared.expired_keys.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}
