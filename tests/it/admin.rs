//! Connection management and self-observation through the real binary, next
//! to redis-server where Redis's replies are exact: INFO commandstats /
//! errorstats / latencystats, SLOWLOG, LATENCY, CLIENT REPLY / KILL / PAUSE /
//! UNBLOCK / NO-EVICT, RESET, MONITOR and SHUTDOWN.

use std::time::{Duration, Instant};

use crate::common::{encode_cmd, Oracle, Raw, Server};

/// Run the same commands on both servers; the raw replies of each.
fn both(s: &Server, o: &Oracle, cmds: &[&[&str]]) -> (Vec<String>, Vec<String>) {
    let run = |port: u16| {
        let mut r = Raw::connect(port);
        cmds.iter().map(|c| r.cmd(c)).collect::<Vec<_>>()
    };
    (run(s.port), run(o.port))
}

/// INFO <section>'s lines with the fields that are timings blanked.
fn info_lines(r: &mut Raw, section: &str) -> Vec<String> {
    let reply = r.cmd(&["INFO", section]);
    reply
        .split("\r\n")
        .filter(|l| l.contains(':') && !l.starts_with('$'))
        .map(|l| {
            l.split(',')
                .map(|kv| {
                    if kv.starts_with("usec") {
                        kv.split('=').next().unwrap().to_string() + "=_"
                    } else {
                        kv.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

#[test]
fn commandstats_and_errorstats_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let script: &[&[&str]] = &[
        &["CONFIG", "RESETSTAT"],
        &["SET", "k", "v"],
        &["GET", "k"],
        &["GET", "k"],
        &["SET", "k"],
        &["NOSUCH", "x"],
        &["LPUSH", "k", "a"],
        &["MULTI"],
        &["SET", "a"],
        &["EXEC"],
        &["INCR", "k"],
        &["CLIENT", "ID"],
        &["EVAL", "return redis.call('nosuch')", "0"],
        // A call's error is counted once: as the call's when the script passes
        // it on (raised or returned), besides the script's own errors. Both the
        // run inside apply (INCR writes) and the one on the snapshot (GET).
        &["SET", "s", "abc"],
        &["RPUSH", "l", "a"],
        &["EVAL", "return redis.call('incr', KEYS[1])", "1", "s"],
        &["EVAL", "return redis.pcall('incr', KEYS[1])", "1", "s"],
        &["EVAL", "redis.pcall('incr', KEYS[1]) return 1", "1", "s"],
        &["EVAL", "return redis.call('get', KEYS[1])", "1", "l"],
        &["EVAL_RO", "local e = redis.pcall('get', KEYS[1]) return e", "1", "l"],
        &["EVAL", "return redis.error_reply('MYERR x')", "0"],
        &["EVAL", "error('boom')", "0"],
        &["EVAL_RO", "return redis.call('set', KEYS[1], 1)", "1", "s"],
        &["EVAL", "return redis.pcall('get')", "0"],
        &["EVAL", "return redis.pcall('subscribe', 'c')", "0"],
    ];
    let (got, want) = both(&s, &o, script);
    // NeoKV's EVAL error names its own script position like Redis; compare codes.
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.chars().next(), w.chars().next(), "{g} vs {w}");
    }
    for section in ["commandstats", "errorstats"] {
        let mine = info_lines(&mut s.raw(), section);
        let theirs = info_lines(&mut o.raw(), section);
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        assert_eq!(sorted(mine), sorted(theirs), "INFO {section}");
    }
    let total = |r: &mut Raw| {
        r.cmd(&["INFO", "stats"]).lines().find(|l| l.starts_with("total_error_replies:")).unwrap().to_string()
    };
    assert_eq!(total(&mut s.raw()), total(&mut o.raw()));
    // Latency percentiles: one line per command run, Redis's field format.
    let lat = s.raw().cmd(&["INFO", "latencystats"]);
    let get = lat.lines().find(|l| l.starts_with("latency_percentiles_usec_get:")).expect(&lat);
    let fields: Vec<&str> = get.split_once(':').unwrap().1.split(',').map(|f| f.split('=').next().unwrap()).collect();
    assert_eq!(fields, ["p50", "p99", "p99.9"]);
    assert!(!lat.contains("latency_percentiles_usec_nosuch"));
}

#[test]
fn slowlog_records_commands_as_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let big = "x".repeat(200);
    let many: Vec<String> = (0..40).map(|i| format!("a{i}")).collect();
    let mut del = vec!["DEL"];
    del.extend(many.iter().map(|s| s.as_str()));
    let cmds: &[&[&str]] = &[
        &["CONFIG", "SET", "slowlog-log-slower-than", "0"],
        &["SLOWLOG", "RESET"],
        &["SET", "k", &big],
        &del,
        &["SLOWLOG", "GET", "-2"],
        &["SLOWLOG", "GET", "x"],
        &["SLOWLOG", "HELP"],
        &["LATENCY", "HELP"],
    ];
    let (got, want) = both(&s, &o, cmds);
    assert_eq!(got[4..], want[4..]);
    for port in [s.port, o.port] {
        let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap().get_connection().unwrap();
        type Entry = (i64, i64, i64, Vec<Vec<u8>>, String, String);
        let entries: Vec<Entry> = redis::cmd("SLOWLOG").arg("GET").arg(-1).query(&mut con).unwrap();
        // Newest first: the DEL (cut to 32 arguments), then the SET (value cut to 128 bytes).
        let find = |name: &[u8]| entries.iter().position(|e| e.3[0] == name).unwrap();
        let (del, set) = (find(b"DEL"), find(b"SET"));
        assert!(del < set, "newest first");
        let del_args = &entries[del].3;
        assert_eq!(del_args.len(), 32, "port {port}");
        assert_eq!(del_args[31], b"... (10 more arguments)");
        let set_args = &entries[set].3;
        assert_eq!(set_args[2], format!("{}... (72 more bytes)", "x".repeat(128)).into_bytes(), "port {port}");
        assert!(entries.windows(2).all(|w| w[0].0 > w[1].0), "ids grow");
        let entries = [entries[0].clone(), entries[del].clone()];
        assert!(entries[1].4.starts_with("127.0.0.1:"));
    }
    let mut r = s.raw();
    r.cmd(&["CONFIG", "SET", "slowlog-max-len", "2"]);
    for _ in 0..5 {
        r.cmd(&["PING"]);
    }
    assert_eq!(r.cmd(&["SLOWLOG", "LEN"]), ":2\r\n");
    r.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    r.cmd(&["SLOWLOG", "RESET"]);
    r.cmd(&["PING"]);
    assert_eq!(r.cmd(&["SLOWLOG", "LEN"]), ":0\r\n", "a negative threshold logs nothing");
}

#[test]
fn latency_monitor_records_slow_commands() {
    let s = Server::start();
    let o = Oracle::start();
    let (got, want) = both(
        &s,
        &o,
        &[&["LATENCY", "DOCTOR"], &["LATENCY", "LATEST"], &["LATENCY", "HISTORY", "command"], &["LATENCY", "RESET"]],
    );
    assert_eq!(got, want);
    let mut r = s.raw();
    r.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "5"]);
    r.cmd(&["DEBUG", "SLEEP", "0.02"]);
    let latest = r.cmd(&["LATENCY", "LATEST"]);
    assert!(latest.starts_with("*1\r\n*4\r\n$7\r\ncommand\r\n:"), "{latest}");
    assert!(r.cmd(&["LATENCY", "HISTORY", "command"]).starts_with("*1\r\n*2\r\n:"));
    assert!(r.cmd(&["LATENCY", "DOCTOR"]).contains("1. command: 1 latency spikes"));
    assert_eq!(r.cmd(&["LATENCY", "RESET"]), ":1\r\n");
    assert_eq!(r.cmd(&["LATENCY", "LATEST"]), "*0\r\n");
}

#[test]
fn client_reply_off_skip_on_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let mut pipeline = Vec::new();
    for c in [
        &["SET", "a", "1"][..],
        &["CLIENT", "REPLY", "SKIP"],
        &["INCR", "a"],
        &["INCR", "a"],
        &["CLIENT", "REPLY", "OFF"],
        &["INCR", "a"],
        &["NOSUCH"],
        &["CLIENT", "REPLY", "SKIP"],
        &["CLIENT", "REPLY", "ON"],
        &["GET", "a"],
        &["CLIENT", "REPLY", "MAYBE"],
    ] {
        let a: Vec<&[u8]> = c.iter().map(|s| s.as_bytes()).collect();
        pipeline.extend(encode_cmd(&a));
    }
    let run = |port: u16| {
        let mut r = Raw::connect(port);
        r.send(&pipeline);
        (0..5).map(|_| String::from_utf8(r.read_reply()).unwrap()).collect::<Vec<_>>()
    };
    let want = run(o.port);
    assert_eq!(want, ["+OK\r\n", ":3\r\n", "+OK\r\n", "$1\r\n4\r\n", "-ERR syntax error\r\n"]);
    assert_eq!(run(s.port), want);
}

/// CLIENT REPLY ON right after SKIP is answered (it clears the skip), and
/// Pub/Sub confirmations and messages arrive under REPLY OFF and SKIP, in RESP2
/// and RESP3, as redis-server 7.0 sends them: the whole byte stream is Redis's.
#[test]
fn client_reply_on_after_skip_and_pushes_while_off_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let run = |port: u16, resp3: bool| {
        let mut r = Raw::connect(port);
        let mut got = Vec::new();
        if resp3 {
            r.cmd(&["HELLO", "3"]);
        }
        // (RESP2 refuses CLIENT REPLY while subscribed: OFF is sent between.)
        let first: &[&[&str]] = &[
            &["CLIENT", "REPLY", "SKIP"],
            &["CLIENT", "REPLY", "ON"],
            &["PING"],
            &["CLIENT", "REPLY", "SKIP"],
            &["SUBSCRIBE", "ch0"],
            &["UNSUBSCRIBE", "ch0"],
            &["CLIENT", "REPLY", "OFF"],
            &["SUBSCRIBE", "ch1", "ch2"],
            &["PING"],
        ];
        for c in first {
            let a: Vec<&[u8]> = c.iter().map(|x| x.as_bytes()).collect();
            r.send(&encode_cmd(&a));
        }
        // OK, PONG, four confirmations; PING's reply does not come.
        for _ in 0..6 {
            got.extend(r.read_reply());
        }
        let mut p = Raw::connect(port);
        assert_eq!(p.cmd(&["PUBLISH", "ch2", "hello"]), ":1\r\n");
        got.extend(r.read_reply());
        for c in [&["UNSUBSCRIBE", "ch1", "ch2"][..], &["CLIENT", "REPLY", "ON"], &["PING"]] {
            let a: Vec<&[u8]> = c.iter().map(|x| x.as_bytes()).collect();
            r.send(&encode_cmd(&a));
        }
        // Two confirmations, OK, PONG.
        for _ in 0..4 {
            got.extend(r.read_reply());
        }
        String::from_utf8(got).unwrap()
    };
    for resp3 in [false, true] {
        let want = run(o.port, resp3);
        assert!(want.starts_with("+OK\r\n+PONG\r\n"), "{want:?}");
        assert_eq!(run(s.port, resp3), want, "RESP3: {resp3}");
    }
}

#[test]
fn client_kill_filters_and_errors_match_redis() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let errors: &[&[&str]] = &[
        &["CLIENT", "KILL", "1.2.3.4:5"],
        &["CLIENT", "KILL", "ID", "0"],
        &["CLIENT", "KILL", "ID", "x"],
        &["CLIENT", "KILL", "TYPE", "odd"],
        &["CLIENT", "KILL", "SKIPME", "maybe"],
        &["CLIENT", "KILL", "BOGUS", "1"],
        &["CLIENT", "KILL", "ID"],
        &["CLIENT", "KILL", "ID", "999999"],
        &["CLIENT", "KILL", "USER", "nobody"],
        &["CLIENT", "KILL"],
        &["CLIENT", "PAUSE", "x"],
        &["CLIENT", "PAUSE", "-1"],
        &["CLIENT", "PAUSE", "10", "SOME"],
        &["CLIENT", "UNBLOCK", "x"],
        &["CLIENT", "UNBLOCK", "1", "LATER"],
        &["CLIENT", "UNBLOCK", "999999"],
        &["CLIENT", "REPLY", "MAYBE"],
        &["CLIENT", "NO-EVICT", "maybe"],
        &["CLIENT", "NO-EVICT", "on"],
        &["CLIENT", "UNPAUSE"],
    ];
    let (got, want) = both(&s, &o, errors);
    assert_eq!(got, want);

    // Kill another connection by ID and by ADDR; TYPE pubsub picks subscribers.
    {
        let port = s.port;
        let mut me = Raw::connect(port);
        let mut victim = Raw::connect(port);
        let id = victim.cmd(&["CLIENT", "ID"]);
        let id = id.trim_start_matches(':').trim().to_string();
        assert_eq!(me.cmd(&["CLIENT", "KILL", "ID", &id]), ":1\r\n");
        assert!(victim.is_closed());
        let mut victim = Raw::connect(port);
        let info = victim.cmd(&["CLIENT", "INFO"]);
        let addr = info.split(' ').find_map(|f| f.strip_prefix("addr=")).unwrap().to_string();
        assert_eq!(me.cmd(&["CLIENT", "KILL", &addr]), "+OK\r\n");
        assert!(victim.is_closed());
        let mut sub = Raw::connect(port);
        sub.cmd(&["SUBSCRIBE", "ch"]);
        let plain = Raw::connect(port);
        assert_eq!(me.cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]), ":1\r\n");
        assert!(sub.is_closed());
        drop(plain);
        // SKIPME yes (the default) spares the caller; SKIPME no does not, after its reply.
        let my_id = me.cmd(&["CLIENT", "ID"]).trim_start_matches(':').trim().to_string();
        assert_eq!(me.cmd(&["CLIENT", "KILL", "ID", &my_id]), ":0\r\n");
        assert_eq!(me.cmd(&["CLIENT", "KILL", "ID", &my_id, "SKIPME", "no"]), ":1\r\n");
        assert!(me.is_closed());
    }
}

#[test]
fn client_pause_holds_writes_or_everything_until_it_ends() {
    let s = Server::start_with(&["--cores", "2"]);
    let mut admin = s.raw();
    let mut c = s.raw();
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]), "+OK\r\n");
    let t = Instant::now();
    assert_eq!(c.cmd(&["GET", "k"]), "$-1\r\n");
    assert!(t.elapsed() < Duration::from_millis(200), "reads run during a WRITE pause");
    assert_eq!(c.cmd(&["SET", "k", "v"]), "+OK\r\n");
    assert!(t.elapsed() >= Duration::from_millis(350), "a write waited for the pause: {:?}", t.elapsed());
    // ALL holds reads too, until the pause ends.
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "300", "ALL"]), "+OK\r\n");
    let t = Instant::now();
    assert_eq!(c.cmd(&["GET", "k"]), "$1\r\nv\r\n");
    assert!(t.elapsed() >= Duration::from_millis(250), "a read waited for an ALL pause: {:?}", t.elapsed());
    // UNPAUSE (not a write) ends a WRITE pause early.
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), "+OK\r\n");
    let t = Instant::now();
    c.send_cmd(&[b"INCR", b"n"]);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(admin.cmd(&["CLIENT", "UNPAUSE"]), "+OK\r\n");
    assert_eq!(c.read_reply(), b":1\r\n");
    assert!(t.elapsed() >= Duration::from_millis(200) && t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

/// Under CLIENT PAUSE WRITE a transaction of reads and admin commands runs
/// at once (EXEC itself is no write), a held write counts in INFO's
/// `blocked_clients` (as Redis counts its postponed clients) and shows `b` in
/// CLIENT LIST, and is released by UNPAUSE: each step as redis-server.
#[test]
fn a_write_pause_lets_read_transactions_through_and_counts_the_held() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let blocked_count = |port: u16| {
        let info = Raw::connect(port).cmd(&["INFO", "clients"]);
        let at = info.find("blocked_clients:").unwrap() + "blocked_clients:".len();
        info[at..].split("\r\n").next().unwrap().to_string()
    };
    let run = |port: u16| -> Vec<String> {
        let mut admin = Raw::connect(port);
        let mut c = Raw::connect(port);
        let mut got = vec![admin.cmd(&["SET", "foo", "bar"])];
        got.push(admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]));
        let t = Instant::now();
        for l in [&["MULTI"][..], &["PING"], &["GET", "foo"], &["CLIENT", "ID"], &["EXEC"]] {
            let r = c.cmd(l);
            got.push(if l[0] == "EXEC" { r.split(":").next().unwrap().to_string() } else { r });
        }
        assert!(t.elapsed() < Duration::from_secs(2), "a read-only transaction waited: {:?}", t.elapsed());
        got.push(blocked_count(port));
        let mut w = Raw::connect(port);
        let id = w.cmd(&["CLIENT", "ID"]).trim_start_matches(':').trim_end().to_string();
        w.send(&encode_cmd(&[b"SET", b"foo", b"baz"]));
        let deadline = Instant::now() + Duration::from_secs(10);
        while blocked_count(port) != "1" {
            assert!(Instant::now() < deadline, "the held SET never counted as blocked");
            std::thread::sleep(Duration::from_millis(5));
        }
        let line = admin.cmd(&["CLIENT", "LIST", "ID", &id]);
        got.extend(line.split(' ').filter(|f| f.starts_with("flags=") || f.starts_with("cmd=")).map(String::from));
        got.push(admin.cmd(&["GET", "foo"]));
        got.push(admin.cmd(&["CLIENT", "UNPAUSE"]));
        got.push(String::from_utf8_lossy(&w.read_reply()).into_owned());
        got.push(blocked_count(port));
        got.push(admin.cmd(&["GET", "foo"]));
        got
    };
    let want = run(o.port);
    assert_eq!(run(s.port), want);
}

#[test]
fn client_unblock_ends_a_blocking_pop() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    for (port, mine) in [(s.port, true), (o.port, false)] {
        let mut blocked = Raw::connect(port);
        let id = blocked.cmd(&["CLIENT", "ID"]).trim_start_matches(':').trim().to_string();
        let mut admin = Raw::connect(port);
        for (reason, want) in [("TIMEOUT", "*-1\r\n"), ("ERROR", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")]
        {
            blocked.send_cmd(&[b"BLPOP", b"nolist", b"0"]);
            let deadline = Instant::now() + Duration::from_secs(5);
            while !admin.cmd(&["INFO", "clients"]).contains("blocked_clients:1") {
                assert!(Instant::now() < deadline, "never blocked (mine: {mine})");
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id, reason]), ":1\r\n");
            assert_eq!(String::from_utf8(blocked.read_reply()).unwrap(), want, "mine: {mine}");
        }
        assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id]), ":0\r\n", "not blocked any more");
        assert!(admin.cmd(&["INFO", "errorstats"]).contains("errorstat_UNBLOCKED:count=1"), "mine: {mine}");
    }
}

#[test]
fn reset_returns_a_connection_to_its_first_state() {
    let s = Server::start();
    let o = Oracle::start();
    let cmds: &[&[&str]] = &[
        &["CLIENT", "SETNAME", "before"],
        &["HELLO", "3"],
        &["MULTI"],
        &["SET", "x", "1"],
        &["RESET"],
        &["CLIENT", "GETNAME"],
        &["EXEC"],
        &["SUBSCRIBE", "ch"],
        &["RESET"],
        &["GET", "x"],
        &["PING"],
    ];
    let (got, want) = both(&s, &o, cmds);
    // HELLO's server map differs (server name, version, id): compare the rest.
    assert_eq!(got[2..], want[2..]);
    assert_eq!(got[4], "+RESET\r\n");
    let mut r = s.raw();
    r.cmd(&["CONFIG", "SET", "requirepass", "pw"]);
    assert_eq!(r.cmd(&["RESET"]), "+RESET\r\n");
    assert_eq!(r.cmd(&["GET", "x"]), "-NOAUTH Authentication required.\r\n", "RESET forgets AUTH");
}

/// A monitor's next line, without its timestamp and client address (a script's
/// call keeps its `lua]`).
fn monitor_line(m: &mut Raw) -> String {
    let line = String::from_utf8(m.read_reply()).unwrap().trim_end().to_string();
    let (_, rest) = line.split_once(" [0 ").expect(&line);
    let (who, cmd) = rest.split_once("] ").expect(&line);
    if who == "lua" {
        format!("lua] {cmd}")
    } else {
        cmd.to_string()
    }
}

#[test]
fn monitor_shows_commands_like_redis() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let mut seen = Vec::new();
    for port in [s.port, o.port] {
        let mut m = Raw::connect(port);
        assert_eq!(m.cmd(&["MONITOR"]), "+OK\r\n");
        let mut c = Raw::connect(port);
        c.cmd(&["SET", "k", "a \"quoted\"\n\u{1}value"]);
        c.cmd(&["GET", "k"]);
        c.cmd(&["CONFIG", "GET", "maxclients"]);
        c.cmd(&["MULTI"]);
        c.cmd(&["INCR", "n"]);
        c.cmd(&["EXEC"]);
        c.cmd(&["NOSUCH"]);
        c.cmd(&["AUTH", "secret"]);
        c.cmd(&["PING"]);
        // A script's calls are shown as `[0 lua]` before the script's own line:
        // one that only reads (tried on the connection's core), one that writes
        // (stopped at its write and run in apply: shown once), a refused call.
        c.cmd(&["EVAL", "return redis.call('get', KEYS[1])", "1", "k"]);
        c.cmd(&[
            "EVAL",
            "redis.call('get', KEYS[1]) redis.call('set', KEYS[1], 'x') return redis.call('incr', 'n')",
            "1",
            "k",
        ]);
        c.cmd(&["EVAL", "return redis.pcall('nosuch')", "0"]);
        c.cmd(&["EVAL_RO", "return redis.pcall('del', KEYS[1])", "1", "k"]);
        c.cmd(&["ECHO", "end"]);
        let mut lines = Vec::new();
        while lines.last().is_none_or(|l| l != r#""ECHO" "end""#) {
            lines.push(monitor_line(&mut m));
        }
        seen.push(lines);
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0][0], r#""SET" "k" "a \"quoted\"\n\x01value""#);
    assert!(seen[0].iter().any(|l| l == r#"lua] "set" "k" "x""#), "{:?}", seen[0]);
}

#[test]
fn shutdown_checks_its_arguments_then_stops_cleanly() {
    let mut s = Server::start();
    let o = Oracle::start();
    let cmds: &[&[&str]] = &[
        &["SHUTDOWN", "SOMETIMES"],
        &["SHUTDOWN", "ABORT", "NOW"],
        &["SHUTDOWN", "SAVE", "NOSAVE"],
        &["SHUTDOWN", "ABORT"],
    ];
    let (got, want) = both(&s, &o, cmds);
    assert_eq!(got, want);
    let (got, want) = both(&s, &o, &[&["MULTI"], &["SHUTDOWN"], &["DISCARD"]]);
    assert_eq!(got, want, "SHUTDOWN inside MULTI");
    let mut r = s.raw();
    assert_eq!(r.cmd(&["SET", "kept", "yes"]), "+OK\r\n");
    r.send_cmd(&[b"SHUTDOWN", b"NOSAVE"]);
    assert!(r.is_closed(), "SHUTDOWN answers nothing and closes");
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.is_running() {
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    let dir = s.dir.clone();
    let again = Server::start_in(&dir, &["--cores", "1"]);
    assert_eq!(again.raw().cmd(&["GET", "kept"]), "$3\r\nyes\r\n");
}

/// Every HELP reply starts with Redis's usage line and ends with its closing
/// entry, as redis-server's (one shared writer of the closing entry).
#[test]
fn help_replies_open_and_close_as_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let cmds: &[&[&str]] = &[
        &["CLIENT", "HELP"],
        &["CONFIG", "HELP"],
        &["COMMAND", "HELP"],
        &["SCRIPT", "HELP"],
        &["FUNCTION", "HELP"],
        &["PUBSUB", "HELP"],
        &["MEMORY", "HELP"],
        &["OBJECT", "HELP"],
        &["SLOWLOG", "HELP"],
        &["LATENCY", "HELP"],
    ];
    let (got, want) = both(&s, &o, cmds);
    let ends = |r: &str| {
        let lines: Vec<&str> = r.split("\r\n").filter(|l| l.starts_with('+')).collect();
        (lines[0].to_string(), lines[lines.len() - 2..].join("|"))
    };
    for ((cmd, g), w) in cmds.iter().zip(&got).zip(&want) {
        assert!(g.starts_with('*') && w.starts_with('*'), "{cmd:?}: {g}");
        assert_eq!(ends(g), ends(w), "{cmd:?}");
    }
}

/// MODULE: a server without modules lists none; loading and unloading are
/// refused as redis-server 7.0 refuses them by default; HELP, arity and
/// unknown subcommands as Redis answers them.
#[test]
fn module_commands_answer_as_a_redis_without_modules() {
    let s = Server::start();
    let o = Oracle::start();
    let lines: &[&[&str]] = &[
        &["MODULE", "LIST"],
        &["MODULE", "LOAD", "/nonexistent/m.so"],
        &["MODULE", "LOADEX", "/nonexistent/m.so", "ARGS", "x"],
        &["MODULE", "UNLOAD", "m"],
        &["MODULE", "HELP"],
        &["MODULE", "LIST", "x"],
        &["MODULE", "LOAD"],
        &["MODULE", "NOPE"],
        &["MODULE"],
    ];
    let (n, r) = both(&s, &o, lines);
    assert_eq!(n, r);
}

/// CLIENT INFO / CLIENT LIST show the command running now (`cmd=client|info`,
/// not the one before) and its query buffer (`qbuf`), and a client waiting in
/// BLPOP as `flags=b cmd=blpop` (clients poll for that before CLIENT UNBLOCK),
/// field for field as redis-server.
#[test]
fn client_list_shows_the_running_command_and_blocked_clients() {
    let s = Server::start();
    let o = Oracle::start();
    let field = |line: &str, name: &str| -> String {
        let at = format!(" {name}=");
        let start = line.find(&at).unwrap_or_else(|| panic!("no {name} in {line:?}")) + at.len();
        line[start..].split([' ', '\n', '\r']).next().unwrap().to_string()
    };
    let fields = ["flags", "cmd", "qbuf", "db", "sub", "multi"];
    let look = |port: u16| {
        let mut r = Raw::connect(port);
        r.cmd(&["SET", "a", "1"]);
        let info = r.cmd(&["CLIENT", "INFO"]);
        let mut got: Vec<String> = fields.iter().map(|f| field(&info, f)).collect();
        let mut b = Raw::connect(port);
        let id = b.cmd(&["CLIENT", "ID"]);
        let id = id.trim_start_matches(':').trim_end();
        b.send(&encode_cmd(&[b"BLPOP", b"nothing", b"0"]));
        let deadline = Instant::now() + Duration::from_secs(10);
        let line = loop {
            let list = r.cmd(&["CLIENT", "LIST", "ID", id]);
            if list.contains("cmd=blpop") || Instant::now() > deadline {
                break list;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        got.extend(fields.iter().map(|f| field(&line, f)));
        assert_eq!(r.cmd(&["CLIENT", "UNBLOCK", id]), ":1\r\n");
        assert_eq!(b.read_reply(), b"*-1\r\n");
        let list = r.cmd(&["CLIENT", "LIST", "ID", id]);
        got.extend(fields.iter().map(|f| field(&list, f)));
        got
    };
    let want = look(o.port);
    assert_eq!(&want[..3], ["N", "client|info", "26"], "Redis's own CLIENT INFO");
    assert_eq!(&want[6..9], ["b", "blpop", "0"], "Redis's blocked client");
    assert_eq!(look(s.port), want);
}
