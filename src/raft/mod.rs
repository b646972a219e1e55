//! Raft: openraft's type configuration, the glommio runtime adapter, the log
//! store and state machine on RocksDB, the network, and a region (one Raft group
//! plus the proposer that batches its writes).
//!
//! Depends on `storage` and `types`. One Raft group lives on exactly one core.

pub mod codec;
pub mod cross;
pub mod log_store;
pub mod network;
pub mod outcome;
pub mod region;
pub mod runtime;
pub mod snapshot;
pub mod state_machine;
pub mod wire;

use std::fmt;

use crate::pb;
use crate::protocol::Reply;

/// One Raft log entry's application data: every write a proposer collected in
/// one reactor turn, stamped with the leader's clock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proposal(pub pb::RaftBatch);

/// A voter or learner of a region, as its membership records it: where it is
/// reached (an added node's `CLUSTER ADDNODE` address; empty for the founding
/// members, reached at their `--peers`) and the incarnation it was added as
/// (`cluster::nodes::Identity`; 0: a founding member, whose incarnation no
/// log entry names). A removal thereby names the incarnation it removes: an
/// old one applied late, or replayed by a replica catching up, never removes
/// the node added back since under the same id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Member {
    pub addr: String,
    pub incarnation: u64,
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (incarnation {})", self.addr, self.incarnation)
    }
}

impl fmt::Display for Proposal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Proposal(now_ms={}, cmds={})", self.0.now_ms, self.0.cmds.len())
    }
}

/// Why a region's group could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("region {region}: Raft log: {e}")]
    Log { region: u32, e: std::io::Error },
    #[error("region {region}: state machine: {e}")]
    StateMachine { region: u32, e: std::io::Error },
    #[error("Raft configuration: {0}")]
    Config(#[from] openraft::ConfigError),
    /// openraft's own errors, as text (their types are generic over the
    /// group's types).
    #[error("region {region}: Raft: {e}")]
    Raft { region: u32, e: String },
    /// Standalone: it did not lead, or apply what it had committed, in time.
    #[error("region {region} did not catch up after a restart: {e}")]
    CatchUp { region: u32, e: String },
    /// A core's segment log (where its regions' Raft logs live).
    #[error("open the Raft log in {}: {e}", path.display())]
    Segments { path: std::path::PathBuf, e: std::io::Error },
    /// Standalone: the cross-region entries a crash may have cut off.
    #[error("region {region}: read the Raft log: {e}")]
    ReadLog { region: u32, e: std::io::Error },
    #[error("{0}")]
    Cross(#[from] cross::CrossError),
    #[error("void cut cross-region writes: {0}")]
    Void(crate::storage::StorageError),
}

openraft::declare_raft_types!(
    /// NeoKV's Raft types: a log entry carries a [`Proposal`]; applying it yields
    /// one reply per command.
    pub TypeConfig:
        D = Proposal,
        R = Vec<Reply>,
        NodeId = u64,
        Node = Member,
        AsyncRuntime = runtime::GlommioRuntime,
);

pub type Raft = openraft::Raft<TypeConfig, state_machine::StateMachine>;
pub type Entry = openraft::alias::EntryOf<TypeConfig>;
pub type LogId = openraft::alias::LogIdOf<TypeConfig>;
pub type Vote = openraft::alias::VoteOf<TypeConfig>;
pub type StoredMembership = openraft::alias::StoredMembershipOf<TypeConfig>;
pub type SnapshotMeta = openraft::alias::SnapshotMetaOf<TypeConfig>;
pub type Membership = openraft::Membership<u64, Member>;

/// This node's id in every group (standalone is a single node).
pub const NODE_ID: u64 = 1;
