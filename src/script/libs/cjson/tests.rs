//! Tests of `cjson` as a whole: Redis's recorded replies about the module
//! table and how errors are raised, Redis's smoke test, round trips and
//! random input.

use mlua::{Function, Table, Value};

use super::test_util::{check_rows, eval, new_lua};

#[test]
fn matches_redis_7_0_replies() {
    check_rows(REDIS_ROWS);
}

// The cjson cases of Redis's tests/unit/scripting.tcl.

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

/// `(body, reply)` rows about the library as a whole (the module table, the
/// function names and positions in error messages, round trips), recorded
/// from redis-server 7.0.15 as described at [`check_rows`].
const REDIS_ROWS: &[(&str, &str)] = &[
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
        r####"local t = {} for i=1,3000 do t["k"..i] = i end local s = cjson.encode(t) local d = cjson.decode(s) local n = 0 for k,v in pairs(d) do assert(t[k] == v) n = n + 1 end return n"####,
        r####"true | n3000"####,
    ),
    (
        r####"return cjson.encode(cjson.decode('{"a":[1,2,3,{"b":null,"c":"\\u00e9"}]}'))"####,
        r####"true | s"{"a":[1,2,3,{"c":"\c3\a9","b":null}]}""####,
    ),
    (
        r####"return cjson.decode(cjson.encode(string.rep("\1", 40)))"####,
        r####"true | s"\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01""####,
    ),
];
