//! Active expiry: on the core that owns a region, a background task walks the
//! region's metadata a slice at a time and proposes the deletion of keys whose
//! TTL has passed (Redis's active-expire idea, over an ordered store). Apply
//! re-checks each key against the entry's time, so a key whose TTL was extended
//! meanwhile survives. Passive expiry keeps reads correct in between.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_channel::oneshot;

use super::Core;
use crate::cluster::RegionRoute;
use crate::pb::{Op, WriteCmd};
use crate::protocol::Reply;
use crate::raft::region::Region;
use crate::types::keyspace::walk_keys;
use crate::types::Reader;

/// Keys examined per tick, and ticks per second (Redis's default hz is 10).
const SLICE: usize = 1_000;
const TICK: Duration = Duration::from_millis(100);
/// At most this many keys are deleted per proposal.
const MAX_PER_PROPOSAL: usize = 500;

pub async fn run(core: Rc<Core>, region: Rc<Region>, route: RegionRoute) {
    let mut after: Option<Vec<u8>> = None;
    loop {
        glommio::timer::sleep(TICK).await;
        let reader = Reader::new(&core.shared.storage);
        let now = reader.now_ms;
        let mut expired = Vec::new();
        let next = walk_keys(
            &reader,
            (route.start, route.end),
            after.as_deref(),
            SLICE,
            |sk| {
                if sk.meta.is_expired(now) && expired.len() < MAX_PER_PROPOSAL {
                    expired.push(sk.key);
                }
            },
        );
        after = next.unwrap_or(None);
        if expired.is_empty() {
            continue;
        }
        let (tx, rx) = oneshot::channel();
        region.submit(
            WriteCmd {
                op: Op::ExpireKeys as i32,
                keys: expired,
                ..Default::default()
            },
            tx,
        );
        if let Ok(Reply::Int(n)) = rx.await {
            core.shared
                .expired_keys
                .fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}
