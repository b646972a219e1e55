//! Dispatch: what happens to one decoded request, between the connection
//! that read it (`conn`) and the command layer that plans it (`cmd::run`).
//!
//! In order: find the row (unknown and wrong-arity requests are refused and
//! counted), queue it inside MULTI, hold it while CLIENT PAUSE says so, wait
//! for this connection's earlier writes when it must see them (the pipeline
//! barrier), make a read linearizable in cluster mode, run its handler, and
//! carry out the [`Plan`] it returns: a reply, a write proposed to its region
//! (left pending so consecutive writes share Raft rounds), a write to every
//! region, a blocking pop, a transaction, a pause. Replies are encoded into
//! the connection's output in request order.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use futures_channel::oneshot;
use futures_lite::AsyncReadExt;
use glommio::net::TcpStream;

use crate::cmd::cluster::ReadScope;
use crate::cmd::session::{self, ExecPlan};
use crate::cmd::table::{flag, CommandSpec};
use crate::cmd::{self, Plan, Session, Shape};
use crate::protocol::decode::Args;
use crate::protocol::Reply;
use crate::raft::outcome::{WriteError, WriteResult};
use crate::shard::client::{ClientEntry, CLIENT_BLOCKED};
use crate::shard::observe::{monitor_line, Outcome};
use crate::shard::Core;
use crate::types::now_ms;

/// A connection's commands in flight and what runs them: its session, the
/// replies not yet sent, the writes not yet answered.
pub(super) struct Dispatch {
    pub core: Rc<Core>,
    pub session: Session,
    /// Replies encoded in request order, not yet written.
    pub out: BytesMut,
    pending: Vec<Pending>,
    /// The region of the writes in `pending` (they all go to one region).
    pending_region: Option<u32>,
    /// A request found its row since the last `take_ran` (CLIENT LIST's idle).
    ran: bool,
}

/// The socket side a command may need while it waits (a blocking pop, a
/// pause): whether the client went away, and the bytes it sends meanwhile,
/// kept in `rbuf` to run after it.
pub(super) struct Wire<'a> {
    pub stream: &'a mut TcpStream,
    pub rbuf: &'a mut BytesMut,
    pub scratch: &'a mut [u8],
}

/// What the connection does after a request.
pub(super) enum Flow {
    /// The next request.
    Next,
    /// Write what is encoded, then close (QUIT, CLIENT KILL of itself).
    Close,
    /// The client went away while the command waited: nothing to write.
    Gone,
}

impl Dispatch {
    pub fn new(core: Rc<Core>, session: Session) -> Dispatch {
        Dispatch { core, session, out: BytesMut::new(), pending: Vec::new(), pending_region: None, ran: false }
    }

    /// Await every pending write's reply, in order, into `out`.
    pub async fn drain(&mut self) {
        drain(&self.core, &mut self.pending, &mut self.out, &mut self.session).await;
    }

    /// True if a request found its row since the last call.
    pub fn take_ran(&mut self) -> bool {
        std::mem::take(&mut self.ran)
    }

    /// A request the decoder could not read: its error after what came before.
    pub async fn protocol_error(&mut self, r: Reply) {
        self.drain().await;
        reject(&self.core, &self.session, None, r, false, &mut self.out);
    }

    /// Refuse a request before it runs, after the replies before it.
    async fn refuse(&mut self, spec: Option<&'static CommandSpec>, r: Reply) -> Flow {
        self.drain().await;
        let silent = self.session.skipping || self.session.reply_off;
        reject(&self.core, &self.session, spec, r, silent, &mut self.out);
        Flow::Next
    }

    /// One request, from its row to its reply (or its pending write).
    pub async fn command(&mut self, args: Args, wire: Wire<'_>) -> Flow {
        let started = Instant::now();
        let core = self.core.clone();
        let shared = &core.shared;
        // CLIENT REPLY SKIP silences the command after it.
        self.session.skipping = std::mem::take(&mut self.session.skip_next_reply);
        let spec = match cmd::table().resolve(&args) {
            Ok(s) => s,
            Err(r) => {
                let named = cmd::table().named(&args);
                let r = session::refused(shared, &mut self.session, named, r);
                return self.refuse(named, r).await;
            }
        };
        self.ran = true;
        // CLIENT LIST's `cmd`: the command running now (Redis's lastcmd).
        self.session.entry.last_cmd.store(cmd::table::spec_id(spec), Ordering::Relaxed);
        if self.session.multi.is_some() {
            if let Some(r) = cmd::txn::queue(shared, &mut self.session, spec, &args) {
                if r.is_error() {
                    return self.refuse(Some(spec), r).await;
                }
                self.drain().await;
                if !(self.session.skipping || self.session.reply_off) {
                    r.encode(self.session.resp, &mut self.out);
                }
                return Flow::Next;
            }
        }
        if shared.observe.paused().is_some() && spec.flags & flag::NO_AUTH == 0 {
            self.drain().await;
            wait_for_pause(shared, spec, &self.session).await;
            self.session.now_ms = now_ms();
        }
        // The pipeline barrier: a command that must see this connection's
        // earlier writes waits for them; so does a script with monitors (it
        // shows itself as it starts, after the lines of the commands before it).
        let monitored_script = spec.flags & flag::PROGRAM != 0 && shared.observe.has_monitors();
        if !self.pending.is_empty() && (cmd::needs_barrier(spec) || monitored_script) {
            self.drain().await;
        }
        let mut waited = false;
        let plan = loop {
            if shared.nodes.is_some() {
                if let Err(r) = self.linearize(spec, &args).await {
                    return self.refuse(Some(spec), r).await;
                }
            } else {
                self.session.confirmed = None;
            }
            self.session.rejected = false;
            self.session.writes_pending = !self.pending.is_empty();
            let plan = cmd::run(&self.core, &mut self.session, spec, &args);
            // No leader of the keys' region is known here: an election is
            // open (leadership handed over, a region just split, a leader
            // lost). It ends within a second or two; routing again after it
            // answers the command or MOVED, where CLUSTERDOWN now would fail
            // a client for a handover (once: a region that stays leaderless
            // is down).
            if !waited && matches!(&plan, Plan::Reply(r) if is_clusterdown(r)) {
                if let Some(region) = cmd::cluster::leaderless(shared, spec, &args) {
                    waited = true;
                    settle(&core, region, false).await;
                    continue;
                }
            }
            break plan;
        };
        let silent = std::mem::take(&mut self.session.silent_reply) | self.session.skipping | self.session.reply_off;
        if self.session.rejected {
            if let Plan::Reply(r) = plan {
                self.drain().await;
                reject(&self.core, &self.session, Some(spec), r, silent, &mut self.out);
                return Flow::Next;
            }
        }
        let shown = std::mem::take(&mut self.session.monitor_shown);
        self.execute(plan, Done { spec, started, args, silent, shown }, wire).await
    }

    /// Cluster mode: a read waits until it cannot miss an acknowledged
    /// write, however it reaches storage (keys, no keys, scripts).
    async fn linearize(&mut self, spec: &'static CommandSpec, args: &[bytes::Bytes]) -> Result<(), Reply> {
        self.session.confirmed = None;
        let scope = cmd::cluster::read_scope(&self.core.shared, &self.session, spec, args);
        if scope == ReadScope::None {
            return Ok(());
        }
        // A script without keys picks its region by what it reads
        // (`cmd::script`), which must include this client's writes.
        if matches!(scope, ReadScope::Many(_)) {
            self.drain().await;
        }
        let mut scope = scope;
        // A split applied while the read waited may have moved its keys to
        // another region: that one is confirmed then (a few times at most).
        for _ in 0..3 {
            let (confirmed, time) = linearize(&self.core, spec, args, scope.clone()).await?;
            self.session.confirmed = Some(confirmed);
            self.session.now_ms = time;
            let now = cmd::cluster::read_scope(&self.core.shared, &self.session, spec, args);
            if now == scope {
                return Ok(());
            }
            scope = now;
            if scope == ReadScope::None {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Carry out what the handler planned.
    async fn execute(&mut self, plan: Plan, done: Done, wire: Wire<'_>) -> Flow {
        let core = self.core.clone();
        // A write joins this connection's writes in flight; anything else
        // answers after them.
        if !matches!(plan, Plan::Write { .. }) {
            self.drain().await;
        }
        let session = &mut self.session;
        let r = match plan {
            Plan::Write { region, cmd: c, shape } => {
                // Writes to one region take effect in log order; across regions
                // they would race, so a write to another region waits for this
                // connection's pending ones (commands take effect in the order sent).
                if self.pending_region.is_some_and(|r| r != region) {
                    self.drain().await;
                }
                self.pending_region = Some(region);
                self.pending.push((region, core.submit_write(region, c), shape, done));
                return Flow::Next;
            }
            Plan::Reply(r) => {
                finish(&core, session, done, r, &mut self.out);
                return Flow::Next;
            }
            Plan::Close(r) => {
                finish(&core, session, done, r, &mut self.out);
                return Flow::Close;
            }
            Plan::Broadcast(c) => {
                let regions = cmd::fanout::regions(&core.shared);
                let rxs: Vec<_> = regions.iter().map(|&r| (r, core.submit_write(r, c.clone()))).collect();
                let mut parts = Vec::with_capacity(rxs.len());
                for (region, rx) in rxs {
                    parts.push((region, rx.await.unwrap_or(Err(WriteError::Aborted))));
                }
                cmd::fanout::reply(done.spec.name, parts)
            }
            Plan::Blocking(work) => Box::pin(glommio::executor().spawn_blocking(work.0)).await,
            Plan::Block(b) => {
                // Blocked: CLIENT LIST shows `flags=b` and the rest of the batch.
                let entry = session.entry.clone();
                entry.qbuf.store(wire.rbuf.len(), Ordering::Relaxed);
                entry.set_flag(CLIENT_BLOCKED, true);
                let r = Box::pin(block(&core, b, session.id, wire.stream, wire.rbuf, wire.scratch)).await;
                entry.set_flag(CLIENT_BLOCKED, false);
                match r {
                    Some(r) => write_reply(&core, &done, r),
                    None => return Flow::Gone,
                }
            }
            Plan::Sleep(d, r) => {
                if !pause(d, wire.stream, wire.rbuf, wire.scratch).await {
                    return Flow::Gone;
                }
                r
            }
            Plan::Exec(p) => {
                let wrote = p.cmd.is_some().then_some(p.region);
                let r = write_reply(&core, &done, Box::pin(exec(&core, session, p)).await);
                if let (Some(nodes), Some(region), Reply::Array(_)) = (&core.shared.nodes, wrote, &r) {
                    session.last_write = Some((region, nodes.acked(region)));
                }
                r
            }
            Plan::WaitReplicas { replicas, timeout } => {
                Box::pin(wait_replicas(&core, session.last_write, replicas, timeout)).await
            }
            Plan::Members(change) => match Box::pin(crate::shard::members::change_everywhere(&core, change)).await {
                Ok(()) => Reply::Ok,
                Err(e) => Reply::error(format!("ERR {e}")),
            },
        };
        // Time passed while it waited.
        session.now_ms = now_ms();
        finish(&core, session, done, r, &mut self.out);
        Flow::Next
    }
}

/// Redis's client-query-buffer-limit default.
pub(super) const MAX_QUERY_BUFFER: usize = 1 << 30;

/// A write in flight: its result arrives on the receiver, shown as the shape.
/// A write sent to its region, waiting for its reply: the region, the reply
/// to come, how it is shown, and what to record once it is.
type Pending = (u32, oneshot::Receiver<WriteResult>, Shape, Done);

/// A command whose reply is on its way, with what its statistics, the slow
/// log and MONITOR need once the reply is known.
struct Done {
    spec: &'static CommandSpec,
    started: Instant,
    args: crate::protocol::decode::Args,
    /// CLIENT REPLY OFF/SKIP: the reply is not sent.
    silent: bool,
    /// Already shown to monitors (a script, before its calls).
    shown: bool,
}

/// A command's reply is known: count it (INFO commandstats, errorstats,
/// latencystats), log it if slow, show it to monitors, send it.
fn finish(core: &Core, session: &Session, d: Done, r: Reply, out: &mut BytesMut) {
    let obs = &core.shared.observe;
    let took = d.started.elapsed();
    let outcome = match r.error_text() {
        Some(e) => {
            obs.error(&e);
            Outcome::Failed
        }
        None => Outcome::Ok,
    };
    obs.record(core.id, cmd::table::spec_id(d.spec), took, outcome);
    if obs.is_slow(took) && d.spec.flags & flag::SKIP_SLOWLOG == 0 {
        obs.log_slow(&d.args, took, &session.entry);
    }
    let ms = took.as_millis() as u64;
    if ms > 0 {
        obs.latency_sample(if d.spec.flags & flag::FAST != 0 { "fast-command" } else { "command" }, ms);
    }
    if !d.shown && obs.has_monitors() && d.spec.flags & (flag::ADMIN | flag::SKIP_MONITOR) == 0 {
        obs.feed(monitor_line(session.db, &session.entry.addr, &d.args));
    }
    // Pub/Sub confirmations are pushes: they arrive under CLIENT REPLY OFF or
    // SKIP too, as in Redis 7.0.
    if !d.silent || r.is_push() {
        r.encode(session.resp, out);
    }
}

/// A command refused before it ran (unknown, wrong arity, NOAUTH, refused in
/// MULTI, ...): counted as rejected, the error sent unless replies are off.
fn reject(
    core: &Core,
    session: &Session,
    spec: Option<&'static CommandSpec>,
    r: Reply,
    silent: bool,
    out: &mut BytesMut,
) {
    let obs = &core.shared.observe;
    if let Some(e) = r.error_text() {
        obs.error(&e);
    }
    if let Some(spec) = spec {
        obs.record(core.id, cmd::table::spec_id(spec), Duration::ZERO, Outcome::Rejected);
    }
    if !silent {
        r.encode(session.resp, out);
    }
}

/// A write's outcome as its command's reply: the reply, or the error rendered
/// (a write this node no longer leads: MOVED to where its keys are led now).
fn write_reply(core: &Core, d: &Done, r: WriteResult) -> Reply {
    match r {
        Ok(r) => r,
        Err(WriteError::NotLeader(_)) => redirect(core, d.spec, &d.args),
        Err(e) => e.reply(),
    }
}

/// How long a command waits for an election of its region to end (see
/// [`settle`]): openraft's lease and election timeout (1.2 s at most) and a
/// split vote or two.
const SETTLE: Duration = Duration::from_secs(3);

/// Wait, up to [`SETTLE`], until a leader of `region` is known here. After
/// this node's group `refused` a command as not its leader, first a moment:
/// the table follows the group a little late (and refusals were seen while
/// the table named this node the leader at its current term: waiting for the
/// table to change then cost the whole wait). True once a leader is known.
async fn settle(core: &Core, region: u32, refused: bool) -> bool {
    let Some(nodes) = core.shared.nodes.as_deref() else { return true };
    let deadline = Instant::now() + SETTLE;
    if refused {
        glommio::timer::sleep(Duration::from_millis(50)).await;
    }
    loop {
        match nodes.leader(region) {
            Some(_) => return true,
            None if Instant::now() >= deadline => return false,
            None => glommio::timer::sleep(Duration::from_millis(5)).await,
        }
    }
}

fn is_clusterdown(r: &Reply) -> bool {
    matches!(r, Reply::Error(e) if e == cmd::cluster::CLUSTERDOWN)
}

/// A write this node's region refused before it entered the log (another node
/// leads now): where the client should send it instead.
fn redirect(core: &Core, spec: &CommandSpec, args: &[bytes::Bytes]) -> Reply {
    let keys = spec.keys_of(args).unwrap_or_default();
    match cmd::cluster::route(&core.shared, keys.iter().map(|&i| &args[i][..]), false) {
        Err(r) => r,
        // The leader table has not caught up with the group yet.
        Ok(_) => WriteError::NotLeader(None).reply(),
    }
}

/// WAIT in cluster mode: how many followers of the region of the connection's
/// last write hold it in their log (as its leader last saw), waiting until
/// `wanted` do or `timeout` passes. With no write yet, every follower holds
/// everything the connection wrote: the other members are counted.
async fn wait_replicas(core: &Core, last: Option<(u32, u64)>, wanted: i64, timeout: Duration) -> Reply {
    let Some(nodes) = core.shared.nodes.as_deref() else { return Reply::Int(0) };
    let deadline = Instant::now().checked_add(timeout);
    loop {
        let count = match last {
            Some((region, index)) => {
                nodes.status(region).matched.iter().filter(|(id, m)| *id != nodes.me && *m >= index).count() as i64
            }
            None => nodes.all().len().saturating_sub(1) as i64,
        };
        if count >= wanted || deadline.is_some_and(|d| Instant::now() >= d) {
            return Reply::Int(count);
        }
        glommio::timer::sleep(Duration::from_millis(2)).await;
    }
}

/// Before a read in cluster mode: make the reads of its [`ReadScope`]
/// linearizable (see `cmd::cluster::read_scope`). The regions confirmed,
/// which the command's reads may cover, and the time it judges expiry at
/// (`Region::read_time`: a time those regions agree on, not this node's
/// clock); or the reply if it must go elsewhere or cannot be served now.
async fn linearize(
    core: &Core,
    spec: &CommandSpec,
    args: &[bytes::Bytes],
    scope: ReadScope,
) -> Result<(Arc<[u32]>, u64), Reply> {
    use crate::raft::region::ReadError;
    let down = || Reply::error(cmd::cluster::CLUSTERDOWN);
    match scope {
        ReadScope::None => Ok((Arc::from([]), now_ms())),
        ReadScope::One { region, on_follower } => match core.linearize(region, on_follower).await {
            Ok(time) => Ok((Arc::from([region]), time)),
            // Deposed as the read came: once the election ends, here again
            // (a handover that came back) or MOVED.
            Err(ReadError::NotLeader(_)) if !on_follower && settle(core, region, true).await => {
                match core.linearize(region, on_follower).await {
                    Ok(time) => Ok((Arc::from([region]), time)),
                    Err(ReadError::NotLeader(_)) => Err(redirect(core, spec, args)),
                    Err(ReadError::Failed(_)) => Err(down()),
                }
            }
            Err(ReadError::NotLeader(_)) => Err(redirect(core, spec, args)),
            // (No quorum answered: the group cannot confirm anything now.)
            Err(ReadError::Failed(_)) => Err(down()),
        },
        ReadScope::Many(regions) => {
            let asked = regions.iter().map(|&(region, on_follower)| core.linearize(region, on_follower));
            let answers = futures_util::future::join_all(asked).await;
            let mut confirmed = Vec::with_capacity(regions.len());
            let mut time = 0;
            for (&(region, on_follower), answer) in regions.iter().zip(answers) {
                match answer {
                    Ok(t) => {
                        confirmed.push(region);
                        time = time.max(t);
                    }
                    // Led elsewhere now: its slots are not this node's to answer for.
                    Err(ReadError::NotLeader(_)) => {}
                    // A follower's region the leader cannot be asked about: the
                    // script may not read it here.
                    Err(ReadError::Failed(_)) if on_follower => {}
                    Err(ReadError::Failed(_)) => return Err(down()),
                }
            }
            let time = if confirmed.is_empty() { now_ms() } else { time };
            Ok((confirmed.into(), time))
        }
    }
}

/// Await every pending write's reply, in order, into `out`; then refresh the
/// session's clock (time passed while waiting).
async fn drain(core: &Core, pending: &mut Vec<Pending>, out: &mut BytesMut, session: &mut Session) {
    if pending.is_empty() {
        return;
    }
    let mut items: Vec<Option<Pending>> = pending.drain(..).map(Some).collect();
    let mut outcomes: Vec<Option<WriteResult>> = items.iter().map(|_| None).collect();
    for i in 0..items.len() {
        let Some((mut region, mut rx, mut shape, done)) = items[i].take() else { continue };
        let mut result = match outcomes[i].take() {
            Some(r) => r,
            None => (&mut rx).await.unwrap_or(Err(WriteError::Aborted)),
        };
        // A write that did nothing runs again by the routes of now (here, or
        // MOVED), a few times at most: routed to a region that split before
        // it applied (each retry follows a split applied here), or refused
        // before the log because this node stopped leading its region as it
        // came (once the election ends: a handover takes a moment). Only when
        // no write after it on this connection may have taken effect: run
        // again, it would land after that one, out of the pipeline's order;
        // it answers its error then.
        let mut again = 0;
        if no_effect(&result) {
            for j in i + 1..items.len() {
                if outcomes[j].is_some() {
                    continue;
                }
                if let Some((_, rx, _, _)) = &mut items[j] {
                    outcomes[j] = Some(rx.await.unwrap_or(Err(WriteError::Aborted)));
                }
            }
            if !outcomes[i + 1..].iter().flatten().any(|r| !no_effect(r)) {
                again = 3;
            }
        }
        for _ in 0..again {
            match &result {
                Err(WriteError::NotLeader(_)) => {
                    settle(core, region, true).await;
                }
                Ok(r) if moved_on(r) => {}
                _ => break,
            }
            match cmd::run(core, session, done.spec, &done.args) {
                Plan::Write { region: to, cmd: c, shape: s } => {
                    (region, shape) = (to, s);
                    result = core.submit_write(to, c).await.unwrap_or(Err(WriteError::Aborted));
                }
                Plan::Reply(answer) => result = Ok(answer),
                _ => break,
            }
        }
        let r = write_reply(core, &done, result);
        if let (Some(nodes), false) = (&core.shared.nodes, r.is_error()) {
            session.last_write = Some((region, nodes.acked(region)));
        }
        finish(core, session, done, shape.apply(r), out);
    }
    session.now_ms = now_ms();
}

/// A write's outcome says it did nothing: refused before the log, or by
/// apply as routed to a region that split since.
fn no_effect(r: &WriteResult) -> bool {
    match r {
        Ok(r) => moved_on(r),
        Err(e) => e.not_applied(),
    }
}

/// Apply refused the write: its region split after it was routed.
fn moved_on(r: &Reply) -> bool {
    matches!(r, Reply::Error(e) if e.starts_with(crate::raft::state_machine::MOVED_ON))
}

/// CLIENT PAUSE holds this command (every command under ALL; under WRITE
/// those that write or may replicate, and a transaction that queued one).
fn held_by_pause(spec: &CommandSpec, session: &Session, all: bool) -> bool {
    let may_write = |s: &CommandSpec| s.flags & (flag::WRITE | flag::MAY_REPLICATE) != 0;
    all || may_write(spec)
        || (spec.flags & flag::RUNS_QUEUE != 0
            && session.multi.as_ref().is_some_and(|m| m.queue.iter().any(|q| may_write(q.spec))))
}

/// Wait while CLIENT PAUSE holds `spec` (the pause may end early: UNPAUSE).
async fn wait_for_pause(shared: &crate::shard::Shared, spec: &CommandSpec, session: &Session) {
    /// Counted as blocked (INFO, CLIENT LIST's `b`) while held, as Redis
    /// counts its postponed clients; undone however the wait ends.
    struct Held<'a>(&'a crate::shard::Shared, &'a ClientEntry);
    impl Drop for Held<'_> {
        fn drop(&mut self) {
            self.0.observe.hold(false);
            self.1.set_flag(CLIENT_BLOCKED, false);
        }
    }
    let mut held = None;
    while let Some((left, all)) = shared.observe.paused() {
        if !held_by_pause(spec, session, all) {
            break;
        }
        if held.is_none() {
            shared.observe.hold(true);
            session.entry.set_flag(CLIENT_BLOCKED, true);
            held = Some(Held(shared, &session.entry));
        }
        glommio::timer::sleep(left.min(Duration::from_millis(10))).await;
    }
}

/// Serve a blocking pop (see [`cmd::Block`]). Bytes the client sends meanwhile
/// are queued in `rbuf` and run after it; `None` if the client went away.
async fn block(
    core: &Core,
    b: cmd::Block,
    client: u64,
    stream: &mut TcpStream,
    rbuf: &mut BytesMut,
    scratch: &mut [u8],
) -> Option<WriteResult> {
    enum Event {
        Woken,
        Timeout,
        Unblocked,
        Read(std::io::Result<usize>),
    }
    let blocked = core.shared.blocked.clone();
    // CLIENT UNBLOCK reaches this wait through `unblock`.
    let (unblock_tx, mut unblock) = oneshot::channel::<()>();
    core.shared.observe.on_unblock(client, unblock_tx);
    // Filed under the logical database's metadata keys (`types::dbs`).
    let filed: Vec<bytes::Bytes> = b.keys.iter().map(|k| bytes::Bytes::from(crate::types::mkey_in(b.db, k))).collect();
    let waiter = blocked.register_in(&filed, b.lane.clone());
    // A deadline past what the clock can hold is no deadline.
    let deadline = b.timeout.and_then(|t| Instant::now().checked_add(t));
    let mut first = true;
    let answer = 'retry: loop {
        let r = match &b.attempt {
            cmd::ctx::Attempt::Write { cmd, retry } => {
                let cmd = if first { cmd.clone() } else { retry.clone() };
                match core.submit_write(b.region, cmd).await.unwrap_or(Err(WriteError::Aborted)) {
                    Ok(r) => r,
                    Err(e) => break 'retry Some(Err(e)),
                }
            }
            cmd::ctx::Attempt::Read(read) => read(&core.shared, crate::types::now_ms()),
        };
        first = false;
        // A one-command transaction's reply is its command's (XREADGROUP).
        let only = matches!(b.shape, Shape::Only);
        let r = if only { Shape::Only.apply(r) } else { r };
        if !matches!(r, Reply::Nil | Reply::NilArray) {
            break Some(Ok(if only { r } else { b.shape.apply(r) }));
        }
        let mut woken = waiter.wait();
        loop {
            let timer = async {
                match deadline {
                    Some(d) => glommio::timer::sleep(d.saturating_duration_since(Instant::now())).await,
                    None => futures_lite::future::pending().await,
                }
                Event::Timeout
            };
            let woke = async {
                let _ = (&mut woken).await;
                Event::Woken
            };
            let read = async { Event::Read(stream.read(scratch).await) };
            let unblocked = async {
                match (&mut unblock).await {
                    Ok(()) => Event::Unblocked,
                    Err(_) => futures_lite::future::pending().await,
                }
            };
            let woke = futures_lite::future::or(unblocked, woke);
            match futures_lite::future::or(woke, futures_lite::future::or(timer, read)).await {
                Event::Woken => continue 'retry,
                Event::Timeout => break 'retry Some(Ok(Reply::NilArray)),
                Event::Unblocked => {
                    break 'retry Some(Ok(if core.shared.observe.unblocked(client) {
                        Reply::error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
                    } else {
                        Reply::NilArray
                    }))
                }
                Event::Read(Ok(n)) if n > 0 && rbuf.len() + n <= MAX_QUERY_BUFFER => {
                    rbuf.extend_from_slice(&scratch[..n])
                }
                Event::Read(_) => break 'retry None,
            }
        }
    };
    blocked.unregister(&waiter);
    core.shared.observe.unblocked(client);
    answer
}

/// Wait `d` before replying (DEBUG SLEEP, WAIT); a wait past what the clock can
/// hold lasts until the client goes away. Bytes the client sends meanwhile are
/// queued in `rbuf` and run after; false if the client went away (the
/// connection is done, nothing lingers).
async fn pause(d: Duration, stream: &mut TcpStream, rbuf: &mut BytesMut, scratch: &mut [u8]) -> bool {
    let deadline = if d >= FOREVER { None } else { Instant::now().checked_add(d) };
    loop {
        let timer = async {
            match deadline {
                Some(at) => glommio::timer::sleep(at.saturating_duration_since(Instant::now())).await,
                None => futures_lite::future::pending().await,
            }
            None
        };
        let read = async { Some(stream.read(scratch).await) };
        match futures_lite::future::or(timer, read).await {
            None => return true,
            Some(Ok(n)) if n > 0 && rbuf.len() + n <= MAX_QUERY_BUFFER => rbuf.extend_from_slice(&scratch[..n]),
            Some(_) => return false,
        }
    }
}

/// Waits this long or longer have no deadline.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 86_400);

/// The reply of a command that does not write (a local command queued in a
/// transaction): now, after a pause, or from the blocking pool.
async fn local_reply(plan: Plan) -> Reply {
    match plan {
        Plan::Reply(r) | Plan::Close(r) => r,
        Plan::Sleep(d, r) => {
            glommio::timer::sleep(d).await;
            r
        }
        Plan::Blocking(work) => glommio::executor().spawn_blocking(work.0).await,
        _ => Reply::error("ERR command cannot run inside a transaction"),
    }
}

/// EXEC: the keyspace commands as one replicated operation (fenced by its
/// region's proposer when keys are watched), then the other queued commands
/// here, replies merged in queue order. The watched keys are released after.
async fn exec(core: &Core, session: &mut Session, mut plan: ExecPlan) -> WriteResult {
    let shared = &core.shared;
    let result = match (plan.cmd.take(), plan.watched.is_empty()) {
        (None, true) => Ok(Reply::Array(Vec::new())),
        // Nothing to write, standalone: the watched keys are judged as of now.
        // (In cluster mode the region's leader judges them, below, after its
        // read index: this node's state may be behind.)
        (None, false) if shared.nodes.is_none() => match shared.watches.dirty(&shared.storage, &plan.watched, now_ms())
        {
            Ok(true) => Ok(Reply::NilArray),
            Ok(false) => Ok(Reply::Array(Vec::new())),
            Err(e) => Ok(Reply::error(format!("ERR {e}"))),
        },
        (Some(c), true) => core.submit_write(plan.region, c).await.unwrap_or(Err(WriteError::Aborted)),
        (c, false) => {
            core.submit_fenced(plan.region, c, plan.watched.clone()).await.unwrap_or(Err(WriteError::Aborted))
        }
    };
    session::unwatch_all(shared, &plan.watched);
    let data = match result? {
        Reply::Array(data) => data,
        other => return Ok(other),
    };
    session.now_ms = now_ms();
    let mut data = data.into_iter();
    let mut out = Vec::with_capacity(plan.queue.len());
    session.in_exec = true;
    let obs = &shared.observe;
    for (spec, args, in_apply) in plan.queue {
        let started = Instant::now();
        let r = if in_apply {
            let r = data.next().unwrap_or_else(|| Reply::error("ERR transaction reply missing"));
            // A SELECT that ran in the transaction stays selected after it.
            if spec.flags & flag::SETS_DB != 0 && matches!(r, Reply::Ok) {
                if let Some(db) = std::str::from_utf8(&args[1]).ok().and_then(|a| a.parse().ok()) {
                    session.db = db;
                    session.entry.db.store(db, std::sync::atomic::Ordering::Relaxed);
                }
            }
            r
        } else {
            local_reply(cmd::run(core, session, spec, &args)).await
        };
        // Each queued command counts as run, and monitors see it before EXEC.
        let outcome = if let Some(e) = r.error_text() {
            obs.error(&e);
            Outcome::Failed
        } else {
            Outcome::Ok
        };
        obs.record(core.id, cmd::table::spec_id(spec), started.elapsed(), outcome);
        if obs.has_monitors() && spec.flags & (flag::ADMIN | flag::SKIP_MONITOR) == 0 {
            obs.feed(monitor_line(session.db, &session.entry.addr, &args));
        }
        out.push(r);
    }
    session.in_exec = false;
    Ok(Reply::Array(out))
}
