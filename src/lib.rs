//! NeoKV: a Redis-compatible key-value server on RocksDB, replicated by Raft
//! (openraft), thread-per-core on glommio.
//!
//! # Layers (lower never imports higher)
//!
//! | layer | owns |
//! |---|---|
//! | [`protocol`] | RESP2/3 decode (zero-copy, incremental) and encode, argument parsing |
//! | [`storage`] | the only RocksDB user: column families, byte layouts, WAL syncer |
//! | [`cluster`] | key → slot → region → core routing |
//! | [`types`] | data-type semantics: deterministic apply of `WriteCmd`s, reads |
//! | [`raft`] | openraft config, glommio runtime adapter, log store, state machine, regions |
//! | [`shard`] | per-core state, the cross-core channel mesh, active expiry |
//! | [`cmd`] | the command table and one family file per type |
//! | [`server`] | executors, listener, connection loop (pipelining) |
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
//! reactor turn) → openraft `client_write` → log appended, WAL fsynced (group
//! commit) → apply: one RocksDB `WriteBatch` per apply batch, replies computed →
//! back to the connection, in order.

pub mod cluster;
pub mod cmd;
pub mod config;
pub mod protocol;
pub mod raft;
pub mod script;
pub mod server;
pub mod shard;
pub mod storage;
pub mod types;

/// Generated from `proto/neokv.proto`.
#[allow(clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/neokv.rs"));
}
