//! List commands, with the blocking pops. Writes become `WriteCmd`s; reads run
//! over a snapshot, long ranges on the blocking pool.

use std::time::Duration;

use bytes::Bytes;

use super::string::cmd;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, Block, CmdError, CmdResult, Ctx, Plan};
use crate::pb::{Op, WriteCmd};
use crate::protocol::cursor::{parse_f64, parse_i64, ArgError};
use crate::protocol::{ArgCursor, Reply};
use crate::storage::keys::KeyType;
use crate::types::coll::find;
use crate::types::list::{self as lt, PosOpts};
use crate::types::write::{flags, reply_kind};

fn push(ctx: &mut Ctx<'_>, args: &[Bytes], f: u32) -> CmdResult {
    let mut c = cmd(Op::Lpush, vec![args[1].clone()], args[2..].to_vec());
    c.flags = f;
    ctx.write(c)
}

fn lpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, flags::LIST_LEFT)
}

fn rpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, 0)
}

fn lpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, flags::LIST_LEFT | flags::LIST_X)
}

fn rpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, flags::LIST_X)
}

fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], f: u32) -> CmdResult {
    let mut c = cmd(Op::Lpop, vec![args[1].clone()], Vec::new());
    c.flags = f;
    c.num = match args.len() {
        2 => -1,
        3 => {
            parse_i64(&args[2]).filter(|n| *n >= 0).ok_or_else(|| err("ERR value is out of range, must be positive"))?
        }
        _ => return Err(err(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name))),
    };
    ctx.write(c)
}

fn lpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, flags::LIST_LEFT)
}

fn rpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, 0)
}

fn int(arg: &[u8]) -> Result<i64, CmdError> {
    Ok(parse_i64(arg).ok_or(ArgError::NotInteger)?)
}

fn llen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(lt::len(&ctx.snap(), &args[1])?? as i64))
}

fn lindex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // As Redis: the key is looked up (absent: nil; WRONGTYPE) before the index is parsed.
    let s = ctx.snap();
    let Some(found) = find(&s, &args[1], KeyType::List)?? else { return reply(Reply::Nil) };
    let i = int(&args[2])?;
    reply(lt::index(&s, &found, i)?.map(Reply::Bulk).unwrap_or(Reply::Nil))
}

fn lrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (start, stop) = (int(&args[2])?, int(&args[3])?);
    let s = ctx.snap();
    let Some(found) = find(&s, &args[1], KeyType::List)?? else { return reply(Reply::Array(Vec::new())) };
    let Some((a, b)) = lt::range_of(start, stop, found.coll.size) else { return reply(Reply::Array(Vec::new())) };
    let bulks = |v: Vec<Bytes>| Reply::Array(v.into_iter().map(Reply::Bulk).collect());
    if b - a < super::INLINE_WALK {
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
    ctx.write(cmd(Op::Lset, vec![args[1].clone()], vec![args[3].clone(), args[2].clone()]))
}

fn linsert(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut c = cmd(Op::Linsert, vec![args[1].clone()], vec![args[3].clone(), args[4].clone()]);
    c.flags = if args[2].eq_ignore_ascii_case(b"BEFORE") {
        flags::LIST_LEFT
    } else if args[2].eq_ignore_ascii_case(b"AFTER") {
        0
    } else {
        return Err(ArgError::Syntax.into());
    };
    ctx.write(c)
}

fn lrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut c = cmd(Op::Lrem, vec![args[1].clone()], vec![args[3].clone()]);
    c.num = int(&args[2])?;
    ctx.write(c)
}

fn ltrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut c = cmd(Op::Ltrim, vec![args[1].clone()], Vec::new());
    c.num = int(&args[2])?;
    c.num2 = int(&args[3])?;
    ctx.write(c)
}

/// LEFT / RIGHT: true for LEFT.
fn side(arg: &[u8]) -> Result<bool, CmdError> {
    if arg.eq_ignore_ascii_case(b"LEFT") {
        Ok(true)
    } else if arg.eq_ignore_ascii_case(b"RIGHT") {
        Ok(false)
    } else {
        Err(ArgError::Syntax.into())
    }
}

fn move_cmd(src: &Bytes, dst: &Bytes, from_left: bool, to_left: bool) -> WriteCmd {
    let mut c = cmd(Op::Lmove, vec![src.clone(), dst.clone()], Vec::new());
    c.flags = if from_left { flags::LIST_LEFT } else { 0 } | if to_left { flags::LIST_TO_LEFT } else { 0 };
    c
}

fn lmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let c = move_cmd(&args[1], &args[2], side(&args[3])?, side(&args[4])?);
    ctx.write(c)
}

fn rpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(move_cmd(&args[1], &args[2], false, true))
}

/// The grammar LMPOP, BLMPOP, ZMPOP and BZMPOP share: `numkeys key... <where>
/// [COUNT n]` from `args[at..]`. The keys, what `side` makes of `<where>` (read
/// before the options, as Redis does), the count (1 without COUNT).
pub fn mpop_args(
    args: &[Bytes],
    at: usize,
    side: impl Fn(&[u8]) -> Result<u32, CmdError>,
) -> Result<(&[Bytes], u32, i64), CmdError> {
    let n = parse_i64(&args[at]).filter(|n| *n > 0).ok_or_else(|| err("ERR numkeys should be greater than 0"))?;
    let rest = &args[at + 1..];
    if n as u64 >= rest.len() as u64 {
        return Err(ArgError::Syntax.into());
    }
    let (keys, opts) = rest.split_at(n as usize);
    let which = side(&opts[0])?;
    let mut count = None;
    let mut cur = ArgCursor::new(&opts[1..]);
    while !cur.is_empty() {
        if count.is_none() && cur.remaining() >= 2 && cur.eat("COUNT") {
            let c = parse_i64(cur.next()?).filter(|n| *n > 0);
            count = Some(c.ok_or_else(|| err("ERR count should be greater than 0"))?);
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    Ok((keys, which, count.unwrap_or(1)))
}

/// LMPOP / BLMPOP's pop from `args[at..]`.
fn mpop_cmd(args: &[Bytes], at: usize) -> Result<WriteCmd, CmdError> {
    let (keys, from, count) = mpop_args(args, at, |a| Ok(if side(a)? { flags::LIST_LEFT } else { 0 }))?;
    let mut c = cmd(Op::Lpop, keys.to_vec(), Vec::new());
    c.flags = from;
    c.reply = reply_kind::LMPOP;
    c.num = count;
    Ok(c)
}

fn lmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let c = mpop_cmd(args, 1)?;
    ctx.write(c)
}

// ---- blocking forms ----

/// A blocking command's timeout in seconds, as Redis reads it: `None` is 0
/// (wait forever).
pub fn timeout(arg: &[u8]) -> Result<Option<Duration>, CmdError> {
    let negative = || err("ERR timeout is negative");
    // Redis truncates to whole milliseconds in a long long; one that does not fit
    // wraps negative. Whole seconds are exact here; others go through a double.
    let ms = match parse_i64(arg) {
        Some(s) => u64::try_from(i64::try_from(s as i128 * 1000).map_err(|_| negative())?).map_err(|_| negative())?,
        None => {
            let secs = parse_f64(arg).ok_or_else(|| err("ERR timeout is not a float or out of range"))?;
            let ms = (secs * 1000.0).trunc();
            if !(0.0..9.223_372_036_854_776e18).contains(&ms) {
                return Err(negative());
            }
            ms as u64
        }
    };
    Ok((ms >= 1).then(|| Duration::from_millis(ms)))
}

/// Block on `cmd`; its retries count a source of another type as empty.
pub fn block(ctx: &Ctx<'_>, cmd: WriteCmd, keys: &[Bytes], timeout: Option<Duration>, skip: u32) -> CmdResult {
    let region = ctx.region_of(cmd.keys.iter())?;
    let mut retry = cmd.clone();
    retry.flags |= skip;
    Ok(Plan::Block(Block { region, cmd, retry, keys: keys.to_vec(), timeout }))
}

fn bpop(ctx: &mut Ctx<'_>, args: &[Bytes], f: u32) -> CmdResult {
    let (keys, t) = args[1..].split_at(args.len() - 2);
    let t = timeout(&t[0])?;
    let mut c = cmd(Op::Lpop, keys.to_vec(), Vec::new());
    c.flags = f;
    c.num = 1;
    c.reply = reply_kind::BLPOP;
    block(ctx, c, keys, t, flags::LIST_SKIP_WRONGTYPE)
}

fn blpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bpop(ctx, args, flags::LIST_LEFT)
}

fn brpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bpop(ctx, args, 0)
}

fn blmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let c = move_cmd(&args[1], &args[2], side(&args[3])?, side(&args[4])?);
    let t = timeout(&args[5])?;
    block(ctx, c, &args[1..2], t, flags::LIST_SKIP_WRONGTYPE)
}

fn brpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let t = timeout(&args[3])?;
    block(ctx, move_cmd(&args[1], &args[2], false, true), &args[1..2], t, flags::LIST_SKIP_WRONGTYPE)
}

fn blmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let t = timeout(&args[1])?;
    let c = mpop_cmd(args, 2)?;
    let keys = c.keys.clone();
    block(ctx, c, &keys, t, flags::LIST_SKIP_WRONGTYPE)
}

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::List;

pub static COMMANDS: &[CommandSpec] = &[
    row("lpush", -3, WF, (1, 1, 1), G, "1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", lpush),
    row("rpush", -3, WF, (1, 1, 1), G, "1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist.", rpush),
    row("lpushx", -3, WF, (1, 1, 1), G, "2.2.0", "Prepends one or more elements to a list only when the list exists.", lpushx),
    row("rpushx", -3, WF, (1, 1, 1), G, "2.2.0", "Appends an element to a list only when the list exists.", rpushx),
    row("lpop", -2, WRITE | FAST, (1, 1, 1), G, "1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", lpop),
    row("rpop", -2, WRITE | FAST, (1, 1, 1), G, "1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", rpop),
    row("llen", 2, RF, (1, 1, 1), G, "1.0.0", "Returns the length of a list.", llen),
    row("lindex", 3, R, (1, 1, 1), G, "1.0.0", "Returns an element from a list by its index.", lindex),
    row("lrange", 4, R, (1, 1, 1), G, "1.0.0", "Returns a range of elements from a list.", lrange),
    row("lpos", -3, R, (1, 1, 1), G, "6.0.6", "Returns the index of matching elements in a list.", lpos),
    row("lset", 4, W, (1, 1, 1), G, "1.0.0", "Sets the value of an element in a list by its index.", lset),
    row("linsert", 5, W, (1, 1, 1), G, "2.2.0", "Inserts an element before or after another element in a list.", linsert),
    row("lrem", 4, WRITE, (1, 1, 1), G, "1.0.0", "Removes elements from a list. Deletes the list if the last element was removed.", lrem),
    row("ltrim", 4, WRITE, (1, 1, 1), G, "1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", ltrim),
    row("lmove", 5, W, (1, 2, 1), G, "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", lmove),
    row("rpoplpush", 3, W, (1, 2, 1), G, "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", rpoplpush),
    row("lmpop", -4, WRITE, (0, 0, 0), G, "7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", lmpop),
    row("blpop", -3, WRITE | NOSCRIPT | BLOCKING, (1, -2, 1), G, "2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blpop),
    row("brpop", -3, WRITE | NOSCRIPT | BLOCKING, (1, -2, 1), G, "2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", brpop),
    row("blmove", 6, W | NOSCRIPT | BLOCKING, (1, 2, 1), G, "6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", blmove),
    row("brpoplpush", 4, W | NOSCRIPT | BLOCKING, (1, 2, 1), G, "2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", brpoplpush),
    row("blmpop", -5, WRITE | NOSCRIPT | BLOCKING, (0, 0, 0), G, "7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blmpop),
];
