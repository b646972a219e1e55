//! The storage-free math of Redis 7.0's GEO commands (`geo.c`, `geohash.c`,
//! `geohash_helper.c`): the 52-bit score of a position, the position a score
//! decodes to, distances, GEOHASH strings, units, the score ranges a search
//! scans and the shape test each candidate goes through, and the text Redis
//! prints for distances and coordinates.
//!
//! A position is stored as a sorted-set member whose score is a geohash of 26
//! steps: the longitude's cell number (26 bits over [-180, 180]) and the
//! latitude's (26 bits over [-85.05112878, 85.05112878]) interleaved, the
//! latitude's bits in the even positions (bit 0 is the latitude's lowest) and
//! the longitude's in the odd ones. A cell of `step` bits per coordinate covers
//! the scores `[bits << (52 - 2 step), (bits + 1) << (52 - 2 step))`.
//!
//! Everything here reproduces Redis's floating-point operations in its order
//! (the same libm functions on the same platform), so a distance is bit for bit
//! Redis's, and a search finds exactly the members Redis finds, including those
//! its cell choice misses (near the poles, across the antimeridian). Quirks
//! kept on purpose:
//! - a coordinate at the top of its range (longitude 180, latitude
//!   85.05112878) encodes to cell number 2^26, one past the last cell, so its
//!   score has bit 53 (longitude) or bit 52 (latitude) set: (180, 85.05112878)
//!   is 13510798882111488 = 3 << 52;
//! - scores are doubles, so past 2^53 (longitude 180) the lowest bit, the
//!   latitude's, is rounded away: [`encode`] and [`search_ranges`] return the
//!   integers as Redis stores and compares them;
//! - decoding clamps the cell's centre into the valid ranges, so such a score
//!   decodes to exactly 180 or 85.05112878;
//! - [`distance`] takes Redis's shortcut when the longitudes' half difference
//!   has a zero sine (the latitude difference times the radius, not haversine);
//! - a search's bounding box uses the cosine of the latitude at its far edge,
//!   which goes negative past a pole, and ignores the antimeridian (Redis then
//!   scans the wrong cells and misses members: kept, since the caller must
//!   answer as Redis does);
//! - distances print through fixedpoint_d2string, not "%.4f" ([`fmt_distance`]).

/// The valid longitudes (EPSG:900913 limits, as Redis's GEO_LONG_MIN/MAX).
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
/// The valid latitudes (GEO_LAT_MIN/MAX): Web Mercator cannot reach the poles.
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;

/// Steps (bits per coordinate) of a stored score (GEO_STEP_MAX).
const STEP_MAX: u8 = 26;
/// Redis's EARTH_RADIUS_IN_METERS (the WGS-84 quadratic mean radius).
const EARTH_RADIUS: f64 = 6372797.560856;
/// Redis's MERCATOR_MAX, the bound of the step estimate.
const MERCATOR_MAX: f64 = 20037726.37;
/// Degrees to radians, as Redis's D_R (M_PI / 180.0, rounded once).
const D_R: f64 = std::f64::consts::PI / 180.0;

const UNIT_ERR: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
const GEOHASH_ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

fn deg_rad(deg: f64) -> f64 {
    deg * D_R
}

fn rad_deg(rad: f64) -> f64 {
    rad / D_R
}

/// A closed interval of one coordinate.
#[derive(Debug, Clone, Copy)]
struct Span {
    min: f64,
    max: f64,
}

const WGS84_LON: Span = Span { min: LONG_MIN, max: LONG_MAX };
const WGS84_LAT: Span = Span { min: LAT_MIN, max: LAT_MAX };
/// GEOHASH prints the standard geohash, whose latitudes span [-90, 90].
const STANDARD_LAT: Span = Span { min: -90.0, max: 90.0 };

/// A geohash cell: `step` bits per coordinate, interleaved in `bits`. The
/// coordinates' numbers can reach 2^step (see the module doc), one bit past
/// `2 * step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    bits: u64,
    step: u8,
}

/// The area of a cell (Redis's GeoHashArea, without the hash).
#[derive(Debug, Clone, Copy)]
struct Area {
    lon: Span,
    lat: Span,
}

/// Spread the 32 bits of `v` to the even bit positions of a u64.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gather the 32 even-position bits of `v` (the inverse of [`spread`]).
fn gather(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x >> 4)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x >> 8)) & 0x0000_ffff_0000_ffff;
    ((x | (x >> 16)) & 0x0000_0000_ffff_ffff) as u32
}

/// (latitude number, longitude number) of interleaved bits.
fn split(bits: u64) -> (u32, u32) {
    (gather(bits), gather(bits >> 1))
}

/// Redis's geohashEncode: the cell of `step` bits holding (lon, lat) in the
/// given ranges; None outside the WGS-84 limits or the ranges (and for NaN,
/// which Redis's argument parsing never lets through).
fn encode_in(lon: f64, lat: f64, step: u8, lon_span: Span, lat_span: Span) -> Option<Cell> {
    let inside = |v: f64, s: Span| v >= s.min && v <= s.max;
    if !inside(lon, WGS84_LON) || !inside(lat, WGS84_LAT) || !inside(lon, lon_span) || !inside(lat, lat_span) {
        return None;
    }
    let cells = (1u64 << step) as f64;
    // The offsets are in [0, 2^step]; `as u32` truncates, as C's conversion to
    // uint32_t does for values in range.
    let lat_n = ((lat - lat_span.min) / (lat_span.max - lat_span.min) * cells) as u32;
    let lon_n = ((lon - lon_span.min) / (lon_span.max - lon_span.min) * cells) as u32;
    Some(Cell { bits: spread(lat_n) | (spread(lon_n) << 1), step })
}

/// Redis's geohashDecode over the WGS-84 ranges: the cell's area.
fn area_of(cell: Cell) -> Area {
    let (lat_n, lon_n) = split(cell.bits);
    let cells = (1u64 << cell.step) as f64;
    let edge = |n: u32, s: Span| s.min + (f64::from(n) * 1.0 / cells) * (s.max - s.min);
    // C adds 1 in 32-bit unsigned arithmetic: it wraps.
    let side = |n: u32, s: Span| Span { min: edge(n, s), max: edge(n.wrapping_add(1), s) };
    Area { lon: side(lon_n, WGS84_LON), lat: side(lat_n, WGS84_LAT) }
}

/// The cell `d` (+1 or -1) cells east (`lon` true) or north of `cell`, wrapping
/// around at the edges of the world (Redis's geohash_move_x/_y). The moved
/// coordinate is reduced to `step` bits; the other keeps its bits as they are.
fn moved(cell: Cell, lon: bool, d: i32) -> Cell {
    let (lat_n, lon_n) = split(cell.bits);
    let mask = (1u32 << cell.step) - 1;
    let shift = |n: u32| n.wrapping_add(d as u32) & mask;
    let (lat_n, lon_n) = if lon { (lat_n, shift(lon_n)) } else { (shift(lat_n), lon_n) };
    Cell { bits: spread(lat_n) | (spread(lon_n) << 1), step: cell.step }
}

/// An integer as the double Redis keeps it in: scores and range bounds past
/// 2^53 (longitude 180, whose cell number 2^26 sets bit 53) lose their lowest
/// bit, rounding to even.
fn as_double(v: u64) -> u64 {
    v as f64 as u64
}

/// The score range `[min, max)` of a cell (scoresOfGeoHashBox): its bits, and
/// its bits plus one, aligned to 52 bits; both as the doubles Redis compares
/// scores with.
fn score_range(cell: Cell) -> (u64, u64) {
    let shift = 52 - 2 * u32::from(cell.step);
    (as_double(cell.bits << shift), as_double((cell.bits + 1) << shift))
}

/// Redis's geohashEstimateStepsByRadius: the step whose cells are about as big
/// as the search, fewer near the poles, within 1..=26.
fn estimate_steps(mut range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return STEP_MAX;
    }
    let mut step: i32 = 1;
    while range_m < MERCATOR_MAX {
        range_m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, i32::from(STEP_MAX)) as u8
}

/// Redis's error text for a coordinate pair out of range: `%f,%f`.
pub fn invalid_pair(lon: f64, lat: f64) -> String {
    format!("ERR invalid longitude,latitude pair {},{}", c_fixed(lon, 6), c_fixed(lat, 6))
}

/// The 52-bit score of (lon, lat) (geohashEncodeWGS84 at 26 steps, aligned):
/// None if out of range. The value is the stored double's: GEOADD hands ZADD
/// the integer as text, so at longitude 180 (scores past 2^53) an odd score
/// becomes the even one below or above it (ties to even), as ZSCORE shows.
pub fn encode(lon: f64, lat: f64) -> Option<u64> {
    encode_in(lon, lat, STEP_MAX, WGS84_LON, WGS84_LAT).map(|c| score_range(c).0)
}

/// The (lon, lat) Redis decodes a score to: the centre of its cell, clamped to
/// the valid ranges (geohashDecodeToLongLatWGS84).
///
/// Redis turns the sorted set's double score `s` into bits with C's
/// `(uint64_t)` conversion, which for scores GEOADD did not write (ZADD) is
/// x86-64's: `if s < 2^63 { s as i64 as u64 } else if s < 2^64 { s as u64 }
/// else { 0 }` (a negative score is its two's complement, -5.0 is 2^64 - 5, and
/// -1e30 or -inf is 2^63). A plain `s as u64` turns every negative score into 0
/// instead: `ZADD k -5 m` then GEOPOS answers 180, 85.05112878 in Redis.
pub fn decode(score: u64) -> (f64, f64) {
    let a = area_of(Cell { bits: score, step: STEP_MAX });
    let lon = ((a.lon.min + a.lon.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((a.lat.min + a.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// Redis's geohashGetLatDistance: metres between two latitudes on a meridian.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// Great-circle metres between two points (geohashGetDistance): haversine with
/// Redis's earth radius, or, when the sine of half the longitude difference is
/// zero, the latitude difference alone (Redis 7.0's shortcut; the two differ
/// in the last bits). Near-antipodal points can give NaN, as in Redis.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let v = ((deg_rad(lon2) - deg_rad(lon1)) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS * a.sqrt().asin()
}

/// GEOHASH's 11-character string for a score: the decoded position encoded
/// again over the standard ranges ([-180, 180], [-90, 90]) at 26 steps, ten
/// base-32 characters of 5 bits from the top of the 52, and a final '0'.
pub fn hash_string(score: u64) -> String {
    let (lon, lat) = decode(score);
    // A decoded position is always inside the ranges; Redis does not check.
    let bits = encode_in(lon, lat, STEP_MAX, WGS84_LON, STANDARD_LAT).map_or(0, |c| c.bits);
    let mut s = String::with_capacity(11);
    for i in 1..=10 {
        s.push(char::from(GEOHASH_ALPHABET[((bits >> (52 - i * 5)) & 0x1f) as usize]));
    }
    s.push('0');
    s
}

/// The metres per unit of a unit argument: "m", "km", "ft" or "mi", any case
/// (extractUnitOrReply's strcasecmp, so the argument ends at a NUL byte:
/// "m\0x" is "m").
pub fn unit(arg: &[u8]) -> Result<f64, &'static str> {
    let arg = arg.iter().position(|&b| b == 0).map_or(arg, |n| &arg[..n]);
    let per = [(&b"m"[..], 1.0), (b"km", 1000.0), (b"ft", 0.3048), (b"mi", 1609.34)];
    per.iter().find(|(name, _)| arg.eq_ignore_ascii_case(name)).map(|&(_, m)| m).ok_or(UNIT_ERR)
}

/// A search shape around its centre, in metres (the caller multiplies the
/// arguments by the unit's metres, as Redis does).
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// BYRADIUS / GEORADIUS: the radius.
    Radius(f64),
    /// BYBOX: the box's full width (east-west) and height (north-south).
    Box { width: f64, height: f64 },
}

/// Redis's geohashBoundingBox: (min lon, min lat, max lon, max lat). The
/// longitude half-width is taken at the latitude of the box's edge farther from
/// the equator (the north edge unless the centre's latitude is negative).
fn bounding_box(lon: f64, lat: f64, shape: Shape) -> (f64, f64, f64, f64) {
    let (height, width) = match shape {
        Shape::Radius(r) => (r, r),
        Shape::Box { width, height } => (height / 2.0, width / 2.0),
    };
    let lat_delta = rad_deg(height / EARTH_RADIUS);
    let lon_delta_top = rad_deg(width / EARTH_RADIUS / deg_rad(lat + lat_delta).cos());
    let lon_delta_bottom = rad_deg(width / EARTH_RADIUS / deg_rad(lat - lat_delta).cos());
    let lon_delta = if lat < 0.0 { lon_delta_bottom } else { lon_delta_top };
    (lon - lon_delta, lat - lat_delta, lon + lon_delta, lat + lat_delta)
}

/// The score ranges `[min, max)` a search around (lon, lat) scans, in Redis's
/// order: geohashCalculateAreasByShapeWGS84's cells (centre, N, S, E, W, NE,
/// NW, SE, SW; a coarser step when a side neighbour does not reach the
/// bounding box; neighbours on a side the centre cell already covers dropped
/// from step 2 on), less membersOfAllNeighbors' skips (a dropped neighbour, or
/// one equal to the last cell scanned other than the centre: at step 1 only
/// C, N, E and NE remain, the whole world). Empty if (lon, lat) is out of range.
///
/// Within each range Redis takes members by ascending score (ties by member):
/// scanning the ranges in this order gives its unsorted reply order. Bounds are
/// the doubles Redis converts them to (see [`encode`]), so `as f64` is exact;
/// a range can then be empty (`min == max`).
pub fn search_ranges(lon: f64, lat: f64, shape: Shape) -> Vec<(u64, u64)> {
    let (min_lon, min_lat, max_lon, max_lat) = bounding_box(lon, lat, shape);
    // BYBOX estimates its step from the distance between the centre and a
    // corner.
    let radius_m = match shape {
        Shape::Radius(r) => r,
        Shape::Box { width, height } => ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt(),
    };
    let mut step = estimate_steps(radius_m, lat);
    let Some(mut centre) = encode_in(lon, lat, step, WGS84_LON, WGS84_LAT) else { return Vec::new() };
    let too_small = {
        let north = area_of(moved(centre, false, 1));
        let south = area_of(moved(centre, false, -1));
        let east = area_of(moved(centre, true, 1));
        let west = area_of(moved(centre, true, -1));
        north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon || west.lon.min > min_lon
    };
    if step > 1 && too_small {
        step -= 1;
        centre = match encode_in(lon, lat, step, WGS84_LON, WGS84_LAT) {
            Some(c) => c,
            None => return Vec::new(),
        };
    }
    let at = |dlon: i32, dlat: i32| {
        let c = if dlon == 0 { centre } else { moved(centre, true, dlon) };
        Some(if dlat == 0 { c } else { moved(c, false, dlat) })
    };
    // Centre, N, S, E, W, NE, NW, SE, SW.
    let mut cells = [at(0, 0), at(0, 1), at(0, -1), at(1, 0), at(-1, 0), at(1, 1), at(-1, 1), at(1, -1), at(-1, -1)];
    if step >= 2 {
        let a = area_of(centre);
        let mut drop = |idx: [usize; 3]| idx.iter().for_each(|&i| cells[i] = None);
        if a.lat.min < min_lat {
            drop([2, 8, 7]);
        }
        if a.lat.max > max_lat {
            drop([1, 5, 6]);
        }
        if a.lon.min < min_lon {
            drop([4, 8, 6]);
        }
        if a.lon.max > max_lon {
            drop([3, 7, 5]);
        }
    }
    let mut out = Vec::with_capacity(9);
    // Redis compares a cell with the last one scanned, unless that was the
    // centre (its index 0 doubles as "none yet").
    let mut last: Option<Cell> = None;
    for (i, cell) in cells.iter().enumerate() {
        let Some(cell) = *cell else { continue };
        if last == Some(cell) {
            continue;
        }
        out.push(score_range(cell));
        last = if i == 0 { None } else { Some(cell) };
    }
    out
}

/// Redis's geohashGetDistanceIfInRectangle: inside if the latitude distance is
/// at most half the height and the distance along the member's parallel at
/// most half the width; the distance is then the centre's to the member.
fn in_box(width: f64, height: f64, lon: f64, lat: f64, mlon: f64, mlat: f64) -> Option<f64> {
    if lat_distance(mlat, lat) > height / 2.0 {
        return None;
    }
    if distance(mlon, mlat, lon, mlat) > width / 2.0 {
        return None;
    }
    Some(distance(lon, lat, mlon, mlat))
}

/// Whether a member at (mlon, mlat) (as [`decode`]d) is inside the shape around
/// (lon, lat) (geoWithinShape): Some(its distance from the centre in metres) if
/// so. A circle includes its edge; a NaN distance counts as inside, as in Redis.
pub fn within(lon: f64, lat: f64, shape: Shape, mlon: f64, mlat: f64) -> Option<f64> {
    match shape {
        Shape::Radius(r) => {
            let d = distance(lon, lat, mlon, mlat);
            // Not `d <= r`: Redis rejects only `d > r`, so NaN is kept.
            if d > r {
                None
            } else {
                Some(d)
            }
        }
        Shape::Box { width, height } => in_box(width, height, lon, lat, mlon, mlat),
    }
}

/// C's `printf("%.Nf", v)` (glibc): exact decimal rounding half to even, which
/// Rust's formatting also does; NaN as "nan" or "-nan" by its sign.
fn c_fixed(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    format!("{v:.digits$}")
}

/// A distance as GEODIST and WITHDIST print it, from metres and the unit's
/// metres per unit: Redis 7.0's addReplyDoubleDistance is
/// `fixedpoint_d2string(d, 4)`, not "%.4f": the value times 10000 rounded to a
/// double, then to an integer by llrint (half to even), printed with four
/// decimals. It differs from "%.4f" in the last digit when the product rounds
/// across a half (36974581.95965... ft). A product out of the i64 range (NaN,
/// infinities) is x86-64's llrint result, i64::MIN: "-922337203685477.5808".
pub fn fmt_distance(metres: f64, per_unit: f64) -> String {
    let d = metres / per_unit;
    if d == 0.0 {
        return "0.0000".to_string();
    }
    const TWO_63: f64 = 9223372036854775808.0;
    let r = (d * 10000.0).round_ties_even();
    let n = if (-TWO_63..TWO_63).contains(&r) { r as i64 } else { i64::MIN };
    let sign = if n < 0 { "-" } else { "" };
    let m = n.unsigned_abs();
    format!("{sign}{}.{:04}", m / 10000, m % 10000)
}

/// A coordinate as GEOPOS and WITHCOORD print it (addReplyHumanLongDouble:
/// ld2string's human mode, "%.17Lf" with the trailing zeros and a trailing dot
/// removed, "-0" as "0"). The same text is a bulk string in RESP2 and a RESP3
/// double (`,13.36138933897018433`).
pub fn fmt_coord(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let mut s = c_fixed(v, 17);
    if s.contains('.') {
        let keep = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(keep);
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    //! Expected values were observed on a local redis-server 7.0.15 (quoted as
    //! `> command` / reply) unless a comment derives them from the C sources.
    use super::*;

    const PALERMO: (f64, f64) = (13.361389, 38.115556);
    const CATANIA: (f64, f64) = (15.087269, 37.502669);

    #[test]
    fn doc_examples() {
        // > GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
        // > ZSCORE Sicily Palermo / Catania
        let p = encode(PALERMO.0, PALERMO.1).unwrap();
        let c = encode(CATANIA.0, CATANIA.1).unwrap();
        assert_eq!(p, 3479099956230698);
        assert_eq!(c, 3479447370796909);
        // > GEOHASH Sicily Palermo Catania
        assert_eq!(hash_string(p), "sqc8b49rny0");
        assert_eq!(hash_string(c), "sqdtr74hyu0");
        // > GEOPOS Sicily Palermo Catania
        let (plon, plat) = decode(p);
        let (clon, clat) = decode(c);
        assert_eq!(fmt_coord(plon), "13.36138933897018433");
        assert_eq!(fmt_coord(plat), "38.11555639549629859");
        assert_eq!(fmt_coord(clon), "15.08726745843887329");
        assert_eq!(fmt_coord(clat), "37.50266842333162032");
        // > GEODIST Sicily Palermo Catania [KM | Mi | ft]
        let d = distance(plon, plat, clon, clat);
        assert_eq!(fmt_distance(d, 1.0), "166274.1516");
        assert_eq!(fmt_distance(d, unit(b"KM").unwrap()), "166.2742");
        assert_eq!(fmt_distance(d, unit(b"Mi").unwrap()), "103.3182");
        assert_eq!(fmt_distance(d, unit(b"ft").unwrap()), "545518.8700");
        // > GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 KM WITHCOORD WITHDIST WITHHASH
        // 1) Palermo 190.4424 3479099956230698 ...  2) Catania 56.4413 3479447370796909 ...
        let shape = Shape::Radius(200.0 * 1000.0);
        let dp = within(15.0, 37.0, shape, plon, plat).unwrap();
        let dc = within(15.0, 37.0, shape, clon, clat).unwrap();
        assert_eq!(fmt_distance(dp, 1000.0), "190.4424");
        assert_eq!(fmt_distance(dc, 1000.0), "56.4413");
        // Both in the scan of the ranges, Palermo first as in Redis's reply.
        let order: Vec<u64> = search_ranges(15.0, 37.0, shape)
            .into_iter()
            .flat_map(|(lo, hi)| [p, c].into_iter().filter(move |&s| lo <= s && s < hi))
            .collect();
        assert_eq!(order, [p, c]);
    }

    #[test]
    fn edges_of_the_world() {
        // > GEOADD e 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se
        //   -180 85.05112878 nw 0 0 zero -0.0000001 -0.0000001 negtiny 179.99999 85.0511 nearne
        // ZSCORE / GEOHASH / GEOPOS of each:
        // (position, score, GEOHASH, GEOPOS longitude and latitude)
        type Edge = ((f64, f64), u64, &'static str, &'static str, &'static str);
        let cases: [Edge; 7] = [
            ((180.0, LAT_MAX), 13510798882111488, "bp05b5048p0", "180", "85.0511287799999991"),
            ((-180.0, LAT_MIN), 0, "00bh0hbj200", "-179.99999731779098511", "-85.05112751263942528"),
            ((180.0, LAT_MIN), 9007199254740992, "00bh0hbj200", "180", "-85.05112751263942528"),
            ((-180.0, LAT_MAX), 4503599627370496, "bp05b5048p0", "-179.99999731779098511", "85.0511287799999991"),
            ((0.0, 0.0), 3377699720527872, "s0000000000", "0.00000268220901489", "0.00000126736058093"),
            ((-0.0000001, -0.0000001), 1125899906842623, "7zzzzzzzzz0", "-0.00000268220901489", "-0.00000126736058093"),
            ((179.99999, 85.0511), 4503599627370424, "zzpgzgpfxf0", "179.99999195337295532", "85.05109963070665913"),
        ];
        for ((lon, lat), score, hash, x, y) in cases {
            assert_eq!(encode(lon, lat), Some(score), "{lon},{lat}");
            assert_eq!(hash_string(score), hash, "{lon},{lat}");
            let (dlon, dlat) = decode(score);
            assert_eq!((fmt_coord(dlon).as_str(), fmt_coord(dlat).as_str()), (x, y), "{lon},{lat}");
        }
        // The top edges: cell number 2^26, one bit past the 52 (3 << 52 above).
        assert_eq!(decode(3 << 52), (LONG_MAX, LAT_MAX));
        // > GEODIST e ne sw / ne nw / zero negtiny / ne se
        let d = |a: u64, b: u64| {
            let ((x1, y1), (x2, y2)) = (decode(a), decode(b));
            fmt_distance(distance(x1, y1, x2, y2), 1.0)
        };
        assert_eq!(d(13510798882111488, 0), "18919844.5891");
        assert_eq!(d(13510798882111488, 4503599627370496), "0.0257");
        assert_eq!(d(3377699720527872, 1125899906842623), "0.6599");
        assert_eq!(d(13510798882111488, 9007199254740992), "18919844.5891");
        // Past 2^53 the score is a double: > GEOADD t 180 32.094552257062986 m;
        // ZSCORE t m -> 10221064471728208 (the cell's number is ...209; the
        // latitude's lowest bit is lost, GEOPOS answers the cell below:
        // 180 32.09454933694863854, GEOHASH 8j8n848h210).
        let s = encode(180.0, 32.094552257062986).unwrap();
        assert_eq!(s, 10221064471728208);
        assert_eq!(fmt_coord(decode(s).1), "32.09454933694863854");
        assert_eq!(hash_string(s), "8j8n848h210");
        // -0.0 is a valid longitude: > GEOADD n 0 -0.0 z; ZSCORE n z -> 3377699720527872.
        assert_eq!(encode(-0.0, -0.0), Some(3377699720527872));
        // Just outside.
        for (lon, lat) in [(180.0000001, 0.0), (-180.0000001, 0.0), (0.0, 85.0511287801), (0.0, -85.05112879)] {
            assert_eq!(encode(lon, lat), None, "{lon},{lat}");
        }
        assert_eq!(encode(f64::NAN, 0.0), None);
        assert_eq!(encode(f64::INFINITY, 0.0), None);
    }

    #[test]
    fn scores_redis_never_writes() {
        // Sorted-set scores set by ZADD decode through C's (uint64_t):
        // > ZADD n -5 neg 1.5 frac 1e20 big; GEOPOS / GEOHASH n neg frac big
        // neg: 180 85.0511287799999991 bp05b5048p0 (-5 is 2^64 - 5 on x86-64)
        let neg = -5i64 as u64;
        assert_eq!(decode(neg), (LONG_MAX, LAT_MAX));
        assert_eq!(hash_string(neg), "bp05b5048p0");
        // frac: -179.99999731779098511 -85.05112497791824921 00bh0hbj210 (1.5 is 1)
        let (x, y) = decode(1);
        assert_eq!((fmt_coord(x).as_str(), fmt_coord(y).as_str()), ("-179.99999731779098511", "-85.05112497791824921"));
        assert_eq!(hash_string(1), "00bh0hbj210");
        // big: as 0 (x86-64's conversion of a double past 2^64).
        assert_eq!(hash_string(0), "00bh0hbj200");
        // > ZADD n2 -1e30 a -inf i; GEOPOS n2 a i -> 180 -85.05112751263942528
        // (x86-64 converts both to 2^63: i64::MIN).
        let (x, y) = decode(i64::MIN as u64);
        assert_eq!((fmt_coord(x).as_str(), fmt_coord(y).as_str()), ("180", "-85.05112751263942528"));
        // > ZADD n2 1e19 b -> 180 85.0511287799999991 (1e19 < 2^64: exact).
        assert_eq!(decode(10_000_000_000_000_000_000), (LONG_MAX, LAT_MAX));
        // Every bit set: both cell numbers wrap to 0 at the "+1" and clamp.
        assert_eq!(decode(u64::MAX), (LONG_MAX, LAT_MAX));
    }

    #[test]
    fn errors_and_units() {
        // > GEOADD k 181 10 a / 10 85.06 a / inf 0 a / -inf 0 a / 1e30 0 a / -0.0 100 a
        assert_eq!(invalid_pair(181.0, 10.0), "ERR invalid longitude,latitude pair 181.000000,10.000000");
        assert_eq!(invalid_pair(10.0, 85.06), "ERR invalid longitude,latitude pair 10.000000,85.060000");
        assert_eq!(invalid_pair(f64::INFINITY, 0.0), "ERR invalid longitude,latitude pair inf,0.000000");
        assert_eq!(invalid_pair(f64::NEG_INFINITY, 0.0), "ERR invalid longitude,latitude pair -inf,0.000000");
        assert_eq!(
            invalid_pair(1e30, 0.0),
            "ERR invalid longitude,latitude pair 1000000000000000019884624838656.000000,0.000000"
        );
        assert_eq!(invalid_pair(-0.0, 100.0), "ERR invalid longitude,latitude pair -0.000000,100.000000");
        // > GEOADD k -180.0000001 0 a / 0 -85.05112879 a
        assert_eq!(invalid_pair(-180.0000001, 0.0), "ERR invalid longitude,latitude pair -180.000000,0.000000");
        assert_eq!(invalid_pair(0.0, -85.05112879), "ERR invalid longitude,latitude pair 0.000000,-85.051129");
        // > GEODIST Sicily Palermo Catania yd / m\0x (accepted as m)
        assert_eq!(unit(b"yd"), Err("ERR unsupported unit provided. please use M, KM, FT, MI"));
        assert_eq!(unit(b"m\0x"), Ok(1.0));
        assert_eq!(unit(b""), Err(UNIT_ERR));
        assert_eq!(unit(b"\0"), Err(UNIT_ERR));
        assert_eq!(unit(b"kms"), Err(UNIT_ERR));
        for (u, per) in [("m", 1.0), ("M", 1.0), ("km", 1000.0), ("kM", 1000.0), ("FT", 0.3048), ("mI", 1609.34)] {
            assert_eq!(unit(u.as_bytes()), Ok(per), "{u}");
        }
    }

    #[test]
    fn formats() {
        // fixedpoint_d2string: llrint(d * 10000), half to even.
        assert_eq!(fmt_distance(0.03125, 1.0), "0.0312");
        assert_eq!(fmt_distance(0.09375, 1.0), "0.0938");
        assert_eq!(fmt_distance(0.00005, 1.0), "0.0000");
        // 0.00015 * 10000 is 1.4999999999999998.
        assert_eq!(fmt_distance(0.00015, 1.0), "0.0001");
        assert_eq!(fmt_distance(12.5, 1.0), "12.5000");
        assert_eq!(fmt_distance(0.0, 1.0), "0.0000");
        assert_eq!(fmt_distance(-0.0, 1.0), "0.0000");
        assert_eq!(fmt_distance(-0.00001, 1.0), "0.0000");
        assert_eq!(fmt_distance(-1.5, 1.0), "-1.5000");
        assert_eq!(fmt_distance(f64::NAN, 1.0), "-922337203685477.5808");
        assert_eq!(fmt_distance(f64::INFINITY, 1.0), "-922337203685477.5808");
        assert_eq!(fmt_distance(1000.0, 0.3048), "3280.8399");
        // (A distance where this differs from "%.4f": search_replies_match_redis.)
        assert_eq!(fmt_coord(180.0), "180");
        assert_eq!(fmt_coord(-0.0), "0");
        assert_eq!(fmt_coord(-1e-30), "0");
        assert_eq!(fmt_coord(0.5), "0.5");
        assert_eq!(fmt_coord(-12.25), "-12.25");
        // 2^-18 = 0.000003814697265625: 18 decimals, the tie goes to even.
        assert_eq!(fmt_coord(3.814697265625e-06), "0.00000381469726562");
        assert_eq!(fmt_coord(f64::INFINITY), "inf");
    }

    #[test]
    fn distance_shortcut_on_a_meridian() {
        // Two members on the same longitude: Redis 7.0 answers R * |dlat| (in
        // radians), not haversine, which here is one ulp more
        // (7171836.978109109). With the radius set to the shortcut's value the
        // member is found:
        // > GEOADD s -160.36185798251785 53.72241662717914 a -160.36185798251785 -10.757269135191464 b
        // > GEOSEARCH s FROMMEMBER a BYRADIUS 7171836.978109108 m -> a, b
        let (xa, ya) = decode(encode(-160.36185798251785, 53.72241662717914).unwrap());
        let (xb, yb) = decode(encode(-160.36185798251785, -10.757269135191464).unwrap());
        assert_eq!(xa, xb);
        assert_eq!(distance(xa, ya, xb, yb), 7171836.978109108);
        assert!(within(xa, ya, Shape::Radius(7171836.978109108), xb, yb).is_some());
        // And where haversine is one ulp less (8188365.484284749), Redis's
        // distance (8188365.48428475) is over that radius:
        // > GEOADD s -36.29326771216313 -1.6490367260386876 a -36.29326771216313 -75.26800576529487 b
        // > GEOSEARCH s FROMMEMBER a BYRADIUS 8188365.484284749 m -> a
        let (xa, ya) = decode(encode(-36.29326771216313, -1.6490367260386876).unwrap());
        let (xb, yb) = decode(encode(-36.29326771216313, -75.26800576529487).unwrap());
        assert_eq!(distance(xa, ya, xb, yb), 8188365.48428475);
        assert_eq!(within(xa, ya, Shape::Radius(8188365.484284749), xb, yb), None);
    }

    #[test]
    fn search_ranges_by_hand() {
        // Radius 0: step 26, and every side of the centre cell reaches past the
        // (empty) bounding box, so all neighbours are dropped: only the centre's
        // own score.
        let p = encode(PALERMO.0, PALERMO.1).unwrap();
        let (x, y) = decode(p);
        assert_eq!(search_ranges(x, y, Shape::Radius(0.0)), vec![(p, p + 1)]);
        // 10000 km: 1e7 doubles twice to pass 20037726.37, step 3 - 2 = 1, and
        // at step 1 nothing is dropped: the four quarters of the world. The
        // centre (0, 0) is in the quarter with both cell numbers 1 (bits 0b11);
        // N is 0b10, E 0b01, NE 0b00; S, W, NW, SE and SW repeat the cell
        // scanned before them.
        let q = 1u64 << 50;
        assert_eq!(
            search_ranges(0.0, 0.0, Shape::Radius(1e7)),
            vec![(3 * q, 4 * q), (2 * q, 3 * q), (q, 2 * q), (0, q)]
        );
        // 200 km around (15, 37): 200000 doubles 7 times, step 8 - 2 = 6 (cells
        // of 2^40 scores); the neighbours on three sides are dropped.
        assert_eq!(
            search_ranges(15.0, 37.0, Shape::Radius(200_000.0)),
            vec![
                (3475556255399936, 3476655767027712),
                (3478854790283264, 3479954301911040),
                (3477755278655488, 3478854790283264),
                (3481053813538816, 3482153325166592),
            ]
        );
        // 40 km around Palermo: step 8, centre and south.
        assert_eq!(
            search_ranges(PALERMO.0, PALERMO.1, Shape::Radius(40_000.0)),
            vec![(3479060948713472, 3479129668190208), (3478992229236736, 3479060948713472)]
        );
        // A 200 x 50 km box: its step comes from the half diagonal (103 km): 7.
        assert_eq!(
            search_ranges(12.0, 37.0, Shape::Box { width: 200_000.0, height: 50_000.0 }),
            vec![
                (3475831133306880, 3476106011213824),
                (3478854790283264, 3479129668190208),
                (3469783819354112, 3470058697261056),
                (3472807476330496, 3473082354237440),
            ]
        );
        // 300 km at latitude 80: 6 steps, one less past 66 degrees, one less as
        // the north neighbour does not reach the box: step 4, two cells.
        assert_eq!(
            search_ranges(0.0, 80.0, Shape::Radius(300_000.0)),
            vec![(3747135627460608, 3764727813505024), (2234207627640832, 2251799813685248)]
        );
        // Out-of-range centres scan nothing.
        assert!(search_ranges(181.0, 0.0, Shape::Radius(1.0)).is_empty());
    }

    /// A deterministic point set: `n` points as integer micro-degrees from a
    /// 64-bit LCG (the same in the script that seeded redis-server), over
    /// [lon0, lon0 + dlon) x [lat0, lat0 + dlat).
    fn points(seed: u64, n: usize, lon0: f64, dlon: u64, lat0: f64, dlat: u64) -> Vec<(f64, f64)> {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s >> 33
        };
        (0..n)
            .map(|_| {
                let x = (next() % (dlon * 1_000_000)) as f64 / 1e6 + lon0;
                let y = (next() % (dlat * 1_000_000)) as f64 / 1e6 + lat0;
                (x, y)
            })
            .collect()
    }

    /// A search as the caller runs it: the ranges in order, each member of a
    /// range by (score, name), kept if within the shape. Members are named by
    /// their index, as in the seeding script ("p<i>").
    fn search(pts: &[(f64, f64)], lon: f64, lat: f64, shape: Shape) -> Vec<usize> {
        let mut by_score: Vec<(u64, String, usize)> =
            pts.iter().enumerate().map(|(i, &(x, y))| (encode(x, y).unwrap(), format!("p{i}"), i)).collect();
        by_score.sort();
        let mut out = Vec::new();
        for (lo, hi) in search_ranges(lon, lat, shape) {
            for (score, _, i) in by_score.iter().filter(|(s, _, _)| lo <= *s && *s < hi) {
                let (mlon, mlat) = decode(*score);
                if within(lon, lat, shape, mlon, mlat).is_some() {
                    out.push(*i);
                }
            }
        }
        out
    }

    /// Every point inside the shape, whatever the cells.
    fn brute(pts: &[(f64, f64)], lon: f64, lat: f64, shape: Shape) -> Vec<usize> {
        (0..pts.len())
            .filter(|&i| {
                let (mlon, mlat) = decode(encode(pts[i].0, pts[i].1).unwrap());
                within(lon, lat, shape, mlon, mlat).is_some()
            })
            .collect()
    }

    #[test]
    fn search_matches_redis() {
        // Three sets of 300 points; the seeding script sent GEOADD <set> <x> <y>
        // p<i> for each, then the GEOSEARCH quoted with each case. Expected
        // lists are Redis's replies (no ASC/DESC: its own scan order) as indices.
        let sic = points(7, 300, 10.0, 8, 34.0, 6);
        let pole = points(11, 300, -180.0, 360, 70.0, 15);
        let world = points(13, 300, -180.0, 360, -85.0, 170);
        assert_eq!(sic[0], (13.165278, 34.263231));
        assert_eq!(pole[0], (-104.786504, 84.486851));
        assert_eq!(world[0], (-50.504219000000006, -71.90133900000001));
        let km = |r: f64| Shape::Radius(r * 1000.0);
        let bx = |w: f64, h: f64| Shape::Box { width: w * 1000.0, height: h * 1000.0 };
        // (set, centre longitude and latitude, shape, Redis's reply)
        type Case<'a> = (&'a [(f64, f64)], f64, f64, Shape, &'static [usize]);
        let cases: [Case; 12] = [
            // > GEOSEARCH sic FROMLONLAT 13.361389 38.115556 BYRADIUS 40 km
            (&sic, PALERMO.0, PALERMO.1, km(40.0), &[290, 86, 193, 298]),
            // > GEOSEARCH sic FROMLONLAT 13.361389 38.115556 BYRADIUS 60 km
            (&sic, PALERMO.0, PALERMO.1, km(60.0), &[228, 54, 290, 86, 156, 193, 131, 143, 298, 132, 108, 284, 210]),
            // > GEOSEARCH sic FROMLONLAT 14 36 BYRADIUS 100 km
            (
                &sic,
                14.0,
                36.0,
                km(100.0),
                &[275, 36, 24, 62, 160, 22, 27, 273, 133, 223, 28, 46, 125, 259, 183, 189, 80, 222, 267, 196, 121, 285],
            ),
            // > GEOSEARCH sic FROMLONLAT 12 37 BYBOX 100 60 km
            (&sic, 12.0, 37.0, bx(100.0, 60.0), &[100, 61]),
            // > GEOSEARCH sic FROMLONLAT 12 37 BYBOX 200 50 km
            (&sic, 12.0, 37.0, bx(200.0, 50.0), &[100, 115, 61, 39]),
            // > GEOSEARCH pole FROMLONLAT 0 80 BYRADIUS 300 km
            (&pole, 0.0, 80.0, km(300.0), &[90, 169, 176, 197, 256, 263, 210]),
            // > GEOSEARCH pole FROMLONLAT 100 82 BYBOX 600 300 km
            (&pole, 100.0, 82.0, bx(600.0, 300.0), &[40, 46, 267, 237, 3, 168, 146, 111, 127]),
            // > GEOSEARCH pole FROMLONLAT 179.5 75 BYRADIUS 200 km
            (&pole, 179.5, 75.0, km(200.0), &[37, 128, 213]),
            // > GEOSEARCH pole FROMLONLAT 0 84 BYRADIUS 500 km
            (
                &pole,
                0.0,
                84.0,
                km(500.0),
                &[
                    90, 169, 142, 102, 16, 218, 81, 70, 64, 250, 115, 141, 83, 223, 180, 24, 133, 191, 149, 12, 118,
                    197, 256, 263, 210,
                ],
            ),
            // South of the equator the box takes its width at the south edge:
            // > GEOSEARCH world FROMLONLAT 61.0 -76.5 BYRADIUS 500 km
            (&world, 61.0, -76.5, km(500.0), &[176]),
            // > GEOSEARCH world FROMLONLAT -117.5 -77.3 BYBOX 1000 500 km
            (&world, -117.5, -77.3, bx(1000.0, 500.0), &[9, 134]),
            // > GEOSEARCH world FROMLONLAT 147.5 -75.1 BYRADIUS 300 km
            (&world, 147.5, -75.1, km(300.0), &[21, 293]),
        ];
        for (pts, lon, lat, shape, want) in cases {
            assert_eq!(search(pts, lon, lat, shape), want, "{lon},{lat} {shape:?}");
            // None of these misses a member inside the shape.
            let mut found = want.to_vec();
            found.sort();
            assert_eq!(brute(pts, lon, lat, shape), found, "{lon},{lat} {shape:?}");
        }
        // > GEOSEARCH sic FROMLONLAT 14 37 BYRADIUS 1000 km: all 300, in scan order.
        let all = search(&sic, 14.0, 37.0, km(1000.0));
        assert_eq!(all.len(), 300);
        assert_eq!(all[..12], [47, 274, 65, 19, 224, 112, 261, 167, 122, 93, 246, 102]);
        // Redis misses members across the antimeridian: p294 (-170.075642,
        // 51.365687) is 925.5478 km from (180, 46.2), p55 1643.5677, p210
        // 1531.0118, p291 1884.8689 (> GEODIST with a member added there), all
        // inside the shapes below and absent from Redis's replies.
        // > GEOSEARCH world FROMLONLAT 180.0 46.2 BYBOX 2000 2000 km -> p131
        assert_eq!(search(&world, 180.0, 46.2, bx(2000.0, 2000.0)), [131]);
        assert_eq!(brute(&world, 180.0, 46.2, bx(2000.0, 2000.0)), [131, 294]);
        // > GEOSEARCH world FROMLONLAT 180.0 46.2 BYRADIUS 2000 km -> p65 p131
        assert_eq!(search(&world, 180.0, 46.2, km(2000.0)), [65, 131]);
        assert_eq!(brute(&world, 180.0, 46.2, km(2000.0)), [55, 65, 131, 210, 291, 294]);
        let (x, y) = decode(encode(world[294].0, world[294].1).unwrap());
        let (cx, cy) = decode(encode(180.0, 46.2).unwrap());
        assert_eq!(fmt_distance(distance(x, y, cx, cy), 1000.0), "925.5478");
    }

    #[test]
    fn search_replies_match_redis() {
        // > GEOSEARCH pole FROMLONLAT 0 80 BYRADIUS 300 km WITHDIST WITHHASH WITHCOORD
        let pole = points(11, 300, -180.0, 360, 70.0, 15);
        let want: [(usize, &str, u64, &str, &str); 7] = [
            (90, "167.6980", 3752008708226967, "2.7129015326499939", "81.44328652551345726"),
            (169, "205.2252", 3754502416015156, "10.31713038682937622", "80.63639099581297387"),
            (176, "228.5898", 2244971611854803, "-7.22268730401992798", "78.44705854580902837"),
            (197, "239.4864", 2249993028607734, "-4.54045683145523071", "82.03472568722780522"),
            (256, "269.9350", 2250001869949413, "-4.80421990156173706", "82.31386185490001139"),
            (263, "95.3887", 2250411564391654, "-0.50993353128433228", "80.85341382147556999"),
            (210, "203.1941", 2250675668287788, "-0.3110155463218689", "81.82619924689132063"),
        ];
        for (i, dist, hash, x, y) in want {
            let score = encode(pole[i].0, pole[i].1).unwrap();
            assert_eq!(score, hash, "p{i}");
            let (mlon, mlat) = decode(score);
            let d = within(0.0, 80.0, Shape::Radius(300_000.0), mlon, mlat).unwrap();
            assert_eq!(fmt_distance(d, 1000.0), dist, "p{i}");
            assert_eq!((fmt_coord(mlon).as_str(), fmt_coord(mlat).as_str()), (x, y), "p{i}");
        }
        // > GEOSEARCH sic FROMLONLAT 12 37 BYBOX 200 50 km WITHDIST
        // p100 35.7324, p115 54.2892, p61 17.9450, p39 72.9696
        let sic = points(7, 300, 10.0, 8, 34.0, 6);
        let shape = Shape::Box { width: 200_000.0, height: 50_000.0 };
        for (i, dist) in [(100, "35.7324"), (115, "54.2892"), (61, "17.9450"), (39, "72.9696")] {
            let (mlon, mlat) = decode(encode(sic[i].0, sic[i].1).unwrap());
            assert_eq!(fmt_distance(within(12.0, 37.0, shape, mlon, mlat).unwrap(), 1000.0), dist, "p{i}");
        }
        // Where llrint(d * 10000) and "%.4f" part ways (a feet distance):
        // > GEOSEARCH world FROMLONLAT -180 -85.05112878 BYRADIUS 41792991.7819919 ft WITHDIST WITHHASH
        //   ... p149 36974581.9596 3580745213816957 ...
        let (mlon, mlat) = decode(3580745213816957);
        let d = distance(-180.0, LAT_MIN, mlon, mlat);
        assert_eq!(fmt_distance(d, 0.3048), "36974581.9596");
        assert_eq!(format!("{:.4}", d / 0.3048), "36974581.9597");
    }
}
