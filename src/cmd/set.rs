//! Set commands.

use bytes::Bytes;

use super::hash::{elem_scan, rand_count, random_one};
use super::string::cmd;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx};
use crate::pb::Op;
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::{ArgCursor, Reply};
use crate::storage::keys::KeyType;
use crate::types::coll::{find, Rng};
use crate::types::set::{self as st, Algebra};
use crate::types::write::flags;

fn sadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(cmd(Op::Sadd, vec![args[1].clone()], args[2..].to_vec()))
}

fn srem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(cmd(Op::Srem, vec![args[1].clone()], args[2..].to_vec()))
}

fn spop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut c = cmd(Op::Spop, vec![args[1].clone()], Vec::new());
    c.num = -1;
    match args.len() {
        2 => {}
        3 => {
            c.num = parse_i64(&args[2])
                .filter(|n| *n >= 0)
                .ok_or_else(|| err("ERR value is out of range, must be positive"))?;
        }
        _ => return Err(ArgError::Syntax.into()),
    }
    // The leader draws the randomness; apply replays it identically everywhere.
    c.seed = rand::random();
    ctx.write(c)
}

fn smove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(cmd(Op::Smove, vec![args[1].clone(), args[2].clone()], vec![args[3].clone()]))
}

fn sismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(st::is_member(&ctx.snap(), &args[1], &args[2])?? as i64))
}

fn smismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = ctx.snap();
    let Some(found) = find(&s, &args[1], KeyType::Set)?? else {
        return reply(Reply::Array(args[2..].iter().map(|_| Reply::Int(0)).collect()));
    };
    let mut out = Vec::with_capacity(args.len() - 2);
    for m in &args[2..] {
        use crate::types::coll::Source;
        out.push(Reply::Int(s.get(crate::storage::Cf::Subkey, &found.element(m))?.is_some() as i64));
    }
    reply(Reply::Array(out))
}

fn scard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(st::card(&ctx.snap(), &args[1])?? as i64))
}

fn smembers(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    ctx.walk([&args[1]], move |s| Ok(Reply::Set(st::members(s, &key)??.into_iter().map(Reply::Bulk).collect())))
}

fn srandmember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    match args.len() {
        2 => return random_one(ctx, &key, KeyType::Set),
        3 => {}
        _ => return Err(ArgError::Syntax.into()),
    }
    let (count, distinct) = rand_count(&args[2], false)?;
    ctx.walk([&args[1]], move |s| {
        let Some(found) = find(s, &key, KeyType::Set)?? else { return Ok(Reply::Array(Vec::new())) };
        let got = st::sample(s, &found, count, distinct, &mut Rng::new(rand::random()))?;
        Ok(Reply::Array(got.into_iter().map(Reply::Bulk).collect()))
    })
}

fn sscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    elem_scan(ctx, args, KeyType::Set, |m, _, out| out.push(Reply::Bulk(Bytes::copy_from_slice(m))))
}

fn algebra_read(ctx: &mut Ctx<'_>, keys: &[Bytes], op: Algebra) -> CmdResult {
    ctx.region_of(keys.iter())?;
    let owned = keys.to_vec();
    ctx.walk(keys.iter(), move |s| {
        Ok(Reply::Set(st::algebra(s, op, &owned, 0)??.into_iter().map(Reply::Bulk).collect()))
    })
}

fn sinter(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra_read(ctx, &args[1..], Algebra::Inter)
}

fn sunion(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra_read(ctx, &args[1..], Algebra::Union)
}

fn sdiff(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra_read(ctx, &args[1..], Algebra::Diff)
}

/// `numkeys key [key ...]` at `args[at..]`: the keys, and the arguments after them.
pub fn numkeys(args: &[Bytes], at: usize) -> Result<(&[Bytes], &[Bytes]), CmdError> {
    let n = parse_i64(&args[at]).ok_or(ArgError::NotInteger)?;
    if n <= 0 {
        return Err(err("ERR numkeys should be greater than 0"));
    }
    let rest = &args[at + 1..];
    if n as u64 > rest.len() as u64 {
        return Err(err("ERR Number of keys can't be greater than number of args"));
    }
    Ok(rest.split_at(n as usize))
}

/// SINTERCARD / ZINTERCARD's options: `[LIMIT n]` (0 = none).
pub fn card_limit(opts: &[Bytes]) -> Result<usize, CmdError> {
    let mut limit = 0usize;
    let mut cur = ArgCursor::new(opts);
    while !cur.is_empty() {
        if cur.remaining() >= 2 && cur.eat("LIMIT") {
            let l = cur.next_i64()?;
            if l < 0 {
                return Err(err("ERR LIMIT can't be negative"));
            }
            limit = l as usize;
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    Ok(limit)
}

fn sintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, opts) = numkeys(args, 1)?;
    let limit = card_limit(opts)?;
    ctx.region_of(keys.iter())?;
    let owned = keys.to_vec();
    ctx.walk(keys.iter(), move |s| Ok(Reply::Int(st::algebra(s, Algebra::Inter, &owned, limit)??.len() as i64)))
}

fn store(ctx: &mut Ctx<'_>, args: &[Bytes], op: u32) -> CmdResult {
    let mut c = cmd(Op::Sstore, args[1..].to_vec(), Vec::new());
    c.flags = op;
    ctx.write(c)
}

fn sinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, flags::SET_INTER)
}

fn sunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, flags::SET_UNION)
}

fn sdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, flags::SET_DIFF)
}

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::Set;

pub static COMMANDS: &[CommandSpec] = &[
    row("sadd", -3, WF, (1, 1, 1), G, "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.", sadd),
    row("srem", -3, WRITE | FAST, (1, 1, 1), G, "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.", srem),
    row("sismember", 3, RF, (1, 1, 1), G, "1.0.0", "Determines whether a member belongs to a set.", sismember),
    row("smismember", -3, RF, (1, 1, 1), G, "6.2.0", "Determines whether multiple members belong to a set.", smismember),
    row("smembers", 2, R, (1, 1, 1), G, "1.0.0", "Returns all members of a set.", smembers),
    row("scard", 2, RF, (1, 1, 1), G, "1.0.0", "Returns the number of members in a set.", scard),
    row("spop", -2, WRITE | FAST, (1, 1, 1), G, "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", spop),
    row("srandmember", -2, R, (1, 1, 1), G, "1.0.0", "Get one or multiple random members from a set", srandmember),
    row("sscan", -3, R, (1, 1, 1), G, "2.8.0", "Iterates over members of a set.", sscan),
    row("smove", 4, WF, (1, 2, 1), G, "1.0.0", "Moves a member from one set to another.", smove),
    row("sinter", -2, R, (1, -1, 1), G, "1.0.0", "Returns the intersect of multiple sets.", sinter),
    row("sintercard", -3, R, (0, 0, 0), G, "7.0.0", "Returns the number of members of the intersect of multiple sets.", sintercard),
    row("sunion", -2, R, (1, -1, 1), G, "1.0.0", "Returns the union of multiple sets.", sunion),
    row("sdiff", -2, R, (1, -1, 1), G, "1.0.0", "Returns the difference of multiple sets.", sdiff),
    row("sinterstore", -3, W, (1, -1, 1), G, "1.0.0", "Stores the intersect of multiple sets in a key.", sinterstore),
    row("sunionstore", -3, W, (1, -1, 1), G, "1.0.0", "Stores the union of multiple sets in a key.", sunionstore),
    row("sdiffstore", -3, W, (1, -1, 1), G, "1.0.0", "Stores the difference of multiple sets in a key.", sdiffstore),
];
