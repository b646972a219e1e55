//! Test harness: start the real `neokv-server` (and a real `redis-server` as the
//! oracle) on free loopback ports with temp data dirs, and talk RESP to them.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Redis Cluster's slot of a key (CRC16/XMODEM of its `{hash tag}`, if it has one).
pub fn key_slot(key: &[u8]) -> u16 {
    // Only a non-empty `{tag}` is hashed, as Redis Cluster does.
    let key = match key.iter().position(|&b| b == b'{') {
        Some(s) => match key[s + 1..].iter().position(|&b| b == b'}') {
            Some(e) if e > 0 => &key[s + 1..s + 1 + e],
            _ => key,
        },
        None => key,
    };
    let mut crc: u16 = 0;
    for &b in key {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc & 0x3fff
}

/// A port nothing listens on, for a server to bind. Taken below the kernel's
/// ephemeral range (32768 and up), one after another: a port the kernel hands
/// out for an outgoing connection or a `bind(0)` (the cluster tests' proxies)
/// can then never take it between this check and the server's bind.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let _ = NEXT.compare_exchange(0, 20_000 + (std::process::id() % 60) * 200, Ordering::SeqCst, Ordering::SeqCst);
    loop {
        let p = NEXT.fetch_add(1, Ordering::SeqCst);
        let p = 10_000 + (p - 10_000) % 22_000;
        if TcpListener::bind(("127.0.0.1", p as u16)).is_ok() {
            return p as u16;
        }
    }
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
    // Not left behind to hold the test harness's output pipe open.
    let _ = child.kill();
    let _ = child.wait();
    panic!("{what} did not start listening on {port}");
}

/// A running NeoKV server; killed (SIGKILL) on drop.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    _tmp: Option<tempfile::TempDir>,
    extra: Vec<String>,
    env: Vec<(String, String)>,
}

impl Server {
    /// Start with a fresh temp data dir and `--cores 1`.
    pub fn start() -> Server {
        Self::start_with(&["--cores", "1"])
    }

    pub fn start_with(args: &[&str]) -> Server {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let mut s = Server {
            port: 0,
            dir,
            child: None,
            _tmp: Some(tmp),
            extra: args.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
        };
        s.spawn();
        s
    }

    /// Start on an existing data dir (for restarts), keeping it.
    pub fn start_in(dir: &Path, args: &[&str]) -> Server {
        Self::start_in_env(dir, args, &[])
    }

    /// Start on an existing data dir with these environment variables set.
    pub fn start_in_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut s = Server {
            port: 0,
            dir: dir.to_path_buf(),
            child: None,
            _tmp: None,
            extra: args.iter().map(|s| s.to_string()).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        };
        s.spawn();
        s
    }

    /// Stop (kill -9) and start again on the same data dir with other
    /// arguments and environment.
    pub fn restart_with(&mut self, args: &[&str], env: &[(&str, &str)]) {
        self.kill9();
        self.extra = args.iter().map(|s| s.to_string()).collect();
        self.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.spawn();
    }

    /// Wait for the process to exit by itself (bounded): its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
                self.child = None;
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
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
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
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
            .args(["--databases", "16", "--enable-debug-command", "yes"])
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

/// Commands (each a list of arguments: `&str`, `String`, `Vec<u8>`, ...) encoded
/// back to back, to send as one pipeline.
pub fn encode_pipeline<C: AsRef<[A]>, A: AsRef<[u8]>>(cmds: &[C]) -> Vec<u8> {
    let mut wire = Vec::new();
    for c in cmds {
        let a: Vec<&[u8]> = c.as_ref().iter().map(|x| x.as_ref()).collect();
        wire.extend_from_slice(&encode_cmd(&a));
    }
    wire
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

/// A seed for a fuzz test: `NEOKV_SEED` if set, else the clock. It is printed
/// first, so that a failure can be replayed with `NEOKV_SEED=<seed>`.
pub fn fuzz_seed(test: &str) -> u64 {
    let seed = match std::env::var("NEOKV_SEED") {
        Ok(s) => s.trim().parse().unwrap_or_else(|_| panic!("NEOKV_SEED={s:?} is not a u64")),
        Err(_) => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64,
    };
    eprintln!("{test} seed {seed}");
    seed
}

/// xorshift64: a seeded generator for fuzz tests.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    pub fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    pub fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[self.below(xs.len())]
    }
}

/// Send `cmds` pipelined to NeoKV (`n`) and redis-server (`r`): every reply
/// must be the same, byte for byte. A difference panics with `what` (the seed
/// and round), the command's first arguments (each cut at 24 bytes) and the
/// start of both replies.
pub fn same_replies<C: AsRef<[A]>, A: AsRef<[u8]>>(n: &mut Raw, r: &mut Raw, cmds: &[C], what: &str) {
    let wire = encode_pipeline(cmds);
    n.send(&wire);
    r.send(&wire);
    for c in cmds {
        let (got, want) = (n.read_reply(), r.read_reply());
        if got != want {
            let c = c.as_ref();
            let shown: Vec<String> = c
                .iter()
                .take(12)
                .map(|a| String::from_utf8_lossy(&a.as_ref()[..a.as_ref().len().min(24)]).into_owned())
                .collect();
            panic!(
                "{what}: {shown:?} ({} args): NeoKV {} bytes {:?}, Redis {} bytes {:?}",
                c.len(),
                got.len(),
                String::from_utf8_lossy(&got[..got.len().min(600)]),
                want.len(),
                String::from_utf8_lossy(&want[..want.len().min(600)])
            );
        }
    }
}

/// Send each line to NeoKV and redis-server in turn: the replies must be equal.
pub fn same_lines(n: &mut Raw, r: &mut Raw, lines: &[&[&str]]) {
    for l in lines {
        let (got, want) = (n.cmd(l), r.cmd(l));
        assert_eq!(got, want, "{l:?}");
    }
}

/// Read one RESP2/RESP3 reply, appending its raw bytes to `out`, and check that
/// it is well formed: every line ends in CRLF with no CR or LF inside (so an
/// error or status reply is one line), integers and lengths are canonical
/// numbers, bulk payloads are exactly as long as announced and end in CRLF,
/// aggregates hold as many replies as they announce. `&[u8]` is a `BufRead`,
/// so received bytes can be checked after the fact too.
pub fn read_frame_strict<R: BufRead>(r: &mut R, out: &mut Vec<u8>) -> Result<(), String> {
    fn lossy(b: &[u8]) -> String {
        String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned()
    }
    fn line<R: BufRead>(r: &mut R, out: &mut Vec<u8>) -> Result<Vec<u8>, String> {
        let mut l = Vec::new();
        r.read_until(b'\n', &mut l).map_err(|e| format!("read failed ({e}) after {:?}", lossy(out)))?;
        out.extend_from_slice(&l);
        if l.is_empty() {
            return Err(format!("connection closed after {:?}", lossy(out)));
        }
        if !l.ends_with(b"\r\n") || l[..l.len() - 2].contains(&b'\r') {
            return Err(format!("a line not ended by one CRLF: {:?}", lossy(&l)));
        }
        l.truncate(l.len() - 2);
        if l.is_empty() {
            return Err("an empty line where a reply type was expected".into());
        }
        Ok(l)
    }
    fn int(s: &[u8]) -> Result<i64, String> {
        let digits = s.strip_prefix(b"-").unwrap_or(s);
        let canonical = !digits.is_empty()
            && digits.iter().all(u8::is_ascii_digit)
            && (digits.len() == 1 || digits[0] != b'0')
            && s != b"-0";
        match std::str::from_utf8(s).ok().and_then(|t| t.parse().ok()) {
            Some(n) if canonical => Ok(n),
            _ => Err(format!("not a canonical integer: {:?}", lossy(s))),
        }
    }
    // Replies still to read in each open aggregate, innermost last: a loop, not
    // recursion, as a script may answer 8,000 nested arrays.
    let mut open: Vec<i64> = vec![1];
    while let Some(left) = open.last_mut() {
        if *left == 0 {
            open.pop();
            continue;
        }
        *left -= 1;
        let head = line(r, out)?;
        let rest = &head[1..];
        match head[0] {
            b'+' | b'-' => {}
            b':' => {
                int(rest)?;
            }
            b'(' => {
                let digits = rest.strip_prefix(b"-").unwrap_or(rest);
                if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                    return Err(format!("bad big number {:?}", lossy(rest)));
                }
            }
            b'_' if rest.is_empty() => {}
            b'#' if rest == b"t" || rest == b"f" => {}
            b',' => {
                let t = std::str::from_utf8(rest).map_err(|_| "a double that is not text".to_string())?;
                if t.parse::<f64>().is_err() || t.starts_with('+') {
                    return Err(format!("bad double {t:?}"));
                }
            }
            b'$' | b'=' | b'!' => {
                let n = int(rest)?;
                if n == -1 && head[0] == b'$' {
                    continue;
                }
                if n < 0 {
                    return Err(format!("bad length {n}"));
                }
                let mut data = vec![0u8; n as usize + 2];
                r.read_exact(&mut data).map_err(|e| format!("bulk of {n} cut short: {e}"))?;
                out.extend_from_slice(&data);
                if !data.ends_with(b"\r\n") {
                    return Err(format!("a bulk of {n} bytes not followed by CRLF: {:?}", lossy(&data)));
                }
                if head[0] == b'=' && (n < 4 || data[3] != b':') {
                    return Err(format!("bad verbatim string {:?}", lossy(&data)));
                }
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n = int(rest)?;
                if n == -1 && head[0] == b'*' {
                    continue;
                }
                if n < 0 {
                    return Err(format!("bad aggregate length {n}"));
                }
                if head[0] == b'|' {
                    // An attribute precedes the reply it describes, in the same place.
                    *open.last_mut().unwrap() += 1;
                }
                open.push(if matches!(head[0], b'%' | b'|') { 2 * n } else { n });
            }
            _ => return Err(format!("not a reply: {:?}", lossy(&head))),
        }
    }
    Ok(())
}

/// A key starting with `prefix` in each half of the slots (the regions of
/// `--regions 2`): (region 0's, region 1's).
pub fn one_per_region(prefix: &str) -> (String, String) {
    let region = |k: &String| key_slot(k.as_bytes()) >= 8192;
    let a = (0..).map(|i| format!("{prefix}{i}")).find(|k| !region(k)).unwrap();
    let b = (0..).map(|i| format!("{prefix}{i}")).find(region).unwrap();
    (a, b)
}

/// Send a blocking command on its own connection; its reply arrives later.
pub fn blocked(s: &Server, args: &[&str]) -> Raw {
    let mut r = s.raw();
    let a: Vec<&[u8]> = args.iter().map(|x| x.as_bytes()).collect();
    r.send_cmd(&a);
    r
}

/// The next reply on `r`, as text (lossy).
pub fn reply(r: &mut Raw) -> String {
    String::from_utf8_lossy(&r.read_reply()).into_owned()
}

/// Wait until INFO shows `n` blocked clients (registration is asynchronous).
pub fn wait_blocked(s: &Server, n: usize) {
    let want = format!("blocked_clients:{n}\r\n");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !s.raw().cmd(&["INFO", "clients"]).contains(&want) {
        assert!(std::time::Instant::now() < deadline, "never saw {want:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A test that relies on the server's test hooks (`neokv::failpoint`): the
/// binary under test must be built with them (`make test` does).
pub fn require_failpoints() {
    assert!(
        neokv::failpoint::ENABLED,
        "this test needs the server's failpoints: run it with `--features neokv/failpoints` (make test does)"
    );
}
