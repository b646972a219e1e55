//! GEO commands over sorted sets whose scores are 52-bit geohashes (Redis's
//! encoding, `types::geo`): handlers first, table rows last.
//!
//! A search (GEOSEARCH, GEORADIUS and their forms) is `types::geo_search`. A
//! search that stores (GEOSEARCHSTORE, STORE / STOREDIST) is proposed as its
//! operation (`pb::Geosearch`), like SORT ... STORE: apply searches and
//! writes the destination atomically.

use bytes::Bytes;

use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::ArgError;
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::types::coll::{find, Found};
use crate::types::geo;
use crate::types::geo_search::{self as gs, bits, coord, Form, Outcome};
use crate::types::{zset, Source};

/// A longitude, latitude pair (Redis's extractLongLatOrReply).
fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), CmdError> {
    gs::lon_lat(lon, lat).map_err(fail)
}

fn unit(a: &[u8]) -> Result<f64, CmdError> {
    gs::unit(a).map_err(fail)
}

fn fail(f: gs::Fail) -> CmdError {
    match f {
        gs::Fail::Type(e) => e.into(),
        gs::Fail::Storage(e) => e.into(),
    }
}

/// The (lon, lat) a member's score decodes to, if the member is there.
fn position(src: &impl Source, found: &Found, member: &[u8]) -> Result<Option<(f64, f64)>, CmdError> {
    Ok(gs::position(src, found, member)?)
}

fn geoadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut op = pb::Zadd { key: args[1].clone(), ..Default::default() };
    let mut i = 2;
    while i < args.len() {
        match args[i].to_ascii_lowercase().as_slice() {
            b"nx" => op.nx = true,
            b"xx" => op.xx = true,
            b"ch" => op.ch = true,
            _ => break,
        }
        i += 1;
    }
    let triples = &args[i..];
    if triples.is_empty() || triples.len() % 3 != 0 || (op.nx && op.xx) {
        return Err(ArgError::Syntax.into());
    }
    for t in triples.chunks_exact(3) {
        let (x, y) = lon_lat(&t[0], &t[1])?;
        let score = geo::encode(x, y).ok_or_else(|| err(geo::invalid_pair(x, y)))?;
        op.scores.push(score as f64);
        op.members.push(t[2].clone());
    }
    ctx.write(Op::Zadd(op), Shape::Natural)
}

/// The sorted set `key` for a GEO read: `None` if absent.
fn geo_set(src: &impl Source, key: &[u8]) -> Result<Option<Found>, CmdError> {
    Ok(find(src, key, KeyType::ZSet)??)
}

fn geopos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = ctx.snap();
    let found = geo_set(&s, &args[1])?;
    let mut out = Vec::with_capacity(args.len() - 2);
    for m in &args[2..] {
        let p = match &found {
            Some(f) => position(&s, f, m)?,
            None => None,
        };
        out.push(match p {
            Some((x, y)) => Reply::Array(vec![coord(x), coord(y)]),
            None => Reply::NilArray,
        });
    }
    reply(Reply::Array(out))
}

fn geohash(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = ctx.snap();
    let found = geo_set(&s, &args[1])?;
    let mut out = Vec::with_capacity(args.len() - 2);
    for m in &args[2..] {
        let score = match &found {
            Some(f) => zset::score_of(&s, f, m)?,
            None => None,
        };
        out.push(score.map_or(Reply::Nil, |s| Reply::bulk_str(&geo::hash_string(bits(s)))));
    }
    reply(Reply::Array(out))
}

fn geodist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let per = match args.len() {
        4 => 1.0,
        5 => unit(&args[4])?,
        _ => return Err(ArgError::Syntax.into()),
    };
    let s = ctx.snap();
    let Some(found) = geo_set(&s, &args[1])? else { return reply(Reply::Nil) };
    let (Some(a), Some(b)) = (position(&s, &found, &args[2])?, position(&s, &found, &args[3])?) else {
        return reply(Reply::Nil);
    };
    reply(Reply::bulk_str(&geo::fmt_distance(geo::distance(a.0, a.1, b.0, b.1), per)))
}

/// True if the line stores its result (GEOSEARCHSTORE, or STORE/STOREDIST
/// among GEORADIUS's options: where its key spec finds the destination).
fn stores(form: Form, args: &[Bytes]) -> bool {
    match form {
        Form::SearchStore => true,
        Form::Search => false,
        _ => super::key_specs::georadius_store(args).is_some(),
    }
}

fn run(ctx: &mut Ctx<'_>, args: &[Bytes], form: Form, ro: bool) -> CmdResult {
    let writes = !ro && form != Form::Search;
    let op = || Op::Geosearch(pb::Geosearch { form: form.to_pb() as i32, args: args.to_vec() });
    if writes && (stores(form, args) || (ctx.shared.nodes.is_some() && !ctx.detached())) {
        // Searched and stored inside apply (see the module doc).
        return ctx.write(op(), Shape::Natural);
    }
    let outcome = gs::search(&ctx.snap(), form, ro, args)??;
    match outcome {
        Outcome::Reply(r) => reply(r),
        Outcome::Store { .. } => ctx.write(op(), Shape::Natural),
    }
}

fn georadius(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run(ctx, args, Form::Radius, false)
}

fn georadius_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run(ctx, args, Form::Radius, true)
}

fn georadiusbymember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run(ctx, args, Form::RadiusByMember, false)
}

fn georadiusbymember_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run(ctx, args, Form::RadiusByMember, true)
}

fn geosearch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run(ctx, args, Form::Search, true)
}

fn geosearchstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run(ctx, args, Form::SearchStore, false)
}

const G: Group = Group::Geo;

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "geoadd",
        -5,
        WRITE | DENYOOM,
        G,
        "3.2.0",
        "Adds one or more members to a geospatial index. The key is created if it doesn't exist.",
        geoadd,
    )
    .key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row(
        "geodist",
        -4,
        READONLY,
        G,
        "3.2.0",
        "Returns the distance between two members of a geospatial index.",
        geodist,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("geohash", -2, READONLY, G, "3.2.0", "Returns members from a geospatial index as geohash strings.", geohash)
        .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "geopos",
        -2,
        READONLY,
        G,
        "3.2.0",
        "Returns the longitude and latitude of members from a geospatial index.",
        geopos,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "georadius",
        -6,
        WRITE | DENYOOM | READS_INLINE,
        G,
        "3.2.0",
        "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.",
        georadius,
    )
    .key_specs(&[
        ks::key(ks::RO | ks::ACCESS, 1),
        ks::spec(ks::OW | ks::UPDATE, ks::keyword("STORE", 6), ks::range(0, 1, 0)),
        ks::spec(ks::OW | ks::UPDATE, ks::keyword("STOREDIST", 6), ks::range(0, 1, 0)),
    ])
    .key_proc(ks::KeyProc::Georadius),
    row(
        "georadius_ro",
        -6,
        READONLY,
        G,
        "3.2.10",
        "Returns members from a geospatial index that are within a distance from a coordinate.",
        georadius_ro,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "georadiusbymember",
        -5,
        WRITE | DENYOOM | READS_INLINE,
        G,
        "3.2.0",
        "Queries a geospatial index for members within a distance from a member, optionally stores the result.",
        georadiusbymember,
    )
    .key_specs(&[
        ks::key(ks::RO | ks::ACCESS, 1),
        ks::spec(ks::OW | ks::UPDATE, ks::keyword("STORE", 5), ks::range(0, 1, 0)),
        ks::spec(ks::OW | ks::UPDATE, ks::keyword("STOREDIST", 5), ks::range(0, 1, 0)),
    ])
    .key_proc(ks::KeyProc::Georadius),
    row(
        "georadiusbymember_ro",
        -5,
        READONLY,
        G,
        "3.2.10",
        "Returns members from a geospatial index that are within a distance from a member.",
        georadiusbymember_ro,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "geosearch",
        -7,
        READONLY,
        G,
        "6.2.0",
        "Queries a geospatial index for members inside an area of a box or a circle.",
        geosearch,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "geosearchstore",
        -8,
        WRITE | DENYOOM,
        G,
        "6.2.0",
        "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.",
        geosearchstore,
    )
    .key_specs(&[ks::key(ks::OW | ks::UPDATE, 1), ks::key(ks::RO | ks::ACCESS, 2)]),
];
