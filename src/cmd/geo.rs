//! GEO commands over sorted sets whose scores are 52-bit geohashes (Redis's
//! encoding, `types::geo`): handlers first, table rows last.
//!
//! A search (GEOSEARCH, GEORADIUS and their forms) reads only the nine
//! geohash cells around its centre, each a range seek of the score index
//! (from the cell's lowest score), as Redis's membersOfAllNeighbors does,
//! keeps the members inside the shape, and with COUNT ANY stops at COUNT. A search that stores (GEOSEARCHSTORE, STORE /
//! STOREDIST) is proposed as a one-command transaction, like SORT ... STORE:
//! apply searches and writes the destination atomically.

use bytes::Bytes;

use super::key_specs as ks;
use super::table::{flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::{parse_f64, parse_i64, ArgError};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::Cf;
use crate::types::coll::{find, Found};
use crate::types::geo::{self, Shape as Area};
use crate::types::notify::ZSET;
use crate::types::zset;
use crate::types::{ReadView, Source};

/// Which command: its argument layout and its words in errors and events.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Radius,
    RadiusByMember,
    Search,
    SearchStore,
}

/// `getDoubleFromObjectOrReply` with Redis's message for a bad number.
fn double(a: &[u8], msg: &'static str) -> Result<f64, CmdError> {
    parse_f64(a).ok_or_else(|| err(msg))
}

/// A longitude, latitude pair (Redis's extractLongLatOrReply).
fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), CmdError> {
    let (x, y) = (double(lon, "ERR value is not a valid float")?, double(lat, "ERR value is not a valid float")?);
    if !(geo::LONG_MIN..=geo::LONG_MAX).contains(&x) || !(geo::LAT_MIN..=geo::LAT_MAX).contains(&y) {
        return Err(err(geo::invalid_pair(x, y)));
    }
    Ok((x, y))
}

fn unit(a: &[u8]) -> Result<f64, CmdError> {
    geo::unit(a).map_err(err)
}

/// A radius and its unit: (metres, metres per unit).
fn radius(r: &[u8], u: &[u8]) -> Result<(f64, f64), CmdError> {
    let d = double(r, "ERR need numeric radius")?;
    if d < 0.0 {
        return Err(err("ERR radius cannot be negative"));
    }
    let per = unit(u)?;
    Ok((d * per, per))
}

/// A score's bits as Redis's C cast `(uint64_t)score` makes them on x86-64
/// (a score ZADD wrote may be negative or fractional).
fn bits(s: f64) -> u64 {
    if s < 9_223_372_036_854_775_808.0 {
        s as i64 as u64
    } else if s < 18_446_744_073_709_551_616.0 {
        s as u64
    } else {
        0
    }
}

/// A coordinate as GEOPOS and WITHCOORD show it (a double in RESP3).
fn coord(v: f64) -> Reply {
    Reply::DoubleText(geo::fmt_coord(v))
}

/// The (lon, lat) a member's score decodes to, if the member is there.
fn position(src: &impl Source, found: &Found, member: &[u8]) -> Result<Option<(f64, f64)>, CmdError> {
    Ok(zset::score_of(src, found, member)?.map(|s| geo::decode(bits(s))))
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

/// A parsed search.
struct Search {
    /// The command's name as sent (Redis quotes it in two errors).
    name: Bytes,
    center: Option<(f64, f64)>,
    area: Option<Area>,
    /// Metres per unit of the radius or box.
    per: f64,
    withdist: bool,
    withhash: bool,
    withcoord: bool,
    /// Some(true): ascending.
    sort: Option<bool>,
    count: u64,
    any: bool,
    store: Option<Bytes>,
    storedist: bool,
}

/// Parse a search over the set `found` (needed by FROMMEMBER and
/// GEORADIUSBYMEMBER, which Redis resolves while parsing), with its errors
/// in Redis's order (georadiusGeneric).
fn parse(src: &impl Source, found: Option<&Found>, form: Form, ro: bool, args: &[Bytes]) -> Result<Search, CmdError> {
    let mut s = Search {
        name: args[0].clone(),
        center: None,
        area: None,
        per: 1.0,
        withdist: false,
        withhash: false,
        withcoord: false,
        sort: None,
        count: 0,
        any: false,
        store: (form == Form::SearchStore).then(|| args[1].clone()),
        storedist: false,
    };
    let could_not_decode = || err("ERR could not decode requested zset member");
    let base = match form {
        Form::Radius => {
            s.center = Some(lon_lat(&args[2], &args[3])?);
            let (r, per) = radius(&args[4], &args[5])?;
            (s.area, s.per) = (Some(Area::Radius(r)), per);
            6
        }
        Form::RadiusByMember => {
            if let Some(f) = found {
                s.center = Some(position(src, f, &args[2])?.ok_or_else(could_not_decode)?);
                let (r, per) = radius(&args[3], &args[4])?;
                (s.area, s.per) = (Some(Area::Radius(r)), per);
            }
            5
        }
        Form::Search => 2,
        Form::SearchStore => 3,
    };
    let search = matches!(form, Form::Search | Form::SearchStore);
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let rest = &args[base..];
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].to_ascii_lowercase();
        let left = rest.len() - i - 1;
        match a.as_slice() {
            b"withdist" => s.withdist = true,
            b"withhash" => s.withhash = true,
            b"withcoord" => s.withcoord = true,
            b"any" => s.any = true,
            b"asc" => s.sort = Some(true),
            b"desc" => s.sort = Some(false),
            b"count" if left >= 1 => {
                let n = parse_i64(&rest[i + 1]).ok_or(ArgError::NotInteger)?;
                if n <= 0 {
                    return Err(err("ERR COUNT must be > 0"));
                }
                s.count = n as u64;
                i += 1;
            }
            b"store" | b"storedist" if left >= 1 && !search && !ro => {
                s.store = Some(rest[i + 1].clone());
                s.storedist = a == b"storedist";
                i += 1;
            }
            b"storedist" if form == Form::SearchStore => s.storedist = true,
            b"frommember" if left >= 1 && search && !fromloc => {
                if let Some(f) = found {
                    s.center = Some(position(src, f, &rest[i + 1])?.ok_or_else(could_not_decode)?);
                }
                frommember = true;
                i += 1;
            }
            b"fromlonlat" if left >= 2 && search && !frommember => {
                s.center = Some(lon_lat(&rest[i + 1], &rest[i + 2])?);
                fromloc = true;
                i += 2;
            }
            b"byradius" if left >= 2 && search && !bybox => {
                let (r, per) = radius(&rest[i + 1], &rest[i + 2])?;
                (s.area, s.per) = (Some(Area::Radius(r)), per);
                byradius = true;
                i += 2;
            }
            b"bybox" if left >= 3 && search && !byradius => {
                let w = double(&rest[i + 1], "ERR need numeric width")?;
                let h = double(&rest[i + 2], "ERR need numeric height")?;
                if w < 0.0 || h < 0.0 {
                    return Err(err("ERR height or width cannot be negative"));
                }
                let per = unit(&rest[i + 3])?;
                (s.area, s.per) = (Some(Area::Box { width: w * per, height: h * per }), per);
                bybox = true;
                i += 3;
            }
            _ => return Err(ArgError::Syntax.into()),
        }
        i += 1;
    }
    if s.store.is_some() && (s.withdist || s.withhash || s.withcoord) {
        let what = if form == Form::SearchStore { "GEOSEARCHSTORE" } else { "STORE option in GEORADIUS" };
        return Err(err(format!("ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")));
    }
    let name = String::from_utf8_lossy(&s.name).into_owned();
    if search && !(frommember || fromloc) {
        return Err(err(format!("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}")));
    }
    if search && !(byradius || bybox) {
        return Err(err(format!("ERR exactly one of BYRADIUS and BYBOX can be specified for {name}")));
    }
    if s.any && s.count == 0 {
        return Err(err("ERR the ANY argument requires COUNT argument"));
    }
    if s.count != 0 && s.sort.is_none() && !s.any {
        s.sort = Some(true);
    }
    Ok(s)
}

/// A member found by a search.
struct Point {
    member: Bytes,
    score: f64,
    lon: f64,
    lat: f64,
    dist: f64,
}

/// The members inside the search's area: the nine cells around its centre in
/// Redis's order, each by score; with ANY, no more than COUNT of them.
fn points(src: &impl Source, found: &Found, s: &Search) -> Result<Vec<Point>, CmdError> {
    let (Some((lon, lat)), Some(area)) = (s.center, s.area) else { return Ok(Vec::new()) };
    let limit = if s.any { s.count } else { 0 };
    let mut out = Vec::new();
    for (min, max) in geo::search_ranges(lon, lat, area) {
        if limit != 0 && out.len() as u64 >= limit {
            break;
        }
        // The cell's members by score: the score index from `min` to `max`
        // (excluded), stopping as soon as ANY has its COUNT.
        let n = found.prefix.len();
        let (from, to) = (found.element(&zset::enc(min as f64)), found.element(&zset::enc(max as f64)));
        src.scan(Cf::ZsetScore, &from, &to, false, |k, _| {
            let score = zset::dec(&k[n..n + 8]);
            let (mlon, mlat) = geo::decode(bits(score));
            if let Some(dist) = geo::within(lon, lat, area, mlon, mlat) {
                out.push(Point { member: Bytes::copy_from_slice(&k[n + 8..]), score, lon: mlon, lat: mlat, dist });
            }
            limit == 0 || (out.len() as u64) < limit
        })?;
    }
    Ok(out)
}

/// What a search produces: its reply, or (inside apply) what STORE writes.
enum Outcome {
    Reply(Reply),
    Store { dst: Bytes, members: Vec<(Bytes, f64)>, event: &'static str },
}

fn search(src: &ReadView<'_>, form: Form, ro: bool, args: &[Bytes]) -> Result<Outcome, CmdError> {
    let src_key = &args[if form == Form::SearchStore { 2 } else { 1 }];
    let found = geo_set(src, src_key)?;
    let s = parse(src, found.as_ref(), form, ro, args)?;
    let event = if matches!(form, Form::Search | Form::SearchStore) { "geosearchstore" } else { "georadiusstore" };
    let Some(found) = found else {
        return Ok(match s.store {
            Some(dst) => Outcome::Store { dst, members: Vec::new(), event },
            None => Outcome::Reply(Reply::Array(Vec::new())),
        });
    };
    let mut pts = points(src, &found, &s)?;
    if let Some(asc) = s.sort {
        // Stable, as glibc's qsort is for Redis.
        pts.sort_by(|a, b| {
            let o = a.dist.partial_cmp(&b.dist).unwrap_or(std::cmp::Ordering::Equal);
            if asc {
                o
            } else {
                o.reverse()
            }
        });
    }
    if s.count != 0 {
        pts.truncate(s.count as usize);
    }
    if let Some(dst) = s.store {
        let members = pts.into_iter().map(|p| (p.member, if s.storedist { p.dist / s.per } else { p.score })).collect();
        return Ok(Outcome::Store { dst, members, event });
    }
    let extras = s.withdist || s.withhash || s.withcoord;
    let items = pts
        .into_iter()
        .map(|p| {
            if !extras {
                return Reply::Bulk(p.member);
            }
            let mut item = vec![Reply::Bulk(p.member)];
            if s.withdist {
                item.push(Reply::bulk_str(&geo::fmt_distance(p.dist, s.per)));
            }
            if s.withhash {
                item.push(Reply::Int(p.score as i64));
            }
            if s.withcoord {
                item.push(Reply::Array(vec![coord(p.lon), coord(p.lat)]));
            }
            Reply::Array(item)
        })
        .collect();
    Ok(Outcome::Reply(Reply::Array(items)))
}

/// True if the line stores its result (GEOSEARCHSTORE, or STORE/STOREDIST
/// among GEORADIUS's options).
fn stores(form: Form, args: &[Bytes]) -> bool {
    match form {
        Form::SearchStore => true,
        Form::Search => false,
        _ => args.iter().skip(4).any(|a| a.eq_ignore_ascii_case(b"store") || a.eq_ignore_ascii_case(b"storedist")),
    }
}

fn run(ctx: &mut Ctx<'_>, args: &[Bytes], form: Form, ro: bool) -> CmdResult {
    let writes = !ro && form != Form::Search;
    if !ctx.detached() && writes && (stores(form, args) || ctx.shared.nodes.is_some()) {
        // Searched and stored inside apply (see the module doc).
        return ctx.in_apply(ctx.region.unwrap_or(0), args);
    }
    let outcome = search(&ctx.snap(), form, ro, args)?;
    match outcome {
        Outcome::Reply(r) => reply(r),
        Outcome::Store { dst, members, event } => {
            let n = members.len() as i64;
            let done = ctx.with_apply(|a| -> Result<(), crate::storage::StorageError> {
                let existed = a.exists_for_events(&dst)?;
                zset::store(a, &dst, members)?;
                a.store_event(ZSET, event, &dst, n > 0, existed);
                Ok(())
            });
            match done {
                Some(r) => r?,
                None => return Err(err(super::ctx::READONLY_SCRIPT)),
            }
            reply(Reply::Int(n))
        }
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
