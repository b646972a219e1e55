//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, and the executor that
//! runs a transaction's commands inside apply.
//!
//! While a client is in MULTI, dispatch queues its commands (`queue`), checking
//! at once what Redis checks at queue time (unknown command, arity,
//! authentication, NO_MULTI): a refusal flags the transaction and EXEC then
//! answers EXECABORT. EXEC splits the queue: the commands that read or write the
//! keyspace become ONE replicated operation (`pb::Exec`) that apply runs in order
//! against its batch (`programs::Executor`), so nothing interleaves, every replica applies
//! the same result and a crash keeps all of it or none; the others (PING, CLIENT,
//! CONFIG, ...) run on the connection afterwards, and the replies are merged in
//! queue order. With watched keys the operation is fenced by its region's
//! proposer (`raft::region`): checked against every write applied before it and
//! proposed only if none touched a watched key.

use bytes::Bytes;

use super::ctx::{err, reply, CmdResult, Ctx, Plan};
use super::key_specs as ks;
use super::route::{record_access, CROSSSLOT};
use super::session::{unwatch_all, ExecPlan, Multi, Queued, Session};
use super::table::{flag::*, row, CommandSpec, Group};
use crate::pb::{self, write_cmd::Op, WriteCmd};
use crate::protocol::Reply;
use crate::shard::Shared;
use crate::types::watches::Watched;
use crate::types::Source;

const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";

/// Inside MULTI: queue the command (`+QUEUED`) or refuse it (flagging the
/// transaction). `None` if the client is not in MULTI or the command runs now.
pub fn queue(shared: &Shared, session: &mut Session, spec: &'static CommandSpec, args: &[Bytes]) -> Option<Reply> {
    if spec.flags & NOT_QUEUED != 0 {
        return None;
    }
    let authed = session.authed;
    let multi = session.multi.as_mut()?;
    if !authed && spec.flags & NO_AUTH == 0 {
        multi.failed = true;
        return Some(Reply::error("NOAUTH Authentication required."));
    }
    if spec.flags & ALLOW_BUSY == 0 {
        if let Some(c) = shared.scripts.busy_script() {
            multi.failed = true;
            return Some(c.busy_reply());
        }
    }
    if spec.flags & NO_MULTI != 0 {
        multi.failed = true;
        return Some(Reply::error("ERR Command not allowed inside a transaction"));
    }
    multi.queue.push(Queued { spec, args: args.to_vec() });
    Some(Reply::Simple("QUEUED".into()))
}

fn multi(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx.session.multi.is_some() {
        return Err(err("ERR MULTI calls can not be nested"));
    }
    ctx.session.multi = Some(Multi::default());
    reply(Reply::Ok)
}

fn discard(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx.session.multi.is_none() {
        return Err(err("ERR DISCARD without MULTI"));
    }
    super::session::end_transaction(ctx.shared, ctx.session);
    reply(Reply::Ok)
}

fn watch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.session.multi.is_some() {
        return Err(err("ERR WATCH inside MULTI is not allowed"));
    }
    if ctx.detached() {
        return Err(err("ERR WATCH is not allowed here"));
    }
    let router = ctx.shared.router();
    for key in &args[1..] {
        let mk = Bytes::from(crate::types::mkey_in(ctx.session.db, key));
        if ctx.session.watched.iter().any(|w| w.key == mk) {
            continue;
        }
        let region = router.region_of_key(key).id;
        // Registered first, then read: a write the read sees is either before the
        // registration's index or recorded after it (see `types::watches`).
        let since = ctx.shared.watches.watch(&mk, region);
        let stored = Bytes::from(crate::types::mkey_in(ctx.physical_db(), key));
        let alive = ctx.reader().meta(key)?.is_some();
        ctx.session.watched.push(Watched { key: mk, stored, region, since, alive });
    }
    reply(Reply::Ok)
}

fn unwatch(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let watched = std::mem::take(&mut ctx.session.watched);
    unwatch_all(ctx.shared, &watched);
    reply(Reply::Ok)
}

fn exec(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let Some(m) = ctx.session.multi.take() else { return Err(err("ERR EXEC without MULTI")) };
    let watched = std::mem::take(&mut ctx.session.watched);
    if m.failed {
        unwatch_all(ctx.shared, &watched);
        return Err(err(EXECABORT));
    }
    let router = ctx.shared.router();
    // A watched key whose slot is in another region now (a split since WATCH)
    // counts as modified (`Watches::moved`): the transaction fails as one
    // whose watched key changed, as Redis's does, and not as keys of two
    // slots.
    let moved = |w: &Watched| {
        crate::storage::keys::decode_meta_key(&w.key)
            .is_some_and(|(slot, _)| router.region_of_slot(slot).id != w.region)
    };
    if ctx.shared.nodes.is_some() && watched.iter().any(moved) {
        unwatch_all(ctx.shared, &watched);
        return reply(Reply::NilArray);
    }
    // Cluster mode: the epoch the keys' slot is routed by (apply refuses the
    // transaction if its region split meanwhile).
    let mut epoch = 0;
    let mut region = None;
    let mut span = |r: u32| match region {
        None => {
            region = Some(r);
            true
        }
        Some(x) => x == r,
    };
    let mut same = watched.iter().all(|w| span(w.region));
    let mut op = pb::Exec { resp: ctx.session.resp as u32, stream_limits: ctx.stream_limits(), ..Default::default() };
    let mut queue = Vec::with_capacity(m.queue.len());
    for q in m.queue {
        let in_apply = q.in_apply();
        if in_apply {
            let at = q.spec.keys_of(&q.args).unwrap_or_default();
            // The commands run inside apply, not through dispatch: their keys are
            // used now (the others pass through dispatch after).
            if let Some(core) = ctx.core() {
                record_access(core, ctx.session, q.spec, &at, &q.args);
            }
            for i in at {
                let slot = crate::cluster::key_slot(&q.args[i]);
                same &= span(router.region_of_slot(slot).id);
                if epoch == 0 && ctx.shared.nodes.is_some() {
                    epoch = router.slot_epoch(slot) + 1;
                }
            }
            op.cmds.push(pb::Argv { args: q.args.clone() });
        }
        queue.push((q.spec, q.args, in_apply));
    }
    // A queued script may touch keys it did not declare (see `script::run`),
    // and a queued FLUSHALL or FLUSHDB flushes every region.
    let standalone_regions = ctx.shared.nodes.is_none() && router.regions().len() > 1;
    let everywhere = |spec: &CommandSpec| spec.flags & (PROGRAM | FANOUT) != 0;
    if standalone_regions && queue.iter().any(|(spec, _, in_apply)| *in_apply && everywhere(spec)) {
        same = false;
    }
    // Cluster mode: a transaction is one entry of one region's log, and a
    // write to every region this node leads cannot be part of it.
    if let Some((spec, _, _)) = ctx.shared.nodes.as_ref().and(queue.iter().find(|(s, _, _)| s.flags & FANOUT != 0)) {
        unwatch_all(ctx.shared, &watched);
        let name = spec.name.replace('|', " ").to_ascii_uppercase();
        return Err(err(format!(
            "ERR {name} is not allowed in a transaction in cluster mode (it writes every region this node leads; a transaction runs in one)"
        )));
    }
    // A SWAPDB is a cross-region write even with one region: alone in its
    // apply batch, so the mapping changes between two batches of every region.
    if ctx.shared.nodes.is_none() && queue.iter().any(|(spec, _, _)| spec.flags & SWAPS_DBS != 0) {
        same = false;
    }
    if !same {
        if ctx.shared.nodes.is_some() {
            unwatch_all(ctx.shared, &watched);
            return Err(err(CROSSSLOT));
        }
        // Standalone: a cross-region write (`shard::cross`).
        region = Some(crate::shard::cross::ALL_REGIONS);
    }
    op.seed = ctx.random();
    let db = ctx.session.db as u32;
    let cmd = (!op.cmds.is_empty()).then(|| WriteCmd { op: Some(Op::Exec(op)), db, epoch });
    // Without keys, standalone: region 0 (any would do). In cluster mode a
    // region this node leads: the transaction's keyless reads (DBSIZE, SCAN,
    // ...) cover that region's slots, read inside apply at the entry's place.
    let home = || {
        let nodes = ctx.shared.nodes.as_deref()?;
        router.regions().iter().map(|r| r.id).find(|&r| nodes.leader(r) == Some(nodes.me))
    };
    let region = region.or_else(home).unwrap_or(0);
    Ok(Plan::Exec(ExecPlan { region, cmd, watched, queue }))
}

const F: u32 = NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY;
const G: Group = Group::Transactions;

pub static COMMANDS: &[CommandSpec] = &[
    row("multi", 1, F | NOT_QUEUED, G, "1.2.0", "Starts a transaction.", multi),
    row(
        "exec",
        1,
        NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG | NOT_QUEUED | RUNS_QUEUE,
        G,
        "1.2.0",
        "Executes all commands in a transaction.",
        exec,
    ),
    row("discard", 1, F | NOT_QUEUED, G, "2.0.0", "Discards a transaction.", discard),
    row(
        "watch",
        -2,
        F | NO_TOUCH | NOT_QUEUED,
        G,
        "2.2.0",
        "Monitors changes to keys to determine the execution of a transaction.",
        watch,
    )
    .key_specs(&[ks::spec(ks::RO, ks::index(1), ks::range(-1, 1, 0))]),
    row("unwatch", 1, F, G, "2.2.0", "Forgets about watched keys of a transaction.", unwatch),
];
