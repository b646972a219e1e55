//! HyperLogLog through the real binary, against redis-server: replies and the
//! stored bytes (GET) must be the same, byte for byte.

use crate::common::{fuzz_seed, same_replies, Oracle, Server, XorShift};

fn cmd(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// A seeded sequence of PFADD (small and large batches, so sets cross from
/// the sparse to the dense encoding by size; a register value past 32, about
/// one element in 2^32, is left to the unit tests), PFCOUNT of one key (cache stored, then served) and of several,
/// PFMERGE into new and existing keys (sparse and dense inputs), and GET of
/// every key after each round: the bytes must be Redis's.
#[test]
fn hyperloglogs_match_redis_byte_for_byte() {
    let seed = fuzz_seed("hyperloglogs_match_redis_byte_for_byte");
    let mut rng = XorShift::new(seed);
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let keys: [&[u8]; 5] = [b"h1", b"h2", b"h3", b"h4", b"{h}5"];
    for round in 0..40 {
        let mut cmds = Vec::new();
        for _ in 0..6 {
            let k = keys[rng.below(keys.len())];
            match rng.below(10) {
                0..=4 => {
                    // Mostly small batches from a shared pool (so adds repeat),
                    // sometimes a big one that makes the set dense.
                    let count = if rng.chance(10) { 1500 + rng.below(3000) } else { rng.below(20) };
                    let pool = if rng.chance(50) { 200 } else { 1_000_000 };
                    let mut c = cmd(&[b"PFADD", k]);
                    for _ in 0..count {
                        c.push(format!("e{}", rng.below(pool)).into_bytes());
                    }
                    cmds.push(c);
                }
                5 | 6 => cmds.push(cmd(&[b"PFCOUNT", k])),
                7 => {
                    let mut c = cmd(&[b"PFCOUNT"]);
                    for _ in 0..1 + rng.below(3) {
                        c.push(keys[rng.below(keys.len())].to_vec());
                    }
                    cmds.push(c);
                }
                _ => {
                    let mut c = cmd(&[b"PFMERGE", k]);
                    for _ in 0..rng.below(3) {
                        c.push(keys[rng.below(keys.len())].to_vec());
                    }
                    cmds.push(c);
                }
            }
        }
        for k in keys {
            cmds.push(cmd(&[b"GET", k]));
        }
        same_replies(&mut n, &mut r, &cmds, &format!("seed {seed} round {round}"));
    }
}

/// Bad input gets Redis's errors: other types, strings that are not HLLs,
/// corrupted HLLs, and arity.
#[test]
fn bad_hyperloglogs_get_redis_errors() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let mut sparse_bad = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80".to_vec();
    sparse_bad.extend_from_slice(&[0x7f, 0xf0]); // covers fewer than 16384 registers
    let mut dense_short = b"HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80".to_vec();
    dense_short.extend_from_slice(&[0u8; 100]);
    let cmds = vec![
        cmd(&[b"RPUSH", b"list", b"a"]),
        cmd(&[b"PFADD", b"list", b"a"]),
        cmd(&[b"PFCOUNT", b"list"]),
        cmd(&[b"PFMERGE", b"list", b"x"]),
        cmd(&[b"SET", b"str", b"hello world, not an HLL"]),
        cmd(&[b"PFADD", b"str", b"a"]),
        cmd(&[b"PFCOUNT", b"str"]),
        cmd(&[b"PFCOUNT", b"nosuch", b"str"]),
        cmd(&[b"PFMERGE", b"dst", b"str"]),
        cmd(&[b"SET", b"bad", &sparse_bad]),
        cmd(&[b"PFCOUNT", b"bad"]),
        cmd(&[b"PFCOUNT", b"bad", b"nosuch"]),
        cmd(&[b"PFADD", b"bad", b"a"]),
        cmd(&[b"SET", b"short", &dense_short]),
        cmd(&[b"PFCOUNT", b"short"]),
        cmd(&[b"PFADD", b"short", b"a"]),
        cmd(&[b"PFADD"]),
        cmd(&[b"PFCOUNT"]),
        cmd(&[b"PFMERGE"]),
        cmd(&[b"PFADD", b"fresh"]),
        cmd(&[b"PFADD", b"fresh"]),
        cmd(&[b"GET", b"fresh"]),
        cmd(&[b"PFCOUNT", b"nosuch"]),
        cmd(&[b"PFMERGE", b"new"]),
        cmd(&[b"GET", b"new"]),
        cmd(&[b"EXISTS", b"dst"]),
    ];
    same_replies(&mut n, &mut r, &cmds, "errors");
}

/// PFCOUNT of one key with a stale cache stores the count in the value, a
/// change of the key: a WATCH of it fails, as in Redis; with the cache valid
/// it changes nothing. Inside MULTI and a script it runs in apply, the same.
#[test]
fn pfcount_stores_its_cache_as_redis_does() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let cmds = vec![
        cmd(&[b"PFADD", b"w", b"a", b"b", b"c"]),
        cmd(&[b"WATCH", b"w"]),
        cmd(&[b"PFCOUNT", b"w"]),
        cmd(&[b"MULTI"]),
        cmd(&[b"PING"]),
        cmd(&[b"EXEC"]),
        cmd(&[b"GET", b"w"]),
        cmd(&[b"WATCH", b"w"]),
        cmd(&[b"PFCOUNT", b"w"]),
        cmd(&[b"MULTI"]),
        cmd(&[b"PING"]),
        cmd(&[b"EXEC"]),
        cmd(&[b"PFADD", b"w", b"d"]),
        cmd(&[b"MULTI"]),
        cmd(&[b"PFCOUNT", b"w"]),
        cmd(&[b"PFADD", b"w", b"e"]),
        cmd(&[b"PFCOUNT", b"w", b"w"]),
        cmd(&[b"EXEC"]),
        cmd(&[b"GET", b"w"]),
        cmd(&[b"EVAL", b"redis.call('PFADD', KEYS[1], 'f'); return redis.call('PFCOUNT', KEYS[1])", b"1", b"w"]),
        cmd(&[b"GET", b"w"]),
        cmd(&[b"PEXPIRE", b"w", b"100000"]),
        cmd(&[b"PFADD", b"w", b"g"]),
        cmd(&[b"PFCOUNT", b"w"]),
        cmd(&[b"PTTL", b"w"]),
    ];
    // PTTL's last digits may differ: compare all but it, then its range.
    let (head, last) = cmds.split_at(cmds.len() - 1);
    same_replies(&mut n, &mut r, head, "cache");
    let a: Vec<&[u8]> = last[0].iter().map(|x| x.as_slice()).collect();
    n.send_cmd(&a);
    let ttl = String::from_utf8_lossy(&n.read_reply()).into_owned();
    let ttl: i64 = ttl.trim().trim_start_matches(':').parse().unwrap();
    assert!((90_000..=100_000).contains(&ttl), "PFADD and PFCOUNT keep the TTL: {ttl}");
}

/// Corrupted HLL values (valid ones with random bytes changed, cut or grown,
/// and random opcode bytes behind a valid header) never stop the server:
/// PFADD, PFCOUNT and PFMERGE answer an integer, OK, or one of Redis's two
/// HLL errors, and the server still answers afterwards. (Redis itself is not
/// the oracle here: some corrupt sparse values make it write past the end.)
#[test]
fn corrupted_hyperloglogs_never_stop_the_server() {
    let seed = fuzz_seed("corrupted_hyperloglogs_never_stop_the_server");
    let mut rng = XorShift::new(seed);
    let s = Server::start();
    let mut n = s.raw();
    // Valid values to start from: sparse small, sparse bigger, dense.
    let mut bases = Vec::new();
    for (i, count) in [3usize, 300, 5000].into_iter().enumerate() {
        let key = format!("base{i}");
        let mut c = cmd(&[b"PFADD", key.as_bytes()]);
        for j in 0..count {
            c.push(format!("m{j}").into_bytes());
        }
        let a: Vec<&[u8]> = c.iter().map(|x| x.as_slice()).collect();
        n.send_cmd(&a);
        n.read_reply();
        n.send_cmd(&[b"GET", key.as_bytes()]);
        let r = n.read_reply();
        // `$<len>\r\n<bytes>\r\n`
        let start = r.iter().position(|&b| b == b'\n').unwrap() + 1;
        bases.push(r[start..r.len() - 2].to_vec());
    }
    for round in 0..300 {
        let mut v = bases[rng.below(bases.len())].clone();
        match rng.below(4) {
            0 => {
                for _ in 0..1 + rng.below(8) {
                    let i = 16 + rng.below(v.len() - 16);
                    v[i] = rng.next() as u8;
                }
            }
            1 => v.truncate(16 + rng.below(v.len() - 16)),
            2 => v.extend((0..1 + rng.below(64)).map(|_| rng.next() as u8)),
            _ => {
                v.truncate(16);
                v[4] = 1;
                v.extend((0..rng.below(200)).map(|_| rng.next() as u8));
            }
        }
        let ops: [Vec<Vec<u8>>; 5] = [
            vec![b"SET".to_vec(), b"bad".to_vec(), v],
            cmd(&[b"PFADD", b"bad", format!("e{}", rng.next()).as_bytes(), b"x", b"y"]),
            cmd(&[b"PFCOUNT", b"bad"]),
            cmd(&[b"PFCOUNT", b"bad", b"base1"]),
            cmd(&[b"PFMERGE", b"bad", b"base2"]),
        ];
        for op in &ops {
            let a: Vec<&[u8]> = op.iter().map(|x| x.as_slice()).collect();
            n.send_cmd(&a);
            let r = String::from_utf8_lossy(&n.read_reply()).into_owned();
            let ok = r.starts_with(':')
                || r == "+OK\r\n"
                || r.starts_with("-INVALIDOBJ Corrupted HLL object detected")
                || r.starts_with("-WRONGTYPE Key is not a valid HyperLogLog string value.");
            assert!(ok, "seed {seed} round {round}: {:?} answered {r:?}", String::from_utf8_lossy(&op[0]));
        }
    }
    assert_eq!(n.cmd(&["PING"]), "+PONG\r\n");
}
