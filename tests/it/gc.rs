//! Lazy deletion and garbage collection of composite keys: deleting, overwriting,
//! expiring and renaming touch only metadata; a compaction drops the orphaned
//! elements and nothing live. Also: composite keys survive kill -9.

use std::time::{Duration, Instant};

use neokv::storage::{Cf, Storage};

use crate::common::{q, Server};

fn fill_hash(c: &mut redis::Connection, key: &str, n: usize) {
    let mut p = redis::pipe();
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let mut cmd = redis::cmd("HSET");
        cmd.arg(key);
        for i in chunk {
            cmd.arg(format!("field:{i}")).arg(i);
        }
        p.add_command(cmd);
    }
    p.query::<()>(c).unwrap();
}

fn fill_set(c: &mut redis::Connection, key: &str, n: usize) {
    let mut p = redis::pipe();
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let mut cmd = redis::cmd("SADD");
        cmd.arg(key);
        for i in chunk {
            cmd.arg(format!("member:{i}"));
        }
        p.add_command(cmd);
    }
    p.query::<()>(c).unwrap();
}

fn count(storage: &Storage, cf: Cf) -> usize {
    storage.iter_all(cf).count()
}

#[test]
fn deleted_big_keys_are_collected_and_live_ones_kept() {
    let mut s = Server::start();
    let mut c = s.client();
    fill_hash(&mut c, "gone", 50_000);
    fill_hash(&mut c, "overwritten", 10_000);
    fill_set(&mut c, "renamed", 20_000);
    fill_hash(&mut c, "live", 300);
    fill_set(&mut c, "copied", 500);
    // DEL of a 50k-field hash is one metadata write.
    let t = Instant::now();
    assert_eq!(q::<i64>(&mut c, &["DEL", "gone"]), 1);
    let del_ms = t.elapsed().as_secs_f64() * 1e3;
    q::<String>(&mut c, &["SET", "overwritten", "now a string"]);
    assert_eq!(q::<String>(&mut c, &["RENAME", "renamed", "moved"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["COPY", "copied", "copy"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SCARD", "moved"]), 20_000);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "gone", "renamed"]), 0);
    // A renamed key is fully usable: writes and reads go to the namespace it kept.
    assert_eq!(q::<i64>(&mut c, &["SADD", "moved", "extra", "member:7"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SREM", "moved", "member:8"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "moved", "member:7"]), 1);
    // A new key under the old name does not see the old elements.
    assert_eq!(q::<i64>(&mut c, &["SADD", "renamed", "solo"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SCARD", "renamed"]), 1);
    assert_eq!(q::<i64>(&mut c, &["HLEN", "gone"]), 0);
    assert_eq!(q::<i64>(&mut c, &["HSET", "gone", "x", "1"]), 1);
    assert_eq!(q::<Vec<String>>(&mut c, &["HKEYS", "gone"]), vec!["x"]);
    assert!(del_ms < 500.0, "DEL of a 50k-field hash took {del_ms:.1} ms");
    // Applied state is written past RocksDB's WAL: SAVE flushes it, so the
    // stopped server's RocksDB holds it without a replay of the log.
    assert_eq!(q::<String>(&mut c, &["SAVE"]), "OK");
    drop(c);
    s.kill9();
    {
        let storage = Storage::open(&s.dir, &Default::default()).unwrap();
        let before = count(&storage, Cf::Subkey);
        // 50k + 10k orphaned; 20k (moved) + 300 + 500 + 500 + 2 (new keys) live.
        assert!(before >= 50_000 + 10_000 + 20_000 + 300 + 1000, "{before} subkeys before compaction");
        storage.compact_all().unwrap();
        let after = count(&storage, Cf::Subkey);
        let live = 20_000 + 300 + 500 + 500 + 1 + 1;
        assert_eq!(after, live, "orphans dropped ({before} -> {after}), every live element kept");
        assert_eq!(count(&storage, Cf::Links), 1, "the renamed set's link is live");
    }
    s.kill_and_restart();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["SCARD", "moved"]), 20_000);
    assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "moved", "member:19999"]), 1);
    assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "moved", "member:8"]), 0);
    assert_eq!(q::<i64>(&mut c, &["HLEN", "live"]), 300);
    assert_eq!(q::<String>(&mut c, &["HGET", "live", "field:299"]), "299");
    assert_eq!(q::<i64>(&mut c, &["SCARD", "copy"]), 500);
    assert_eq!(q::<String>(&mut c, &["GET", "overwritten"]), "now a string");
    // Renaming back, deleting the holder: the namespace becomes garbage too.
    assert_eq!(q::<String>(&mut c, &["RENAME", "moved", "again"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["SCARD", "again"]), 20_000);
    assert_eq!(q::<i64>(&mut c, &["DEL", "again"]), 1);
    assert_eq!(q::<String>(&mut c, &["SAVE"]), "OK");
    drop(c);
    s.kill9();
    let storage = Storage::open(&s.dir, &Default::default()).unwrap();
    storage.compact_all().unwrap();
    assert_eq!(count(&storage, Cf::Subkey), 300 + 500 + 500 + 1 + 1);
    assert_eq!(count(&storage, Cf::Links), 0, "a link whose holder is gone is dropped");
}

#[test]
fn expired_composite_keys_read_as_absent() {
    let s = Server::start();
    let mut c = s.client();
    fill_set(&mut c, "e", 100);
    assert_eq!(q::<i64>(&mut c, &["PEXPIRE", "e", "150"]), 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while q::<i64>(&mut c, &["SCARD", "e"]) != 0 {
        assert!(Instant::now() < deadline, "the set never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(q::<i64>(&mut c, &["SISMEMBER", "e", "member:1"]), 0);
    assert_eq!(q::<i64>(&mut c, &["SADD", "e", "new"]), 1, "a new set replaces the expired one");
    assert_eq!(q::<Vec<String>>(&mut c, &["SMEMBERS", "e"]), vec!["new"]);
    assert_eq!(q::<i64>(&mut c, &["TTL", "e"]), -1);
}

#[test]
fn composite_keys_survive_kill_9() {
    let mut s = Server::start();
    let mut c = s.client();
    fill_hash(&mut c, "h", 3000);
    fill_set(&mut c, "s", 3000);
    q::<i64>(&mut c, &["HINCRBY", "h", "counter", "41"]);
    q::<i64>(&mut c, &["HINCRBY", "h", "counter", "1"]);
    q::<i64>(&mut c, &["SREM", "s", "member:0"]);
    drop(c);
    s.kill_and_restart();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["HLEN", "h"]), 3001);
    assert_eq!(q::<String>(&mut c, &["HGET", "h", "counter"]), "42");
    assert_eq!(q::<i64>(&mut c, &["SCARD", "s"]), 2999);
    let all: Vec<String> = q(&mut c, &["HGETALL", "h"]);
    assert_eq!(all.len(), 6002, "a big HGETALL (on the blocking pool) returns everything");
    assert_eq!(q::<Vec<String>>(&mut c, &["SMEMBERS", "s"]).len(), 2999);
}

/// A chunked string (past 16 KiB) is a collection of its chunks: a SETRANGE
/// writes the chunk it touches, kill -9 keeps every acknowledged write, and
/// deleting, overwriting or renaming it leaves its chunks to the collector,
/// which drops them and nothing live.
#[test]
fn chunked_strings_survive_kill_9_and_are_collected() {
    let mut s = Server::start();
    let mut c = s.client();
    let v: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8 + 1).collect();
    let _: () = redis::cmd("SET").arg("big").arg(&v).query(&mut c).unwrap();
    let _: () = redis::cmd("SET").arg("gone").arg(&v).query(&mut c).unwrap();
    let _: () = redis::cmd("SET").arg("overwritten").arg(&v).query(&mut c).unwrap();
    let _: () = redis::cmd("SET").arg("renamed").arg(&v).query(&mut c).unwrap();
    // 1 MB past the end: one chunk written, the hole is zeros.
    assert_eq!(q::<i64>(&mut c, &["SETRANGE", "big", "1000000", "tail"]), 1_000_004);
    assert_eq!(q::<i64>(&mut c, &["SETRANGE", "big", "5000", "mid"]), 1_000_004);
    assert_eq!(q::<i64>(&mut c, &["APPEND", "big", "!"]), 1_000_005);
    drop(c);
    s.kill_and_restart();
    let mut c = s.client();
    let mut want = v.clone();
    want.resize(1_000_000, 0);
    want.extend_from_slice(b"tail!");
    want[5000..5003].copy_from_slice(b"mid");
    let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
    assert!(got == want, "GET after kill -9 differs ({} bytes, want {})", got.len(), want.len());
    assert_eq!(q::<i64>(&mut c, &["DEL", "gone"]), 1);
    q::<String>(&mut c, &["SET", "overwritten", "short"]);
    assert_eq!(q::<String>(&mut c, &["RENAME", "renamed", "moved"]), "OK");
    assert_eq!(q::<i64>(&mut c, &["SETRANGE", "moved", "99999", "Z"]), 100_000);
    assert_eq!(q::<String>(&mut c, &["SAVE"]), "OK");
    drop(c);
    s.kill9();
    {
        let storage = Storage::open(&s.dir, &Default::default()).unwrap();
        let before = count(&storage, Cf::Subkey);
        storage.compact_all().unwrap();
        let after = count(&storage, Cf::Subkey);
        // big: the 98 chunks (1 KiB) of its first 100 000 bytes and the one
        // at 1 MB; moved: 98 (in the namespace it kept). Nothing else.
        assert_eq!(after, 99 + 98, "chunks before compaction: {before}");
        assert!(before >= after + 2 * 98, "the deleted and overwritten values' chunks were there: {before}");
    }
    s.kill_and_restart();
    let mut c = s.client();
    let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
    assert!(got == want, "GET after compaction differs");
    let moved: Vec<u8> = redis::cmd("GETRANGE").arg("moved").arg(99_990).arg(-1).query(&mut c).unwrap();
    let mut tail = v[99_990..].to_vec();
    tail[9] = b'Z';
    assert_eq!(moved, tail);
    assert_eq!(q::<String>(&mut c, &["GET", "overwritten"]), "short");
}
