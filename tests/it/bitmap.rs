//! Bitmaps (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO)
//! through the real binary, against redis-server: every reply byte for byte,
//! on short values and on chunked ones (past 16 KiB), and errors in Redis's
//! order.

use crate::common::{fuzz_seed, same_lines, same_replies, Oracle, Server, XorShift};

fn line(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

/// Seeded bit commands on keys that stay short or grow far past the inline
/// limit (offsets up to 2^22 bits), with ranges in bytes and bits, negative
/// ones, every BITFIELD type and overflow mode, BITOP over keys of different
/// lengths (missing ones too) and in two regions; each round ends with GET
/// and STRLEN of every key, so the stored bytes are Redis's.
#[test]
fn bitmaps_match_redis() {
    let seed = fuzz_seed("bitmaps_match_redis");
    let mut rng = XorShift::new(seed);
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let keys = ["b1", "b2", "b3", "{b1}d", "missing"];
    let types = ["u1", "i1", "u5", "i7", "u8", "i8", "i16", "u16", "u31", "i32", "i63", "u63", "i64"];
    let overflow = ["WRAP", "SAT", "FAIL"];
    for round in 0..40 {
        let mut cmds = Vec::new();
        for _ in 0..40 {
            let k = keys[rng.below(4)];
            let far = rng.chance(15);
            let bit_off = |rng: &mut XorShift| if far { rng.below(1 << 22) } else { rng.below(400) };
            let idx = |rng: &mut XorShift| rng.range(-60, 60).to_string();
            match rng.below(14) {
                0..=3 => {
                    let off = bit_off(&mut rng).to_string();
                    cmds.push(line(&["SETBIT", k, &off, if rng.chance(60) { "1" } else { "0" }]));
                }
                4 => cmds.push(line(&["GETBIT", k, &bit_off(&mut rng).to_string()])),
                5 => cmds.push(line(&["BITCOUNT", k])),
                6 => {
                    let (a, b) = (idx(&mut rng), idx(&mut rng));
                    let unit = ["BYTE", "BIT", ""][rng.below(3)];
                    let mut l = line(&["BITCOUNT", k, &a, &b]);
                    if !unit.is_empty() {
                        l.push(unit.as_bytes().to_vec());
                    }
                    cmds.push(l);
                }
                7 | 8 => {
                    let bit = ["0", "1"][rng.below(2)];
                    let mut l = line(&["BITPOS", k, bit]);
                    for _ in 0..rng.below(3) {
                        l.push(idx(&mut rng).into_bytes());
                    }
                    if l.len() == 5 && rng.chance(50) {
                        l.push(["BYTE", "BIT"][rng.below(2)].as_bytes().to_vec());
                    }
                    cmds.push(l);
                }
                9 => {
                    let op = ["AND", "OR", "XOR", "NOT"][rng.below(4)];
                    let dest = ["{b1}d", "b3"][rng.below(2)];
                    let mut l = line(&["BITOP", op, dest]);
                    let srcs = if op == "NOT" { 1 } else { 1 + rng.below(3) };
                    for _ in 0..srcs {
                        l.push(keys[rng.below(keys.len())].as_bytes().to_vec());
                    }
                    cmds.push(l);
                }
                10..=12 => {
                    let ro = rng.chance(20);
                    let mut l = line(&[if ro { "BITFIELD_RO" } else { "BITFIELD" }, k]);
                    for _ in 0..1 + rng.below(4) {
                        let t = types[rng.below(types.len())];
                        let off =
                            if rng.chance(20) { format!("#{}", rng.below(40)) } else { bit_off(&mut rng).to_string() };
                        let v = match rng.below(4) {
                            0 => rng.range(-300, 300).to_string(),
                            1 => i64::MAX.to_string(),
                            2 => i64::MIN.to_string(),
                            _ => rng.range(-5, 5).to_string(),
                        };
                        match if ro { 0 } else { rng.below(4) } {
                            0 => l.extend(line(&["GET", t, &off])),
                            1 => l.extend(line(&["SET", t, &off, &v])),
                            2 => l.extend(line(&["INCRBY", t, &off, &v])),
                            _ => l.extend(line(&["OVERFLOW", overflow[rng.below(3)]])),
                        }
                    }
                    cmds.push(l);
                }
                _ => {
                    // A short string written whole, so bits meet text.
                    let v: String = (0..rng.below(40)).map(|_| (b'a' + rng.below(26) as u8) as char).collect();
                    cmds.push(line(&["SET", k, &v]));
                }
            }
        }
        for k in keys {
            cmds.push(line(&["GET", k]));
            cmds.push(line(&["STRLEN", k]));
        }
        same_replies(&mut n, &mut r, &cmds, &format!("seed {seed} round {round}"));
    }
}

/// Bad input gets Redis's errors, in Redis's order (argument before type
/// before range, a missing key answered before its range is read).
#[test]
fn bitmap_errors_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let lines: &[&[&str]] = &[
        &["RPUSH", "l", "x"],
        &["SET", "s", "foobar"],
        &["SETBIT", "k", "4294967296", "1"],
        &["SETBIT", "k", "-1", "1"],
        &["SETBIT", "k", "01", "1"],
        &["SETBIT", "k", "1", "2"],
        &["SETBIT", "l", "1", "1"],
        &["SETBIT", "l", "x", "1"],
        &["GETBIT", "l", "1"],
        &["GETBIT", "l", "x"],
        &["GETBIT", "missing", "4294967295"],
        &["GETBIT", "s", "4294967296"],
        &["BITCOUNT", "l"],
        &["BITCOUNT", "missing", "x", "y"],
        &["BITCOUNT", "s", "1"],
        &["BITCOUNT", "s", "x", "1"],
        &["BITCOUNT", "s", "1", "2", "BITS"],
        &["BITCOUNT", "s", "-1", "-2", "foo"],
        &["BITCOUNT", "s", "1", "2", "3", "4"],
        &["BITCOUNT", "s", "5", "30", "bit"],
        &["BITPOS", "s", "2"],
        &["BITPOS", "l", "2"],
        &["BITPOS", "l", "1"],
        &["BITPOS", "missing", "1", "x"],
        &["BITPOS", "missing", "0"],
        &["BITPOS", "s", "1", "x"],
        &["BITPOS", "s", "1", "0", "1", "BITS"],
        &["BITPOS", "s", "0", "0", "-1", "bit"],
        &["BITPOS", "s", "1", "2", "-1", "BYTE", "x"],
        &["BITOP", "NOT", "d", "l", "l"],
        &["BITOP", "AND", "d", "l"],
        &["BITOP", "DIFF", "d", "s"],
        &["BITOP", "NOT", "d", "missing"],
        &["EXISTS", "d"],
        &["BITFIELD", "l", "GET", "u8", "0"],
        &["BITFIELD", "l", "GET", "x8", "0"],
        &["BITFIELD", "s", "GET", "u64", "0"],
        &["BITFIELD", "s", "GET", "i8"],
        &["BITFIELD", "s", "OVERFLOW", "foo", "GET", "i8", "0"],
        &["BITFIELD", "s", "SET", "i8", "0", "1.5"],
        &["BITFIELD", "s", "GET", "u8", "#536870912"],
        &["BITFIELD", "s"],
        &["BITFIELD_RO", "s", "GET", "i8", "0", "SET", "i8", "0", "1"],
        &["BITFIELD_RO", "s", "OVERFLOW", "SAT", "GET", "i8", "0"],
        &["BITFIELD", "g", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "5"],
        &["STRLEN", "g"],
        &["GET", "s"],
    ];
    same_lines(&mut n, &mut r, lines);
}

/// SETBIT on a 100 MB value writes one 1 KiB chunk, not the value: after
/// bits set far apart on a value grown to 100 MB, the store holds one chunk
/// per bit and the value reads back right (its speed is in
/// `benches/bitmap.rs` and perf/RESULTS.md).
#[test]
fn setbit_on_a_big_value_writes_a_chunk() {
    use neokv::storage::{Cf, Storage};
    let mut s = Server::start();
    let mut c = s.raw();
    let last = 100_000_000u64 * 8 - 1;
    assert_eq!(c.cmd(&["SETBIT", "big", &last.to_string(), "1"]), ":0\r\n");
    assert_eq!(c.cmd(&["STRLEN", "big"]), ":100000000\r\n");
    let bits = [0u64, 12_345_678, 400_000_000, 799_999_000];
    for b in bits {
        assert_eq!(c.cmd(&["SETBIT", "big", &b.to_string(), "1"]), ":0\r\n");
    }
    assert_eq!(c.cmd(&["SETBIT", "big", "12345678", "0"]), ":1\r\n");
    assert_eq!(c.cmd(&["BITCOUNT", "big"]), ":4\r\n");
    assert_eq!(c.cmd(&["BITPOS", "big", "1", "1"]), ":400000000\r\n");
    assert_eq!(c.cmd(&["SAVE"]), "+OK\r\n");
    s.kill9();
    let storage = Storage::open(&s.dir, &Default::default()).unwrap();
    let chunks = storage.iter_all(Cf::Subkey).count();
    // Chunks holding bits 0, 12 345 678 (now 0, still stored), 400 000 000,
    // and the last two (799 999 000 and the last bit share one).
    assert_eq!(chunks, 4, "a 100 MB bitmap with 5 bits set is 4 chunks, not 97 657");
}
