//! Seeded fuzz of Lua scripts through EVAL, against the real binary with
//! redis-server 7.0 as the oracle. About 300 scripts drawn from a grammar that
//! mixes valid snippets (redis.call/pcall of INCRBY/SET/GET/INCR/HSET/LPUSH/
//! ZADD on KEYS, string, table, cjson, cmsgpack, bit, struct code, returns of
//! every type), syntax errors (truncated code, unbalanced `end`, garbage
//! bytes), runtime errors (calling or indexing nil, redis.call with a wrong
//! arity, an unknown command, a wrong type, error() with tables and strings),
//! deep recursion, big tables and strings, memory bombs under
//! `lua-memory-limit`, and attempts to write globals or reach os/io/loadstring
//! and the function environments, over RESP2 and RESP3 connections.
//!
//! Every reply must be well-formed RESP (an error or status reply one line)
//! and byte-identical to redis-server's. Every 25 scripts the server must be up
//! and answer PING and a trivial script; the keys the scripts write must hold
//! what redis-server's hold; and one counter that only the valid snippets
//! INCRBY must equal a model of the grammar (a script keeps the writes made
//! before its error, as Redis does), which redis-server must equal too. Both
//! then SCRIPT FLUSH, so one sandbox escape does not make every later script
//! differ. At ~10 random points an endless loop must make the server answer
//! BUSY, SCRIPT KILL must stop it with redis-server's reply, and the server
//! must serve again; at the end a loop that wrote first is UNKILLABLE. The
//! seed is printed: `NEOKV_SEED=<seed>` replays a run.

use std::io::BufRead;
use std::time::{Duration, Instant};

use crate::common::{encode_cmd, fuzz_seed, read_frame_strict, Oracle, Raw, Server, XorShift};

/// The keys every script gets, in KEYS order: a counter only INCRBY touches, a
/// string that never holds an integer, a hash, a list, a sorted set, an integer.
const KEYS: [&str; 6] = ["fz:ctr", "fz:s", "fz:h", "fz:l", "fz:z", "fz:n"];
/// ARGV[1] is the increment some snippets use.
const ARGV: [&str; 2] = ["7", "x"];
const SCRIPTS: usize = 300;
const REPLY_TIMEOUT: Duration = Duration::from_secs(15);

/// What running a statement does, as Redis runs it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Eff {
    /// Runs to its end.
    Ok,
    /// Always raises an error: the script stops there.
    Raises,
    /// May or may not raise: no counter write is generated after it.
    Unknown,
}

struct Stmt {
    code: String,
    eff: Eff,
    /// How much the counter changes when the statement runs (up to its error, if it raises).
    incr: i64,
    /// redis-server 7.0.15 crashes on it (`error({})`): NeoKV only.
    neokv_only: bool,
}

impl Stmt {
    fn new(code: impl Into<String>, eff: Eff) -> Stmt {
        Stmt { code: code.into(), eff, incr: 0, neokv_only: false }
    }
    fn incr(code: impl Into<String>, eff: Eff, incr: i64) -> Stmt {
        Stmt { code: code.into(), eff, incr, neokv_only: false }
    }
}

struct Script {
    body: Vec<u8>,
    /// The counter's change, as Redis runs the script.
    incr: i64,
    /// What redis-server runs instead: the same script with the statements it
    /// would crash on replaced by ones that raise at the same point (replies
    /// then not compared), or nothing (a read-only memory bomb: redis-server has
    /// no memory limit).
    oracle_body: Option<Vec<u8>>,
    /// The replies are not compared (redis-server ran something else).
    neokv_only: bool,
    /// NeoKV must answer an error (a memory bomb under lua-memory-limit).
    must_fail: bool,
    kind: &'static str,
}

/// The effect and counter change of statements run in sequence.
fn combine(stmts: &[Stmt]) -> (Eff, i64) {
    let mut incr = 0;
    for s in stmts {
        incr += s.incr;
        if s.eff != Eff::Ok {
            return (s.eff, incr);
        }
    }
    (Eff::Ok, incr)
}

/// A statement that never raises. With `ctr`, it may INCRBY the counter.
fn valid(r: &mut XorShift, ctr: bool) -> Stmt {
    let n = r.range(1, 1000);
    let m = r.range(-500, 500);
    let k = r.range(0, 40);
    let c = if ctr { r.below(31) } else { 5 + r.below(26) };
    match c {
        0 => {
            let code = match r.below(4) {
                0 => format!("redis.call('INCRBY', KEYS[1], {m})"),
                1 => format!("redis.call('incrby', KEYS[1], '{m}')"),
                2 => format!("redis.pcall('INCRBY', KEYS[1], {m})"),
                _ => format!("local v = redis.call('INCRBY', KEYS[1], {m}) + 0"),
            };
            Stmt::incr(code, Eff::Ok, m)
        }
        1 => Stmt::incr("redis.call('INCRBY', KEYS[1], ARGV[1])", Eff::Ok, 7),
        2 => {
            let times = r.range(1, 5);
            Stmt::incr(format!("for i = 1, {times} do redis.call('INCRBY', KEYS[1], {m}) end"), Eff::Ok, times * m)
        }
        3 => Stmt::incr(
            format!("local okw, ew = pcall(function() redis.call('INCRBY', KEYS[1], {m}) error('after the write') end)"),
            Eff::Ok,
            m,
        ),
        4 => Stmt::incr(format!("if redis.call('INCRBY', KEYS[1], {m}) then local z = 1 end"), Eff::Ok, m),
        // From here on the counter is not changed.
        5 => Stmt::new(
            r.pick(&[
                "redis.pcall('INCRBY', KEYS[1], 'x')",
                "redis.pcall('INCRBY', KEYS[1], 1.5)",
                "redis.pcall('HSET', KEYS[1], 'f', 'v')",
                "redis.pcall('INCRBY', KEYS[1])",
            ]),
            Eff::Ok,
        ),
        6 => Stmt::new(format!("redis.call('SET', KEYS[2], 'v{n}')"), Eff::Ok),
        7 => Stmt::new("local v = redis.call('GET', KEYS[2])", Eff::Ok),
        8 => Stmt::new("redis.call('INCR', KEYS[6])", Eff::Ok),
        9 => Stmt::new(format!("redis.call('HSET', KEYS[3], 'f{k}', '{n}')"), Eff::Ok),
        10 => Stmt::new(
            format!("redis.call('LPUSH', KEYS[4], 'a{n}', {n}) redis.call('LTRIM', KEYS[4], 0, 30)"),
            Eff::Ok,
        ),
        11 => Stmt::new(format!("redis.call('ZADD', KEYS[5], {m}.5, 'm{k}')"), Eff::Ok),
        12 => Stmt::new(
            format!(
                "local s = string.rep('ab', {k}) .. string.upper('x') .. string.format('%d:%s:%5.2f', {n}, 'q', {n} / 7) .. string.sub('hello', 2, 4)"
            ),
            Eff::Ok,
        ),
        13 => Stmt::new(
            format!("local t = {{1, 'two', {{3}}}} table.insert(t, {n}) local c = table.concat({{1, 2, 3}}, ',') .. #t"),
            Eff::Ok,
        ),
        14 => Stmt::new(format!("local j = cjson.decode(cjson.encode({{a = {n}, b = {{1, 2}}}}))"), Eff::Ok),
        15 => Stmt::new(format!("local x = math.floor({n} / 3) + math.max(1, {m}) % 7"), Eff::Ok),
        16 => Stmt::new(format!("local e = redis.pcall('NOSUCH{k}')"), Eff::Ok),
        17 => Stmt::new("local okp, ep = pcall(function() local t = nil return t.x end)", Eff::Ok),
        18 => Stmt::new(format!("local f = loadstring('return {n}') local v = f()"), Eff::Ok),
        19 => Stmt::new("local p = cmsgpack.unpack(cmsgpack.pack({1, 2, 'x'}))", Eff::Ok),
        20 => Stmt::new(format!("local h = redis.sha1hex('x{n}')"), Eff::Ok),
        21 => Stmt::new(format!("local b = bit.bxor({n}, 255) + bit.lshift(1, 4)"), Eff::Ok),
        22 => Stmt::new(format!("local st = struct.unpack('>I2', struct.pack('>I2', {n}))"), Eff::Ok),
        23 => Stmt::new("local lr = redis.call('LRANGE', KEYS[4], 0, -1)", Eff::Ok),
        24 => Stmt::new("local zr = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '+inf', 'WITHSCORES')", Eff::Ok),
        25 => Stmt::new("local okc, ec = pcall(error, {err = 'caught'})", Eff::Ok),
        26 => Stmt::new(format!("local s = tostring({n}) .. tonumber('{n}')"), Eff::Ok),
        27 => Stmt::new(
            "local t = {} for i = 1, 100 do t[#t + 1] = i * 2 end table.sort(t, function(a, b) return a > b end)",
            Eff::Ok,
        ),
        28 => Stmt::new("local ex = redis.call('EXISTS', KEYS[2], KEYS[3])", Eff::Ok),
        29 => Stmt::new("local okr, er = pcall(redis.call, 'LPUSH', KEYS[2], 'x')", Eff::Ok),
        _ => Stmt::new("local noop = nil", Eff::Ok),
    }
}

/// A statement that always raises (in Redis).
fn failing(r: &mut XorShift, ctr: bool) -> Stmt {
    let n = r.range(1, 1000);
    let m = r.range(-500, 500);
    match r.below(27) {
        0 => Stmt::new("local f = nil f()", Eff::Raises),
        1 => Stmt::new("local t = nil local x = t.field", Eff::Raises),
        2 => Stmt::new(format!("local x = nosuch_global_{n}"), Eff::Raises),
        3 => Stmt::new("redis.call('GET')", Eff::Raises),
        4 => Stmt::new("redis.call('SET', KEYS[2])", Eff::Raises),
        5 => Stmt::new(format!("redis.call('NOSUCHCMD{n}', 'a')"), Eff::Raises),
        6 => Stmt::new("redis.call('LPUSH', KEYS[2], 'x')", Eff::Raises),
        7 => Stmt::new("redis.call('INCR', KEYS[2])", Eff::Raises),
        8 => Stmt::new("redis.call('HSET', KEYS[1], 'f', 'v')", Eff::Raises),
        9 => Stmt::new(format!("redis.call('INCRBY', KEYS[1], 'x{n}')"), Eff::Raises),
        10 => Stmt::new(format!("error('boom {n}')"), Eff::Raises),
        11 => Stmt::new("error('multi\\nline\\r\\nerror')", Eff::Raises),
        12 => Stmt::new(format!("error({{err = 'MYERR custom {n}'}})"), Eff::Raises),
        13 => Stmt::new("error({err = 'E\\r\\nX'})", Eff::Raises),
        14 => Stmt::new(
            r.pick(&["error(42)", "error(true)", "error(nil)", "error('x', 0)", "error('x', 2)"]),
            Eff::Raises,
        ),
        15 => Stmt::new(
            r.pick(&["assert(false)", "assert(nil, 'assertion failed here')", "assert(false, {err = 'ASSERT x'})"]),
            Eff::Raises,
        ),
        16 => Stmt::new("redis.call('SET', KEYS[2], {})", Eff::Raises),
        17 => Stmt::new(r.pick(&["redis.call()", "redis.call(nil)", "redis.call({})", "redis.call(1)"]), Eff::Raises),
        18 => Stmt::new("local x = 'a' + 1", Eff::Raises),
        19 => Stmt::new("local x = #nil", Eff::Raises),
        20 => Stmt::new(
            r.pick(&[
                "redis.call('EVAL', 'return 1', 0)",
                "redis.call('MULTI')",
                "redis.call('SUBSCRIBE', 'c')",
                "redis.call('SCRIPT', 'KILL')",
            ]),
            Eff::Raises,
        ),
        21 => Stmt::new("redis.setresp(4)", Eff::Raises),
        22 => Stmt::new("local x = {} .. 'a'", Eff::Raises),
        23 => Stmt::new(
            "local mt = setmetatable({}, {__index = function(t, k) return t[k] end}) local x = mt.a",
            Eff::Raises,
        ),
        24 => Stmt::new("local f = string.find('x', string.rep('(', 40) .. 'x' .. string.rep(')', 40))", Eff::Raises),
        25 if ctr => Stmt::incr(format!("redis.call('INCRBY', KEYS[1], {m}) error('after the write')"), Eff::Raises, m),
        25 => Stmt::new("redis.call('ZADD', KEYS[5], 'nan', 'm')", Eff::Raises),
        // redis-server 7.0.15 crashes on an error table without `err` (fixed in 8.2): NeoKV only.
        _ => Stmt {
            code: r.pick(&["error({})", "error({x = 1})"]).to_string(),
            eff: Eff::Raises,
            incr: 0,
            neokv_only: true,
        },
    }
}

/// Attempts to write globals or to reach what the sandbox hides; all raise in Redis.
fn sandbox(r: &mut XorShift) -> Stmt {
    let n = r.range(1, 1000);
    let code = match r.below(28) {
        0 => format!("x{n} = 1"),
        1 => "_G.y = 1".into(),
        2 => "rawset(_G, 'z', 1)".into(),
        3 => "setmetatable(_G, nil)".into(),
        4 => "KEYS = {}".into(),
        5 => "string.upper = nil".into(),
        6 => "redis.call = nil".into(),
        7 => "os.exit(1)".into(),
        8 => "os.execute('true')".into(),
        9 => "io.open('/etc/passwd')".into(),
        10 => "io.write('x')".into(),
        11 => "print('x')".into(),
        12 => "dofile('/etc/passwd')".into(),
        13 => "loadfile('/etc/passwd')".into(),
        14 => "require('os')".into(),
        15 => "loadstring('x = 1')()".into(),
        16 => "loadstring('os.exit(1)')()".into(),
        17 => "module('m')".into(),
        18 => "function g() end".into(),
        19 => "table.insert(_G, 1)".into(),
        20 => "setfenv(0, {})".into(),
        21 => "setfenv(1, {})".into(),
        22 => "getfenv(0).x = 1".into(),
        23 => "local p = newproxy(true)".into(),
        24 => "getmetatable('').__index = {}".into(),
        25 => "local t = _G[1] .. ''".into(),
        26 => "error = nil".into(),
        _ => "redis = nil".into(),
    };
    Stmt::new(code, Eff::Raises)
}

/// Deep recursion, C stack depth, tail calls, coroutines, nesting limits.
fn recursion(r: &mut XorShift) -> Stmt {
    match r.below(8) {
        0 => Stmt::new("local function f(n) return 1 + f(n + 1) end f(1)", Eff::Raises),
        1 => {
            let d = r.pick(&["10", "1000", "10000"]);
            Stmt::new(
                format!("local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end local d = f({d})"),
                Eff::Ok,
            )
        }
        2 => Stmt::new("local function f(n) return pcall(f, n + 1) end f(1)", Eff::Ok),
        3 => Stmt::new(
            "local function f(n) if n > 0 then return f(n - 1) end return n end local z = f(1000000)",
            Eff::Ok,
        ),
        4 => Stmt::new(
            "local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end) local a = co() + co()",
            Eff::Ok,
        ),
        5 => Stmt::new("local t = {} for i = 1, 200 do t = {t} end local e = cjson.encode(t)", Eff::Ok),
        6 => Stmt::new("local t = {} for i = 1, 1200 do t = {t} end local e = cjson.encode(t)", Eff::Raises),
        _ => Stmt::new("local function f(n) local ok, e = pcall(f, n + 1) return n end f(1)", Eff::Ok),
    }
}

/// Big tables and strings, well under `lua-memory-limit` (redis-server has none).
fn big(r: &mut XorShift) -> Stmt {
    let code = match r.below(4) {
        0 => format!("local t = {{}} for i = 1, {} do t[i] = i end", r.range(1, 200_000)),
        1 => format!("local s = string.rep('x', {})", r.range(1, 4_000_000)),
        2 => format!("local t = {{}} for i = 1, {} do t['k' .. i] = string.rep('y', 10) end", r.range(1, 50_000)),
        _ => format!(
            "local s = table.concat((function() local t = {{}} for i = 1, {} do t[i] = 'abc' end return t end)())",
            r.range(1, 100_000)
        ),
    };
    Stmt::new(code, Eff::Ok)
}

/// A block around statements: pcall (which catches), do, if, a local function.
fn wrapped(r: &mut XorShift, ctr: bool, depth: usize) -> Stmt {
    let mut inner = Vec::new();
    let mut ctr = ctr;
    for _ in 0..r.range(1, 2) {
        let s = stmt(r, ctr, depth + 1);
        ctr &= s.eff != Eff::Unknown;
        inner.push(s);
    }
    let (eff, incr) = combine(&inner);
    let neokv_only = inner.iter().any(|s| s.neokv_only);
    let body = inner.iter().map(|s| s.code.as_str()).collect::<Vec<_>>().join(" ");
    let (code, eff) = match r.below(4) {
        0 => (
            format!("local ok{depth}, e{depth} = pcall(function() {body} end)"),
            if eff == Eff::Unknown { Eff::Unknown } else { Eff::Ok },
        ),
        1 => (format!("do {body} end"), eff),
        2 => (format!("if {} > 0 then {body} end", r.range(1, 9)), eff),
        _ => (format!("local function w{depth}() {body} end w{depth}()"), eff),
    };
    Stmt { code, eff, incr, neokv_only }
}

fn stmt(r: &mut XorShift, ctr: bool, depth: usize) -> Stmt {
    match r.below(100) {
        0..=49 => valid(r, ctr),
        50..=64 => failing(r, ctr),
        65..=72 => sandbox(r),
        73..=78 => recursion(r),
        79..=83 => big(r),
        _ if depth < 2 => wrapped(r, ctr, depth),
        _ => valid(r, ctr),
    }
}

/// The return at the end of a script: every type a script can answer.
fn ret(r: &mut XorShift) -> String {
    let n = r.range(-1000, 1000);
    match r.below(40) {
        0 => format!("return {n}"),
        1 => format!("return {n}.75"),
        2 => format!("return 'v{n}'"),
        3 => "return ''".into(),
        4 => "return 'a\\r\\nb\\0c'".into(),
        5 => "return true".into(),
        6 => "return false".into(),
        7 => "return nil".into(),
        8 => "return {1, 'two', {3, {4}}, true, false}".into(),
        9 => "return {1, nil, 3}".into(),
        10 => format!("return {{ok = 'OK{n}'}}"),
        11 => "return {ok = 'a\\r\\nb'}".into(),
        12 => format!("return {{err = 'MYERR code {n}'}}"),
        13 => "return {err = 'E\\r\\nX'}".into(),
        14 => "return {err = ''}".into(),
        15 => r.pick(&["return redis.error_reply('oops')", "return redis.error_reply('MY_CODE x\\ny')"]).into(),
        16 => r.pick(&["return redis.status_reply('FINE')", "return redis.status_reply('a\\r\\nb')"]).into(),
        17 => format!("return {{double = {n}.5}}"),
        18 => "return {map = {a = 1}}".into(),
        19 => "return {set = {x = true}}".into(),
        20 => "return {big_number = '12345678901234567890'}".into(),
        21 => "return {verbatim_string = {format = 'txt', string = 'hi'}}".into(),
        22 => "return redis.call('GET', KEYS[2])".into(),
        23 => "return redis.call('LRANGE', KEYS[4], 0, 4)".into(),
        24 => "return redis.call('ZRANGE', KEYS[5], 0, 3, 'WITHSCORES')".into(),
        25 => "local hk = redis.call('HKEYS', KEYS[3]) table.sort(hk) return hk".into(),
        26 => "return redis.pcall('NOSUCH', 'x')".into(),
        27 => "return redis.pcall('INCR', KEYS[2])".into(),
        28 => "return cjson.encode({a = {1, 2, 3}})".into(),
        29 => format!(
            "return {}",
            r.pick(&["1/0", "-1/0", "0/0", "2^63", "2^53", "-2^63", "1e300", "-0.5", "0.999", "2^62"])
        ),
        30 => "return redis.call('TYPE', KEYS[3])".into(),
        31 => "return redis.call('PING')".into(),
        32 => "return {redis.call('INCR', KEYS[6]) > 0}".into(),
        33 => "redis.setresp(3) return redis.call('ZSCORE', KEYS[5], 'm0')".into(),
        34 => "redis.setresp(3) return {redis.call('HGET', KEYS[3], 'f0'), redis.call('GET', 'fz:missing')}".into(),
        35 => format!(
            "local t = {{}} local c = t for i = 1, {} do c[1] = {{}} c = c[1] end return t",
            // Past ~7,990 levels NeoKV's stack-limit error comes a few levels
            // early (documented; script_fuzz_cases_found checks it).
            r.pick(&["10", "200", "999", "1000", "3000", "7980"])
        ),
        36 => format!("local t = {{}} for i = 1, {} do t[i] = i end return t", r.range(1, 20_000)),
        37 => format!("return string.rep('ab', {})", r.range(1, 100_000)),
        38 => "return {1, {err = 'inner'}, {ok = 'fine'}, {double = 2.5}}".into(),
        _ => "return redis.call('ECHO', 'a\\r\\nb')".into(),
    }
}

/// Statements separated as a person would: spaces, newlines, CRLFs, `;`.
fn join(r: &mut XorShift, parts: &[String]) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(r.pick(&[" ", "\n", "\r\n", "; ", "\t"]));
        }
        out.push_str(p);
    }
    out
}

fn structured(r: &mut XorShift, ctr: bool) -> Script {
    let mut stmts = Vec::new();
    let mut ctr = ctr;
    for _ in 0..r.range(0, 5) {
        let s = stmt(r, ctr, 0);
        ctr &= s.eff != Eff::Unknown;
        stmts.push(s);
    }
    let (_, incr) = combine(&stmts);
    let neokv_only = stmts.iter().any(|s| s.neokv_only);
    let mut parts: Vec<String> = stmts.into_iter().map(|s| s.code).collect();
    if r.chance(75) {
        parts.push(ret(r));
    }
    let mut body = join(r, &parts);
    if r.chance(5) {
        body = format!("#!lua\n{body}");
    }
    let oracle = if neokv_only {
        body.replace("error({})", "error('x')").replace("error({x = 1})", "error('x')")
    } else {
        body.clone()
    };
    Script {
        body: body.into_bytes(),
        incr,
        oracle_body: Some(oracle.into_bytes()),
        neokv_only,
        must_fail: false,
        kind: "structured",
    }
}

/// Bytes that make code invalid but cannot make a loop longer: no digits,
/// letters, `-` (a comment), `^`, `.`, `*`, `+`, `/` (a bigger number) or `,`
/// (a for loop's step of 0).
const GARBAGE: &[u8] = b"\x00\x01\x7f\x80\xfe\xff\r\n\t@$`!?#\"'[]{}();~=<>\\%&|:";

fn syntax_error(r: &mut XorShift) -> Script {
    let mut base = structured(r, false);
    while base.neokv_only {
        base = structured(r, false);
    }
    let b = base.body;
    let body: Vec<u8> = match r.below(6) {
        0 if b.len() > 1 => b[..r.range(1, b.len() as i64 - 1) as usize].to_vec(),
        1 => [&b[..], b" end"].concat(),
        2 => [b"end ", &b[..]].concat(),
        3 => [b"if true then ", &b[..]].concat(),
        4 => {
            let mut v = b;
            for _ in 0..r.range(1, 4) {
                let at = r.below(v.len() + 1);
                v.insert(at, GARBAGE[r.below(GARBAGE.len())]);
            }
            v
        }
        _ => r
            .pick(&[
                "return 'hello",
                "local = 5",
                "return return",
                "x = = 1",
                "for i = 1 do end",
                "function (",
                "return {1, 2",
                "local t = {a = }",
                "while do end",
                "return 1 +",
                "]]",
                "--[[ unclosed",
                "return [[ unclosed",
                "\u{feff}return 1",
                "return 1\0",
                "end",
                "",
                " ",
            ])
            .as_bytes()
            .to_vec(),
    };
    Script { oracle_body: Some(body.clone()), body, incr: 0, neokv_only: false, must_fail: false, kind: "syntax" }
}

/// Past `lua-memory-limit`: NeoKV must answer an error. redis-server has no
/// such limit, so these go to NeoKV only.
fn bomb(r: &mut XorShift) -> Script {
    let code = r.pick(&[
        "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end",
        "local s = 'x' for i = 1, 40 do s = s .. s end",
        "local t = {} for i = 1, 1e9 do t[#t + 1] = {i, i, i} end",
        "local s = string.rep('x', 2^30)",
    ]);
    let mut body = String::new();
    if r.chance(50) {
        body.push_str(r.pick(&["local v = redis.call('GET', KEYS[2])", "local t = {1, 2, 3}", "local s = 'x'"]));
        body.push('\n');
    }
    body.push_str(code);
    Script { body: body.into_bytes(), incr: 0, oracle_body: None, neokv_only: true, must_fail: true, kind: "bomb" }
}

fn gen_script(r: &mut XorShift) -> Script {
    match r.below(100) {
        0..=77 => structured(r, true),
        78..=97 => syntax_error(r),
        _ => bomb(r),
    }
}

/// Endless loops that never write: SCRIPT KILL stops them.
const LOOPS: &[&str] = &[
    "while true do end",
    "local i = 0\nwhile true do i = i + 1 end",
    "repeat local x = 1 until false",
    "for i = 1, math.huge do end",
    "while true do pcall(function() while true do end end) end",
    "local v\r\nwhile true do v = redis.call('GET', KEYS[2]) end",
    "while true do local ok = pcall(redis.call, 'NOSUCH') end",
    "local t = {}\nwhile true do t[#t % 100 + 1] = string.rep('x', 10) end",
];

fn eval_cmd(body: &[u8]) -> Vec<u8> {
    let mut args: Vec<&[u8]> = vec![b"EVAL", body, b"6"];
    args.extend(KEYS.iter().map(|k| k.as_bytes()));
    args.extend(ARGV.iter().map(|a| a.as_bytes()));
    encode_cmd(&args)
}

fn connect(port: u16) -> Raw {
    let r = Raw::connect(port);
    r.w.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    r
}

fn reply(c: &mut Raw) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    read_frame_strict(&mut c.r, &mut out).map(|_| out)
}

fn show(b: &[u8]) -> String {
    let s = b[..b.len().min(300)].escape_ascii().to_string();
    if b.len() > 300 {
        format!("\"{s}\"... ({} bytes)", b.len())
    } else {
        format!("\"{s}\"")
    }
}

/// One server's connections: a RESP2 one and a RESP3 one.
struct Side {
    port: u16,
    resp2: Raw,
    resp3: Raw,
}

impl Side {
    fn new(port: u16) -> Side {
        let resp2 = connect(port);
        let mut resp3 = connect(port);
        resp3.send_cmd(&[b"HELLO", b"3"]);
        reply(&mut resp3).expect("HELLO 3");
        Side { port, resp2, resp3 }
    }
    fn conn(&mut self, resp3: bool) -> &mut Raw {
        if resp3 {
            &mut self.resp3
        } else {
            &mut self.resp2
        }
    }
    fn cmd(&mut self, args: &[&str]) -> String {
        let mut c = connect(self.port);
        c.cmd(args)
    }
}

/// How an endless loop ended.
enum Loop {
    /// BUSY for others, then stopped by SCRIPT KILL: the BUSY reply and the loop's reply.
    Killed(String, Vec<u8>),
    /// It answered by itself, never busy (a VM broken by an earlier script).
    Answered(Vec<u8>),
}

/// Run `body` as an endless loop on one connection, wait for BUSY on another,
/// SCRIPT KILL it. An error is fatal: the server no longer serves.
fn kill_cycle(port: u16, body: &str) -> Result<Loop, String> {
    let mut looping = connect(port);
    let mut admin = connect(port);
    looping.send(&eval_cmd(body.as_bytes()));
    let busy = match wait_busy(&mut admin, &mut looping)? {
        Ok(busy) => busy,
        Err(answer) => return Ok(Loop::Answered(answer)),
    };
    let k = admin.cmd(&["SCRIPT", "KILL"]);
    if k != "+OK\r\n" {
        return Err(format!("SCRIPT KILL answered {k:?}"));
    }
    let killed = reply(&mut looping).map_err(|e| format!("the killed script's reply: {e}"))?;
    let p = admin.cmd(&["PING"]);
    if p != "+PONG\r\n" {
        return Err(format!("PING after SCRIPT KILL answered {p:?}"));
    }
    Ok(Loop::Killed(busy, killed))
}

/// PING on `admin` until it answers BUSY (`Ok(Ok(busy))`), or the script on
/// `looping` answers by itself (`Ok(Err(its reply))`).
fn wait_busy(admin: &mut Raw, looping: &mut Raw) -> Result<Result<String, Vec<u8>>, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let p = admin.cmd(&["PING"]);
        if p.starts_with("-BUSY") {
            return Ok(Ok(p));
        }
        if p != "+PONG\r\n" {
            return Err(format!("waiting for BUSY, PING answered {p:?}"));
        }
        looping.w.set_nonblocking(true).unwrap();
        let answered = matches!(looping.r.fill_buf(), Ok(b) if !b.is_empty());
        looping.w.set_nonblocking(false).unwrap();
        if answered {
            return reply(looping).map(Err);
        }
        if Instant::now() > deadline {
            return Err("the script neither made the server busy nor answered in 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn fixture(side: &mut Side) {
    for c in [
        vec!["SET", KEYS[0], "0"],
        vec!["SET", KEYS[1], "hello"],
        vec!["HSET", KEYS[2], "f0", "v0"],
        vec!["RPUSH", KEYS[3], "a", "b"],
        vec!["ZADD", KEYS[4], "1", "m0"],
        vec!["SET", KEYS[5], "0"],
        vec!["CONFIG", "SET", "busy-reply-threshold", "100"],
    ] {
        let got = side.cmd(&c);
        assert!(got.starts_with(['+', ':']), "{c:?}: {got}");
    }
}

/// Everything scripts may have written, but the counter.
fn state(side: &mut Side) -> String {
    let fields: Vec<String> = (0..=40).map(|k| format!("f{k}")).collect();
    let mut hmget = vec!["HMGET", KEYS[2]];
    hmget.extend(fields.iter().map(|f| f.as_str()));
    [
        vec!["GET", KEYS[1]],
        vec!["GET", KEYS[5]],
        vec!["HLEN", KEYS[2]],
        hmget,
        vec!["LRANGE", KEYS[3], "0", "-1"],
        vec!["ZRANGE", KEYS[4], "0", "-1", "WITHSCORES"],
        vec!["DBSIZE"],
    ]
    .iter()
    .map(|c| side.cmd(c))
    .collect()
}

fn counter(side: &mut Side) -> String {
    side.cmd(&["GET", KEYS[0]])
}

#[test]
fn script_fuzz() {
    let seed = fuzz_seed("script_fuzz");
    let started = Instant::now();
    let mut r = XorShift::new(seed);
    let mut s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let mut neo = Side::new(s.port);
    let mut ora = Side::new(o.port);
    assert_eq!(neo.cmd(&["CONFIG", "SET", "lua-memory-limit", "64mb"]), "+OK\r\n");
    fixture(&mut neo);
    fixture(&mut ora);

    let mut failures: Vec<String> = Vec::new();
    let mut model: i64 = 0;
    let mut last_check = 0;
    let mut counter_failure: Option<String> = None;
    let mut state_failure: Option<String> = None;
    let mut kills = 0;
    for i in 0..SCRIPTS {
        if r.below(30) == 0 {
            kills += 1;
            let body = r.pick(LOOPS);
            let n = kill_cycle(s.port, body)
                .unwrap_or_else(|e| panic!("seed {seed}: before script #{i}, loop {body:?} on NeoKV: {e}"));
            let (o_busy, o_killed) = match kill_cycle(o.port, body) {
                Ok(Loop::Killed(busy, killed)) => (busy, killed),
                Ok(Loop::Answered(a)) => panic!("seed {seed}: loop {body:?} on redis-server answered {}", show(&a)),
                Err(e) => panic!("seed {seed}: loop {body:?} on redis-server: {e}"),
            };
            assert!(
                o_killed.starts_with(b"-ERR Script killed by user with SCRIPT KILL..."),
                "redis-server: {}",
                show(&o_killed)
            );
            match n {
                Loop::Killed(n_busy, n_killed) if n_busy == o_busy && n_killed == o_killed => {}
                Loop::Killed(n_busy, n_killed) => failures.push(format!(
                    "before #{i}, loop {body:?} killed:\n    neokv: {} then {}\n    redis: {} then {}",
                    show(n_busy.as_bytes()),
                    show(&n_killed),
                    show(o_busy.as_bytes()),
                    show(&o_killed)
                )),
                Loop::Answered(a) => failures.push(format!(
                    "before #{i}, loop {body:?} never ran:\n    neokv: {}\n    redis: BUSY, then {}",
                    show(&a),
                    show(&o_killed)
                )),
            }
        }

        let sc = gen_script(&mut r);
        let resp3 = r.chance(25);
        let cmd = eval_cmd(&sc.body);
        let c = neo.conn(resp3);
        c.send(&cmd);
        let n_reply = reply(c).unwrap_or_else(|e| {
            panic!(
                "seed {seed}: script #{i} ({}, {}): NeoKV's reply is not well-formed RESP or never came: {e}\n  EVAL {}",
                sc.kind,
                if resp3 { "RESP3" } else { "RESP2" },
                show(&sc.body)
            )
        });
        assert!(s.is_running(), "seed {seed}: NeoKV died on script #{i}: {}", show(&sc.body));
        if sc.must_fail && !n_reply.starts_with(b"-") {
            failures.push(format!(
                "#{i} a memory bomb was not stopped: {}\n    neokv: {}",
                show(&sc.body),
                show(&n_reply)
            ));
        }
        if let Some(body) = &sc.oracle_body {
            let c = ora.conn(resp3);
            c.send(&eval_cmd(body));
            let o_reply = reply(c).unwrap_or_else(|e| {
                panic!("seed {seed}: script #{i}: redis-server failed ({e}): a grammar bug: {}", show(body))
            });
            if !sc.neokv_only && n_reply != o_reply {
                failures.push(format!(
                    "#{i} ({}, {}) EVAL {}\n    neokv: {}\n    redis: {}",
                    sc.kind,
                    if resp3 { "RESP3" } else { "RESP2" },
                    show(&sc.body),
                    show(&n_reply),
                    show(&o_reply)
                ));
            }
        }
        model += sc.incr;

        if (i + 1) % 25 == 0 || i + 1 == SCRIPTS {
            assert!(s.is_running(), "seed {seed}: NeoKV died by script #{i}");
            let mut fresh = connect(s.port);
            assert_eq!(fresh.cmd(&["PING"]), "+PONG\r\n", "seed {seed}: after script #{i}");
            assert_eq!(fresh.cmd(&["EVAL", "return 1", "0"]), ":1\r\n", "seed {seed}: after script #{i}");
            let (n_state, o_state) = (state(&mut neo), state(&mut ora));
            if n_state != o_state && state_failure.is_none() {
                state_failure = Some(format!(
                    "the keys went apart between scripts #{last_check} and #{i}:\n    neokv: {}\n    redis: {}",
                    show(n_state.as_bytes()),
                    show(o_state.as_bytes())
                ));
            }
            let (n, o) = (counter(&mut neo), counter(&mut ora));
            let want = format!("${}\r\n{model}\r\n", model.to_string().len());
            assert_eq!(o, want, "seed {seed}: the model disagrees with redis-server itself by #{i}: a grammar bug");
            if n != want && counter_failure.is_none() {
                counter_failure = Some(format!(
                    "the counter went wrong between scripts #{last_check} and #{i}: NeoKV has {n:?}, the model and redis-server {want:?}"
                ));
            }
            last_check = i + 1;
            // Start the next stretch from fresh VMs on both, so one sandbox escape
            // that breaks NeoKV's VM does not make every later script differ.
            assert_eq!(neo.cmd(&["SCRIPT", "FLUSH"]), "+OK\r\n");
            assert_eq!(ora.cmd(&["SCRIPT", "FLUSH"]), "+OK\r\n");
        }
    }

    // A loop that wrote first cannot be killed, on either server (the servers
    // are killed by drop; tests/it/script.rs covers SHUTDOWN NOSAVE).
    let body = "redis.call('set','w','1') while true do end";
    let unkillable = |port: u16| {
        let mut looping = connect(port);
        let mut admin = connect(port);
        looping.send(&encode_cmd(&[b"EVAL", body.as_bytes(), b"0"]));
        match wait_busy(&mut admin, &mut looping) {
            Ok(Ok(_)) => {}
            Ok(Err(a)) => panic!("seed {seed}: {body:?} answered {} instead of looping", show(&a)),
            Err(e) => panic!("seed {seed}: {body:?}: {e}"),
        }
        let k = admin.cmd(&["SCRIPT", "KILL"]);
        let p = admin.cmd(&["PING"]);
        (looping, k, p)
    };
    let (_n_loop, n_kill, n_ping) = unkillable(s.port);
    let (_o_loop, o_kill, o_ping) = unkillable(o.port);
    assert!(o_kill.starts_with("-UNKILLABLE"), "{o_kill}");
    assert_eq!(n_kill, o_kill, "seed {seed}: SCRIPT KILL of a loop that wrote");
    assert_eq!(n_ping, o_ping, "seed {seed}: still busy after UNKILLABLE");
    assert!(s.is_running());
    eprintln!("script_fuzz: {SCRIPTS} scripts, {kills} loops killed, {:.1?}", started.elapsed());

    let mut msg = String::new();
    for f in [&counter_failure, &state_failure].into_iter().flatten() {
        msg.push_str(&format!("{f}\n"));
    }
    if !failures.is_empty() {
        msg.push_str(&format!("{} replies differ from redis-server's; the first ones:\n", failures.len()));
        for f in failures.iter().take(8) {
            msg.push_str(&format!("  {f}\n"));
        }
    }
    assert!(msg.is_empty(), "script_fuzz seed {seed} (replay with NEOKV_SEED={seed}):\n{msg}");
    drop(s);
}

/// The scripts the fuzz found answered differently from redis-server, each
/// followed on the same connection by a probe of the VM (a script must not
/// leave anything behind for the next one).
#[test]
fn script_fuzz_cases_found() {
    let s = Server::start_with(&["--cores", "1"]);
    let o = Oracle::start();
    let mut neo = Side::new(s.port);
    let mut ora = Side::new(o.port);
    let cases: &[&[u8]] = &[
        // The sandbox: redis-server has no setfenv/getfenv/newproxy, and _G is read-only.
        b"setfenv(0, {}) return 1",
        b"setfenv(1, {}) return 1",
        b"return getfenv(1) == _G",
        b"local p = newproxy(true) return 1",
        b"table.insert(_G, 1) return 1",
        // A tail call of loadstring.
        b"return loadstring('return 1')",
        // Status and error replies are binary-safe, as bulk ones are.
        b"return {ok = 'a\x80b'}",
        b"return redis.status_reply('a\xffb')",
        b"return {err = 'E a\x80b'}",
        b"return redis.error_reply('E a\x80b')",
        b"error('a\x80b')",
        b"\xef\xbb\xbfreturn 1",
        // Numbers past the integer range convert as redis-server's (long long) cast does.
        b"return 1/0",
        b"return 0/0",
        b"return 2^63",
        // Nesting limits.
        b"local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return t",
        b"local t = {} local c = t for i = 1, 7980 do c[1] = {} c = c[1] end return t",
        // A NUL in the shebang line ends redis-server's search for its newline.
        b"#!\x00lua\nreturn 1",
        b"#!lua\nreturn '\x00'",
    ];
    let probe = b"return {type(redis), type(string), #_G, type(rawget(_G, 1))}";
    let mut failures = Vec::new();
    for case in cases {
        let mut got = Vec::new();
        for side in [&mut neo, &mut ora] {
            let c = side.conn(false);
            c.send(&encode_cmd(&[b"EVAL", case, b"0"]));
            let a = reply(c).unwrap_or_else(|e| panic!("{}: {e}", show(case)));
            c.send(&encode_cmd(&[b"EVAL", probe, b"0"]));
            let b = reply(c).unwrap_or_else(|e| panic!("{}: {e}", show(case)));
            assert_eq!(side.cmd(&["SCRIPT", "FLUSH"]), "+OK\r\n");
            got.push((a, b));
        }
        if got[0] != got[1] {
            failures.push(format!(
                "EVAL {} 0, then the probe:\n    neokv: {} then {}\n    redis: {} then {}",
                show(case),
                show(&got[0].0),
                show(&got[0].1),
                show(&got[1].0),
                show(&got[1].1)
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n  {}", failures.len(), cases.len(), failures.join("\n  "));

    // Two documented differences (README): a reply nested past ~7,990 levels
    // ends in the stack-limit error a few levels before redis-server's (which
    // stops at 7,995), and pcall nests 199 deep, not 200 (one C level is the
    // sandbox's runner). Both stay errors and counts, never a crash.
    let c = neo.conn(false);
    let deep = b"local t = {} local c = t for i = 1, 9000 do c[1] = {} c = c[1] end return t";
    c.send(&encode_cmd(&[b"EVAL", deep, b"0"]));
    let r = reply(c).unwrap();
    assert!(r.ends_with(b"*1\r\n-ERR reached lua stack limit\r\n"), "{}", show(&r[r.len().saturating_sub(80)..]));
    let levels = r.windows(4).filter(|w| w == b"*1\r\n").count();
    assert!((7900..7995).contains(&levels), "{levels} levels before the error");
    c.send(&encode_cmd(&[b"EVAL", b"local function f(n) return pcall(f, n + 1) end return #{f(1)}", b"0"]));
    assert_eq!(reply(c).unwrap(), b":199\r\n");
    assert_eq!(neo.cmd(&["PING"]), "+PONG\r\n");
}
