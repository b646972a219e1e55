//! HyperLogLog through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn hll_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["PFADD", "h", "a", "b", "c"], ":1\r\n"),
        (&["PFADD", "h", "a"], ":0\r\n"),
        (&["PFCOUNT", "h"], ":3\r\n"),
        (&["PFADD", "g", "c", "d"], ":1\r\n"),
        (&["PFMERGE", "m", "h", "g"], "+OK\r\n"),
        (&["PFCOUNT", "m"], ":4\r\n"),
        (&["PFCOUNT", "h", "g"], ":4\r\n"),
        (&["SET", "s", "v"], "+OK\r\n"),
        (&["PFADD", "s", "x"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ]);
}
