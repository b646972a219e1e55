//! Set commands. Writes become typed operations; reads run over a snapshot,
//! whole-key walks through `Ctx::walk`.

use bytes::Bytes;

use super::args::{card_limit, numkeys as numkeys_arg, pop_count, rand_count};
use super::elements::{elem_scan, random_one};
use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{reply, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op, Algebra};
use crate::protocol::cursor::ArgError;
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::Cf;
use crate::types::coll::{find, Rng};
use crate::types::set as st;
use crate::types::Source;

fn sadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Sadd(pb::Sadd { key: args[1].clone(), members: args[2..].to_vec() }), Shape::Natural)
}

fn srem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Srem(pb::Srem { key: args[1].clone(), members: args[2..].to_vec() }), Shape::Natural)
}

fn spop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 3 {
        return Err(ArgError::Syntax.into());
    }
    let count = pop_count(args)?;
    // The leader draws the randomness; apply replays it identically everywhere.
    let seed = ctx.random();
    let absent = if count.is_none() { Reply::Nil } else { Reply::Set(Vec::new()) };
    ctx.write_unless_absent(&args[1], Op::Spop(pb::Spop { key: args[1].clone(), count, seed }), Shape::Natural, absent)
}

fn smove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Smove { from: args[1].clone(), to: args[2].clone(), member: args[3].clone() };
    ctx.write(Op::Smove(op), Shape::Natural)
}

fn sismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| Ok(Reply::Int(st::is_member(s, &args[1], &args[2])?? as i64)))
}

fn smismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| {
        let Some(found) = find(s, &args[1], KeyType::Set)?? else {
            return Ok(Reply::Array(args[2..].iter().map(|_| Reply::Int(0)).collect()));
        };
        let mut out = Vec::with_capacity(args.len() - 2);
        for m in &args[2..] {
            out.push(Reply::Int(s.get(Cf::Subkey, &found.element(m))?.is_some() as i64));
        }
        Ok(Reply::Array(out))
    })
}

fn scard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(st::card(&ctx.reader(), &args[1])?? as i64))
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
    let (count, distinct) = rand_count(&args[2])?;
    let seed = ctx.random();
    ctx.walk([&args[1]], move |s| {
        let Some(found) = find(s, &key, KeyType::Set)?? else { return Ok(Reply::Array(Vec::new())) };
        let got = st::sample(s, &found, count, distinct, &mut Rng::new(seed))?;
        Ok(Reply::Array(got.into_iter().map(Reply::Bulk).collect()))
    })
}

fn sscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    elem_scan(ctx, args, KeyType::Set, |m, _, out| out.push(Reply::Bulk(Bytes::copy_from_slice(m))))
}

fn algebra_read(ctx: &mut Ctx<'_>, keys: &[Bytes], op: Algebra) -> CmdResult {
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

fn sintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, opts) = numkeys_arg(args, 1)?;
    let limit = card_limit(opts)?;
    let owned = keys.to_vec();
    ctx.walk(keys.iter(), move |s| Ok(Reply::Int(st::algebra(s, Algebra::Inter, &owned, limit)??.len() as i64)))
}

fn store(ctx: &mut Ctx<'_>, args: &[Bytes], algebra: Algebra) -> CmdResult {
    let op = pb::Sstore { dst: args[1].clone(), keys: args[2..].to_vec(), algebra: algebra as i32 };
    ctx.write(Op::Sstore(op), Shape::Natural)
}

fn sinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, Algebra::Inter)
}

fn sunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, Algebra::Union)
}

fn sdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, Algebra::Diff)
}

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::Set;

pub static COMMANDS: &[CommandSpec] = &[
    row("sadd", -3, WF, G, "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.", sadd).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("srem", -3, WRITE | FAST, G, "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.", srem).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("sismember", 3, RF, G, "1.0.0", "Determines whether a member belongs to a set.", sismember).key_specs(&[ks::key(ks::RO, 1)]),
    row("smismember", -3, RF, G, "6.2.0", "Determines whether multiple members belong to a set.", smismember).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("smembers", 2, R, G, "1.0.0", "Returns all members of a set.", smembers).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("scard", 2, RF, G, "1.0.0", "Returns the number of members in a set.", scard).key_specs(&[ks::key(ks::RO, 1)]),
    row("spop", -2, WRITE | FAST, G, "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", spop).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1)]),
    row("srandmember", -2, R, G, "1.0.0", "Get one or multiple random members from a set", srandmember).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("sscan", -3, R, G, "2.8.0", "Iterates over members of a set.", sscan).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("smove", 4, WRITE | FAST, G, "1.0.0", "Moves a member from one set to another.", smove).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::RW | ks::INSERT, 2)]),
    row("sinter", -2, R, G, "1.0.0", "Returns the intersect of multiple sets.", sinter).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::range(-1, 1, 0))]),
    row("sintercard", -3, R, G, "7.0.0", "Returns the number of members of the intersect of multiple sets.", sintercard).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
    row("sunion", -2, R, G, "1.0.0", "Returns the union of multiple sets.", sunion).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::range(-1, 1, 0))]),
    row("sdiff", -2, R, G, "1.0.0", "Returns the difference of multiple sets.", sdiff).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::range(-1, 1, 0))]),
    row("sinterstore", -3, W, G, "1.0.0", "Stores the intersect of multiple sets in a key.", sinterstore).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1), ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::range(-1, 1, 0))]),
    row("sunionstore", -3, W, G, "1.0.0", "Stores the union of multiple sets in a key.", sunionstore).key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::range(-1, 1, 0))]),
    row("sdiffstore", -3, W, G, "1.0.0", "Stores the difference of multiple sets in a key.", sdiffstore).key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::range(-1, 1, 0))]),
];
