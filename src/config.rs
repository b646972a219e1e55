//! Server configuration: the command line, and the parameters CONFIG GET/SET see.
//!
//! Typed fields drive behaviour; `params` holds every parameter as Redis prints
//! it, so CONFIG GET answers what redis-cli, redis-benchmark, memtier and Redis's
//! test suite ask for. Parameters without an effect in NeoKV are accepted and
//! remembered (documented in the README).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::storage::FsyncPolicy;

#[derive(Debug, Clone)]
pub struct Config {
    pub bind: String,
    pub port: u16,
    pub dir: PathBuf,
    pub cores: usize,
    pub regions: usize,
    /// `--regions` was given (otherwise the data directory's own count wins).
    pub regions_explicit: bool,
    /// `--read-policy lease` (cluster mode): leaders serve reads on their lease.
    pub lease_reads: bool,
    pub requirepass: String,
    pub appendfsync: FsyncPolicy,
    pub proto_max_bulk_len: i64,
    pub block_cache_mb: usize,
    pub write_buffer_mb: usize,
    /// Disk space kept in reserve in the data directory, given up to start on
    /// a nearly full disk (`storage::reserve`).
    pub disk_reserve_mb: u64,
    /// Read cache, in MiB over all cores (0 disables it).
    pub read_cache_mb: usize,
    pub maxclients: u64,
    /// Databases SELECT may choose (`databases`, fixed at start).
    pub databases: usize,
    /// Raft log entries between snapshots (the log is purged up to a snapshot).
    pub raft_snapshot_logs: u64,
    /// MiB of Raft log entries since the last snapshot that make the next
    /// one, and a quarter of it what stays behind a snapshot (0: by count only).
    pub raft_log_max_mb: u64,
    /// Pin each executor to a CPU.
    pub pin: bool,
    /// The Raft log lives in per-core segment logs under `<dir>/raftlog`
    /// (`--raft-log segments`, the default); otherwise in RocksDB.
    pub raft_log_segments: bool,
    /// Cluster mode (`None`: a standalone server).
    pub cluster: Option<ClusterConfig>,
    /// `stream-node-max-entries` and `stream-node-max-bytes` (read by every
    /// stream write, so kept parsed).
    pub stream_node_max_entries: u64,
    pub stream_node_max_bytes: u64,
    params: BTreeMap<String, String>,
}

/// How this node joins a cluster.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    pub node_id: u64,
    /// Port of the node-to-node listener (on `bind`).
    pub port: u16,
    /// Every member's node-to-node address, this node's included.
    pub peers: BTreeMap<u64, String>,
    /// A fresh node waits to be added to a running cluster (`--join`).
    pub join: bool,
    /// Voters per region (`--replicas`; at most the nodes of `peers`).
    pub replicas: usize,
    /// A region whose data passes this many MiB splits in two
    /// (`--region-split-mb`; 0: never).
    pub region_split_mb: u64,
}

/// Parameters and their defaults as Redis 7 prints them.
const DEFAULTS: &[(&str, &str)] = &[
    ("activedefrag", "no"),
    ("active-expire-effort", "1"),
    ("appendfilename", "appendonly.aof"),
    ("appendonly", "yes"),
    ("busy-reply-threshold", "5000"),
    ("client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    ("cluster-enabled", "no"),
    ("daemonize", "no"),
    ("dbfilename", "dump.rdb"),
    ("enable-debug-command", "yes"),
    ("hash-max-listpack-entries", "512"),
    ("hash-max-listpack-value", "64"),
    ("hash-max-ziplist-entries", "512"),
    ("hash-max-ziplist-value", "64"),
    ("hz", "10"),
    ("io-threads", "1"),
    ("latency-monitor-threshold", "0"),
    ("latency-tracking", "yes"),
    ("lazyfree-lazy-user-del", "no"),
    ("lfu-decay-time", "1"),
    ("lfu-log-factor", "10"),
    ("list-compress-depth", "0"),
    ("list-max-listpack-size", "-2"),
    ("list-max-ziplist-size", "-2"),
    ("logfile", ""),
    ("loglevel", "notice"),
    ("lua-memory-limit", "256mb"),
    ("lua-time-limit", "5000"),
    ("maxmemory", "0"),
    ("maxmemory-policy", "noeviction"),
    ("maxmemory-samples", "5"),
    ("min-replicas-to-write", "0"),
    ("notify-keyspace-events", ""),
    ("protected-mode", "no"),
    ("rdbcompression", "yes"),
    ("replica-read-only", "yes"),
    ("save", ""),
    ("set-max-intset-entries", "512"),
    ("set-max-listpack-entries", "128"),
    ("slowlog-log-slower-than", "10000"),
    ("slowlog-max-len", "128"),
    ("slave-read-only", "yes"),
    ("stop-writes-on-bgsave-error", "yes"),
    ("stream-node-max-bytes", "4096"),
    ("stream-node-max-entries", "100"),
    ("tcp-backlog", "511"),
    ("tcp-keepalive", "300"),
    ("timeout", "0"),
    ("zset-max-listpack-entries", "128"),
    ("zset-max-listpack-value", "64"),
    ("zset-max-ziplist-entries", "128"),
    ("zset-max-ziplist-value", "64"),
];

/// Redis 7.0's aliases (`alias`, `name`): one setting under two names, set
/// through either, shown under both.
const ALIASES: &[(&str, &str)] = &[
    ("lua-time-limit", "busy-reply-threshold"),
    ("hash-max-ziplist-entries", "hash-max-listpack-entries"),
    ("hash-max-ziplist-value", "hash-max-listpack-value"),
    ("zset-max-ziplist-entries", "zset-max-listpack-entries"),
    ("zset-max-ziplist-value", "zset-max-listpack-value"),
    ("list-max-ziplist-size", "list-max-listpack-size"),
    ("slave-read-only", "replica-read-only"),
];

/// Why a CONFIG SET was refused (the text after `ERR `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError {
    Unknown,
    Invalid(String),
}

impl Default for Config {
    fn default() -> Self {
        Config::new("127.0.0.1".into(), 6379, PathBuf::from("./data"), 1, 1, String::new(), FsyncPolicy::Always)
    }
}

impl Config {
    pub fn new(
        bind: String,
        port: u16,
        dir: PathBuf,
        cores: usize,
        regions: usize,
        requirepass: String,
        appendfsync: FsyncPolicy,
    ) -> Config {
        let mut c = Config {
            bind,
            port,
            dir,
            cores,
            regions,
            regions_explicit: false,
            lease_reads: false,
            requirepass,
            appendfsync,
            proto_max_bulk_len: 512 * 1024 * 1024,
            block_cache_mb: 256,
            write_buffer_mb: 64,
            disk_reserve_mb: 64,
            read_cache_mb: 256,
            maxclients: 10000,
            databases: crate::types::dbs::DEFAULT_DATABASES,
            pin: true,
            raft_log_segments: true,
            raft_snapshot_logs: 50_000,
            raft_log_max_mb: 64,
            cluster: None,
            stream_node_max_entries: 100,
            stream_node_max_bytes: 4096,
            params: DEFAULTS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        };
        c.sync_params();
        c
    }

    /// Refresh the text form of the typed fields.
    fn sync_params(&mut self) {
        let typed = [
            ("bind", self.bind.clone()),
            ("port", self.port.to_string()),
            ("dir", self.dir.display().to_string()),
            ("requirepass", self.requirepass.clone()),
            ("appendfsync", self.appendfsync.name().to_string()),
            ("proto-max-bulk-len", self.proto_max_bulk_len.to_string()),
            ("maxclients", self.maxclients.to_string()),
            ("databases", self.databases.to_string()),
        ];
        for (k, v) in typed {
            self.params.insert(k.to_string(), v);
        }
    }

    /// CONFIG GET databases follows `databases`.
    pub fn set_databases(&mut self) {
        self.sync_params();
    }

    /// Join a cluster (or not): CONFIG GET cluster-enabled follows.
    pub fn set_cluster(&mut self, cluster: Option<ClusterConfig>) {
        let on = if cluster.is_some() { "yes" } else { "no" };
        self.params.insert("cluster-enabled".into(), on.into());
        self.cluster = cluster;
    }

    /// One parameter's value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(|s| s.as_str())
    }

    /// Every parameter as (name, value), sorted by name.
    pub fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// CONFIG SET one parameter (name already lowercased), under its own
    /// name or an alias: both names then show the value.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SetError> {
        if !self.params.contains_key(name) {
            return Err(SetError::Unknown);
        }
        let canonical = ALIASES.iter().find(|(a, _)| *a == name).map_or(name, |(_, n)| *n);
        self.set_one(name, canonical, value)?;
        if let Some(v) = self.params.get(canonical).cloned() {
            for (alias, _) in ALIASES.iter().filter(|(_, n)| *n == canonical) {
                self.params.insert(alias.to_string(), v.clone());
            }
        }
        Ok(())
    }

    /// CONFIG SET of `name`, sent as `given` (the name in its errors).
    fn set_one(&mut self, given: &str, name: &str, value: &str) -> Result<(), SetError> {
        let bad = |why: &str| {
            SetError::Invalid(format!("CONFIG SET failed (possibly related to argument '{given}') - {why}"))
        };
        match name {
            "requirepass" => self.requirepass = value.to_string(),
            "proto-max-bulk-len" => {
                let v = parse_memory(value).ok_or_else(|| bad("argument couldn't be parsed into an integer"))?;
                if v < 1024 * 1024 {
                    return Err(bad("argument must be a memory value greater than 1mb"));
                }
                self.proto_max_bulk_len = v;
            }
            "maxclients" => {
                self.maxclients = value.parse().map_err(|_| bad("argument couldn't be parsed into an integer"))?;
            }
            "appendfsync" if FsyncPolicy::parse(value) != Some(self.appendfsync) => {
                return Err(bad("appendfsync is fixed at start in NeoKV (use --appendfsync)"));
            }
            "port" | "bind" | "dir" | "databases" => return Err(bad("can't set immutable config")),
            "stream-node-max-entries" => {
                let v = int_within(value, 0, LONG_MAX).map_err(|why| bad(&why))?;
                self.stream_node_max_entries = v as u64;
                self.params.insert(name.to_string(), v.to_string());
                return Ok(());
            }
            "stream-node-max-bytes" => {
                let v = memory_value(value).map_err(|why| bad(&why))?;
                self.stream_node_max_bytes = v as u64;
                self.params.insert(name.to_string(), v.to_string());
                return Ok(());
            }
            "notify-keyspace-events" => {
                let f = crate::types::notify::parse(value)
                    .ok_or_else(|| bad("Invalid event class character. Use 'Ag$lshzxeKEtmdn'."))?;
                self.params.insert(name.to_string(), crate::types::notify::render(f));
                return Ok(());
            }
            "lua-memory-limit" => {
                let v = parse_memory(value)
                    .filter(|v| *v >= 0)
                    .ok_or_else(|| bad("argument couldn't be parsed into an integer"))?;
                self.params.insert(name.to_string(), v.to_string());
                return Ok(());
            }
            _ => {
                let v = match kind(name) {
                    Kind::Immutable => return Err(bad("can't set immutable config")),
                    Kind::Text => value.to_string(),
                    Kind::Bool => match value.to_ascii_lowercase().as_str() {
                        v @ ("yes" | "no") => v.to_string(),
                        _ => return Err(bad("argument must be 'yes' or 'no'")),
                    },
                    Kind::Enum(names) => match names.iter().find(|n| n.eq_ignore_ascii_case(value)) {
                        Some(n) => n.to_string(),
                        None => {
                            return Err(bad(&format!("argument(s) must be one of the following: {}", names.join(", "))))
                        }
                    },
                    Kind::Int(min, max) => int_within(value, min, max).map_err(|why| bad(&why))?.to_string(),
                    Kind::Memory => memory_value(value).map_err(|why| bad(&why))?.to_string(),
                };
                self.params.insert(name.to_string(), v);
                return Ok(());
            }
        }
        self.params.insert(name.to_string(), value.to_string());
        self.sync_params();
        Ok(())
    }
}

/// What a parameter without its own rule in `Config::set_one` accepts, as
/// Redis 7.0's config table declares it (its type and bounds).
enum Kind {
    /// Fixed at start (`IMMUTABLE_CONFIG`).
    Immutable,
    /// yes or no, in any case; shown lowercase.
    Bool,
    /// One of the names, in any case; shown as listed.
    Enum(&'static [&'static str]),
    /// An integer within the bounds.
    Int(i64, i64),
    /// A memory value (`1gb`, `100mb`, bytes), not negative.
    Memory,
    /// Any text.
    Text,
}

/// An integer parameter's value within its bounds; else why not, as Redis says it.
fn int_within(value: &str, min: i64, max: i64) -> Result<i64, String> {
    let v: i64 = value.parse().map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
    if v < min || v > max {
        return Err(format!("argument must be between {min} and {max} inclusive"));
    }
    Ok(v)
}

/// A memory parameter's value in bytes (`1gb`, `100mb`, bytes; not negative).
fn memory_value(value: &str) -> Result<i64, String> {
    parse_memory(value).filter(|v| *v >= 0).ok_or_else(|| "argument must be a memory value".to_string())
}

const INT_MAX: i64 = i32::MAX as i64;
const LONG_MAX: i64 = i64::MAX;

fn kind(name: &str) -> Kind {
    match name {
        "appendfilename"
        | "cluster-enabled"
        | "daemonize"
        | "enable-debug-command"
        | "io-threads"
        | "logfile"
        | "tcp-backlog" => Kind::Immutable,
        "activedefrag"
        | "appendonly"
        | "latency-tracking"
        | "lazyfree-lazy-user-del"
        | "protected-mode"
        | "rdbcompression"
        | "replica-read-only"
        | "stop-writes-on-bgsave-error" => Kind::Bool,
        "loglevel" => Kind::Enum(&["debug", "verbose", "notice", "warning"]),
        "maxmemory-policy" => Kind::Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
        "active-expire-effort" => Kind::Int(1, 10),
        "maxmemory-samples" => Kind::Int(1, INT_MAX),
        "hz"
        | "lfu-decay-time"
        | "lfu-log-factor"
        | "list-compress-depth"
        | "min-replicas-to-write"
        | "tcp-keepalive"
        | "timeout" => Kind::Int(0, INT_MAX),
        "list-max-listpack-size" => Kind::Int(i32::MIN as i64, INT_MAX),
        "slowlog-log-slower-than" => Kind::Int(-1, LONG_MAX),
        "hash-max-listpack-entries"
        | "latency-monitor-threshold"
        | "slowlog-max-len"
        | "set-max-intset-entries"
        | "set-max-listpack-entries"
        | "zset-max-listpack-entries"
        | "busy-reply-threshold" => Kind::Int(0, LONG_MAX),
        "maxmemory" | "hash-max-listpack-value" | "zset-max-listpack-value" => Kind::Memory,
        _ => Kind::Text,
    }
}

/// Redis `memtoll`: an integer with an optional k/kb/m/mb/g/gb suffix.
pub fn parse_memory(s: &str) -> Option<i64> {
    let l = s.to_ascii_lowercase();
    let (num, mul) = [
        ("gb", 1i64 << 30),
        ("g", 1_000_000_000),
        ("mb", 1 << 20),
        ("m", 1_000_000),
        ("kb", 1 << 10),
        ("k", 1000),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suf, m)| l.strip_suffix(suf).map(|n| (n.to_string(), *m)))
    .unwrap_or((l.clone(), 1));
    num.parse::<i64>().ok()?.checked_mul(mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_get() {
        let mut c = Config::default();
        assert_eq!(c.params().find(|(k, _)| *k == "appendonly").map(|(_, v)| v), Some("yes"));
        c.set("requirepass", "pw").unwrap();
        assert_eq!(c.requirepass, "pw");
        assert_eq!(c.params().find(|(k, _)| *k == "requirepass").map(|(_, v)| v), Some("pw"));
        assert_eq!(c.set("no-such-thing", "1"), Err(SetError::Unknown));
        c.set("proto-max-bulk-len", "2mb").unwrap();
        assert_eq!(c.proto_max_bulk_len, 2 << 20);
        assert!(c.set("proto-max-bulk-len", "10").is_err());
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
    }

    #[test]
    fn typed_parameters_refuse_what_redis_refuses() {
        let mut c = Config::default();
        let refused = |c: &mut Config, k: &str, v: &str| match c.set(k, v) {
            Err(SetError::Invalid(m)) => m,
            other => panic!("{k} {v}: {other:?}"),
        };
        assert!(refused(&mut c, "maxmemory-policy", "nope").ends_with("must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"));
        c.set("maxmemory-policy", "ALLKEYS-LRU").unwrap();
        assert_eq!(c.param("maxmemory-policy"), Some("allkeys-lru"));
        assert!(refused(&mut c, "activedefrag", "maybe").ends_with("argument must be 'yes' or 'no'"));
        c.set("activedefrag", "YES").unwrap();
        assert_eq!(c.param("activedefrag"), Some("yes"));
        assert!(
            refused(&mut c, "maxmemory-samples", "0").ends_with("argument must be between 1 and 2147483647 inclusive")
        );
        assert!(refused(&mut c, "hz", "x").ends_with("argument couldn't be parsed into an integer"));
        assert!(refused(&mut c, "zset-max-ziplist-entries", "-1").contains("'zset-max-ziplist-entries'"));
        let m = refused(&mut c, "lua-time-limit", "-1");
        assert!(m.contains("'lua-time-limit'") && m.ends_with("between 0 and 9223372036854775807 inclusive"), "{m}");
        assert!(refused(&mut c, "stream-node-max-bytes", "x").ends_with("argument must be a memory value"));
        c.set("stream-node-max-bytes", "1kb").unwrap();
        assert_eq!(c.stream_node_max_bytes, 1024);
        c.set("hash-max-ziplist-value", "1kb").unwrap();
        assert_eq!(c.param("hash-max-listpack-value"), Some("1024"));
        c.set("maxmemory", "1mb").unwrap();
        assert_eq!(c.param("maxmemory"), Some("1048576"));
        assert!(refused(&mut c, "daemonize", "yes").ends_with("can't set immutable config"));
        assert_eq!(c.param("hash-max-ziplist-entries"), Some("512"), "Redis 7.0's built-in default");
    }
}
