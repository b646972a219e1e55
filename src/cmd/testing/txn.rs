//! Transactions through the harness: MULTI's queueing as a connection does it
//! (`txn::queue` first, the handler when it does not queue), each reply as
//! redis-server 7.0 gave it (recorded from redis-server, RESP2). EXEC itself
//! needs a connection to carry out its plan: `tests/it/` covers it.

use super::Harness;

#[test]
fn multi_queues_and_discards_as_redis() {
    let mut h = Harness::new();
    for (line, want) in [
        (&["SET", "k", "before"][..], "+OK\r\n"),
        (&["MULTI"], "+OK\r\n"),
        (&["MULTI"], "-ERR MULTI calls can not be nested\r\n"),
        (&["SET", "k", "v"], "+QUEUED\r\n"),
        (&["INCR", "k"], "+QUEUED\r\n"),
        (&["WATCH", "k"], "-ERR WATCH inside MULTI is not allowed\r\n"),
        (&["DISCARD"], "+OK\r\n"),
        (&["GET", "k"], "$6\r\nbefore\r\n"),
        (&["DISCARD"], "-ERR DISCARD without MULTI\r\n"),
        (&["UNWATCH"], "+OK\r\n"),
    ] {
        assert_eq!(h.send(line), want, "{line:?}");
    }
}
