//! Several regions (Raft groups) over the slots, spread over two cores.

use std::time::Duration;

use crate::common::{one_per_region, Server};

#[test]
fn single_key_commands_route_to_their_regions() {
    let mut s = Server::start_with(&["--cores", "2", "--regions", "4"]);
    let mut r = s.raw();
    for i in 0..400 {
        assert_eq!(r.cmd(&["SET", &format!("key:{i}"), &i.to_string()]), "+OK\r\n");
        assert_eq!(r.cmd(&["INCR", &format!("key:{i}")]), format!(":{}\r\n", i + 1));
    }
    // Keys landed in every region: their slots span all four ranges.
    let mut regions = std::collections::BTreeSet::new();
    for i in 0..400 {
        let slot = crate::common::key_slot(format!("key:{i}").as_bytes());
        regions.insert(slot as usize * 4 / 16384);
    }
    assert_eq!(regions.len(), 4);
    assert_eq!(r.cmd(&["DBSIZE"]), ":400\r\n");
    // Multi-key commands within one region (hash tags) and across regions work.
    assert_eq!(r.cmd(&["MSET", "{u}a", "1", "{u}b", "2"]), "+OK\r\n");
    assert_eq!(r.cmd(&["RENAME", "{u}a", "{u}c"]), "+OK\r\n");
    s.kill_and_restart();
    let mut r = s.raw();
    for i in (0..400).step_by(7) {
        assert_eq!(r.cmd(&["GET", &format!("key:{i}")]), format!("${}\r\n{}\r\n", (i + 1).to_string().len(), i + 1));
    }
    assert_eq!(r.cmd(&["GET", "{u}c"]), "$1\r\n1\r\n");
    assert_eq!(r.cmd(&["FLUSHALL"]), "+OK\r\n");
    assert_eq!(r.cmd(&["DBSIZE"]), ":0\r\n");
}

#[test]
fn a_pipeline_across_regions_takes_effect_in_order() {
    // Two regions on two cores: a connection pipelines writes that alternate
    // between regions; a watcher must never see a later write without the earlier.
    let s = Server::start_with(&["--cores", "2", "--regions", "2"]);
    // Find two keys in different regions (the slot halves).
    let (mut a, mut b) = (None, None);
    for i in 0..1000 {
        let k = format!("key{i}");
        let half = crate::common::key_slot(k.as_bytes()) < 8192;
        if half && a.is_none() {
            a = Some(k);
        } else if !half && b.is_none() {
            b = Some(k);
        }
    }
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut w = s.raw();
    let mut watcher = s.raw();
    for round in 0..200 {
        let mut batch = Vec::new();
        for step in 0..10 {
            let v = (round * 10 + step).to_string();
            batch.extend(crate::common::encode_cmd(&[b"SET", a.as_bytes(), v.as_bytes()]));
            batch.extend(crate::common::encode_cmd(&[b"SET", b.as_bytes(), v.as_bytes()]));
        }
        w.send(&batch);
        // While the pipeline is applied, b (written second) may never be ahead of a.
        for _ in 0..3 {
            let vb = watcher.cmd(&["GET", &b]);
            let va = watcher.cmd(&["GET", &a]);
            let num = |r: &str| r.lines().nth(1).and_then(|l| l.parse::<i64>().ok()).unwrap_or(-1);
            assert!(num(&va) >= num(&vb), "saw {b}={} before {a}={}", num(&vb), num(&va));
        }
        for _ in 0..20 {
            assert_eq!(w.read_reply(), b"+OK\r\n");
        }
    }
}

fn voided_at_open(r: &mut crate::common::Raw) -> String {
    let info = r.cmd(&["INFO", "persistence"]);
    info.lines().find_map(|l| l.strip_prefix("neokv_cross_voided_at_open:")).unwrap_or("missing").to_string()
}

/// Multi-key commands whose keys span regions run whole (`shard::cross`), in
/// order with the connection's other writes, and stay whole across a restart.
#[test]
fn multi_key_commands_across_regions_are_atomic() {
    let mut s = Server::start_with(&["--cores", "2", "--regions", "2"]);
    let mut r = s.raw();
    let (a, b) = one_per_region("mk");
    assert_eq!(r.cmd(&["MSET", &a, "1", &b, "2"]), "+OK\r\n");
    assert_eq!(r.cmd(&["MGET", &a, &b]), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    assert_eq!(r.cmd(&["MSETNX", &a, "x", "fresh", "y"]), ":0\r\n");
    assert_eq!(r.cmd(&["RENAME", &a, &b]), "+OK\r\n");
    assert_eq!(r.cmd(&["MGET", &a, &b]), "*2\r\n$-1\r\n$1\r\n1\r\n");
    assert_eq!(r.cmd(&["SADD", &a, "m1", "m2"]), ":2\r\n");
    assert_eq!(r.cmd(&["DEL", &b]), ":1\r\n");
    assert_eq!(r.cmd(&["SMOVE", &a, &b, "m1"]), ":1\r\n");
    assert_eq!(r.cmd(&["SMEMBERS", &b]), "*1\r\n$2\r\nm1\r\n");
    assert_eq!(r.cmd(&["COPY", &a, &format!("{b}:copy")]), ":1\r\n");
    assert_eq!(r.cmd(&["SUNIONSTORE", &b, &a, &b]), ":2\r\n");
    assert_eq!(r.cmd(&["DEL", &a, &b]), ":2\r\n");
    // A pipeline that alternates single-region and cross-region writes takes
    // effect in the order sent.
    let mut batch = Vec::new();
    for i in 0..50 {
        let v = i.to_string();
        batch.extend(crate::common::encode_cmd(&[b"SET", a.as_bytes(), v.as_bytes()]));
        batch.extend(crate::common::encode_cmd(&[b"MSET", b.as_bytes(), v.as_bytes(), b"other", v.as_bytes()]));
        batch.extend(crate::common::encode_cmd(&[b"INCR", a.as_bytes()]));
    }
    r.send(&batch);
    for i in 0..50 {
        assert_eq!(r.read_reply(), b"+OK\r\n");
        assert_eq!(r.read_reply(), b"+OK\r\n");
        assert_eq!(String::from_utf8(r.read_reply()).unwrap(), format!(":{}\r\n", i + 1));
    }
    s.kill_and_restart();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["MGET", &a, &b, "other"]), "*3\r\n$2\r\n50\r\n$2\r\n49\r\n$2\r\n49\r\n");
    assert_eq!(voided_at_open(&mut r), "0");
}

/// On a two-region server in `dir`: write "before" to region 0's key
/// (`first`) or "10" to region 1's, arm the failpoint `point`, send `MSET a 1
/// b 2` over both regions (keys starting with `prefix`), see the crash point
/// end the process, and restart it.
fn cross_mset_crashes_at(dir: &std::path::Path, point: &str, prefix: &str, first: bool) -> (Server, String, String) {
    crate::common::require_failpoints();
    let args = ["--cores", "2", "--regions", "2"];
    let mut s = Server::start_in_env(dir, &args, &[]);
    let mut r = s.raw();
    let (a, b) = one_per_region(prefix);
    let before = if first { ["SET", a.as_str(), "before"] } else { ["SET", b.as_str(), "10"] };
    assert_eq!(r.cmd(&before), "+OK\r\n");
    assert_eq!(r.cmd(&["NEOKV.FAILPOINT", point, "crash"]), "+OK\r\n");
    r.send(&crate::common::encode_cmd(&[b"MSET", a.as_bytes(), b"1", b.as_bytes(), b"2"]));
    assert_eq!(s.wait_exit(Duration::from_secs(20)), Some(70), "the crash point must fire");
    s.restart_with(&args, &[]);
    (s, a, b)
}

/// A crash after a cross-region write reached one participant's log but
/// before it reached the other's (the `cross-cut` failpoint): it was never
/// acknowledged, so the restart voids the copy it finds and applies neither
/// half, and the server serves (it does not wait for the missing copy).
#[test]
fn a_cross_region_write_cut_off_before_every_log_held_it_is_voided() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut s, a, b) = cross_mset_crashes_at(tmp.path(), "cross-cut", "crash:cut:", true);
    let mut r = s.raw();
    assert_eq!(voided_at_open(&mut r), "1", "region 0's log held the cut write");
    assert_eq!(r.cmd(&["MGET", &a, &b]), "*2\r\n$6\r\nbefore\r\n$-1\r\n");
    // Both regions take writes, single and cross-region.
    assert_eq!(r.cmd(&["MSET", &a, "x", &b, "y"]), "+OK\r\n");
    s.kill_and_restart();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["MGET", &a, &b]), "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
    assert_eq!(voided_at_open(&mut r), "0");
}

/// A crash right after the executor wrote a cross-region write, before
/// anything was flushed (the `cross-applied` failpoint): the entry is in
/// every participant's log, so the restart replays it, the copies meet again,
/// and it applies once, whole.
#[test]
fn a_cross_region_write_replays_whole_after_a_crash_in_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, a, b) = cross_mset_crashes_at(tmp.path(), "cross-applied", "crash:applied:", false);
    let mut r = s.raw();
    assert_eq!(r.cmd(&["MGET", &a, &b]), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    assert_eq!(voided_at_open(&mut r), "0");
    // It applied once: a transaction after it sees exactly its values.
    assert_eq!(r.cmd(&["INCRBY", &b, "5"]), ":7\r\n");
}

/// FLUSHALL with a region per core is one cross-region write: a reader of
/// keys in both regions (one snapshot) never sees one flushed and the other not.
#[test]
fn flushall_across_regions_is_atomic() {
    let s = Server::start_with(&["--cores", "2", "--regions", "2"]);
    let (a, b) = one_per_region("fl");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (port, stop, a, b) = (s.port, stop.clone(), a.clone(), b.clone());
        std::thread::spawn(move || {
            let mut r = crate::common::Raw::connect(port);
            let mut seen = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let got = r.cmd(&["MGET", &a, &b]);
                let both = got == "*2\r\n$1\r\n1\r\n$1\r\n1\r\n";
                assert!(both || got == "*2\r\n$-1\r\n$-1\r\n", "half a FLUSHALL seen: {got:?}");
                seen += both as u32;
            }
            seen
        })
    };
    let mut w = s.raw();
    for _ in 0..300 {
        assert_eq!(w.cmd(&["MSET", &a, "1", &b, "1"]), "+OK\r\n");
        assert_eq!(w.cmd(&["FLUSHALL"]), "+OK\r\n");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0, "the reader saw the keys set at least once");
    assert_eq!(w.cmd(&["DBSIZE"]), ":0\r\n");
}

/// A blocking move between keys of two regions waits, is woken by a push to
/// its source, and moves the element whole.
#[test]
fn a_blocking_move_across_regions_is_woken() {
    let s = Server::start_with(&["--cores", "2", "--regions", "2"]);
    let (src, dst) = one_per_region("bl");
    let mut blocked = s.raw();
    blocked.send(&crate::common::encode_cmd(&[b"BLMOVE", src.as_bytes(), dst.as_bytes(), b"LEFT", b"RIGHT", b"5"]));
    std::thread::sleep(Duration::from_millis(200));
    let mut w = s.raw();
    assert_eq!(w.cmd(&["RPUSH", &src, "x"]), ":1\r\n");
    assert_eq!(blocked.read_reply(), b"$1\r\nx\r\n");
    assert_eq!(w.cmd(&["LRANGE", &dst, "0", "-1"]), "*1\r\n$1\r\nx\r\n");
    assert_eq!(w.cmd(&["EXISTS", &src]), ":0\r\n");
}

/// NEOKV.REGIONS reports every region: its slots, its keys (they add up to
/// DBSIZE), its write rate while writes go on, its Raft log, and this node
/// as its one voter and leader.
#[test]
fn neokv_regions_reports_every_region() {
    let s = Server::start_with(&["--cores", "2", "--regions", "4"]);
    let mut con = s.client();
    for i in 0..400 {
        let _: () = redis::cmd("SET").arg(format!("key:{i}")).arg(i).query(&mut con).unwrap();
    }
    // A writer that goes on while the rates are measured (over a second).
    let port = s.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut r = crate::common::Raw::connect(port);
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(r.cmd(&["INCR", &format!("hot:{}", i % 64)]), format!(":{}\r\n", i / 64 + 1));
                i += 1;
            }
        })
    };
    std::thread::sleep(Duration::from_millis(2500));
    let regions: Vec<std::collections::HashMap<String, redis::Value>> =
        redis::cmd("NEOKV.REGIONS").query(&mut con).unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let int = |v: &redis::Value| match v {
        redis::Value::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    };
    assert_eq!(regions.len(), 4, "{regions:?}");
    let (mut keys, mut next_slot) = (0, 0);
    for (i, r) in regions.iter().enumerate() {
        assert_eq!(int(&r["id"]), i as i64);
        let redis::Value::Array(slots) = &r["slots"] else { panic!("{r:?}") };
        assert_eq!((int(&slots[0]), int(&slots[1])), (next_slot, next_slot + 4095), "{r:?}");
        next_slot += 4096;
        keys += int(&r["keys"]);
        assert!(int(&r["log_bytes"]) > 0 && int(&r["log_entries"]) > 0, "{r:?}");
        assert!(int(&r["ops_per_sec"]) > 0, "every region takes some of the hot keys' writes: {r:?}");
        assert_eq!(r["voters"], redis::Value::Array(vec![redis::Value::Int(1)]), "{r:?}");
        assert_eq!(r["learners"], redis::Value::Array(vec![]), "{r:?}");
        assert_eq!(int(&r["leader"]), 1);
    }
    let dbsize: i64 = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!((keys, dbsize), (464, 464));
}
