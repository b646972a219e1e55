//! One client connection: read, decode every complete request in the buffer,
//! run each in order (`dispatch`), write all replies with as few writes as
//! possible.
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
use futures_util::StreamExt;
use glommio::net::TcpStream;

use super::dispatch::{Dispatch, Flow, Wire, MAX_QUERY_BUFFER};
use crate::cmd::{self, session, Session};
use crate::protocol::{DecodeLimits, Decoder, Reply};
use crate::shard::client::ClientEntry;
use crate::shard::pubsub::Message;
use crate::shard::{Core, Shared};
use crate::types::now_ms;

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

/// Serve one client until it goes away: read, run every complete request
/// (`dispatch`), write the replies, deliver its Pub/Sub messages.
pub async fn serve(core: Rc<Core>, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Some(entry) = admit(&core, &mut stream).await else { return };
    let shared = core.shared.clone();
    let stats = &shared.stats[core.id];
    let (limits, authed) = {
        let cfg = shared.config();
        (DecodeLimits { max_bulk_len: cfg.proto_max_bulk_len, unauthenticated: false }, cfg.requirepass.is_empty())
    };
    let mut decoder = Decoder::new(limits);
    let mut d = Dispatch::new(core.clone(), Session::new(entry.clone(), authed));
    // Buffers sized to need: an idle connection holds about a kilobyte.
    let mut rbuf = BytesMut::new();
    let mut scratch = Scratch::new();
    // CLIENT KILL and the Pub/Sub buffer limits close the connection through this.
    let (kill_tx, mut kill_rx) = oneshot::channel::<()>();
    entry.on_kill(kill_tx);
    loop {
        let n = match next_event(&mut stream, &mut scratch, &mut kill_rx, &mut d.session).await {
            Event::Killed | Event::Read(Ok(0) | Err(_)) => break,
            Event::Idle => {
                released_idle_buffer(scratch.buf.len());
                scratch = Scratch::new();
                continue;
            }
            Event::Pushed(m) => {
                if let Some(m) = m {
                    push(&mut d.session, m, &mut d.out);
                    deliver_pushes(&mut d.session, &mut d.out);
                }
                if !write_out(&mut stream, &mut d.out, &mut kill_rx, stats).await {
                    break;
                }
                continue;
            }
            Event::Read(Ok(n)) => n,
        };
        rbuf.extend_from_slice(&scratch.buf()[..n]);
        scratch.adapt(n);
        entry.qbuf.store(rbuf.len(), Ordering::Relaxed);
        d.session.now_ms = now_ms();
        stats.net_input.fetch_add(n as u64, Ordering::Relaxed);
        if rbuf.len() > MAX_QUERY_BUFFER {
            break;
        }
        let flow = run_batch(&mut d, &mut decoder, &mut stream, &mut rbuf, &mut scratch).await;
        if matches!(flow, Flow::Gone) {
            break;
        }
        // Messages published meanwhile (to this client's own channels too)
        // follow the replies.
        deliver_pushes(&mut d.session, &mut d.out);
        if !write_out(&mut stream, &mut d.out, &mut kill_rx, stats).await {
            break;
        }
        trim(&mut d.out);
        release_query_buffer(&mut rbuf);
        if matches!(flow, Flow::Close) {
            break;
        }
    }
    let _ = stream.close().await;
    leave(&shared, &mut d.session);
}

/// Register a new connection, or refuse it past maxclients as Redis does.
async fn admit(core: &Core, stream: &mut TcpStream) -> Option<Arc<ClientEntry>> {
    let shared = &core.shared;
    if shared.connected_clients() as u64 >= shared.config().maxclients {
        let _ = stream.write_all(b"-ERR max number of clients reached\r\n").await;
        let _ = stream.close().await;
        shared.rejected_connections.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let addr = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let laddr = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed);
    let entry = Arc::new(ClientEntry::new(id, addr, laddr));
    if let Ok(mut c) = shared.clients.lock() {
        c.insert(id, entry.clone());
        shared.peak_clients.fetch_max(c.len(), Ordering::Relaxed);
    }
    shared.stats[core.id].connections.fetch_add(1, Ordering::Relaxed);
    Some(entry)
}

/// What a waiting connection wakes for.
enum Event {
    Read(std::io::Result<usize>),
    Pushed(Option<Message>),
    Killed,
    Idle,
}

/// Wait for bytes from the client, a message for its subscriptions, or a
/// kill. A connection holding a grown read buffer gives it back after a
/// second without input (the read is a readiness poll plus recv(2), so
/// abandoning it loses nothing). Reads land in the scratch buffer and only
/// the bytes read are appended to the query buffer: zero-filling spare
/// capacity on every read would cost more than copying a typical request.
async fn next_event(
    stream: &mut TcpStream,
    scratch: &mut Scratch,
    kill_rx: &mut oneshot::Receiver<()>,
    session: &mut Session,
) -> Event {
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
        let _ = kill_rx.await;
        Event::Killed
    };
    match session.pubsub.as_mut() {
        Some(ps) => {
            let pushed = async { Event::Pushed(ps.rx.next().await) };
            futures_lite::future::or(killed, futures_lite::future::or(pushed, read)).await
        }
        None => futures_lite::future::or(killed, read).await,
    }
}

/// Run every complete request in `rbuf`, in order, then await the writes
/// still pending; what the connection does next.
async fn run_batch(
    d: &mut Dispatch,
    decoder: &mut Decoder,
    stream: &mut TcpStream,
    rbuf: &mut BytesMut,
    scratch: &mut Scratch,
) -> Flow {
    let mut commands = 0u64;
    let mut flow = Flow::Next;
    loop {
        decoder.limits.unauthenticated = !d.session.authed;
        let args = match decoder.decode(rbuf) {
            Ok(Some(args)) => args,
            Ok(None) => break,
            Err(e) => {
                d.protocol_error(Reply::error_bytes(&e.reply_text())).await;
                flow = Flow::Close;
                break;
            }
        };
        commands += 1;
        flow = d.command(args, Wire { stream, rbuf, scratch: scratch.buf() }).await;
        if !matches!(flow, Flow::Next) {
            break;
        }
    }
    if matches!(flow, Flow::Gone) {
        return flow;
    }
    d.drain().await;
    let entry = d.session.entry.clone();
    d.core.shared.stats[d.core.id].commands.fetch_add(commands, Ordering::Relaxed);
    entry.qbuf.store(rbuf.len(), Ordering::Relaxed);
    if d.take_ran() {
        if let Ok(mut t) = entry.last_active.lock() {
            *t = Instant::now();
        }
    }
    flow
}

/// The connection is gone: what it held is released.
fn leave(shared: &Shared, session: &mut Session) {
    session::end_transaction(shared, session);
    cmd::admin::leave_monitor(shared, session);
    session::drop_subscriptions(shared, session);
    let left = shared.clients.lock().map(|mut c| {
        c.remove(&session.id);
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
