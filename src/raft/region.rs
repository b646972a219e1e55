//! A region: one Raft group over a slot range, driven on its owning core, and the
//! proposer that turns the writes of one reactor turn into one log entry.
//!
//! Write path: `submit` queues a command; the first submit of a turn schedules a
//! flush task that yields once (so every connection with bytes ready this turn
//! gets to submit), then proposes the whole queue as one `Proposal` and hands the
//! replies produced by apply back in order. Several flushes may be in flight:
//! openraft pipelines them and the log store coalesces their fsyncs.
//!
//! A transaction with watched keys is *fenced* (`submit_fenced`): the proposer
//! stops proposing, waits until everything proposed before it is applied, checks
//! the watched keys against what apply recorded (`types::watches`), and proposes
//! the transaction only if none changed, so the check and the transaction are
//! adjacent in the log and every replica applies the same thing. Writes that
//! arrive meanwhile wait in the queue, in order.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
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
use crate::types::watches::{Watched, Watches};
use crate::types::write::Programs;

/// Where a write's reply goes.
pub type ReplyTx = oneshot::Sender<Reply>;

/// The most commands one log entry carries.
pub const MAX_CMDS_PER_ENTRY: usize = 1 << 16;

/// What a region's state machine shares with the rest of the node.
#[derive(Clone)]
pub struct RegionDeps {
    pub storage: Storage,
    /// Write epochs that keep every core's read cache exact.
    pub epochs: Arc<Epochs>,
    /// Clients blocked on keys, woken after a write to their key lands.
    pub blocked: Arc<Blocked>,
    /// Keys clients watch, told what each batch modified.
    pub watches: Arc<Watches>,
    /// Runs transactions inside apply.
    pub programs: Option<Arc<dyn Programs>>,
    /// Where keyspace events go (the node's Pub/Sub).
    pub notify: Option<Arc<dyn crate::types::notify::Sink>>,
}

/// A transaction whose watched keys must not have changed before it runs.
pub struct Fenced {
    /// `None`: nothing to write (only keyless commands were queued).
    pub cmd: Option<WriteCmd>,
    pub watched: Vec<Watched>,
    /// The transaction's result, or a null array if a watched key changed.
    pub tx: ReplyTx,
}

enum Item {
    Cmd(WriteCmd, ReplyTx),
    Fenced(Fenced),
}

pub struct Region {
    pub id: u32,
    pub raft: Raft,
    storage: Storage,
    watches: Arc<Watches>,
    queue: RefCell<VecDeque<Item>>,
    scheduled: Cell<bool>,
    /// A fenced transaction is being checked: nothing else is proposed.
    fenced: Cell<bool>,
    /// Proposals not yet answered by apply.
    inflight: Cell<usize>,
    /// Who waits for `inflight` to reach zero.
    idle: RefCell<Vec<oneshot::Sender<()>>>,
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
    pub async fn start(deps: RegionDeps, route: &RegionRoute, snapshot_logs: u64) -> Result<Rc<Region>, String> {
        let log = LogStore::new(deps.storage.clone(), route.id);
        let (storage, watches) = (deps.storage.clone(), deps.watches.clone());
        let sm = StateMachine::open(deps, route.id, route.start, route.end).map_err(|e| e.to_string())?;
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
            storage,
            watches,
            queue: RefCell::new(VecDeque::new()),
            scheduled: Cell::new(false),
            fenced: Cell::new(false),
            inflight: Cell::new(0),
            idle: RefCell::new(Vec::new()),
            last_now: Cell::new(0),
        }))
    }

    /// Queue a write; its reply arrives on `tx` once the entry holding it is applied.
    pub fn submit(self: &Rc<Self>, cmd: WriteCmd, tx: ReplyTx) {
        self.queue.borrow_mut().push_back(Item::Cmd(cmd, tx));
        self.schedule();
    }

    /// Queue a transaction with watched keys (see the module doc).
    pub fn submit_fenced(self: &Rc<Self>, f: Fenced) {
        self.queue.borrow_mut().push_back(Item::Fenced(f));
        self.schedule();
    }

    fn schedule(self: &Rc<Self>) {
        if !self.scheduled.replace(true) {
            let me = self.clone();
            glommio::spawn_local(async move { me.flush().await }).detach();
        }
    }

    /// The time for the next entry.
    fn stamp(&self) -> u64 {
        let now = now_ms().max(self.last_now.get());
        self.last_now.set(now);
        now
    }

    async fn flush(self: Rc<Self>) {
        // Let every task that is ready this turn submit first.
        futures_lite::future::yield_now().await;
        self.scheduled.set(false);
        if self.fenced.get() {
            // The fence holder proposes what queued up once it is done.
            return;
        }
        loop {
            let (cmds, waiters, fence) = self.take_until_fence();
            if !cmds.is_empty() {
                let now = self.stamp();
                self.propose(cmds, waiters, now).await;
            }
            let Some(f) = fence else { break };
            self.fenced.set(true);
            self.run_fenced(f).await;
            self.fenced.set(false);
            if self.queue.borrow().is_empty() {
                break;
            }
        }
    }

    /// Take queued writes up to the first fenced transaction (which is taken too).
    fn take_until_fence(&self) -> (Vec<WriteCmd>, Vec<ReplyTx>, Option<Fenced>) {
        let mut q = self.queue.borrow_mut();
        let (mut cmds, mut txs) = (Vec::new(), Vec::new());
        while let Some(item) = q.pop_front() {
            match item {
                Item::Cmd(c, tx) => {
                    cmds.push(c);
                    txs.push(tx);
                }
                Item::Fenced(f) => return (cmds, txs, Some(f)),
            }
        }
        (cmds, txs, None)
    }

    /// Wait until everything proposed is applied, check the watched keys, and
    /// propose the transaction if they are clean.
    async fn run_fenced(&self, f: Fenced) {
        while self.inflight.get() > 0 {
            let (tx, rx) = oneshot::channel();
            self.idle.borrow_mut().push(tx);
            let _ = rx.await;
        }
        let now = self.stamp();
        match self.watches.dirty(&self.storage, &f.watched, now) {
            Err(e) => {
                let _ = f.tx.send(Reply::error(format!("ERR {e}")));
            }
            Ok(true) => {
                let _ = f.tx.send(Reply::NilArray);
            }
            Ok(false) => match f.cmd {
                None => {
                    let _ = f.tx.send(Reply::Array(Vec::new()));
                }
                Some(cmd) => self.propose(vec![cmd], vec![f.tx], now).await,
            },
        }
    }

    /// Propose `cmds` (as entries of at most MAX_CMDS_PER_ENTRY commands) and
    /// answer each `txs` with its command's reply.
    async fn propose(&self, cmds: Vec<WriteCmd>, txs: Vec<ReplyTx>, now: u64) {
        self.inflight.set(self.inflight.get() + 1);
        // One entry holds at most MAX_CMDS_PER_ENTRY commands (each creates at most
        // one composite key, whose version must fit under the entry's index).
        let mut cmds = cmds.into_iter().peekable();
        let mut waiters = txs.into_iter();
        while cmds.peek().is_some() {
            let chunk: Vec<WriteCmd> = cmds.by_ref().take(MAX_CMDS_PER_ENTRY).collect();
            let txs: Vec<ReplyTx> = waiters.by_ref().take(chunk.len()).collect();
            let batch = RaftBatch { now_ms: now, cmds: chunk, ..Default::default() };
            match self.raft.client_write(Proposal(batch)).await {
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
        let left = self.inflight.get() - 1;
        self.inflight.set(left);
        if left == 0 {
            for tx in self.idle.borrow_mut().drain(..) {
                let _ = tx.send(());
            }
        }
    }
}
