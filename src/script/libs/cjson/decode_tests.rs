//! Tests of `cjson.decode`: Redis's recorded replies and edge cases.

use super::super::test_util::{check_rows, eval, new_lua};

#[test]
fn matches_redis_7_0_replies() {
    check_rows(REDIS_ROWS);
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

/// `(body, reply)` rows about `cjson.decode` (values, number syntax, syntax
/// errors, escapes, argument checks, nesting limits), recorded from
/// redis-server 7.0.15 as described at [`check_rows`].
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
    (r####"return cjson.decode("\"\255\128\001\"")"####, r####"true | s"\ff\80\01""####),
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
];
