//! Tests of `cjson.encode`: Redis's recorded replies and edge cases.

use super::super::test_util::{check_rows, eval, new_lua};

#[test]
fn matches_redis_7_0_replies() {
    check_rows(REDIS_ROWS);
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

/// `(body, reply)` rows about `cjson.encode` (values, tables, keys, numbers,
/// argument checks, nesting limits), recorded from redis-server 7.0.15 as
/// described at [`check_rows`].
const REDIS_ROWS: &[(&str, &str)] = &[
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
    (r####"return cjson.encode("\255\128\000")"####, r####"true | s""\ff\80\5cu0000"""####),
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
    (r####"local t = {} for i=1,20000 do t[i] = i end return #cjson.encode(t)"####, r####"true | n108895"####),
    (r####"local t = {} for i=1,20000 do t[i] = {"x"} end return #cjson.encode(t)"####, r####"true | n120001"####),
    (r####"local t = {} for i=1,20000 do t["k"..i] = "v" end return #cjson.encode(t)"####, r####"true | n248895"####),
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
];
