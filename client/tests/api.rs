//! The client's API, run against a NeoKV and a redis-server the test starts:
//! every `RedisClient` call, typed round trips, key prefixes, the escape
//! hatch, configuration errors, timeouts and reconnects.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use common::{Kind, Server};
use neokv_client::{DefaultRedisClient, Error, RedisClient, RedisClientExt, RedisConfig};
use serde::{Deserialize, Serialize};

fn client(port: u16, prefix: Option<&str>) -> DefaultRedisClient {
    DefaultRedisClient::new(RedisConfig {
        port,
        key_prefix: prefix.map(String::from),
        timeout: Duration::from_secs(5),
        pool_size: 4,
        ..Default::default()
    })
    .unwrap()
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Order {
    id: u64,
    items: Vec<String>,
    paid: bool,
    total: f64,
}

/// Every call of the interface, on one server.
async fn interface(kind: Kind) {
    let s = Server::start(kind);
    let r = client(s.port, None);
    let k = |name: &str| format!("api:{name}");

    assert_eq!(r.get_value(&k("missing")).await.unwrap(), None, "{kind:?}");
    r.set_value(&k("s"), "hello world", None).await.unwrap();
    assert_eq!(r.get_value(&k("s")).await.unwrap().as_deref(), Some("hello world"));
    assert!(r.exists(&k("s")).await.unwrap());
    assert!(!r.exists(&k("missing")).await.unwrap());

    r.set_value(&k("ttl"), "v", Some(Duration::from_secs(30))).await.unwrap();
    let pttl: i64 =
        redis::from_redis_value(&r.command(redis::cmd("PTTL").arg(r.key(&k("ttl")))).await.unwrap()).unwrap();
    assert!(pttl > 25_000 && pttl <= 30_000, "{kind:?}: PTTL {pttl}");
    assert!(r.expire(&k("s"), Duration::from_millis(150)).await.unwrap());
    assert!(!r.expire(&k("missing"), Duration::from_secs(1)).await.unwrap());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!r.exists(&k("s")).await.unwrap(), "{kind:?}: the key outlived its expiry");

    assert_eq!(r.incr(&k("n")).await.unwrap(), 1);
    assert_eq!(r.incr(&k("n")).await.unwrap(), 2);
    assert_eq!(r.decr(&k("n")).await.unwrap(), 1);
    assert_eq!(r.decr(&k("m")).await.unwrap(), -1);
    r.set_value(&k("t"), "text", None).await.unwrap();
    let e = r.incr(&k("t")).await.unwrap_err();
    assert!(matches!(e, Error::Redis(_)) && e.to_string().contains("not an integer"), "{kind:?}: {e}");

    assert_eq!(r.delete(&[&k("n"), &k("m"), &k("missing")]).await.unwrap(), 2);
    assert_eq!(r.delete(&[]).await.unwrap(), 0);

    assert!(r.hset(&k("h"), "f1", "1").await.unwrap());
    assert!(!r.hset(&k("h"), "f1", "one").await.unwrap());
    assert!(r.hset(&k("h"), "f2", "2").await.unwrap());
    assert_eq!(r.hget(&k("h"), "f1").await.unwrap().as_deref(), Some("one"));
    assert_eq!(r.hget(&k("h"), "nope").await.unwrap(), None);
    let all = r.hget_all(&k("h")).await.unwrap();
    assert_eq!(all, HashMap::from([("f1".to_string(), "one".to_string()), ("f2".to_string(), "2".to_string())]));
    assert!(r.hget_all(&k("missing")).await.unwrap().is_empty());

    assert_eq!(r.rpush(&k("l"), &["b", "c"]).await.unwrap(), 2);
    assert_eq!(r.lpush(&k("l"), &["a", "z"]).await.unwrap(), 4);
    assert_eq!(r.lrange(&k("l"), 0, -1).await.unwrap(), vec!["z", "a", "b", "c"]);
    assert_eq!(r.lrange(&k("l"), -2, -1).await.unwrap(), vec!["b", "c"]);
    assert_eq!(r.lpop(&k("l")).await.unwrap().as_deref(), Some("z"));
    assert_eq!(r.lpop(&k("missing")).await.unwrap(), None);

    assert_eq!(r.sadd(&k("set"), &["x", "y", "x"]).await.unwrap(), 2);
    assert_eq!(r.sadd(&k("set"), &["y", "w"]).await.unwrap(), 1);
    let members: HashSet<String> = ["x", "y", "w"].iter().map(|s| s.to_string()).collect();
    assert_eq!(r.smembers(&k("set")).await.unwrap(), members);

    // A wrong type is the server's error, passed on.
    let e = r.lpush(&k("h"), &["x"]).await.unwrap_err();
    assert!(e.to_string().contains("WRONGTYPE"), "{kind:?}: {e}");
    // The escape hatch sends anything.
    assert_eq!(r.command(&redis::cmd("PING")).await.unwrap(), redis::Value::SimpleString("PONG".into()));
}

#[tokio::test]
async fn every_call_against_neokv() {
    interface(Kind::NeoKv).await;
}

#[tokio::test]
async fn every_call_against_redis() {
    interface(Kind::Redis).await;
}

/// Typed values: structs via serde, integers, floats, booleans, missing keys,
/// and values that are not of the type asked for.
async fn typed(kind: Kind) {
    let s = Server::start(kind);
    let r = client(s.port, None);
    let order = Order { id: 42, items: vec!["tea".into(), "cake".into()], paid: false, total: 12.5 };
    r.set("order:42", &order, None).await.unwrap();
    assert_eq!(r.get::<Order>("order:42").await.unwrap(), Some(order));
    assert_eq!(r.get::<Order>("order:43").await.unwrap(), None);

    r.set("count", &41i64, None).await.unwrap();
    assert_eq!(r.incr("count").await.unwrap(), 42, "{kind:?}: integers are stored as Redis integers");
    assert_eq!(r.get::<i64>("count").await.unwrap(), Some(42));
    assert_eq!(r.get::<u8>("count").await.unwrap(), Some(42));
    assert_eq!(r.get::<String>("count").await.unwrap().as_deref(), Some("42"));
    r.set("pi", &3.25f64, None).await.unwrap();
    assert_eq!(r.get::<f64>("pi").await.unwrap(), Some(3.25));
    let incr: String =
        redis::from_redis_value(&r.command(redis::cmd("INCRBYFLOAT").arg("pi").arg("0.5")).await.unwrap()).unwrap();
    assert_eq!(incr, "3.75");
    r.set("flag", &true, None).await.unwrap();
    assert_eq!(r.get::<bool>("flag").await.unwrap(), Some(true));
    r.set("name", "plain text", None).await.unwrap();
    assert_eq!(r.get_value("name").await.unwrap().as_deref(), Some("plain text"));
    assert_eq!(r.get::<String>("name").await.unwrap().as_deref(), Some("plain text"));

    for (key, err_type) in [("name", "i64"), ("name", "Order"), ("pi", "i64"), ("name", "bool")] {
        let e = match err_type {
            "i64" => r.get::<i64>(key).await.unwrap_err(),
            "bool" => r.get::<bool>(key).await.unwrap_err(),
            _ => r.get::<Order>(key).await.unwrap_err(),
        };
        match &e {
            Error::Decode { key: k, type_name, .. } => {
                assert_eq!(k, key);
                assert!(type_name.ends_with(err_type), "{type_name}");
            }
            other => panic!("{kind:?}: expected a decode error, got {other}"),
        }
        assert!(e.to_string().contains(key) && e.to_string().contains(err_type), "{e}");
    }
}

#[tokio::test]
async fn typed_values_against_neokv() {
    typed(Kind::NeoKv).await;
}

#[tokio::test]
async fn typed_values_against_redis() {
    typed(Kind::Redis).await;
}

/// Every key the client sends carries the prefix; the escape hatch's do not.
#[tokio::test]
async fn keys_get_the_configured_prefix() {
    let s = Server::start(Kind::NeoKv);
    let prefixed = client(s.port, Some("neton"));
    let bare = client(s.port, None);
    prefixed.set("lock:order:1", "t", None).await.unwrap();
    prefixed.hset("h", "f", "v").await.unwrap();
    prefixed.rpush("l", &["a"]).await.unwrap();
    prefixed.sadd("s", &["a"]).await.unwrap();
    prefixed.incr("n").await.unwrap();
    assert_eq!(bare.get_value("neton:lock:order:1").await.unwrap().as_deref(), Some("t"));
    assert_eq!(bare.get_value("lock:order:1").await.unwrap(), None);
    let keys: Vec<String> = redis::from_redis_value(&bare.command(redis::cmd("KEYS").arg("*")).await.unwrap()).unwrap();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, vec!["neton:h", "neton:l", "neton:lock:order:1", "neton:n", "neton:s"]);
    assert_eq!(prefixed.key("x"), "neton:x");
    assert_eq!(prefixed.delete(&["lock:order:1", "h"]).await.unwrap(), 2);
}

/// Database selection and AUTH reach the server (redis-server: NeoKV serves
/// database 0 only until SELECT of others exists).
#[tokio::test]
async fn database_and_password_are_used() {
    let s = Server::start(Kind::Redis);
    let db1 = DefaultRedisClient::new(RedisConfig { port: s.port, database: 1, ..Default::default() }).unwrap();
    let db0 = client(s.port, None);
    db1.set_value("where", "one", None).await.unwrap();
    assert_eq!(db0.get_value("where").await.unwrap(), None);
    assert_eq!(db1.get_value("where").await.unwrap().as_deref(), Some("one"));
    db0.command(redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("s3cret")).await.unwrap();
    let with =
        DefaultRedisClient::new(RedisConfig { port: s.port, password: Some("s3cret".into()), ..Default::default() })
            .unwrap();
    assert!(with.set_value("k", "v", None).await.is_ok());
    let without = client(s.port, None);
    let e = without.get_value("k").await.unwrap_err();
    assert!(e.to_string().contains("NOAUTH") || e.to_string().contains("Authentication"), "{e}");
}

/// A bad configuration is refused up front, naming the setting.
#[test]
fn bad_configs_are_refused() {
    for (c, says) in [
        (RedisConfig { pool_size: 0, ..Default::default() }, "poolSize"),
        (RedisConfig { timeout: Duration::ZERO, ..Default::default() }, "timeout"),
        (RedisConfig { host: String::new(), ..Default::default() }, "host"),
        (RedisConfig { cluster_nodes: vec!["nohost".into()], ..Default::default() }, "clusterNodes"),
    ] {
        let e = DefaultRedisClient::new(c).unwrap_err();
        assert!(matches!(e, Error::Config(_)) && e.to_string().contains(says), "{e}");
    }
}

/// A server that accepts and never answers costs a call its timeout, no more.
#[tokio::test]
async fn calls_are_bounded_by_the_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let conns: Vec<_> = silent.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(3));
        drop(conns);
    });
    let r = DefaultRedisClient::new(RedisConfig { port, timeout: Duration::from_millis(300), ..Default::default() })
        .unwrap();
    let started = Instant::now();
    let e = r.get_value("k").await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(e, Error::Timeout(_) | Error::Pool(_)), "{e}");
    assert!(took >= Duration::from_millis(250) && took < Duration::from_millis(1500), "took {took:?}");
    drop(held);
}

/// Connections broken by a server restart are replaced: calls work again
/// once the server is back (a call in between fails, never hangs).
#[tokio::test]
async fn the_pool_reconnects_after_a_restart() {
    for kind in [Kind::NeoKv, Kind::Redis] {
        let mut s = Server::start(kind);
        let r = client(s.port, None);
        r.set_value("k", "before", None).await.unwrap();
        s.restart();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match r.set_value("k", "after", None).await {
                Ok(()) => break,
                Err(e) => assert!(Instant::now() < deadline, "{kind:?}: no reconnect in 10 s: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(r.get_value("k").await.unwrap().as_deref(), Some("after"));
    }
}

/// `remember`: a hit is served from the server; concurrent misses of one key
/// share ONE loader call (singleflight) and all get its value; a value that
/// does not decode counts as a miss; a loader's error reaches every waiter.
async fn remember(kind: Kind) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let s = Server::start(kind);
    let r = Arc::new(client(s.port, Some("app")));
    let calls = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (r, calls) = (r.clone(), calls.clone());
        tasks.push(tokio::spawn(async move {
            r.remember("report", Duration::from_secs(60), || async move {
                calls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok::<_, std::io::Error>(Order { id: 1, items: vec!["x".into()], paid: true, total: 1.5 })
            })
            .await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().id, 1);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "{kind:?}: 20 concurrent misses ran the loader more than once");
    // Stored with its TTL: the next call is a hit.
    let pttl: i64 = redis::from_redis_value(&r.command(redis::cmd("PTTL").arg("app:report")).await.unwrap()).unwrap();
    assert!(pttl > 55_000, "{kind:?}: PTTL {pttl}");
    let again: Order =
        r.remember("report", Duration::from_secs(60), || async { Err::<Order, _>("must not run") }).await.unwrap();
    assert!(again.paid);
    // Undecodable: loaded again and replaced.
    r.set_value("n", "not a number", None).await.unwrap();
    let n: i64 = r.remember("n", Duration::from_secs(60), || async { Ok::<_, String>(7) }).await.unwrap();
    assert_eq!((n, r.get::<i64>("n").await.unwrap()), (7, Some(7)));
    // A failing loader: every waiter sees the failure, nothing is stored.
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move {
            r.remember("broken", Duration::from_secs(60), || async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                Err::<i64, _>("database down")
            })
            .await
        }));
    }
    for t in tasks {
        let e = t.await.unwrap().unwrap_err();
        assert!(
            matches!(&e, Error::Load { key, .. } if key == "broken") && e.to_string().contains("database down"),
            "{e}"
        );
    }
    assert!(!r.exists("broken").await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn remember_against_neokv() {
    remember(Kind::NeoKv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn remember_against_redis() {
    remember(Kind::Redis).await;
}

/// The pipeline DSL: every queued command in order with its own result (a
/// refused one does not hide the others'), keys prefixed, all in ONE round
/// trip: through a proxy that delays each chunk the client sends by 200 ms,
/// 40 commands take well under the 8 s that one round trip each would.
async fn pipelines(kind: Kind) {
    let s = Server::start(kind);
    let r = client(s.port, Some("p"));
    let replies = r
        .pipeline(|p| {
            p.set("a", &5, None).incr("a").decr("b").hset("h", "f", "v").rpush("l", "x").lpush("l", "w");
            p.sadd("s", "m").incr("h").set("t", "x", Some(Duration::from_secs(9))).delete("a");
        })
        .await
        .unwrap();
    use redis::Value::{Int, Okay};
    let ok: Vec<Option<redis::Value>> = replies.iter().map(|r| r.as_ref().ok().cloned()).collect();
    assert_eq!(
        ok,
        vec![
            Some(Okay),
            Some(Int(6)),
            Some(Int(-1)),
            Some(Int(1)),
            Some(Int(1)),
            Some(Int(2)),
            Some(Int(1)),
            None,
            Some(Okay),
            Some(Int(1))
        ],
        "{kind:?}"
    );
    assert!(replies[7].as_ref().unwrap_err().to_string().contains("WRONGTYPE"), "{kind:?}");
    assert_eq!(r.lrange("l", 0, -1).await.unwrap(), vec!["w", "x"]);
    assert_eq!(r.get_value("b").await.unwrap().as_deref(), Some("-1"));
    let bare = client(s.port, None);
    assert_eq!(bare.hget("p:h", "f").await.unwrap().as_deref(), Some("v"));
    assert!(r.pipeline(|_| {}).await.unwrap().is_empty());

    // One round trip.
    let slow = DefaultRedisClient::new(RedisConfig {
        port: common::slow_proxy(s.port, Duration::from_millis(200)),
        pool_size: 1,
        timeout: Duration::from_secs(20),
        ..Default::default()
    })
    .unwrap();
    slow.get_value("warm").await.unwrap();
    let started = Instant::now();
    let replies = slow
        .pipeline(|p| {
            for _ in 0..40 {
                p.incr("rt");
            }
        })
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(replies.last().unwrap().as_ref().unwrap(), &Int(40));
    assert!(took < Duration::from_secs(3), "{kind:?}: 40 pipelined commands took {took:?} (a round trip each?)");
    let started = Instant::now();
    let t = slow.transaction(|p| {
        for _ in 0..40 {
            p.incr("rt");
        }
    });
    let replies = t.await.unwrap();
    assert_eq!(replies.len(), 40);
    assert!(started.elapsed() < Duration::from_secs(3), "{kind:?}: the transaction took {:?}", started.elapsed());
}

#[tokio::test]
async fn pipelines_against_neokv() {
    pipelines(Kind::NeoKv).await;
}

#[tokio::test]
async fn pipelines_against_redis() {
    pipelines(Kind::Redis).await;
}

/// Transactions: MULTI/EXEC, per-command results; nothing of another client
/// runs between their commands; a command refused at queue time aborts all.
async fn transactions(kind: Kind) {
    use std::sync::Arc;
    let s = Server::start(kind);
    let r = Arc::new(client(s.port, None));
    let execs = exec_calls(&r).await;
    let replies = r
        .transaction(|t| {
            t.set("x", "1", None).incr("x").hset("x", "f", "v").incr("x");
        })
        .await
        .unwrap();
    assert_eq!(replies.len(), 4);
    assert!(replies[2].as_ref().unwrap_err().to_string().contains("WRONGTYPE"), "{kind:?}");
    assert_eq!(
        replies[3].as_ref().unwrap(),
        &redis::Value::Int(3),
        "{kind:?}: a failing command does not stop the others"
    );
    assert_eq!(exec_calls(&r).await, execs + 1, "{kind:?}: the transaction did not run as MULTI/EXEC");
    r.pipeline(|p| {
        p.incr("x2").incr("x2");
    })
    .await
    .unwrap();
    assert_eq!(exec_calls(&r).await, execs + 1, "{kind:?}: a plain pipeline must not be a transaction");
    // Two keys always moved together: a reader never sees one without the other.
    let writer = {
        let r = r.clone();
        tokio::spawn(async move {
            for _ in 0..300 {
                r.transaction(|t| {
                    t.incr("{acct}a").decr("{acct}b");
                })
                .await
                .unwrap();
            }
        })
    };
    let mut read = redis::pipe();
    read.cmd("GET").arg("{acct}a").cmd("GET").arg("{acct}b");
    let mut seen = 0;
    while !writer.is_finished() {
        // Both read in one MULTI/EXEC: a consistent pair, so the sum is 0 unless
        // a transfer was seen half done.
        let pair = r.exec_pipeline(&read, true).await.unwrap();
        let n = |v: &Result<redis::Value, Error>| -> i64 {
            redis::from_redis_value::<Option<i64>>(v.as_ref().unwrap()).unwrap().unwrap_or(0)
        };
        assert_eq!(n(&pair[0]) + n(&pair[1]), 0, "{kind:?}: a transfer seen half done");
        seen += 1;
    }
    assert!(seen > 0);
    writer.await.unwrap();
    let (a, b): (i64, i64) = (r.get("{acct}a").await.unwrap().unwrap(), r.get("{acct}b").await.unwrap().unwrap());
    assert_eq!((a, b), (300, -300));
    // Queue-time refusal: the whole transaction is refused, nothing applied.
    let mut pipe = redis::pipe();
    pipe.cmd("SET").arg("y").arg("1").cmd("INCR");
    let e = r.exec_pipeline(&pipe, true).await.unwrap_err();
    let e = e.to_string();
    assert!(e.contains("EXECABORT") || e.contains("wrong number of arguments"), "{kind:?}: {e}");
    assert_eq!(r.get_value("y").await.unwrap(), None);
}

/// EXEC calls so far (INFO commandstats).
async fn exec_calls(r: &DefaultRedisClient) -> u64 {
    let info: String =
        redis::from_redis_value(&r.command(redis::cmd("INFO").arg("commandstats")).await.unwrap()).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_exec:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_against_neokv() {
    transactions(Kind::NeoKv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_against_redis() {
    transactions(Kind::Redis).await;
}
