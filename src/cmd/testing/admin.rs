//! Administration (SLOWLOG, LATENCY, MODULE, CLIENT) through the harness: each
//! line's reply as redis-server 7.0 gave it (recorded from redis-server, RESP2).
//! CLIENT NO-TOUCH is 7.2's and not in 7.0 to compare with.

use super::Harness;

#[test]
fn admin_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["SLOWLOG", "LEN"], ":0\r\n"),
        (&["SLOWLOG", "GET", "x"], "-ERR count should be greater than or equal to -1\r\n"),
        (&["SLOWLOG", "RESET"], "+OK\r\n"),
        (&["SLOWLOG", "NOPE"], "-ERR unknown subcommand 'NOPE'. Try SLOWLOG HELP.\r\n"),
        (&["LATENCY", "LATEST"], "*0\r\n"),
        (&["LATENCY", "HISTORY", "command"], "*0\r\n"),
        (&["LATENCY", "RESET"], ":0\r\n"),
        (&["MODULE", "LIST"], "*0\r\n"),
        (&["MODULE", "LOAD", "/nonexistent.so"], "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"),
        (&["MODULE", "UNLOAD", "nope"], "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"),
        (&["CLIENT", "NO-EVICT", "maybe"], "-ERR syntax error\r\n"),
        (&["CLIENT", "KILL", "127.0.0.1:1"], "-ERR No such client\r\n"),
        (&["CLIENT", "UNBLOCK", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["CLIENT", "UNBLOCK", "999999"], ":0\r\n"),
        (&["CLIENT", "PAUSE", "x"], "-ERR timeout is not an integer or out of range\r\n"),
    ]);
}
