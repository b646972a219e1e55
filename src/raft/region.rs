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
//! arrive meanwhile wait in the queue, in order. A cross-region write holds the
//! proposer the same way (`submit_cross`, see `shard::cross`) and has it propose
//! the write's copy for this region.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use openraft::{Config, ServerState, SnapshotPolicy};

use super::log_store::LogStore;
use super::network::Network;
use super::outcome::{Unknown, Unwritable, WriteError, WriteResult};
use super::state_machine::{RegionDeps, StateMachine, READ_AHEAD_MS};
use super::{Member, Proposal, Raft, StartError, Vote, NODE_ID};
use crate::cluster::load::RegionLoad;
use crate::cluster::nodes::Nodes;
use crate::cluster::RegionRoute;
use crate::pb::peer_frame::Body;
use crate::pb::{RaftBatch, WriteCmd};
use crate::protocol::Reply;
use crate::storage::Storage;
use crate::types::now_ms;
use crate::types::watches::{Watched, Watches};

mod members;
mod retention;
mod serve;
pub mod split;

pub use members::{ChangeError, MemberChange};
use serve::Incoming;

/// Where a write's reply goes: a waiter on this core, or a place in a batch
/// of writes another core sent (answered in one message once every reply of
/// the batch is in: one cross-core wake per batch, not per write).
pub enum ReplyTx {
    One(oneshot::Sender<WriteResult>),
    Batch(Slot),
}

impl ReplyTx {
    pub fn send(self, r: WriteResult) -> Result<(), WriteResult> {
        match self {
            ReplyTx::One(tx) => tx.send(r),
            ReplyTx::Batch(mut slot) => {
                slot.fill(r);
                Ok(())
            }
        }
    }
}

impl From<oneshot::Sender<WriteResult>> for ReplyTx {
    fn from(tx: oneshot::Sender<WriteResult>) -> ReplyTx {
        ReplyTx::One(tx)
    }
}

/// The replies of a batch of writes from another core, sent back together.
pub struct Gather {
    replies: RefCell<Vec<Option<WriteResult>>>,
    left: Cell<usize>,
    tx: RefCell<Option<oneshot::Sender<Vec<WriteResult>>>>,
}

impl Gather {
    /// A batch of `n` writes, its replies going to `tx`; one [`Slot`] per write.
    pub fn slots(n: usize, tx: oneshot::Sender<Vec<WriteResult>>) -> impl Iterator<Item = Slot> {
        let g =
            Rc::new(Gather { replies: RefCell::new(vec![None; n]), left: Cell::new(n), tx: RefCell::new(Some(tx)) });
        (0..n).map(move |at| Slot { gather: g.clone(), at, filled: false })
    }
}

/// One write's place in a [`Gather`]; dropped unanswered, it answers that
/// the write was aborted.
pub struct Slot {
    gather: Rc<Gather>,
    at: usize,
    filled: bool,
}

impl Slot {
    fn fill(&mut self, r: WriteResult) {
        if std::mem::replace(&mut self.filled, true) {
            return;
        }
        let g = &self.gather;
        g.replies.borrow_mut()[self.at] = Some(r);
        g.left.set(g.left.get() - 1);
        if g.left.get() == 0 {
            let all = g.replies.take().into_iter().map(|r| r.unwrap_or(Err(WriteError::Aborted))).collect();
            if let Some(tx) = g.tx.take() {
                let _ = tx.send(all);
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.fill(Err(WriteError::Aborted));
    }
}

/// The most commands one log entry carries.
pub const MAX_CMDS_PER_ENTRY: usize = 1 << 16;

/// In a cluster, a write not committed within this long (a leader cut off from
/// its quorum, which cannot know it is deposed) is answered "outcome unknown";
/// its entry may still commit later, and the proposer waits for it as before.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(5);

/// How often a write waiting to commit looks at why it might not (a full
/// disk answers it at the next look).
const STUCK_CHECK: Duration = Duration::from_millis(500);

/// How a region's group is made.
pub struct GroupOpts {
    /// Raft log entries between snapshots (each lets the log be purged).
    pub snapshot_logs: u64,
    pub network: Network,
    /// `--read-policy lease`: the leader serves reads inside its lease
    /// without a quorum round trip (assumes bounded clock drift).
    pub lease_reads: bool,
    /// The core's segment log, where the region's Raft log lives (`None`: in RocksDB).
    pub log: Option<Rc<crate::storage::seglog::SegLog>>,
    /// Bytes of log entries since the last snapshot that make the next one
    /// (`--raft-log-max-mb`; 0: by count only), see `retention`.
    pub log_max_bytes: u64,
    /// Where the region's figures go (`cluster::load`).
    pub load: Arc<RegionLoad>,
    /// The region's slots and epoch (its state machine sets them; the
    /// network's snapshot source and active expiry read them).
    pub span: Rc<Cell<crate::cluster::Descriptor>>,
    /// Campaign at once (a region just split off on the node that led its
    /// parent: it takes the lead with no wait for an election timeout).
    pub campaign: bool,
    /// Split the region once its data passes this many bytes (cluster mode,
    /// `--region-split-mb`; 0: never), see `split`.
    pub split_bytes: u64,
    /// The region was just split off here (see [`Region::young`]).
    pub split_off: bool,
}

/// How long a region just split off holds its writes while its first
/// leader is elected, and keeps its parent's leader as its own meanwhile.
const YOUNG: Duration = Duration::from_secs(2);

/// A transaction whose watched keys must not have changed before it runs.
pub struct Fenced {
    /// `None`: nothing to write (only keyless commands were queued).
    pub cmd: Option<WriteCmd>,
    pub watched: Vec<Watched>,
    /// The transaction's result, or a null array if a watched key changed.
    pub tx: oneshot::Sender<WriteResult>,
}

/// A cross-region write's hold on this region's proposer (`shard::cross`).
pub struct CrossHold {
    /// Answered once everything proposed here is applied and nothing more will
    /// be until the hold ends: Ok, or why this region takes no writes now.
    pub held: oneshot::Sender<Result<(), WriteError>>,
    /// The entry to propose, and where its reply goes; `None` or dropped:
    /// nothing (the coordinator gave up), and the hold ends.
    pub go: oneshot::Receiver<Option<(WriteCmd, oneshot::Sender<WriteResult>)>>,
}

/// What a region's proposer queues: a write, a transaction with watched
/// keys, a cross-region write's hold.
pub enum Item {
    Cmd(WriteCmd, ReplyTx),
    Fenced(Fenced),
    Cross(CrossHold),
}

impl Item {
    /// Answer it with `e` unproposed.
    pub fn refuse(self, e: WriteError) {
        match self {
            Item::Cmd(_, tx) => {
                let _ = tx.send(Err(e));
            }
            Item::Fenced(f) => {
                let _ = f.tx.send(Err(e));
            }
            Item::Cross(h) => {
                let _ = h.held.send(Err(e));
            }
        }
    }
}

/// What stops the proposer: a transaction with watched keys, or a cross-region hold.
enum Stop {
    Watched(Fenced),
    Cross(CrossHold),
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
    /// The time of the last entry applied here: a new leader whose clock is
    /// behind never stamps earlier, so a key that expired stays expired.
    applied_now: Rc<Cell<u64>>,
    /// A tick (an entry carrying only the time) is in flight: see
    /// [`Region::fresh_time`].
    ticking: Rc<Cell<bool>>,
    /// Reads waiting for the next read index (one at a time serves all that
    /// queued before it started): `[0]` on the leader, `[1]` on a follower
    /// (READONLY), which asks the leader.
    readers: [RefCell<Vec<ReadWaiter>>; 2],
    read_scheduled: [Cell<bool>; 2],
    /// This core's links to the other nodes (cluster mode).
    links: Option<Rc<crate::net::link::Links>>,
    nodes: Option<Arc<Nodes>>,
    /// How reads are made linearizable (`GroupOpts::lease_reads`).
    read_policy: openraft::ReadPolicy,
    /// A snapshot being received: its id, the next chunk expected, where it goes.
    incoming: RefCell<Option<Incoming>>,
    /// The region's slots and epoch, as its state machine has them.
    span: Rc<Cell<crate::cluster::Descriptor>>,
    /// Until when the region counts as just split off here (see
    /// [`Region::young`]).
    young_until: Option<Instant>,
    /// The core's segment log (`None`: the Raft log is in RocksDB).
    seg: Option<Rc<crate::storage::seglog::SegLog>>,
    /// The region's figures (writes proposed here; the log's, by `retention`).
    load: Arc<RegionLoad>,
}

/// A read waiting for a read index; answered with the time to judge expiry at.
type ReadWaiter = oneshot::Sender<Result<u64, ReadError>>;

/// Why a linearizable read cannot be served here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// Another node leads (or no one does yet).
    #[error("this node does not lead the region")]
    NotLeader(Option<u64>),
    /// No quorum confirmed this node's leadership (or the region is not served here).
    #[error("{0}")]
    Failed(String),
}

/// Milliseconds between a leader's heartbeats.
const HEARTBEAT_MS: u64 = 100;

/// A follower campaigns once it has heard nothing from its leader for the
/// leader's lease (openraft takes it to be `ELECTION_MAX_MS`) plus a timeout
/// drawn from [`ELECTION_MIN_MS`, `ELECTION_MAX_MS`): 0.8 to 1.2 s of silence,
/// eight heartbeats at least. The wide draw (with openraft's election tick,
/// a fifth of a heartbeat) makes two survivors rarely campaign at once: such a
/// split vote costs one more timeout.
const ELECTION_MIN_MS: u64 = 200;
const ELECTION_MAX_MS: u64 = 600;

fn raft_config(snapshot_logs: u64, cluster: bool) -> Result<Config, openraft::ConfigError> {
    Config {
        cluster_name: "neokv".into(),
        // A node that was cut off asks first whether it could win, so it does
        // not depose a working leader when it comes back.
        enable_pre_vote: Some(cluster),
        // A restarted leader of a cluster campaigns like any node instead of
        // taking its leadership back at once: apply writes past RocksDB's WAL
        // and the commit index is saved lazily, so a leader that restored
        // itself could serve reads from a state machine behind what was
        // committed (openraft documents this setting as unsafe then).
        enable_leader_restore: Some(!cluster),
        heartbeat_interval: HEARTBEAT_MS,
        election_timeout_min: ELECTION_MIN_MS,
        election_timeout_max: ELECTION_MAX_MS,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(snapshot_logs.max(1)),
        max_in_snapshot_log_to_keep: (snapshot_logs / 50).min(1_000),
        purge_batch_size: (snapshot_logs / 50).clamp(1, 1_000),
        max_payload_entries: 1_024,
        // Per snapshot chunk. The last one closes the staged files and installs
        // them (flushes, ingests, synced writes): far more than openraft's 200 ms
        // under load, and a timeout there ships the whole region again.
        install_snapshot_timeout: 10_000,
        ..Default::default()
    }
    .validate()
}

impl Region {
    /// Open (or create) the group of `route` on the current core. Standalone,
    /// wait until it leads and has applied everything it had committed before a
    /// restart. In a cluster, a fresh group starts with every node of `--peers`
    /// as a voter (each node initialises the same configuration), the node that
    /// should lead it asks for an election at once, and the group is served
    /// from here on whoever wins.
    pub async fn start(deps: RegionDeps, route: &RegionRoute, opts: GroupOpts) -> Result<Rc<Region>, StartError> {
        let region = route.id;
        let raft_err = |e: &dyn std::fmt::Display| StartError::Raft { region, e: e.to_string() };
        let mut log = LogStore::open(deps.storage.clone(), route.id, opts.log.as_ref()).await?;
        let log_sizes = log.sizes();
        let (storage, watches, nodes) = (deps.storage.clone(), deps.watches.clone(), deps.nodes.clone());
        let links = match &opts.network {
            Network::Cluster { links, .. } => Some(links.clone()),
            Network::Standalone => None,
        };
        let me = nodes.as_ref().map_or(NODE_ID, |n| n.me);
        let read_policy =
            if opts.lease_reads { openraft::ReadPolicy::LeaseRead } else { openraft::ReadPolicy::ReadIndex };
        let mut sm = StateMachine::open(deps, route.id, opts.span.clone())
            .map_err(|e| StartError::StateMachine { region, e })?;
        let applied_now = sm.applied_now();
        // A region made by a split starts from its applied state (the split's
        // entry) with no log and no vote: it takes the vote of that entry's
        // leader, so its first election is of a later term than its log.
        {
            use openraft::storage::{RaftLogReader, RaftLogStorage, RaftStateMachine};
            let io = |e: std::io::Error| StartError::Log { region, e };
            if log.read_vote().await.map_err(io)?.is_none() {
                if let Some(applied) = sm.applied_state().await.map_err(io)?.0 {
                    log.save_vote(&Vote { leader_id: applied.leader_id, committed: false }).await.map_err(io)?;
                }
            }
        }
        let config = raft_config(opts.snapshot_logs, nodes.is_some())?;
        let raft = Raft::new(me, Arc::new(config), opts.network, log, sm).await.map_err(|e| raft_err(&e))?;
        let fresh = !raft.is_initialized().await.map_err(|e| raft_err(&e))?;
        // A node joining a running cluster (`--join`) waits for a leader to add it.
        let joining = nodes.as_ref().is_some_and(|n| n.join);
        // In a cluster, only the nodes the region is placed on initialise it
        // (`cluster::placement`); elsewhere its group stays empty and idle
        // until a membership change adds the node.
        let placed = nodes.as_ref().is_none_or(|n| n.initial_voters(route.id).contains(&n.me));
        if fresh && !joining && placed {
            let ids = nodes.as_ref().map_or_else(|| vec![NODE_ID], |n| n.initial_voters(route.id));
            // Addresses stay out of the log: every node must initialise with the
            // same configuration, and where a node is reached is each node's own
            // business (`--peers`; a test may put a proxy there).
            let members: BTreeMap<u64, Member> = ids.into_iter().map(|id| (id, Member::default())).collect();
            raft.initialize(members).await.map_err(|e| raft_err(&e))?;
        }
        let region = Rc::new(Region {
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
            applied_now,
            ticking: Rc::default(),
            readers: Default::default(),
            read_scheduled: Default::default(),
            links,
            nodes: nodes.clone(),
            read_policy,
            incoming: RefCell::new(None),
            span: opts.span.clone(),
            young_until: opts.split_off.then(|| Instant::now() + YOUNG),
            seg: opts.log.clone(),
            load: opts.load.clone(),
        });
        glommio::spawn_local(split::run(region.clone(), region.storage.clone(), opts.split_bytes, opts.load.clone()))
            .detach();
        glommio::spawn_local(retention::run(region.clone(), log_sizes, opts.load, opts.log_max_bytes)).detach();
        match nodes {
            // Standalone: the caller waits (`caught_up`) once every region is
            // started, since a cross-region entry applies only when every
            // participant reaches it.
            None => {}
            Some(nodes) => {
                if (fresh && !joining && placed && nodes.preferred_leader(route.id) == me) || opts.campaign {
                    let _ = region.raft.trigger().elect(false).await;
                }
                glommio::spawn_local(track_leader(region.clone(), nodes.clone())).detach();
                glommio::spawn_local(rebalance(region.clone(), nodes.clone())).detach();
                glommio::spawn_local(probe_core(region.clone(), nodes)).detach();
            }
        }
        Ok(region)
    }

    /// The region's slots and epoch now.
    pub fn span(&self) -> crate::cluster::Descriptor {
        self.span.get()
    }

    /// Just split off here, and no leader known yet: its first election is
    /// under way (the parent's leader campaigns at once). Writes wait for it
    /// rather than fail, and routing keeps the parent's leader meanwhile, so
    /// clients see neither CLUSTERDOWN nor a redirect.
    pub fn young(&self) -> bool {
        use openraft::async_runtime::WatchReceiver;
        self.young_until.is_some_and(|t| Instant::now() < t)
            && self.raft.metrics().borrow_watched().current_leader.is_none()
    }

    /// Standalone: wait until this region leads and has applied everything it
    /// had committed before a restart.
    pub async fn caught_up(&self) -> Result<(), StartError> {
        let timeout = Some(Duration::from_secs(60));
        let raft = &self.raft;
        let late = |e: &dyn std::fmt::Display| StartError::CatchUp { region: self.id, e: e.to_string() };
        let m = raft.wait(timeout).state(ServerState::Leader, "standalone leader").await.map_err(|e| late(&e))?;
        // A new leader commits a blank entry; once it is applied, so is everything before it.
        raft.wait(timeout).applied_index_at_least(m.last_log_index, "apply to last log").await.map_err(|e| late(&e))?;
        Ok(())
    }

    /// Wait until a read on this node sees every write acknowledged before the
    /// call (ReadIndex: leadership confirmed by a quorum, then applied up to the
    /// commit index of that moment). One confirmation runs at a time; every read
    /// that asked before it started shares it. The answer is the time the read
    /// judges expiry at ([`Region::read_time`]; on a follower, its leader's).
    pub async fn linearize(self: &Rc<Self>, on_follower: bool) -> Result<u64, ReadError> {
        let which = on_follower as usize;
        let (tx, rx) = oneshot::channel();
        self.readers[which].borrow_mut().push(tx);
        if !self.read_scheduled[which].replace(true) {
            let me = self.clone();
            glommio::spawn_local(async move {
                // One confirmation at a time: the reads that arrive while one is
                // under way share the next (not that one: its read index may
                // predate a write they have seen acknowledged).
                loop {
                    futures_lite::future::yield_now().await;
                    let waiting = std::mem::take(&mut *me.readers[which].borrow_mut());
                    if waiting.is_empty() {
                        me.read_scheduled[which].set(false);
                        break;
                    }
                    let r = if on_follower { me.follower_read_index().await } else { me.leader_read().await };
                    for w in waiting {
                        let _ = w.send(r.clone());
                    }
                }
            })
            .detach();
        }
        rx.await.unwrap_or_else(|_| Err(ReadError::Failed("region stopped".into())))
    }

    /// A read on the leader: its time kept fresh (see [`Region::read_time`]),
    /// then a read index; the read's time.
    async fn leader_read(&self) -> Result<u64, ReadError> {
        self.fresh_time().await?;
        self.leader_read_index().await?;
        Ok(self.read_time())
    }

    /// In a cluster, the time a read on this leader judges expiry at: its
    /// clock, but never earlier than the last entry applied (time never goes
    /// back, whoever leads) and never more than [`READ_AHEAD_MS`] past it. A
    /// successor starts its term that far past the last entry (`raft::
    /// state_machine`), so no read answered here was judged later than any
    /// read or write after a failover, whatever the clocks say. Standalone: the
    /// clock, not earlier than the last entry.
    pub fn read_time(&self) -> u64 {
        let applied = self.applied_now.get();
        let now = now_ms();
        if self.nodes.is_none() {
            return now.max(applied);
        }
        applied.max(now.min(applied + READ_AHEAD_MS))
    }

    /// Keep the last applied entry's time close to the clock, so reads judge
    /// expiry by the clock (see [`Region::read_time`]): past half of
    /// [`READ_AHEAD_MS`] without an entry, a tick (an entry with no commands,
    /// only the time) is proposed; past all of it, the read waits for it.
    async fn fresh_time(&self) -> Result<(), ReadError> {
        if self.nodes.is_none() {
            return Ok(());
        }
        let lag = now_ms().saturating_sub(self.applied_now.get());
        if lag <= READ_AHEAD_MS / 2 || self.ticking.replace(true) {
            return Ok(());
        }
        let batch = RaftBatch { now_ms: self.stamp(), ..Default::default() };
        if lag <= READ_AHEAD_MS {
            // In the background: this read is still within the bound.
            let (raft, ticking) = (self.raft.clone(), self.ticking.clone());
            glommio::spawn_local(async move {
                let _ = crate::net::within(WRITE_DEADLINE, raft.client_write(Proposal(batch))).await;
                ticking.set(false);
            })
            .detach();
            return Ok(());
        }
        let r = crate::net::within(WRITE_DEADLINE, self.raft.client_write(Proposal(batch))).await;
        self.ticking.set(false);
        match r {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => match write_error(&e) {
                WriteError::NotLeader(l) => Err(ReadError::NotLeader(l)),
                _ => Err(ReadError::Failed(e.to_string())),
            },
            None => Err(ReadError::Failed(format!("no quorum within {WRITE_DEADLINE:?}"))),
        }
    }

    async fn leader_read_index(&self) -> Result<(), ReadError> {
        match self.raft.ensure_linearizable(self.read_policy.clone()).await {
            Ok(_) => Ok(()),
            Err(openraft::error::RaftError::APIError(openraft::error::LinearizableReadError::ForwardToLeader(f))) => {
                Err(ReadError::NotLeader(f.leader_id))
            }
            Err(e) => Err(ReadError::Failed(e.to_string())),
        }
    }

    /// A READONLY read on a follower: the leader confirms its leadership and
    /// names its commit index and its read time, and this node waits until it
    /// has applied that far. The read judges expiry at the leader's time (a
    /// follower whose clock runs ahead must not hide live keys), never earlier
    /// than what this node applied.
    async fn follower_read_index(&self) -> Result<u64, ReadError> {
        let (Some(links), Some(nodes)) = (&self.links, &self.nodes) else {
            return self.leader_read().await;
        };
        let Some(leader) = nodes.leader(self.id) else { return Err(ReadError::NotLeader(None)) };
        if leader == nodes.me {
            return self.leader_read().await;
        }
        let ttl = Duration::from_secs(2);
        let link = links.link(leader, crate::net::Class::Raft);
        let (index, time) = match link.call(self.id, Body::ReadIndex(crate::pb::ReadIndexReq {}), ttl).await {
            Ok(Body::ReadIndexResp(r)) => (r.read.map_or(0, |l| l.index), r.now_ms),
            Ok(_) => return Err(ReadError::Failed("unexpected read index response".into())),
            Err(e) => return Err(ReadError::Failed(e.to_string())),
        };
        self.raft
            .wait(Some(ttl))
            .applied_index_at_least(Some(index), "follower read index")
            .await
            .map_err(|e| ReadError::Failed(e.to_string()))?;
        Ok(time.max(self.applied_now.get()))
    }

    /// Queue a write; its reply arrives on `tx` once the entry holding it is applied.
    pub fn submit(self: &Rc<Self>, cmd: WriteCmd, tx: impl Into<ReplyTx>) {
        self.enqueue(Item::Cmd(cmd, tx.into()));
    }

    /// Queue a transaction with watched keys (see the module doc).
    pub fn submit_fenced(self: &Rc<Self>, f: Fenced) {
        self.enqueue(Item::Fenced(f));
    }

    /// Queue a cross-region write's hold (see [`CrossHold`]).
    pub fn submit_cross(self: &Rc<Self>, h: CrossHold) {
        self.enqueue(Item::Cross(h));
    }

    /// Queue any of the above.
    pub fn enqueue(self: &Rc<Self>, item: Item) {
        self.queue.borrow_mut().push_back(item);
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
        let now = now_ms().max(self.last_now.get()).max(self.applied_now.get());
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
        if let Some(full) = self.failing() {
            let r = WriteError::DiskFull(full);
            // The log, or RocksDB, cannot be written (a full disk): refuse new
            // writes with the cause, as Redis does, rather than queue them
            // behind it. What was proposed before waits and lands once it can
            // be written.
            for item in self.queue.borrow_mut().drain(..) {
                let tx = match item {
                    Item::Cmd(_, tx) => tx,
                    Item::Fenced(f) => f.tx.into(),
                    Item::Cross(h) => {
                        let _ = h.held.send(Err(r.clone()));
                        continue;
                    }
                };
                let _ = tx.send(Err(r.clone()));
            }
            return;
        }
        while self.young() {
            glommio::timer::sleep(Duration::from_millis(5)).await;
        }
        loop {
            let (cmds, waiters, fence) = self.take_until_fence();
            // Taken at once, before the writes ahead of it are proposed: a
            // flush task started meanwhile must not take a fence of its own
            // (two holders would each believe the region still).
            if fence.is_some() {
                self.fenced.set(true);
            }
            if !cmds.is_empty() {
                let now = self.stamp();
                self.propose(cmds, waiters, now).await;
            }
            let Some(f) = fence else { break };
            match f {
                Stop::Watched(f) => self.run_fenced(f).await,
                Stop::Cross(h) => self.run_cross(h).await,
            }
            self.fenced.set(false);
            if self.queue.borrow().is_empty() {
                break;
            }
        }
    }

    /// Why this region cannot take writes now (the log, or RocksDB, cannot be
    /// written: a full disk), as the reply to a write.
    fn failing(&self) -> Option<Unwritable> {
        match self.seg.as_ref().and_then(|s| s.failure()) {
            Some(cause) => Some(Unwritable::new("the Raft log", &cause)),
            None => self.storage.failure().map(|cause| Unwritable::new("the database", &cause)),
        }
    }

    /// Take queued writes up to the first fenced transaction or cross-region
    /// hold (which is taken too).
    fn take_until_fence(&self) -> (Vec<WriteCmd>, Vec<ReplyTx>, Option<Stop>) {
        let mut q = self.queue.borrow_mut();
        let (mut cmds, mut txs) = (Vec::new(), Vec::new());
        while let Some(item) = q.pop_front() {
            match item {
                Item::Cmd(c, tx) => {
                    cmds.push(c);
                    txs.push(tx);
                }
                Item::Fenced(f) => return (cmds, txs, Some(Stop::Watched(f))),
                Item::Cross(h) => return (cmds, txs, Some(Stop::Cross(h))),
            }
        }
        (cmds, txs, None)
    }

    /// Wait until everything proposed here is applied.
    async fn settle(&self) {
        while self.inflight.get() > 0 {
            let (tx, rx) = oneshot::channel();
            self.idle.borrow_mut().push(tx);
            let _ = rx.await;
        }
    }

    /// Hold the proposer for a cross-region write: once everything proposed is
    /// applied, say so, and propose the entry the coordinator sends (if any).
    async fn run_cross(&self, h: CrossHold) {
        self.settle().await;
        if let Some(full) = self.failing() {
            let _ = h.held.send(Err(WriteError::DiskFull(full)));
            return;
        }
        if h.held.send(Ok(())).is_err() {
            return;
        }
        if let Ok(Some((cmd, tx))) = h.go.await {
            if let Some(crate::pb::write_cmd::Op::Cross(c)) = &cmd.op {
                if c.participants.first() != Some(&self.id) && crate::failpoint::armed_to_crash("cross-cut") {
                    // Tests: the first participant's copy is in its log (it
                    // waits at the rendezvous by now), this one's never will be.
                    glommio::timer::sleep(Duration::from_millis(300)).await;
                    crate::failpoint::crash("cross-cut");
                }
            }
            let now = self.stamp();
            self.propose(vec![cmd], vec![tx.into()], now).await;
        }
    }

    /// Wait until everything proposed is applied, check the watched keys, and
    /// propose the transaction if they are clean.
    async fn run_fenced(&self, f: Fenced) {
        self.settle().await;
        // In a cluster this node may have become leader since the WATCH, with
        // entries its predecessor committed not yet applied here: judge the
        // keys only once it has applied everything committed before now (a
        // read index, which also confirms it still leads).
        if self.nodes.is_some() {
            match self.leader_read_index().await {
                Ok(()) => {}
                Err(ReadError::NotLeader(l)) => {
                    let _ = f.tx.send(Err(WriteError::NotLeader(l)));
                    return;
                }
                Err(ReadError::Failed(e)) => {
                    let _ = f.tx.send(Err(WriteError::ClusterDown(e)));
                    return;
                }
            }
        }
        let now = self.stamp();
        match self.watches.dirty(&self.storage, &f.watched, now) {
            Err(e) => {
                let _ = f.tx.send(Ok(Reply::error(format!("ERR {e}"))));
            }
            Ok(true) => {
                let _ = f.tx.send(Ok(Reply::NilArray));
            }
            Ok(false) => match f.cmd {
                None => {
                    let _ = f.tx.send(Ok(Reply::Array(Vec::new())));
                }
                Some(cmd) => self.propose(vec![cmd], vec![f.tx.into()], now).await,
            },
        }
    }

    /// Propose `cmds` (as entries of at most MAX_CMDS_PER_ENTRY commands) and
    /// answer each `txs` with its command's reply.
    async fn propose(&self, cmds: Vec<WriteCmd>, txs: Vec<ReplyTx>, now: u64) {
        self.inflight.set(self.inflight.get() + 1);
        self.load.writes.fetch_add(cmds.len() as u64, std::sync::atomic::Ordering::Relaxed);
        // One entry holds at most MAX_CMDS_PER_ENTRY commands (each creates at most
        // one composite key, whose version must fit under the entry's index).
        let mut cmds = cmds.into_iter().peekable();
        let mut waiters = txs.into_iter();
        while cmds.peek().is_some() {
            let chunk: Vec<WriteCmd> = cmds.by_ref().take(MAX_CMDS_PER_ENTRY).collect();
            let txs: Vec<ReplyTx> = waiters.by_ref().take(chunk.len()).collect();
            let batch = RaftBatch { now_ms: now, cmds: chunk, ..Default::default() };
            let write = async {
                if self.nodes.is_some() {
                    let (done_tx, done_rx) = oneshot::channel();
                    let raft = self.raft.clone();
                    glommio::spawn_local(async move {
                        let _ = done_tx.send(raft.client_write(Proposal(batch)).await);
                    })
                    .detach();
                    done_rx.await.ok()
                } else {
                    Some(self.raft.client_write(Proposal(batch)).await)
                }
            };
            let mut write = std::pin::pin!(write);
            let mut txs = txs;
            let started = Instant::now();
            // A write that cannot be made durable (a full disk), or in a cluster
            // is not committed in time, is answered "outcome unknown" instead of
            // waiting with its client; the proposer still waits for it, and it
            // is applied as before if it commits (space returns, the quorum).
            let result = loop {
                if let Some(r) = crate::net::within(STUCK_CHECK, write.as_mut()).await {
                    break r;
                }
                if txs.is_empty() {
                    continue;
                }
                let why = match self.failing() {
                    Some(full) => Some(Unknown::DiskFull(full)),
                    None if self.nodes.is_some() && started.elapsed() >= WRITE_DEADLINE => {
                        Some(Unknown::NoQuorum(WRITE_DEADLINE))
                    }
                    None => None,
                };
                if let Some(why) = why {
                    let e = WriteError::OutcomeUnknown(why);
                    for tx in txs.drain(..) {
                        let _ = tx.send(Err(e.clone()));
                    }
                }
            };
            if txs.is_empty() {
                continue;
            }
            let Some(result) = result else {
                for tx in txs {
                    let _ = tx.send(Err(WriteError::OutcomeUnknown(Unknown::Stopped)));
                }
                continue;
            };
            match result {
                Ok(resp) => {
                    // Before anyone hears: WAIT reads it once its write is answered.
                    if let Some(n) = &self.nodes {
                        n.set_acked(self.id, resp.log_id.index);
                    }
                    for (tx, r) in txs.into_iter().zip(resp.data) {
                        let _ = tx.send(Ok(r));
                    }
                }
                Err(e) => {
                    let e = write_error(&e);
                    for tx in txs {
                        let _ = tx.send(Err(e.clone()));
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

/// Keep the node's table of region leaders up to date with what this group knows.
async fn track_leader(region: Rc<Region>, nodes: Arc<Nodes>) {
    use openraft::async_runtime::WatchReceiver;
    let mut m = region.raft.metrics();
    let mut membership_at = None;
    let mut reported_fatal = false;
    loop {
        {
            let w = m.borrow_watched();
            if let (Err(fatal), false) = (&w.running_state, reported_fatal) {
                // The group stopped for good (a storage error, a broken
                // invariant): say why once, where the operator looks.
                eprintln!("region {}: Raft stopped: {fatal}", region.id);
                reported_fatal = true;
            }
            let members = w.membership_config.membership();
            // The membership changes rarely; the rest on every apply.
            let new_membership = membership_at != Some(w.membership_config.log_id().map(|l| l.index));
            if new_membership {
                membership_at = Some(w.membership_config.log_id().map(|l| l.index));
                // Nodes added online carry their node-to-node address in the membership.
                for (id, n) in members.nodes().filter(|(_, n)| !n.addr.is_empty()) {
                    nodes.learn_cluster_addr(*id, &n.addr);
                }
            }
            // A region this node is not in (placed elsewhere, or not yet
            // added): what its leader reports stands (`Nodes::learn`).
            let member = members.get_node(&nodes.me).is_some() && !nodes.left(region.id);
            if !member {
                nodes.update_status(region.id, |s| s.member = false);
            } else if w.current_leader.is_none() && region.young() {
                // Just split off: the parent's leader stands until the first election ends.
            } else {
                nodes.set_leader(region.id, w.current_leader);
                nodes.update_status(region.id, |s| {
                    // Voters and learners from the group: when they change,
                    // and when the node goes by its group again after reports.
                    let refresh = new_membership || !s.member;
                    s.member = true;
                    s.leader = w.current_leader;
                    s.leading = w.state == ServerState::Leader;
                    s.state = match w.state {
                        ServerState::Leader => "leader",
                        ServerState::Candidate => "candidate",
                        ServerState::Follower => "follower",
                        ServerState::Learner => "learner",
                        ServerState::Shutdown => "shutdown",
                    };
                    s.vote_committed = w.vote.is_committed();
                    s.term = w.current_term;
                    s.last_log = w.last_log_index.unwrap_or(0);
                    s.applied = w.last_applied.map_or(0, |l| l.index);
                    s.purged = w.purged.map_or(0, |l| l.index);
                    if refresh {
                        s.voters.clear();
                        s.voters.extend(members.voter_ids());
                        s.voters.sort_unstable();
                        s.learners.clear();
                        s.learners.extend(members.learner_ids());
                        s.learners.sort_unstable();
                    }
                    s.matched.clear();
                    if let Some(r) = &w.replication {
                        s.matched.extend(
                            r.iter()
                                .filter(|(id, _)| **id != nodes.me)
                                .map(|(id, l)| (*id, l.as_ref().map_or(0, |l| l.index))),
                        );
                    }
                });
            }
        }
        if m.changed().await.is_err() {
            nodes.set_leader(region.id, None);
            return;
        }
    }
}

/// Why Raft did not complete a write. Refused before it was appended: not
/// applied, [`WriteError::NotLeader`] (the connection turns it into MOVED for
/// the key's slot; safe to send again). Anything else (the entry was
/// discarded by a leader change, Raft stopped): it may or may not be applied,
/// and the client must not retry blindly, so it is "outcome unknown".
fn write_error(
    e: &openraft::error::RaftError<super::TypeConfig, openraft::error::ClientWriteError<super::TypeConfig>>,
) -> WriteError {
    use openraft::error::{ClientWriteError, RaftError};
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => WriteError::NotLeader(f.leader_id),
        e => WriteError::OutcomeUnknown(Unknown::Raft(e.to_string())),
    }
}

/// Ask the region's Raft core a trivial question every second, and keep in
/// the region's status when the unanswered one was sent: INFO replication
/// shows how long the core has not answered (a core that waits on a storage
/// call forever would otherwise look like a follower that lost its leader).
async fn probe_core(region: Rc<Region>, nodes: Arc<Nodes>) {
    loop {
        glommio::timer::sleep(Duration::from_secs(1)).await;
        nodes.update_status(region.id, |s| s.probe_sent = Some(Instant::now()));
        if region.raft.with_raft_state(|_| ()).await.is_err() {
            return;
        }
        nodes.update_status(region.id, |s| s.probe_sent = None);
    }
}

/// Hand leadership to the region's preferred node (`Nodes::preferred_leader`)
/// once that node holds the whole log, so leaders spread over the nodes again
/// after a failover or a restart. Checked every second; a node that cannot be
/// reached never catches up and so never gets it.
async fn rebalance(region: Rc<Region>, nodes: Arc<Nodes>) {
    use openraft::async_runtime::WatchReceiver;
    let metrics = region.raft.metrics();
    loop {
        glommio::timer::sleep(Duration::from_secs(1)).await;
        // The voters change with the membership: so does the preferred node.
        let want = nodes.preferred_leader(region.id);
        if want == nodes.me || nodes.is_removed(want) {
            continue;
        }
        let caught_up = {
            let m = metrics.borrow_watched();
            if m.state != ServerState::Leader || m.running_state.is_err() {
                continue;
            }
            // Not while the membership changes (a joint configuration, or a
            // learner on its way to voter): a leader change mid-way stalls it.
            let members = m.membership_config.membership();
            if members.get_joint_config().len() > 1 || members.nodes().count() > members.voter_ids().count() {
                continue;
            }
            let matched = m.replication.as_ref().and_then(|r| r.get(&want).cloned().flatten()).map(|l| l.index);
            // And it answered lately: a transfer silences this leader and lifts
            // every voter's lease (openraft cannot call it off), so one to a
            // node that no longer hears from us, its matched index stale, would
            // hand the region to an election (seen with a one-way cut).
            let acked = m.heartbeat.as_ref().and_then(|h| h.get(&want).cloned().flatten());
            let recent = acked.is_some_and(|t| t.elapsed() < Duration::from_millis(4 * HEARTBEAT_MS));
            recent && matched.is_some() && matched >= m.last_log_index
        };
        if caught_up && region.raft.trigger().transfer_leader(want).await.is_err() {
            return;
        }
    }
}
