//! Pub/Sub: who is subscribed to what, node-wide, and delivery.
//!
//! A subscribing connection gets a [`Subscriber`]: a queue its connection loop
//! waits on alongside the socket. PUBLISH (on any core, and keyspace
//! notifications from apply) looks the channel and the patterns up and pushes
//! the message into each matching subscriber's queue, so a subscriber receives
//! what any core publishes, in publish order per publisher. Pub/Sub is not
//! replicated: fire and forget, as in Redis.
//!
//! Memory is bounded as Redis's `client-output-buffer-limit pubsub` bounds it:
//! the bytes waiting in a subscriber's queue are counted, and a subscriber over
//! the hard limit, or over the soft limit for longer than its seconds, is cut
//! off (its connection closed, no reply) instead of growing the server.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_channel::mpsc;

use super::client::ClientEntry;
use crate::protocol::Reply;
use crate::types::glob::glob_match;
use crate::types::notify::{self, Event, Sink};

/// Which kind of subscription a message came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Pattern,
    Shard,
    /// A MONITOR line (the payload), sent as a status reply.
    Monitor,
}

/// One message for a subscriber.
#[derive(Debug, Clone)]
pub struct Message {
    pub kind: Kind,
    /// The pattern that matched (pmessage).
    pub pattern: Option<Bytes>,
    pub channel: Bytes,
    pub payload: Bytes,
}

impl Message {
    /// The frame Redis sends for it (`message`, `pmessage`, `smessage`).
    pub fn reply(self) -> Reply {
        let b = Reply::Bulk;
        match self.kind {
            Kind::Channel => Reply::Push(vec![Reply::bulk_str("message"), b(self.channel), b(self.payload)]),
            Kind::Shard => Reply::Push(vec![Reply::bulk_str("smessage"), b(self.channel), b(self.payload)]),
            Kind::Monitor => Reply::Simple(String::from_utf8_lossy(&self.payload).into_owned().into()),
            Kind::Pattern => Reply::Push(vec![
                Reply::bulk_str("pmessage"),
                b(self.pattern.unwrap_or_default()),
                b(self.channel),
                b(self.payload),
            ]),
        }
    }

    /// What it costs to keep queued.
    pub fn size(&self) -> usize {
        self.channel.len() + self.payload.len() + self.pattern.as_ref().map_or(0, |p| p.len()) + 48
    }
}

/// A subscribing connection's end of the registry.
pub struct Subscriber {
    tx: mpsc::UnboundedSender<Message>,
    /// Bytes queued and not yet taken by the connection.
    queued: AtomicUsize,
    /// When the queue first went over the soft limit (reset below it).
    soft_since: Mutex<Option<Instant>>,
    cut: AtomicBool,
    client: Arc<ClientEntry>,
}

impl Subscriber {
    /// A subscriber for `client`, and the queue its connection reads.
    pub fn new(client: Arc<ClientEntry>) -> (Arc<Subscriber>, mpsc::UnboundedReceiver<Message>) {
        let (tx, rx) = mpsc::unbounded();
        let s = Subscriber {
            tx,
            queued: AtomicUsize::new(0),
            soft_since: Mutex::new(None),
            cut: AtomicBool::new(false),
            client,
        };
        (Arc::new(s), rx)
    }

    pub fn client_id(&self) -> u64 {
        self.client.id
    }

    /// Queue a MONITOR line (monitors have no output limit, as normal clients in Redis).
    pub fn send_line(&self, line: Bytes) {
        let m = Message { kind: Kind::Monitor, pattern: None, channel: Bytes::new(), payload: line };
        self.queued.fetch_add(m.size(), Ordering::Relaxed);
        let _ = self.tx.unbounded_send(m);
    }

    /// The connection took `m` off its queue.
    pub fn taken(&self, m: &Message) {
        self.queued.fetch_sub(m.size(), Ordering::Relaxed);
    }

    /// Queue `m` unless the subscriber is over its limits (then it is cut off).
    fn deliver(&self, m: Message, limits: &Limits) {
        if self.cut.load(Ordering::Relaxed) {
            return;
        }
        let size = m.size();
        let queued = self.queued.fetch_add(size, Ordering::Relaxed) + size;
        let over_hard = limits.hard > 0 && queued >= limits.hard;
        let over_soft = limits.soft > 0 && queued >= limits.soft && {
            let mut since = self.soft_since.lock().unwrap_or_else(|e| e.into_inner());
            let start = *since.get_or_insert_with(Instant::now);
            start.elapsed() > limits.soft_for
        };
        if !(limits.soft > 0 && queued >= limits.soft) {
            *self.soft_since.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        if over_hard || over_soft {
            self.cut.store(true, Ordering::SeqCst);
            eprintln!(
                "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                self.client.id, self.client.addr
            );
            self.client.kill();
            return;
        }
        let _ = self.tx.unbounded_send(m);
    }
}

/// `client-output-buffer-limit pubsub <hard> <soft> <seconds>` (0: no limit).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub hard: usize,
    pub soft: usize,
    pub soft_for: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { hard: 32 << 20, soft: 8 << 20, soft_for: Duration::from_secs(60) }
    }
}

impl Limits {
    /// The pubsub class of a `client-output-buffer-limit` value.
    pub fn parse(value: &str) -> Option<Limits> {
        let parts: Vec<&str> = value.split_whitespace().collect();
        let i = parts.chunks(4).position(|c| c.first() == Some(&"pubsub"))?;
        let c = &parts[i * 4..i * 4 + 4];
        let mem = |s: &str| crate::config::parse_memory(s).and_then(|v| usize::try_from(v).ok());
        Some(Limits { hard: mem(c[1])?, soft: mem(c[2])?, soft_for: Duration::from_secs(c[3].parse().ok()?) })
    }
}

type Subs = Vec<Arc<Subscriber>>;

#[derive(Default)]
struct Maps {
    channels: HashMap<Bytes, Subs>,
    /// Ordered so that a message is matched against patterns in one order.
    patterns: BTreeMap<Bytes, Subs>,
    shard: HashMap<Bytes, Subs>,
}

impl Maps {
    fn of(&mut self, kind: Kind) -> &mut dyn SubMap {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard | Kind::Monitor => &mut self.shard,
        }
    }
}

trait SubMap {
    fn add(&mut self, name: Bytes, s: Arc<Subscriber>);
    fn remove(&mut self, name: &[u8], s: &Arc<Subscriber>);
}

macro_rules! submap {
    ($t:ty) => {
        impl SubMap for $t {
            fn add(&mut self, name: Bytes, s: Arc<Subscriber>) {
                self.entry(name).or_default().push(s);
            }
            fn remove(&mut self, name: &[u8], s: &Arc<Subscriber>) {
                if let Some(v) = self.get_mut(name) {
                    v.retain(|x| !Arc::ptr_eq(x, s));
                    if v.is_empty() {
                        self.remove(name);
                    }
                }
            }
        }
    };
}
submap!(HashMap<Bytes, Subs>);
submap!(BTreeMap<Bytes, Subs>);

/// The node's subscriptions.
#[derive(Default)]
pub struct PubSub {
    maps: RwLock<Maps>,
    limits: RwLock<Limits>,
    /// `notify-keyspace-events`.
    notify: AtomicU32,
}

impl Sink for PubSub {
    fn flags(&self) -> u32 {
        self.notify.load(Ordering::Relaxed)
    }

    fn publish(&self, events: Vec<Event>) {
        let flags = self.flags();
        for e in &events {
            for (channel, message) in notify::messages(flags, e) {
                self.publish(Kind::Channel, &channel, &message);
            }
        }
    }
}

impl PubSub {
    pub fn set_notify(&self, flags: u32) {
        self.notify.store(flags, Ordering::Relaxed);
    }

    pub fn set_limits(&self, l: Limits) {
        *self.limits.write().unwrap_or_else(|e| e.into_inner()) = l;
    }

    pub fn subscribe(&self, kind: Kind, name: Bytes, s: &Arc<Subscriber>) {
        self.maps.write().unwrap_or_else(|e| e.into_inner()).of(kind).add(name, s.clone());
    }

    pub fn unsubscribe(&self, kind: Kind, name: &[u8], s: &Arc<Subscriber>) {
        self.maps.write().unwrap_or_else(|e| e.into_inner()).of(kind).remove(name, s);
    }

    /// PUBLISH (`Kind::Channel`) or SPUBLISH (`Kind::Shard`): deliver to the
    /// channel's subscribers, then (PUBLISH) to every matching pattern's; the
    /// number of deliveries.
    pub fn publish(&self, kind: Kind, channel: &Bytes, payload: &Bytes) -> usize {
        let limits = *self.limits.read().unwrap_or_else(|e| e.into_inner());
        let maps = self.maps.read().unwrap_or_else(|e| e.into_inner());
        let mut n = 0;
        let exact = if kind == Kind::Shard { maps.shard.get(channel) } else { maps.channels.get(channel) };
        for s in exact.into_iter().flatten() {
            s.deliver(Message { kind, pattern: None, channel: channel.clone(), payload: payload.clone() }, &limits);
            n += 1;
        }
        if kind == Kind::Channel {
            for (pat, subs) in &maps.patterns {
                if glob_match(pat, channel, false) {
                    for s in subs {
                        let m = Message {
                            kind: Kind::Pattern,
                            pattern: Some(pat.clone()),
                            channel: channel.clone(),
                            payload: payload.clone(),
                        };
                        s.deliver(m, &limits);
                        n += 1;
                    }
                }
            }
        }
        n
    }

    /// PUBSUB CHANNELS / SHARDCHANNELS: the channels with subscribers matching
    /// `pattern`.
    pub fn channels(&self, shard: bool, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let maps = self.maps.read().unwrap_or_else(|e| e.into_inner());
        let m = if shard { &maps.shard } else { &maps.channels };
        let mut out: Vec<Bytes> =
            m.keys().filter(|c| pattern.is_none_or(|p| glob_match(p, c, false))).cloned().collect();
        out.sort();
        out
    }

    /// PUBSUB NUMSUB / SHARDNUMSUB of one channel.
    pub fn numsub(&self, shard: bool, channel: &[u8]) -> usize {
        let maps = self.maps.read().unwrap_or_else(|e| e.into_inner());
        let m = if shard { &maps.shard } else { &maps.channels };
        m.get(channel).map_or(0, |v| v.len())
    }

    /// Distinct patterns (PUBSUB NUMPAT, INFO's `pubsub_patterns`).
    pub fn numpat(&self) -> usize {
        self.maps.read().unwrap_or_else(|e| e.into_inner()).patterns.len()
    }

    /// Distinct channels, and shard channels (INFO).
    pub fn counts(&self) -> (usize, usize) {
        let maps = self.maps.read().unwrap_or_else(|e| e.into_inner());
        (maps.channels.len(), maps.shard.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> Arc<ClientEntry> {
        Arc::new(ClientEntry::new(1, String::new(), String::new()))
    }

    #[test]
    fn channels_and_patterns_deliver_in_order() {
        let ps = PubSub::default();
        let (s, mut rx) = Subscriber::new(client());
        ps.subscribe(Kind::Channel, Bytes::from_static(b"foo.bar"), &s);
        ps.subscribe(Kind::Pattern, Bytes::from_static(b"foo.*"), &s);
        let ch = Bytes::from_static(b"foo.bar");
        assert_eq!(ps.publish(Kind::Channel, &ch, &Bytes::from_static(b"1")), 2);
        assert_eq!(ps.publish(Kind::Channel, &ch, &Bytes::from_static(b"2")), 2);
        assert_eq!(ps.publish(Kind::Shard, &ch, &Bytes::from_static(b"x")), 0, "no shard subscribers");
        let got: Vec<(Kind, Bytes)> = std::iter::from_fn(|| rx.try_recv().ok()).map(|m| (m.kind, m.payload)).collect();
        assert_eq!(
            got,
            vec![
                (Kind::Channel, Bytes::from_static(b"1")),
                (Kind::Pattern, Bytes::from_static(b"1")),
                (Kind::Channel, Bytes::from_static(b"2")),
                (Kind::Pattern, Bytes::from_static(b"2")),
            ]
        );
        ps.unsubscribe(Kind::Channel, b"foo.bar", &s);
        assert_eq!(ps.publish(Kind::Channel, &ch, &Bytes::from_static(b"3")), 1);
        assert_eq!(ps.numpat(), 1);
    }

    #[test]
    fn a_subscriber_over_the_hard_limit_is_cut_off() {
        let ps = PubSub::default();
        ps.set_limits(Limits { hard: 1000, soft: 0, soft_for: Duration::ZERO });
        let c = client();
        let (kill_tx, mut kill_rx) = futures_channel::oneshot::channel();
        c.on_kill(kill_tx);
        let (s, mut rx) = Subscriber::new(c);
        ps.subscribe(Kind::Channel, Bytes::from_static(b"c"), &s);
        let payload = Bytes::from(vec![b'x'; 100]);
        for _ in 0..20 {
            ps.publish(Kind::Channel, &Bytes::from_static(b"c"), &payload);
        }
        let queued = std::iter::from_fn(|| rx.try_recv().ok()).count();
        assert!(queued < 10, "delivery stopped at the limit: {queued}");
        assert!(matches!(kill_rx.try_recv(), Ok(Some(()))), "the connection is told to close");
        assert_eq!(
            Limits::parse("normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60").unwrap().hard,
            32 << 20
        );
    }
}
