//! What became of a write sent to a region's proposer: the command's reply
//! (which may itself be a Redis error, WRONGTYPE and the like: the command
//! ran), or a [`WriteError`] saying why it did not complete. The error stays
//! typed from the proposer to the connection, which renders it to its Redis
//! error in one place ([`WriteError::reply`]; a write this node no longer
//! leads becomes MOVED there, since only the connection knows its keys).

use std::time::Duration;

use crate::protocol::Reply;

/// A write's outcome, as it travels on the reply channel.
pub type WriteResult = Result<Reply, WriteError>;

/// Why a write did not complete. The first four were refused before the log
/// (nothing happened, safe to send again); the rest may or may not have been
/// applied, and the client must not retry blindly.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WriteError {
    /// This node does not lead the region; the leader's node id, if known.
    #[error("TRYAGAIN Leadership of the slot is moving; the write was not applied")]
    NotLeader(Option<u64>),
    /// The log or RocksDB cannot be written (a full disk): new writes are
    /// refused with the cause, as Redis refuses them.
    #[error("MISCONF {0}")]
    DiskFull(Unwritable),
    /// In a cluster, the region's group cannot confirm this node leads it
    /// (no quorum answered a read index before a fenced transaction).
    #[error("CLUSTERDOWN The cluster is down: {0}")]
    ClusterDown(String),
    /// The region is not served on the core that should run it (a core
    /// stopped, or the region is not started yet).
    #[error("ERR {0}")]
    Unavailable(&'static str),
    /// Proposed, and then its fate was lost (see [`Unknown`]).
    #[error("ERR write outcome unknown (it may or may not have been applied): {0}")]
    OutcomeUnknown(Unknown),
    /// Its place in the proposer's queue was dropped unanswered (the
    /// proposer went away).
    #[error("ERR write aborted")]
    Aborted,
}

/// Why a proposed write's outcome is unknown.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unknown {
    /// The disk filled while it was in flight; it applies as before once
    /// space returns.
    #[error("{0}")]
    DiskFull(Unwritable),
    /// Not committed in time (a leader cut off from its quorum cannot know
    /// it is deposed); its entry may still commit later.
    #[error("not committed within {0:?}, this node may be cut off from the others")]
    NoQuorum(Duration),
    /// Raft stopped before it answered.
    #[error("Raft stopped")]
    Stopped,
    /// Raft's own error (the entry was discarded by a leader change, ...).
    #[error("{0}")]
    Raft(String),
    /// Some of the regions a write went to took it and some did not
    /// (`cmd::fanout`): the whole sentence.
    #[error("{0}")]
    Partial(String),
}

/// What cannot be written, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("Errors writing to {what}: {cause}. Writes are refused until it can be written again (it retries by itself); reads are served")]
pub struct Unwritable {
    /// "the Raft log" or "the database".
    pub what: &'static str,
    /// The I/O error, without its errno suffix.
    pub cause: String,
}

impl Unwritable {
    pub fn new(what: &'static str, cause: &str) -> Unwritable {
        let cause = cause.split(" (os error").next().unwrap_or(cause);
        Unwritable { what, cause: cause.to_owned() }
    }
}

impl WriteError {
    /// Refused before it entered the log: it did not happen.
    pub fn not_applied(&self) -> bool {
        matches!(
            self,
            WriteError::NotLeader(_)
                | WriteError::DiskFull(_)
                | WriteError::ClusterDown(_)
                | WriteError::Unavailable(_)
        )
    }

    /// The Redis error a client sees (a connection turns [`NotLeader`] into
    /// MOVED for the command's keys first, where it knows them).
    ///
    /// [`NotLeader`]: WriteError::NotLeader
    pub fn reply(&self) -> Reply {
        Reply::error(self.to_string())
    }
}

/// A write's outcome as a reply: its reply, or its error rendered.
pub fn into_reply(r: WriteResult) -> Reply {
    r.unwrap_or_else(|e| e.reply())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_render_as_redis_errors() {
        let full = Unwritable::new("the Raft log", "No space left on device (os error 28)");
        assert_eq!(
            WriteError::DiskFull(full.clone()).to_string(),
            "MISCONF Errors writing to the Raft log: No space left on device. Writes are refused until it can be \
             written again (it retries by itself); reads are served"
        );
        let unknown = WriteError::OutcomeUnknown(Unknown::DiskFull(full)).to_string();
        assert!(
            unknown.starts_with(
                "ERR write outcome unknown (it may or may not have been applied): Errors writing to the Raft log: No \
                 space left on device."
            ),
            "{unknown}"
        );
        assert_eq!(WriteError::Aborted.reply(), Reply::error("ERR write aborted"));
        assert!(WriteError::NotLeader(Some(2)).not_applied());
        assert!(!WriteError::OutcomeUnknown(Unknown::Stopped).not_applied());
    }
}
