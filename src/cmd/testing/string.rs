//! Strings through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn string_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["SET", "k", "v"], "+OK\r\n"),
        (&["GET", "k"], "$1\r\nv\r\n"),
        (&["APPEND", "k", "xy"], ":3\r\n"),
        (&["STRLEN", "k"], ":3\r\n"),
        (&["GETRANGE", "k", "1", "-1"], "$2\r\nxy\r\n"),
        (&["SETRANGE", "k", "5", "z"], ":6\r\n"),
        (&["GET", "k"], "$6\r\nvxy\u{0}\u{0}z\r\n"),
        (&["INCR", "n"], ":1\r\n"),
        (&["INCRBY", "n", "41"], ":42\r\n"),
        (&["DECR", "n"], ":41\r\n"),
        (&["INCRBYFLOAT", "f", "1.5"], "$3\r\n1.5\r\n"),
        (&["INCR", "k"], "-ERR value is not an integer or out of range\r\n"),
        (&["MSET", "a", "1", "b", "2"], "+OK\r\n"),
        (&["MGET", "a", "b", "nope"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n"),
        (&["SETNX", "a", "9"], ":0\r\n"),
        (&["GETDEL", "a"], "$1\r\n1\r\n"),
        (&["GET", "a"], "$-1\r\n"),
        (&["SET", "k", "new", "GET"], "$6\r\nvxy\u{0}\u{0}z\r\n"),
        (&["GETSET", "k", "newer"], "$3\r\nnew\r\n"),
        (&["LCS", "k", "b"], "$0\r\n\r\n"),
    ]);
}
