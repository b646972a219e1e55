//! A GEO search (GEORADIUS, GEORADIUSBYMEMBER, GEOSEARCH and their STORE
//! forms) over any [`Source`]: the query parsed with its errors in Redis's
//! order, which resolves a member centre while it parses
//! (georadiusGeneric), the members inside its area, and what it replies or
//! stores. A connection runs it over a snapshot; apply runs it over the
//! entry's state for the operation that stores (`pb::Geosearch`,
//! [`apply_geosearch`]).
//!
//! A search reads only the nine geohash cells around its centre, each a range
//! seek of the score index (from the cell's lowest score), as Redis's
//! membersOfAllNeighbors does, keeps the members inside the shape, and with
//! COUNT ANY stops at COUNT.

use bytes::Bytes;

use super::coll::{find, Found};
use super::geo::{self, Shape as Area};
use super::notify::ZSET;
use super::{zset, ApplyCtx, ApplyResult, ReadResult, Source, TypeError};
use crate::pb;
use crate::protocol::cursor::{parse_f64, parse_i64};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::{Cf, StorageError};

/// Which command: its argument layout and its words in errors and events.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Form {
    Radius,
    RadiusByMember,
    Search,
    SearchStore,
}

impl Form {
    pub fn to_pb(self) -> pb::geosearch::Form {
        match self {
            Form::Radius => pb::geosearch::Form::Radius,
            Form::RadiusByMember => pb::geosearch::Form::RadiusByMember,
            Form::Search => pb::geosearch::Form::Search,
            Form::SearchStore => pb::geosearch::Form::SearchStore,
        }
    }

    fn of(f: pb::geosearch::Form) -> Form {
        match f {
            pb::geosearch::Form::Radius => Form::Radius,
            pb::geosearch::Form::RadiusByMember => Form::RadiusByMember,
            pb::geosearch::Form::Search => Form::Search,
            pb::geosearch::Form::SearchStore => Form::SearchStore,
        }
    }
}

/// Why a search failed: the command's error, or storage's.
#[derive(Debug)]
pub enum Fail {
    Type(TypeError),
    Storage(StorageError),
}

impl From<TypeError> for Fail {
    fn from(e: TypeError) -> Fail {
        Fail::Type(e)
    }
}

impl From<StorageError> for Fail {
    fn from(e: StorageError) -> Fail {
        Fail::Storage(e)
    }
}

fn err(msg: impl Into<String>) -> Fail {
    Fail::Type(TypeError::Text(msg.into()))
}

const SYNTAX: TypeError = TypeError::Msg("ERR syntax error");

/// As a read's result: storage failures apart.
fn split<T>(r: Result<T, Fail>) -> ReadResult<T> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(Fail::Type(e)) => Ok(Err(e)),
        Err(Fail::Storage(e)) => Err(e),
    }
}

/// `getDoubleFromObjectOrReply` with Redis's message for a bad number.
pub fn double(a: &[u8], msg: &'static str) -> Result<f64, Fail> {
    parse_f64(a).ok_or_else(|| err(msg))
}

/// A longitude, latitude pair (Redis's extractLongLatOrReply).
pub fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), Fail> {
    let (x, y) = (double(lon, "ERR value is not a valid float")?, double(lat, "ERR value is not a valid float")?);
    if !(geo::LONG_MIN..=geo::LONG_MAX).contains(&x) || !(geo::LAT_MIN..=geo::LAT_MAX).contains(&y) {
        return Err(err(geo::invalid_pair(x, y)));
    }
    Ok((x, y))
}

pub fn unit(a: &[u8]) -> Result<f64, Fail> {
    geo::unit(a).map_err(err)
}

/// A radius and its unit: (metres, metres per unit).
fn radius(r: &[u8], u: &[u8]) -> Result<(f64, f64), Fail> {
    let d = double(r, "ERR need numeric radius")?;
    if d < 0.0 {
        return Err(err("ERR radius cannot be negative"));
    }
    let per = unit(u)?;
    Ok((d * per, per))
}

/// A score's bits as Redis's C cast `(uint64_t)score` makes them on x86-64
/// (a score ZADD wrote may be negative or fractional).
pub fn bits(s: f64) -> u64 {
    if s < 9_223_372_036_854_775_808.0 {
        s as i64 as u64
    } else if s < 18_446_744_073_709_551_616.0 {
        s as u64
    } else {
        0
    }
}

/// A coordinate as GEOPOS and WITHCOORD show it (a double in RESP3).
pub fn coord(v: f64) -> Reply {
    Reply::DoubleText(geo::fmt_coord(v))
}

/// The (lon, lat) a member's score decodes to, if the member is there.
pub fn position(src: &impl Source, found: &Found, member: &[u8]) -> Result<Option<(f64, f64)>, StorageError> {
    Ok(zset::score_of(src, found, member)?.map(|s| geo::decode(bits(s))))
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
fn parse(src: &impl Source, found: Option<&Found>, form: Form, ro: bool, args: &[Bytes]) -> Result<Search, Fail> {
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
                let n = parse_i64(&rest[i + 1]).ok_or(TypeError::NotInteger)?;
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
            _ => return Err(SYNTAX.into()),
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
fn points(src: &impl Source, found: &Found, s: &Search) -> Result<Vec<Point>, StorageError> {
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

/// What a search produces: its reply, or what STORE writes.
pub enum Outcome {
    Reply(Reply),
    Store { dst: Bytes, members: Vec<(Bytes, f64)>, event: &'static str },
}

fn run_search(src: &impl Source, form: Form, ro: bool, args: &[Bytes]) -> Result<Outcome, Fail> {
    let src_key = &args[if form == Form::SearchStore { 2 } else { 1 }];
    let found = find(src, src_key, KeyType::ZSet)??;
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

/// The search `args` (the command line of `form`; `ro`: a _RO form) over
/// `src`.
pub fn search(src: &impl Source, form: Form, ro: bool, args: &[Bytes]) -> ReadResult<Outcome> {
    split(run_search(src, form, ro, args))
}

/// A GEO search inside apply (`pb::Geosearch`): its reply, or with STORE the
/// destination replaced by what it found (none if nothing) and their count.
pub fn apply_geosearch(a: &mut ApplyCtx, op: &pb::Geosearch) -> ApplyResult {
    let form = Form::of(op.form());
    let outcome = match search(&*a, form, false, &op.args)? {
        Ok(o) => o,
        Err(e) => return Ok(Err(e)),
    };
    match outcome {
        Outcome::Reply(r) => Ok(Ok(r)),
        Outcome::Store { dst, members, event } => {
            let n = members.len() as i64;
            let existed = a.exists_for_events(&dst)?;
            zset::store(a, &dst, members)?;
            a.store_event(ZSET, event, &dst, n > 0, existed);
            Ok(Ok(Reply::Int(n)))
        }
    }
}
