//! Servers for the client's tests: a NeoKV (the workspace's `neokv-server`)
//! and a redis-server, each started on a free loopback port in a temporary
//! directory and killed when dropped.

#![allow(dead_code)]

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Which server a test talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NeoKv,
    Redis,
}

pub struct Server {
    pub kind: Kind,
    pub port: u16,
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// More server flags (cluster mode).
    extra: Vec<String>,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A free port for a Redis Cluster node, whose cluster bus listens 10000
/// above it: both must be free (and the bus's within range), or the node
/// never starts.
pub fn free_cluster_port() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if port <= 55_535 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// The NeoKV binary: `$NEOKV_BIN`, else `neokv-server` in the workspace's
/// target directory for this build's profile (cargo builds it for the server
/// crate's own tests in the same `cargo test --workspace`).
fn neokv_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("NEOKV_BIN") {
        return p.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| option_env!("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let bin = target.join(profile).join("neokv-server");
    assert!(
        bin.exists(),
        "{} is missing: build it first (`cargo build --release --bin neokv-server`) or set NEOKV_BIN",
        bin.display()
    );
    bin
}

impl Server {
    pub fn start(kind: Kind) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Server { kind, port: free_port(), child: None, dir, extra: Vec::new() };
        s.spawn();
        s
    }

    /// A NeoKV on `port` with more flags.
    pub fn neokv_with(port: u16, extra: Vec<String>) -> Server {
        Server::start_with(Kind::NeoKv, port, extra)
    }

    /// A server of `kind` on `port` with more flags.
    pub fn start_with(kind: Kind, port: u16, extra: Vec<String>) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Server { kind, port, child: None, dir, extra };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let port = self.port.to_string();
        let mut cmd = match self.kind {
            Kind::NeoKv => {
                let mut c = Command::new(neokv_bin());
                c.args(["--port", &port, "--cores", "1", "--no-pin", "--dir"]).arg(self.dir.path()).args(&self.extra);
                c
            }
            Kind::Redis => {
                let found = Command::new("sh").args(["-c", "command -v redis-server"]).output().unwrap();
                assert!(
                    found.status.success(),
                    "redis-server is not installed: `make deps` (apt install redis-server)"
                );
                let mut c = Command::new("redis-server");
                c.args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir"])
                    .arg(self.dir.path())
                    .args(&self.extra);
                c
            }
        };
        let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start the server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                let mut buf = [0u8; 7];
                if s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n" {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "{:?} never answered on port {}", self.kind, self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// kill -9, then start again on the same port and data directory.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback proxy to `port` that holds every chunk the client sends for
/// `delay` before passing it on: each round trip costs at least `delay`.
pub fn slow_proxy(port: u16, delay: Duration) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let me = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else { continue };
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                while let Ok(n @ 1..) = c_in.read(&mut buf) {
                    std::thread::sleep(delay);
                    if s_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = s_out.shutdown(std::net::Shutdown::Both);
            });
            let (mut s_in, mut c_out) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s_in, &mut c_out);
                let _ = c_out.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    me
}

/// Three NeoKV nodes in cluster mode, once every node says `cluster_state:ok`
/// and each leads some slots.
pub fn neokv_cluster() -> Vec<Server> {
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let cports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let peers: Vec<String> = cports.iter().enumerate().map(|(i, p)| format!("{}=127.0.0.1:{p}", i + 1)).collect();
    let nodes: Vec<Server> = (0..3)
        .map(|i| {
            let extra = [
                "--node-id",
                &(i + 1).to_string(),
                "--cluster-port",
                &cports[i].to_string(),
                "--peers",
                &peers.join(","),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            Server::neokv_with(ports[i], extra)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    for n in &nodes {
        loop {
            let masters =
                cluster_nodes(n.port).map_or(0, |t| t.lines().filter(|l| l.split_whitespace().count() > 8).count());
            if masters == 3 {
                break;
            }
            assert!(Instant::now() < deadline, "the cluster never settled");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    nodes
}

/// A Redis Cluster of three redis-server masters (no replicas), made with
/// `redis-cli --cluster create`, once every node says `cluster_state:ok`.
pub fn redis_cluster() -> Vec<Server> {
    let extra = || ["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"].map(String::from).to_vec();
    let nodes: Vec<Server> = (0..3).map(|_| Server::start_with(Kind::Redis, free_cluster_port(), extra())).collect();
    let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
    let out = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .expect("redis-cli (apt install redis-tools)");
    assert!(out.status.success(), "redis-cli --cluster create: {}", String::from_utf8_lossy(&out.stdout));
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in &nodes {
        loop {
            let ok = redis::Client::open(format!("redis://127.0.0.1:{}/", n.port))
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
                .and_then(|mut c| redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut c))
                .is_ok_and(|i| i.contains("cluster_state:ok"));
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "the Redis Cluster never reached cluster_state:ok");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    nodes
}

/// CLUSTER NODES of the node on `port`.
pub fn cluster_nodes(port: u16) -> Option<String> {
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/")).ok()?;
    let mut con = c.get_connection_with_timeout(Duration::from_secs(2)).ok()?;
    redis::cmd("CLUSTER").arg("NODES").query(&mut con).ok()
}

/// The index in `nodes` of the running node that says it leads `slot`.
pub fn leader_of_slot(nodes: &[Server], slot: u16) -> Option<usize> {
    nodes.iter().enumerate().filter(|(_, n)| n.child.is_some()).find_map(|(i, n)| {
        let text = cluster_nodes(n.port)?;
        let me = text.lines().find(|l| l.contains("myself"))?.to_string();
        me.split_whitespace()
            .skip(8)
            .any(|r| {
                let (lo, hi) = r.split_once('-').unwrap_or((r, r));
                matches!((lo.parse::<u16>(), hi.parse::<u16>()), (Ok(lo), Ok(hi)) if lo <= slot && slot <= hi)
            })
            .then_some(i)
    })
}

/// The slot of `key` (no hash tags in the keys used with it).
pub fn slot_of(key: &str) -> u16 {
    let mut crc: u16 = 0;
    for &b in key.as_bytes() {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc % 16384
}
