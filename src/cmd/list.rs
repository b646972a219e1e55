//! List commands, with the blocking pops. Writes become typed operations; reads
//! run over a snapshot, long ranges on the blocking pool.

use bytes::Bytes;

use super::args::{int, mpop, pop_count, side, timeout};
use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdResult, Ctx, Shape, INLINE_WALK};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::{ArgCursor, Reply};
use crate::storage::keys::KeyType;
use crate::types::coll::find;
use crate::types::list::{self as lt, PosOpts};

fn push(ctx: &mut Ctx<'_>, args: &[Bytes], left: bool, existing: bool) -> CmdResult {
    let op = pb::Push { key: args[1].clone(), values: args[2..].to_vec(), left, existing };
    ctx.write(Op::Push(op), Shape::Natural)
}

fn lpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, true, false)
}

fn rpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, false, false)
}

fn lpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, true, true)
}

fn rpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, false, true)
}

fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], left: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(err(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name)));
    }
    let count = pop_count(args)?;
    let op = pb::Pop { keys: vec![args[1].clone()], left, count: count.unwrap_or(1), blocked: false };
    let shape = if count.is_some() { Shape::PopMany } else { Shape::PopOne };
    ctx.write_unless_absent(&args[1], Op::Pop(op), shape, Reply::NilArray)
}

fn lpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, true)
}

fn rpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, false)
}

fn llen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| Ok(Reply::Int(lt::len(s, &args[1])?? as i64)))
}

fn lindex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // As Redis: the key is looked up (absent: nil; WRONGTYPE) before the index is parsed.
    ctx.read_key(&args[1], |s| {
        let Some(found) = find(s, &args[1], KeyType::List)?? else { return Ok(Reply::Nil) };
        let i = int(&args[2])?;
        Ok(lt::index(s, &found, i)?.map(Reply::Bulk).unwrap_or(Reply::Nil))
    })
}

fn lrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (start, stop) = (int(&args[2])?, int(&args[3])?);
    let s = ctx.snap();
    let Some(found) = find(&s, &args[1], KeyType::List)?? else { return reply(Reply::Array(Vec::new())) };
    let Some((a, b)) = lt::range_of(start, stop, found.coll.size) else { return reply(Reply::Array(Vec::new())) };
    let bulks = |v: Vec<Bytes>| Reply::Array(v.into_iter().map(Reply::Bulk).collect());
    if b - a < INLINE_WALK {
        return reply(bulks(lt::elements(&s, &found, a, b + 1)?));
    }
    drop(s);
    let key = args[1].clone();
    ctx.walk_sized(b - a + 1, move |s| Ok(bulks(lt::range(s, &key, start, stop)??)))
}

fn lpos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut o = PosOpts { rank: 1, count: 0, maxlen: 0 };
    let mut with_count = false;
    let mut cur = ArgCursor::new(&args[3..]);
    while !cur.is_empty() {
        if cur.remaining() >= 2 && cur.eat("RANK") {
            o.rank = cur.next_i64()?;
            if o.rank == 0 {
                return Err(err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"));
            }
        } else if cur.remaining() >= 2 && cur.eat("COUNT") {
            let n = parse_i64(cur.next()?).filter(|n| *n >= 0);
            o.count = n.ok_or_else(|| err("ERR COUNT can't be negative"))? as u64;
            with_count = true;
        } else if cur.remaining() >= 2 && cur.eat("MAXLEN") {
            let n = parse_i64(cur.next()?).filter(|n| *n >= 0);
            o.maxlen = n.ok_or_else(|| err("ERR MAXLEN can't be negative"))? as u64;
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    let (key, elem) = (args[1].clone(), args[2].clone());
    ctx.walk([&args[1]], move |s| {
        let found = lt::pos(s, &key, &elem, o)??;
        Ok(if with_count {
            Reply::Array(found.into_iter().map(|p| Reply::Int(p as i64)).collect())
        } else {
            found.first().map(|p| Reply::Int(*p as i64)).unwrap_or(Reply::Nil)
        })
    })
}

fn lset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // The index is parsed in apply: Redis looks the key up first.
    let op = pb::Lset { key: args[1].clone(), index: args[2].clone(), value: args[3].clone() };
    ctx.write(Op::Lset(op), Shape::Natural)
}

fn linsert(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let before = if args[2].eq_ignore_ascii_case(b"BEFORE") {
        true
    } else if args[2].eq_ignore_ascii_case(b"AFTER") {
        false
    } else {
        return Err(ArgError::Syntax.into());
    };
    let op = pb::Linsert { key: args[1].clone(), before, pivot: args[3].clone(), value: args[4].clone() };
    ctx.write(Op::Linsert(op), Shape::Natural)
}

fn lrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Lrem { key: args[1].clone(), count: int(&args[2])?, value: args[3].clone() };
    ctx.write(Op::Lrem(op), Shape::Natural)
}

fn ltrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Ltrim { key: args[1].clone(), start: int(&args[2])?, stop: int(&args[3])? };
    ctx.write(Op::Ltrim(op), Shape::Natural)
}

fn lmove_op(src: &Bytes, dst: &Bytes, from_left: bool, to_left: bool, blocked: bool) -> Op {
    Op::Lmove(pb::Lmove { from: src.clone(), to: dst.clone(), from_left, to_left, blocked })
}

fn lmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = lmove_op(&args[1], &args[2], side(&args[3])?, side(&args[4])?, false);
    ctx.write(op, Shape::Natural)
}

fn rpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(lmove_op(&args[1], &args[2], false, true, false), Shape::Natural)
}

/// LMPOP / BLMPOP's pop from `args[at..]`.
fn mpop_op(args: &[Bytes], at: usize) -> Result<pb::Pop, super::CmdError> {
    let (keys, left, count) = mpop(args, at, side)?;
    Ok(pb::Pop { keys: keys.to_vec(), left, count, blocked: false })
}

fn lmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = mpop_op(args, 1)?;
    ctx.write(Op::Pop(op), Shape::Natural)
}

// ---- blocking forms: their retries count a source of another type as empty ----

fn bpop(ctx: &mut Ctx<'_>, args: &[Bytes], left: bool) -> CmdResult {
    let (keys, t) = args[1..].split_at(args.len() - 2);
    let t = timeout(&t[0])?;
    let op = pb::Pop { keys: keys.to_vec(), left, count: 1, blocked: false };
    let retry = pb::Pop { blocked: true, ..op.clone() };
    ctx.block(Op::Pop(op), Op::Pop(retry), keys, t, Shape::PopKeyed)
}

fn blpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bpop(ctx, args, true)
}

fn brpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bpop(ctx, args, false)
}

fn blmove_generic(ctx: &mut Ctx<'_>, args: &[Bytes], from_left: bool, to_left: bool, t: &[u8]) -> CmdResult {
    let t = timeout(t)?;
    let op = lmove_op(&args[1], &args[2], from_left, to_left, false);
    let retry = lmove_op(&args[1], &args[2], from_left, to_left, true);
    ctx.block(op, retry, &args[1..2], t, Shape::Natural)
}

fn blmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (from_left, to_left) = (side(&args[3])?, side(&args[4])?);
    blmove_generic(ctx, args, from_left, to_left, &args[5])
}

fn brpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    blmove_generic(ctx, args, false, true, &args[3])
}

fn blmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis reads the keys and options first, the timeout last.
    let op = mpop_op(args, 2)?;
    let t = timeout(&args[1])?;
    let keys = op.keys.clone();
    let retry = pb::Pop { blocked: true, ..op.clone() };
    ctx.block(Op::Pop(op), Op::Pop(retry), &keys, t, Shape::Natural)
}

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::List;

pub static COMMANDS: &[CommandSpec] = &[
    row("lpush", -3, WF, G, "1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", lpush).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("rpush", -3, WF, G, "1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist.", rpush).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("lpushx", -3, WF, G, "2.2.0", "Prepends one or more elements to a list only when the list exists.", lpushx).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("rpushx", -3, WF, G, "2.2.0", "Appends an element to a list only when the list exists.", rpushx).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("lpop", -2, WRITE | FAST, G, "1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", lpop).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1)]),
    row("rpop", -2, WRITE | FAST, G, "1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", rpop).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1)]),
    row("llen", 2, RF, G, "1.0.0", "Returns the length of a list.", llen).key_specs(&[ks::key(ks::RO, 1)]),
    row("lindex", 3, R, G, "1.0.0", "Returns an element from a list by its index.", lindex).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("lrange", 4, R, G, "1.0.0", "Returns a range of elements from a list.", lrange).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("lpos", -3, R, G, "6.0.6", "Returns the index of matching elements in a list.", lpos).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("lset", 4, W, G, "1.0.0", "Sets the value of an element in a list by its index.", lset).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("linsert", 5, W, G, "2.2.0", "Inserts an element before or after another element in a list.", linsert).key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("lrem", 4, WRITE, G, "1.0.0", "Removes elements from a list. Deletes the list if the last element was removed.", lrem).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("ltrim", 4, WRITE, G, "1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", ltrim).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("lmove", 5, W, G, "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", lmove).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::RW | ks::INSERT, 2)]),
    row("rpoplpush", 3, W, G, "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", rpoplpush).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::RW | ks::INSERT, 2)]),
    row("lmpop", -4, WRITE, G, "7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", lmpop).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
    row("blpop", -3, WRITE | NOSCRIPT | BLOCKING, G, "2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blpop).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(1), ks::range(-2, 1, 0))]),
    row("brpop", -3, WRITE | NOSCRIPT | BLOCKING, G, "2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", brpop).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(1), ks::range(-2, 1, 0))]),
    row("blmove", 6, W | NOSCRIPT | BLOCKING, G, "6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", blmove).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::RW | ks::INSERT, 2)]),
    row("brpoplpush", 4, W | NOSCRIPT | BLOCKING, G, "2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", brpoplpush).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1), ks::key(ks::RW | ks::INSERT, 2)]),
    row("blmpop", -5, WRITE | BLOCKING, G, "7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blmpop).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(2), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 2, 3)),
];
