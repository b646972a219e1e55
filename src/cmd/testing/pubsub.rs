//! Pub/Sub without subscribers through the harness: each line's reply as
//! redis-server 7.0 gave it (recorded from redis-server, RESP2). Subscribers
//! need a connection: `tests/it/` covers them.

use super::Harness;

#[test]
fn pubsub_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["PUBLISH", "ch", "msg"], ":0\r\n"),
        (&["SPUBLISH", "ch", "msg"], ":0\r\n"),
        (&["PUBSUB", "CHANNELS"], "*0\r\n"),
        (&["PUBSUB", "CHANNELS", "c*"], "*0\r\n"),
        (&["PUBSUB", "NUMSUB", "a", "b"], "*4\r\n$1\r\na\r\n:0\r\n$1\r\nb\r\n:0\r\n"),
        (&["PUBSUB", "NUMSUB"], "*0\r\n"),
        (&["PUBSUB", "NUMPAT"], ":0\r\n"),
        (&["PUBSUB", "SHARDCHANNELS"], "*0\r\n"),
        (&["PUBSUB", "SHARDNUMSUB", "a"], "*2\r\n$1\r\na\r\n:0\r\n"),
        (&["PUBSUB", "NOPE"], "-ERR unknown subcommand 'NOPE'. Try PUBSUB HELP.\r\n"),
    ]);
}
