//! Introspection (COMMAND GETKEYSANDFLAGS, OBJECT, MEMORY, ROLE) through the
//! harness: each line's reply as redis-server 7.0 gave it (recorded from
//! redis-server, RESP2).

use super::Harness;

#[test]
fn introspection_replies_as_redis() {
    Harness::new().expect(&[
        (
            &["COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "RIGHT"],
            "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n$1\r\nb\r\n*2\r\n+RW\r\n+insert\r\n",
        ),
        (&["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v"], "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n"),
        (
            &["COMMAND", "GETKEYSANDFLAGS", "GETEX", "k", "PERSIST"],
            "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n",
        ),
        (
            &["COMMAND", "GETKEYSANDFLAGS", "DEL", "a", "b"],
            "*2\r\n*2\r\n$1\r\na\r\n*2\r\n+RM\r\n+delete\r\n*2\r\n$1\r\nb\r\n*2\r\n+RM\r\n+delete\r\n",
        ),
        (&["RPUSH", "l", "a", "b", "c"], ":3\r\n"),
        (&["OBJECT", "ENCODING", "l"], "$9\r\nquicklist\r\n"),
        (&["OBJECT", "ENCODING", "nope"], "$-1\r\n"),
        (&["OBJECT", "REFCOUNT", "l"], ":1\r\n"),
        (&["OBJECT", "NOPE"], "-ERR unknown subcommand 'NOPE'. Try OBJECT HELP.\r\n"),
        (&["SET", "n", "12345"], "+OK\r\n"),
        (&["OBJECT", "ENCODING", "n"], "$3\r\nint\r\n"),
        (&["SET", "s", "a string that is longer than forty-four bytes, so it is raw"], "+OK\r\n"),
        (&["OBJECT", "ENCODING", "s"], "$3\r\nraw\r\n"),
        (&["ROLE"], "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"),
        (&["MEMORY", "USAGE", "nope"], "$-1\r\n"),
        (&["MEMORY", "NOPE"], "-ERR unknown subcommand 'NOPE'. Try MEMORY HELP.\r\n"),
        (&["LOLWUT", "VERSION", "x"], "-ERR value is not an integer or out of range\r\n"),
    ]);
}
