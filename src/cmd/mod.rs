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
//! | `script.rs` | EVAL, SCRIPT, FUNCTION, FCALL, and the hosts scripts call commands through |
//! | `pubsub.rs` | SUBSCRIBE and the other Pub/Sub commands (the registry is `shard::pubsub`) |
//! | `introspect.rs` | MEMORY, OBJECT, COMMAND GETKEYS[ANDFLAGS] (Redis's key specs), ROLE, LOLWUT, WAIT |
//! | `string.rs` ... `zset.rs`, `keyspace.rs`, `server.rs` | the families: handlers first, rows last |
//!
//! Handlers parse and plan; they read through [`Ctx`] (on the connection's core,
//! or inside apply for a transaction or script: the same code) and turn writes
//! into a typed replicated operation. Dispatch (here) finds the row, checks
//! arity and authentication, and computes the keys' region from the row's key
//! positions before the handler runs (CROSSSLOT when they span regions). Only the
//! connection loop awaits. Command code never touches sockets or Raft.

pub mod args;
pub mod ctx;
pub mod elements;
pub mod hash;
pub mod info;
pub mod introspect;
pub mod keyspace;
pub mod list;
pub mod pubsub;
pub mod script;
pub mod server;
pub mod session;
pub mod set;
pub mod shape;
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
fn clip(b: &[u8], max: usize) -> String {
    String::from_utf8_lossy(&b[..b.len().min(max)]).replace(['\r', '\n'], " ")
}

/// Find the row for a request: the command, or for a container its subcommand.
/// Errors are Redis's replies for unknown commands and wrong arity.
pub fn resolve(args: &[Bytes]) -> Result<&'static CommandSpec, Reply> {
    let t = table();
    // A subcommand's row name (`config|get`) is not a command a client can send.
    let Some(spec) = t.lookup(&args[0]).filter(|s| !s.name.contains('|')) else {
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

/// The region all of a request's keys live in, from the row's key positions:
/// `Ok(None)` without keys, CROSSSLOT if they span regions (only with
/// `--regions` > 1: one region covers every slot by default).
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
            Some(x) if x != r => return Err(Reply::error(CROSSSLOT)),
            _ => {}
        }
    }
    Ok(region)
}

/// Record that a command used its keys (Redis touches a key on lookup): OBJECT
/// IDLETIME and FREQ read these records (`shard::access`). Commands that look
/// without touching (`NO_TOUCH`) leave them; deletes (`FORGETS`) drop them.
pub fn record_access(core: &Core, now_ms: u64, spec: &CommandSpec, at: &[usize], args: &[Bytes]) {
    let keys = at.iter().filter_map(|&i| args.get(i)).map(|k| &k[..]);
    if spec.flags & flag::FORGETS != 0 {
        core.shared.access.forget(keys);
    } else if spec.flags & flag::NO_TOUCH == 0 {
        core.shared.access.touch(core.id, now_ms, keys);
    }
}

/// Run a resolved command's handler on its connection's core.
pub fn run(core: &Core, session: &mut Session, spec: &'static CommandSpec, args: &[Bytes]) -> Plan {
    if !session.authed && spec.flags & flag::NO_AUTH == 0 {
        return Plan::Reply(Reply::error("NOAUTH Authentication required."));
    }
    let (Handler::Fn(f) | Handler::Container(Some(f))) = spec.handler else {
        return Plan::Reply(Reply::error("ERR container command without subcommand"));
    };
    // A RESP2 client with subscriptions runs only what Redis allows in that context.
    if session.resp == 2 && pubsub::subscribed(session) && !pubsub::allowed_while_subscribed(spec) {
        return Plan::Reply(pubsub::not_allowed(spec));
    }
    // While a script runs past the busy threshold, only what Redis allows runs.
    if spec.flags & flag::ALLOW_BUSY == 0 {
        if let Some(c) = core.shared.scripts.busy_script() {
            let busy = script::busy_reply(&c);
            if spec.name == "exec" && session.multi.is_some() {
                txn::reset(&core.shared, session);
                if let Reply::Error(e) = busy {
                    return Plan::Reply(Reply::Error(
                        format!("EXECABORT Transaction discarded because of: {e}").into(),
                    ));
                }
            }
            return Plan::Reply(busy);
        }
    }
    let at = spec.keys_of(args);
    let region = match region_at(core, at.as_deref(), args) {
        Ok(r) => r,
        Err(e) => return Plan::Reply(e),
    };
    if let Some(at) = at.as_deref().filter(|at| !at.is_empty()) {
        record_access(core, session.now_ms, spec, at, args);
    }
    let mut ctx = Ctx::new(&core.shared, session, spec, region, Env::Conn(core));
    match f(&mut ctx, args) {
        Ok(p) => p,
        Err(e) => Plan::Reply(Reply::Error(e.to_string().into())),
    }
}
