//! Keys (generic commands) through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn keyspace_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["SET", "k", "v"], "+OK\r\n"),
        (&["EXISTS", "k", "k", "nope"], ":2\r\n"),
        (&["TYPE", "k"], "+string\r\n"),
        (&["TTL", "k"], ":-1\r\n"),
        (&["EXPIRE", "k", "100"], ":1\r\n"),
        (&["PERSIST", "k"], ":1\r\n"),
        (&["TTL", "k"], ":-1\r\n"),
        (&["RENAME", "k", "k2"], "+OK\r\n"),
        (&["EXISTS", "k"], ":0\r\n"),
        (&["RENAMENX", "k2", "k2"], ":0\r\n"),
        (&["COPY", "k2", "k3"], ":1\r\n"),
        (&["GET", "k3"], "$1\r\nv\r\n"),
        (&["DEL", "k2", "k3", "nope"], ":2\r\n"),
        (&["UNLINK", "k"], ":0\r\n"),
        (&["TYPE", "nope"], "+none\r\n"),
        (&["RENAME", "nope", "x"], "-ERR no such key\r\n"),
    ]);
}
