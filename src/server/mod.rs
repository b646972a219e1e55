//! The server: start one pinned glommio executor per core, bring up each core's
//! regions, then accept on the shared port (SO_REUSEPORT) on every core.
//!
//! Depends on everything below it; nothing depends on it but `main`.

pub mod conn;
pub mod dispatch;
pub mod peers;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use glommio::net::TcpListener;
use glommio::Placement;

use crate::cluster::Router;
use crate::config::Config;
use crate::raft::runtime::executor_builder;
use crate::shard::{self, Core, Inbox, Shared};
use crate::storage::{Storage, StorageError, StorageOptions};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The data directory does not fit how the server was started (another
    /// node's, more regions or databases than asked for, a Raft log kept
    /// elsewhere), or is damaged.
    #[error("{0}")]
    Refused(String),
    #[error("{what}: {e}")]
    Io { what: String, e: std::io::Error },
    #[error("{0}")]
    Storage(#[from] StorageError),
    #[error("{0}")]
    Regions(#[from] crate::raft::StartError),
    #[error("bad address {addr}: {e}")]
    Address { addr: String, e: std::net::AddrParseError },
    #[error("load the functions: {0}")]
    Functions(String),
    #[error("core {0} stopped abnormally")]
    CorePanicked(usize),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> StartError {
    let what = what.into();
    move |e| StartError::Io { what, e }
}

fn address(addr: String) -> Result<SocketAddr, StartError> {
    addr.parse().map_err(|e| StartError::Address { addr, e })
}

/// A cluster node's identity (`cluster::nodes::Identity`): read from the data
/// directory, or made for a directory used for the first time and written
/// before any Raft state is. A directory made by another node id is refused.
fn node_identity(storage: &Storage, config: &Config) -> Result<Option<crate::cluster::nodes::Identity>, StartError> {
    use crate::cluster::nodes::Identity;
    let Some(c) = &config.cluster else { return Ok(None) };
    let dir = &config.dir;
    let path = dir.join(crate::storage::identity::FILE);
    if let Some(text) = crate::storage::identity::load(dir).map_err(io(format!("read {}", path.display())))? {
        let id = Identity::decode(&text).map_err(|e| StartError::Refused(format!("{}: {e}", path.display())))?;
        if id.node_id != c.node_id {
            return Err(StartError::Refused(format!(
                "{} belongs to node {}, not --node-id {}: each node needs its own data directory",
                dir.display(),
                id.node_id,
                c.node_id
            )));
        }
        return Ok(Some(id));
    }
    // The lowest node of a fresh cluster's --peers makes the cluster id; a
    // directory that already holds Raft state (from before node identities)
    // is this node's, with a new incarnation its peers meet for the first time.
    let used = {
        use crate::storage::keys::{state_key, StateKind};
        let applied = storage.get(crate::storage::Cf::RaftState, &state_key(0, StateKind::Applied));
        crate::storage::seglog::raft_log_dir(dir).exists() || applied?.is_some()
    };
    let founder = !c.join && !used && c.peers.keys().next() == Some(&c.node_id);
    let id = Identity::fresh(c.node_id, founder);
    crate::storage::identity::save(dir, &id.encode()).map_err(io(format!("write {}", path.display())))?;
    eprintln!(
        "node {}: new node identity, incarnation {}{}",
        c.node_id,
        id.incarnation,
        if founder { " (it names this new cluster)" } else { "" }
    );
    Ok(Some(id))
}

/// Run the server until the process is signalled. Returns an error if it cannot start.
pub fn run(config: Config) -> Result<(), StartError> {
    let cores = config.cores.max(1);
    let storage = Storage::open(
        &config.dir,
        &StorageOptions {
            block_cache_bytes: config.block_cache_mb << 20,
            write_buffer_bytes: config.write_buffer_mb << 20,
            reserve_bytes: config.disk_reserve_mb << 20,
            fsync: config.appendfsync,
            // With segment logs the Raft log is the durability of applied state.
            apply_wal: !config.raft_log_segments,
            ..Default::default()
        },
    )?;
    let mut config = config;
    config.regions = region_layout(&storage, &config)?;
    check_databases(&storage, &config)?;
    // The regions `--regions` cut, then what splits made of them here.
    let router = Router::standalone(config.regions, cores);
    let spans = crate::raft::state_machine::stored_spans(&storage).map_err(io("read the regions' slots"))?;
    let router = router.learn(&spans).unwrap_or(router);
    raft_log_layout(&router, &config, cores)?;
    let addr = address(format!("{}:{}", config.bind, config.port))?;
    let identity = node_identity(&storage, &config)?;
    let (outboxes, inboxes) = shard::mesh(cores);
    let shared = Arc::new(Shared::new(storage.clone(), router, config, outboxes, identity));
    // Transactions run inside apply through the command table.
    let _ = shared.programs.set(Arc::new(crate::cmd::programs::Executor::new(&shared, crate::cmd::table())));
    crate::cmd::script::load_functions(&shared).map_err(StartError::Functions)?;
    install_signal_handler(shared.clone())?;

    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pin = shared.config().pin;
    let ready = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for (id, inbox) in inboxes.into_iter().enumerate() {
        let shared = shared.clone();
        let ready = ready.clone();
        let placement = if pin { Placement::Fixed(id % cpus) } else { Placement::Unbound };
        let h = executor_builder(placement)
            .name(&format!("neokv-core-{id}"))
            .spawn(move || core_main(id, cores, shared, inbox, ready, addr))
            .map_err(|e| StartError::Refused(format!("start core {id}: {e}")))?;
        handles.push(h);
    }
    for (id, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(StartError::CorePanicked(id)),
        }
    }
    Ok(())
}

/// Before the cores start: with `--raft-log segments`, put every region's
/// Raft log in its owning core's segment log (moving them when `--cores`
/// changed); with `--raft-log rocksdb`, refuse a directory whose log is in
/// segments (it would start from an empty log).
fn raft_log_layout(router: &Router, config: &Config, cores: usize) -> Result<(), StartError> {
    use crate::storage::seglog;
    let root = seglog::raft_log_dir(&config.dir);
    if !config.raft_log_segments {
        let used = std::fs::read_dir(&root).map(|mut d| d.next().is_some()).unwrap_or(false);
        if used {
            return Err(StartError::Refused(format!(
                "{} holds the Raft log in segment logs; start with --raft-log segments",
                root.display()
            )));
        }
        return Ok(());
    }
    let owners: HashMap<u32, usize> = router.regions().iter().map(|r| (r.id, r.core)).collect();
    let (policy, root2) = (config.appendfsync, root.clone());
    let ex = executor_builder(Placement::Unbound)
        .name("neokv-raftlog-layout")
        .make()
        .map_err(|e| StartError::Refused(format!("start the layout executor: {e}")))?;
    ex.run(async move {
        let owner = |r: u32| owners.get(&r).copied().unwrap_or(0);
        seglog::layout(&root2, cores, owner, seglog::SEGMENT_BYTES, policy).await
    })
    .map_err(io(format!("lay out the Raft log in {}", root.display())))
}

/// Refuse a data directory with keys in a database `--databases` does not
/// reach (a restart with fewer): they would be out of every client's reach,
/// and nothing would ever delete them. (Redis refuses to load such an RDB.)
fn check_databases(storage: &Storage, config: &Config) -> Result<(), StartError> {
    use crate::storage::keys::{db_of, db_prefix, db_slot_range};
    use crate::storage::Cf;
    let dbs = crate::types::dbs::Dbs::load(storage, config.databases).map_err(StartError::Refused)?;
    let first = |from: Vec<u8>, to: Vec<u8>| -> Result<Option<Vec<u8>>, StartError> {
        let mut k = None;
        storage.scan(Cf::Metadata, &from, &to, false, |key, _| {
            k = Some(key.to_vec());
            false
        })?;
        Ok(k)
    };
    let refuse = |p: u16| {
        Err(StartError::Refused(format!(
            "{} holds keys in database {} (stored as {p}); start it with --databases {} or more",
            config.dir.display(),
            dbs.logical(p),
            dbs.logical(p) as usize + 1
        )))
    };
    let (lo, hi) = db_slot_range(0, 0, crate::cluster::SLOT_COUNT);
    if dbs.logical(0) as usize >= dbs.count() && first(lo, hi)?.is_some() {
        return refuse(0);
    }
    // Every other database in use, one seek each.
    let mut from = db_prefix(1);
    while let Some(k) = first(from, vec![0xFF, 0xFF, 0xFF, 0xFF])? {
        let (p, _) = db_of(&k);
        if dbs.logical(p) as usize >= dbs.count() {
            return refuse(p);
        }
        match p.checked_add(1) {
            Some(next) => from = db_prefix(next),
            None => break,
        }
    }
    Ok(())
}

/// The region count of this data directory: the one it was created with (a
/// restart with other `--peers` or without `--regions` keeps it; an explicit
/// `--regions` that differs is refused, since the slots of every region would
/// move under their data).
fn region_layout(storage: &Storage, config: &Config) -> Result<usize, StartError> {
    use crate::storage::keys::{state_key, StateKind};
    use crate::storage::Cf;
    let key = state_key(u32::MAX, StateKind::Layout);
    let stored = storage.get(Cf::RaftState, &key)?;
    match stored.as_deref().map(|b| <[u8; 4]>::try_from(b).map(u32::from_be_bytes)) {
        Some(Ok(n)) if n as usize == config.regions || !config.regions_explicit => Ok(n as usize),
        Some(Ok(n)) => Err(StartError::Refused(format!(
            "{} holds {n} regions; --regions {} differs (start it with --regions {n}, or without --regions)",
            config.dir.display(),
            config.regions
        ))),
        Some(Err(_)) => Err(StartError::Refused("the stored region count is damaged".into())),
        None => {
            let mut b = crate::storage::Batch::new();
            b.put(Cf::RaftState, key, (config.regions as u32).to_be_bytes().to_vec());
            storage.write(b, true)?;
            Ok(config.regions)
        }
    }
}

async fn core_main(
    id: usize,
    cores: usize,
    shared: Arc<Shared>,
    inbox: Inbox,
    ready: Arc<AtomicUsize>,
    addr: SocketAddr,
) -> Result<(), StartError> {
    let core = Core::new(id, shared);
    glommio::spawn_local(core.clone().serve_inbox(inbox)).detach();
    // Other nodes may call before this node's regions are up: they hear
    // "not started yet" and retry.
    let cluster_addr = core.shared.config().cluster.as_ref().map(|c| (c.port, core.shared.config().bind.clone()));
    if let Some((port, bind)) = cluster_addr {
        let at = address(format!("{bind}:{port}"))?;
        let l = listen(at, &core.shared).map_err(io(format!("bind cluster port {at}")))?;
        glommio::spawn_local(peers::accept_loop(core.clone(), l)).detach();
    }
    core.start_regions().await?;
    core.start_background();
    // Accept only once every core serves its regions.
    ready.fetch_add(1, Ordering::SeqCst);
    while ready.load(Ordering::SeqCst) < cores {
        glommio::timer::sleep(Duration::from_millis(2)).await;
    }
    let listener = listen(addr, &core.shared).map_err(io(format!("bind {addr}")))?;
    if ready.fetch_add(1, Ordering::SeqCst) == 2 * cores - 1 {
        println!("NeoKV ready on {addr} ({cores} cores, {} regions)", core.shared.router().regions().len());
    }
    accept_loop(core, listener).await;
    Ok(())
}

/// A listening socket on `addr` shared by every core (SO_REUSEPORT), its
/// descriptor recorded so a stopping server can close it first.
fn listen(addr: SocketAddr, shared: &Shared) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    use std::os::fd::{FromRawFd, IntoRawFd};
    let sk = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    sk.set_reuse_port(true)?;
    sk.set_reuse_address(true)?;
    sk.bind(&addr.into())?;
    sk.listen(511)?;
    let fd = sk.into_raw_fd();
    if let Ok(mut l) = shared.listeners.lock() {
        l.push(fd);
    }
    // SAFETY: `fd` is a bound, listening socket this function owns.
    Ok(unsafe { TcpListener::from_raw_fd(fd) })
}

async fn accept_loop(core: Rc<Core>, listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok(stream) => {
                glommio::spawn_local(conn::serve(core.clone(), stream)).detach();
            }
            Err(_) if core.shared.stopping.load(std::sync::atomic::Ordering::SeqCst) => return,
            Err(e) => {
                eprintln!("accept: {e}");
                glommio::timer::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// On SIGINT/SIGTERM, make the WAL durable and exit.
fn install_signal_handler(shared: Arc<Shared>) -> Result<(), StartError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(io("install signal handlers"))?;
    std::thread::Builder::new()
        .name("neokv-signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                shared.stop(0);
            }
        })
        .map_err(io("start the signal thread"))?;
    Ok(())
}
