//! Hash commands. Writes become typed operations; reads run over a snapshot,
//! whole-key walks through `Ctx::walk`.

use bytes::Bytes;

use super::args::{int, rand_count_with};
use super::elements::{elem_scan, random_one};
use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::ArgError;
use crate::protocol::number::{incr_by_float, FloatIncrError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::Cf;
use crate::types::coll::{find, Rng};
use crate::types::{hash as ht, set as st, Source};

fn arity_err(name: &str) -> CmdError {
    err(format!("ERR wrong number of arguments for '{name}' command"))
}

/// HSET / HMSET / HSETNX: `field value...` from `args[2..]`.
fn hset_op(args: &[Bytes], nx: bool) -> Op {
    let (mut fields, mut values) = (Vec::with_capacity(args.len() / 2), Vec::with_capacity(args.len() / 2));
    for fv in args[2..].chunks_exact(2) {
        fields.push(fv[0].clone());
        values.push(fv[1].clone());
    }
    Op::Hset(pb::Hset { key: args[1].clone(), fields, values, nx })
}

fn hset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() % 2 != 0 {
        return Err(arity_err("hset"));
    }
    ctx.write(hset_op(args, false), Shape::Natural)
}

fn hmset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() % 2 != 0 {
        return Err(arity_err("hmset"));
    }
    ctx.write(hset_op(args, false), Shape::Ok)
}

fn hsetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(hset_op(args, true), Shape::Natural)
}

fn hdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Hdel(pb::Hdel { key: args[1].clone(), fields: args[2..].to_vec() }), Shape::Natural)
}

fn hincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let delta = int(&args[3])?;
    ctx.write(Op::Hincrby(pb::Hincrby { key: args[1].clone(), field: args[2].clone(), delta }), Shape::Natural)
}

fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // The increment is checked before the key is looked at, as Redis does.
    match incr_by_float(None, &args[3]) {
        Err(FloatIncrError::IncrNotFloat) => return Err(ArgError::NotFloat.into()),
        Err(_) => return Err(err("ERR value is NaN or Infinity")),
        Ok(_) => {}
    }
    let op = pb::Hincrbyfloat { key: args[1].clone(), field: args[2].clone(), incr: args[3].clone() };
    ctx.write(Op::Hincrbyfloat(op), Shape::Natural)
}

fn hget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| Ok(ht::get(s, &args[1], &args[2])??.map(Reply::Bulk).unwrap_or(Reply::Nil)))
}

fn hmget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| {
        let vs = ht::mget(s, &args[1], &args[2..])??;
        Ok(Reply::Array(vs.into_iter().map(|v| v.map(Reply::Bulk).unwrap_or(Reply::Nil)).collect()))
    })
}

fn hlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ht::len(&ctx.reader(), &args[1])?? as i64))
}

fn hexists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| Ok(Reply::Int(ht::get(s, &args[1], &args[2])??.is_some() as i64)))
}

fn hstrlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| Ok(Reply::Int(ht::get(s, &args[1], &args[2])??.map(|v| v.len() as i64).unwrap_or(0))))
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

fn hrandfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    if args.len() == 2 {
        return random_one(ctx, &key, KeyType::Hash);
    }
    let (count, distinct, with_values) = rand_count_with(&args[2..], "WITHVALUES")?;
    let resp3 = ctx.session.resp >= 3;
    let seed = ctx.random();
    ctx.walk([&args[1]], move |s| {
        let Some(found) = find(s, &key, KeyType::Hash)?? else { return Ok(Reply::Array(Vec::new())) };
        let fields = st::sample(s, &found, count, distinct, &mut Rng::new(seed))?;
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
    row("hset", -4, WF, G, "2.0.0", "Creates or modifies the value of a field in a hash.", hset).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("hmset", -4, WF, G, "2.0.0", "Sets the values of multiple fields.", hmset).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("hsetnx", 4, WF, G, "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.", hsetnx).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("hget", 3, RF, G, "2.0.0", "Returns the value of a field in a hash.", hget).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("hmget", -3, RF, G, "2.0.0", "Returns the values of all fields in a hash.", hmget).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("hdel", -3, WRITE | FAST, G, "2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", hdel).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("hlen", 2, RF, G, "2.0.0", "Returns the number of fields in a hash.", hlen).key_specs(&[ks::key(ks::RO, 1)]),
    row("hexists", 3, RF, G, "2.0.0", "Determines whether a field exists in a hash.", hexists).key_specs(&[ks::key(ks::RO, 1)]),
    row("hstrlen", 3, RF, G, "3.2.0", "Returns the length of the value of a field.", hstrlen).key_specs(&[ks::key(ks::RO, 1)]),
    row("hincrby", 4, WF, G, "2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", hincrby).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("hincrbyfloat", 4, WF, G, "2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", hincrbyfloat).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("hgetall", 2, R, G, "2.0.0", "Returns all fields and values in a hash.", hgetall).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("hkeys", 2, R, G, "2.0.0", "Returns all fields in a hash.", hkeys).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("hvals", 2, R, G, "2.0.0", "Returns all values in a hash.", hvals).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("hrandfield", -2, R, G, "6.2.0", "Returns one or more random fields from a hash.", hrandfield).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("hscan", -3, R, G, "2.8.0", "Iterates over fields and values of a hash.", hscan).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
];
