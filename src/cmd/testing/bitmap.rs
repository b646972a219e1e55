//! Bitmaps and BITFIELD through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn bitmap_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["SETBIT", "b", "7", "1"], ":0\r\n"),
        (&["GETBIT", "b", "7"], ":1\r\n"),
        (&["GETBIT", "b", "100"], ":0\r\n"),
        (&["BITCOUNT", "b"], ":1\r\n"),
        (&["SETBIT", "b", "15", "1"], ":0\r\n"),
        (&["BITPOS", "b", "1"], ":7\r\n"),
        (&["BITPOS", "b", "1", "1"], ":15\r\n"),
        (&["SET", "x", "a"], "+OK\r\n"),
        (&["BITOP", "AND", "d", "b", "x"], ":2\r\n"),
        (&["GET", "d"], "$2\r\n\u{1}\u{0}\r\n"),
        (
            &["BITFIELD", "bf", "SET", "u8", "0", "200", "GET", "u8", "0", "INCRBY", "u8", "0", "100"],
            "*3\r\n:0\r\n:200\r\n:44\r\n",
        ),
        (&["BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "100"], "*1\r\n:144\r\n"),
        (&["BITFIELD_RO", "bf", "GET", "u4", "0"], "*1\r\n:9\r\n"),
    ]);
}
