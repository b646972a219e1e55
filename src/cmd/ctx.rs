//! What a handler sees and what it decides: [`Ctx`], [`Plan`], [`CmdError`].
//!
//! A handler runs in one of three places (its [`Env`]), and is written once for
//! all of them:
//!
//! - on a connection's core: reads go to RocksDB (through the core's read cache
//!   or a snapshot), writes become a [`Plan::Write`] that dispatch proposes;
//! - inside a read-only script: every read sees the script's one snapshot,
//!   writes are refused;
//! - inside apply (a transaction or a script that may write): reads see the
//!   batch's own writes, writes are applied at once; time and randomness come
//!   from the log entry, so every replica computes the same thing.
//!
//! Handlers parse and plan; only dispatch awaits.

use std::borrow::Cow;
use std::time::Duration;

use bytes::Bytes;

use super::session::{ExecPlan, Session};
use super::shape::Shape;
use super::table::{CommandSpec, Table};
use crate::pb::{write_cmd::Op, WriteCmd};
use crate::protocol::cursor::ArgError;
use crate::protocol::Reply;
use crate::shard::{Core, Shared};
use crate::storage::keys::KeyType;
use crate::storage::meta::{Coll, Meta};
use crate::storage::StorageError;
use crate::types::blocked::Lane;
use crate::types::coll::Rng;
use crate::types::write::apply_cmd;
use crate::types::{ApplyCtx, ReadView, Reader, Snap, Source, TypeError};

/// Whole-key reads up to this many elements run inline on the core.
pub const INLINE_WALK: u64 = 1024;

/// A command failure; `Display` is the Redis error text.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    #[error("{0}")]
    Arg(#[from] ArgError),
    #[error("{0}")]
    Type(#[from] TypeError),
    #[error("ERR {0}")]
    Storage(#[from] StorageError),
    #[error("{0}")]
    Msg(Cow<'static, str>),
    /// An error text that is not UTF-8 (a script's, a client's bytes quoted back).
    #[error("{}", String::from_utf8_lossy(.0))]
    Bytes(Bytes),
}

pub fn err(msg: impl Into<Cow<'static, str>>) -> CmdError {
    CmdError::Msg(msg.into())
}

impl CmdError {
    /// The error reply, byte for byte.
    pub fn into_reply(self) -> Reply {
        match self {
            CmdError::Bytes(b) => Reply::error_bytes(&b),
            e => Reply::Error(e.to_string().into()),
        }
    }
}

pub type CmdResult = Result<Plan, CmdError>;
pub type HandlerFn = fn(&mut Ctx<'_>, &[Bytes]) -> CmdResult;

pub fn reply(r: Reply) -> CmdResult {
    Ok(Plan::Reply(r))
}

/// What a handler decided.
#[derive(Debug)]
pub enum Plan {
    /// Reply now.
    Reply(Reply),
    /// Propose `cmd` on `region`; apply produces its natural result, which
    /// `shape` turns into the reply.
    Write { region: u32, cmd: WriteCmd, shape: Shape },
    /// Propose `cmd` on every region; reply with the first region's reply.
    Broadcast(WriteCmd),
    /// Reply, then close the connection.
    Close(Reply),
    /// Reply after a pause (DEBUG SLEEP).
    Sleep(Duration, Reply),
    /// Long storage work (whole-keyspace scans, big keys): run on the blocking
    /// pool so the core keeps serving its other connections; its result is the reply.
    Blocking(BlockingWork),
    /// A blocking pop (BLPOP, BLMOVE, ...): see [`Block`].
    Block(Block),
    /// EXEC: see [`ExecPlan`].
    Exec(ExecPlan),
    /// CLUSTER ADDNODE / FORGET: a membership change of every region (see
    /// `shard::members`); the reply is OK or why not.
    Members(crate::raft::region::MemberChange),
    /// WAIT in cluster mode: until `replicas` followers hold this connection's
    /// last write, or `timeout` passes; the reply is how many do.
    WaitReplicas { replicas: i64, timeout: Duration },
}

/// A blocking pop: propose `cmd` at once; while it finds nothing (a nil result)
/// the client waits, first come first served per key, for a write to one of
/// `keys`, then proposes `retry`, until `timeout` (`None`: forever) passes and
/// it is answered with a null array. Waiting holds no core: other connections
/// go on. `shape` shows the result that ends the wait.
///
/// A blocking XREAD reads instead of proposing ([`Attempt::Read`]); streams
/// wait in their own [`Lane`]s (`types::blocked`).
#[derive(Debug)]
pub struct Block {
    pub region: u32,
    pub attempt: Attempt,
    pub keys: Vec<Bytes>,
    /// The (logical) database of `keys`.
    pub db: u16,
    pub timeout: Option<Duration>,
    pub shape: Shape,
    pub lane: Lane,
}

/// What a blocked client tries, at first and after each wake-up.
pub enum Attempt {
    /// Propose `cmd`, then `retry`.
    Write { cmd: WriteCmd, retry: WriteCmd },
    /// Read on the connection's core, at the time given.
    Read(Box<dyn Fn(&Shared, u64) -> Reply>),
}

impl std::fmt::Debug for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attempt::Write { cmd, .. } => write!(f, "Write({cmd:?})"),
            Attempt::Read(_) => f.write_str("Read"),
        }
    }
}

/// Work for the blocking pool; must own what it needs.
pub struct BlockingWork(pub Box<dyn FnOnce() -> Reply + Send>);

impl std::fmt::Debug for BlockingWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockingWork")
    }
}

/// Where a handler runs (see the module doc).
pub enum Env<'a> {
    Conn(&'a Core),
    ReadOnly(&'a Snap<'a>),
    Apply { apply: &'a mut ApplyCtx, rng: &'a mut Rng },
}

/// What a handler sees.
pub struct Ctx<'a> {
    pub shared: &'a Shared,
    pub session: &'a mut Session,
    pub spec: &'static CommandSpec,
    /// Every command's row (COMMAND, CLIENT LIST, a transaction's or a
    /// script's commands): handed down by dispatch so no family names the
    /// registry that names it.
    pub table: &'static Table,
    /// The region of the command's keys, found by dispatch from the table's key
    /// positions (`None` for a command without keys).
    pub region: Option<u32>,
    /// One more than the epoch `region` had when dispatch routed the command
    /// to it (cluster mode; 0 otherwise): its writes carry it, and apply
    /// refuses them if the region split since (`pb::WriteCmd::epoch`).
    pub epoch: u64,
    env: Env<'a>,
}

/// Redis's reply to a write attempted by a read-only script.
pub const READONLY_SCRIPT: &str = "ERR Write commands are not allowed from read-only scripts.";

impl<'a> Ctx<'a> {
    pub fn new(
        shared: &'a Shared,
        session: &'a mut Session,
        table: &'static Table,
        spec: &'static CommandSpec,
        region: Option<u32>,
        env: Env<'a>,
    ) -> Ctx<'a> {
        Ctx { shared, session, spec, table, region, epoch: 0, env }
    }

    /// The connection's core, when the handler runs on one.
    pub fn core(&self) -> Option<&Core> {
        match &self.env {
            Env::Conn(c) => Some(c),
            _ => None,
        }
    }

    /// The region being applied, inside apply.
    pub fn apply_region(&self) -> Option<u32> {
        match &self.env {
            Env::Apply { apply, .. } => Some(apply.region),
            _ => None,
        }
    }

    /// Run `f` on the apply batch, inside apply (`None` elsewhere).
    pub fn with_apply<T>(&mut self, f: impl FnOnce(&mut ApplyCtx) -> T) -> Option<T> {
        match &mut self.env {
            Env::Apply { apply, .. } => Some(f(apply)),
            _ => None,
        }
    }

    /// True inside apply or a script: no cursors to remember, no waiting, no
    /// blocking pool.
    pub fn detached(&self) -> bool {
        !matches!(self.env, Env::Conn(_))
    }

    /// True inside a read-only script, where writes are refused.
    pub fn read_only(&self) -> bool {
        matches!(self.env, Env::ReadOnly(_))
    }

    /// True on a connection while writes are refused: RocksDB, or this core's
    /// Raft log, cannot be written (a full disk).
    pub fn writes_failing(&self) -> bool {
        let Env::Conn(core) = &self.env else { return false };
        self.shared.storage.failure().is_some()
            || core.raft_log.borrow().as_ref().is_some_and(|l| l.failure().is_some())
    }

    /// SELECT `db` (logical): the commands after this one run in it.
    pub fn select(&mut self, db: u16) {
        self.session.db = db;
        self.session.entry.db.store(db, std::sync::atomic::Ordering::Relaxed);
        let physical = self.shared.dbs.physical(db);
        match &mut self.env {
            Env::Apply { apply, .. } => apply.select(db),
            Env::ReadOnly(s) => s.db.set(physical),
            Env::Conn(_) => {}
        }
    }

    /// Where the selected database's keys are stored (`types::dbs`).
    pub fn physical_db(&self) -> u16 {
        match &self.env {
            Env::Apply { apply, .. } => apply.db(),
            Env::ReadOnly(s) => s.db.get(),
            Env::Conn(_) => self.shared.dbs.physical(self.session.db),
        }
    }

    /// The slot ranges a read without keys covers (DBSIZE, KEYS, SCAN,
    /// RANDOMKEY): `None` standalone (every slot). In cluster mode, the
    /// regions dispatch confirmed this node leads (`Session::confirmed`), as a
    /// Redis Cluster node answers for its own slots; inside apply, the region
    /// applied (a transaction or script runs in one region, and every replica
    /// must compute the same).
    pub fn scope_ranges(&self) -> crate::types::keyspace::SlotRanges {
        self.shared.nodes.as_ref()?;
        if let Env::Apply { apply, .. } = &self.env {
            let (start, end) = apply.slots();
            return Some(vec![(start, end)]);
        }
        let router = self.shared.router();
        let confirmed = self.session.confirmed.as_deref().unwrap_or(&[]);
        Some(confirmed.iter().filter_map(|&r| router.get(r)).map(|r| (r.start, r.end)).collect())
    }

    /// This node's `stream-node-max-*` for an operation's log entry (`None`
    /// when they are Redis's defaults, so entries stay as small as before).
    pub fn stream_limits(&self) -> Option<crate::pb::StreamLimits> {
        let cfg = self.shared.config();
        crate::types::stream_node::Limits {
            max_entries: cfg.stream_node_max_entries,
            max_bytes: cfg.stream_node_max_bytes,
        }
        .carried()
    }

    /// The command's time (Redis's command time snapshot).
    pub fn now_ms(&self) -> u64 {
        self.session.now_ms
    }

    /// A random number: the local generator on a connection, the entry's seeded
    /// one inside apply.
    pub fn random(&mut self) -> u64 {
        match &mut self.env {
            Env::Apply { rng, .. } => rng.next_u64(),
            _ => rand::random(),
        }
    }

    /// Point reads (strings, keyspace): through the core's read cache.
    pub fn reader(&self) -> ReadView<'_> {
        match &self.env {
            Env::Conn(core) => ReadView::Cached(
                Reader::cached(&self.shared.storage, &core.cache, &self.shared.epochs, self.session.now_ms)
                    .in_db(self.physical_db()),
            ),
            Env::ReadOnly(s) => ReadView::Shared(s),
            Env::Apply { apply, .. } => ReadView::Apply(apply),
        }
    }

    /// A consistent read (composite types: metadata and elements from one point
    /// in time).
    pub fn snap(&self) -> ReadView<'_> {
        match &self.env {
            Env::Conn(_) => {
                ReadView::Snapshot(Snap::new(self.shared.storage.view(), self.session.now_ms, self.physical_db()))
            }
            Env::ReadOnly(s) => ReadView::Shared(s),
            Env::Apply { apply, .. } => ReadView::Apply(apply),
        }
    }

    /// `f`, a read of one key's metadata and elements, made consistent without a
    /// RocksDB snapshot when it can be: the key's stamp (`types::cache`) is
    /// loaded first, `f` reads the latest data (the metadata and the key's
    /// elements through the core's caches), and its answer stands if the stamp
    /// is the same afterwards: no write of the key landed in between, so every
    /// read saw the key as it was at one moment. Else, or while a write of the
    /// key is in flight, `f` runs again over a snapshot. (A snapshot costs a
    /// lock of the whole database per read; a big sorted set's rank counters,
    /// read back from a memtable holding many versions of them, cost more.)
    pub fn read_key(&self, key: &[u8], f: impl Fn(&ReadView<'_>) -> Result<Reply, CmdError>) -> CmdResult {
        Ok(Plan::Reply(self.read_key_as(key, f)?))
    }

    /// [`Ctx::read_key`] for any answer.
    fn read_key_as<T>(&self, key: &[u8], f: impl Fn(&ReadView<'_>) -> Result<T, CmdError>) -> Result<T, CmdError> {
        if let Env::Conn(core) = &self.env {
            let epochs = &self.shared.epochs;
            if let Some(stamp) = epochs.stamp(key) {
                let reader = Reader::keyed(
                    &self.shared.storage,
                    (&core.cache, &core.elements),
                    epochs,
                    self.session.now_ms,
                    (self.physical_db(), key),
                    stamp,
                );
                let r = f(&ReadView::Cached(reader));
                if epochs.stamp(key) == Some(stamp) {
                    return r;
                }
            }
        }
        f(&self.snap())
    }

    /// A write that does nothing to a key that does not exist (a pop): what
    /// apply would answer then is `absent`, shown as `shape`. On a standalone
    /// server's connection with none of its own writes in flight, a key that a
    /// read of the latest applied state finds absent (or expired) gets that
    /// answer at once, with no log entry: the read is linearizable as a GET is,
    /// and the connection's earlier writes are all applied, so the pop would
    /// have found the key absent too. A queue polled empty then costs a read,
    /// not a replicated, fsynced write. Anywhere else (a cluster, whose reads
    /// need the leader's confirmation; a connection with writes pending, which
    /// the pop must see; inside a transaction or script) it is a write.
    ///
    /// While writes are refused (a full disk: RocksDB's or this core's Raft log
    /// failing), the pop goes to its region, which answers `MISCONF` as Redis
    /// refuses every write command then.
    pub fn write_unless_absent(&mut self, key: &[u8], op: Op, shape: Shape, absent: Reply) -> CmdResult {
        let conn = matches!(self.env, Env::Conn(_));
        if conn && !self.writes_failing() && !self.session.writes_pending && self.shared.nodes.is_none() {
            if self.read_key_as(key, |s| Ok(s.meta(key)?.is_none()))? {
                return Ok(Plan::Reply(shape.apply(absent)));
            }
        }
        self.write(op, shape)
    }

    /// Run `f`, a read that walks whole keys, over a consistent read: inline when
    /// the keys are small, on the blocking pool when together they hold more than
    /// [`INLINE_WALK`] elements, so a big key never stalls the core's other
    /// connections.
    pub fn walk<'k>(
        &self,
        keys: impl IntoIterator<Item = &'k Bytes>,
        f: impl FnOnce(&ReadView<'_>) -> Result<Reply, CmdError> + Send + 'static,
    ) -> CmdResult {
        let mut total = 0u64;
        if !self.detached() {
            let r = self.reader();
            for k in keys {
                if let Some(c) = r.meta(k)?.as_ref().and_then(Coll::from_meta) {
                    total += c.size;
                }
            }
        }
        self.walk_sized(total, f)
    }

    /// [`Ctx::walk`] for a read known to visit about `total` elements.
    pub fn walk_sized(
        &self,
        total: u64,
        f: impl FnOnce(&ReadView<'_>) -> Result<Reply, CmdError> + Send + 'static,
    ) -> CmdResult {
        if total <= INLINE_WALK || self.detached() {
            return Ok(Plan::Reply(f(&self.snap())?));
        }
        let storage = self.shared.storage.clone();
        let now_ms = self.session.now_ms;
        let db = self.physical_db();
        Ok(Plan::Blocking(BlockingWork(Box::new(move || {
            let snap = ReadView::Snapshot(Snap::new(storage.view(), now_ms, db));
            f(&snap).unwrap_or_else(CmdError::into_reply)
        }))))
    }

    /// Run `f`, a read of the whole keyspace (KEYS, DBSIZE), on the blocking pool
    /// (inline when detached).
    pub fn blocking(&self, f: impl FnOnce(&ReadView<'_>) -> Result<Reply, CmdError> + Send + 'static) -> CmdResult {
        if self.detached() {
            return Ok(Plan::Reply(f(&self.reader())?));
        }
        let storage = self.shared.storage.clone();
        let now = self.session.now_ms;
        let db = self.physical_db();
        Ok(Plan::Blocking(BlockingWork(Box::new(move || {
            f(&ReadView::Cached(Reader::at(&storage, now).in_db(db))).unwrap_or_else(CmdError::into_reply)
        }))))
    }

    /// A write of `op` to the command's region, its result shown as `shape`.
    pub fn write(&mut self, op: Op, shape: Shape) -> CmdResult {
        self.write_to(self.region.unwrap_or(0), op, shape)
    }

    /// A write of `op` to `region` (`shard::cross::ALL_REGIONS`: a
    /// cross-region write); detached, to the one being applied.
    pub fn write_to(&mut self, region: u32, op: Op, shape: Shape) -> CmdResult {
        let epoch = if Some(region) == self.region { self.epoch } else { 0 };
        let cmd = WriteCmd { op: Some(op), db: self.session.db as u32, epoch };
        match &mut self.env {
            Env::Conn(_) => Ok(Plan::Write { region, cmd, shape }),
            Env::ReadOnly(_) => Err(err(READONLY_SCRIPT)),
            Env::Apply { apply, .. } => Ok(Plan::Reply(shape.apply(apply_cmd(apply, &cmd)?))),
        }
    }

    /// A write to every region (FLUSHALL); detached, to the one being applied.
    pub fn broadcast(&mut self, op: Op) -> CmdResult {
        match &self.env {
            Env::Conn(_) => Ok(Plan::Broadcast(WriteCmd { op: Some(op), db: self.session.db as u32, epoch: 0 })),
            _ => self.write(op, Shape::Natural),
        }
    }

    /// A blocking pop of `op` waiting on `keys`; its retries are `retry` (which
    /// counts a source of another type as empty). Detached (in a transaction or
    /// a script) it never waits: one attempt, whatever it finds.
    pub fn block(&mut self, op: Op, retry: Op, keys: &[Bytes], timeout: Option<Duration>, shape: Shape) -> CmdResult {
        if self.detached() {
            return self.write(op, shape);
        }
        Ok(Plan::Block(Block {
            region: self.region.unwrap_or(0),
            attempt: Attempt::Write {
                cmd: WriteCmd { op: Some(op), db: self.session.db as u32, epoch: self.epoch },
                retry: WriteCmd { op: Some(retry), db: self.session.db as u32, epoch: self.epoch },
            },
            db: self.session.db,
            keys: keys.to_vec(),
            timeout,
            shape,
            lane: Lane::Pop,
        }))
    }
}

/// A HELP reply: the usage line and entries, then the closing HELP entry
/// every Redis 7 HELP ends with.
pub fn help_reply(lines: &[&str]) -> CmdResult {
    let all = lines.iter().chain(&["HELP", "    Prints this help."]);
    reply(Reply::Array(all.map(|l| Reply::Simple(l.to_string().into())).collect()))
}

/// The bytes a read of a chunked value may take inline on the core; a bigger
/// read goes to the blocking pool.
pub const BIG_READ: u64 = 1 << 20;

/// Answer a read of the string `key` with `f`, given its live metadata and a
/// view consistent with it (WRONGTYPE for another type). An inline value is
/// its metadata: one cached point read. A chunked one (`types::string`) is
/// read from one snapshot, so its chunks and length are of one moment; on
/// the blocking pool when `need` (the bytes `f` will read) is more than
/// [`BIG_READ`].
pub fn read_string(
    ctx: &Ctx<'_>,
    key: &Bytes,
    need: impl Fn(&Meta) -> u64,
    f: impl Fn(&ReadView<'_>, Option<Meta>) -> Result<Reply, CmdError> + Send + 'static,
) -> CmdResult {
    let r = ctx.reader();
    match r.typed(key, KeyType::String)?? {
        Some(m) if m.chunked => {
            let n = need(&m);
            drop(r);
            let key = key.clone();
            ctx.walk_sized(n * INLINE_WALK / BIG_READ, move |v| {
                let m = v.typed(&key, KeyType::String)??;
                f(v, m)
            })
        }
        m => reply(f(&r, m)?),
    }
}
