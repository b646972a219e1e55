//! Keyspace commands: handlers first, table rows last.

use bytes::Bytes;

use super::args::{cursor, int, invalid_expire, ScanOpts};
use super::key_specs as ks;
use super::table::{cat, flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdResult, Ctx, Shape};
use crate::cluster::SLOT_COUNT;
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::{ArgCursor, Reply};
use crate::storage::keys::{decode_meta_key, decode_meta_key_in};
use crate::types::glob::glob_match;
use crate::types::keyspace as kspace;
use crate::types::Source;

fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Del(pb::Del { keys: args[1..].to_vec() }), Shape::Natural)
}

fn exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let r = ctx.reader();
    let mut n = 0;
    for k in &args[1..] {
        if r.meta(k)?.is_some() {
            n += 1;
        }
    }
    reply(Reply::Int(n))
}

fn type_(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Simple(kspace::type_name(&ctx.reader(), &args[1])?.into()))
}

/// EXPIRE family: `unit_ms` 1000 or 1; `relative` adds the command's time.
fn expire_generic(ctx: &mut Ctx<'_>, args: &[Bytes], unit_ms: i64, relative: bool) -> CmdResult {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in &args[3..] {
        match opt.to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"gt" => gt = true,
            b"lt" => lt = true,
            _ => return Err(err(format!("ERR Unsupported option {}", String::from_utf8_lossy(opt)))),
        }
    }
    if nx && (xx || gt || lt) {
        return Err(err("ERR NX and XX, GT or LT options at the same time are not compatible"));
    }
    if gt && lt {
        return Err(err("ERR GT and LT options at the same time are not compatible"));
    }
    let mut when = int(&args[2])?;
    let name = ctx.spec.name;
    if unit_ms == 1000 {
        if !(i64::MIN / 1000..=i64::MAX / 1000).contains(&when) {
            return Err(invalid_expire(name));
        }
        when *= 1000;
    }
    let base = if relative { ctx.now_ms() as i64 } else { 0 };
    if when > i64::MAX - base {
        return Err(invalid_expire(name));
    }
    when += base;
    // A time at or before the epoch expires the key just as any past time does.
    let op = pb::Expire { key: args[1].clone(), at_ms: when.max(0) as u64, nx, xx, gt, lt };
    ctx.write(Op::Expire(op), Shape::Natural)
}

fn expire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1000, true)
}
fn pexpire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1, true)
}
fn expireat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1000, false)
}
fn pexpireat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1, false)
}

fn ttl_generic(ctx: &Ctx<'_>, key: &[u8], millis: bool, absolute: bool) -> CmdResult {
    reply(Reply::Int(kspace::ttl(&ctx.reader(), key, millis, absolute)?))
}
fn ttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &args[1], false, false)
}
fn pttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &args[1], true, false)
}
fn expiretime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &args[1], false, true)
}
fn pexpiretime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &args[1], true, true)
}

fn persist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Persist(pb::Persist { key: args[1].clone() }), Shape::Natural)
}

fn rename(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Rename { from: args[1].clone(), to: args[2].clone(), nx: false };
    ctx.write(Op::Rename(op), Shape::Natural)
}

fn renamenx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Rename { from: args[1].clone(), to: args[2].clone(), nx: true };
    ctx.write(Op::Rename(op), Shape::Flag)
}

/// A database number as Redis reads one (`getIntFromObjectOrReply`): an
/// `int`; else `msg`, or without one Redis's two errors (not a number, or
/// past an `int`).
fn parse_db(arg: &[u8], msg: &'static str) -> Result<i64, super::CmdError> {
    match parse_i64(arg) {
        Some(n) if i32::try_from(n).is_ok() => Ok(n),
        _ if !msg.is_empty() => Err(err(msg)),
        Some(_) => Err(err("ERR value is out of range, value must between -2147483648 and 2147483647")),
        None => Err(ArgError::NotInteger.into()),
    }
}

/// True if `n` names one of the server's databases.
fn in_range(ctx: &Ctx<'_>, n: i64) -> bool {
    n >= 0 && (n as u64) < ctx.shared.dbs.count() as u64
}

const OUT_OF_RANGE: &str = "ERR DB index is out of range";

/// SELECT's database: an integer in range; in cluster mode only 0.
pub fn db_index(ctx: &Ctx<'_>, arg: &[u8], cmd: &str) -> Result<u16, super::CmdError> {
    let n = parse_db(arg, "")?;
    if n != 0 && ctx.shared.nodes.is_some() {
        return Err(err(format!("ERR {cmd} is not allowed in cluster mode")));
    }
    if !in_range(ctx, n) {
        return Err(err(OUT_OF_RANGE));
    }
    Ok(n as u16)
}

fn copy(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut replace = false;
    let mut db = None;
    let mut cur = ArgCursor::new(&args[3..]);
    while !cur.is_empty() {
        if cur.eat("REPLACE") {
            replace = true;
        } else if cur.remaining() >= 2 && cur.eat("DB") {
            let n = parse_db(cur.next()?, "")?;
            if !in_range(ctx, n) {
                return Err(err(OUT_OF_RANGE));
            }
            db = Some(n as u16);
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    if ctx.shared.nodes.is_some() && (ctx.session.db != 0 || db.is_some_and(|d| d != 0)) {
        return Err(err("ERR Copying to another database is not allowed in cluster mode"));
    }
    if args[1] == args[2] && db.is_none_or(|d| d == ctx.session.db) {
        return Err(err("ERR source and destination objects are the same"));
    }
    let op = pb::Copy {
        from: args[1].clone(),
        to: args[2].clone(),
        replace,
        to_db: db.is_some(),
        db: db.unwrap_or(0) as u32,
    };
    ctx.write(Op::Copy(op), Shape::Natural)
}

fn move_(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.shared.nodes.is_some() {
        return Err(err("ERR MOVE is not allowed in cluster mode"));
    }
    let n = parse_db(&args[2], "")?;
    if !in_range(ctx, n) {
        return Err(err(OUT_OF_RANGE));
    }
    if n as u16 == ctx.session.db {
        return Err(err("ERR source and destination objects are the same"));
    }
    ctx.write(Op::Move(pb::Move { key: args[1].clone(), db: n as u32 }), Shape::Natural)
}

fn swapdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.shared.nodes.is_some() {
        return Err(err("ERR SWAPDB is not allowed in cluster mode"));
    }
    // A script runs in one region's apply, beside other regions' batches: a
    // swap there would not be one instant for all of them (see below).
    if ctx.session.in_script {
        return Err(err("ERR SWAPDB is not allowed from scripts"));
    }
    let a = parse_db(&args[1], "ERR invalid first DB index")?;
    let b = parse_db(&args[2], "ERR invalid second DB index")?;
    if !in_range(ctx, a) || !in_range(ctx, b) {
        return Err(err(OUT_OF_RANGE));
    }
    if a == b {
        // Redis does nothing at all (no watched key is touched).
        return reply(Reply::Ok);
    }
    // One cross-region write, alone in its apply batch: the mapping changes
    // between two batches of every region.
    if ctx.core().is_some() {
        ctx.region = Some(crate::shard::cross::ALL_REGIONS);
    }
    ctx.write(Op::Swapdb(pb::Swapdb { a: a as u32, b: b as u32 }), Shape::Natural)
}

fn dbsize(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let slots = ctx.scope_ranges();
    ctx.blocking(move |r| Ok(Reply::Int(kspace::dbsize(r, &slots)?)))
}

fn keys_cmd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let pattern = args[1].clone();
    let slots = ctx.scope_ranges();
    ctx.blocking(move |r| Ok(Reply::Array(kspace::keys(r, &slots, &pattern)?.into_iter().map(Reply::Bulk).collect())))
}

fn randomkey(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let slot = (ctx.random() % SLOT_COUNT as u64) as u16;
    let pick = ctx.random();
    let slots = ctx.scope_ranges();
    match kspace::random_key(&ctx.reader(), &slots, slot, pick)? {
        Some(k) => reply(Reply::Bulk(k)),
        None => reply(Reply::Nil),
    }
}

fn scan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let cursor = cursor(&args[1])?;
    let ScanOpts { count, pattern, type_filter } = ScanOpts::parse(&args[2..], true)?;
    // A cursor is `(id << 14) | slot`: `id` names the key the previous call stopped
    // at (kept in a bounded table), `slot` is that key's slot. If the id is unknown
    // (evicted, or issued before a restart) the scan resumes at the start of the
    // slot: some keys may come again, which SCAN allows, but none is skipped.
    // Inside a transaction or a script the whole keyspace comes in one page.
    let (from_slot, after) = if cursor == 0 || ctx.detached() {
        (0u16, None)
    } else {
        let slot = (cursor & 0x3fff) as u16;
        let known = ctx.shared.scan_cursors.lock().ok().and_then(|c| c.get(cursor >> 14));
        match known {
            // (A key of another database: a SWAPDB came between two calls.)
            Some(k) if decode_meta_key_in(&k).map(|(d, s, _)| (d, s)) == Some((ctx.physical_db(), slot)) => {
                (slot, Some(k))
            }
            _ => (slot, None),
        }
    };
    let count = if ctx.detached() { usize::MAX } else { count };
    let r = ctx.reader();
    let mut out = Vec::new();
    let slots = ctx.scope_ranges();
    let last = kspace::scan_keys(&r, &slots, from_slot, after.as_deref(), count, |sk| {
        if let Some(t) = &type_filter {
            if *t != Some(sk.kind) {
                return;
            }
        }
        if let Some(p) = &pattern {
            if !glob_match(p, &sk.key, false) {
                return;
            }
        }
        out.push(Reply::Bulk(sk.key));
    })?;
    let next = match last {
        Some(k) => {
            let slot = decode_meta_key(&k).map(|(s, _)| s as u64).unwrap_or(0);
            let id = ctx.shared.scan_cursors.lock().map(|mut c| c.put(k)).unwrap_or(0);
            (id << 14) | slot
        }
        None => 0,
    };
    reply(Reply::Array(vec![Reply::bulk_str(&next.to_string()), Reply::Array(out)]))
}

fn flush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 2 {
        return Err(ArgError::Syntax.into());
    }
    if args.len() == 2 && !args[1].eq_ignore_ascii_case(b"sync") && !args[1].eq_ignore_ascii_case(b"async") {
        return Err(ArgError::Syntax.into());
    }
    let db_only = args[0].eq_ignore_ascii_case(b"flushdb");
    ctx.shared.access.clear();
    // Standalone with several regions: one cross-region write, so no client
    // sees some regions flushed and others not.
    if ctx.core().is_some() && ctx.shared.nodes.is_none() && ctx.shared.router().regions().len() > 1 {
        ctx.region = Some(crate::shard::cross::ALL_REGIONS);
        return ctx.write(Op::Flush(pb::Flush { db_only }), Shape::Natural);
    }
    ctx.broadcast(Op::Flush(pb::Flush { db_only }))
}

fn touch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    exists(ctx, args)
}

const W: u32 = WRITE;
const WF: u32 = WRITE | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::Generic;

pub static COMMANDS: &[CommandSpec] = &[
    row("del", -2, W | FORGETS, G, "1.0.0", "Deletes one or more keys.", del).key_specs(&[ks::spec(
        ks::RM | ks::DELETE,
        ks::index(1),
        ks::range(-1, 1, 0),
    )]),
    row("unlink", -2, WF | FORGETS, G, "4.0.0", "Asynchronously deletes one or more keys.", del)
        .key_specs(&[ks::spec(ks::RM | ks::DELETE, ks::index(1), ks::range(-1, 1, 0))]),
    row("exists", -2, RF | NO_TOUCH, G, "1.0.0", "Determines whether one or more keys exist.", exists)
        .key_specs(&[ks::spec(ks::RO, ks::index(1), ks::range(-1, 1, 0))]),
    row("type", 2, RF | NO_TOUCH, G, "1.0.0", "Determines the type of value stored at a key.", type_)
        .key_specs(&[ks::key(ks::RO, 1)]),
    row("expire", -3, WF, G, "1.0.0", "Sets the expiration time of a key in seconds.", expire)
        .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("pexpire", -3, WF, G, "2.6.0", "Sets the expiration time of a key in milliseconds.", pexpire)
        .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("expireat", -3, WF, G, "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", expireat)
        .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row(
        "pexpireat",
        -3,
        WF,
        G,
        "2.6.0",
        "Sets the expiration time of a key to a Unix milliseconds timestamp.",
        pexpireat,
    )
    .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("ttl", 2, RF | NO_TOUCH, G, "1.0.0", "Returns the expiration time in seconds of a key.", ttl)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("pttl", 2, RF | NO_TOUCH, G, "2.6.0", "Returns the expiration time in milliseconds of a key.", pttl)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "expiretime",
        2,
        RF | NO_TOUCH,
        G,
        "7.0.0",
        "Returns the expiration time of a key as a Unix timestamp.",
        expiretime,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "pexpiretime",
        2,
        RF | NO_TOUCH,
        G,
        "7.0.0",
        "Returns the expiration time of a key as a Unix milliseconds timestamp.",
        pexpiretime,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("persist", 2, WF, G, "2.2.0", "Removes the expiration time of a key.", persist)
        .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("rename", 3, W, G, "1.0.0", "Renames a key and overwrites the destination.", rename)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::OW | ks::UPDATE, 2)]),
    row("renamenx", 3, WF, G, "1.0.0", "Renames a key only when the target key name doesn't exist.", renamenx)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::OW | ks::INSERT, 2)]),
    row("copy", -3, W | DENYOOM, G, "6.2.0", "Copies the value of a key to a new key.", copy)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1), ks::key(ks::OW | ks::UPDATE, 2)]),
    row("dbsize", 1, RF | KEYLESS_READ, Group::Server, "1.0.0", "Returns the number of keys in the database.", dbsize)
        .cats(cat::KEYSPACE),
    row("keys", 2, R | KEYLESS_READ, G, "1.0.0", "Returns all key names that match a pattern.", keys_cmd)
        .cats(cat::KEYSPACE | cat::DANGEROUS),
    row("randomkey", 1, R | KEYLESS_READ, G, "1.0.0", "Returns a random key name from the database.", randomkey),
    row("scan", -2, R | KEYLESS_READ, G, "2.8.0", "Iterates over the key names in the database.", scan),
    row("flushdb", -1, W | FANOUT, Group::Server, "1.0.0", "Remove all keys from the current database.", flush)
        .cats(cat::KEYSPACE | cat::DANGEROUS),
    row("flushall", -1, W | FANOUT, Group::Server, "1.0.0", "Removes all keys from all databases.", flush)
        .cats(cat::KEYSPACE | cat::DANGEROUS),
    row("move", 3, WF, G, "1.0.0", "Moves a key to another database.", move_)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("swapdb", 3, WF | SWAPS_DBS, Group::Server, "4.0.0", "Swaps two Redis databases.", swapdb)
        .cats(cat::KEYSPACE | cat::DANGEROUS),
    row(
        "touch",
        -2,
        RF | TOUCHES,
        G,
        "3.2.1",
        "Returns the number of existing keys out of those specified after updating the time they were last accessed.",
        touch,
    )
    .key_specs(&[ks::spec(ks::RO, ks::index(1), ks::range(-1, 1, 0))]),
];
