//! Connection and server commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH, CLIENT,
//! CONFIG, COMMAND, INFO, TIME, LASTSAVE, SAVE, BGSAVE, DEBUG.

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;

use super::ctx::help_reply;
use super::info;
use super::key_specs as ks;
use super::session;
use super::table::{cat, container, flag::*, row, CommandSpec, Group, Table};
use super::{err, reply, CmdError, CmdResult, Ctx, Plan};
use crate::config::SetError;
use crate::protocol::cursor::{parse_f64, parse_i64, ArgError};
use crate::protocol::Reply;
use crate::protocol::REDIS_VERSION;
use crate::shard::client::ClientEntry;
use crate::types::glob::glob_match;

/// The Redis version NeoKV's replies and COMMAND docs follow.

fn ping(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() <= 2 && ctx.session.resp == 2 && session::subscribed(ctx.session) {
        let what = args.get(1).cloned().unwrap_or_default();
        return reply(Reply::Array(vec![Reply::bulk_str("pong"), Reply::Bulk(what)]));
    }
    match args.len() {
        1 => reply(Reply::Simple("PONG".into())),
        2 => reply(Reply::Bulk(args[1].clone())),
        _ => Err(err("ERR wrong number of arguments for 'ping' command")),
    }
}

fn echo(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Bulk(args[1].clone()))
}

fn quit(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.session.closing = true;
    Ok(Plan::Close(Reply::Ok))
}

fn select(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = super::keyspace::db_index(ctx, &args[1], "SELECT")?;
    ctx.select(db);
    reply(Reply::Ok)
}

/// Check a username/password pair against the single `default` user.
fn check_auth(ctx: &Ctx<'_>, user: &[u8], pass: &[u8]) -> bool {
    let cfg = ctx.shared.config();
    user == b"default" && (cfg.requirepass.is_empty() || cfg.requirepass.as_bytes() == pass)
}

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

fn auth(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 3 {
        return Err(ArgError::Syntax.into());
    }
    let (user, pass) = if args.len() == 2 {
        if ctx.shared.config().requirepass.is_empty() {
            return Err(err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"));
        }
        (&b"default"[..], &args[1][..])
    } else {
        (&args[1][..], &args[2][..])
    };
    if check_auth(ctx, user, pass) {
        ctx.session.authed = true;
        reply(Reply::Ok)
    } else {
        Err(err(WRONGPASS))
    }
}

/// Redis's client-name rule: printable ASCII without spaces.
fn valid_name(b: &[u8]) -> bool {
    b.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut ver = None;
    let mut j = 1;
    if args.len() >= 2 {
        let v = parse_i64(&args[1]).ok_or_else(|| err("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&v) {
            return Err(err("NOPROTO unsupported protocol version"));
        }
        ver = Some(v as u8);
        j = 2;
    }
    let mut creds = None;
    let mut name = None;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if args[j].eq_ignore_ascii_case(b"AUTH") && more >= 2 {
            creds = Some((args[j + 1].clone(), args[j + 2].clone()));
            j += 3;
        } else if args[j].eq_ignore_ascii_case(b"SETNAME") && more >= 1 {
            name = Some(args[j + 1].clone());
            j += 2;
        } else {
            return Err(err(format!("ERR Syntax error in HELLO option '{}'", String::from_utf8_lossy(&args[j]))));
        }
    }
    if let Some((u, p)) = creds {
        if !check_auth(ctx, &u, &p) {
            return Err(err(WRONGPASS));
        }
        ctx.session.authed = true;
    }
    if !ctx.session.authed {
        return Err(err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"));
    }
    if let Some(n) = name {
        set_name(ctx, n)?;
    }
    if let Some(v) = ver {
        ctx.session.resp = v;
        ctx.session.entry.resp.store(v, Ordering::Relaxed);
    }
    let s = |t: &str| Reply::bulk_str(t);
    reply(Reply::Map(vec![
        (s("server"), s("redis")),
        (s("version"), s(REDIS_VERSION)),
        (s("proto"), Reply::Int(ctx.session.resp as i64)),
        (s("id"), Reply::Int(ctx.session.id as i64)),
        (s("mode"), s("standalone")),
        (s("role"), s("master")),
        (s("modules"), Reply::Array(Vec::new())),
    ]))
}

fn set_name(ctx: &mut Ctx<'_>, name: Bytes) -> Result<(), super::CmdError> {
    if !valid_name(&name) {
        return Err(err("ERR Client names cannot contain spaces, newlines or special characters."));
    }
    let v = if name.is_empty() { None } else { Some(name) };
    if let Ok(mut n) = ctx.session.entry.name.lock() {
        *n = v;
    }
    Ok(())
}

fn client_setname(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_name(ctx, args[2].clone())?;
    reply(Reply::Ok)
}

fn client_getname(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    match ctx.session.entry.name.lock().ok().and_then(|n| n.clone()) {
        Some(n) => reply(Reply::Bulk(n)),
        None => reply(Reply::Nil),
    }
}

fn client_id(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ctx.session.id as i64))
}

fn client_setinfo(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let attr = args[2].to_ascii_lowercase();
    let field = match attr.as_slice() {
        b"lib-name" => &ctx.session.entry.lib_name,
        b"lib-ver" => &ctx.session.entry.lib_ver,
        _ => return Err(err(format!("ERR Unrecognized option '{}'", String::from_utf8_lossy(&args[2])))),
    };
    if !valid_name(&args[3]) {
        return Err(err(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            String::from_utf8_lossy(&attr)
        )));
    }
    if let Ok(mut f) = field.lock() {
        *f = if args[3].is_empty() { None } else { Some(args[3].clone()) };
    }
    reply(Reply::Ok)
}

/// One CLIENT LIST line, in Redis 7's field order.
/// CLIENT LIST's flags, in Redis's order (`N` for none).
fn client_flags(c: &ClientEntry, pubsub: bool) -> String {
    use crate::shard::client::{CLIENT_BLOCKED, CLIENT_MONITOR, CLIENT_NO_EVICT, CLIENT_NO_TOUCH};
    let f = c.flags.load(Ordering::Relaxed);
    let mut s = String::new();
    for (on, ch) in [
        (f & CLIENT_MONITOR != 0, 'O'),
        (pubsub, 'P'),
        (f & CLIENT_BLOCKED != 0, 'b'),
        (f & CLIENT_NO_EVICT != 0, 'e'),
        (f & CLIENT_NO_TOUCH != 0, 'T'),
    ] {
        if on {
            s.push(ch);
        }
    }
    if s.is_empty() {
        s.push('N');
    }
    s
}

pub fn client_line(table: &Table, c: &ClientEntry) -> String {
    let s = |m: &std::sync::Mutex<Option<Bytes>>| {
        m.lock().ok().and_then(|v| v.clone()).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
    };
    let cmd = table.by_id(c.last_cmd.load(Ordering::Relaxed)).map(|r| r.name).unwrap_or("NULL");
    let idle = c.last_active.lock().map(|t| t.elapsed().as_secs()).unwrap_or(0);
    let subs = c.subs.each_ref().map(|n| n.load(Ordering::Relaxed));
    format!(
        "id={} addr={} laddr={} fd=8 name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi=-1 qbuf={} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=16384 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={} user=default redir=-1 resp={} lib-name={} lib-ver={}",
        c.id,
        c.addr,
        c.laddr,
        s(&c.name),
        c.created.elapsed().as_secs(),
        idle,
        client_flags(c, subs.iter().any(|n| *n > 0)),
        c.db.load(Ordering::Relaxed),
        subs[0],
        subs[1],
        subs[2],
        c.qbuf.load(Ordering::Relaxed),
        cmd,
        c.resp.load(Ordering::Relaxed),
        s(&c.lib_name),
        s(&c.lib_ver),
    )
}

fn client_info(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let mut line = client_line(ctx.table, &ctx.session.entry);
    line.push('\n');
    reply(Reply::Verbatim(Bytes::from(line)))
}

fn client_list(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut ids: Option<Vec<u64>> = None;
    let mut j = 2;
    while j < args.len() {
        if args[j].eq_ignore_ascii_case(b"TYPE") && j + 1 < args.len() {
            let t = args[j + 1].to_ascii_lowercase();
            if !matches!(t.as_slice(), b"normal" | b"master" | b"replica" | b"slave" | b"pubsub") {
                return Err(err(format!("ERR Unknown client type '{}'", String::from_utf8_lossy(&args[j + 1]))));
            }
            if t != b"normal" {
                ids = Some(Vec::new());
            }
            j += 2;
        } else if args[j].eq_ignore_ascii_case(b"ID") && j + 1 < args.len() {
            let mut v = Vec::new();
            j += 1;
            while j < args.len() {
                let id = parse_i64(&args[j]).filter(|n| *n > 0).ok_or_else(|| err("ERR Invalid client ID"))?;
                v.push(id as u64);
                j += 1;
            }
            ids = Some(v);
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    let clients: Vec<_> = ctx.shared.clients.lock().map(|c| c.values().cloned().collect()).unwrap_or_default();
    let mut out = String::new();
    for c in clients {
        if ids.as_ref().is_some_and(|ids| !ids.contains(&c.id)) {
            continue;
        }
        out.push_str(&client_line(ctx.table, &c));
        out.push('\n');
    }
    reply(Reply::Verbatim(Bytes::from(out)))
}

fn client_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help_reply(&[
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
    ])
}

fn config_get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let cfg = ctx.shared.config();
    let mut out = Vec::new();
    for (k, v) in cfg.params() {
        if args[2..].iter().any(|p| glob_match(p, k.as_bytes(), true)) {
            out.push((Reply::bulk_str(k), Reply::bulk_str(v)));
        }
    }
    reply(Reply::Map(out))
}

fn config_set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() % 2 != 0 {
        return Err(err("ERR wrong number of arguments for 'config|set' command"));
    }
    let mut cfg = ctx.shared.config.write().unwrap_or_else(|e| e.into_inner());
    let mut staged = cfg.clone();
    for kv in args[2..].chunks(2) {
        let name = String::from_utf8_lossy(&kv[0]).to_ascii_lowercase();
        let value = String::from_utf8_lossy(&kv[1]).into_owned();
        match staged.set(&name, &value) {
            Ok(()) => {}
            Err(SetError::Unknown) => {
                return Err(err(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    String::from_utf8_lossy(&kv[0])
                )))
            }
            Err(SetError::Invalid(msg)) => return Err(err(format!("ERR {msg}"))),
        }
    }
    if let Some(l) = staged.param("client-output-buffer-limit").and_then(crate::shard::pubsub::Limits::parse) {
        ctx.shared.pubsub.set_limits(l);
    }
    // From the value as set: CONFIG GET's form leaves `n` out after `A`.
    if let Some(kv) = args[2..].chunks(2).rev().find(|kv| kv[0].eq_ignore_ascii_case(b"notify-keyspace-events")) {
        if let Some(f) = crate::types::notify::parse(&String::from_utf8_lossy(&kv[1])) {
            ctx.shared.pubsub.set_notify(f);
        }
    }
    ctx.shared.observe.configure(&staged);
    ctx.shared.access.configure(staged.param("lfu-log-factor"), staged.param("lfu-decay-time"));
    *cfg = staged;
    reply(Reply::Ok)
}

fn config_resetstat(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    for s in &ctx.shared.stats {
        s.commands.store(0, Ordering::Relaxed);
        s.net_input.store(0, Ordering::Relaxed);
        s.net_output.store(0, Ordering::Relaxed);
        s.connections.store(0, Ordering::Relaxed);
    }
    ctx.shared.expired_keys.store(0, Ordering::Relaxed);
    ctx.shared.observe.reset_stats();
    reply(Reply::Ok)
}

fn config_rewrite(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Err(err("ERR The server is running without a config file"))
}

fn config_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help_reply(&[
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
    ])
}

fn info_cmd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (text, keyspace) = info::render(ctx, &args[1..])?;
    if !keyspace {
        return reply(Reply::Verbatim(Bytes::from(text)));
    }
    // Cluster mode: the slots this node leads, as DBSIZE counts them.
    let slots = super::cluster::led_ranges(ctx.shared);
    let (storage, dbs) = (ctx.shared.storage.clone(), ctx.shared.dbs.clone());
    ctx.blocking(move |r| {
        let mut text = text;
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        text.push_str(&info::keyspace_section(&storage, crate::types::Source::now_ms(r), &dbs, &slots)?);
        Ok(Reply::Verbatim(Bytes::from(text)))
    })
}

fn time(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    // Inside a script or transaction time stands still at the log entry's (or
    // the command's) time, so every replica computes the same thing.
    let d = if ctx.detached() {
        Duration::from_millis(ctx.now_ms())
    } else {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default()
    };
    reply(Reply::Array(vec![
        Reply::bulk_str(&d.as_secs().to_string()),
        Reply::bulk_str(&d.subsec_micros().to_string()),
    ]))
}

fn lastsave(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ctx.shared.last_save.load(Ordering::Relaxed) as i64))
}

/// SAVE: everything acknowledged is already in the Raft log; make the log and
/// the applied state durable now (with segment logs, apply writes past
/// RocksDB's WAL: its memtables are flushed, so a restart replays nothing).
fn save(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.shared.sync_raft_log().map_err(|e| super::ctx::err(format!("ERR syncing the Raft log: {e}")))?;
    ctx.shared.storage.persist_applied()?;
    ctx.shared.last_save.store(crate::types::now_ms() / 1000, Ordering::Relaxed);
    reply(Reply::Ok)
}

fn bgsave(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 2 || (args.len() == 2 && !args[1].eq_ignore_ascii_case(b"SCHEDULE")) {
        return Err(ArgError::Syntax.into());
    }
    save(ctx, args)?;
    reply(Reply::Simple("Background saving started".into()))
}

fn debug(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = args[1].to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"sleep", 3) => {
            let secs = parse_f64(&args[2]).filter(|s| *s >= 0.0).ok_or(ArgError::NotFloat)?;
            Ok(Plan::Sleep(Duration::from_secs_f64(secs.min(3600.0)), Reply::Ok))
        }
        (b"set-active-expire", 3) | (b"quicklist-packed-threshold", 3) | (b"set-skip-checksum-validation", 3) => {
            reply(Reply::Ok)
        }
        (b"help", 2) => help_reply(&[
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
        ]),
        _ => Err(err(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(&args[1])
        ))),
    }
}

// ---- COMMAND ----

fn flag_names(spec: &CommandSpec) -> Reply {
    let mut names: Vec<Reply> =
        NAMES.iter().filter(|(f, _)| spec.flags & f != 0).map(|(_, n)| Reply::Simple((*n).into())).collect();
    if spec.movable_keys() {
        names.push(Reply::Simple("movablekeys".into()));
    }
    Reply::Set(names)
}

fn display_name(spec: &CommandSpec) -> &'static str {
    spec.name
}

fn key_specs(spec: &CommandSpec) -> Reply {
    Reply::Array(spec.key_specs.iter().map(ks::to_reply).collect())
}

/// The keys of a command line `args` (name first) and their flags, as Redis
/// 7.0's COMMAND GETKEYS[ANDFLAGS] finds them, errors included.
fn command_keys(t: &Table, args: &[Bytes]) -> Result<Vec<(usize, u16)>, CmdError> {
    let Some(spec) = t.named(args) else { return Err(err("ERR Invalid command specified")) };
    if !ks::has_keys(spec.key_specs, spec.key_proc) {
        return Err(err("ERR The command has no key arguments"));
    }
    if !spec.arity_ok(args.len()) {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let keys = ks::find(spec.key_specs, spec.key_proc, args);
    if keys.is_empty() && spec.flags & NO_MANDATORY_KEYS == 0 {
        return Err(err("ERR Invalid arguments specified for command"));
    }
    Ok(keys)
}

/// COMMAND GETKEYS command [arg ...]
fn command_getkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let inner = &args[2..];
    let keys = command_keys(ctx.table, inner)?;
    reply(Reply::Array(keys.into_iter().map(|(i, _)| Reply::Bulk(inner[i].clone())).collect()))
}

/// COMMAND GETKEYSANDFLAGS command [arg ...]: `[key, {flags}]` per key.
pub fn command_getkeysandflags(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let inner = &args[2..];
    let keys = command_keys(ctx.table, inner)?;
    reply(Reply::Array(
        keys.into_iter()
            .map(|(i, flags)| {
                let names =
                    ks::FLAG_NAMES.iter().filter(|(f, _)| flags & f != 0).map(|(_, n)| Reply::Simple((*n).into()));
                Reply::Array(vec![Reply::Bulk(inner[i].clone()), Reply::Set(names.collect())])
            })
            .collect(),
    ))
}

/// The 10-element COMMAND INFO entry.
fn command_entry(table: &Table, spec: &'static CommandSpec) -> Reply {
    let cats = spec.category_names().map(|c| Reply::Simple(c.into())).collect();
    let subs = table.subcommands(spec.name).map(|c| command_entry(table, c)).collect();
    let (first, last, step) = spec.legacy_keys();
    Reply::Array(vec![
        Reply::bulk_str(display_name(spec)),
        Reply::Int(spec.arity as i64),
        flag_names(spec),
        Reply::Int(first as i64),
        Reply::Int(last as i64),
        Reply::Int(step as i64),
        Reply::Set(cats),
        Reply::Array(Vec::new()),
        key_specs(spec),
        Reply::Array(subs),
    ])
}

fn command_all(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Array(ctx.table.top_level().map(|c| command_entry(ctx.table, c)).collect()))
}

fn command_count(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ctx.table.top_level().count() as i64))
}

fn command_info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() == 2 {
        return command_all(ctx, args);
    }
    let t = ctx.table;
    reply(Reply::Array(
        args[2..]
            .iter()
            .map(|n| match t.get(&String::from_utf8_lossy(n).to_ascii_lowercase()) {
                Some(spec) => command_entry(t, spec),
                None => Reply::Nil,
            })
            .collect(),
    ))
}

fn doc_entry(table: &Table, spec: &'static CommandSpec) -> Reply {
    let s = |t: &str| Reply::bulk_str(t);
    let mut m = vec![(s("summary"), s(spec.summary)), (s("since"), s(spec.since)), (s("group"), s(spec.group.name()))];
    let subs: Vec<_> = table.subcommands(spec.name).map(|c| (s(c.name), doc_entry(table, c))).collect();
    if !subs.is_empty() {
        m.push((s("subcommands"), Reply::Map(subs)));
    }
    Reply::Map(m)
}

fn command_docs(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let t = ctx.table;
    let specs: Vec<&'static CommandSpec> = if args.len() == 2 {
        t.top_level().collect()
    } else {
        args[2..].iter().filter_map(|n| t.get(&String::from_utf8_lossy(n).to_ascii_lowercase())).collect()
    };
    reply(Reply::Map(specs.into_iter().map(|c| (Reply::bulk_str(c.name), doc_entry(t, c))).collect()))
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]:
/// every command and subcommand, or those of a module (none: NeoKV has no
/// modules), of an ACL category (none for an unknown one), or whose name
/// matches a glob (any case), as Redis 7.0 answers.
fn command_list(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    enum Filter<'a> {
        All,
        Module,
        Category(Option<u32>),
        Pattern(&'a [u8]),
    }
    let mut filter = Filter::All;
    let mut i = 2;
    while i < args.len() {
        if !(args[i].eq_ignore_ascii_case(b"filterby") && args.len() - 1 - i == 2) {
            return Err(ArgError::Syntax.into());
        }
        let (kind, arg) = (&args[i + 1], &args[i + 2][..]);
        filter = if kind.eq_ignore_ascii_case(b"module") {
            Filter::Module
        } else if kind.eq_ignore_ascii_case(b"aclcat") {
            Filter::Category(cat::by_name(arg))
        } else if kind.eq_ignore_ascii_case(b"pattern") {
            Filter::Pattern(arg)
        } else {
            return Err(ArgError::Syntax.into());
        };
        i += 3;
    }
    let keep = |r: &CommandSpec| match &filter {
        Filter::All => true,
        Filter::Module | Filter::Category(None) => false,
        Filter::Category(Some(c)) => r.categories() & c != 0,
        Filter::Pattern(p) => glob_match(p, r.name.as_bytes(), true),
    };
    reply(Reply::Array(ctx.table.rows.iter().filter(|r| keep(r)).map(|r| Reply::bulk_str(r.name)).collect()))
}

fn command_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help_reply(&[
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
    ])
}

const C: Group = Group::Connection;
const S: Group = Group::Server;
const CONN: u32 = NOSCRIPT | LOADING | STALE | FAST;

pub static COMMANDS: &[CommandSpec] = &[
    row("ping", -1, FAST | WHILE_SUBSCRIBED, C, "1.0.0", "Returns the server's liveliness response.", ping),
    row("echo", 2, FAST | LOADING | STALE, C, "1.0.0", "Returns the given string.", echo),
    row(
        "quit",
        -1,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | WHILE_SUBSCRIBED | NOT_QUEUED,
        C,
        "1.0.0",
        "Closes the connection.",
        quit,
    ),
    row("select", 2, LOADING | STALE | FAST | SETS_DB, C, "1.0.0", "Changes the selected database.", select),
    row("auth", -2, CONN | NO_AUTH | ALLOW_BUSY, C, "1.0.0", "Authenticates the connection.", auth),
    row("hello", -1, CONN | NO_AUTH | ALLOW_BUSY, C, "6.0.0", "Handshakes with the Redis server.", hello),
    container("client", 0, C, "2.4.0", "A container for client connection commands.", None),
    row("client|setname", 3, NOSCRIPT | LOADING | STALE, C, "2.6.9", "Sets the connection name.", client_setname),
    row(
        "client|getname",
        2,
        NOSCRIPT | LOADING | STALE,
        C,
        "2.6.9",
        "Returns the name of the connection.",
        client_getname,
    ),
    row(
        "client|id",
        2,
        NOSCRIPT | LOADING | STALE,
        C,
        "5.0.0",
        "Returns the unique client ID of the connection.",
        client_id,
    ),
    row(
        "client|info",
        2,
        NOSCRIPT | LOADING | STALE,
        C,
        "6.2.0",
        "Returns information about the connection.",
        client_info,
    ),
    row("client|list", -2, ADMIN | NOSCRIPT | LOADING | STALE, C, "2.4.0", "Lists open connections.", client_list),
    row(
        "client|setinfo",
        4,
        CONN,
        C,
        "7.2.0",
        "Sets information specific to the client or connection.",
        client_setinfo,
    ),
    row(
        "client|help",
        2,
        LOADING | STALE,
        C,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        client_help,
    ),
    container("config", 0, S, "2.0.0", "A container for server configuration commands.", None),
    row(
        "config|get",
        -3,
        ADMIN | NOSCRIPT | LOADING | STALE,
        S,
        "2.0.0",
        "Returns the effective values of configuration parameters.",
        config_get,
    ),
    row(
        "config|set",
        -4,
        ADMIN | NOSCRIPT | LOADING | STALE,
        S,
        "2.0.0",
        "Sets configuration parameters in-flight.",
        config_set,
    ),
    row(
        "config|resetstat",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        S,
        "2.0.0",
        "Resets the server's statistics.",
        config_resetstat,
    ),
    row(
        "config|rewrite",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        S,
        "2.8.0",
        "Persists the effective configuration to file.",
        config_rewrite,
    ),
    row(
        "config|help",
        2,
        LOADING | STALE,
        S,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        config_help,
    ),
    container(
        "command",
        LOADING | STALE,
        S,
        "2.8.13",
        "Returns detailed information about all commands.",
        Some(command_all),
    )
    .cats(cat::CONNECTION),
    row("command|count", 2, LOADING | STALE, S, "2.8.13", "Returns a count of commands.", command_count)
        .cats(cat::CONNECTION),
    row(
        "command|info",
        -2,
        LOADING | STALE,
        S,
        "2.8.13",
        "Returns information about one, multiple or all commands.",
        command_info,
    )
    .cats(cat::CONNECTION),
    row(
        "command|docs",
        -2,
        LOADING | STALE,
        S,
        "7.0.0",
        "Returns documentary information about one, multiple or all commands.",
        command_docs,
    )
    .cats(cat::CONNECTION),
    row(
        "command|getkeys",
        -4,
        LOADING | STALE,
        S,
        "2.8.13",
        "Extracts the key names from an arbitrary command.",
        command_getkeys,
    )
    .cats(cat::CONNECTION),
    row("command|list", -2, LOADING | STALE, S, "7.0.0", "Returns a list of command names.", command_list)
        .cats(cat::CONNECTION),
    row(
        "command|help",
        2,
        LOADING | STALE,
        S,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        command_help,
    )
    .cats(cat::CONNECTION),
    row("info", -1, LOADING | STALE, S, "1.0.0", "Returns information and statistics about the server.", info_cmd)
        .cats(cat::DANGEROUS),
    row("time", 1, LOADING | STALE | FAST, S, "2.6.0", "Returns the server time.", time),
    row(
        "lastsave",
        1,
        LOADING | STALE | FAST,
        S,
        "1.0.0",
        "Returns the Unix timestamp of the last successful save to disk.",
        lastsave,
    )
    .cats(cat::ADMIN | cat::DANGEROUS),
    row(
        "save",
        1,
        ADMIN | NOSCRIPT | NO_MULTI | NO_ASYNC_LOADING,
        S,
        "1.0.0",
        "Synchronously saves the database(s) to disk.",
        save,
    ),
    row(
        "bgsave",
        -1,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        S,
        "1.0.0",
        "Asynchronously saves the database(s) to disk.",
        bgsave,
    ),
    row("debug", -2, ADMIN | NOSCRIPT | LOADING | STALE, S, "1.0.0", "A container for debugging commands.", debug),
];
