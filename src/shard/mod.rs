//! Per-core executors and the cross-core channel mesh.
//!
//! Owns: what each core holds (`Core`: its regions, a handle on the shared state)
//! and how cores talk (typed `CoreMsg`s over one inbox per core). Placement is
//! decided in one place (`cluster::Router`); a write for a region owned by another
//! core travels there as a message and its reply comes back on a oneshot.
//! Depends on `storage`, `cluster`, `raft`, `types`.

pub mod access;
pub mod expire;
pub mod observe;
pub mod pubsub;
pub mod shared;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use futures_channel::{mpsc, oneshot};
use futures_util::StreamExt;

use crate::pb::WriteCmd;
use crate::protocol::Reply;
use crate::raft::region::{Fenced, Region, RegionDeps};
use crate::types::cache::ReadCache;
use crate::types::watches::Watched;

pub use shared::Shared;

/// A message from one core to another.
pub enum CoreMsg {
    /// Propose `cmd` on `region` (owned by the receiving core) and reply on `tx`.
    Write { region: u32, cmd: WriteCmd, tx: oneshot::Sender<Reply> },
    /// A transaction with watched keys for `region` (see `Region::submit_fenced`).
    Fenced { region: u32, f: Fenced },
}

pub type Inbox = mpsc::UnboundedReceiver<CoreMsg>;
pub type Outbox = mpsc::UnboundedSender<CoreMsg>;

/// One core's state. Lives in an `Rc` on its executor; never crosses threads.
pub struct Core {
    pub id: usize,
    pub shared: Arc<Shared>,
    /// This core's cache of point reads (see `types::cache`).
    pub cache: ReadCache,
    regions: RefCell<HashMap<u32, Rc<Region>>>,
}

impl Core {
    pub fn new(id: usize, shared: Arc<Shared>) -> Rc<Core> {
        let per_core = (shared.config().read_cache_mb << 20) / shared.mesh.len().max(1);
        Rc::new(Core { id, shared, cache: ReadCache::new(per_core), regions: RefCell::new(HashMap::new()) })
    }

    /// Start every region this core owns; returns once each leads and has caught up.
    pub async fn start_regions(&self) -> Result<(), String> {
        let routes: Vec<_> = self.shared.router.regions().iter().filter(|r| r.core == self.id).cloned().collect();
        let deps = RegionDeps {
            storage: self.shared.storage.clone(),
            epochs: self.shared.epochs.clone(),
            blocked: self.shared.blocked.clone(),
            watches: self.shared.watches.clone(),
            programs: self.shared.programs.get().cloned(),
            notify: Some(self.shared.pubsub.clone()),
        };
        for route in routes {
            let snapshot_logs = self.shared.config().raft_snapshot_logs;
            let region = Region::start(deps.clone(), &route, snapshot_logs).await?;
            self.regions.borrow_mut().insert(route.id, region);
        }
        Ok(())
    }

    /// Start active expiry for every local region.
    pub fn start_background(self: &Rc<Self>) {
        for route in self.shared.router.regions().iter().filter(|r| r.core == self.id) {
            if let Some(region) = self.local_region(route.id) {
                glommio::spawn_local(expire::run(self.clone(), region, route.clone())).detach();
            }
        }
    }

    pub fn local_region(&self, id: u32) -> Option<Rc<Region>> {
        self.regions.borrow().get(&id).cloned()
    }

    /// Send a write to its region's proposer, here or on the owning core.
    pub fn submit_write(&self, region: u32, cmd: WriteCmd) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        let owner = self.shared.router.region(region).core;
        if owner == self.id {
            match self.local_region(region) {
                Some(r) => r.submit(cmd, tx),
                None => {
                    let _ = tx.send(Reply::error("ERR region not started"));
                }
            }
        } else if let Err(e) = self.shared.mesh[owner].unbounded_send(CoreMsg::Write { region, cmd, tx }) {
            if let CoreMsg::Write { tx, .. } = e.into_inner() {
                let _ = tx.send(Reply::error("ERR owning core stopped"));
            }
        }
        rx
    }

    /// Send a transaction with watched keys to its region's proposer, here or on
    /// the owning core (see `Region::submit_fenced`).
    pub fn submit_fenced(&self, region: u32, cmd: Option<WriteCmd>, watched: Vec<Watched>) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        let f = Fenced { cmd, watched, tx };
        let owner = self.shared.router.region(region).core;
        if owner == self.id {
            match self.local_region(region) {
                Some(r) => r.submit_fenced(f),
                None => {
                    let _ = f.tx.send(Reply::error("ERR region not started"));
                }
            }
        } else if let Err(e) = self.shared.mesh[owner].unbounded_send(CoreMsg::Fenced { region, f }) {
            if let CoreMsg::Fenced { f, .. } = e.into_inner() {
                let _ = f.tx.send(Reply::error("ERR owning core stopped"));
            }
        }
        rx
    }

    /// Serve messages from other cores until the mesh closes.
    pub async fn serve_inbox(self: Rc<Self>, mut inbox: Inbox) {
        while let Some(msg) = inbox.next().await {
            match msg {
                CoreMsg::Write { region, cmd, tx } => match self.local_region(region) {
                    Some(r) => r.submit(cmd, tx),
                    None => {
                        let _ = tx.send(Reply::error("ERR region not owned by this core"));
                    }
                },
                CoreMsg::Fenced { region, f } => match self.local_region(region) {
                    Some(r) => r.submit_fenced(f),
                    None => {
                        let _ = f.tx.send(Reply::error("ERR region not owned by this core"));
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
