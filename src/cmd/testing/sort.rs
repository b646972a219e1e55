//! SORT through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn sort_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["RPUSH", "l", "3", "1", "2"], ":3\r\n"),
        (&["SORT", "l"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
        (&["SORT", "l", "DESC", "LIMIT", "0", "2"], "*2\r\n$1\r\n3\r\n$1\r\n2\r\n"),
        (&["RPUSH", "w", "b", "a", "c"], ":3\r\n"),
        (&["SORT", "w", "ALPHA"], "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["SORT", "l", "STORE", "d"], ":3\r\n"),
        (&["LRANGE", "d", "0", "-1"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
        (&["SET", "w_1", "3"], "+OK\r\n"),
        (&["SET", "w_2", "2"], "+OK\r\n"),
        (&["SET", "w_3", "1"], "+OK\r\n"),
        (&["SORT", "l", "BY", "w_*"], "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n"),
        (&["SORT_RO", "l", "DESC"], "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n"),
    ]);
}
