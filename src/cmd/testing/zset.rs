//! Sorted sets through the harness: each line's reply as redis-server
//! 7.0 gave it (recorded from redis-server, RESP2).

use super::Harness;

#[test]
fn zset_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["ZADD", "z", "1", "a", "2", "b", "3", "c"], ":3\r\n"),
        (&["ZSCORE", "z", "b"], "$1\r\n2\r\n"),
        (&["ZRANK", "z", "c"], ":2\r\n"),
        (&["ZREVRANK", "z", "c"], ":0\r\n"),
        (
            &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
            "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n",
        ),
        (&["ZINCRBY", "z", "5", "a"], "$1\r\n6\r\n"),
        (&["ZRANGEBYSCORE", "z", "2", "(6"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        (&["ZCOUNT", "z", "-inf", "+inf"], ":3\r\n"),
        (&["ZADD", "z", "XX", "GT", "CH", "1", "a", "10", "b"], ":1\r\n"),
        (
            &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
            "*6\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\na\r\n$1\r\n6\r\n$1\r\nb\r\n$2\r\n10\r\n",
        ),
        (&["ZREM", "z", "c"], ":1\r\n"),
        (&["ZCARD", "z"], ":2\r\n"),
        (&["ZADD", "y", "1", "b", "2", "q"], ":2\r\n"),
        (&["ZUNIONSTORE", "u", "2", "z", "y", "WEIGHTS", "1", "2"], ":3\r\n"),
        (
            &["ZRANGE", "u", "0", "-1", "WITHSCORES"],
            "*6\r\n$1\r\nq\r\n$1\r\n4\r\n$1\r\na\r\n$1\r\n6\r\n$1\r\nb\r\n$2\r\n12\r\n",
        ),
        (&["ZPOPMIN", "u"], "*2\r\n$1\r\nq\r\n$1\r\n4\r\n"),
        (&["ZRANGEBYLEX", "y", "-", "+"], "*2\r\n$1\r\nb\r\n$1\r\nq\r\n"),
        (&["ZMSCORE", "z", "a", "nope"], "*2\r\n$1\r\n6\r\n$-1\r\n"),
    ]);
}
