//! The distributed lock, against a NeoKV and a redis-server the test starts:
//! mutual exclusion, expired holders, NOSCRIPT fallback, wait and retry
//! bounds, fencing tokens (also across a kill -9 of NeoKV).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Kind, Server};
use neokv_client::{DefaultRedisClient, Error, LockError, LockManager, RedisClient, RedisConfig};

fn manager(port: u16) -> (Arc<DefaultRedisClient>, LockManager) {
    let c = Arc::new(
        DefaultRedisClient::new(RedisConfig {
            port,
            pool_size: 8,
            key_prefix: Some("neton".into()),
            ..Default::default()
        })
        .unwrap(),
    );
    (c.clone(), LockManager::new(c))
}

/// Calls of `cmd` so far (INFO commandstats).
async fn calls(c: &DefaultRedisClient, cmd: &str) -> u64 {
    let info: String =
        redis::from_redis_value(&c.command(redis::cmd("INFO").arg("commandstats")).await.unwrap()).unwrap();
    let prefix = format!("cmdstat_{cmd}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// Tasks on several connections increment a plain counter (GET, then SET of
/// one more: not atomic) under the lock: none is lost.
async fn exclusion(kind: Kind) {
    let s = Server::start(kind);
    let (c, locks) = manager(s.port);
    let (tasks, rounds) = (8, 25);
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (c, locks) = (c.clone(), locks.clone());
        handles.push(tokio::spawn(async move {
            for _ in 0..rounds {
                let c = c.clone();
                locks
                    .with_lock(
                        "counter",
                        Duration::from_secs(5),
                        Duration::from_secs(20),
                        Duration::from_millis(2),
                        || async move {
                            let n: i64 = c.get_value("counter").await.unwrap().map_or(0, |v| v.parse().unwrap());
                            tokio::time::sleep(Duration::from_millis(1)).await;
                            c.set_value("counter", &(n + 1).to_string(), None).await.unwrap();
                        },
                    )
                    .await
                    .unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(c.get_value("counter").await.unwrap().as_deref(), Some("200"), "{kind:?}: an increment was lost");
    // The lock key is the spec's: <prefix>:lock:<key>, and it is gone.
    assert!(!c.exists("lock:counter").await.unwrap());
    assert!(locks
        .try_lock("counter", Duration::from_secs(1), Duration::ZERO, Duration::from_millis(10))
        .await
        .unwrap()
        .is_some());
    let raw = DefaultRedisClient::new(RedisConfig { port: s.port, ..Default::default() }).unwrap();
    let token = raw.get_value("neton:lock:counter").await.unwrap().unwrap();
    assert!(token.len() >= 16, "{token}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lock_excludes_against_neokv() {
    exclusion(Kind::NeoKv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lock_excludes_against_redis() {
    exclusion(Kind::Redis).await;
}

/// A holder whose TTL ran out cannot release or renew the next holder's lock;
/// fencing tokens grow with every acquisition; a zero TTL is refused; waiting
/// polls at the retry interval and gives up on time.
async fn holders(kind: Kind) {
    let s = Server::start(kind);
    let (c, locks) = manager(s.port);
    let ms = Duration::from_millis;
    let a = locks.try_lock("order:1", ms(200), ms(0), ms(10)).await.unwrap().expect("free");
    assert!(locks.try_lock("order:1", ms(200), ms(0), ms(10)).await.unwrap().is_none(), "{kind:?}: taken twice");
    tokio::time::sleep(ms(350)).await;
    let b = locks.try_lock("order:1", Duration::from_secs(10), ms(0), ms(10)).await.unwrap().expect("expired");
    assert!(b.fencing_token() > a.fencing_token());
    assert!(!a.release().await.unwrap(), "{kind:?}: an expired holder released the next one's lock");
    assert!(
        !a.renew(Duration::from_secs(30)).await.unwrap(),
        "{kind:?}: an expired holder renewed the next one's lock"
    );
    assert!(b.renew(Duration::from_secs(30)).await.unwrap());
    let pttl: i64 =
        redis::from_redis_value(&c.command(redis::cmd("PTTL").arg("neton:lock:order:1")).await.unwrap()).unwrap();
    assert!(pttl > 20_000, "{kind:?}: renew did not extend: {pttl}");
    assert!(b.release().await.unwrap());
    assert!(!b.release().await.unwrap());

    let mut last = b.fencing_token();
    for _ in 0..5 {
        let l = locks.try_lock("order:1", ms(1000), ms(0), ms(10)).await.unwrap().unwrap();
        assert!(l.fencing_token() > last, "{kind:?}: fencing token {} after {last}", l.fencing_token());
        last = l.fencing_token();
        assert!(l.release().await.unwrap());
    }

    let e = locks.try_lock("order:1", Duration::ZERO, ms(0), ms(10)).await.unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e}");

    // Held: waiting 300 ms at 50 ms intervals gives up after 300 ms, having
    // asked about 7 times (not a busy loop).
    let held = locks.try_lock("order:2", Duration::from_secs(10), ms(0), ms(10)).await.unwrap().unwrap();
    let before = calls(&c, "evalsha").await;
    let started = Instant::now();
    assert!(locks.try_lock("order:2", ms(1000), ms(300), ms(50)).await.unwrap().is_none());
    let took = started.elapsed();
    let asked = calls(&c, "evalsha").await - before;
    assert!(took >= ms(300) && took < ms(1000), "{kind:?}: gave up after {took:?}");
    assert!((5..=9).contains(&asked), "{kind:?}: {asked} attempts in 300 ms at 50 ms intervals");
    // with_lock: not acquired is NotAcquired, and the block does not run.
    let ran = std::sync::atomic::AtomicBool::new(false);
    let r = locks
        .with_lock("order:2", ms(1000), ms(0), ms(10), || async {
            ran.store(true, std::sync::atomic::Ordering::SeqCst)
        })
        .await;
    assert!(matches!(r, Err(LockError::NotAcquired { ref key }) if key == "order:2"), "{r:?}");
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    held.release().await.unwrap();
}

#[tokio::test]
async fn holders_and_fencing_against_neokv() {
    holders(Kind::NeoKv).await;
}

#[tokio::test]
async fn holders_and_fencing_against_redis() {
    holders(Kind::Redis).await;
}

/// with_lock releases on every way out: the block's error comes back as it
/// was, and a panic goes on after the release.
#[tokio::test]
async fn with_lock_releases_on_errors_and_panics() {
    let s = Server::start(Kind::NeoKv);
    let (c, locks) = manager(s.port);
    let ms = Duration::from_millis;
    let r: Result<Result<(), String>, LockError> =
        locks.with_lock("job", ms(10_000), ms(0), ms(10), || async { Err("the block failed".to_string()) }).await;
    assert_eq!(r.unwrap(), Err("the block failed".to_string()));
    assert!(!c.exists("lock:job").await.unwrap(), "not released after the block's error");
    let locks2 = locks.clone();
    let panicked = tokio::spawn(async move {
        locks2.with_lock("job", ms(10_000), ms(0), ms(10), || async { panic!("boom") }).await.unwrap();
    })
    .await;
    assert!(panicked.unwrap_err().is_panic());
    assert!(!c.exists("lock:job").await.unwrap(), "not released after a panic");
    // A block that panics before it even makes its future.
    let locks3 = locks.clone();
    let panicked = tokio::spawn(async move {
        let block = || -> std::future::Ready<()> { panic!("before the future") };
        locks3.with_lock("job", ms(10_000), ms(0), ms(10), block).await.unwrap();
    })
    .await;
    assert!(panicked.unwrap_err().is_panic());
    assert!(!c.exists("lock:job").await.unwrap(), "not released after a panic in the block's call");
}

/// SCRIPT FLUSH: the next release gets NOSCRIPT, falls back to EVAL, and
/// loads the script again (the one after uses EVALSHA).
async fn noscript(kind: Kind) {
    let s = Server::start(kind);
    let (c, locks) = manager(s.port);
    let ms = Duration::from_millis;
    let l = locks.try_lock("k", ms(5000), ms(0), ms(10)).await.unwrap().unwrap();
    assert!(l.release().await.unwrap());
    c.command(redis::cmd("SCRIPT").arg("FLUSH")).await.unwrap();
    let (evals, shas) = (calls(&c, "eval").await, calls(&c, "evalsha").await);
    let l = locks.try_lock("k", ms(5000), ms(0), ms(10)).await.unwrap().unwrap();
    assert!(l.release().await.unwrap(), "{kind:?}: release after SCRIPT FLUSH");
    assert_eq!(calls(&c, "eval").await - evals, 2, "{kind:?}: acquire and release fall back to EVAL once each");
    let l = locks.try_lock("k", ms(5000), ms(0), ms(10)).await.unwrap().unwrap();
    assert!(l.release().await.unwrap());
    assert_eq!(calls(&c, "eval").await - evals, 2, "{kind:?}: loaded again, EVALSHA from then on");
    assert_eq!(calls(&c, "evalsha").await - shas, 4);
}

#[tokio::test]
async fn noscript_falls_back_to_eval_against_neokv() {
    noscript(Kind::NeoKv).await;
}

#[tokio::test]
async fn noscript_falls_back_to_eval_against_redis() {
    noscript(Kind::Redis).await;
}

/// NeoKV keeps the lock and its fencing counter across kill -9: a held lock
/// stays held, and the next token is larger than every one handed out before.
#[tokio::test]
async fn locks_and_fencing_tokens_survive_kill_9_of_neokv() {
    let mut s = Server::start(Kind::NeoKv);
    let (_c, locks) = manager(s.port);
    let ms = Duration::from_millis;
    let mut last = 0;
    for _ in 0..5 {
        let l = locks.try_lock("res", ms(5000), ms(0), ms(10)).await.unwrap().unwrap();
        last = l.fencing_token();
        l.release().await.unwrap();
    }
    let held = locks.try_lock("res", Duration::from_secs(60), ms(0), ms(10)).await.unwrap().unwrap();
    s.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    let again = loop {
        match locks.try_lock("res", ms(5000), ms(0), ms(10)).await {
            Ok(r) => break r,
            Err(e) => assert!(Instant::now() < deadline, "no answer after the restart: {e}"),
        }
        tokio::time::sleep(ms(50)).await;
    };
    assert!(again.is_none(), "the lock held before kill -9 was free after it");
    assert!(held.fencing_token() > last);
    assert!(held.release().await.unwrap(), "the holder's lock did not survive the restart");
    let next = locks.try_lock("res", ms(5000), ms(0), ms(10)).await.unwrap().unwrap();
    assert!(next.fencing_token() > held.fencing_token(), "fencing token went back after kill -9");
}
