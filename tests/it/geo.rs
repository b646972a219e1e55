//! GEO commands through the real binary, against redis-server: every reply
//! byte for byte (positions, hashes, distances, search results in Redis's
//! order, what STORE and STOREDIST write), errors in Redis's order.

use crate::common::{fuzz_seed, same_lines, same_replies, Oracle, Server, XorShift};

fn line(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| p.to_string()).collect()
}

/// Seeded points scattered around a few places (near the poles' limits and
/// the antimeridian too), then searches of every form and option around
/// members and coordinates, by radius and by box, with COUNT (ANY), ASC/DESC
/// and WITH*, and stores of their results read back with their scores.
#[test]
fn geo_matches_redis() {
    let seed = fuzz_seed("geo_matches_redis");
    let mut rng = XorShift::new(seed);
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let places = [(13.361389, 38.115556), (-122.4, 37.7), (179.9, 0.0), (-179.95, -10.0), (0.0, 85.0), (10.0, -84.9)];
    let units = ["m", "km", "ft", "mi", "KM"];
    for round in 0..12 {
        let mut cmds = vec![line(&["FLUSHALL"])];
        let mut members = Vec::new();
        for (p, &(lon, lat)) in places.iter().enumerate() {
            let mut add = line(&["GEOADD", "g"]);
            for i in 0..40 {
                let spread = [0.01, 0.5, 5.0][rng.below(3)];
                let x = (lon + (rng.next() % 20_001) as f64 / 10_000.0 * spread - spread).clamp(-180.0, 180.0);
                let y = (lat + (rng.next() % 20_001) as f64 / 10_000.0 * spread - spread).clamp(-85.05, 85.05);
                let m = format!("p{p}_{i}");
                add.extend([format!("{x:.6}"), format!("{y:.6}"), m.clone()]);
                members.push(m);
            }
            cmds.push(add);
        }
        cmds.push(line(&["GEOADD", "g", "CH", "XX", "13.5", "38.2", "p0_1", "1", "1", "nobody"]));
        cmds.push(line(&["GEOADD", "g", "NX", "13.5", "38.2", "p0_2", "1", "1", "somebody"]));
        for _ in 0..40 {
            let m = members[rng.below(members.len())].clone();
            let (lon, lat) = places[rng.below(places.len())];
            let u = units[rng.below(units.len())];
            let radius = [0.5, 3.0, 50.0, 400.0, 3000.0][rng.below(5)];
            let in_unit = |metres_km: f64| match u.to_ascii_lowercase().as_str() {
                "m" => metres_km * 1000.0,
                "km" => metres_km,
                "ft" => metres_km * 3280.84,
                _ => metres_km / 1.60934,
            };
            let rad = format!("{}", in_unit(radius));
            let mut opts: Vec<String> = Vec::new();
            for o in ["WITHDIST", "WITHHASH", "WITHCOORD"] {
                if rng.chance(30) {
                    opts.push(o.into());
                }
            }
            match rng.below(3) {
                0 => opts.push("ASC".into()),
                1 => opts.push("DESC".into()),
                _ => {}
            }
            if rng.chance(40) {
                opts.extend(["COUNT".to_string(), (1 + rng.below(15)).to_string()]);
                if rng.chance(40) {
                    opts.push("ANY".into());
                }
            }
            let from: Vec<String> = if rng.chance(50) {
                line(&["FROMMEMBER", &m])
            } else {
                line(&["FROMLONLAT", &lon.to_string(), &lat.to_string()])
            };
            let by: Vec<String> = if rng.chance(50) {
                line(&["BYRADIUS", &rad, u])
            } else {
                let h = format!("{}", in_unit(radius * [0.5, 1.0, 2.0][rng.below(3)]));
                line(&["BYBOX", &rad, &h, u])
            };
            let mut c = match rng.below(8) {
                0 => line(&["GEORADIUS", "g", &lon.to_string(), &lat.to_string(), &rad, u]),
                1 => line(&["GEORADIUS_RO", "g", &lon.to_string(), &lat.to_string(), &rad, u]),
                2 => line(&["GEORADIUSBYMEMBER", "g", &m, &rad, u]),
                3 => line(&["GEORADIUSBYMEMBER_RO", "g", &m, &rad, u]),
                _ => [line(&["GEOSEARCH", "g"]), from.clone(), by.clone()].concat(),
            };
            c.extend(opts.clone());
            cmds.push(c);
            // Stores: the same searches without WITH*.
            let plain: Vec<String> = opts.into_iter().filter(|o| !o.starts_with("WITH")).collect();
            match rng.below(4) {
                0 => {
                    let mut c = [line(&["GEOSEARCHSTORE", "{g}dst", "g"]), from, by, plain].concat();
                    if rng.chance(50) {
                        c.push("STOREDIST".into());
                    }
                    cmds.push(c);
                    cmds.push(line(&["ZRANGE", "{g}dst", "0", "-1", "WITHSCORES"]));
                }
                1 => {
                    let store = if rng.chance(50) { "STORE" } else { "STOREDIST" };
                    let mut c = line(&["GEORADIUSBYMEMBER", "g", &m, &rad, u]);
                    c.extend(plain);
                    c.extend(line(&[store, "dst2"]));
                    cmds.push(c);
                    cmds.push(line(&["ZRANGE", "dst2", "0", "-1", "WITHSCORES"]));
                }
                _ => {}
            }
            let m2 = members[rng.below(members.len())].clone();
            cmds.push(line(&["GEODIST", "g", &m, &m2, u]));
            cmds.push(line(&["GEOPOS", "g", &m, "nobody", &m2]));
            cmds.push(line(&["GEOHASH", "g", &m, "nobody"]));
        }
        same_replies(&mut n, &mut r, &cmds, &format!("seed {seed} round {round}"));
    }
}

/// Errors, in Redis's order, and the edges of what is accepted.
#[test]
fn geo_errors_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let lines: &[&[&str]] = &[
        &["SET", "str", "x"],
        &["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
        &["GEOADD", "g", "181", "0", "x"],
        &["GEOADD", "g", "0", "85.06", "x"],
        &["GEOADD", "g", "180", "85.05112878", "edge"],
        &["GEOADD", "g", "x", "0", "m"],
        &["GEOADD", "g", "NX", "XX", "0", "0", "m"],
        &["GEOADD", "g", "0", "0"],
        &["GEOADD", "g", "CH", "0", "0", "m", "1"],
        &["GEOADD", "str", "0", "0", "m"],
        &["GEOPOS", "g", "Palermo", "Catania", "edge", "nope"],
        &["GEOPOS", "missing", "a"],
        &["GEOPOS", "str", "a"],
        &["GEOHASH", "g", "Palermo", "Catania", "edge", "nope"],
        &["GEOHASH", "missing", "a"],
        &["GEODIST", "g", "Palermo", "Catania"],
        &["GEODIST", "g", "Palermo", "Catania", "km"],
        &["GEODIST", "g", "Palermo", "Catania", "MI"],
        &["GEODIST", "g", "Palermo", "Catania", "parsec"],
        &["GEODIST", "g", "Palermo", "nope"],
        &["GEODIST", "missing", "a", "b"],
        &["GEODIST", "g", "a", "b", "km", "x"],
        &[
            "GEOSEARCH",
            "g",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "ASC",
            "WITHDIST",
            "WITHCOORD",
            "WITHHASH",
        ],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "DESC"],
        &["GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", "200", "km"],
        &["GEOSEARCH", "g", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
        &["GEOSEARCH", "g", "BYRADIUS", "200", "km"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "x", "km"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "km"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "x", "km"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ANY"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "0"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "x"],
        &["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STORE", "d"],
        &["GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", "200", "km"],
        &["GEOSEARCH", "str", "FROMMEMBER", "x", "BYRADIUS", "200", "km"],
        &["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST"],
        &["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"],
        &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
        &["GEOSEARCHSTORE", "d", "missing", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
        &["EXISTS", "d"],
        &["GEORADIUS", "g", "15", "37", "200", "km", "WITHDIST", "STORE", "d"],
        &["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d"],
        &["ZRANGE", "d", "0", "-1", "WITHSCORES"],
        &["GEORADIUS_RO", "g", "15", "37", "200", "km", "STORE", "d"],
        &["GEORADIUS", "g", "200", "37", "200", "km"],
        &["GEORADIUSBYMEMBER", "g", "nope", "200", "km"],
        &["GEORADIUSBYMEMBER", "missing", "nope", "x", "km"],
        &["GEORADIUSBYMEMBER", "g", "Palermo", "200", "km", "COUNT", "1", "WITHDIST"],
        &["GEORADIUSBYMEMBER_RO", "g", "Palermo", "200", "km", "STOREDIST", "d"],
        &["GEORADIUS", "str", "15", "37", "200", "km"],
    ];
    same_lines(&mut n, &mut r, lines);
}
