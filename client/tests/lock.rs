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

/// Re-entry (spec 8.2): a with_lock of the same key nested in the block runs
/// at once, without a second SET NX, and only the outermost call releases;
/// a future joined beside the block in the same task, and a task the block
/// spawns, do not share the hold: they wait like any other caller.
async fn reentry(kind: Kind) {
    let s = Server::start(kind);
    let (c, locks) = manager(s.port);
    let ms = Duration::from_millis;
    let inner_locks = locks.clone();
    let c2 = c.clone();
    let r = locks
        .with_lock("order:7", ms(5000), ms(0), ms(10), || async move {
            assert_eq!(inner_locks.hold_depth("order:7"), 1);
            let outer = inner_locks.held_fencing_token("order:7").unwrap();
            let sets = calls(&c2, "evalsha").await;
            let inner = inner_locks
                .with_lock("order:7", ms(20_000), ms(0), ms(10), || async {
                    assert_eq!(inner_locks.hold_depth("order:7"), 2);
                    // Same holder, same fencing token.
                    assert_eq!(inner_locks.held_fencing_token("order:7"), Some(outer));
                    "inner ran"
                })
                .await
                .expect("re-entry refused");
            assert_eq!(inner, "inner ran");
            // One script (the re-entry check), which stretched the TTL to the inner 20 s.
            assert_eq!(calls(&c2, "evalsha").await - sets, 1);
            let pttl: i64 =
                redis::from_redis_value(&c2.command(redis::cmd("PTTL").arg("neton:lock:order:7")).await.unwrap())
                    .unwrap();
            assert!(pttl > 10_000, "re-entry did not stretch the TTL: {pttl}");
            // The inner exit did not release it.
            assert!(c2.exists("lock:order:7").await.unwrap(), "the inner call released the outer hold");
            assert_eq!(inner_locks.hold_depth("order:7"), 1);
            // A task spawned from the block is another holder.
            let l = inner_locks.clone();
            let spawned =
                tokio::spawn(async move { l.with_lock("order:7", ms(1000), ms(0), ms(10), || async {}).await })
                    .await
                    .unwrap();
            assert!(matches!(spawned, Err(LockError::NotAcquired { .. })), "{spawned:?}");
            outer
        })
        .await
        .unwrap();
    assert!(r > 0);
    assert!(!c.exists("lock:order:7").await.unwrap(), "{kind:?}: the outermost call did not release");
    assert_eq!(locks.hold_depth("order:7"), 0);

    // Two calls joined in one task: the second is not nested, so it waits.
    let (a, b) = (locks.clone(), locks.clone());
    let order = std::sync::Mutex::new(Vec::new());
    let one = a.with_lock("job", ms(5000), ms(2000), ms(10), || async {
        order.lock().unwrap().push("a in");
        tokio::time::sleep(ms(200)).await;
        order.lock().unwrap().push("a out");
    });
    let two = b.with_lock("job", ms(5000), ms(2000), ms(10), || async {
        order.lock().unwrap().push("b in");
        tokio::time::sleep(ms(200)).await;
        order.lock().unwrap().push("b out");
    });
    let (x, y) = tokio::join!(one, two);
    x.unwrap();
    y.unwrap();
    let order = order.into_inner().unwrap();
    assert!(
        order == ["a in", "a out", "b in", "b out"] || order == ["b in", "b out", "a in", "a out"],
        "{kind:?}: joined siblings overlapped: {order:?}"
    );

    // The outer hold expired inside the block: the nested call takes the lock
    // anew (its own token, released by it), as any caller would.
    let l = locks.clone();
    let c3 = c.clone();
    locks
        .with_lock("short", ms(150), ms(0), ms(10), || async move {
            tokio::time::sleep(ms(400)).await;
            assert!(!c3.exists("lock:short").await.unwrap());
            let before = l.held_fencing_token("short").unwrap();
            l.with_lock("short", ms(5000), ms(0), ms(10), || async {
                assert_eq!(l.hold_depth("short"), 1, "a new hold, not a re-entry");
                assert!(l.held_fencing_token("short").unwrap() > before);
                assert!(c3.exists("lock:short").await.unwrap());
            })
            .await
            .unwrap();
            assert!(!c3.exists("lock:short").await.unwrap(), "the new hold was not released by its call");
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn with_lock_reenters_only_when_nested_against_neokv() {
    reentry(Kind::NeoKv).await;
}

#[tokio::test]
async fn with_lock_reenters_only_when_nested_against_redis() {
    reentry(Kind::Redis).await;
}

/// Automatic renewal keeps a 300 ms lock held through a 1.5 s job; without
/// it the lock expires mid-job. A renewal that finds someone else's token
/// reports the lock lost and stops.
#[tokio::test]
async fn auto_renewal_keeps_long_jobs_locked() {
    let s = Server::start(Kind::NeoKv);
    let (c, locks) = manager(s.port);
    let ms = Duration::from_millis;
    for renew in [true, false] {
        let key = format!("long:{renew}");
        let opts = neokv_client::LockOptions::new(ms(300)).auto_renew(renew);
        let (l, k) = (locks.clone(), key.clone());
        let taken_meanwhile = locks
            .with_lock_options(&key, opts, || async move {
                let mut taken = false;
                for _ in 0..10 {
                    tokio::time::sleep(ms(150)).await;
                    if let Some(other) = l.try_lock(&k, ms(5000), ms(0), ms(10)).await.unwrap() {
                        taken = true;
                        other.release().await.unwrap();
                        break;
                    }
                }
                taken
            })
            .await
            .unwrap();
        assert_eq!(taken_meanwhile, !renew, "auto_renew {renew}: taken by another holder mid-job: {taken_meanwhile}");
        assert!(!c.exists(&format!("lock:{key}")).await.unwrap());
    }

    // Renewal asked for by a nested call keeps the enclosing hold alive.
    let l = locks.clone();
    let taken_meanwhile = locks
        .with_lock("nested", ms(300), ms(0), ms(10), || async move {
            let opts = neokv_client::LockOptions::new(ms(300)).auto_renew(true);
            l.with_lock_options("nested", opts, || async {
                for _ in 0..8 {
                    tokio::time::sleep(ms(150)).await;
                    if l.try_lock("nested", ms(5000), ms(0), ms(10)).await.unwrap().is_some() {
                        return true;
                    }
                }
                false
            })
            .await
            .unwrap()
        })
        .await
        .unwrap();
    assert!(!taken_meanwhile, "a nested call's renewal did not keep the enclosing hold");

    // Lost: the key is deleted and taken by another holder.
    let lock = locks.try_lock("stolen", ms(600), ms(0), ms(10)).await.unwrap().unwrap();
    let mut renewal = lock.auto_renew();
    tokio::time::sleep(ms(700)).await;
    assert!(!renewal.is_lost());
    assert!(c.exists("lock:stolen").await.unwrap(), "not renewed");
    c.delete(&["lock:stolen"]).await.unwrap();
    let thief = locks.try_lock("stolen", ms(10_000), ms(0), ms(10)).await.unwrap().unwrap();
    tokio::time::timeout(ms(2000), renewal.lost()).await.expect("the loss was not noticed");
    assert!(renewal.is_lost());
    // It renewed nothing of the thief's, and the old holder cannot release it.
    let pttl: i64 =
        redis::from_redis_value(&c.command(redis::cmd("PTTL").arg("neton:lock:stolen")).await.unwrap()).unwrap();
    assert!(pttl > 8_000 && pttl <= 10_000, "{pttl}");
    assert!(!lock.release().await.unwrap());
    assert!(thief.release().await.unwrap());
}
