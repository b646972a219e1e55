//! Where a script's `redis.call` lands: the hosts ([`ApplyHost`] inside apply,
//! [`ReadHost`] over a snapshot), the checks every call passes, what a run
//! leaves to the observers ([`CallLog`]), and the ways a script is run (inside
//! apply, read-only off the reactor, or tried on the connection's core first).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::super::ctx::{err, BlockingWork, CmdResult, Ctx, Env, Plan};
use super::super::session::Session;
use super::super::table::{flag::*, spec_id, CommandSpec, Handler, Table};
use super::{engine, limits};
use crate::cluster::key_slot;
use crate::protocol::Reply;
use crate::script::{self, Control, Host, RunArgs};
use crate::shard::observe::{Observe, Outcome};
use crate::shard::Shared;
use crate::storage::StorageError;
use crate::types::coll::Rng;
use crate::types::{ApplyCtx, Snap};

/// A refused call: the command's row when it has one (its `rejected_calls`
/// count, as Redis counts a refusal inside a script), and the error.
type Refusal = (Option<&'static CommandSpec>, Reply);

/// What every host checks before running a script's command; the row.
fn check_call(
    table: &'static Table,
    args: &[Bytes],
    read_only: bool,
    control: &Control,
) -> Result<&'static CommandSpec, Refusal> {
    let spec = match table.resolve(args) {
        Ok(s) => s,
        Err(Reply::Error(e)) if e.starts_with("ERR wrong number") => {
            let row = table.lookup(&args[0]);
            return Err((row, Reply::error("ERR Wrong number of args calling Redis command from script")));
        }
        Err(_) => return Err((None, Reply::error("ERR Unknown Redis command called from script"))),
    };
    if spec.flags & NOSCRIPT != 0 {
        return Err((Some(spec), Reply::error("ERR This Redis command is not allowed from script")));
    }
    if spec.is_write() {
        if read_only {
            return Err((Some(spec), Reply::error(super::super::ctx::READONLY_SCRIPT)));
        }
        control.wrote.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    Ok(spec)
}

/// Cluster mode: a write to every region (FLUSHALL, FUNCTION LOAD, ...) from
/// a script, which runs in one region's log, is refused (it would reach that
/// region only).
fn fanout_refused(shared: &Shared, spec: &CommandSpec) -> Option<Reply> {
    (shared.nodes.is_some() && spec.flags & FANOUT != 0).then(|| {
        Reply::error("ERR This Redis command is not allowed from script in cluster mode (it writes every region this node leads)")
    })
}

/// What a run's `redis.call`s leave to the server's observers, kept until the
/// run ends: the `[0 lua]` lines MONITOR shows (as redis-server does, fed
/// before the script's own reply), and each call's figures for INFO
/// commandstats and errorstats. A trial that is stopped feeds nothing: the
/// script runs again and is counted then.
struct CallLog {
    /// `None` when no client was monitoring as the run began.
    lines: Option<Vec<Bytes>>,
    /// Each call with a row: the row, its time, how it ended.
    calls: Vec<(&'static CommandSpec, Duration, Outcome)>,
    /// Each error a call answered (refusals included), in order.
    errors: Vec<String>,
    /// The run's error reply is a call's error passed on (raised, or returned
    /// by `redis.pcall`): counted once, as the call's, as Redis does.
    passed_on: bool,
}

impl CallLog {
    fn new(shared: &Shared) -> CallLog {
        CallLog {
            lines: shared.observe.has_monitors().then(Vec::new),
            calls: Vec::new(),
            errors: Vec::new(),
            passed_on: false,
        }
    }
    fn show(&mut self, db: u16, spec: &CommandSpec, args: &[Bytes]) {
        if let Some(lines) = &mut self.lines {
            if spec.flags & (ADMIN | SKIP_MONITOR) == 0 {
                lines.push(crate::shard::observe::monitor_line(db, "lua", args));
            }
        }
    }
    /// A call that ran, taking `took`, and its reply.
    fn answered(&mut self, spec: &'static CommandSpec, took: Duration, r: &Reply) {
        let error = r.error_text();
        self.calls.push((spec, took, if error.is_some() { Outcome::Failed } else { Outcome::Ok }));
        if let Some(e) = error {
            self.errors.push(e.into_owned());
        }
    }
    /// A call refused before it ran; its error, for the script.
    fn refused(&mut self, (spec, r): Refusal) -> Reply {
        if let Some(spec) = spec {
            self.calls.push((spec, Duration::ZERO, Outcome::Rejected));
        }
        if let Some(e) = r.error_text() {
            self.errors.push(e.into_owned());
        }
        r
    }
    /// The run ended with `reply` (on `core`): feed what was kept.
    fn feed(self, shared: &Shared, core: usize, reply: &Reply) {
        let obs = &shared.observe;
        for line in self.lines.into_iter().flatten() {
            obs.feed(line);
        }
        for (spec, took, outcome) in self.calls {
            obs.record(core, spec_id(spec), took, outcome);
        }
        let mut errors = self.errors;
        // The reply is counted as it is sent; the call error it passes on is
        // not counted twice.
        if let (true, Some(e)) = (self.passed_on, reply.error_text()) {
            let code = Observe::error_code(&e);
            if let Some(i) = errors.iter().rposition(|c| Observe::error_code(c) == code) {
                errors.remove(i);
            }
        }
        for e in errors {
            obs.error(&e);
        }
    }
}

/// `redis.call` inside apply: the command runs against the region's batch.
pub struct ApplyHost<'a> {
    shared: &'a Shared,
    table: &'static Table,
    apply: &'a mut ApplyCtx,
    rng: Rng,
    session: Session,
    control: Arc<Control>,
    read_only: bool,
    /// A storage failure (fatal for apply), reported after the run.
    failed: Option<StorageError>,
    log: CallLog,
}

impl Host for ApplyHost<'_> {
    fn call(&mut self, args: &[Bytes], resp: u8) -> Reply {
        let spec = match check_call(self.table, args, self.read_only, &self.control) {
            Ok(s) => s,
            Err(refusal) => return self.log.refused(refusal),
        };
        // Only keys of the region being applied may be touched from here.
        let (start, end) = self.apply.slots();
        if let Some(at) = spec.keys_of(args) {
            if at.iter().any(|&i| {
                let s = key_slot(&args[i]) as u32;
                s < start as u32 || s >= end
            }) {
                let r = Reply::error(super::super::cluster::NON_LOCAL);
                return self.log.refused((Some(spec), r));
            }
        }
        if let Some(r) = fanout_refused(self.shared, spec) {
            return self.log.refused((Some(spec), r));
        }
        self.session.resp = resp;
        self.log.show(self.session.db, spec, args);
        let started = Instant::now();
        let (shared, table) = (self.shared, self.table);
        let r = match super::super::in_apply::run_in_apply(
            shared,
            table,
            &mut self.session,
            self.apply,
            &mut self.rng,
            args,
        ) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("ERR {e}");
                self.failed = Some(e);
                Reply::Error(msg.into())
            }
        };
        self.log.answered(spec, started.elapsed(), &r);
        r
    }
    fn passed_on_error(&mut self) {
        self.log.passed_on = true;
    }
    fn known(&self, args: &[Bytes]) -> bool {
        self.table.resolve(args).is_ok()
    }
}

/// `redis.call` in a read-only script: reads from the script's one snapshot.
pub struct ReadHost<'a> {
    shared: &'a Shared,
    table: &'static Table,
    snap: &'a Snap<'a>,
    session: Session,
    control: Arc<Control>,
    /// A trial of a script that may write, whose keys are in this region: a
    /// write, or a key of another region, stops the trial instead.
    trial: Option<u32>,
    /// The region of the first key a call touched (cluster mode: where a
    /// script that declared no keys is sent once it writes).
    first_region: Option<u32>,
    log: CallLog,
}

impl Host for ReadHost<'_> {
    fn call(&mut self, args: &[Bytes], resp: u8) -> Reply {
        let spec = match check_call(self.table, args, self.trial.is_none(), &self.control) {
            Ok(s) => s,
            Err(refusal) => return self.log.refused(refusal),
        };
        // Cluster mode: only keys of the regions dispatch confirmed are read
        // here (a stale read otherwise), as a command sent here directly.
        if let Err(r) = super::super::cluster::script_call_local(self.shared, &self.session, spec, args) {
            return self.log.refused((Some(spec), r));
        }
        if let Some(r) = fanout_refused(self.shared, spec) {
            return self.log.refused((Some(spec), r));
        }
        if self.first_region.is_none() {
            let at = spec.keys_of(args).unwrap_or_default();
            self.first_region = at.first().map(|&i| self.shared.router().region_of_key(&args[i]).id);
        }
        if let Some(region) = self.trial {
            // A script that will run as a cross-region write (every region)
            // may read any key here: the snapshot holds them all.
            let elsewhere = || {
                let router = self.shared.router();
                region != crate::shard::cross::ALL_REGIONS
                    && spec
                        .keys_of(args)
                        .is_some_and(|at| at.iter().any(|&i| router.region_of_key(&args[i]).id != region))
            };
            if spec.is_write() || (self.shared.router().regions().len() > 1 && elsewhere()) {
                self.control.kill.store(true, std::sync::atomic::Ordering::Relaxed);
                return Reply::error(script::KILLED);
            }
        }
        let (Handler::Fn(f) | Handler::Container(Some(f))) = spec.handler else {
            return Reply::error("ERR container command without subcommand");
        };
        self.session.resp = resp;
        self.log.show(self.session.db, spec, args);
        let started = Instant::now();
        let mut ctx = Ctx::new(self.shared, &mut self.session, self.table, spec, None, Env::ReadOnly(self.snap));
        let r = match f(&mut ctx, args) {
            Ok(Plan::Reply(r)) => r,
            Ok(_) => Reply::error("ERR This Redis command is not allowed from script"),
            Err(e) => e.into_reply(),
        };
        self.log.answered(spec, started.elapsed(), &r);
        r
    }
    fn passed_on_error(&mut self) {
        self.log.passed_on = true;
    }
    fn known(&self, args: &[Bytes]) -> bool {
        self.table.resolve(args).is_ok()
    }
}

/// What to run: a script's text, or a function of a library.
#[derive(Clone)]
pub(super) enum Code {
    Script { sha: String, body: Bytes },
    Function { lib: String, code: Bytes, name: String },
}

impl Code {
    fn name(&self) -> String {
        match self {
            Code::Script { sha, .. } => sha.clone(),
            Code::Function { name, .. } => name.clone(),
        }
    }
}

/// Register a run of `code` (busy detection, SCRIPT KILL); it ends when the
/// returned guard drops.
pub(super) fn start(shared: &Shared, code: &Code, argv: Vec<Bytes>, entry: Option<(u32, u64, u32)>) -> script::Running {
    let (busy_after, _) = limits(shared);
    let c = Control::new(&shared.scripts, code.name(), matches!(code, Code::Function { .. }), argv, busy_after);
    shared.scripts.start(match entry {
        Some(e) => c.in_entry(e),
        None => c,
    })
}

/// Run `code` with `host` as the registered `running`; the reply.
pub(super) fn run_code(
    shared: &Shared,
    code: &Code,
    keys: &[Bytes],
    args: &[Bytes],
    seed: u64,
    running: &script::Running,
    host: &mut dyn Host,
) -> Reply {
    let (_, memory_limit) = limits(shared);
    let run = RunArgs { keys, args, seed, control: &running.control, memory_limit };
    engine(shared, |e| match code {
        Code::Script { sha, body } => e.eval(sha, body, &run, host),
        Code::Function { lib, code, name } => e.fcall(lib, code, name, &run, host),
    })
}

/// Run `code` inside apply (a script that may write, or any script inside a
/// transaction).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_in_apply(
    shared: &Shared,
    table: &'static Table,
    apply: &mut ApplyCtx,
    code: &Code,
    keys: &[Bytes],
    args: &[Bytes],
    seed: u64,
    argv: Vec<Bytes>,
    read_only: bool,
) -> Result<Reply, StorageError> {
    let running = start(shared, code, argv, Some((apply.region, apply.index, apply.cmd_pos)));
    let ldb = apply.ldb;
    let session = Session::scripted(apply.now_ms, ldb);
    let mut host = ApplyHost {
        shared,
        table,
        apply,
        rng: Rng::new(seed ^ 0x5deece66d),
        session,
        control: running.control.clone(),
        read_only,
        failed: None,
        log: CallLog::new(shared),
    };
    let r = run_code(shared, code, keys, args, seed, &running, &mut host);
    // The script's SELECT was its own: the transaction goes on in its database.
    host.apply.select(ldb);
    match host.failed.take() {
        Some(e) => Err(e),
        None => {
            let region = host.apply.region;
            let core = shared.router().regions().iter().find(|r| r.id == region).map_or(0, |r| r.core);
            host.log.feed(shared, core, &r);
            Ok(r)
        }
    }
}

/// Run `code` read-only over a snapshot, off the reactor.
pub(super) fn read_only_plan(
    ctx: &Ctx<'_>,
    code: Code,
    keys: Vec<Bytes>,
    args: Vec<Bytes>,
    argv: Vec<Bytes>,
) -> CmdResult {
    let Some(core) = ctx.core() else { return Err(err("ERR scripts cannot run here")) };
    let (shared, core) = (core.shared.clone(), core.id);
    let now_ms = ctx.now_ms();
    let (db, physical) = (ctx.session.db, ctx.physical_db());
    let confirmed = ctx.session.confirmed.clone();
    let table = ctx.table;
    Ok(Plan::Blocking(BlockingWork(Box::new(move || {
        let snap = Snap::new(shared.storage.view(), now_ms, physical);
        let running = start(&shared, &code, argv, None);
        let mut host = ReadHost {
            shared: &shared,
            table,
            snap: &snap,
            session: Session::scripted(now_ms, db).confirmed(confirmed),
            control: running.control.clone(),
            trial: None,
            first_region: None,
            log: CallLog::new(&shared),
        };
        let r = run_code(&shared, &code, &keys, &args, rand::random(), &running, &mut host);
        host.log.feed(&shared, core, &r);
        r
    }))))
}

/// How long a script is tried on the connection's core before it is sent where
/// long scripts run (the blocking pool, or apply).
const TRIAL_BUDGET: Duration = Duration::from_millis(1);

/// Try `code` here, on the connection's core, over one snapshot: its reply if
/// it ends within [`TRIAL_BUDGET`] having only read. A script that reads and
/// does not write needs no log entry (redis-server does not propagate one
/// either), and reads are served from this core's snapshots as GET is.
/// `None` when it reaches a write (or, for a script that may write, a key of
/// another region) or runs long: its reply is dropped, nothing it did is
/// kept, and it runs again where it belongs. `region` is the script's region
/// for a script that may write, `None` for a read-only one (whose writes are
/// refused with Redis's error, as on the pool).
pub(super) fn trial(
    ctx: &Ctx<'_>,
    code: &Code,
    keys: &[Bytes],
    args: &[Bytes],
    seed: u64,
    region: Option<u32>,
) -> Result<Reply, Option<u32>> {
    let (shared, now_ms, core) = (ctx.shared, ctx.now_ms(), ctx.core().map_or(0, |c| c.id));
    let snap = Snap::new(shared.storage.view(), now_ms, ctx.physical_db());
    let function = matches!(code, Code::Function { .. });
    let control =
        Arc::new(Control::new(&shared.scripts, code.name(), function, Vec::new(), Duration::ZERO).trial(TRIAL_BUDGET));
    let mut host = ReadHost {
        shared,
        table: ctx.table,
        snap: &snap,
        session: Session::scripted(now_ms, ctx.session.db).confirmed(ctx.session.confirmed.clone()),
        control: control.clone(),
        trial: region,
        first_region: None,
        log: CallLog::new(shared),
    };
    let (_, memory_limit) = limits(shared);
    let run = RunArgs { keys, args, seed, control: &control, memory_limit };
    let r = engine(shared, |e| match code {
        Code::Script { sha, body } => e.eval(sha, body, &run, &mut host),
        Code::Function { lib, code, name } => e.fcall(lib, code, name, &run, &mut host),
    });
    if control.kill.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(host.first_region);
    }
    host.log.feed(shared, core, &r);
    Ok(r)
}
