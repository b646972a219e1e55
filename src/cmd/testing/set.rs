//! Sets through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn set_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["SADD", "s", "a", "b", "c"], ":3\r\n"),
        (&["SADD", "s", "a"], ":0\r\n"),
        (&["SCARD", "s"], ":3\r\n"),
        (&["SISMEMBER", "s", "b"], ":1\r\n"),
        (&["SMISMEMBER", "s", "a", "z"], "*2\r\n:1\r\n:0\r\n"),
        (&["SREM", "s", "c", "z"], ":1\r\n"),
        (&["SCARD", "s"], ":2\r\n"),
        (&["SADD", "t", "b", "x"], ":2\r\n"),
        (&["SINTER", "s", "t"], "*1\r\n$1\r\nb\r\n"),
        (&["SUNIONSTORE", "u", "s", "t"], ":3\r\n"),
        (&["SCARD", "u"], ":3\r\n"),
        (&["SDIFF", "s", "t"], "*1\r\n$1\r\na\r\n"),
        (&["SINTERCARD", "2", "s", "t"], ":1\r\n"),
        (&["SMOVE", "s", "t", "a"], ":1\r\n"),
        (&["SCARD", "t"], ":3\r\n"),
        (&["SISMEMBER", "t", "a"], ":1\r\n"),
        (&["SPOP", "nope"], "$-1\r\n"),
    ]);
}
