//! Databases 0..15 through the real binary, against redis-server (started
//! with Redis's default 16 databases): SELECT, MOVE, SWAPDB, COPY ... DB,
//! FLUSHDB and FLUSHALL, DBSIZE, KEYS, SCAN, RANDOMKEY and INFO keyspace per
//! database, and what follows a database (blocked clients, WATCH, keyspace
//! events, transactions and scripts), byte for byte where Redis is ordered.

use std::time::Duration;

use crate::common::{blocked, fuzz_seed, reply, same_lines, same_replies, wait_blocked, Oracle, Raw, Server, XorShift};

const KEYS: &[&str] = &["s", "l", "h", "z", "x", "t"];

fn cmd(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

/// A database number, mostly in range, sometimes not (or not a number).
fn some_db(rng: &mut XorShift) -> String {
    match rng.below(20) {
        0 => "16".into(),
        1 => "-1".into(),
        2 => "x".into(),
        3 => "99999999999".into(),
        _ => rng.below(4).to_string(),
    }
}

/// One random command over a few keys of every type in a few databases.
fn step(rng: &mut XorShift) -> Vec<Vec<u8>> {
    let k = rng.pick(KEYS);
    let k2 = rng.pick(KEYS);
    let v = rng.below(5).to_string();
    match rng.below(22) {
        0..=2 => cmd(&["SELECT", &some_db(rng)]),
        3 => cmd(&["SET", k, &v]),
        4 => cmd(&["RPUSH", k, &v, "b"]),
        5 => cmd(&["HSET", k, "f", &v]),
        6 => cmd(&["ZADD", k, &v, "m"]),
        7 => cmd(&["XADD", k, &format!("{}-1", 1 + rng.below(9)), "f", &v]),
        8 => cmd(&["SADD", k, &v]),
        9 => cmd(&["MOVE", k, &some_db(rng)]),
        10 => cmd(&["SWAPDB", &some_db(rng), &some_db(rng)]),
        11 => {
            let mut c = cmd(&["COPY", k, k2]);
            if rng.chance(60) {
                c.extend(cmd(&["DB", &some_db(rng)]));
            }
            if rng.chance(40) {
                c.extend(cmd(&["REPLACE"]));
            }
            c
        }
        12 => cmd(&["DEL", k]),
        13 => cmd(&["RENAME", k, k2]),
        14 => cmd(&["PEXPIREAT", k, "4102444800000"]),
        15 => cmd(&["FLUSHDB"]),
        16 if rng.chance(20) => cmd(&["FLUSHALL"]),
        17 => cmd(&["DBSIZE"]),
        18 => cmd(&["EXISTS", k, k2]),
        19 => cmd(&["TYPE", k]),
        20 => cmd(&["PEXPIRETIME", k]),
        _ => cmd(&["GET", k]),
    }
}

/// What `db` holds, read the same way from both servers: its size, its
/// sorted key names, and each key's type, expiry and content (in an order
/// Redis fixes).
fn db_contents(c: &mut Raw, db: usize) -> Vec<String> {
    let mut out = vec![c.cmd(&["SELECT", &db.to_string()]), c.cmd(&["DBSIZE"])];
    let mut names = keys_of(c);
    names.sort();
    for k in &names {
        out.push(format!("{k}: {} {}", c.cmd(&["TYPE", k]), c.cmd(&["PEXPIRETIME", k])));
        let t = c.cmd(&["TYPE", k]);
        let read: &[&str] = match t.trim() {
            "+string" => &["GET", k],
            "+list" => &["LRANGE", k, "0", "-1"],
            "+hash" => &["HGET", k, "f"],
            "+zset" => &["ZRANGE", k, "0", "-1", "WITHSCORES"],
            "+stream" => &["XRANGE", k, "-", "+"],
            _ => &["SCARD", k],
        };
        out.push(c.cmd(read));
    }
    out
}

/// Every key name of the selected database, by a full SCAN.
fn keys_of(c: &mut Raw) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut names = Vec::new();
    loop {
        let r = c.cmd(&["SCAN", &cursor, "COUNT", "3"]);
        let lines: Vec<&str> = r.split("\r\n").collect();
        // *2, $n, cursor, *m, ($len, name)*
        cursor = lines[2].to_string();
        names.extend(lines[4..].iter().skip(1).step_by(2).map(|s| s.to_string()));
        if cursor == "0" {
            break;
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// `dbN:keys=..,expires=..` of each non-empty database (avg_ttl is an
/// estimate in Redis).
fn keyspace_lines(c: &mut Raw) -> Vec<String> {
    let info = c.cmd(&["INFO", "keyspace"]);
    info.lines().filter(|l| l.starts_with("db")).map(|l| l.split(",avg_ttl").next().unwrap_or(l).to_string()).collect()
}

#[test]
fn databases_match_redis() {
    let seed = fuzz_seed("databases_match_redis");
    println!("databases_match_redis: seed {seed} (NEOKV_SEED={seed} to replay)");
    let mut rng = XorShift::new(seed);
    // Two regions: FLUSHALL, FLUSHDB and SWAPDB are cross-region writes.
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    // A second client on each: its selected database is its own.
    let (mut n2, mut r2) = (s.raw(), o.raw());
    for round in 0..25 {
        let what = format!("seed {seed} round {round}");
        let cmds: Vec<Vec<Vec<u8>>> = (0..40).map(|_| step(&mut rng)).collect();
        same_replies(&mut n, &mut r, &cmds, &what);
        let other: Vec<Vec<Vec<u8>>> = (0..6).map(|_| step(&mut rng)).collect();
        same_replies(&mut n2, &mut r2, &other, &what);
        for db in 0..4 {
            assert_eq!(db_contents(&mut n, db), db_contents(&mut r, db), "{what}: database {db}");
        }
        assert_eq!(keyspace_lines(&mut n), keyspace_lines(&mut r), "{what}: INFO keyspace");
        // Back to a random database for the next round's commands.
        let back = rng.below(4).to_string();
        same_lines(&mut n, &mut r, &[&["SELECT", &back]]);
    }
}

#[test]
fn database_commands_answer_as_redis() {
    let s = Server::start_with(&["--cores", "2"]);
    let o = Oracle::start();
    let (mut n, mut r) = (s.raw(), o.raw());
    same_lines(
        &mut n,
        &mut r,
        &[
            &["SELECT", "15"],
            &["SELECT", "16"],
            &["SELECT", "-1"],
            &["SELECT", "1.5"],
            &["SELECT", "2147483648"],
            &["SELECT", " 1"],
            &["SELECT", "1"],
            &["SET", "k", "v"],
            &["MOVE", "k", "1"],
            &["MOVE", "k", "16"],
            &["MOVE", "k", "x"],
            &["MOVE", "nokey", "1"],
            &["MOVE", "k", "2"],
            &["MOVE", "k", "2"],
            &["SELECT", "2"],
            &["GET", "k"],
            &["SET", "k", "other"],
            &["SELECT", "1"],
            &["SET", "k", "again"],
            &["MOVE", "k", "2"],
            &["GET", "k"],
            &["SWAPDB", "1", "2"],
            &["GET", "k"],
            &["SWAPDB", "1", "1"],
            &["SWAPDB", "x", "1"],
            &["SWAPDB", "1", "x"],
            &["SWAPDB", "1", "16"],
            &["SWAPDB", "-1", "1"],
            &["SWAPDB", "1"],
            &["COPY", "k", "k"],
            &["COPY", "k", "k", "DB", "1"],
            &["COPY", "k", "k", "DB", "3"],
            &["COPY", "k", "k", "DB", "3"],
            &["COPY", "k", "k", "DB", "3", "REPLACE"],
            &["COPY", "k", "k2", "DB", "16"],
            &["COPY", "k", "k2", "DB", "x"],
            &["COPY", "k", "k2", "DB"],
            &["SELECT", "3"],
            &["GET", "k"],
            &["DBSIZE"],
            &["FLUSHDB"],
            &["DBSIZE"],
            &["SELECT", "1"],
            &["DBSIZE"],
            &["RPUSH", "list", "a", "b", "c"],
            &["HSET", "hash", "f", "v"],
            &["ZADD", "zs", "1", "a", "2", "b"],
            &["SADD", "set", "x", "y"],
            &["MOVE", "list", "0"],
            &["MOVE", "hash", "0"],
            &["MOVE", "zs", "0"],
            &["COPY", "set", "set", "DB", "0"],
            &["EXPIRE", "set", "1000"],
            &["MOVE", "set", "4"],
            &["SELECT", "4"],
            &["TTL", "set"],
            &["SMISMEMBER", "set", "x", "y", "z"],
            &["SELECT", "0"],
            &["LRANGE", "list", "0", "-1"],
            &["HGETALL", "hash"],
            &["ZRANGE", "zs", "0", "-1", "WITHSCORES"],
            &["SCARD", "set"],
            &["SELECT", "1"],
            &["EXISTS", "list", "hash", "zs", "set"],
            &["MULTI"],
            &["SELECT", "5"],
            &["SET", "in5", "x"],
            &["SELECT", "6"],
            &["SET", "in6", "y"],
            &["EXEC"],
            &["GET", "in6"],
            &["EXISTS", "in5"],
            &["SELECT", "5"],
            &["GET", "in5"],
            &["MULTI"],
            &["SELECT", "99"],
            &["GET", "in5"],
            &["EXEC"],
            &["EVAL", "redis.call('select', 6); return redis.call('get', 'in6')", "0"],
            &["GET", "in5"],
            &["EVAL", "return redis.call('select', 77)", "0"],
            &["EVAL_RO", "redis.call('select', 5); return redis.call('get', 'in5')", "0"],
            &["EVAL", "redis.call('select', 7); redis.call('set', 'bys', '1'); return 1", "0"],
            &["SELECT", "7"],
            &["GET", "bys"],
            // A script's SELECT is its own, in a transaction too.
            &["SELECT", "0"],
            &["SET", "k", "in0"],
            &["MULTI"],
            &["EVAL", "redis.call('select', '1'); return 1", "0"],
            &["GET", "k"],
            &["XADD", "st", "1-1", "f", "v"],
            &["EXEC"],
            &["XLEN", "st"],
            // RESET goes back to database 0.
            &["SELECT", "3"],
            &["SET", "rk", "1"],
            &["RESET"],
            &["GET", "rk"],
            &["FLUSHALL"],
            &["DBSIZE"],
            &["SELECT", "5"],
            &["DBSIZE"],
        ],
    );
    assert_eq!(keyspace_lines(&mut n), keyspace_lines(&mut r));
    // CLIENT LIST shows the selected database.
    let list = n.cmd(&["CLIENT", "INFO"]);
    assert!(list.contains(" db=5 "), "{list}");
}

#[test]
fn keys_randomkey_and_scan_stay_in_their_database() {
    let s = Server::start_with(&["--cores", "2"]);
    let mut c = s.raw();
    for db in 0..3 {
        c.cmd(&["SELECT", &db.to_string()]);
        for i in 0..50 {
            c.cmd(&["SET", &format!("d{db}:{i}"), "v"]);
        }
    }
    for db in 0..3 {
        c.cmd(&["SELECT", &db.to_string()]);
        let prefix = format!("d{db}:");
        let mut names = keys_of(&mut c);
        names.sort();
        assert_eq!(names.len(), 50, "SCAN of database {db}");
        assert!(names.iter().all(|n| n.starts_with(&prefix)), "SCAN of database {db}: {names:?}");
        let keys = c.cmd(&["KEYS", "*"]);
        assert!(keys.starts_with("*50\r\n") && keys.matches(&prefix).count() == 50, "KEYS of database {db}");
        for _ in 0..20 {
            let k = c.cmd(&["RANDOMKEY"]);
            assert!(k.contains(&prefix), "RANDOMKEY of database {db}: {k}");
        }
        assert_eq!(c.cmd(&["DBSIZE"]), ":50\r\n");
    }
    c.cmd(&["SELECT", "9"]);
    assert_eq!(c.cmd(&["RANDOMKEY"]), "$-1\r\n", "an empty database has no random key");
    assert_eq!(c.cmd(&["KEYS", "*"]), "*0\r\n");
    // FLUSHDB empties one database only; big ones by ranges (more than a
    // thousand keys) as well as small ones.
    c.cmd(&["SELECT", "1"]);
    for i in 0..1500 {
        c.cmd(&["RPUSH", &format!("big{i}"), "a", "b"]);
    }
    assert_eq!(c.cmd(&["DBSIZE"]), ":1550\r\n");
    assert_eq!(c.cmd(&["FLUSHDB"]), "+OK\r\n");
    assert_eq!(c.cmd(&["DBSIZE"]), ":0\r\n");
    assert_eq!(c.cmd(&["LRANGE", "big7", "0", "-1"]), "*0\r\n");
    for db in [0, 2] {
        c.cmd(&["SELECT", &db.to_string()]);
        assert_eq!(c.cmd(&["DBSIZE"]), ":50\r\n", "FLUSHDB of 1 left database {db} alone");
    }
}

#[test]
fn blocked_clients_watch_and_events_follow_the_database() {
    let s = Server::start_with(&["--cores", "2"]);
    let mut c = s.raw();
    // A pop blocked in database 1 is not woken by a push in database 0.
    let mut b = s.raw();
    b.cmd(&["SELECT", "1"]);
    b.send_cmd(&[b"BLPOP", b"q", b"0"]);
    wait_blocked(&s, 1);
    c.cmd(&["RPUSH", "q", "in0"]);
    std::thread::sleep(Duration::from_millis(100));
    c.cmd(&["SELECT", "1"]);
    c.cmd(&["RPUSH", "q", "in1"]);
    assert_eq!(reply(&mut b), "*2\r\n$1\r\nq\r\n$3\r\nin1\r\n");
    c.cmd(&["SELECT", "0"]);
    assert_eq!(c.cmd(&["LRANGE", "q", "0", "-1"]), "*1\r\n$3\r\nin0\r\n", "the push in 0 stayed there");
    // SWAPDB serves a client blocked on a key the other database holds.
    let mut b2 = blocked(&s, &["BLPOP", "w", "0"]);
    wait_blocked(&s, 1);
    c.cmd(&["SELECT", "2"]);
    c.cmd(&["RPUSH", "w", "from2"]);
    assert_eq!(c.cmd(&["SWAPDB", "0", "2"]), "+OK\r\n");
    assert_eq!(reply(&mut b2), "*2\r\n$1\r\nw\r\n$5\r\nfrom2\r\n");
    // After the swap, a push to database 0 (now what was 2) wakes a client of 0.
    let mut b3 = blocked(&s, &["BLPOP", "w2", "0"]);
    wait_blocked(&s, 1);
    c.cmd(&["SELECT", "0"]);
    c.cmd(&["RPUSH", "w2", "x"]);
    assert_eq!(reply(&mut b3), "*2\r\n$2\r\nw2\r\n$1\r\nx\r\n");
    assert_eq!(c.cmd(&["SWAPDB", "0", "2"]), "+OK\r\n");

    // WATCH, against redis-server: a write to the same name in another
    // database does not touch the watched key; SWAPDB does.
    let o = Oracle::start();
    let pair = |script: &[(u8, &[&str])]| {
        let (mut n1, mut n2, mut r1, mut r2) = (s.raw(), s.raw(), o.raw(), o.raw());
        for (i, (who, line)) in script.iter().enumerate() {
            let (nc, rc) = if *who == 1 { (&mut n1, &mut r1) } else { (&mut n2, &mut r2) };
            assert_eq!(nc.cmd(line), rc.cmd(line), "step {i}: client {who}: {line:?}");
        }
    };
    pair(&[
        (1, &["SELECT", "3"]),
        (1, &["SET", "wk", "1"]),
        (1, &["WATCH", "wk"]),
        (2, &["SELECT", "4"]),
        (2, &["SET", "wk", "other"]),
        (1, &["MULTI"]),
        (1, &["GET", "wk"]),
        (1, &["EXEC"]),
        (1, &["WATCH", "wk"]),
        (2, &["SWAPDB", "3", "5"]),
        (1, &["MULTI"]),
        (1, &["GET", "wk"]),
        (1, &["EXEC"]),
        (1, &["WATCH", "nothere"]),
        (2, &["SWAPDB", "3", "5"]),
        (1, &["MULTI"]),
        (1, &["GET", "wk"]),
        (1, &["EXEC"]),
        (1, &["WATCH", "wk"]),
        (2, &["SELECT", "3"]),
        (2, &["SET", "wk", "2"]),
        (1, &["MULTI"]),
        (1, &["GET", "wk"]),
        (1, &["EXEC"]),
        // SWAPDB of a database with itself does nothing at all.
        (1, &["WATCH", "wk"]),
        (2, &["SWAPDB", "3", "3"]),
        (1, &["MULTI"]),
        (1, &["GET", "wk"]),
        (1, &["EXEC"]),
        // A key deleted before a swap in the same transaction is modified.
        (1, &["WATCH", "wk"]),
        (2, &["MULTI"]),
        (2, &["DEL", "wk"]),
        (2, &["SWAPDB", "3", "5"]),
        (2, &["EXEC"]),
        (1, &["MULTI"]),
        (1, &["SET", "x", "1"]),
        (1, &["EXEC"]),
        (1, &["FLUSHALL"]),
    ]);

    // Keyspace events name the key's database.
    let (mut sn, mut sr) = (s.raw(), o.raw());
    for c in [&mut sn, &mut sr] {
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEg"]);
    }
    let (mut subn, mut subr) = (s.raw(), o.raw());
    for sub in [&mut subn, &mut subr] {
        sub.cmd(&["PSUBSCRIBE", "__key*@*"]);
    }
    let lines: &[&[&str]] = &[
        &["SELECT", "6"],
        &["SET", "ev", "1"],
        &["EXPIRE", "ev", "100"],
        &["MOVE", "ev", "7"],
        &["SELECT", "7"],
        &["COPY", "ev", "ev2", "DB", "8"],
        &["DEL", "ev"],
    ];
    same_lines(&mut sn, &mut sr, lines);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        got.push(reply(&mut subn));
        want.push(reply(&mut subr));
    }
    assert_eq!(got, want, "keyspace events");
    for c in [&mut sn, &mut sr] {
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", ""]);
    }
}

#[test]
fn databases_and_the_swap_survive_kill_9() {
    let mut s = Server::start_with(&["--cores", "2"]);
    let mut c = s.raw();
    for db in 0..4 {
        c.cmd(&["SELECT", &db.to_string()]);
        c.cmd(&["SET", "who", &format!("db{db}")]);
        c.cmd(&["HSET", &format!("h{db}"), "f", "v"]);
        c.cmd(&["SET", "ttl", "x", "EX", "1000"]);
    }
    assert_eq!(c.cmd(&["SWAPDB", "1", "3"]), "+OK\r\n");
    s.kill_and_restart();
    let mut c = s.raw();
    let want = ["db0", "db3", "db2", "db1"];
    for (db, w) in want.iter().enumerate() {
        c.cmd(&["SELECT", &db.to_string()]);
        assert_eq!(c.cmd(&["GET", "who"]), format!("${}\r\n{w}\r\n", w.len()), "database {db} after restart");
        assert_eq!(c.cmd(&["DBSIZE"]), ":3\r\n");
        assert_eq!(c.cmd(&["HGET", &format!("h{}", &w[2..]), "f"]), "$1\r\nv\r\n");
    }
    let info = c.cmd(&["INFO", "keyspace"]);
    for db in 0..4 {
        assert!(info.contains(&format!("db{db}:keys=3,expires=1,")), "{info}");
    }
    assert!(!info.contains("db4:"), "{info}");
}

#[test]
fn expiry_and_garbage_collection_in_every_database() {
    let s = Server::start_with(&["--cores", "2"]);
    let mut c = s.raw();
    for db in [0, 5, 15] {
        c.cmd(&["SELECT", &db.to_string()]);
        for i in 0..20 {
            c.cmd(&["SET", &format!("e{i}"), "v", "PX", "50"]);
        }
        c.cmd(&["SET", "stay", "1"]);
    }
    // Active expiry (not a read) removes them: DBSIZE counts stored keys as
    // live only, so watch INFO's expired_keys instead.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let stats = c.cmd(&["INFO", "stats"]);
        if stats.contains("expired_keys:60\r\n") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "active expiry never reached every database: {stats}");
        std::thread::sleep(Duration::from_millis(50));
    }
    for db in [0, 5, 15] {
        c.cmd(&["SELECT", &db.to_string()]);
        assert_eq!(c.cmd(&["DBSIZE"]), ":1\r\n");
        assert_eq!(c.cmd(&["GET", "stay"]), "$1\r\n1\r\n");
    }
}

#[test]
fn a_databases_limit_is_kept() {
    let s = Server::start_with(&["--cores", "1", "--databases", "4"]);
    let mut c = s.raw();
    assert_eq!(c.cmd(&["CONFIG", "GET", "databases"]), "*2\r\n$9\r\ndatabases\r\n$1\r\n4\r\n");
    assert_eq!(c.cmd(&["SELECT", "3"]), "+OK\r\n");
    assert_eq!(c.cmd(&["SELECT", "4"]), "-ERR DB index is out of range\r\n");
    assert_eq!(c.cmd(&["SWAPDB", "0", "4"]), "-ERR DB index is out of range\r\n");
    assert!(c.cmd(&["CONFIG", "SET", "databases", "8"]).starts_with("-ERR"));
}

#[test]
fn swapdb_with_one_region_in_transactions_and_not_in_scripts() {
    let s = Server::start();
    let mut c = s.raw();
    c.cmd(&["SET", "k", "zero"]);
    assert_eq!(c.cmd(&["SWAPDB", "0", "1"]), "+OK\r\n");
    assert_eq!(c.cmd(&["GET", "k"]), "$-1\r\n");
    assert_eq!(c.cmd(&["SELECT", "1"]), "+OK\r\n");
    assert_eq!(c.cmd(&["GET", "k"]), "$4\r\nzero\r\n");
    // In a transaction, the commands after the swap see it.
    assert_eq!(c.cmd(&["MULTI"]), "+OK\r\n");
    for line in [&["SET", "t", "1"][..], &["SWAPDB", "1", "2"], &["GET", "k"], &["SELECT", "2"], &["GET", "k"]] {
        assert_eq!(c.cmd(line), "+QUEUED\r\n");
    }
    assert_eq!(c.cmd(&["EXEC"]), "*5\r\n+OK\r\n+OK\r\n$-1\r\n+OK\r\n$4\r\nzero\r\n");
    assert_eq!(c.cmd(&["GET", "t"]), "$1\r\n1\r\n", "EXEC's SELECT stays");
    let e = c.cmd(&["EVAL", "return redis.call('swapdb', 0, 1)", "0"]);
    assert!(e.starts_with("-ERR SWAPDB is not allowed from scripts"), "{e}");
}

#[test]
fn a_data_directory_with_more_databases_than_allowed_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &["--cores", "1"]);
    let mut c = s.raw();
    assert_eq!(c.cmd(&["SET", "z", "in0"]), "+OK\r\n");
    c.cmd(&["SELECT", "12"]);
    assert_eq!(c.cmd(&["SET", "k", "in12"]), "+OK\r\n");
    // Database 0's keys are now database 12's (and the other way round).
    assert_eq!(c.cmd(&["SWAPDB", "0", "12"]), "+OK\r\n");
    // (A clean stop: the check runs before the log is replayed, so after a
    // kill -9 it sees what RocksDB held, not what the replay brings back.)
    c.send_cmd(&[b"SHUTDOWN"]);
    assert!(s.wait_exit(Duration::from_secs(20)).is_some(), "SHUTDOWN stops the server");
    let err = crate::durability::refused_start(tmp.path(), &["--cores", "1", "--databases", "8"]);
    assert!(err.contains("holds keys in database 12") && err.contains("--databases 13"), "{err}");
    let s = Server::start_in(tmp.path(), &["--cores", "1", "--databases", "13"]);
    let mut c = s.raw();
    assert_eq!(c.cmd(&["GET", "k"]), "$4\r\nin12\r\n");
    c.cmd(&["SELECT", "12"]);
    assert_eq!(c.cmd(&["GET", "z"]), "$3\r\nin0\r\n");
}
