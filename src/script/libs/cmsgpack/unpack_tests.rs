//! Tests of `cmsgpack.unpack`, `unpack_one` and `unpack_limit`: Redis's
//! recorded replies and random input.

use super::super::test_util::{check_rows, eval, new_lua};

#[test]
fn matches_redis_7_0_replies() {
    check_rows(REDIS_ROWS);
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

/// `(body, reply)` rows about `cmsgpack.unpack`, `unpack_one` and
/// `unpack_limit` (argument checks, every type byte, truncated input, table
/// keys, result counts and nesting against the stack limits), recorded from
/// redis-server 7.0.15 as described at [`check_rows`].
const REDIS_ROWS: &[(&str, &str)] = &[
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
];
