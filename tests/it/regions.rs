//! Several regions (Raft groups) over the slots, spread over two cores.

use crate::common::Server;

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
    // Multi-key commands within one region (hash tags) work; across regions they are refused.
    assert_eq!(r.cmd(&["MSET", "{u}a", "1", "{u}b", "2"]), "+OK\r\n");
    assert_eq!(r.cmd(&["RENAME", "{u}a", "{u}c"]), "+OK\r\n");
    let cross = r.cmd(&["MSET", "key:1", "x", "key:2", "y"]);
    if crate::common::key_slot(b"key:1") as usize * 4 / 16384 != crate::common::key_slot(b"key:2") as usize * 4 / 16384
    {
        assert_eq!(cross, "-CROSSSLOT Keys in request don't hash to the same slot\r\n");
    }
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
