//! The differential check against redis-server 7.0 that
//! `differential_against_redis` runs: random XADD / XDEL / XTRIM, replies and
//! node counts and listpack bytes compared with the model.

use super::tests::sid;
use super::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

#[derive(Debug)]
enum V {
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Arr(Option<Vec<V>>),
    Status(String),
    Err(String),
}

struct Conn {
    r: BufReader<TcpStream>,
    w: TcpStream,
    trace: bool,
}

impl Conn {
    fn cmd(&mut self, args: &[Vec<u8>]) -> V {
        let mut b = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            b.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            b.extend_from_slice(a);
            b.extend_from_slice(b"\r\n");
        }
        if self.trace {
            let shown: Vec<String> = args.iter().map(|a| format!("{:?}", String::from_utf8_lossy(a))).collect();
            eprintln!("> {}", shown.join(" "));
        }
        self.w.write_all(&b).unwrap();
        self.read()
    }

    fn read(&mut self) -> V {
        let mut line = Vec::new();
        self.r.read_until(b'\n', &mut line).unwrap();
        assert!(line.len() >= 3, "the server closed the connection");
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        match line[0] {
            b'+' => V::Status(body),
            b'-' => V::Err(body),
            b':' => V::Int(body.parse().unwrap()),
            b'$' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return V::Bulk(None);
                }
                let mut d = vec![0; n as usize + 2];
                self.r.read_exact(&mut d).unwrap();
                d.truncate(n as usize);
                V::Bulk(Some(d))
            }
            b'*' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return V::Arr(None);
                }
                V::Arr(Some((0..n).map(|_| self.read()).collect()))
            }
            c => panic!("bad reply byte {c}"),
        }
    }

    fn ok(&mut self, args: &[&str]) {
        let a: Vec<Vec<u8>> = args.iter().map(|s| s.as_bytes().to_vec()).collect();
        if let V::Err(e) = self.cmd(&a) {
            panic!("{args:?}: {e}");
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const INTS: &[&str] = &[
    "12",
    "-5",
    "007",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "1e3",
    "0",
    "-0",
    "127",
    "128",
    "-1",
    "4095",
    "4096",
    "-4096",
    "-4097",
    "32767",
    "32768",
    "-32768",
    "-32769",
    "8388607",
    "8388608",
    "-8388608",
    "-8388609",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "+1",
    " 1",
    "1 ",
    "00",
    "-",
    "18446744073709551615",
    "99999999999999999999",
];

fn letters(rng: &mut Rng, n: u64) -> Vec<u8> {
    (0..n).map(|_| b'a' + rng.below(26) as u8).collect()
}

fn value(rng: &mut Rng, big: bool) -> Vec<u8> {
    match rng.below(10) {
        0..=2 => rng.pick(INTS).as_bytes().to_vec(),
        3 => {
            let mut v = Vec::new();
            if rng.below(3) == 0 {
                v.push(b'-');
            }
            for _ in 0..1 + rng.below(22) {
                v.push(b'0' + rng.below(10) as u8);
            }
            v
        }
        _ => {
            let n = if big && rng.below(30) == 0 { 4000 + rng.below(1200) } else { rng.below(301) };
            letters(rng, n)
        }
    }
}

fn field(rng: &mut Rng, short: bool) -> Vec<u8> {
    if short {
        let n = rng.below(3);
        return letters(rng, n);
    }
    match rng.below(8) {
        0..=3 => rng.pick(&["f", "name", "a", "b", "12", "-5", "0", ""]).as_bytes().to_vec(),
        4 => rng.pick(INTS).as_bytes().to_vec(),
        5 => {
            let n = rng.below(71);
            letters(rng, n)
        }
        6 => vec![b'x'; 63 + rng.below(2) as usize],
        _ => letters(rng, 1),
    }
}

struct SimNode {
    node: Node,
    ids: Vec<(Sid, bool)>,
}

#[derive(Default)]
struct Stats {
    steps: u64,
    xadd: u64,
    xadd_trim: u64,
    xdel: u64,
    xtrim: u64,
    approx: u64,
    trimmed: u64,
    removed_nodes: u64,
    marks: u64,
    zero_live_nodes: u64,
    split_bytes: u64,
    split_entries: u64,
    byte_checks: u64,
    max_nodes: usize,
    max_node_entries: u64,
    max_length: u64,
    limit_bound: u64,
}

struct Sim {
    nodes: Vec<SimNode>,
    length: u64,
    last: Sid,
    lim: Limits,
}

impl Sim {
    fn xadd(&mut self, id: Sid, fv: &[(&[u8], &[u8])], st: &mut Stats) {
        let lim = self.lim;
        match self.nodes.last_mut() {
            Some(t) if t.node.fits(fv, &lim) => {
                t.node.push(id, fv);
                t.ids.push((id, true));
            }
            tail => {
                if let Some(t) = tail {
                    if lim.max_entries != 0 && t.node.live + t.node.deleted >= lim.max_entries {
                        st.split_entries += 1;
                    } else {
                        st.split_bytes += 1;
                    }
                }
                self.nodes.push(SimNode { node: Node::first(id, fv), ids: vec![(id, true)] });
            }
        }
        self.length += 1;
        self.last = id;
    }

    fn xdel(&mut self, id: Sid) -> bool {
        let Some(i) = self.nodes.iter().rposition(|n| n.node.master <= id) else { return false };
        let n = &mut self.nodes[i];
        let Some(p) = n.ids.iter().position(|&(x, live)| x == id && live) else { return false };
        if n.node.live == 1 {
            self.nodes.remove(i);
        } else {
            n.ids[p].1 = false;
            n.node.delete(1);
        }
        self.length -= 1;
        true
    }

    fn trim(&mut self, t: &Trim, approx: bool, limit: u64, st: &mut Stats) -> u64 {
        let nodes = &self.nodes;
        let plan = plan_trim(self.length, t, approx, limit, nodes.iter().map(|n| &n.node), |node, min| {
            let sn = nodes.iter().find(|s| s.node.master == node.master).unwrap();
            sn.ids.iter().filter(|&&(x, live)| live && x < min).count() as u64
        });
        if limit != 0 {
            let unlimited = plan_trim(self.length, t, approx, 0, nodes.iter().map(|n| &n.node), |_, _| 0);
            if unlimited.remove != plan.remove {
                st.limit_bound += 1;
            }
        }
        let mut deleted = 0;
        for n in self.nodes.drain(..plan.remove) {
            deleted += n.node.live;
        }
        if plan.mark > 0 {
            let n = &mut self.nodes[0];
            let mut k = plan.mark;
            for e in n.ids.iter_mut() {
                if k > 0 && e.1 {
                    e.1 = false;
                    k -= 1;
                }
            }
            assert_eq!(k, 0);
            n.node.delete(plan.mark);
            deleted += plan.mark;
            st.marks += 1;
            if n.node.live == 0 {
                st.zero_live_nodes += 1;
            }
        }
        assert_eq!(deleted, plan.deleted);
        self.length -= deleted;
        st.removed_nodes += plan.remove as u64;
        st.trimmed += deleted;
        deleted
    }

    fn first_live(&self) -> Option<Sid> {
        self.nodes.iter().flat_map(|n| n.ids.iter()).find(|e| e.1).map(|e| e.0)
    }

    fn all_ids(&self) -> Vec<Sid> {
        self.nodes.iter().flat_map(|n| n.ids.iter().map(|e| e.0)).collect()
    }
}

fn sid_str(s: Sid) -> String {
    format!("{}-{}", s.ms, s.seq)
}

fn parse_sid(b: &[u8]) -> Sid {
    let s = std::str::from_utf8(b).unwrap();
    let (a, b) = s.split_once('-').unwrap();
    sid(a.parse().unwrap(), b.parse().unwrap())
}

fn rdb_len(n: u64) -> u64 {
    match n {
        0..=63 => 1,
        64..=16383 => 2,
        16384..=0xFFFF_FFFF => 5,
        _ => 9,
    }
}

fn next_id(rng: &mut Rng, last: Sid) -> Option<Sid> {
    let r = rng.below(100);
    Some(match r {
        0..=11 => return None,
        12..=49 => sid(last.ms, last.seq + 1 + rng.below(3)),
        50..=79 => sid(last.ms + 1 + rng.below(5), if rng.below(3) == 0 { rng.below(70) } else { rng.below(5) }),
        80..=89 => sid(last.ms + 1 + rng.below(100_000), rng.below(20_000)),
        90..=95 => sid(last.ms + (1 << (7 + rng.below(34))) + rng.below(1000), (1 << rng.below(41)) + rng.below(10)),
        _ => sid(last.ms, last.seq + (1 << rng.below(40))),
    })
}

/// Trimming arguments: (words, strategy, approx, effective limit).
fn trim_args(rng: &mut Rng, sim: &Sim) -> (Vec<Vec<u8>>, Trim, bool, u64) {
    let mut w: Vec<Vec<u8>> = Vec::new();
    let maxlen = rng.below(100) < 55;
    w.push(if maxlen { b"MAXLEN".to_vec() } else { b"MINID".to_vec() });
    let mode = rng.below(3);
    let approx = mode == 2;
    match mode {
        1 => w.push(b"=".to_vec()),
        2 => w.push(b"~".to_vec()),
        _ => {}
    }
    let trim = if maxlen {
        let n = match rng.below(4) {
            0 => rng.below(sim.length + 3),
            1 => sim.length.saturating_sub(rng.below(400)),
            _ => sim.length.saturating_sub(rng.below(60)),
        };
        w.push(n.to_string().into_bytes());
        Trim::MaxLen(n)
    } else {
        let ids = sim.all_ids();
        let id = match rng.below(20) {
            0..=2 => sid(0, rng.below(2)),
            3..=4 => sid(sim.last.ms, sim.last.seq.saturating_add(rng.below(2))),
            _ if ids.is_empty() => sim.last,
            _ => {
                let id = *rng.pick(&ids);
                match rng.below(4) {
                    0 => sid(id.ms, id.seq.saturating_add(1)),
                    1 => sid(id.ms, id.seq.saturating_sub(1)),
                    _ => id,
                }
            }
        };
        w.push(sid_str(id).into_bytes());
        Trim::MinId(id)
    };
    let mut limit = if approx { sim.lim.default_trim_limit() } else { 0 };
    if approx && rng.below(2) == 0 {
        let any = rng.below(300);
        limit = *rng.pick(&[0, 1, 5, 50, 100, 150, 1000, any]);
        w.push(b"LIMIT".to_vec());
        w.push(limit.to_string().into_bytes());
    }
    (w, trim, approx, limit)
}

fn info(c: &mut Conn, key: &[u8]) -> Vec<(String, V)> {
    match c.cmd(&[b"XINFO".to_vec(), b"STREAM".to_vec(), key.to_vec()]) {
        V::Arr(Some(items)) => {
            let mut out = Vec::new();
            let mut it = items.into_iter();
            while let (Some(V::Bulk(Some(k))), Some(v)) = (it.next(), it.next()) {
                out.push((String::from_utf8(k).unwrap(), v));
            }
            out
        }
        v => panic!("XINFO: {v:?}"),
    }
}

fn get<'a>(info: &'a [(String, V)], k: &str) -> &'a V {
    &info.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1
}

fn int(v: &V) -> u64 {
    match v {
        V::Int(i) => *i as u64,
        v => panic!("not an int: {v:?}"),
    }
}

fn bulk_sid(v: &V) -> Sid {
    match v {
        V::Bulk(Some(b)) => parse_sid(b),
        v => panic!("not an id: {v:?}"),
    }
}

const MAX_BYTES: &[u64] = &[4096, 4096, 4096, 0, 1, 60, 120, 300, 700, 1500, 8192, 65536];
const MAX_ENTRIES: &[u64] = &[100, 100, 100, 0, 1, 2, 3, 7, 20, 50, 500];

fn set_limits(c: &mut Conn, lim: &Limits) {
    c.ok(&["CONFIG", "SET", "stream-node-max-bytes", &lim.max_bytes.to_string()]);
    c.ok(&["CONFIG", "SET", "stream-node-max-entries", &lim.max_entries.to_string()]);
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A redis-server child on a free loopback port, killed on drop.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_redis() -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = std::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--enable-debug-command", "local"])
        .arg("--dir")
        .arg(std::env::temp_dir())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server (7.0) must be on PATH");
    let child = Child(child);
    let addr = format!("127.0.0.1:{port}");
    for _ in 0..100 {
        if TcpStream::connect(&addr).is_ok() {
            return (child, addr);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("redis-server did not listen on {addr}");
}

pub(super) fn run() {
    let (_child, addr) = match std::env::var("STREAM_NODE_REDIS") {
        Ok(addr) => (None, addr),
        Err(_) => {
            let (child, addr) = spawn_redis();
            (Some(child), addr)
        }
    };
    let w = TcpStream::connect(&addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let trace = std::env::var_os("STREAM_NODE_TRACE").is_some();
    let mut c = Conn { r: BufReader::new(w.try_clone().unwrap()), w, trace };
    c.ok(&["CONFIG", "SET", "rdbcompression", "no"]);
    let seeds = env("STREAM_NODE_SEEDS", 200);
    let steps = env("STREAM_NODE_STEPS", 400);
    let seed0 = env("STREAM_NODE_SEED0", 1);
    let key = b"stream_node:diff".to_vec();
    let mut st = Stats::default();
    let mut debug = true;
    for seed in seed0..seed0 + seeds {
        if trace {
            eprintln!("seed {seed}");
        }
        let mut rng = Rng(seed.wrapping_mul(0x2545F4914F6CDD1D));
        let mut lim = Limits { max_bytes: *rng.pick(MAX_BYTES), max_entries: *rng.pick(MAX_ENTRIES) };
        if seed % 14 == 6 {
            // Long streams in big nodes: master counts above 127.
            lim = Limits { max_bytes: *rng.pick(&[0, 65536]), max_entries: *rng.pick(&[0, 500]) };
        }
        set_limits(&mut c, &lim);
        c.ok(&["DEL", "stream_node:diff"]);
        let big = seed % 5 == 0;
        let mut sim = Sim { nodes: Vec::new(), length: 0, last: sid(rng.below(1000), 0), lim };
        let mut prev_fields: Vec<Vec<u8>> = Vec::new();
        for step in 0..steps {
            st.steps += 1;
            let long = seed % 7 == 6;
            if !long && rng.below(100) == 0 {
                // Never lower the listpack preallocation mid-stream: redis-server
                // 7.0.15 can then leave a dangling node pointer (XADD shrinks the
                // old tail, the new node lands on its old address; valkey issue
                // #4705, fix PR #4711) and crash or read freed memory.
                let prealloc = |b: u64| if b == 0 || b > 4096 { 4096 } else { b };
                let mut max_bytes = *rng.pick(MAX_BYTES);
                if prealloc(max_bytes) < prealloc(lim.max_bytes) {
                    max_bytes = lim.max_bytes;
                }
                lim = Limits { max_bytes, max_entries: *rng.pick(MAX_ENTRIES) };
                set_limits(&mut c, &lim);
                sim.lim = lim;
            }
            // Op mix by seed: balanced, growing, or XDEL-heavy.
            let (add, del) = if long { (99, 100) } else { [(60, 75), (85, 95), (50, 85)][(seed % 3) as usize] };
            let op = if step == 0 { 0 } else { rng.below(100) };
            let ctx = |what: &str| format!("seed {seed} step {step} ({lim:?}): {what}");
            let mut args: Vec<Vec<u8>> = Vec::new();
            if op < add {
                // XADD
                st.xadd += 1;
                args.push(b"XADD".to_vec());
                args.push(key.clone());
                let trim_pct = if long {
                    (step * 5 > steps * 4) as u64 * 10
                } else if seed % 3 == 1 {
                    5
                } else {
                    20
                };
                let trim = if rng.below(100) < trim_pct {
                    st.xadd_trim += 1;
                    let t = trim_args(&mut rng, &sim);
                    args.extend(t.0.iter().cloned());
                    Some(t)
                } else {
                    None
                };
                let id = next_id(&mut rng, sim.last);
                args.push(id.map_or(b"*".to_vec(), |id| sid_str(id).into_bytes()));
                let r = rng.below(100);
                let fields: Vec<Vec<u8>> = if r < 35 && !prev_fields.is_empty() {
                    prev_fields.clone()
                } else if r < 50 && !sim.nodes.is_empty() {
                    sim.nodes.last().unwrap().node.fields.clone()
                } else {
                    // Now and then many fields, for counts above 127.
                    let n = if rng.below(40) == 0 { 1 + rng.below(140) } else { 1 + rng.below(6) };
                    (0..n)
                        .map(|_| {
                            let short = n > 6 && rng.below(2) == 0;
                            field(&mut rng, short)
                        })
                        .collect()
                };
                let values: Vec<Vec<u8>> = if fields.len() > 6 {
                    fields
                        .iter()
                        .map(|_| match rng.below(3) {
                            0 => rng.pick(INTS).as_bytes().to_vec(),
                            _ => {
                                let n = rng.below(4);
                                letters(&mut rng, n)
                            }
                        })
                        .collect()
                } else {
                    fields.iter().map(|_| value(&mut rng, big)).collect()
                };
                for (f, v) in fields.iter().zip(&values) {
                    args.push(f.clone());
                    args.push(v.clone());
                }
                let got = match c.cmd(&args) {
                    V::Bulk(Some(b)) => parse_sid(&b),
                    v => panic!("{}", ctx(&format!("XADD replied {v:?}"))),
                };
                if let Some(id) = id {
                    assert_eq!(got, id, "{}", ctx("XADD id"));
                }
                let fv: Vec<(&[u8], &[u8])> = fields.iter().zip(&values).map(|(f, v)| (&f[..], &v[..])).collect();
                sim.xadd(got, &fv, &mut st);
                prev_fields = fields;
                if let Some((_, t, approx, limit)) = trim {
                    st.approx += approx as u64;
                    sim.trim(&t, approx, limit, &mut st);
                }
            } else if op < del {
                // XDEL
                st.xdel += 1;
                let ids = sim.all_ids();
                let mut del = Vec::new();
                for _ in 0..1 + rng.below(3) {
                    del.push(match rng.below(10) {
                        0 => sid(sim.last.ms, sim.last.seq + 1),
                        _ if ids.is_empty() => sid(0, 1),
                        _ => *rng.pick(&ids),
                    });
                }
                args.push(b"XDEL".to_vec());
                args.push(key.clone());
                args.extend(del.iter().map(|&d| sid_str(d).into_bytes()));
                let want = del.iter().filter(|&&d| sim.xdel(d)).count() as u64;
                match c.cmd(&args) {
                    V::Int(n) => assert_eq!(n as u64, want, "{}", ctx("XDEL reply")),
                    v => panic!("{}", ctx(&format!("XDEL replied {v:?}"))),
                }
            } else {
                // XTRIM
                st.xtrim += 1;
                let (w, t, approx, limit) = trim_args(&mut rng, &sim);
                st.approx += approx as u64;
                args.push(b"XTRIM".to_vec());
                args.push(key.clone());
                args.extend(w);
                let want = sim.trim(&t, approx, limit, &mut st);
                match c.cmd(&args) {
                    V::Int(n) => {
                        assert_eq!(n as u64, want, "{}", ctx(&format!("XTRIM reply to {t:?} ~{approx} limit {limit}")))
                    }
                    v => panic!("{}", ctx(&format!("XTRIM replied {v:?}"))),
                }
            }
            let what = || String::from_utf8_lossy(&args.concat()).chars().take(200).collect::<String>();
            match c.cmd(&[b"XLEN".to_vec(), key.clone()]) {
                V::Int(n) => assert_eq!(n as u64, sim.length, "{}", ctx(&format!("XLEN after {}", what()))),
                v => panic!("XLEN: {v:?}"),
            }
            let inf = info(&mut c, &key);
            assert_eq!(
                int(get(&inf, "radix-tree-keys")),
                sim.nodes.len() as u64,
                "{}",
                ctx(&format!("radix-tree-keys after {}", what()))
            );
            let last = bulk_sid(get(&inf, "last-generated-id"));
            assert_eq!(last, sim.last, "{}", ctx("last-generated-id"));
            let first = match get(&inf, "first-entry") {
                V::Arr(Some(e)) => Some(bulk_sid(&e[0])),
                _ => None,
            };
            assert_eq!(first, sim.first_live(), "{}", ctx("first-entry"));
            st.max_nodes = st.max_nodes.max(sim.nodes.len());
            st.max_length = st.max_length.max(sim.length);
            for n in &sim.nodes {
                st.max_node_entries = st.max_node_entries.max(n.node.live + n.node.deleted);
            }
            if debug {
                match c.cmd(&[b"DEBUG".to_vec(), b"OBJECT".to_vec(), key.clone()]) {
                    V::Status(s) => {
                        let got: u64 =
                            s.split(' ').find_map(|p| p.strip_prefix("serializedlength:")).unwrap().parse().unwrap();
                        let rec_first = bulk_sid(get(&inf, "recorded-first-entry-id"));
                        let maxdel = bulk_sid(get(&inf, "max-deleted-entry-id"));
                        let mut want = rdb_len(sim.nodes.len() as u64);
                        for n in &sim.nodes {
                            let b = n.node.lp_bytes();
                            want += 1 + 16 + rdb_len(b) + b;
                        }
                        want += rdb_len(sim.length);
                        for x in [last, rec_first, maxdel] {
                            want += rdb_len(x.ms) + rdb_len(x.seq);
                        }
                        want += rdb_len(int(get(&inf, "entries-added"))) + rdb_len(0);
                        assert_eq!(got, want, "{}", ctx(&format!("serializedlength after {}", what())));
                        st.byte_checks += 1;
                    }
                    V::Err(e) => {
                        eprintln!("DEBUG OBJECT unavailable ({e}): listpack bytes not checked");
                        debug = false;
                    }
                    v => panic!("DEBUG OBJECT: {v:?}"),
                }
            }
        }
    }
    if std::env::var_os("STREAM_NODE_KEEP").is_none() {
        set_limits(&mut c, &Limits::default());
        c.ok(&["CONFIG", "SET", "rdbcompression", "yes"]);
        c.ok(&["DEL", "stream_node:diff"]);
    }
    let s = &st;
    println!(
        "seeds {seed0}..{}: {} steps (XADD {}, with trim {}; XDEL {}; XTRIM {}; approx trims {}), \
         {} entries trimmed, {} nodes removed by trims, {} in-node marks ({} leaving 0 live), \
         {} trims cut short by LIMIT, splits by bytes {} / by entries {}, max nodes {}, \
         max entries in a node {}, max length {}, {} listpack-size checks",
        seed0 + seeds - 1,
        s.steps,
        s.xadd,
        s.xadd_trim,
        s.xdel,
        s.xtrim,
        s.approx,
        s.trimmed,
        s.removed_nodes,
        s.marks,
        s.zero_live_nodes,
        s.limit_bound,
        s.split_bytes,
        s.split_entries,
        s.max_nodes,
        s.max_node_entries,
        s.max_length,
        s.byte_checks
    );
}
