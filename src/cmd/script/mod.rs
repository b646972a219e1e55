//! Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, FUNCTION,
//! FCALL, FCALL_RO; the hosts a script's `redis.call` reaches the command table
//! through; and what apply runs for them.
//!
//! Where a script runs:
//! - one that may write (EVAL/EVALSHA/FCALL of a script without `no-writes`) is
//!   ONE replicated operation (`pb::Eval`) carrying its text (EVALSHA resolved
//!   by the leader) or its function's name, run inside apply against the
//!   region's batch ([`host::ApplyHost`]): nothing interleaves, time and `math.random`
//!   come from the entry, every replica ends byte for byte equal;
//! - a read-only one (EVAL_RO, FCALL_RO, `no-writes`) runs on the connection's
//!   core, off the reactor, over one snapshot ([`host::ReadHost`]), with no Raft round.
//!
//! Function libraries are replicated data: FUNCTION LOAD/DELETE/FLUSH/RESTORE are
//! proposed to every region, whose apply compiles them and keeps them in
//! `Cf::Functions` and in `Shared::functions` (per region).

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;

use super::ctx::help_reply as help;
use super::ctx::{err, reply, CmdError, CmdResult, Ctx};
use super::key_specs as ks;
use super::table::{container, flag::*, row, CommandSpec, Group, Table};
use super::Shape;
use crate::pb::{self, functions::Action, write_cmd::Op};
use crate::protocol::cursor::parse_i64;
use crate::protocol::{rdb, Reply};
use crate::script::functions::{library_name, FunctionMeta, Libraries, LibraryMeta, RestorePolicy};
use crate::script::vm::with_engine;
use crate::script::{self, Control, Flags};
use crate::shard::Shared;
use crate::storage::keys::function_key;
use crate::storage::{Cf, StorageError};
use crate::types::ApplyCtx;

mod host;

use host::{read_only_plan, run_in_apply, trial, Code};

const NOSCRIPT_REPLY: &str = "NOSCRIPT No matching script. Please use EVAL.";
const RO_WRITE: &str = "ERR Can not execute a script with write flag using *_ro command.";

/// The scripting settings of the moment: (busy threshold, Lua memory limit).
fn limits(shared: &Shared) -> (Duration, usize) {
    let cfg = shared.config();
    let busy = cfg.param("busy-reply-threshold").and_then(|v| v.parse::<u64>().ok()).unwrap_or(5000);
    let mem = cfg.param("lua-memory-limit").and_then(crate::config::parse_memory).unwrap_or(0).max(0) as usize;
    (Duration::from_millis(busy), mem)
}

/// Run `f` with this thread's VM under the current settings.
fn engine<T>(shared: &Shared, f: impl FnOnce(&mut script::vm::Engine) -> T) -> T {
    let (_, mem) = limits(shared);
    with_engine(shared.scripts.generation.load(std::sync::atomic::Ordering::SeqCst), mem, f)
}

// ---- EVAL family ----

/// `numkeys key... arg...` at `args[at..]`; EVAL's errors (`bad` for a count
/// that is not a number: FCALL says it differently).
fn split_keys<'a>(args: &'a [Bytes], at: usize, bad: &'static str) -> Result<(&'a [Bytes], &'a [Bytes]), CmdError> {
    let n = parse_i64(&args[at]).ok_or_else(|| err(bad))?;
    let rest = &args[at + 1..];
    if n > rest.len() as i64 {
        return Err(err("ERR Number of keys can't be greater than number of args"));
    }
    if n < 0 {
        return Err(err("ERR Number of keys can't be negative"));
    }
    Ok(rest.split_at(n as usize))
}

/// Compile-check `body` on this thread and cache it; its SHA1 and flags.
fn load_script(shared: &Shared, body: &Bytes) -> Result<(String, Flags), CmdError> {
    let sha = script::sha1hex(body);
    if let Some(c) = shared.scripts.get(sha.as_bytes()) {
        return Ok((sha, c.flags));
    }
    let flags =
        engine(shared, |e| e.check(&sha, body)).map_err(|e| CmdError::Bytes([&b"ERR "[..], &e].concat().into()))?;
    shared.scripts.add(body.clone(), flags);
    Ok((sha, flags))
}

fn eval_generic(ctx: &mut Ctx<'_>, args: &[Bytes], by_sha: bool, ro: bool) -> CmdResult {
    if by_sha && args[1].len() != 40 {
        return Err(err(NOSCRIPT_REPLY));
    }
    let (keys, argv) = split_keys(args, 2, "ERR value is not an integer or out of range")?;
    let (sha, body, flags) = if by_sha {
        let c = ctx.shared.scripts.get(&args[1]).ok_or_else(|| err(NOSCRIPT_REPLY))?;
        (String::from_utf8_lossy(&args[1]).to_ascii_lowercase(), c.body, c.flags)
    } else {
        let (sha, flags) = load_script(ctx.shared, &args[1])?;
        (sha, args[1].clone(), flags)
    };
    if ro && !flags.no_writes && !flags.compat {
        return Err(err(RO_WRITE));
    }
    let code = Code::Script { sha, body: body.clone() };
    let stream_limits = ctx.stream_limits();
    run(
        ctx,
        code,
        keys,
        argv,
        ro || flags.no_writes,
        args,
        Op::Eval(pb::Eval {
            body,
            function: String::new(),
            keys: keys.to_vec(),
            args: argv.to_vec(),
            seed: 0,
            argv: args.to_vec(),
            stream_limits,
        }),
    )
}

/// Run a script where the handler is: read-only on the connection's core, as a
/// replicated operation, or at once inside apply (in a transaction).
fn run(
    ctx: &mut Ctx<'_>,
    code: Code,
    keys: &[Bytes],
    argv: &[Bytes],
    read_only: bool,
    line: &[Bytes],
    mut op: Op,
) -> CmdResult {
    let seed = ctx.random();
    if ctx.core().is_some() {
        if ctx.shared.observe.has_monitors() && !ctx.session.in_exec {
            ctx.shared.observe.feed(crate::shard::observe::monitor_line(ctx.session.db, &ctx.session.entry.addr, line));
            ctx.session.monitor_shown = true;
        }
        // EVAL, EVALSHA and FCALL do not wait for this client's earlier writes
        // (`needs_barrier`): with none pending the script is tried here, else
        // it goes to the log behind them, where it sees them.
        // Standalone with several regions, a script that may write is a
        // cross-region write: it may touch keys it did not declare.
        if !read_only && ctx.shared.nodes.is_none() && ctx.shared.router().regions().len() > 1 {
            ctx.region = Some(crate::shard::cross::ALL_REGIONS);
        }
        // Cluster mode: a script that declares no keys runs in the region of
        // the first key it touches, as Redis Cluster runs it on the node of
        // that key's slot; its trial (over the regions dispatch confirmed this
        // node leads) finds which.
        let undecided = !read_only && ctx.shared.nodes.is_some() && keys.is_empty();
        if undecided {
            ctx.region = Some(crate::shard::cross::ALL_REGIONS);
        }
        if !ctx.session.writes_pending {
            let region = (!read_only).then_some(ctx.region.unwrap_or(0));
            match trial(ctx, &code, keys, argv, seed, region) {
                Ok(r) => return reply(r),
                Err(first) if undecided => ctx.region = first,
                Err(_) => {}
            }
            if read_only {
                return read_only_plan(ctx, code, keys.to_vec(), argv.to_vec(), line.to_vec());
            }
        }
        if undecided && ctx.region.is_none_or(|r| r == crate::shard::cross::ALL_REGIONS) {
            // It touched no key before it wrote (or ran past its trial): the
            // first region this node confirmed; calls of other regions' keys
            // are refused there.
            ctx.region = Some(home_region(ctx));
        }
        if let Op::Eval(e) = &mut op {
            e.seed = seed;
        }
        return ctx.write(op, Shape::Natural);
    }
    let shared = ctx.shared;
    let table = ctx.table;
    match ctx.with_apply(|apply| run_in_apply(shared, table, apply, &code, keys, argv, seed, line.to_vec(), read_only))
    {
        Some(r) => reply(r?),
        None => Err(err("ERR This Redis command is not allowed from script")),
    }
}

fn eval(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, false, false)
}
fn evalsha(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, true, false)
}
fn eval_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, false, true)
}
fn evalsha_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, true, true)
}

// ---- SCRIPT ----

fn script_load(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (sha, _) = load_script(ctx.shared, &args[2])?;
    reply(Reply::bulk_str(&sha))
}

fn script_exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Array(args[2..].iter().map(|s| Reply::Int(ctx.shared.scripts.exists(s) as i64)).collect()))
}

fn script_flush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 3 || (args.len() == 3 && !matches!(args[2].to_ascii_uppercase().as_slice(), b"SYNC" | b"ASYNC")) {
        return Err(err("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
    }
    ctx.shared.scripts.flush();
    reply(Reply::Ok)
}

/// SCRIPT KILL and FUNCTION KILL: stop the oldest run of that kind that has not
/// written; Redis's refusals otherwise.
fn kill(shared: &Shared, function: bool) -> CmdResult {
    let running = shared.scripts.running();
    let Some(c) = running.first() else { return Err(err("NOTBUSY No scripts in execution right now.")) };
    if c.wrote.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(err("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."));
    }
    if c.function != function {
        return Err(busy_error(c));
    }
    c.kill.store(true, std::sync::atomic::Ordering::SeqCst);
    reply(Reply::Ok)
}

fn busy_error(c: &Control) -> CmdError {
    match c.busy_reply() {
        Reply::Error(e) => err(e),
        _ => err("BUSY"),
    }
}

fn script_kill(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    kill(ctx.shared, false)
}

fn script_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
    ])
}

// ---- FCALL ----

/// The libraries a command sees: its region's. Standalone every region holds
/// the same set once a change is acknowledged; in cluster mode each region
/// holds what was loaded through the node that led it then (FUNCTION LOAD is
/// a write to the regions the node it is sent to leads, `cmd::fanout`).
fn libraries(shared: &Shared, region: u32) -> Libraries {
    let fns = shared.functions.read().unwrap_or_else(|e| e.into_inner());
    fns.get(&region).cloned().unwrap_or_default()
}

/// The region whose libraries a command reads: inside apply the region
/// applied; else its keys'; without keys, standalone region 0 (all alike), in
/// cluster mode the first region dispatch confirmed for it (or, for a write,
/// the first this node leads).
fn home_region(ctx: &Ctx<'_>) -> u32 {
    if let Some(r) = ctx.apply_region().or(ctx.region).filter(|&r| r != crate::shard::cross::ALL_REGIONS) {
        return r;
    }
    let Some(nodes) = ctx.shared.nodes.as_deref() else { return 0 };
    if let Some(&r) = ctx.session.confirmed.as_deref().and_then(|c| c.first()) {
        return r;
    }
    let router = ctx.shared.router();
    router.regions().iter().map(|r| r.id).find(|&r| nodes.leader(r) == Some(nodes.me)).unwrap_or(0)
}

fn fcall_generic(ctx: &mut Ctx<'_>, args: &[Bytes], ro: bool) -> CmdResult {
    let libs = libraries(ctx.shared, home_region(ctx));
    let name = String::from_utf8_lossy(&args[1]).into_owned();
    let Some((lib, f)) = libs.function(&name) else { return Err(err("ERR Function not found")) };
    let (keys, argv) = split_keys(args, 2, "ERR Bad number of keys provided")?;
    if ro && !f.flags.no_writes {
        return Err(err(RO_WRITE));
    }
    let code = Code::Function { lib: lib.name.clone(), code: lib.code.clone(), name: f.name.clone() };
    let op = Op::Eval(pb::Eval {
        body: Bytes::new(),
        function: f.name.clone(),
        keys: keys.to_vec(),
        args: argv.to_vec(),
        seed: 0,
        argv: args.to_vec(),
        stream_limits: ctx.stream_limits(),
    });
    let read_only = ro || f.flags.no_writes;
    run(ctx, code, keys, argv, read_only, args, op)
}

fn fcall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    fcall_generic(ctx, args, false)
}
fn fcall_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    fcall_generic(ctx, args, true)
}

// ---- FUNCTION ----

/// Compile library `code` on this thread: its metadata.
fn compile_library(shared: &Shared, code: &Bytes) -> Result<LibraryMeta, String> {
    let name = library_name(code)?;
    let functions = engine(shared, |e| e.load_library(&name, code))?;
    Ok(LibraryMeta { name, code: code.clone(), functions })
}

fn function_load(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut replace = false;
    for a in &args[2..args.len() - 1] {
        if a.eq_ignore_ascii_case(b"REPLACE") {
            replace = true;
        } else {
            return Err(err(format!("ERR Unknown option given: {}", String::from_utf8_lossy(a))));
        }
    }
    let code = args[args.len() - 1].clone();
    let lib = compile_library(ctx.shared, &code).map_err(|e| err(format!("ERR {e}")))?;
    // Checked here for the error reply; apply decides, on every region alike.
    libraries(ctx.shared, home_region(ctx)).clone().load(lib, replace).map_err(|e| err(format!("ERR {e}")))?;
    let op = pb::Functions { action: Action::Load as i32, code: vec![code], replace, ..Default::default() };
    ctx.broadcast(Op::Functions(op))
}

fn function_delete(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&args[2]).into_owned();
    if libraries(ctx.shared, home_region(ctx)).get(&name).is_none() {
        return Err(err("ERR Library not found"));
    }
    ctx.broadcast(Op::Functions(pb::Functions { action: Action::Delete as i32, name, ..Default::default() }))
}

fn function_flush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 3 {
        return Err(err("ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP."));
    }
    if args.len() == 3 && !matches!(args[2].to_ascii_uppercase().as_slice(), b"SYNC" | b"ASYNC") {
        return Err(err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option"));
    }
    ctx.broadcast(Op::Functions(pb::Functions { action: Action::Flush as i32, ..Default::default() }))
}

/// The libraries of a FUNCTION DUMP payload (the codes), or Redis's error.
fn parse_payload(payload: &[u8]) -> Result<Vec<Bytes>, String> {
    let body = rdb::verify(payload).ok_or("DUMP payload version or checksum are wrong")?;
    let mut r = rdb::Reader::new(body);
    let mut out = Vec::new();
    while !r.is_empty() {
        let t = r.byte().ok_or("can not read data type")?;
        match t {
            rdb::OPCODE_FUNCTION2 => {
                out.push(Bytes::from(r.string().ok_or("failed loading the given functions payload")?));
            }
            rdb::OPCODE_FUNCTION_PRE_GA => {
                let bad = "failed loading the given functions payload";
                let name = r.string().ok_or(bad)?;
                let engine = r.string().ok_or(bad)?;
                if r.len().ok_or(bad)? != 0 {
                    r.string().ok_or(bad)?;
                }
                let code = r.string().ok_or(bad)?;
                let mut full =
                    format!("#!{} name={}\n", String::from_utf8_lossy(&engine), String::from_utf8_lossy(&name))
                        .into_bytes();
                full.extend_from_slice(&code);
                out.push(Bytes::from(full));
            }
            _ => return Err("given type is not a function".into()),
        }
    }
    Ok(out)
}

fn function_restore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 4 {
        return Err(err("ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP."));
    }
    let policy = match args.get(3).map(|a| a.to_ascii_uppercase()) {
        None => RestorePolicy::Append,
        Some(p) if p == b"FLUSH" => RestorePolicy::Flush,
        Some(p) if p == b"APPEND" => RestorePolicy::Append,
        Some(p) if p == b"REPLACE" => RestorePolicy::Replace,
        Some(_) => return Err(err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")),
    };
    let codes = parse_payload(&args[2]).map_err(|e| err(format!("ERR {e}")))?;
    let mut libs = Vec::with_capacity(codes.len());
    for c in &codes {
        libs.push(compile_library(ctx.shared, c).map_err(|e| err(format!("ERR {e}")))?);
    }
    libraries(ctx.shared, home_region(ctx)).clone().restore(libs, policy).map_err(|e| err(format!("ERR {e}")))?;
    let policy = match policy {
        RestorePolicy::Flush => 0,
        RestorePolicy::Append => 1,
        RestorePolicy::Replace => 2,
    };
    ctx.broadcast(Op::Functions(pb::Functions {
        action: Action::Restore as i32,
        code: codes,
        policy,
        ..Default::default()
    }))
}

fn function_dump(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let mut body = Vec::new();
    for lib in libraries(ctx.shared, home_region(ctx)).iter() {
        body.push(rdb::OPCODE_FUNCTION2);
        rdb::put_string(&mut body, &lib.code);
    }
    reply(Reply::Bulk(Bytes::from(rdb::seal(body))))
}

fn function_list(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut pattern, mut with_code) = (None, false);
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"WITHCODE") && !with_code {
            with_code = true;
        } else if a.eq_ignore_ascii_case(b"LIBRARYNAME") && pattern.is_none() {
            i += 1;
            pattern = Some(args.get(i).ok_or_else(|| err("ERR library name argument was not given"))?.clone());
        } else {
            return Err(err(format!("ERR Unknown argument {}", String::from_utf8_lossy(a))));
        }
        i += 1;
    }
    let s = |t: &str| Reply::bulk_str(t);
    let mut out = Vec::new();
    for lib in libraries(ctx.shared, home_region(ctx)).iter() {
        if let Some(p) = &pattern {
            if !crate::types::glob::glob_match(p, lib.name.as_bytes(), true) {
                continue;
            }
        }
        let functions = lib
            .functions
            .iter()
            .map(|f: &FunctionMeta| {
                Reply::Map(vec![
                    (s("name"), s(&f.name)),
                    (s("description"), f.description.as_deref().map(s).unwrap_or(Reply::Nil)),
                    (s("flags"), Reply::Set(f.flags.names().into_iter().map(|n| Reply::Simple(n.into())).collect())),
                ])
            })
            .collect();
        let mut m =
            vec![(s("library_name"), s(&lib.name)), (s("engine"), s("LUA")), (s("functions"), Reply::Array(functions))];
        if with_code {
            m.push((s("library_code"), Reply::Bulk(lib.code.clone())));
        }
        out.push(Reply::Map(m));
    }
    reply(Reply::Array(out))
}

fn function_stats(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let s = |t: &str| Reply::bulk_str(t);
    let running = ctx.shared.scripts.running();
    if let Some(c) = running.iter().find(|c| c.busy.load(std::sync::atomic::Ordering::Relaxed) && !c.function) {
        return Err(busy_error(c));
    }
    let script = match running.iter().find(|c| c.function) {
        Some(c) => Reply::Map(vec![
            (s("name"), s(&c.name)),
            (s("command"), Reply::Array(c.argv.iter().cloned().map(Reply::Bulk).collect())),
            (s("duration_ms"), Reply::Int(c.started.elapsed().as_millis() as i64)),
        ]),
        None => Reply::Nil,
    };
    let libs = libraries(ctx.shared, home_region(ctx));
    reply(Reply::Map(vec![
        (s("running_script"), script),
        (
            s("engines"),
            Reply::Map(vec![(
                s("LUA"),
                Reply::Map(vec![
                    (s("libraries_count"), Reply::Int(libs.len() as i64)),
                    (s("functions_count"), Reply::Int(libs.function_count() as i64)),
                ]),
            )]),
        ),
    ]))
}

fn function_kill(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    kill(ctx.shared, true)
}

fn function_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
    ])
}

// ---- apply ----

/// A region's libraries, as apply changes them (every region applies the same
/// changes from its own log).
fn apply_functions(shared: &Shared, apply: &mut ApplyCtx, op: &pb::Functions) -> Result<Reply, StorageError> {
    let region = apply.region;
    let mut libs = libraries(shared, region);
    let compile = |codes: &[Bytes]| -> Result<Vec<LibraryMeta>, String> {
        codes.iter().map(|c| compile_library(shared, c)).collect()
    };
    let reply = match op.action() {
        Action::Load => {
            let lib = match compile(&op.code).map(|mut v| v.pop()) {
                Ok(Some(l)) => l,
                Ok(None) => return Ok(Reply::error("ERR Function code is missing")),
                Err(e) => return Ok(Reply::error(format!("ERR {e}"))),
            };
            let name = lib.name.clone();
            if let Err(e) = libs.load(lib, op.replace) {
                return Ok(Reply::error(format!("ERR {e}")));
            }
            Reply::Bulk(Bytes::from(name))
        }
        Action::Delete => {
            if let Err(e) = libs.delete(&op.name) {
                return Ok(Reply::error(format!("ERR {e}")));
            }
            Reply::Ok
        }
        Action::Flush => {
            libs.flush();
            Reply::Ok
        }
        Action::Restore => {
            let restored = match compile(&op.code) {
                Ok(v) => v,
                Err(e) => return Ok(Reply::error(format!("ERR {e}"))),
            };
            let policy = match op.policy {
                0 => RestorePolicy::Flush,
                2 => RestorePolicy::Replace,
                _ => RestorePolicy::Append,
            };
            if let Err(e) = libs.restore(restored, policy) {
                return Ok(Reply::error(format!("ERR {e}")));
            }
            Reply::Ok
        }
    };
    // The region's libraries are rewritten whole in the entry's batch.
    apply.del_raw_range(Cf::Functions, function_key(region, b""), function_key(region + 1, b""));
    for lib in libs.iter() {
        apply.put_raw(Cf::Functions, function_key(region, lib.name.as_bytes()), lib.code.clone());
    }
    shared.functions.write().unwrap_or_else(|e| e.into_inner()).insert(region, libs);
    Ok(reply)
}

/// Region `child` split off `parent` (in `apply`'s batch): it starts with a
/// copy of `parent`'s libraries, in storage and here.
pub fn split_functions(shared: &Shared, apply: &mut ApplyCtx, parent: u32, child: u32) {
    let libs = shared.functions.read().unwrap_or_else(|e| e.into_inner()).get(&parent).cloned();
    let Some(libs) = libs else { return };
    for lib in libs.iter() {
        apply.put_raw(Cf::Functions, function_key(child, lib.name.as_bytes()), lib.code.clone());
    }
    shared.functions.write().unwrap_or_else(|e| e.into_inner()).insert(child, libs);
}

/// Load every region's libraries from storage (at start).
pub fn load_functions(shared: &Shared) -> Result<(), String> {
    let mut by_region: HashMap<u32, Libraries> = HashMap::new();
    let mut failed = None;
    shared
        .storage
        .scan(Cf::Functions, &[], &[0xff; 5], false, |k, v| {
            let Some(region) = k.get(..4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes) else { return true };
            match compile_library(shared, &Bytes::copy_from_slice(v)) {
                Ok(lib) => {
                    let _ = by_region.entry(region).or_default().load(lib, true);
                }
                Err(e) => failed = Some(e),
            }
            true
        })
        .map_err(|e| e.to_string())?;
    if let Some(e) = failed {
        return Err(format!("Failed loading library, {e}"));
    }
    *shared.functions.write().unwrap_or_else(|e| e.into_inner()) = by_region;
    Ok(())
}

/// What apply runs for `pb::Eval` (see the module doc).
pub fn apply_eval(
    shared: &Shared,
    table: &'static Table,
    apply: &mut ApplyCtx,
    op: &pb::Eval,
) -> Result<Reply, StorageError> {
    let (code, read_only) = if op.function.is_empty() {
        let flags = script::parse_shebang(&op.body).map(|(f, _)| f).unwrap_or_default();
        (Code::Script { sha: script::sha1hex(&op.body), body: op.body.clone() }, flags.no_writes)
    } else {
        let libs = libraries(shared, apply.region);
        let Some((lib, f)) = libs.function(&op.function) else { return Ok(Reply::error("ERR Function not found")) };
        (Code::Function { lib: lib.name.clone(), code: lib.code.clone(), name: f.name.clone() }, f.flags.no_writes)
    };
    apply.use_stream_limits(op.stream_limits.as_ref());
    run_in_apply(shared, table, apply, &code, &op.keys, &op.args, op.seed, op.argv.clone(), read_only)
}

/// What apply runs for `pb::Functions`.
pub fn apply_function_change(shared: &Shared, apply: &mut ApplyCtx, op: &pb::Functions) -> Result<Reply, StorageError> {
    apply_functions(shared, apply, op)
}

const S: Group = Group::Scripting;
const EV: u32 = NOSCRIPT | STALE | PROGRAM;

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "eval",
        -3,
        EV | NO_MANDATORY_KEYS | SKIP_MONITOR | MAY_REPLICATE,
        S,
        "2.6.0",
        "Executes a server-side Lua script.",
        eval,
    )
    .key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::UPDATE, ks::index(2), ks::keynum(0, 1, 1))
        .notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")])
    .key_proc(ks::generic(0, 2, 3)),
    row(
        "evalsha",
        -3,
        EV | NO_MANDATORY_KEYS | SKIP_MONITOR | MAY_REPLICATE,
        S,
        "2.6.0",
        "Executes a server-side Lua script by SHA1 digest.",
        evalsha,
    )
    .key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::UPDATE, ks::index(2), ks::keynum(0, 1, 1))])
    .key_proc(ks::generic(0, 2, 3)),
    row(
        "eval_ro",
        -3,
        EV | READONLY | NO_MANDATORY_KEYS | SKIP_MONITOR,
        S,
        "7.0.0",
        "Executes a read-only server-side Lua script.",
        eval_ro,
    )
    .key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::keynum(0, 1, 1))
        .notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")])
    .key_proc(ks::generic(0, 2, 3)),
    row(
        "evalsha_ro",
        -3,
        EV | READONLY | NO_MANDATORY_KEYS | SKIP_MONITOR,
        S,
        "7.0.0",
        "Executes a read-only server-side Lua script by SHA1 digest.",
        evalsha_ro,
    )
    .key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::keynum(0, 1, 1))])
    .key_proc(ks::generic(0, 2, 3)),
    row("fcall", -3, EV | NO_MANDATORY_KEYS | SKIP_MONITOR | MAY_REPLICATE, S, "7.0.0", "Invokes a function.", fcall)
        .key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::UPDATE, ks::index(2), ks::keynum(0, 1, 1))
            .notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")])
        .key_proc(ks::generic(0, 2, 3)),
    row(
        "fcall_ro",
        -3,
        EV | READONLY | NO_MANDATORY_KEYS | SKIP_MONITOR,
        S,
        "7.0.0",
        "Invokes a read-only function.",
        fcall_ro,
    )
    .key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::keynum(0, 1, 1))
        .notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")])
    .key_proc(ks::generic(0, 2, 3)),
    container("script", 0, S, "2.6.0", "A container for Lua scripts management commands.", None),
    row(
        "script|load",
        3,
        NOSCRIPT | STALE,
        S,
        "2.6.0",
        "Loads a server-side Lua script to the script cache.",
        script_load,
    ),
    row(
        "script|exists",
        -3,
        NOSCRIPT,
        S,
        "2.6.0",
        "Determines whether server-side Lua scripts exist in the script cache.",
        script_exists,
    ),
    row(
        "script|flush",
        -2,
        NOSCRIPT,
        S,
        "2.6.0",
        "Removes all server-side Lua scripts from the script cache.",
        script_flush,
    ),
    row(
        "script|kill",
        2,
        NOSCRIPT | ALLOW_BUSY,
        S,
        "2.6.0",
        "Terminates a server-side Lua script during execution.",
        script_kill,
    ),
    row(
        "script|help",
        2,
        LOADING | STALE,
        S,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        script_help,
    ),
    container("function", 0, S, "7.0.0", "A container for function commands.", None),
    row("function|load", -3, WRITE | DENYOOM | NOSCRIPT | FANOUT, S, "7.0.0", "Creates a library.", function_load),
    row(
        "function|delete",
        3,
        WRITE | NOSCRIPT | FANOUT,
        S,
        "7.0.0",
        "Deletes a library and its functions.",
        function_delete,
    ),
    row(
        "function|flush",
        -2,
        WRITE | NOSCRIPT | FANOUT,
        S,
        "7.0.0",
        "Deletes all libraries and functions.",
        function_flush,
    ),
    row(
        "function|restore",
        -3,
        WRITE | DENYOOM | NOSCRIPT | FANOUT,
        S,
        "7.0.0",
        "Restores all libraries from a payload.",
        function_restore,
    ),
    row(
        "function|list",
        -2,
        NOSCRIPT | KEYLESS_READ,
        S,
        "7.0.0",
        "Returns information about all libraries.",
        function_list,
    ),
    row(
        "function|dump",
        2,
        NOSCRIPT | KEYLESS_READ,
        S,
        "7.0.0",
        "Dumps all libraries into a serialized binary payload.",
        function_dump,
    ),
    row(
        "function|stats",
        2,
        NOSCRIPT | ALLOW_BUSY,
        S,
        "7.0.0",
        "Returns information about a function during execution.",
        function_stats,
    ),
    row(
        "function|kill",
        2,
        NOSCRIPT | ALLOW_BUSY,
        S,
        "7.0.0",
        "Terminates a function during execution.",
        function_kill,
    ),
    row(
        "function|help",
        2,
        LOADING | STALE,
        S,
        "7.0.0",
        "Returns helpful text about the different subcommands.",
        function_help,
    ),
];

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;

    use crate::cmd::testing::Harness;
    use crate::pb::{self, write_cmd::Op, WriteCmd};
    use crate::protocol::Reply;
    use crate::storage::{Cf, Storage};
    use crate::types::write::apply_cmd;
    use crate::types::ApplyCtx;

    fn apply(
        storage: &Storage,
        exec: &Arc<dyn crate::types::apply::Programs>,
        index: u64,
        now: u64,
        ops: &[Op],
    ) -> Vec<Reply> {
        let mut ctx = ApplyCtx::new(storage, 0, 16384).with_programs(exec.clone());
        ctx.begin_entry(index, now);
        let out = ops
            .iter()
            .map(|o| apply_cmd(&mut ctx, &WriteCmd { op: Some(o.clone()), db: 0, epoch: 0 }).unwrap())
            .collect();
        storage.write(ctx.take_batch(), false).unwrap();
        out
    }

    #[test]
    fn a_script_applies_the_same_on_every_replica() {
        let members: Vec<Bytes> = (0..200).map(|i| Bytes::from(format!("m{i}"))).collect();
        let sadd = Op::Sadd(pb::Sadd { key: Bytes::from_static(b"s"), members });
        let body = Bytes::from_static(
            b"local t = redis.call('time') local r = math.random(1000000) \
              local p = redis.call('spop', 's') redis.call('set', 'k' .. r, t[1] .. '.' .. t[2]) \
              redis.call('rpush', 'log', p, r, math.random()) return {r, p}",
        );
        let eval = |seed: u64| {
            Op::Eval(pb::Eval {
                body: body.clone(),
                seed,
                argv: vec![Bytes::from_static(b"EVAL")],
                ..Default::default()
            })
        };
        // A state machine's worth of apply each: storage and the program executor.
        let (replica_a, replica_b) = (Harness::new(), Harness::new());
        let (a, a_exec) = (replica_a.storage(), replica_a.programs());
        let (b, b_exec) = (replica_b.storage(), replica_b.programs());
        let mut replies = Vec::new();
        for (i, ops) in [vec![sadd], (1..6).map(eval).collect(), (6..12).map(eval).collect()].iter().enumerate() {
            let index = i as u64 + 1;
            let now = 1_700_000_000_000 + 1_234 * index;
            let (ra, rb) = (apply(a, a_exec, index, now, ops), apply(b, b_exec, index, now, ops));
            assert_eq!(ra, rb, "entry {index}: the same replies");
            replies.extend(ra);
        }
        for cf in [Cf::Metadata, Cf::Subkey] {
            let (da, db): (Vec<_>, Vec<_>) = (a.iter_all(cf).collect(), b.iter_all(cf).collect());
            assert_eq!(da, db, "{cf:?}: the same bytes");
        }
        // The choices really depend on the entry: not every run drew the same.
        let draws: std::collections::BTreeSet<String> = replies.iter().skip(1).map(|r| format!("{r:?}")).collect();
        assert!(draws.len() > 5, "{draws:?}");
        assert!(replies.iter().all(|r| !r.is_error()), "{replies:?}");
    }
}
