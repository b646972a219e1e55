//! A region: one Raft group over a slot range, driven on its owning core, and the
//! proposer that turns the writes of one reactor turn into one log entry.
//!
//! Write path: `submit` queues a command; the first submit of a turn schedules a
//! flush task that yields once (so every connection with bytes ready this turn
//! gets to submit), then proposes the whole queue as one `Proposal` and hands the
//! replies produced by apply back in order. Several flushes may be in flight:
//! openraft pipelines them and the log store coalesces their fsyncs.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use futures_channel::oneshot;
use openraft::{BasicNode, Config, ServerState, SnapshotPolicy};

use super::log_store::LogStore;
use super::network::Standalone;
use super::state_machine::StateMachine;
use super::{Proposal, Raft, NODE_ID};
use crate::cluster::RegionRoute;
use crate::pb::{RaftBatch, WriteCmd};
use crate::protocol::Reply;
use crate::storage::Storage;
use crate::types::blocked::Blocked;
use crate::types::cache::Epochs;
use crate::types::now_ms;

/// Where a write's reply goes.
pub type ReplyTx = oneshot::Sender<Reply>;

/// The most commands one log entry carries.
pub const MAX_CMDS_PER_ENTRY: usize = 1 << 16;

pub struct Region {
    pub id: u32,
    pub raft: Raft,
    queue: RefCell<Vec<WriteCmd>>,
    waiters: RefCell<Vec<ReplyTx>>,
    scheduled: Cell<bool>,
    /// The leader's clock only moves forward in the entries it stamps.
    last_now: Cell<u64>,
}

fn raft_config(snapshot_logs: u64) -> Result<Config, String> {
    Config {
        cluster_name: "neokv".into(),
        heartbeat_interval: 200,
        election_timeout_min: 400,
        election_timeout_max: 800,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(snapshot_logs.max(1)),
        max_in_snapshot_log_to_keep: (snapshot_logs / 50).min(1_000),
        purge_batch_size: (snapshot_logs / 50).clamp(1, 1_000),
        max_payload_entries: 1_024,
        ..Default::default()
    }
    .validate()
    .map_err(|e| e.to_string())
}

impl Region {
    /// Open (or create) the group of `route` on the current core and wait until
    /// it leads and has applied everything it had committed before a restart.
    /// `snapshot_logs`: entries between snapshots (each snapshot lets the log be purged).
    pub async fn start(
        storage: Storage,
        epochs: Arc<Epochs>,
        blocked: Arc<Blocked>,
        route: &RegionRoute,
        snapshot_logs: u64,
    ) -> Result<Rc<Region>, String> {
        let log = LogStore::new(storage.clone(), route.id);
        let sm = StateMachine::open(storage, epochs, blocked, route.id, route.start, route.end)
            .map_err(|e| e.to_string())?;
        let raft = Raft::new(NODE_ID, Arc::new(raft_config(snapshot_logs)?), Standalone, log, sm)
            .await
            .map_err(|e| e.to_string())?;
        if !raft.is_initialized().await.map_err(|e| e.to_string())? {
            let members = BTreeMap::from([(NODE_ID, BasicNode { addr: String::new() })]);
            raft.initialize(members).await.map_err(|e| e.to_string())?;
        }
        let timeout = Some(Duration::from_secs(60));
        let m = raft.wait(timeout).state(ServerState::Leader, "standalone leader").await.map_err(|e| e.to_string())?;
        // A new leader commits a blank entry; once it is applied, so is everything before it.
        raft.wait(timeout)
            .applied_index_at_least(m.last_log_index, "apply to last log")
            .await
            .map_err(|e| e.to_string())?;
        Ok(Rc::new(Region {
            id: route.id,
            raft,
            queue: RefCell::new(Vec::new()),
            waiters: RefCell::new(Vec::new()),
            scheduled: Cell::new(false),
            last_now: Cell::new(0),
        }))
    }

    /// Queue a write; its reply arrives on `tx` once the entry holding it is applied.
    pub fn submit(self: &Rc<Self>, cmd: WriteCmd, tx: ReplyTx) {
        self.queue.borrow_mut().push(cmd);
        self.waiters.borrow_mut().push(tx);
        if !self.scheduled.replace(true) {
            let me = self.clone();
            glommio::spawn_local(async move { me.flush().await }).detach();
        }
    }

    async fn flush(self: Rc<Self>) {
        // Let every task that is ready this turn submit first.
        futures_lite::future::yield_now().await;
        self.scheduled.set(false);
        let cmds = std::mem::take(&mut *self.queue.borrow_mut());
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        if cmds.is_empty() {
            return;
        }
        let now = now_ms().max(self.last_now.get());
        self.last_now.set(now);
        // One entry holds at most MAX_CMDS_PER_ENTRY commands (each creates at most
        // one composite key, whose version must fit under the entry's index).
        let mut cmds = cmds.into_iter().peekable();
        let mut waiters = waiters.into_iter();
        while cmds.peek().is_some() {
            let chunk: Vec<WriteCmd> = cmds.by_ref().take(MAX_CMDS_PER_ENTRY).collect();
            let txs: Vec<ReplyTx> = waiters.by_ref().take(chunk.len()).collect();
            match self.raft.client_write(Proposal(RaftBatch { now_ms: now, cmds: chunk, ..Default::default() })).await {
                Ok(resp) => {
                    for (tx, r) in txs.into_iter().zip(resp.data) {
                        let _ = tx.send(r);
                    }
                }
                Err(e) => {
                    let msg = format!("ERR write not committed: {e}");
                    for tx in txs {
                        let _ = tx.send(Reply::error(msg.clone()));
                    }
                }
            }
        }
    }
}
