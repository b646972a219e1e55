//! Fault injection against real clusters, with every key's history checked for
//! linearizability (`linearizable`: Wing & Gong / Lowe).
//!
//! Clients (threads) run SET / INCR / GET on two keys and APPEND / GET on a
//! third, each in its own slot, recording when each operation was sent and
//! what it answered. A write that got a reply is known to have happened; a
//! refusal before the log (MOVED, TRYAGAIN, CLUSTERDOWN) is known not to have;
//! anything else (a timeout, a dropped connection, "write outcome unknown") is
//! unknown: it may take effect at any time after it was sent, or never. A
//! write the server reported as failed that did commit would make the history
//! impossible, and so would a lost acknowledged write, a read of an old value
//! (a stale read on a paused or cut-off leader), or an empty read after a
//! crash.
//!
//! Meanwhile a nemesis, driven by a seeded RNG, kills leaders (kill -9) and
//! restarts them, pauses them (SIGSTOP / SIGCONT), cuts links (an isolated
//! leader, a minority, one direction only), delays or stalls them, crashes
//! every node at once, and changes the membership during a partition. Each
//! test prints its seed, every fault with its time, the operation counts and
//! the checker's verdict; `NEOKV_SEED=<seed>` replays one, and
//! `NEOKV_NEMESIS_SECS=<s>` makes each run longer (a soak; default 20 s).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::linearizable::{check, Event, Op, Ret};

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
    std::env::var("NEOKV_NEMESIS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(20)
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
/// before it could take effect (MOVED, TRYAGAIN, CLUSTERDOWN, no connection).
struct StrictClient {
    ports: Vec<u16>,
    port: u16,
    con: Option<(u16, redis::Connection)>,
    turn: usize,
}

impl StrictClient {
    fn new(ports: Vec<u16>, first: usize) -> StrictClient {
        let port = ports[first % ports.len()];
        StrictClient { ports, port, con: None, turn: first }
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
                    let refused = ["MOVED", "Moved", "TRYAGAIN", "TryAgain", "CLUSTERDOWN", "ClusterDown"]
                        .iter()
                        .any(|w| text.contains(w));
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

const KEYS: [&str; 3] = ["lin:a", "lin:b", "lin:c"];

/// A run's histories, one per key.
type Histories = Arc<Mutex<Vec<Vec<Event>>>>;

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
) {
    let mut rng = Rng::new(seed ^ (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut client = StrictClient::new(ports, id);
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let k = rng.below(3) as usize;
        let key = KEYS[k];
        let value = format!("{}", id as u64 * 1_000_000 + n);
        let (op, args): (Op, Vec<String>) = match (k, rng.below(10)) {
            (2, 0..=4) => (Op::Append(format!("{id}.{n},")), vec!["APPEND".into(), key.into(), format!("{id}.{n},")]),
            (2, _) => (Op::Get, vec!["GET".into(), key.into()]),
            (_, 0..=2) => (Op::Set(value.clone()), vec!["SET".into(), key.into(), value]),
            (_, 3..=5) => (Op::Incr, vec!["INCR".into(), key.into()]),
            _ => (Op::Get, vec!["GET".into(), key.into()]),
        };
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
        h.lock().unwrap()[k].push(Event { client: id, op, invoke, ret: ret.map(|r| (done, r)) });
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
}

/// Run `clients` clients against `c` for `secs` while faults drawn from
/// `faults` hit it, heal everything, read every key once more, and check each
/// key's history. `membership` (optional) runs once mid-way.
pub fn run(name: &str, c: &mut Cluster, faults: &[Fault], clients: usize, membership: Option<MembershipChange>) {
    let seed = seed();
    let secs = run_secs();
    eprintln!("{name}: seed {seed} (replay: NEOKV_SEED={seed}), {secs} s, {clients} clients, faults {faults:?}");
    let mut rng = Rng::new(seed);
    let origin = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let histories: Histories = Arc::new(Mutex::new(vec![Vec::new(); KEYS.len()]));
    let counts = Arc::new(Mutex::new([0u64; 4]));
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let (ports, stop, h, counts) = (ports.clone(), stop.clone(), histories.clone(), counts.clone());
            std::thread::spawn(move || client_loop(i, ports, seed, origin, stop, h, counts))
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
        let what = inject(c, fault, key, hold, &mut rng);
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
                histories.lock().unwrap()[k].push(Event {
                    client: usize::MAX,
                    op: Op::Get,
                    invoke,
                    ret: Some((done, Ret::Value(v))),
                });
            }
            Outcome::Failed(e) | Outcome::Unknown(e) => {
                panic!("{name}: the final read of {key} failed after healing: {e}")
            }
        }
    }
    let [ops, unknown, refused, reads] = *counts.lock().unwrap();
    eprintln!(
        "{name}: {ops} operations in the histories ({reads} reads answered, {unknown} unknown outcomes), {refused} refused before the log; {} faults",
        log.len()
    );
    let histories = histories.lock().unwrap().clone();
    let mut verdicts = BTreeMap::new();
    for (k, h) in histories.iter().enumerate() {
        let started = Instant::now();
        let r = check(h, None);
        eprintln!(
            "{name}: {}: {} operations, {} — checked in {:?}",
            KEYS[k],
            h.len(),
            if r.is_ok() { "linearizable" } else { "NOT linearizable" },
            started.elapsed()
        );
        verdicts.insert(KEYS[k], r);
    }
    for (key, r) in verdicts {
        if let Err(e) = r {
            panic!("{name} (seed {seed}): the history of {key} is not linearizable:\n{e}\nfaults:\n{}", log.join("\n"));
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
            for ((a, b), p) in &c.links {
                if *a == x || *b == x {
                    p.set_delay(d);
                }
            }
            std::thread::sleep(hold);
            for ((a, b), p) in &c.links {
                if *a == x || *b == x {
                    p.set_delay(Duration::ZERO);
                }
            }
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
    }
}

/// Lost updates on failover (Jepsen's RedisRaft analysis): leaders killed and
/// restarted under load, with snapshots every 50 entries so restarts land
/// between a snapshot and the log purge (crash loops on a snapshot/log
/// mismatch would show as a node that never comes back: `wait_ok` fails).
#[test]
fn nemesis_leaders_killed_and_restarted() {
    let mut c = Cluster::start_with(3, &["--raft-snapshot-logs", "50"]);
    run("kill", &mut c, &[Fault::KillLeader], 4, None);
}

/// Stale reads under pauses: a leader stopped with SIGSTOP is replaced; when
/// it resumes it must not answer a read from its old state.
#[test]
fn nemesis_paused_leaders() {
    let mut c = Cluster::start(3);
    run("pause", &mut c, &[Fault::PauseLeader], 4, None);
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
        &[Fault::IsolateLeader, Fault::IsolateNode, Fault::OneWay, Fault::Delay, Fault::Stall],
        4,
        None,
    );
}

/// Reads of empty values after a crash of all nodes: every node killed at
/// once, several times, under load.
#[test]
fn nemesis_every_node_crashes() {
    let mut c = Cluster::start(3);
    run("crash-all", &mut c, &[Fault::CrashAll, Fault::KillLeader], 4, None);
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
