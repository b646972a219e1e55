//! Every member can be drawn. Seeded sequences of writes (the differential
//! tests' generators: keys deleted, recreated, stored over, popped) run against
//! NeoKV; after each step every small collection is drawn from with its single
//! pick (ZRANDMEMBER, SRANDMEMBER, HRANDFIELD without a count, SPOP put back)
//! and the whole keyspace with RANDOMKEY, until each member has come up. With
//! uniform draws a member of a set of n is missed in 40·n draws with
//! probability (1 - 1/n)^(40n) < e^-40: a miss is a member that cannot be drawn.

use std::collections::BTreeSet;

use crate::common::{encode_cmd, Raw, Server, XorShift};
use crate::differential::{gen_composite, gen_zsets, parse, V};

/// Send one command; its reply's bytes.
fn ask(c: &mut Raw, args: &[&str]) -> Vec<u8> {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    c.send_cmd(&a);
    c.read_reply()
}

/// The bulk strings of an array reply.
fn bulk_items(reply: &[u8]) -> Vec<String> {
    match parse(reply, &mut 0) {
        V::Arr(Some(xs)) => xs
            .into_iter()
            .filter_map(|x| match x {
                V::Bulk(Some(b)) => Some(String::from_utf8_lossy(&b).into_owned()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Send `n` copies of `cmd` in one write; the replies.
fn draws(c: &mut Raw, cmd: &[&str], n: usize) -> Vec<Vec<u8>> {
    let a: Vec<&[u8]> = cmd.iter().map(|s| s.as_bytes()).collect();
    let one = encode_cmd(&a);
    c.send(&one.repeat(n));
    (0..n).map(|_| c.read_reply()).collect()
}

/// The bulk string of a reply, if it is one.
fn bulk(reply: &[u8]) -> Option<String> {
    match parse(reply, &mut 0) {
        V::Bulk(Some(b)) => Some(String::from_utf8_lossy(&b).into_owned()),
        _ => None,
    }
}

/// Check the single picks of every key now.
fn check_picks(c: &mut Raw, seed: u64, step: usize, history: &[String]) {
    let fail = |what: String| -> ! {
        panic!("seed {seed}, step {step}: {what}\nsequence:\n  {}", history.join("\n  "));
    };
    let keys = bulk_items(&ask(c, &["KEYS", "*"]));
    for key in &keys {
        let kind = c.cmd(&["TYPE", key]);
        let (list, pick): (&[&str], &[&str]) = match kind.trim() {
            "+zset" => (&["ZRANGE", key, "0", "-1"], &["ZRANDMEMBER", key]),
            "+set" => (&["SMEMBERS", key], &["SRANDMEMBER", key]),
            "+hash" => (&["HKEYS", key], &["HRANDFIELD", key]),
            _ => continue,
        };
        let members: BTreeSet<String> = bulk_items(&ask(c, list)).into_iter().collect();
        if members.is_empty() || members.len() > 8 {
            continue;
        }
        let seen: BTreeSet<String> = draws(c, pick, 40 * members.len()).iter().filter_map(|r| bulk(r)).collect();
        if seen != members {
            fail(format!("{} of {key} drew {seen:?} from {members:?}", pick[0]));
        }
        if kind.trim() == "+set" {
            // SPOP runs in apply with the leader's seed: pop and put back.
            let mut seen = BTreeSet::new();
            for _ in 0..40 * members.len() {
                let m = bulk(&ask(c, &["SPOP", key])).unwrap_or_default();
                c.cmd(&["SADD", key, &m]);
                seen.insert(m);
            }
            if seen != members {
                fail(format!("SPOP of {key} drew {seen:?} from {members:?}"));
            }
        }
    }
    if !keys.is_empty() && keys.len() <= 8 {
        let all: BTreeSet<String> = keys.into_iter().collect();
        let seen: BTreeSet<String> = draws(c, &["RANDOMKEY"], 40 * all.len()).iter().filter_map(|r| bulk(r)).collect();
        if seen != all {
            fail(format!("RANDOMKEY drew {seen:?} from {all:?}"));
        }
    }
}

#[test]
fn every_member_and_key_can_be_drawn() {
    let s = Server::start_with(&["--cores", "1", "--appendfsync", "no"]);
    let mut c = s.raw();
    let seeds = std::env::var("NEOKV_DIFF_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(6u64);
    for seed in 0..seeds {
        c.cmd(&["FLUSHALL"]);
        let mut r = XorShift::new(seed);
        let mut history = Vec::new();
        for step in 0..120 {
            let cmd = if step % 2 == 0 { gen_zsets(&mut r, step) } else { gen_composite(&mut r, step) };
            let a: Vec<&str> = cmd.iter().map(String::as_str).collect();
            c.cmd(&a);
            history.push(cmd.join(" "));
            if step % 4 == 3 {
                check_picks(&mut c, seed, step, &history);
            }
        }
    }
}

/// Bigger keys: sorted sets past 256 members draw ranks through the counters,
/// sets and hashes walk. Members named like `user:N` share a prefix and sort
/// in runs ("user:1" < "user:10" < "user:100" < "user:11"); each must come
/// up, and none far more often than its share.
#[test]
fn every_member_of_a_big_key_can_be_drawn() {
    let s = Server::start_with(&["--cores", "1", "--appendfsync", "no"]);
    let mut c = s.raw();
    const N: usize = 1000;
    for i in 0..N {
        let m = format!("user:{i}");
        c.cmd(&["SADD", "s", &m]);
        c.cmd(&["HSET", "h", &m, "v"]);
        c.cmd(&["ZADD", "z", &(i % 7).to_string(), &m]);
    }
    for pick in [&["ZRANDMEMBER", "z"][..], &["SRANDMEMBER", "s"], &["HRANDFIELD", "h"]] {
        let draws_n = 40 * N;
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..draws_n / 1000 {
            for r in draws(&mut c, pick, 1000) {
                *counts.entry(bulk(&r).expect("a member")).or_insert(0usize) += 1;
            }
        }
        let missing: Vec<String> = (0..N).map(|i| format!("user:{i}")).filter(|m| !counts.contains_key(m)).collect();
        assert!(
            missing.is_empty(),
            "{}: never drew {} members, e.g. {:?}",
            pick[0],
            missing.len(),
            &missing[..missing.len().min(5)]
        );
        let max = counts.values().max().copied().unwrap_or(0);
        // Uniform: about 40 each (a Poisson count above 90 has odds below 1e-10).
        assert!(max <= 90, "{}: one member came up {max} times in {draws_n} draws", pick[0]);
    }
    // SPOP (in apply, seeded by the leader), put back each time by the same script.
    let put_back = "local m = redis.call('spop', KEYS[1]) redis.call('sadd', KEYS[1], m) return m";
    // 20 draws a member: one is missed with odds e^-20.
    let mut seen = BTreeSet::new();
    for _ in 0..20 {
        for r in draws(&mut c, &["EVAL", put_back, "1", "s"], N) {
            seen.insert(bulk(&r).expect("a member"));
        }
    }
    assert_eq!(seen.len(), N, "SPOP never drew {} members", N - seen.len());
}
