//! Bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
//! BITFIELD_RO): handlers first, table rows last. Arguments are checked in
//! Redis 7.0's order (`types::bits`); reads take only the bytes they need
//! from the string (`types::string::read_range`: a chunked value's chunks),
//! writes are applied by `types::bitmap`.

use bytes::Bytes;

use super::args::int;
use super::ctx::read_string;
use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, CmdError, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::Reply;
use crate::storage::meta::Meta;
use crate::types::bitmap;
use crate::types::bits::{self, FieldOp, Span};
use crate::types::string::{read_range, value_len};

fn e(msg: &'static str) -> CmdError {
    err(msg)
}

fn setbit(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let offset = bits::bit_offset(&args[2], false, 1).map_err(e)?;
    let on = bits::bit_value(&args[3]).map_err(e)?;
    ctx.write(Op::Setbit(pb::Setbit { key: args[1].clone(), offset, on }), Shape::Natural)
}

fn getbit(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let bit = bits::bit_offset(&args[2], false, 1).map_err(e)?;
    let key = args[1].clone();
    read_string(
        ctx,
        &args[1],
        |_| 1,
        move |v, m| {
            let Some(m) = m else { return Ok(Reply::Int(0)) };
            let byte = read_range(v, &key, &m, bit >> 3, (bit >> 3) + 1)?;
            Ok(Reply::Int(byte.first().map_or(0, |b| (b >> (7 - (bit & 7))) & 1) as i64))
        },
    )
}

/// BITCOUNT's range, after the key was found: `None` counts nothing.
fn count_range(args: &[Bytes], len: u64) -> Result<Option<Span>, CmdError> {
    match args.len() {
        2 => Ok(bits::count_span(len, 0, -1, false)),
        4 | 5 => {
            let (start, end) = (int(&args[2])?, int(&args[3])?);
            if start < 0 && end < 0 && start > end {
                return Ok(None);
            }
            let bit_mode = match args.get(4) {
                Some(u) => bits::range_unit(u).map_err(e)?,
                None => false,
            };
            Ok(bits::count_span(len, start, end, bit_mode))
        }
        _ => Err(e(bits::SYNTAX_ERR)),
    }
}

fn span_bytes(s: &Span) -> u64 {
    s.last_byte - s.first_byte + 1
}

/// Redis answers a missing key (0) and a wrong type before it reads the range.
fn bitcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let owned = args.to_vec();
    let need = {
        let a = owned.clone();
        move |m: &Meta| count_range(&a, value_len(m)).ok().flatten().as_ref().map_or(0, span_bytes)
    };
    read_string(ctx, &args[1], need, move |v, m| {
        let Some(m) = m else { return Ok(Reply::Int(0)) };
        let Some(span) = count_range(&owned, value_len(&m))? else { return Ok(Reply::Int(0)) };
        let bytes = read_range(v, &owned[1], &m, span.first_byte, span.last_byte + 1)?;
        Ok(Reply::Int(bits::count_bits(&bytes, &span) as i64))
    })
}

/// BITPOS's range, after the key was found: `Err(answer)` when it is known
/// without reading; with whether an end was given.
fn pos_range(args: &[Bytes], len: u64) -> Result<(Result<Span, i64>, bool), CmdError> {
    match args.len() {
        3 => Ok((bits::pos_span(len, None, None, false), false)),
        4..=6 => {
            let start = int(&args[3])?;
            let bit_mode = match args.get(5) {
                Some(u) => bits::range_unit(u).map_err(e)?,
                None => false,
            };
            let end = match args.get(4) {
                Some(a) => Some(int(a)?),
                None => None,
            };
            Ok((bits::pos_span(len, Some(start), end, bit_mode), end.is_some()))
        }
        _ => Err(e(bits::SYNTAX_ERR)),
    }
}

fn bitpos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let bit = bits::bitpos_bit(&args[2]).map_err(e)?;
    let owned = args.to_vec();
    let need = {
        let a = owned.clone();
        move |m: &Meta| match pos_range(&a, value_len(m)) {
            Ok((Ok(s), _)) => span_bytes(&s),
            _ => 0,
        }
    };
    read_string(ctx, &args[1], need, move |v, m| {
        let Some(m) = m else { return Ok(Reply::Int(bits::bitpos_missing(bit))) };
        let (span, end_given) = pos_range(&owned, value_len(&m))?;
        let span = match span {
            Ok(s) => s,
            Err(answer) => return Ok(Reply::Int(answer)),
        };
        let bytes = read_range(v, &owned[1], &m, span.first_byte, span.last_byte + 1)?;
        Ok(Reply::Int(bits::bitpos(&bytes, &span, bit, end_given)))
    })
}

fn bitop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let which = bits::parse_bitop(&args[1], args.len() - 3).map_err(e)?;
    let op = match which {
        bits::BitOp::And => 0,
        bits::BitOp::Or => 1,
        bits::BitOp::Xor => 2,
        bits::BitOp::Not => 3,
    };
    let cmd = pb::Bitop { op, dest: args[2].clone(), sources: args[3..].to_vec() };
    ctx.write(Op::Bitop(cmd), Shape::Natural)
}

/// GETs only: read the fields without a write.
fn bitfield_read(ctx: &mut Ctx<'_>, key: &Bytes, ops: Vec<FieldOp>) -> CmdResult {
    let k = key.clone();
    let need = ops.len() as u64 * 8;
    read_string(
        ctx,
        key,
        move |_| need,
        move |v, m| {
            let mut out = Vec::with_capacity(ops.len());
            for f in &ops {
                let FieldOp::Get { t, bit } = *f else { continue };
                let (from, to) = bitmap::field_bytes(bit, t);
                let w = bitmap::window(v, &k, m.as_ref(), from, to)?;
                out.push(Reply::Int(bits::get_field(&w, bit - from * 8, t)));
            }
            Ok(Reply::Array(out))
        },
    )
}

fn bitfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let ops = bits::parse_bitfield(&args[2..], false).map_err(err)?;
    let writes = ops.iter().any(|f| !matches!(f, FieldOp::Get { .. }));
    // GETs alone read; in cluster mode they go through the log, where a
    // leader's read is linearizable.
    if !writes && ctx.shared.nodes.is_none() {
        return bitfield_read(ctx, &args[1], ops);
    }
    let op = pb::Bitfield { key: args[1].clone(), args: args[2..].to_vec() };
    ctx.write(Op::Bitfield(op), Shape::Natural)
}

fn bitfield_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let ops = bits::parse_bitfield(&args[2..], true).map_err(err)?;
    bitfield_read(ctx, &args[1], ops)
}

const G: Group = Group::Bitmap;

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "setbit",
        4,
        WRITE | DENYOOM,
        G,
        "2.2.0",
        "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
        setbit,
    )
    .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE, 1)]),
    row("getbit", 3, READONLY | FAST, G, "2.2.0", "Returns a bit value by offset.", getbit)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "bitcount",
        -2,
        READONLY,
        G,
        "2.6.0",
        "Counts the number of set bits (population counting) in a string.",
        bitcount,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("bitpos", -3, READONLY, G, "2.8.7", "Finds the first set (1) or clear (0) bit in a string.", bitpos)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "bitop",
        -4,
        WRITE | DENYOOM,
        G,
        "2.6.0",
        "Performs bitwise operations on multiple strings, and stores the result.",
        bitop,
    )
    .key_specs(&[ks::key(ks::OW | ks::UPDATE, 2), ks::spec(ks::RO | ks::ACCESS, ks::index(3), ks::range(-1, 1, 0))]),
    row(
        "bitfield",
        -2,
        WRITE | DENYOOM | READS_INLINE,
        G,
        "3.2.0",
        "Performs arbitrary bitfield integer operations on strings.",
        bitfield,
    )
    .key_specs(&[ks::key(ks::RW | ks::ACCESS | ks::UPDATE | ks::VARIABLE_FLAGS, 1)
        .notes("This command allows both access and modification of the key")])
    .key_proc(ks::KeyProc::Bitfield),
    row(
        "bitfield_ro",
        -2,
        READONLY | FAST,
        G,
        "6.0.0",
        "Performs arbitrary read-only bitfield integer operations on strings.",
        bitfield_ro,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
];
