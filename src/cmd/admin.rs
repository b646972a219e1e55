//! Commands that manage connections and watch the server: CLIENT KILL / PAUSE /
//! UNPAUSE / UNBLOCK / REPLY / NO-EVICT / NO-TOUCH, RESET, SHUTDOWN, MONITOR,
//! SLOWLOG and LATENCY. Their state lives in `shard::observe` (shared by every
//! core) and in the connection's `Session`; `server::conn` applies what they set
//! (replies switched off, pauses, unblocked waits, monitor feeds).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;

use super::ctx::help_reply as help;
use super::session;
use super::table::{container, flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdResult, Ctx, Plan};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::Reply;
use crate::shard::client::{ClientEntry, CLIENT_MONITOR, CLIENT_NO_EVICT, CLIENT_NO_TOUCH};
use crate::storage::keys::voided_key;

fn on_off(a: &[u8]) -> Result<bool, super::CmdError> {
    super::args::either(a, b"on", b"off")
}

/// Milliseconds as Redis's getTimeoutFromObjectOrReply reads them.
fn timeout_ms(a: &[u8]) -> Result<u64, super::CmdError> {
    let v = parse_i64(a).ok_or_else(|| err("ERR timeout is not an integer or out of range"))?;
    if v < 0 {
        return Err(err("ERR timeout is negative"));
    }
    Ok(v as u64)
}

/// CLIENT KILL addr | CLIENT KILL <filter> <value> ...
fn client_kill(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    #[derive(Default)]
    struct Filter {
        id: Option<u64>,
        kind: Option<Vec<u8>>,
        addr: Option<Bytes>,
        laddr: Option<Bytes>,
        skipme: bool,
    }
    let old_form = args.len() == 3;
    let mut f = Filter { skipme: !old_form, ..Default::default() };
    if old_form {
        f.addr = Some(args[2].clone());
    } else {
        let mut i = 2;
        while i < args.len() {
            let Some(v) = args.get(i + 1) else { return Err(ArgError::Syntax.into()) };
            let name = args[i].to_ascii_lowercase();
            match name.as_slice() {
                b"id" => {
                    let id =
                        parse_i64(v).filter(|n| *n > 0).ok_or_else(|| err("ERR client-id should be greater than 0"))?;
                    f.id = Some(id as u64);
                }
                b"type" => {
                    let t = v.to_ascii_lowercase();
                    if !matches!(t.as_slice(), b"normal" | b"master" | b"replica" | b"slave" | b"pubsub") {
                        return Err(err(format!("ERR Unknown client type '{}'", String::from_utf8_lossy(v))));
                    }
                    f.kind = Some(t);
                }
                b"addr" => f.addr = Some(v.clone()),
                b"laddr" => f.laddr = Some(v.clone()),
                b"user" => {
                    if v.as_ref() != b"default" {
                        return Err(err(format!("ERR No such user '{}'", String::from_utf8_lossy(v))));
                    }
                }
                b"skipme" => f.skipme = super::args::either(v, b"yes", b"no")?,
                _ => return Err(ArgError::Syntax.into()),
            }
            i += 2;
        }
    }
    let me = ctx.session.id;
    let clients: Vec<Arc<ClientEntry>> =
        ctx.shared.clients.lock().map(|c| c.values().cloned().collect()).unwrap_or_default();
    let mut killed = 0;
    let mut kill_me = false;
    for c in clients {
        let pubsub = c.subs.iter().any(|n| n.load(Ordering::Relaxed) > 0);
        let matches = f.id.is_none_or(|id| id == c.id)
            && f.addr.as_ref().is_none_or(|a| a.as_ref() == c.addr.as_bytes())
            && f.laddr.as_ref().is_none_or(|a| a.as_ref() == c.laddr.as_bytes())
            && f.kind.as_ref().is_none_or(|t| match t.as_slice() {
                b"pubsub" => pubsub,
                b"normal" => !pubsub,
                _ => false,
            });
        if !matches || (c.id == me && f.skipme) {
            continue;
        }
        killed += 1;
        if c.id == me {
            kill_me = true;
        } else {
            c.kill();
        }
    }
    let r = if old_form {
        if killed == 0 {
            return Err(err("ERR No such client"));
        }
        Reply::Ok
    } else {
        Reply::Int(killed)
    };
    // The caller is closed after its reply.
    if kill_me {
        ctx.session.closing = true;
        return Ok(Plan::Close(r));
    }
    reply(r)
}

fn client_pause(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let ms = timeout_ms(&args[2])?;
    let all = match args.get(3) {
        None => true,
        Some(m) if m.eq_ignore_ascii_case(b"all") => true,
        Some(m) if m.eq_ignore_ascii_case(b"write") => false,
        Some(_) => return Err(err("ERR CLIENT PAUSE mode must be WRITE or ALL")),
    };
    if args.len() > 4 {
        return Err(ArgError::Syntax.into());
    }
    ctx.shared.observe.pause_for(ms, all);
    reply(Reply::Ok)
}

fn client_unpause(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.shared.observe.unpause();
    reply(Reply::Ok)
}

fn client_unblock(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let id = parse_i64(&args[2]).ok_or(ArgError::NotInteger)?;
    let error = match args.get(3) {
        None => false,
        Some(r) if r.eq_ignore_ascii_case(b"timeout") => false,
        Some(r) if r.eq_ignore_ascii_case(b"error") => true,
        Some(_) => return Err(err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
    };
    if args.len() > 4 {
        return Err(ArgError::Syntax.into());
    }
    let done = id > 0 && ctx.shared.observe.unblock(id as u64, error);
    reply(Reply::Int(done as i64))
}

fn client_reply(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = &mut *ctx.session;
    let mode = args[2].to_ascii_lowercase();
    match mode.as_slice() {
        b"on" => {
            s.reply_off = false;
            s.skip_next_reply = false;
            s.skipping = false;
            reply(Reply::Ok)
        }
        b"off" => {
            s.reply_off = true;
            s.silent_reply = true;
            reply(Reply::Ok)
        }
        b"skip" => {
            if !s.reply_off {
                s.skip_next_reply = true;
            }
            s.silent_reply = true;
            reply(Reply::Ok)
        }
        _ => Err(ArgError::Syntax.into()),
    }
}

fn client_no_evict(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let on = on_off(&args[2])?;
    ctx.session.no_evict = on;
    ctx.session.entry.set_flag(CLIENT_NO_EVICT, on);
    reply(Reply::Ok)
}

fn client_no_touch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let on = on_off(&args[2])?;
    ctx.session.no_touch = on;
    ctx.session.entry.set_flag(CLIENT_NO_TOUCH, on);
    reply(Reply::Ok)
}

/// Leave MONITOR mode (RESET, a closing connection).
pub fn leave_monitor(ctx_shared: &crate::shard::Shared, session: &mut super::Session) {
    if session.monitor {
        session.monitor = false;
        ctx_shared.observe.remove_monitor(session.id);
        session.entry.set_flag(CLIENT_MONITOR, false);
    }
}

/// RESET: the connection as it was when it connected, without closing it.
fn reset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.select(0);
    let shared = ctx.shared;
    let s = &mut *ctx.session;
    leave_monitor(shared, s);
    session::end_transaction(shared, s);
    session::drop_subscriptions(shared, s);
    s.resp = 2;
    s.entry.resp.store(2, Ordering::Relaxed);
    s.authed = shared.config().requirepass.is_empty();
    if let Ok(mut n) = s.entry.name.lock() {
        *n = None;
    }
    s.reply_off = false;
    s.skip_next_reply = false;
    s.no_evict = false;
    s.no_touch = false;
    s.follower_reads = false;
    s.entry.set_flag(CLIENT_NO_EVICT | CLIENT_NO_TOUCH, false);
    reply(Reply::Simple("RESET".into()))
}

/// MONITOR: from now on this connection receives a line per command run.
fn monitor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx.session.in_exec || ctx.detached() {
        return Err(err("ERR MONITOR isn't allowed for DENY BLOCKING client"));
    }
    if ctx.session.monitor {
        ctx.session.silent_reply = true;
        return reply(Reply::Ok);
    }
    let sub = session::queue_of(ctx.session);
    ctx.shared.observe.add_monitor(sub);
    ctx.session.monitor = true;
    ctx.session.entry.set_flag(CLIENT_MONITOR, true);
    reply(Reply::Ok)
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: make the log durable, close
/// the listeners, exit. The caller gets no reply (its connection just closes).
fn shutdown(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut nosave, mut save, mut now, mut abort) = (false, false, false, false);
    for a in &args[1..] {
        match a.to_ascii_lowercase().as_slice() {
            b"nosave" => nosave = true,
            b"save" => save = true,
            b"now" => now = true,
            b"force" => {}
            b"abort" => abort = true,
            _ => return Err(ArgError::Syntax.into()),
        }
    }
    if (abort && args.len() > 2) || (nosave && save) {
        return Err(ArgError::Syntax.into());
    }
    if abort {
        return Err(err("ERR No shutdown in progress."));
    }
    if (ctx.session.in_exec || ctx.detached()) && !now {
        return Err(err("ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client"));
    }
    if let Some(c) = ctx.shared.scripts.busy_script() {
        if !nosave {
            return reply(c.busy_reply());
        }
        // A script that has written runs inside a committed log entry, its
        // writes not yet in RocksDB (apply writes its batch when it ends). As
        // redis-server drops such a script's effects, its command is voided:
        // a durable marker makes it apply as nothing at the next start, instead
        // of running again. (Standalone: in cluster mode every replica must
        // learn it through the log.)
        if let (true, Some((region, index, pos))) = (c.wrote.load(Ordering::SeqCst), c.entry) {
            let mut b = crate::storage::Batch::new();
            b.put(crate::storage::Cf::RaftState, voided_key(region, index, pos).to_vec(), Bytes::new());
            ctx.shared.storage.write(b, true)?;
            eprintln!("Voided the busy script at log index {index} (region {region}): its writes are dropped.");
            // Not killed: a killed script's entry would go on to be applied with
            // its writes so far; running on, it never commits before the exit.
        } else {
            c.kill.store(true, Ordering::SeqCst);
        }
    }
    eprintln!("User requested shutdown... (client id={})", ctx.session.id);
    ctx.shared.stop(0)
}

fn slowlog_get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = match args.get(2) {
        None => Some(10),
        Some(a) => match parse_i64(a) {
            Some(-1) => None,
            Some(n) if n >= 0 => Some(n as usize),
            _ => return Err(err("ERR count should be greater than or equal to -1")),
        },
    };
    let entries = ctx.shared.observe.slowlog(count);
    reply(Reply::Array(
        entries
            .into_iter()
            .map(|e| {
                Reply::Array(vec![
                    Reply::Int(e.id as i64),
                    Reply::Int(e.unix as i64),
                    Reply::Int(e.usec as i64),
                    Reply::Array(e.args.into_iter().map(Reply::Bulk).collect()),
                    Reply::bulk_str(&e.addr),
                    Reply::Bulk(e.name),
                ])
            })
            .collect(),
    ))
}

fn slowlog_len(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ctx.shared.observe.slowlog_len() as i64))
}

fn slowlog_reset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.shared.observe.slowlog_reset();
    reply(Reply::Ok)
}

fn slowlog_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
    ])
}

fn latency_latest(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let events = ctx.shared.observe.latency_events();
    reply(Reply::Array(
        events
            .into_iter()
            .filter_map(|(name, s)| {
                let (t, v) = *s.samples.back()?;
                Some(Reply::Array(vec![
                    Reply::bulk_str(&name),
                    Reply::Int(t as i64),
                    Reply::Int(v as i64),
                    Reply::Int(s.max as i64),
                ]))
            })
            .collect(),
    ))
}

fn latency_history(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&args[2]);
    let events = ctx.shared.observe.latency_events();
    let samples = events.into_iter().find(|(n, _)| *n == name).map(|(_, s)| s.samples).unwrap_or_default();
    reply(Reply::Array(
        samples.into_iter().map(|(t, v)| Reply::Array(vec![Reply::Int(t as i64), Reply::Int(v as i64)])).collect(),
    ))
}

fn latency_reset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let names: Vec<String> = args[2..].iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    reply(Reply::Int(ctx.shared.observe.latency_reset(&names) as i64))
}

fn latency_doctor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let events = ctx.shared.observe.latency_events();
    let threshold = ctx.shared.observe.latency_threshold_ms.load(Ordering::Relaxed);
    let text = if events.is_empty() && threshold == 0 {
        "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".to_string()
    } else if events.is_empty() {
        "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n".to_string()
    } else {
        let mut t = "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n".to_string();
        for (i, (name, s)) in events.iter().enumerate() {
            let n = s.samples.len().max(1) as f64;
            let avg = s.samples.iter().map(|(_, v)| *v as f64).sum::<f64>() / n;
            let mad = s.samples.iter().map(|(_, v)| (*v as f64 - avg).abs()).sum::<f64>() / n;
            let period = match (s.samples.front(), s.samples.back()) {
                (Some(a), Some(b)) if s.samples.len() > 1 => (b.0 - a.0) as f64 / (s.samples.len() - 1) as f64,
                _ => 0.0,
            };
            t.push_str(&format!(
                "{}. {}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.\n",
                i + 1,
                name,
                s.samples.len(),
                avg as u64,
                mad as u64,
                period,
                s.max
            ));
        }
        t.push_str("\nI have a few advices for you:\n\n- Check your disk: NeoKV writes every acknowledged command to its log before it answers; slow fsyncs show up as slow commands.\n");
        t
    };
    reply(Reply::Verbatim(Bytes::from(text)))
}

fn latency_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
    ])
}

const C: Group = Group::Connection;
const S: Group = Group::Server;
const ADM: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

pub static COMMANDS: &[CommandSpec] = &[
    row("client|kill", -3, ADM, C, "2.4.0", "Terminates open connections.", client_kill),
    row("client|pause", -3, ADM, C, "3.0.0", "Suspends commands processing.", client_pause),
    row("client|unpause", 2, ADM, C, "6.2.0", "Resumes processing commands from paused clients.", client_unpause),
    row(
        "client|unblock",
        -3,
        ADM,
        C,
        "5.0.0",
        "Unblocks a client blocked by a blocking command from a different connection.",
        client_unblock,
    ),
    row(
        "client|reply",
        3,
        NOSCRIPT | LOADING | STALE,
        C,
        "3.2.0",
        "Instructs the server whether to reply to commands.",
        client_reply,
    ),
    row("client|no-evict", 3, ADM, C, "7.0.0", "Sets the client eviction mode of the connection.", client_no_evict),
    row(
        "client|no-touch",
        3,
        NOSCRIPT | LOADING | STALE,
        C,
        "7.2.0",
        "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
        client_no_touch,
    ),
    row(
        "reset",
        1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | WHILE_SUBSCRIBED | NOT_QUEUED,
        C,
        "6.2.0",
        "Resets the connection.",
        reset,
    ),
    row("monitor", 1, ADM, S, "1.0.0", "Listens for all requests received by the server in real-time.", monitor),
    row(
        "shutdown",
        -1,
        ADM | NO_MULTI | ALLOW_BUSY,
        S,
        "1.0.0",
        "Synchronously saves the database(s) to disk and shuts down the Redis server.",
        shutdown,
    ),
    container("slowlog", 0, S, "2.2.12", "A container for slow log commands.", None),
    row("slowlog|get", -2, ADMIN | LOADING | STALE, S, "2.2.12", "Returns the slow log's entries.", slowlog_get),
    row(
        "slowlog|len",
        2,
        ADMIN | LOADING | STALE,
        S,
        "2.2.12",
        "Returns the number of entries in the slow log.",
        slowlog_len,
    ),
    row(
        "slowlog|reset",
        2,
        ADMIN | LOADING | STALE,
        S,
        "2.2.12",
        "Clears all entries from the slow log.",
        slowlog_reset,
    ),
    row(
        "slowlog|help",
        2,
        LOADING | STALE,
        S,
        "6.2.0",
        "Show helpful text about the different subcommands",
        slowlog_help,
    ),
    container("latency", 0, S, "2.8.13", "A container for latency diagnostics commands.", None),
    row("latency|latest", 2, ADM, S, "2.8.13", "Returns the latest latency samples for all events.", latency_latest),
    row("latency|history", 3, ADM, S, "2.8.13", "Returns timestamp-latency samples for an event.", latency_history),
    row("latency|reset", -2, ADM, S, "2.8.13", "Resets the latency data for one or more events.", latency_reset),
    row("latency|doctor", 2, ADM, S, "2.8.13", "Returns a human-readable latency analysis report.", latency_doctor),
    row(
        "latency|help",
        2,
        LOADING | STALE,
        S,
        "2.8.13",
        "Returns helpful text about the different subcommands.",
        latency_help,
    ),
    container("module", 0, S, "4.0.0", "A container for module commands.", None),
    row("module|list", 2, ADMIN | NOSCRIPT, S, "4.0.0", "Returns all loaded modules.", module_list),
    row("module|load", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, S, "4.0.0", "Loads a module.", module_refused),
    row(
        "module|loadex",
        -3,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        S,
        "7.0.0",
        "Loads a module using extended parameters.",
        module_refused,
    ),
    row("module|unload", 3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, S, "4.0.0", "Unloads a module.", module_refused),
    row(
        "module|help",
        2,
        LOADING | STALE,
        S,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        module_help,
    ),
];

/// MODULE LIST: NeoKV loads no modules, so the list is empty (as a
/// redis-server without modules answers).
fn module_list(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Array(Vec::new()))
}

/// MODULE LOAD / LOADEX / UNLOAD: refused as a redis-server 7.0 whose
/// `enable-module-command` is `no` (its default) refuses them; NeoKV has no
/// module interface to enable.
fn module_refused(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Err(err("ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", \
         you can run it from a local connection, otherwise you need to set this option in the \
         configuration file, and then restart the server."))
}

fn module_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
    ])
}

/// NEOKV.FAILPOINT name action: arm a test hook (`crate::failpoint`). The
/// row exists only in builds with the `failpoints` feature.
#[cfg(feature = "failpoints")]
fn failpoint(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&args[1]);
    let action = String::from_utf8_lossy(&args[2]);
    crate::failpoint::arm(&name, &action).map_err(|e| err(format!("ERR {e}")))?;
    reply(Reply::Ok)
}

/// Test builds' rows (`crate::failpoint`); none in a release build.
#[cfg(feature = "failpoints")]
pub static FAILPOINT_COMMANDS: &[CommandSpec] = &[row(
    "neokv.failpoint",
    3,
    ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY,
    Group::Server,
    "0.1.0",
    "NeoKV test builds: arms a failpoint (crash, sleep(MS), a number, off).",
    failpoint,
)];
#[cfg(not(feature = "failpoints"))]
pub static FAILPOINT_COMMANDS: &[CommandSpec] = &[];
