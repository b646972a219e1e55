//! The cluster family on a standalone server through the harness: each line's
//! reply as redis-server 7.0 gave it (recorded from redis-server, RESP2).
//! Cluster mode needs nodes: `tests/it/cluster.rs` covers it.

use super::Harness;

#[test]
fn cluster_commands_on_a_standalone_server_reply_as_redis() {
    Harness::new().expect(&[
        (&["CLUSTER", "KEYSLOT", "foo"], "-ERR This instance has cluster support disabled\r\n"),
        (&["CLUSTER", "INFO"], "-ERR This instance has cluster support disabled\r\n"),
        (&["CLUSTER", "NODES"], "-ERR This instance has cluster support disabled\r\n"),
        (&["CLUSTER", "SLOTS"], "-ERR This instance has cluster support disabled\r\n"),
        (&["CLUSTER", "NOPE"], "-ERR unknown subcommand 'NOPE'. Try CLUSTER HELP.\r\n"),
        (&["CLUSTER", "KEYSLOT"], "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"),
        (&["READONLY"], "-ERR This instance has cluster support disabled\r\n"),
        (&["READWRITE"], "-ERR This instance has cluster support disabled\r\n"),
        (&["ASKING"], "-ERR This instance has cluster support disabled\r\n"),
    ]);
}
