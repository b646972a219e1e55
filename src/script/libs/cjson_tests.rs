//! Tests of `cjson`: Redis's recorded replies and edge cases.
use super::*;
use std::ffi::{c_char, CString};

/// Line 1 of every test chunk: `S` renders a value as text (strings with
/// `\xx` escapes, numbers with `%.17g`, tables with sorted entries,
/// `NULL` for a NULL light userdata), `P` renders all results of a call,
/// `H` hex-encodes a string.
const SER: &str = r####"local function S(v, d) local t = type(v) if t == 'string' then return 's"' .. (string.gsub(v, '[%z\1-\31\92\127-\255]', function(c) return string.format('\\%02x', string.byte(c)) end)) .. '"' elseif t == 'number' then return 'n' .. string.format('%.17g', v) elseif t == 'table' then if d > 6 then return 'T' end local ks = {} for k, x in pairs(v) do ks[#ks + 1] = S(k, d + 1) .. '=' .. S(x, d + 1) end table.sort(ks) return '{' .. table.concat(ks, ',') .. '}' elseif t == 'userdata' then if tostring(v) == 'userdata: (nil)' then return 'NULL' end return 'U' elseif t == 'boolean' or t == 'nil' then return tostring(v) else return t end end local function P(...) local o = {} for i = 1, select('#', ...) do o[i] = S((select(i, ...)), 0) end return table.concat(o, ' | ') end local function H(s) local t = {} for i = 1, #s do t[i] = string.format('%02x', s:byte(i)) end return table.concat(t) end"####;

fn new_lua() -> Lua {
    let lua = Lua::new();
    install(&lua).expect("install cjson");
    lua
}

/// Run `body` the way the recorded rows were produced: as
/// `EVAL "<SER>\nreturn P(pcall(function()\n<body>\nend))" 0`, in a fresh
/// interpreter, chunk name `@user_script` as in Redis 7.0.
fn run(body: &str) -> String {
    let lua = new_lua();
    let src = format!("{SER}\nreturn P(pcall(function()\n{body}\nend))");
    match lua.load(&src).set_name("@user_script").eval::<String>() {
        Ok(s) => s,
        Err(e) => format!("RUST ERROR: {e}"),
    }
}

fn eval<T: mlua::FromLuaMulti>(lua: &Lua, src: &str) -> T {
    lua.load(src).set_name("@user_script").eval::<T>().expect(src)
}

#[test]
fn matches_redis_7_0_replies() {
    let mut failures = Vec::new();
    for (body, expected) in REDIS_ROWS {
        let got = run(body);
        if got != *expected {
            failures.push(format!("body: {body}\n want: {expected}\n  got: {got}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} rows differ:\n{}", failures.len(), REDIS_ROWS.len(), failures.join("\n"));
}

// The cjson cases of Redis's tests/unit/scripting.tcl.

#[test]
fn scripting_tcl_json_numeric_decoding() {
    let lua = new_lua();
    let s: String = eval(&lua, r#"return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")"#);
    assert_eq!(s, "0 -5000 -1 0.0003 1023.2 0");
}

#[test]
fn scripting_tcl_json_string_decoding() {
    let lua = new_lua();
    let (a, b): (String, String) = eval(
        &lua,
        r#"local decoded = cjson.decode('{"keya": "a", "keyb": "b"}')
           return decoded.keya, decoded.keyb"#,
    );
    assert_eq!((a.as_str(), b.as_str()), ("a", "b"));
}

#[test]
fn scripting_tcl_json_smoke_test() {
    let lua = new_lua();
    let s: String = eval(
        &lua,
        r#"
        local some_map = { s1="Some string", n1=100, a1={"Some","String","Array"}, nil1=nil, b1=true, b2=false}
        local encoded = cjson.encode(some_map)
        local decoded = cjson.decode(encoded)
        assert(table.concat(some_map) == table.concat(decoded))
        cjson.encode_keep_buffer(false)
        encoded = cjson.encode(some_map)
        decoded = cjson.decode(encoded)
        assert(table.concat(some_map) == table.concat(decoded))
        local table1 = {one="one", [1]="one"}
        encoded = cjson.encode(table1)
        decoded = cjson.decode(encoded)
        assert(decoded["one"] == table1["one"])
        assert(decoded["1"] == table1[1])
        local array1 = {[1]="one", [2]="two", [3]="three"}
        encoded = cjson.encode(array1)
        decoded = cjson.decode(encoded)
        assert(table.concat(array1) == table.concat(decoded))
        local invalid_map = {}
        invalid_map[false] = "false"
        local ok, encoded = pcall(cjson.encode, invalid_map)
        assert(ok == false)
        cjson.encode_max_depth(1)
        ok, encoded = pcall(cjson.encode, some_map)
        assert(ok == false)
        cjson.decode_max_depth(1)
        ok, decoded = pcall(cjson.decode, '{"obj": {"array": [1,2,3,4]}}')
        assert(ok == false)
        return "OK"
        "#,
    );
    assert_eq!(s, "OK");
}

#[test]
fn encode_basics() {
    let lua = new_lua();
    let cases: &[(&str, &str)] = &[
        ("{}", "{}"),
        ("{1,2,3}", "[1,2,3]"),
        ("{'a/b', '\\1\\127'}", r#"["a\/b","\u0001\u007f"]"#),
        ("{[10]=1}", "[null,null,null,null,null,null,null,null,null,1]"),
        ("{a={b={1.5,true,cjson.null}}}", r#"{"a":{"b":[1.5,true,null]}}"#),
        ("0.1", "0.1"),
        ("1/3", "0.33333333333333"),
        ("2^53", "9.007199254741e+15"),
        ("-0", "-0"),
        ("100", "100"),
    ];
    for (src, want) in cases {
        let got: String = eval(&lua, &format!("return cjson.encode({src})"));
        assert_eq!(&got, want, "cjson.encode({src})");
    }
}

#[test]
fn errors_are_lua_strings_with_the_c_library_prefixes() {
    let lua = new_lua();
    let (direct, protected, kind): (String, String, String) = eval(
        &lua,
        r#"local _, direct = pcall(function() return cjson.decode('[') end)
           local _, protected = pcall(cjson.decode, '[')
           return direct, protected, type(protected)"#,
    );
    assert_eq!(direct, "user_script:1: Expected value but found T_END at character 2");
    assert_eq!(protected, "Expected value but found T_END at character 2");
    assert_eq!(kind, "string");
    let bad: String = eval(&lua, "local f = cjson.encode local _, e = pcall(function() return f() end) return e");
    assert_eq!(bad, "user_script:1: bad argument #1 to 'f' (expected 1 argument)");
    // From Rust, the error is an ordinary runtime error with that text
    // (mlua appends a traceback).
    let encode: Function = lua.globals().get::<Table>("cjson").unwrap().get("encode").unwrap();
    match encode.call::<String>(Value::Function(encode.clone())) {
        Err(mlua::Error::RuntimeError(msg)) => {
            assert!(msg.starts_with("Cannot serialise function: type not supported\n"), "{msg}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn new_gives_an_independent_configuration() {
    let lua = new_lua();
    let (a, b, c): (String, String, bool) = eval(
        &lua,
        r#"local j = cjson.new()
           j.encode_number_precision(3)
           j.encode_invalid_numbers("null")
           return j.encode({1/3, 0/0}), cjson.encode(1/3), j.null == cjson.null"#,
    );
    assert_eq!((a.as_str(), b.as_str(), c), ("[0.333,null]", "0.33333333333333", true));
}

#[test]
fn round_trips() {
    let lua = new_lua();
    let n: i64 = eval(
        &lua,
        r#"
        local seed = 12345
        local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n end
        local function gen(depth)
            local k = rnd(depth > 4 and 5 or 8)
            if k == 0 then return rnd(2) == 0
            elseif k == 1 then return cjson.null
            elseif k == 2 then return rnd(2000000) - 1000000
            elseif k == 3 then return (rnd(2000000) - 1000000) / 1024
            elseif k == 4 then
                local b = {} for i = 1, rnd(12) do b[i] = string.char(rnd(256)) end
                return table.concat(b)
            elseif k == 5 then return {}
            elseif k == 6 then
                local t = {} for i = 1, rnd(6) + 1 do t[i] = gen(depth + 1) end return t
            else
                local t = {} for i = 1, rnd(6) + 1 do t["k" .. rnd(100) .. string.char(rnd(256))] = gen(depth + 1) end return t
            end
        end
        local function same(a, b)
            if type(a) ~= type(b) then return false end
            if type(a) ~= "table" then return a == b end
            for k, v in pairs(a) do if not same(v, b[k]) then return false end end
            for k in pairs(b) do if a[k] == nil then return false end end
            return true
        end
        local count = 0
        for i = 1, 2000 do
            local v = gen(0)
            local s = cjson.encode(v)
            local d = cjson.decode(s)
            assert(same(v, d), s)
            assert(cjson.encode(d) == s or type(v) == "table", s)
            count = count + 1
        end
        return count
        "#,
    );
    assert_eq!(n, 2000);
}

#[test]
fn random_input_raises_lua_errors_never_panics() {
    let lua = new_lua();
    let n: i64 = eval(
        &lua,
        r#"
        local seed = 99
        local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n end
        local alphabet = '{}[]:,"\\/ bfnrtu0123456789.-+eExXaAIiNnfl\0\1\127\128\255'
        local count = 0
        for i = 1, 20000 do
            local b = {}
            for j = 1, rnd(24) do
                local p = rnd(#alphabet) + 1
                b[j] = alphabet:sub(p, p)
            end
            local ok, err = pcall(cjson.decode, table.concat(b))
            assert(ok or type(err) == "string")
            count = count + 1
        end
        for _, v in ipairs({function() end, coroutine.create(function() end), {[{}] = 1}, {1, {2, print}}}) do
            local ok, err = pcall(cjson.encode, v)
            assert(not ok and type(err) == "string")
        end
        return count
        "#,
    );
    assert_eq!(n, 20000);
}

extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> std::ffi::c_int;
    fn strtod(s: *const c_char, end: *mut *mut c_char) -> f64;
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn libc_g(x: f64, prec: usize) -> String {
    let fmt = CString::new(format!("%.{prec}g")).unwrap();
    let mut buf = vec![0u8; 64];
    let n = unsafe { snprintf(buf.as_mut_ptr() as *mut c_char, buf.len(), fmt.as_ptr(), x) };
    buf.truncate(n as usize);
    String::from_utf8(buf).unwrap()
}

#[test]
fn format_g_matches_libc() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut values = vec![
        0.5,
        1.5,
        2.5,
        0.125,
        0.375,
        1e21,
        1e-5,
        123456.5,
        0.05,
        9.5,
        99.5,
        0.95,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        1e14,
        1e15,
        99999999999999.5,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for _ in 0..100_000 {
        let r = rng.next();
        values.push(match r % 4 {
            0 => f64::from_bits(rng.next()),
            1 => (rng.next() % 100_000) as f64 / [1.0, 4.0, 10.0, 1000.0, 1024.0][(r >> 8) as usize % 5],
            2 => (rng.next() as i64 as f64) * 10f64.powi((r >> 16) as i32 % 40 - 20),
            _ => ((rng.next() % 2_000_000) as f64 - 1_000_000.0) + 0.5,
        });
    }
    for (i, v) in values.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        for prec in [1 + i % 14, 14] {
            let mut out = Vec::new();
            format_g(&mut out, *v, prec);
            assert_eq!(String::from_utf8(out).unwrap(), libc_g(*v, prec), "{v:e} %.{prec}g");
        }
    }
}

#[test]
fn strtod_matches_libc() {
    let mut rng = Rng(0x1234_5678);
    let mut inputs: Vec<Vec<u8>> = [
        "0",
        "-0",
        "1.",
        ".5",
        "1e",
        "1e+",
        "0x",
        "0x1p",
        "0x1.fp+3",
        "0x.8",
        "0x1p-1074",
        "0x1p-1075",
        "0x1.00000000000008p0",
        "0x1.00000000000018p0",
        "0xffffffffffffffffffff",
        "0x1.fffffffffffff8p1023",
        "0x3p-1076",
        "0x1.80000000001p-1075",
        "inf",
        "INFINITY",
        "infinit",
        "nan(12_a)",
        "nan(",
        "-nan",
        "1e400",
        "2.4703282292062328e-324",
        "123456789012345678901234567890",
        "1e99999999999999999999",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let alphabet = b"0123456789.eE+-xXpPabcdefABCDEFinfatyINFATY()_ ";
    for _ in 0..100_000 {
        let mut s = Vec::new();
        if rng.next() % 3 == 0 {
            s.extend_from_slice(b"0x");
        }
        for _ in 0..1 + rng.next() % 12 {
            let r = rng.next();
            s.push(if r % 3 == 0 { b'0' + (r >> 8) as u8 % 10 } else { alphabet[(r >> 8) as usize % alphabet.len()] });
        }
        inputs.push(s);
    }
    for s in &inputs {
        let c = CString::new(s.clone()).unwrap();
        let mut end: *mut c_char = std::ptr::null_mut();
        let want = unsafe { strtod(c.as_ptr(), &mut end) };
        let want_end = end as usize - c.as_ptr() as usize;
        let (got, got_end) = super::strtod(s, 0);
        let same = got.to_bits() == want.to_bits()
            || (got.is_nan() && want.is_nan() && got.is_sign_negative() == want.is_sign_negative());
        assert!(
            same && got_end == want_end,
            "{:?}: libc {want:e}/{want_end}, ours {got:e}/{got_end}",
            String::from_utf8_lossy(s)
        );
    }
}

/// `(body, reply)` recorded from redis-server 7.0.15 (Debian
/// 7.0.15-1~deb12u10): `EVAL "<SER>\nreturn P(pcall(function()\n<body>\nend))" 0`,
/// followed by `SCRIPT FLUSH` so that every body starts with the default
/// configuration.
const REDIS_ROWS: &[(&str, &str)] = &[
    (
        r####"return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")"####,
        r####"true | s"0 -5000 -1 0.0003 1023.2 0""####,
    ),
    (
        r####"local decoded = cjson.decode('{"keya": "a", "keyb": "b"}')
return {decoded.keya, decoded.keyb}"####,
        r####"true | {n1=s"a",n2=s"b"}"####,
    ),
    (r####"return cjson.encode(nil)"####, r####"true | s"null""####),
    (r####"return cjson.encode(false)"####, r####"true | s"false""####),
    (r####"return cjson.encode(true)"####, r####"true | s"true""####),
    (r####"return cjson.encode(0)"####, r####"true | s"0""####),
    (r####"return cjson.encode(-0)"####, r####"true | s"-0""####),
    (r####"return cjson.encode(1)"####, r####"true | s"1""####),
    (r####"return cjson.encode(-1)"####, r####"true | s"-1""####),
    (r####"return cjson.encode(1.25)"####, r####"true | s"1.25""####),
    (r####"return cjson.encode(1e-5)"####, r####"true | s"1e-05""####),
    (r####"return cjson.encode(1e14)"####, r####"true | s"1e+14""####),
    (r####"return cjson.encode(1e15)"####, r####"true | s"1e+15""####),
    (r####"return cjson.encode(1e16)"####, r####"true | s"1e+16""####),
    (r####"return cjson.encode(1e100)"####, r####"true | s"1e+100""####),
    (
        r####"return cjson.encode(math.huge)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"return cjson.encode(-math.huge)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"return cjson.encode(0/0)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"return cjson.encode('')"####, r####"true | s"""""####),
    (r####"return cjson.encode('a/b\n\t\000')"####, r####"true | s""a\5c/b\5cn\5ct\5cu0000"""####),
    (r####"return cjson.encode({})"####, r####"true | s"{}""####),
    (r####"return cjson.encode({1,2,3})"####, r####"true | s"[1,2,3]""####),
    (r####"return cjson.encode({true,false,cjson.null})"####, r####"true | s"[true,false,null]""####),
    (r####"return cjson.encode({[3]=1})"####, r####"true | s"[null,null,1]""####),
    (r####"return cjson.encode({[10]=1})"####, r####"true | s"[null,null,null,null,null,null,null,null,null,1]""####),
    (
        r####"return cjson.encode({[11]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"return cjson.encode({[100]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (r####"return cjson.encode({a=1})"####, r####"true | s"{"a":1}""####),
    (r####"return cjson.encode({[0]=1})"####, r####"true | s"{"0":1}""####),
    (r####"return cjson.encode({[-1]=1})"####, r####"true | s"{"-1":1}""####),
    (r####"return cjson.encode({[1.5]=1})"####, r####"true | s"{"1.5":1}""####),
    (
        r####"return cjson.encode({[true]=1})"####,
        r####"false | s"user_script:3: Cannot serialise boolean: table key must be a number or string""####,
    ),
    (
        r####"return cjson.encode(function() end)"####,
        r####"false | s"user_script:3: Cannot serialise function: type not supported""####,
    ),
    (r####"return cjson.encode(cjson.null)"####, r####"true | s"null""####),
    (r####"return cjson.encode(0.1)"####, r####"true | s"0.1""####),
    (r####"return cjson.encode(1/3)"####, r####"true | s"0.33333333333333""####),
    (r####"return cjson.encode(-1/3)"####, r####"true | s"-0.33333333333333""####),
    (r####"return cjson.encode(123456789012345678)"####, r####"true | s"1.2345678901235e+17""####),
    (r####"return cjson.encode(2^53)"####, r####"true | s"9.007199254741e+15""####),
    (r####"return cjson.encode(2^63)"####, r####"true | s"9.2233720368548e+18""####),
    (r####"return cjson.encode(-2^63)"####, r####"true | s"-9.2233720368548e+18""####),
    (r####"return cjson.encode(-1.5e-7)"####, r####"true | s"-1.5e-07""####),
    (r####"return cjson.encode(5e-324)"####, r####"true | s"4.9406564584125e-324""####),
    (r####"return cjson.encode(1.7976931348623157e308)"####, r####"true | s"1.7976931348623e+308""####),
    (r####"return cjson.encode(100)"####, r####"true | s"100""####),
    (r####"return cjson.encode(1e-4)"####, r####"true | s"0.0001""####),
    (r####"return cjson.encode(0.0001234)"####, r####"true | s"0.0001234""####),
    (r####"return cjson.encode(123456.789)"####, r####"true | s"123456.789""####),
    (r####"return cjson.encode(3.14159265358979)"####, r####"true | s"3.1415926535898""####),
    (r####"return cjson.encode(0.5)"####, r####"true | s"0.5""####),
    (r####"return cjson.encode(1.5)"####, r####"true | s"1.5""####),
    (r####"return cjson.encode(2.5)"####, r####"true | s"2.5""####),
    (r####"return cjson.encode(1e21)"####, r####"true | s"1e+21""####),
    (r####"return cjson.encode(12345678901234.5)"####, r####"true | s"12345678901234""####),
    (r####"return cjson.encode(99999999999999.5)"####, r####"true | s"1e+14""####),
    (r####"return cjson.encode(9.5)"####, r####"true | s"9.5""####),
    (r####"return cjson.encode(0.000015)"####, r####"true | s"1.5e-05""####),
    (r####"return cjson.encode({1,2,nil,4})"####, r####"true | s"[1,2,null,4]""####),
    (r####"return cjson.encode({[1]=1,[2]=2,[4]=4})"####, r####"true | s"[1,2,null,4]""####),
    (
        r####"return cjson.encode({[20]=1,1,2,3,4,5,6,7,8,9,10})"####,
        r####"true | s"[1,2,3,4,5,6,7,8,9,10,null,null,null,null,null,null,null,null,null,1]""####,
    ),
    (
        r####"return cjson.encode({[21]=1,1,2,3,4,5,6,7,8,9,10})"####,
        r####"true | s"[1,2,3,4,5,6,7,8,9,10,null,null,null,null,null,null,null,null,null,null,1]""####,
    ),
    (r####"return cjson.encode({1,2,x=3})"####, r####"true | s"{"1":1,"2":2,"x":3}""####),
    (r####"return cjson.encode({[1e100]=1})"####, r####"true | s"{"1e+100":1}""####),
    (r####"return cjson.encode({[2^31]=1})"####, r####"true | s"{"2147483648":1}""####),
    (
        r####"return cjson.encode({[2^31-1]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (r####"return cjson.encode({[-0.5]=1})"####, r####"true | s"{"-0.5":1}""####),
    (
        r####"return cjson.encode({[{}]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: table key must be a number or string""####,
    ),
    (
        r####"return cjson.encode({[cjson.null]=1})"####,
        r####"false | s"user_script:3: Cannot serialise userdata: table key must be a number or string""####,
    ),
    (
        r####"return cjson.encode({1,function() end})"####,
        r####"false | s"user_script:3: Cannot serialise function: type not supported""####,
    ),
    (r####"return cjson.encode({a={b={c={d={}}}}})"####, r####"true | s"{"a":{"b":{"c":{"d":{}}}}}""####),
    (r####"return cjson.encode({{},{{}},{a={}}})"####, r####"true | s"[{},[{}],{"a":{}}]""####),
    (
        r####"return cjson.encode({[math.huge]=1})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"return cjson.encode({x=0/0})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"return cjson.encode({"\0",{"\127\128\255"}})"####, r####"true | s"["\5cu0000",["\5cu007f\80\ff"]]""####),
    (
        r####"return cjson.encode(coroutine.create(function() end))"####,
        r####"false | s"user_script:3: Cannot serialise thread: type not supported""####,
    ),
    (
        r####"return cjson.encode({a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8})"####,
        r####"true | s"{"a":1,"h":8,"c":3,"b":2,"e":5,"d":4,"g":7,"f":6}""####,
    ),
    (
        r####"return cjson.encode({one=1,two=2,three=3,[1]=4,[2]=5})"####,
        r####"true | s"{"2":5,"two":2,"one":1,"1":4,"three":3}""####,
    ),
    (r####"return cjson.decode("null")"####, r####"true | NULL"####),
    (r####"return cjson.decode("true")"####, r####"true | true"####),
    (r####"return cjson.decode("false")"####, r####"true | false"####),
    (r####"return cjson.decode("0")"####, r####"true | n0"####),
    (r####"return cjson.decode("-0")"####, r####"true | n-0"####),
    (r####"return cjson.decode("1.25")"####, r####"true | n1.25"####),
    (r####"return cjson.decode("1e400")"####, r####"true | ninf"####),
    (r####"return cjson.decode("-1e400")"####, r####"true | n-inf"####),
    (r####"return cjson.decode("1e-400")"####, r####"true | n0"####),
    (r####"return cjson.decode("01")"####, r####"true | n1"####),
    (r####"return cjson.decode("0x10")"####, r####"true | n16"####),
    (r####"return cjson.decode("-0x10")"####, r####"true | n-16"####),
    (r####"return cjson.decode("0X1f")"####, r####"true | n31"####),
    (r####"return cjson.decode("NaN")"####, r####"true | nnan"####),
    (r####"return cjson.decode("nan")"####, r####"true | nnan"####),
    (r####"return cjson.decode("-nan")"####, r####"true | n-nan"####),
    (r####"return cjson.decode("Infinity")"####, r####"true | ninf"####),
    (r####"return cjson.decode("-Infinity")"####, r####"true | n-inf"####),
    (r####"return cjson.decode("inf")"####, r####"true | ninf"####),
    (r####"return cjson.decode("-inf")"####, r####"true | n-inf"####),
    (r####"return cjson.decode("+1")"####, r####"true | n1"####),
    (
        r####"return cjson.decode("+")"####,
        r####"false | s"user_script:3: Expected value but found invalid number at character 1""####,
    ),
    (
        r####"return cjson.decode("-")"####,
        r####"false | s"user_script:3: Expected value but found invalid number at character 1""####,
    ),
    (r####"return cjson.decode("1.")"####, r####"true | n1"####),
    (
        r####"return cjson.decode(".5")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (r####"return cjson.decode("-.5")"####, r####"true | n-0.5"####),
    (
        r####"return cjson.decode("1e")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 2""####,
    ),
    (
        r####"return cjson.decode("1e+")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 2""####,
    ),
    (
        r####"return cjson.decode("1e5x")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 4""####,
    ),
    (r####"return cjson.decode("{}")"####, r####"true | {}"####),
    (r####"return cjson.decode("[]")"####, r####"true | {}"####),
    (r####"return cjson.decode("[null,false,true]")"####, r####"true | {n1=NULL,n2=false,n3=true}"####),
    (r####"return cjson.decode("{\"a\":null}")"####, r####"true | {s"a"=NULL}"####),
    (r####"return cjson.decode("{\"a\":1,\"a\":2}")"####, r####"true | {s"a"=n2}"####),
    (
        r####"return cjson.decode("")"####,
        r####"false | s"user_script:3: Expected value but found T_END at character 1""####,
    ),
    (
        r####"return cjson.decode(" ")"####,
        r####"false | s"user_script:3: Expected value but found T_END at character 2""####,
    ),
    (
        r####"return cjson.decode("[")"####,
        r####"false | s"user_script:3: Expected value but found T_END at character 2""####,
    ),
    (
        r####"return cjson.decode("{")"####,
        r####"false | s"user_script:3: Expected object key string but found T_END at character 2""####,
    ),
    (
        r####"return cjson.decode("[1,]")"####,
        r####"false | s"user_script:3: Expected value but found T_ARR_END at character 4""####,
    ),
    (
        r####"return cjson.decode("{\"a\":}")"####,
        r####"false | s"user_script:3: Expected value but found T_OBJ_END at character 6""####,
    ),
    (
        r####"return cjson.decode("{\"a\" 1}")"####,
        r####"false | s"user_script:3: Expected colon but found T_NUMBER at character 6""####,
    ),
    (
        r####"return cjson.decode("{1:2}")"####,
        r####"false | s"user_script:3: Expected object key string but found T_NUMBER at character 2""####,
    ),
    (
        r####"return cjson.decode("[1 2]")"####,
        r####"false | s"user_script:3: Expected comma or array end but found T_NUMBER at character 4""####,
    ),
    (
        r####"return cjson.decode("true false")"####,
        r####"false | s"user_script:3: Expected the end but found T_BOOLEAN at character 6""####,
    ),
    (
        r####"return cjson.decode("nul")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode("nulls")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 5""####,
    ),
    (
        r####"return cjson.decode("truex")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 5""####,
    ),
    (
        r####"return cjson.decode("fals")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode("\"abc")"####,
        r####"false | s"user_script:3: Expected value but found unexpected end of string at character 5""####,
    ),
    (
        r####"return cjson.decode("{\"a\":1,}")"####,
        r####"false | s"user_script:3: Expected object key string but found T_OBJ_END at character 8""####,
    ),
    (
        r####"return cjson.decode("{\"a\":1 \"b\":2}")"####,
        r####"false | s"user_script:3: Expected comma or object end but found T_STRING at character 8""####,
    ),
    (r####"return cjson.decode("[[[]]]")"####, r####"true | {n1={n1={}}}"####),
    (r####"return cjson.decode("  [ 1 , 2 ]  ")"####, r####"true | {n1=n1,n2=n2}"####),
    (r####"return cjson.decode("\t\r\n1")"####, r####"true | n1"####),
    (r####"return cjson.decode("[1]\n")"####, r####"true | {n1=n1}"####),
    (
        r####"return cjson.decode("x")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode("123abc")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 4""####,
    ),
    (
        r####"return cjson.decode("1.5.5")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 4""####,
    ),
    (
        r####"return cjson.decode("--1")"####,
        r####"false | s"user_script:3: Expected value but found invalid number at character 1""####,
    ),
    (r####"return cjson.decode("1e5")"####, r####"true | n100000"####),
    (r####"return cjson.decode("1E-5")"####, r####"true | n1.0000000000000001e-05"####),
    (r####"return cjson.decode("1.0e+2")"####, r####"true | n100"####),
    (r####"return cjson.decode("0.1e1")"####, r####"true | n1"####),
    (r####"return cjson.decode("1e0001")"####, r####"true | n10"####),
    (r####"return cjson.decode("00")"####, r####"true | n0"####),
    (r####"return cjson.decode("-01")"####, r####"true | n-1"####),
    (r####"return cjson.decode("0.")"####, r####"true | n0"####),
    (r####"return cjson.decode("0.e1")"####, r####"true | n0"####),
    (r####"return cjson.decode("9007199254740993")"####, r####"true | n9007199254740992"####),
    (r####"return cjson.decode("123456789012345678901234567890")"####, r####"true | n1.2345678901234568e+29"####),
    (r####"return cjson.decode("1e308")"####, r####"true | n1e+308"####),
    (r####"return cjson.decode("2e308")"####, r####"true | ninf"####),
    (r####"return cjson.decode("4.9e-324")"####, r####"true | n4.9406564584124654e-324"####),
    (r####"return cjson.decode("2.4703282292062327e-324")"####, r####"true | n0"####),
    (r####"return cjson.decode("2.4703282292062328e-324")"####, r####"true | n4.9406564584124654e-324"####),
    (r####"return cjson.decode("0x1.8p1")"####, r####"true | n3"####),
    (r####"return cjson.decode("0x.8")"####, r####"true | n0.5"####),
    (r####"return cjson.decode("0x1p-1074")"####, r####"true | n4.9406564584124654e-324"####),
    (r####"return cjson.decode("0x1p-1075")"####, r####"true | n0"####),
    (r####"return cjson.decode("0x1.0000000000001p0")"####, r####"true | n1.0000000000000002"####),
    (r####"return cjson.decode("0x1.00000000000008p0")"####, r####"true | n1"####),
    (r####"return cjson.decode("0x1.00000000000018p0")"####, r####"true | n1.0000000000000004"####),
    (r####"return cjson.decode("0xffffffffffffffffffff")"####, r####"true | n1.2089258196146292e+24"####),
    (r####"return cjson.decode("Inf")"####, r####"true | ninf"####),
    (r####"return cjson.decode("INFINITY")"####, r####"true | ninf"####),
    (
        r####"return cjson.decode("-Infinityx")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 10""####,
    ),
    (r####"return cjson.decode("nan(123)")"####, r####"true | nnan"####),
    (r####"return cjson.decode("NaN(abc_1)")"####, r####"true | nnan"####),
    (
        r####"return cjson.decode("nan(")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 4""####,
    ),
    (
        r####"return cjson.decode("nan()x")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 6""####,
    ),
    (
        r####"return cjson.decode("infinit")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 4""####,
    ),
    (
        r####"return cjson.decode("[1,2,3]x")"####,
        r####"false | s"user_script:3: Expected the end but found invalid token at character 8""####,
    ),
    (r####"return cjson.decode("\"\\u0041\"")"####, r####"true | s"A""####),
    (r####"return cjson.decode([["\b\f\n\r\t\/\\\""]])"####, r####"true | s"\08\0c\0a\0d\09/\5c"""####),
    (r####"return cjson.decode([["\u00e9\u20ac\ud83d\ude00"]])"####, r####"true | s"\c3\a9\e2\82\ac\f0\9f\98\80""####),
    (
        r####"return cjson.decode([["\u12G4"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 2""####,
    ),
    (r####"return cjson.decode([["\u00C9"]])"####, r####"true | s"\c3\89""####),
    (
        r####"return cjson.decode([["\uD800x"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 2""####,
    ),
    (
        r####"return cjson.decode([["\uD800\u0041"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 2""####,
    ),
    (
        r####"return cjson.decode([["\q"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid escape code at character 2""####,
    ),
    (
        r####"return cjson.decode([["\uD800"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 2""####,
    ),
    (
        r####"return cjson.decode([["\uDC00"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 2""####,
    ),
    (r####"return cjson.decode([["\uD834\uDD1E"]])"####, r####"true | s"\f0\9d\84\9e""####),
    (r####"return cjson.decode([["\u0000"]])"####, r####"true | s"\00""####),
    (
        r####"return cjson.decode([["\u0041\uD800"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 8""####,
    ),
    (r####"return cjson.decode([["\u0041\u0042"]])"####, r####"true | s"AB""####),
    (
        r####"return cjson.decode([["\u004"]])"####,
        r####"false | s"user_script:3: Expected value but found invalid unicode escape code at character 2""####,
    ),
    (
        r####"return cjson.decode([["\\]])"####,
        r####"false | s"user_script:3: Expected value but found unexpected end of string at character 4""####,
    ),
    (
        r####"return cjson.decode([["abc\"]])"####,
        r####"false | s"user_script:3: Expected value but found unexpected end of string at character 7""####,
    ),
    (r####"return cjson.decode([["\uDBFF\uDFFF"]])"####, r####"true | s"\f4\8f\bf\bf""####),
    (r####"return cjson.decode([["\u07FF\u0800\uFFFF"]])"####, r####"true | s"\df\bf\e0\a0\80\ef\bf\bf""####),
    (r####"return cjson.decode([["\u0080"]])"####, r####"true | s"\c2\80""####),
    (
        r####"return cjson.decode("\"a\0b\"")"####,
        r####"false | s"user_script:3: Expected value but found unexpected end of string at character 3""####,
    ),
    (r####"return cjson.decode("\"a\1\31b\127\128\255\"")"####, r####"true | s"a\01\1fb\7f\80\ff""####),
    (
        r####"return cjson.decode("\0")"####,
        r####"false | s"user_script:3: Expected value but found T_END at character 1""####,
    ),
    (
        r####"return cjson.decode("\0\0")"####,
        r####"false | s"user_script:3: JSON parser does not support UTF-16 or UTF-32""####,
    ),
    (
        r####"return cjson.decode("1\0")"####,
        r####"false | s"user_script:3: JSON parser does not support UTF-16 or UTF-32""####,
    ),
    (
        r####"return cjson.decode("1\0true")"####,
        r####"false | s"user_script:3: JSON parser does not support UTF-16 or UTF-32""####,
    ),
    (
        r####"return cjson.decode("[1\0]")"####,
        r####"false | s"user_script:3: Expected comma or array end but found T_END at character 3""####,
    ),
    (
        r####"return cjson.decode("\v1")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode("\f1")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode("\255")"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode("-\255")"####,
        r####"false | s"user_script:3: Expected value but found invalid number at character 1""####,
    ),
    (
        r####"return cjson.encode()"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode' (expected 1 argument)""####,
    ),
    (r####"return cjson.encode(nil)"####, r####"true | s"null""####),
    (r####"return cjson.encode(true)"####, r####"true | s"true""####),
    (r####"return cjson.encode(false)"####, r####"true | s"false""####),
    (r####"return cjson.encode(0)"####, r####"true | s"0""####),
    (r####"return cjson.encode(1)"####, r####"true | s"1""####),
    (r####"return cjson.encode(15)"####, r####"true | s"15""####),
    (r####"return cjson.encode('on')"####, r####"true | s""on"""####),
    (r####"return cjson.encode('null')"####, r####"true | s""null"""####),
    (
        r####"return cjson.encode({},1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode' (expected 1 argument)""####,
    ),
    (r####"return cjson.encode(-1)"####, r####"true | s"-1""####),
    (r####"return cjson.encode('x')"####, r####"true | s""x"""####),
    (r####"return cjson.encode('on\0x')"####, r####"true | s""on\5cu0000x"""####),
    (r####"return cjson.encode(2^32+5)"####, r####"true | s"4294967301""####),
    (r####"return cjson.encode(1.9)"####, r####"true | s"1.9""####),
    (
        r####"return cjson.encode(0/0)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"return cjson.encode(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode' (expected 1 argument)""####,
    ),
    (
        r####"return cjson.encode('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode' (expected 1 argument)""####,
    ),
    (
        r####"return cjson.encode(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode' (expected 1 argument)""####,
    ),
    (
        r####"return cjson.decode()"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (expected 1 argument)""####,
    ),
    (
        r####"return cjson.decode(nil)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (string expected, got nil)""####,
    ),
    (
        r####"return cjson.decode(true)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (string expected, got boolean)""####,
    ),
    (
        r####"return cjson.decode(false)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (string expected, got boolean)""####,
    ),
    (r####"return cjson.decode(0)"####, r####"true | n0"####),
    (r####"return cjson.decode(1)"####, r####"true | n1"####),
    (r####"return cjson.decode(15)"####, r####"true | n15"####),
    (
        r####"return cjson.decode('on')"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (r####"return cjson.decode('null')"####, r####"true | NULL"####),
    (
        r####"return cjson.decode({},1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (expected 1 argument)""####,
    ),
    (r####"return cjson.decode(-1)"####, r####"true | n-1"####),
    (
        r####"return cjson.decode('x')"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (
        r####"return cjson.decode('on\0x')"####,
        r####"false | s"user_script:3: Expected value but found invalid token at character 1""####,
    ),
    (r####"return cjson.decode(2^32+5)"####, r####"true | n4294967301"####),
    (r####"return cjson.decode(1.9)"####, r####"true | n1.8999999999999999"####),
    (r####"return cjson.decode(0/0)"####, r####"true | n-nan"####),
    (
        r####"return cjson.decode(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (expected 1 argument)""####,
    ),
    (
        r####"return cjson.decode('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (expected 1 argument)""####,
    ),
    (
        r####"return cjson.decode(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode' (expected 1 argument)""####,
    ),
    (r####"return cjson.encode_sparse_array()"####, r####"true | false | n2 | n10"####),
    (r####"return cjson.encode_sparse_array(nil)"####, r####"true | false | n2 | n10"####),
    (r####"return cjson.encode_sparse_array(true)"####, r####"true | true | n2 | n10"####),
    (r####"return cjson.encode_sparse_array(false)"####, r####"true | false | n2 | n10"####),
    (
        r####"return cjson.encode_sparse_array(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option '0')""####,
    ),
    (
        r####"return cjson.encode_sparse_array(1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option '1')""####,
    ),
    (
        r####"return cjson.encode_sparse_array(15)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option '15')""####,
    ),
    (r####"return cjson.encode_sparse_array('on')"####, r####"true | true | n2 | n10"####),
    (
        r####"return cjson.encode_sparse_array('null')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option 'null')""####,
    ),
    (
        r####"return cjson.encode_sparse_array({},1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (string expected, got table)""####,
    ),
    (
        r####"return cjson.encode_sparse_array(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option '-1')""####,
    ),
    (
        r####"return cjson.encode_sparse_array('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option 'x')""####,
    ),
    (r####"return cjson.encode_sparse_array('on\0x')"####, r####"true | true | n2 | n10"####),
    (
        r####"return cjson.encode_sparse_array(2^32+5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option '4294967301')""####,
    ),
    (
        r####"return cjson.encode_sparse_array(1.9)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (invalid option '1.9')""####,
    ),
    (r####"return cjson.encode_sparse_array(true,3,5)"####, r####"true | true | n3 | n5"####),
    (r####"return cjson.encode_sparse_array('on',3,5)"####, r####"true | true | n3 | n5"####),
    (
        r####"return cjson.encode_sparse_array(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)""####,
    ),
    (r####"return cjson.encode_max_depth()"####, r####"true | n1000"####),
    (r####"return cjson.encode_max_depth(nil)"####, r####"true | n1000"####),
    (
        r####"return cjson.encode_max_depth(true)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got boolean)""####,
    ),
    (
        r####"return cjson.encode_max_depth(false)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got boolean)""####,
    ),
    (
        r####"return cjson.encode_max_depth(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)""####,
    ),
    (r####"return cjson.encode_max_depth(1)"####, r####"true | n1"####),
    (r####"return cjson.encode_max_depth(15)"####, r####"true | n15"####),
    (
        r####"return cjson.encode_max_depth('on')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got string)""####,
    ),
    (
        r####"return cjson.encode_max_depth('null')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got string)""####,
    ),
    (
        r####"return cjson.encode_max_depth({},1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_max_depth' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_max_depth(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)""####,
    ),
    (
        r####"return cjson.encode_max_depth('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got string)""####,
    ),
    (
        r####"return cjson.encode_max_depth('on\0x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_max_depth' (number expected, got string)""####,
    ),
    (r####"return cjson.encode_max_depth(2^32+5)"####, r####"true | n5"####),
    (r####"return cjson.encode_max_depth(1.9)"####, r####"true | n1"####),
    (
        r####"return cjson.encode_max_depth(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_max_depth' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_max_depth('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_max_depth' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_max_depth(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_max_depth' (found too many arguments)""####,
    ),
    (r####"return cjson.decode_max_depth()"####, r####"true | n1000"####),
    (r####"return cjson.decode_max_depth(nil)"####, r####"true | n1000"####),
    (
        r####"return cjson.decode_max_depth(true)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (number expected, got boolean)""####,
    ),
    (
        r####"return cjson.decode_max_depth(false)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (number expected, got boolean)""####,
    ),
    (
        r####"return cjson.decode_max_depth(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (expected integer between 1 and 2147483647)""####,
    ),
    (r####"return cjson.decode_max_depth(1)"####, r####"true | n1"####),
    (r####"return cjson.decode_max_depth(15)"####, r####"true | n15"####),
    (
        r####"return cjson.decode_max_depth('on')"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (number expected, got string)""####,
    ),
    (
        r####"return cjson.decode_max_depth('null')"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (number expected, got string)""####,
    ),
    (
        r####"return cjson.decode_max_depth({},1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_max_depth' (found too many arguments)""####,
    ),
    (
        r####"return cjson.decode_max_depth(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (expected integer between 1 and 2147483647)""####,
    ),
    (
        r####"return cjson.decode_max_depth('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (number expected, got string)""####,
    ),
    (
        r####"return cjson.decode_max_depth('on\0x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_max_depth' (number expected, got string)""####,
    ),
    (r####"return cjson.decode_max_depth(2^32+5)"####, r####"true | n5"####),
    (r####"return cjson.decode_max_depth(1.9)"####, r####"true | n1"####),
    (
        r####"return cjson.decode_max_depth(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_max_depth' (found too many arguments)""####,
    ),
    (
        r####"return cjson.decode_max_depth('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_max_depth' (found too many arguments)""####,
    ),
    (
        r####"return cjson.decode_max_depth(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_max_depth' (found too many arguments)""####,
    ),
    (r####"return cjson.encode_number_precision()"####, r####"true | n14"####),
    (r####"return cjson.encode_number_precision(nil)"####, r####"true | n14"####),
    (
        r####"return cjson.encode_number_precision(true)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (number expected, got boolean)""####,
    ),
    (
        r####"return cjson.encode_number_precision(false)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (number expected, got boolean)""####,
    ),
    (
        r####"return cjson.encode_number_precision(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)""####,
    ),
    (r####"return cjson.encode_number_precision(1)"####, r####"true | n1"####),
    (
        r####"return cjson.encode_number_precision(15)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)""####,
    ),
    (
        r####"return cjson.encode_number_precision('on')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (number expected, got string)""####,
    ),
    (
        r####"return cjson.encode_number_precision('null')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (number expected, got string)""####,
    ),
    (
        r####"return cjson.encode_number_precision({},1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_number_precision' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_number_precision(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)""####,
    ),
    (
        r####"return cjson.encode_number_precision('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (number expected, got string)""####,
    ),
    (
        r####"return cjson.encode_number_precision('on\0x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_number_precision' (number expected, got string)""####,
    ),
    (r####"return cjson.encode_number_precision(2^32+5)"####, r####"true | n5"####),
    (r####"return cjson.encode_number_precision(1.9)"####, r####"true | n1"####),
    (
        r####"return cjson.encode_number_precision(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_number_precision' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_number_precision('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_number_precision' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_number_precision(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_number_precision' (found too many arguments)""####,
    ),
    (r####"return cjson.encode_keep_buffer()"####, r####"true | true"####),
    (r####"return cjson.encode_keep_buffer(nil)"####, r####"true | true"####),
    (r####"return cjson.encode_keep_buffer(true)"####, r####"true | true"####),
    (r####"return cjson.encode_keep_buffer(false)"####, r####"true | false"####),
    (
        r####"return cjson.encode_keep_buffer(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option '0')""####,
    ),
    (
        r####"return cjson.encode_keep_buffer(1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option '1')""####,
    ),
    (
        r####"return cjson.encode_keep_buffer(15)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option '15')""####,
    ),
    (r####"return cjson.encode_keep_buffer('on')"####, r####"true | true"####),
    (
        r####"return cjson.encode_keep_buffer('null')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option 'null')""####,
    ),
    (
        r####"return cjson.encode_keep_buffer({},1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_keep_buffer' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_keep_buffer(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option '-1')""####,
    ),
    (
        r####"return cjson.encode_keep_buffer('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option 'x')""####,
    ),
    (r####"return cjson.encode_keep_buffer('on\0x')"####, r####"true | true"####),
    (
        r####"return cjson.encode_keep_buffer(2^32+5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option '4294967301')""####,
    ),
    (
        r####"return cjson.encode_keep_buffer(1.9)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_keep_buffer' (invalid option '1.9')""####,
    ),
    (
        r####"return cjson.encode_keep_buffer(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_keep_buffer' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_keep_buffer('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_keep_buffer' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_keep_buffer(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_keep_buffer' (found too many arguments)""####,
    ),
    (r####"return cjson.encode_invalid_numbers()"####, r####"true | false"####),
    (r####"return cjson.encode_invalid_numbers(nil)"####, r####"true | false"####),
    (r####"return cjson.encode_invalid_numbers(true)"####, r####"true | true"####),
    (r####"return cjson.encode_invalid_numbers(false)"####, r####"true | false"####),
    (
        r####"return cjson.encode_invalid_numbers(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option '0')""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers(1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option '1')""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers(15)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option '15')""####,
    ),
    (r####"return cjson.encode_invalid_numbers('on')"####, r####"true | true"####),
    (r####"return cjson.encode_invalid_numbers('null')"####, r####"true | s"null""####),
    (
        r####"return cjson.encode_invalid_numbers({},1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_invalid_numbers' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option '-1')""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option 'x')""####,
    ),
    (r####"return cjson.encode_invalid_numbers('on\0x')"####, r####"true | true"####),
    (
        r####"return cjson.encode_invalid_numbers(2^32+5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option '4294967301')""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers(1.9)"####,
        r####"false | s"user_script:3: bad argument #1 to 'encode_invalid_numbers' (invalid option '1.9')""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_invalid_numbers' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_invalid_numbers' (found too many arguments)""####,
    ),
    (
        r####"return cjson.encode_invalid_numbers(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'encode_invalid_numbers' (found too many arguments)""####,
    ),
    (r####"return cjson.decode_invalid_numbers()"####, r####"true | true"####),
    (r####"return cjson.decode_invalid_numbers(nil)"####, r####"true | true"####),
    (r####"return cjson.decode_invalid_numbers(true)"####, r####"true | true"####),
    (r####"return cjson.decode_invalid_numbers(false)"####, r####"true | false"####),
    (
        r####"return cjson.decode_invalid_numbers(0)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option '0')""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers(1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option '1')""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers(15)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option '15')""####,
    ),
    (r####"return cjson.decode_invalid_numbers('on')"####, r####"true | true"####),
    (
        r####"return cjson.decode_invalid_numbers('null')"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option 'null')""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers({},1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_invalid_numbers' (found too many arguments)""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers(-1)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option '-1')""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers('x')"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option 'x')""####,
    ),
    (r####"return cjson.decode_invalid_numbers('on\0x')"####, r####"true | true"####),
    (
        r####"return cjson.decode_invalid_numbers(2^32+5)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option '4294967301')""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers(1.9)"####,
        r####"false | s"user_script:3: bad argument #1 to 'decode_invalid_numbers' (invalid option '1.9')""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers(true,3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_invalid_numbers' (found too many arguments)""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers('on',3,5)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_invalid_numbers' (found too many arguments)""####,
    ),
    (
        r####"return cjson.decode_invalid_numbers(nil,-1)"####,
        r####"false | s"user_script:3: bad argument #2 to 'decode_invalid_numbers' (found too many arguments)""####,
    ),
    (r####"cjson.encode_invalid_numbers(true); return cjson.encode(math.huge)"####, r####"true | s"inf""####),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode(math.huge)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers('null'); return cjson.encode(math.huge)"####, r####"true | s"null""####),
    (r####"cjson.encode_invalid_numbers('on'); return cjson.encode(math.huge)"####, r####"true | s"inf""####),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode(math.huge)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers(true); return cjson.encode(-math.huge)"####, r####"true | s"-inf""####),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode(-math.huge)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers('null'); return cjson.encode(-math.huge)"####, r####"true | s"null""####),
    (r####"cjson.encode_invalid_numbers('on'); return cjson.encode(-math.huge)"####, r####"true | s"-inf""####),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode(-math.huge)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers(true); return cjson.encode(0/0)"####, r####"true | s"nan""####),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode(0/0)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers('null'); return cjson.encode(0/0)"####, r####"true | s"null""####),
    (r####"cjson.encode_invalid_numbers('on'); return cjson.encode(0/0)"####, r####"true | s"nan""####),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode(0/0)"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(true); return cjson.encode(1.234567890123456)"####,
        r####"true | s"1.2345678901235""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode(1.234567890123456)"####,
        r####"true | s"1.2345678901235""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('null'); return cjson.encode(1.234567890123456)"####,
        r####"true | s"1.2345678901235""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('on'); return cjson.encode(1.234567890123456)"####,
        r####"true | s"1.2345678901235""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode(1.234567890123456)"####,
        r####"true | s"1.2345678901235""####,
    ),
    (r####"cjson.encode_invalid_numbers(true); return cjson.encode({})"####, r####"true | s"{}""####),
    (r####"cjson.encode_invalid_numbers(false); return cjson.encode({})"####, r####"true | s"{}""####),
    (r####"cjson.encode_invalid_numbers('null'); return cjson.encode({})"####, r####"true | s"{}""####),
    (r####"cjson.encode_invalid_numbers('on'); return cjson.encode({})"####, r####"true | s"{}""####),
    (r####"cjson.encode_invalid_numbers('off'); return cjson.encode({})"####, r####"true | s"{}""####),
    (
        r####"cjson.encode_invalid_numbers(true); return cjson.encode({[100]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode({[100]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('null'); return cjson.encode({[100]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('on'); return cjson.encode({[100]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode({[100]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(true); return cjson.encode({[math.huge]=1})"####,
        r####"true | s"{"inf":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode({[math.huge]=1})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('null'); return cjson.encode({[math.huge]=1})"####,
        r####"true | s"{"null":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('on'); return cjson.encode({[math.huge]=1})"####,
        r####"true | s"{"inf":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode({[math.huge]=1})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(true); return cjson.encode({[-math.huge]=1})"####,
        r####"true | s"{"-inf":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode({[-math.huge]=1})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('null'); return cjson.encode({[-math.huge]=1})"####,
        r####"true | s"{"null":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('on'); return cjson.encode({[-math.huge]=1})"####,
        r####"true | s"{"-inf":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode({[-math.huge]=1})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers(true); return cjson.encode({1,0/0})"####, r####"true | s"[1,nan]""####),
    (
        r####"cjson.encode_invalid_numbers(false); return cjson.encode({1,0/0})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (r####"cjson.encode_invalid_numbers('null'); return cjson.encode({1,0/0})"####, r####"true | s"[1,null]""####),
    (r####"cjson.encode_invalid_numbers('on'); return cjson.encode({1,0/0})"####, r####"true | s"[1,nan]""####),
    (
        r####"cjson.encode_invalid_numbers('off'); return cjson.encode({1,0/0})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"cjson.encode_number_precision(1); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1,1e-05,1e+13,-0,1e+05,0.1,9e+18,0.3,1e+02,0.9]""####,
    ),
    (
        r####"cjson.encode_number_precision(2); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1.2,1e-05,1e+13,-0,1.2e+05,0.1,9.2e+18,0.33,1e+02,0.95]""####,
    ),
    (
        r####"cjson.encode_number_precision(3); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1.23,1e-05,1e+13,-0,1.23e+05,0.1,9.22e+18,0.333,99.5,0.95]""####,
    ),
    (
        r####"cjson.encode_number_precision(6); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1.23457,1e-05,1e+13,-0,123456,0.1,9.22337e+18,0.333333,99.5,0.95]""####,
    ),
    (
        r####"cjson.encode_number_precision(10); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1.23456789,1e-05,1e+13,-0,123456,0.1,9.223372037e+18,0.3333333333,99.5,0.95]""####,
    ),
    (
        r####"cjson.encode_number_precision(13); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1.234567890123,1e-05,1e+13,-0,123456,0.1,9.223372036855e+18,0.3333333333333,99.5,0.95]""####,
    ),
    (
        r####"cjson.encode_number_precision(14); return cjson.encode({1.23456789012345,1e-5,1e13,-0,123456,0.1,2^63,1/3,99.5,0.95})"####,
        r####"true | s"[1.2345678901235,1e-05,10000000000000,-0,123456,0.1,9.2233720368548e+18,0.33333333333333,99.5,0.95]""####,
    ),
    (
        r####"local j=cjson.new(); j.encode_number_precision(2); return {j.encode(1.2345),cjson.encode(1.2345),type(j.null),tostring(j.null)}"####,
        r####"true | {n1=s"1.2",n2=s"1.2345",n3=s"userdata",n4=s"userdata: (nil)"}"####,
    ),
    (r####"cjson.encode_sparse_array(true); return cjson.encode({[100]=1})"####, r####"true | s"{"100":1}""####),
    (
        r####"cjson.encode_sparse_array(false,0); return cjson.encode({[11]=1})"####,
        r####"true | s"[null,null,null,null,null,null,null,null,null,null,1]""####,
    ),
    (
        r####"cjson.encode_sparse_array(false,1); return cjson.encode({[11]=1, [12]=2})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (
        r####"cjson.encode_sparse_array(false,2,0); return cjson.encode({[3]=1})"####,
        r####"false | s"user_script:3: Cannot serialise table: excessively sparse array""####,
    ),
    (r####"cjson.encode_sparse_array(true,2,0); return cjson.encode({[3]=1})"####, r####"true | s"{"3":1}""####),
    (r####"cjson.encode_sparse_array(false,3,1); return cjson.encode({[3]=1})"####, r####"true | s"[null,null,1]""####),
    (
        r####"cjson.encode_max_depth(2); return cjson.encode({{{}}})"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (3)""####,
    ),
    (r####"cjson.encode_max_depth(2); return cjson.encode({{1}})"####, r####"true | s"[[1]]""####),
    (
        r####"cjson.decode_max_depth(2); return cjson.decode("[[[]]]")"####,
        r####"false | s"user_script:3: Found too many nested data structures (3) at character 3""####,
    ),
    (r####"cjson.decode_max_depth(2); return cjson.decode("[[1]]")"####, r####"true | {n1={n1=n1}}"####),
    (
        r####"cjson.decode_max_depth(2); return cjson.decode('{"a":{"b":{}}}')"####,
        r####"false | s"user_script:3: Found too many nested data structures (3) at character 11""####,
    ),
    (r####"return cjson.encode("\255\128\000")"####, r####"true | s""\ff\80\5cu0000"""####),
    (r####"return cjson.decode("\"\255\128\001\"")"####, r####"true | s"\ff\80\01""####),
    (
        r####"return {type(cjson.null),tostring(cjson.null),cjson.decode("null")==cjson.null,cjson._NAME,cjson._VERSION}"####,
        r####"true | {n1=s"userdata",n2=s"userdata: (nil)",n3=true,n4=s"cjson",n5=s"2.1.0"}"####,
    ),
    (
        r####"return {pcall(cjson.encode)}"####,
        r####"true | {n1=false,n2=s"bad argument #1 to '?' (expected 1 argument)"}"####,
    ),
    (
        r####"return {pcall(cjson.decode, false)}"####,
        r####"true | {n1=false,n2=s"bad argument #1 to '?' (string expected, got boolean)"}"####,
    ),
    (
        r####"local f=cjson.decode; return f(false)"####,
        r####"false | s"user_script:3: bad argument #1 to 'f' (string expected, got boolean)""####,
    ),
    (
        r####"return cjson:decode()"####,
        r####"false | s"user_script:3: calling 'decode' on bad self (string expected, got table)""####,
    ),
    (
        r####"return cjson:encode()"####,
        r####"false | s"user_script:3: Cannot serialise function: type not supported""####,
    ),
    (
        r####"return cjson.null()"####,
        r####"false | s"user_script:3: attempt to call field 'null' (a userdata value)""####,
    ),
    (
        r####"return cjson.null+1"####,
        r####"false | s"user_script:3: attempt to perform arithmetic on field 'null' (a userdata value)""####,
    ),
    (
        r####"return cjson.encode({[math.huge]=1})"####,
        r####"false | s"user_script:3: Cannot serialise number: must not be NaN or Inf""####,
    ),
    (
        r####"cjson.encode_invalid_numbers("null"); return cjson.encode({[math.huge]=1})"####,
        r####"true | s"{"null":1}""####,
    ),
    (
        r####"cjson.encode_invalid_numbers(true); return cjson.encode({[math.huge]=1})"####,
        r####"true | s"{"inf":1}""####,
    ),
    (
        r####"local j=cjson.new(); local k=j.new(); j.encode_invalid_numbers(true); return {j.encode(math.huge),k.encode_invalid_numbers(),cjson.encode_invalid_numbers()}"####,
        r####"true | {n1=s"inf",n2=false,n3=false}"####,
    ),
    (r####"return {cjson.encode_sparse_array()}"####, r####"true | {n1=false,n2=n2,n3=n10}"####),
    (r####"return {cjson.encode_sparse_array("on",3,5)}"####, r####"true | {n1=true,n2=n3,n3=n5}"####),
    (
        r####"cjson.encode_keep_buffer(false); return {cjson.encode_keep_buffer(),cjson.encode({1}),cjson.encode({2})}"####,
        r####"true | {n1=false,n2=s"[1]",n3=s"[2]"}"####,
    ),
    (
        r####"local t = {} local c = t for i=1,999 do c[1] = {} c = c[1] end return #cjson.encode(t)"####,
        r####"true | n2000"####,
    ),
    (
        r####"local t = {} local c = t for i=1,1000 do c[1] = {} c = c[1] end return cjson.encode(t)"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (1001)""####,
    ),
    (
        r####"local t = {} local c = t for i=1,1000 do c.a = {} c = c.a end return cjson.encode(t)"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (1001)""####,
    ),
    (
        r####"cjson.encode_max_depth(100000) local t={} local c=t for i=1,10000 do c[1]={} c=c[1] end return cjson.encode(t)"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (7998)""####,
    ),
    (
        r####"cjson.encode_max_depth(100000) local t={} local c=t for i=1,10000 do c.a={} c=c.a end return cjson.encode(t)"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (4000)""####,
    ),
    (
        r####"cjson.encode_max_depth(100000) local t={} local c=t for i=1,10000 do c[1]={} c=c[1] end return pcall(cjson.encode, t)"####,
        r####"true | false | s"Cannot serialise, excessive nesting (7998)""####,
    ),
    (
        r####"cjson.encode_max_depth(100000) local t={} local c=t for i=1,7996 do c[1]={} c=c[1] end return #cjson.encode(t)"####,
        r####"true | n15994"####,
    ),
    (
        r####"cjson.encode_max_depth(100000) local t={} local c=t for i=1,3998 do c.a={} c=c.a end return #cjson.encode(t)"####,
        r####"true | n23990"####,
    ),
    (
        r####"cjson.encode_max_depth(100000) local t={} local c=t for i=1,3999 do c.a={} c=c.a end return #cjson.encode(t)"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (4000)""####,
    ),
    (
        r####"return #cjson.encode(cjson.decode(string.rep("[", 1000) .. string.rep("]", 1000)))"####,
        r####"true | n2000"####,
    ),
    (
        r####"return cjson.decode(string.rep("[", 1001) .. string.rep("]", 1001))"####,
        r####"false | s"user_script:3: Found too many nested data structures (1001) at character 1001""####,
    ),
    (
        r####"return cjson.decode(string.rep("[", 1001))"####,
        r####"false | s"user_script:3: Found too many nested data structures (1001) at character 1001""####,
    ),
    (
        r####"return cjson.decode(string.rep('{"a":', 1001))"####,
        r####"false | s"user_script:3: Found too many nested data structures (1001) at character 5001""####,
    ),
    (
        r####"cjson.decode_max_depth(100000) return cjson.decode(string.rep("[", 9000))"####,
        r####"false | s"user_script:3: Found too many nested data structures (7999) at character 7999""####,
    ),
    (
        r####"cjson.decode_max_depth(100000) return cjson.decode(string.rep('{"a":', 5000))"####,
        r####"false | s"user_script:3: Found too many nested data structures (4000) at character 19996""####,
    ),
    (
        r####"cjson.decode_max_depth(100000) return #cjson.encode(cjson.decode(string.rep("[", 7998) .. string.rep("]", 7998)))"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (1001)""####,
    ),
    (
        r####"cjson.decode_max_depth(100000) return cjson.decode(string.rep("[", 7999) .. string.rep("]", 7999))"####,
        r####"false | s"user_script:3: Found too many nested data structures (7999) at character 7999""####,
    ),
    (
        r####"cjson.decode_max_depth(100000) return #cjson.encode(cjson.decode(string.rep('{"a":', 3998) .. "1" .. string.rep("}", 3998)))"####,
        r####"false | s"user_script:3: Cannot serialise, excessive nesting (1001)""####,
    ),
    (
        r####"cjson.decode_max_depth(100000) return cjson.decode(string.rep('{"a":', 3999) .. "1" .. string.rep("}", 3999))"####,
        r####"true | {s"a"={s"a"={s"a"={s"a"={s"a"={s"a"={s"a"=T}}}}}}}"####,
    ),
    (
        r####"local t = {} for i=1,3000 do t["k"..i] = i end local s = cjson.encode(t) local d = cjson.decode(s) local n = 0 for k,v in pairs(d) do assert(t[k] == v) n = n + 1 end return n"####,
        r####"true | n3000"####,
    ),
    (r####"local t = {} for i=1,20000 do t[i] = i end return #cjson.encode(t)"####, r####"true | n108895"####),
    (r####"local t = {} for i=1,20000 do t[i] = {"x"} end return #cjson.encode(t)"####, r####"true | n120001"####),
    (r####"local t = {} for i=1,20000 do t["k"..i] = "v" end return #cjson.encode(t)"####, r####"true | n248895"####),
    (
        r####"return cjson.encode(cjson.decode('{"a":[1,2,3,{"b":null,"c":"\\u00e9"}]}'))"####,
        r####"true | s"{"a":[1,2,3,{"c":"\c3\a9","b":null}]}""####,
    ),
    (
        r####"local t = setmetatable({}, {__index=function() return 1 end}) t[1]=5 return cjson.encode(t)"####,
        r####"true | s"[5]""####,
    ),
    (
        r####"local t = setmetatable({}, {__len=function() return 10 end}) return cjson.encode(t)"####,
        r####"true | s"{}""####,
    ),
    (
        r####"return cjson.encode(cjson)"####,
        r####"false | s"user_script:3: Cannot serialise function: type not supported""####,
    ),
    (
        r####"return cjson.encode({cjson.encode})"####,
        r####"false | s"user_script:3: Cannot serialise function: type not supported""####,
    ),
    (
        r####"return cjson.encode(string.rep("a/", 10))"####,
        r####"true | s""a\5c/a\5c/a\5c/a\5c/a\5c/a\5c/a\5c/a\5c/a\5c/a\5c/"""####,
    ),
    (
        r####"return cjson.decode(cjson.encode(string.rep("\1", 40)))"####,
        r####"true | s"\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01""####,
    ),
];
