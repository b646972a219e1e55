//! Streams through the real binary, against redis-server: entries, ids,
//! trimming (by node, as Redis trims), consumer groups and their pending
//! entries, XINFO, errors; blocking reads and their wake-ups; kill -9.
//!
//! Replies are compared byte for byte, except the values that are times
//! (idle times, seen and delivery times): those are blanked in both replies
//! before comparing, and `radix-tree-nodes` (Redis's radix tree's internal
//! node count, which NeoKV does not keep).

use std::thread;
use std::time::{Duration, Instant};

use crate::common::{
    blocked, encode_pipeline, fuzz_seed, reply, same_lines, same_replies, wait_blocked, Oracle, Raw, Server, XorShift,
};

/// A parsed reply, enough to blank some values.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Line(u8, Vec<u8>),
    Bulk(Option<Vec<u8>>),
    Agg(u8, Option<Vec<V>>),
}

fn parse(b: &[u8], at: &mut usize) -> V {
    let t = b[*at];
    let end = *at + b[*at..].windows(2).position(|w| w == b"\r\n").expect("a line");
    let line = b[*at + 1..end].to_vec();
    *at = end + 2;
    let n = || String::from_utf8_lossy(&line).parse::<i64>().unwrap();
    match t {
        b'$' | b'=' | b'!' => {
            if n() < 0 {
                return V::Bulk(None);
            }
            let data = b[*at..*at + n() as usize].to_vec();
            *at += n() as usize + 2;
            V::Bulk(Some(data))
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            if n() < 0 {
                return V::Agg(t, None);
            }
            let k = if matches!(t, b'%' | b'|') { 2 * n() } else { n() };
            V::Agg(t, Some((0..k).map(|_| parse(b, at)).collect()))
        }
        _ => V::Line(t, line),
    }
}

const BLANK: V = V::Line(b'?', Vec::new());

fn is_bulk(v: &V, s: &str) -> bool {
    matches!(v, V::Bulk(Some(b)) if b == s.as_bytes())
}

/// Blank the time values of a stream reply (see the module doc).
fn blank_times(cmd: &[String], v: &mut V) {
    let name = cmd[0].to_ascii_lowercase();
    let sub = cmd.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    let V::Agg(_, Some(items)) = v else { return };
    // Maps as flat arrays: the value after these names.
    for i in 0..items.len().saturating_sub(1) {
        if ["idle", "seen-time", "radix-tree-nodes"].iter().any(|k| is_bulk(&items[i], k)) {
            items[i + 1] = BLANK;
        }
    }
    match (name.as_str(), sub.as_str()) {
        // Extended XPENDING: [id, consumer, idle, deliveries].
        ("xpending", _) if cmd.len() > 3 => {
            for e in items.iter_mut() {
                if let V::Agg(_, Some(f)) = e {
                    f[2] = BLANK;
                }
            }
        }
        ("xinfo", _) => {
            for e in items.iter_mut() {
                blank_times(cmd, e);
                if let V::Agg(_, Some(f)) = e {
                    // FULL's pending lists: [id, consumer, time, count] and [id, time, count].
                    for p in f.iter_mut() {
                        if let V::Agg(_, Some(rows)) = p {
                            for row in rows.iter_mut() {
                                blank_times(cmd, row);
                                if let V::Agg(_, Some(x)) = row {
                                    if x.len() == 4 && matches!(x[2], V::Line(b':', _)) {
                                        x[2] = BLANK;
                                    }
                                    if x.len() == 3 && matches!(x[1], V::Line(b':', _)) {
                                        x[1] = BLANK;
                                    }
                                    for y in x.iter_mut() {
                                        blank_times(cmd, y);
                                        if let V::Agg(_, Some(z)) = y {
                                            for w in z.iter_mut() {
                                                if let V::Agg(_, Some(q)) = w {
                                                    if q.len() == 3 && matches!(q[1], V::Line(b':', _)) {
                                                        q[1] = BLANK;
                                                    }
                                                    if q.len() == 4 && matches!(q[2], V::Line(b':', _)) {
                                                        q[2] = BLANK;
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// Send `cmds` pipelined to both servers; replies equal once times are blanked.
fn same(n: &mut Raw, r: &mut Raw, cmds: &[Vec<String>], what: &str) {
    let wire = encode_pipeline(cmds);
    n.send(&wire);
    r.send(&wire);
    let trace = std::env::var_os("STREAM_TRACE").is_some();
    for c in cmds {
        let (got, want) = (n.read_reply(), r.read_reply());
        if trace {
            eprintln!("{c:?} -> {:?}", String::from_utf8_lossy(&want[..want.len().min(200)]));
        }
        if got == want {
            continue;
        }
        let (mut g, mut w) = (parse(&got, &mut 0), parse(&want, &mut 0));
        blank_times(c, &mut g);
        blank_times(c, &mut w);
        if g != w {
            // Show both from a little before where they part.
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            let from = at.saturating_sub(200);
            panic!(
                "{what}: {c:?}: from byte {from}: NeoKV {:?}, Redis {:?}",
                String::from_utf8_lossy(&got[from..got.len().min(at + 300)]),
                String::from_utf8_lossy(&want[from..want.len().min(at + 300)])
            );
        }
    }
}

fn line(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| p.to_string()).collect()
}

/// Ids near each other so commands collide: ms 1..12, seq 0..3, with the
/// strange forms Redis accepts or refuses now and then.
fn an_id(rng: &mut XorShift) -> String {
    match rng.below(40) {
        0 => "-".into(),
        1 => "+".into(),
        2 => "abc".into(),
        3 => "1-x".into(),
        4 => "007-1".into(),
        5 => "18446744073709551615-18446744073709551615".into(),
        6 => "18446744073709551616".into(),
        7 => format!("{}", rng.range(1, 12)),
        8 => " 3-1".into(),
        9 => "-1".into(),
        _ => format!("{}-{}", rng.range(1, 12), rng.range(0, 3)),
    }
}

fn bound(rng: &mut XorShift) -> String {
    if rng.chance(20) {
        format!("({}", an_id(rng))
    } else {
        an_id(rng)
    }
}

fn fields(rng: &mut XorShift) -> Vec<String> {
    let names = ["a", "b", "name", "n", "12", "-5", "x"];
    let mut out = Vec::new();
    let n = 1 + rng.below(3);
    for _ in 0..n {
        out.push(names[rng.below(names.len())].to_string());
        out.push(match rng.below(4) {
            0 => format!("{}", rng.range(-1000, 100000)),
            1 => String::new(),
            2 => "v".repeat(rng.below(40)),
            3 if rng.chance(10) => "u".repeat(rng.below(400)),
            _ => format!("val{}", rng.below(100)),
        });
    }
    out
}

fn trim_opts(rng: &mut XorShift) -> Vec<String> {
    let mut o = Vec::new();
    if rng.chance(50) {
        o.push("MAXLEN".into());
        match rng.below(3) {
            0 => o.push("~".into()),
            1 => o.push("=".into()),
            _ => {}
        }
        o.push(format!("{}", rng.range(0, 30)));
    } else {
        o.push("MINID".into());
        match rng.below(3) {
            0 => o.push("~".into()),
            1 => o.push("=".into()),
            _ => {}
        }
        o.push(if rng.chance(50) { format!("{}-{}", rng.range(1, 150), rng.range(0, 2)) } else { an_id(rng) });
    }
    if rng.chance(25) {
        o.push("LIMIT".into());
        o.push(format!("{}", rng.range(0, 50)));
    }
    o
}

/// One random stream command over keys `s1`, `s2` (and `str`, a string).
fn a_command(rng: &mut XorShift) -> Vec<String> {
    let key = ["s1", "s1", "s2", "str", "none"][rng.below(5)].to_string();
    let group = ["g1", "g2", "nog"][rng.below(3)].to_string();
    let consumer = ["c1", "c2", "c3"][rng.below(3)].to_string();
    let mut c: Vec<String>;
    match rng.below(26) {
        0..=5 => {
            c = line(&["XADD", &key]);
            if rng.chance(10) {
                c.push("NOMKSTREAM".into());
            }
            if rng.chance(20) {
                c.extend(trim_opts(rng));
            }
            c.push(if rng.chance(15) { format!("{}-*", rng.range(1, 14)) } else { an_id(rng) });
            c.extend(fields(rng));
        }
        6 => {
            c = line(&["XDEL", &key]);
            for _ in 0..1 + rng.below(3) {
                c.push(an_id(rng));
            }
        }
        7 => {
            c = line(&["XTRIM", &key]);
            c.extend(trim_opts(rng));
        }
        8 | 9 => {
            c = line(&[if rng.chance(50) { "XRANGE" } else { "XREVRANGE" }, &key, &bound(rng), &bound(rng)]);
            if rng.chance(40) {
                c.extend(["COUNT".to_string(), format!("{}", rng.range(-1, 5))]);
            }
        }
        10 => c = line(&["XLEN", &key]),
        11 => {
            let id = match rng.below(4) {
                0 => "$".to_string(),
                1 => "0".to_string(),
                _ => an_id(rng),
            };
            c = line(&["XGROUP", "CREATE", &key, &group, &id]);
            if rng.chance(30) {
                c.push("MKSTREAM".into());
            }
            if rng.chance(20) {
                c.extend(["ENTRIESREAD".to_string(), format!("{}", rng.range(-2, 5))]);
            }
        }
        12 => {
            let id = if rng.chance(30) { "$".to_string() } else { an_id(rng) };
            c = line(&["XGROUP", "SETID", &key, &group, &id]);
            if rng.chance(30) {
                c.extend(["ENTRIESREAD".to_string(), format!("{}", rng.range(-1, 5))]);
            }
        }
        13 => {
            c = match rng.below(3) {
                0 => line(&["XGROUP", "DESTROY", &key, &group]),
                1 => line(&["XGROUP", "CREATECONSUMER", &key, &group, &consumer]),
                _ => line(&["XGROUP", "DELCONSUMER", &key, &group, &consumer]),
            }
        }
        14..=16 => {
            c = line(&["XREADGROUP", "GROUP", &group, &consumer]);
            if rng.chance(50) {
                c.extend(["COUNT".to_string(), format!("{}", rng.range(0, 3))]);
            }
            if rng.chance(20) {
                c.push("NOACK".into());
            }
            c.push("STREAMS".into());
            let two = rng.chance(20);
            c.push(key.clone());
            if two {
                c.push("s2".into());
            }
            for _ in 0..if two { 2 } else { 1 } {
                c.push(if rng.chance(70) { ">".into() } else { an_id(rng) });
            }
        }
        17 => {
            c = line(&["XREAD"]);
            if rng.chance(50) {
                c.extend(["COUNT".to_string(), format!("{}", rng.range(0, 3))]);
            }
            c.extend(["STREAMS".to_string(), key.clone(), "s2".into()]);
            c.push(if rng.chance(20) { "$".into() } else { an_id(rng) });
            c.push(an_id(rng));
        }
        18 => {
            c = line(&["XACK", &key, &group]);
            for _ in 0..1 + rng.below(3) {
                c.push(an_id(rng));
            }
        }
        19 => {
            let idle = if rng.chance(80) { "0" } else { "100000000" };
            c = line(&["XCLAIM", &key, &group, &consumer, idle]);
            for _ in 0..1 + rng.below(3) {
                c.push(an_id(rng));
            }
            for opt in ["JUSTID", "FORCE"] {
                if rng.chance(20) {
                    c.push(opt.into());
                }
            }
            if rng.chance(20) {
                c.extend(["RETRYCOUNT".to_string(), format!("{}", rng.range(0, 9))]);
            }
            if rng.chance(15) {
                c.extend(["LASTID".to_string(), an_id(rng)]);
            }
            if rng.chance(10) {
                c.extend(["IDLE".to_string(), "5000".into()]);
            }
        }
        20 => {
            let idle = if rng.chance(80) { "0" } else { "100000000" };
            c = line(&["XAUTOCLAIM", &key, &group, &consumer, idle, &bound(rng)]);
            if rng.chance(50) {
                c.extend(["COUNT".to_string(), format!("{}", rng.range(0, 4))]);
            }
            if rng.chance(20) {
                c.push("JUSTID".into());
            }
        }
        21 => {
            c = line(&["XPENDING", &key, &group]);
            if rng.chance(60) {
                if rng.chance(30) {
                    c.extend(["IDLE".to_string(), "0".into()]);
                }
                c.extend([bound(rng), bound(rng), format!("{}", rng.range(-1, 5))]);
                if rng.chance(40) {
                    c.push(consumer.clone());
                }
            }
        }
        22 => {
            c = match rng.below(4) {
                0 => line(&["XINFO", "STREAM", &key]),
                1 => line(&["XINFO", "STREAM", &key, "FULL", "COUNT", &format!("{}", rng.range(0, 3))]),
                2 => line(&["XINFO", "GROUPS", &key]),
                _ => line(&["XINFO", "CONSUMERS", &key, &group]),
            }
        }
        23 => {
            c = line(&["XSETID", &key, &an_id(rng)]);
            if rng.chance(30) {
                c.extend(["ENTRIESADDED".to_string(), format!("{}", rng.range(-1, 40))]);
            }
            if rng.chance(30) {
                c.extend(["MAXDELETEDID".to_string(), an_id(rng)]);
            }
        }
        24 => {
            c = match rng.below(4) {
                0 => line(&["RENAME", &key, "s2"]),
                1 => line(&["COPY", &key, "s2", "REPLACE"]),
                2 => line(&["DEL", "s2"]),
                _ => line(&["XINFO", "STREAM", &key]),
            }
        }
        _ => c = line(&["XINFO", "GROUPS", &key]),
    }
    c
}

/// Seeded sequences of every stream command over two streams (and a string),
/// with ids that collide, odd id forms, trims of every kind, groups created,
/// moved and destroyed, reads, acknowledgements and claims; after each round
/// both streams are read whole, with their groups, pending entries and
/// consumers.
#[test]
fn streams_match_redis() {
    let seed = fuzz_seed("streams_match_redis");
    let mut rng = XorShift::new(seed);
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    for round in 0..40 {
        let mut cmds = vec![line(&["FLUSHALL"]), line(&["SET", "str", "x"])];
        for _ in 0..80 {
            cmds.push(a_command(&mut rng));
        }
        // Now and then a long stream: nodes split by entries and by bytes,
        // trimmed whole (`~`, LIMIT) and in part.
        if rng.chance(40) {
            // Short values fill nodes by count, long ones by bytes.
            let sizes: &[usize] = if rng.chance(50) { &[0, 1, 3, 8] } else { &[0, 5, 60, 300] };
            for i in 0..150 + rng.below(250) {
                let v = "w".repeat(sizes[rng.below(sizes.len())]);
                let mut c = line(&["XADD", "s1"]);
                if rng.chance(5) {
                    c.extend(trim_opts(&mut rng));
                }
                c.extend([format!("{}-*", 20 + i / 3), "f".into(), v]);
                if rng.chance(30) {
                    c.extend(["g".to_string(), format!("{i}")]);
                }
                cmds.push(c);
            }
            for _ in 0..10 {
                cmds.push(a_command(&mut rng));
                let mut t = line(&["XTRIM", "s1"]);
                t.extend(trim_opts(&mut rng));
                cmds.push(t);
                cmds.push(line(&["XINFO", "STREAM", "s1"]));
            }
        }
        for key in ["s1", "s2"] {
            cmds.push(line(&["XRANGE", key, "-", "+"]));
            cmds.push(line(&["XINFO", "STREAM", key, "FULL", "COUNT", "0"]));
            cmds.push(line(&["XINFO", "GROUPS", key]));
            for g in ["g1", "g2"] {
                cmds.push(line(&["XPENDING", key, g, "-", "+", "100"]));
                cmds.push(line(&["XPENDING", key, g]));
                cmds.push(line(&["XINFO", "CONSUMERS", key, g]));
            }
        }
        same(&mut n, &mut r, &cmds, &format!("seed {seed} round {round}"));
    }
}

/// Refusals in Redis's words and order: arity, grammar, ids, options, keys
/// and groups that are missing or of another type; and the replies of
/// RESP3 (maps for XREAD, XREADGROUP and XINFO).
#[test]
fn stream_errors_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let lines: &[&[&str]] = &[
        &["SET", "str", "x"],
        &["XADD", "s"],
        &["XADD", "s", "*"],
        &["XADD", "s", "*", "f"],
        &["XADD", "s", "0-0", "f", "v"],
        &["XADD", "s", "0", "f", "v"],
        &["XADD", "s", "MAXLEN", "-1", "*", "f", "v"],
        &["XADD", "s", "MAXLEN", "~", "x", "*", "f", "v"],
        &["XADD", "s", "LIMIT", "10", "*", "f", "v"],
        &["XADD", "s", "MAXLEN", "5", "LIMIT", "10", "*", "f", "v"],
        &["XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v"],
        &["XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "f", "v"],
        &["XADD", "s", "MINID", "+", "*", "f", "v"],
        &["XADD", "s", "abc", "f", "v"],
        &["XADD", "s", "1-*-1", "f", "v"],
        &["XADD", "s", "NOMKSTREAM", "1-1", "f", "v"],
        &["EXISTS", "s"],
        &["XADD", "str", "1-1", "f", "v"],
        &["XADD", "s", "5-*", "f", "v"],
        &["XADD", "s", "5-*", "f", "v", "g", "w"],
        &["XADD", "s", "5", "f", "v"],
        &["XADD", "s", "4-*", "f", "v"],
        &["XADD", "s", "18446744073709551615-18446744073709551615", "f", "v"],
        &["XADD", "s", "18446744073709551615-*", "f", "v"],
        &["XLEN", "s"],
        &["XDEL", "s", "18446744073709551615-18446744073709551615"],
        &["XADD", "s", "6-0", "f", "v"],
        &["XTRIM", "s"],
        &["XTRIM", "s", "FOO", "1"],
        &["XTRIM", "s", "MAXLEN"],
        &["XTRIM", "s", "LIMIT", "5", "MAXLEN", "1"],
        &["XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "0"],
        &["XTRIM", "nokey", "MAXLEN", "0"],
        &["XTRIM", "str", "MAXLEN", "0"],
        &["XRANGE", "s", "a", "b"],
        &["XRANGE", "s", "(-", "+"],
        &["XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"],
        &["XRANGE", "s", "-", "(0-0"],
        &["XRANGE", "s", "-", "+", "COUNT"],
        &["XRANGE", "s", "-", "+", "COUNT", "x"],
        &["XRANGE", "s", "-", "+", "FOO", "1"],
        &["XRANGE", "s", "-", "+", "COUNT", "0"],
        &["XRANGE", "nokey", "-", "+", "COUNT", "0"],
        &["XREVRANGE", "s", "+", "-", "COUNT", "1"],
        &["XREVRANGE", "s", "(5-1", "x"],
        &["XREAD", "STREAMS", "s"],
        &["XREAD", "STREAMS", "s", "0", "s2"],
        &["XREAD", "COUNT", "x", "STREAMS", "s", "0"],
        &["XREAD", "BLOCK", "-1", "STREAMS", "s", "0"],
        &["XREAD", "BLOCK", "x", "STREAMS", "s", "0"],
        &["XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"],
        &["XREAD", "NOACK", "STREAMS", "s", "0"],
        &["XREAD", "STREAMS", "s", ">"],
        &["XREAD", "FOO", "STREAMS", "s", "0"],
        &["XREAD", "COUNT", "1", "x", "y"],
        &["XREAD", "STREAMS", "str", "0"],
        &["XREAD", "STREAMS", "s", "nokey", "0", "0"],
        &["XREAD", "COUNT", "1", "STREAMS", "s", "$"],
        &["XREADGROUP", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">", "s2"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        &["XGROUP", "CREATE", "nokey", "g", "0"],
        &["XGROUP", "CREATE", "s", "g", "x"],
        &["XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "-5"],
        &["XGROUP", "CREATE", "s", "g", "0", "FOO"],
        &["XGROUP", "CREATE", "s", "g", "$"],
        &["XGROUP", "CREATE", "s", "g", "0"],
        &["XGROUP", "CREATE", "str", "g", "0"],
        &["XGROUP", "SETID", "s", "nog", "0"],
        &["XGROUP", "SETID", "s", "g", "0", "FOO", "1"],
        &["XGROUP", "SETID", "s", "g", "+"],
        &["XGROUP", "FOO"],
        &["XGROUP", "CREATECONSUMER", "s", "nog", "c"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "c"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "c"],
        &["XGROUP", "DELCONSUMER", "s", "g", "nobody"],
        &["XGROUP", "DESTROY", "s", "nog"],
        &["XGROUP", "HELP"],
        &["XINFO", "HELP"],
        &["XINFO", "FOO"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT", "x"],
        &["XINFO", "STREAM", "s", "FOO"],
        &["XINFO", "STREAM", "nokey"],
        &["XINFO", "GROUPS", "str"],
        &["XINFO", "CONSUMERS", "s", "nog"],
        &["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"],
        &["XACK", "s", "g", "x"],
        &["XACK", "nokey", "g", "x"],
        &["XACK", "s", "nog", "1-1"],
        &["XCLAIM", "s", "g", "c", "x", "0-1"],
        &["XCLAIM", "s", "nog", "c", "0", "0-1"],
        &["XCLAIM", "s", "g", "c", "0", "0-1", "FOO"],
        &["XCLAIM", "s", "g", "c", "0", "0-1", "IDLE", "x"],
        &["XCLAIM", "s", "g", "c", "0", "0-1", "TIME", "x"],
        &["XCLAIM", "s", "g", "c", "0", "0-1", "RETRYCOUNT", "x"],
        &["XCLAIM", "s", "g", "c", "0", "0-1", "LASTID", "x"],
        &["XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"],
        &["XAUTOCLAIM", "s", "g", "c", "x", "0"],
        &["XAUTOCLAIM", "s", "g", "c", "0", "x"],
        &["XAUTOCLAIM", "s", "g", "c", "0", "0", "FOO"],
        &["XAUTOCLAIM", "s", "nog", "c", "0", "0"],
        &["XAUTOCLAIM", "s", "g", "c2", "0", "0", "JUSTID"],
        &["XPENDING", "s", "g", "-", "+"],
        &["XPENDING", "s", "g", "IDLE", "5", "-", "+"],
        &["XPENDING", "s", "g", "-", "+", "x"],
        &["XPENDING", "s", "nog"],
        &["XPENDING", "s", "g", "-", "+", "10", "nobody"],
        &["XSETID", "nokey", "1-1"],
        &["XSETID", "s", "x"],
        &["XSETID", "s", "5-0", "ENTRIESADDED", "-1"],
        &["XSETID", "s", "5-0", "MAXDELETEDID", "6-0"],
        &["XSETID", "s", "5", "FOO"],
        &["XSETID", "s", "1-0"],
        &["XSETID", "s", "100-0", "ENTRIESADDED", "1"],
        &["XSETID", "s", "100-0", "ENTRIESADDED", "50", "MAXDELETEDID", "7-0"],
        &["XLEN", "str"],
        &["XDEL", "str", "1"],
        &["XDEL", "nokey", "x"],
        &["XDEL", "s", "x"],
        &["TYPE", "s"],
        &["OBJECT", "ENCODING", "s"],
        &["COMMAND", "GETKEYS", "XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0"],
        &["COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">"],
        &["COMMAND", "GETKEYS", "XADD", "a", "*", "f", "v"],
        &["COMMAND", "GETKEYS", "XGROUP", "CREATE", "a", "g", "$"],
        &["XPENDING", "s", "g", "-", "+", "10", "c", "extra", "more"],
        &["XINFO", "STREAM", "nokey", "FULL", "x"],
        &["XINFO", "STREAM", "nokey", "FULL", "COUNT", "abc"],
        &["XINFO", "STREAM", "str", "FULL", "COUNT", "abc"],
        // XSETID takes an emptied stream back below a node of deleted entries.
        &["XADD", "c", "1-1", "f", "v"],
        &["XADD", "c", "1-2", "f", "v"],
        &["XDEL", "c", "1-2"],
        &["XTRIM", "c", "MINID", "1-2"],
        &["XSETID", "c", "0-1"],
        &["XADD", "c", "MAXLEN", "0", "0-2", "f", "v"],
        &["XLEN", "c"],
        &["XADD", "c", "0-3", "f", "v"],
        &["XADD", "c", "2-0", "f", "v"],
        &["XDEL", "c", "0-3"],
        &["XRANGE", "c", "-", "+"],
        &["XTRIM", "c", "MAXLEN", "0"],
        &["XLEN", "c"],
    ];
    same_lines(&mut n, &mut r, lines);
    // Consumer group writes do not touch a WATCHed stream (Redis 7.0).
    let (mut n2, mut r2) = (s.raw(), o.raw());
    for (c, other) in [(&mut n, &mut n2), (&mut r, &mut r2)] {
        c.cmd(&["XGROUP", "CREATE", "w", "g", "0", "MKSTREAM"]);
        c.cmd(&["XADD", "w", "1-1", "f", "v"]);
        c.cmd(&["WATCH", "w"]);
        other.cmd(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "w", ">"]);
        other.cmd(&["XACK", "w", "g", "1-1"]);
        other.cmd(&["XGROUP", "SETID", "w", "g", "0"]);
        c.cmd(&["MULTI"]);
        c.cmd(&["PING"]);
    }
    same_lines(&mut n, &mut r, &[&["EXEC"]]);
    // RESP3: maps for XREAD, XREADGROUP and XINFO.
    for c in [&mut n, &mut r] {
        c.cmd(&["HELLO", "3"]);
    }
    let resp3: &[&[&str]] = &[
        &["XREAD", "COUNT", "2", "STREAMS", "s", "0"],
        &["XREAD", "STREAMS", "nokey", "0"],
        &["XGROUP", "CREATE", "s", "g3", "0"],
        &["XREADGROUP", "GROUP", "g3", "c", "COUNT", "1", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g3", "c", "STREAMS", "s", "0"],
        &["XINFO", "STREAM", "s"],
        &["XINFO", "GROUPS", "s"],
        &["XPENDING", "s", "g3"],
        &["XAUTOCLAIM", "s", "g3", "c", "0", "0", "JUSTID"],
        &["XRANGE", "s", "-", "+", "COUNT", "0"],
    ];
    same_lines(&mut n, &mut r, resp3);
}

/// XREAD BLOCK: every reader of a stream is woken by one XADD, `$` means
/// after what the stream held when the command came, a timeout answers a
/// null array, and the waits hold no core.
#[test]
fn blocked_xread_wakes_every_reader() {
    let s = Server::start();
    let mut c = s.raw();
    c.cmd(&["XADD", "s", "1-1", "old", "x"]);
    let mut a = blocked(&s, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    wait_blocked(&s, 1);
    let mut b = blocked(&s, &["XREAD", "COUNT", "5", "BLOCK", "5000", "STREAMS", "other", "s", "0", "$"]);
    wait_blocked(&s, 2);
    // Another key's write wakes nobody for good: they wait on.
    c.cmd(&["XADD", "unrelated", "1-1", "f", "v"]);
    c.cmd(&["SET", "other", "x"]);
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n", "the waits hold no core");
    wait_blocked(&s, 2);
    assert_eq!(c.cmd(&["XADD", "s", "2-1", "new", "y"]), "$3\r\n2-1\r\n");
    let want = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$3\r\nnew\r\n$1\r\ny\r\n";
    assert_eq!(reply(&mut a), want);
    assert_eq!(reply(&mut b), want);
    // A timeout: a null array after about the time asked.
    let started = Instant::now();
    let mut t = blocked(&s, &["XREAD", "BLOCK", "300", "STREAMS", "s", "$"]);
    assert_eq!(reply(&mut t), "*-1\r\n");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(290) && took < Duration::from_secs(3), "{took:?}");
    // In a transaction it never waits.
    assert_eq!(c.cmd(&["MULTI"]), "+OK\r\n");
    c.cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    assert_eq!(c.cmd(&["EXEC"]), "*1\r\n*-1\r\n");
    wait_blocked(&s, 0);
}

/// XREADGROUP BLOCK: a group's clients are served one entry each, first
/// come first served, while another group's client gets the same entry; a
/// deleted stream or destroyed group unblocks with Redis's errors.
#[test]
fn blocked_xreadgroup_serves_each_group_in_turn() {
    let s = Server::start_with(&["--cores", "2"]);
    let mut c = s.raw();
    c.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    c.cmd(&["XGROUP", "CREATE", "s", "h", "$"]);
    let mut a = blocked(&s, &["XREADGROUP", "GROUP", "g", "a", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"]);
    wait_blocked(&s, 1);
    let mut b = blocked(&s, &["XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"]);
    wait_blocked(&s, 2);
    let mut h = blocked(&s, &["XREADGROUP", "GROUP", "h", "x", "BLOCK", "0", "STREAMS", "s", ">"]);
    wait_blocked(&s, 3);
    c.cmd(&["XADD", "s", "1-1", "f", "1"]);
    let one = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n";
    assert_eq!(reply(&mut a), one, "the first of group g");
    assert_eq!(reply(&mut h), one, "group h has its own copy");
    wait_blocked(&s, 1);
    c.cmd(&["XADD", "s", "2-1", "f", "2"]);
    assert!(reply(&mut b).contains("2-1"), "the second of group g gets the next entry");
    // Who holds what.
    assert_eq!(
        c.cmd(&["XPENDING", "s", "g"]),
        "*4\r\n:2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n1\r\n"
    );
    // The stream goes away under a waiter; its group goes away under another.
    // (A client counts as blocked from before its first attempt, a
    // replicated write: give that a moment to land first.)
    let settle = || thread::sleep(Duration::from_millis(300));
    let mut d = blocked(&s, &["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"]);
    wait_blocked(&s, 1);
    settle();
    c.cmd(&["DEL", "s"]);
    assert_eq!(reply(&mut d), "-UNBLOCKED the stream key no longer exists\r\n");
    c.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let mut e = blocked(&s, &["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"]);
    wait_blocked(&s, 1);
    settle();
    c.cmd(&["XGROUP", "DESTROY", "s", "g"]);
    assert_eq!(reply(&mut e), "-NOGROUP the consumer group this client was blocked on no longer exists\r\n");
    // FLUSHALL takes the stream away under a waiter too.
    c.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let mut f = blocked(&s, &["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"]);
    wait_blocked(&s, 1);
    settle();
    c.cmd(&["FLUSHALL"]);
    assert_eq!(reply(&mut f), "-UNBLOCKED the stream key no longer exists\r\n");
    // A timeout answers a null array.
    c.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let mut t = blocked(&s, &["XREADGROUP", "GROUP", "g", "a", "BLOCK", "200", "STREAMS", "s", ">"]);
    assert_eq!(reply(&mut t), "*-1\r\n");
    wait_blocked(&s, 0);
}

/// kill -9 keeps every acknowledged stream write: entries, ids, groups,
/// pending entries with their owners and delivery counts, consumers.
#[test]
fn streams_and_groups_survive_kill_9() {
    let mut s = Server::start_with(&["--cores", "2"]);
    let mut c = s.raw();
    for i in 0..500 {
        c.cmd(&["XADD", "s", "*", "n", &i.to_string()]);
    }
    c.cmd(&["XADD", "t", "MAXLEN", "~", "50", "5-*", "f", "v"]);
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    c.cmd(&["XREADGROUP", "GROUP", "g", "a", "COUNT", "30", "STREAMS", "s", ">"]);
    c.cmd(&["XREADGROUP", "GROUP", "g", "b", "COUNT", "20", "STREAMS", "s", ">"]);
    c.cmd(&["XACK", "s", "g", "0-0"]);
    c.cmd(&["XTRIM", "s", "MAXLEN", "~", "400"]);
    c.cmd(&["XDEL", "s", "0-1"]);
    let probe: &[&[&str]] = &[
        &["XRANGE", "s", "-", "+"],
        &["XINFO", "STREAM", "s"],
        &["XINFO", "GROUPS", "s"],
        &["XPENDING", "s", "g", "-", "+", "100"],
        &["XPENDING", "s", "g"],
        &["XINFO", "CONSUMERS", "s", "g"],
        &["XRANGE", "t", "-", "+"],
    ];
    let blank = |x: String| {
        x.split("\r\n")
            .enumerate()
            .map(|(i, l)| if i > 0 && l.starts_with(':') { ":" } else { l })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let before: Vec<String> = probe.iter().map(|l| c.cmd(l)).collect();
    // The last id, so new ids continue after it.
    let last = c.cmd(&["XINFO", "STREAM", "s"]);
    s.kill_and_restart();
    let mut c = s.raw();
    for (l, b) in probe.iter().zip(&before) {
        let now = c.cmd(l);
        if l.len() > 3 || l[1] == "CONSUMERS" {
            // Idle times moved on (the integers here); ids and owners did not,
            // and the summary XPENDING checks the counts.
            assert_eq!(blank(now), blank(b.clone()), "{l:?}");
        } else {
            assert_eq!(&now, b, "{l:?}");
        }
    }
    assert_eq!(c.cmd(&["XINFO", "STREAM", "s"]), last);
    let id = c.cmd(&["XADD", "s", "*", "after", "restart"]);
    let top = c.cmd(&["XREVRANGE", "s", "+", "-", "COUNT", "2"]);
    assert!(top.contains(id.lines().nth(1).unwrap()), "{top}");
}

/// `CONFIG SET stream-node-max-entries / -bytes` shape the nodes that follow,
/// and so what `~` trims (whole nodes) and its default LIMIT, as in Redis:
/// every reply, XLEN and the first entry left compared with redis-server, in
/// XADD's and XTRIM's forms, and inside a script (which carries the limits
/// to apply as a plain command does).
#[test]
fn stream_node_limits_shape_approximate_trims_as_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let mut lines: Vec<Vec<String>> = Vec::new();
    let l = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    for (entries, bytes) in [("10", "4096"), ("0", "200"), ("3", "0"), ("100", "4096"), ("1", "1kb")] {
        lines.push(l(&["CONFIG", "SET", "stream-node-max-entries", entries]));
        lines.push(l(&["CONFIG", "SET", "stream-node-max-bytes", bytes]));
        lines.push(l(&["DEL", "s", "t"]));
        for i in 1..=120 {
            lines.push(l(&["XADD", "s", &format!("{i}-1"), "field", &"v".repeat(i % 7)]));
        }
        lines.push(l(&["XTRIM", "s", "MAXLEN", "~", "55"]));
        lines.push(l(&["XLEN", "s"]));
        lines.push(l(&["XRANGE", "s", "-", "+", "COUNT", "1"]));
        lines.push(l(&["XTRIM", "s", "MINID", "~", "90-1", "LIMIT", "7"]));
        lines.push(l(&["XLEN", "s"]));
        lines.push(l(&["XADD", "s", "MAXLEN", "~", "20", "500-1", "f", "v"]));
        lines.push(l(&["XLEN", "s"]));
        for i in 1..=40 {
            let script = "return redis.call('XADD', KEYS[1], 'MAXLEN', '~', '12', ARGV[1], 'f', 'v')";
            lines.push(l(&["EVAL", script, "1", "t", &format!("{i}-1")]));
        }
        lines.push(l(&["XLEN", "t"]));
        lines.push(l(&["XRANGE", "t", "-", "+", "COUNT", "1"]));
    }
    lines.push(l(&["CONFIG", "GET", "stream-node-max-entries"]));
    lines.push(l(&["CONFIG", "GET", "stream-node-max-bytes"]));
    lines.push(l(&["CONFIG", "SET", "stream-node-max-entries", "-1"]));
    lines.push(l(&["CONFIG", "SET", "stream-node-max-bytes", "x"]));
    lines.push(l(&["CONFIG", "SET", "stream-node-max-entries", "100"]));
    lines.push(l(&["CONFIG", "SET", "stream-node-max-bytes", "4096"]));
    same_replies(&mut n, &mut r, &lines, "stream node limits");
}
