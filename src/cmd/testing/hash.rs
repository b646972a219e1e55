//! Hashes through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn hash_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["HSET", "h", "a", "1", "b", "2"], ":2\r\n"),
        (&["HGET", "h", "a"], "$1\r\n1\r\n"),
        (&["HMGET", "h", "a", "b", "c"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n"),
        (&["HLEN", "h"], ":2\r\n"),
        (&["HEXISTS", "h", "b"], ":1\r\n"),
        (&["HINCRBY", "h", "a", "10"], ":11\r\n"),
        (&["HINCRBYFLOAT", "h", "f", "0.5"], "$3\r\n0.5\r\n"),
        (&["HSETNX", "h", "a", "9"], ":0\r\n"),
        (&["HDEL", "h", "b", "zz"], ":1\r\n"),
        (&["HKEYS", "h"], "*2\r\n$1\r\na\r\n$1\r\nf\r\n"),
        (&["HSTRLEN", "h", "a"], ":2\r\n"),
        (&["HGETALL", "h"], "*4\r\n$1\r\na\r\n$2\r\n11\r\n$1\r\nf\r\n$3\r\n0.5\r\n"),
        (&["HSET", "s", "x"], "-ERR wrong number of arguments for 'hset' command\r\n"),
        (&["SET", "str", "v"], "+OK\r\n"),
        (&["HGET", "str", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ]);
}
