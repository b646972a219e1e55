//! Connection and server commands, through raw RESP where the reply shape matters.

use redis::{cmd, Value};

use crate::common::Server;

#[test]
fn ping_echo_select_time() {
    let s = Server::start();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["PING"]), "+PONG\r\n");
    assert_eq!(r.cmd(&["PING", "hi"]), "$2\r\nhi\r\n");
    assert_eq!(r.cmd(&["ping", "a", "b"]), "-ERR wrong number of arguments for 'ping' command\r\n");
    assert_eq!(r.cmd(&["ECHO", "x y"]), "$3\r\nx y\r\n");
    assert_eq!(r.cmd(&["SELECT", "0"]), "+OK\r\n");
    assert_eq!(r.cmd(&["SELECT", "15"]), "+OK\r\n");
    assert_eq!(r.cmd(&["SELECT", "16"]), "-ERR DB index is out of range\r\n");
    assert_eq!(r.cmd(&["SELECT", "x"]), "-ERR value is not an integer or out of range\r\n");
    let t = r.cmd(&["TIME"]);
    assert!(t.starts_with("*2\r\n$10\r\n"), "{t}");
    assert!(r.cmd(&["LASTSAVE"]).starts_with(':'));
    assert_eq!(r.cmd(&["SAVE"]), "+OK\r\n");
    assert_eq!(r.cmd(&["BGSAVE"]), "+Background saving started\r\n");
    assert_eq!(r.cmd(&["DEBUG", "SLEEP", "0"]), "+OK\r\n");
    assert_eq!(r.cmd(&["QUIT"]), "+OK\r\n");
    assert!(r.is_closed(), "QUIT closes the connection");
}

#[test]
fn hello_switches_to_resp3() {
    let s = Server::start();
    let mut r = s.raw();
    let h2 = r.cmd(&["HELLO"]);
    assert!(h2.starts_with("*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n"), "{h2}");
    let h3 = r.cmd(&["HELLO", "3", "SETNAME", "me"]);
    assert!(h3.starts_with("%7\r\n$6\r\nserver\r\n"), "{h3}");
    assert!(h3.contains("$5\r\nproto\r\n:3\r\n"));
    assert_eq!(r.cmd(&["GET", "missing"]), "_\r\n", "RESP3 null");
    assert_eq!(r.cmd(&["CLIENT", "GETNAME"]), "$2\r\nme\r\n");
    assert_eq!(r.cmd(&["HELLO", "4"]), "-NOPROTO unsupported protocol version\r\n");
    assert_eq!(r.cmd(&["HELLO", "x"]), "-ERR Protocol version is not an integer or out of range\r\n");
    assert_eq!(r.cmd(&["HELLO", "3", "FOO"]), "-ERR Syntax error in HELLO option 'FOO'\r\n");
    let cfg = r.cmd(&["CONFIG", "GET", "maxmemory"]);
    assert_eq!(cfg, "%1\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n", "CONFIG GET is a map in RESP3");
    assert!(r.cmd(&["INFO", "server"]).starts_with('='), "INFO is verbatim in RESP3");
    assert!(r.cmd(&["HELLO", "2"]).starts_with("*14\r\n"));
    assert_eq!(r.cmd(&["GET", "missing"]), "$-1\r\n");
}

#[test]
fn auth_with_requirepass() {
    let s = Server::start_with(&["--cores", "1", "--requirepass", "s3cret"]);
    let mut r = s.raw();
    assert_eq!(r.cmd(&["GET", "k"]), "-NOAUTH Authentication required.\r\n");
    assert_eq!(r.cmd(&["AUTH", "wrong"]), "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    assert!(r.cmd(&["HELLO", "3"]).starts_with("-NOAUTH HELLO must be called with the client already authenticated"));
    assert_eq!(r.cmd(&["AUTH", "s3cret"]), "+OK\r\n");
    assert_eq!(r.cmd(&["SET", "k", "v"]), "+OK\r\n");
    let mut r2 = s.raw();
    assert!(r2.cmd(&["HELLO", "3", "AUTH", "default", "s3cret"]).starts_with('%'));
    assert_eq!(r2.cmd(&["GET", "k"]), "$1\r\nv\r\n");
    let mut r3 = s.raw();
    assert_eq!(r3.cmd(&["AUTH", "default", "s3cret"]), "+OK\r\n");
    let open = Server::start();
    assert_eq!(
        open.raw().cmd(&["AUTH", "x"]),
        "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"
    );
}

#[test]
fn client_subcommands() {
    let s = Server::start();
    let mut r = s.raw();
    let id = r.cmd(&["CLIENT", "ID"]);
    assert!(id.starts_with(':'));
    assert_eq!(r.cmd(&["CLIENT", "GETNAME"]), "$-1\r\n");
    assert_eq!(r.cmd(&["CLIENT", "SETNAME", "worker-1"]), "+OK\r\n");
    assert_eq!(
        r.cmd(&["CLIENT", "SETNAME", "bad name"]),
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
    );
    assert_eq!(r.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "mylib"]), "+OK\r\n");
    assert_eq!(r.cmd(&["CLIENT", "SETINFO", "LIB-VER", "1.2"]), "+OK\r\n");
    assert_eq!(r.cmd(&["CLIENT", "SETINFO", "FOO", "x"]), "-ERR Unrecognized option 'FOO'\r\n");
    let mut other = s.raw();
    other.cmd(&["PING"]);
    let list = r.cmd(&["CLIENT", "LIST"]);
    assert_eq!(list.matches("id=").count(), 2, "{list}");
    assert!(list.contains("name=worker-1"), "{list}");
    assert!(list.contains("lib-name=mylib lib-ver=1.2"), "{list}");
    let info = r.cmd(&["CLIENT", "INFO"]);
    assert!(info.contains(&format!("id={}", id.trim_start_matches(':').trim())), "{info}");
    // The command running now, as Redis shows it (not the one before).
    assert!(info.contains("cmd=client|info "), "{info}");
    assert_eq!(r.cmd(&["CLIENT", "FOO"]), "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n");
    assert_eq!(r.cmd(&["CLIENT"]), "-ERR wrong number of arguments for 'client' command\r\n");
}

#[test]
fn config_get_set() {
    let s = Server::start();
    let mut c = s.client();
    let v: Vec<String> = cmd("CONFIG").arg("GET").arg("save").query(&mut c).unwrap();
    assert_eq!(v, vec!["save".to_string(), String::new()]);
    let v: Vec<String> = cmd("CONFIG").arg("GET").arg("appendonly").query(&mut c).unwrap();
    assert_eq!(v, vec!["appendonly".to_string(), "yes".to_string()]);
    let v: Vec<String> = cmd("CONFIG").arg("GET").arg("maxmemory*").query(&mut c).unwrap();
    assert!(v.contains(&"maxmemory-policy".to_string()) && v.contains(&"noeviction".to_string()), "{v:?}");
    let _: () = cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("allkeys-lfu").query(&mut c).unwrap();
    let v: Vec<String> = cmd("CONFIG").arg("GET").arg("maxmemory-policy").query(&mut c).unwrap();
    assert_eq!(v[1], "allkeys-lfu");
    let mut r = s.raw();
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "nope", "1"]),
        "-ERR Unknown option or number of arguments for CONFIG SET - 'nope'\r\n"
    );
    assert_eq!(r.cmd(&["CONFIG", "RESETSTAT"]), "+OK\r\n");
    assert_eq!(r.cmd(&["CONFIG", "SET", "requirepass", "pw"]), "+OK\r\n");
    assert_eq!(r.cmd(&["PING"]), "+PONG\r\n", "existing connections stay authenticated");
    assert_eq!(s.raw().cmd(&["PING"]), "-NOAUTH Authentication required.\r\n");
}

#[test]
fn command_family() {
    let s = Server::start();
    let mut c = s.client();
    let count: i64 = cmd("COMMAND").arg("COUNT").query(&mut c).unwrap();
    assert!(count >= 60, "{count}");
    let all: Vec<Value> = cmd("COMMAND").query(&mut c).unwrap();
    assert_eq!(all.len() as i64, count);
    let info: Vec<Value> = cmd("COMMAND").arg("INFO").arg("get").arg("mset").arg("nosuch").query(&mut c).unwrap();
    let Value::Array(get) = &info[0] else { panic!("{:?}", info[0]) };
    assert_eq!(get.len(), 10, "Redis 7 COMMAND INFO entries have 10 fields");
    assert_eq!(get[0], Value::BulkString(b"get".to_vec()));
    assert_eq!(get[1], Value::Int(2));
    assert!(format!("{:?}", get[2]).contains("readonly"), "{:?}", get[2]);
    assert_eq!((&get[3], &get[4], &get[5]), (&Value::Int(1), &Value::Int(1), &Value::Int(1)));
    let Value::Array(mset) = &info[1] else { panic!() };
    assert_eq!(
        (&mset[1], &mset[3], &mset[4], &mset[5]),
        (&Value::Int(-3), &Value::Int(1), &Value::Int(-1), &Value::Int(2))
    );
    assert!(matches!(info[2], Value::Nil), "unknown commands are nil");
    let keys: Vec<String> =
        cmd("COMMAND").arg("GETKEYS").arg("MSET").arg("a").arg("1").arg("b").arg("2").query(&mut c).unwrap();
    assert_eq!(keys, vec!["a".to_string(), "b".to_string()]);
    let mut r = s.raw();
    // Redis 7.0: COMMAND GETKEYS takes at least the command and one argument.
    assert_eq!(
        r.cmd(&["COMMAND", "GETKEYS", "PING"]),
        "-ERR wrong number of arguments for 'command|getkeys' command\r\n"
    );
    assert_eq!(r.cmd(&["COMMAND", "GETKEYS", "PING", "x"]), "-ERR The command has no key arguments\r\n");
    assert_eq!(r.cmd(&["COMMAND", "GETKEYS", "NOPE", "x"]), "-ERR Invalid command specified\r\n");
    assert_eq!(
        r.cmd(&["COMMAND", "GETKEYS", "GET", "a", "b"]),
        "-ERR Invalid number of arguments specified for command\r\n"
    );
    let docs = r.cmd(&["COMMAND", "DOCS", "set"]);
    assert!(docs.contains("summary") && docs.contains("string"), "{docs}");
}

#[test]
fn info_sections() {
    let s = Server::start();
    let mut c = s.client();
    let _: () = cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    let info: String = cmd("INFO").query(&mut c).unwrap();
    for section in
        ["# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication", "# CPU", "# Keyspace"]
    {
        assert!(info.contains(section), "missing {section}");
    }
    for field in [
        "redis_version:",
        "connected_clients:1",
        "used_memory:",
        "total_commands_processed:",
        "role:master",
        "used_cpu_sys:",
        "db0:keys=1,expires=0",
    ] {
        assert!(info.contains(field), "missing {field}");
    }
    let only: String = cmd("INFO").arg("clients").query(&mut c).unwrap();
    assert!(only.starts_with("# Clients\r\n") && !only.contains("# Server"));
}

#[test]
fn reads_on_any_core_see_every_acknowledged_write() {
    // Connections spread over both cores (SO_REUSEPORT); each core caches point
    // reads. After a write is acknowledged on one connection, a read on any other
    // must return it: the cache may never serve a value older than an ack.
    let s = Server::start_with(&["--cores", "2"]);
    let mut conns: Vec<_> = (0..8).map(|_| s.raw()).collect();
    for i in 0..1500 {
        let w = i % conns.len();
        let key = format!("k{}", i % 5);
        // warm every connection's core cache with the current value
        for c in conns.iter_mut() {
            c.cmd(&["GET", &key]);
        }
        assert_eq!(conns[w].cmd(&["SET", &key, &i.to_string()]), "+OK\r\n");
        for (j, c) in conns.iter_mut().enumerate() {
            let want = format!("${}\r\n{i}\r\n", i.to_string().len());
            assert_eq!(c.cmd(&["GET", &key]), want, "connection {j} read a stale value after write {i}");
        }
    }
    // Deletes and flushes invalidate too.
    assert_eq!(conns[0].cmd(&["DEL", "k1"]), ":1\r\n");
    assert_eq!(conns[1].cmd(&["GET", "k1"]), "$-1\r\n");
    assert_eq!(conns[2].cmd(&["FLUSHALL"]), "+OK\r\n");
    for c in conns.iter_mut() {
        assert_eq!(c.cmd(&["GET", "k2"]), "$-1\r\n");
    }
}

/// HGET, HEXISTS, HSTRLEN, SISMEMBER and ZSCORE after every acknowledged write,
/// on whichever connection: every connection (both cores, with the read caches
/// warmed before the write and filled by apply as it writes) answers as
/// redis-server does after the same write. (Written for a per-core element
/// cache, withdrawn since; it guards any cache these reads go through.) The writes reach elements every way apply has: a field
/// overwritten in place, deletes, a key deleted and made again (a new version),
/// RENAME back and forth (the same element keys under another owner), COPY,
/// SMOVE, expiry, a transaction, a script, FLUSHALL.
#[test]
fn element_reads_on_any_core_see_every_acknowledged_write() {
    use crate::common::{fuzz_seed, Oracle, XorShift};
    let seed = fuzz_seed("element_reads_on_any_core_see_every_acknowledged_write");
    let mut rng = XorShift::new(seed);
    let s = Server::start_with(&["--cores", "2"]);
    let oracle = Oracle::start();
    let mut redis = oracle.raw();
    let mut conns: Vec<_> = (0..6).map(|_| s.raw()).collect();
    let keys = ["h1", "h2", "s1", "s2", "z1", "z2"];
    let fields = ["f1", "f2"];
    let reads = |c: &mut crate::common::Raw| -> Vec<String> {
        let mut out = Vec::new();
        for k in keys {
            for f in fields {
                out.push(c.cmd(&["HGET", k, f]));
                out.push(c.cmd(&["HEXISTS", k, f]));
                out.push(c.cmd(&["HSTRLEN", k, f]));
                out.push(c.cmd(&["SISMEMBER", k, f]));
                out.push(c.cmd(&["ZSCORE", k, f]));
            }
        }
        out
    };
    for step in 0..250 {
        let n = rng.next().to_string();
        let v = rng.range(0, 20).to_string();
        let (h, h2) = if rng.chance(50) { ("h1", "h2") } else { ("h2", "h1") };
        let (st, st2) = if rng.chance(50) { ("s1", "s2") } else { ("s2", "s1") };
        let (z, z2) = if rng.chance(50) { ("z1", "z2") } else { ("z2", "z1") };
        let f = rng.pick(&fields);
        let write: Vec<&str> = match rng.below(16) {
            0 | 1 => vec!["HSET", h, f, &n],
            2 => vec!["HDEL", h, f],
            3 => vec!["HINCRBY", h, "f2", &v],
            4 => vec!["DEL", h],
            5 => vec!["RENAME", h, h2],
            6 => vec!["COPY", h, h2, "REPLACE"],
            7 => vec!["SADD", st, f],
            8 => vec!["SREM", st, f],
            9 => vec!["SMOVE", st, st2, f],
            10 => vec!["ZADD", z, &v, f],
            11 => vec!["ZINCRBY", z, &v, f],
            12 => vec!["ZREM", z, f],
            13 => vec!["RENAME", z, z2],
            14 => vec!["PEXPIREAT", rng.pick(&keys), "1"],
            _ => match rng.below(3) {
                0 => vec![
                    "EVAL",
                    "redis.call('hset', KEYS[1], ARGV[1], ARGV[2]); return redis.call('sadd', KEYS[2], ARGV[1])",
                    "2",
                    h,
                    st,
                    f,
                    &n,
                ],
                1 => vec!["FLUSHALL"],
                _ => vec!["MULTI"],
            },
        };
        let w = rng.below(conns.len());
        for c in conns.iter_mut() {
            reads(c);
        }
        let (got, want) = if write == ["MULTI"] {
            let tx = [vec!["MULTI"], vec!["HSET", h, f, &n], vec!["ZADD", z, &v, f], vec!["EXEC"]];
            let mut g = String::new();
            let mut e = String::new();
            for c in &tx {
                g += &conns[w].cmd(c);
                e += &redis.cmd(c);
            }
            (g, e)
        } else {
            (conns[w].cmd(&write), redis.cmd(&write))
        };
        assert_eq!(got, want, "seed {seed} step {step}: {write:?}");
        let expected = reads(&mut redis);
        for (j, c) in conns.iter_mut().enumerate() {
            assert_eq!(reads(c), expected, "seed {seed} step {step}: connection {j} after {write:?}");
        }
    }
}

/// After RENAME the same element keys belong to another key, whose epoch counts
/// other writes: an element read under the old owner must not be served to the
/// new one when the two epochs happen to hold the same count. Here both reach
/// 2: h1 by two writes before its HGET, h2 by the RENAME and then the HSET that
/// changes the field. (It failed with the withdrawn element cache keyed without
/// its owner; it guards any cache of element reads.)
#[test]
fn an_element_cached_under_a_renamed_keys_old_name_is_not_served() {
    let s = Server::start_with(&["--cores", "1"]);
    let mut c = s.raw();
    assert_eq!(c.cmd(&["HSET", "h1", "f", "old"]), ":1\r\n");
    assert_eq!(c.cmd(&["HSET", "h1", "g", "x"]), ":1\r\n");
    assert_eq!(c.cmd(&["HGET", "h1", "f"]), "$3\r\nold\r\n");
    assert_eq!(c.cmd(&["RENAME", "h1", "h2"]), "+OK\r\n");
    assert_eq!(c.cmd(&["HSET", "h2", "f", "new"]), ":0\r\n");
    assert_eq!(c.cmd(&["HGET", "h2", "f"]), "$3\r\nnew\r\n");
}

#[test]
fn maxclients_is_enforced() {
    let s = Server::start();
    let mut admin = s.raw();
    assert_eq!(admin.cmd(&["CONFIG", "SET", "maxclients", "3"]), "+OK\r\n");
    let mut b = s.raw();
    let mut c = s.raw();
    assert_eq!(b.cmd(&["PING"]), "+PONG\r\n");
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n");
    let mut over = s.raw();
    assert_eq!(over.read_reply(), b"-ERR max number of clients reached\r\n");
    assert!(over.is_closed());
    assert!(admin.cmd(&["INFO", "stats"]).contains("rejected_connections:1"));
    drop(b);
    // A slot frees up once a client leaves.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut again = s.raw();
        if again.cmd(&["PING"]) == "+PONG\r\n" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no slot freed after a client left");
    }
}

/// `make run` passes a relative data directory (`--dir ./data`): the server
/// starts on it, writes, and `CONFIG GET dir` shows the absolute path, as
/// redis-server does. (glommio's opens of the segment log's directory failed
/// on a relative path with EBADF, so the server exited at start.)
#[test]
fn a_relative_data_directory_works() {
    let tmp = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_neokv-server"))
        .current_dir(tmp.path())
        .args(["--dir", "./data", "--cores", "1", "--bind", "127.0.0.1", "--port", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut con = loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited at start with a relative --dir: {status}");
        }
        if let Ok(c) = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection() {
            break c;
        }
        assert!(std::time::Instant::now() < deadline, "the server did not listen within 30 s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let _: () = cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    let v: String = cmd("GET").arg("k").query(&mut con).unwrap();
    assert_eq!(v, "v");
    let dir: Vec<String> = cmd("CONFIG").arg("GET").arg("dir").query(&mut con).unwrap();
    let want = tmp.path().canonicalize().unwrap().join("data");
    assert_eq!(std::path::Path::new(&dir[1]).canonicalize().unwrap(), want, "CONFIG GET dir: {dir:?}");
    assert!(std::path::Path::new(&dir[1]).is_absolute(), "CONFIG GET dir: {dir:?}");
    let _ = child.kill();
    let _ = child.wait();
}
