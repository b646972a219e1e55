//! Tests of `cjson`'s configuration functions: Redis's recorded replies
//! (argument checks, return values, effects on encoding and decoding) and
//! the independence of the tables `cjson.new()` returns.

use super::super::test_util::{check_rows, eval, new_lua};

#[test]
fn matches_redis_7_0_replies() {
    check_rows(REDIS_ROWS);
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

/// `(body, reply)` rows about the configuration functions (argument checks,
/// return values, effects on `cjson.encode` and `cjson.decode`), recorded
/// from redis-server 7.0.15 as described at [`check_rows`].
const REDIS_ROWS: &[(&str, &str)] = &[
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
];
