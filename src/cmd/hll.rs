//! HyperLogLog commands (PFADD, PFCOUNT, PFMERGE): handlers first, table rows
//! last. The value is Redis's own HLL string (`types::hll`), so GET, SET and
//! DUMP see the bytes redis-server would hold.

use bytes::Bytes;

use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{reply, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::Reply;
use crate::types::hll;
use crate::types::Source;

fn pfadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Pfadd { key: args[1].clone(), elements: args[2..].to_vec() };
    ctx.write(Op::Pfadd(op), Shape::Natural)
}

/// One key: its cached cardinality when the cache is valid; else a write that
/// counts and stores the cache, as redis-server does (so the value's bytes,
/// and WATCH, stay as Redis would have them). Where that write cannot be made
/// (a read-only script, writes refused for a full disk) or might not be led
/// here (cluster mode, where a follower serves READONLY reads), it counts
/// without storing. Several keys: the count of their union, over one
/// snapshot, nothing stored.
fn pfcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() == 2 {
        // A chunked value (past 16 KiB) is read from one snapshot.
        let chunked = ctx.reader().meta(&args[1])?.is_some_and(|m| m.chunked);
        let v = if chunked { hll::read(&ctx.snap(), &args[1])?? } else { hll::read(&ctx.reader(), &args[1])?? };
        let Some(v) = v else { return reply(Reply::Int(0)) };
        hll::validate(&v).map_err(hll::type_error)?;
        if let Some(n) = hll::cached(&v) {
            return reply(Reply::Int(n as i64));
        }
        if ctx.read_only() || ctx.writes_failing() || ctx.shared.nodes.is_some() {
            return reply(Reply::Int(hll::estimate(&v).map_err(hll::type_error)? as i64));
        }
        return ctx.write(Op::Pfcount(pb::Pfcount { key: args[1].clone() }), Shape::Natural);
    }
    let s = ctx.snap();
    let mut max = Box::new([0u8; hll::REGISTERS]);
    for k in &args[1..] {
        let Some(v) = hll::read(&s, k)?? else { continue };
        hll::merge_into(&mut max, &v).map_err(hll::type_error)?;
    }
    reply(Reply::Int(hll::estimate_raw(&max) as i64))
}

fn pfmerge(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = pb::Pfmerge { dest: args[1].clone(), sources: args[2..].to_vec() };
    ctx.write(Op::Pfmerge(op), Shape::Natural)
}

const G: Group = Group::Hyperloglog;

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "pfadd",
        -2,
        WRITE | DENYOOM | FAST,
        G,
        "2.8.9",
        "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
        pfadd,
    )
    .key_specs(&[ks::key(ks::RW | ks::INSERT, 1)]),
    row(
        "pfcount",
        -2,
        READONLY | MAY_REPLICATE,
        G,
        "2.8.9",
        "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
        pfcount,
    )
    .key_specs(&[ks::spec(ks::RW | ks::ACCESS, ks::index(1), ks::range(-1, 1, 0))
        .notes("RW because it may change the internal representation of the key, and propagate to replicas")]),
    row(
        "pfmerge",
        -2,
        WRITE | DENYOOM,
        G,
        "2.8.9",
        "Merges one or more HyperLogLog values into a single key.",
        pfmerge,
    )
    .key_specs(&[
        ks::key(ks::RW | ks::ACCESS | ks::INSERT, 1),
        ks::spec(ks::RO | ks::ACCESS, ks::index(2), ks::range(-1, 1, 0)),
    ]),
];
