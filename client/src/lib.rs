//! neokv-client: the Neton client API over any Redis or NeoKV.
//!
//! Business code depends on [`RedisClient`] (KV, Hash, List and Set commands
//! of the Neton spec, plus an escape hatch) and on [`RedisClientExt`] (typed
//! `get::<T>` / `set`), never on the implementation, [`DefaultRedisClient`],
//! which a [`RedisConfig`] builds: one server through a connection pool, or a
//! cluster through the Redis Cluster protocol.
//!
//! ```no_run
//! use neokv_client::{DefaultRedisClient, RedisClient, RedisClientExt, RedisConfig};
//! # async fn f() -> neokv_client::Result<()> {
//! let redis = DefaultRedisClient::new(RedisConfig { key_prefix: Some("neton".into()), ..Default::default() })?;
//! redis.set("user:1:visits", &5, None).await?;      // SET neton:user:1:visits 5
//! assert_eq!(redis.incr("user:1:visits").await?, 6);
//! let visits: Option<u32> = redis.get("user:1:visits").await?;
//! # Ok(()) }
//! ```
//!
//! Map: `config` (settings, the spec's key names), `codec` (how typed values
//! are stored), `client` (the trait, its extensions and the implementation),
//! `pipeline` (the queued-commands DSL), `lock` (the distributed lock with
//! fencing tokens, re-entry and renewal; its `#[lock]` attribute lives in
//! the `neokv-client-macros` crate, `client/macros`), `remember`
//! (singleflight of read-through loads), `error`.

#![warn(missing_docs)]

mod client;
mod codec;
mod config;
mod error;
mod lock;
mod pipeline;
mod remember;

pub use client::{DefaultRedisClient, RedisClient, RedisClientExt, Replies};
pub use config::RedisConfig;
pub use error::{Error, Result};
pub use lock::{DistributedLock, LockError, LockManager, LockOptions, Renewal};
pub use pipeline::RedisPipeline;
/// The `redis` crate, for [`RedisClient::command`]'s `Cmd`.
pub use redis;
#[doc(hidden)]
pub use remember::Flights;

/// Run an `async fn` holding a distributed lock: the spec's `@Lock` (§5.5).
///
/// ```no_run
/// use neokv_client::{lock, LockError, LockManager};
///
/// enum AppError { Conflict, Internal(String) }
/// impl From<LockError> for AppError {
///     fn from(e: LockError) -> Self {
///         match e {
///             LockError::NotAcquired { .. } => AppError::Conflict,   // HTTP 409
///             LockError::Redis(e) => AppError::Internal(e.to_string()),
///         }
///     }
/// }
///
/// #[lock(key = "order:{order_id}", ttl_ms = 15_000, wait_ms = 0)]
/// async fn pay(locks: &LockManager, order_id: u64) -> Result<u64, AppError> {
///     // Runs only while this process holds neton:lock:order:<order_id>.
///     Ok(order_id)
/// }
/// ```
///
/// A placeholder that names no parameter does not compile:
///
/// ```compile_fail
/// # use neokv_client::{lock, LockError, LockManager};
/// #[lock(key = "order:{id}")]
/// async fn pay(locks: &LockManager, order_id: u64) -> Result<u64, LockError> { Ok(order_id) }
/// ```
///
/// Nor does a function with no way to the manager:
///
/// ```compile_fail
/// # use neokv_client::{lock, LockError};
/// #[lock(key = "order:{order_id}")]
/// async fn pay(order_id: u64) -> Result<u64, LockError> { Ok(order_id) }
/// ```
///
/// The body runs inside [`LockManager::with_lock_options`]: the lock is taken
/// before it and released after it on every way out (its value, its error,
/// a panic); not acquired within `wait_ms`, the function returns
/// `Err(From::from(LockError::NotAcquired { key }))` without running the body,
/// so its error type must implement `From<LockError>` (a web layer maps
/// `NotAcquired` to 409 Conflict). Nested calls under the same key re-enter.
///
/// Settings:
/// - `key` (required): the business key; `{param}` is replaced by the
///   parameter of that name (its `Display`); nothing fancier. A literal brace
///   (a hash tag) is written `{{` / `}}`, as in `format!`.
/// - `ttl_ms` (default 10 000), `wait_ms` (0: one try), `retry_ms` (50): as in
///   [`LockOptions`].
/// - `auto_renew` (default false): renew every third of the TTL while the
///   body runs.
/// - `locks`: an expression giving the [`LockManager`] (`LockManager`,
///   `&LockManager` or `Arc<LockManager>`), for example `locks = self.locks`;
///   by default the first parameter whose type names `LockManager`.
///
/// The function must be an `async fn` returning a `Result`; its parameters
/// are moved into the locked body, as they would be into the function's own.
pub use neokv_client_macros::lock;

#[doc(hidden)]
pub mod __private {
    /// Pins an async block's output to the function's return type, so `?`
    /// inside a `#[lock]` body converts errors as it would in the function.
    pub fn returning<R, F: std::future::Future<Output = R>>(f: F) -> F {
        f
    }
}
