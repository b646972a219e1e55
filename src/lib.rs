//! NeoKV: a Redis-compatible key-value server on RocksDB, replicated by Raft
//! (openraft), thread-per-core on glommio.
//!
//! # Layers (lower never imports higher)
//!
//! | layer | owns |
//! |---|---|
//! | [`protocol`] | RESP2/3 decode (zero-copy, incremental) and encode, argument parsing; `rdb` and `rdb_value` (`reader`, the bytes of an object; `decode`, `encode`, `stream`; `listpack`, `ziplist`: the packed encodings): Redis's serialization (DUMP / RESTORE, FUNCTION DUMP) |
//! | [`storage`] | the only RocksDB user: column families, byte layouts, WAL syncer, SST ingestion of received snapshots; `seglog`, the per-core io_uring segment log that holds the Raft log (`raft::log_store` writes it; `--raft-log rocksdb` keeps the log in a column family instead); `reserve`, the disk space given up to start on a full disk |
//! | [`cluster`] | key → slot → region → core routing (`Router`, replaced whole when a region splits; `Descriptor`: a region's id, slots and epoch, the newest epoch wins); `nodes`: the cluster's nodes, their addresses, each region's leader and Raft state, the ids removed for good; `load`: each hosted region's figures (its log's size, its write rate) for INFO and NEOKV.REGIONS; `placement`: which nodes each region lives on (`--replicas` of them), who should lead it, where ADDNODE and FORGET move replicas |
//! | [`net`] | node-to-node transport (cluster mode): `PeerFrame`s over TCP, the sending side of links (one per core, peer and class) |
//! | [`types`] | data-type semantics: deterministic apply of `WriteCmd`s (`write`; `apply`, the batch they write, and `Programs`, what runs whole command lines inside it), reads (`view`: the sources; `read_view`: any one of them), `found` (a collection as read), `zset_nodes` (apply's cache of rank-counter nodes); `stream` (with `stream_node`, the listpack nodes Redis would keep: `size`, their bytes; `trim`, `streamTrim`'s plan; `diff`, a test against redis-server), `dump` (a key as a DUMP value), `dbs` (databases: SELECT's numbers and SWAPDB's mapping to where each is stored) |
//! | [`raft`] | openraft config, glommio runtime adapter, log store, state machine, regions (`region`: the proposer and reads; `region::members`: a region's membership changes; `region::serve`: the RPCs it answers its peers, snapshot chunks included; `region::retention`: the log snapshotted and purged by its size; `region::split`: a region split by size, applied by `state_machine`); `cross`: where the copies of a cross-region write meet in apply, and the voiding of cut ones at open; `network` and `wire`: RPCs over `net` links |
//! | [`script`] | the Lua VM (sandbox, `redis.*`, cjson/cmsgpack/bit/struct and Redis's `math.random` in `libs`), running scripts, function libraries |
//! | [`shard`] | per-core state, the cross-core channel mesh, active expiry, the Pub/Sub registry (`pubsub`), what the server observes of itself (`observe`: command stats, slow log, latency monitor, MONITOR, CLIENT PAUSE), each connection as the node sees it (`client`: CLIENT LIST, KILL), per-core key access records (`access`: OBJECT IDLETIME / FREQ), membership changes of every region (`members`: CLUSTER ADDNODE / FORGET as moves of replicas), what this node tells the others of the regions it leads (`reports`), the coordinator of cross-region writes (`cross`) |
//! | [`cmd`] | the command table (`table`: what a row is; `registry`: every family's rows), dispatch (`mod.rs`), what a handler sees (`ctx`) and the connection's state (`session`), one family file per type (`stream` runs its writes inside apply; `dump`: DUMP / RESTORE), `txn` (MULTI/EXEC) with `in_apply` and `programs` (commands, transactions and scripts run inside apply), `script` (EVAL/FCALL), `pubsub`, `server`/`admin`/`info` (connection and server commands), `introspect` (MEMORY, OBJECT, ROLE, WAIT), `key_specs` (the rows' key specs and finding keys by them), `route` (a request's region, CROSSSLOT), `cluster` (CLUSTER, READONLY, and the MOVED/CLUSTERDOWN routing of cluster mode) |
//! | [`server`] | executors, listeners; `conn`: the connection loop (read, write, Pub/Sub delivery); `dispatch`: one request from its row to its reply (MULTI queueing, CLIENT PAUSE, the pipeline barrier, linearizable reads, plan execution, per-command statistics); `peers`: the cluster port's listener |
//! | [`failpoint`] | (beside the layers, imports none) every test hook: crash points, delays, a clock offset; compiled in only with the `failpoints` feature that `make test` enables |
//!
//! `types::notify` (keyspace events) is written by apply and delivered through
//! `shard::pubsub`; a transaction or a script reaches the command table from
//! inside apply through `types::apply::Programs`, which `cmd` implements.
//!
//! # Threading
//!
//! One glommio executor per core, pinned. Per-core state is `Rc`; cores share only
//! the `Storage` (RocksDB is thread-safe) and `shard::Shared` (config, stats,
//! client registry), and send each other typed messages. A region's Raft group
//! and proposer live on its owning core; reads run on the connection's core.
//!
//! # Write path
//!
//! handler → `WriteCmd` (absolute times) → owning core's proposer (one entry per
//! reactor turn) → openraft `client_write` → entry written to the core's segment
//! log, fdatasynced (group commit) → apply: one RocksDB `WriteBatch` per apply
//! batch, replies computed →
//! back to the connection, in order. In cluster mode the entry is acknowledged
//! once a majority of the region's voters hold it (`raft::network` over `net`).
//!
//! Tests: `tests/it/` starts the real binary; `cluster.rs` and `nemesis.rs` run
//! node processes with a proxy per link and check histories with
//! `linearizable.rs`.
//!
//! # The workspace's other crates
//!
//! `client/` (`neokv-client`) is the Neton client library for Rust services,
//! over NeoKV or any Redis; it never imports this crate (its tests start this
//! crate's binary). `client/macros` (`neokv-client-macros`) expands its
//! `#[lock]` attribute. Each has its own map in its `src/lib.rs`.

pub mod cluster;
pub mod cmd;
pub mod config;
pub mod failpoint;
pub mod net;
pub mod protocol;
pub mod raft;
pub mod script;
pub mod server;
pub mod shard;
pub mod storage;
pub mod types;

/// Generated from `proto/neokv.proto` (the log) and `proto/peer.proto` (node-to-node frames).
#[allow(clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/neokv.rs"));
}
