//! Commands: the table, one family file per type, and what they share.
//!
//! | file | owns |
//! |---|---|
//! | `table.rs` | what a row is: arity, flags, ACL categories, key specs, and [`table::Table`] (lookup, resolve) |
//! | `key_specs.rs` | Redis 7.0's key-spec language the rows are written in, and finding a command line's keys by it (routing, GETKEYS) |
//! | `registry.rs` | every family's rows gathered into the one table ([`table()`]) |
//! | `ctx.rs` | what a handler sees ([`Ctx`]: the session, the table, its region) and decides ([`Plan`]), [`CmdError`] |
//! | `session.rs` | per-connection state: the transaction being queued, subscriptions, and their resets |
//! | `route.rs` | where a request's keys are: their region, CROSSSLOT, access records |
//! | `shape.rs` | how a write's natural result is shown ([`Shape`]) |
//! | `args.rs` | argument grammars several families share |
//! | `elements.rs` | element scans and random picks of Hash, Set, Sorted Set |
//! | `in_apply.rs` | one command line run inside apply (a transaction's or a script's command) |
//! | `programs.rs` | the `types::apply::Programs` each region is handed: transactions, scripts, function changes, stream writes inside apply |
//! | `stream_apply.rs` | stream writes inside apply (`pb::Stream`: XADD ... XREADGROUP), made by `stream.rs` and `stream_group.rs` |
//! | `txn.rs` | MULTI/EXEC/WATCH: queueing, and EXEC's one replicated operation |
//! | `script/` | EVAL, SCRIPT, FUNCTION, FCALL (`mod.rs`); the hosts scripts call commands through (`host.rs`) |
//! | `pubsub.rs` | SUBSCRIBE and the other Pub/Sub commands (the registry is `shard::pubsub`) |
//! | `introspect.rs` | MEMORY, OBJECT, ROLE, LOLWUT, WAIT |
//! | `fanout.rs` | writes to several regions (FLUSHALL, FUNCTION LOAD, ...): which regions, and the one true reply |
//! | `string.rs` ... `zset.rs`, `keyspace.rs`, `server.rs` | the families: handlers first, rows last |
//! | `testing/` | (tests) a harness that runs command lines inside apply without a server, and each family's tests through it |
//!
//! Handlers parse and plan; they read through [`Ctx`] (on the connection's core,
//! or inside apply for a transaction or script: the same code) and turn writes
//! into a typed replicated operation. Dispatch (here) finds the row, checks
//! arity and authentication, and computes the keys' region from the row's key
//! specs before the handler runs (every region when they span several). Only the
//! connection loop awaits. Command code never touches sockets or Raft.
//!
//! Imports run one way: families use `table`, `ctx`, `session`, `route` and
//! the shared grammars, never `registry` or dispatch; a family that needs the
//! table (COMMAND, CLIENT LIST, EXEC, scripts) gets it from [`Ctx::table`].
//! The one circle left is commands that run commands: a row holds a handler
//! that takes a [`Ctx`], and a [`Ctx`] holds the table and the session's
//! queued rows (`table` -> `ctx` -> `session` -> `table`).

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
pub mod in_apply;
pub mod info;
pub mod introspect;
pub mod key_specs;
pub mod keyspace;
pub mod list;
pub mod programs;
pub mod pubsub;
pub mod registry;
pub mod route;
pub mod script;
pub mod server;
pub mod session;
pub mod set;
pub mod shape;
pub mod sort;
pub mod stream;
pub mod stream_apply;
pub mod stream_group;
pub mod string;
pub mod table;
#[cfg(test)]
mod testing;
pub mod txn;
pub mod zset;

use bytes::Bytes;

use crate::protocol::Reply;
use crate::shard::Core;

pub use ctx::{err, reply, Block, BlockingWork, CmdError, CmdResult, Ctx, Env, HandlerFn, Plan, INLINE_WALK};
pub use registry::table;
pub use session::Session;
pub use shape::Shape;
use table::{flag, CommandSpec, Handler};

/// True if earlier pipelined writes must be applied before `spec` runs. A
/// script that may write does not wait: it checks `Session::writes_pending`
/// itself (see `script::run`), so pipelined scripts commit together.
pub fn needs_barrier(spec: &CommandSpec) -> bool {
    if spec.flags & (flag::PROGRAM | flag::READONLY) == flag::PROGRAM {
        return false;
    }
    !spec.is_write() || spec.flags & flag::READS_INLINE != 0
}

/// Run a resolved command's handler on its connection's core.
pub fn run(core: &Core, session: &mut Session, spec: &'static CommandSpec, args: &[Bytes]) -> Plan {
    if !session.authed && spec.flags & flag::NO_AUTH == 0 {
        session.rejected = true;
        let r = Reply::error("NOAUTH Authentication required.");
        return Plan::Reply(session::refused(&core.shared, session, Some(spec), r));
    }
    let (Handler::Fn(f) | Handler::Container(Some(f))) = spec.handler else {
        return Plan::Reply(Reply::error("ERR container command without subcommand"));
    };
    // A RESP2 client with subscriptions runs only what Redis allows in that context.
    if session.resp == 2 && session::subscribed(session) && spec.flags & flag::WHILE_SUBSCRIBED == 0 {
        session.rejected = true;
        return Plan::Reply(session::refused(&core.shared, session, Some(spec), not_while_subscribed(spec)));
    }
    // While a script runs past the busy threshold, only what Redis allows runs.
    if spec.flags & flag::ALLOW_BUSY == 0 {
        if let Some(c) = core.shared.scripts.busy_script() {
            session.rejected = true;
            return Plan::Reply(session::refused(&core.shared, session, Some(spec), c.busy_reply()));
        }
    }
    let at = spec.keys_of(args);
    let routed = if core.shared.nodes.is_some() {
        // Cluster mode: the keys' slot decides, and only its leader serves it.
        let keys = at.iter().flatten().map(|&i| &args[i][..]);
        // READONLY: a follower serves reads (the connection waited for the
        // leader's read index before running them).
        // Writes carry the epoch they were routed by, plus one (0: unchecked).
        cluster::route(&core.shared, keys, session.follower_reads && !spec.is_write())
            .map(|r| r.map(|(r, epoch)| (r, epoch + 1)))
    } else {
        route::region_at(core, at.as_deref(), args).map(|r| r.map(|r| (r, 0)))
    };
    let (region, epoch) = match routed {
        Ok(r) => (r.map(|(r, _)| r), r.map_or(0, |(_, e)| e)),
        Err(e) => {
            session.rejected = true;
            return Plan::Reply(e);
        }
    };
    if let Some(at) = at.as_deref().filter(|at| !at.is_empty()) {
        route::record_access(core, session, spec, at, args);
    }
    let mut ctx = Ctx::new(&core.shared, session, table(), spec, region, Env::Conn(core));
    ctx.epoch = epoch;
    match f(&mut ctx, args) {
        Ok(p) => p,
        Err(e) => Plan::Reply(e.into_reply()),
    }
}

/// Redis's refusal of a command a RESP2 client may not run while subscribed
/// (those it may are `flag::WHILE_SUBSCRIBED`).
fn not_while_subscribed(spec: &CommandSpec) -> Reply {
    Reply::Error(
        format!(
            "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
            spec.name
        )
        .into(),
    )
}
