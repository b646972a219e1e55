//! Connections as resources: what a client that never authenticated may send
//! (Redis 7's limits, same replies), what a connection costs and that the memory
//! comes back when it closes, and that a starting server never resets a
//! connection it accepted.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{free_port, Oracle, Raw, Server};

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Send `bytes` on a fresh connection; the reply and whether the server then closed.
fn probe(port: u16, bytes: &[u8]) -> (String, bool) {
    let mut r = Raw::connect(port);
    r.send(bytes);
    let reply = String::from_utf8_lossy(&r.read_reply()).into_owned();
    // A server that keeps the connection open shows it by not closing in 500 ms.
    r.w.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    (reply, r.is_closed())
}

#[test]
fn unauthenticated_clients_get_redis_limits() {
    let s = Server::start();
    let o = Oracle::start();
    for port in [s.port, o.port] {
        assert_eq!(Raw::connect(port).cmd(&["CONFIG", "SET", "requirepass", "sesame"]), "+OK\r\n");
    }
    let mut eleven = b"*11\r\n".to_vec();
    for _ in 0..11 {
        eleven.extend_from_slice(b"$1\r\na\r\n");
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("11 arguments", eleven),
        ("a multibulk count alone", b"*1000\r\n".to_vec()),
        ("a 17 KB bulk", b"*2\r\n$4\r\nAUTH\r\n$17000\r\n".to_vec()),
        ("a bulk of exactly 16 KB + 1", b"*1\r\n$16385\r\n".to_vec()),
        ("a command before AUTH", b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".to_vec()),
    ];
    for (what, bytes) in &cases {
        let want = probe(o.port, bytes);
        let got = probe(s.port, bytes);
        assert_eq!(got, want, "{what}");
    }
    // Up to ten arguments and 16 KB bulks are allowed: the frame completes and
    // the command is refused as unauthenticated, without closing.
    let mut ten = b"*10\r\n$4\r\nPING\r\n$16384\r\n".to_vec();
    ten.extend(std::iter::repeat_n(b'x', 16384));
    ten.extend_from_slice(b"\r\n");
    for _ in 0..8 {
        ten.extend_from_slice(b"$1\r\na\r\n");
    }
    for port in [s.port, o.port] {
        let mut r = Raw::connect(port);
        r.send(&ten);
        assert_eq!(String::from_utf8(r.read_reply()).unwrap(), "-NOAUTH Authentication required.\r\n");
        assert_eq!(r.cmd(&["AUTH", "sesame"]), "+OK\r\n", "still open");
    }
    // After AUTH the limits are the usual ones.
    let mut r = s.raw();
    assert_eq!(r.cmd(&["AUTH", "sesame"]), "+OK\r\n");
    let big = "x".repeat(100_000);
    let args: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    let mut hset = vec!["HSET", "h"];
    for a in &args {
        hset.push(a);
        hset.push(&big);
    }
    assert_eq!(r.cmd(&hset), ":20\r\n");
}

#[test]
fn an_unauthenticated_client_cannot_grow_the_server() {
    let s = Server::start();
    assert_eq!(s.raw().cmd(&["CONFIG", "SET", "requirepass", "sesame"]), "+OK\r\n");
    let before = rss_kb(s.pid());
    // A 400 MB bulk announced by a stranger: refused at the header, nothing buffered.
    let mut st = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    st.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    st.write_all(b"*1\r\n$400000000\r\n").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0usize;
    for _ in 0..200 {
        match st.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    let after = rss_kb(s.pid());
    eprintln!("rss {before} kB -> {after} kB after offering {} MB", sent >> 20);
    assert!(after < before + 16 * 1024, "an unauthenticated client grew the server from {before} kB to {after} kB");
    assert_eq!(Raw::connect(s.port).cmd(&["PING"]), "-NOAUTH Authentication required.\r\n");
}

#[test]
fn connections_cost_little_and_give_their_memory_back() {
    let s = Server::start_with(&["--cores", "2"]);
    let n = 3000;
    // Warm the allocator and the server's own structures first.
    drop((0..200).map(|_| Raw::connect(s.port)).collect::<Vec<_>>());
    std::thread::sleep(Duration::from_millis(300));
    let base = rss_kb(s.pid());
    let mut socks = Vec::with_capacity(n);
    for _ in 0..n {
        let mut st = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        st.write_all(b"PING\r\n").unwrap();
        socks.push(st);
    }
    for st in &mut socks {
        let mut buf = [0u8; 7];
        st.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"+PONG\r\n");
    }
    std::thread::sleep(Duration::from_millis(300));
    let plain = rss_kb(s.pid());
    let each = plain.saturating_sub(base) as f64 / n as f64;
    // 200 connections each send and receive 60 KB once, then idle: their big
    // buffers go back within about a second.
    for st in socks.iter_mut().take(200) {
        let v = "v".repeat(60_000);
        st.write_all(&crate::common::encode_cmd(&[b"ECHO", v.as_bytes()])).unwrap();
        let mut buf = vec![0u8; "$60000\r\n".len() + 60_000 + 2];
        st.read_exact(&mut buf).unwrap();
        assert!(buf.starts_with(b"$60000\r\nvvv"));
    }
    let big = rss_kb(s.pid());
    let settle = |limit: u64| {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let now = rss_kb(s.pid());
            if now <= limit || Instant::now() > deadline {
                return now;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let idle = settle(plain + 2 * 1024);
    drop(socks);
    let after = settle(base + (plain - base) / 3);
    eprintln!(
        "rss: base {base} kB, {n} connections {plain} kB ({each:.1} kB each), 200 big echoes {big} kB, \
         idle again {idle} kB, all closed {after} kB"
    );
    assert!(each < 8.0, "a connection costs {each:.1} kB");
    assert!(idle <= plain + 2 * 1024, "idle connections kept their big buffers: {idle} kB");
    assert!(after <= base + (plain - base) / 3, "memory stayed after the connections closed: {after} kB");
}

#[test]
fn a_starting_server_never_resets_what_it_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_neokv-server"))
        .args(["--port", &port.to_string(), "--cores", "2", "--no-pin"])
        .arg("--dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut refused, mut served) = (0, 0);
    while served < 200 {
        assert!(Instant::now() < deadline, "the server never served ({refused} refused)");
        let Ok(mut st) = TcpStream::connect(("127.0.0.1", port)) else {
            refused += 1;
            std::thread::sleep(Duration::from_micros(500));
            continue;
        };
        st.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // Every accepted connection is served: no reset, no silent close.
        st.write_all(b"PING\r\n").expect("write to an accepted connection");
        let mut buf = [0u8; 7];
        st.read_exact(&mut buf).unwrap_or_else(|e| panic!("accepted connection {served} not served: {e}"));
        assert_eq!(&buf, b"+PONG\r\n");
        served += 1;
    }
    eprintln!("{refused} connects refused before the server served, then {served} served");
    let _ = child.kill();
    let _ = child.wait();
}
