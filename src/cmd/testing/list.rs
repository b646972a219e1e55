//! Lists through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn list_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["RPUSH", "l", "a", "b", "c"], ":3\r\n"),
        (&["LPUSH", "l", "z"], ":4\r\n"),
        (&["LRANGE", "l", "0", "-1"], "*4\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["LLEN", "l"], ":4\r\n"),
        (&["LINDEX", "l", "1"], "$1\r\na\r\n"),
        (&["LSET", "l", "0", "y"], "+OK\r\n"),
        (&["LINSERT", "l", "BEFORE", "b", "q"], ":5\r\n"),
        (&["LRANGE", "l", "0", "-1"], "*5\r\n$1\r\ny\r\n$1\r\na\r\n$1\r\nq\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["LPOS", "l", "b"], ":3\r\n"),
        (&["LREM", "l", "1", "q"], ":1\r\n"),
        (&["LTRIM", "l", "0", "1"], "+OK\r\n"),
        (&["LRANGE", "l", "0", "-1"], "*2\r\n$1\r\ny\r\n$1\r\na\r\n"),
        (&["RPOP", "l"], "$1\r\na\r\n"),
        (&["LPOP", "l", "5"], "*1\r\n$1\r\ny\r\n"),
        (&["LPOP", "l"], "$-1\r\n"),
        (&["LMOVE", "nope", "l", "LEFT", "RIGHT"], "$-1\r\n"),
        (&["RPUSH", "m", "1", "2"], ":2\r\n"),
        (&["LMPOP", "2", "x", "m", "RIGHT", "COUNT", "5"], "*2\r\n$1\r\nm\r\n*2\r\n$1\r\n2\r\n$1\r\n1\r\n"),
    ]);
}
