//! String commands: handlers first, table rows last.

use bytes::Bytes;

use super::args::{int, invalid_expire};
use super::ctx::{read_string, BIG_READ, INLINE_WALK};
use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::ArgError;
use crate::protocol::{ArgCursor, Reply};
use crate::storage::keys::KeyType;
use crate::storage::meta::Meta;
use crate::types::string as st;
use crate::types::{ReadView, Source};

/// Which command's option grammar applies (Redis `parseExtendedStringArgumentsOrReply`).
#[derive(PartialEq, Clone, Copy)]
enum Grammar {
    Set,
    Get,
}

#[derive(Default)]
struct ExtOpts {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    /// (unit_ms, relative, value)
    expire: Option<(i64, bool, Bytes)>,
}

fn parse_ext(args: &[Bytes], grammar: Grammar) -> Result<ExtOpts, CmdError> {
    let mut o = ExtOpts::default();
    let mut j = 0;
    while j < args.len() {
        let opt = args[j].to_ascii_uppercase();
        let next = args.get(j + 1);
        match opt.as_slice() {
            b"NX" if !o.xx && grammar == Grammar::Set => o.nx = true,
            b"XX" if !o.nx && grammar == Grammar::Set => o.xx = true,
            b"GET" if grammar == Grammar::Set => o.get = true,
            b"KEEPTTL" if !o.persist && o.expire.is_none() && grammar == Grammar::Set => o.keepttl = true,
            b"PERSIST" if grammar == Grammar::Get && o.expire.is_none() && !o.keepttl => o.persist = true,
            b"EX" | b"PX" | b"EXAT" | b"PXAT" if next.is_some() && !o.keepttl && !o.persist => {
                let (unit, rel) = match opt.as_slice() {
                    b"EX" => (1000, true),
                    b"PX" => (1, true),
                    b"EXAT" => (1000, false),
                    _ => (1, false),
                };
                // Redis lets an option repeat itself but not mix with another kind.
                if o.expire.as_ref().is_some_and(|(u, r, _)| (*u, *r) != (unit, rel)) {
                    return Err(ArgError::Syntax.into());
                }
                o.expire = Some((unit, rel, next.cloned().unwrap_or_default()));
                j += 1;
            }
            _ => return Err(ArgError::Syntax.into()),
        }
        j += 1;
    }
    Ok(o)
}

/// Absolute expiry in ms from (unit, relative, value), validated as Redis does;
/// relative to the command's time.
fn expire_at(ctx: &Ctx<'_>, name: &str, unit: i64, relative: bool, v: &[u8]) -> Result<u64, CmdError> {
    let n = int(v)?;
    if n <= 0 || (unit == 1000 && n > i64::MAX / 1000) {
        return Err(invalid_expire(name));
    }
    let mut ms = n * unit;
    if relative {
        ms = ms.checked_add(ctx.now_ms() as i64).ok_or_else(|| invalid_expire(name))?;
    }
    Ok(ms as u64)
}

fn get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    read_string(ctx, &args[1], st::value_len, move |v, m| {
        Ok(match m {
            Some(m) => Reply::Bulk(st::value(v, &key, &m)?),
            None => Reply::Nil,
        })
    })
}

fn set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let o = parse_ext(&args[3..], Grammar::Set)?;
    let at_ms = match &o.expire {
        Some((unit, rel, v)) => expire_at(ctx, "set", *unit, *rel, v)?,
        None => 0,
    };
    let op = pb::Set {
        key: args[1].clone(),
        value: args[2].clone(),
        nx: o.nx,
        xx: o.xx,
        get: o.get,
        keepttl: o.keepttl,
        at_ms,
    };
    ctx.write(Op::Set(op), Shape::Natural)
}

fn setnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Set { key: args[1].clone(), value: args[2].clone(), nx: true, ..Default::default() };
    ctx.write(Op::Set(op), Shape::Flag)
}

fn setex_generic(ctx: &mut Ctx<'_>, args: &[Bytes], unit: i64) -> CmdResult {
    let at_ms = expire_at(ctx, ctx.spec.name, unit, true, &args[2])?;
    let op = pb::Set { key: args[1].clone(), value: args[3].clone(), at_ms, ..Default::default() };
    ctx.write(Op::Set(op), Shape::Natural)
}

fn setex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    setex_generic(ctx, args, 1000)
}

fn psetex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    setex_generic(ctx, args, 1)
}

fn getset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Set { key: args[1].clone(), value: args[2].clone(), get: true, ..Default::default() };
    ctx.write(Op::Set(op), Shape::Natural)
}

fn mget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // A key of another type is nil, as in Redis.
    let strings = |v: &ReadView<'_>, keys: &[Bytes]| -> Result<Reply, CmdError> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(match v.meta(k)? {
                Some(m) if m.kind == KeyType::String => Reply::Bulk(st::value(v, k, &m)?),
                _ => Reply::Nil,
            });
        }
        Ok(Reply::Array(out))
    };
    let big: u64 = {
        let r = ctx.reader();
        let mut big = 0;
        for k in &args[1..] {
            if let Some(m) = r.meta(k)?.filter(|m| m.kind == KeyType::String && m.chunked) {
                big += st::value_len(&m);
            }
        }
        if big == 0 && args.len() == 2 {
            // One inline value: its metadata is the answer.
            return reply(strings(&r, &args[1..])?);
        }
        big
    };
    // Several keys are read from one snapshot: MGET is atomic, as in Redis
    // (point reads could straddle an apply batch that changes two of them);
    // chunked values too (their chunks and length of one moment), on the
    // blocking pool past 1 MiB.
    let keys = args[1..].to_vec();
    ctx.walk_sized(big * INLINE_WALK / BIG_READ, move |v| strings(v, &keys))
}

fn mset_generic(ctx: &mut Ctx<'_>, args: &[Bytes], nx: bool) -> CmdResult {
    if args.len() % 2 == 0 {
        return Err(err(format!("ERR wrong number of arguments for '{}' command", ctx.spec.name)));
    }
    let mut op = pb::Mset { nx, ..Default::default() };
    for kv in args[1..].chunks(2) {
        op.keys.push(kv[0].clone());
        op.values.push(kv[1].clone());
    }
    ctx.write(Op::Mset(op), if nx { Shape::Flag } else { Shape::Natural })
}

fn mset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    mset_generic(ctx, args, false)
}

fn msetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    mset_generic(ctx, args, true)
}

fn incr_generic(ctx: &mut Ctx<'_>, key: &Bytes, delta: i64) -> CmdResult {
    ctx.write(Op::Incrby(pb::Incrby { key: key.clone(), delta }), Shape::Natural)
}

fn incr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    incr_generic(ctx, &args[1], 1)
}

fn decr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    incr_generic(ctx, &args[1], -1)
}

fn incrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = int(&args[2])?;
    incr_generic(ctx, &args[1], n)
}

fn decrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = int(&args[2])?;
    if n == i64::MIN {
        return Err(err("ERR decrement would overflow"));
    }
    incr_generic(ctx, &args[1], -n)
}

fn incrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis checks the key's type before the increment: apply validates both.
    ctx.write(Op::Incrbyfloat(pb::Incrbyfloat { key: args[1].clone(), incr: args[2].clone() }), Shape::Natural)
}

fn append(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Append(pb::Append { key: args[1].clone(), value: args[2].clone() }), Shape::Natural)
}

fn strlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let m = ctx.reader().typed(&args[1], KeyType::String)??;
    reply(Reply::Int(m.map_or(0, |m| st::value_len(&m) as i64)))
}

fn getrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let start = int(&args[2])?;
    let end = int(&args[3])?;
    let key = args[1].clone();
    let span = move |m: &Meta| st::range_of(st::value_len(m), start, end);
    read_string(
        ctx,
        &args[1],
        move |m| span(m).map_or(0, |(s, e)| e - s),
        move |v, m| {
            let Some(m) = m else { return Ok(Reply::Bulk(Bytes::new())) };
            let Some((s, e)) = span(&m) else { return Ok(Reply::Bulk(Bytes::new())) };
            if !m.chunked {
                return Ok(Reply::Bulk(m.payload.slice(s as usize..e as usize)));
            }
            Ok(Reply::Bulk(Bytes::from(st::read_range(v, &key, &m, s, e)?)))
        },
    )
}

fn setrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let offset = int(&args[2])?;
    if offset < 0 {
        return Err(err("ERR offset is out of range"));
    }
    let op = pb::Setrange { key: args[1].clone(), offset: offset as u64, value: args[3].clone() };
    ctx.write(Op::Setrange(op), Shape::Natural)
}

fn getdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.write(Op::Getdel(pb::Getdel { key: args[1].clone() }), Shape::Natural)
}

fn getex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let o = parse_ext(&args[2..], Grammar::Get)?;
    // Redis looks the key up before it validates the expire time: a missing key is
    // nil and a wrong type is WRONGTYPE whatever the options.
    let Some(_) = ctx.reader().typed(&args[1], KeyType::String)?? else {
        return reply(Reply::Nil);
    };
    let mut op = pb::Getex { key: args[1].clone(), ..Default::default() };
    if let Some((unit, rel, v)) = &o.expire {
        op.at_ms = Some(expire_at(ctx, "getex", *unit, *rel, v)?);
    } else if o.persist {
        op.persist = true;
    } else {
        // No option: a plain read.
        return get(ctx, args);
    }
    // Apply checks the key again: it may have changed since this read.
    ctx.write(Op::Getex(op), Shape::Natural)
}

fn lcs(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis checks both keys' types before the options. One snapshot: both
    // values (and a chunked one's chunks) of one moment.
    let r = ctx.snap();
    let a = st::get(&r, &args[1])?.map_err(|_| err("ERR The specified keys must contain string values"))?;
    let b = st::get(&r, &args[2])?.map_err(|_| err("ERR The specified keys must contain string values"))?;
    let (mut getidx, mut getlen, mut withmatchlen, mut minmatchlen) = (false, false, false, 0i64);
    let mut cur = ArgCursor::new(&args[3..]);
    while !cur.is_empty() {
        if cur.eat("IDX") {
            getidx = true;
        } else if cur.eat("LEN") {
            getlen = true;
        } else if cur.eat("WITHMATCHLEN") {
            withmatchlen = true;
        } else if cur.remaining() >= 2 && cur.eat("MINMATCHLEN") {
            // 7.0 reads a negative length as 0.
            minmatchlen = cur.next_i64()?.max(0);
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    if getidx && getlen {
        return Err(err("ERR If you want both the length and indexes, please just use IDX."));
    }
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    if (a.len() as u64 + 1) * (b.len() as u64 + 1) >= u32::MAX as u64 / 4 {
        return Err(err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"));
    }
    let (len, s, matches) = st::lcs(&a, &b, minmatchlen, getidx);
    if getlen {
        return reply(Reply::Int(len as i64));
    }
    if !getidx {
        return reply(Reply::Bulk(Bytes::from(s)));
    }
    let pair = |(x, y): (usize, usize)| Reply::Array(vec![Reply::Int(x as i64), Reply::Int(y as i64)]);
    let ms = matches
        .into_iter()
        .map(|(ra, rb, l)| {
            let mut m = vec![pair(ra), pair(rb)];
            if withmatchlen {
                m.push(Reply::Int(l as i64));
            }
            Reply::Array(m)
        })
        .collect();
    reply(Reply::Map(vec![
        (Reply::bulk_str("matches"), Reply::Array(ms)),
        (Reply::bulk_str("len"), Reply::Int(len as i64)),
    ]))
}

const W: u32 = WRITE | DENYOOM;
const WF: u32 = WRITE | DENYOOM | FAST;
const R: u32 = READONLY;
const RF: u32 = READONLY | FAST;
const G: Group = Group::String;

pub static COMMANDS: &[CommandSpec] = &[
    row("get", 2, RF, G, "1.0.0", "Returns the string value of a key.", get)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("set", -3, W, G, "1.0.0", "Sets the string value of a key, ignoring its type.", set)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE | ks::VARIABLE_FLAGS, 1)
            .notes("RW and ACCESS due to the optional `GET` argument")])
        .key_proc(ks::KeyProc::Set),
    row("setnx", 3, WF, G, "1.0.0", "Set the string value of a key only when the key doesn't exist.", setnx)
        .key_specs(&[ks::key(ks::OW | ks::INSERT, 1)]),
    row("setex", 4, W, G, "2.0.0", "Sets the string value and expiration time of a key.", setex)
        .key_specs(&[ks::key(ks::OW | ks::UPDATE, 1)]),
    row("psetex", 4, W, G, "2.6.0", "Sets both string value and expiration time in milliseconds of a key.", psetex)
        .key_specs(&[ks::key(ks::OW | ks::UPDATE, 1)]),
    row(
        "getset",
        3,
        WF,
        G,
        "1.0.0",
        "Returns the previous string value of a key after setting it to a new value.",
        getset,
    )
    .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("mget", -2, RF, G, "1.0.0", "Atomically returns the string values of one or more keys.", mget)
        .key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::index(1), ks::range(-1, 1, 0))]),
    row("mset", -3, W, G, "1.0.1", "Atomically creates or modifies the string values of one or more keys.", mset)
        .key_specs(&[ks::spec(ks::OW | ks::UPDATE, ks::index(1), ks::range(-1, 2, 0))]),
    row(
        "msetnx",
        -3,
        W,
        G,
        "1.0.1",
        "Atomically modifies the string values of one or more keys only when all keys don't exist.",
        msetnx,
    )
    .key_specs(&[ks::spec(ks::OW | ks::INSERT, ks::index(1), ks::range(-1, 2, 0))]),
    row("incr", 2, WF, G, "1.0.0", "Increments the integer value of a key by one.", incr)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("decr", 2, WF, G, "1.0.0", "Decrements the integer value of a key by one.", decr)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("incrby", 3, WF, G, "1.0.0", "Increments the integer value of a key by a number.", incrby)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("decrby", 3, WF, G, "1.0.0", "Decrements a number from the integer value of a key.", decrby)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("incrbyfloat", 3, WF, G, "2.6.0", "Increment the floating point value of a key by a number.", incrbyfloat)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("append", 3, WF, G, "2.0.0", "Appends a string to the value of a key.", append)
        .key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row("strlen", 2, RF, G, "2.2.0", "Returns the length of a string value.", strlen).key_specs(&[ks::key(ks::RO, 1)]),
    row("getrange", 4, R, G, "2.4.0", "Returns a substring of the string stored at a key.", getrange)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("substr", 4, R, G, "1.0.0", "Returns a substring from a string value.", getrange)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("setrange", 4, W, G, "2.2.0", "Overwrites a part of a string value with another by an offset.", setrange)
        .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("getdel", 2, WRITE | FAST, G, "6.2.0", "Returns the string value of a key after deleting the key.", getdel)
        .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::DELETE, 1)]),
    row(
        "getex",
        -2,
        WRITE | FAST | READS_INLINE,
        G,
        "6.2.0",
        "Returns the string value of a key after setting its expiration time.",
        getex,
    )
    .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1).notes("RW and UPDATE because it changes the TTL")]),
    row("lcs", -3, R, G, "7.0.0", "Finds the longest common substring.", lcs).key_specs(&[ks::spec(
        ks::RO | ks::ACCESS,
        ks::index(1),
        ks::range(1, 1, 0),
    )]),
];
