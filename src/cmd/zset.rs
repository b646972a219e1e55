//! Sorted-set commands. Writes become typed operations (scores travel as
//! doubles, so every replica adds the same numbers); reads run over a snapshot,
//! long walks on the blocking pool.

use bytes::Bytes;

use super::args::{card_limit, int, mpop, pop_count, rand_count_with, timeout};
use super::elements::{elem_scan, random_one};
use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx, Shape, INLINE_WALK};
use crate::pb::{self, write_cmd::Op, Aggregate, Algebra, ZBy};
use crate::protocol::cursor::{parse_f64, ArgError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::Cf;
use crate::types::coll::{find, Rng};
use crate::types::set as st;
use crate::types::zset::{self as zt, Query, ZRange};
use crate::types::Source;

fn not_float() -> CmdError {
    ArgError::NotFloat.into()
}

fn zadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut op = pb::Zadd { key: args[1].clone(), ..Default::default() };
    let mut i = 2;
    while i < args.len() {
        let flag = match args[i].to_ascii_uppercase().as_slice() {
            b"NX" => &mut op.nx,
            b"XX" => &mut op.xx,
            b"GT" => &mut op.gt,
            b"LT" => &mut op.lt,
            b"CH" => &mut op.ch,
            b"INCR" => &mut op.incr,
            _ => break,
        };
        *flag = true;
        i += 1;
    }
    let pairs = &args[i..];
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return Err(ArgError::Syntax.into());
    }
    if op.nx && op.xx {
        return Err(err("ERR XX and NX options at the same time are not compatible"));
    }
    if (op.nx && (op.gt || op.lt)) || (op.gt && op.lt) {
        return Err(err("ERR GT, LT, and/or NX options at the same time are not compatible"));
    }
    if op.incr && pairs.len() > 2 {
        return Err(err("ERR INCR option supports a single increment-element pair"));
    }
    for p in pairs.chunks_exact(2) {
        op.scores.push(parse_f64(&p[0]).ok_or_else(not_float)?);
        op.members.push(p[1].clone());
    }
    ctx.write(Op::Zadd(op), Shape::Natural)
}

fn zincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis runs ZINCRBY through ZADD's parser: a flag word where the
    // increment goes leaves an odd score-member list.
    if [&b"NX"[..], b"XX", b"GT", b"LT", b"CH", b"INCR"].iter().any(|f| args[2].eq_ignore_ascii_case(f)) {
        return Err(ArgError::Syntax.into());
    }
    let by = parse_f64(&args[2]).ok_or_else(not_float)?;
    let op = pb::Zadd {
        key: args[1].clone(),
        scores: vec![by],
        members: vec![args[3].clone()],
        incr: true,
        ..Default::default()
    };
    ctx.write(Op::Zadd(op), Shape::Natural)
}

fn zrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Zrem(pb::Zrem { key: args[1].clone(), members: args[2..].to_vec() }), Shape::Natural)
}

fn zcard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = ctx.reader();
    reply(Reply::Int(find(&s, &args[1], KeyType::ZSet)??.map(|f| f.coll.size as i64).unwrap_or(0)))
}

fn zscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| {
        let Some(found) = find(s, &args[1], KeyType::ZSet)?? else { return Ok(Reply::Nil) };
        Ok(zt::score_of(s, &found, &args[2])?.map(Reply::Double).unwrap_or(Reply::Nil))
    })
}

fn zmscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.read_key(&args[1], |s| {
        let found = find(s, &args[1], KeyType::ZSet)??;
        let mut out = Vec::with_capacity(args.len() - 2);
        for m in &args[2..] {
            let v = match &found {
                Some(f) => zt::score_of(s, f, m)?,
                None => None,
            };
            out.push(v.map(Reply::Double).unwrap_or(Reply::Nil));
        }
        Ok(Reply::Array(out))
    })
}

fn zcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    count_range(ctx, args, ZBy::Score)
}

fn zlexcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    count_range(ctx, args, ZBy::Lex)
}

fn count_range(ctx: &mut Ctx<'_>, args: &[Bytes], by: ZBy) -> CmdResult {
    let range = ZRange::parse(by, &args[2], &args[3])?;
    let s = ctx.snap();
    let Some(found) = find(&s, &args[1], KeyType::ZSet)?? else { return reply(Reply::Int(0)) };
    if by == ZBy::Score || found.coll.size <= INLINE_WALK {
        return reply(Reply::Int(zt::count(&s, &found, &range)? as i64));
    }
    drop(s);
    let key = args[1].clone();
    ctx.walk([&args[1]], move |s| {
        let Some(found) = find(s, &key, KeyType::ZSet)?? else { return Ok(Reply::Int(0)) };
        Ok(Reply::Int(zt::count(s, &found, &range)? as i64))
    })
}

fn rank_cmd(ctx: &mut Ctx<'_>, args: &[Bytes], rev: bool) -> CmdResult {
    let with_score = match args.len() {
        3 => false,
        4 if args[3].eq_ignore_ascii_case(b"WITHSCORE") => true,
        _ => return Err(ArgError::Syntax.into()),
    };
    let none = || if with_score { Reply::NilArray } else { Reply::Nil };
    ctx.read_key(&args[1], |s| {
        let Some(found) = find(s, &args[1], KeyType::ZSet)?? else { return Ok(none()) };
        let Some((r, score)) = zt::rank(s, &found, &args[2])? else { return Ok(none()) };
        let r = if rev { found.coll.size - 1 - r } else { r } as i64;
        Ok(if with_score { Reply::Array(vec![Reply::Int(r), Reply::Double(score)]) } else { Reply::Int(r) })
    })
}

fn zrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rank_cmd(ctx, args, false)
}

fn zrevrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rank_cmd(ctx, args, true)
}

/// A parsed ZRANGE-family request.
struct RangeReq {
    by: ZBy,
    /// The bounds as sent, low first.
    min: Bytes,
    max: Bytes,
    query: Query,
    with_scores: bool,
    /// LIMIT was given.
    limited: bool,
}

/// Parse the ZRANGE family (Redis's zrangeGenericCommand): `args[at]` is the
/// source key, then the two bounds and the options. `by`/`rev` fixed by the
/// command (ZRANGEBYSCORE, ZREVRANGE, ...) forbid the options that set them.
fn parse_range(
    args: &[Bytes],
    at: usize,
    store: bool,
    by: Option<ZBy>,
    rev: Option<bool>,
) -> Result<RangeReq, CmdError> {
    let (mut by_opt, mut rev_opt) = (by, rev);
    let (mut with_scores, mut offset, mut count) = (false, 0i64, -1i64);
    let mut limited = false;
    let mut j = at + 3;
    while j < args.len() {
        let a = &args[j];
        let left = args.len() - j - 1;
        if !store && a.eq_ignore_ascii_case(b"WITHSCORES") {
            with_scores = true;
        } else if a.eq_ignore_ascii_case(b"LIMIT") && left >= 2 {
            offset = int(&args[j + 1])?;
            count = int(&args[j + 2])?;
            limited = true;
            j += 2;
        } else if rev_opt.is_none() && a.eq_ignore_ascii_case(b"REV") {
            rev_opt = Some(true);
        } else if by_opt.is_none() && a.eq_ignore_ascii_case(b"BYLEX") {
            by_opt = Some(ZBy::Lex);
        } else if by_opt.is_none() && a.eq_ignore_ascii_case(b"BYSCORE") {
            by_opt = Some(ZBy::Score);
        } else {
            return Err(ArgError::Syntax.into());
        }
        j += 1;
    }
    let by = by_opt.unwrap_or(ZBy::Rank);
    let rev = rev_opt.unwrap_or(false);
    if count != -1 && by == ZBy::Rank {
        return Err(err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"));
    }
    if with_scores && by == ZBy::Lex {
        return Err(err("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
    }
    let (mut min, mut max) = (args[at + 1].clone(), args[at + 2].clone());
    if rev && by != ZBy::Rank {
        std::mem::swap(&mut min, &mut max);
    }
    let range = ZRange::parse(by, &min, &max)?;
    Ok(RangeReq { by, min, max, query: Query { range, rev, offset, count }, with_scores, limited })
}

fn scored(got: Vec<(Bytes, f64)>, with_scores: bool) -> Reply {
    if with_scores {
        Reply::Pairs(got.into_iter().map(|(m, s)| (Reply::Bulk(m), Reply::Double(s))).collect())
    } else {
        Reply::Array(got.into_iter().map(|(m, _)| Reply::Bulk(m)).collect())
    }
}

fn range_read(ctx: &mut Ctx<'_>, args: &[Bytes], by: Option<ZBy>, rev: Option<bool>) -> CmdResult {
    let req = parse_range(args, 1, false, by, rev)?;
    let s = ctx.snap();
    let Some(found) = find(&s, &args[1], KeyType::ZSet)?? else { return reply(Reply::Array(Vec::new())) };
    // Inline when the answer is short for sure; long walks go to the blocking pool.
    let short = match &req.query.range {
        ZRange::Rank(a, b) => {
            crate::types::list::range_of(*a, *b, found.coll.size).is_none_or(|(s, e)| e - s < INLINE_WALK)
        }
        _ => (0..=INLINE_WALK as i64).contains(&req.query.count) || found.coll.size <= INLINE_WALK,
    };
    let (q, ws) = (req.query, req.with_scores);
    if short {
        return reply(scored(zt::collect(&s, &found, &q)?, ws));
    }
    drop(s);
    let key = args[1].clone();
    ctx.walk_sized(found.coll.size, move |s| {
        let Some(found) = find(s, &key, KeyType::ZSet)?? else { return Ok(Reply::Array(Vec::new())) };
        Ok(scored(zt::collect(s, &found, &q)?, ws))
    })
}

fn zrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range_read(ctx, args, None, None)
}

fn zrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range_read(ctx, args, Some(ZBy::Score), Some(false))
}

fn zrevrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range_read(ctx, args, Some(ZBy::Score), Some(true))
}

fn zrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range_read(ctx, args, Some(ZBy::Lex), Some(false))
}

fn zrevrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range_read(ctx, args, Some(ZBy::Lex), Some(true))
}

fn zrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range_read(ctx, args, Some(ZBy::Rank), Some(true))
}

fn zrangestore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let req = parse_range(args, 2, true, None, None)?;
    let op = pb::Zrangestore {
        dst: args[1].clone(),
        src: args[2].clone(),
        by: req.by as i32,
        rev: req.query.rev,
        min: req.min,
        max: req.max,
        offset: req.query.offset,
        count: if req.limited { req.query.count } else { -1 },
    };
    ctx.write(Op::Zrangestore(op), Shape::Natural)
}

fn remrange(ctx: &mut Ctx<'_>, args: &[Bytes], by: ZBy) -> CmdResult {
    // Checked here for the error reply; apply parses the same bounds again.
    ZRange::parse(by, &args[2], &args[3])?;
    let op = pb::Zremrange { key: args[1].clone(), by: by as i32, min: args[2].clone(), max: args[3].clone() };
    ctx.write(Op::Zremrange(op), Shape::Natural)
}

fn zremrangebyrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    remrange(ctx, args, ZBy::Rank)
}

fn zremrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    remrange(ctx, args, ZBy::Score)
}

fn zremrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    remrange(ctx, args, ZBy::Lex)
}

fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], max: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(ArgError::Syntax.into());
    }
    let count = pop_count(args)?;
    let op = pb::Zpop { keys: vec![args[1].clone()], max, count: count.unwrap_or(1), blocked: false };
    let shape = if count.is_some() { Shape::ZPopMany } else { Shape::ZPopOne };
    ctx.write_unless_absent(&args[1], Op::Zpop(op), shape, Reply::NilArray)
}

fn zpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, false)
}

fn zpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, true)
}

/// ZMPOP / BZMPOP's pop from `args[at..]`: `numkeys key... MIN|MAX [COUNT n]`.
fn mpop_op(args: &[Bytes], at: usize) -> Result<pb::Zpop, CmdError> {
    let (keys, max, count) = mpop(args, at, |a| {
        if a.eq_ignore_ascii_case(b"MIN") {
            Ok(false)
        } else if a.eq_ignore_ascii_case(b"MAX") {
            Ok(true)
        } else {
            Err(ArgError::Syntax.into())
        }
    })?;
    Ok(pb::Zpop { keys: keys.to_vec(), max, count, blocked: false })
}

fn zmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = mpop_op(args, 1)?;
    ctx.write(Op::Zpop(op), Shape::Natural)
}

fn bzpop(ctx: &mut Ctx<'_>, args: &[Bytes], max: bool) -> CmdResult {
    let (keys, t) = args[1..].split_at(args.len() - 2);
    let t = timeout(&t[0])?;
    let op = pb::Zpop { keys: keys.to_vec(), max, count: 1, blocked: false };
    let retry = pb::Zpop { blocked: true, ..op.clone() };
    ctx.block(Op::Zpop(op), Op::Zpop(retry), keys, t, Shape::ZPopKeyed)
}

fn bzpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bzpop(ctx, args, false)
}

fn bzpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bzpop(ctx, args, true)
}

fn bzmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis reads the keys and options first, the timeout last.
    let op = mpop_op(args, 2)?;
    let t = timeout(&args[1])?;
    let keys = op.keys.clone();
    let retry = pb::Zpop { blocked: true, ..op.clone() };
    ctx.block(Op::Zpop(op), Op::Zpop(retry), &keys, t, Shape::Natural)
}

fn zrandmember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    if args.len() == 2 {
        return random_one(ctx, &key, KeyType::ZSet);
    }
    let (count, distinct, with_scores) = rand_count_with(&args[2..], "WITHSCORES")?;
    let seed = ctx.random();
    ctx.walk([&args[1]], move |s| {
        let Some(found) = find(s, &key, KeyType::ZSet)?? else { return Ok(Reply::Array(Vec::new())) };
        let got = st::sample(s, &found, count, distinct, &mut Rng::new(seed))?;
        if !with_scores {
            return Ok(Reply::Array(got.into_iter().map(Reply::Bulk).collect()));
        }
        let mut out = Vec::with_capacity(got.len());
        for m in got {
            let score = s.get(Cf::Subkey, &found.element(&m))?.map(|v| zt::dec(&v)).unwrap_or(0.0);
            out.push((Reply::Bulk(m), Reply::Double(score)));
        }
        Ok(Reply::Pairs(out))
    })
}

fn zscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    elem_scan(ctx, args, KeyType::ZSet, |m, v, out| {
        out.push(Reply::Bulk(Bytes::copy_from_slice(m)));
        out.push(Reply::Bulk(Bytes::from(crate::protocol::number::fmt_double(zt::dec(v)))));
    })
}

/// A parsed ZUNION/ZINTER/ZDIFF (and STORE) request.
struct Combine {
    keys: Vec<Bytes>,
    weights: Vec<f64>,
    agg: Aggregate,
    with_scores: bool,
}

/// `numkeys key...` at `args[at..]` of the Z-combining commands: the keys and
/// what follows. As Redis, the inputs' types are checked (sorted sets and sets
/// are accepted) before the options are parsed.
fn combine_keys<'a>(ctx: &Ctx<'_>, args: &'a [Bytes], at: usize) -> Result<(&'a [Bytes], &'a [Bytes]), CmdError> {
    let n = int(&args[at])?;
    if n < 1 {
        return Err(err(format!("ERR at least 1 input key is needed for '{}' command", ctx.spec.name)));
    }
    let rest = &args[at + 1..];
    if n as u64 > rest.len() as u64 {
        return Err(ArgError::Syntax.into());
    }
    let (keys, opts) = rest.split_at(n as usize);
    let s = ctx.snap();
    for k in keys {
        if s.meta(k)?.is_some_and(|m| m.kind != KeyType::ZSet && m.kind != KeyType::Set) {
            return Err(crate::types::TypeError::WrongType.into());
        }
    }
    Ok((keys, opts))
}

/// `numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]` from
/// `args[at..]`; ZDIFF takes no WEIGHTS/AGGREGATE, the STORE forms no WITHSCORES.
fn parse_combine(ctx: &Ctx<'_>, args: &[Bytes], at: usize, diff: bool, store: bool) -> Result<Combine, CmdError> {
    let (keys, opts) = combine_keys(ctx, args, at)?;
    let mut c =
        Combine { keys: keys.to_vec(), weights: vec![1.0; keys.len()], agg: Aggregate::Sum, with_scores: false };
    let mut j = 0;
    while j < opts.len() {
        let a = &opts[j];
        let left = opts.len() - j - 1;
        if !diff && a.eq_ignore_ascii_case(b"WEIGHTS") && left >= keys.len() {
            for (i, w) in opts[j + 1..j + 1 + keys.len()].iter().enumerate() {
                c.weights[i] = parse_f64(w).ok_or_else(|| err("ERR weight value is not a float"))?;
            }
            j += keys.len();
        } else if !diff && a.eq_ignore_ascii_case(b"AGGREGATE") && left >= 1 {
            let v = &opts[j + 1];
            c.agg = if v.eq_ignore_ascii_case(b"SUM") {
                Aggregate::Sum
            } else if v.eq_ignore_ascii_case(b"MIN") {
                Aggregate::Min
            } else if v.eq_ignore_ascii_case(b"MAX") {
                Aggregate::Max
            } else {
                return Err(ArgError::Syntax.into());
            };
            j += 1;
        } else if !store && a.eq_ignore_ascii_case(b"WITHSCORES") {
            c.with_scores = true;
        } else {
            return Err(ArgError::Syntax.into());
        }
        j += 1;
    }
    Ok(c)
}

fn combine_read(ctx: &mut Ctx<'_>, args: &[Bytes], op: Algebra) -> CmdResult {
    let c = parse_combine(ctx, args, 1, op == Algebra::Diff, false)?;
    let keys = c.keys.clone();
    ctx.walk(keys.iter(), move |s| {
        let got = zt::combine(s, op, &c.keys, &c.weights, c.agg, 0)??;
        Ok(scored(got, c.with_scores))
    })
}

fn zunion(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine_read(ctx, args, Algebra::Union)
}

fn zinter(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine_read(ctx, args, Algebra::Inter)
}

fn zdiff(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine_read(ctx, args, Algebra::Diff)
}

fn combine_store(ctx: &mut Ctx<'_>, args: &[Bytes], algebra: Algebra) -> CmdResult {
    let c = parse_combine(ctx, args, 2, algebra == Algebra::Diff, true)?;
    let op = pb::Zstore {
        dst: args[1].clone(),
        keys: c.keys,
        weights: c.weights,
        algebra: algebra as i32,
        aggregate: c.agg as i32,
    };
    ctx.write(Op::Zstore(op), Shape::Natural)
}

fn zunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine_store(ctx, args, Algebra::Union)
}

fn zinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine_store(ctx, args, Algebra::Inter)
}

fn zdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine_store(ctx, args, Algebra::Diff)
}

fn zintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, opts) = combine_keys(ctx, args, 1)?;
    let limit = card_limit(opts)?;
    let owned = keys.to_vec();
    ctx.walk(keys.iter(), move |s| {
        let got = zt::combine(s, Algebra::Inter, &owned, &[], Aggregate::Sum, limit)??;
        Ok(Reply::Int(got.len() as i64))
    })
}

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::SortedSet;

pub static COMMANDS: &[CommandSpec] = &[
    row("zadd", -4, WF, G, "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", zadd).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("zincrby", 4, WF, G, "1.2.0", "Increments the score of a member in a sorted set.", zincrby).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("zrem", -3, WRITE | FAST, G, "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", zrem).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("zcard", 2, RF, G, "1.2.0", "Returns the number of members in a sorted set.", zcard).key_specs(&[ks::key(ks::RO, 1)]),
    row("zscore", 3, RF, G, "1.2.0", "Returns the score of a member in a sorted set.", zscore).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zmscore", -3, RF, G, "6.2.0", "Returns the score of one or more members in a sorted set.", zmscore).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zcount", 4, RF, G, "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", zcount).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zlexcount", 4, RF, G, "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", zlexcount).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrank", -3, RF, G, "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", zrank).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrevrank", -3, RF, G, "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", zrevrank).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrange", -4, R, G, "1.2.0", "Returns members in a sorted set within a range of indexes.", zrange).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrangebyscore", -4, R, G, "1.0.5", "Returns members in a sorted set within a range of scores.", zrangebyscore).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrevrangebyscore", -4, R, G, "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", zrevrangebyscore).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrangebylex", -4, R, G, "2.8.9", "Returns members in a sorted set within a lexicographical range.", zrangebylex).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrevrangebylex", -4, R, G, "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", zrevrangebylex).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrevrange", -4, R, G, "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", zrevrange).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zrangestore", -5, W, G, "6.2.0", "Stores a range of members from sorted set in a key.", zrangestore).key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::key(ks::RO | ks::ACCESS, 2)]),
    row("zremrangebyrank", 4, WRITE, G, "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", zremrangebyrank).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("zremrangebyscore", 4, WRITE, G, "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", zremrangebyscore).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("zremrangebylex", 4, WRITE, G, "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", zremrangebylex).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    row("zpopmin", -2, WRITE | FAST, G, "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zpopmin).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1)]),
    row("zpopmax", -2, WRITE | FAST, G, "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zpopmax).key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1)]),
    row("zmpop", -4, WRITE, G, "7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", zmpop).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
    row("bzpopmin", -3, WRITE | NOSCRIPT | FAST | BLOCKING, G, "5.0.0", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", bzpopmin).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(1), ks::range(-2, 1, 0))]),
    row("bzpopmax", -3, WRITE | NOSCRIPT | FAST | BLOCKING, G, "5.0.0", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", bzpopmax).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(1), ks::range(-2, 1, 0))]),
    row("bzmpop", -5, WRITE | BLOCKING, G, "7.0.0", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", bzmpop).key_specs(&[ks::spec(ks::RW | ks::ACCESS | ks::DELETE, ks::index(2), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 2, 3)),
    row("zrandmember", -2, R, G, "6.2.0", "Returns one or more random members from a sorted set.", zrandmember).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zscan", -3, R, G, "2.8.0", "Iterates over members and scores of a sorted set.", zscan).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("zunion", -3, R, G, "6.2.0", "Returns the union of multiple sorted sets.", zunion).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
    row("zinter", -3, R, G, "6.2.0", "Returns the intersect of multiple sorted sets.", zinter).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
    row("zdiff", -3, R, G, "6.2.0", "Returns the difference between multiple sorted sets.", zdiff).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
    row("zunionstore", -4, W, G, "2.0.0", "Stores the union of multiple sorted sets in a key.", zunionstore).key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::keynum(0, 1, 1))]).key_proc(ks::generic(1, 2, 3)),
    row("zinterstore", -4, W, G, "2.0.0", "Stores the intersect of multiple sorted sets in a key.", zinterstore).key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::keynum(0, 1, 1))]).key_proc(ks::generic(1, 2, 3)),
    row("zdiffstore", -4, W, G, "6.2.0", "Stores the difference of multiple sorted sets in a key.", zdiffstore).key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::keynum(0, 1, 1))]).key_proc(ks::generic(1, 2, 3)),
    row("zintercard", -3, R, G, "7.0.0", "Returns the number of members of the intersect of multiple sorted sets.", zintercard).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::keynum(0, 1, 1))]).key_proc(ks::generic(0, 1, 2)),
];
