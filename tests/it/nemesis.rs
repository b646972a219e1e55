//! Fault injection against real clusters, with every key's history checked for
//! linearizability (`linearizable`: Wing & Gong / Lowe).
//!
//! Clients (threads) run SET / INCR / GET on two keys and APPEND / GET on a
//! third, each in its own slot; reads are also made as scripts that declare no
//! key (`EVAL_RO ... 0`), increments also as WATCH / GET / MULTI / SET / EXEC
//! (a compare-and-set), and one client reads through followers (READONLY).
//! Each records when an operation was sent and what it answered. A write that
//! got a reply is known to have happened; a refusal before the log (MOVED,
//! TRYAGAIN, CLUSTERDOWN) is known not to have; anything else (a timeout, a
//! dropped connection, "write outcome unknown") is unknown: it may take effect
//! at any time after it was sent, or never. A write the server reported as
//! failed that did commit would make the history impossible, and so would a
//! lost acknowledged write, a read of an old value (a stale read on a paused
//! or cut-off leader), an empty read after a crash, or two compare-and-set
//! increments that both succeeded from the same value.
//!
//! Meanwhile a nemesis, driven by a seeded RNG, kills leaders (kill -9) and
//! restarts them, cuts a node's power (on a file system that then loses what
//! was not synced, `lossyfs`) or every node's at once, pauses leaders
//! (SIGSTOP / SIGCONT), cuts links (an isolated leader, a minority, a split,
//! a bridge, one direction only), delays or stalls them, runs a node's clock
//! 10 s ahead or behind, crashes every node at once, replaces a node's disk
//! (restarted as itself with an empty directory, then forgotten and added
//! back), and changes the membership during a partition. One fault in three
//! lands on top of a lingering one (a delayed node, a one-way cut, a skewed
//! clock). Once healed, every key is read once more (every acknowledged write
//! must be there) and every replica of every region must report the same
//! `NEOKV.REGION` digest.
//!
//! Each test prints its seed, every fault with its time, the operation counts
//! and the checker's verdict; `NEOKV_SEED=<seed>` replays one, and
//! `NEOKV_NEMESIS_SECS=<s>` sets each run's length (a soak; default 60 s).
//! Beside them, a bank (`ACCOUNTS`): three accounts in one slot, transfers
//! between two of them by WATCH / MULTI / EXEC, and reads of all three at
//! once (in MULTI / EXEC, or by a script that declares no key) whose sum must
//! be 0 (a transaction applied in part, a half-applied one read, a WATCH that
//! missed a write). With WATCH's check broken, a 20 s run found 413 such reads.
//! Now and then a client sends FLUSHALL: it flushes the slots the node leads
//! when it applies, and its reply does not say which those were, so in each
//! key's history it is a delete that may or may not have happened (the checker
//! models deletes). DBSIZE and SCAN are not in the histories (the model is one
//! register per key); `cluster_safety` tests them, and FLUSHALL's replies.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::linearizable::{check, check_within, Event, Op, Ret};

/// xorshift64*: small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn seed() -> u64 {
    match std::env::var("NEOKV_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(s) => s,
        None => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64),
    }
}

fn run_secs() -> u64 {
    std::env::var("NEOKV_NEMESIS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60)
}

/// What one request came to.
enum Outcome {
    Ok(redis::Value),
    /// Refused before it could take effect.
    Failed(String),
    /// May or may not have taken effect.
    Unknown(String),
}

/// A client that never sends a request twice unless the first was refused
/// before it could take effect (MOVED, TRYAGAIN, CLUSTERDOWN, a script's
/// "non local key", no connection).
struct StrictClient {
    ports: Vec<u16>,
    port: u16,
    con: Option<(u16, redis::Connection)>,
    turn: usize,
    /// Sends READONLY on each new connection: followers serve its reads.
    readonly: bool,
    /// The port the last request went to (for the saved history).
    sent_to: u16,
}

/// Replies that say a request was refused before it could take effect.
const REFUSED: [&str; 8] =
    ["MOVED", "Moved", "TRYAGAIN", "TryAgain", "CLUSTERDOWN", "ClusterDown", "non local key", "leads no slots"];

impl StrictClient {
    fn new(ports: Vec<u16>, first: usize) -> StrictClient {
        let port = ports[first % ports.len()];
        StrictClient { ports, port, con: None, turn: first, readonly: false, sent_to: 0 }
    }

    /// Where the last request went, as the saved history names it: the node
    /// (by its place in `ports`, 1-based) and whether it read as a follower.
    fn via(&self) -> String {
        let node = self.ports.iter().position(|&p| p == self.sent_to).map_or(0, |i| i + 1);
        format!("node {node}{}", if self.readonly { " READONLY" } else { "" })
    }

    fn next_node(&mut self) {
        self.turn += 1;
        self.port = self.ports[self.turn % self.ports.len()];
    }

    fn call(&mut self, args: &[&str], limit: Duration) -> Outcome {
        let deadline = Instant::now() + limit;
        let mut last = String::from("no attempt");
        while Instant::now() < deadline {
            let port = self.port;
            let mut con = match self.con.take() {
                Some((p, c)) if p == port => c,
                _ => match redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                    .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(300)))
                {
                    Ok(mut c) if self.readonly => match redis::cmd("READONLY").query::<()>(&mut c) {
                        Ok(()) => c,
                        Err(e) => {
                            last = format!("READONLY on {port}: {e}");
                            self.next_node();
                            continue;
                        }
                    },
                    Ok(c) => c,
                    Err(e) => {
                        // Never sent: safe to try elsewhere.
                        last = format!("connect {port}: {e}");
                        self.next_node();
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                },
            };
            let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(50));
            let _ = con.set_read_timeout(Some(left));
            let _ = con.set_write_timeout(Some(left));
            self.sent_to = port;
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            match cmd.query::<redis::Value>(&mut con) {
                Ok(v) => {
                    self.con = Some((port, con));
                    return Outcome::Ok(v);
                }
                Err(e) => {
                    let text = e.to_string();
                    let refused = REFUSED.iter().any(|w| text.contains(w));
                    if e.kind() != redis::ErrorKind::IoError && refused {
                        self.con = Some((port, con));
                        if let Some(addr) = text.split_whitespace().find(|w| w.starts_with("127.0.0.1:")) {
                            self.port = addr.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or(port);
                        } else {
                            self.next_node();
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        last = text;
                        continue;
                    }
                    // Sent, and then no usable answer: what happened is unknown.
                    self.next_node();
                    return Outcome::Unknown(text);
                }
            }
        }
        Outcome::Failed(last)
    }
}

/// How a WATCH / MULTI / EXEC increment ended.
enum Txn {
    /// Applied: the new value.
    Done(i64),
    /// Not applied (a watched key changed, refused before the log, the key is
    /// not a number): not part of the history.
    Refused,
    /// May or may not have been applied.
    Unknown,
}

impl StrictClient {
    /// An increment by compare-and-set: WATCH the key, GET it (a read, in
    /// `read`), and in MULTI / EXEC SET it to one more. Applied only if no
    /// write touched the key since the WATCH, so in a correct server it is an
    /// INCR that returned the new value; a WATCH that missed a write (a leader
    /// judging it on state it had not applied yet) makes two increments
    /// return the same value, which no linearization allows.
    fn txn_incr(&mut self, key: &str, read: &mut Option<(u64, Option<String>)>, origin: Instant) -> Txn {
        let Outcome::Ok(_) = self.call(&["WATCH", key], Duration::from_secs(3)) else { return Txn::Refused };
        let Some((port, mut con)) = self.con.take() else { return Txn::Refused };
        let _ = con.set_read_timeout(Some(Duration::from_secs(3)));
        let v: redis::RedisResult<Option<String>> = redis::cmd("GET").arg(key).query(&mut con);
        let Ok(v) = v else { return Txn::Refused };
        *read = Some((now_ns(origin), v.clone()));
        let Ok(n) = v.as_deref().unwrap_or("0").parse::<i64>() else { return Txn::Refused };
        let queued = redis::cmd("MULTI").query::<()>(&mut con).is_ok()
            && redis::cmd("SET").arg(key).arg(n + 1).query::<String>(&mut con).is_ok_and(|q| q == "QUEUED");
        if !queued {
            return Txn::Refused;
        }
        match self.exec(port, con, 1) {
            Some(true) => Txn::Done(n + 1),
            Some(false) => Txn::Refused,
            None => Txn::Unknown,
        }
    }

    /// EXEC on `con` (taken from this client, to `port`) of a transaction of
    /// `n` commands: `Some(true)` applied, `Some(false)` not (a watched key
    /// changed, or refused before the log), `None` unknown. The connection
    /// comes back to the client unless the outcome is unknown.
    fn exec(&mut self, port: u16, mut con: redis::Connection, n: usize) -> Option<bool> {
        let outcome = match redis::cmd("EXEC").query::<redis::Value>(&mut con) {
            Ok(redis::Value::Array(items)) if items.len() == n => Some(true),
            Ok(redis::Value::Nil) => Some(false),
            Ok(v) => panic!("EXEC of {n} commands answered {v:?}"),
            Err(e) if e.kind() != redis::ErrorKind::IoError && REFUSED.iter().any(|w| e.to_string().contains(w)) => {
                Some(false)
            }
            Err(_) => None,
        };
        if outcome.is_some() {
            self.con = Some((port, con));
        }
        outcome
    }
}

const KEYS: [&str; 3] = ["lin:a", "lin:b", "lin:c"];

/// Three accounts in one slot (Jepsen's bank): transfers move an amount
/// between two of them by WATCH / GET / MULTI / SET / SET / EXEC, so the sum
/// of the three (an absent account holds 0) is 0 in every state a correct
/// server can be in. Snapshot reads (MULTI / GET x3 / EXEC, or a script that
/// declares no key) must see that sum: a transaction applied in part, a read
/// of a half-applied one, or a WATCH that missed a write (a transfer from a
/// balance another transfer had already changed) shows as another sum.
const ACCOUNTS: [&str; 3] = ["{bank}a", "{bank}b", "{bank}c"];

/// What the bank's operations came to in a run.
#[derive(Default)]
struct Bank {
    transfers: u64,
    unknown: u64,
    refused: u64,
    reads: u64,
    /// Snapshot reads whose balances did not sum to 0.
    bad: Vec<String>,
}

/// A balance as read: absent is 0.
fn balance(v: &redis::Value) -> Result<i64, String> {
    match v {
        redis::Value::Nil => Ok(0),
        redis::Value::BulkString(b) => {
            String::from_utf8_lossy(b).parse().map_err(|_| format!("{:?} is not a balance", String::from_utf8_lossy(b)))
        }
        v => Err(format!("{v:?} is not a balance")),
    }
}

impl StrictClient {
    /// A connection to the node that leads the bank's slot (or, under
    /// READONLY, any node): found by a plain GET, redirected as any request.
    fn bank_con(&mut self) -> Option<(u16, redis::Connection)> {
        match self.call(&["GET", ACCOUNTS[0]], Duration::from_secs(3)) {
            Outcome::Ok(_) => {
                let (port, con) = self.con.take()?;
                let _ = con.set_read_timeout(Some(Duration::from_secs(3)));
                Some((port, con))
            }
            _ => None,
        }
    }

    /// Move `amount` from account `from` to account `to` (see [`ACCOUNTS`]):
    /// applied or not as [`StrictClient::exec`] says.
    fn transfer(&mut self, from: usize, to: usize, amount: i64) -> Option<bool> {
        let (a, b) = (ACCOUNTS[from], ACCOUNTS[to]);
        let Some((port, mut con)) = self.bank_con() else { return Some(false) };
        let read = redis::cmd("WATCH")
            .arg(a)
            .arg(b)
            .query::<()>(&mut con)
            .and_then(|()| redis::cmd("MGET").arg(a).arg(b).query::<Vec<redis::Value>>(&mut con));
        let Ok(v) = read else { return Some(false) };
        let (Some(Ok(x)), Some(Ok(y))) = (v.first().map(balance), v.get(1).map(balance)) else {
            return Some(false);
        };
        let queued = |r: redis::RedisResult<String>| r.is_ok_and(|q| q == "QUEUED");
        let ok = redis::cmd("MULTI").query::<()>(&mut con).is_ok()
            && queued(redis::cmd("SET").arg(a).arg(x - amount).query(&mut con))
            && queued(redis::cmd("SET").arg(b).arg(y + amount).query(&mut con));
        if !ok {
            return Some(false);
        }
        self.exec(port, con, 2)
    }

    /// The three balances read at once: in MULTI / EXEC, or by a script that
    /// declares no key. `None`: no answer to judge.
    fn snapshot(&mut self, script: bool) -> Option<Result<Vec<i64>, String>> {
        let items = if script {
            let body = format!(
                "return {{redis.call('GET','{}'), redis.call('GET','{}'), redis.call('GET','{}')}}",
                ACCOUNTS[0], ACCOUNTS[1], ACCOUNTS[2]
            );
            match self.call(&["EVAL_RO", &body, "0"], Duration::from_secs(3)) {
                Outcome::Ok(redis::Value::Array(items)) => items,
                Outcome::Ok(v) => return Some(Err(format!("the script answered {v:?}"))),
                _ => return None,
            }
        } else {
            let (port, mut con) = self.bank_con()?;
            let mut pipe = redis::pipe();
            pipe.cmd("MULTI").ignore();
            for a in ACCOUNTS {
                pipe.cmd("GET").arg(a).ignore();
            }
            pipe.cmd("EXEC");
            match pipe.query::<Vec<redis::Value>>(&mut con) {
                Ok(mut v) => {
                    self.con = Some((port, con));
                    match v.pop() {
                        Some(redis::Value::Array(items)) => items,
                        v => return Some(Err(format!("EXEC answered {v:?}"))),
                    }
                }
                Err(_) => return None,
            }
        };
        Some(items.iter().map(balance).collect())
    }
}

/// One operation of the bank: a transfer (not through followers) or a
/// snapshot read.
fn bank_op(client: &mut StrictClient, rng: &mut Rng, bank: &Mutex<Bank>) {
    if !client.readonly && rng.below(2) == 0 {
        let from = rng.below(3) as usize;
        let to = (from + 1 + rng.below(2) as usize) % 3;
        let outcome = client.transfer(from, to, 1 + rng.below(10) as i64);
        let mut b = bank.lock().unwrap();
        match outcome {
            Some(true) => b.transfers += 1,
            None => b.unknown += 1,
            Some(false) => {
                b.refused += 1;
                client.next_node();
            }
        }
        return;
    }
    let script = rng.below(2) == 0;
    let Some(read) = client.snapshot(script) else { return };
    let mut b = bank.lock().unwrap();
    b.reads += 1;
    match read {
        Ok(v) if v.iter().sum::<i64>() == 0 => {}
        Ok(v) => b.bad.push(format!("{} read balances {v:?}", if script { "a script" } else { "EXEC" })),
        Err(e) => b.bad.push(e),
    }
}

/// A run's histories, one per key: each event with the node it went to
/// (`StrictClient::via`), shown in the history a failed check saves.
type Histories = Arc<Mutex<Vec<Vec<(Event, String)>>>>;

fn now_ns(origin: Instant) -> u64 {
    origin.elapsed().as_nanos() as u64
}

/// One client thread: random operations until `stop`.
fn client_loop(
    id: usize,
    ports: Vec<u16>,
    seed: u64,
    origin: Instant,
    stop: Arc<AtomicBool>,
    h: Histories,
    counts: Arc<Mutex<[u64; 4]>>,
    bank: Arc<Mutex<Bank>>,
    flushes: bool,
) {
    let mut rng = Rng::new(seed ^ (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut client = StrictClient::new(ports, id);
    // The last client reads through followers (READONLY), every node serving.
    client.readonly = id == 3;
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        if flushes && id == 0 && rng.below(150) == 0 {
            // FLUSHALL flushes the slots the node leads when it applies: which
            // keys it reached, its reply does not say, so in each key's
            // history it is a delete that may or may not have happened.
            let invoke = now_ns(origin);
            if let Outcome::Failed(_) = client.call(&["FLUSHALL"], Duration::from_secs(3)) {
                counts.lock().unwrap()[2] += 1;
                continue;
            }
            for k in h.lock().unwrap().iter_mut() {
                k.push((Event { client: id, op: Op::Del, invoke, ret: None }, format!("FLUSHALL {}", client.via())));
            }
            let mut c = counts.lock().unwrap();
            c[0] += 1;
            c[1] += 1;
            continue;
        }
        if rng.below(8) == 0 {
            bank_op(&mut client, &mut rng, &bank);
            continue;
        }
        let k = rng.below(3) as usize;
        let key = KEYS[k];
        let value = format!("{}", id as u64 * 1_000_000 + n);
        // A read as a script that declares no key (it must be confirmed like any read).
        let eval_get = || vec!["EVAL_RO".into(), format!("return redis.call('GET','{key}')"), "0".into()];
        let (op, args): (Op, Vec<String>) = match (k, rng.below(12)) {
            (2, 0..=4) => (Op::Append(format!("{id}.{n},")), vec!["APPEND".into(), key.into(), format!("{id}.{n},")]),
            (2, 5 | 6) => (Op::Get, eval_get()),
            (2, _) => (Op::Get, vec!["GET".into(), key.into()]),
            (_, 0..=2) => (Op::Set(value.clone()), vec!["SET".into(), key.into(), value]),
            (_, 3..=4) => (Op::Incr, vec!["INCR".into(), key.into()]),
            (_, 5) if !client.readonly => (Op::Incr, vec!["WATCH".into()]),
            (_, 6 | 7) => (Op::Get, eval_get()),
            _ => (Op::Get, vec!["GET".into(), key.into()]),
        };
        if args[0] == "WATCH" {
            // An increment by WATCH / MULTI / EXEC (see `txn_incr`).
            let invoke = now_ns(origin);
            let mut read = None;
            let ret = match client.txn_incr(key, &mut read, origin) {
                Txn::Done(v) => Some((now_ns(origin), Ret::Int(v))),
                Txn::Unknown => None,
                Txn::Refused => {
                    counts.lock().unwrap()[2] += 1;
                    client.next_node();
                    continue;
                }
            };
            let unknown = ret.is_none() as u64;
            let mut h = h.lock().unwrap();
            if let Some((at, v)) = read {
                h[k].push((Event { client: id, op: Op::Get, invoke, ret: Some((at, Ret::Value(v))) }, client.via()));
            }
            h[k].push((Event { client: id, op: Op::Incr, invoke, ret }, client.via()));
            let mut c = counts.lock().unwrap();
            c[0] += 1;
            c[1] += unknown;
            continue;
        }
        // Now and then start at a random node, as a client with a stale slot
        // map does: a node that wrongly thinks it leads gets asked too.
        if rng.below(3) == 0 {
            client.port = client.ports[rng.below(client.ports.len() as u64) as usize];
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let invoke = now_ns(origin);
        // A request to a paused node waits for it: when it resumes it serves
        // what queued up, the moment a stale read would happen.
        let outcome = client.call(&a, Duration::from_secs(3));
        let done = now_ns(origin);
        let ret = match outcome {
            Outcome::Ok(v) => match (&op, v) {
                (Op::Set(_), redis::Value::Okay) => Some(Ret::Ok),
                (Op::Set(_), redis::Value::SimpleString(s)) if s == "OK" => Some(Ret::Ok),
                (Op::Get, redis::Value::Nil) => Some(Ret::Value(None)),
                (Op::Get, redis::Value::BulkString(b)) => {
                    Some(Ret::Value(Some(String::from_utf8_lossy(&b).into_owned())))
                }
                (Op::Incr, redis::Value::Int(i)) => Some(Ret::Int(i)),
                (Op::Append(_), redis::Value::Int(i)) => Some(Ret::Len(i)),
                (op, v) => panic!("client {id}: {op:?} on {key} answered {v:?}"),
            },
            Outcome::Failed(why) => {
                // Known not to have happened: not part of the history.
                counts.lock().unwrap()[2] += 1;
                if n % 50 == 0 {
                    eprintln!("client {id}: {op:?} refused: {why}");
                }
                continue;
            }
            Outcome::Unknown(_) => None,
        };
        {
            let mut c = counts.lock().unwrap();
            c[0] += 1;
            if ret.is_none() {
                c[1] += 1;
            }
            if matches!(ret, Some(Ret::Value(_))) {
                c[3] += 1;
            }
        }
        let via = format!("{} {}", client.via(), args[0]);
        h.lock().unwrap()[k].push((Event { client: id, op, invoke, ret: ret.map(|r| (done, r)) }, via));
    }
}

/// A membership change a run makes once, mid-way.
type MembershipChange<'a> = &'a dyn Fn(&mut Cluster, &mut Rng);

/// The faults a run may inject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    KillLeader,
    PauseLeader,
    IsolateLeader,
    IsolateNode,
    OneWay,
    Delay,
    Stall,
    CrashAll,
    /// Power cut of one node (a lossy cluster): killed, its unsynced bytes lost.
    PowerCutOne,
    /// Power cut of every node at once.
    PowerCutAll,
    /// One node's clock runs 10 s ahead or behind (`clock-offset`).
    ClockSkew,
    /// Two nodes cannot reach each other; the others reach both.
    Bridge,
    /// The nodes split into a minority and a majority that cannot talk.
    Split,
    /// A node's data directory is deleted and it restarts with the same flags
    /// (refused: a new incarnation), then the operator's way back: FORGET,
    /// an empty directory with --join, ADDNODE.
    ReplaceDisk,
}

/// A fault that stays on while another is injected on top of it.
enum Linger {
    /// Node x's links delayed.
    Delay(u64, Duration),
    /// The link from one node to another cut.
    OneWay(u64, u64),
    /// Node x's clock off by this many ms.
    Skew(u64, i64),
}

impl Linger {
    fn start(c: &Cluster, rng: &mut Rng) -> Linger {
        let n = c.nodes.len() as u64;
        let x = 1 + rng.below(n);
        match rng.below(3) {
            0 => {
                let d = Duration::from_millis(10 + rng.below(100));
                set_delay(c, x, d);
                Linger::Delay(x, d)
            }
            1 => {
                // A link the cluster has (a node joined mid-run has proxies
                // only on its own way out).
                let keys: Vec<(u64, u64)> = c.links.keys().copied().collect();
                let (from, to) = keys[rng.below(keys.len() as u64) as usize];
                c.links[&(from, to)].cut();
                Linger::OneWay(from, to)
            }
            _ => {
                let ms: i64 = if rng.below(2) == 0 { 10_000 } else { -10_000 };
                skew(c, x, ms);
                Linger::Skew(x, ms)
            }
        }
    }

    /// Clear it; what it was.
    fn stop(self, c: &Cluster) -> String {
        match self {
            Linger::Delay(x, d) => {
                set_delay(c, x, Duration::ZERO);
                format!("node {x}'s links delayed by {d:?}")
            }
            Linger::OneWay(a, b) => {
                c.links[&(a, b)].heal();
                format!("{a}->{b} cut")
            }
            Linger::Skew(x, ms) => {
                // A node restarted meanwhile lost its offset: clearing it is harmless.
                skew(c, x, 0);
                format!("node {x}'s clock off by {ms} ms")
            }
        }
    }
}

/// Delay every link of node `x` by `d`.
fn set_delay(c: &Cluster, x: u64, d: Duration) {
    for ((a, b), p) in &c.links {
        if *a == x || *b == x {
            p.set_delay(d);
        }
    }
}

/// Arm (or with 0, clear) node `id`'s clock offset.
fn skew(c: &Cluster, id: u64, ms: i64) -> bool {
    let port = c.nodes[id as usize - 1].port;
    let r = crate::cluster::ask(port, &["NEOKV.FAILPOINT", "clock-offset", &ms.to_string()], Duration::from_secs(3));
    r.as_deref() == Some("+OK\r\n")
}

/// Cut (or heal) every link between the nodes of `a` and those of `b`.
fn cut_between(c: &Cluster, a: &[u64], b: &[u64], cut: bool) {
    for ((x, y), p) in &c.links {
        if (a.contains(x) && b.contains(y)) || (b.contains(x) && a.contains(y)) {
            if cut {
                p.cut()
            } else {
                p.heal()
            }
        }
    }
}

/// Run `clients` clients against `c` for `secs` while faults drawn from
/// `faults` hit it, heal everything, read every key once more, and check each
/// key's history. `membership` (optional) runs once mid-way.
pub fn run(name: &str, c: &mut Cluster, faults: &[Fault], clients: usize, membership: Option<MembershipChange>) {
    run_with(name, c, faults, clients, membership, true)
}

/// [`run`]; `flushes`: a client sends FLUSHALL now and then (a run that
/// checks other writes of its own, a [`Filler`]'s, sends none).
pub fn run_with(
    name: &str,
    c: &mut Cluster,
    faults: &[Fault],
    clients: usize,
    membership: Option<MembershipChange>,
    flushes: bool,
) {
    let seed = seed();
    let secs = run_secs();
    eprintln!("{name}: seed {seed} (replay: NEOKV_SEED={seed}), {secs} s, {clients} clients, faults {faults:?}");
    let mut rng = Rng::new(seed);
    let origin = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let histories: Histories = Arc::new(Mutex::new(vec![Vec::new(); KEYS.len()]));
    let counts = Arc::new(Mutex::new([0u64; 4]));
    let bank = Arc::new(Mutex::new(Bank::default()));
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let (ports, stop, h, counts) = (ports.clone(), stop.clone(), histories.clone(), counts.clone());
            let bank = bank.clone();
            std::thread::spawn(move || client_loop(i, ports, seed, origin, stop, h, counts, bank, flushes))
        })
        .collect();
    let end = origin + Duration::from_secs(secs);
    let mut log = Vec::new();
    let mut membership_done = membership.is_none();
    let first_fault = rng.below(faults.len() as u64) as usize;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(300 + rng.below(700)));
        if !membership_done && origin.elapsed() > Duration::from_secs(secs / 2) {
            membership_done = true;
            if let Some(m) = membership {
                let at = origin.elapsed();
                m(c, &mut rng);
                log.push(format!("{at:.1?}: membership change (see above)"));
            }
            continue;
        }
        // Each kind in turn (from a random one), so every kind is tried in a run.
        let fault = faults[(first_fault + log.len()) % faults.len()];
        let key = KEYS[rng.below(KEYS.len() as u64) as usize];
        // Faults on a leader last long enough for another to be elected (0.4-0.8 s)
        // and take writes, so a node that wrongly thinks it still leads would be caught.
        let hold = match fault {
            Fault::PauseLeader | Fault::IsolateLeader => Duration::from_millis(1200 + rng.below(1300)),
            _ => Duration::from_millis(500 + rng.below(1500)),
        };
        let at = origin.elapsed();
        // One fault in three lands on top of a lingering one (a slow node, a
        // one-way cut, a skewed clock), so faults overlap.
        // (Not under the faults that wait for the whole cluster to settle.)
        let waits = matches!(fault, Fault::CrashAll | Fault::PowerCutAll | Fault::ReplaceDisk);
        let lingering = (!waits && rng.below(3) == 0).then(|| Linger::start(c, &mut rng));
        let what = inject(c, fault, key, hold, &mut rng);
        let what = match lingering {
            Some(l) => format!("{what}, over {}", l.stop(c)),
            None => what,
        };
        eprintln!("{name} {at:.1?}: {what}");
        log.push(format!("{at:.1?}: {what}"));
    }
    // Heal, let the cluster settle, and stop the clients.
    for p in c.links.values() {
        p.heal();
        p.set_delay(Duration::ZERO);
        p.set_stall(false);
    }
    for id in 1..=c.nodes.len() as u64 {
        if c.node(id).is_up() {
            c.node(id).pause(false);
        }
    }
    c.wait_ok(Duration::from_secs(60));
    if faults.contains(&Fault::ClockSkew) {
        for id in 1..=c.nodes.len() as u64 {
            skew(c, id, 0);
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        t.join().unwrap();
    }
    // A last read of each key, after everything is healed: it must see every
    // acknowledged write (no loss, no empty value after a crash).
    let mut client = StrictClient::new(ports, 0);
    for (k, key) in KEYS.iter().enumerate() {
        let invoke = now_ns(origin);
        match client.call(&["GET", key], Duration::from_secs(20)) {
            Outcome::Ok(v) => {
                let v = match v {
                    redis::Value::Nil => None,
                    redis::Value::BulkString(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                    v => panic!("GET {key}: {v:?}"),
                };
                let done = now_ns(origin);
                let ev = Event { client: usize::MAX, op: Op::Get, invoke, ret: Some((done, Ret::Value(v))) };
                histories.lock().unwrap()[k].push((ev, format!("final read, {}", client.via())));
            }
            Outcome::Failed(e) | Outcome::Unknown(e) => {
                panic!("{name}: the final read of {key} failed after healing: {e}")
            }
        }
    }
    // And the bank, once more: its sum holds after healing too.
    let last = (0..20).find_map(|_| client.snapshot(false));
    replicas_agree(name, c);
    let b = bank.lock().unwrap();
    eprintln!(
        "{name}: bank: {} transfers applied ({} unknown, {} refused or lost a WATCH), {} snapshot reads, {} with a sum other than 0; after healing {last:?}",
        b.transfers,
        b.unknown,
        b.refused,
        b.reads,
        b.bad.len()
    );
    assert!(
        b.bad.is_empty(),
        "{name} (seed {seed}): the bank's balances did not sum to 0:\n{}\nfaults:\n{}",
        b.bad.iter().take(10).cloned().collect::<Vec<_>>().join("\n"),
        log.join("\n")
    );
    match last {
        Some(Ok(v)) => assert_eq!(v.iter().sum::<i64>(), 0, "{name} (seed {seed}): the bank after healing: {v:?}"),
        other => panic!("{name} (seed {seed}): the bank could not be read after healing: {other:?}"),
    }
    assert!(b.transfers > 0 && b.reads > 0, "{name}: the bank saw no transfer or no read");
    drop(b);
    let [ops, unknown, refused, reads] = *counts.lock().unwrap();
    eprintln!(
        "{name}: {ops} operations in the histories ({reads} reads answered, {unknown} unknown outcomes), {refused} refused before the log; {} faults",
        log.len()
    );
    let histories = histories.lock().unwrap().clone();
    let mut verdicts = Vec::new();
    for (k, h) in histories.iter().enumerate() {
        let started = Instant::now();
        let events: Vec<Event> = h.iter().map(|(e, _)| e.clone()).collect();
        let r = check(&events, None);
        eprintln!(
            "{name}: {}: {} operations, {} — checked in {:?}",
            KEYS[k],
            h.len(),
            if r.is_ok() { "linearizable" } else { "NOT linearizable" },
            started.elapsed()
        );
        verdicts.push((KEYS[k], r));
    }
    for (k, (key, r)) in verdicts.into_iter().enumerate() {
        if let Err(e) = r {
            // The whole history, for a look offline (the report shows a window).
            let path = std::env::temp_dir().join(format!("neokv-nemesis-{name}-{seed}-{}.txt", key.replace(':', "_")));
            let text: String =
                histories[k].iter().enumerate().map(|(i, (ev, via))| format!("#{i} {via}: {ev:?}\n")).collect();
            let saved = match std::fs::write(&path, text) {
                Ok(()) => format!("the history is in {}", path.display()),
                Err(e) => format!("the history could not be saved: {e}"),
            };
            panic!(
                "{name} (seed {seed}): the history of {key} is not linearizable ({saved}):\n{e}\nfaults:\n{}",
                log.join("\n")
            );
        }
    }
    assert!(reads > 0 && ops > 100, "{name}: too few operations to mean anything ({ops}, {reads} reads)");
}

/// Apply one fault for `hold`, then undo it. Returns what was done.
fn inject(c: &mut Cluster, fault: Fault, key: &str, hold: Duration, rng: &mut Rng) -> String {
    let n = c.nodes.len() as u64;
    let leader = c.self_declared_leader_of(key).unwrap_or(1 + rng.below(n));
    match fault {
        Fault::KillLeader => {
            c.node(leader).kill9();
            std::thread::sleep(hold);
            c.start_node(leader);
            format!("kill -9 node {leader} (leader of {key}), restarted after {hold:?}")
        }
        Fault::PauseLeader => {
            c.node(leader).pause(true);
            std::thread::sleep(hold);
            c.node(leader).pause(false);
            format!("SIGSTOP node {leader} (leader of {key}) for {hold:?}, then SIGCONT")
        }
        Fault::IsolateLeader => {
            c.isolate(leader, true);
            std::thread::sleep(hold);
            c.isolate(leader, false);
            format!("isolated node {leader} (leader of {key}) for {hold:?}")
        }
        Fault::IsolateNode => {
            let x = 1 + rng.below(n);
            c.isolate(x, true);
            std::thread::sleep(hold);
            c.isolate(x, false);
            format!("isolated node {x} for {hold:?}")
        }
        Fault::OneWay => {
            let from = 1 + rng.below(n);
            let to = 1 + (from + rng.below(n - 1)) % n;
            c.links[&(from, to)].cut();
            std::thread::sleep(hold);
            c.links[&(from, to)].heal();
            format!("cut {from}->{to} only for {hold:?}")
        }
        Fault::Delay => {
            let x = 1 + rng.below(n);
            let d = Duration::from_millis(20 + rng.below(200));
            set_delay(c, x, d);
            std::thread::sleep(hold);
            set_delay(c, x, Duration::ZERO);
            format!("delayed node {x}'s links by {d:?} for {hold:?}")
        }
        Fault::Stall => {
            let x = 1 + rng.below(n);
            for ((a, b), p) in &c.links {
                if *a == x || *b == x {
                    p.set_stall(true);
                }
            }
            std::thread::sleep(hold);
            for ((a, b), p) in &c.links {
                if *a == x || *b == x {
                    p.set_stall(false);
                }
            }
            format!("stalled node {x}'s links (bytes held, then released) for {hold:?}")
        }
        Fault::CrashAll => {
            for id in 1..=n {
                c.node(id).kill9();
            }
            std::thread::sleep(hold / 2);
            for id in 1..=n {
                c.start_node(id);
            }
            c.wait_ok(Duration::from_secs(60));
            format!("kill -9 of every node, all restarted after {:?}", hold / 2)
        }
        Fault::PowerCutOne => {
            let x = if rng.below(2) == 0 { leader } else { 1 + rng.below(n) };
            let lost = c.power_cut(x);
            std::thread::sleep(hold);
            c.start_node(x);
            format!("power cut of node {x} ({lost} unsynced bytes lost), restarted after {hold:?}")
        }
        Fault::PowerCutAll => {
            let lost: usize = (1..=n).map(|id| c.power_cut(id)).sum();
            std::thread::sleep(hold / 2);
            for id in 1..=n {
                c.start_node(id);
            }
            c.wait_ok(Duration::from_secs(60));
            format!("power cut of every node ({lost} unsynced bytes lost), all restarted after {:?}", hold / 2)
        }
        Fault::ClockSkew => {
            let x = 1 + rng.below(n);
            let ms: i64 = if rng.below(2) == 0 { 10_000 } else { -10_000 };
            let armed = skew(c, x, ms);
            std::thread::sleep(hold);
            skew(c, x, 0);
            format!("node {x}'s clock off by {ms} ms for {hold:?} (armed: {armed})")
        }
        Fault::Bridge => {
            let a = 1 + rng.below(n);
            let b = 1 + (a + rng.below(n - 1)) % n;
            cut_between(c, &[a], &[b], true);
            std::thread::sleep(hold);
            cut_between(c, &[a], &[b], false);
            format!("nodes {a} and {b} cut from each other (the others bridge them) for {hold:?}")
        }
        Fault::Split => {
            let mut ids: Vec<u64> = (1..=n).collect();
            for i in (1..ids.len()).rev() {
                ids.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let (minority, majority) = ids.split_at((n / 2) as usize);
            cut_between(c, minority, majority, true);
            std::thread::sleep(hold);
            cut_between(c, minority, majority, false);
            format!("split {minority:?} | {majority:?} for {hold:?}")
        }
        Fault::ReplaceDisk => {
            let x = 1 + rng.below(n);
            c.node(x).kill9();
            c.node(x).wipe();
            c.start_node(x);
            std::thread::sleep(hold);
            // The operator: forget it, start it empty with --join, add it back.
            // (Stopped first: the broken node, still started with --join if it
            // joined once, would take the id back the moment it is forgotten.)
            c.node(x).kill9();
            let forget = operator(c, x, &["CLUSTER", "FORGET", &x.to_string()]);
            c.node(x).wipe();
            let regions = (4 * n).to_string();
            c.node(x).respawn_with(&["--join", "--regions", &regions]);
            let addr = format!("127.0.0.1:{}", c.nodes[x as usize - 1].cluster_port);
            let add = operator(c, x, &["CLUSTER", "ADDNODE", &x.to_string(), &addr]);
            if forget.as_deref() != Some("+OK\r\n") || add.as_deref() != Some("+OK\r\n") {
                c.dump_regions();
            }
            assert_eq!(forget.as_deref(), Some("+OK\r\n"), "FORGET {x} after its disk was replaced");
            assert_eq!(add.as_deref(), Some("+OK\r\n"), "ADDNODE {x} after its disk was replaced");
            format!("node {x}'s disk replaced: restarted as itself (refused) for {hold:?}, then forgotten and added back fresh")
        }
    }
}

/// An operator's command about node `x`, sent to another running node, within
/// 130 s in all: a node just restarted by an earlier fault may not listen yet,
/// so one that cannot be reached is skipped and the others tried again (both
/// FORGET and ADDNODE may be run again). `None`: no node answered in time.
fn operator(c: &Cluster, x: u64, args: &[&str]) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(130);
    while Instant::now() < deadline {
        for m in c.nodes.iter().filter(|m| m.id != x && m.is_up()) {
            let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100));
            if let Some(r) = crate::cluster::ask(m.port, args, left) {
                return Some(r);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

/// Once healed: every replica of every region (its voters, as a running
/// node reports them: `NEOKV.REGIONS`) holds the same data
/// (`NEOKV.REGION`'s digest), within 60 s.
fn replicas_agree(name: &str, c: &Cluster) {
    let up: Vec<(u64, u16)> = c.nodes.iter().filter(|n| n.is_up()).map(|n| (n.id, n.port)).collect();
    let t = Duration::from_secs(5);
    // Regions may still be splitting (their data passed the split size):
    // compared once every node shows the same regions, at the same epochs,
    // twice in a row a second apart.
    let layout = |port: u16| -> Vec<(i64, i64)> {
        let mut l: Vec<(i64, i64)> = crate::cluster::regions_of(port)
            .iter()
            .map(|r| (crate::cluster::int(&r["id"]), crate::cluster::int(&r["epoch"])))
            .collect();
        l.sort();
        l
    };
    let settle = Instant::now() + Duration::from_secs(60);
    let mut last = Vec::new();
    loop {
        let views: Vec<_> = up.iter().map(|&(_, p)| layout(p)).collect();
        if views.iter().all(|v| *v == views[0]) && views[0] == last {
            break;
        }
        assert!(Instant::now() < settle, "{name}: the nodes' regions never settled: {views:?}");
        last = views[0].clone();
        std::thread::sleep(Duration::from_secs(1));
    }
    let regions = crate::cluster::regions_of(up[0].1);
    assert!(!regions.is_empty(), "{name}: no regions in NEOKV.REGIONS");
    let deadline = Instant::now() + Duration::from_secs(60);
    // Each region by its first slot (regions may have split).
    for r in &regions {
        let id = crate::cluster::int(&r["id"]);
        let slot = crate::cluster::ids_of(&r["slots"])[0].to_string();
        loop {
            // The voters may still change (a membership change finishing).
            let now = crate::cluster::regions_of(up[0].1);
            let Some(r) = now.iter().find(|x| crate::cluster::int(&x["id"]) == id) else { break };
            let voters = crate::cluster::ids_of(&r["voters"]);
            let digests: Vec<String> = up
                .iter()
                .filter(|(id, _)| voters.contains(id))
                .map(|&(_, p)| {
                    let s = crate::cluster::ask(p, &["NEOKV.REGION", &slot], t).unwrap_or_default();
                    s.rsplit("\r\n").nth(1).unwrap_or_default().to_string()
                })
                .collect();
            if !digests.is_empty() && digests.iter().all(|d| !d.is_empty() && *d == digests[0]) {
                break;
            }
            assert!(Instant::now() < deadline, "{name}: the replicas of region {id} ({voters:?}) differ: {digests:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    eprintln!("{name}: the replicas of all {} regions agree", regions.len());
}

/// Lost updates on failover (Jepsen's RedisRaft analysis): leaders killed and
/// restarted under load, with snapshots every 50 entries so restarts land
/// between a snapshot and the log purge (crash loops on a snapshot/log
/// mismatch would show as a node that never comes back: `wait_ok` fails).
///
/// On file systems that lose unsynced data: some kills are power cuts.
#[test]
fn nemesis_leaders_killed_and_restarted() {
    let mut c = Cluster::start_lossy(3, &["--raft-snapshot-logs", "50"]);
    run("kill", &mut c, &[Fault::KillLeader, Fault::PowerCutOne], 4, None);
}

/// Stale reads under pauses: a leader stopped with SIGSTOP is replaced; when
/// it resumes it must not answer a read from its old state. Clocks run 10 s
/// ahead or behind meanwhile: expiry is judged by the region's time.
#[test]
fn nemesis_paused_leaders() {
    let mut c = Cluster::start(3);
    run("pause", &mut c, &[Fault::PauseLeader, Fault::ClockSkew], 4, None);
}

/// Partitions of every shape (isolated leader, a minority node, one direction
/// only), delayed and stalled links: a write reported as failed must not have
/// committed, and nothing acknowledged is lost.
#[test]
fn nemesis_partitions_delays_and_stalls() {
    let mut c = Cluster::start(3);
    run(
        "partition",
        &mut c,
        &[
            Fault::IsolateLeader,
            Fault::IsolateNode,
            Fault::OneWay,
            Fault::Bridge,
            Fault::Split,
            Fault::Delay,
            Fault::Stall,
        ],
        4,
        None,
    );
}

/// Reads of empty values after a crash of all nodes: every node killed at
/// once, several times, under load; and power cuts of every node at once.
#[test]
fn nemesis_every_node_crashes() {
    let mut c = Cluster::start_lossy(3, &[]);
    run("crash-all", &mut c, &[Fault::CrashAll, Fault::PowerCutAll, Fault::KillLeader], 4, None);
}

/// A node's disk replaced under load: restarted as itself with an empty
/// directory it must never vote or take appends (its peers refuse the new
/// incarnation); then forgotten and added back fresh, every few seconds.
///
/// What it found: a node added back fresh caught up by replaying the log,
/// old CLUSTER FORGETs of another node included, and removed that node's
/// current incarnation (added back since) from the ones it accepts; the two
/// never linked again and the next FORGET stalled with no region electing a
/// leader (`NEOKV_SEED=1796554197167117233`, at about 50 s). A membership now
/// records each added node's incarnation, and a removal names the one it
/// removes.
#[test]
fn nemesis_replaced_disks() {
    let mut c = Cluster::start(3);
    run("replaced-disk", &mut c, &[Fault::ReplaceDisk, Fault::IsolateNode, Fault::KillLeader], 4, None);
}

/// Five nodes: kills, pauses, every partition shape, skewed clocks.
#[test]
fn nemesis_five_nodes() {
    let mut c = Cluster::start(5);
    let faults = [Fault::KillLeader, Fault::Split, Fault::PauseLeader, Fault::Bridge, Fault::ClockSkew, Fault::OneWay];
    run("five", &mut c, &faults, 4, None);
}

/// Lost writes on a membership change during a partition: mid-run, with one
/// node cut off, a fourth node joins and the cut-off node is removed; faults
/// go on around it.
#[test]
fn nemesis_membership_change_during_a_partition() {
    let mut c = Cluster::start(3);
    let change = |c: &mut Cluster, rng: &mut Rng| {
        let x = 1 + rng.below(3);
        c.isolate(x, true);
        let cport = c.join_node(4);
        let other = (1..=3u64).find(|&i| i != x).unwrap();
        let port = c.node(other).port;
        let r = crate::cluster::ask(
            port,
            &["CLUSTER", "ADDNODE", "4", &format!("127.0.0.1:{cport}")],
            Duration::from_secs(130),
        );
        eprintln!("membership: node {x} cut off; ADDNODE 4 via node {other}: {r:?}");
        assert_eq!(r.as_deref(), Some("+OK\r\n"), "ADDNODE during a partition");
        let r = crate::cluster::ask(port, &["CLUSTER", "FORGET", &x.to_string()], Duration::from_secs(130));
        eprintln!("membership: FORGET {x} via node {other}: {r:?}");
        assert_eq!(r.as_deref(), Some("+OK\r\n"), "FORGET during a partition");
        c.node(x).kill9();
        c.isolate(x, false);
    };
    run("membership", &mut c, &[Fault::IsolateNode, Fault::Delay], 4, Some(&change));
}

/// Scale-out under faults: five nodes, each region on three of them
/// (`--replicas 3`, 1 MiB regions that split all through the run under a
/// filler's writes); mid-run a sixth node joins and takes its share of the
/// replicas (ADDNODE moves them off the busiest nodes), then one of the five
/// is forgotten (its replicas re-created first) and killed; leaders are killed,
/// paused and cut off around it.
#[test]
fn nemesis_five_nodes_a_node_added_and_one_forgotten() {
    // 1 MiB regions: a filler's 8 KB values make them split all through the
    // run (moves of regions split off included).
    let mut c = Cluster::start_with(5, &["--replicas", "3", "--region-split-mb", "1"]);
    let change = |c: &mut Cluster, rng: &mut Rng| {
        let cport = c.join_node(6);
        let via = 1 + rng.below(5);
        let port = c.node(via).port;
        let r = crate::cluster::ask(
            port,
            &["CLUSTER", "ADDNODE", "6", &format!("127.0.0.1:{cport}")],
            Duration::from_secs(130),
        );
        eprintln!("membership: ADDNODE 6 via node {via}: {r:?}");
        assert_eq!(r.as_deref(), Some("+OK\r\n"), "ADDNODE 6");
        let x = (1..=5u64).filter(|&i| i != via).nth(rng.below(4) as usize).unwrap();
        let r = crate::cluster::ask(port, &["CLUSTER", "FORGET", &x.to_string()], Duration::from_secs(130));
        eprintln!("membership: FORGET {x} via node {via}: {r:?}");
        assert_eq!(r.as_deref(), Some("+OK\r\n"), "FORGET {x}");
        c.node(x).kill9();
    };
    let filler = Filler::start(&c);
    let faults = [Fault::KillLeader, Fault::PauseLeader, Fault::IsolateNode, Fault::Delay];
    let regions_before = crate::cluster::regions_of(c.nodes[0].port).len();
    // No FLUSHALL: every write of the filler's must stay.
    run_with("scale-out", &mut c, &faults, 4, Some(&change), false);
    filler.check(&c);
    let up = c.nodes.iter().find(|n| n.is_up()).unwrap().port;
    let regions = crate::cluster::regions_of(up);
    eprintln!("scale-out: {regions_before} regions at the start, {} at the end", regions.len());
    assert!(regions.len() > regions_before, "no region split during the run");
    for r in &regions {
        assert_eq!(crate::cluster::ids_of(&r["voters"]).len(), 3, "{r:?}");
    }
}

/// Writes of 8 KB values to keys of their own, beside a nemesis run, to make
/// its regions split (`--region-split-mb`); each acknowledged one must read
/// back at the end.
struct Filler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<(String, String, u16, Duration)>>,
}

impl Filler {
    fn start(c: &Cluster) -> Filler {
        let stop = Arc::new(AtomicBool::new(false));
        let mut client = crate::cluster::Client::new(c);
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut acked = Vec::new();
            let mut i = 0u64;
            let origin = Instant::now();
            while !s.load(Ordering::Relaxed) {
                let (k, v) = (format!("fill:{i}"), format!("{i}:{}", "f".repeat(8000)));
                i += 1;
                if let Ok(redis::Value::Okay) = client.cmd(&["SET", &k, &v], Duration::from_secs(5)) {
                    acked.push((k, v, client.port(), origin.elapsed()));
                }
            }
            acked
        });
        Filler { stop, thread }
    }

    fn check(self, c: &Cluster) {
        self.stop.store(true, Ordering::Relaxed);
        let acked = self.thread.join().unwrap();
        let mut client = crate::cluster::Client::new(c);
        for (k, v, port, at) in &acked {
            let got = client.cmd(&["GET", k], Duration::from_secs(30)).unwrap();
            if got != redis::Value::BulkString(v.as_bytes().to_vec()) {
                // What each node holds of it, and of its region.
                for n in c.nodes.iter().filter(|n| n.is_up()) {
                    let mut con = n.client();
                    let _: redis::RedisResult<()> = redis::cmd("READONLY").query(&mut con);
                    let here: redis::RedisResult<Option<Vec<u8>>> = redis::cmd("GET").arg(k).query(&mut con);
                    let slot = crate::common::key_slot(k.as_bytes());
                    let region =
                        crate::cluster::ask(n.port, &["NEOKV.REGION", &slot.to_string()], Duration::from_secs(2));
                    eprintln!(
                        "node {}: GET {k} -> {:?}; region of slot {slot}: {region:?}",
                        n.id,
                        here.map(|v| v.map(|b| b.len()))
                    );
                }
                c.dump_regions();
                panic!("filler write {k} lost (of {} acknowledged); port {port} answered OK at {at:?}", acked.len());
            }
        }
        eprintln!("filler: {} acknowledged writes of 8 KB read back", acked.len());
    }
}

/// `--read-policy lease`: leaders serve reads on their lease, without a quorum
/// round trip; a leader cut off or paused must still never answer a stale read.
#[test]
fn nemesis_lease_reads_under_partitions_and_pauses() {
    let mut c = Cluster::start_with(3, &["--read-policy", "lease"]);
    run("lease", &mut c, &[Fault::IsolateLeader, Fault::PauseLeader], 4, None);
}

/// A leader change mid-transaction never applies part of it: transfers between
/// two keys of one slot in MULTI/EXEC (one log entry each) while leaders are
/// killed; every MGET of both, and the end, sees their sum unchanged.
#[test]
fn transactions_stay_whole_across_failovers() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let mut c = Cluster::start(3);
    let (a, b) = ("{acct}a", "{acct}b");
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let stats = Arc::new(Mutex::new((0u64, 0u64, 0u64)));
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let (ports, stop, stats) = (ports.clone(), stop.clone(), stats.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed ^ (w as u64 + 7));
                let mut turn = w;
                while !stop.load(Ordering::SeqCst) {
                    let port = ports[turn % ports.len()];
                    let Ok(mut con) = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                        .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(300)))
                    else {
                        turn += 1;
                        continue;
                    };
                    let _ = con.set_read_timeout(Some(Duration::from_secs(3)));
                    loop {
                        if stop.load(Ordering::SeqCst) {
                            return;
                        }
                        let n = 1 + rng.below(9) as i64;
                        let r: redis::RedisResult<(i64, i64)> = redis::pipe()
                            .atomic()
                            .cmd("INCRBY")
                            .arg(a)
                            .arg(-n)
                            .cmd("INCRBY")
                            .arg(b)
                            .arg(n)
                            .query(&mut con);
                        let r2: redis::RedisResult<(Option<i64>, Option<i64>)> =
                            redis::cmd("MGET").arg(a).arg(b).query(&mut con);
                        match (r, r2) {
                            (Ok(_), Ok((x, y))) => {
                                let sum = x.unwrap_or(0) + y.unwrap_or(0);
                                assert_eq!(sum, 0, "a transfer was applied in part: {a}={x:?} {b}={y:?} (seed {seed})");
                                let mut s = stats.lock().unwrap();
                                s.0 += 1;
                                s.1 += 1;
                            }
                            (_, Ok((x, y))) => {
                                let sum = x.unwrap_or(0) + y.unwrap_or(0);
                                assert_eq!(sum, 0, "a transfer was applied in part: {a}={x:?} {b}={y:?} (seed {seed})");
                                stats.lock().unwrap().1 += 1;
                                turn += 1;
                                break;
                            }
                            _ => {
                                stats.lock().unwrap().2 += 1;
                                turn += 1;
                                break;
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let end = Instant::now() + Duration::from_secs(run_secs().min(30));
    let mut kills = 0;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(800 + rng.below(800)));
        let leader = c.self_declared_leader_of(a).unwrap_or(1 + rng.below(3));
        c.node(leader).kill9();
        std::thread::sleep(Duration::from_millis(300 + rng.below(900)));
        c.start_node(leader);
        kills += 1;
        eprintln!("transfers: killed and restarted node {leader}, the leader of {a}");
    }
    c.wait_ok(Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().unwrap();
    }
    let mut client = StrictClient::new(ports, 0);
    let Outcome::Ok(redis::Value::Array(v)) = client.call(&["MGET", a, b], Duration::from_secs(20)) else {
        panic!("the final MGET failed");
    };
    let num = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).parse::<i64>().unwrap(),
        _ => 0,
    };
    let (x, y) = (num(&v[0]), num(&v[1]));
    let (done, reads, failed) = *stats.lock().unwrap();
    eprintln!("transfers (seed {seed}): {done} acknowledged, {failed} failed or unknown, {reads} reads with the sum intact, {kills} leader kills; end {a}={x} {b}={y}");
    assert_eq!(x + y, 0, "the end state has a partial transfer");
    assert!(done > 100, "too few transfers to mean anything: {done}");
}

/// Check a history a failed run saved (`NEOKV_HISTORY=<file>`), offline, with
/// a larger budget (`NEOKV_CHECK_CONFIGS`, default 50 million: about 5 GB):
/// `cargo test --release --features failpoints --test it -- --ignored
/// --nocapture nemesis::check_a_saved_history`.
#[test]
#[ignore = "offline: checks the file NEOKV_HISTORY names"]
fn check_a_saved_history() {
    let path = std::env::var("NEOKV_HISTORY").expect("NEOKV_HISTORY=<a history a failed nemesis run saved>");
    let text = std::fs::read_to_string(&path).unwrap();
    let events: Vec<Event> = text.lines().filter(|l| !l.trim().is_empty()).map(parse_saved_event).collect();
    let limit = std::env::var("NEOKV_CHECK_CONFIGS").ok().and_then(|v| v.parse().ok()).unwrap_or(50_000_000);
    let started = Instant::now();
    let r = check_within(&events, None, limit);
    eprintln!("{} events checked in {:?}", events.len(), started.elapsed());
    if let Err(e) = r {
        panic!("{path}:\n{e}");
    }
}

/// One line of a saved history: `#<i> <via>: <the Event's Debug form>`.
fn parse_saved_event(line: &str) -> Event {
    let ev = &line[line.find("Event {").unwrap_or_else(|| panic!("not an event: {line}"))..];
    let field = |name: &str| {
        let at = ev.find(&format!("{name}: ")).unwrap_or_else(|| panic!("no {name} in {line}")) + name.len() + 2;
        &ev[at..]
    };
    let number =
        |s: &str| s[..s.find(|c: char| !c.is_ascii_digit() && c != '-').unwrap_or(s.len())].parse::<i128>().unwrap();
    let quoted = |s: &str| {
        let s = &s[s.find('"').unwrap() + 1..];
        s[..s.find('"').unwrap()].to_string()
    };
    let op = field("op");
    let op = if op.starts_with("Get") {
        Op::Get
    } else if op.starts_with("Incr") {
        Op::Incr
    } else if op.starts_with("Del") {
        Op::Del
    } else if op.starts_with("Set(") {
        Op::Set(quoted(op))
    } else if op.starts_with("Append(") {
        Op::Append(quoted(op))
    } else {
        panic!("op in {line}")
    };
    let ret = field("ret");
    let ret = ret.strip_prefix("Some((").map(|r| {
        let at = number(r) as u64;
        let r = &r[r.find(", ").unwrap() + 2..];
        let value = if r.starts_with("Ok") {
            Ret::Ok
        } else if r.starts_with("Value(None") {
            Ret::Value(None)
        } else if r.starts_with("Value(Some(") {
            Ret::Value(Some(quoted(r)))
        } else if let Some(n) = r.strip_prefix("Int(") {
            Ret::Int(number(n) as i64)
        } else if let Some(n) = r.strip_prefix("Len(") {
            Ret::Len(number(n) as i64)
        } else {
            panic!("answer in {line}")
        };
        (at, value)
    });
    Event { client: number(field("client")) as usize, op, invoke: number(field("invoke")) as u64, ret }
}

#[test]
fn a_saved_history_line_reads_back() {
    let ev = |client, op, invoke, ret| Event { client, op, invoke, ret };
    for e in [
        ev(3, Op::Append("3.17,".into()), 5, Some((9, Ret::Len(88)))),
        ev(0, Op::Del, 7, None),
        ev(1, Op::Set("1000042".into()), 11, Some((12, Ret::Ok))),
        ev(2, Op::Incr, 13, Some((20, Ret::Int(-4)))),
        ev(3, Op::Get, 21, Some((22, Ret::Value(None)))),
        ev(usize::MAX, Op::Get, 23, Some((24, Ret::Value(Some("0.1,3.2,".into()))))),
    ] {
        let line = format!("#7 node 2 READONLY GET: {e:?}");
        assert_eq!(format!("{:?}", parse_saved_event(&line)), format!("{e:?}"));
    }
}
