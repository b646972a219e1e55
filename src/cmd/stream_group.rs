//! Consumer groups' commands: XREADGROUP, XGROUP, XACK, XCLAIM, XAUTOCLAIM,
//! XPENDING. Their writes run inside apply like the rest of `cmd::stream`
//! (whose id parsing, replies and `in_apply` they use); their rows are in
//! `cmd::stream`'s table.

use bytes::Bytes;

use super::ctx::help_reply as help;
use super::ctx::{Attempt, Block};
use super::key_specs as ks;
use super::shape::Shape;
use super::stream::{
    c_str, end_bound, entries_reply, entry_reply, in_apply, int, int_or, loose_id, no_such_group, nogroup, open_write,
    parse_read, quoted, read_stream, refuse_in_read_only, start_bound, stor, streams_reply, strict_id, Ctx2, ReadArgs,
};
use super::stream::{G, R, W};
use super::table::{container, flag::*, row, CommandSpec};
use super::{err, CmdError, CmdResult, Ctx, Plan};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::Reply;
use crate::types::blocked::Lane;
use crate::types::notify::STREAM;
use crate::types::stream::{self as st, Sid, Stream};
use crate::types::{ApplyCtx, TypeError};

/// What an XREADGROUP asks of one stream.
#[derive(Clone, Copy)]
enum ReadFrom {
    /// `>`: entries never delivered to the group.
    New,
    /// The consumer's pending entries after this id.
    History(Sid),
}

fn xreadgroup(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let r = parse_read(args, true)?;
    if r.block.is_some() && ctx.session.in_script {
        return Err(err("ERR xreadgroup command is not allowed with BLOCK option from scripts"));
    }
    // A history read is served at once; only `>` everywhere may wait.
    let all_new = r.ids.iter().all(|id| &id[..] == b">");
    if !ctx.detached() {
        let region = ctx.region.unwrap_or(0);
        return match r.block {
            Some(ms) if all_new => Ok(Plan::Block(Block {
                region,
                attempt: Attempt::Write { cmd: ctx.apply_cmd(args, false), retry: ctx.apply_cmd(args, true) },
                keys: r.keys.clone(),
                db: ctx.session.db,
                timeout: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
                shape: Shape::Only,
                lane: Lane::Group(r.group.as_ref().map(|g| g.0.clone()).unwrap_or_default()),
            })),
            _ => ctx.in_apply(region, args),
        };
    }
    let Some((group, consumer)) = r.group.clone() else { return Err(ArgError::Syntax.into()) };
    in_apply(ctx, args, |a, c| readgroup_apply(a, c, &r, &group, &consumer))
}

/// One stream an XREADGROUP serves: its key, the stream, its metadata, the
/// group as it was, and where to read from.
type Served = (Bytes, Stream, crate::storage::meta::Meta, st::Group, ReadFrom);

fn readgroup_apply(a: &mut ApplyCtx, c: &Ctx2, r: &ReadArgs, group: &[u8], consumer: &[u8]) -> Result<Reply, CmdError> {
    let found = readgroup_streams(a, c, r, group)?;
    // A retry that finds nothing writes nothing.
    if c.retry {
        let mut any = false;
        for (_, s, _, g, _) in &found {
            any |= !s.is_empty() && stor(st::last_live(a, s))? > g.last;
        }
        if !any {
            return Ok(Reply::NilArray);
        }
    }
    let now = c.now_ms;
    let count = if r.count == 0 { usize::MAX } else { r.count };
    let mut served = Vec::new();
    for (key, s, _, g, from) in found {
        // The group as this command left it (a stream named twice is served once).
        let mut g = stor(st::group(a, &s, group))?.unwrap_or(g);
        // Redis serves a stream when it reads history, or when the stream has
        // entries past the group's last id; only then is the consumer looked
        // up (created, its seen time set).
        if matches!(from, ReadFrom::New) && (s.is_empty() || stor(st::last_live(a, &s))? <= g.last) {
            continue;
        }
        let mut cons = match stor(st::consumer(a, &s, group, consumer))? {
            Some(cons) => cons,
            None => {
                a.event(STREAM, "xgroup-createconsumer", &key);
                st::Consumer { name: Bytes::copy_from_slice(consumer), seen: now, pending: 0 }
            }
        };
        cons.seen = now;
        st::put_consumer(a, &s, group, &cons);
        let reply = match from {
            ReadFrom::History(after) => serve_history(a, &s, group, &mut g, consumer, after, count, now)?,
            ReadFrom::New => match serve_new(a, &s, group, &mut g, &mut cons, r.noack, count, now)? {
                Some(reply) => reply,
                None => continue,
            },
        };
        served.push((key.clone(), reply));
        st::put_group(a, &s, &g);
        a.rewrote(&key);
    }
    if served.is_empty() {
        return Ok(Reply::NilArray);
    }
    Ok(streams_reply(c.resp, served))
}

/// Every stream and group an XREADGROUP names, checked before any is served
/// (as Redis checks them), with where each is read from.
fn readgroup_streams(a: &mut ApplyCtx, c: &Ctx2, r: &ReadArgs, group: &[u8]) -> Result<Vec<Served>, CmdError> {
    let mut found = Vec::with_capacity(r.keys.len());
    for (key, id) in r.keys.iter().zip(&r.ids) {
        let s = match open_write(a, key) {
            Ok(s) => s,
            Err(e) if c.retry => return Err(unblocked_gone(e)),
            Err(e) => return Err(e),
        };
        let g = match &s {
            Some((s, _)) => stor(st::group(a, s, group))?,
            None => None,
        };
        let (Some((s, old)), Some(g)) = (s, g) else {
            if c.retry {
                return Err(if open_write(a, key)?.is_none() {
                    err("UNBLOCKED the stream key no longer exists")
                } else {
                    err("NOGROUP the consumer group this client was blocked on no longer exists")
                });
            }
            return Err(quoted(&[
                b"NOGROUP No such key '",
                c_str(key),
                b"' or consumer group '",
                c_str(group),
                b"' in XREADGROUP with GROUP option",
            ]));
        };
        let from = match &id[..] {
            // The largest id is how Redis marks `>`: it reads as `>`.
            b">" => ReadFrom::New,
            _ if strict_id(id).is_ok_and(|i| i == Sid::MAX) => ReadFrom::New,
            b"$" => {
                return Err(err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."));
            }
            _ => ReadFrom::History(strict_id(id)?),
        };
        found.push((key.clone(), s, old, g, from));
    }
    Ok(found)
}

/// XREADGROUP of a consumer's history: its pending entries after `after`,
/// each delivered once more (a deleted entry shows as nil).
#[allow(clippy::too_many_arguments)]
fn serve_history(
    a: &mut ApplyCtx,
    s: &Stream,
    group: &[u8],
    g: &mut st::Group,
    consumer: &[u8],
    after: Sid,
    count: usize,
    now: u64,
) -> Result<Reply, CmdError> {
    let mut out = Vec::new();
    if let Some(start) = after.next() {
        let pend = stor(st::pending(a, s, group, start, Sid::MAX, count, Some(consumer), |_| true))?;
        for mut p in pend {
            match stor(st::entry(a, s, p.id))? {
                Some(f) => {
                    out.push(entry_reply(p.id, f));
                    p.delivered = now;
                    p.deliveries += 1;
                    let before = p.clone();
                    stor(st::put_pending(a, s, g, Some(&before), &p, |_, _, _| Ok(())))?;
                }
                None => out.push(Reply::Array(vec![Reply::Bulk(p.id.text()), Reply::NilArray])),
            }
        }
    }
    Ok(Reply::Array(out))
}

/// XREADGROUP of `>`: the entries never delivered to the group, now
/// delivered to `cons` (pending unless NOACK). `None` if there are none.
#[allow(clippy::too_many_arguments)]
fn serve_new(
    a: &mut ApplyCtx,
    s: &Stream,
    group: &[u8],
    g: &mut st::Group,
    cons: &mut st::Consumer,
    noack: bool,
    count: usize,
    now: u64,
) -> Result<Option<Reply>, CmdError> {
    let Some(start) = g.last.next() else { return Ok(None) };
    let got = stor(st::range(a, s, start, Sid::MAX, count, false))?;
    let mut mine = 0i64;
    for (id, _) in &got {
        st::delivered(s, g, *id);
        if !noack {
            let old = stor(st::pending_entry(a, s, group, *id))?;
            let p = st::Pending { id: *id, consumer: cons.name.clone(), delivered: now, deliveries: 1 };
            let name = cons.name.clone();
            let s2 = s.clone();
            let group_name = g.name.clone();
            stor(st::put_pending(a, s, g, old.as_ref(), &p, |a, who, by| {
                if who == &name[..] {
                    mine += by;
                    Ok(())
                } else {
                    st::bump_consumer(a, &s2, &group_name, who, by)
                }
            }))?;
        }
    }
    if mine != 0 {
        cons.pending = cons.pending.saturating_add_signed(mine);
        st::put_consumer(a, s, group, cons);
    }
    Ok(Some(entries_reply(got)))
}

fn unblocked_gone(e: CmdError) -> CmdError {
    match e {
        CmdError::Type(TypeError::WrongType) => err("UNBLOCKED the stream key no longer exists"),
        e => e,
    }
}

// ---- XGROUP ----

fn subcommand_error(args: &[Bytes], container: &str) -> CmdError {
    let sub = args.get(1).map(|b| &b[..]).unwrap_or(b"");
    let sub = &sub[..sub.len().min(128)];
    quoted(&[
        b"ERR unknown subcommand or wrong number of arguments for '",
        sub,
        format!("'. Try {container} HELP.").as_bytes(),
    ])
}

/// ENTRIESREAD's value: `None` is Redis's -1 (unknown).
fn entries_read_opt(args: &[Bytes], from: usize, mkstream_ok: bool) -> Result<(Option<u64>, bool), CmdError> {
    let mut read = None;
    let mut mkstream = false;
    let mut i = from;
    while i < args.len() {
        if mkstream_ok && args[i].eq_ignore_ascii_case(b"mkstream") {
            mkstream = true;
            i += 1;
        } else if args[i].eq_ignore_ascii_case(b"entriesread") && i + 1 < args.len() {
            let n = int(&args[i + 1])?;
            if n < 0 && n != -1 {
                return Err(err("ERR value for ENTRIESREAD must be positive or -1"));
            }
            read = (n >= 0).then_some(n as u64);
            i += 2;
        } else {
            return Err(subcommand_error(args, "XGROUP"));
        }
    }
    Ok((read, mkstream))
}

const REQUIRES_KEY: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";

/// The stream and group an XGROUP subcommand names, checked as Redis does.
fn group_of(a: &ApplyCtx, args: &[Bytes]) -> Result<(Stream, crate::storage::meta::Meta, st::Group), CmdError> {
    let Some((s, old)) = open_write(a, &args[2])? else { return Err(err(REQUIRES_KEY)) };
    match stor(st::group(a, &s, &args[3]))? {
        Some(g) => Ok((s, old, g)),
        None => Err(no_such_group(&args[2], &args[3])),
    }
}

fn xgroup_create(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    if args.len() > 8 {
        return Err(subcommand_error(args, "XGROUP"));
    }
    let (read, mkstream) = entries_read_opt(args, 5, true)?;
    in_apply(ctx, args, |a, _| {
        let key = &args[2];
        let (mut s, old) = match open_write(a, key)? {
            Some((s, m)) => (s, Some(m)),
            None if mkstream => (st::create(a, key), None),
            None => return Err(err(REQUIRES_KEY)),
        };
        let last = if &args[4][..] == b"$" { s.state.last } else { strict_id(&args[4])? };
        if stor(st::group(a, &s, &args[3]))?.is_some() {
            return Err(err("BUSYGROUP Consumer Group name already exists"));
        }
        if old.is_none() {
            let expired = stor(a.any_meta(&a.mkey(key)))?;
            st::save(a, key, expired.as_ref(), &mut s);
        } else {
            a.rewrote(key);
        }
        st::put_group(a, &s, &st::Group { name: args[3].clone(), last, read, pending: 0 });
        a.event(STREAM, "xgroup-create", key);
        Ok(Reply::Ok)
    })
}

fn xgroup_setid(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    if args.len() != 5 && args.len() != 7 {
        return Err(subcommand_error(args, "XGROUP"));
    }
    let (read, _) = entries_read_opt(args, 5, false)?;
    in_apply(ctx, args, |a, _| {
        let (s, _, mut g) = group_of(a, args)?;
        g.last = if &args[4][..] == b"$" { s.state.last } else { loose_id(&args[4], 0)? };
        g.read = read;
        st::put_group(a, &s, &g);
        a.rewrote(&args[2]);
        a.event(STREAM, "xgroup-setid", &args[2]);
        Ok(Reply::Ok)
    })
}

fn xgroup_destroy(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    in_apply(ctx, args, |a, _| {
        let Some((s, _)) = open_write(a, &args[2])? else { return Err(err(REQUIRES_KEY)) };
        let Some(g) = stor(st::group(a, &s, &args[3]))? else { return Ok(Reply::Int(0)) };
        stor(st::destroy_group(a, &s, &g))?;
        a.rewrote(&args[2]);
        a.event(STREAM, "xgroup-destroy", &args[2]);
        Ok(Reply::Int(1))
    })
}

fn xgroup_createconsumer(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    in_apply(ctx, args, |a, c| {
        let (s, _, g) = group_of(a, args)?;
        if stor(st::consumer(a, &s, &g.name, &args[4]))?.is_some() {
            return Ok(Reply::Int(0));
        }
        st::put_consumer(a, &s, &g.name, &st::Consumer { name: args[4].clone(), seen: c.now_ms, pending: 0 });
        a.rewrote(&args[2]);
        a.event(STREAM, "xgroup-createconsumer", &args[2]);
        Ok(Reply::Int(1))
    })
}

fn xgroup_delconsumer(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    in_apply(ctx, args, |a, _| {
        let (s, _, mut g) = group_of(a, args)?;
        let mut n = 0;
        if let Some(cons) = stor(st::consumer(a, &s, &g.name, &args[4]))? {
            n = stor(st::delete_consumer(a, &s, &mut g, &cons))?;
            st::put_group(a, &s, &g);
            a.rewrote(&args[2]);
        }
        a.event(STREAM, "xgroup-delconsumer", &args[2]);
        Ok(Reply::Int(n as i64))
    })
}

fn xgroup_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
    ])
}

// ---- XACK, XCLAIM, XAUTOCLAIM ----

/// A pending entry changes hands: the group's, old and new owner's counts.
fn move_pending(
    a: &mut ApplyCtx,
    s: &Stream,
    g: &mut st::Group,
    old: Option<&st::Pending>,
    p: &st::Pending,
) -> Result<(), CmdError> {
    let group = g.name.clone();
    let s2 = s.clone();
    stor(st::put_pending(a, s, g, old, p, |a, who, by| st::bump_consumer(a, &s2, &group, who, by)))
}

fn drop_pending(a: &mut ApplyCtx, s: &Stream, g: &mut st::Group, p: &st::Pending) -> Result<(), CmdError> {
    let group = g.name.clone();
    let s2 = s.clone();
    stor(st::drop_pending(a, s, g, p, |a, who, by| st::bump_consumer(a, &s2, &group, who, by)))
}

fn xack(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    in_apply(ctx, args, |a, _| {
        let Some((s, _)) = open_write(a, &args[1])? else { return Ok(Reply::Int(0)) };
        let Some(mut g) = stor(st::group(a, &s, &args[2]))? else { return Ok(Reply::Int(0)) };
        let ids = args[3..].iter().map(|x| strict_id(x)).collect::<Result<Vec<_>, _>>()?;
        let mut n = 0;
        for id in ids {
            if let Some(p) = stor(st::pending_entry(a, &s, &g.name, id))? {
                drop_pending(a, &s, &mut g, &p)?;
                n += 1;
            }
        }
        if n > 0 {
            st::put_group(a, &s, &g);
            a.rewrote(&args[1]);
        }
        Ok(Reply::Int(n))
    })
}

/// The claiming consumer, created on first use (`streamLookupConsumer` then
/// `streamCreateConsumer`); its seen time is the command's.
fn claimer(
    a: &mut ApplyCtx,
    key: &[u8],
    s: &Stream,
    g: &st::Group,
    name: &Bytes,
    now: u64,
) -> Result<st::Consumer, CmdError> {
    let c = match stor(st::consumer(a, s, &g.name, name))? {
        Some(c) => c,
        None => {
            a.event(STREAM, "xgroup-createconsumer", key);
            st::Consumer { name: name.clone(), seen: now, pending: 0 }
        }
    };
    let c = st::Consumer { seen: now, ..c };
    st::put_consumer(a, s, &g.name, &c);
    Ok(c)
}

fn xclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    in_apply(ctx, args, |a, c| {
        let key = &args[1];
        let Some((s, _)) = open_write(a, key)? else { return Err(nogroup(key, &args[2])) };
        let Some(mut g) = stor(st::group(a, &s, &args[2]))? else { return Err(nogroup(key, &args[2])) };
        let min_idle = int_or(&args[4], "ERR Invalid min-idle-time argument for XCLAIM")?.max(0) as u64;
        let mut j = 5;
        let mut ids = Vec::new();
        while j < args.len() {
            match strict_id(&args[j]) {
                Ok(id) => ids.push(id),
                Err(_) => break,
            }
            j += 1;
        }
        let now = c.now_ms;
        let (mut force, mut justid) = (false, false);
        let mut delivery: Option<i64> = None;
        let mut retrycount: Option<i64> = None;
        let mut last_id = Sid::ZERO;
        while j < args.len() {
            let more = args.len() - 1 - j;
            let o = &args[j];
            if o.eq_ignore_ascii_case(b"force") {
                force = true;
            } else if o.eq_ignore_ascii_case(b"justid") {
                justid = true;
            } else if o.eq_ignore_ascii_case(b"idle") && more > 0 {
                j += 1;
                let idle = int_or(&args[j], "ERR Invalid IDLE option argument for XCLAIM")?;
                delivery = Some((now as i64).wrapping_sub(idle));
            } else if o.eq_ignore_ascii_case(b"time") && more > 0 {
                j += 1;
                delivery = Some(int_or(&args[j], "ERR Invalid TIME option argument for XCLAIM")?);
            } else if o.eq_ignore_ascii_case(b"retrycount") && more > 0 {
                j += 1;
                retrycount = Some(int_or(&args[j], "ERR Invalid RETRYCOUNT option argument for XCLAIM")?);
            } else if o.eq_ignore_ascii_case(b"lastid") && more > 0 {
                j += 1;
                last_id = strict_id(&args[j])?;
            } else {
                return Err(quoted(&[b"ERR Unrecognized XCLAIM option '", c_str(o), b"'"]));
            }
            j += 1;
        }
        let mut touched = false;
        if last_id > g.last {
            g.last = last_id;
            touched = true;
        }
        let delivery = match delivery {
            Some(t) if t >= 0 && (t as u64) <= now => t as u64,
            _ => now,
        };
        let mut claimer_rec: Option<st::Consumer> = None;
        let mut out = Vec::new();
        for id in ids {
            let old = stor(st::pending_entry(a, &s, &g.name, id))?;
            let Some(fields) = stor(st::entry(a, &s, id))? else {
                if let Some(p) = old {
                    drop_pending(a, &s, &mut g, &p)?;
                    touched = true;
                }
                continue;
            };
            let old = match old {
                Some(p) => {
                    if min_idle > 0 && (now as i64).wrapping_sub(p.delivered as i64) < min_idle as i64 {
                        continue;
                    }
                    Some(p)
                }
                None if force => None,
                None => continue,
            };
            if claimer_rec.is_none() {
                claimer_rec = Some(claimer(a, key, &s, &g, &args[3], now)?);
            }
            let deliveries = match (retrycount, &old) {
                (Some(n), _) => n as u64,
                (None, Some(p)) if !justid => p.deliveries + 1,
                (None, Some(p)) => p.deliveries,
                // FORCE creates the pending entry delivered once, then counts this claim.
                (None, None) if !justid => 2,
                (None, None) => 1,
            };
            let p = st::Pending { id, consumer: args[3].clone(), delivered: delivery, deliveries };
            move_pending(a, &s, &mut g, old.as_ref(), &p)?;
            touched = true;
            out.push(if justid { Reply::Bulk(id.text()) } else { entry_reply(id, fields) });
        }
        if touched || claimer_rec.is_some() {
            st::put_group(a, &s, &g);
            a.rewrote(key);
        }
        Ok(Reply::Array(out))
    })
}

fn xautoclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let min_idle = int_or(&args[4], "ERR Invalid min-idle-time argument for XAUTOCLAIM")?.max(0) as u64;
    let start = start_bound(&args[5])?;
    let mut count: u64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if args[j].eq_ignore_ascii_case(b"count") && more > 0 {
            let max = (i64::MAX / 16) as u64;
            count = parse_i64(&args[j + 1])
                .filter(|&n| n >= 1 && n as u64 <= max)
                .ok_or_else(|| err("ERR COUNT must be > 0"))? as u64;
            j += 1;
        } else if args[j].eq_ignore_ascii_case(b"justid") {
            justid = true;
        } else {
            return Err(ArgError::Syntax.into());
        }
        j += 1;
    }
    in_apply(ctx, args, |a, c| {
        let key = &args[1];
        let Some((s, _)) = open_write(a, key)? else { return Err(nogroup(key, &args[2])) };
        let Some(mut g) = stor(st::group(a, &s, &args[2]))? else { return Err(nogroup(key, &args[2])) };
        let now = c.now_ms;
        let mut attempts = count.saturating_mul(10);
        let mut left = count;
        let mut claimed = Vec::new();
        let mut deleted = Vec::new();
        let mut claimer_rec: Option<st::Consumer> = None;
        let mut cursor = start;
        let next: Sid;
        let mut touched = false;
        'scan: loop {
            let page = stor(st::pending(a, &s, &g.name, cursor, Sid::MAX, 64, None, |_| true))?;
            if page.is_empty() {
                next = Sid::ZERO;
                break;
            }
            for p in page {
                if attempts == 0 || left == 0 {
                    next = p.id;
                    break 'scan;
                }
                attempts -= 1;
                cursor = p.id.next().unwrap_or(Sid::MAX);
                let Some(fields) = stor(st::entry(a, &s, p.id))? else {
                    drop_pending(a, &s, &mut g, &p)?;
                    deleted.push(Reply::Bulk(p.id.text()));
                    left -= 1;
                    touched = true;
                    continue;
                };
                if min_idle > 0 && (now as i64).wrapping_sub(p.delivered as i64) < min_idle as i64 {
                    continue;
                }
                if claimer_rec.is_none() {
                    claimer_rec = Some(claimer(a, key, &s, &g, &args[3], now)?);
                }
                let np = st::Pending {
                    id: p.id,
                    consumer: args[3].clone(),
                    delivered: now,
                    deliveries: if justid { p.deliveries } else { p.deliveries + 1 },
                };
                move_pending(a, &s, &mut g, Some(&p), &np)?;
                touched = true;
                claimed.push(if justid { Reply::Bulk(p.id.text()) } else { entry_reply(p.id, fields) });
                left -= 1;
                if p.id == Sid::MAX {
                    next = Sid::ZERO;
                    break 'scan;
                }
            }
        }
        if touched || claimer_rec.is_some() {
            st::put_group(a, &s, &g);
            a.rewrote(key);
        }
        Ok(Reply::Array(vec![Reply::Bulk(next.text()), Reply::Array(claimed), Reply::Array(deleted)]))
    })
}

// ---- XPENDING ----

fn xpending(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(ArgError::Syntax.into());
    }
    let mut ext: Option<(u64, Sid, Sid, usize, Option<Bytes>)> = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if args[3].eq_ignore_ascii_case(b"idle") {
            min_idle = int(&args[4])?.max(0) as u64;
            if argc < 8 {
                return Err(ArgError::Syntax.into());
            }
            at += 2;
        }
        let count = int(&args[at + 2])?.max(0) as usize;
        let start = start_bound(&args[at])?;
        let end = end_bound(&args[at + 1])?;
        let consumer = args.get(at + 3).cloned();
        ext = Some((min_idle, start, end, count, consumer));
    }
    let (key, group) = (args[1].clone(), args[2].clone());
    let now = ctx.now_ms();
    ctx.read_key(&args[1], move |v| {
        let s = read_stream(v, &key)?;
        let g = match &s {
            Some(s) => stor(st::group(v, s, &group))?,
            None => None,
        };
        let (Some(s), Some(g)) = (s, g) else { return Err(nogroup(&key, &group)) };
        match &ext {
            None => {
                if g.pending == 0 {
                    return Ok(Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]));
                }
                let first = stor(st::pending(v, &s, &g.name, Sid::ZERO, Sid::MAX, 1, None, |_| true))?;
                let last = stor(st::last_pending(v, &s, &g.name))?;
                let mut per = Vec::new();
                for c in stor(st::consumers(v, &s, &g.name))? {
                    if c.pending > 0 {
                        per.push(Reply::Array(vec![
                            Reply::Bulk(c.name.clone()),
                            Reply::Bulk(Bytes::from(c.pending.to_string())),
                        ]));
                    }
                }
                Ok(Reply::Array(vec![
                    Reply::Int(g.pending as i64),
                    first.first().map_or(Reply::Nil, |p| Reply::Bulk(p.id.text())),
                    last.map_or(Reply::Nil, |id| Reply::Bulk(id.text())),
                    Reply::Array(per),
                ]))
            }
            Some((min_idle, start, end, count, consumer)) => {
                if let Some(c) = consumer {
                    if stor(st::consumer(v, &s, &g.name, c))?.is_none() {
                        return Ok(Reply::Array(Vec::new()));
                    }
                }
                let idle = |p: &st::Pending| (now as i64).wrapping_sub(p.delivered as i64);
                let min = *min_idle as i64;
                let list = stor(st::pending(v, &s, &g.name, *start, *end, *count, consumer.as_deref(), |p| {
                    min == 0 || idle(p) >= min
                }))?;
                Ok(Reply::Array(
                    list.into_iter()
                        .map(|p| {
                            Reply::Array(vec![
                                Reply::Bulk(p.id.text()),
                                Reply::Bulk(p.consumer.clone()),
                                Reply::Int(idle(&p).max(0)),
                                Reply::Int(p.deliveries as i64),
                            ])
                        })
                        .collect(),
                ))
            }
        }
    })
}

pub static COMMANDS: &[CommandSpec] = &[
    row("xreadgroup", -7, WRITE | BLOCKING, G, "5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", xreadgroup).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::keyword("STREAMS", 4), ks::range(-1, 1, 2))]),
    row("xack", -4, WRITE | FAST, G, "5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", xack).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("xpending", -3, R, G, "5.0.0", "Returns the information and entries from a stream consumer group's pending entries list.", xpending).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("xclaim", -6, WRITE | FAST, G, "5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", xclaim).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("xautoclaim", -6, WRITE | FAST, G, "6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", xautoclaim).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    container("xgroup", 0, G, "5.0.0", "A container for consumer groups commands.", None),
    row("xgroup|create", -5, W, G, "5.0.0", "Creates a consumer group.", xgroup_create).key_specs(&[ks::key(ks::RW | ks::INSERT, 2)]),
    row("xgroup|setid", -5, WRITE, G, "5.0.0", "Sets the last-delivered ID of a consumer group.", xgroup_setid).key_specs(&[ks::key(ks::RW | ks::UPDATE, 2)]),
    row("xgroup|destroy", 4, WRITE, G, "5.0.0", "Destroys a consumer group.", xgroup_destroy).key_specs(&[ks::key(ks::RW | ks::DELETE, 2)]),
    row("xgroup|createconsumer", 5, W, G, "6.2.0", "Creates a consumer in a consumer group.", xgroup_createconsumer).key_specs(&[ks::key(ks::RW | ks::INSERT, 2)]),
    row("xgroup|delconsumer", 5, WRITE, G, "5.0.0", "Deletes a consumer from a consumer group.", xgroup_delconsumer).key_specs(&[ks::key(ks::RW | ks::DELETE, 2)]),
    row("xgroup|help", 2, LOADING | STALE, G, "5.0.0", "Returns helpful text about the different subcommands.", xgroup_help),
];
