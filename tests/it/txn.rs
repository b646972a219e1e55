//! Transactions through the real binary: MULTI/EXEC/DISCARD/WATCH/UNWATCH reply
//! shapes and errors (RESP2 and RESP3), WATCH exactness, blocking commands that
//! do not block, atomicity against concurrent readers, cross-region transactions with several
//! regions, and all-or-nothing across kill -9.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{same_replies, Oracle, Raw, Server};

fn cmds(r: &mut Raw, lines: &[&[&str]]) -> Vec<String> {
    lines.iter().map(|l| r.cmd(l)).collect()
}

#[test]
fn multi_exec_discard_reply_shapes() {
    let s = Server::start();
    let mut r = s.raw();
    assert_eq!(
        cmds(&mut r, &[&["RPUSH", "l", "a", "b", "c"], &["MULTI"], &["LRANGE", "l", "0", "-1"], &["PING"], &["EXEC"]]),
        [":3\r\n", "+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n+PONG\r\n"]
    );
    // DISCARD throws the queue away.
    assert_eq!(cmds(&mut r, &[&["MULTI"], &["DEL", "l"], &["DISCARD"]]), ["+OK\r\n", "+QUEUED\r\n", "+OK\r\n"]);
    assert_eq!(r.cmd(&["LLEN", "l"]), ":3\r\n");
    // An empty transaction, and commands that see the transaction's own writes.
    assert_eq!(cmds(&mut r, &[&["MULTI"], &["EXEC"]]), ["+OK\r\n", "*0\r\n"]);
    r.cmd(&["MULTI"]);
    for c in [&["SET", "a", "1"][..], &["INCR", "a"], &["GET", "a"], &["SETNX", "a", "x"], &["HMSET", "h", "f", "v"]] {
        assert_eq!(r.cmd(c), "+QUEUED\r\n");
    }
    assert_eq!(r.cmd(&["EXEC"]), "*5\r\n+OK\r\n:2\r\n$1\r\n2\r\n:0\r\n+OK\r\n");
    // A runtime error is that command's reply; the others run.
    assert_eq!(
        cmds(&mut r, &[&["MULTI"], &["SET", "s", "1"], &["LPUSH", "s", "x"], &["SET", "t", "2"], &["EXEC"]]),
        [
            "+OK\r\n",
            "+QUEUED\r\n",
            "+QUEUED\r\n",
            "+QUEUED\r\n",
            "*3\r\n+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n+OK\r\n"
        ]
    );
    assert_eq!(r.cmd(&["GET", "t"]), "$1\r\n2\r\n");
    // Option syntax is checked when the command runs, not when it is queued.
    assert_eq!(
        cmds(&mut r, &[&["MULTI"], &["SET", "k", "v", "BOGUS"], &["EXEC"]]),
        ["+OK\r\n", "+QUEUED\r\n", "*1\r\n-ERR syntax error\r\n"]
    );
}

#[test]
fn transaction_errors_match_redis() {
    let s = Server::start();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["EXEC"]), "-ERR EXEC without MULTI\r\n");
    assert_eq!(r.cmd(&["DISCARD"]), "-ERR DISCARD without MULTI\r\n");
    // A nested MULTI and WATCH inside MULTI are errors that do not abort EXEC.
    assert_eq!(
        cmds(&mut r, &[&["MULTI"], &["MULTI"], &["WATCH", "x"], &["SET", "x", "1"], &["EXEC"]]),
        [
            "+OK\r\n",
            "-ERR MULTI calls can not be nested\r\n",
            "-ERR WATCH inside MULTI is not allowed\r\n",
            "+QUEUED\r\n",
            "*1\r\n+OK\r\n"
        ]
    );
    // Unknown commands, wrong arity and NO_MULTI commands abort the transaction.
    for bad in [&["NOSUCHCMD", "a"][..], &["GET"], &["SAVE"], &["WATCH"]] {
        r.cmd(&["MULTI"]);
        assert_eq!(r.cmd(&["SET", "y", "1"]), "+QUEUED\r\n");
        let refused = r.cmd(bad);
        assert!(refused.starts_with('-'), "{bad:?}: {refused}");
        assert_eq!(r.cmd(&["SET", "z", "1"]), "+QUEUED\r\n", "later commands are still queued");
        assert_eq!(r.cmd(&["EXEC"]), "-EXECABORT Transaction discarded because of previous errors.\r\n", "{bad:?}");
        assert_eq!(r.cmd(&["EXISTS", "y", "z"]), ":0\r\n", "nothing ran after {bad:?}");
        assert_eq!(r.cmd(&["PING"]), "+PONG\r\n", "the client left MULTI");
    }
    r.cmd(&["MULTI"]);
    assert_eq!(r.cmd(&["SAVE"]), "-ERR Command not allowed inside a transaction\r\n");
    r.cmd(&["DISCARD"]);
}

#[test]
fn resp3_shapes_inside_exec() {
    let s = Server::start();
    let mut r = s.raw();
    r.cmd(&["HELLO", "3"]);
    r.cmd(&["HSET", "h", "f", "v"]);
    r.cmd(&["WATCH", "w"]);
    assert_eq!(
        cmds(
            &mut r,
            &[
                &["MULTI"],
                &["HGETALL", "h"],
                &["GET", "nothing"],
                &["ZADD", "z", "1.5", "m"],
                &["ZSCORE", "z", "m"],
                &["EXEC"]
            ]
        ),
        [
            "+OK\r\n",
            "+QUEUED\r\n",
            "+QUEUED\r\n",
            "+QUEUED\r\n",
            "+QUEUED\r\n",
            "*4\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n_\r\n:1\r\n,1.5\r\n"
        ]
    );
    // A watched key changed: a null, `_` in RESP3.
    r.cmd(&["WATCH", "w"]);
    r.cmd(&["SET", "w", "1"]);
    assert_eq!(cmds(&mut r, &[&["MULTI"], &["PING"], &["EXEC"]]), ["+OK\r\n", "+QUEUED\r\n", "_\r\n"]);
}

/// `WATCH key; <change by the other client>; MULTI; INCR probe; EXEC`: true if EXEC ran.
fn exec_survives(me: &mut Raw, other: &mut Raw, key: &str, change: &[&str]) -> bool {
    assert_eq!(me.cmd(&["WATCH", key]), "+OK\r\n");
    if !change.is_empty() {
        let r = other.cmd(change);
        assert!(!r.starts_with('-'), "{change:?}: {r}");
    }
    me.cmd(&["MULTI"]);
    me.cmd(&["INCR", "probe"]);
    match me.cmd(&["EXEC"]).as_str() {
        "*-1\r\n" => false,
        r if r.starts_with("*1\r\n:") => true,
        r => panic!("{key} {change:?}: unexpected EXEC reply {r}"),
    }
}

#[test]
fn watch_aborts_on_exactly_the_changes_redis_counts() {
    let s = Server::start();
    let mut me = s.raw();
    let mut other = s.raw();
    let setup = |o: &mut Raw| {
        o.cmd(&["FLUSHALL"]);
        o.cmd(&["SET", "x", "30"]);
        o.cmd(&["HSET", "h", "f", "v"]);
        o.cmd(&["SADD", "s", "a"]);
        o.cmd(&["ZADD", "z", "1", "m"]);
        o.cmd(&["RPUSH", "l", "a", "b"]);
    };
    let aborts: &[(&str, &[&str])] = &[
        ("x", &["SET", "x", "40"]),
        ("x", &["SET", "x", "30"]),
        ("x", &["DEL", "x"]),
        ("x", &["EXPIRE", "x", "100"]),
        ("x", &["RENAME", "x", "y"]),
        ("y", &["RENAME", "x", "y"]),
        ("x", &["APPEND", "x", ""]),
        ("h", &["HSET", "h", "f", "v"]),
        ("h", &["HDEL", "h", "f"]),
        ("s", &["SADD", "s", "b"]),
        ("z", &["ZADD", "z", "2", "m"]),
        ("z", &["ZINCRBY", "z", "1", "m"]),
        ("l", &["LSET", "l", "0", "a"]),
        ("l", &["LPOP", "l"]),
        ("x", &["FLUSHALL"]),
        ("dst", &["SUNIONSTORE", "dst", "s"]),
    ];
    for (key, change) in aborts {
        setup(&mut other);
        assert!(!exec_survives(&mut me, &mut other, key, change), "WATCH {key} then {change:?} must abort EXEC");
    }
    let survives: &[(&str, &[&str])] = &[
        ("x", &[]),
        ("x", &["SET", "other", "1"]),
        ("x", &["GET", "x"]),
        ("missing", &["DEL", "missing"]),
        ("s", &["SADD", "s", "a"]),
        ("h", &["HDEL", "h", "nofield"]),
        ("z", &["ZADD", "z", "1", "m"]),
        ("x", &["SETNX", "x", "1"]),
        ("x", &["EXPIRE", "x", "100", "XX"]),
        ("missing", &["FLUSHALL"]),
        ("s", &["SUNIONSTORE", "dst", "s"]),
        ("x", &["PERSIST", "x"]),
    ];
    for (key, change) in survives {
        setup(&mut other);
        assert!(exec_survives(&mut me, &mut other, key, change), "WATCH {key} then {change:?} must not abort EXEC");
    }
    // The client's own write counts.
    setup(&mut other);
    me.cmd(&["WATCH", "x"]);
    me.cmd(&["SET", "x", "31"]);
    assert_eq!(cmds(&mut me, &[&["MULTI"], &["PING"], &["EXEC"]])[2], "*-1\r\n");
    // Keys are no longer watched after EXEC (successful or not), DISCARD or UNWATCH.
    me.cmd(&["SET", "x", "40"]);
    assert!(exec_survives(&mut me, &mut other, "x", &[]));
    me.cmd(&["SET", "x", "41"]);
    assert!(exec_survives(&mut me, &mut other, "nothing", &[]));
    me.cmd(&["WATCH", "x"]);
    other.cmd(&["SET", "x", "1"]);
    assert_eq!(me.cmd(&["UNWATCH"]), "+OK\r\n");
    assert_eq!(cmds(&mut me, &[&["MULTI"], &["PING"], &["EXEC"]])[2], "*1\r\n+PONG\r\n", "UNWATCH clears it");
    me.cmd(&["WATCH", "x"]);
    other.cmd(&["SET", "x", "2"]);
    me.cmd(&["MULTI"]);
    me.cmd(&["DISCARD"]);
    me.cmd(&["SET", "x", "10"]);
    assert_eq!(cmds(&mut me, &[&["MULTI"], &["INCR", "x"], &["EXEC"]])[2], "*1\r\n:11\r\n", "DISCARD unwatches");
}

#[test]
fn optimistic_increments_lose_no_update() {
    // Clients on both cores increment one counter with WATCH / GET / MULTI / SET /
    // EXEC, retrying when EXEC is refused, while others INCR it directly (pipelined,
    // so their writes are in flight when a transaction is checked): the counter
    // ends at exactly the plain increments plus the transactions that succeeded.
    // A check that does not wait for the writes proposed before it, or is not
    // adjacent to the write it guards, lets an increment be lost.
    let s = Server::start_with(&["--cores", "2"]);
    s.raw().cmd(&["SET", "counter", "0"]);
    let optimistic: Vec<_> = (0..4)
        .map(|_| {
            let port = s.port;
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let (mut won, mut lost) = (0u64, 0u64);
                for _ in 0..150 {
                    c.cmd(&["WATCH", "counter"]);
                    let v: u64 = c.cmd(&["GET", "counter"]).lines().nth(1).unwrap().parse().unwrap();
                    c.cmd(&["MULTI"]);
                    c.cmd(&["SET", "counter", &(v + 1).to_string()]);
                    match c.cmd(&["EXEC"]).as_str() {
                        "*1\r\n+OK\r\n" => won += 1,
                        "*-1\r\n" => lost += 1,
                        r => panic!("EXEC: {r}"),
                    }
                }
                (won, lost)
            })
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let plain: Vec<_> = (0..2)
        .map(|_| {
            let (port, stop) = (s.port, stop.clone());
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let batch = crate::common::encode_cmd(&[b"INCR", b"counter"]).repeat(8);
                    c.send(&batch);
                    for _ in 0..8 {
                        assert!(c.read_reply().starts_with(b":"));
                    }
                    n += 8;
                    // Leave the transactions room to win now and then.
                    std::thread::sleep(Duration::from_millis(2));
                }
                n
            })
        })
        .collect();
    let (mut won, mut lost) = (0, 0);
    for w in optimistic {
        let (a, b) = w.join().unwrap();
        won += a;
        lost += b;
    }
    stop.store(true, Ordering::Relaxed);
    let incrs: u64 = plain.into_iter().map(|t| t.join().unwrap()).sum();
    let total = won + incrs;
    assert_eq!(s.raw().cmd(&["GET", "counter"]), format!("${}\r\n{total}\r\n", total.to_string().len()));
    println!("{won} transactions, {lost} refused, {incrs} plain increments");
    assert!(lost > 0 && won > 0, "the clients contended, and some won");
}

#[test]
fn watch_sees_expiry() {
    let s = Server::start();
    let mut me = s.raw();
    let mut other = s.raw();
    // A key alive at WATCH that expires before EXEC, reaped or not: EXEC aborts.
    me.cmd(&["SET", "k", "1", "PX", "100"]);
    me.cmd(&["WATCH", "k"]);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(cmds(&mut me, &[&["MULTI"], &["INCR", "k"], &["EXEC"]])[2], "*-1\r\n");
    // A key already expired when watched may be reaped without aborting it.
    me.cmd(&["SET", "gone", "1", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(20));
    assert!(exec_survives(&mut me, &mut other, "gone", &["DEL", "gone"]));
    // Active expiry reaps a watched live key: EXEC aborts.
    me.cmd(&["SET", "k2", "1", "PX", "50"]);
    me.cmd(&["WATCH", "k2"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while other.cmd(&["DBSIZE"]) != ":0\r\n" && other.cmd(&["EXISTS", "k2"]) != ":0\r\n" {
        assert!(Instant::now() < deadline, "k2 never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(cmds(&mut me, &[&["MULTI"], &["PING"], &["EXEC"]])[2], "*-1\r\n");
}

#[test]
fn blocking_commands_inside_multi_do_not_block() {
    let s = Server::start();
    let mut r = s.raw();
    r.cmd(&["MULTI"]);
    for c in [
        &["BLPOP", "el", "0"][..],
        &["BRPOP", "el", "0"],
        &["BRPOPLPUSH", "el1", "el2", "0"],
        &["BLMOVE", "el1", "el2", "LEFT", "LEFT", "0"],
        &["BZPOPMIN", "ez", "0"],
        &["BZPOPMAX", "ez", "0"],
        &["BLMPOP", "0", "1", "el", "LEFT"],
        &["BZMPOP", "0", "1", "ez", "MIN"],
    ] {
        assert_eq!(r.cmd(c), "+QUEUED\r\n");
    }
    let started = Instant::now();
    assert_eq!(r.cmd(&["EXEC"]), "*8\r\n*-1\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n*-1\r\n*-1\r\n*-1\r\n");
    assert!(started.elapsed() < Duration::from_secs(5));
    // With data there, they pop like their non-blocking forms.
    r.cmd(&["RPUSH", "l", "a", "b"]);
    r.cmd(&["MULTI"]);
    r.cmd(&["BLPOP", "l", "0"]);
    r.cmd(&["BLMOVE", "l", "m", "LEFT", "RIGHT", "0"]);
    assert_eq!(r.cmd(&["EXEC"]), "*2\r\n*2\r\n$1\r\nl\r\n$1\r\na\r\n$1\r\nb\r\n");
}

#[test]
fn no_other_command_sees_a_transaction_half_done() {
    // A transaction writes an intermediate value and overwrites it: readers on
    // both cores must never see the intermediate one, nor an unbalanced pair.
    let s = Server::start_with(&["--cores", "2"]);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let port = s.port;
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut r = Raw::connect(port);
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let v = r.cmd(&["GET", "k"]);
                    assert!(!v.contains("half"), "a reader saw the transaction half done");
                    let both = r.cmd(&["MGET", "a", "b"]);
                    let nums: Vec<i64> = both.lines().filter_map(|l| l.parse().ok()).collect();
                    if nums.len() == 2 {
                        assert_eq!(nums[0] + nums[1], 100, "a reader saw a transfer half done: {both:?}");
                    }
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    let mut w = s.raw();
    w.cmd(&["MSET", "a", "100", "b", "0"]);
    for i in 0..300 {
        w.cmd(&["MULTI"]);
        w.cmd(&["SET", "k", "half"]);
        w.cmd(&["DECRBY", "a", "1"]);
        w.cmd(&["INCRBY", "b", "1"]);
        w.cmd(&["SET", "k", &format!("done{i}")]);
        let r = w.cmd(&["EXEC"]);
        assert!(r.starts_with("*4\r\n+OK\r\n"), "{r}");
        w.cmd(&["MULTI"]);
        w.cmd(&["INCRBY", "a", "1"]);
        w.cmd(&["DECRBY", "b", "1"]);
        w.cmd(&["EXEC"]);
    }
    stop.store(true, Ordering::Relaxed);
    for t in readers {
        assert!(t.join().unwrap() > 10, "readers ran");
    }
}

#[test]
fn cross_region_transactions_run_whole() {
    let s = Server::start_with(&["--cores", "2", "--regions", "4"]);
    let mut r = s.raw();
    // Two keys in different regions (their slots fall in different quarters).
    let quarter = |k: &str| crate::common::key_slot(k.as_bytes()) / 4096;
    let (a, b) = ("a", (0..100).map(|i| format!("k{i}")).find(|k| quarter(k) != quarter("a")).unwrap());
    r.cmd(&["MULTI"]);
    r.cmd(&["SET", a, "1"]);
    r.cmd(&["INCRBY", &b, "2"]);
    r.cmd(&["GET", a]);
    assert_eq!(r.cmd(&["EXEC"]), "*3\r\n+OK\r\n:2\r\n$1\r\n1\r\n");
    assert_eq!(r.cmd(&["MGET", a, &b]), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    // WATCH across regions: a change to either key by another client aborts it.
    let mut other = s.raw();
    for (touched, aborted) in [(Some(b.as_str()), true), (Some(a), true), (None, false)] {
        assert_eq!(r.cmd(&["WATCH", a, &b]), "+OK\r\n");
        if let Some(k) = touched {
            assert_eq!(other.cmd(&["INCR", k]), format!(":{}\r\n", if k == a { 2 } else { 3 }));
        }
        r.cmd(&["MULTI"]);
        r.cmd(&["SET", a, "10"]);
        r.cmd(&["SET", &b, "20"]);
        let got = r.cmd(&["EXEC"]);
        if aborted {
            assert_eq!(got, "*-1\r\n", "touched {touched:?}");
        } else {
            assert_eq!(got, "*2\r\n+OK\r\n+OK\r\n");
        }
    }
    assert_eq!(r.cmd(&["MGET", a, &b]), "*2\r\n$2\r\n10\r\n$2\r\n20\r\n");
    // Hash tags keep a transaction in one region.
    r.cmd(&["MULTI"]);
    r.cmd(&["SET", "{u}a", "1"]);
    r.cmd(&["INCR", "{u}b"]);
    assert_eq!(r.cmd(&["EXEC"]), "*2\r\n+OK\r\n:1\r\n");
}

/// A transfer as a script: both balances and the log entry, or nothing.
const TRANSFER: &str = "redis.call('decrby', KEYS[1], ARGV[1]) redis.call('incrby', KEYS[2], ARGV[1]) redis.call('rpush', KEYS[3], ARGV[2]) return 1";

#[test]
fn a_transaction_survives_kill_9_whole_or_not_at_all() {
    transfers_survive_kill_9(&["--cores", "2"], "{bank}");
}

/// The same with the accounts and the log spread over two regions on two
/// cores: every transfer is a cross-region write (`shard::cross`).
#[test]
fn a_cross_region_transaction_survives_kill_9_whole_or_not_at_all() {
    transfers_survive_kill_9(&["--cores", "2", "--regions", "2"], "");
}

/// Clients move amounts between accounts with MULTI/EXEC and with a Lua script,
/// logging each transfer in the same transaction or script, while the server is
/// killed and restarted. After every restart the total holds and every
/// acknowledged transfer is there. Keys are named with `tag` in front.
fn transfers_survive_kill_9(args: &[&str], tag: &str) {
    let seed = std::env::var("NEOKV_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand_seed);
    println!("seed {seed}");
    let mut s = Server::start_with(args);
    const ACCOUNTS: u64 = 8;
    let acct = |i: u64| format!("{tag}acct{i}");
    let log_key = format!("{tag}log");
    if tag.is_empty() {
        // The accounts span both regions (the halves of the slots).
        let half = |k: &str| crate::common::key_slot(k.as_bytes()) >= 8192;
        let halves: std::collections::BTreeSet<bool> = (0..ACCOUNTS).map(|i| half(&acct(i))).collect();
        assert_eq!(halves.len(), 2, "the accounts must span both regions");
    }
    let mut r = s.raw();
    for i in 0..ACCOUNTS {
        r.cmd(&["SET", &acct(i), "1000"]);
    }
    let mut acked: Vec<String> = Vec::new();
    let mut rng = seed;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..4 {
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..3)
            .map(|w| {
                let port = s.port;
                let stop = stop.clone();
                let mut seed = next() | 1;
                let (tag, log_key) = (tag.to_string(), log_key.clone());
                std::thread::spawn(move || {
                    let mut acked = Vec::new();
                    let mut c = Raw::connect(port);
                    for n in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let (from, to, amt) = (seed % ACCOUNTS, (seed >> 8) % ACCOUNTS, (seed >> 16) % 50);
                        let id = format!("r{round}w{w}n{n}");
                        let (from, to, amt) = (format!("{tag}acct{from}"), format!("{tag}acct{to}"), amt.to_string());
                        // Half the transfers are transactions, half are scripts.
                        let lines: Vec<Vec<&str>> = if n % 2 == 0 {
                            vec![
                                vec!["MULTI"],
                                vec!["DECRBY", &from, &amt],
                                vec!["INCRBY", &to, &amt],
                                vec!["RPUSH", &log_key, &id],
                                vec!["EXEC"],
                            ]
                        } else {
                            vec![vec!["EVAL", TRANSFER, "3", &from, &to, &log_key, &amt, &id]]
                        };
                        let mut ok = true;
                        let mut last = String::new();
                        for l in &lines {
                            let a: Vec<&[u8]> = l.iter().map(|s| s.as_bytes()).collect();
                            c.send(&crate::common::encode_cmd(&a));
                            let mut out = Vec::new();
                            if crate::common::read_frame(&mut c.r, &mut out).is_err() {
                                ok = false;
                                break;
                            }
                            last = String::from_utf8_lossy(&out).into_owned();
                        }
                        if !ok {
                            break;
                        }
                        if last.starts_with("*3\r\n:") || last == ":1\r\n" {
                            acked.push(id);
                        }
                    }
                    acked
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300 + next() % 700));
        println!("round {round}: kill -9");
        s.kill9();
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            acked.extend(w.join().unwrap());
        }
        s.kill_and_restart();
        let mut r = s.raw();
        let mut total = 0i64;
        for i in 0..ACCOUNTS {
            let v = r.cmd(&["GET", &acct(i)]);
            total += v.lines().nth(1).unwrap().parse::<i64>().unwrap();
        }
        assert_eq!(total, 1000 * ACCOUNTS as i64, "seed {seed} round {round}: the total moved");
        let log = r.cmd(&["LRANGE", &log_key, "0", "-1"]);
        let logged: std::collections::HashSet<&str> = log.lines().filter(|l| l.starts_with('r')).collect();
        for id in &acked {
            assert!(logged.contains(id.as_str()), "seed {seed}: acknowledged transfer {id} lost");
        }
        println!("round {round}: {} transfers acknowledged so far, {} logged", acked.len(), logged.len());
    }
    assert!(acked.len() > 20, "transfers ran");
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
}

/// Optimistic locking across regions: clients increment a counter pair (keys
/// in two regions) with WATCH / GET / MULTI / SET / SET / EXEC, retrying on a
/// null reply, while other clients keep both regions' proposers busy.
/// Cross-region writes gather into shared entries (`shard::cross`), and a
/// region is held by one coordinator at a time; a watched transaction must
/// see every write before it, so no increment is lost and both keys agree.
#[test]
fn watched_cross_region_increments_lose_nothing() {
    let s = Server::start_with(&["--cores", "2", "--regions", "2"]);
    let (a, b) = crate::common::one_per_region("c");
    s.raw().cmd(&["MSET", &a, "0", &b, "0"]);
    // Pipelined writes to other keys of both regions keep their proposers busy,
    // so holds arrive while writes ahead of them are still being proposed.
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (port, stop) = (s.port, stop.clone());
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut batch = Vec::new();
                    for i in 0..16 {
                        let k = format!("busy{w}:{}", (n * 16 + i) % 1000);
                        batch.extend(crate::common::encode_cmd(&[b"SET", k.as_bytes(), b"x"]));
                    }
                    c.send(&batch);
                    for _ in 0..16 {
                        assert_eq!(c.read_reply(), b"+OK\r\n");
                    }
                    n += 1;
                }
            })
        })
        .collect();
    const CLIENTS: usize = 8;
    const EACH: usize = 40;
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (port, a, b) = (s.port, a.clone(), b.clone());
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut retries = 0;
                for _ in 0..EACH {
                    loop {
                        assert_eq!(c.cmd(&["WATCH", &a, &b]), "+OK\r\n");
                        let v: i64 = c.cmd(&["GET", &a]).lines().nth(1).unwrap().parse().unwrap();
                        let next = (v + 1).to_string();
                        c.cmd(&["MULTI"]);
                        c.cmd(&["SET", &a, &next]);
                        c.cmd(&["SET", &b, &next]);
                        match c.cmd(&["EXEC"]).as_str() {
                            "*2\r\n+OK\r\n+OK\r\n" => break,
                            "*-1\r\n" => retries += 1,
                            other => panic!("EXEC answered {other:?}"),
                        }
                    }
                }
                retries
            })
        })
        .collect();
    let retries: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let total = (CLIENTS * EACH).to_string();
    let want = format!("*2\r\n${}\r\n{total}\r\n${}\r\n{total}\r\n", total.len(), total.len());
    assert_eq!(s.raw().cmd(&["MGET", &a, &b]), want, "{retries} retries");
    println!("{} increments, {retries} retries", CLIENTS * EACH);
}

/// An EXEC refused before it runs (wrong arity, not authenticated, a RESP2
/// subscriber) discards the transaction at once, in MULTI or not, and answers
/// `EXECABORT ... because of: <the reason>`, byte for byte as redis-server.
#[test]
fn a_refused_exec_discards_the_transaction() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let lines: &[&[&str]] = &[
        &["MULTI"],
        &["SET", "a", "1"],
        &["EXEC", "now"],
        &["GET", "a"],
        &["EXEC"],
        &["EXEC", "x", "y"],
        &["WATCH", "a"],
        &["MULTI"],
        &["INCR", "a"],
        &["EXEC", "x"],
        &["MULTI"],
        &["INCR", "a"],
        &["EXEC"],
        &["SUBSCRIBE", "ch"],
        &["EXEC"],
    ];
    same_replies(&mut n, &mut r, lines, "refused EXEC");
    let (mut n, mut r) = (s.raw(), o.raw());
    same_replies(&mut n, &mut r, &[&["CONFIG", "SET", "requirepass", "pw"][..]], "requirepass");
    let (mut n2, mut r2) = (s.raw(), o.raw());
    same_replies(&mut n2, &mut r2, &[&["MULTI"][..], &["PING"], &["EXEC"], &["EXEC", "x"]], "unauthenticated EXEC");
    same_replies(&mut n, &mut r, &[&["CONFIG", "SET", "requirepass", ""][..]], "no requirepass");
}
