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

use crate::cmd::txn::ExecPlan;
use crate::cmd::{self, Plan, Session, Shape};
use crate::protocol::{DecodeLimits, Decoder, Reply};
use crate::shard::pubsub::Message;
use crate::shard::shared::ClientEntry;
use crate::shard::Core;
use crate::types::now_ms;

const READ_CHUNK: usize = 16 * 1024;
/// Redis's client-query-buffer-limit default.
const MAX_QUERY_BUFFER: usize = 1 << 30;

/// A write in flight: its result arrives on the receiver, shown as the shape.
type Pending = (oneshot::Receiver<Reply>, Shape);

/// Await every pending write's reply, in order, into `out`; then refresh the
/// session's clock (time passed while waiting).
async fn drain(pending: &mut Vec<Pending>, out: &mut BytesMut, session: &mut Session) {
    if pending.is_empty() {
        return;
    }
    for (rx, shape) in pending.drain(..) {
        let r = rx.await.unwrap_or_else(|_| Reply::error("ERR write aborted"));
        shape.apply(r).encode(session.resp, out);
    }
    session.now_ms = now_ms();
}

/// Serve a blocking pop (see [`cmd::Block`]). Bytes the client sends meanwhile
/// are queued in `rbuf` and run after it; `None` if the client went away.
async fn block(
    core: &Core,
    b: cmd::Block,
    stream: &mut TcpStream,
    rbuf: &mut BytesMut,
    scratch: &mut [u8],
) -> Option<Reply> {
    enum Event {
        Woken,
        Timeout,
        Read(std::io::Result<usize>),
    }
    let blocked = core.shared.blocked.clone();
    let waiter = blocked.register(&b.keys);
    // A deadline past what the clock can hold is no deadline.
    let deadline = b.timeout.and_then(|t| Instant::now().checked_add(t));
    let mut cmd = b.cmd;
    let answer = 'retry: loop {
        let r = core.submit_write(b.region, cmd).await.unwrap_or_else(|_| Reply::error("ERR write aborted"));
        if !matches!(r, Reply::Nil | Reply::NilArray) {
            break Some(b.shape.apply(r));
        }
        cmd = b.retry.clone();
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
            match futures_lite::future::or(woke, futures_lite::future::or(timer, read)).await {
                Event::Woken => continue 'retry,
                Event::Timeout => break 'retry Some(Reply::NilArray),
                Event::Read(Ok(n)) if n > 0 && rbuf.len() + n <= MAX_QUERY_BUFFER => {
                    rbuf.extend_from_slice(&scratch[..n])
                }
                Event::Read(_) => break 'retry None,
            }
        }
    };
    blocked.unregister(&waiter);
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
        // Nothing to write: the watched keys are judged as of now.
        (None, false) => match shared.watches.dirty(&shared.storage, &plan.watched, now_ms()) {
            Ok(true) => Reply::NilArray,
            Ok(false) => Reply::Array(Vec::new()),
            Err(e) => Reply::error(format!("ERR {e}")),
        },
        (Some(c), true) => {
            core.submit_write(plan.region, c).await.unwrap_or_else(|_| Reply::error("ERR write aborted"))
        }
        (Some(c), false) => core
            .submit_fenced(plan.region, Some(c), plan.watched.clone())
            .await
            .unwrap_or_else(|_| Reply::error("ERR write aborted")),
    };
    cmd::txn::unwatch_all(shared, &plan.watched);
    let Reply::Array(data) = result else { return result };
    session.now_ms = now_ms();
    let mut data = data.into_iter();
    let mut out = Vec::with_capacity(plan.queue.len());
    session.in_exec = true;
    for (spec, args, in_apply) in plan.queue {
        if in_apply {
            out.push(data.next().unwrap_or_else(|| Reply::error("ERR transaction reply missing")));
        } else {
            out.push(local_reply(cmd::run(core, session, spec, &args)).await);
        }
    }
    session.in_exec = false;
    Reply::Array(out)
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
    }
    let stats = &shared.stats[core.id];
    stats.connections.fetch_add(1, Ordering::Relaxed);
    let (limits, authed) = {
        let cfg = shared.config();
        (DecodeLimits { max_bulk_len: cfg.proto_max_bulk_len }, cfg.requirepass.is_empty())
    };
    let decoder = Decoder::new(limits);
    let mut session = Session::new(entry.clone(), authed);
    let mut rbuf = BytesMut::with_capacity(READ_CHUNK);
    let mut out = BytesMut::with_capacity(READ_CHUNK);
    let mut pending: Vec<Pending> = Vec::new();
    // The region of the writes in `pending` (they all go to one region).
    let mut pending_region: Option<u32> = None;

    // CLIENT KILL and the Pub/Sub buffer limits close the connection through this.
    let (kill_tx, mut kill_rx) = oneshot::channel::<()>();
    entry.on_kill(kill_tx);

    // Reads land in a fixed scratch buffer and only the bytes read are appended to
    // the query buffer: zero-filling spare capacity on every read would cost more
    // than copying a typical request.
    let mut scratch = vec![0u8; READ_CHUNK];
    'conn: loop {
        enum Event {
            Read(std::io::Result<usize>),
            Pushed(Option<Message>),
            Killed,
        }
        // Wait for bytes from the client, a message for its subscriptions, or a kill.
        let event = {
            let read = async { Event::Read(stream.read(&mut scratch).await) };
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
        rbuf.extend_from_slice(&scratch[..n]);
        session.now_ms = now_ms();
        stats.net_input.fetch_add(n as u64, Ordering::Relaxed);
        if rbuf.len() > MAX_QUERY_BUFFER {
            break;
        }
        let mut commands = 0u64;
        let mut last_spec = None;
        let mut close = false;
        loop {
            let args = match decoder.decode(&mut rbuf) {
                Ok(Some(args)) => args,
                Ok(None) => break,
                Err(e) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    Reply::Error(format!("ERR {e}").into()).encode(session.resp, &mut out);
                    close = true;
                    break;
                }
            };
            commands += 1;
            let spec = match cmd::resolve(&args) {
                Ok(s) => s,
                Err(r) => {
                    cmd::txn::refused(&mut session);
                    drain(&mut pending, &mut out, &mut session).await;
                    r.encode(session.resp, &mut out);
                    continue;
                }
            };
            last_spec = Some(spec);
            if session.multi.is_some() {
                if let Some(r) = cmd::txn::queue(&shared, &mut session, spec, &args) {
                    drain(&mut pending, &mut out, &mut session).await;
                    r.encode(session.resp, &mut out);
                    continue;
                }
            }
            if !pending.is_empty() && cmd::needs_barrier(spec) {
                drain(&mut pending, &mut out, &mut session).await;
            }
            match cmd::run(&core, &mut session, spec, &args) {
                Plan::Write { region, cmd: c, shape } => {
                    // Writes to one region take effect in log order; across regions
                    // they would race, so a write to another region waits for this
                    // connection's pending ones (commands take effect in the order sent).
                    if pending_region.is_some_and(|r| r != region) {
                        drain(&mut pending, &mut out, &mut session).await;
                    }
                    pending_region = Some(region);
                    pending.push((core.submit_write(region, c), shape))
                }
                Plan::Reply(r) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    r.encode(session.resp, &mut out);
                }
                Plan::Broadcast(c) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    let rxs: Vec<_> =
                        shared.router.regions().iter().map(|r| core.submit_write(r.id, c.clone())).collect();
                    let mut first = None;
                    for rx in rxs {
                        let r = rx.await.unwrap_or_else(|_| Reply::error("ERR write aborted"));
                        if first.is_none() || r.is_error() {
                            first = Some(r);
                        }
                    }
                    first.unwrap_or(Reply::Ok).encode(session.resp, &mut out);
                    session.now_ms = now_ms();
                }
                Plan::Close(r) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    r.encode(session.resp, &mut out);
                    close = true;
                    break;
                }
                Plan::Blocking(work) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    let r = glommio::executor().spawn_blocking(work.0).await;
                    r.encode(session.resp, &mut out);
                    session.now_ms = now_ms();
                }
                Plan::Block(b) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    match block(&core, b, &mut stream, &mut rbuf, &mut scratch).await {
                        Some(r) => r.encode(session.resp, &mut out),
                        None => break 'conn,
                    }
                    session.now_ms = now_ms();
                }
                Plan::Sleep(d, r) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    if !pause(d, &mut stream, &mut rbuf, &mut scratch).await {
                        break 'conn;
                    }
                    session.now_ms = now_ms();
                    r.encode(session.resp, &mut out);
                }
                Plan::Exec(p) => {
                    drain(&mut pending, &mut out, &mut session).await;
                    let r = exec(&core, &mut session, p).await;
                    r.encode(session.resp, &mut out);
                    session.now_ms = now_ms();
                }
            }
        }
        drain(&mut pending, &mut out, &mut session).await;
        stats.commands.fetch_add(commands, Ordering::Relaxed);
        if let Some(spec) = last_spec {
            entry.last_cmd.store(cmd::table::spec_id(spec), Ordering::Relaxed);
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
        if close {
            break;
        }
    }
    let _ = stream.close().await;
    cmd::txn::reset(&shared, &mut session);
    cmd::pubsub::reset(&shared, &mut session);
    if let Ok(mut c) = shared.clients.lock() {
        c.remove(&id);
    };
}
