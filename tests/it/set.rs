//! Set commands through the real binary.

use std::collections::BTreeSet;

use crate::common::{q, Server};

fn set_of(v: Vec<String>) -> BTreeSet<String> {
    v.into_iter().collect()
}

#[test]
fn set_commands_and_algebra() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["SADD", "a", "1", "2", "3", "3"]), 3);
    assert_eq!(q::<i64>(&mut c, &["SADD", "b", "2", "3", "4"]), 3);
    assert_eq!(q::<i64>(&mut c, &["SCARD", "a"]), 3);
    assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "a", "2"]), 1);
    assert_eq!(q::<Vec<i64>>(&mut c, &["SMISMEMBER", "a", "1", "9", "3"]), vec![1, 0, 1]);
    assert_eq!(set_of(q(&mut c, &["SINTER", "a", "b"])), set_of(vec!["2".into(), "3".into()]));
    assert_eq!(set_of(q(&mut c, &["SUNION", "a", "b", "none"])).len(), 4);
    assert_eq!(q::<Vec<String>>(&mut c, &["SDIFF", "a", "b"]), vec!["1"]);
    assert_eq!(q::<i64>(&mut c, &["SINTERCARD", "2", "a", "b", "LIMIT", "1"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SINTERSTORE", "dst", "a", "b"]), 2);
    assert_eq!(q::<i64>(&mut c, &["SUNIONSTORE", "dst2", "a", "b"]), 4);
    assert_eq!(q::<i64>(&mut c, &["SDIFFSTORE", "dst3", "b", "a"]), 1);
    assert_eq!(q::<Vec<String>>(&mut c, &["SMEMBERS", "dst3"]), vec!["4"]);
    // An empty result deletes the destination, whatever it held.
    q::<String>(&mut c, &["SET", "dst3", "str"]);
    assert_eq!(q::<i64>(&mut c, &["SINTERSTORE", "dst3", "a", "nothing"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "dst3"]), 0);
    // SMOVE, including to a new key and of the last member.
    assert_eq!(q::<i64>(&mut c, &["SMOVE", "a", "fresh", "1"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SMOVE", "a", "fresh", "1"]), 0);
    assert_eq!(q::<Vec<String>>(&mut c, &["SMEMBERS", "fresh"]), vec!["1"]);
    assert_eq!(q::<i64>(&mut c, &["SMOVE", "fresh", "b", "1"]), 1);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "fresh"]), 0, "the emptied source is gone");
    q::<String>(&mut c, &["SET", "str", "v"]);
    assert!(s.raw().cmd(&["SMOVE", "b", "str", "2"]).starts_with("-WRONGTYPE"));
    assert_eq!(q::<i64>(&mut c, &["SMOVE", "missing", "str", "2"]), 0, "absent source answers before the type check");
    assert!(s.raw().cmd(&["SINTER", "a", "str"]).starts_with("-WRONGTYPE"));
    assert_eq!(s.raw().cmd(&["SINTERCARD", "0", "a"]), "-ERR numkeys should be greater than 0\r\n");
    // SPOP / SRANDMEMBER
    assert_eq!(q::<i64>(&mut c, &["SADD", "p", "x", "y", "z"]), 3);
    let one: String = q(&mut c, &["SPOP", "p"]);
    assert!(["x", "y", "z"].contains(&one.as_str()));
    assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "p", &one]), 0);
    let two: Vec<String> = q(&mut c, &["SRANDMEMBER", "p", "5"]);
    assert_eq!(two.len(), 2);
    assert_eq!(q::<Vec<String>>(&mut c, &["SRANDMEMBER", "p", "-5"]).len(), 5);
    let rest: Vec<String> = q(&mut c, &["SPOP", "p", "10"]);
    assert_eq!(set_of(rest), set_of(two));
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "p"]), 0);
    assert_eq!(s.raw().cmd(&["SPOP", "p", "-1"]), "-ERR value is out of range, must be positive\r\n");
}

#[test]
fn spop_of_a_big_set_is_random_and_consistent() {
    let s = Server::start();
    let mut c = s.client();
    let n = 20_000; // above the exact-uniform threshold: the seek path
    let mut p = redis::pipe();
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        let mut cmd = redis::cmd("SADD");
        cmd.arg("big");
        for i in chunk {
            cmd.arg(format!("m{i}"));
        }
        p.add_command(cmd);
    }
    p.query::<()>(&mut c).unwrap();
    let mut popped = BTreeSet::new();
    for _ in 0..200 {
        let m: String = q(&mut c, &["SPOP", "big"]);
        assert!(popped.insert(m), "a popped member is gone");
    }
    assert_eq!(q::<i64>(&mut c, &["SCARD", "big"]), (n - 200) as i64);
    // Not always the first or last member: spread over the key range.
    let low = popped.iter().filter(|m| m.as_str() < "m2").count();
    assert!(low > 5 && low < 195, "{low} of 200 pops below m2");
    let distinct_heads = popped.iter().map(|m| &m[..3.min(m.len())]).collect::<BTreeSet<_>>().len();
    assert!(distinct_heads > 30, "pops spread over the key range ({distinct_heads} distinct 2-digit heads)");
    let batch: Vec<String> = q(&mut c, &["SPOP", "big", "300"]);
    assert_eq!(set_of(batch.clone()).len(), 300);
    for m in batch.iter().take(20) {
        assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "big", m]), 0);
    }
    assert_eq!(q::<i64>(&mut c, &["SCARD", "big"]), (n - 500) as i64);
}

/// A pop of a key that does not exist answers without a log entry when the
/// connection has no write in flight (`Ctx::write_unless_absent`). Its replies
/// must be Redis's, byte for byte, in RESP2 and RESP3; and a pop sent in the
/// same pipeline as the writes that create its key must still see them.
#[test]
fn a_pop_of_a_missing_key_sees_the_pipelined_writes_before_it() {
    let s = Server::start();
    let o = crate::common::Oracle::start();
    // One at a time: nothing in flight, so the missing keys answer at once.
    let alone: &[&[&str]] = &[
        &["SPOP", "s"],
        &["SPOP", "s", "2"],
        &["LPOP", "l"],
        &["LPOP", "l", "2"],
        &["RPOP", "l"],
        &["RPOP", "l", "0"],
        &["ZPOPMIN", "z"],
        &["ZPOPMAX", "z", "2"],
        &["SET", "str", "v"],
        &["SPOP", "str"],
        &["LPOP", "str"],
        &["ZPOPMIN", "str"],
        &["DEL", "str"],
    ];
    // In one write: each pop must find what the writes before it did.
    let piped: &[&[&str]] = &[
        &["SADD", "s", "a"],
        &["SPOP", "s"],
        &["SPOP", "s"],
        &["SADD", "s", "b"],
        &["SPOP", "s", "5"],
        &["SPOP", "s", "5"],
        &["RPUSH", "l", "x", "y"],
        &["LPOP", "l"],
        &["RPOP", "l"],
        &["LPOP", "l"],
        &["RPUSH", "l", "z"],
        &["LPOP", "l", "3"],
        &["LPOP", "l", "3"],
        &["ZADD", "z", "1", "a", "2", "b"],
        &["ZPOPMIN", "z"],
        &["ZPOPMAX", "z", "2"],
        &["ZPOPMIN", "z"],
    ];
    for resp in ["2", "3"] {
        let mut replies = Vec::new();
        for port in [s.port, o.port] {
            let mut c = crate::common::Raw::connect(port);
            c.cmd(&["HELLO", resp]);
            let mut got = Vec::new();
            for cmd in alone {
                got.push(c.cmd(cmd));
            }
            c.send(&crate::common::encode_pipeline(piped));
            got.extend(piped.iter().map(|_| String::from_utf8_lossy(&c.read_reply()).into_owned()));
            replies.push(got);
        }
        for (i, c) in alone.iter().chain(piped).enumerate() {
            assert_eq!(replies[0][i], replies[1][i], "RESP{resp}: {c:?} (NeoKV, then Redis)");
        }
    }
    // With no write in flight, an acknowledged write by another connection is
    // seen, and an expired key pops as absent.
    let mut a = s.client();
    let mut b = s.client();
    for _ in 0..50 {
        let _: i64 = q(&mut a, &["SADD", "q", "m"]);
        let got: Option<String> = q(&mut b, &["SPOP", "q"]);
        assert_eq!(got.as_deref(), Some("m"), "a pop must see the other connection's acknowledged SADD");
        let _: i64 = q(&mut a, &["RPUSH", "ql", "m"]);
        let got: Option<String> = q(&mut b, &["LPOP", "ql"]);
        assert_eq!(got.as_deref(), Some("m"), "a pop must see the other connection's acknowledged RPUSH");
    }
    let _: i64 = q(&mut a, &["SADD", "e", "m"]);
    let _: i64 = q(&mut a, &["PEXPIRE", "e", "30"]);
    std::thread::sleep(std::time::Duration::from_millis(80));
    let got: Option<String> = q(&mut b, &["SPOP", "e"]);
    assert_eq!(got, None, "an expired set pops as absent");
    let n: i64 = q(&mut b, &["EXISTS", "e"]);
    assert_eq!(n, 0);
}
