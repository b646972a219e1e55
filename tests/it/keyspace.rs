//! Keyspace commands through a real client.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::{err, q, Server};

#[test]
fn del_exists_type_touch() {
    let s = Server::start();
    let mut c = s.client();
    q::<String>(&mut c, &["MSET", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "a", "b", "nope", "a"]), 3, "repeats count");
    assert_eq!(q::<String>(&mut c, &["TYPE", "a"]), "string");
    assert_eq!(q::<String>(&mut c, &["TYPE", "nope"]), "none");
    assert_eq!(q::<i64>(&mut c, &["TOUCH", "a", "nope"]), 1);
    assert_eq!(q::<i64>(&mut c, &["DEL", "a", "b", "nope"]), 2);
    assert_eq!(q::<i64>(&mut c, &["UNLINK", "c", "c"]), 1);
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
}

#[test]
fn expire_family() {
    let s = Server::start();
    let mut c = s.client();
    q::<String>(&mut c, &["SET", "k", "v"]);
    assert_eq!(q::<i64>(&mut c, &["TTL", "k"]), -1);
    assert_eq!(q::<i64>(&mut c, &["TTL", "none"]), -2);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "none", "10"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "100", "XX"]), 0, "XX needs a TTL");
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "100", "GT"]), 0, "no TTL is infinite for GT");
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "100", "NX"]), 1);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "200", "NX"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "50", "GT"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "200", "GT"]), 1);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "300", "LT"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "150", "LT"]), 1);
    assert!((149..=150).contains(&q::<i64>(&mut c, &["TTL", "k"])));
    assert!(q::<i64>(&mut c, &["PTTL", "k"]) > 148_000);
    assert_eq!(q::<i64>(&mut c, &["PERSIST", "k"]), 1);
    assert_eq!(q::<i64>(&mut c, &["PERSIST", "k"]), 0);
    assert_eq!(q::<i64>(&mut c, &["PEXPIRE", "k", "100000"]), 1);
    let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 1000;
    assert_eq!(q::<i64>(&mut c, &["EXPIREAT", "k", &at.to_string()]), 1);
    assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "k"]), at as i64);
    assert_eq!(q::<i64>(&mut c, &["PEXPIREAT", "k", &(at * 1000 + 5).to_string()]), 1);
    assert_eq!(q::<i64>(&mut c, &["PEXPIRETIME", "k"]), (at * 1000 + 5) as i64);
    assert_eq!(q::<i64>(&mut c, &["EXPIRETIME", "none"]), -2);
    // a past time deletes
    assert_eq!(q::<i64>(&mut c, &["EXPIRE", "k", "-1"]), 1);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "k"]), 0);
    // option errors, byte for byte
    assert!(err(&mut c, &["EXPIRE", "k", "10", "NX", "XX"])
        .contains("NX and XX, GT or LT options at the same time are not compatible"));
    assert!(err(&mut c, &["EXPIRE", "k", "10", "GT", "LT"])
        .contains("GT and LT options at the same time are not compatible"));
    assert!(err(&mut c, &["EXPIRE", "k", "10", "FOO"]).contains("Unsupported option FOO"));
    assert!(err(&mut c, &["EXPIRE", "k", "9223372036854775807"]).contains("invalid expire time in 'expire' command"));
}

#[test]
fn expired_keys_vanish_everywhere() {
    let s = Server::start();
    let mut c = s.client();
    q::<String>(&mut c, &["SET", "short", "v", "PX", "50"]);
    q::<String>(&mut c, &["SET", "long", "v"]);
    std::thread::sleep(Duration::from_millis(120));
    // passive: every read treats it as absent
    assert_eq!(q::<Option<String>>(&mut c, &["GET", "short"]), None);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "short"]), 0);
    assert_eq!(q::<String>(&mut c, &["TYPE", "short"]), "none");
    assert_eq!(q::<i64>(&mut c, &["TTL", "short"]), -2);
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 1);
    assert_eq!(q::<Vec<String>>(&mut c, &["KEYS", "*"]), vec!["long".to_string()]);
    let (_, keys): (String, Vec<String>) = q(&mut c, &["SCAN", "0", "COUNT", "100"]);
    assert_eq!(keys, vec!["long".to_string()]);
    assert_eq!(q::<i64>(&mut c, &["SETNX", "short", "again"]), 1, "an expired key can be created anew");
}

#[test]
fn active_expiry_removes_keys_without_access() {
    let s = Server::start();
    let mut c = s.client();
    for i in 0..50 {
        q::<String>(&mut c, &["SET", &format!("tmp{i}"), "v", "PX", "100"]);
    }
    q::<String>(&mut c, &["SET", "keep", "v"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // INFO's expired_keys counts keys deleted by the active cycle, not reads.
        let info: String = q(&mut c, &["INFO", "stats"]);
        let n: u64 =
            info.lines().find_map(|l| l.strip_prefix("expired_keys:")).map(|v| v.trim().parse().unwrap()).unwrap();
        if n >= 50 {
            break;
        }
        assert!(Instant::now() < deadline, "active expiry deleted only {n} of 50 keys");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 1);
}

#[test]
fn rename_and_copy() {
    let s = Server::start();
    let mut c = s.client();
    assert!(err(&mut c, &["RENAME", "none", "x"]).contains("no such key"));
    q::<String>(&mut c, &["SET", "a", "1", "EX", "1000"]);
    assert_eq!(q::<String>(&mut c, &["RENAME", "a", "b"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "a"]), 0);
    assert_eq!(q::<String>(&mut c, &["GET", "b"]), "1");
    assert!(q::<i64>(&mut c, &["TTL", "b"]) > 990, "RENAME keeps the TTL");
    assert_eq!(q::<String>(&mut c, &["RENAME", "b", "b"]), "OK");
    q::<String>(&mut c, &["SET", "c", "3"]);
    assert_eq!(q::<i64>(&mut c, &["RENAMENX", "b", "c"]), 0);
    assert_eq!(q::<i64>(&mut c, &["RENAMENX", "b", "d"]), 1);
    assert_eq!(q::<i64>(&mut c, &["RENAMENX", "d", "d"]), 0);
    assert_eq!(q::<i64>(&mut c, &["COPY", "d", "c"]), 0, "destination exists");
    assert_eq!(q::<i64>(&mut c, &["COPY", "d", "c", "REPLACE"]), 1);
    assert_eq!(q::<String>(&mut c, &["GET", "c"]), "1");
    assert_eq!(q::<i64>(&mut c, &["COPY", "d", "e", "DB", "0"]), 1);
    assert_eq!(q::<i64>(&mut c, &["COPY", "none", "f"]), 0);
    assert!(err(&mut c, &["COPY", "d", "d"]).contains("source and destination objects are the same"));
    assert!(err(&mut c, &["COPY", "d", "x", "DB", "16"]).contains("DB index is out of range"));
    assert!(err(&mut c, &["COPY", "d", "x", "FOO"]).contains("syntax error"));
}

#[test]
fn scan_keys_randomkey_flush() {
    let s = Server::start();
    let mut c = s.client();
    let mut want = BTreeSet::new();
    for i in 0..300 {
        let k = format!("user:{i}");
        q::<String>(&mut c, &["SET", &k, "v"]);
        want.insert(k);
    }
    q::<String>(&mut c, &["SET", "other", "v"]);
    // full SCAN returns every key exactly as KEYS does
    let mut got = BTreeSet::new();
    let mut cursor = "0".to_string();
    let mut rounds = 0;
    loop {
        let (next, keys): (String, Vec<String>) = q(&mut c, &["SCAN", &cursor, "MATCH", "user:*", "COUNT", "37"]);
        got.extend(keys);
        rounds += 1;
        if next == "0" {
            break;
        }
        cursor = next;
    }
    assert!(rounds > 5, "COUNT bounds each call");
    assert_eq!(got, want);
    let keys: BTreeSet<String> = q::<Vec<String>>(&mut c, &["KEYS", "user:*"]).into_iter().collect();
    assert_eq!(keys, want);
    assert_eq!(q::<Vec<String>>(&mut c, &["KEYS", "oth?r"]), vec!["other".to_string()]);
    let (_, typed): (String, Vec<String>) = q(&mut c, &["SCAN", "0", "TYPE", "hash", "COUNT", "1000"]);
    assert!(typed.is_empty());
    assert!(err(&mut c, &["SCAN", "abc"]).contains("invalid cursor"));
    assert!(err(&mut c, &["SCAN", "0", "COUNT", "0"]).contains("syntax error"));
    let rk: String = q(&mut c, &["RANDOMKEY"]);
    assert!(want.contains(&rk) || rk == "other");
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 301);
    assert_eq!(q::<String>(&mut c, &["FLUSHDB"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
    assert_eq!(q::<Option<String>>(&mut c, &["RANDOMKEY"]), None);
    q::<String>(&mut c, &["SET", "x", "1"]);
    assert_eq!(q::<String>(&mut c, &["FLUSHALL", "SYNC"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
    assert!(err(&mut c, &["FLUSHALL", "LATER"]).contains("syntax error"));
}

#[test]
fn object_subcommands() {
    let s = Server::start();
    let mut c = s.client();
    q::<String>(&mut c, &["SET", "i", "12345"]);
    q::<String>(&mut c, &["SET", "e", "short string"]);
    q::<String>(&mut c, &["SET", "r", &"x".repeat(45)]);
    assert_eq!(q::<String>(&mut c, &["OBJECT", "ENCODING", "i"]), "int");
    assert_eq!(q::<String>(&mut c, &["OBJECT", "ENCODING", "e"]), "embstr");
    assert_eq!(q::<String>(&mut c, &["OBJECT", "ENCODING", "r"]), "raw");
    assert_eq!(q::<Option<String>>(&mut c, &["OBJECT", "ENCODING", "none"]), None);
    assert_eq!(q::<i64>(&mut c, &["OBJECT", "IDLETIME", "i"]), 0);
    assert!(err(&mut c, &["OBJECT", "FREQ", "i"]).contains("An LFU maxmemory policy is not selected"));
    assert!(err(&mut c, &["OBJECT", "NOPE", "i"]).contains("unknown subcommand 'NOPE'. Try OBJECT HELP."));
    assert!(q::<Vec<String>>(&mut c, &["OBJECT", "HELP"]).len() > 3);
}

#[test]
fn whole_keyspace_scans_do_not_stall_the_core() {
    let s = Server::start(); // one core: every connection shares it
    let mut r = s.raw();
    let n = 300_000;
    let mut batch = Vec::new();
    for i in 0..n / 100 {
        let mut args: Vec<Vec<u8>> = vec![b"MSET".to_vec()];
        for j in 0..100 {
            args.push(format!("key:{}", i * 100 + j).into_bytes());
            args.push(b"v".to_vec());
        }
        let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        batch.extend(crate::common::encode_cmd(&refs));
    }
    r.send(&batch);
    for _ in 0..n / 100 {
        assert_eq!(r.read_reply(), b"+OK\r\n");
    }
    crate::common::assert_does_not_stall(&s, &[b"KEYS", b"*"], &format!("*{n}\r\n"));
    assert_eq!(s.raw().cmd(&["DBSIZE"]), format!(":{n}\r\n"));
}

#[test]
fn scan_survives_a_restart_midway() {
    // A cursor issued before a restart is unknown afterwards: the scan must go on
    // from that cursor's slot (repeats allowed) and never skip a key.
    let mut s = Server::start();
    let mut c = s.client();
    let mut want = BTreeSet::new();
    for i in 0..2000 {
        let k = format!("item:{i}");
        q::<String>(&mut c, &["SET", &k, "v"]);
        want.insert(k);
    }
    let mut got = BTreeSet::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, keys): (String, Vec<String>) = q(&mut c, &["SCAN", &cursor, "COUNT", "50"]);
        got.extend(keys);
        calls += 1;
        if next == "0" {
            break;
        }
        cursor = next;
        if calls == 15 {
            s.kill_and_restart();
            c = s.client();
        }
    }
    assert!(calls > 20, "the scan went on after the restart ({calls} calls)");
    assert_eq!(got, want, "every key present throughout the scan was returned");
}
