//! What the server observes of itself: per-command statistics and latency
//! histograms (INFO commandstats / latencystats), error counts (errorstats),
//! the slow log (SLOWLOG), the latency monitor (LATENCY), MONITOR feeds and
//! CLIENT PAUSE. Connections record into it once per command; nothing here
//! takes a lock shared between cores on that path except the slow log and the
//! latency monitor, which only slow commands reach.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::client::ClientEntry;
use super::pubsub::Subscriber;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A latency histogram of nanoseconds: 16 linear sub-buckets per power of two
/// (about 6% resolution), like HDR with two significant digits.
#[derive(Clone)]
pub struct Histogram {
    buckets: Box<[u64; Histogram::SIZE]>,
    count: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { buckets: Box::new([0; Histogram::SIZE]), count: 0 }
    }
}

impl Histogram {
    const SIZE: usize = 64 * 16;

    fn index(ns: u64) -> usize {
        if ns < 16 {
            return ns as usize;
        }
        let e = 63 - ns.leading_zeros() as usize; // >= 4
        let sub = ((ns >> (e - 4)) & 15) as usize;
        ((e - 3) * 16 + sub).min(Self::SIZE - 1)
    }

    /// The largest value a bucket holds.
    fn upper(i: usize) -> u64 {
        if i < 16 {
            return i as u64;
        }
        let e = i / 16 + 3;
        let sub = (i % 16) as u64;
        ((16 + sub + 1) << (e - 4)) - 1
    }

    pub fn record(&mut self, ns: u64) {
        self.buckets[Self::index(ns)] += 1;
        self.count += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The value at percentile `p` (0..=100), in microseconds.
    pub fn percentile_us(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let want = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Self::upper(i) as f64 / 1000.0;
            }
        }
        Self::upper(Self::SIZE - 1) as f64 / 1000.0
    }

    fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.count += other.count;
    }
}

/// One command's figures (a row of INFO commandstats).
#[derive(Clone, Default)]
pub struct CmdStat {
    pub calls: u64,
    pub usec: u64,
    pub rejected: u64,
    pub failed: u64,
    pub hist: Histogram,
}

/// How a command ended, for its statistics.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Ran, and its reply was an error.
    Failed,
    /// Refused before it ran (arity, NOAUTH, queued in a failed MULTI, ...).
    Rejected,
}

/// One SLOWLOG entry.
#[derive(Clone)]
pub struct SlowEntry {
    pub id: u64,
    pub unix: u64,
    pub usec: u64,
    pub args: Vec<Bytes>,
    pub addr: String,
    pub name: Bytes,
}

/// A latency-monitor event series: the max per second, the last 160 seconds.
#[derive(Clone, Default)]
pub struct LatencySeries {
    pub samples: VecDeque<(u64, u64)>,
    pub max: u64,
}

/// A blocked client's wait, as CLIENT UNBLOCK sees it: whether it was told to
/// fail (ERROR) and the channel that wakes it (taken once told).
type Unblock = (bool, Option<futures_channel::oneshot::Sender<()>>);

/// CLIENT PAUSE: until when (ms since the epoch) and whether reads pause too.
#[derive(Default)]
pub struct Pause {
    until_ms: AtomicU64,
    all: AtomicBool,
    /// Clients a pause holds right now (INFO counts them as blocked, as Redis
    /// does its postponed clients).
    held: AtomicUsize,
}

#[derive(Default)]
pub struct Observe {
    /// Per core: spec id (its row's address) -> figures.
    per_core: Vec<Mutex<ahash::AHashMap<usize, CmdStat>>>,
    /// Error code -> count (INFO errorstats), and every error reply sent.
    errors: Mutex<BTreeMap<String, u64>>,
    pub total_errors: AtomicU64,
    /// `slowlog-log-slower-than` (µs; negative: off) and `slowlog-max-len`.
    pub slower_than_us: AtomicI64,
    pub slowlog_max: AtomicUsize,
    slowlog: Mutex<(u64, VecDeque<SlowEntry>)>,
    /// `latency-monitor-threshold` (ms; 0: off).
    pub latency_threshold_ms: AtomicU64,
    latency: Mutex<BTreeMap<String, LatencySeries>>,
    /// `latency-tracking` (INFO latencystats).
    pub latency_tracking: AtomicBool,
    /// MONITOR clients.
    monitors: Mutex<Vec<Arc<Subscriber>>>,
    monitor_count: AtomicUsize,
    pub pause: Pause,
    /// Blocked clients: id -> how CLIENT UNBLOCK reaches them.
    unblock: Mutex<BTreeMap<u64, Unblock>>,
}

impl Observe {
    pub fn new(cores: usize) -> Observe {
        Observe {
            per_core: (0..cores).map(|_| Mutex::new(ahash::AHashMap::new())).collect(),
            slower_than_us: AtomicI64::new(10_000),
            slowlog_max: AtomicUsize::new(128),
            latency_tracking: AtomicBool::new(true),
            ..Default::default()
        }
    }

    /// Take the settings it follows from the configuration (at start, CONFIG SET).
    pub fn configure(&self, cfg: &crate::config::Config) {
        let num = |k: &str, d: i64| cfg.param(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(d);
        self.slower_than_us.store(num("slowlog-log-slower-than", 10_000), Ordering::Relaxed);
        self.slowlog_max.store(num("slowlog-max-len", 128).max(0) as usize, Ordering::Relaxed);
        self.latency_threshold_ms.store(num("latency-monitor-threshold", 0).max(0) as u64, Ordering::Relaxed);
        self.latency_tracking.store(cfg.param("latency-tracking") != Some("no"), Ordering::Relaxed);
        self.trim_slowlog();
    }

    /// Count one command run (or refused) on `core`.
    pub fn record(&self, core: usize, spec: usize, took: Duration, outcome: Outcome) {
        let Some(m) = self.per_core.get(core) else { return };
        let mut m = lock(m);
        let s = m.entry(spec).or_default();
        match outcome {
            Outcome::Rejected => s.rejected += 1,
            Outcome::Ok | Outcome::Failed => {
                s.calls += 1;
                s.usec += took.as_micros() as u64;
                if outcome == Outcome::Failed {
                    s.failed += 1;
                }
                s.hist.record(took.as_nanos() as u64);
            }
        }
    }

    /// Count an error reply by its code.
    pub fn error(&self, msg: &str) {
        self.total_errors.fetch_add(1, Ordering::Relaxed);
        *lock(&self.errors).entry(Self::error_code(msg)).or_default() += 1;
    }

    /// An error's code as errorstats names it: its first word, as Redis does.
    pub fn error_code(msg: &str) -> String {
        let head = &msg.as_bytes()[..msg.len().min(32)];
        let code = match head.iter().position(|&b| b == b' ') {
            Some(i) => &msg[..i],
            None => "ERR",
        };
        code.chars().map(|c| if matches!(c, '#' | ':' | '\r' | '\n') { '_' } else { c }).collect()
    }

    /// Every command's figures, summed over cores (spec id -> figures).
    pub fn command_stats(&self) -> Vec<(usize, CmdStat)> {
        let mut all: ahash::AHashMap<usize, CmdStat> = ahash::AHashMap::new();
        for m in &self.per_core {
            for (k, v) in lock(m).iter() {
                let s = all.entry(*k).or_default();
                s.calls += v.calls;
                s.usec += v.usec;
                s.rejected += v.rejected;
                s.failed += v.failed;
                s.hist.merge(&v.hist);
            }
        }
        all.into_iter().collect()
    }

    pub fn error_stats(&self) -> Vec<(String, u64)> {
        lock(&self.errors).iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// CONFIG RESETSTAT.
    pub fn reset_stats(&self) {
        for m in &self.per_core {
            lock(m).clear();
        }
        lock(&self.errors).clear();
        self.total_errors.store(0, Ordering::Relaxed);
    }

    /// True if a command that took `took` goes to the slow log.
    pub fn is_slow(&self, took: Duration) -> bool {
        let t = self.slower_than_us.load(Ordering::Relaxed);
        t >= 0 && took.as_micros() as i64 >= t && self.slowlog_max.load(Ordering::Relaxed) > 0
    }

    /// Log a slow command (arguments cut as Redis does: 32 of them, 128 bytes each).
    pub fn log_slow(&self, args: &[Bytes], took: Duration, client: &ClientEntry) {
        let n = args.len().min(32);
        let mut kept: Vec<Bytes> = Vec::with_capacity(n);
        for (i, a) in args.iter().take(n).enumerate() {
            if i == 31 && args.len() > 32 {
                kept.push(Bytes::from(format!("... ({} more arguments)", args.len() - 31)));
                break;
            }
            if a.len() > 128 {
                // One allocation: under a write load every command may be slow
                // (its time includes the fsynced commit), so this runs for each.
                let mut v = Vec::with_capacity(128 + 32);
                v.extend_from_slice(&a[..128]);
                let _ = write!(v, "... ({} more bytes)", a.len() - 128);
                kept.push(v.into());
            } else {
                kept.push(a.clone());
            }
        }
        let name = lock(&client.name).clone().unwrap_or_default();
        let mut log = lock(&self.slowlog);
        let id = log.0;
        log.0 += 1;
        log.1.push_front(SlowEntry {
            id,
            unix: crate::types::now_ms() / 1000,
            usec: took.as_micros() as u64,
            args: kept,
            addr: client.addr.clone(),
            name,
        });
        let max = self.slowlog_max.load(Ordering::Relaxed);
        log.1.truncate(max);
    }

    pub fn slowlog(&self, count: Option<usize>) -> Vec<SlowEntry> {
        let log = lock(&self.slowlog);
        log.1.iter().take(count.unwrap_or(usize::MAX)).cloned().collect()
    }

    pub fn slowlog_len(&self) -> usize {
        lock(&self.slowlog).1.len()
    }

    pub fn slowlog_reset(&self) {
        lock(&self.slowlog).1.clear();
    }

    pub fn trim_slowlog(&self) {
        let max = self.slowlog_max.load(Ordering::Relaxed);
        lock(&self.slowlog).1.truncate(max);
    }

    /// Feed the latency monitor: `event` took `ms` milliseconds.
    pub fn latency_sample(&self, event: &str, ms: u64) {
        let threshold = self.latency_threshold_ms.load(Ordering::Relaxed);
        if threshold == 0 || ms < threshold {
            return;
        }
        let now = crate::types::now_ms() / 1000;
        let mut all = lock(&self.latency);
        let s = all.entry(event.to_string()).or_default();
        s.max = s.max.max(ms);
        match s.samples.back_mut() {
            Some((t, v)) if *t == now => *v = (*v).max(ms),
            _ => {
                s.samples.push_back((now, ms));
                if s.samples.len() > 160 {
                    s.samples.pop_front();
                }
            }
        }
    }

    pub fn latency_events(&self) -> Vec<(String, LatencySeries)> {
        lock(&self.latency).iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Forget the named series (all with none named); how many were dropped.
    pub fn latency_reset(&self, events: &[String]) -> usize {
        let mut all = lock(&self.latency);
        if events.is_empty() {
            let n = all.len();
            all.clear();
            return n;
        }
        events.iter().filter(|e| all.remove(e.as_str()).is_some()).count()
    }

    pub fn add_monitor(&self, s: Arc<Subscriber>) {
        let mut m = lock(&self.monitors);
        m.push(s);
        self.monitor_count.store(m.len(), Ordering::Release);
    }

    pub fn remove_monitor(&self, client: u64) {
        let mut m = lock(&self.monitors);
        m.retain(|s| s.client_id() != client);
        self.monitor_count.store(m.len(), Ordering::Release);
    }

    pub fn has_monitors(&self) -> bool {
        self.monitor_count.load(Ordering::Acquire) > 0
    }

    /// Send one MONITOR line (without its `+` and CRLF) to every monitor.
    pub fn feed(&self, line: Bytes) {
        for s in lock(&self.monitors).iter() {
            s.send_line(line.clone());
        }
    }

    /// CLIENT PAUSE `ms` (the later end and the stricter mode win).
    pub fn pause_for(&self, ms: u64, all: bool) {
        let until = crate::types::now_ms().saturating_add(ms);
        let was = self.pause.until_ms.load(Ordering::Acquire);
        let active = was > crate::types::now_ms();
        self.pause.all.store(all || (active && self.pause.all.load(Ordering::Relaxed)), Ordering::Release);
        self.pause.until_ms.store(until.max(if active { was } else { 0 }), Ordering::Release);
    }

    pub fn unpause(&self) {
        self.pause.until_ms.store(0, Ordering::Release);
        self.pause.all.store(false, Ordering::Release);
    }

    /// While a pause lasts: how long it has left and whether it holds reads too.
    pub fn paused(&self) -> Option<(Duration, bool)> {
        let until = self.pause.until_ms.load(Ordering::Acquire);
        if until == 0 {
            return None;
        }
        let now = crate::types::now_ms();
        (until > now).then(|| (Duration::from_millis(until - now), self.pause.all.load(Ordering::Acquire)))
    }

    /// A client starts (`true`) or stops waiting for a pause to end.
    pub fn hold(&self, on: bool) {
        if on {
            self.pause.held.fetch_add(1, Ordering::Relaxed);
        } else {
            self.pause.held.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Clients a pause holds right now.
    pub fn held(&self) -> usize {
        self.pause.held.load(Ordering::Relaxed)
    }

    /// A blocked client registers how CLIENT UNBLOCK reaches it.
    pub fn on_unblock(&self, client: u64, tx: futures_channel::oneshot::Sender<()>) {
        lock(&self.unblock).insert(client, (false, Some(tx)));
    }

    /// The blocked client is done; true if it was unblocked with ERROR.
    pub fn unblocked(&self, client: u64) -> bool {
        lock(&self.unblock).remove(&client).is_some_and(|(err, tx)| err && tx.is_none())
    }

    /// CLIENT UNBLOCK: true if `client` was blocked and is now told.
    pub fn unblock(&self, client: u64, error: bool) -> bool {
        let mut m = lock(&self.unblock);
        match m.get_mut(&client) {
            Some((e, tx @ Some(_))) => {
                *e = error;
                tx.take().is_some_and(|t| t.send(()).is_ok())
            }
            _ => false,
        }
    }
}

/// MONITOR's rendering of an argument: quoted, escaped as sdscatrepr does.
pub fn repr(out: &mut Vec<u8>, a: &[u8]) {
    out.push(b'"');
    for &b in a {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// One MONITOR line: `<sec>.<usec> [<db> <addr>] "arg" ...`; passwords redacted.
pub fn monitor_line(db: u16, addr: &str, args: &[Bytes]) -> Bytes {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut out = format!("{}.{:06} [{db} {}]", now.as_secs(), now.subsec_micros(), addr).into_bytes();
    let name = args.first().map(|a| a.to_ascii_lowercase()).unwrap_or_default();
    for (i, a) in args.iter().enumerate() {
        out.push(b' ');
        let secret = match name.as_slice() {
            b"auth" => i >= 1,
            b"hello" => {
                i >= 2 && args[i - 1].eq_ignore_ascii_case(b"auth")
                    || i >= 3 && args[i - 2].eq_ignore_ascii_case(b"auth")
            }
            _ => false,
        };
        if secret {
            out.extend_from_slice(b"\"(redacted)\"");
        } else {
            repr(&mut out, a);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_are_within_its_resolution() {
        let mut h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        for (p, want) in [(50.0, 500.0), (99.0, 990.0), (99.9, 999.0), (100.0, 1000.0)] {
            let got = h.percentile_us(p);
            assert!((got - want).abs() / want < 0.07, "p{p}: {got} vs {want}");
        }
        assert_eq!(Histogram::default().percentile_us(50.0), 0.0);
        let mut one = Histogram::default();
        one.record(3);
        assert_eq!(one.percentile_us(50.0), 0.003);
    }

    #[test]
    fn monitor_lines_quote_like_redis() {
        let args: Vec<Bytes> = vec!["set".into(), "k\n".into(), Bytes::from_static(b"\x01\"\\")];
        let line = monitor_line(0, "127.0.0.1:5000", &args);
        let s = String::from_utf8(line.to_vec()).unwrap();
        assert!(s.ends_with(r#" [0 127.0.0.1:5000] "set" "k\n" "\x01\"\\""#), "{s}");
        let auth = monitor_line(0, "a", &["AUTH".into(), "u".into(), "p".into()]);
        assert!(String::from_utf8_lossy(&auth).ends_with(r#""AUTH" "(redacted)" "(redacted)""#));
    }

    #[test]
    fn error_codes_are_the_first_word() {
        let o = Observe::new(1);
        o.error("WRONGTYPE Operation against a key");
        o.error("ERR syntax error");
        o.error("nospace");
        assert_eq!(o.error_stats(), vec![("ERR".to_string(), 2), ("WRONGTYPE".to_string(), 1)]);
        assert_eq!(o.total_errors.load(Ordering::Relaxed), 3);
    }
}
