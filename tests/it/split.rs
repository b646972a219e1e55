//! Regions that split by size (`--region-split-mb`): a cluster filled past
//! the split size ends with more regions, each on the same voters as the one
//! it came from, every slot in exactly one of them on every node, every
//! acknowledged write readable, and the regions as they are after a restart.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::cluster::{ids_of, int, regions_of, Client, Cluster, RegionMap};
use crate::common::key_slot;

fn text(v: &redis::Value) -> String {
    match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    }
}

/// A node's regions as `(first slot, last slot, id, epoch)`, ascending.
fn layout(port: u16) -> Vec<(i64, i64, i64, i64)> {
    let mut out: Vec<(i64, i64, i64, i64)> = regions_of(port)
        .iter()
        .map(|r| {
            let slots = ids_of(&r["slots"]);
            (slots[0] as i64, slots[1] as i64, int(&r["id"]), int(&r["epoch"]))
        })
        .collect();
    out.sort();
    out
}

/// Every slot once, in order.
fn covers_every_slot(l: &[(i64, i64, i64, i64)]) -> bool {
    let mut next = 0;
    for &(s, e, _, _) in l {
        if s != next || e < s {
            return false;
        }
        next = e + 1;
    }
    next == 16384
}

/// Wait until every node shows the same layout with at least `want`
/// regions, each with a leader; that layout.
fn agreed_layout(c: &Cluster, want: usize, limit: Duration) -> Vec<(i64, i64, i64, i64)> {
    let deadline = Instant::now() + limit;
    loop {
        let views: Vec<_> = c.nodes.iter().map(|n| layout(n.port)).collect();
        let led =
            c.nodes.iter().all(|n| regions_of(n.port).iter().all(|r| matches!(r["leader"], redis::Value::Int(_))));
        if views[0].len() >= want && views.iter().all(|v| *v == views[0]) && led {
            assert!(covers_every_slot(&views[0]), "{:?}", views[0]);
            return views[0].clone();
        }
        if Instant::now() > deadline {
            c.dump_regions();
            panic!("no agreed layout of {want}+ regions within {limit:?}: {views:?}");
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Three nodes, three regions to start with, 1 MiB split size: about 12 MiB
/// of writes make the regions split again and again while the writes go on.
/// Every split keeps its parent's voters and starts led by its parent's
/// leader; all nodes agree on the slots, ids and epochs; CLUSTER SHARDS and
/// CLUSTER SLOTS list the same ranges; every key reads back; a hash
/// deleted and made again after its slot moved to a new region shows only
/// its new fields (versions stay unique); a restarted node comes back with
/// the same regions (or later splits of them).
#[test]
fn regions_split_by_size_under_writes_and_keep_every_key() {
    let mut c = Cluster::start_with(3, &["--regions", "3", "--replicas", "3", "--region-split-mb", "1"]);
    assert_eq!(layout(c.nodes[0].port).len(), 3);
    let mut client = Client::new(&c);
    // A hash with many fields, before any split.
    for i in 0..200 {
        client.cmd(&["HSET", "{old}h", &format!("f{i}"), "x"], Duration::from_secs(10)).unwrap();
    }
    let value = "v".repeat(1500);
    let keys: Vec<String> = (0..8000).map(|i| format!("split:{i}")).collect();
    let started = Instant::now();
    for (i, k) in keys.iter().enumerate() {
        let v = format!("{i}:{value}");
        let r = client.cmd(&["SET", k, &v], Duration::from_secs(20)).unwrap();
        assert_eq!(r, redis::Value::Okay, "SET {k}");
    }
    eprintln!("8000 SETs of 1.5 KB in {:?}", started.elapsed());
    let l = agreed_layout(&c, 10, Duration::from_secs(60));
    eprintln!("layout after the writes: {l:?}");
    // A region split off has an id made of the epoch it was made at and its
    // first slot (a region keeps its first slot when it splits again).
    for &(s, _, id, epoch) in &l {
        if id >= 16384 {
            assert_eq!(id & 0x3fff, s, "region {id} starts at its slot");
            assert!((1..=epoch).contains(&(id >> 14)), "region {id} made at an epoch up to {epoch}");
        }
    }
    // Every region on the same three voters, with a leader among them.
    for r in regions_of(c.nodes[0].port) {
        let voters = ids_of(&r["voters"]);
        assert_eq!(voters, vec![1, 2, 3], "{r:?}");
        assert!(voters.contains(&(int(&r["leader"]) as u64)), "{r:?}");
    }
    // CLUSTER SHARDS and CLUSTER SLOTS show the same ranges, on every node.
    for n in &c.nodes {
        let mut con = n.client();
        let shards: Vec<RegionMap> = redis::cmd("CLUSTER").arg("SHARDS").query(&mut con).unwrap();
        let mut ranges: Vec<(i64, i64)> = shards
            .iter()
            .map(|s| {
                let r = ids_of(&s["slots"]);
                (r[0] as i64, r[1] as i64)
            })
            .collect();
        ranges.sort();
        let want: Vec<(i64, i64)> = l.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(ranges, want, "CLUSTER SHARDS on node {}", n.id);
        let slots: Vec<redis::Value> = redis::cmd("CLUSTER").arg("SLOTS").query(&mut con).unwrap();
        let mut ranges: Vec<(i64, i64)> = slots
            .iter()
            .map(|s| match s {
                redis::Value::Array(a) => (int(&a[0]), int(&a[1])),
                o => panic!("{o:?}"),
            })
            .collect();
        ranges.sort();
        assert_eq!(ranges, want, "CLUSTER SLOTS on node {}", n.id);
    }
    // Every key reads back.
    for (i, k) in keys.iter().enumerate() {
        let got = client.cmd(&["GET", k], Duration::from_secs(10)).unwrap();
        assert_eq!(text(&got), format!("{i}:{value}"), "GET {k}");
    }
    // The old hash, deleted and made again in whatever region holds it now.
    let slot = key_slot(b"{old}h") as i64;
    let region = l.iter().find(|r| r.0 <= slot && slot <= r.1).unwrap();
    eprintln!("{{old}}h (slot {slot}) is in region {region:?}");
    assert_eq!(int(&client.cmd(&["DEL", "{old}h"], Duration::from_secs(10)).unwrap()), 1);
    client.cmd(&["HSET", "{old}h", "new", "y"], Duration::from_secs(10)).unwrap();
    let all = client.cmd(&["HGETALL", "{old}h"], Duration::from_secs(10)).unwrap();
    assert_eq!(all, redis::Value::Array(vec![bulk("new"), bulk("y")]), "only the new field");
    assert_eq!(int(&client.cmd(&["HLEN", "{old}h"], Duration::from_secs(10)).unwrap()), 1);

    // A node killed and restarted keeps its regions, and serves them: each
    // region of before is there, or split further (a region past the split
    // size whose last count was refused splits when counted again), never
    // one of before undone.
    let before = layout(c.nodes[2].port);
    c.node(3).kill9();
    c.start_node(3);
    c.wait_ok(Duration::from_secs(60));
    let after = agreed_layout(&c, before.len(), Duration::from_secs(30));
    assert!(refines(&after, &before), "regions after a restart: {after:?}, before: {before:?}");
    let mut by_leader: BTreeMap<i64, usize> = BTreeMap::new();
    for r in regions_of(c.nodes[0].port) {
        *by_leader.entry(int(&r["leader"])).or_default() += 1;
    }
    eprintln!("leaders after the restart: {by_leader:?}");
    for (i, k) in keys.iter().enumerate().step_by(7) {
        let got = client.cmd(&["GET", k], Duration::from_secs(10)).unwrap();
        assert_eq!(text(&got), format!("{i}:{value}"), "GET {k} after the restart");
    }
    // Node 3 stores the keys of every region (it holds all of them).
    let mut stored = 0;
    for r in regions_of(c.nodes[2].port) {
        stored += int(&r["keys"]);
    }
    assert_eq!(stored, 8001, "keys stored on node 3");
}

/// `after` (every slot once) keeps each region of `before`, or covers its
/// slots with regions of later epochs (splits of it).
fn refines(after: &[(i64, i64, i64, i64)], before: &[(i64, i64, i64, i64)]) -> bool {
    covers_every_slot(after)
        && before.iter().all(|b| {
            let inside: Vec<_> = after.iter().filter(|a| a.0 >= b.0 && a.1 <= b.1).collect();
            let covered = inside.iter().map(|a| a.1 - a.0 + 1).sum::<i64>() == b.1 - b.0 + 1;
            covered && ((inside.len() == 1 && inside[0] == b) || inside.iter().all(|a| a.3 > b.3))
        })
}

fn bulk(s: &str) -> redis::Value {
    redis::Value::BulkString(s.as_bytes().to_vec())
}

/// The cluster clients users run keep working while regions split under
/// them (1 MiB regions): memtier_benchmark `--cluster-mode` writes about
/// 8 MB with no error response; the `redis` crate's cluster client writes
/// keys across the splits and reads every one back; `redis-cli -c` and
/// redis-py's RedisCluster read them after. Each tool that is installed.
#[test]
fn cluster_clients_keep_working_across_splits() {
    let c = Cluster::start_with(3, &["--regions", "3", "--replicas", "3", "--region-split-mb", "1"]);
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    if let Some(mut m) = crate::cluster::tool("memtier_benchmark") {
        let out = m
            .args(["-s", "127.0.0.1", "-p", &ports[0].to_string(), "--cluster-mode", "-t", "2", "-c", "4"])
            .args(["-n", "2000", "-d", "1000", "--ratio", "1:1", "--key-pattern", "P:P", "--hide-histogram"])
            .args(["--key-maximum", "100000"])
            .output()
            .unwrap();
        let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "memtier_benchmark --cluster-mode failed: {text} {err}");
        assert!(!err.contains("error response"), "memtier saw errors across splits: {err}");
        let totals = text.lines().find(|l| l.starts_with("Totals")).unwrap_or_default().to_string();
        eprintln!("memtier_benchmark --cluster-mode: {totals}");
    }
    let client = redis::cluster::ClusterClient::new(vec![format!("redis://127.0.0.1:{}/", ports[1])]).unwrap();
    let mut con = client.get_connection().unwrap();
    let value = "c".repeat(1500);
    for i in 0..3000 {
        redis::cmd("SET").arg(format!("crate:{i}")).arg(format!("{i}{value}")).query::<()>(&mut con).unwrap();
    }
    let l = agreed_layout(&c, 6, Duration::from_secs(60));
    eprintln!("{} regions after the writes", l.len());
    for i in 0..3000 {
        let v: String = redis::cmd("GET").arg(format!("crate:{i}")).query(&mut con).unwrap();
        assert_eq!(v, format!("{i}{value}"), "crate:{i}");
    }
    eprintln!("redis crate cluster client: 3000 SETs of 1.5 KB across the splits, every one read back");
    if let Some(mut cli) = crate::cluster::tool("redis-cli") {
        let out = cli.args(["-c", "-p", &ports[2].to_string(), "GET", "crate:2999"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("2999{value}"));
        eprintln!("redis-cli -c: GET after the splits");
    }
    match crate::cluster::python_with_redis() {
        Some(py) => {
            let script = r#"
import sys
from redis.cluster import RedisCluster
rc = RedisCluster(host="127.0.0.1", port=int(sys.argv[1]))
for i in range(0, 3000, 7):
    assert rc.get(f"crate:{i}").decode().startswith(str(i)), i
for i in range(200):
    rc.set(f"py:{i}", i)
assert [int(rc.get(f"py:{i}")) for i in range(200)] == list(range(200))
print(f"redis-py RedisCluster: {len(rc.get_primaries())} primaries, reads and writes across the splits")
"#;
            let out = std::process::Command::new(&py).arg("-c").arg(script).arg(ports[0].to_string()).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "redis-py: {text} {}", String::from_utf8_lossy(&out.stderr));
            eprint!("{text}");
        }
        None => eprintln!("*** python3 with redis-py is not installed: its part of this test did not run ***"),
    }
}

/// A transaction watching a key whose slot moved to another region since
/// WATCH (a split) fails as one whose watched key changed, as in Redis (EXEC
/// answers nil and runs nothing), not as keys of two slots (CROSSSLOT); the
/// key watched again after the split, the transaction runs.
#[test]
fn a_watch_across_a_split_fails_the_transaction_like_a_change() {
    let c = Cluster::start_with(1, &["--regions", "1", "--replicas", "1", "--region-split-mb", "1"]);
    let port = c.nodes[0].port;
    // The last slot: the upper part of a region is what a split moves.
    let key = (0..).map(|i| format!("w{i}")).find(|k| key_slot(k.as_bytes()) == 16383).unwrap();
    let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap().get_connection().unwrap();
    let q = |con: &mut redis::Connection, args: &[&str]| {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<redis::Value>(con).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    q(&mut con, &["SET", &key, "0"]);
    q(&mut con, &["WATCH", &key]);
    let first = layout(port);
    assert_eq!(first.len(), 1, "{first:?}");
    let mut client = Client::new(&c);
    let value = "f".repeat(1500);
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut n = 0;
    loop {
        for _ in 0..300 {
            client.cmd(&["SET", &format!("fill:{n}"), &value], Duration::from_secs(10)).unwrap();
            n += 1;
        }
        let l = layout(port);
        if l.iter().any(|r| r.1 == 16383 && r.2 != first[0].2) {
            eprintln!("after {n} writes of 1.5 KB: {l:?}");
            break;
        }
        assert!(Instant::now() < deadline, "no split within 90 s: {l:?}");
    }
    q(&mut con, &["MULTI"]);
    assert_eq!(q(&mut con, &["SET", &key, "1"]), redis::Value::SimpleString("QUEUED".into()));
    assert_eq!(q(&mut con, &["EXEC"]), redis::Value::Nil, "EXEC after the watched key's slot moved");
    assert_eq!(text(&q(&mut con, &["GET", &key])), "0", "the failed transaction ran nothing");
    // Watched in its new region: the transaction runs.
    q(&mut con, &["WATCH", &key]);
    q(&mut con, &["MULTI"]);
    q(&mut con, &["SET", &key, "2"]);
    assert_eq!(q(&mut con, &["EXEC"]), redis::Value::Array(vec![redis::Value::Okay]));
    assert_eq!(text(&q(&mut con, &["GET", &key])), "2");
}
