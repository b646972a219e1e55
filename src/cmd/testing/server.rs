//! The server family (connection, CONFIG, COMMAND) through the harness: each
//! line's reply as redis-server 7.0 gave it (recorded from redis-server, RESP2).
//! CONFIG GET with a pattern is left out: Redis lists matches in its hash
//! table's order.

use super::Harness;

#[test]
fn server_commands_reply_as_redis() {
    Harness::new().expect(&[
        (&["PING"], "+PONG\r\n"),
        (&["PING", "hello"], "$5\r\nhello\r\n"),
        (&["PING", "a", "b"], "-ERR wrong number of arguments for 'ping' command\r\n"),
        (&["ECHO", "x y"], "$3\r\nx y\r\n"),
        (&["SET", "k", "v"], "+OK\r\n"),
        (&["DBSIZE"], ":1\r\n"),
        (&["SELECT", "1"], "+OK\r\n"),
        (&["DBSIZE"], ":0\r\n"),
        (&["SET", "k1", "v"], "+OK\r\n"),
        (&["SET", "k2", "v"], "+OK\r\n"),
        (&["DBSIZE"], ":2\r\n"),
        (&["SELECT", "0"], "+OK\r\n"),
        (&["GET", "k1"], "$-1\r\n"),
        (&["SELECT", "16"], "-ERR DB index is out of range\r\n"),
        (&["SELECT", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["CONFIG", "GET", "maxmemory-policy"], "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"),
        (&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"], "+OK\r\n"),
        (&["CONFIG", "GET", "maxmemory-policy"], "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n"),
        (&["CONFIG", "SET", "maxmemory-policy", "nope"], "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction\r\n"),
        (&["CONFIG", "GET", "nosuchparam"], "*0\r\n"),
        (&["CONFIG", "SET", "timeout", "-1"], "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive\r\n"),
        (&["CONFIG", "SET", "hz", "x"], "-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer\r\n"),
        (&["CONFIG", "SET", "maxmemory-samples", "0"], "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument must be between 1 and 2147483647 inclusive\r\n"),
        (&["CONFIG", "SET", "activedefrag", "maybe"], "-ERR CONFIG SET failed (possibly related to argument 'activedefrag') - argument must be 'yes' or 'no'\r\n"),
        (&["CONFIG", "SET", "maxmemory", "-1"], "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"),
        (&["CONFIG", "SET", "maxmemory", "1mb"], "+OK\r\n"),
        (&["CONFIG", "GET", "maxmemory"], "*2\r\n$9\r\nmaxmemory\r\n$7\r\n1048576\r\n"),
        (&["CONFIG", "SET", "loglevel", "LOUD"], "-ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: debug, verbose, notice, warning\r\n"),
        (&["CONFIG", "SET", "daemonize", "yes"], "-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config\r\n"),
        (&["CONFIG", "SET", "hash-max-ziplist-entries", "-1"], "-ERR CONFIG SET failed (possibly related to argument 'hash-max-ziplist-entries') - argument must be between 0 and 9223372036854775807 inclusive\r\n"),
        (&["CONFIG", "GET", "hash-max-listpack-entries"], "*2\r\n$25\r\nhash-max-listpack-entries\r\n$3\r\n512\r\n"),
        (&["CONFIG", "SET", "list-max-listpack-size", "-3000000000"], "-ERR CONFIG SET failed (possibly related to argument 'list-max-listpack-size') - argument must be between -2147483648 and 2147483647 inclusive\r\n"),
        (&["CONFIG", "SET", "active-expire-effort", "11"], "-ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive\r\n"),
        (&["CONFIG", "SET", "slowlog-log-slower-than", "-5"], "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive\r\n"),
        (&["CONFIG", "NOPE"], "-ERR unknown subcommand 'NOPE'. Try CONFIG HELP.\r\n"),
        (&["COMMAND", "GETKEYS", "SET", "k", "v"], "*1\r\n$1\r\nk\r\n"),
        (&["COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
        (&["COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
        (&["COMMAND", "GETKEYS", "GET"], "-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
        (&["COMMAND", "GETKEYS", "PING"], "-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
        (&["COMMAND", "GETKEYS", "NOPE", "x"], "-ERR Invalid command specified\r\n"),
        (&["COMMAND", "GETKEYS", "SORT", "s", "BY", "w*", "STORE", "dst"], "*2\r\n$1\r\ns\r\n$3\r\ndst\r\n"),
        (&["COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"], "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n"),
        (&["COMMAND", "INFO", "get", "nope"], "*2\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n$-1\r\n"),
    ]);
}
