//! Test harness: start the real `neokv-server` (and a real `redis-server` as the
//! oracle) on free loopback ports with temp data dirs, and talk RESP to them.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Redis Cluster's slot of a key (CRC16/XMODEM, hash tags ignored).
pub fn key_slot(key: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in key {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc & 0x3fff
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited early: {status}");
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            // The port accepts once every core serves; a PING proves it.
            s.set_read_timeout(Some(Duration::from_secs(10))).ok();
            if s.write_all(b"PING\r\n").is_ok() {
                let mut buf = [0u8; 7];
                if s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n" {
                    return;
                }
                if buf.starts_with(b"-NOAUTH") {
                    return;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{what} did not start listening on {port}");
}

/// A running NeoKV server; killed (SIGKILL) on drop.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    _tmp: Option<tempfile::TempDir>,
    extra: Vec<String>,
}

impl Server {
    /// Start with a fresh temp data dir and `--cores 1`.
    pub fn start() -> Server {
        Self::start_with(&["--cores", "1"])
    }

    pub fn start_with(args: &[&str]) -> Server {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let mut s =
            Server { port: 0, dir, child: None, _tmp: Some(tmp), extra: args.iter().map(|s| s.to_string()).collect() };
        s.spawn();
        s
    }

    /// Start on an existing data dir (for restarts), keeping it.
    pub fn start_in(dir: &Path, args: &[&str]) -> Server {
        let mut s = Server {
            port: 0,
            dir: dir.to_path_buf(),
            child: None,
            _tmp: None,
            extra: args.iter().map(|s| s.to_string()).collect(),
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        self.port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_neokv-server"))
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--dir")
            .arg(&self.dir)
            .arg("--no-pin")
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn neokv-server");
        wait_for_port(self.port, &mut child, "neokv-server");
        self.child = Some(child);
    }

    /// kill -9, then start again on the same data dir and a new port.
    pub fn kill_and_restart(&mut self) {
        self.kill9();
        self.spawn();
    }

    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    pub fn client(&self) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port)).unwrap().get_connection().unwrap()
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(self.port)
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A real redis-server (Debian's package), no persistence, killed on drop.
pub struct Oracle {
    pub port: u16,
    child: Child,
    _tmp: tempfile::TempDir,
}

impl Oracle {
    pub fn start() -> Oracle {
        let port = free_port();
        let tmp = tempfile::tempdir().unwrap();
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(tmp.path())
            .args(["--databases", "1", "--enable-debug-command", "yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (make deps)");
        wait_for_port(port, &mut child, "redis-server");
        Oracle { port, child, _tmp: tmp }
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(self.port)
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw RESP connection: send bytes, read whole replies as bytes.
pub struct Raw {
    pub r: BufReader<TcpStream>,
    pub w: TcpStream,
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.set_nodelay(true).unwrap();
        Raw { r: BufReader::new(s.try_clone().unwrap()), w: s }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.w.write_all(bytes).unwrap();
    }

    /// Send a command as a multibulk.
    pub fn send_cmd(&mut self, args: &[&[u8]]) {
        self.send(&encode_cmd(args));
    }

    /// One complete reply, as raw bytes.
    pub fn read_reply(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        read_frame(&mut self.r, &mut out).expect("read reply");
        out
    }

    /// Send a command and read its reply as text (lossy).
    pub fn cmd(&mut self, args: &[&str]) -> String {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.send_cmd(&a);
        String::from_utf8_lossy(&self.read_reply()).into_owned()
    }

    /// True if the server closed the connection (EOF on read).
    pub fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0))
    }
}

pub fn encode_cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut v = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        v.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        v.extend_from_slice(a);
        v.extend_from_slice(b"\r\n");
    }
    v
}

fn read_line<R: BufRead>(r: &mut R, out: &mut Vec<u8>) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "eof"));
    }
    out.extend_from_slice(&line);
    Ok(line[..line.len().saturating_sub(2)].to_vec())
}

/// Read one RESP2/RESP3 frame, appending its raw bytes to `out`.
pub fn read_frame<R: BufRead>(r: &mut R, out: &mut Vec<u8>) -> std::io::Result<()> {
    let mut first = [0u8; 1];
    r.read_exact(&mut first)?;
    out.push(first[0]);
    let body = read_line(r, out)?;
    let n = || String::from_utf8_lossy(&body).parse::<i64>().unwrap_or(-1);
    match first[0] {
        b'+' | b'-' | b':' | b',' | b'#' | b'_' | b'(' => Ok(()),
        b'$' | b'=' | b'!' => {
            let len = n();
            if len >= 0 {
                let mut data = vec![0u8; len as usize + 2];
                r.read_exact(&mut data)?;
                out.extend_from_slice(&data);
            }
            Ok(())
        }
        b'*' | b'~' | b'>' => {
            for _ in 0..n().max(0) {
                read_frame(r, out)?;
            }
            Ok(())
        }
        b'%' | b'|' => {
            for _ in 0..n().max(0) * 2 {
                read_frame(r, out)?;
            }
            Ok(())
        }
        c => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad reply type {:?}", c as char))),
    }
}

/// Assert that `cmd`, a long read, does not hold up other connections on its core:
/// a PING sent 20 ms after it must be answered before it. A blocked reactor makes
/// PING lose every time; a free one wins unless the machine stalls the core for the
/// whole command, so three attempts are allowed. Each reply must start with `expect`.
pub fn assert_does_not_stall(s: &Server, cmd: &[&[u8]], expect: &str) {
    use std::io::BufRead;
    let mut a = s.raw();
    let mut b = s.raw();
    let mut attempts = Vec::new();
    for _ in 0..3 {
        assert_eq!(b.cmd(&["PING"]), "+PONG\r\n");
        let started = std::time::Instant::now();
        a.send_cmd(cmd);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(b.cmd(&["PING"]), "+PONG\r\n");
        let ping_done = started.elapsed();
        a.w.set_nonblocking(true).unwrap();
        let ready = matches!(a.r.fill_buf(), Ok(buf) if !buf.is_empty());
        a.w.set_nonblocking(false).unwrap();
        let reply = a.read_reply();
        assert!(reply.starts_with(expect.as_bytes()), "{}", String::from_utf8_lossy(&reply[..reply.len().min(80)]));
        attempts.push((ping_done, started.elapsed()));
        if !ready {
            return;
        }
    }
    panic!(
        "PING waited for {} in every attempt (ping, command): {attempts:?}: it blocked the core",
        String::from_utf8_lossy(cmd[0])
    );
}

/// Run a command through a real client and convert its reply.
pub fn q<T: redis::FromRedisValue>(con: &mut redis::Connection, args: &[&str]) -> T {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Run a command that must fail; its error text.
pub fn err(con: &mut redis::Connection, args: &[&str]) -> String {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    match c.query::<redis::Value>(con) {
        Err(e) => e.to_string(),
        Ok(v) => panic!("{args:?} should fail, got {v:?}"),
    }
}
