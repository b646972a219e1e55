//! Commands: the table, and one family file per type. Handlers parse and plan;
//! they read the keyspace inline (point reads on the connection's core) and turn
//! writes into a replicated `WriteCmd` for dispatch to propose. Only the
//! connection loop awaits. Command code never touches sockets or Raft.

pub mod hash;
pub mod info;
pub mod keyspace;
pub mod list;
pub mod server;
pub mod session;
pub mod set;
pub mod string;
pub mod table;
pub mod zset;

use std::borrow::Cow;
use std::time::Duration;

use bytes::Bytes;

use crate::pb::WriteCmd;
use crate::protocol::cursor::ArgError;
use crate::protocol::Reply;
use crate::shard::Core;
use crate::storage::StorageError;
use crate::types::TypeError;

pub use session::Session;
use table::{flag, table, CommandSpec};

/// What a handler decided.
#[derive(Debug)]
pub enum Plan {
    /// Reply now.
    Reply(Reply),
    /// Propose `cmd` on region `.0`; apply produces the reply.
    Write(u32, WriteCmd),
    /// Propose `cmd` on every region; reply with the first region's reply.
    Broadcast(WriteCmd),
    /// Reply, then close the connection.
    Close(Reply),
    /// Reply after a pause (DEBUG SLEEP).
    Sleep(Duration, Reply),
    /// Long storage work (whole-keyspace scans): run on the blocking pool so the
    /// core keeps serving its other connections; its result is the reply.
    Blocking(BlockingWork),
    /// A blocking pop (BLPOP, BLMOVE, ...): see [`Block`].
    Block(Block),
}

/// A blocking pop: propose `cmd` at once; while it finds nothing (a nil reply)
/// the client waits, first come first served per key, for a write to one of
/// `keys`, then proposes `retry`, until `timeout` (`None`: forever) passes and
/// it is answered with a null array. Waiting holds no core: other connections
/// go on.
#[derive(Debug)]
pub struct Block {
    pub region: u32,
    pub cmd: WriteCmd,
    pub retry: WriteCmd,
    pub keys: Vec<Bytes>,
    pub timeout: Option<Duration>,
}

/// Work for the blocking pool; must own what it needs.
pub struct BlockingWork(pub Box<dyn FnOnce() -> Reply + Send>);

impl std::fmt::Debug for BlockingWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockingWork")
    }
}

/// Run `f` over a reader of the shared storage on the blocking pool.
pub fn blocking(
    ctx: &Ctx<'_>,
    f: impl FnOnce(&crate::types::Reader<'_>) -> Result<Reply, StorageError> + Send + 'static,
) -> CmdResult {
    let storage = ctx.core.shared.storage.clone();
    let now = ctx.session.now_ms;
    Ok(Plan::Blocking(BlockingWork(Box::new(move || {
        f(&crate::types::Reader::at(&storage, now)).unwrap_or_else(|e| Reply::Error(format!("ERR {e}").into()))
    }))))
}

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
}

pub fn err(msg: impl Into<Cow<'static, str>>) -> CmdError {
    CmdError::Msg(msg.into())
}

pub type CmdResult = Result<Plan, CmdError>;
pub type HandlerFn = fn(&mut Ctx<'_>, &[Bytes]) -> CmdResult;

pub enum Handler {
    Fn(HandlerFn),
    /// Dispatches to the `name|sub` row; the handler (if any) serves the bare command.
    Container(Option<HandlerFn>),
}

/// What a handler sees.
pub struct Ctx<'a> {
    pub core: &'a Core,
    pub session: &'a mut Session,
    pub spec: &'static CommandSpec,
}

impl Ctx<'_> {
    /// A reader whose point reads go through this core's read cache.
    pub fn reader(&self) -> crate::types::Reader<'_> {
        crate::types::Reader::cached(
            &self.core.shared.storage,
            &self.core.cache,
            &self.core.shared.epochs,
            self.session.now_ms,
        )
    }

    /// A consistent snapshot read (composite types: metadata and elements from
    /// one point in time).
    pub fn snap(&self) -> crate::types::coll::Snap<'_> {
        crate::types::coll::Snap { view: self.core.shared.storage.view(), now_ms: self.session.now_ms }
    }

    /// Run `f`, a read that walks whole keys, over a snapshot: inline when the
    /// keys are small, on the blocking pool when together they hold more than
    /// [`INLINE_WALK`] elements, so a big key never stalls the core's other
    /// connections.
    pub fn walk<'k>(
        &self,
        keys: impl IntoIterator<Item = &'k Bytes>,
        f: impl FnOnce(&crate::types::coll::Snap<'_>) -> Result<Reply, CmdError> + Send + 'static,
    ) -> CmdResult {
        let r = self.reader();
        let mut total = 0u64;
        for k in keys {
            if let Some(c) = r.meta(k)?.as_ref().and_then(crate::storage::meta::Coll::from_meta) {
                total += c.size;
            }
        }
        self.walk_sized(total, f)
    }

    /// [`Ctx::walk`] for a read known to visit about `total` elements.
    pub fn walk_sized(
        &self,
        total: u64,
        f: impl FnOnce(&crate::types::coll::Snap<'_>) -> Result<Reply, CmdError> + Send + 'static,
    ) -> CmdResult {
        if total <= INLINE_WALK {
            return Ok(Plan::Reply(f(&self.snap())?));
        }
        let storage = self.core.shared.storage.clone();
        let now_ms = self.session.now_ms;
        Ok(Plan::Blocking(BlockingWork(Box::new(move || {
            let snap = crate::types::coll::Snap { view: storage.view(), now_ms };
            f(&snap).unwrap_or_else(|e| Reply::Error(e.to_string().into()))
        }))))
    }

    /// The region all `keys` live in; CROSSSLOT if they span regions (only with
    /// `--regions` > 1: one region covers every slot by default).
    pub fn region_of<'k>(&self, keys: impl IntoIterator<Item = &'k Bytes>) -> Result<u32, CmdError> {
        self.core
            .shared
            .router
            .common_region(keys.into_iter().map(|k| &k[..]))
            .ok_or_else(|| err("CROSSSLOT Keys in request don't hash to the same slot"))
    }

    /// A write of `cmd` to the region of its keys.
    pub fn write(&self, cmd: WriteCmd) -> CmdResult {
        let region = self.region_of(cmd.keys.iter())?;
        Ok(Plan::Write(region, cmd))
    }
}

pub fn reply(r: Reply) -> CmdResult {
    Ok(Plan::Reply(r))
}

/// Redis's `'%.128s'`, with newlines made spaces (rejectCommandFormat).
fn clip(b: &[u8], max: usize) -> String {
    String::from_utf8_lossy(&b[..b.len().min(max)]).replace(['\r', '\n'], " ")
}

/// Find the row for a request: the command, or for a container its subcommand.
/// Errors are Redis's replies for unknown commands and wrong arity.
pub fn resolve(args: &[Bytes]) -> Result<&'static CommandSpec, Reply> {
    let t = table();
    let Some(spec) = t.lookup(&args[0]) else {
        let mut rest = String::new();
        for a in &args[1..] {
            if rest.len() >= 128 {
                break;
            }
            let room = 128 - rest.len();
            rest.push_str(&format!("'{}' ", clip(a, room)));
        }
        return Err(Reply::Error(
            format!("ERR unknown command '{}', with args beginning with: {}", clip(&args[0], 128), rest).into(),
        ));
    };
    if spec.is_container() {
        if args.len() < 2 {
            return match spec.handler {
                Handler::Container(Some(_)) => Ok(spec),
                _ => Err(wrong_arity(spec.name)),
            };
        }
        let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
        let Some(subspec) = t.get(&format!("{}|{}", spec.name, sub)) else {
            return Err(Reply::Error(
                format!(
                    "ERR unknown subcommand '{}'. Try {} HELP.",
                    clip(&args[1], 128),
                    spec.name.to_ascii_uppercase()
                )
                .into(),
            ));
        };
        if !subspec.arity_ok(args.len()) {
            return Err(wrong_arity(subspec.name));
        }
        return Ok(subspec);
    }
    if !spec.arity_ok(args.len()) {
        return Err(wrong_arity(spec.name));
    }
    Ok(spec)
}

fn wrong_arity(name: &str) -> Reply {
    Reply::Error(format!("ERR wrong number of arguments for '{name}' command").into())
}

/// True if earlier pipelined writes must be applied before `spec` runs.
pub fn needs_barrier(spec: &CommandSpec) -> bool {
    !spec.is_write() || spec.flags & flag::READS_INLINE != 0
}

/// Run a resolved command's handler.
pub fn run(core: &Core, session: &mut Session, spec: &'static CommandSpec, args: &[Bytes]) -> Plan {
    if !session.authed && spec.flags & flag::NO_AUTH == 0 {
        return Plan::Reply(Reply::error("NOAUTH Authentication required."));
    }
    let (Handler::Fn(f) | Handler::Container(Some(f))) = spec.handler else {
        return Plan::Reply(Reply::error("ERR container command without subcommand"));
    };
    let mut ctx = Ctx { core, session, spec };
    match f(&mut ctx, args) {
        Ok(p) => p,
        Err(e) => Plan::Reply(Reply::Error(e.to_string().into())),
    }
}
