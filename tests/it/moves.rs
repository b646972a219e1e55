//! Clients while replicas and leaderships move (issue 35's "clients during
//! change"): a node joins under a cluster client's load; its share of the
//! replicas moves to it (a leader whose replica is dropped hands its
//! leadership over first) and the rebalance hands it its share of the
//! leaderships. A Redis Cluster client sees MOVED at most, never an error.

use std::time::{Duration, Instant};

use crate::cluster::{ask, Cluster};

/// memtier_benchmark --cluster-mode runs against three nodes while a fourth
/// joins (CLUSTER ADDNODE) and takes its share of replicas and leaders: no
/// error response (CLUSTERDOWN while an election runs, TRYAGAIN for a write
/// refused as leadership moved); the redis crate's cluster client beside it
/// reads back every write it makes; node 4 ends up leading regions.
#[test]
fn cluster_clients_keep_working_across_a_move() {
    let Some(mut memtier) = crate::cluster::tool("memtier_benchmark") else {
        eprintln!(
            "*** memtier_benchmark is not installed: this test did not run (../shared/tools/build-memtier.sh) ***"
        );
        return;
    };
    let mut c = Cluster::start(3);
    c.wait_settled(Duration::from_secs(30));
    let port = c.nodes[0].port;
    let leaders_before = leaders(port);
    let load = std::thread::spawn(move || {
        memtier
            .args(["-s", "127.0.0.1", "-p", &port.to_string(), "--cluster-mode", "-t", "2", "-c", "4"])
            .args(["--test-time", "25", "-d", "100", "--ratio", "1:1", "--key-pattern", "R:R"])
            .args(["--key-maximum", "20000", "--hide-histogram"])
            .output()
            .unwrap()
    });
    // Beside it, the redis crate's cluster client writes keys of its own
    // and reads each back at once.
    let crate_port = c.nodes[1].port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let client = redis::cluster::ClusterClient::new(vec![format!("redis://127.0.0.1:{crate_port}/")]).unwrap();
            let mut con = client.get_connection().unwrap();
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let (k, v) = (format!("crate:{n}"), format!("v{n}"));
                redis::cmd("SET").arg(&k).arg(&v).query::<()>(&mut con).unwrap_or_else(|e| panic!("SET {k}: {e}"));
                let got: String = redis::cmd("GET").arg(&k).query(&mut con).unwrap_or_else(|e| panic!("GET {k}: {e}"));
                assert_eq!(got, v, "{k}");
                n += 1;
            }
            n
        })
    };
    std::thread::sleep(Duration::from_secs(3));
    let cport4 = c.join_node(4);
    let started = Instant::now();
    let r = ask(port, &["CLUSTER", "ADDNODE", "4", &format!("127.0.0.1:{cport4}")], Duration::from_secs(60));
    assert_eq!(r.as_deref(), Some("+OK\r\n"), "ADDNODE 4");
    eprintln!("node 4 took its share of the replicas after {:?}", started.elapsed());
    let out = load.join().unwrap();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let written = writer.join().expect("the redis crate's cluster client failed across the move");
    eprintln!("redis crate cluster client: {written} SETs, each read back, across the move");
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let leaders_after = leaders(port);
    eprintln!("leaders before {leaders_before:?}, after {leaders_after:?}");
    assert!(out.status.success(), "memtier_benchmark --cluster-mode failed: {text} {err}");
    assert!(!err.contains("error response"), "memtier saw errors across the move: {err}");
    let totals = text.lines().find(|l| l.starts_with("Totals")).unwrap_or_default().to_string();
    eprintln!("memtier_benchmark --cluster-mode across the move: {totals}");
    // The move did move leaderships under the load (else the test proves nothing).
    assert!(leaders_after.iter().any(|&(_, l)| l == 4), "node 4 leads nothing: {leaders_after:?}");
}

/// Each region's leader, as NEOKV.REGIONS on `port` shows it.
fn leaders(port: u16) -> Vec<(i64, u64)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let regions = crate::cluster::regions_of(port);
        let led: Vec<(i64, u64)> = regions
            .iter()
            .map(|r| match r["leader"] {
                redis::Value::Int(l) => (crate::cluster::int(&r["id"]), l as u64),
                _ => (crate::cluster::int(&r["id"]), 0),
            })
            .collect();
        if led.iter().all(|&(_, l)| l != 0) || Instant::now() >= deadline {
            return led;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
