//! The examples, run as built (cargo builds them for `cargo test`) against a
//! NeoKV the test starts: the lock-guarded payment service answers 200 to one
//! of two concurrent payments of an order and 409 to the other; the cache
//! example loads its cold key once for twenty readers.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{free_port, Kind, Server};

/// An example's binary: `examples/<name>` beside this test's `deps/`.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join(name);
    assert!(
        bin.exists(),
        "{} is missing: build the examples (`cargo test` does, or `cargo build --examples`)",
        bin.display()
    );
    bin
}

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// POST `path` with no body; the status and the body.
fn post(port: u16, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    (status, body)
}

#[test]
fn the_pay_example_answers_409_while_an_order_is_being_paid() {
    let s = Server::start(Kind::NeoKv);
    let web = free_port();
    let mut child = Kill(
        Command::new(example("pay"))
            .args(["--redis", &format!("127.0.0.1:{}", s.port), "--listen", &format!("127.0.0.1:{web}")])
            .args(["--pay-ms", "600"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("listening on"), "{line:?}");

    let first = std::thread::spawn(move || post(web, "/orders/1/pay"));
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = post(web, "/orders/1/pay");
    assert_eq!((status, body.as_str()), (409, "order 1 is being paid\n"));
    let (status, body) = first.join().unwrap();
    assert_eq!((status, body.as_str()), (200, "order 1 paid (charge 1)\n"));
    // Released: the next payment of order 1 gets in, and finds it paid.
    assert_eq!(post(web, "/orders/1/pay"), (200, "order 1 already paid\n".into()));
    // Orders do not block each other.
    let other = std::thread::spawn(move || post(web, "/orders/2/pay"));
    assert_eq!(post(web, "/orders/3/pay").0, 200);
    assert_eq!(other.join().unwrap().0, 200);
}

#[test]
fn the_cache_example_loads_once_for_twenty_readers() {
    let s = Server::start(Kind::NeoKv);
    let out = Command::new(example("cache")).args(["--redis", &format!("127.0.0.1:{}", s.port)]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("20 concurrent readers in") && text.contains("database read 1 time(s)\n"), "{text}");
    assert!(text.contains("database read 1 time(s) in all"), "the warm read loaded again: {text}");
    assert!(text.contains("stored as {\"id\":"), "{text}");
}
