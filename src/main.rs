//! `neokv-server`: parse the command line, start the server. No logic here.

use std::path::PathBuf;

use clap::Parser;
use neokv::config::{ClusterConfig, Config};
use neokv::storage::FsyncPolicy;

#[derive(Parser, Debug)]
#[command(name = "neokv-server", version, about = "A Redis-compatible key-value server on RocksDB and Raft")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// TCP port.
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Data directory (RocksDB and the Raft log).
    #[arg(long, default_value = "./data")]
    dir: PathBuf,
    /// Executor threads, one per core (default: all cores).
    #[arg(long)]
    cores: Option<usize>,
    /// Regions (Raft groups) the 16384 slots are split into (default: one per
    /// core standalone, so every core proposes and applies its own writes; in a
    /// cluster, 4 per node so every node leads several). A data directory keeps
    /// the count it was created with.
    #[arg(long)]
    regions: Option<usize>,
    /// Cluster mode: this node's id (a positive integer, listed in --peers).
    #[arg(long, requires_all = ["cluster_port", "peers"])]
    node_id: Option<u64>,
    /// Cluster mode: port of the node-to-node listener.
    #[arg(long, requires = "node_id")]
    cluster_port: Option<u16>,
    /// Cluster mode: every member's node-to-node address, this node's included:
    /// `1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003`.
    #[arg(long, requires = "node_id")]
    peers: Option<String>,
    /// Cluster mode: a fresh node joins a running cluster (it waits to be added
    /// with CLUSTER ADDNODE) instead of forming a new one with the --peers.
    #[arg(long, requires = "node_id")]
    join: bool,
    /// Cluster mode: voters per region (at most the node count): each region
    /// lives on this many nodes, spread evenly.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=64))]
    replicas: u32,
    /// Cluster mode: a region whose data passes this many MiB splits in two,
    /// at a slot boundary near the middle of its bytes (0: never).
    #[arg(long, default_value_t = 96)]
    region_split_mb: u64,
    /// Cluster mode: how a leader makes a read linearizable: `readindex` (a
    /// quorum confirms its leadership, shared by the reads of a reactor turn) or
    /// `lease` (no round trip while its leader lease runs; assumes clocks that
    /// drift less than the lease).
    #[arg(long, default_value = "readindex", value_parser = ["readindex", "lease"])]
    read_policy: String,
    /// Databases SELECT may choose (standalone; a cluster serves database 0).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65536))]
    databases: u32,
    /// Password for AUTH (the `default` user).
    #[arg(long, default_value = "")]
    requirepass: String,
    /// When the Raft log is fsynced: always (before every acknowledgement), everysec, no.
    #[arg(long, default_value = "always", value_parser = parse_fsync)]
    appendfsync: FsyncPolicy,
    /// Largest bulk string a client may send (bytes, or with a k/kb/m/mb/g/gb suffix).
    #[arg(long, default_value = "512mb")]
    proto_max_bulk_len: String,
    /// Raft log entries between snapshots; the log is purged up to each snapshot.
    #[arg(long, default_value_t = 50_000)]
    raft_snapshot_logs: u64,
    /// A region's Raft log is snapshotted once the entries since its last
    /// snapshot hold this many MiB, and purged behind the snapshot down to a
    /// quarter of it (0: by entry count only, `--raft-snapshot-logs`).
    #[arg(long, default_value_t = 64)]
    raft_log_max_mb: u64,
    /// Where the Raft log lives: `segments` (per-core segment logs under
    /// `<dir>/raftlog`, written through io_uring) or `rocksdb` (its own column
    /// family). A RocksDB log is moved into segments when a server starts with
    /// `segments`; the other way is refused.
    #[arg(long, default_value = "segments", value_parser = ["segments", "rocksdb"])]
    raft_log: String,
    /// Do not pin executor threads to CPUs (tests run many servers on few CPUs).
    #[arg(long)]
    no_pin: bool,
    /// RocksDB memtable size (per column family) in MiB.
    #[arg(long, default_value_t = 64)]
    write_buffer_mb: usize,
    /// Disk space in MiB kept in reserve in the data directory and given up
    /// when the server starts on a nearly full disk, so it can start (0: none).
    #[arg(long, default_value_t = 64)]
    disk_reserve_mb: u64,
    /// Read cache of point reads in MiB, over all cores (0 disables it).
    #[arg(long, default_value_t = 256)]
    read_cache_mb: usize,
    /// RocksDB block cache size in MiB.
    #[arg(long, default_value_t = 256)]
    block_cache_mb: usize,
}

fn fail(msg: &str) -> ! {
    eprintln!("neokv-server: {msg}");
    std::process::exit(2);
}

fn parse_fsync(s: &str) -> Result<FsyncPolicy, String> {
    FsyncPolicy::parse(s).ok_or_else(|| format!("expected always, everysec or no; got {s}"))
}

/// Stack for every thread the server starts (glommio's executors take std's
/// default): a script's reply may nest ~8,000 tables deep, as redis-server's
/// does, and its conversion, encoding and drop recurse once per level.
const THREAD_STACK: &str = "16777216";

fn main() {
    // Before any thread exists; std reads it once, at the first spawn.
    if std::env::var_os("RUST_MIN_STACK").is_none() {
        std::env::set_var("RUST_MIN_STACK", THREAD_STACK);
    }
    let a = Args::parse();
    let cores = a.cores.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let cluster = match (a.node_id, a.cluster_port, a.peers) {
        (Some(node_id), Some(port), Some(peers)) => {
            let peers = neokv::cluster::nodes::parse_peers(&peers).unwrap_or_else(|e| fail(&format!("--peers: {e}")));
            if !peers.contains_key(&node_id) {
                fail(&format!("--peers must list this node ({node_id}) too"));
            }
            Some(ClusterConfig {
                node_id,
                port,
                peers,
                join: a.join,
                replicas: a.replicas as usize,
                region_split_mb: a.region_split_mb,
            })
        }
        _ => None,
    };
    // A data directory keeps the count it was created with (see server::run);
    // a node joining a cluster counts the members it joins.
    let regions = a.regions.unwrap_or(match &cluster {
        Some(c) if c.join => 4 * (c.peers.len() - 1).max(1),
        Some(c) => 4 * c.peers.len(),
        None => cores,
    });
    // An absolute path, as Redis's CONFIG GET dir shows it: glommio's io_uring
    // opens of the segment log's directory fail on a relative one (EBADF).
    let dir = std::path::absolute(&a.dir).unwrap_or_else(|e| fail(&format!("--dir {}: {e}", a.dir.display())));
    let mut config = Config::new(a.bind, a.port, dir, cores, regions, a.requirepass, a.appendfsync);
    config.set_cluster(cluster);
    config.regions_explicit = a.regions.is_some();
    config.databases = a.databases as usize;
    config.set_databases();
    config.lease_reads = a.read_policy == "lease";
    config.block_cache_mb = a.block_cache_mb;
    config.write_buffer_mb = a.write_buffer_mb;
    config.disk_reserve_mb = a.disk_reserve_mb;
    config.read_cache_mb = a.read_cache_mb;
    config.pin = !a.no_pin;
    config.raft_snapshot_logs = a.raft_snapshot_logs;
    config.raft_log_max_mb = a.raft_log_max_mb;
    config.raft_log_segments = a.raft_log == "segments";
    if let Err(e) = config.set("proto-max-bulk-len", &a.proto_max_bulk_len) {
        eprintln!("neokv-server: --proto-max-bulk-len: {e:?}");
        std::process::exit(2);
    }
    if let Err(e) = neokv::server::run(config) {
        eprintln!("neokv-server: {e}");
        std::process::exit(1);
    }
}
