//! Lua scripts and functions through the real binary: conversions, errors and
//! their positions, the sandbox, EVALSHA and the script cache, read-only
//! scripts, busy scripts answered with BUSY and stopped by SCRIPT KILL, memory
//! and recursion limits, FUNCTION LOAD/FCALL/LIST/DUMP/RESTORE across restarts,
//! and the Neton client spec's lock.

use std::time::{Duration, Instant};

use crate::common::{same_lines, Oracle, Raw, Server};

fn eval(r: &mut Raw, script: &str, keys: &[&str], args: &[&str]) -> String {
    let n = keys.len().to_string();
    let mut c = vec!["EVAL", script, &n];
    c.extend(keys);
    c.extend(args);
    r.cmd(&c)
}

#[test]
fn conversions_between_redis_and_lua() {
    let s = Server::start();
    let mut r = s.raw();
    let cases: &[(&str, &str)] = &[
        ("return 1", ":1\r\n"),
        ("return 100.5", ":100\r\n"),
        ("return -3.9", ":-3\r\n"),
        ("return 'hello'", "$5\r\nhello\r\n"),
        ("return true", ":1\r\n"),
        ("return false", "$-1\r\n"),
        ("return nil", "$-1\r\n"),
        ("return {1,2,3,'ciao',{1,2}}", "*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n"),
        ("return {1,2,nil,4}", "*2\r\n:1\r\n:2\r\n"),
        ("return {ok='fine'}", "+fine\r\n"),
        ("return {err='MY_CODE boom'}", "-MY_CODE boom\r\n"),
        ("return redis.error_reply('MY_ERR custom msg')", "-MY_ERR custom msg\r\n"),
        ("return redis.error_reply('oops')", "-ERR oops\r\n"),
        ("return redis.status_reply('MY_OK')", "+MY_OK\r\n"),
        ("return {double=3.141}", "$5\r\n3.141\r\n"),
        ("return redis.call('get', 'missing')", "$-1\r\n"),
        ("return type(redis.call('get', 'missing'))", "$7\r\nboolean\r\n"),
        ("return redis.call('ping')", "+PONG\r\n"),
        ("return redis.sha1hex('')", "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
        ("return redis.call('incrbyfloat', 'f', 0.1)", "$19\r\n0.10000000000000001\r\n"),
        ("return redis.call('set', 'n', 9007199254740991) and redis.call('get', 'n')", "$16\r\n9007199254740991\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(eval(&mut r, script, &[], &[]), *want, "{script}");
    }
    assert_eq!(
        eval(&mut r, "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", &["k"], &["a", "b"]),
        "*4\r\n$1\r\nk\r\n$1\r\na\r\n:1\r\n:2\r\n"
    );
    // RESP3 inside the script: maps, sets, doubles, nulls as nil.
    r.cmd(&["HSET", "h", "f", "v"]);
    let s3 = "redis.setresp(3); local m = redis.call('hgetall', 'h'); return {type(m.map), m.map.f, type(redis.call('get','nope'))}";
    assert_eq!(eval(&mut r, s3, &[], &[]), "*3\r\n$5\r\ntable\r\n$1\r\nv\r\n$3\r\nnil\r\n");
    // A RESP3 client gets RESP3 shapes back; a RESP2 one their RESP2 forms.
    assert_eq!(eval(&mut r, "redis.setresp(3); return true", &[], &[]), ":1\r\n");
    r.cmd(&["HELLO", "3"]);
    assert_eq!(eval(&mut r, "redis.setresp(3); return true", &[], &[]), "#t\r\n");
    assert_eq!(eval(&mut r, "return {double=1.5}", &[], &[]), ",1.5\r\n");
    assert_eq!(eval(&mut r, "return {map={a=1}}", &[], &[]), "%1\r\n$1\r\na\r\n:1\r\n");
    assert_eq!(eval(&mut r, "return nil", &[], &[]), "_\r\n");
}

#[test]
fn script_errors_match_redis() {
    let s = Server::start();
    let mut r = s.raw();
    let sha = |body: &str| sha1_hex(body);
    let body = "return redis.call('nosuchcommand')";
    assert_eq!(
        eval(&mut r, body, &[], &[]),
        format!("-ERR Unknown Redis command called from script script: {}, on @user_script:1.\r\n", sha(body))
    );
    let body = "redis.call('set', 'x', 'y')\nreturn redis.call('lpush', 'x', 'z')";
    assert_eq!(
        eval(&mut r, body, &[], &[]),
        format!(
            "-WRONGTYPE Operation against a key holding the wrong kind of value script: {}, on @user_script:2.\r\n",
            sha(body)
        )
    );
    assert_eq!(r.cmd(&["GET", "x"]), "$1\r\ny\r\n", "no rollback: the write before the error stays");
    let body = "return redis.call('get')";
    assert!(eval(&mut r, body, &[], &[]).starts_with("-ERR Wrong number of args calling Redis command from script"));
    let body = "return redis.call('blpop', 'l', 0)";
    assert!(eval(&mut r, body, &[], &[]).starts_with("-ERR This Redis command is not allowed from script"));
    let body = "return redis.call('set', 'a', {})";
    assert!(
        eval(&mut r, body, &[], &[]).starts_with("-ERR Lua redis lib command arguments must be strings or integers")
    );
    assert_eq!(
        eval(&mut r, "return redis.pcall('get')", &[], &[]),
        "-ERR Wrong number of args calling Redis command from script\r\n"
    );
    let body = "local a\nreturn a + 1";
    assert_eq!(
        eval(&mut r, body, &[], &[]),
        format!(
            "-ERR user_script:2: attempt to perform arithmetic on local 'a' (a nil value) script: {}, on @user_script:2.\r\n",
            sha(body)
        )
    );
    assert_eq!(
        eval(&mut r, "return 'hello", &[], &[]),
        "-ERR Error compiling script (new function): user_script:1: unfinished string near '<eof>'\r\n"
    );
    assert_eq!(r.cmd(&["EVAL", "return 1", "2", "a"]), "-ERR Number of keys can't be greater than number of args\r\n");
    assert_eq!(r.cmd(&["EVAL", "return 1", "-1"]), "-ERR Number of keys can't be negative\r\n");
    assert_eq!(r.cmd(&["EVAL", "return 1", "x"]), "-ERR value is not an integer or out of range\r\n");
    assert_eq!(r.cmd(&["EVALSHA", "nope", "0"]), "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    assert_eq!(
        r.cmd(&["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"]),
        "-NOSCRIPT No matching script. Please use EVAL.\r\n"
    );
    // Shebangs.
    assert_eq!(
        eval(&mut r, "#!lua flags=bogus\nreturn 1", &[], &[]),
        "-ERR Unexpected flag in script shebang: bogus\r\n"
    );
    assert_eq!(eval(&mut r, "#!python\nreturn 1", &[], &[]), "-ERR Unexpected engine in script shebang: #!python\r\n");
    assert_eq!(eval(&mut r, "#!lua foo=bar\nreturn 1", &[], &[]), "-ERR Unknown lua shebang option: foo=bar\r\n");
    let body = "#!lua flags=no-writes\nreturn redis.call('set', 'k', 'v')";
    assert!(eval(&mut r, body, &[], &[]).starts_with("-ERR Write commands are not allowed from read-only scripts."));
    assert_eq!(
        r.cmd(&["EVAL_RO", "#!lua\nreturn 1", "0"]),
        "-ERR Can not execute a script with write flag using *_ro command.\r\n"
    );
    assert!(r
        .cmd(&["EVAL_RO", "return redis.call('del', 'x')", "0"])
        .starts_with("-ERR Write commands are not allowed from read-only scripts."));
    assert_eq!(r.cmd(&["EVAL_RO", "return redis.call('get', 'x')", "0"]), "$1\r\ny\r\n");
}

#[test]
fn the_sandbox_protects_globals() {
    let s = Server::start();
    let mut r = s.raw();
    for body in [
        "a = 10",
        "redis = function() return 1 end",
        "_G = {}",
        "setmetatable(_G, {})",
        "redis.call = nil",
        "local g = getmetatable(_G); g.__index = {}",
        "cjson.encode = nil",
        "bit.band = nil",
        "string.upper = nil",
    ] {
        let got = eval(&mut r, body, &[], &[]);
        assert!(got.contains("Attempt to modify a readonly table"), "{body}: {got}");
    }
    for (body, name) in [
        ("return print", "print"),
        ("return dofile", "dofile"),
        ("return os", "os"),
        ("return io", "io"),
        ("return require", "require"),
        ("return nosuch", "nosuch"),
    ] {
        let got = eval(&mut r, body, &[], &[]);
        assert!(
            got.starts_with(&format!(
                "-ERR user_script:1: Script attempted to access nonexistent global variable '{name}'"
            )),
            "{body}: {got}"
        );
    }
    // Locals and loadstring'd code work, but cannot escape the protection either.
    assert_eq!(eval(&mut r, "local t = {} t.x = 1 return t.x", &[], &[]), ":1\r\n");
    assert_eq!(eval(&mut r, "return loadstring('return 1 + 1')()", &[], &[]), ":2\r\n");
    let body = "loadstring('x = 1')()";
    assert_eq!(
        eval(&mut r, body, &[], &[]),
        format!(
            "-ERR [string \"x = 1\"]:1: Attempt to modify a readonly table script: {}, on x = 1:1.\r\n",
            sha1_hex(body)
        ),
        "the error is placed in the loaded chunk, as Redis places it"
    );
    assert!(eval(&mut r, "return loadstring(string.dump(function() return 1 end))()", &[], &[]).starts_with("-ERR"));
    // pcall catches a raised error table as its text.
    assert_eq!(
        eval(
            &mut r,
            "local ok, e = pcall(function() return redis.call('nosuch') end) return {tostring(ok), e}",
            &[],
            &[]
        ),
        "*2\r\n$5\r\nfalse\r\n$44\r\nERR Unknown Redis command called from script\r\n"
    );
    // The libraries Redis loads are there.
    assert_eq!(eval(&mut r, "return bit.tohex(65535)", &[], &[]), "$8\r\n0000ffff\r\n");
    assert_eq!(eval(&mut r, "return struct.unpack('>I2', struct.pack('>I2', 513))", &[], &[]), ":513\r\n");
    assert_eq!(eval(&mut r, "return cjson.encode({1,2,{a=3}})", &[], &[]), "$13\r\n[1,2,{\"a\":3}]\r\n");
    assert_eq!(eval(&mut r, "return cmsgpack.unpack(cmsgpack.pack({1,2,3}))[3]", &[], &[]), ":3\r\n");
}

#[test]
fn script_cache_and_evalsha() {
    let s = Server::start();
    let mut r = s.raw();
    let sha = "b534286061d4b9e4026607613b95c06c06015ae8";
    assert_eq!(r.cmd(&["SCRIPT", "LOAD", "return 'loaded'"]), format!("$40\r\n{sha}\r\n"));
    assert_eq!(r.cmd(&["EVALSHA", sha, "0"]), "$6\r\nloaded\r\n");
    assert_eq!(r.cmd(&["EVALSHA", &sha.to_uppercase(), "0"]), "$6\r\nloaded\r\n");
    assert_eq!(r.cmd(&["SCRIPT", "EXISTS", sha, "ffff"]), "*2\r\n:1\r\n:0\r\n");
    // EVAL caches what it runs.
    eval(&mut r, "return 2", &[], &[]);
    assert_eq!(r.cmd(&["SCRIPT", "EXISTS", &sha1_hex("return 2")]), "*1\r\n:1\r\n");
    assert_eq!(r.cmd(&["SCRIPT", "FLUSH"]), "+OK\r\n");
    assert_eq!(r.cmd(&["EVALSHA", sha, "0"]), "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    assert_eq!(r.cmd(&["SCRIPT", "FLUSH", "BOGUS"]), "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n");
    assert_eq!(r.cmd(&["SCRIPT", "KILL"]), "-NOTBUSY No scripts in execution right now.\r\n");
    assert!(r.cmd(&["SCRIPT", "LOAD", "return 'x"]).starts_with("-ERR Error compiling script (new function)"));
}

#[test]
fn scripts_are_atomic_and_time_stands_still() {
    let s = Server::start_with(&["--cores", "2"]);
    let mut r = s.raw();
    // TIME inside a script is the same at its start and end however long it runs.
    let body = "local a = redis.call('time') local x = 0 for i = 1, 3000000 do x = x + i end local b = redis.call('time') return {a[1], a[2], b[1], b[2]}";
    let got = eval(&mut r, body, &[], &[]);
    let parts: Vec<&str> = got.lines().filter(|l| !l.starts_with(['*', '$'])).collect();
    assert_eq!(parts[0..2], parts[2..4], "{got}");
    // Writes of one script are seen all at once by other clients.
    r.cmd(&["MSET", "a", "100", "b", "0"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (port, stop) = (s.port, stop.clone());
        std::thread::spawn(move || {
            let mut c = Raw::connect(port);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let both = c.cmd(&["MGET", "a", "b"]);
                let nums: Vec<i64> = both.lines().filter_map(|l| l.parse().ok()).collect();
                assert_eq!(nums.iter().sum::<i64>(), 100, "a script seen half done: {both:?}");
            }
        })
    };
    let mv = "redis.call('decrby', KEYS[1], ARGV[1]) redis.call('incrby', KEYS[2], ARGV[1]) return 1";
    for i in 0..300 {
        let (from, to) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
        assert_eq!(eval(&mut r, mv, &[from, to], &["7"]), ":1\r\n");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reader.join().unwrap();
}

#[test]
fn busy_scripts_get_busy_replies_and_script_kill() {
    let s = Server::start_with(&["--cores", "1"]);
    let mut admin = s.raw();
    assert_eq!(admin.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]), "+OK\r\n");
    admin.cmd(&["SET", "k", "v"]);
    // An endless loop that has not written: BUSY for others, then SCRIPT KILL.
    let mut looping = s.raw();
    looping.send_cmd(&[b"EVAL", b"while true do end", b"0"]);
    let mut other = s.raw();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = other.cmd(&["GET", "k"]);
        if r.starts_with("-BUSY") {
            assert_eq!(
                r,
                "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
            );
            break;
        }
        assert!(Instant::now() < deadline, "never busy: {r}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        other.cmd(&["FUNCTION", "KILL"]),
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
    );
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), "+OK\r\n");
    let killed = String::from_utf8_lossy(&looping.read_reply()).into_owned();
    assert!(killed.starts_with("-ERR Script killed by user with SCRIPT KILL..."), "{killed}");
    assert_eq!(other.cmd(&["GET", "k"]), "$1\r\nv\r\n", "served again");
    // A loop inside pcall cannot swallow the kill.
    looping.send_cmd(&[b"EVAL", b"while true do pcall(function() while true do end end) end", b"0"]);
    wait_busy(&mut other);
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), "+OK\r\n");
    assert!(String::from_utf8_lossy(&looping.read_reply()).contains("Script killed"));
    // A script queued in a transaction runs in apply off the reactor too (a
    // transaction of keyspace commands alone runs on it): BUSY for others, SCRIPT
    // KILL stops the script, the commands before it stay done (as in redis-server).
    for line in [&["MULTI"][..], &["SET", "m", "1"], &["EVAL", "while true do end", "0"]] {
        looping.send_cmd(&line.iter().map(|a| a.as_bytes()).collect::<Vec<_>>());
    }
    looping.send_cmd(&[b"EXEC"]);
    wait_busy(&mut other);
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), "+OK\r\n");
    // (The pipeline's replies are written together, after EXEC's.)
    for expected in ["+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n"] {
        assert_eq!(String::from_utf8_lossy(&looping.read_reply()), expected);
    }
    let exec = String::from_utf8_lossy(&looping.read_reply()).into_owned();
    assert!(exec.starts_with("*2\r\n+OK\r\n-ERR Script killed by user with SCRIPT KILL..."), "{exec}");
    assert_eq!(other.cmd(&["GET", "m"]), "$1\r\n1\r\n");
    // After a write it cannot be killed: UNKILLABLE; it runs to its end.
    let start = Instant::now();
    looping.send_cmd(&[
        b"EVAL",
        b"redis.call('set','w','1') local n = 0 while n < 2e8 do n = n + 1 end return n",
        b"0",
    ]);
    wait_busy(&mut other);
    assert!(other.cmd(&["SCRIPT", "KILL"]).starts_with("-UNKILLABLE Sorry the script already executed write commands"));
    assert_eq!(String::from_utf8_lossy(&looping.read_reply()), ":200000000\r\n", "it runs to its end");
    assert!(start.elapsed() < Duration::from_secs(60));
    assert_eq!(other.cmd(&["GET", "w"]), "$1\r\n1\r\n");
}

/// SHUTDOWN NOSAVE stops a busy script that has written, and its effects are
/// gone after the restart, as in redis-server (whose unsaved writes die with
/// it): here the script's committed log entry applies as nothing instead of
/// running again. Acknowledged writes before it stay; a whole transaction
/// holding such a script goes too.
#[test]
fn shutdown_nosave_drops_a_busy_script_that_wrote() {
    for in_multi in [false, true] {
        let mut s = Server::start_with(&["--cores", "1"]);
        let mut admin = s.raw();
        assert_eq!(admin.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]), "+OK\r\n");
        assert_eq!(admin.cmd(&["SET", "kept", "yes"]), "+OK\r\n");
        let mut looping = s.raw();
        if in_multi {
            looping.send_cmd(&[b"MULTI"]);
            looping.send_cmd(&[b"SET", b"t", b"1"]);
        }
        looping.send_cmd(&[b"EVAL", b"redis.call('set', 'w', '1') while true do end", b"0"]);
        if in_multi {
            looping.send_cmd(&[b"EXEC"]);
        }
        wait_busy(&mut admin);
        assert!(admin.cmd(&["SCRIPT", "KILL"]).starts_with("-UNKILLABLE"));
        admin.send_cmd(&[b"SHUTDOWN", b"NOSAVE"]);
        assert!(admin.is_closed(), "SHUTDOWN NOSAVE answers nothing and closes");
        let deadline = Instant::now() + Duration::from_secs(10);
        while s.is_running() {
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        let dir = s.dir.clone();
        let again = Server::start_in(&dir, &["--cores", "1"]);
        let mut r = again.raw();
        assert_eq!(r.cmd(&["GET", "kept"]), "$3\r\nyes\r\n", "in_multi={in_multi}");
        assert_eq!(r.cmd(&["GET", "w"]), "$-1\r\n", "the script's write is gone (in_multi={in_multi})");
        assert_eq!(r.cmd(&["GET", "t"]), "$-1\r\n", "in_multi={in_multi}");
        assert_eq!(r.cmd(&["SET", "w", "2"]), "+OK\r\n");
        drop(again);
        // The voided entry stays voided, and what came after it stays, across
        // further (here: unclean) restarts.
        let again = Server::start_in(&dir, &["--cores", "1"]);
        assert_eq!(again.raw().cmd(&["GET", "w"]), "$1\r\n2\r\n");
    }
}

fn wait_busy(c: &mut Raw) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !c.cmd(&["PING"]).starts_with("-BUSY") {
        assert!(Instant::now() < deadline, "the script never became busy");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn bad_scripts_do_not_hurt_the_server() {
    let s = Server::start();
    let mut r = s.raw();
    r.cmd(&["CONFIG", "SET", "lua-memory-limit", "64mb"]);
    let huge = eval(&mut r, "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end return #t", &[], &[]);
    assert!(huge.starts_with("-ERR"), "{}", &huge[..huge.len().min(200)]);
    let deep = eval(&mut r, "local function f(n) return 1 + f(n + 1) end return f(1)", &[], &[]);
    assert!(deep.starts_with("-ERR") && deep.contains("stack overflow"), "{deep}");
    let nested = eval(&mut r, "local a = {} local b = {a} a[1] = b return a", &[], &[]);
    assert!(nested.contains("reached lua stack limit"), "{}", &nested[nested.len().saturating_sub(100)..]);
    let big = eval(&mut r, "local t = {} for i = 1, 100000 do t[i] = i end return t", &[], &[]);
    assert!(big.starts_with("*100000\r\n"));
    assert_eq!(r.cmd(&["PING"]), "+PONG\r\n");
    assert_eq!(eval(&mut r, "return 1", &[], &[]), ":1\r\n", "the VM serves again");
}

#[test]
fn functions_load_call_list_and_survive_restarts() {
    let mut s = Server::start();
    let mut r = s.raw();
    let lib = "#!lua name=mylib\nlocal function inc(keys, args) return redis.call('incrby', keys[1], args[1]) end\nredis.register_function('myinc', inc)\nredis.register_function{function_name='myget', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}";
    assert_eq!(r.cmd(&["FUNCTION", "LOAD", lib]), "$5\r\nmylib\r\n");
    assert_eq!(r.cmd(&["FUNCTION", "LOAD", lib]), "-ERR Library 'mylib' already exists\r\n");
    assert_eq!(r.cmd(&["FCALL", "myinc", "1", "c", "5"]), ":5\r\n");
    assert_eq!(r.cmd(&["FCALL", "MYINC", "1", "c", "5"]), ":10\r\n");
    assert_eq!(r.cmd(&["FCALL_RO", "myget", "1", "c"]), "$2\r\n10\r\n");
    assert_eq!(
        r.cmd(&["FCALL_RO", "myinc", "1", "c", "1"]),
        "-ERR Can not execute a script with write flag using *_ro command.\r\n"
    );
    assert_eq!(r.cmd(&["FCALL", "nope", "0"]), "-ERR Function not found\r\n");
    assert_eq!(r.cmd(&["FCALL", "myinc", "x"]), "-ERR Bad number of keys provided\r\n");
    assert_eq!(
        r.cmd(&["FUNCTION", "LIST"]),
        "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$5\r\nmylib\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*2\r\n*6\r\n$4\r\nname\r\n$5\r\nmyinc\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n*6\r\n$4\r\nname\r\n$5\r\nmyget\r\n$11\r\ndescription\r\n$5\r\nreads\r\n$5\r\nflags\r\n*1\r\n+no-writes\r\n"
    );
    let errs: &[(&str, &str)] = &[
        ("#!lua name=x\nreturn 1", "-ERR No functions registered\r\n"),
        ("return 1", "-ERR Missing library metadata\r\n"),
        ("#!lua name=x\nredis.register_function('myinc', function() end)", "-ERR Function myinc already exists\r\n"),
        (
            "#!lua name=x\nredis.call('ping')",
            "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'\r\n",
        ),
        (
            "#!lua name=x\na = 1",
            "-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table\r\n",
        ),
        (
            "#!lua name=x\nredis.register_function('f', 1)",
            "-ERR Error registering functions: ERR second argument to redis.register_function must be a function\r\n",
        ),
        (
            "#!lua name=x\nreturn 'x",
            "-ERR Error compiling function: user_function:2: unfinished string near '<eof>'\r\n",
        ),
        ("#!lua name=x\nwhile true do end", "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n"),
    ];
    for (code, want) in errs {
        assert_eq!(r.cmd(&["FUNCTION", "LOAD", code]), *want, "{code}");
    }
    // Libraries are replicated data: they survive kill -9.
    s.kill_and_restart();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["FCALL", "myinc", "1", "c", "1"]), ":11\r\n");
    assert!(r.cmd(&["FUNCTION", "STATS"]).contains("libraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:2"));
    // DUMP / RESTORE round trip.
    let payload_bytes = raw_bulk(&mut r, &["FUNCTION", "DUMP"]);
    assert_eq!(payload_bytes[0], 245, "a library record");
    assert_eq!(r.cmd(&["FUNCTION", "DELETE", "mylib"]), "+OK\r\n");
    assert_eq!(r.cmd(&["FUNCTION", "DELETE", "mylib"]), "-ERR Library not found\r\n");
    assert_eq!(r.cmd(&["FCALL", "myinc", "1", "c", "1"]), "-ERR Function not found\r\n");
    r.send_cmd(&[b"FUNCTION", b"RESTORE", &payload_bytes]);
    assert_eq!(r.read_reply(), b"+OK\r\n");
    assert_eq!(r.cmd(&["FCALL", "myinc", "1", "c", "1"]), ":12\r\n");
    r.send_cmd(&[b"FUNCTION", b"RESTORE", &payload_bytes]);
    assert_eq!(r.read_reply(), b"-ERR Library mylib already exists\r\n");
    assert_eq!(r.cmd(&["FUNCTION", "RESTORE", "garbage"]), "-ERR DUMP payload version or checksum are wrong\r\n");
    assert_eq!(r.cmd(&["FUNCTION", "FLUSH"]), "+OK\r\n");
    assert_eq!(r.cmd(&["FUNCTION", "LIST"]), "*0\r\n");
    assert_eq!(r.cmd(&["FLUSHALL"]), "+OK\r\n");
}

/// The bytes of a bulk reply.
fn raw_bulk(r: &mut Raw, args: &[&str]) -> Vec<u8> {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    r.send_cmd(&a);
    let reply = r.read_reply();
    let start = reply.iter().position(|&b| b == b'\n').unwrap() + 1;
    reply[start..reply.len() - 2].to_vec()
}

#[test]
fn neton_lock_with_evalsha_and_noscript_fallback() {
    // spec/neton-redis-client-spec.md §5.6: acquire with SET NX PX, release with a
    // compare-and-delete script by EVALSHA, falling back to EVAL on NOSCRIPT.
    let s = Server::start();
    let mut con = s.client();
    let release = redis::Script::new(
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
    );
    let acquired: Option<String> = redis::cmd("SET")
        .arg("neton:lock:order:1")
        .arg("token-a")
        .arg("NX")
        .arg("PX")
        .arg(30000)
        .query(&mut con)
        .unwrap();
    assert_eq!(acquired.as_deref(), Some("OK"));
    let again: Option<String> = redis::cmd("SET")
        .arg("neton:lock:order:1")
        .arg("token-b")
        .arg("NX")
        .arg("PX")
        .arg(30000)
        .query(&mut con)
        .unwrap();
    assert_eq!(again, None, "a held lock is not acquired twice");
    // The script cache is empty: the client's EVALSHA gets NOSCRIPT and retries with EVAL.
    let other: i64 = release.key("neton:lock:order:1").arg("token-b").invoke(&mut con).unwrap();
    assert_eq!(other, 0, "another holder's token releases nothing");
    let mine: i64 = release.key("neton:lock:order:1").arg("token-a").invoke(&mut con).unwrap();
    assert_eq!(mine, 1);
    let exists: i64 = redis::cmd("EXISTS").arg("neton:lock:order:1").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    let mut r = s.raw();
    assert_eq!(r.cmd(&["SCRIPT", "EXISTS", release.get_hash()]), "*1\r\n:1\r\n", "loaded by the fallback");
}

fn sha1_hex(s: &str) -> String {
    // A tiny SHA1 (the client side needs no dependency for it).
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = s.as_bytes().to_vec();
    let bits = (msg.len() as u64) * 8;
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for chunk in msg.chunks(64) {
        let mut w = [0u32; 80];
        for i in 0..16 {
            w[i] = u32::from_be_bytes(chunk[4 * i..4 * i + 4].try_into().unwrap());
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

/// A script that may write but only reads is answered on the connection's core
/// from a snapshot, without a log entry (cmd::script's trial). It must still
/// see this client's earlier pipelined writes, see other clients' scripts whole,
/// and, on reaching a write (even inside pcall) or a key of another region, run
/// again in apply as if never tried.
#[test]
fn scripts_that_only_read_are_tried_on_a_snapshot() {
    let s = Server::start_with(&["--cores", "2", "--regions", "4"]);
    let mut r = s.raw();
    let get = "return redis.call('get', KEYS[1])";
    // Pipelined behind unapplied writes of the same client.
    for i in 0..200 {
        let v = i.to_string();
        let mut batch = Vec::new();
        batch.extend(crate::common::encode_cmd(&[b"SET", b"pk", v.as_bytes()]));
        batch.extend(crate::common::encode_cmd(&[b"EVAL", get.as_bytes(), b"1", b"pk"]));
        r.send(&batch);
        assert_eq!(r.read_reply(), b"+OK\r\n");
        assert_eq!(String::from_utf8(r.read_reply()).unwrap(), format!("${}\r\n{v}\r\n", v.len()), "round {i}");
    }
    // A write reached inside pcall: the trial is dropped and the script runs in apply.
    let body =
        "local ok = pcall(redis.call, 'SET', KEYS[1], ARGV[1]) return {tostring(ok), redis.call('GET', KEYS[1])}";
    assert_eq!(eval(&mut r, body, &["pk"], &["new"]), "*2\r\n$4\r\ntrue\r\n$3\r\nnew\r\n");
    assert_eq!(r.cmd(&["GET", "pk"]), "$3\r\nnew\r\n");
    // A long read (past the trial's budget) still answers.
    let long = "local x = 0 for i = 1, 2000000 do x = x + 1 end return {x, redis.call('get', KEYS[1])}";
    assert_eq!(eval(&mut r, long, &["pk"], &[]), "*2\r\n:2000000\r\n$3\r\nnew\r\n");
    // A key of another region than the declared ones stops the trial; the
    // script runs as a cross-region write and reads it (standalone Redis
    // allows undeclared keys).
    let (a, b) = two_regions();
    r.cmd(&["SET", &b, "x"]);
    let other = format!("return redis.call('get', '{b}')");
    assert_eq!(eval(&mut r, &other, &[&a], &[]), "$1\r\nx\r\n");
    let write_other = format!("redis.call('set', KEYS[1], 'y') return redis.call('append', '{b}', 'z')");
    assert_eq!(eval(&mut r, &write_other, &[&a], &[]), ":2\r\n");
    assert_eq!(r.cmd(&["MGET", &a, &b]), "*2\r\n$1\r\ny\r\n$2\r\nxz\r\n");
    // Scripts that only read see another client's transfer scripts whole.
    r.cmd(&["MSET", "{t}a", "100", "{t}b", "0"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..2 {
        let (port, stop) = (s.port, stop.clone());
        readers.push(std::thread::spawn(move || {
            let mut c = Raw::connect(port);
            let sum = "return redis.call('get', KEYS[1]) + redis.call('get', KEYS[2])";
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(eval(&mut c, sum, &["{t}a", "{t}b"], &[]), ":100\r\n", "a transfer seen half done");
                n += 1;
            }
            n
        }));
    }
    let mv = "redis.call('decrby', KEYS[1], ARGV[1]) redis.call('incrby', KEYS[2], ARGV[1]) return 1";
    for i in 0..300 {
        let (from, to) = if i % 2 == 0 { ("{t}a", "{t}b") } else { ("{t}b", "{t}a") };
        assert_eq!(eval(&mut r, mv, &[from, to], &["7"]), ":1\r\n");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in readers {
        assert!(t.join().unwrap() > 0);
    }
}

/// Two keys in different regions of a 4-region standalone server (regions
/// split the slots evenly).
fn two_regions() -> (String, String) {
    let region = |k: &str| crate::common::key_slot(k.as_bytes()) as usize * 4 / 16384;
    let a = (0..).map(|i| format!("ra{i}")).find(|k| region(k) == 0).unwrap();
    let b = (0..).map(|i| format!("rb{i}")).find(|k| region(k) == 2).unwrap();
    (a, b)
}

/// What Redis 7.0.15's own suite checks of scripts and functions, line for line
/// against redis-server: a Lua error caught by `pcall` is its message string
/// (for errors raised by Lua, by `redis.call` and by the sandbox alike);
/// `math.randomseed` takes a numeric string; the commands a script may not call
/// (CLUSTER RESET, SHUTDOWN, CLIENT, MULTI, SUBSCRIBE, BLPOP, EVAL) and the
/// `no-writes` shebang refuse as Redis does; FUNCTION LOAD's metadata and name
/// errors carry 7.0.15's texts.
#[test]
fn script_errors_and_sandbox_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let lines: &[&[&str]] = &[
        &["EVAL", "local status, res = pcall(function() return foo end); return 'status: ' .. tostring(status) .. ' result: ' .. res", "0"],
        &["EVAL", "local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), type(e), e}", "0"],
        &["EVAL", "local ok, e = pcall(function() error('boom') end) return {type(e), e}", "0"],
        &["EVAL", "local ok, e = pcall(function() error({err='x'}) end) return {type(e), e}", "0"],
        &["EVAL", "local ok, e = pcall(function() local x = nil; return x.y end) return {type(e), e}", "0"],
        &["EVAL", "local ok, e = pcall(math.randomseed, 'x') return {type(e), e}", "0"],
        &["EVAL", "local ok, e = pcall(math.random, 0) return {type(e), e}", "0"],
        &["EVAL", "return select('#', math.randomseed(1))", "0"],
        &["EVAL", "local ok, e = pcall(redis.sha1hex) return {type(e), e}", "0"],
        &["EVAL", "local ok, e = pcall(cjson.decode, '{') return {type(e), e}", "0"],
        &["EVAL", "math.randomseed('10') return math.random(1000)", "0"],
        &["EVAL", "math.randomseed(10) return math.random(1000)", "0"],
        &["EVAL", "math.randomseed('x') return 1", "0"],
        &["EVAL", "math.randomseed() return 1", "0"],
        &["EVAL", "return math.random(0)", "0"],
        &["EVAL", "return math.random(1, 2, 3)", "0"],
        &["EVAL", "math.randomseed(7) return math.random('3')", "0"],
        &["EVAL", "return redis.call('cluster', 'reset')", "0"],
        &["EVAL", "return redis.pcall('cluster', 'reset')", "0"],
        &["EVAL", "return redis.call('shutdown')", "0"],
        &["EVAL", "return redis.call('client', 'list')", "0"],
        &["EVAL", "return redis.call('multi')", "0"],
        &["EVAL", "return redis.call('subscribe', 'x')", "0"],
        &["EVAL", "return redis.call('blpop', 'x', 0)", "0"],
        &["EVAL", "return redis.call('eval', 'return 1', 0)", "0"],
        &["EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'x', '1')", "0"],
        &["EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'x', '1')", "0"],
        &["EVAL", "#!lua flags=no-writes,allow-oom\nreturn redis.call('get', 'x')", "0"],
        &["FUNCTION", "LOAD", "#!lua name=bad-name\nredis.register_function('f', function() return 1 end)"],
        &["FUNCTION", "LOAD", "#!lua name=\nredis.register_function('f', function() return 1 end)"],
        &["FUNCTION", "LOAD", "#!lua name=ok\nredis.register_function('bad-fn', function() return 1 end)"],
        &["FUNCTION", "LOAD", "#!lua name=ok2\nredis.register_function{function_name='f2', callback=function() return 1 end, flags={'bogus'}}"],
        &["FUNCTION", "LOAD", "#!lua\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=a name=b\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=a foo=b\nreturn 1"],
        &["FUNCTION", "LOAD", "#!lua name=ok3\nreturn 1"],
        &["FUNCTION", "LOAD", "#!nolua name=ok3\nreturn 1"],
    ];
    same_lines(&mut n, &mut r, lines);
}

/// COMMAND LIST and its FILTERBY forms (MODULE, ACLCAT, PATTERN) and their
/// syntax errors, as redis-server answers them (the lists compared as sets:
/// Redis lists its dictionary's order).
#[test]
fn command_list_filters_match_redis() {
    let s = Server::start();
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    let errors: &[&[&str]] = &[
        &["COMMAND", "LIST", "FILTERBY"],
        &["COMMAND", "LIST", "FILTERBY", "bogus", "x"],
        &["COMMAND", "LIST", "x"],
        &["COMMAND", "LIST", "FILTERBY", "aclcat"],
        &["COMMAND", "LIST", "FILTERBY", "module", "foo"],
        &["COMMAND", "LIST", "FILTERBY", "aclcat", "nosuchcat"],
        &["COMMAND", "LIST", "FILTERBY", "pattern", "nothing-matches*"],
    ];
    same_lines(&mut n, &mut r, errors);
    let sorted = |raw: String| {
        let mut v: Vec<String> =
            raw.split("\r\n").filter(|l| !l.starts_with('*') && !l.starts_with('$')).map(String::from).collect();
        v.sort();
        v
    };
    for f in [
        &["COMMAND", "LIST", "FILTERBY", "aclcat", "geo"][..],
        &["COMMAND", "LIST", "FILTERBY", "ACLCAT", "Stream"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "xa*"],
        &["COMMAND", "LIST", "FILTERBY", "pattern", "config|*"],
    ] {
        assert_eq!(sorted(n.cmd(f)), sorted(r.cmd(f)), "{f:?}");
    }
}

/// `lua-time-limit` is Redis 7's alias of `busy-reply-threshold`: set to
/// 10 ms, a looping script is busy (killable) 100 ms later, and CONFIG GET
/// shows both names with the value.
#[test]
fn lua_time_limit_is_the_busy_threshold() {
    let s = Server::start();
    let mut admin = s.raw();
    assert_eq!(admin.cmd(&["CONFIG", "SET", "lua-time-limit", "10"]), "+OK\r\n");
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "busy-reply-threshold"]),
        "*2\r\n$20\r\nbusy-reply-threshold\r\n$2\r\n10\r\n"
    );
    let mut looping = s.raw();
    looping.send_cmd(&[b"EVAL", b"while true do end", b"0"]);
    // NOTBUSY until the script has started and run 10 ms; well before the
    // default threshold (5 s), which a lost alias would leave in force.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let r = admin.cmd(&["SCRIPT", "KILL"]);
        if r == "+OK\r\n" {
            break;
        }
        assert!(r.starts_with("-NOTBUSY") && Instant::now() < deadline, "SCRIPT KILL: {r:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(String::from_utf8_lossy(&looping.read_reply()).contains("Script killed by user"));
    assert_eq!(admin.cmd(&["CONFIG", "SET", "busy-reply-threshold", "5000"]), "+OK\r\n");
    assert_eq!(admin.cmd(&["CONFIG", "GET", "lua-time-limit"]), "*2\r\n$14\r\nlua-time-limit\r\n$4\r\n5000\r\n");
}
