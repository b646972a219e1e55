//! SORT and SORT_RO through the real binary, against redis-server: replies,
//! STORE's destinations and errors must be the same, byte for byte, except
//! where Redis's own order is unspecified (a set left unsorted by `BY nosort`:
//! compared as a multiset).

use std::time::Duration;

use crate::common::{assert_does_not_stall, encode_pipeline, fuzz_seed, Oracle, Raw, Server, XorShift};

/// Numbers as SORT reads them: ties ("0" and "", "1e2" and "100"), a leading
/// space, infinities.
const NUMS: &[&str] = &["1", "2", "3", "10", "-4", "2.5", "1e2", "100", "0", "", "-0.5", "inf", "-inf", " 7", "42"];
/// Text (UTF-8 too), compared by the locale's strcoll (bytewise when stored).
const TEXT: &[&str] =
    &["apple", "Banana", "cherry", "date", "fig", "Apple", "banana", "zeta", "10", "9", "a b", "élan", "Ωmega"];

/// The keys SORT reads and their kinds: lists, sets and sorted sets of numbers
/// or text, a missing key and a string.
const KEYS: &[&str] = &["ln", "la", "sn", "sa", "zn", "za", "big", "missing", "str"];

fn numeric_key(k: &str) -> bool {
    k.ends_with('n') || k == "big"
}

fn cmd(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

/// A RESP2 array of bulk strings and nils, parsed (`None` for anything else).
fn bulks(raw: &[u8]) -> Option<Vec<Option<Vec<u8>>>> {
    let mut lines = raw;
    let mut line = || -> Option<&[u8]> {
        let end = memchr::memmem::find(lines, b"\r\n")?;
        let l = &lines[..end];
        lines = &lines[end + 2..];
        Some(l)
    };
    let head = line()?;
    let n: usize = std::str::from_utf8(head.strip_prefix(b"*")?).ok()?.parse().ok()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let h = line()?;
        if h == b"$-1" {
            out.push(None);
            continue;
        }
        let len: usize = std::str::from_utf8(h.strip_prefix(b"$")?).ok()?.parse().ok()?;
        // Bulk payloads here never hold CRLF.
        let v = line()?;
        if v.len() != len {
            return None;
        }
        out.push(Some(v.to_vec()));
    }
    Some(out)
}

/// The data every round starts from (the same commands to both servers).
fn fill(rng: &mut XorShift) -> Vec<Vec<Vec<u8>>> {
    let mut cmds = vec![cmd(&["FLUSHALL"])];
    let mut push = |key: &str, kind: &str, pool: &[&str], n: usize, rng: &mut XorShift| {
        let mut c = cmd(&[kind, key]);
        for _ in 0..n {
            if kind == "ZADD" {
                c.push(rng.range(-3, 3).to_string().into_bytes());
            }
            c.push(pool[rng.below(pool.len())].as_bytes().to_vec());
        }
        cmds.push(c);
    };
    push("ln", "RPUSH", NUMS, 4 + rng.below(14), rng);
    push("la", "RPUSH", TEXT, 4 + rng.below(14), rng);
    push("sn", "SADD", NUMS, 4 + rng.below(14), rng);
    push("sa", "SADD", TEXT, 4 + rng.below(14), rng);
    push("zn", "ZADD", NUMS, 4 + rng.below(14), rng);
    push("za", "ZADD", TEXT, 4 + rng.below(14), rng);
    // Bigger than a core reads inline: sorted on the blocking pool.
    let mut big = cmd(&["RPUSH", "big"]);
    for _ in 0..1500 {
        big.push(rng.range(-100_000, 100_000).to_string().into_bytes());
    }
    cmds.push(big);
    cmds.push(cmd(&["SET", "str", "x"]));
    // Weights: `w_` distinct numbers for every element (no ties, so ALPHA BY
    // has one answer), `n_` numbers with ties for some, `t_` text for a few
    // (a numeric BY fails), hashes `h_` with a number and a distinct name for
    // some, and `x_` of the wrong type.
    let mut distinct: Vec<i64> = (0..(NUMS.len() + TEXT.len()) as i64).map(|i| i * 7 - 40).collect();
    for i in (1..distinct.len()).rev() {
        distinct.swap(i, rng.below(i + 1));
    }
    for (i, e) in NUMS.iter().chain(TEXT).enumerate() {
        cmds.push(cmd(&["SET", &format!("w_{e}"), &distinct[i].to_string()]));
        if rng.chance(70) {
            cmds.push(cmd(&["SET", &format!("n_{e}"), &rng.range(0, 4).to_string()]));
        }
        if rng.chance(5) {
            cmds.push(cmd(&["SET", &format!("t_{e}"), "abc"]));
        }
        if rng.chance(60) {
            let mut h = cmd(&["HSET", &format!("h_{e}"), "name", &format!("n{}", distinct[i])]);
            if rng.chance(70) {
                h.extend(cmd(&["f", &rng.range(-2, 2).to_string()]));
            }
            cmds.push(h);
        }
        if rng.chance(20) {
            cmds.push(cmd(&["RPUSH", &format!("x_{e}"), "1"]));
        }
    }
    cmds
}

/// One random SORT (or SORT_RO) line, and whether its order may differ from
/// Redis's (a set left unsorted, without STORE).
fn gen_sort(rng: &mut XorShift) -> (Vec<Vec<u8>>, bool) {
    let key = KEYS[rng.below(KEYS.len())];
    let ro = rng.chance(25);
    let mut c = cmd(&[if ro { "SORT_RO" } else { "SORT" }, key]);
    let alpha = !numeric_key(key) || rng.chance(30);
    let mut opts: Vec<Vec<String>> = Vec::new();
    let mut opt = |parts: &[&str]| opts.push(parts.iter().map(|p| p.to_string()).collect());
    if alpha {
        opt(&["ALPHA"]);
    }
    if rng.chance(50) {
        opt(&[if rng.chance(50) { "DESC" } else { "ASC" }]);
    }
    // `big`'s elements have no `w_` weights: with ALPHA they would all tie.
    let by: Option<&str> = if rng.chance(50) && !(alpha && key == "big") {
        // With ALPHA only `w_*` (no ties: Redis's order of ties is its
        // qsort's); numeric ties are broken by the element, as in Redis.
        Some(if alpha {
            ["w_*", "nosort", "w_*"][rng.below(3)]
        } else {
            ["w_*", "n_*", "t_*", "h_*->f", "x_*", "nosort", "w_*->", "zz_*"][rng.below(8)]
        })
    } else {
        None
    };
    if let Some(b) = by {
        opt(&["BY", b]);
    }
    let store = !ro && rng.chance(35);
    let unsorted_set = key.starts_with('s') && by == Some("nosort") && !store;
    if !unsorted_set && rng.chance(40) {
        let (off, cnt) = (rng.range(-2, 12).to_string(), rng.range(-2, 12).to_string());
        opt(&["LIMIT", &off, &cnt]);
    }
    if !unsorted_set {
        for _ in 0..rng.below(3) {
            opt(&["GET", ["#", "w_*", "h_*->name", "n_*", "nostar", "h_*->nope", "x_*"][rng.below(7)]]);
        }
    }
    if store {
        opt(&["STORE", ["dst", "dst2"][rng.below(2)]]);
    }
    for i in (1..opts.len()).rev() {
        opts.swap(i, rng.below(i + 1));
    }
    for o in opts {
        c.extend(o.into_iter().map(String::into_bytes));
    }
    (c, unsorted_set)
}

/// Send `cmds` to both servers pipelined; compare every reply (a multiset
/// where `unordered`).
fn both(n: &mut Raw, r: &mut Raw, cmds: &[(Vec<Vec<u8>>, bool)], what: &str) {
    let wire = encode_pipeline(&cmds.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>());
    n.send(&wire);
    r.send(&wire);
    let mut last_sort = String::new();
    for (c, unordered) in cmds {
        let (got, want) = (n.read_reply(), r.read_reply());
        let shown: Vec<String> = c.iter().map(|x| String::from_utf8_lossy(x).into_owned()).collect();
        if c[0].starts_with(b"SORT") {
            last_sort = format!("{shown:?}");
        }
        let same = if *unordered {
            match (bulks(&got), bulks(&want)) {
                (Some(mut a), Some(mut b)) => {
                    a.sort();
                    b.sort();
                    a == b
                }
                _ => got == want,
            }
        } else {
            got == want
        };
        if !same {
            panic!(
                "{what}: {shown:?} (after {last_sort}): NeoKV {:?}, Redis {:?}",
                String::from_utf8_lossy(&got[..got.len().min(400)]),
                String::from_utf8_lossy(&want[..want.len().min(400)])
            );
        }
    }
}

/// Seeded SORT and SORT_RO lines (every option, in any order) over lists, sets
/// and sorted sets of numbers and text, weights and GET values from strings and
/// hash fields (missing, of the wrong type, not numbers), STORE into a
/// destination then read back with its type and TTL; the data changes between
/// the lines, pipelined, on a server with a region per core (so patterns and
/// destinations cross regions). Every reply must be redis-server's.
#[test]
fn sorts_match_redis() {
    let seed = fuzz_seed("sorts_match_redis");
    let mut rng = XorShift::new(seed);
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    for round in 0..40 {
        let fill: Vec<_> = fill(&mut rng).into_iter().map(|c| (c, false)).collect();
        both(&mut n, &mut r, &fill, &format!("seed {seed} round {round} fill"));
        let mut cmds = Vec::new();
        for i in 0..60 {
            match rng.below(10) {
                0 => {
                    // A write the next SORT must see (pipelined, maybe in another region).
                    // The new weight stays distinct from every other (ALPHA BY has
                    // no tie-break in Redis: a tie is in its qsort's order): it ends
                    // in 500 + i, which no other weight of the round does.
                    let e = NUMS[rng.below(NUMS.len())];
                    let w = rng.range(-500, 500) * 1000 + 500 + i as i64;
                    cmds.push((cmd(&["SET", &format!("w_{e}"), &w.to_string()]), false));
                    let k = ["ln", "sn", "zn"][rng.below(3)];
                    let add = match k {
                        "ln" => cmd(&["LPUSH", k, e]),
                        "sn" => cmd(&["SADD", k, e]),
                        _ => cmd(&["ZADD", k, "0", e]),
                    };
                    cmds.push((add, false));
                }
                1 => cmds.push((cmd(&["SET", "dst", "old", "EX", "100"]), false)),
                _ => {
                    let (c, unordered) = gen_sort(&mut rng);
                    let stores = c.iter().any(|a| a.eq_ignore_ascii_case(b"store"));
                    cmds.push((c, unordered));
                    if stores {
                        for d in ["dst", "dst2"] {
                            cmds.push((cmd(&["LRANGE", d, "0", "-1"]), false));
                            cmds.push((cmd(&["TYPE", d]), false));
                            cmds.push((cmd(&["TTL", d]), false));
                        }
                    }
                }
            }
        }
        both(&mut n, &mut r, &cmds, &format!("seed {seed} round {round}"));
    }
}

/// Fixed lines: grammar errors (in Redis's order: options first, then the
/// key's type), LIMIT's edges, an empty result deleting the destination,
/// SORT inside MULTI and scripts (where an unsorted set is sorted ALPHA),
/// and RESP3.
#[test]
fn sort_edges_match_redis() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let lines: &[&[&str]] = &[
        &["RPUSH", "l", "3", "1", "2", "10", "b"],
        &["RPUSH", "ln", "3", "1", "2", "10", "1"],
        &["SADD", "s", "b", "a", "c", "10", "9"],
        &["ZADD", "z", "3", "a", "1", "b", "2", "c"],
        &["SET", "str", "x"],
        &["SORT", "l"],
        &["SORT", "str"],
        &["SORT", "str", "FOO"],
        &["SORT", "l", "LIMIT", "1"],
        &["SORT", "l", "LIMIT", "x", "1"],
        &["SORT", "l", "LIMIT", "0", "99999999999999999999"],
        &["SORT", "ln", "LIMIT", "-5", "2"],
        &["SORT", "ln", "LIMIT", "3", "-7"],
        &["SORT", "ln", "LIMIT", "5", "1"],
        &["SORT", "ln", "LIMIT", "9223372036854775807", "9223372036854775807"],
        &["SORT", "ln", "DESC", "LIMIT", "1", "2"],
        &["SORT", "ln", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
        &["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "1"],
        &["SORT", "z", "BY", "nosort", "LIMIT", "2", "5"],
        &["SORT", "z", "ALPHA", "DESC"],
        &["SORT", "l", "ALPHA", "STORE"],
        &["SORT_RO", "l", "ALPHA", "STORE", "d"],
        &["SORT", "l", "ALPHA", "STORE", "d"],
        &["LRANGE", "d", "0", "-1"],
        &["SORT", "missing", "STORE", "d"],
        &["EXISTS", "d"],
        &["SORT", "ln", "LIMIT", "10", "1", "STORE", "d"],
        &["SORT", "s", "BY", "nosort", "STORE", "d"],
        &["LRANGE", "d", "0", "-1"],
        &["SORT", "s", "BY", "nosort", "GET", "#", "GET", "nostar", "STORE", "d"],
        &["LRANGE", "d", "0", "-1"],
        &["EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort')", "1", "s"],
        &["EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort', 'STORE', KEYS[2])", "2", "s", "d"],
        &["EVAL_RO", "return redis.call('SORT_RO', KEYS[1], 'ALPHA', 'DESC')", "1", "s"],
        &["MULTI"],
        &["SORT", "ln", "STORE", "d"],
        &["LRANGE", "d", "0", "-1"],
        &["SORT", "l"],
        &["EXEC"],
    ];
    for resp3 in [false, true] {
        if resp3 {
            assert_eq!(n.cmd(&["HELLO", "3"])[..1], r.cmd(&["HELLO", "3"])[..1]);
            for c in [&mut n, &mut r] {
                c.cmd(&["FLUSHALL"]);
            }
        }
        for line in lines {
            let (got, want) = (n.cmd(line), r.cmd(line));
            assert_eq!(got, want, "{line:?} (RESP3 {resp3})");
        }
    }
}

/// SORT ... STORE makes a list: a client blocked popping it is woken, as by
/// any push.
#[test]
fn sort_store_wakes_a_blocked_pop() {
    let s = Server::start();
    let mut a = s.raw();
    let mut b = s.raw();
    assert_eq!(b.cmd(&["RPUSH", "src", "2", "1"]), ":2\r\n");
    a.send_cmd(&[b"BLPOP", b"dst", b"5"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(b.cmd(&["SORT", "src", "STORE", "dst"]), ":2\r\n");
    assert_eq!(String::from_utf8(a.read_reply()).unwrap(), "*2\r\n$3\r\ndst\r\n$1\r\n1\r\n");
    assert_eq!(b.cmd(&["LRANGE", "dst", "0", "-1"]), "*1\r\n$1\r\n2\r\n");
}

/// A SORT of a big list, with patterns, runs on the blocking pool: the core
/// answers its other connections meanwhile.
#[test]
fn sorting_a_big_list_does_not_stall_the_core() {
    let s = Server::start();
    let mut c = s.raw();
    for chunk in 0..20 {
        let mut line: Vec<String> = vec!["RPUSH".into(), "big".into()];
        line.extend((0..5000).map(|i| ((i * 7919 + chunk * 13) % 100_003).to_string()));
        let args: Vec<&str> = line.iter().map(String::as_str).collect();
        assert!(c.cmd(&args).starts_with(':'));
    }
    assert_does_not_stall(&s, &[b"SORT", b"big", b"BY", b"w_*", b"GET", b"#", b"LIMIT", b"0", b"1"], "*1\r\n");
}
