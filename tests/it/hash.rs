//! Hash commands through the real binary (exact semantics are also compared with
//! redis-server by the differential test).

use redis::Value;

use crate::common::{q, Server};

#[test]
fn hash_commands_and_reply_shapes() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["HSET", "h", "a", "1", "b", "2"]), 2);
    assert_eq!(q::<i64>(&mut c, &["HSET", "h", "a", "10", "c", "3"]), 1, "a updated, c new");
    assert_eq!(q::<String>(&mut c, &["HMSET", "h", "d", "4"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["HSETNX", "h", "a", "x"]), 0);
    assert_eq!(q::<i64>(&mut c, &["HSETNX", "h", "e", "5"]), 1);
    assert_eq!(q::<String>(&mut c, &["HGET", "h", "a"]), "10");
    assert_eq!(q::<Option<String>>(&mut c, &["HGET", "h", "zz"]), None);
    assert_eq!(
        q::<Vec<Option<String>>>(&mut c, &["HMGET", "h", "a", "zz", "e"]),
        vec![Some("10".into()), None, Some("5".into())]
    );
    assert_eq!(q::<i64>(&mut c, &["HLEN", "h"]), 5);
    assert_eq!(q::<i64>(&mut c, &["HEXISTS", "h", "b"]), 1);
    assert_eq!(q::<i64>(&mut c, &["HSTRLEN", "h", "a"]), 2);
    assert_eq!(q::<Vec<String>>(&mut c, &["HKEYS", "h"]), vec!["a", "b", "c", "d", "e"]);
    assert_eq!(q::<Vec<String>>(&mut c, &["HVALS", "h"]), vec!["10", "2", "3", "4", "5"]);
    let all: Vec<String> = q(&mut c, &["HGETALL", "h"]);
    assert_eq!(all, vec!["a", "10", "b", "2", "c", "3", "d", "4", "e", "5"]);
    assert_eq!(q::<i64>(&mut c, &["HINCRBY", "h", "a", "-15"]), -5);
    assert_eq!(q::<i64>(&mut c, &["HINCRBY", "h", "n", "7"]), 7);
    assert_eq!(q::<String>(&mut c, &["HINCRBYFLOAT", "h", "f", "2.5"]), "2.5");
    assert_eq!(q::<String>(&mut c, &["HINCRBYFLOAT", "h", "f", "0.5"]), "3");
    assert_eq!(s.raw().cmd(&["HINCRBY", "h", "a", "x"]), "-ERR value is not an integer or out of range\r\n");
    q::<i64>(&mut c, &["HSET", "h", "s", "abc"]);
    assert_eq!(s.raw().cmd(&["HINCRBY", "h", "s", "1"]), "-ERR hash value is not an integer\r\n");
    assert_eq!(s.raw().cmd(&["HINCRBYFLOAT", "h", "s", "1"]), "-ERR hash value is not a float\r\n");
    assert_eq!(s.raw().cmd(&["HINCRBYFLOAT", "h", "s", "inf"]), "-ERR value is NaN or Infinity\r\n");
    assert_eq!(s.raw().cmd(&["HSET", "h", "a"]), "-ERR wrong number of arguments for 'hset' command\r\n");
    // The empty-key rule: deleting the last field deletes the key.
    assert_eq!(q::<i64>(&mut c, &["HDEL", "h", "a", "b", "c", "d", "e", "n", "f", "s", "nope"]), 8);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "h"]), 0);
    assert_eq!(q::<String>(&mut c, &["TYPE", "h"]), "none");
    // WRONGTYPE both ways.
    q::<String>(&mut c, &["SET", "str", "v"]);
    assert!(s.raw().cmd(&["HSET", "str", "a", "1"]).starts_with("-WRONGTYPE"));
    assert!(s.raw().cmd(&["HGETALL", "str"]).starts_with("-WRONGTYPE"));
    q::<i64>(&mut c, &["HSET", "h2", "a", "1"]);
    assert!(s.raw().cmd(&["GET", "h2"]).starts_with("-WRONGTYPE"));
    assert_eq!(q::<String>(&mut c, &["TYPE", "h2"]), "hash");
    // SET overwrites a hash; the old fields never come back.
    q::<String>(&mut c, &["SET", "h2", "plain"]);
    assert!(s.raw().cmd(&["HSET", "h2", "b", "2"]).starts_with("-WRONGTYPE"));
    assert_eq!(q::<i64>(&mut c, &["DEL", "h2"]), 1);
    assert_eq!(q::<i64>(&mut c, &["HSET", "h2", "b", "2"]), 1);
    assert_eq!(q::<Vec<String>>(&mut c, &["HGETALL", "h2"]), vec!["b", "2"], "field a of the first hash is gone");
}

#[test]
fn hash_resp3_map_and_random_fields() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["HSET", "h", "a", "1", "b", "2", "c", "3"]), 3);
    let mut r = s.raw();
    r.cmd(&["HELLO", "3"]);
    assert_eq!(r.cmd(&["HGETALL", "h"]), "%3\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n");
    // HRANDFIELD WITHVALUES: pairs in RESP3, flat in RESP2.
    let three = r.cmd(&["HRANDFIELD", "h", "1", "WITHVALUES"]);
    assert!(three.starts_with("*1\r\n*2\r\n$1\r\n"), "{three:?}");
    let v: Vec<String> = q(&mut c, &["HRANDFIELD", "h", "2", "WITHVALUES"]);
    assert_eq!(v.len(), 4);
    assert_ne!(v[0], v[2], "a positive count gives distinct fields");
    for pair in v.chunks(2) {
        assert_eq!(q::<String>(&mut c, &["HGET", "h", &pair[0]]), pair[1]);
    }
    let all: Vec<String> = q(&mut c, &["HRANDFIELD", "h", "10"]);
    assert_eq!(all.len(), 3, "a count above the size gives every field once");
    let rep: Vec<String> = q(&mut c, &["HRANDFIELD", "h", "-20"]);
    assert_eq!(rep.len(), 20, "a negative count allows repeats");
    assert!(rep.iter().all(|f| ["a", "b", "c"].contains(&f.as_str())));
    // Over many draws every field shows up (randomness is real).
    let mut seen = std::collections::HashSet::new();
    for _ in 0..60 {
        seen.insert(q::<String>(&mut c, &["HRANDFIELD", "h"]));
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(q::<Value>(&mut c, &["HRANDFIELD", "nokey"]), Value::Nil);
    assert_eq!(q::<Vec<String>>(&mut c, &["HRANDFIELD", "nokey", "3"]), Vec::<String>::new());
}

#[test]
fn hscan_pages_through_a_big_hash() {
    let s = Server::start();
    let mut c = s.client();
    let n = 1000;
    let mut p = redis::pipe();
    for i in 0..n {
        p.cmd("HSET").arg("big").arg(format!("f{i:04}")).arg(i);
    }
    p.query::<()>(&mut c).unwrap();
    let mut cursor = "0".to_string();
    let mut seen = std::collections::BTreeMap::new();
    let mut calls = 0;
    loop {
        let (next, items): (String, Vec<String>) = q(&mut c, &["HSCAN", "big", &cursor, "COUNT", "100"]);
        calls += 1;
        for kv in items.chunks(2) {
            seen.insert(kv[0].clone(), kv[1].clone());
        }
        if next == "0" {
            break;
        }
        cursor = next;
    }
    assert_eq!(seen.len(), n);
    assert!(calls >= 10, "COUNT 100 pages a 1000-field hash ({calls} calls)");
    assert_eq!(seen["f0042"], "42");
    let (_, m): (String, Vec<String>) = q(&mut c, &["HSCAN", "big", "0", "MATCH", "f000*", "COUNT", "5000"]);
    assert_eq!(m.len(), 20, "MATCH filters fields: f0000..f0009 with values");
    assert_eq!(s.raw().cmd(&["HSCAN", "big", "x"]), "-ERR invalid cursor\r\n");
    assert_eq!(s.raw().cmd(&["HSCAN", "big", "0", "COUNT", "0"]), "-ERR syntax error\r\n");
}

#[test]
fn whole_key_walks_do_not_stall_the_core() {
    let s = Server::start(); // one core: every connection shares it
    let mut r = s.raw();
    let n = 300_000;
    let mut batch = Vec::new();
    for i in 0..n / 500 {
        let mut args: Vec<Vec<u8>> = vec![b"HSET".to_vec(), b"big".to_vec()];
        for j in 0..500 {
            args.push(format!("field:{}", i * 500 + j).into_bytes());
            args.push(b"v".to_vec());
        }
        let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        batch.extend(crate::common::encode_cmd(&refs));
    }
    r.send(&batch);
    for _ in 0..n / 500 {
        assert_eq!(r.read_reply(), b":500\r\n");
    }
    crate::common::assert_does_not_stall(&s, &[b"HGETALL", b"big"], &format!("*{}\r\n", 2 * n));
}
