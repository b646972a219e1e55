//! Data-type semantics over storage, and the replicated write vocabulary.
//!
//! Owns: what each write does to the stored bytes (`write::apply_cmd` over an
//! [`ApplyCtx`], deterministic: time comes from the log entry, never the local
//! clock) and how reads interpret them (functions over a [`Source`]: a client's
//! reader or snapshot, or apply's batch). One file per type (`string.rs` ...
//! `zset.rs`), plus what they share: `view` (the read interface), `apply` (the
//! batch overlay), `coll` (composite keys), `members` (apply's in-memory
//! index of the sets SPOP draws from), `blocked` (clients waiting on keys),
//! `sort` (SORT over lists, sets and sorted sets, SORT ... STORE's apply),
//! `geo_search` (GEOSEARCH / GEORADIUS and their STORE forms' apply), `dump`
//! (DUMP and RESTORE's apply) and `dbs` (databases: every read and write is in
//! one, [`Source::db`] / `ApplyCtx::select`). Every write is a typed operation
//! of `proto/neokv.proto`; stream writes reach `cmd::stream_apply` through
//! `apply::Programs`, as scripts do.
//! Depends on `storage`, `cluster` (slot of a key) and `protocol` (the `Reply`
//! each write produces). Never touches sockets, Raft or cores.

/// Unwrap an inner `Result<_, TypeError>` or return it as the command's error.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        }
    };
}

pub mod apply;
pub mod bitmap;
pub mod bits;
pub mod blocked;
pub mod cache;
pub mod coll;
pub mod dbs;
pub mod dump;
pub mod found;
pub mod geo;
pub mod geo_search;
pub mod glob;
pub mod hash;
pub mod hll;
pub mod keyspace;
pub mod list;
pub mod members;
pub mod notify;
pub mod read_view;
pub mod set;
pub mod sort;
pub mod stream;
pub mod stream_node;
pub mod string;
pub mod view;
pub mod watches;
pub mod write;
pub mod zset;
pub mod zset_nodes;

use crate::cluster::key_slot;
use crate::storage::keys::meta_key_in;
use crate::storage::StorageError;

pub use apply::{Applied, ApplyCtx, VERSION_SHIFT};
pub use read_view::ReadView;
pub use view::{Reader, Snap, Source};

/// The largest string value (Redis's default `proto-max-bulk-len`); fixed so that
/// every replica applies the same limit.
pub const MAX_STRING_LEN: usize = 512 * 1024 * 1024;

/// A command-level failure. `Display` is Redis's error reply text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    #[error("ERR value is not a valid float")]
    NotFloat,
    #[error("ERR increment or decrement would overflow")]
    Overflow,
    #[error("ERR increment would produce NaN or Infinity")]
    NanOrInf,
    #[error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")]
    TooBig,
    #[error("ERR no such key")]
    NoSuchKey,
    #[error("ERR hash value is not an integer")]
    HashNotInteger,
    #[error("ERR hash value is not a float")]
    HashNotFloat,
    #[error("ERR index out of range")]
    IndexOutOfRange,
    /// Any other fixed error text.
    #[error("{0}")]
    Msg(&'static str),
    /// An error text made for the case (it names an argument).
    #[error("{0}")]
    Text(String),
}

/// What a read returns: storage failure outside, command failure inside.
pub type ReadResult<T> = Result<Result<T, TypeError>, StorageError>;

/// What an apply function returns: storage failure outside, command failure inside.
pub type ApplyResult = Result<Result<crate::protocol::Reply, TypeError>, StorageError>;

/// Milliseconds since the Unix epoch from the local clock (handlers and readers only;
/// apply uses the entry's `now_ms`).
pub fn now_ms() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64);
    // Tests: this node's clock runs ahead (or behind) by the failpoint's ms.
    match crate::failpoint::value("clock-offset") {
        Some(off) => now.unwrap_or(0).saturating_add_signed(off),
        None => now.unwrap_or(0),
    }
}

/// The metadata key of a user key in (physical) database `db`.
pub fn mkey_in(db: u16, key: &[u8]) -> Vec<u8> {
    meta_key_in(db, key_slot(key), key)
}
