//! One client connection: read, decode every complete request in the buffer,
//! execute in order, write all replies with as few writes as possible.
//!
//! Pipelining: consecutive writes are submitted without waiting for each other
//! (they reach the region's proposer in order, so they share Raft rounds); a
//! command that reads waits only for this connection's earlier writes.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use futures_channel::oneshot;
use futures_lite::{AsyncReadExt, AsyncWriteExt};
use glommio::net::TcpStream;

use futures_util::StreamExt;

use crate::cmd::cluster::ReadScope;
use crate::cmd::session::{self, ExecPlan};
use crate::cmd::table::{flag, CommandSpec};
use crate::cmd::{self, Plan, Session, Shape};
use crate::protocol::{DecodeLimits, Decoder, Reply};
use crate::raft::region::NOT_LEADER;
use crate::shard::client::{ClientEntry, CLIENT_BLOCKED};
use crate::shard::observe::{monitor_line, Outcome};
use crate::shard::pubsub::Message;
use crate::shard::Core;
use crate::types::now_ms;

/// Redis's client-query-buffer-limit default.
const MAX_QUERY_BUFFER: usize = 1 << 30;

/// A write in flight: its result arrives on the receiver, shown as the shape.
/// A write sent to its region, waiting for its reply: the region, the reply
/// to come, how it is shown, and what to record once it is.
type Pending = (u32, oneshot::Receiver<Reply>, Shape, Done);

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
    let r = match r {
        Reply::Error(e) if e.starts_with(NOT_LEADER) => redirect(core, d.spec, &d.args),
        r => r,
    };
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

/// A write this node's region refused before it entered the log (another node
/// leads now): where the client should send it instead.
fn redirect(core: &Core, spec: &CommandSpec, args: &[bytes::Bytes]) -> Reply {
    let keys = spec.keys_of(args).unwrap_or_default();
    match cmd::cluster::route(&core.shared, keys.iter().map(|&i| &args[i][..]), false) {
        Err(r) => r,
        // The leader table has not caught up with the group yet.
        Ok(_) => Reply::error("TRYAGAIN Leadership of the slot is moving; the write was not applied"),
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
    for (region, rx, shape, done) in pending.drain(..) {
        let r = rx.await.unwrap_or_else(|_| Reply::error("ERR write aborted"));
        if let (Some(nodes), false) = (&core.shared.nodes, r.is_error()) {
            session.last_write = Some((region, nodes.acked(region)));
        }
        finish(core, session, done, shape.apply(r), out);
    }
    session.now_ms = now_ms();
}

/// CLIENT PAUSE holds this command (every command under ALL; under WRITE
/// those that write or may replicate, and a transaction that queued one).
fn held_by_pause(spec: &CommandSpec, session: &Session, all: bool) -> bool {
    let may_write = |s: &CommandSpec| s.flags & (flag::WRITE | flag::MAY_REPLICATE) != 0;
    all || may_write(spec)
        || (spec.name == "exec" && session.multi.as_ref().is_some_and(|m| m.queue.iter().any(|q| may_write(q.spec))))
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
) -> Option<Reply> {
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
                core.submit_write(b.region, cmd).await.unwrap_or_else(|_| Reply::error("ERR write aborted"))
            }
            cmd::ctx::Attempt::Read(read) => read(&core.shared, crate::types::now_ms()),
        };
        first = false;
        // A one-command transaction's reply is its command's (XREADGROUP).
        let only = matches!(b.shape, Shape::Only);
        let r = if only { Shape::Only.apply(r) } else { r };
        if !matches!(r, Reply::Nil | Reply::NilArray) {
            break Some(if only { r } else { b.shape.apply(r) });
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
                Event::Timeout => break 'retry Some(Reply::NilArray),
                Event::Unblocked => {
                    break 'retry Some(if core.shared.observe.unblocked(client) {
                        Reply::error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
                    } else {
                        Reply::NilArray
                    })
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
async fn exec(core: &Core, session: &mut Session, mut plan: ExecPlan) -> Reply {
    let shared = &core.shared;
    let result = match (plan.cmd.take(), plan.watched.is_empty()) {
        (None, true) => Reply::Array(Vec::new()),
        // Nothing to write, standalone: the watched keys are judged as of now.
        // (In cluster mode the region's leader judges them, below, after its
        // read index: this node's state may be behind.)
        (None, false) if shared.nodes.is_none() => match shared.watches.dirty(&shared.storage, &plan.watched, now_ms())
        {
            Ok(true) => Reply::NilArray,
            Ok(false) => Reply::Array(Vec::new()),
            Err(e) => Reply::error(format!("ERR {e}")),
        },
        (Some(c), true) => {
            core.submit_write(plan.region, c).await.unwrap_or_else(|_| Reply::error("ERR write aborted"))
        }
        (c, false) => core
            .submit_fenced(plan.region, c, plan.watched.clone())
            .await
            .unwrap_or_else(|_| Reply::error("ERR write aborted")),
    };
    session::unwatch_all(shared, &plan.watched);
    let Reply::Array(data) = result else { return result };
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
            if spec.name == "select" && matches!(r, Reply::Ok) {
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
    Reply::Array(out)
}

/// A connection's read buffer, sized to need: small while the client sends
/// little, doubling while reads fill it, halving back only after a run of reads
/// that use under a quarter of it, and back to the minimum after a second idle
/// (5,000 idle connections must not hold 16 KB each). Halving on one short read
/// made a pipelining client's buffer flap: a 4.6 KB batch filled 4 KB, grew it,
/// its 0.6 KB tail shrank it again, so every batch took two reads and its writes
/// went to the log in two groups instead of one.
struct Scratch {
    buf: Vec<u8>,
    /// Reads in a row that used under a quarter of the buffer.
    short: u32,
}

impl Scratch {
    const MIN: usize = 1024;
    const MAX: usize = 64 * 1024;
    /// Short reads in a row before the buffer halves.
    const SHRINK_AFTER: u32 = 64;

    fn new() -> Scratch {
        Scratch { buf: vec![0; Self::MIN], short: 0 }
    }

    fn is_grown(&self) -> bool {
        self.buf.len() > 4 * Self::MIN
    }

    fn buf(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// After a read of `n` bytes into it.
    fn adapt(&mut self, n: usize) {
        let len = self.buf.len();
        if n < len / 4 && len > Self::MIN {
            self.short += 1;
            if self.short >= Self::SHRINK_AFTER {
                self.buf = vec![0; len / 2];
                self.short = 0;
            }
            return;
        }
        self.short = 0;
        if n == len && len < Self::MAX {
            self.buf = vec![0; len * 2];
        }
    }
}

/// Give a buffer's memory back once it is empty and grew big (a large request
/// or reply), so a connection holds only what it needs between requests.
fn trim(buf: &mut BytesMut) {
    if buf.is_empty() && buf.capacity() > 16 * 1024 {
        *buf = BytesMut::new();
    }
}

/// Drop an empty query buffer's storage: its arguments were split off it and
/// share its allocation, so even a small remaining view can pin a big request's
/// bytes (a 60 KB ECHO kept 60 KB per idle connection). The next read allocates
/// what it needs.
fn release_query_buffer(buf: &mut BytesMut) {
    if buf.is_empty() {
        *buf = BytesMut::new();
    }
}

/// Encode one Pub/Sub message for the client.
fn push(session: &mut Session, m: Message, out: &mut BytesMut) {
    if let Some(ps) = &session.pubsub {
        ps.sub.taken(&m);
    }
    m.reply().encode(session.resp, out);
}

/// Encode the Pub/Sub messages waiting, up to a write's worth.
fn deliver_pushes(session: &mut Session, out: &mut BytesMut) {
    while out.len() < 64 * 1024 {
        let Some(m) = session.pubsub.as_mut().and_then(|ps| ps.rx.try_recv().ok()) else { break };
        push(session, m, out);
    }
}

/// Write `out` to the client unless the connection is killed meanwhile (a
/// subscriber that does not read must not pin its core's write forever); false
/// if the connection is done.
async fn write_out(
    stream: &mut TcpStream,
    out: &mut BytesMut,
    kill: &mut oneshot::Receiver<()>,
    stats: &crate::shard::shared::CoreStats,
) -> bool {
    if out.is_empty() {
        return true;
    }
    stats.net_output.fetch_add(out.len() as u64, Ordering::Relaxed);
    let write = async { stream.write_all(out).await.is_ok() };
    let killed = async {
        let _ = kill.await;
        false
    };
    let ok = futures_lite::future::or(write, killed).await;
    out.clear();
    ok
}

pub async fn serve(core: Rc<Core>, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let shared = core.shared.clone();
    // Redis refuses a connection past maxclients with this error and closes it.
    if shared.connected_clients() as u64 >= shared.config().maxclients {
        let _ = stream.write_all(b"-ERR max number of clients reached\r\n").await;
        let _ = stream.close().await;
        shared.rejected_connections.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let addr = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let laddr = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed);
    let entry = Arc::new(ClientEntry::new(id, addr, laddr));
    if let Ok(mut c) = shared.clients.lock() {
        c.insert(id, entry.clone());
        shared.peak_clients.fetch_max(c.len(), Ordering::Relaxed);
    }
    let stats = &shared.stats[core.id];
    stats.connections.fetch_add(1, Ordering::Relaxed);
    let (limits, authed) = {
        let cfg = shared.config();
        (DecodeLimits { max_bulk_len: cfg.proto_max_bulk_len, unauthenticated: false }, cfg.requirepass.is_empty())
    };
    let mut decoder = Decoder::new(limits);
    let mut session = Session::new(entry.clone(), authed);
    // Buffers sized to need: an idle connection holds about a kilobyte.
    let mut rbuf = BytesMut::new();
    let mut out = BytesMut::new();
    let mut pending: Vec<Pending> = Vec::new();
    // The region of the writes in `pending` (they all go to one region).
    let mut pending_region: Option<u32> = None;

    // CLIENT KILL and the Pub/Sub buffer limits close the connection through this.
    let (kill_tx, mut kill_rx) = oneshot::channel::<()>();
    entry.on_kill(kill_tx);

    // Reads land in a scratch buffer and only the bytes read are appended to the
    // query buffer: zero-filling spare capacity on every read would cost more than
    // copying a typical request.
    let mut scratch = Scratch::new();
    'conn: loop {
        enum Event {
            Read(std::io::Result<usize>),
            Pushed(Option<Message>),
            Killed,
            Idle,
        }
        // Wait for bytes from the client, a message for its subscriptions, or a
        // kill. A connection holding a grown read buffer gives it back after a
        // second without input (the read is a readiness poll plus recv(2), so
        // abandoning it loses nothing).
        let event = {
            let big = scratch.is_grown();
            let read = async {
                if big {
                    let idle = async {
                        glommio::timer::sleep(Duration::from_secs(1)).await;
                        Event::Idle
                    };
                    futures_lite::future::or(async { Event::Read(stream.read(scratch.buf()).await) }, idle).await
                } else {
                    Event::Read(stream.read(scratch.buf()).await)
                }
            };
            let killed = async {
                let _ = (&mut kill_rx).await;
                Event::Killed
            };
            match session.pubsub.as_mut() {
                Some(ps) => {
                    let pushed = async { Event::Pushed(ps.rx.next().await) };
                    futures_lite::future::or(killed, futures_lite::future::or(pushed, read)).await
                }
                None => futures_lite::future::or(killed, read).await,
            }
        };
        let n = match event {
            Event::Killed => break,
            Event::Idle => {
                released_idle_buffer(scratch.buf.len());
                scratch = Scratch::new();
                continue;
            }
            Event::Pushed(m) => {
                if let Some(m) = m {
                    push(&mut session, m, &mut out);
                    deliver_pushes(&mut session, &mut out);
                }
                if !write_out(&mut stream, &mut out, &mut kill_rx, stats).await {
                    break 'conn;
                }
                continue;
            }
            Event::Read(Ok(0)) | Event::Read(Err(_)) => break,
            Event::Read(Ok(n)) => n,
        };
        rbuf.extend_from_slice(&scratch.buf()[..n]);
        scratch.adapt(n);
        entry.qbuf.store(rbuf.len(), Ordering::Relaxed);
        session.now_ms = now_ms();
        stats.net_input.fetch_add(n as u64, Ordering::Relaxed);
        if rbuf.len() > MAX_QUERY_BUFFER {
            break;
        }
        let mut commands = 0u64;
        let mut last_spec = None;
        let mut close = false;
        loop {
            decoder.limits.unauthenticated = !session.authed;
            let args = match decoder.decode(&mut rbuf) {
                Ok(Some(args)) => args,
                Ok(None) => break,
                Err(e) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    reject(&core, &session, None, Reply::error_bytes(&e.reply_text()), false, &mut out);
                    close = true;
                    break;
                }
            };
            commands += 1;
            let started = Instant::now();
            // CLIENT REPLY SKIP silences the command after it.
            session.skipping = std::mem::take(&mut session.skip_next_reply);
            let spec = match cmd::table().resolve(&args) {
                Ok(s) => s,
                Err(r) => {
                    let named = cmd::table().named(&args);
                    let r = session::refused(&shared, &mut session, named, r);
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let silent = session.skipping || session.reply_off;
                    reject(&core, &session, named, r, silent, &mut out);
                    continue;
                }
            };
            last_spec = Some(spec);
            // CLIENT LIST's `cmd`: the command running now (Redis's lastcmd).
            entry.last_cmd.store(cmd::table::spec_id(spec), Ordering::Relaxed);
            if session.multi.is_some() {
                if let Some(r) = cmd::txn::queue(&shared, &mut session, spec, &args) {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let silent = session.skipping || session.reply_off;
                    if r.is_error() {
                        reject(&core, &session, Some(spec), r, silent, &mut out);
                    } else if !silent {
                        r.encode(session.resp, &mut out);
                    }
                    continue;
                }
            }
            if shared.observe.paused().is_some() && spec.flags & flag::NO_AUTH == 0 {
                drain(&core, &mut pending, &mut out, &mut session).await;
                wait_for_pause(&shared, spec, &session).await;
                session.now_ms = now_ms();
            }
            if !pending.is_empty() && cmd::needs_barrier(spec) {
                drain(&core, &mut pending, &mut out, &mut session).await;
            }
            // A script shows itself to monitors as it starts, ahead of its calls'
            // `[0 lua]` lines: after the lines of the commands sent before it.
            if spec.flags & flag::PROGRAM != 0 && shared.observe.has_monitors() {
                drain(&core, &mut pending, &mut out, &mut session).await;
            }
            // Cluster mode: a read waits until it cannot miss an acknowledged
            // write, however it reaches storage (keys, no keys, scripts).
            session.confirmed = None;
            if shared.nodes.is_some() {
                let scope = cmd::cluster::read_scope(&shared, &session, spec, &args);
                if scope != ReadScope::None {
                    // A script without keys picks its region by what it reads
                    // (`cmd::script`), which must include this client's writes.
                    if matches!(scope, ReadScope::Many(_)) {
                        drain(&core, &mut pending, &mut out, &mut session).await;
                    }
                    match linearize(&core, spec, &args, scope).await {
                        Ok((confirmed, time)) => {
                            session.confirmed = Some(confirmed);
                            session.now_ms = time;
                        }
                        Err(r) => {
                            drain(&core, &mut pending, &mut out, &mut session).await;
                            let silent = session.skipping || session.reply_off;
                            reject(&core, &session, Some(spec), r, silent, &mut out);
                            continue;
                        }
                    }
                }
            }
            session.rejected = false;
            session.writes_pending = !pending.is_empty();
            let plan = cmd::run(&core, &mut session, spec, &args);
            let silent = std::mem::take(&mut session.silent_reply) | session.skipping | session.reply_off;
            if session.rejected {
                if let Plan::Reply(r) = plan {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    reject(&core, &session, Some(spec), r, silent, &mut out);
                    continue;
                }
            }
            let shown = std::mem::take(&mut session.monitor_shown);
            let done = Done { spec, started, args, silent, shown };
            match plan {
                Plan::Write { region, cmd: c, shape } => {
                    // Writes to one region take effect in log order; across regions
                    // they would race, so a write to another region waits for this
                    // connection's pending ones (commands take effect in the order sent).
                    if pending_region.is_some_and(|r| r != region) {
                        drain(&core, &mut pending, &mut out, &mut session).await;
                    }
                    pending_region = Some(region);
                    pending.push((region, core.submit_write(region, c), shape, done))
                }
                Plan::Reply(r) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    finish(&core, &session, done, r, &mut out);
                }
                Plan::Broadcast(c) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let regions = cmd::fanout::regions(&shared);
                    let rxs: Vec<_> = regions.iter().map(|&r| (r, core.submit_write(r, c.clone()))).collect();
                    let mut parts = Vec::with_capacity(rxs.len());
                    for (region, rx) in rxs {
                        parts.push((region, rx.await.unwrap_or_else(|_| Reply::error("ERR write aborted"))));
                    }
                    finish(&core, &session, done, cmd::fanout::reply(spec.name, parts), &mut out);
                    session.now_ms = now_ms();
                }
                Plan::Close(r) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    finish(&core, &session, done, r, &mut out);
                    close = true;
                    break;
                }
                Plan::Blocking(work) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let r = Box::pin(glommio::executor().spawn_blocking(work.0)).await;
                    finish(&core, &session, done, r, &mut out);
                    session.now_ms = now_ms();
                }
                Plan::Block(b) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    // Blocked: CLIENT LIST shows `flags=b` and the rest of the batch.
                    entry.qbuf.store(rbuf.len(), Ordering::Relaxed);
                    entry.set_flag(CLIENT_BLOCKED, true);
                    let r = Box::pin(block(&core, b, session.id, &mut stream, &mut rbuf, scratch.buf())).await;
                    entry.set_flag(CLIENT_BLOCKED, false);
                    match r {
                        Some(r) => finish(&core, &session, done, r, &mut out),
                        None => break 'conn,
                    }
                    session.now_ms = now_ms();
                }
                Plan::Sleep(d, r) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    if !pause(d, &mut stream, &mut rbuf, scratch.buf()).await {
                        break 'conn;
                    }
                    session.now_ms = now_ms();
                    finish(&core, &session, done, r, &mut out);
                }
                Plan::Exec(p) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let wrote = p.cmd.is_some().then_some(p.region);
                    let r = Box::pin(exec(&core, &mut session, p)).await;
                    if let (Some(nodes), Some(region), Reply::Array(_)) = (&shared.nodes, wrote, &r) {
                        session.last_write = Some((region, nodes.acked(region)));
                    }
                    finish(&core, &session, done, r, &mut out);
                    session.now_ms = now_ms();
                }
                Plan::WaitReplicas { replicas, timeout } => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let r = Box::pin(wait_replicas(&core, session.last_write, replicas, timeout)).await;
                    finish(&core, &session, done, r, &mut out);
                    session.now_ms = now_ms();
                }
                Plan::Members(change) => {
                    drain(&core, &mut pending, &mut out, &mut session).await;
                    let r = match Box::pin(crate::shard::members::change_everywhere(&core, change)).await {
                        Ok(()) => Reply::Ok,
                        Err(e) => Reply::error(format!("ERR {e}")),
                    };
                    finish(&core, &session, done, r, &mut out);
                    session.now_ms = now_ms();
                }
            }
        }
        drain(&core, &mut pending, &mut out, &mut session).await;
        stats.commands.fetch_add(commands, Ordering::Relaxed);
        entry.qbuf.store(rbuf.len(), Ordering::Relaxed);
        if last_spec.is_some() {
            if let Ok(mut t) = entry.last_active.lock() {
                *t = Instant::now();
            }
        }
        // Messages published meanwhile (to this client's own channels too) follow
        // the replies.
        deliver_pushes(&mut session, &mut out);
        if !write_out(&mut stream, &mut out, &mut kill_rx, stats).await {
            break 'conn;
        }
        trim(&mut out);
        release_query_buffer(&mut rbuf);
        if close {
            break;
        }
    }
    let _ = stream.close().await;
    session::end_transaction(&shared, &mut session);
    cmd::admin::leave_monitor(&shared, &mut session);
    session::drop_subscriptions(&shared, &mut session);
    let left = shared.clients.lock().map(|mut c| {
        c.remove(&id);
        c.len()
    });
    if let Ok(left) = left {
        release_memory_after_closes(&shared.peak_clients, left);
    }
}

/// Bytes of idle connections' read buffers freed since memory was last handed
/// back to the OS.
static IDLE_FREED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Freed buffers go back to the allocator, which keeps them; hand them (and
/// whatever else is free) to the OS each time a few MB have gathered.
fn released_idle_buffer(bytes: usize) {
    let freed = IDLE_FREED.fetch_add(bytes, Ordering::Relaxed) + bytes;
    if freed >= 2 << 20 && IDLE_FREED.compare_exchange(freed, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        // SAFETY: malloc_trim only releases free memory; it is thread-safe.
        #[cfg(target_env = "gnu")]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// When the connections have dropped to half of their peak (and by hundreds),
/// hand the freed heap back to the system: glibc keeps what threads freed in
/// their arenas, so 5,000 closed connections would stay in the resident size.
fn release_memory_after_closes(peak: &std::sync::atomic::AtomicUsize, now: usize) {
    let p = peak.load(Ordering::Relaxed);
    if p >= 2 * now && p - now >= 512 && peak.compare_exchange(p, now, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        // SAFETY: malloc_trim only releases free memory; it is thread-safe.
        #[cfg(target_env = "gnu")]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Scratch;

    /// A client pipelining 4.6 KB batches: the buffer grows until one read takes
    /// a whole batch and stays there, though the batches' tails were short reads.
    #[test]
    fn a_pipelining_clients_buffer_settles_big_enough_for_its_batches() {
        let batch = 4600;
        let mut s = Scratch::new();
        let mut split = 0;
        for _ in 0..1000 {
            let mut left = batch;
            let mut reads = 0;
            while left > 0 {
                let n = left.min(s.buf().len());
                left -= n;
                reads += 1;
                s.adapt(n);
            }
            if reads > 1 {
                split += 1;
            }
        }
        assert!(split <= 4, "{split} of 1000 batches took more than one read");
        assert_eq!(s.buf().len(), 8 * 1024);
    }

    /// A client that stops sending big requests gets its buffer halved back.
    #[test]
    fn a_buffer_shrinks_after_a_run_of_short_reads() {
        let mut s = Scratch::new();
        for _ in 0..6 {
            let n = s.buf().len();
            s.adapt(n);
        }
        assert_eq!(s.buf().len(), Scratch::MAX);
        for _ in 0..Scratch::SHRINK_AFTER - 1 {
            s.adapt(100);
        }
        assert_eq!(s.buf().len(), Scratch::MAX, "one run short of the limit keeps it");
        s.adapt(Scratch::MAX);
        for _ in 0..Scratch::SHRINK_AFTER {
            s.adapt(100);
        }
        assert_eq!(s.buf().len(), Scratch::MAX / 2);
        for _ in 0..10 * Scratch::SHRINK_AFTER {
            s.adapt(100);
        }
        assert_eq!(s.buf().len(), Scratch::MIN);
    }
}
