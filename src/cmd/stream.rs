//! Stream commands: XADD, XRANGE, XREAD, XINFO, XSETID, and what the
//! consumer groups' commands (`stream_group`: XGROUP, XREADGROUP, XACK,
//! XPENDING, XCLAIM, XAUTOCLAIM, with their own rows) share with them.
//!
//! Every write is proposed as a one-command transaction (`Ctx::in_apply`) and
//! runs inside apply with the same handler: the log carries the command line,
//! and apply computes ids (`*` from the entry's time, so never behind the
//! stream's last id), trims, and consumer group state (pending entries, their
//! delivery times and counts) the same on every replica. Arguments Redis
//! checks before looking at the key are checked on the connection first;
//! those it checks after (XDEL's and XACK's ids, XCLAIM's options, XGROUP's
//! ids) are checked inside apply, in Redis's order.
//!
//! Blocking reads wait without holding a core (`types::blocked` lanes): a
//! blocked XREAD rereads on its core after each write to its streams; a blocked
//! XREADGROUP retries its write, first come first served within its group.

use bytes::Bytes;

use super::ctx::help_reply as help;
use super::ctx::{Attempt, Block, READONLY_SCRIPT};
use super::key_specs as ks;
use super::shape::Shape;
use super::table::{container, flag::*, row, CommandSpec, Group};
use super::{err, CmdError, CmdResult, Ctx, Plan};
use crate::pb::{self, stream::Op as S, write_cmd::Op};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::Reply;
use crate::shard::Shared;
use crate::storage::StorageError;
use crate::types::blocked::Lane;
use crate::types::stream::{self as st, Fields, NewId, Sid, Stream, Trim};
use crate::types::view::Snap;
use crate::types::{Source, TypeError};

const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

// ---- ids ----

/// C `strtoull` over the whole string: blanks, a sign (a minus wraps), digits.
fn strtoull(s: &[u8]) -> Option<u64> {
    let (neg, digits) = crate::protocol::cursor::c_blank_sign(s);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Redis's `string2ull`: `string2ll` if it fits (negative is invalid), else
/// `strtoull`.
fn string2ull(s: &[u8]) -> Option<u64> {
    match parse_i64(s) {
        Some(v) => (v >= 0).then_some(v as u64),
        None => strtoull(s),
    }
}

/// Redis's `streamGenericParseIDOrReply`: `-`, `+` (unless `strict`), `ms`
/// (with `missing_seq`), `ms-seq`, and with `star` the `ms-*` form (then the
/// second value is `None`).
fn parse_id_full(arg: &[u8], missing_seq: u64, strict: bool, star: bool) -> Result<(Sid, bool), CmdError> {
    let bad = || err(INVALID_ID);
    if arg.len() > 127 {
        return Err(bad());
    }
    // A C string: the bytes up to the first NUL.
    let s = &arg[..arg.iter().position(|&b| b == 0).unwrap_or(arg.len())];
    if strict && (s == b"-" || s == b"+") {
        return Err(bad());
    }
    if s == b"-" {
        return Ok((Sid::ZERO, true));
    }
    if s == b"+" {
        return Ok((Sid::MAX, true));
    }
    let (ms, seq) = match s.iter().position(|&b| b == b'-') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let ms = string2ull(ms).ok_or_else(bad)?;
    match seq {
        None => Ok((Sid::new(ms, missing_seq), true)),
        Some(b"*") if star => Ok((Sid::new(ms, 0), false)),
        Some(q) => Ok((Sid::new(ms, string2ull(q).ok_or_else(bad)?), true)),
    }
}

/// A strict id (no `-` or `+`).
pub(super) fn strict_id(arg: &[u8]) -> Result<Sid, CmdError> {
    Ok(parse_id_full(arg, 0, true, false)?.0)
}

/// An id that may be `-` or `+`.
pub(super) fn loose_id(arg: &[u8], missing_seq: u64) -> Result<Sid, CmdError> {
    Ok(parse_id_full(arg, missing_seq, false, false)?.0)
}

/// An interval bound, `(` for exclusive (Redis's streamParseIntervalIDOrReply).
fn interval(arg: &[u8], missing_seq: u64) -> Result<(Sid, bool), CmdError> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_id_full(&arg[1..], missing_seq, true, false)?.0, true))
    } else {
        Ok((loose_id(arg, missing_seq)?, false))
    }
}

pub(super) fn start_bound(arg: &[u8]) -> Result<Sid, CmdError> {
    match interval(arg, 0)? {
        (id, false) => Ok(id),
        (id, true) => id.next().ok_or_else(|| err("ERR invalid start ID for the interval")),
    }
}

pub(super) fn end_bound(arg: &[u8]) -> Result<Sid, CmdError> {
    match interval(arg, u64::MAX)? {
        (id, false) => Ok(id),
        (id, true) => id.prev().ok_or_else(|| err("ERR invalid end ID for the interval")),
    }
}

/// An integer argument with Redis's own message.
pub(super) fn int_or(arg: &[u8], msg: &'static str) -> Result<i64, CmdError> {
    parse_i64(arg).ok_or_else(|| err(msg))
}

pub(super) fn int(arg: &[u8]) -> Result<i64, CmdError> {
    Ok(parse_i64(arg).ok_or(ArgError::NotInteger)?)
}

/// The bytes of a C string (up to the first NUL), as `%s` prints them.
pub(super) fn c_str(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// An error quoting arguments, bytes as they are.
pub(super) fn quoted(parts: &[&[u8]]) -> CmdError {
    CmdError::Bytes(Bytes::from(parts.concat()))
}

pub(super) fn nogroup(key: &[u8], group: &[u8]) -> CmdError {
    quoted(&[b"NOGROUP No such key '", c_str(key), b"' or consumer group '", c_str(group), b"'"])
}

pub(super) fn no_such_group(key: &[u8], group: &[u8]) -> CmdError {
    quoted(&[b"NOGROUP No such consumer group '", c_str(group), b"' for key name '", c_str(key), b"'"])
}

pub(super) fn stor<T>(r: Result<T, StorageError>) -> Result<T, CmdError> {
    r.map_err(CmdError::from)
}

// ---- replies ----

pub(super) fn entry_reply(id: Sid, fields: Fields) -> Reply {
    Reply::Array(vec![Reply::Bulk(id.text()), Reply::Array(fields.into_iter().map(Reply::Bulk).collect())])
}

pub(super) fn entries_reply(entries: Vec<(Sid, Fields)>) -> Reply {
    Reply::Array(entries.into_iter().map(|(id, f)| entry_reply(id, f)).collect())
}

/// XREAD's and XREADGROUP's reply: RESP2 pairs of `[key, entries]`, RESP3 a map.
pub(super) fn streams_reply(resp: u8, served: Vec<(Bytes, Reply)>) -> Reply {
    if served.is_empty() {
        return Reply::NilArray;
    }
    if resp >= 3 {
        Reply::Map(served.into_iter().map(|(k, v)| (Reply::Bulk(k), v)).collect())
    } else {
        Reply::Array(served.into_iter().map(|(k, v)| Reply::Array(vec![Reply::Bulk(k), v])).collect())
    }
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn opt_int(v: Option<u64>) -> Reply {
    v.map_or(Reply::Nil, |n| Reply::Int(n as i64))
}

// ---- running writes inside apply ----

/// The stream write `op` as its operation, with what apply needs of the
/// client (its protocol, a blocked client's retry) and the node limits:
/// this node's, or inside apply the entry's.
pub(super) fn message(ctx: &mut Ctx<'_>, op: pb::stream::Op) -> pb::Stream {
    let limits =
        if ctx.detached() { ctx.with_apply(|a| a.stream_limits.carried()).flatten() } else { ctx.stream_limits() };
    pb::Stream { op: Some(op), resp: ctx.session.resp as u32, limits, retry: ctx.session.retry }
}

/// Propose the stream write `op` (detached: apply it now).
pub(super) fn write(ctx: &mut Ctx<'_>, op: pb::stream::Op) -> CmdResult {
    let msg = message(ctx, op);
    ctx.write(Op::Stream(msg), Shape::Natural)
}

pub(super) fn refuse_in_read_only(ctx: &Ctx<'_>) -> Result<(), CmdError> {
    if ctx.read_only() {
        return Err(err(READONLY_SCRIPT));
    }
    Ok(())
}

// ---- XADD / XTRIM ----

/// XADD's and XTRIM's options (Redis's streamParseAddOrTrimArgsOrReply).
struct AddTrim {
    /// The strategy, `~`, and LIMIT (`None`: `~` without LIMIT, whose limit
    /// comes from the node limits the operation carries).
    trim: Option<(Trim, bool, Option<u64>)>,
    nomkstream: bool,
    /// XADD: the id and the index of the first field.
    id: Option<NewId>,
    fields_at: usize,
}

fn parse_add_trim(args: &[Bytes], xadd: bool) -> Result<AddTrim, CmdError> {
    let mut trim: Option<(Trim, bool)> = None;
    let mut limit: Option<i64> = None;
    let mut nomkstream = false;
    let mut id = None;
    let mut i = 2;
    let both = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    while i < args.len() {
        let more = args.len() - 1 - i;
        let a = &args[i];
        if xadd && &a[..] == b"*" {
            id = Some(NewId::Auto);
            break;
        } else if (a.eq_ignore_ascii_case(b"maxlen") || a.eq_ignore_ascii_case(b"minid")) && more > 0 {
            if trim.is_some() {
                return Err(err(both));
            }
            let mut approx = false;
            let next = &args[i + 1][..];
            if more >= 2 && next == b"~" {
                approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let v = &args[i + 1];
            let how = if a.eq_ignore_ascii_case(b"maxlen") {
                let n = int(v)?;
                if n < 0 {
                    return Err(err("ERR The MAXLEN argument must be >= 0."));
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(strict_id(v)?)
            };
            trim = Some((how, approx));
            i += 1;
        } else if a.eq_ignore_ascii_case(b"limit") && more > 0 {
            let n = int(&args[i + 1])?;
            if n < 0 {
                return Err(err("ERR The LIMIT argument must be >= 0."));
            }
            limit = Some(n);
            i += 1;
        } else if xadd && a.eq_ignore_ascii_case(b"nomkstream") {
            nomkstream = true;
        } else if xadd {
            let (sid, seq_given) = parse_id_full(a, 0, true, true)?;
            id = Some(if seq_given { NewId::Exact(sid) } else { NewId::Ms(sid.ms) });
            break;
        } else {
            return Err(ArgError::Syntax.into());
        }
        i += 1;
    }
    if limit.is_some_and(|l| l != 0) && trim.is_none() {
        return Err(err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"));
    }
    if !xadd && trim.is_none() {
        return Err(err("ERR syntax error, XTRIM must be called with a trimming strategy"));
    }
    let trim = match (trim, limit) {
        (Some((_, false)), Some(_)) => {
            return Err(err("ERR syntax error, LIMIT cannot be used without the special ~ option"));
        }
        (Some((how, approx)), Some(l)) => Some((how, approx, Some(l as u64))),
        (Some((how, true)), None) => Some((how, true, None)),
        (Some((how, false)), None) => Some((how, false, Some(0))),
        (None, _) => None,
    };
    Ok(AddTrim { trim, nomkstream, id, fields_at: i + 1 })
}

fn trim_op(trim: Option<(Trim, bool, Option<u64>)>) -> Option<pb::StreamTrim> {
    let (how, approx, limit) = trim?;
    let mut t = pb::StreamTrim { approx, has_limit: limit.is_some(), limit: limit.unwrap_or(0), ..Default::default() };
    match how {
        Trim::MaxLen(n) => t.maxlen = n,
        Trim::MinId(id) => (t.minid, t.min) = (true, Some(id.into())),
    }
    Some(t)
}

fn xadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let p = parse_add_trim(args, true)?;
    let n = args.len().saturating_sub(p.fields_at);
    if p.id.is_none() || n < 2 || n % 2 == 1 {
        return Err(err("ERR wrong number of arguments for 'xadd' command"));
    }
    if p.id == Some(NewId::Exact(Sid::ZERO)) {
        return Err(err("ERR The ID specified in XADD must be greater than 0-0"));
    }
    let mut op = pb::Xadd {
        key: args[1].clone(),
        fields: args[p.fields_at..].to_vec(),
        nomkstream: p.nomkstream,
        trim: trim_op(p.trim),
        ..Default::default()
    };
    match p.id {
        Some(NewId::Exact(id)) => op.exact = Some(id.into()),
        Some(NewId::Ms(ms)) => (op.has_ms, op.ms) = (true, ms),
        Some(NewId::Auto) | None => {}
    }
    write(ctx, S::Xadd(op))
}

fn xtrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let p = parse_add_trim(args, false)?;
    write(ctx, S::Xtrim(pb::Xtrim { key: args[1].clone(), trim: trim_op(p.trim) }))
}

fn xdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    write(ctx, S::Xdel(pb::Xdel { key: args[1].clone(), ids: args[2..].to_vec() }))
}

fn xsetid(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let last = strict_id(&args[2])?;
    let mut added = None;
    let mut max_deleted = Sid::ZERO;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if args[i].eq_ignore_ascii_case(b"entriesadded") && more > 0 {
            let n = int(&args[i + 1])?;
            if n < 0 {
                return Err(err("ERR entries_added must be positive"));
            }
            added = Some(n as u64);
        } else if args[i].eq_ignore_ascii_case(b"maxdeletedid") && more > 0 {
            max_deleted = strict_id(&args[i + 1])?;
            if last < max_deleted {
                return Err(err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"));
            }
        } else {
            return Err(ArgError::Syntax.into());
        }
        i += 2;
    }
    let op = pb::Xsetid {
        key: args[1].clone(),
        last: Some(last.into()),
        has_added: added.is_some(),
        added: added.unwrap_or(0),
        max_deleted: Some(max_deleted.into()),
    };
    write(ctx, S::Xsetid(op))
}

// ---- reads: XLEN, XRANGE, XREVRANGE ----

pub(super) fn read_stream(src: &impl Source, key: &[u8]) -> Result<Option<Stream>, CmdError> {
    Ok(stor(st::open(src, key))??)
}

fn xlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    ctx.read_key(&args[1], move |v| Ok(Reply::Int(read_stream(v, &key)?.map_or(0, |s| s.len() as i64))))
}

fn xrange_generic(ctx: &mut Ctx<'_>, args: &[Bytes], rev: bool) -> CmdResult {
    let (lo, hi) = if rev { (&args[3], &args[2]) } else { (&args[2], &args[3]) };
    let start = start_bound(lo)?;
    let end = end_bound(hi)?;
    let mut count: Option<usize> = None;
    let mut i = 4;
    while i < args.len() {
        if args[i].eq_ignore_ascii_case(b"count") && i + 1 < args.len() {
            count = Some(int(&args[i + 1])?.max(0) as usize);
            i += 2;
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    let key = args[1].clone();
    let run = move |v: &crate::types::ReadView<'_>| -> Result<Reply, CmdError> {
        let Some(s) = read_stream(v, &key)? else { return Ok(Reply::Array(Vec::new())) };
        if count == Some(0) {
            // COUNT 0 (or negative) on a stream: a null array, as Redis answers.
            return Ok(Reply::NilArray);
        }
        Ok(entries_reply(stor(st::range(v, &s, start, end, count.unwrap_or(usize::MAX), rev))?))
    };
    match count {
        Some(n) if n <= super::ctx::INLINE_WALK as usize => ctx.read_key(&args[1], run),
        Some(n) => ctx.walk_sized(n as u64, run),
        None => ctx.walk([&args[1]], run),
    }
}

fn xrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    xrange_generic(ctx, args, false)
}

fn xrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    xrange_generic(ctx, args, true)
}

// ---- XREAD / XREADGROUP ----

/// XREAD's and XREADGROUP's arguments.
pub(super) struct ReadArgs {
    pub(super) count: usize,
    /// Milliseconds (0: forever); `None` without BLOCK.
    pub(super) block: Option<u64>,
    pub(super) group: Option<(Bytes, Bytes)>,
    pub(super) noack: bool,
    pub(super) keys: Vec<Bytes>,
    pub(super) ids: Vec<Bytes>,
}

pub(super) fn parse_read(args: &[Bytes], group_cmd: bool) -> Result<ReadArgs, CmdError> {
    let mut r = ReadArgs { count: 0, block: None, group: None, noack: false, keys: Vec::new(), ids: Vec::new() };
    let mut streams = None;
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - i - 1;
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"block") && more > 0 {
            i += 1;
            let ms = parse_i64(&args[i]).ok_or_else(|| err("ERR timeout is not an integer or out of range"))?;
            if ms < 0 {
                return Err(err("ERR timeout is negative"));
            }
            r.block = Some(ms as u64);
        } else if a.eq_ignore_ascii_case(b"count") && more > 0 {
            i += 1;
            r.count = int(&args[i])?.max(0) as usize;
        } else if a.eq_ignore_ascii_case(b"streams") && more > 0 {
            let n = args.len() - i - 1;
            if n % 2 != 0 {
                // Redis 7.0 words it so for XREADGROUP too.
                return Err(err(
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                ));
            }
            streams = Some(i + 1);
            break;
        } else if a.eq_ignore_ascii_case(b"group") && more >= 2 {
            if !group_cmd {
                return Err(err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."));
            }
            r.group = Some((args[i + 1].clone(), args[i + 2].clone()));
            i += 2;
        } else if a.eq_ignore_ascii_case(b"noack") {
            if !group_cmd {
                return Err(err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."));
            }
            r.noack = true;
        } else {
            return Err(ArgError::Syntax.into());
        }
        i += 1;
    }
    let Some(at) = streams else { return Err(ArgError::Syntax.into()) };
    if group_cmd && r.group.is_none() {
        return Err(err("ERR Missing GROUP option for XREADGROUP"));
    }
    let n = (args.len() - at) / 2;
    r.keys = args[at..at + n].to_vec();
    r.ids = args[at + n..].to_vec();
    Ok(r)
}

/// XREAD with every `$` already resolved: the streams with entries after
/// their ids.
fn read_after(
    src: &impl Source,
    keys: &[Bytes],
    after: &[Sid],
    count: usize,
    resp: u8,
    retry: bool,
) -> Result<Reply, CmdError> {
    let mut served = Vec::new();
    for (key, &gt) in keys.iter().zip(after) {
        let s = match read_stream(src, key) {
            // A blocked reader woken by a key turned into another type waits on,
            // as Redis serves only streams.
            Err(CmdError::Type(TypeError::WrongType)) if retry => continue,
            s => s?,
        };
        let Some(s) = s else { continue };
        let Some(start) = gt.next() else { continue };
        let got = stor(st::range(src, &s, start, Sid::MAX, if count == 0 { usize::MAX } else { count }, false))?;
        if !got.is_empty() {
            served.push((key.clone(), entries_reply(got)));
        }
    }
    Ok(streams_reply(resp, served))
}

fn xread(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let r = parse_read(args, false)?;
    if r.block.is_some() && ctx.session.in_script {
        return Err(err("ERR xread command is not allowed with BLOCK option from scripts"));
    }
    // The ids, `$` read now: the last id of each stream (0-0 if absent).
    let view = ctx.reader();
    let mut after = Vec::with_capacity(r.ids.len());
    for (key, id) in r.keys.iter().zip(&r.ids) {
        let s = read_stream(&view, key)?;
        if &id[..] == b"$" {
            after.push(s.map_or(Sid::ZERO, |s| s.state.last));
        } else if &id[..] == b">" {
            return Err(err(
                "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
            ));
        } else {
            after.push(strict_id(id)?);
        }
    }
    drop(view);
    let resp = ctx.session.resp;
    let (keys, count) = (r.keys.clone(), r.count);
    let first = std::cell::Cell::new(true);
    let db = ctx.session.db;
    match r.block {
        Some(ms) if !ctx.detached() => Ok(Plan::Block(Block {
            region: ctx.region.unwrap_or(0),
            attempt: Attempt::Read(Box::new(move |shared: &Shared, now_ms: u64| {
                let snap = Snap::new(shared.storage.view(), now_ms, shared.dbs.physical(db));
                let retry = !first.replace(false);
                read_after(&snap, &keys, &after, count, resp, retry).unwrap_or_else(CmdError::into_reply)
            })),
            keys: r.keys,
            db,
            timeout: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
            shape: Shape::Natural,
            lane: Lane::Reader,
        })),
        _ => ctx.walk(r.keys.iter(), move |v| read_after(v, &keys, &after, count, resp, false)),
    }
}

// ---- XINFO ----

fn xinfo_stream(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis looks the key up before it reads the options.
    let full: Result<Option<usize>, String> = match args.len() {
        3 => Ok(None),
        4 if args[3].eq_ignore_ascii_case(b"full") => Ok(Some(10)),
        6 if args[3].eq_ignore_ascii_case(b"full") && args[4].eq_ignore_ascii_case(b"count") => {
            match parse_i64(&args[5]) {
                None => Err(ArgError::NotInteger.to_string()),
                Some(0) => Ok(Some(usize::MAX)),
                Some(n) if n < 0 => Ok(Some(10)),
                Some(n) => Ok(Some(n as usize)),
            }
        }
        _ => Err(String::from_utf8_lossy(
            &[
                &b"ERR unknown subcommand or wrong number of arguments for '"[..],
                &args[1][..args[1].len().min(128)],
                b"'. Try XINFO HELP.",
            ]
            .concat(),
        )
        .into_owned()),
    };
    let key = args[2].clone();
    ctx.walk([&args[2]], move |v| {
        let Some(s) = read_stream(v, &key)? else { return Err(TypeError::NoSuchKey.into()) };
        let full = full.clone().map_err(err)?;
        let nodes = stor(st::node_count(v, &s))?;
        let mut m: Vec<(Reply, Reply)> = vec![
            (bulk("length"), Reply::Int(s.len() as i64)),
            (bulk("radix-tree-keys"), Reply::Int(nodes as i64)),
            (bulk("radix-tree-nodes"), Reply::Int(nodes as i64 + 1)),
            (bulk("last-generated-id"), Reply::Bulk(s.state.last.text())),
            (bulk("max-deleted-entry-id"), Reply::Bulk(s.state.max_deleted.text())),
            (bulk("entries-added"), Reply::Int(s.state.added as i64)),
            (bulk("recorded-first-entry-id"), Reply::Bulk(s.state.first.text())),
        ];
        let groups = stor(st::groups(v, &s))?;
        match full {
            None => {
                m.push((bulk("groups"), Reply::Int(groups.len() as i64)));
                let first = stor(st::range(v, &s, Sid::ZERO, Sid::MAX, 1, false))?;
                let last = stor(st::range(v, &s, Sid::ZERO, Sid::MAX, 1, true))?;
                let one = |e: Vec<(Sid, Fields)>| e.into_iter().next().map_or(Reply::Nil, |(id, f)| entry_reply(id, f));
                m.push((bulk("first-entry"), one(first)));
                m.push((bulk("last-entry"), one(last)));
            }
            Some(count) => {
                m.push((bulk("entries"), entries_reply(stor(st::range(v, &s, Sid::ZERO, Sid::MAX, count, false))?)));
                let mut gs = Vec::new();
                for g in groups {
                    let pel = stor(st::pending(v, &s, &g.name, Sid::ZERO, Sid::MAX, count, None, |_| true))?;
                    let pel = pel
                        .into_iter()
                        .map(|p| {
                            Reply::Array(vec![
                                Reply::Bulk(p.id.text()),
                                Reply::Bulk(p.consumer),
                                Reply::Int(p.delivered as i64),
                                Reply::Int(p.deliveries as i64),
                            ])
                        })
                        .collect();
                    let mut cs = Vec::new();
                    for c in stor(st::consumers(v, &s, &g.name))? {
                        let own =
                            stor(st::pending(v, &s, &g.name, Sid::ZERO, Sid::MAX, count, Some(&c.name), |_| true))?;
                        let own = own
                            .into_iter()
                            .map(|p| {
                                Reply::Array(vec![
                                    Reply::Bulk(p.id.text()),
                                    Reply::Int(p.delivered as i64),
                                    Reply::Int(p.deliveries as i64),
                                ])
                            })
                            .collect();
                        cs.push(Reply::Map(vec![
                            (bulk("name"), Reply::Bulk(c.name.clone())),
                            (bulk("seen-time"), Reply::Int(c.seen as i64)),
                            (bulk("pel-count"), Reply::Int(c.pending as i64)),
                            (bulk("pending"), Reply::Array(own)),
                        ]));
                    }
                    gs.push(Reply::Map(vec![
                        (bulk("name"), Reply::Bulk(g.name.clone())),
                        (bulk("last-delivered-id"), Reply::Bulk(g.last.text())),
                        (bulk("entries-read"), opt_int(g.read)),
                        (bulk("lag"), st::lag(&s, &g).map_or(Reply::Nil, Reply::Int)),
                        (bulk("pel-count"), Reply::Int(g.pending as i64)),
                        (bulk("pending"), Reply::Array(pel)),
                        (bulk("consumers"), Reply::Array(cs)),
                    ]));
                }
                m.push((bulk("groups"), Reply::Array(gs)));
            }
        }
        Ok(Reply::Map(m))
    })
}

fn xinfo_groups(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[2].clone();
    ctx.read_key(&args[2], move |v| {
        let Some(s) = read_stream(v, &key)? else { return Err(TypeError::NoSuchKey.into()) };
        let mut out = Vec::new();
        for g in stor(st::groups(v, &s))? {
            let consumers = stor(st::consumers(v, &s, &g.name))?.len();
            out.push(Reply::Map(vec![
                (bulk("name"), Reply::Bulk(g.name.clone())),
                (bulk("consumers"), Reply::Int(consumers as i64)),
                (bulk("pending"), Reply::Int(g.pending as i64)),
                (bulk("last-delivered-id"), Reply::Bulk(g.last.text())),
                (bulk("entries-read"), opt_int(g.read)),
                (bulk("lag"), st::lag(&s, &g).map_or(Reply::Nil, Reply::Int)),
            ]));
        }
        Ok(Reply::Array(out))
    })
}

fn xinfo_consumers(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, group) = (args[2].clone(), args[3].clone());
    let now = ctx.now_ms();
    ctx.read_key(&args[2], move |v| {
        let Some(s) = read_stream(v, &key)? else { return Err(TypeError::NoSuchKey.into()) };
        if stor(st::group(v, &s, &group))?.is_none() {
            return Err(no_such_group(&key, &group));
        }
        let out = stor(st::consumers(v, &s, &group))?
            .into_iter()
            .map(|c| {
                Reply::Map(vec![
                    (bulk("name"), Reply::Bulk(c.name.clone())),
                    (bulk("pending"), Reply::Int(c.pending as i64)),
                    (bulk("idle"), Reply::Int((now as i64).wrapping_sub(c.seen as i64).max(0))),
                ])
            })
            .collect();
        Ok(Reply::Array(out))
    })
}

fn xinfo_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
    ])
}

pub(super) const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
pub(super) const R: u32 = READONLY;
pub(super) const G: Group = Group::Stream;

pub static COMMANDS: &[CommandSpec] = &[
    row("xadd", -5, WF, G, "5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist.", xadd).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1).notes("UPDATE instead of INSERT because of the optional trimming feature")]),
    row("xlen", 2, R | FAST, G, "5.0.0", "Return the number of messages in a stream.", xlen).key_specs(&[ks::key(ks::RO, 1)]),
    row("xrange", -4, R, G, "5.0.0", "Returns the messages from a stream within a range of IDs.", xrange).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("xrevrange", -4, R, G, "5.0.0", "Returns the messages from a stream within a range of IDs in reverse order.", xrevrange).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("xdel", -3, WRITE | FAST, G, "5.0.0", "Returns the number of messages after removing them from a stream.", xdel).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("xtrim", -4, WRITE, G, "5.0.0", "Deletes messages from the beginning of a stream.", xtrim).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("xsetid", -3, W | FAST, G, "5.0.0", "An internal command for replicating stream values.", xsetid).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("xread", -4, R | BLOCKING, G, "5.0.0", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", xread).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::keyword("STREAMS", 1), ks::range(-1, 1, 2))]),
    container("xinfo", 0, G, "5.0.0", "A container for stream introspection commands.", None),
    row("xinfo|stream", -3, R, G, "5.0.0", "Returns information about a stream.", xinfo_stream).key_specs(&[ks::key(ks::RO | ks::ACCESS, 2)]),
    row("xinfo|groups", 3, R, G, "5.0.0", "Returns a list of the consumer groups of a stream.", xinfo_groups).key_specs(&[ks::key(ks::RO | ks::ACCESS, 2)]),
    row("xinfo|consumers", 4, R, G, "5.0.0", "Returns a list of the consumers in a consumer group.", xinfo_consumers).key_specs(&[ks::key(ks::RO | ks::ACCESS, 2)]),
    row("xinfo|help", 2, LOADING | STALE, G, "5.0.0", "Returns helpful text about the different subcommands.", xinfo_help),
];
