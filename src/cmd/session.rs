//! Per-connection state commands can change: protocol version, name, auth, and
//! the transaction being queued with the keys watched for it.

use std::sync::Arc;

use super::txn::Multi;
use crate::shard::client::ClientEntry;
use crate::types::watches::Watched;

pub struct Session {
    pub id: u64,
    /// 2 or 3 (HELLO).
    pub resp: u8,
    pub authed: bool,
    /// Set by QUIT.
    pub closing: bool,
    /// The clock as of this batch of commands (Redis's command time snapshot):
    /// reads judge expiry by it. The connection refreshes it per read and after
    /// waiting for writes; inside apply it is the log entry's time.
    pub now_ms: u64,
    /// The registry entry CLIENT LIST shows.
    pub entry: Arc<ClientEntry>,
    /// Between MULTI and EXEC: the queued commands.
    pub multi: Option<Multi>,
    /// Keys WATCHed for the next EXEC.
    pub watched: Vec<Watched>,
    /// Pub/Sub subscriptions.
    pub pubsub: Option<super::pubsub::SubState>,
    /// EXEC is running the transaction's commands (Redis's DENY_BLOCKING).
    pub in_exec: bool,
    /// CLIENT REPLY OFF: no replies until ON.
    pub reply_off: bool,
    /// CLIENT REPLY SKIP: the next command's reply is dropped.
    pub skip_next_reply: bool,
    /// The command running now is the one after CLIENT REPLY SKIP: its reply
    /// is dropped unless it is CLIENT REPLY ON (which clears this).
    pub skipping: bool,
    /// Set by a handler whose own reply is not sent (CLIENT REPLY OFF/SKIP).
    pub silent_reply: bool,
    /// Set by dispatch when it refused the command before running it (NOAUTH,
    /// BUSY, RESP2 subscribed mode): INFO counts it as rejected, not failed.
    pub rejected: bool,
    /// MONITOR.
    pub monitor: bool,
    /// CLIENT NO-EVICT / NO-TOUCH (accepted; shown in CLIENT LIST).
    pub no_evict: bool,
    pub no_touch: bool,
    /// Set by the connection before each command: writes it sent earlier are
    /// not applied yet (a script may not then be tried on a snapshot).
    pub writes_pending: bool,
    /// Cluster mode: the region and log index (at least) of this connection's
    /// last acknowledged write, for WAIT.
    pub last_write: Option<(u32, u64)>,
    /// READONLY (cluster mode): reads may be served here though another node
    /// leads the key's region.
    pub follower_reads: bool,
    /// Set by a script as it starts: its line went to monitors ahead of its
    /// calls' lines, so it is not shown again with its reply.
    pub monitor_shown: bool,
    /// Running a script's commands (`redis.call`).
    pub in_script: bool,
    /// Running a blocked client's retry inside apply (`pb::Exec::retry`).
    pub retry: bool,
    /// The selected (logical) database.
    pub db: u16,
    /// Cluster mode: the regions whose reads dispatch made linearizable for
    /// the command running now (`cluster::read_scope`); a keyless read covers
    /// them, a script may read keys of these only.
    pub confirmed: Option<Arc<[u32]>>,
}

impl Session {
    pub fn new(entry: Arc<ClientEntry>, authed: bool) -> Session {
        Session {
            id: entry.id,
            resp: 2,
            authed,
            closing: false,
            now_ms: crate::types::now_ms(),
            entry,
            multi: None,
            watched: Vec::new(),
            pubsub: None,
            in_exec: false,
            reply_off: false,
            skip_next_reply: false,
            skipping: false,
            silent_reply: false,
            rejected: false,
            monitor: false,
            no_evict: false,
            no_touch: false,
            writes_pending: false,
            last_write: None,
            follower_reads: false,
            monitor_shown: false,
            in_script: false,
            retry: false,
            db: 0,
            confirmed: None,
        }
    }

    /// The session a transaction's or script's commands run with inside apply:
    /// no connection, the client's protocol, the entry's time.
    pub fn detached(resp: u8, now_ms: u64) -> Session {
        let entry = Arc::new(ClientEntry::new(0, String::new(), String::new()));
        Session { resp, now_ms, ..Session::new(entry, true) }
    }

    /// The session a script's commands run with.
    /// `db`: the (logical) database it starts in, its caller's.
    pub fn scripted(now_ms: u64, db: u16) -> Session {
        Session { in_script: true, db, ..Session::detached(2, now_ms) }
    }

    /// With the regions its reads may cover (`Session::confirmed`).
    pub fn confirmed(self, confirmed: Option<Arc<[u32]>>) -> Session {
        Session { confirmed, ..self }
    }
}
