//! Streams and consumer groups through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn stream_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["XADD", "s", "1-1", "f", "v"], "$3\r\n1-1\r\n"),
        (&["XADD", "s", "2-0", "g", "w"], "$3\r\n2-0\r\n"),
        (&["XLEN", "s"], ":2\r\n"),
        (
            &["XRANGE", "s", "-", "+"],
            "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\ng\r\n$1\r\nw\r\n",
        ),
        (&["XREVRANGE", "s", "+", "-", "COUNT", "1"], "*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\ng\r\n$1\r\nw\r\n"),
        (
            &["XADD", "s", "1-0", "x", "y"],
            "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
        ),
        (&["XDEL", "s", "1-1"], ":1\r\n"),
        (&["XLEN", "s"], ":1\r\n"),
        (&["XTRIM", "s", "MAXLEN", "0"], ":1\r\n"),
        (&["XLEN", "s"], ":0\r\n"),
        (&["XGROUP", "CREATE", "s", "g", "0"], "+OK\r\n"),
        (&["XADD", "s", "3-0", "a", "b"], "$3\r\n3-0\r\n"),
        (
            &["XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", "s", ">"],
            "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n",
        ),
        (&["XPENDING", "s", "g"], "*4\r\n:1\r\n$3\r\n3-0\r\n$3\r\n3-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n"),
        (&["XACK", "s", "g", "3-0"], ":1\r\n"),
        (&["XPENDING", "s", "g"], "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    ]);
}
