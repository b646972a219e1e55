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
//! fencing tokens), `remember` (singleflight of
//! read-through loads), `error`.

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
pub use lock::{DistributedLock, LockError, LockManager};
pub use pipeline::RedisPipeline;
/// The `redis` crate, for [`RedisClient::command`]'s `Cmd`.
pub use redis;
#[doc(hidden)]
pub use remember::Flights;
