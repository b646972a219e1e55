//! The `#[lock]` attribute (the spec's `@Lock`), against a NeoKV the test
//! starts: key templates from parameters, the manager from a parameter or an
//! expression, NotAcquired through the function's error type, `?` and early
//! returns in the body, release on errors, re-entry through nested calls.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Kind, Server};
use neokv_client::{lock, DefaultRedisClient, LockError, LockManager, RedisClient, RedisConfig};

#[derive(Debug, PartialEq)]
enum AppError {
    Busy(String),
    Redis(String),
    Invalid(&'static str),
}

impl From<LockError> for AppError {
    fn from(e: LockError) -> Self {
        match e {
            LockError::NotAcquired { key } => AppError::Busy(key),
            LockError::Redis(e) => AppError::Redis(e.to_string()),
        }
    }
}

impl From<neokv_client::Error> for AppError {
    fn from(e: neokv_client::Error) -> Self {
        AppError::Redis(e.to_string())
    }
}

struct Orders {
    locks: LockManager,
    redis: Arc<DefaultRedisClient>,
}

impl Orders {
    /// Holds `order:<order_id>` for 200 ms; the manager comes from `self`.
    #[lock(key = "order:{order_id}", ttl_ms = 15_000, wait_ms = 0, locks = self.locks)]
    async fn pay(&self, order_id: u64, amount: i64) -> Result<i64, AppError> {
        if amount <= 0 {
            return Err(AppError::Invalid("amount"));
        }
        let paid = self.redis.incr(&format!("paid:{order_id}")).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok(paid)
    }

    /// Re-enters the lock `pay` takes (nested, same key).
    #[lock(key = "order:{order_id}", ttl_ms = 15_000, locks = self.locks)]
    async fn pay_twice(&self, order_id: u64) -> Result<i64, AppError> {
        self.pay(order_id, 1).await?;
        self.pay(order_id, 1).await
    }
}

/// The manager is the parameter whose type is a LockManager; a literal brace
/// is doubled; two placeholders.
#[lock(key = "{{shard}}:move:{from}:{to}", ttl_ms = 5_000, wait_ms = 1_000, retry_ms = 20)]
async fn transfer(locks: &LockManager, from: &str, to: String) -> Result<String, AppError> {
    let fence = locks.held_fencing_token(&format!("{{shard}}:move:{from}:{to}"));
    Ok(format!("{from}->{to} under {}", fence.is_some()))
}

fn setup(port: u16) -> Orders {
    let redis = Arc::new(
        DefaultRedisClient::new(RedisConfig { port, key_prefix: Some("neton".into()), ..Default::default() }).unwrap(),
    );
    Orders { locks: LockManager::new(redis.clone()), redis }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lock_attribute_guards_a_function() {
    let s = Server::start(Kind::NeoKv);
    let orders = Arc::new(setup(s.port));
    // Two concurrent calls for one order: one pays, the other is refused at
    // once (wait_ms = 0) with the function's own error, naming the key.
    let (a, b) = (orders.clone(), orders.clone());
    let (x, y) = tokio::join!(
        tokio::spawn(async move { a.pay(1, 10).await }),
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            b.pay(1, 10).await
        })
    );
    assert_eq!(x.unwrap(), Ok(1));
    assert_eq!(y.unwrap(), Err(AppError::Busy("order:1".into())));
    // Another order is another key.
    let (a, b) = (orders.clone(), orders.clone());
    let (x, y) =
        tokio::join!(tokio::spawn(async move { a.pay(2, 10).await }), tokio::spawn(async move { b.pay(3, 10).await }));
    assert_eq!((x.unwrap(), y.unwrap()), (Ok(1), Ok(1)));
    // The body's early return comes back as it was, and the lock is released.
    assert_eq!(orders.pay(1, 0).await, Err(AppError::Invalid("amount")));
    assert!(!orders.redis.exists("lock:order:1").await.unwrap());
    assert_eq!(orders.pay(1, 10).await, Ok(2));
    // Nested: pay_twice holds order:4 and calls pay twice under it.
    assert_eq!(orders.pay_twice(4).await, Ok(2));
    assert!(!orders.redis.exists("lock:order:4").await.unwrap());

    // The free function: its key (with a literal brace pair), held while it runs.
    let r = transfer(&orders.locks, "a", "b".to_string()).await;
    assert_eq!(r, Ok("a->b under true".to_string()));
    let held = orders.locks.try_lock("{shard}:move:a:b", Duration::from_secs(5), Duration::ZERO, Duration::ZERO);
    let held = held.await.unwrap().unwrap();
    assert!(orders.redis.exists("lock:{shard}:move:a:b").await.unwrap());
    // Held by someone else: waits its 1 s, then refuses.
    let started = std::time::Instant::now();
    let r = transfer(&orders.locks, "a", "b".to_string()).await;
    assert_eq!(r, Err(AppError::Busy("{shard}:move:a:b".into())));
    assert!(started.elapsed() >= Duration::from_millis(1000));
    held.release().await.unwrap();
}
