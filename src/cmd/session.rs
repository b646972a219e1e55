//! Per-connection state commands can change: protocol version, name, auth,
//! the transaction being queued with the keys watched for it ([`Multi`], and
//! what EXEC hands the connection, [`ExecPlan`]), and the subscriptions
//! ([`SubState`]). The commands that change it live in their families (`txn`,
//! `pubsub`); what several of them and dispatch need lives here.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use futures_channel::mpsc::UnboundedReceiver;

use super::table::{flag, CommandSpec};
use crate::pb::WriteCmd;
use crate::protocol::Reply;
use crate::shard::client::ClientEntry;
use crate::shard::pubsub::{Kind, Message, Subscriber};
use crate::shard::Shared;
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
    pub pubsub: Option<SubState>,
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
    /// Running a blocked client's retry inside apply (`pb::Exec::retry`, set
    /// by older builds' XREADGROUP entries; now `pb::Stream::retry`).
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

/// A transaction being queued (between MULTI and EXEC).
#[derive(Default)]
pub struct Multi {
    pub queue: Vec<Queued>,
    /// A command was refused while queueing: EXEC answers EXECABORT.
    pub failed: bool,
}

/// One queued command.
pub struct Queued {
    pub spec: &'static CommandSpec,
    pub args: Vec<Bytes>,
}

impl std::fmt::Debug for ExecPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExecPlan(region {}, {} queued, {} watched)", self.region, self.queue.len(), self.watched.len())
    }
}

impl Queued {
    /// True for a command that reads or writes the keyspace: it runs inside apply.
    pub fn in_apply(&self) -> bool {
        // SELECT too: the commands after it run in its database.
        self.spec.flags & (flag::WRITE | flag::READONLY | flag::PROGRAM | flag::SETS_DB) != 0
    }
}

/// What EXEC asks the connection to do.
pub struct ExecPlan {
    /// The region the keyspace commands and the watched keys live in.
    pub region: u32,
    /// The keyspace commands as one operation (`None` if there are none).
    pub cmd: Option<WriteCmd>,
    /// The keys watched before MULTI (released once EXEC is done).
    pub watched: Vec<Watched>,
    /// The queue, in order; the keyspace commands' replies come from `cmd`.
    pub queue: Vec<(&'static CommandSpec, Vec<Bytes>, bool)>,
}

/// A command refused before it ran (unknown, wrong arity, not authenticated,
/// a script busy) with `r`: the transaction, if any, fails at EXEC. A refused
/// EXEC itself discards the transaction (and the watched keys) at once and says
/// why, in MULTI or not, as Redis's `execCommandAbort` does. Returns the reply.
pub fn refused(shared: &Shared, session: &mut Session, spec: Option<&CommandSpec>, r: Reply) -> Reply {
    if spec.is_some_and(|s| s.flags & flag::RUNS_QUEUE != 0) {
        end_transaction(shared, session);
        if let Some(e) = r.error_text() {
            let e = e.strip_prefix("ERR ").unwrap_or(&e);
            return Reply::error(format!("EXECABORT Transaction discarded because of: {e}"));
        }
        return r;
    }
    if let Some(m) = session.multi.as_mut() {
        m.failed = true;
    }
    r
}

/// Release every key the client watches.
pub fn unwatch_all(shared: &Shared, watched: &[Watched]) {
    for w in watched {
        shared.watches.unwatch(&w.key);
    }
}

/// Forget the client's transaction and watched keys (DISCARD, RESET, a
/// connection that closes).
pub fn end_transaction(shared: &Shared, session: &mut Session) {
    session.multi = None;
    let watched = std::mem::take(&mut session.watched);
    unwatch_all(shared, &watched);
}

/// A connection's subscriptions.
pub struct SubState {
    pub sub: Arc<Subscriber>,
    pub rx: UnboundedReceiver<Message>,
    pub(super) channels: BTreeSet<Bytes>,
    pub(super) patterns: BTreeSet<Bytes>,
    pub(super) shard: BTreeSet<Bytes>,
}

impl SubState {
    /// No subscription yet; the queue `entry`'s connection reads.
    pub fn new(entry: Arc<ClientEntry>) -> SubState {
        let (sub, rx) = Subscriber::new(entry);
        SubState { sub, rx, channels: BTreeSet::new(), patterns: BTreeSet::new(), shard: BTreeSet::new() }
    }

    /// Subscribed to anything (Redis's CLIENT_PUBSUB flag).
    pub fn active(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shard.is_empty())
    }

    pub(super) fn set(&mut self, kind: Kind) -> &mut BTreeSet<Bytes> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            // MONITOR lines come through the queue but are not a subscription.
            Kind::Shard | Kind::Monitor => &mut self.shard,
        }
    }

    /// The count a (un)subscribe frame shows: channels and patterns, or shard channels.
    pub(super) fn count(&self, kind: Kind) -> i64 {
        match kind {
            Kind::Shard => self.shard.len() as i64,
            _ => (self.channels.len() + self.patterns.len()) as i64,
        }
    }
}

/// The connection's message queue (made on first use): Pub/Sub messages and
/// MONITOR lines arrive through it.
pub fn queue_of(session: &mut Session) -> Arc<Subscriber> {
    let entry = session.entry.clone();
    session.pubsub.get_or_insert_with(|| SubState::new(entry)).sub.clone()
}

/// True while the session is subscribed to anything.
pub fn subscribed(session: &Session) -> bool {
    session.pubsub.as_ref().is_some_and(|s| s.active())
}

/// Drop every subscription of the session, without frames (RESET, a closing
/// connection).
pub fn drop_subscriptions(shared: &Shared, session: &mut Session) {
    if let Some(s) = session.pubsub.take() {
        for (kind, set) in [(Kind::Channel, &s.channels), (Kind::Pattern, &s.patterns), (Kind::Shard, &s.shard)] {
            for name in set {
                shared.pubsub.unsubscribe(kind, name, &s.sub);
            }
        }
    }
    for c in &session.entry.subs {
        c.store(0, Ordering::Relaxed);
    }
}
