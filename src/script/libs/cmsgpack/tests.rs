//! Tests of `cmsgpack` as a whole: Redis's recorded replies about the module
//! table and how errors are raised, Redis's smoke test, and round trips.

use super::test_util::{check_rows, eval, new_lua};

#[test]
fn matches_redis_7_0_replies() {
    check_rows(REDIS_ROWS);
}

// The cmsgpack cases of Redis's tests/unit/scripting.tcl.

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

/// `(body, reply)` rows about the library as a whole (the module table, round
/// trips of large tables, function names in error messages), recorded from
/// redis-server 7.0.15 as described at [`check_rows`].
const REDIS_ROWS: &[(&str, &str)] = &[
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
