//! Commands: the table, one family file per type, and what they share.
//!
//! | file | owns |
//! |---|---|
//! | `table.rs` | one static row per command: arity, flags, key positions ([`table::Keys`]) |
//! | `ctx.rs` | what a handler sees ([`Ctx`]) and decides ([`Plan`]), [`CmdError`] |
//! | `shape.rs` | how a write's natural result is shown ([`Shape`]) |
//! | `args.rs` | argument grammars several families share |
//! | `elements.rs` | element scans and random picks of Hash, Set, Sorted Set |
//! | `txn.rs` | MULTI/EXEC/WATCH, and the executor that runs a transaction inside apply |
//! | `script/` | EVAL, SCRIPT, FUNCTION, FCALL (`mod.rs`); the hosts scripts call commands through (`host.rs`) |
//! | `pubsub.rs` | SUBSCRIBE and the other Pub/Sub commands (the registry is `shard::pubsub`) |
//! | `introspect.rs` | MEMORY, OBJECT, ROLE, LOLWUT, WAIT |
//! | `key_specs.rs` | COMMAND GETKEYS[ANDFLAGS]: Redis's key specs of every keyed command |
//! | `fanout.rs` | writes to several regions (FLUSHALL, FUNCTION LOAD, ...): which regions, and the one true reply |
//! | `string.rs` ... `zset.rs`, `keyspace.rs`, `server.rs` | the families: handlers first, rows last |
//!
//! Handlers parse and plan; they read through [`Ctx`] (on the connection's core,
//! or inside apply for a transaction or script: the same code) and turn writes
//! into a typed replicated operation. Dispatch (here) finds the row, checks
//! arity and authentication, and computes the keys' region from the row's key
//! positions before the handler runs (every region when they span several). Only the
//! connection loop awaits. Command code never touches sockets or Raft.

pub mod admin;
pub mod args;
pub mod bitmap;
pub mod cluster;
pub mod ctx;
pub mod dump;
pub mod elements;
pub mod fanout;
pub mod geo;
pub mod hash;
pub mod hll;
pub mod info;
pub mod introspect;
pub mod key_specs;
pub mod keyspace;
pub mod list;
pub mod pubsub;
pub mod script;
pub mod server;
pub mod session;
pub mod set;
pub mod shape;
pub mod sort;
pub mod stream;
pub mod stream_group;
pub mod string;
pub mod table;
pub mod txn;
pub mod zset;

use bytes::Bytes;

use crate::protocol::Reply;
use crate::shard::Core;

pub use ctx::{err, reply, Block, BlockingWork, CmdError, CmdResult, Ctx, Env, HandlerFn, Plan, INLINE_WALK};
pub use session::Session;
pub use shape::Shape;
use table::{flag, table, CommandSpec, Handler};

/// Redis Cluster's error for keys in different slots (here: regions).
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

/// Redis's `'%.128s'`, with newlines made spaces (rejectCommandFormat).
/// C's `%.<max>s` of an argument: at most `max` bytes, up to its first NUL
/// (the reply's line turns CR/LF into spaces).
fn clip(b: &[u8], max: usize) -> &[u8] {
    let b = &b[..b.len().min(max)];
    memchr::memchr(0, b).map_or(b, |nul| &b[..nul])
}

/// Find the row for a request: the command, or for a container its subcommand.
/// Errors are Redis's replies for unknown commands and wrong arity.
/// The row a refused request names, if its name (and subcommand) exist: a
/// wrong-arity request counts against its command (INFO's rejected_calls).
pub fn named_spec(args: &[Bytes]) -> Option<&'static CommandSpec> {
    let t = table();
    let spec = t.lookup(args.first()?).filter(|s| !s.name.contains('|'))?;
    if !spec.is_container() || args.len() < 2 {
        return Some(spec);
    }
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    t.get(&format!("{}|{}", spec.name, sub))
}

pub fn resolve(args: &[Bytes]) -> Result<&'static CommandSpec, Reply> {
    let t = table();
    // A subcommand's row name (`config|get`) is not a command a client can send.
    let Some(spec) = t.lookup(&args[0]).filter(|s| !s.name.contains('|')) else {
        let mut rest = Vec::new();
        for a in &args[1..] {
            if rest.len() >= 128 {
                break;
            }
            let room = 128 - rest.len();
            rest.extend_from_slice(&[&b"'"[..], clip(a, room), b"' "].concat());
        }
        let name = clip(&args[0], 128);
        return Err(Reply::error_bytes(
            &[&b"ERR unknown command '"[..], name, b"', with args beginning with: ", &rest].concat(),
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
            let help = format!("'. Try {} HELP.", spec.name.to_ascii_uppercase());
            return Err(Reply::error_bytes(
                &[&b"ERR unknown subcommand '"[..], clip(&args[1], 128), help.as_bytes()].concat(),
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

/// True if earlier pipelined writes must be applied before `spec` runs. A
/// script that may write does not wait: it checks `Session::writes_pending`
/// itself (see `script::run`), so pipelined scripts commit together.
pub fn needs_barrier(spec: &CommandSpec) -> bool {
    if spec.flags & (flag::PROGRAM | flag::READONLY) == flag::PROGRAM {
        return false;
    }
    !spec.is_write() || spec.flags & flag::READS_INLINE != 0
}

/// The region all of a request's keys live in, from the row's key positions:
/// `Ok(None)` without keys, [`crate::shard::cross::ALL_REGIONS`] if they span
/// regions (standalone; cluster mode routes by slot in `cluster::route`).
pub fn region_of(core: &Core, spec: &CommandSpec, args: &[Bytes]) -> Result<Option<u32>, Reply> {
    region_at(core, spec.keys_of(args).as_deref(), args)
}

/// [`region_of`] for key positions already found.
fn region_at(core: &Core, at: Option<&[usize]>, args: &[Bytes]) -> Result<Option<u32>, Reply> {
    let Some(at) = at else { return Ok(None) };
    let router = &core.shared.router;
    let mut region = None;
    for &i in at {
        let r = router.region_of_key(&args[i]).id;
        match region {
            None => region = Some(r),
            // Standalone: keys of several regions make a cross-region write
            // (`shard::cross`); a read reads one snapshot, whatever the region.
            Some(x) if x != r => return Ok(Some(crate::shard::cross::ALL_REGIONS)),
            _ => {}
        }
    }
    Ok(region)
}

/// Record that a command used its keys (Redis touches a key on lookup): OBJECT
/// IDLETIME and FREQ read these records (`shard::access`). Commands that look
/// without touching (`NO_TOUCH`) leave them, as does a client in CLIENT
/// NO-TOUCH mode (except for TOUCH itself); deletes (`FORGETS`) drop them.
pub fn record_access(core: &Core, session: &Session, spec: &CommandSpec, at: &[usize], args: &[Bytes]) {
    let keys = at.iter().filter_map(|&i| args.get(i)).map(|k| &k[..]);
    if spec.flags & flag::FORGETS != 0 {
        core.shared.access.forget(keys);
    } else if spec.flags & flag::NO_TOUCH == 0 && (!session.no_touch || spec.name == "touch") {
        let now_ms = session.now_ms;
        core.shared.access.touch(core.id, now_ms, keys);
    }
}

/// Run a resolved command's handler on its connection's core.
pub fn run(core: &Core, session: &mut Session, spec: &'static CommandSpec, args: &[Bytes]) -> Plan {
    if !session.authed && spec.flags & flag::NO_AUTH == 0 {
        session.rejected = true;
        let r = Reply::error("NOAUTH Authentication required.");
        return Plan::Reply(txn::refused(&core.shared, session, Some(spec), r));
    }
    let (Handler::Fn(f) | Handler::Container(Some(f))) = spec.handler else {
        return Plan::Reply(Reply::error("ERR container command without subcommand"));
    };
    // A RESP2 client with subscriptions runs only what Redis allows in that context.
    if session.resp == 2 && pubsub::subscribed(session) && !pubsub::allowed_while_subscribed(spec) {
        session.rejected = true;
        return Plan::Reply(txn::refused(&core.shared, session, Some(spec), pubsub::not_allowed(spec)));
    }
    // While a script runs past the busy threshold, only what Redis allows runs.
    if spec.flags & flag::ALLOW_BUSY == 0 {
        if let Some(c) = core.shared.scripts.busy_script() {
            session.rejected = true;
            return Plan::Reply(txn::refused(&core.shared, session, Some(spec), script::busy_reply(&c)));
        }
    }
    let at = spec.keys_of(args);
    let routed = if core.shared.nodes.is_some() {
        // Cluster mode: the keys' slot decides, and only its leader serves it.
        let keys = at.iter().flatten().map(|&i| &args[i][..]);
        // READONLY: a follower serves reads (the connection waited for the
        // leader's read index before running them).
        cluster::route(&core.shared, keys, session.follower_reads && !spec.is_write())
    } else {
        region_at(core, at.as_deref(), args)
    };
    let region = match routed {
        Ok(r) => r,
        Err(e) => {
            session.rejected = true;
            return Plan::Reply(e);
        }
    };
    if let Some(at) = at.as_deref().filter(|at| !at.is_empty()) {
        record_access(core, session, spec, at, args);
    }
    let mut ctx = Ctx::new(&core.shared, session, spec, region, Env::Conn(core));
    match f(&mut ctx, args) {
        Ok(p) => p,
        Err(e) => Plan::Reply(e.into_reply()),
    }
}
