//! Tests of `cmsgpack`: Redis's recorded replies and edge cases.
use super::*;
use mlua::LightUserData;

/// Line 1 of every test chunk: `S` renders a value as text (strings with
/// `\xx` escapes, numbers with `%.17g`, tables with sorted entries,
/// `NULL` for a NULL light userdata), `P` renders all results of a call,
/// `H` hex-encodes a string.
const SER: &str = r####"local function S(v, d) local t = type(v) if t == 'string' then return 's"' .. (string.gsub(v, '[%z\1-\31\92\127-\255]', function(c) return string.format('\\%02x', string.byte(c)) end)) .. '"' elseif t == 'number' then return 'n' .. string.format('%.17g', v) elseif t == 'table' then if d > 6 then return 'T' end local ks = {} for k, x in pairs(v) do ks[#ks + 1] = S(k, d + 1) .. '=' .. S(x, d + 1) end table.sort(ks) return '{' .. table.concat(ks, ',') .. '}' elseif t == 'userdata' then if tostring(v) == 'userdata: (nil)' then return 'NULL' end return 'U' elseif t == 'boolean' or t == 'nil' then return tostring(v) else return t end end local function P(...) local o = {} for i = 1, select('#', ...) do o[i] = S((select(i, ...)), 0) end return table.concat(o, ' | ') end local function H(s) local t = {} for i = 1, #s do t[i] = string.format('%02x', s:byte(i)) end return table.concat(t) end"####;

fn new_lua() -> Lua {
    let lua = Lua::new();
    install(&lua).expect("install cmsgpack");
    // A few recorded rows pack `cjson.null` (a NULL light userdata).
    let cjson = lua.create_table().unwrap();
    cjson.set("null", Value::LightUserData(LightUserData(std::ptr::null_mut()))).unwrap();
    lua.globals().set("cjson", cjson).unwrap();
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

const HEX: &str = "local function hex(s) local h = '' for i = 1, #s do h = h .. string.format('%02x', string.byte(s, i)) end return h end\n";

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

// The cmsgpack cases of Redis's tests/unit/scripting.tcl.

#[test]
fn scripting_tcl_cmsgpack_can_pack_double() {
    let lua = new_lua();
    let h: String = eval(&lua, &format!("{HEX}return hex(cmsgpack.pack(0.1))"));
    assert_eq!(h, "cb3fb999999999999a");
}

#[test]
fn scripting_tcl_cmsgpack_can_pack_negative_int64() {
    let lua = new_lua();
    let h: String = eval(&lua, &format!("{HEX}return hex(cmsgpack.pack(-1099511627776))"));
    assert_eq!(h, "d3ffffff0000000000");
}

#[test]
fn scripting_tcl_cmsgpack_circular_references() {
    let lua = new_lua();
    let (h, a, b): (String, bool, bool) = eval(
        &lua,
        &format!(
            "{HEX}{}",
            r#"local a = {x=nil,y=5}
            local b = {x=a}
            a['x'] = b
            local encoded = cmsgpack.pack(a)
            local h = hex(encoded)
            local re = cmsgpack.unpack(encoded)
            assert(re)
            assert(re.x)
            assert(re.x.x.y == re.y)
            assert(re.x.x.x.x.y == re.y)
            assert(re.x.x.x.x.x.x.y == re.y)
            assert(re.x.x.x.x.x.x.x.x.x.x.y == re.y)
            assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y)
            assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x)
            assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil)
            return h, re.x.x.x.x.x.x.x.x.y == re.y, re.y == 5"#
        ),
    );
    assert_eq!(
        h,
        "82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0"
    );
    assert!(a && b);
}

#[test]
fn scripting_tcl_cmsgpack_smoke_test() {
    let lua = new_lua();
    let s: String = eval(
        &lua,
        r#"
        local str_lt_32 = string.rep("x", 30)
        local str_lt_255 = string.rep("x", 250)
        local str_lt_65535 = string.rep("x", 65530)
        local str_long = string.rep("x", 100000)
        local array_lt_15 = {1, 2, 3, 4, 5}
        local array_lt_65535 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
        local array_big = {}
        for i=1, 100000 do array_big[i] = i end
        local map_lt_15 = {a=1, b=2}
        local map_big = {}
        for i=1, 100000 do map_big[tostring(i)] = i end
        local some_map = {
            s1=str_lt_32, s2=str_lt_255, s3=str_lt_65535, s4=str_long,
            d1=0.1, d2=1.1, d3=-1.1,
            i1=1, i2=250, i3=65530, i4=100000, i5=2^40,
            i6=-1, i7=-120, i8=-32000, i9=-1200000, i10=-2^40, i11 = -2^63,
            b1=true, b2=false,
            n=nil,
            a1=array_lt_15, a2=array_lt_65535, a3=array_big,
            m1=map_lt_15, m2=map_big,
        }
        local encoded = cmsgpack.pack(some_map)
        local decoded = cmsgpack.unpack(encoded)
        assert(table.concat(some_map) == table.concat(decoded))
        local offset, decoded_one = cmsgpack.unpack_one(encoded, 0)
        assert(table.concat(some_map) == table.concat(decoded_one))
        assert(offset == -1)
        local encoded_multiple = cmsgpack.pack(str_lt_32, str_lt_255, str_lt_65535, str_long)
        local offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, 0)
        assert(obj == str_lt_32)
        offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
        assert(obj == str_lt_255)
        offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
        assert(obj == str_lt_65535)
        offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
        assert(obj == str_long)
        assert(offset == -1)
        assert(decoded.a3[100000] == 100000 and decoded.m2["77777"] == 77777)
        assert(decoded.i11 == -2^63 and decoded.i5 == 2^40 and decoded.d3 == -1.1)
        return "OK"
        "#,
    );
    assert_eq!(s, "OK");
}

#[test]
fn encoding_choices() {
    let lua = new_lua();
    let cases: &[(&str, &str)] = &[
        ("0", "00"),
        ("-32", "e0"),
        ("-33", "d0df"),
        ("255", "ccff"),
        ("65536", "ce00010000"),
        ("2^32", "cf0000000100000000"),
        ("1.5", "ca3fc00000"),
        ("0.1", "cb3fb999999999999a"),
        ("2^63", "ca5f000000"),
        ("string.rep('x', 32)", &format!("d920{}", "78".repeat(32))),
        ("{}", "90"),
        ("{1, 2}", "920102"),
        ("{[2] = 1}", "810201"),
        ("print", "c0"),
        ("1, 'a', true", "01a161c3"),
    ];
    for (src, want) in cases {
        let got: String = eval(&lua, &format!("{HEX}return hex(cmsgpack.pack({src}))"));
        assert_eq!(&got, want, "cmsgpack.pack({src})");
    }
}

#[test]
fn errors_are_lua_strings_with_the_c_library_prefixes() {
    let lua = new_lua();
    let (direct, protected, arg): (String, String, String) = eval(
        &lua,
        r#"local _, direct = pcall(function() return cmsgpack.unpack('\217\3ab') end)
           local _, protected = pcall(cmsgpack.unpack, '\193')
           local _, arg = pcall(function() return cmsgpack.pack() end)
           return direct, protected, arg"#,
    );
    assert_eq!(direct, "user_script:1: Missing bytes in input.");
    assert_eq!(protected, "Bad data format in input.");
    assert_eq!(arg, "user_script:3: bad argument #0 to 'pack' (MessagePack pack needs input.)");
}

#[test]
fn round_trips() {
    let lua = new_lua();
    let n: i64 = eval(
        &lua,
        r#"
        local seed = 4242
        local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n end
        local function gen(depth)
            local k = rnd(depth > 6 and 6 or 9)
            if k == 0 then return rnd(2) == 0
            elseif k == 1 then return rnd(2^31) - 2^30
            elseif k == 2 then return (rnd(2^31) - 2^30) * 2^(rnd(80) - 40)
            elseif k == 3 then return rnd(2^31) * 2^32 + rnd(2^31)
            elseif k == 4 then return -(rnd(2^31) * 2^32 + rnd(2^31))
            elseif k == 5 then
                local b = {} for i = 1, rnd(40) do b[i] = string.char(rnd(256)) end
                return table.concat(b)
            elseif k == 6 then
                local t = {} for i = 1, rnd(20) do t[i] = gen(depth + 1) end return t
            elseif k == 7 then
                local t = {} for i = 1, rnd(20) do t[gen(depth + 1)] = gen(depth + 1) end return t
            else return string.rep("y", rnd(3) == 0 and 65536 + rnd(10) or rnd(300)) end
        end
        local function same(a, b)
            if type(a) ~= type(b) then return false end
            if type(a) ~= "table" then return a == b end
            local n = 0
            for k, v in pairs(a) do
                n = n + 1
                local found = false
                if type(k) ~= "table" then found = same(v, b[k]) else
                    for k2, v2 in pairs(b) do if same(k, k2) and same(v, v2) then found = true end end
                end
                if not found then return false end
            end
            for _ in pairs(b) do n = n - 1 end
            return n == 0
        end
        local count = 0
        for i = 1, 300 do
            local v1, v2 = gen(0), gen(0)
            local s = cmsgpack.pack(v1, v2)
            local d1, d2 = cmsgpack.unpack(s)
            assert(same(v1, d1) and same(v2, d2))
            local off, o1 = cmsgpack.unpack_one(s)
            local off2, o2 = cmsgpack.unpack_one(s, off)
            assert(off2 == -1 and same(v1, o1) and same(v2, o2))
            count = count + 1
        end
        return count
        "#,
    );
    assert_eq!(n, 300);
}

#[test]
fn random_input_raises_lua_errors_never_panics() {
    let lua = new_lua();
    let n: i64 = eval(
        &lua,
        r#"
        local seed = 7
        local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n end
        local interesting = {0x80, 0x81, 0x90, 0x91, 0xa1, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xca, 0xcb, 0xcc,
            0xcd, 0xce, 0xcf, 0xd0, 0xd3, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff, 0, 1, 0x7f}
        local count = 0
        for i = 1, 20000 do
            local b = {}
            for j = 1, rnd(20) do
                b[j] = string.char(rnd(3) == 0 and rnd(256) or interesting[rnd(#interesting) + 1])
            end
            local s = table.concat(b)
            local ok, err = pcall(cmsgpack.unpack, s)
            assert(ok or type(err) == "string")
            ok, err = pcall(cmsgpack.unpack_limit, s, rnd(4), rnd(#s + 2))
            assert(ok or type(err) == "string")
            count = count + 1
        end
        return count
        "#,
    );
    assert_eq!(n, 20000);
}

/// `(body, reply)` recorded from redis-server 7.0.15 (Debian
/// 7.0.15-1~deb12u10): `EVAL "<SER>\nreturn P(pcall(function()\n<body>\nend))" 0`,
/// each followed by `SCRIPT FLUSH`.
const REDIS_ROWS: &[(&str, &str)] = &[
    (
        r####"local encoded = cmsgpack.pack(0.1)
local h = ""
for i = 1, #encoded do
    h = h .. string.format("%02x",string.byte(encoded,i))
end
return h"####,
        r####"true | s"cb3fb999999999999a""####,
    ),
    (
        r####"local encoded = cmsgpack.pack(-1099511627776)
local h = ""
for i = 1, #encoded do
    h = h .. string.format("%02x",string.byte(encoded,i))
end
return h"####,
        r####"true | s"d3ffffff0000000000""####,
    ),
    (r####"return H(cmsgpack.pack(nil))"####, r####"true | s"c0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(nil))"####, r####"true | nil"####),
    (r####"return H(cmsgpack.pack(false))"####, r####"true | s"c2""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(false))"####, r####"true | false"####),
    (r####"return H(cmsgpack.pack(true))"####, r####"true | s"c3""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(true))"####, r####"true | true"####),
    (r####"return H(cmsgpack.pack(0))"####, r####"true | s"00""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(0))"####, r####"true | n0"####),
    (r####"return H(cmsgpack.pack(-0))"####, r####"true | s"00""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-0))"####, r####"true | n0"####),
    (r####"return H(cmsgpack.pack(-1))"####, r####"true | s"ff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-1))"####, r####"true | n-1"####),
    (r####"return H(cmsgpack.pack(127))"####, r####"true | s"7f""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(127))"####, r####"true | n127"####),
    (r####"return H(cmsgpack.pack(128))"####, r####"true | s"cc80""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(128))"####, r####"true | n128"####),
    (r####"return H(cmsgpack.pack(255))"####, r####"true | s"ccff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(255))"####, r####"true | n255"####),
    (r####"return H(cmsgpack.pack(256))"####, r####"true | s"cd0100""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(256))"####, r####"true | n256"####),
    (r####"return H(cmsgpack.pack(65535))"####, r####"true | s"cdffff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(65535))"####, r####"true | n65535"####),
    (r####"return H(cmsgpack.pack(65536))"####, r####"true | s"ce00010000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(65536))"####, r####"true | n65536"####),
    (r####"return H(cmsgpack.pack(-32))"####, r####"true | s"e0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-32))"####, r####"true | n-32"####),
    (r####"return H(cmsgpack.pack(-33))"####, r####"true | s"d0df""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-33))"####, r####"true | n-33"####),
    (r####"return H(cmsgpack.pack(-128))"####, r####"true | s"d080""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-128))"####, r####"true | n-128"####),
    (r####"return H(cmsgpack.pack(-129))"####, r####"true | s"d1ff7f""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-129))"####, r####"true | n-129"####),
    (r####"return H(cmsgpack.pack(-32768))"####, r####"true | s"d18000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-32768))"####, r####"true | n-32768"####),
    (r####"return H(cmsgpack.pack(-32769))"####, r####"true | s"d2ffff7fff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-32769))"####, r####"true | n-32769"####),
    (r####"return H(cmsgpack.pack(-2147483648))"####, r####"true | s"d280000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-2147483648))"####, r####"true | n-2147483648"####),
    (r####"return H(cmsgpack.pack(-2147483649))"####, r####"true | s"d3ffffffff7fffffff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-2147483649))"####, r####"true | n-2147483649"####),
    (r####"return H(cmsgpack.pack(2147483647))"####, r####"true | s"ce7fffffff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(2147483647))"####, r####"true | n2147483647"####),
    (r####"return H(cmsgpack.pack(2147483648))"####, r####"true | s"ce80000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(2147483648))"####, r####"true | n2147483648"####),
    (r####"return H(cmsgpack.pack(4294967295))"####, r####"true | s"ceffffffff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(4294967295))"####, r####"true | n4294967295"####),
    (r####"return H(cmsgpack.pack(4294967296))"####, r####"true | s"cf0000000100000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(4294967296))"####, r####"true | n4294967296"####),
    (r####"return H(cmsgpack.pack(9223372036854775807))"####, r####"true | s"ca5f000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(9223372036854775807))"####, r####"true | n9.2233720368547758e+18"####),
    (r####"return H(cmsgpack.pack(9223372036854775808))"####, r####"true | s"ca5f000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(9223372036854775808))"####, r####"true | n9.2233720368547758e+18"####),
    (r####"return H(cmsgpack.pack(-9223372036854775808))"####, r####"true | s"d38000000000000000""####),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(-9223372036854775808))"####,
        r####"true | n-9.2233720368547758e+18"####,
    ),
    (r####"return H(cmsgpack.pack(-9223372036854775809))"####, r####"true | s"d38000000000000000""####),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(-9223372036854775809))"####,
        r####"true | n-9.2233720368547758e+18"####,
    ),
    (r####"return H(cmsgpack.pack(18446744073709551615))"####, r####"true | s"ca5f800000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(18446744073709551615))"####, r####"true | n1.8446744073709552e+19"####),
    (r####"return H(cmsgpack.pack(1e19))"####, r####"true | s"cb43e158e460913d00""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(1e19))"####, r####"true | n1e+19"####),
    (r####"return H(cmsgpack.pack(1.5))"####, r####"true | s"ca3fc00000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(1.5))"####, r####"true | n1.5"####),
    (r####"return H(cmsgpack.pack(1.1))"####, r####"true | s"cb3ff199999999999a""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(1.1))"####, r####"true | n1.1000000000000001"####),
    (r####"return H(cmsgpack.pack(0.1))"####, r####"true | s"cb3fb999999999999a""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(0.1))"####, r####"true | n0.10000000000000001"####),
    (r####"return H(cmsgpack.pack(0.5))"####, r####"true | s"ca3f000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(0.5))"####, r####"true | n0.5"####),
    (r####"return H(cmsgpack.pack(-0.25))"####, r####"true | s"cabe800000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-0.25))"####, r####"true | n-0.25"####),
    (r####"return H(cmsgpack.pack(1e300))"####, r####"true | s"cb7e37e43c8800759c""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(1e300))"####, r####"true | n1.0000000000000001e+300"####),
    (r####"return H(cmsgpack.pack(1e-300))"####, r####"true | s"cb01a56e1fc2f8f359""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(1e-300))"####, r####"true | n1e-300"####),
    (r####"return H(cmsgpack.pack(5e-324))"####, r####"true | s"cb0000000000000001""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(5e-324))"####, r####"true | n4.9406564584124654e-324"####),
    (r####"return H(cmsgpack.pack(3.4028234663852886e38))"####, r####"true | s"ca7f7fffff""####),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(3.4028234663852886e38))"####,
        r####"true | n3.4028234663852886e+38"####,
    ),
    (r####"return H(cmsgpack.pack(3.4028235677973366e38))"####, r####"true | s"cb47effffff0000000""####),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(3.4028235677973366e38))"####,
        r####"true | n3.4028235677973366e+38"####,
    ),
    (r####"return H(cmsgpack.pack(1e39))"####, r####"true | s"cb48078287f49c4a1d""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(1e39))"####, r####"true | n9.9999999999999994e+38"####),
    (r####"return H(cmsgpack.pack(math.huge))"####, r####"true | s"ca7f800000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(math.huge))"####, r####"true | ninf"####),
    (r####"return H(cmsgpack.pack(-math.huge))"####, r####"true | s"caff800000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-math.huge))"####, r####"true | n-inf"####),
    (r####"return H(cmsgpack.pack(0/0))"####, r####"true | s"cbfff8000000000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(0/0))"####, r####"true | n-nan"####),
    (r####"return H(cmsgpack.pack(-(0/0)))"####, r####"true | s"cb7ff8000000000000""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(-(0/0)))"####, r####"true | nnan"####),
    (r####"return H(cmsgpack.pack(''))"####, r####"true | s"a0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(''))"####, r####"true | s"""####),
    (r####"return H(cmsgpack.pack('a\000\255'))"####, r####"true | s"a36100ff""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack('a\000\255'))"####, r####"true | s"a\00\ff""####),
    (
        r####"return H(cmsgpack.pack(string.rep("x",31)))"####,
        r####"true | s"bf78787878787878787878787878787878787878787878787878787878787878""####,
    ),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(string.rep("x",31)))"####,
        r####"true | s"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx""####,
    ),
    (
        r####"return H(cmsgpack.pack(string.rep("x",32)))"####,
        r####"true | s"d9207878787878787878787878787878787878787878787878787878787878787878""####,
    ),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(string.rep("x",32)))"####,
        r####"true | s"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx""####,
    ),
    (r####"return H(cmsgpack.pack({}))"####, r####"true | s"90""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({}))"####, r####"true | {}"####),
    (r####"return H(cmsgpack.pack({1,2,3}))"####, r####"true | s"93010203""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({1,2,3}))"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return H(cmsgpack.pack({[3]=1}))"####, r####"true | s"810301""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[3]=1}))"####, r####"true | {n3=n1}"####),
    (r####"return H(cmsgpack.pack({a=1}))"####, r####"true | s"81a16101""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({a=1}))"####, r####"true | {s"a"=n1}"####),
    (r####"return H(cmsgpack.pack({1,2,nil,4}))"####, r####"true | s"83010102020404""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({1,2,nil,4}))"####, r####"true | {n1=n1,n2=n2,n4=n4}"####),
    (r####"return H(cmsgpack.pack({[1]=1,[2]=2,[3]=3,[5]=5}))"####, r####"true | s"840101020205050303""####),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack({[1]=1,[2]=2,[3]=3,[5]=5}))"####,
        r####"true | {n1=n1,n2=n2,n3=n3,n5=n5}"####,
    ),
    (r####"return H(cmsgpack.pack({[0]=1}))"####, r####"true | s"810001""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[0]=1}))"####, r####"true | {n0=n1}"####),
    (r####"return H(cmsgpack.pack({[1.5]=1}))"####, r####"true | s"81ca3fc0000001""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[1.5]=1}))"####, r####"true | {n1.5=n1}"####),
    (r####"return H(cmsgpack.pack({[-1]=1}))"####, r####"true | s"81ff01""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[-1]=1}))"####, r####"true | {n-1=n1}"####),
    (r####"return H(cmsgpack.pack({[2^31]=1}))"####, r####"true | s"81ce8000000001""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[2^31]=1}))"####, r####"true | {n2147483648=n1}"####),
    (r####"return H(cmsgpack.pack({[true]=false}))"####, r####"true | s"81c3c2""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[true]=false}))"####, r####"true | {true=false}"####),
    (r####"return H(cmsgpack.pack({[{}]={}}))"####, r####"true | s"819090""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({[{}]={}}))"####, r####"true | {{}={}}"####),
    (r####"return H(cmsgpack.pack({{{{}}}}))"####, r####"true | s"91919190""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({{{{}}}}))"####, r####"true | {n1={n1={n1={}}}}"####),
    (r####"return H(cmsgpack.pack({1,{2,{3}},{a={b="c"}}}))"####, r####"true | s"93019202910381a16181a162a163""####),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack({1,{2,{3}},{a={b="c"}}}))"####,
        r####"true | {n1=n1,n2={n1=n2,n2={n1=n3}},n3={s"a"={s"b"=s"c"}}}"####,
    ),
    (r####"return H(cmsgpack.pack(function() end))"####, r####"true | s"c0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(function() end))"####, r####"true | nil"####),
    (r####"return H(cmsgpack.pack(cjson.null))"####, r####"true | s"c0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(cjson.null))"####, r####"true | nil"####),
    (r####"return H(cmsgpack.pack(coroutine.create(function() end)))"####, r####"true | s"c0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack(coroutine.create(function() end)))"####, r####"true | nil"####),
    (r####"return H(cmsgpack.pack({f=function() end}))"####, r####"true | s"81a166c0""####),
    (r####"return cmsgpack.unpack(cmsgpack.pack({f=function() end}))"####, r####"true | {}"####),
    (
        r####"return H(cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}))"####,
        r####"true | s"9f0102030405060708090a0b0c0d0e0f""####,
    ),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}))"####,
        r####"true | {n10=n10,n11=n11,n12=n12,n13=n13,n14=n14,n15=n15,n1=n1,n2=n2,n3=n3,n4=n4,n5=n5,n6=n6,n7=n7,n8=n8,n9=n9}"####,
    ),
    (
        r####"return H(cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}))"####,
        r####"true | s"dc00100102030405060708090a0b0c0d0e0f10""####,
    ),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}))"####,
        r####"true | {n10=n10,n11=n11,n12=n12,n13=n13,n14=n14,n15=n15,n16=n16,n1=n1,n2=n2,n3=n3,n4=n4,n5=n5,n6=n6,n7=n7,n8=n8,n9=n9}"####,
    ),
    (
        r####"return H(cmsgpack.pack({a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,m=13,n=14,o=15}))"####,
        r####"true | s"8fa16101a16303a16202a16505a16404a16707a16606a16909a16808a16b0ba16a0aa16d0da16c0ca16f0fa16e0e""####,
    ),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack({a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,m=13,n=14,o=15}))"####,
        r####"true | {s"a"=n1,s"b"=n2,s"c"=n3,s"d"=n4,s"e"=n5,s"f"=n6,s"g"=n7,s"h"=n8,s"i"=n9,s"j"=n10,s"k"=n11,s"l"=n12,s"m"=n13,s"n"=n14,s"o"=n15}"####,
    ),
    (
        r####"return H(cmsgpack.pack({a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,m=13,n=14,o=15,p=16}))"####,
        r####"true | s"de0010a16101a17010a16303a16202a16505a16404a16707a16606a16909a16808a16b0ba16a0aa16d0da16c0ca16f0fa16e0e""####,
    ),
    (
        r####"return {cmsgpack.pack()}"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (MessagePack pack needs input.)""####,
    ),
    (r####"return {cmsgpack.pack(nil)}"####, r####"true | {n1=s"\c0"}"####),
    (r####"return {cmsgpack.pack(true)}"####, r####"true | {n1=s"\c3"}"####),
    (r####"return {cmsgpack.pack(0)}"####, r####"true | {n1=s"\00"}"####),
    (r####"return {cmsgpack.pack(1.5)}"####, r####"true | {n1=s"\ca?\c0\00\00"}"####),
    (r####"return {cmsgpack.pack('')}"####, r####"true | {n1=s"\a0"}"####),
    (r####"return {cmsgpack.pack('\193')}"####, r####"true | {n1=s"\a1\c1"}"####),
    (r####"return {cmsgpack.pack('\217\003ab')}"####, r####"true | {n1=s"\a4\d9\03ab"}"####),
    (r####"return {cmsgpack.pack('\196\001x')}"####, r####"true | {n1=s"\a3\c4\01x"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',2)}"####, r####"true | {n1=s"\a3\01\02\03\02"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',1,1)}"####, r####"true | {n1=s"\a3\01\02\03\01\01"}"####),
    (r####"return {cmsgpack.pack('\001',-1)}"####, r####"true | {n1=s"\a1\01\ff"}"####),
    (r####"return {cmsgpack.pack('\001',1,-1)}"####, r####"true | {n1=s"\a1\01\01\ff"}"####),
    (r####"return {cmsgpack.pack('\001',1,10)}"####, r####"true | {n1=s"\a1\01\01\0a"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',0)}"####, r####"true | {n1=s"\a3\01\02\03\00"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',0,1)}"####, r####"true | {n1=s"\a3\01\02\03\00\01"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',1,3)}"####, r####"true | {n1=s"\a3\01\02\03\01\03"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',1,4)}"####, r####"true | {n1=s"\a3\01\02\03\01\04"}"####),
    (r####"return {cmsgpack.pack('\001\002\003','x')}"####, r####"true | {n1=s"\a3\01\02\03\a1x"}"####),
    (r####"return {cmsgpack.pack('\001\002\003',1,'x')}"####, r####"true | {n1=s"\a3\01\02\03\01\a1x"}"####),
    (
        r####"return {cmsgpack.pack('\001\002\003',2^32+1)}"####,
        r####"true | {n1=s"\a3\01\02\03\cf\00\00\00\01\00\00\00\01"}"####,
    ),
    (r####"return {cmsgpack.pack({})}"####, r####"true | {n1=s"\90"}"####),
    (r####"return {cmsgpack.pack(1,2,3)}"####, r####"true | {n1=s"\01\02\03"}"####),
    (
        r####"return {cmsgpack.unpack()}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack' (string expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack(nil)}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack' (string expected, got nil)""####,
    ),
    (
        r####"return {cmsgpack.unpack(true)}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack' (string expected, got boolean)""####,
    ),
    (r####"return {cmsgpack.unpack(0)}"####, r####"true | {n1=n48}"####),
    (r####"return {cmsgpack.unpack(1.5)}"####, r####"true | {n1=n49,n2=n46,n3=n53}"####),
    (r####"return {cmsgpack.unpack('')}"####, r####"true | {}"####),
    (r####"return {cmsgpack.unpack('\193')}"####, r####"false | s"user_script:3: Bad data format in input.""####),
    (r####"return {cmsgpack.unpack('\217\003ab')}"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (r####"return {cmsgpack.unpack('\196\001x')}"####, r####"false | s"user_script:3: Bad data format in input.""####),
    (r####"return {cmsgpack.unpack('\001\002\003',2)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',1,1)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001',-1)}"####, r####"true | {n1=n1}"####),
    (r####"return {cmsgpack.unpack('\001',1,-1)}"####, r####"true | {n1=n1}"####),
    (r####"return {cmsgpack.unpack('\001',1,10)}"####, r####"true | {n1=n1}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',0)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',0,1)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',1,3)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',1,4)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003','x')}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',1,'x')}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack('\001\002\003',2^32+1)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (
        r####"return {cmsgpack.unpack({})}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack' (string expected, got table)""####,
    ),
    (r####"return {cmsgpack.unpack(1,2,3)}"####, r####"true | {n1=n49}"####),
    (
        r####"return {cmsgpack.unpack_one()}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack_one' (string expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_one(nil)}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack_one' (string expected, got nil)""####,
    ),
    (
        r####"return {cmsgpack.unpack_one(true)}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack_one' (string expected, got boolean)""####,
    ),
    (r####"return {cmsgpack.unpack_one(0)}"####, r####"true | {n1=n-1,n2=n48}"####),
    (r####"return {cmsgpack.unpack_one(1.5)}"####, r####"true | {n1=n1,n2=n49}"####),
    (r####"return {cmsgpack.unpack_one('')}"####, r####"true | {n1=n-1}"####),
    (r####"return {cmsgpack.unpack_one('\193')}"####, r####"false | s"user_script:3: Bad data format in input.""####),
    (
        r####"return {cmsgpack.unpack_one('\217\003ab')}"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (
        r####"return {cmsgpack.unpack_one('\196\001x')}"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (r####"return {cmsgpack.unpack_one('\001\002\003',2)}"####, r####"true | {n1=n-1,n2=n3}"####),
    (r####"return {cmsgpack.unpack_one('\001\002\003',1,1)}"####, r####"true | {n1=n2,n2=n2}"####),
    (
        r####"return {cmsgpack.unpack_one('\001',-1)}"####,
        r####"false | s"user_script:3: Invalid request to unpack with offset of -1 and limit of 1.""####,
    ),
    (r####"return {cmsgpack.unpack_one('\001',1,-1)}"####, r####"true | {n1=n-1}"####),
    (r####"return {cmsgpack.unpack_one('\001',1,10)}"####, r####"true | {n1=n-1}"####),
    (r####"return {cmsgpack.unpack_one('\001\002\003',0)}"####, r####"true | {n1=n1,n2=n1}"####),
    (r####"return {cmsgpack.unpack_one('\001\002\003',0,1)}"####, r####"true | {n1=n1,n2=n1}"####),
    (r####"return {cmsgpack.unpack_one('\001\002\003',1,3)}"####, r####"true | {n1=n2,n2=n2}"####),
    (r####"return {cmsgpack.unpack_one('\001\002\003',1,4)}"####, r####"true | {n1=n2,n2=n2}"####),
    (
        r####"return {cmsgpack.unpack_one('\001\002\003','x')}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_one' (number expected, got string)""####,
    ),
    (r####"return {cmsgpack.unpack_one('\001\002\003',1,'x')}"####, r####"true | {n1=n2,n2=n2}"####),
    (
        r####"return {cmsgpack.unpack_one('\001\002\003',2^32+1)}"####,
        r####"false | s"user_script:3: Start offset 1 greater than input length 3.""####,
    ),
    (
        r####"return {cmsgpack.unpack_one({})}"####,
        r####"false | s"user_script:3: bad argument #1 to 'unpack_one' (string expected, got table)""####,
    ),
    (
        r####"return {cmsgpack.unpack_one(1,2,3)}"####,
        r####"false | s"user_script:3: Start offset 2 greater than input length 1.""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit()}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit(nil)}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit(true)}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit(0)}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit(1.5)}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('')}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\193')}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\217\003ab')}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\196\001x')}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (r####"return {cmsgpack.unpack_limit('\001\002\003',2)}"####, r####"true | {n1=n2,n2=n1,n3=n2}"####),
    (r####"return {cmsgpack.unpack_limit('\001\002\003',1,1)}"####, r####"true | {n1=n2,n2=n2}"####),
    (
        r####"return {cmsgpack.unpack_limit('\001',-1)}"####,
        r####"false | s"user_script:3: Invalid request to unpack with offset of 0 and limit of 1.""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\001',1,-1)}"####,
        r####"false | s"user_script:3: Invalid request to unpack with offset of -1 and limit of 1.""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\001',1,10)}"####,
        r####"false | s"user_script:3: Start offset 10 greater than input length 1.""####,
    ),
    (r####"return {cmsgpack.unpack_limit('\001\002\003',0)}"####, r####"true | {n1=n1,n2=n2,n3=n3}"####),
    (r####"return {cmsgpack.unpack_limit('\001\002\003',0,1)}"####, r####"true | {n1=n1}"####),
    (r####"return {cmsgpack.unpack_limit('\001\002\003',1,3)}"####, r####"true | {n1=n-1}"####),
    (
        r####"return {cmsgpack.unpack_limit('\001\002\003',1,4)}"####,
        r####"false | s"user_script:3: Start offset 4 greater than input length 3.""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\001\002\003','x')}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got string)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit('\001\002\003',1,'x')}"####,
        r####"false | s"user_script:3: bad argument #3 to 'unpack_limit' (number expected, got string)""####,
    ),
    (r####"return {cmsgpack.unpack_limit('\001\002\003',2^32+1)}"####, r####"true | {n1=n-1,n2=n1,n3=n2,n4=n3}"####),
    (
        r####"return {cmsgpack.unpack_limit({})}"####,
        r####"false | s"user_script:3: bad argument #2 to 'unpack_limit' (number expected, got no value)""####,
    ),
    (
        r####"return {cmsgpack.unpack_limit(1,2,3)}"####,
        r####"false | s"user_script:3: Start offset 3 greater than input length 1.""####,
    ),
    (
        r####"local t={};t[1]=t; return cmsgpack.unpack(cmsgpack.pack(t))"####,
        r####"true | {n1={n1={n1={n1={n1={n1={n1=T}}}}}}}"####,
    ),
    (r####"local t={};t[1]=t; return H(cmsgpack.pack(t))"####, r####"true | s"91919191919191919191919191919191c0""####),
    (r####"return cmsgpack.unpack(string.char(192))"####, r####"true | nil"####),
    (
        r####"return cmsgpack.unpack(string.char(192) .. string.rep("\0", 8))"####,
        r####"true | nil | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(192) .. string.rep("\255", 8))"####,
        r####"true | nil | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(193))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(193) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(194))"####, r####"true | false"####),
    (
        r####"return cmsgpack.unpack(string.char(194) .. string.rep("\0", 8))"####,
        r####"true | false | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(194) .. string.rep("\255", 8))"####,
        r####"true | false | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(195))"####, r####"true | true"####),
    (
        r####"return cmsgpack.unpack(string.char(195) .. string.rep("\0", 8))"####,
        r####"true | true | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(195) .. string.rep("\255", 8))"####,
        r####"true | true | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(196))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(196) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(197))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(197) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(198))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(198) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(199))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(199) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(200))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(200) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(201))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(201) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(202))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(202) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(202) .. string.rep("\255", 8))"####,
        r####"true | n-nan | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(203))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (r####"return cmsgpack.unpack(string.char(203) .. string.rep("\0", 8))"####, r####"true | n0"####),
    (r####"return cmsgpack.unpack(string.char(203) .. string.rep("\255", 8))"####, r####"true | n-nan"####),
    (r####"return cmsgpack.unpack(string.char(204))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(204) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(204) .. string.rep("\255", 8))"####,
        r####"true | n255 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(205))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(205) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(205) .. string.rep("\255", 8))"####,
        r####"true | n65535 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(206))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(206) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(206) .. string.rep("\255", 8))"####,
        r####"true | n4294967295 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(207))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (r####"return cmsgpack.unpack(string.char(207) .. string.rep("\0", 8))"####, r####"true | n0"####),
    (r####"return cmsgpack.unpack(string.char(207) .. string.rep("\255", 8))"####, r####"true | n-1"####),
    (r####"return cmsgpack.unpack(string.char(208))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(208) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(208) .. string.rep("\255", 8))"####,
        r####"true | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(209))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(209) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(209) .. string.rep("\255", 8))"####,
        r####"true | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(210))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(210) .. string.rep("\0", 8))"####,
        r####"true | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(210) .. string.rep("\255", 8))"####,
        r####"true | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(211))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (r####"return cmsgpack.unpack(string.char(211) .. string.rep("\0", 8))"####, r####"true | n0"####),
    (r####"return cmsgpack.unpack(string.char(211) .. string.rep("\255", 8))"####, r####"true | n-1"####),
    (
        r####"return cmsgpack.unpack(string.char(212))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(212) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(213))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(213) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(214))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(214) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(215))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(215) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(216))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(216) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(217))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(217) .. string.rep("\0", 8))"####,
        r####"true | s"" | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(217) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(218))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(218) .. string.rep("\0", 8))"####,
        r####"true | s"" | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(218) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(219))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(219) .. string.rep("\0", 8))"####,
        r####"true | s"" | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(219) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(220))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(220) .. string.rep("\0", 8))"####,
        r####"true | {} | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(220) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(221))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(221) .. string.rep("\0", 8))"####,
        r####"true | {} | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(221) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(222))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(222) .. string.rep("\0", 8))"####,
        r####"true | {} | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(222) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(223))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(223) .. string.rep("\0", 8))"####,
        r####"true | {} | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(223) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(128))"####, r####"true | {}"####),
    (
        r####"return cmsgpack.unpack(string.char(128) .. string.rep("\0", 8))"####,
        r####"true | {} | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(128) .. string.rep("\255", 8))"####,
        r####"true | {} | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(143))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(143) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(143) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(144))"####, r####"true | {}"####),
    (
        r####"return cmsgpack.unpack(string.char(144) .. string.rep("\0", 8))"####,
        r####"true | {} | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(144) .. string.rep("\255", 8))"####,
        r####"true | {} | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(159))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(159) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(159) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(160))"####, r####"true | s"""####),
    (
        r####"return cmsgpack.unpack(string.char(160) .. string.rep("\0", 8))"####,
        r####"true | s"" | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(160) .. string.rep("\255", 8))"####,
        r####"true | s"" | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(191))"####, r####"false | s"user_script:3: Missing bytes in input.""####),
    (
        r####"return cmsgpack.unpack(string.char(191) .. string.rep("\0", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(191) .. string.rep("\255", 8))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(127))"####, r####"true | n127"####),
    (
        r####"return cmsgpack.unpack(string.char(127) .. string.rep("\0", 8))"####,
        r####"true | n127 | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(127) .. string.rep("\255", 8))"####,
        r####"true | n127 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(224))"####, r####"true | n-32"####),
    (
        r####"return cmsgpack.unpack(string.char(224) .. string.rep("\0", 8))"####,
        r####"true | n-32 | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(224) .. string.rep("\255", 8))"####,
        r####"true | n-32 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(255))"####, r####"true | n-1"####),
    (
        r####"return cmsgpack.unpack(string.char(255) .. string.rep("\0", 8))"####,
        r####"true | n-1 | n0 | n0 | n0 | n0 | n0 | n0 | n0 | n0"####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(255) .. string.rep("\255", 8))"####,
        r####"true | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1 | n-1"####,
    ),
    (r####"return cmsgpack.unpack(string.char(207)..string.rep(string.char(255),8))"####, r####"true | n-1"####),
    (r####"return cmsgpack.unpack(string.char(211)..string.rep(string.char(255),8))"####, r####"true | n-1"####),
    (r####"return cmsgpack.unpack(string.char(207,128,0,0,0,0,0,0,0))"####, r####"true | n-9.2233720368547758e+18"####),
    (r####"return cmsgpack.unpack(string.char(129,192,1))"####, r####"false | s"table index is nil""####),
    (
        r####"return cmsgpack.unpack(string.char(129,192))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(129,1,192))"####, r####"true | {}"####),
    (r####"return cmsgpack.unpack(string.char(130,1,192,2,3))"####, r####"true | {n2=n3}"####),
    (
        r####"return cmsgpack.unpack(string.char(129,203,127,248,0,0,0,0,0,0,1))"####,
        r####"false | s"table index is NaN""####,
    ),
    (r####"return cmsgpack.unpack(string.char(129,202,127,192,0,0,1))"####, r####"false | s"table index is NaN""####),
    (r####"return cmsgpack.unpack(string.char(129,145,1,2))"####, r####"true | {{n1=n1}=n2}"####),
    (r####"return cmsgpack.unpack(string.char(129,129,1,2,3))"####, r####"true | {{n1=n2}=n3}"####),
    (
        r####"return cmsgpack.unpack(string.char(146,1))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(146,1,2,3))"####, r####"true | {n1=n1,n2=n2} | n3"####),
    (r####"return cmsgpack.unpack(string.char(220,0,2,1,2))"####, r####"true | {n1=n1,n2=n2}"####),
    (r####"return cmsgpack.unpack(string.char(221,0,0,0,2,1,2))"####, r####"true | {n1=n1,n2=n2}"####),
    (r####"return cmsgpack.unpack(string.char(222,0,1,1,2))"####, r####"true | {n1=n2}"####),
    (r####"return cmsgpack.unpack(string.char(223,0,0,0,1,1,2))"####, r####"true | {n1=n2}"####),
    (r####"return cmsgpack.unpack(string.char(219,0,0,0,3,97,98,99))"####, r####"true | s"abc""####),
    (
        r####"return cmsgpack.unpack(string.char(219,255,255,255,255,97,98,99))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(221,255,255,255,255,1,2))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"return cmsgpack.unpack(string.char(202,0x40,0x49,0x0f,0xdb))"####, r####"true | n3.1415927410125732"####),
    (
        r####"return cmsgpack.unpack(string.char(193,1))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"return cmsgpack.unpack(string.char(1,193))"####,
        r####"false | s"user_script:3: Bad data format in input.""####,
    ),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(1),300))}; return {#t,t[1],t[256],t[300]}"####,
        r####"true | {n1=n300,n2=n1,n3=n1,n4=n1}"####,
    ),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7996))}; return #t"####, r####"true | n7996"####),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7996), 1)}; return #t"####, r####"true | n7996"####),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7996), 7996)}; return #t"####,
        r####"true | n7997"####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7996), 0)}; return #t"####,
        r####"true | n7996"####,
    ),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7997))}; return #t"####, r####"true | n7997"####),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7997), 1)}; return #t"####, r####"true | n7997"####),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7997), 7997)}; return #t"####,
        r####"true | n7998"####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7997), 0)}; return #t"####,
        r####"true | n7997"####,
    ),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7998))}; return #t"####, r####"true | n7998"####),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7998), 1)}; return #t"####, r####"true | n7998"####),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7998), 7998)}; return #t"####,
        r####"true | n7999"####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7998), 0)}; return #t"####,
        r####"true | n7998"####,
    ),
    (r####"local t={cmsgpack.unpack(string.rep(string.char(1),7999))}; return #t"####, r####"true | n7999"####),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(1),7999), 1)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7999), 7999)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (in function mp_unpack_full)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),7999), 0)}; return #t"####,
        r####"true | n7999"####,
    ),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(1),8000))}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(1),8000), 1)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),8000), 8000)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),8000), 0)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(1),9000))}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(1),9000), 1)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),9000), 9000)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),9000), 0)}; return #t"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),8000),7998,1)} return #t"####,
        r####"true | n7999"####,
    ),
    (
        r####"local t={cmsgpack.unpack_limit(string.rep(string.char(1),8000),7999,1)} return #t"####,
        r####"false | s"user_script:3: stack overflow (in function mp_unpack_full)""####,
    ),
    (
        r####"local t={cmsgpack.unpack(string.rep(string.char(192),7999))} return select("#", cmsgpack.unpack(string.rep(string.char(192),7999)))"####,
        r####"true | n7999"####,
    ),
    (r####"local t={}; for i=1,3999 do t[i]=1 end return #cmsgpack.pack(unpack(t))"####, r####"true | n3999"####),
    (r####"local t={}; for i=1,3999 do t[i]={} end return #cmsgpack.pack(unpack(t))"####, r####"true | n3999"####),
    (
        r####"local t={}; for i=1,3999 do t[i]={a={1}} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: stack overflow (in function table_is_an_array)""####,
    ),
    (r####"local t={}; for i=1,4000 do t[i]=1 end return #cmsgpack.pack(unpack(t))"####, r####"true | n4000"####),
    (
        r####"local t={}; for i=1,4000 do t[i]={} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: stack overflow (in function table_is_an_array)""####,
    ),
    (
        r####"local t={}; for i=1,4000 do t[i]={a={1}} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: stack overflow (in function table_is_an_array)""####,
    ),
    (
        r####"local t={}; for i=1,4001 do t[i]=1 end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""####,
    ),
    (
        r####"local t={}; for i=1,4001 do t[i]={} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""####,
    ),
    (
        r####"local t={}; for i=1,4001 do t[i]={a={1}} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""####,
    ),
    (
        r####"local t={}; for i=1,5000 do t[i]=1 end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""####,
    ),
    (
        r####"local t={}; for i=1,5000 do t[i]={} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""####,
    ),
    (
        r####"local t={}; for i=1,5000 do t[i]={a={1}} end return #cmsgpack.pack(unpack(t))"####,
        r####"false | s"user_script:3: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)""####,
    ),
    (
        r####"local s = string.rep(string.char(145), 3998) .. string.char(1) return #cmsgpack.pack(cmsgpack.unpack(s))"####,
        r####"true | n17"####,
    ),
    (
        r####"local s = string.rep(string.char(145), 3999) .. string.char(1) return cmsgpack.unpack(s)"####,
        r####"true | {n1={n1={n1={n1={n1={n1={n1=T}}}}}}}"####,
    ),
    (
        r####"local s = string.rep(string.char(145), 4000) .. string.char(1) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (in function mp_decode_to_lua_array)""####,
    ),
    (
        r####"local s = string.rep(string.char(145), 20000) .. string.char(1) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (in function mp_decode_to_lua_array)""####,
    ),
    (
        r####"local s = string.rep(string.char(129,1), 3999) .. string.char(1) return #cmsgpack.pack(cmsgpack.unpack(s))"####,
        r####"true | n17"####,
    ),
    (
        r####"local s = string.rep(string.char(129,1), 4000) .. string.char(1) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local s = string.rep(string.char(129), 7997) .. string.char(1,1) return #cmsgpack.pack(cmsgpack.unpack(s))"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (
        r####"local s = string.rep(string.char(129), 7998) .. string.char(1,1) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local s = string.rep(string.char(129), 7999) .. string.char(1,1) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local s = string.rep(string.char(129), 9000) .. string.char(1,1) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local s = string.rep(string.char(129), 9000) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)""####,
    ),
    (
        r####"local s = string.rep(string.char(145), 100) return cmsgpack.unpack(s)"####,
        r####"false | s"user_script:3: Missing bytes in input.""####,
    ),
    (r####"local s=cmsgpack.pack("a\000\255",65535,-33); return H(s)"####, r####"true | s"a36100ffcdffffd0df""####),
    (r####"return H(cmsgpack.pack(1,2,3,"abc",{1},{a=1}))"####, r####"true | s"010203a3616263910181a16101""####),
    (r####"return select("#", cmsgpack.unpack(cmsgpack.pack(nil,nil,nil)))"####, r####"true | n3"####),
    (
        r####"return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}"####,
        r####"true | {n1=s"cmsgpack",n2=s"lua-cmsgpack 0.4.0",n3=s"Copyright (C) 2012, Salvatore Sanfilippo",n4=s"MessagePack C implementation for Lua"}"####,
    ),
    (
        r####"local t = {} for i=1,70000 do t[i]=i%7 end local s = cmsgpack.pack(t) local u = cmsgpack.unpack(s) return {#s, #u, u[70000], s:byte(1)}"####,
        r####"true | {n1=n70005,n2=n70000,n3=n0,n4=n221}"####,
    ),
    (
        r####"local t = {} for i=1,70000 do t["k"..i]=i end local s = cmsgpack.pack(t) local u = cmsgpack.unpack(s) local n = 0 for k,v in pairs(u) do assert(t[k]==v) n = n + 1 end return {#s, n, s:byte(1)}"####,
        r####"true | {n1=n697447,n2=n70000,n3=n223}"####,
    ),
    (
        r####"local t = {} local c = t for i=1,20 do c[1] = {} c = c[1] end return H(cmsgpack.pack(t))"####,
        r####"true | s"91919191919191919191919191919191c0""####,
    ),
    (
        r####"local t = {} local c = t for i=1,20 do c.k = {} c = c.k end return H(cmsgpack.pack(t))"####,
        r####"true | s"81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16bc0""####,
    ),
    (
        r####"local k = {} local c = k for i=1,20 do c[{}] = 1 for kk in pairs(c) do c = kk end end return H(cmsgpack.pack(k))"####,
        r####"true | s"81818181818181818181818181818181c001010101010101010101010101010101""####,
    ),
    (r####"return H(cmsgpack.pack(setmetatable({}, {__index=function() return 1 end})))"####, r####"true | s"90""####),
    (
        r####"return H(cmsgpack.pack(setmetatable({1,2}, {__len=function() return 10 end})))"####,
        r####"true | s"920102""####,
    ),
    (
        r####"return cmsgpack.unpack(cmsgpack.pack(setmetatable({1,2}, {__index={3,4,5}})))"####,
        r####"true | {n1=n1,n2=n2}"####,
    ),
    (
        r####"return cmsgpack:unpack()"####,
        r####"false | s"user_script:3: calling 'unpack' on bad self (string expected, got table)""####,
    ),
    (
        r####"return pcall(cmsgpack.pack)"####,
        r####"true | false | s"bad argument #0 to '?' (MessagePack pack needs input.)""####,
    ),
    (
        r####"local f = cmsgpack.unpack_limit return f("x")"####,
        r####"false | s"user_script:3: bad argument #2 to 'f' (number expected, got no value)""####,
    ),
];
