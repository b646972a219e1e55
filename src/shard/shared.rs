//! State shared by all cores: storage, routing, runtime config, statistics,
//! the client registry and SCAN cursors. Nothing here is on a per-command hot
//! path except per-core counters (one cache line per core).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use super::client::ClientEntry;
use super::Outbox;
use crate::cluster::Router;
use crate::config::Config;
use crate::storage::Storage;
use crate::types::cache::Epochs;

/// Counters one core updates; padded so cores never share a cache line.
#[repr(align(128))]
#[derive(Default)]
pub struct CoreStats {
    pub commands: AtomicU64,
    pub net_input: AtomicU64,
    pub net_output: AtomicU64,
    pub connections: AtomicU64,
}

/// Bounded map of SCAN cursors to the metadata key they stopped at.
#[derive(Default)]
pub struct ScanCursors {
    next: u64,
    map: HashMap<u64, Vec<u8>>,
    order: VecDeque<u64>,
}

const MAX_CURSORS: usize = 65_536;

impl ScanCursors {
    /// File the key a scan stopped at; the id fits in 50 bits (the cursor's high
    /// bits). Ids start at a random point so a cursor from before a restart rarely
    /// names a live entry, and a wrong one is caught by its slot not matching.
    pub fn put(&mut self, last_key: Vec<u8>) -> u64 {
        if self.next == 0 {
            self.next = rand::random_range(1..1u64 << 40);
        }
        // 1 ..= 2^50 - 1: never 0, so a cursor is never the "done" cursor.
        self.next = self.next % ((1 << 50) - 1) + 1;
        let id = self.next;
        self.map.insert(id, last_key);
        self.order.push_back(id);
        while self.order.len() > MAX_CURSORS {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
        id
    }
    pub fn get(&self, id: u64) -> Option<Vec<u8>> {
        self.map.get(&id).cloned()
    }
}

/// The C allocator's view of the heap (glibc's `mallinfo2`): bytes in use, and
/// bytes it holds from the system (in use or free). Zeros where unknown.
pub fn heap_bytes() -> (u64, u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        let m = unsafe { libc::mallinfo2() };
        let mapped = m.hblkhd as u64;
        (m.uordblks as u64 + mapped, m.arena as u64 + mapped)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        (0, 0)
    }
}

pub struct Shared {
    pub storage: Storage,
    /// Write epochs that keep every core's read cache exact.
    pub epochs: Arc<Epochs>,
    /// Clients blocked on keys (BLPOP, ...).
    pub blocked: Arc<crate::types::blocked::Blocked>,
    /// Keys clients watch (WATCH), and what happened to them.
    pub watches: Arc<crate::types::watches::Watches>,
    /// Where the copies of a cross-region write meet in apply (`raft::cross`).
    pub cross: Arc<crate::raft::cross::Rendezvous>,
    /// Cached scripts and the scripts running now.
    pub scripts: Arc<crate::script::Registry>,
    /// Command statistics, slow log, latency monitor, MONITOR, CLIENT PAUSE.
    pub observe: super::observe::Observe,
    /// Pub/Sub subscriptions of every connection.
    pub pubsub: Arc<super::pubsub::PubSub>,
    /// Each region's function libraries (replicated: changed by apply).
    pub functions: RwLock<HashMap<u32, crate::script::functions::Libraries>>,
    /// Runs transactions inside apply; set once by the server at start (the
    /// command layer implements it).
    pub programs: std::sync::OnceLock<Arc<dyn crate::types::apply::Programs>>,
    /// Slot → region → core: replaced whole when a region splits here or
    /// one is learned from another node ([`Shared::router`], [`Shared::learn_regions`]).
    routes: RwLock<Arc<Router>>,
    pub config: RwLock<Config>,
    pub mesh: Vec<Outbox>,
    pub stats: Vec<CoreStats>,
    pub clients: Mutex<BTreeMap<u64, Arc<ClientEntry>>>,
    /// The most connections since memory was last handed back (server::conn).
    pub peak_clients: AtomicUsize,
    /// Every core's listening socket, closed first when the server stops.
    pub listeners: Mutex<Vec<std::os::fd::RawFd>>,
    /// Set by [`Shared::stop`] before it shuts the listeners: their accept
    /// loops end quietly instead of reporting the shutdown as an error.
    pub stopping: std::sync::atomic::AtomicBool,
    pub next_client_id: AtomicU64,
    pub scan_cursors: Mutex<ScanCursors>,
    pub started: Instant,
    pub started_unix: u64,
    pub last_save: AtomicU64,
    pub expired_keys: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub run_id: String,
    /// When each key was last used and how often (OBJECT IDLETIME / FREQ).
    pub access: super::access::Access,
    /// The allocator's bytes in use once the server was set up (MEMORY STATS).
    pub startup_allocated: u64,
    /// The cluster's nodes and region leaders (`None`: standalone).
    pub nodes: Option<Arc<crate::cluster::nodes::Nodes>>,
    /// The databases and SWAPDB's mapping of them.
    pub dbs: Arc<crate::types::dbs::Dbs>,
    /// Each hosted region's figures: its log's size, its write rate.
    pub load: Arc<crate::cluster::load::Load>,
}

impl Shared {
    /// `identity`: a cluster node's, as `server::run` loaded or made it.
    pub fn new(
        storage: Storage,
        router: Router,
        config: Config,
        mesh: Vec<Outbox>,
        identity: Option<crate::cluster::nodes::Identity>,
    ) -> Shared {
        let cores = mesh.len();
        let regions = config.regions;
        let now = crate::types::now_ms() / 1000;
        let run_id: String =
            (0..40).map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap_or('0')).collect();
        let observe = super::observe::Observe::new(cores);
        observe.configure(&config);
        let access = super::access::Access::new(cores, crate::types::now_ms());
        access.configure(config.param("lfu-log-factor"), config.param("lfu-decay-time"));
        let nodes = config.cluster.as_ref().map(|c| {
            use crate::cluster::nodes::{Identity, Nodes};
            let client_addr = format!("{}:{}", config.bind, config.port);
            let identity = identity.unwrap_or_else(|| Identity::fresh(c.node_id, false));
            let dir = config.dir.clone();
            let persist: crate::cluster::nodes::Persist = Box::new(move |i: &Identity| {
                crate::storage::identity::save(&dir, &i.encode()).map_err(|e| format!("save the node identity: {e}"))
            });
            Arc::new(
                Nodes::with_identity(c.node_id, client_addr, c.peers.clone(), regions, c.join, identity, Some(persist))
                    .with_replicas(c.replicas),
            )
        });
        let dbs = crate::types::dbs::Dbs::load(&storage, config.databases)
            .unwrap_or_else(|_| crate::types::dbs::Dbs::new(config.databases));
        Shared {
            load: Arc::default(),
            dbs: Arc::new(dbs),
            nodes,
            access,
            startup_allocated: heap_bytes().0,
            storage,
            epochs: Arc::new(Epochs::default()),
            blocked: Default::default(),
            watches: Arc::new(crate::types::watches::Watches::new()),
            cross: Arc::default(),
            programs: std::sync::OnceLock::new(),
            scripts: Default::default(),
            pubsub: Default::default(),
            observe,
            functions: RwLock::new(HashMap::new()),
            routes: RwLock::new(Arc::new(router)),
            config: RwLock::new(config),
            mesh,
            stats: (0..cores).map(|_| CoreStats::default()).collect(),
            clients: Mutex::new(BTreeMap::new()),
            peak_clients: AtomicUsize::new(0),
            listeners: Mutex::new(Vec::new()),
            stopping: std::sync::atomic::AtomicBool::new(false),
            next_client_id: AtomicU64::new(1),
            scan_cursors: Mutex::new(ScanCursors::default()),
            started: Instant::now(),
            started_unix: now,
            last_save: AtomicU64::new(now),
            expired_keys: AtomicU64::new(0),
            rejected_connections: AtomicU64::new(0),
            run_id,
        }
    }

    /// The routes as they are now: one snapshot, for one decision (a
    /// command's region and the epoch it was routed by come from the same).
    pub fn router(&self) -> Arc<Router> {
        self.routes.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Take in regions' descriptors (a split applied here, another node's
    /// report): true if the routes changed.
    pub fn learn_regions(&self, descs: &[crate::cluster::Descriptor]) -> bool {
        let mut r = self.routes.write().unwrap_or_else(|e| e.into_inner());
        match r.learn(descs) {
            Some(new) => {
                *r = Arc::new(new);
                true
            }
            None => false,
        }
    }

    pub fn config(&self) -> std::sync::RwLockReadGuard<'_, Config> {
        self.config.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn total(&self, f: impl Fn(&CoreStats) -> &AtomicU64) -> u64 {
        self.stats.iter().map(|s| f(s).load(Ordering::Relaxed)).sum()
    }

    /// Make every core's segment log durable (a no-op with `--raft-log rocksdb`).
    pub fn sync_raft_log(&self) -> std::io::Result<()> {
        let (segments, dir) = {
            let cfg = self.config();
            (cfg.raft_log_segments, cfg.dir.clone())
        };
        if !segments {
            return Ok(());
        }
        crate::storage::seglog::sync_files(&crate::storage::seglog::raft_log_dir(&dir))
    }

    /// Stop the process: refuse new connections first (an accepted connection
    /// is never dropped unanswered by a half-stopped server), make the log
    /// and the applied state durable, exit with `code`. Everything
    /// acknowledged is already in the Raft log; persisting the applied state
    /// (flushing it, when apply writes past the WAL) only spares the next
    /// start replaying the log.
    pub fn stop(&self, code: i32) -> ! {
        self.stopping.store(true, Ordering::SeqCst);
        for fd in self.listeners.lock().map(|l| l.clone()).unwrap_or_default() {
            // SAFETY: shutdown(2) on a descriptor we own; at worst EBADF.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
        let _ = self.sync_raft_log();
        let _ = self.storage.persist_applied();
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: _exit ends the process at once: no atexit handlers or C++ static
        // destructors racing the other cores' threads (the WAL is already durable).
        unsafe { libc::_exit(code) }
    }

    pub fn connected_clients(&self) -> usize {
        self.clients.lock().map(|c| c.len()).unwrap_or(0)
    }
}
