//! INFO: Redis's sections and field names, filled with NeoKV's figures.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::table::Table;
use super::{CmdError, Ctx};
use crate::config::Config;
use crate::protocol::REDIS_VERSION;
use crate::shard::Shared;
use crate::types::keyspace::scan_keys;

/// Redis prints sections in this order whatever order they are asked for.
const ORDER: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];
/// `INFO` without arguments: every section but these.
fn is_default(section: &str) -> bool {
    !matches!(section, "commandstats" | "latencystats")
}

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1024.0 {
        format!("{bytes}B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.2}K", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}M", b / 1024.0 / 1024.0)
    } else {
        format!("{:.2}G", b / 1024.0 / 1024.0 / 1024.0)
    }
}

/// Resident set size from /proc (Linux).
pub(super) fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

fn total_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills the struct we pass; zeroed is a valid initial value.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return (0.0, 0.0);
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        (t(ru.ru_stime), t(ru.ru_utime))
    }
}

/// Render the requested sections (`default` when none are named) except the
/// keyspace, which needs a scan: the second value says whether it was asked for
/// (it always comes last; see [`keyspace_section`]).
pub fn render(ctx: &Ctx<'_>, args: &[Bytes]) -> Result<(String, bool), CmdError> {
    let asked = asked_sections(args);
    let shared = ctx.shared;
    let cfg = shared.config().clone();
    let mut out = String::new();
    for section in ORDER.iter().filter(|s| asked.contains(**s) && **s != "keyspace") {
        let mut s = String::new();
        match *section {
            "server" => server_section(&mut s, shared, &cfg),
            "clients" => clients_section(&mut s, shared, &cfg),
            "memory" => memory_section(&mut s, shared),
            "persistence" => persistence_section(&mut s, shared, &cfg),
            "stats" => stats_section(&mut s, shared),
            "replication" => match shared.nodes.as_deref() {
                Some(nodes) => replication_section(&mut s, nodes, shared),
                None => standalone_replication_section(&mut s, shared),
            },
            "cpu" => cpu_section(&mut s),
            "modules" => s.push_str("# Modules\r\n"),
            "errorstats" => errorstats_section(&mut s, shared),
            "cluster" => {
                let on = shared.nodes.is_some() as u8;
                let _ = write!(s, "# Cluster\r\ncluster_enabled:{on}\r\n");
            }
            "commandstats" => commandstats_section(&mut s, shared, ctx.table),
            "latencystats" => latencystats_section(&mut s, shared, &cfg, ctx.table),
            _ => continue,
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        out.push_str(&s);
    }
    Ok((out, asked.contains("keyspace")))
}

/// The sections INFO's arguments name (`default`, `all`, `everything`, or
/// section names, any case); the default ones without arguments.
fn asked_sections(args: &[Bytes]) -> std::collections::HashSet<String> {
    let mut asked = std::collections::HashSet::new();
    if args.is_empty() {
        asked.extend(ORDER.iter().filter(|s| is_default(s)).map(|s| s.to_string()));
    }
    for a in args {
        let a = String::from_utf8_lossy(a).to_ascii_lowercase();
        match a.as_str() {
            "default" => asked.extend(ORDER.iter().filter(|s| is_default(s)).map(|s| s.to_string())),
            "all" | "everything" => asked.extend(ORDER.iter().map(|s| s.to_string())),
            _ => {
                asked.insert(a);
            }
        }
    }
    asked
}

fn server_section(s: &mut String, shared: &Shared, cfg: &Config) {
    let up = shared.started.elapsed().as_secs();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let _ = write!(
            s,
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nneokv_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:io_uring\r\natomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\nprocess_supervised:no\r\nrun_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:10\r\nconfigured_hz:10\r\nlru_clock:{}\r\nexecutable:{}\r\nconfig_file:\r\nio_threads_active:0\r\nneokv_cores:{}\r\nneokv_regions:{}\r\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH,
            std::process::id(),
            shared.run_id,
            cfg.port,
            now.as_micros(),
            up,
            up / 86400,
            now.as_secs() & ((1 << 24) - 1),
            std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
            cfg.cores,
            shared.router().regions().len(),
        );
}

fn clients_section(s: &mut String, shared: &Shared, cfg: &Config) {
    let _ = write!(
            s,
            "# Clients\r\nconnected_clients:{}\r\ncluster_connections:0\r\nmaxclients:{}\r\nclient_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:{}\r\ntracking_clients:0\r\nclients_in_timeout_table:{}\r\n",
            shared.connected_clients(),
            cfg.maxclients,
            shared.blocked.blocked() + shared.observe.held(),
            shared.blocked.blocked(),
        );
}

fn memory_section(s: &mut String, shared: &Shared) {
    let rss = rss_bytes();
    let total = total_memory();
    let _ = write!(
            s,
            "# Memory\r\nused_memory:{rss}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\nused_memory_rss_human:{}\r\nused_memory_peak:{rss}\r\nused_memory_peak_human:{}\r\ntotal_system_memory:{total}\r\ntotal_system_memory_human:{}\r\nused_memory_dataset:{}\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\nmem_fragmentation_ratio:1.00\r\nmem_allocator:libc\r\n",
            human(rss),
            human(rss),
            human(rss),
            human(total),
            shared.storage.approximate_size(),
        );
}

fn persistence_section(s: &mut String, shared: &Shared, cfg: &Config) {
    let _ = write!(
            s,
            "# Persistence\r\nloading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\nrdb_changes_since_last_save:0\r\nrdb_bgsave_in_progress:0\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:ok\r\naof_enabled:1\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\naof_last_write_status:ok\r\nneokv_appendfsync:{}\r\nneokv_cross_voided_at_open:{}\r\nneokv_raft_log_bytes:{}\r\nneokv_raft_log_entries:{}\r\nneokv_raft_log_snapshots_by_size:{}\r\n",
            shared.last_save.load(Ordering::Relaxed),
            cfg.appendfsync.name(),
            shared.cross.voided_at_open.load(Ordering::Relaxed),
            shared.load.total(|l| &l.log_bytes),
            shared.load.total(|l| &l.log_entries),
            shared.load.total(|l| &l.snapshots_by_size),
        );
}

fn stats_section(s: &mut String, shared: &Shared) {
    let _ = write!(
            s,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:0\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\nevicted_keys:0\r\nkeyspace_hits:0\r\nkeyspace_misses:0\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\npubsubshard_channels:{}\r\nunexpected_error_replies:0\r\ntotal_error_replies:{}\r\n",
            shared.total(|s| &s.connections),
            shared.total(|s| &s.commands),
            shared.total(|s| &s.net_input),
            shared.total(|s| &s.net_output),
            shared.rejected_connections.load(Ordering::Relaxed),
            shared.expired_keys.load(Ordering::Relaxed),
            shared.pubsub.counts().0,
            shared.pubsub.numpat(),
            shared.pubsub.counts().1,
            shared.observe.total_errors.load(Ordering::Relaxed),
        );
}

/// INFO replication of a standalone server: a master without replicas.
fn standalone_replication_section(s: &mut String, shared: &Shared) {
    let _ = write!(
        s,
        "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
        shared.run_id
    );
}

fn cpu_section(s: &mut String) {
    let (sys, user) = cpu_times();
    let _ = write!(
            s,
            "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n"
        );
}

fn errorstats_section(s: &mut String, shared: &Shared) {
    s.push_str("# Errorstats\r\n");
    for (code, n) in shared.observe.error_stats() {
        let _ = write!(s, "errorstat_{code}:count={n}\r\n");
    }
}

fn commandstats_section(s: &mut String, shared: &Shared, table: &Table) {
    s.push_str("# Commandstats\r\n");
    for (name, c) in command_stats(shared, table) {
        let per = if c.calls == 0 { 0.0 } else { c.usec as f64 / c.calls as f64 };
        let _ = write!(
            s,
            "cmdstat_{name}:calls={},usec={},usec_per_call={per:.2},rejected_calls={},failed_calls={}\r\n",
            c.calls, c.usec, c.rejected, c.failed
        );
    }
}

fn latencystats_section(s: &mut String, shared: &Shared, cfg: &Config, table: &Table) {
    s.push_str("# Latencystats\r\n");
    if shared.observe.latency_tracking.load(Ordering::Relaxed) {
        let percentiles = percentiles(cfg.param("latency-tracking-info-percentiles").unwrap_or("50 99 99.9"));
        for (name, c) in command_stats(shared, table) {
            if c.hist.count() == 0 {
                continue;
            }
            let _ = write!(s, "latency_percentiles_usec_{name}:");
            for (i, (label, p)) in percentiles.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(s, "{sep}p{label}={:.3}", c.hist.percentile_us(*p));
            }
            s.push_str("\r\n");
        }
    }
}

/// Every command's figures by full name (`client|id`), sorted.
/// What this node leads, over all regions (ROLE, INFO replication).
pub struct ReplicationSummary {
    /// Regions led here.
    pub led: usize,
    /// Sum of the last log indexes of the regions led here (or, leading none,
    /// of the applied indexes of all).
    pub offset: u64,
    /// Each other member with the sum of its matched indexes over the regions
    /// led here.
    pub followers: Vec<(u64, u64)>,
}

pub fn replication_summary(nodes: &crate::cluster::nodes::Nodes) -> ReplicationSummary {
    let mut sum = ReplicationSummary { led: 0, offset: 0, followers: Vec::new() };
    let mut followers = std::collections::BTreeMap::<u64, u64>::new();
    let mut applied = 0;
    for r in nodes.region_ids().into_iter().filter(|&r| nodes.hosts(r)) {
        let st = nodes.status(r);
        applied += st.applied;
        if st.leading {
            sum.led += 1;
            sum.offset += st.last_log;
            for (id, m) in st.matched {
                *followers.entry(id).or_default() += m;
            }
        }
    }
    if sum.led == 0 {
        sum.offset = applied;
    }
    sum.followers = followers.into_iter().collect();
    sum
}

/// INFO replication in cluster mode: Redis's fields (a master with the other
/// members as its replicas if this node leads any region), then one line per
/// region: this node's role in it, term, leader, log and applied indexes,
/// voters and, on the leader, each follower's matched index.
fn replication_section(s: &mut String, nodes: &crate::cluster::nodes::Nodes, shared: &Shared) {
    let run_id = &shared.run_id;
    let rep = replication_summary(nodes);
    let role = if rep.led > 0 { "master" } else { "slave" };
    let _ = write!(s, "# Replication\r\nrole:{role}\r\n");
    if rep.led == 0 {
        let leader = nodes.leader(0).and_then(|l| nodes.client_addr(l)).unwrap_or_default();
        let (h, p) = leader.rsplit_once(':').unwrap_or(("", "0"));
        let _ = write!(
            s,
            "master_host:{h}\r\nmaster_port:{p}\r\nmaster_link_status:up\r\nslave_repl_offset:{}\r\n",
            rep.offset
        );
    }
    let _ = write!(s, "connected_slaves:{}\r\n", rep.followers.len());
    for (i, (id, off)) in rep.followers.iter().enumerate() {
        let addr = nodes.client_addr(*id).unwrap_or_default();
        let (h, p) = addr.rsplit_once(':').unwrap_or(("", "0"));
        let _ = write!(s, "slave{i}:ip={h},port={p},state=online,offset={off},lag=0\r\n");
    }
    let _ = write!(
        s,
        "master_failover_state:no-failover\r\nmaster_replid:{run_id}\r\nmaster_repl_offset:{}\r\nneokv_regions:{}\r\nneokv_regions_led:{}\r\n",
        rep.offset,
        nodes.region_ids().len(),
        rep.led
    );
    for r in nodes.region_ids().into_iter().filter(|&r| nodes.hosts(r)) {
        let st = nodes.status(r);
        let role = if st.leading {
            "leader"
        } else if st.voters.contains(&nodes.me) {
            "follower"
        } else {
            "learner"
        };
        let voters: Vec<String> = st.voters.iter().map(u64::to_string).collect();
        let matched: Vec<String> = st.matched.iter().map(|(id, m)| format!("{id}:{m}")).collect();
        let _ = write!(
            s,
            "region{r}:role={role},term={},leader={},last_log={},applied={},voters={},matched={},snapshots_in={},purged={},log_bytes={},state={},vote={},core_wait_ms={}\r\n",
            st.term,
            st.leader.unwrap_or(0),
            st.last_log,
            st.applied,
            voters.join("|"),
            matched.join("|"),
            st.snapshots_in,
            st.purged,
            shared.load.get(r).map_or(0, |l| l.get(|l| &l.log_bytes)),
            st.state,
            if st.vote_committed { "committed" } else { "open" },
            st.probe_sent.map_or(0, |t| t.elapsed().as_millis())
        );
    }
}

fn command_stats(shared: &crate::shard::Shared, table: &Table) -> Vec<(&'static str, crate::shard::observe::CmdStat)> {
    let mut v: Vec<_> = shared
        .observe
        .command_stats()
        .into_iter()
        .filter_map(|(id, c)| table.by_id(id).map(|spec| (spec.name, c)))
        .collect();
    v.sort_by_key(|(n, _)| *n);
    v
}

/// `latency-tracking-info-percentiles` as (label, value): `99.9` stays `99.9`,
/// `50.0` shows as `50`.
fn percentiles(list: &str) -> Vec<(String, f64)> {
    list.split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok())
        .map(|p| {
            let mut label = format!("{p:.6}");
            while label.ends_with('0') {
                label.pop();
            }
            if label.ends_with('.') {
                label.pop();
            }
            (label, p)
        })
        .collect()
}

/// The keyspace section: a line per database that holds keys (a scan of
/// every key; run it off the reactor). Judged at `now_ms`.
pub fn keyspace_section(
    storage: &crate::storage::Storage,
    now_ms: u64,
    dbs: &crate::types::dbs::Dbs,
    slots: &crate::types::keyspace::SlotRanges,
) -> Result<String, crate::storage::StorageError> {
    let mut s = String::from("# Keyspace\r\n");
    for db in 0..dbs.count() {
        let r = crate::types::Reader::at(storage, now_ms).in_db(dbs.physical(db as u16));
        let (mut keys, mut expires) = (0u64, 0u64);
        scan_keys(&r, slots, 0, None, usize::MAX, |k| {
            keys += 1;
            if k.expire_ms != 0 {
                expires += 1;
            }
        })?;
        if keys > 0 {
            let _ = write!(s, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
        }
    }
    Ok(s)
}
