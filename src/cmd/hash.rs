//! Hash commands. Writes become `WriteCmd`s; reads run over a snapshot, whole-key
//! walks through `Ctx::walk`.

use bytes::Bytes;

use super::keyspace::{parse_cursor, ScanOpts};
use super::string::cmd;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx};
use crate::pb::Op;
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::number::{incr_by_float, FloatIncrError};
use crate::protocol::{ArgCursor, Reply};
use crate::storage::keys::KeyType;
use crate::storage::Cf;
use crate::types::coll::{find, scan_page, Rng, Source};
use crate::types::glob::glob_match;
use crate::types::write::{flags, reply_kind};
use crate::types::{hash as ht, set as st};

fn arity_err(name: &str) -> CmdError {
    err(format!("ERR wrong number of arguments for '{name}' command"))
}

fn hset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() % 2 != 0 {
        return Err(arity_err("hset"));
    }
    ctx.write(cmd(Op::Hset, vec![args[1].clone()], args[2..].to_vec()))
}

fn hmset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() % 2 != 0 {
        return Err(arity_err("hmset"));
    }
    let mut c = cmd(Op::Hset, vec![args[1].clone()], args[2..].to_vec());
    c.reply = reply_kind::HMSET;
    ctx.write(c)
}

fn hsetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut c = cmd(Op::Hset, vec![args[1].clone()], args[2..4].to_vec());
    c.flags = flags::HSET_NX;
    ctx.write(c)
}

fn hdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(cmd(Op::Hdel, vec![args[1].clone()], args[2..].to_vec()))
}

fn hincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = parse_i64(&args[3]).ok_or(ArgError::NotInteger)?;
    let mut c = cmd(Op::Hincrby, vec![args[1].clone()], vec![args[2].clone()]);
    c.num = by;
    ctx.write(c)
}

fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // The increment is checked before the key is looked at, as Redis does.
    match incr_by_float(None, &args[3]) {
        Err(FloatIncrError::IncrNotFloat) => return Err(ArgError::NotFloat.into()),
        Err(_) => return Err(err("ERR value is NaN or Infinity")),
        Ok(_) => {}
    }
    ctx.write(cmd(Op::Hincrbyfloat, vec![args[1].clone()], vec![args[2].clone(), args[3].clone()]))
}

fn hget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(ht::get(&ctx.snap(), &args[1], &args[2])??.map(Reply::Bulk).unwrap_or(Reply::Nil))
}

fn hmget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let vs = ht::mget(&ctx.snap(), &args[1], &args[2..])??;
    reply(Reply::Array(vs.into_iter().map(|v| v.map(Reply::Bulk).unwrap_or(Reply::Nil)).collect()))
}

fn hlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ht::len(&ctx.snap(), &args[1])?? as i64))
}

fn hexists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ht::get(&ctx.snap(), &args[1], &args[2])??.is_some() as i64))
}

fn hstrlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ht::get(&ctx.snap(), &args[1], &args[2])??.map(|v| v.len() as i64).unwrap_or(0)))
}

/// HGETALL / HKEYS / HVALS.
fn walk_all(ctx: &mut Ctx<'_>, args: &[Bytes], keys: bool, vals: bool) -> CmdResult {
    let key = args[1].clone();
    ctx.walk([&args[1]], move |s| {
        let all = ht::all(s, &key)??;
        Ok(match (keys, vals) {
            (true, true) => Reply::Map(all.into_iter().map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v))).collect()),
            (true, false) => Reply::Array(all.into_iter().map(|(f, _)| Reply::Bulk(f)).collect()),
            _ => Reply::Array(all.into_iter().map(|(_, v)| Reply::Bulk(v)).collect()),
        })
    })
}

fn hgetall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    walk_all(ctx, args, true, true)
}

fn hkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    walk_all(ctx, args, true, false)
}

fn hvals(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    walk_all(ctx, args, false, true)
}

/// A random-count argument of HRANDFIELD / SRANDMEMBER / ZRANDMEMBER: `(count,
/// distinct)`; with values the magnitude must leave room for doubling.
pub fn rand_count(arg: &[u8], with_values: bool) -> Result<(u64, bool), CmdError> {
    let n = parse_i64(arg).ok_or(ArgError::NotInteger)?;
    if n >= 0 {
        return Ok((n as u64, true));
    }
    if n == i64::MIN {
        return Err(err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"));
    }
    if with_values && -n > i64::MAX / 2 {
        return Err(err("ERR value is out of range"));
    }
    Ok((n.unsigned_abs(), false))
}

/// HRANDFIELD / SRANDMEMBER without count: one random field or member, or nil.
pub fn random_one(ctx: &mut Ctx<'_>, key: &[u8], kind: KeyType) -> CmdResult {
    let s = ctx.snap();
    let Some(found) = find(&s, key, kind)?? else { return reply(Reply::Nil) };
    let got = st::pick(&s, &found, 1, &mut Rng::new(rand::random()))?;
    reply(got.into_iter().next().map(Reply::Bulk).unwrap_or(Reply::Nil))
}

fn hrandfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    if args.len() == 2 {
        return random_one(ctx, &key, KeyType::Hash);
    }
    let mut cur = ArgCursor::new(&args[3..]);
    let with_values = cur.eat("WITHVALUES");
    cur.finish()?;
    let (count, distinct) = rand_count(&args[2], with_values)?;
    let resp3 = ctx.session.resp >= 3;
    ctx.walk([&args[1]], move |s| {
        let Some(found) = find(s, &key, KeyType::Hash)?? else { return Ok(Reply::Array(Vec::new())) };
        let fields = st::sample(s, &found, count, distinct, &mut Rng::new(rand::random()))?;
        let mut out = Vec::with_capacity(fields.len() * if with_values { 2 } else { 1 });
        for f in fields {
            if !with_values {
                out.push(Reply::Bulk(f));
                continue;
            }
            let v = s.get(Cf::Subkey, &found.element(&f))?.map(Reply::Bulk).unwrap_or(Reply::Nil);
            if resp3 {
                out.push(Reply::Array(vec![Reply::Bulk(f), v]));
            } else {
                out.push(Reply::Bulk(f));
                out.push(v);
            }
        }
        Ok(Reply::Array(out))
    })
}

/// How a `*SCAN` shows one element: `out` gains the member/field (and value).
pub type Render = fn(&[u8], &[u8], &mut Vec<Reply>);

/// HSCAN / SSCAN / ZSCAN key cursor [MATCH pattern] [COUNT count]. A key of at
/// most [`SMALL_SCAN`] elements comes back whole with cursor 0 (as Redis does for
/// its compact encodings); bigger ones page by COUNT, the cursor naming where the
/// last page stopped (an unknown cursor starts over: elements may repeat, none is
/// skipped).
pub fn elem_scan(ctx: &mut Ctx<'_>, args: &[Bytes], kind: KeyType, render: Render) -> CmdResult {
    let cursor = parse_cursor(&args[2])?;
    let ScanOpts { count, pattern, .. } = ScanOpts::parse(&args[3..], false)?;
    let key = &args[1];
    let s = ctx.snap();
    let Some(found) = find(&s, key, kind)?? else {
        return reply(Reply::Array(vec![Reply::bulk_str("0"), Reply::Array(Vec::new())]));
    };
    let after = if cursor == 0 {
        None
    } else {
        ctx.core.shared.scan_cursors.lock().ok().and_then(|c| c.get(cursor)).and_then(|saved| {
            let klen = u32::from_be_bytes(saved.get(..4)?.try_into().ok()?) as usize;
            (saved.get(4..4 + klen)? == &key[..]).then(|| saved[4 + klen..].to_vec())
        })
    };
    let count = if found.coll.size <= SMALL_SCAN { usize::MAX } else { count };
    let mut out = Vec::new();
    let last = scan_page(&s, Cf::Subkey, &found, after.as_deref(), count, |sub, v| {
        if pattern.as_ref().is_none_or(|p| glob_match(p, sub, false)) {
            render(sub, v, &mut out);
        }
    })?;
    let next = match last {
        Some(sub) => {
            let mut saved = (key.len() as u32).to_be_bytes().to_vec();
            saved.extend_from_slice(key);
            saved.extend_from_slice(&sub);
            ctx.core.shared.scan_cursors.lock().map(|mut c| c.put(saved)).unwrap_or(0)
        }
        None => 0,
    };
    reply(Reply::Array(vec![Reply::bulk_str(&next.to_string()), Reply::Array(out)]))
}

/// Keys up to this size answer a `*SCAN` in one page.
pub const SMALL_SCAN: u64 = 128;

fn hscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    elem_scan(ctx, args, KeyType::Hash, |f, v, out| {
        out.push(Reply::Bulk(Bytes::copy_from_slice(f)));
        out.push(Reply::Bulk(Bytes::copy_from_slice(v)));
    })
}

const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::Hash;

pub static COMMANDS: &[CommandSpec] = &[
    row("hset", -4, WF, (1, 1, 1), G, "2.0.0", "Creates or modifies the value of a field in a hash.", hset),
    row("hmset", -4, WF, (1, 1, 1), G, "2.0.0", "Sets the values of multiple fields.", hmset),
    row("hsetnx", 4, WF, (1, 1, 1), G, "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.", hsetnx),
    row("hget", 3, RF, (1, 1, 1), G, "2.0.0", "Returns the value of a field in a hash.", hget),
    row("hmget", -3, RF, (1, 1, 1), G, "2.0.0", "Returns the values of all fields in a hash.", hmget),
    row("hdel", -3, WRITE | FAST, (1, 1, 1), G, "2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", hdel),
    row("hlen", 2, RF, (1, 1, 1), G, "2.0.0", "Returns the number of fields in a hash.", hlen),
    row("hexists", 3, RF, (1, 1, 1), G, "2.0.0", "Determines whether a field exists in a hash.", hexists),
    row("hstrlen", 3, RF, (1, 1, 1), G, "3.2.0", "Returns the length of the value of a field.", hstrlen),
    row("hincrby", 4, WF, (1, 1, 1), G, "2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", hincrby),
    row("hincrbyfloat", 4, WF, (1, 1, 1), G, "2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", hincrbyfloat),
    row("hgetall", 2, R, (1, 1, 1), G, "2.0.0", "Returns all fields and values in a hash.", hgetall),
    row("hkeys", 2, R, (1, 1, 1), G, "2.0.0", "Returns all fields in a hash.", hkeys),
    row("hvals", 2, R, (1, 1, 1), G, "2.0.0", "Returns all values in a hash.", hvals),
    row("hrandfield", -2, R, (1, 1, 1), G, "6.2.0", "Returns one or more random fields from a hash.", hrandfield),
    row("hscan", -3, R, (1, 1, 1), G, "2.8.0", "Iterates over fields and values of a hash.", hscan),
];
