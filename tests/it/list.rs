//! List commands through the real binary, with the blocking pops (exact
//! semantics are also compared with redis-server by the differential test).

use std::thread;
use std::time::{Duration, Instant};

use crate::common::{blocked, q, reply, wait_blocked, Oracle, Raw, Server};

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn list_commands_and_reply_shapes() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["RPUSH", "l", "b", "c"]), 2);
    assert_eq!(q::<i64>(&mut c, &["LPUSH", "l", "a", "z"]), 4, "LPUSH prepends one by one: z a b c");
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]), strs(&["z", "a", "b", "c"]));
    assert_eq!(q::<i64>(&mut c, &["LPUSHX", "none", "x"]), 0);
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "none"]), 0, "LPUSHX does not create");
    assert_eq!(q::<i64>(&mut c, &["RPUSHX", "l", "d"]), 5);
    assert_eq!(q::<i64>(&mut c, &["LLEN", "l"]), 5);
    assert_eq!(q::<String>(&mut c, &["LINDEX", "l", "-1"]), "d");
    assert_eq!(q::<Option<String>>(&mut c, &["LINDEX", "l", "5"]), None);
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "l", "-2", "100"]), strs(&["c", "d"]));
    assert_eq!(q::<String>(&mut c, &["LSET", "l", "0", "Z"]), "OK");
    assert_eq!(s.raw().cmd(&["LSET", "l", "9", "x"]), "-ERR index out of range\r\n");
    assert_eq!(s.raw().cmd(&["LSET", "nokey", "0", "x"]), "-ERR no such key\r\n");
    assert_eq!(q::<i64>(&mut c, &["LINSERT", "l", "BEFORE", "b", "x"]), 6);
    assert_eq!(q::<i64>(&mut c, &["LINSERT", "l", "AFTER", "d", "y"]), 7);
    assert_eq!(q::<i64>(&mut c, &["LINSERT", "l", "AFTER", "nope", "y"]), -1);
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]), strs(&["Z", "a", "x", "b", "c", "d", "y"]));
    assert_eq!(q::<i64>(&mut c, &["RPUSH", "l", "a", "x", "a"]), 10);
    assert_eq!(q::<i64>(&mut c, &["LPOS", "l", "a"]), 1);
    assert_eq!(q::<i64>(&mut c, &["LPOS", "l", "a", "RANK", "-1"]), 9);
    assert_eq!(q::<Vec<i64>>(&mut c, &["LPOS", "l", "a", "COUNT", "0"]), vec![1, 7, 9]);
    assert_eq!(q::<Vec<i64>>(&mut c, &["LPOS", "l", "a", "COUNT", "0", "MAXLEN", "8"]), vec![1, 7]);
    assert_eq!(q::<i64>(&mut c, &["LREM", "l", "-1", "a"]), 1, "from the tail");
    assert_eq!(q::<i64>(&mut c, &["LREM", "l", "0", "x"]), 2);
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]), strs(&["Z", "a", "b", "c", "d", "y", "a"]));
    assert_eq!(q::<String>(&mut c, &["LTRIM", "l", "1", "-2"]), "OK");
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]), strs(&["a", "b", "c", "d", "y"]));
    // Pops, with and without count; the last pop deletes the key.
    assert_eq!(q::<String>(&mut c, &["LPOP", "l"]), "a");
    assert_eq!(q::<Vec<String>>(&mut c, &["RPOP", "l", "2"]), strs(&["y", "d"]));
    assert_eq!(q::<Vec<String>>(&mut c, &["LPOP", "l", "0"]), Vec::<String>::new());
    assert_eq!(s.raw().cmd(&["LPOP", "nokey", "2"]), "*-1\r\n");
    assert_eq!(s.raw().cmd(&["LPOP", "l", "-1"]), "-ERR value is out of range, must be positive\r\n");
    // LMOVE / RPOPLPUSH, including rotation of one list.
    assert_eq!(q::<String>(&mut c, &["LMOVE", "l", "l", "LEFT", "RIGHT"]), "b");
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]), strs(&["c", "b"]));
    assert_eq!(q::<String>(&mut c, &["RPOPLPUSH", "l", "dst"]), "b");
    assert_eq!(q::<String>(&mut c, &["LMOVE", "l", "dst", "RIGHT", "RIGHT"]), "c");
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "l"]), 0, "an emptied list is deleted");
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "dst", "0", "-1"]), strs(&["b", "c"]));
    // LMPOP: the first non-empty key.
    assert_eq!(
        s.raw().cmd(&["LMPOP", "2", "nokey", "dst", "RIGHT", "COUNT", "5"]),
        "*2\r\n$3\r\ndst\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n"
    );
    assert_eq!(s.raw().cmd(&["LMPOP", "1", "dst", "LEFT"]), "*-1\r\n");
    assert_eq!(s.raw().cmd(&["LMPOP", "0", "dst", "LEFT"]), "-ERR numkeys should be greater than 0\r\n");
    // WRONGTYPE, and RESP3 nulls.
    q::<String>(&mut c, &["SET", "str", "v"]);
    for cmd in [
        &["LPUSH", "str", "x"][..],
        &["LRANGE", "str", "0", "1"],
        &["LLEN", "str"],
        &["LMOVE", "dst2", "str", "LEFT", "LEFT"],
    ] {
        if cmd[0] == "LMOVE" {
            q::<i64>(&mut c, &["RPUSH", "dst2", "v"]);
        }
        assert!(s.raw().cmd(cmd).starts_with("-WRONGTYPE"), "{cmd:?}");
    }
    let mut r3 = s.raw();
    r3.cmd(&["HELLO", "3"]);
    assert_eq!(r3.cmd(&["LPOP", "nokey"]), "_\r\n");
    assert_eq!(r3.cmd(&["BLPOP", "nokey", "0.01"]), "_\r\n");
}

#[test]
fn lists_survive_kill9_in_order() {
    let mut s = Server::start();
    let mut c = s.client();
    let n = 2_000;
    for i in 0..n {
        let side = if i % 2 == 0 { "RPUSH" } else { "LPUSH" };
        q::<i64>(&mut c, &[side, "big", &i.to_string()]);
    }
    q::<String>(&mut c, &["LSET", "big", "0", "first"]);
    q::<i64>(&mut c, &["LINSERT", "big", "AFTER", "first", "second"]);
    let before: Vec<String> = q(&mut c, &["LRANGE", "big", "0", "-1"]);
    assert_eq!(before.len(), n + 1);
    s.kill_and_restart();
    let mut c = s.client();
    assert_eq!(q::<Vec<String>>(&mut c, &["LRANGE", "big", "0", "-1"]), before);
    assert_eq!(q::<i64>(&mut c, &["LLEN", "big"]), n as i64 + 1);
    assert_eq!(q::<String>(&mut c, &["LINDEX", "big", "1"]), "second");
}

#[test]
fn blocked_clients_are_served_first_come_first_served() {
    let s = Server::start();
    let mut clients = Vec::new();
    for i in 0..3 {
        clients.push(blocked(&s, &["BLPOP", "q", "0"]));
        wait_blocked(&s, i + 1);
    }
    // One push of three elements serves all three, in the order they blocked.
    assert_eq!(s.raw().cmd(&["RPUSH", "q", "1", "2", "3"]), ":3\r\n");
    for (i, c) in clients.iter_mut().enumerate() {
        let v = (i + 1).to_string();
        assert_eq!(reply(c), format!("*2\r\n$1\r\nq\r\n$1\r\n{v}\r\n"));
    }
    wait_blocked(&s, 0);
    // One element at a time: the longest waiter first.
    let mut a = blocked(&s, &["BRPOP", "q2", "0"]);
    wait_blocked(&s, 1);
    let mut b = blocked(&s, &["BRPOP", "q2", "0"]);
    wait_blocked(&s, 2);
    s.raw().cmd(&["LPUSH", "q2", "x"]);
    assert_eq!(reply(&mut a), "*2\r\n$2\r\nq2\r\n$1\r\nx\r\n");
    wait_blocked(&s, 1);
    s.raw().cmd(&["LPUSH", "q2", "y"]);
    assert_eq!(reply(&mut b), "*2\r\n$2\r\nq2\r\n$1\r\ny\r\n");
    assert_eq!(s.raw().cmd(&["EXISTS", "q2"]), ":0\r\n");
}

#[test]
fn blocking_pops_time_out_and_do_not_hold_the_core() {
    let s = Server::start();
    let started = Instant::now();
    let mut a = blocked(&s, &["BLPOP", "empty", "other", "0.3"]);
    // The single core keeps serving other connections meanwhile.
    let mut b = s.raw();
    for _ in 0..20 {
        assert_eq!(b.cmd(&["PING"]), "+PONG\r\n");
    }
    assert!(started.elapsed() < Duration::from_millis(300), "PINGs were answered while BLPOP waited");
    assert_eq!(reply(&mut a), "*-1\r\n");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(3), "timed out after {waited:?}");
    // Each blocking form times out with a null array.
    for cmd in [
        &["BRPOP", "empty", "0.05"][..],
        &["BLMOVE", "empty", "d", "LEFT", "RIGHT", "0.05"],
        &["BRPOPLPUSH", "empty", "d", "0.05"],
        &["BLMPOP", "0.05", "1", "empty", "LEFT", "COUNT", "2"],
    ] {
        assert_eq!(s.raw().cmd(cmd), "*-1\r\n", "{cmd:?}");
    }
    wait_blocked(&s, 0);
    assert_eq!(s.raw().cmd(&["BLPOP", "empty", "-1"]), "-ERR timeout is negative\r\n");
    assert_eq!(s.raw().cmd(&["BLPOP", "empty", "x"]), "-ERR timeout is not a float or out of range\r\n");
    s.raw().cmd(&["SET", "str", "v"]);
    assert!(s.raw().cmd(&["BLPOP", "str", "0"]).starts_with("-WRONGTYPE"), "checked before blocking");
}

/// A positive timeout under a millisecond is one millisecond (redis-server
/// 7.0.15 answers nil), never 0 ("forever"), for every blocking command that
/// takes seconds; a negative one that truncates to 0 still waits forever, and
/// the replies are redis-server's.
#[test]
fn sub_millisecond_timeouts_round_up_to_one() {
    let s = Server::start();
    let o = Oracle::start();
    let lines: &[&[&str]] = &[
        &["BLPOP", "empty", "0.001"],
        &["BRPOP", "empty", "0.0001"],
        &["BLMOVE", "empty", "d", "LEFT", "RIGHT", "0.0001"],
        &["BRPOPLPUSH", "empty", "d", "0.0009"],
        &["BLMPOP", "0.0001", "1", "empty", "LEFT"],
        &["BZPOPMIN", "empty", "0.0001"],
        &["BZPOPMAX", "empty", "1e-400"],
        &["BZMPOP", "0.0000001", "1", "empty", "MIN"],
    ];
    for l in lines {
        let (mut n, mut r) = (s.raw(), o.raw());
        for c in [&mut n, &mut r] {
            c.w.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        assert_eq!(n.cmd(l), r.cmd(l), "{l:?}");
    }
    // -0.0001 s truncates to 0: both wait (forever) until a push.
    let mut a = blocked(&s, &["BLPOP", "k", "-0.0001"]);
    wait_blocked(&s, 1);
    s.raw().cmd(&["RPUSH", "k", "x"]);
    assert_eq!(reply(&mut a), "*2\r\n$1\r\nk\r\n$1\r\nx\r\n");
}

#[test]
fn blocking_forms_are_woken_by_another_connection() {
    let s = Server::start();
    // BLPOP on two keys, served by the second.
    let mut a = blocked(&s, &["BLPOP", "k1", "k2", "0"]);
    wait_blocked(&s, 1);
    s.raw().cmd(&["RPUSH", "k2", "v"]);
    assert_eq!(reply(&mut a), "*2\r\n$2\r\nk2\r\n$1\r\nv\r\n");
    // BLMOVE moves atomically into the destination.
    let mut a = blocked(&s, &["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]);
    wait_blocked(&s, 1);
    s.raw().cmd(&["RPUSH", "src", "a", "b"]);
    assert_eq!(reply(&mut a), "$1\r\nb\r\n");
    assert_eq!(s.raw().cmd(&["LRANGE", "dst", "0", "-1"]), "*1\r\n$1\r\nb\r\n");
    assert_eq!(s.raw().cmd(&["LRANGE", "src", "0", "-1"]), "*1\r\n$1\r\na\r\n");
    // BLMPOP with COUNT takes up to that many.
    let mut a = blocked(&s, &["BLMPOP", "0", "2", "m1", "m2", "LEFT", "COUNT", "2"]);
    wait_blocked(&s, 1);
    s.raw().cmd(&["RPUSH", "m2", "1", "2", "3"]);
    assert_eq!(reply(&mut a), "*2\r\n$2\r\nm2\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    // BRPOPLPUSH, and commands pipelined behind a blocked one run after it.
    let mut a = s.raw();
    let mut pipe = crate::common::encode_cmd(&[b"BRPOPLPUSH", b"p", b"pd", b"0"]);
    pipe.extend(crate::common::encode_cmd(&[b"LLEN", b"pd"]));
    a.send(&pipe);
    wait_blocked(&s, 1);
    s.raw().cmd(&["RPUSH", "p", "z"]);
    assert_eq!(reply(&mut a), "$1\r\nz\r\n");
    assert_eq!(reply(&mut a), ":1\r\n", "the pipelined LLEN ran after the pop");
}

#[test]
fn a_client_that_leaves_while_blocked_takes_nothing() {
    let s = Server::start();
    let a = blocked(&s, &["BLPOP", "gone", "0"]);
    wait_blocked(&s, 1);
    let mut b = blocked(&s, &["BLPOP", "gone", "0"]);
    wait_blocked(&s, 2);
    drop(a);
    wait_blocked(&s, 1);
    s.raw().cmd(&["RPUSH", "gone", "1", "2"]);
    assert_eq!(reply(&mut b), "*2\r\n$4\r\ngone\r\n$1\r\n1\r\n", "the remaining client is served first");
    assert_eq!(s.raw().cmd(&["LRANGE", "gone", "0", "-1"]), "*1\r\n$1\r\n2\r\n", "nothing went to the closed one");
}

#[test]
fn blocked_clients_on_other_cores_are_woken() {
    // Two executors: connections land on either core; the push is applied on
    // the region's core and must wake waiters wherever they are, in order.
    let s = Server::start_with(&["--cores", "2"]);
    let mut waiters = Vec::new();
    for i in 0..6 {
        waiters.push(blocked(&s, &["BRPOP", "xq", "0"]));
        wait_blocked(&s, i + 1);
    }
    for i in 0..6 {
        s.raw().cmd(&["LPUSH", "xq", &i.to_string()]);
    }
    for (i, w) in waiters.iter_mut().enumerate() {
        assert_eq!(reply(w), format!("*2\r\n$2\r\nxq\r\n$1\r\n{i}\r\n"), "waiter {i}");
    }
    assert_eq!(s.raw().cmd(&["EXISTS", "xq"]), ":0\r\n");
}

#[test]
fn a_long_lrange_does_not_stall_the_core() {
    let s = Server::start();
    let mut c = s.client();
    let mut p = redis::pipe();
    for chunk in (0..300_000).collect::<Vec<u32>>().chunks(1000) {
        let mut cmd = redis::cmd("RPUSH");
        cmd.arg("long");
        for i in chunk {
            cmd.arg(format!("element-{i:08}"));
        }
        p.add_command(cmd);
    }
    p.query::<()>(&mut c).unwrap();
    crate::common::assert_does_not_stall(&s, &[b"LRANGE", b"long", b"0", b"-1"], "*300000\r\n");
}

#[test]
fn concurrent_producers_and_blocked_consumers_lose_and_duplicate_nothing() {
    use std::collections::BTreeSet;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    // Two cores, producers pushing while consumers block: every element reaches
    // exactly one consumer, and no consumer sleeps through a push (a lost
    // wake-up would leave it blocked until its timeout, failing the test).
    let s = Server::start_with(&["--cores", "2"]);
    let (producers, per_producer, consumers) = (2usize, 1500usize, 4usize);
    let total = producers * per_producer;
    let got = Arc::new(Mutex::new(Vec::new()));
    let taken = Arc::new(AtomicUsize::new(0));
    let mut threads = Vec::new();
    for _ in 0..consumers {
        let (got, taken, port) = (got.clone(), taken.clone(), s.port);
        threads.push(thread::spawn(move || {
            let mut r = Raw::connect(port);
            while taken.load(Ordering::SeqCst) < total {
                let reply = r.cmd(&["BLPOP", "work", "done", "5"]);
                if reply.contains("$4\r\ndone\r\n") {
                    break;
                }
                assert!(reply.starts_with("*2\r\n"), "a consumer waited 5 s for nothing: {reply:?}");
                let elem = reply.rsplit("\r\n").nth(1).unwrap().to_string();
                got.lock().unwrap().push(elem);
                if taken.fetch_add(1, Ordering::SeqCst) + 1 == total {
                    // Release the others, blocked on `done` too.
                    let mut w = Raw::connect(port);
                    w.cmd(&["RPUSH", "done", "x", "x", "x", "x", "x", "x", "x", "x"]);
                }
            }
        }));
    }
    for p in 0..producers {
        let port = s.port;
        threads.push(thread::spawn(move || {
            let mut w = Raw::connect(port);
            for chunk in (0..per_producer).collect::<Vec<_>>().chunks(7) {
                let mut args = vec!["RPUSH".to_string(), "work".to_string()];
                args.extend(chunk.iter().map(|i| format!("p{p}-{i}")));
                let a: Vec<&str> = args.iter().map(|x| x.as_str()).collect();
                assert!(w.cmd(&a).starts_with(':'));
                thread::sleep(Duration::from_micros(300));
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    let got = got.lock().unwrap();
    assert_eq!(got.len(), total, "every element popped once");
    let distinct: BTreeSet<&String> = got.iter().collect();
    assert_eq!(distinct.len(), total, "no element popped twice");
    assert_eq!(s.raw().cmd(&["LLEN", "work"]), ":0\r\n");
}

/// Two clients blocked on one list with different destinations, the first's
/// a string: a push answers the first WRONGTYPE (the element stays) and serves
/// the second, as redis-server does; a woken client whose retry fails passes
/// the wake-up on. The same for BLMOVE, with the destinations in other regions.
#[test]
fn a_failed_wakeup_passes_the_element_on() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    for form in [&["BRPOPLPUSH", "{b}list", "DST", "0"][..], &["BLMOVE", "{b}list", "DST", "RIGHT", "LEFT", "0"]] {
        let run = |port: u16, blocked_now: &dyn Fn(usize)| -> Vec<String> {
            let mut c = Raw::connect(port);
            c.cmd(&["DEL", "{b}list", "t1", "t2"]);
            c.cmd(&["SET", "t1", "nolist"]);
            let line = |dst: &str| -> Vec<u8> {
                let parts: Vec<&[u8]> =
                    form.iter().map(|p| if *p == "DST" { dst.as_bytes() } else { p.as_bytes() }).collect();
                crate::common::encode_cmd(&parts)
            };
            let mut a = Raw::connect(port);
            a.send(&line("t1"));
            blocked_now(1);
            let mut b = Raw::connect(port);
            b.send(&line("t2"));
            blocked_now(2);
            c.cmd(&["LPUSH", "{b}list", "foo"]);
            let mut got = Vec::new();
            for (who, r) in [("first", &mut a), ("second", &mut b)] {
                r.w.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut out = Vec::new();
                if crate::common::read_frame(&mut r.r, &mut out).is_err() {
                    let state: Vec<String> =
                        [&["LRANGE", "{b}list", "0", "-1"][..], &["LRANGE", "t2", "0", "-1"], &["INFO", "clients"]]
                            .iter()
                            .map(|l| c.cmd(l))
                            .collect();
                    panic!("{form:?}: the {who} blocked client was never answered; got {got:?}; {state:?}");
                }
                got.push(String::from_utf8_lossy(&out).into_owned());
            }
            for l in [&["LRANGE", "t2", "0", "-1"][..], &["LRANGE", "{b}list", "0", "-1"], &["GET", "t1"]] {
                got.push(c.cmd(l));
            }
            got
        };
        let want = run(o.port, &|n| {
            let want = format!("blocked_clients:{n}\r\n");
            let deadline = Instant::now() + Duration::from_secs(10);
            while !Raw::connect(o.port).cmd(&["INFO", "clients"]).contains(&want) {
                assert!(Instant::now() < deadline);
                thread::sleep(Duration::from_millis(5));
            }
        });
        assert!(want[0].starts_with("-WRONGTYPE") && want[1] == "$3\r\nfoo\r\n", "{want:?}");
        assert_eq!(run(s.port, &|n| wait_blocked(&s, n)), want, "{form:?}");
    }
}
