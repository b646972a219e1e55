//! Lua scripting: the engine behind EVAL and FUNCTION, on Lua 5.1 as Redis uses
//! (mlua with its vendored lua51).
//!
//! Owns: the sandboxed VM (one per thread that runs scripts, see `vm`), Redis's
//! Lua API (`redis.call`, `redis.pcall`, ...), the libraries Redis loads (`libs`:
//! cjson, cmsgpack, bit, struct), the Redis ↔ Lua conversion rules (`convert`),
//! shebang flags, function libraries (`functions`), and the registry of cached
//! and running scripts (busy detection, SCRIPT KILL). Depends only on
//! `protocol` (the `Reply` a script returns and its commands answer): a script
//! reaches the keyspace through a [`Host`] that the command layer provides, on a
//! connection's core (read-only scripts) or inside apply (scripts that may write).
//!
//! Determinism: a script's time, and its `math.random` seed, come from the
//! caller; inside apply both come from the log entry, so every replica runs the
//! same script to the same result.

pub mod convert;
pub mod functions;
pub mod libs;
pub mod vm;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::protocol::Reply;

/// The flags a script declares (`#!lua flags=...`) or a function registers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// No shebang: Redis's compatibility mode (may write, may cross slots).
    pub compat: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot_keys: bool,
}

impl Flags {
    /// Set the flag `name` (exact spelling, as Redis matches shebang flags).
    fn set(&mut self, name: &str) -> bool {
        match name {
            "no-writes" => self.no_writes = true,
            "allow-oom" => self.allow_oom = true,
            "allow-stale" => self.allow_stale = true,
            "no-cluster" => self.no_cluster = true,
            "allow-cross-slot-keys" => self.allow_cross_slot_keys = true,
            _ => return false,
        }
        true
    }

    /// The flag names set, in Redis's order (FUNCTION LIST).
    pub fn names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (on, name) in [
            (self.no_writes, "no-writes"),
            (self.allow_oom, "allow-oom"),
            (self.allow_stale, "allow-stale"),
            (self.no_cluster, "no-cluster"),
            (self.allow_cross_slot_keys, "allow-cross-slot-keys"),
        ] {
            if on {
                out.push(name);
            }
        }
        out
    }
}

/// Parse a script's shebang (Redis's `evalExtractShebangFlags`): its flags and
/// where the code starts (the shebang line is compiled as an empty line, so line
/// numbers stay right). The error is Redis's text (without `ERR `).
/// Errors are Redis's text, byte for byte (they quote the script).
pub fn parse_shebang(body: &[u8]) -> Result<(Flags, usize), Vec<u8>> {
    if !body.starts_with(b"#!") {
        return Ok((Flags { compat: true, ..Flags::default() }, 0));
    }
    let fail = |msg: &str, quoted: &[u8]| [msg.as_bytes(), quoted].concat();
    // Redis looks for the newline with strchr: a NUL before it ends the search.
    let text = &body[..memchr::memchr(0, body).unwrap_or(body.len())];
    let Some(nl) = memchr::memchr(b'\n', text) else { return Err(fail("Invalid script shebang", b"")) };
    let parts = split_arg_bytes(&body[..nl]).ok_or_else(|| fail("Invalid script shebang", b""))?;
    let Some(engine) = parts.first() else { return Err(fail("Invalid engine in script shebang", b"")) };
    if engine != b"#!lua" {
        return Err(fail("Unexpected engine in script shebang: ", engine));
    }
    let mut flags = Flags::default();
    for p in &parts[1..] {
        let Some(list) = p.strip_prefix(b"flags=") else { return Err(fail("Unknown lua shebang option: ", p)) };
        for f in list.split(|&b| b == b',').filter(|f| !f.is_empty()) {
            if !std::str::from_utf8(f).is_ok_and(|f| flags.set(f)) {
                return Err(fail("Unexpected flag in script shebang: ", f));
            }
        }
    }
    Ok((flags, nl))
}

/// Split a line into arguments as Redis's `sdssplitargs` does (spaces separate,
/// double and single quotes group); `None` on unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<String>> {
    Some(split_arg_bytes(line)?.into_iter().map(|a| String::from_utf8_lossy(&a).into_owned()).collect())
}

/// [`split_args`], the arguments as bytes.
pub fn split_arg_bytes(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        let mut cur = Vec::new();
        let (mut dq, mut sq) = (false, false);
        loop {
            if i == line.len() {
                if dq || sq {
                    return None;
                }
                break;
            }
            let c = line[i];
            if dq {
                if c == b'\\' && i + 1 < line.len() {
                    i += 1;
                    cur.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        o => o,
                    });
                } else if c == b'"' {
                    if i + 1 < line.len() && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else if sq {
                if c == b'\\' && i + 1 < line.len() && line[i + 1] == b'\'' {
                    i += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if i + 1 < line.len() && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else if c.is_ascii_whitespace() {
                break;
            } else if c == b'"' {
                dq = true;
            } else if c == b'\'' {
                sq = true;
            } else {
                cur.push(c);
            }
            i += 1;
        }
        out.push(cur);
    }
    Some(out)
}

/// The lowercase hex SHA1 of `body` (a script's name in the cache).
pub fn sha1hex(body: &[u8]) -> String {
    sha1_smol::Sha1::from(body).digest().to_string()
}

/// A script in the node's cache (SCRIPT LOAD, EVAL).
#[derive(Debug, Clone)]
pub struct Cached {
    pub body: Bytes,
    pub flags: Flags,
}

/// Scripts known to this node and the ones running now.
pub struct Registry {
    scripts: Mutex<HashMap<String, Cached>>,
    /// Bumped by SCRIPT FLUSH: every VM drops its compiled scripts.
    pub generation: AtomicU64,
    running: Mutex<Vec<Arc<Control>>>,
    /// Scripts running past the busy threshold (others get BUSY replies).
    pub busy: Arc<AtomicUsize>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            scripts: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
            running: Mutex::new(Vec::new()),
            busy: Arc::new(AtomicUsize::new(0)),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    /// Cache `body` (already checked to compile); its SHA1.
    pub fn add(&self, body: Bytes, flags: Flags) -> String {
        let sha = sha1hex(&body);
        lock(&self.scripts).insert(sha.clone(), Cached { body, flags });
        sha
    }

    /// The cached script `sha` (any case).
    pub fn get(&self, sha: &[u8]) -> Option<Cached> {
        let key = String::from_utf8_lossy(sha).to_ascii_lowercase();
        lock(&self.scripts).get(&key).cloned()
    }

    pub fn exists(&self, sha: &[u8]) -> bool {
        self.get(sha).is_some()
    }

    /// SCRIPT FLUSH.
    pub fn flush(&self) {
        lock(&self.scripts).clear();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    pub fn len(&self) -> usize {
        lock(&self.scripts).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Register a run; it is forgotten when the returned guard drops.
    pub fn start(self: &Arc<Self>, c: Control) -> Running {
        let c = Arc::new(c);
        lock(&self.running).push(c.clone());
        Running { registry: self.clone(), control: c }
    }

    /// The oldest run past its busy threshold, if any (who BUSY replies name).
    pub fn busy_script(&self) -> Option<Arc<Control>> {
        if self.busy.load(Ordering::Relaxed) == 0 {
            return None;
        }
        lock(&self.running).iter().find(|c| c.busy.load(Ordering::Relaxed)).cloned()
    }

    /// The runs in progress.
    pub fn running(&self) -> Vec<Arc<Control>> {
        lock(&self.running).clone()
    }
}

/// A run in progress; unregisters it (and its busy mark) when dropped.
pub struct Running {
    registry: Arc<Registry>,
    pub control: Arc<Control>,
}

impl Drop for Running {
    fn drop(&mut self) {
        lock(&self.registry.running).retain(|c| !Arc::ptr_eq(c, &self.control));
        if self.control.busy.swap(false, Ordering::SeqCst) {
            self.registry.busy.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// One run's state, shared between the VM's hook and SCRIPT KILL on any core.
pub struct Control {
    pub started: Instant,
    /// Past this the run is busy (0: never).
    pub busy_after: Duration,
    /// The script's name in errors (its SHA1, or the function's name).
    pub name: String,
    pub function: bool,
    /// The command line that started it (FUNCTION STATS).
    pub argv: Vec<Bytes>,
    pub kill: AtomicBool,
    /// A write command ran: SCRIPT KILL is refused from then on.
    pub wrote: AtomicBool,
    pub busy: AtomicBool,
    busy_count: Arc<AtomicUsize>,
    /// A trial run on a connection's core (see `cmd::script`'s probe): it is
    /// stopped, and its reply ignored, once it has run this long.
    pub budget: Option<Duration>,
    /// A run inside apply: its region, log index and position in the entry
    /// (what SHUTDOWN NOSAVE voids if the script has written).
    pub entry: Option<(u32, u64, u32)>,
}

impl Control {
    pub fn new(registry: &Registry, name: String, function: bool, argv: Vec<Bytes>, busy_after: Duration) -> Control {
        Control {
            started: Instant::now(),
            busy_after,
            name,
            function,
            argv,
            kill: AtomicBool::new(false),
            wrote: AtomicBool::new(false),
            busy: AtomicBool::new(false),
            busy_count: registry.busy.clone(),
            budget: None,
            entry: None,
        }
    }

    /// Redis's BUSY reply for a command that may not run while this is busy.
    pub fn busy_reply(&self) -> Reply {
        Reply::error(if self.function {
            "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
        } else {
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
        })
    }

    /// A run inside apply, of the command at `entry` (region, index, position).
    pub fn in_entry(mut self, entry: (u32, u64, u32)) -> Control {
        self.entry = Some(entry);
        self
    }

    /// A trial run, stopped once it has run for `budget`.
    pub fn trial(mut self, budget: Duration) -> Control {
        self.budget = Some(budget);
        self
    }

    /// VM instructions between two calls of [`Control::tick`]: a trial is
    /// checked more often, so it overruns its budget by little.
    pub fn hook_every(&self) -> u32 {
        if self.budget.is_some() {
            10_000
        } else {
            100_000
        }
    }

    /// Called every so many VM instructions: marks the run busy once it has run
    /// past its threshold; true if it must stop (killed).
    pub fn tick(&self) -> bool {
        if self.budget.is_some_and(|b| self.started.elapsed() >= b) {
            self.kill.store(true, Ordering::Relaxed);
            return true;
        }
        if !self.busy.load(Ordering::Relaxed)
            && !self.busy_after.is_zero()
            && self.started.elapsed() >= self.busy_after
            && !self.busy.swap(true, Ordering::SeqCst)
        {
            self.busy_count.fetch_add(1, Ordering::SeqCst);
            eprintln!(
                "Slow script detected: still in execution after {} milliseconds. You can try killing the script using the {} command. Script name is: {}.",
                self.started.elapsed().as_millis(),
                if self.function { "FUNCTION KILL" } else { "SCRIPT KILL" },
                self.name
            );
        }
        self.kill.load(Ordering::Relaxed)
    }
}

/// What a script's `redis.call` reaches: the keyspace and the command table.
pub trait Host {
    /// Run one command line for the script at protocol `resp` (2 or 3). Refusals
    /// (unknown command, not allowed from scripts, writes in a read-only run)
    /// are error replies with Redis's texts.
    fn call(&mut self, args: &[Bytes], resp: u8) -> Reply;
    /// True if `args` names a command this host knows (`redis.acl_check_cmd`).
    fn known(&self, args: &[Bytes]) -> bool;
    /// The run's error reply is an error a call answered, passed on (raised by
    /// `redis.call`, or returned from `redis.pcall`): already counted.
    fn passed_on_error(&mut self) {}
}

/// What a run is given besides its code.
pub struct RunArgs<'a> {
    pub keys: &'a [Bytes],
    pub args: &'a [Bytes],
    /// Seed of `math.random` (from the log entry inside apply).
    pub seed: u64,
    pub control: &'a Arc<Control>,
    /// Memory the VM may use, in bytes (0: no limit).
    pub memory_limit: usize,
}

/// `ERR Script killed by user with SCRIPT KILL...`: the text a killed run ends with.
pub const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebangs_parse_as_redis_does() {
        assert_eq!(parse_shebang(b"return 1").unwrap().0, Flags { compat: true, ..Default::default() });
        let (f, at) = parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(f.no_writes && f.allow_oom && !f.compat);
        assert_eq!(at, 31);
        assert_eq!(parse_shebang(b"#!lua\nreturn 1").unwrap().0, Flags::default());
        assert_eq!(parse_shebang(b"#!lua").unwrap_err(), b"Invalid script shebang");
        assert_eq!(parse_shebang(b"#!lu\n").unwrap_err(), b"Unexpected engine in script shebang: #!lu");
        assert_eq!(parse_shebang(b"#!lua\x80\n").unwrap_err(), b"Unexpected engine in script shebang: #!lua\x80");
        assert_eq!(parse_shebang(b"#!lua foo=bar\n").unwrap_err(), b"Unknown lua shebang option: foo=bar");
        assert_eq!(parse_shebang(b"#!lua flags=nope\n").unwrap_err(), b"Unexpected flag in script shebang: nope");
        // A NUL ends Redis's search for the newline (strchr); after it, it is code.
        assert_eq!(parse_shebang(b"#!\x00lua\nreturn 1").unwrap_err(), b"Invalid script shebang");
        assert_eq!(parse_shebang(b"#!lua\nreturn '\x00'").unwrap().1, 5);
    }

    #[test]
    fn sha1_of_the_empty_string() {
        assert_eq!(sha1hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1hex(b"return 'loaded'"), "b534286061d4b9e4026607613b95c06c06015ae8");
    }

    #[test]
    fn split_args_quotes() {
        assert_eq!(split_args(b"#!lua name=\"foo\"").unwrap(), vec!["#!lua", "name=foo"]);
        assert_eq!(split_args(b"a  'b c' d").unwrap(), vec!["a", "b c", "d"]);
        assert!(split_args(b"a \"b").is_none());
    }
}
