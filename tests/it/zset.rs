//! Sorted-set commands through the real binary: reply shapes, ranks and ranges
//! on sets big enough to use the rank counters (checked against redis-server),
//! blocking pops, garbage collection and kill -9.

use std::time::{Duration, Instant};

use neokv::storage::keys::{decode_meta_key, split_subkey};
use neokv::storage::{Cf, Storage};

use crate::common::{blocked, q, same_replies, wait_blocked, Oracle, Raw, Server};

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn zset_commands_and_reply_shapes() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["ZADD", "z", "1", "a", "2", "b", "3", "c"]), 3);
    assert_eq!(q::<i64>(&mut c, &["ZADD", "z", "CH", "5", "a", "2", "b", "0.5", "d"]), 2, "a changed, d added");
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "z", "0", "-1"]), strs(&["d", "b", "c", "a"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "z", "0", "1", "WITHSCORES"]), strs(&["d", "0.5", "b", "2"]));
    assert_eq!(q::<String>(&mut c, &["ZSCORE", "z", "a"]), "5");
    assert_eq!(q::<String>(&mut c, &["ZINCRBY", "z", "0.1", "d"]), "0.59999999999999998", "%.17g as Redis 7.0 prints");
    assert_eq!(q::<i64>(&mut c, &["ZRANK", "z", "c"]), 2);
    assert_eq!(q::<i64>(&mut c, &["ZREVRANK", "z", "c"]), 1);
    assert_eq!(s.raw().cmd(&["ZRANK", "z", "c", "WITHSCORE"]), "*2\r\n:2\r\n$1\r\n3\r\n");
    assert_eq!(q::<i64>(&mut c, &["ZCOUNT", "z", "(0.6", "+inf"]), 3);
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "2"]), strs(&["b", "c"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "z", "+inf", "(2", "BYSCORE", "REV"]), strs(&["a", "c"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["ZREVRANGE", "z", "0", "0"]), strs(&["a"]));
    assert_eq!(q::<i64>(&mut c, &["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"]), 4);
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGEBYLEX", "lex", "(a", "[c"]), strs(&["b", "c"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["ZREVRANGEBYLEX", "lex", "+", "-", "LIMIT", "0", "2"]), strs(&["d", "c"]));
    assert_eq!(q::<i64>(&mut c, &["ZLEXCOUNT", "lex", "-", "(c"]), 2);
    assert_eq!(q::<i64>(&mut c, &["ZREMRANGEBYLEX", "lex", "[b", "[c"]), 2);
    assert_eq!(q::<i64>(&mut c, &["ZRANGESTORE", "dst", "z", "0", "1"]), 2);
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "dst", "0", "-1"]), strs(&["d", "b"]));
    // Pops; an emptied set is deleted.
    assert_eq!(q::<Vec<String>>(&mut c, &["ZPOPMIN", "dst"]), strs(&["d", "0.59999999999999998"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["ZPOPMAX", "dst", "5"]), strs(&["b", "2"]));
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "dst"]), 0);
    assert_eq!(
        s.raw().cmd(&["ZMPOP", "2", "none", "z", "MAX", "COUNT", "1"]),
        "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n5\r\n"
    );
    // Set algebra with weights and aggregates; plain sets count as score 1.
    q::<i64>(&mut c, &["ZADD", "w", "1", "x", "2", "y"]);
    q::<i64>(&mut c, &["SADD", "s", "x", "q"]);
    assert_eq!(q::<i64>(&mut c, &["ZUNIONSTORE", "u", "2", "w", "s", "WEIGHTS", "2", "3", "AGGREGATE", "MAX"]), 3);
    assert_eq!(
        q::<Vec<String>>(&mut c, &["ZRANGE", "u", "0", "-1", "WITHSCORES"]),
        strs(&["q", "3", "x", "3", "y", "4"])
    );
    assert_eq!(q::<Vec<String>>(&mut c, &["ZINTER", "2", "w", "s", "WITHSCORES"]), strs(&["x", "2"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["ZDIFF", "2", "w", "s"]), strs(&["y"]));
    assert_eq!(q::<i64>(&mut c, &["ZINTERCARD", "2", "w", "s"]), 1);
    // Errors and WRONGTYPE.
    assert_eq!(
        s.raw().cmd(&["ZADD", "z", "NX", "XX", "1", "a"]),
        "-ERR XX and NX options at the same time are not compatible\r\n"
    );
    assert_eq!(s.raw().cmd(&["ZADD", "z", "x", "a"]), "-ERR value is not a valid float\r\n");
    assert_eq!(s.raw().cmd(&["ZRANGEBYSCORE", "z", "x", "1"]), "-ERR min or max is not a float\r\n");
    assert_eq!(s.raw().cmd(&["ZRANGEBYLEX", "z", "a", "b"]), "-ERR min or max not valid string range item\r\n");
    q::<String>(&mut c, &["SET", "str", "v"]);
    for cmd in
        [&["ZADD", "str", "1", "a"][..], &["ZRANGE", "str", "0", "1"], &["ZSCORE", "str", "a"], &["ZUNION", "1", "str"]]
    {
        assert!(s.raw().cmd(cmd).starts_with("-WRONGTYPE"), "{cmd:?}");
    }
    // RESP3: doubles, and pairs as nested arrays.
    let mut r3 = s.raw();
    r3.cmd(&["HELLO", "3"]);
    assert_eq!(r3.cmd(&["ZSCORE", "w", "y"]), ",2\r\n");
    assert_eq!(r3.cmd(&["ZRANGE", "w", "0", "0", "WITHSCORES"]), "*1\r\n*2\r\n$1\r\nx\r\n,1\r\n");
    assert_eq!(r3.cmd(&["ZSCORE", "w", "nope"]), "_\r\n");
    q::<i64>(&mut c, &["ZADD", "inf", "inf", "top", "-inf", "bottom"]);
    assert_eq!(
        q::<Vec<String>>(&mut c, &["ZRANGE", "inf", "0", "-1", "WITHSCORES"]),
        strs(&["bottom", "-inf", "top", "inf"])
    );
}

/// Same commands on both servers; replies must match byte for byte.
fn both(neo: &mut Raw, redis: &mut Raw, args: &[&str]) -> String {
    let (a, b) = (neo.cmd(args), redis.cmd(args));
    assert_eq!(a, b, "{args:?}");
    a
}

#[test]
fn ranks_and_ranges_of_a_big_set_match_redis() {
    // 20k members (ties, negative, fractional and huge scores), then updates and
    // removals: ranks, rank ranges, LIMIT offsets and counts go through the
    // rank counters and must agree with redis-server everywhere.
    let s = Server::start();
    let oracle = Oracle::start();
    let (mut neo, mut red) = (s.raw(), oracle.raw());
    let n = 20_000u64;
    let score = |i: u64| match i % 5 {
        0 => format!("{}", i % 97),
        1 => format!("-{}.25", i * 31 % 1000),
        2 => format!("{}", (i * 7919) % 1_000_003),
        3 => format!("{}e{}", i % 9, i % 300),
        _ => "42".to_string(),
    };
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        let mut args = vec!["ZADD".to_string(), "big".to_string()];
        for i in chunk {
            args.push(score(*i));
            args.push(format!("m{i}"));
        }
        let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        both(&mut neo, &mut red, &a);
    }
    for i in (0..n).step_by(7) {
        both(&mut neo, &mut red, &["ZINCRBY", "big", "3.5", &format!("m{i}")]);
    }
    for i in (0..n).step_by(11) {
        both(&mut neo, &mut red, &["ZREM", "big", &format!("m{i}")]);
    }
    both(&mut neo, &mut red, &["ZCARD", "big"]);
    for i in (0..n).step_by(97) {
        let m = format!("m{i}");
        both(&mut neo, &mut red, &["ZRANK", "big", &m]);
        both(&mut neo, &mut red, &["ZREVRANK", "big", &m]);
    }
    for start in [0i64, 300, 5_000, 17_000, -1, -400, -9_000] {
        let (a, b) = (start.to_string(), (start + 25).to_string());
        both(&mut neo, &mut red, &["ZRANGE", "big", &a, &b, "WITHSCORES"]);
        both(&mut neo, &mut red, &["ZRANGE", "big", &a, &b, "REV"]);
    }
    for (min, max) in [("-inf", "+inf"), ("(0", "1000"), ("-500", "(42"), ("42", "42"), ("1e100", "inf")] {
        both(&mut neo, &mut red, &["ZCOUNT", "big", min, max]);
        for off in ["0", "299", "4000", "12000"] {
            both(&mut neo, &mut red, &["ZRANGEBYSCORE", "big", min, max, "WITHSCORES", "LIMIT", off, "20"]);
            both(&mut neo, &mut red, &["ZREVRANGEBYSCORE", "big", max, min, "LIMIT", off, "20"]);
        }
    }
    both(&mut neo, &mut red, &["ZREMRANGEBYRANK", "big", "1000", "1999"]);
    both(&mut neo, &mut red, &["ZREMRANGEBYSCORE", "big", "(0", "500"]);
    for i in (0..n).step_by(89) {
        both(&mut neo, &mut red, &["ZRANK", "big", &format!("m{i}")]);
    }
    both(&mut neo, &mut red, &["ZRANGE", "big", "9000", "9010", "WITHSCORES"]);
}

#[test]
fn blocking_zset_pops_wake_and_time_out() {
    let s = Server::start();
    let mut a = blocked(&s, &["BZPOPMIN", "zq", "0"]);
    wait_blocked(&s, 1);
    let mut b = blocked(&s, &["BZMPOP", "0", "1", "zq", "MAX", "COUNT", "2"]);
    wait_blocked(&s, 2);
    s.raw().cmd(&["ZADD", "zq", "1", "one", "2", "two", "3", "three"]);
    assert_eq!(String::from_utf8_lossy(&a.read_reply()), "*3\r\n$2\r\nzq\r\n$3\r\none\r\n$1\r\n1\r\n");
    assert_eq!(
        String::from_utf8_lossy(&b.read_reply()),
        "*2\r\n$2\r\nzq\r\n*2\r\n*2\r\n$5\r\nthree\r\n$1\r\n3\r\n*2\r\n$3\r\ntwo\r\n$1\r\n2\r\n"
    );
    let t = Instant::now();
    assert_eq!(s.raw().cmd(&["BZPOPMAX", "zq", "0.2"]), "*-1\r\n");
    assert!(t.elapsed() >= Duration::from_millis(200));
}

#[test]
fn zsets_are_collected_after_delete_and_survive_kill9() {
    let mut s = Server::start();
    let mut c = s.client();
    for (key, n) in [("zgone", 20_000), ("zlive", 1_000)] {
        let mut p = redis::pipe();
        for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
            let mut cmd = redis::cmd("ZADD");
            cmd.arg(key);
            for i in chunk {
                cmd.arg(*i as f64 / 3.0).arg(format!("member:{i}"));
            }
            p.add_command(cmd);
        }
        p.query::<()>(&mut c).unwrap();
    }
    let t = Instant::now();
    assert_eq!(q::<i64>(&mut c, &["DEL", "zgone"]), 1);
    let del_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(del_ms < 500.0, "DEL of a 20k-member zset took {del_ms:.1} ms");
    assert_eq!(q::<i64>(&mut c, &["ZREM", "zlive", "member:0", "member:999"]), 2);
    let before: Vec<String> = q(&mut c, &["ZRANGE", "zlive", "0", "-1", "WITHSCORES"]);
    // Applied state is written past RocksDB's WAL: SAVE flushes it, so the
    // stopped server's RocksDB holds it without a replay of the log.
    assert_eq!(q::<String>(&mut c, &["SAVE"]), "OK");
    drop(c);
    s.kill9();
    {
        let storage = Storage::open(&s.dir, &Default::default()).unwrap();
        let owner = |k: &[u8]| {
            let (mk, _, _) = split_subkey(k).expect("an element key");
            decode_meta_key(mk).map(|(_, key)| key.to_vec()).unwrap_or_default()
        };
        let scores = |st: &Storage| st.iter_all(Cf::ZsetScore).map(|(k, _)| owner(&k)).collect::<Vec<_>>();
        let pre = scores(&storage);
        assert!(pre.iter().filter(|k| k.as_slice() == b"zgone").count() >= 20_000, "orphans present before compaction");
        storage.compact_all().unwrap();
        let post = scores(&storage);
        assert!(
            post.iter().all(|k| k.as_slice() == b"zlive"),
            "only the live set's score entries (and counters) remain"
        );
        let live_entries = storage
            .iter_all(Cf::ZsetScore)
            .filter(|(k, _)| split_subkey(k).is_some_and(|(_, _, rest)| !rest.starts_with(&[0xff, 0xfe])))
            .count();
        assert_eq!(live_entries, 998, "every live member's score entry kept");
        assert_eq!(storage.iter_all(Cf::Subkey).count(), 998);
    }
    s.kill_and_restart();
    let mut c = s.client();
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "zlive", "0", "-1", "WITHSCORES"]), before);
    assert_eq!(q::<i64>(&mut c, &["ZRANK", "zlive", "member:998"]), 997);
    assert_eq!(q::<i64>(&mut c, &["ZCARD", "zgone"]), 0);
}

#[test]
fn zset_random_members_scan_and_store_forms() {
    let s = Server::start();
    let mut c = s.client();
    let mut args = vec!["ZADD".to_string(), "r".to_string()];
    for i in 0..300 {
        args.push(format!("{}", i % 17));
        args.push(format!("m{i:03}"));
    }
    let a: Vec<&str> = args.iter().map(|x| x.as_str()).collect();
    assert_eq!(q::<i64>(&mut c, &a), 300);
    assert_eq!(
        q::<Vec<Option<String>>>(&mut c, &["ZMSCORE", "r", "m016", "none", "m017"]),
        vec![Some("16".into()), None, Some("0".into())]
    );
    // ZRANDMEMBER: distinct members for a positive count, repeats allowed for a negative one.
    let some: Vec<String> = q(&mut c, &["ZRANDMEMBER", "r", "50"]);
    assert_eq!(some.iter().collect::<std::collections::BTreeSet<_>>().len(), 50);
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANDMEMBER", "r", "-500"]).len(), 500);
    let with: Vec<String> = q(&mut c, &["ZRANDMEMBER", "r", "3", "WITHSCORES"]);
    for pair in with.chunks(2) {
        assert_eq!(q::<String>(&mut c, &["ZSCORE", "r", &pair[0]]), pair[1], "score of {}", pair[0]);
    }
    assert!(q::<String>(&mut c, &["ZRANDMEMBER", "r"]).starts_with('m'));
    // ZSCAN pages through a set bigger than one page and sees every member once.
    let mut seen = std::collections::BTreeMap::new();
    let mut cursor = "0".to_string();
    loop {
        let (next, items): (String, Vec<String>) = q(&mut c, &["ZSCAN", "r", &cursor, "COUNT", "40"]);
        for pair in items.chunks(2) {
            assert!(seen.insert(pair[0].clone(), pair[1].clone()).is_none(), "{} twice", pair[0]);
        }
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 300);
    assert_eq!(seen["m020"], "3");
    // ZUNION and the STORE forms replace the destination, whatever it held.
    q::<i64>(&mut c, &["ZADD", "a", "1", "x", "2", "y"]);
    q::<i64>(&mut c, &["ZADD", "b", "10", "y", "20", "z"]);
    assert_eq!(
        q::<Vec<String>>(&mut c, &["ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"]),
        strs(&["x", "1", "y", "2", "z", "20"])
    );
    q::<String>(&mut c, &["SET", "d", "string"]);
    assert_eq!(q::<i64>(&mut c, &["ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "0.5"]), 1);
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "d", "0", "-1", "WITHSCORES"]), strs(&["y", "7"]));
    assert_eq!(q::<i64>(&mut c, &["ZDIFFSTORE", "d", "2", "a", "b"]), 1);
    assert_eq!(q::<Vec<String>>(&mut c, &["ZRANGE", "d", "0", "-1", "WITHSCORES"]), strs(&["x", "1"]));
    assert_eq!(q::<i64>(&mut c, &["ZDIFFSTORE", "d", "1", "none"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "d"]), 0, "an empty result deletes the destination");
}

/// Lex ranges over members of different scores: Redis walks in (score,
/// member) order from the first member past the start bound while members stay
/// within the other, and answers nothing unless the lowest member is ≤ max and
/// the highest ≥ min. Each form checked against redis-server.
#[test]
fn lex_ranges_over_mixed_scores_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut neo, mut redis) = (s.raw(), o.raw());
    // The issue's case: Redis stores none.
    both(&mut neo, &mut redis, &["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"]);
    assert_eq!(both(&mut neo, &mut redis, &["ZRANGESTORE", "z2", "z", "[f", "[g", "BYLEX"]), ":0\r\n");
    both(&mut neo, &mut redis, &["ZADD", "m", "1", "x", "2", "c", "3", "m", "3", "a", "4", "b", "5", "z", "6", "q"]);
    let bounds = ["-", "+", "[a", "(a", "[b", "(c", "[m", "(m", "[q", "[y", "(z", "[zz"];
    for min in bounds {
        for max in bounds {
            for key in ["z", "m"] {
                both(&mut neo, &mut redis, &["ZRANGEBYLEX", key, min, max]);
                both(&mut neo, &mut redis, &["ZREVRANGEBYLEX", key, max, min]);
                both(&mut neo, &mut redis, &["ZLEXCOUNT", key, min, max]);
                both(&mut neo, &mut redis, &["ZRANGE", key, min, max, "BYLEX", "LIMIT", "1", "2"]);
                both(&mut neo, &mut redis, &["ZRANGE", key, max, min, "BYLEX", "REV", "LIMIT", "1", "1"]);
                both(&mut neo, &mut redis, &["ZRANGESTORE", "dst", key, min, max, "BYLEX"]);
                both(&mut neo, &mut redis, &["ZRANGE", "dst", "0", "-1", "WITHSCORES"]);
            }
        }
    }
    for (min, max) in [("[b", "[m"), ("-", "[c"), ("[q", "+")] {
        both(&mut neo, &mut redis, &["DEL", "c"]);
        both(&mut neo, &mut redis, &["ZUNIONSTORE", "c", "1", "m"]);
        both(&mut neo, &mut redis, &["ZREMRANGEBYLEX", "c", min, max]);
        both(&mut neo, &mut redis, &["ZRANGE", "c", "0", "-1", "WITHSCORES"]);
    }
}

/// A read of several parts of one sorted set (ZRANK: its rank counters, node
/// after node; ZMSCORE: many members) is made consistent without a RocksDB
/// snapshot when no write of the key lands meanwhile (`Ctx::read_key`), so a
/// write between two of those reads must never show:
///
/// - member `x` of `z` moves back and forth between -1 and 499.5, both below
///   `m0500`, whose rank is therefore always 501: a torn read would count `x`
///   twice (at the root node for -1, three levels down for 499.5) or not at
///   all (502 or 500);
/// - the 200 members of `w` all move together between scores 1 and 2: a torn
///   ZMSCORE would answer both.
///
/// Four readers (on both cores: a reader on the applying core cannot interleave
/// with apply) for 4 s, while a client moves them in pipelines. Each element
/// read that misses the element cache takes 20 µs longer (the `slow-reads` failpoint),
/// so that reads span writes. With the stamp left unchecked after the read it
/// failed 2 runs of 8 (a torn ZMSCORE): a statistical guard, not a proof.
#[test]
fn a_read_of_several_parts_of_a_key_never_straddles_a_write() {
    crate::common::require_failpoints();
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_in_env(dir.path(), &["--cores", "2"], &[("NEOKV_FAILPOINTS", "slow-reads=20")]);
    let mut c = s.client();
    for chunk in 0..10 {
        let mut args = vec!["ZADD".to_string(), "z".to_string()];
        for i in chunk * 100..chunk * 100 + 100 {
            args.push(i.to_string());
            args.push(format!("m{i:04}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(q::<i64>(&mut c, &args), 100);
    }
    assert_eq!(q::<i64>(&mut c, &["ZADD", "z", "-1", "x"]), 1);
    let members: Vec<String> = (0..200).map(|i| format!("a{i}")).collect();
    let move_w = |score: &str| {
        let mut cmd = redis::cmd("ZADD");
        cmd.arg("w");
        for m in &members {
            cmd.arg(score).arg(m);
        }
        cmd
    };
    assert_eq!(move_w("1").query::<i64>(&mut c).unwrap(), 200);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (stop, mut r) = (stop.clone(), s.client());
            let mut zmscore = redis::cmd("ZMSCORE");
            zmscore.arg("w").arg(&members);
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let rank: i64 = q(&mut r, &["ZRANK", "z", "m0500"]);
                    assert_eq!(rank, 501, "after {reads} reads: a rank read straddled a write of x");
                    let scores: Vec<String> = zmscore.query(&mut r).unwrap();
                    assert!(scores.iter().all(|s| *s == scores[0]), "after {reads} reads: a torn ZMSCORE: {scores:?}");
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    // Pipelines of 15 moves of each (an odd count: each pipeline leaves them at
    // the other score), so that apply batches land one after another.
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut moves = 0;
    while Instant::now() < deadline {
        let mut p = redis::pipe();
        for i in 0..15 {
            let (x, w) = if (moves + i) % 2 == 0 { ("499.5", "2") } else { ("-1", "1") };
            p.cmd("ZADD").arg("z").arg(x).arg("x");
            p.add_command(move_w(w));
        }
        let added: Vec<i64> = p.query(&mut c).unwrap();
        assert!(added.iter().all(|&n| n == 0), "{added:?}");
        moves += 15;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads: Vec<u64> = readers.into_iter().map(|h| h.join().expect("a reader failed")).collect();
    eprintln!("{moves} moves of x and of w's members; reads per reader: {reads:?}");
    assert!(moves >= 10 && reads.iter().all(|&n| n >= 20), "too few to tell: {moves} moves, reads {reads:?}");
}

/// Weights and scores whose products or sums are not numbers (`inf * 0`,
/// `inf + -inf`): Redis stores 0 for them, whatever the aggregate, the
/// number of inputs, or whether an input is a plain set. Every combination of
/// these is compared with redis-server, stored and not.
#[test]
fn infinite_scores_times_zero_weights_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let setup: &[&[&str]] = &[
        &["ZADD", "{z}a", "inf", "m", "-inf", "n", "0", "o", "1", "p"],
        &["ZADD", "{z}b", "-inf", "m", "inf", "n", "inf", "o", "2", "p"],
        &["SADD", "{z}s", "m", "n", "o", "p"],
    ];
    let mut lines: Vec<Vec<String>> = setup.iter().map(|l| l.iter().map(|x| x.to_string()).collect()).collect();
    let inputs: &[&[&str]] = &[&["{z}a"], &["{z}a", "{z}b"], &["{z}b", "{z}a"], &["{z}a", "{z}s"], &["{z}s", "{z}b"]];
    for keys in inputs {
        for w in ["0", "inf", "-inf", "1", "-1"] {
            for agg in ["SUM", "MIN", "MAX"] {
                for (store, read) in [("ZUNIONSTORE", "ZUNION"), ("ZINTERSTORE", "ZINTER")] {
                    let mut line = vec![store.to_string(), "{z}d".into(), keys.len().to_string()];
                    line.extend(keys.iter().map(|k| k.to_string()));
                    line.push("WEIGHTS".into());
                    line.extend((0..keys.len()).map(|i| if i == 0 { w.to_string() } else { "0".into() }));
                    line.extend(["AGGREGATE".to_string(), agg.to_string()]);
                    lines.push(line.clone());
                    lines.push(["ZRANGE", "{z}d", "0", "-1", "WITHSCORES"].iter().map(|x| x.to_string()).collect());
                    let mut direct = line;
                    direct[0] = read.to_string();
                    direct.remove(1);
                    direct.push("WITHSCORES".into());
                    lines.push(direct);
                }
            }
        }
    }
    same_replies(&mut n, &mut r, &lines, "inf * 0");
}
