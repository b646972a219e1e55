//! Retention of a region's Raft log by size as well as by count (TiKV's
//! `raft-log-gc-size-limit` beside its count limit).
//!
//! openraft snapshots every `--raft-snapshot-logs` entries and then purges
//! all but the last 1,000 entries the snapshot covers (kept for followers that
//! lag a little). Counted in entries, that can be far more bytes than the
//! data: one entry carries a reactor turn's writes, so 50,000 entries of
//! batched 1 KB SETs are gigabytes. This task adds the bound in bytes
//! (`--raft-log-max-mb`): once the entries appended since the last snapshot
//! hold that much, it asks for a snapshot at once (cheap: a snapshot here is
//! the applied state made durable, `raft::state_machine`; the data is read
//! from RocksDB only when one is shipped); and once a snapshot covers them, it
//! purges the log behind the snapshot down to a quarter of the limit.
//!
//! Neither ever removes what a lagging voter still needs without a way back:
//! openraft purges nothing a replication to a follower is reading, and a
//! follower whose next entry is gone is sent a snapshot instead.
//!
//! It also publishes the log's figures and the region's write rate
//! (`cluster::load`), every half second.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::async_runtime::WatchReceiver;

use super::Region;
use crate::cluster::load::RegionLoad;
use crate::raft::log_store::LogSizes;

const TICK: Duration = Duration::from_millis(500);

/// How long a snapshot asked for may take before it is asked for again.
const SNAPSHOT_PATIENCE: Duration = Duration::from_secs(30);

/// What stays behind a snapshot, as a part of the limit.
const KEEP_DIVISOR: u64 = 4;

pub(super) async fn run(region: Rc<Region>, sizes: Rc<RefCell<LogSizes>>, load: Arc<RegionLoad>, max_bytes: u64) {
    let metrics = region.raft.metrics();
    // The snapshot asked for (when, and the snapshot index before it).
    let mut asked: Option<(Instant, Option<u64>)> = None;
    let mut purge_asked = 0u64;
    let (mut rate_at, mut rate_writes) = (Instant::now(), load.get(|l| &l.writes));
    let mut wake = None;
    loop {
        // Every tick, and as soon as the log passes its limit (the log store
        // tells: under load a tick lets tens of megabytes through).
        match wake.take() {
            Some(rx) => {
                futures_lite::future::or(
                    async {
                        let _ = rx.await;
                    },
                    glommio::timer::sleep(TICK),
                )
                .await
            }
            // A snapshot under way is looked for more often: the next may be due.
            None if asked.is_some() => glommio::timer::sleep(TICK / 10).await,
            None => glommio::timer::sleep(TICK).await,
        }
        let (snapshot, purged) = {
            let m = metrics.borrow_watched();
            if m.running_state.is_err() {
                return;
            }
            (m.snapshot.map(|l| l.index), m.purged.map(|l| l.index))
        };
        let (total, count, since) = {
            let s = sizes.borrow();
            (s.total(), s.count() as u64, snapshot.map_or(s.total(), |i| s.after(i)))
        };
        load.set(|l| &l.log_bytes, total);
        load.set(|l| &l.log_entries, count);
        load.set(|l| &l.log_bytes_since_snapshot, since);
        let elapsed = rate_at.elapsed();
        if elapsed >= Duration::from_secs(1) {
            let writes = load.get(|l| &l.writes);
            load.set(|l| &l.ops_per_sec, ((writes - rate_writes) as f64 / elapsed.as_secs_f64()) as u64);
            (rate_at, rate_writes) = (Instant::now(), writes);
        }
        if max_bytes == 0 {
            continue;
        }
        if asked.is_some_and(|(at, before)| snapshot != before || at.elapsed() > SNAPSHOT_PATIENCE) {
            asked = None;
        }
        if since >= max_bytes && asked.is_none() {
            if region.raft.trigger().snapshot().await.is_err() {
                return;
            }
            load.snapshots_by_size.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            asked = Some((Instant::now(), snapshot));
        }
        if asked.is_none() {
            wake = Some(sizes.borrow_mut().wake_after(snapshot.unwrap_or(0), max_bytes));
        }
        let Some(snapshot) = snapshot else { continue };
        let point = sizes.borrow().purge_point(snapshot, max_bytes / KEEP_DIVISOR);
        if let Some(p) = point.filter(|&p| p > purged.unwrap_or(0) && p > purge_asked) {
            if region.raft.trigger().purge_log(p).await.is_err() {
                return;
            }
            purge_asked = p;
        }
    }
}
