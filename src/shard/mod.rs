//! Per-core executors and the cross-core channel mesh.
//!
//! Owns: what each core holds (`Core`: its regions, a handle on the shared state)
//! and how cores talk (typed `CoreMsg`s over one inbox per core). Placement is
//! decided in one place (`cluster::Router`); a write for a region owned by another
//! core travels there as a message and its reply comes back on a oneshot.
//! Depends on `storage`, `cluster`, `raft`, `types`.

pub mod access;
pub mod client;
pub mod cross;
pub mod expire;
pub mod members;
pub mod observe;
pub mod pubsub;
pub mod reports;
pub mod shared;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use futures_channel::{mpsc, oneshot};
use futures_util::StreamExt;

use crate::cluster::{Descriptor, RegionRoute};
use crate::net::link::Links;
use crate::net::{error_body, UNREACHABLE};
use crate::pb::peer_frame::Body;
use crate::pb::WriteCmd;
use crate::raft::network::{Network, Source};
use crate::raft::outcome::{WriteError, WriteResult};
use crate::raft::region::{ChangeError, Fenced, GroupOpts, Item, MemberChange, ReadError, Region};
use crate::raft::state_machine::{RegionDeps, SpanChange};
use crate::raft::StartError;
use crate::storage::seglog::{raft_log_dir, SegLog, SEGMENT_BYTES};
use crate::types::cache::ReadCache;
use crate::types::watches::Watched;

pub use shared::Shared;

/// A message from one core to another.
pub enum CoreMsg {
    /// Propose each `(region, cmd)` on its region (owned by the receiving core),
    /// in order, and send every reply back together on `tx` (one message each
    /// way per reactor turn, whatever the number of writes: see `Outgoing`).
    Writes { items: Vec<(u32, WriteCmd)>, tx: oneshot::Sender<Vec<WriteResult>> },
    /// A transaction with watched keys for `region` (see `Region::submit_fenced`).
    Fenced { region: u32, f: Fenced },
    /// Hold `region`'s proposer for a cross-region write (see `cross`).
    Cross { region: u32, h: crate::raft::region::CrossHold },
    /// An RPC from another node for `region` (owned by the receiving core).
    Peer { region: u32, body: Body, tx: oneshot::Sender<Body> },
    /// A linearizable read on another core waits for `region`'s read index.
    Linearize { region: u32, on_follower: bool, tx: oneshot::Sender<Result<u64, ReadError>> },
    /// A membership change of `region`, led here (see `members`).
    Members { region: u32, change: MemberChange, tx: oneshot::Sender<Result<(), ChangeError>> },
}

/// Why a write never reached its region's proposer.
const CORE_STOPPED: &str = "owning core stopped";
const NOT_STARTED: &str = "region not started";
const NOT_OWNED: &str = "region not owned by this core";
const NO_REGION: &str = "no such region here";

pub type Inbox = mpsc::UnboundedReceiver<CoreMsg>;
pub type Outbox = mpsc::UnboundedSender<CoreMsg>;

/// One core's state. Lives in an `Rc` on its executor; never crosses threads.
pub struct Core {
    pub id: usize,
    pub shared: Arc<Shared>,
    /// This core's cache of metadata for point reads (see `types::cache`); the
    /// state machines of the regions this core owns fill it with what they write.
    pub cache: Rc<ReadCache>,
    /// Elements of keys read by `Ctx::read_key` (a quarter of the read cache's
    /// budget), kept exact by the same epochs: a hash field, a set member, a
    /// sorted set's score or rank counters.
    pub elements: Rc<ReadCache>,
    regions: RefCell<HashMap<u32, Rc<Region>>>,
    /// Regions whose group is being opened here (`host_region`, a split).
    opening: RefCell<std::collections::HashSet<u32>>,
    /// Writes for a region split off here whose group is still opening.
    held: RefCell<HashMap<u32, Vec<crate::raft::region::Item>>>,
    /// `start_regions` opened every region this core had at start: only
    /// then are others opened (an RPC may arrive before, and a group opened
    /// then would have no segment log, or be a second one of a region).
    started: std::cell::Cell<bool>,
    /// This core's links to the other nodes (cluster mode).
    pub links: Option<Rc<Links>>,
    /// This core's segment log: the Raft log of the regions it owns
    /// (`None` with `--raft-log rocksdb`). Opened by `start_regions`.
    pub raft_log: RefCell<Option<Rc<SegLog>>>,
    /// Writes for regions of other cores, gathered over a reactor turn.
    outgoing: Rc<Outgoing>,
    /// Cross-region writes waiting for this core's coordinator (`cross`).
    cross: Rc<cross::CrossQueue>,
}

/// Writes bound for other cores' regions: queued per core during a reactor
/// turn and shipped as one message per core at its end, so a core that
/// sleeps between turns is woken once per batch, not once per write.
struct Outgoing {
    queues: RefCell<Vec<Vec<(u32, WriteCmd, oneshot::Sender<WriteResult>)>>>,
    scheduled: std::cell::Cell<bool>,
}

impl Outgoing {
    fn push(self: &Rc<Self>, shared: &Arc<Shared>, owner: usize, item: (u32, WriteCmd, oneshot::Sender<WriteResult>)) {
        self.queues.borrow_mut()[owner].push(item);
        if self.scheduled.replace(true) {
            return;
        }
        let (me, shared) = (self.clone(), shared.clone());
        glommio::spawn_local(async move {
            // Every connection with bytes ready this turn adds its writes first.
            futures_lite::future::yield_now().await;
            me.scheduled.set(false);
            let queues: Vec<_> = me.queues.borrow_mut().iter_mut().map(std::mem::take).collect();
            for (owner, q) in queues.into_iter().enumerate().filter(|(_, q)| !q.is_empty()) {
                let (items, txs): (Vec<(u32, WriteCmd)>, Vec<_>) =
                    q.into_iter().map(|(region, cmd, tx)| ((region, cmd), tx)).unzip();
                let (tx, rx) = oneshot::channel();
                if shared.mesh[owner].unbounded_send(CoreMsg::Writes { items, tx }).is_err() {
                    for t in txs {
                        let _ = t.send(Err(WriteError::Unavailable(CORE_STOPPED)));
                    }
                    continue;
                }
                glommio::spawn_local(async move {
                    let replies = rx.await.unwrap_or_default();
                    let mut replies = replies.into_iter();
                    for t in txs {
                        let _ = t.send(replies.next().unwrap_or(Err(WriteError::Aborted)));
                    }
                })
                .detach();
            }
        })
        .detach();
    }
}

impl Core {
    pub fn new(id: usize, shared: Arc<Shared>) -> Rc<Core> {
        let per_core = (shared.config().read_cache_mb << 20) / shared.mesh.len().max(1);
        let shared_cores = shared.mesh.len();
        let links = shared.nodes.as_ref().map(|n| {
            let hello = crate::pb::PeerHello {
                node_id: n.me,
                client_addr: n.client_addr(n.me).unwrap_or_default(),
                cluster_name: crate::net::CLUSTER_NAME.into(),
                regions: n.initial_regions() as u32,
                // A node joining takes the cluster's layout, whatever its own.
                replicas: if n.join { 0 } else { n.replicas() as u32 },
                // Filled in at each connect (the cluster id may be learned later).
                incarnation: 0,
                cluster_id: 0,
                joining: n.join,
            };
            Links::new(n.clone(), hello)
        });
        Rc::new(Core {
            id,
            shared,
            cache: Rc::new(ReadCache::new(per_core - per_core / 4)),
            elements: Rc::new(ReadCache::new(per_core / 4)),
            regions: RefCell::new(HashMap::new()),
            opening: RefCell::default(),
            held: RefCell::default(),
            started: std::cell::Cell::new(false),
            links,
            raft_log: RefCell::new(None),
            outgoing: Rc::new(Outgoing {
                queues: RefCell::new((0..shared_cores).map(|_| Vec::new()).collect()),
                scheduled: std::cell::Cell::new(false),
            }),
            cross: Rc::default(),
        })
    }

    /// Start every region this core owns; returns once each leads and has caught up.
    pub async fn start_regions(self: &Rc<Self>) -> Result<(), StartError> {
        let routes: Vec<_> = self.shared.router().regions().iter().filter(|r| r.core == self.id).cloned().collect();
        let (segments, dir, fsync) = {
            let cfg = self.shared.config();
            (cfg.raft_log_segments, cfg.dir.clone(), cfg.appendfsync)
        };
        let log = if segments {
            let path = raft_log_dir(&dir).join(format!("core-{}", self.id));
            let log = SegLog::open(&path, SEGMENT_BYTES, fsync)
                .await
                .map_err(|e| StartError::Segments { path: path.clone(), e })?;
            *self.raft_log.borrow_mut() = Some(log.clone());
            Some(log)
        } else {
            None
        };
        if self.shared.nodes.is_none() {
            self.void_cut_cross_entries(&routes, log.as_ref()).await?;
        }
        for route in routes.iter() {
            let region = self.open_region(route, false, false).await?;
            self.regions.borrow_mut().insert(route.id, region);
        }
        self.started.set(true);
        if self.shared.nodes.is_none() {
            // Only now: a cross-region entry applies once every participant
            // (maybe another region of this core) reaches it.
            let started: Vec<Rc<Region>> = self.regions.borrow().values().cloned().collect();
            for region in started {
                region.caught_up().await?;
            }
        }
        Ok(())
    }

    /// What every region of this core shares.
    fn region_deps(self: &Rc<Self>) -> RegionDeps {
        let me = Rc::downgrade(self);
        let on_span: Rc<dyn Fn(SpanChange)> = Rc::new(move |change| {
            if let Some(core) = me.upgrade() {
                core.span_changed(change);
            }
        });
        RegionDeps {
            storage: self.shared.storage.clone(),
            epochs: self.shared.epochs.clone(),
            blocked: self.shared.blocked.clone(),
            watches: self.shared.watches.clone(),
            cross: self.shared.cross.clone(),
            programs: self.shared.programs.get().cloned(),
            notify: Some(self.shared.pubsub.clone()),
            nodes: self.shared.nodes.clone(),
            dbs: self.shared.dbs.clone(),
            // Apply fills it on the region's leader (see `StateMachine`); a
            // cluster's kill -9 nemesis ran 8 times in a row with followers
            // filling too, and found nothing.
            cache: Some(self.cache.clone()),
            on_span: Some(on_span),
        }
    }

    /// Open the group of `route` on this core (see `Region::start`);
    /// `campaign`: it asks for an election at once.
    async fn open_region(
        self: &Rc<Self>,
        route: &RegionRoute,
        campaign: bool,
        split_off: bool,
    ) -> Result<Rc<Region>, StartError> {
        let span = Rc::new(std::cell::Cell::new(Descriptor {
            id: route.id,
            start: route.start,
            end: route.end,
            epoch: route.epoch,
        }));
        let network = match &self.links {
            Some(links) => {
                let source = Source { storage: self.shared.storage.clone(), span: span.clone() };
                Network::Cluster { links: links.clone(), region: route.id, source }
            }
            None => Network::Standalone,
        };
        let (snapshot_logs, lease_reads, log_max_bytes, split_bytes) = {
            let cfg = self.shared.config();
            let split = cfg.cluster.as_ref().map_or(0, |c| c.region_split_mb << 20);
            (cfg.raft_snapshot_logs, cfg.lease_reads, cfg.raft_log_max_mb << 20, split)
        };
        let load = self.shared.load.region(route.id);
        let log = self.raft_log.borrow().clone();
        let opts = GroupOpts {
            snapshot_logs,
            network,
            lease_reads,
            log,
            log_max_bytes,
            load,
            span,
            campaign,
            split_bytes,
            split_off,
        };
        Region::start(self.region_deps(), route, opts).await
    }

    /// Apply changed a region's slots here (see `SpanChange`): route by the
    /// change; a region split off starts on this core, campaigning at once
    /// if this node leads its parent (the leader stays the same, so clients
    /// see no redirect).
    fn span_changed(self: &Rc<Self>, change: SpanChange) {
        match change {
            SpanChange::Installed(d) => {
                self.shared.learn_regions(&[d]);
            }
            SpanChange::Split { parent, child } => {
                self.shared.learn_regions(&[parent, child]);
                let leads = match &self.shared.nodes {
                    Some(n) => {
                        n.split(parent.id, child.id);
                        n.leader(parent.id) == Some(n.me)
                    }
                    None => true,
                };
                eprintln!(
                    "region {}: split at slot {} (epoch {}): slots {}-{} are region {} now",
                    parent.id,
                    child.start,
                    child.epoch,
                    child.start,
                    child.end - 1,
                    child.id
                );
                let route =
                    RegionRoute { id: child.id, start: child.start, end: child.end, epoch: child.epoch, core: self.id };
                self.open_later(route, leads, true);
            }
        }
    }

    /// Open the group of `route` on this core in the background (a region
    /// split off here, or one a peer called: see `host_region`), unless it is
    /// open or opening already; writes that come meanwhile are held and
    /// handed on in order once it is open (refused if it does not open).
    fn open_later(self: &Rc<Self>, route: RegionRoute, campaign: bool, split_off: bool) {
        if self.local_region(route.id).is_some() || !self.opening.borrow_mut().insert(route.id) {
            return;
        }
        let me = self.clone();
        glommio::spawn_local(async move {
            let held = |me: &Core| me.held.borrow_mut().remove(&route.id).unwrap_or_default();
            match me.open_region(&route, campaign, split_off).await {
                Ok(region) => {
                    me.regions.borrow_mut().insert(route.id, region.clone());
                    for item in held(&me) {
                        region.enqueue(item);
                    }
                    glommio::spawn_local(expire::run(me.clone(), region)).detach();
                }
                Err(e) => {
                    eprintln!("region {}: its group did not open here: {e}", route.id);
                    for item in held(&me) {
                        item.refuse(WriteError::Unavailable(NOT_STARTED));
                    }
                }
            }
            me.opening.borrow_mut().remove(&route.id);
        })
        .detach();
    }

    /// Standalone, at open, before any region applies: void the cross-region
    /// entries that a crash left in some participants' logs only (see
    /// `raft::cross`). Every core does this together.
    async fn void_cut_cross_entries(&self, routes: &[RegionRoute], seg: Option<&Rc<SegLog>>) -> Result<(), StartError> {
        use crate::raft::log_store::LogStore;
        use crate::raft::state_machine::StateMachine;
        let storage = &self.shared.storage;
        let mut found = Vec::new();
        for route in routes {
            let mut log = LogStore::open(storage.clone(), route.id, seg).await?;
            let f = StateMachine::cross_entries(storage, &mut log, route.id)
                .await
                .map_err(|e| StartError::ReadLog { region: route.id, e })?;
            found.extend(f);
        }
        let mine: Vec<u32> = routes.iter().map(|r| r.id).collect();
        let void = self.shared.cross.opening(self.shared.mesh.len(), found, &mine).await?;
        if void.is_empty() {
            return Ok(());
        }
        self.shared.cross.voided_at_open.fetch_add(void.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let mut b = crate::storage::Batch::new();
        for &(region, index) in &void {
            b.put(
                crate::storage::Cf::RaftState,
                crate::storage::keys::voided_key(region, index, crate::raft::cross::CUT).to_vec(),
                Vec::new(),
            );
            eprintln!("region {region}: voided the cross-region write at log index {index}: a crash cut it off before every participant's log held it (it was never acknowledged)");
        }
        storage.write(b, true).map_err(StartError::Void)
    }

    /// Wait until a read of `region` on this node is linearizable (see
    /// `Region::linearize`), asking the region's core; the time the read
    /// judges expiry at.
    pub async fn linearize(&self, region: u32, on_follower: bool) -> Result<u64, ReadError> {
        let Some(owner) = self.shared.router().core_of(region) else {
            return Err(ReadError::Failed(NO_REGION.into()));
        };
        if owner == self.id {
            return match self.opened(region).await {
                Some(r) => r.linearize(on_follower).await,
                None => Err(ReadError::Failed(NOT_STARTED.into())),
            };
        }
        let (tx, rx) = oneshot::channel();
        if self.shared.mesh[owner].unbounded_send(CoreMsg::Linearize { region, on_follower, tx }).is_err() {
            return Err(ReadError::Failed("owning core stopped".into()));
        }
        rx.await.unwrap_or_else(|_| Err(ReadError::Failed("owning core stopped".into())))
    }

    /// Change the membership of `region`, led by this node, on its core.
    pub async fn change_members(&self, region: u32, change: MemberChange) -> Result<(), ChangeError> {
        let stopped = || ChangeError::Failed("owning core stopped".into());
        let Some(owner) = self.shared.router().core_of(region) else {
            return Err(ChangeError::Failed(NO_REGION.into()));
        };
        if owner == self.id {
            return match self.local_region(region) {
                Some(r) => r.change_members(change).await,
                None => Err(ChangeError::Failed("region not started".into())),
            };
        }
        let (tx, rx) = oneshot::channel();
        if self.shared.mesh[owner].unbounded_send(CoreMsg::Members { region, change, tx }).is_err() {
            return Err(stopped());
        }
        rx.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Hand a PUBLISH / SPUBLISH to every other node of the cluster (each
    /// delivers it to its own subscribers). Fire and forget, as Pub/Sub is in
    /// Redis; the messages of one connection leave in order on one link per peer.
    pub fn broadcast_publish(&self, shard: bool, channel: &bytes::Bytes, message: &bytes::Bytes) {
        let (Some(links), Some(nodes)) = (&self.links, &self.shared.nodes) else { return };
        for (id, _) in nodes.all().into_iter().filter(|(id, _)| *id != nodes.me) {
            let link = links.link(id, crate::net::Class::Raft);
            let body =
                Body::Publish(crate::pb::PublishReq { channel: channel.clone(), message: message.clone(), shard });
            glommio::spawn_local(async move {
                let _ = link.call(0, body, Duration::from_secs(1)).await;
            })
            .detach();
        }
    }

    /// Serve an RPC from another node on the core that owns its region.
    pub async fn serve_peer(self: &Rc<Self>, region: u32, body: Body) -> Body {
        if let Body::Publish(p) = body {
            let kind = if p.shard { pubsub::Kind::Shard } else { pubsub::Kind::Channel };
            let receivers = self.shared.pubsub.publish(kind, &p.channel, &p.message) as u64;
            return Body::PublishResp(crate::pb::PublishResp { receivers });
        }
        let Some(owner) = self.shared.router().core_of(region) else {
            return error_body(UNREACHABLE, format!("no region {region} here yet"));
        };
        if owner == self.id {
            return match self.local_region(region) {
                Some(r) => r.serve_rpc(body).await,
                None => {
                    self.host_region(region);
                    error_body(UNREACHABLE, "region not started yet")
                }
            };
        }
        let (tx, rx) = oneshot::channel();
        if self.shared.mesh[owner].unbounded_send(CoreMsg::Peer { region, body, tx }).is_err() {
            return error_body(UNREACHABLE, "owning core stopped");
        }
        rx.await.unwrap_or_else(|_| error_body(UNREACHABLE, "owning core stopped"))
    }

    /// Start active expiry for every local region.
    pub fn start_background(self: &Rc<Self>) {
        if self.id == 0 && self.links.is_some() {
            glommio::spawn_local(reports::run(self.clone())).detach();
        }
        for route in self.shared.router().regions().iter().filter(|r| r.core == self.id) {
            if let Some(region) = self.local_region(route.id) {
                glommio::spawn_local(expire::run(self.clone(), region)).detach();
            }
        }
    }

    /// Another node sent `id` an RPC and this core has no group for it: a
    /// region made (by a split) after this node started, which a
    /// membership change adds this node to, or whose split this node's
    /// replica of the parent skipped (a snapshot taken after it). Its empty
    /// group is opened (it waits for the leader's entries or snapshot),
    /// unless a region this node holds still covers its first slot: that
    /// one's split, applied here, starts it.
    fn host_region(self: &Rc<Self>, id: u32) {
        let Some(route) = self.shared.router().get(id).cloned() else { return };
        let Some(nodes) = self.shared.nodes.clone() else { return };
        if !self.started.get() || route.core != self.id || self.local_region(id).is_some() {
            return;
        }
        let covered = self.regions.borrow().values().any(|r| {
            let d = r.span();
            d.id != id && d.start as u32 <= route.start as u32 && (route.start as u32) < d.end && nodes.hosts(d.id)
        });
        if covered {
            return;
        }
        self.open_later(route, false, false);
    }

    /// A write for `region`, which has no group here: held if it is being
    /// opened (`open_later`), else refused with `why`.
    fn hold(&self, region: u32, item: Item, why: &'static str) {
        if self.opening.borrow().contains(&region) {
            self.held.borrow_mut().entry(region).or_default().push(item);
        } else {
            item.refuse(WriteError::Unavailable(why));
        }
    }

    /// The group of `region` on this core, once open if it is being opened
    /// (`open_later`: a region just split off, whose reads come at once);
    /// `None` if it is not here.
    async fn opened(&self, region: u32) -> Option<Rc<Region>> {
        loop {
            if let Some(r) = self.local_region(region) {
                return Some(r);
            }
            if !self.opening.borrow().contains(&region) {
                return None;
            }
            glommio::timer::sleep(Duration::from_millis(2)).await;
        }
    }

    pub fn local_region(&self, id: u32) -> Option<Rc<Region>> {
        self.regions.borrow().get(&id).cloned()
    }

    /// Send a write to its region's proposer, here or on the owning core.
    pub fn submit_write(&self, region: u32, cmd: WriteCmd) -> oneshot::Receiver<WriteResult> {
        if region == cross::ALL_REGIONS {
            return self.submit_cross(cmd, Vec::new());
        }
        let (tx, rx) = oneshot::channel();
        let Some(owner) = self.shared.router().core_of(region) else {
            let _ = tx.send(Err(WriteError::Unavailable(NOT_STARTED)));
            return rx;
        };
        if owner == self.id {
            match self.local_region(region) {
                Some(r) => r.submit(cmd, tx),
                None => self.hold(region, Item::Cmd(cmd, tx.into()), NOT_STARTED),
            }
        } else {
            self.outgoing.push(&self.shared, owner, (region, cmd, tx));
        }
        rx
    }

    /// Send a transaction with watched keys to its region's proposer, here or on
    /// the owning core (see `Region::submit_fenced`).
    pub fn submit_fenced(
        &self,
        region: u32,
        cmd: Option<WriteCmd>,
        watched: Vec<Watched>,
    ) -> oneshot::Receiver<WriteResult> {
        if let (cross::ALL_REGIONS, Some(cmd)) = (region, &cmd) {
            return self.submit_cross(cmd.clone(), watched);
        }
        let (tx, rx) = oneshot::channel();
        let f = Fenced { cmd, watched, tx };
        let Some(owner) = self.shared.router().core_of(region) else {
            let _ = f.tx.send(Err(WriteError::Unavailable(NOT_STARTED)));
            return rx;
        };
        if owner == self.id {
            match self.local_region(region) {
                Some(r) => r.submit_fenced(f),
                None => self.hold(region, Item::Fenced(f), NOT_STARTED),
            }
        } else if let Err(e) = self.shared.mesh[owner].unbounded_send(CoreMsg::Fenced { region, f }) {
            if let CoreMsg::Fenced { f, .. } = e.into_inner() {
                let _ = f.tx.send(Err(WriteError::Unavailable(CORE_STOPPED)));
            }
        }
        rx
    }

    /// Serve messages from other cores until the mesh closes.
    pub async fn serve_inbox(self: Rc<Self>, mut inbox: Inbox) {
        while let Some(msg) = inbox.next().await {
            match msg {
                CoreMsg::Writes { items, tx } => {
                    let slots = crate::raft::region::Gather::slots(items.len(), tx);
                    for ((region, cmd), slot) in items.into_iter().zip(slots) {
                        let tx = crate::raft::region::ReplyTx::Batch(slot);
                        match self.local_region(region) {
                            Some(r) => r.submit(cmd, tx),
                            None => self.hold(region, Item::Cmd(cmd, tx), NOT_STARTED),
                        }
                    }
                }
                CoreMsg::Fenced { region, f } => match self.local_region(region) {
                    Some(r) => r.submit_fenced(f),
                    None => self.hold(region, Item::Fenced(f), NOT_OWNED),
                },
                CoreMsg::Cross { region, h } => match self.local_region(region) {
                    Some(r) => r.submit_cross(h),
                    None => self.hold(region, Item::Cross(h), NOT_OWNED),
                },
                CoreMsg::Linearize { region, on_follower, tx } => {
                    let me = self.clone();
                    glommio::spawn_local(async move {
                        let r = match me.opened(region).await {
                            Some(r) => r.linearize(on_follower).await,
                            None => Err(ReadError::Failed(NOT_STARTED.into())),
                        };
                        let _ = tx.send(r);
                    })
                    .detach();
                }
                CoreMsg::Members { region, change, tx } => match self.local_region(region) {
                    Some(r) => {
                        glommio::spawn_local(async move {
                            let _ = tx.send(r.change_members(change).await);
                        })
                        .detach();
                    }
                    None => {
                        let _ = tx.send(Err(ChangeError::Failed("region not started".into())));
                    }
                },
                CoreMsg::Peer { region, body, tx } => match self.local_region(region) {
                    Some(r) => {
                        glommio::spawn_local(async move {
                            let _ = tx.send(r.serve_rpc(body).await);
                        })
                        .detach();
                    }
                    None => {
                        self.host_region(region);
                        let _ = tx.send(error_body(UNREACHABLE, "region not started yet"));
                    }
                },
            }
        }
    }
}

/// Create the mesh: one inbox per core, every core holding every outbox.
pub fn mesh(cores: usize) -> (Vec<Outbox>, Vec<Inbox>) {
    (0..cores).map(|_| mpsc::unbounded()).unzip()
}
