//! `RedisClient` (what business code depends on), its one implementation
//! `DefaultRedisClient`, and the typed extensions `RedisClientExt`.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_redis::{cluster, Runtime};
use redis::{Cmd, FromRedisValue, ToRedisArgs};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec;
use crate::config::RedisConfig;
use crate::error::{Error, Result};
use crate::pipeline::RedisPipeline;
use crate::remember::Flights;

/// One result per queued command: its reply, or the error the server
/// answered to that command alone.
pub type Replies = Vec<Result<redis::Value>>;

/// The commands the Neton spec gives business code (§3.1). Keys are given
/// without the configured prefix; the client adds it. Values are the stored
/// text; [`RedisClientExt`] adds typed reads and writes on top.
#[async_trait]
pub trait RedisClient: Send + Sync {
    /// `GET`: the stored text, `None` when the key is missing.
    async fn get_value(&self, key: &str) -> Result<Option<String>>;
    /// `SET` (with `PX` when a TTL is given) of text as it is.
    async fn set_value(&self, key: &str, value: &str, ttl: Option<Duration>) -> Result<()>;
    /// `DEL`: how many of the keys existed.
    async fn delete(&self, keys: &[&str]) -> Result<u64>;
    /// `EXISTS` of one key.
    async fn exists(&self, key: &str) -> Result<bool>;
    /// `PEXPIRE`: false when the key does not exist.
    async fn expire(&self, key: &str, ttl: Duration) -> Result<bool>;
    /// `INCR`: the new value.
    async fn incr(&self, key: &str) -> Result<i64>;
    /// `DECR`: the new value.
    async fn decr(&self, key: &str) -> Result<i64>;
    /// `HSET` of one field: true when the field is new.
    async fn hset(&self, key: &str, field: &str, value: &str) -> Result<bool>;
    /// `HGET`.
    async fn hget(&self, key: &str, field: &str) -> Result<Option<String>>;
    /// `HGETALL`.
    async fn hget_all(&self, key: &str) -> Result<HashMap<String, String>>;
    /// `LPUSH`: the list's new length.
    async fn lpush(&self, key: &str, values: &[&str]) -> Result<u64>;
    /// `RPUSH`: the list's new length.
    async fn rpush(&self, key: &str, values: &[&str]) -> Result<u64>;
    /// `LPOP` of one element.
    async fn lpop(&self, key: &str) -> Result<Option<String>>;
    /// `LRANGE start stop` (inclusive, negative counts from the end).
    async fn lrange(&self, key: &str, start: i64, stop: i64) -> Result<Vec<String>>;
    /// `SADD`: how many members were new.
    async fn sadd(&self, key: &str, members: &[&str]) -> Result<u64>;
    /// `SMEMBERS`.
    async fn smembers(&self, key: &str) -> Result<HashSet<String>>;
    /// Any command, sent as given: its keys are NOT prefixed (use
    /// [`RedisClient::key`] to build them). The escape hatch for what the
    /// interface does not cover.
    async fn command(&self, cmd: &Cmd) -> Result<redis::Value>;
    /// Send a pipeline's commands in one round trip (wrapped in MULTI/EXEC
    /// when `atomic`); keys are sent as queued. See
    /// [`RedisClientExt::pipeline`] for the prefixing DSL.
    async fn exec_pipeline(&self, pipe: &redis::Pipeline, atomic: bool) -> Result<Replies>;
    /// `key` as the server sees it (with the configured prefix).
    fn key(&self, key: &str) -> String;
    /// The loads of [`RedisClientExt::remember`] in flight (one per key).
    #[doc(hidden)]
    fn flights(&self) -> &Flights;
}

/// Typed reads and writes over any [`RedisClient`] (the spec's extensions,
/// §3.3): strings as themselves, numbers and booleans as their text, anything
/// else `serde` handles as JSON.
#[async_trait]
pub trait RedisClientExt: RedisClient {
    /// The value of `key` as a `T`; `None` when the key is missing; an
    /// [`Error::Decode`] naming the key and the type when it is not a `T`.
    ///
    /// ```no_run
    /// # async fn f(redis: &neokv_client::DefaultRedisClient) -> neokv_client::Result<()> {
    /// use neokv_client::RedisClientExt;
    /// let visits: Option<i64> = redis.get("visits").await?;
    /// # Ok(()) }
    /// ```
    async fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        match self.get_value(key).await? {
            None => Ok(None),
            Some(raw) => codec::decode(&raw).map(Some).map_err(|reason| Error::Decode {
                key: key.to_string(),
                type_name: std::any::type_name::<T>(),
                reason,
            }),
        }
    }

    /// Store `value` under `key` (expiring after `ttl`, if given).
    async fn set<T: Serialize + Sync + ?Sized>(&self, key: &str, value: &T, ttl: Option<Duration>) -> Result<()> {
        let text = codec::encode(value).map_err(|reason| Error::Encode { key: key.to_string(), reason })?;
        self.set_value(key, &text, ttl).await
    }

    /// The spec's pipeline DSL (§3.2): the commands `build` queues are sent in
    /// ONE round trip, in order, and each gets its own result (a command the
    /// server refuses does not hide the others' results). In cluster mode all
    /// keys must hash to one slot (use hash tags).
    ///
    /// ```no_run
    /// # async fn f(redis: &neokv_client::DefaultRedisClient) -> neokv_client::Result<()> {
    /// use neokv_client::RedisClientExt;
    /// let replies = redis.pipeline(|p| {
    ///     p.set("a", &1, None).incr("a").hset("h", "f", "v");
    /// }).await?;
    /// assert_eq!(replies.len(), 3);
    /// # Ok(()) }
    /// ```
    async fn pipeline<F>(&self, build: F) -> Result<Replies>
    where
        F: FnOnce(&mut RedisPipeline) + Send,
    {
        let pipe = queue(self, build)?;
        self.exec_pipeline(&pipe, false).await
    }

    /// [`pipeline`](Self::pipeline) inside MULTI/EXEC: all or nothing, and no
    /// other client's command runs between them. A command refused at queue
    /// time (a wrong number of arguments) aborts it all with the server's
    /// error (that command's, or EXECABORT); one that fails when run (a wrong type) is its own error result
    /// while the others take effect, as in Redis.
    async fn transaction<F>(&self, build: F) -> Result<Replies>
    where
        F: FnOnce(&mut RedisPipeline) + Send,
    {
        let pipe = queue(self, build)?;
        self.exec_pipeline(&pipe, true).await
    }

    /// Read-through cache (spec §3.3): the value of `key` if it is there and
    /// decodes as a `T`; otherwise `loader` runs, its value is stored with
    /// `ttl` and returned. Concurrent misses of one key in this client share
    /// ONE loader call: the others wait for its result (singleflight). A loader
    /// error is [`Error::Load`], for every caller that waited on it.
    ///
    /// ```no_run
    /// # async fn f(redis: &neokv_client::DefaultRedisClient) -> neokv_client::Result<()> {
    /// use neokv_client::RedisClientExt;
    /// use std::time::Duration;
    /// let price: f64 = redis
    ///     .remember("price:42", Duration::from_secs(60), || async { Ok::<_, std::io::Error>(9.5) })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    async fn remember<T, F, Fut, E>(&self, key: &str, ttl: Duration, loader: F) -> Result<T>
    where
        T: Serialize + DeserializeOwned + Send + Sync,
        F: FnOnce() -> Fut + Send,
        Fut: std::future::Future<Output = std::result::Result<T, E>> + Send,
        E: std::fmt::Display + Send,
    {
        if let Some(raw) = self.get_value(key).await? {
            if let Ok(v) = codec::decode::<T>(&raw) {
                return Ok(v);
            }
        }
        let load = async {
            let v = loader().await.map_err(|e| format!("the loader failed: {e}"))?;
            let text = codec::encode(&v).map_err(|e| format!("its value does not encode: {e}"))?;
            self.set_value(key, &text, Some(ttl)).await.map_err(|e| format!("storing its value failed: {e}"))?;
            Ok(text)
        };
        let text = self
            .flights()
            .run(&self.key(key), load)
            .await
            .map_err(|reason| Error::Load { key: key.to_string(), reason })?;
        codec::decode(&text).map_err(|reason| Error::Decode {
            key: key.to_string(),
            type_name: std::any::type_name::<T>(),
            reason,
        })
    }
}

impl<C: RedisClient + ?Sized> RedisClientExt for C {}

/// The commands `build` queues, with `client`'s key prefix; the first value
/// that did not encode instead.
fn queue<C, F>(client: &C, build: F) -> Result<redis::Pipeline>
where
    C: RedisClient + ?Sized,
    F: FnOnce(&mut RedisPipeline),
{
    let mut p = RedisPipeline::new(|k: &str| client.key(k));
    build(&mut p);
    match p.error.take() {
        Some(e) => Err(e),
        None => Ok(p.pipe),
    }
}

enum Backend {
    Single(deadpool_redis::Pool),
    Cluster(cluster::Pool),
}

/// The one implementation of [`RedisClient`]: a pool of connections to one
/// server (`deadpool-redis`, up to `pool_size` multiplexed connections,
/// replaced when broken), or to a cluster (the `redis` crate's cluster
/// client: follows MOVED and ASK), as the config says.
pub struct DefaultRedisClient {
    backend: Backend,
    config: RedisConfig,
    flights: Flights,
}

impl std::fmt::Debug for DefaultRedisClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut c = self.config.clone();
        if c.password.is_some() {
            c.password = Some("***".into());
        }
        f.debug_struct("DefaultRedisClient").field("config", &c).finish()
    }
}

fn info(config: &RedisConfig, host: &str, port: u16) -> redis::ConnectionInfo {
    redis::ConnectionInfo {
        addr: redis::ConnectionAddr::Tcp(host.to_string(), port),
        redis: redis::RedisConnectionInfo {
            db: config.database,
            username: config.username.clone(),
            password: config.password.clone(),
            ..Default::default()
        },
    }
}

impl DefaultRedisClient {
    /// A client for `config` (validated first). Connections open on first use.
    pub fn new(config: RedisConfig) -> Result<Self> {
        config.validate()?;
        let t = Some(config.timeout);
        let backend = if config.cluster_nodes.is_empty() {
            let manager = deadpool_redis::Manager::new(info(&config, &config.host, config.port))?;
            let pool = deadpool_redis::Pool::builder(manager)
                .max_size(config.pool_size)
                .runtime(Runtime::Tokio1)
                .wait_timeout(t)
                .create_timeout(t)
                .recycle_timeout(t)
                .build()
                .map_err(|e| Error::Pool(e.to_string()))?;
            Backend::Single(pool)
        } else {
            let nodes = config
                .cluster_nodes
                .iter()
                .map(|n| {
                    let (h, p) = n.rsplit_once(':').expect("validated");
                    info(&config, h, p.parse().expect("validated"))
                })
                .collect();
            let manager = cluster::Manager::new(nodes, false)?;
            let pool = cluster::Pool::builder(manager)
                .max_size(config.pool_size)
                .runtime(Runtime::Tokio1)
                .wait_timeout(t)
                .create_timeout(t)
                .recycle_timeout(t)
                .build()
                .map_err(|e| Error::Pool(e.to_string()))?;
            Backend::Cluster(pool)
        };
        Ok(DefaultRedisClient { backend, config, flights: Flights::default() })
    }

    /// The configuration in use.
    pub fn config(&self) -> &RedisConfig {
        &self.config
    }

    /// Send `cmd` on a pooled connection, within the timeout.
    pub(crate) async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T> {
        let work = async {
            match &self.backend {
                Backend::Single(p) => {
                    let mut c = p.get().await.map_err(|e| Error::Pool(e.to_string()))?;
                    Ok(cmd.query_async(&mut *c).await?)
                }
                Backend::Cluster(p) => {
                    let mut c = p.get().await.map_err(|e| Error::Pool(e.to_string()))?;
                    Ok(cmd.query_async(&mut *c).await?)
                }
            }
        };
        tokio::time::timeout(self.config.timeout, work).await.map_err(|_| Error::Timeout(self.config.timeout))?
    }

    fn cmd(&self, name: &str, key: &str) -> Cmd {
        let mut c = redis::cmd(name);
        c.arg(self.key(key));
        c
    }

    fn cmd_args<A: ToRedisArgs>(&self, name: &str, key: &str, args: A) -> Cmd {
        let mut c = self.cmd(name, key);
        c.arg(args);
        c
    }
}

fn millis(d: Duration) -> u64 {
    // PX 0 is an error in Redis: anything under a millisecond rounds up.
    (d.as_millis() as u64).max(1)
}

#[async_trait]
impl RedisClient for DefaultRedisClient {
    async fn get_value(&self, key: &str) -> Result<Option<String>> {
        self.query(&self.cmd("GET", key)).await
    }

    async fn set_value(&self, key: &str, value: &str, ttl: Option<Duration>) -> Result<()> {
        let mut c = self.cmd_args("SET", key, value);
        if let Some(t) = ttl {
            c.arg("PX").arg(millis(t));
        }
        self.query::<()>(&c).await
    }

    async fn delete(&self, keys: &[&str]) -> Result<u64> {
        if keys.is_empty() {
            return Ok(0);
        }
        // One DEL per key: in a cluster they may live in different slots.
        let mut n = 0;
        for k in keys {
            n += self.query::<u64>(&self.cmd("DEL", k)).await?;
        }
        Ok(n)
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        self.query(&self.cmd("EXISTS", key)).await
    }

    async fn expire(&self, key: &str, ttl: Duration) -> Result<bool> {
        self.query(&self.cmd_args("PEXPIRE", key, millis(ttl))).await
    }

    async fn incr(&self, key: &str) -> Result<i64> {
        self.query(&self.cmd("INCR", key)).await
    }

    async fn decr(&self, key: &str) -> Result<i64> {
        self.query(&self.cmd("DECR", key)).await
    }

    async fn hset(&self, key: &str, field: &str, value: &str) -> Result<bool> {
        self.query(&self.cmd_args("HSET", key, (field, value))).await
    }

    async fn hget(&self, key: &str, field: &str) -> Result<Option<String>> {
        self.query(&self.cmd_args("HGET", key, field)).await
    }

    async fn hget_all(&self, key: &str) -> Result<HashMap<String, String>> {
        self.query(&self.cmd("HGETALL", key)).await
    }

    async fn lpush(&self, key: &str, values: &[&str]) -> Result<u64> {
        self.query(&self.cmd_args("LPUSH", key, values)).await
    }

    async fn rpush(&self, key: &str, values: &[&str]) -> Result<u64> {
        self.query(&self.cmd_args("RPUSH", key, values)).await
    }

    async fn lpop(&self, key: &str) -> Result<Option<String>> {
        self.query(&self.cmd("LPOP", key)).await
    }

    async fn lrange(&self, key: &str, start: i64, stop: i64) -> Result<Vec<String>> {
        self.query(&self.cmd_args("LRANGE", key, (start, stop))).await
    }

    async fn sadd(&self, key: &str, members: &[&str]) -> Result<u64> {
        self.query(&self.cmd_args("SADD", key, members)).await
    }

    async fn smembers(&self, key: &str) -> Result<HashSet<String>> {
        self.query(&self.cmd("SMEMBERS", key)).await
    }

    async fn command(&self, cmd: &Cmd) -> Result<redis::Value> {
        self.query(cmd).await
    }

    async fn exec_pipeline(&self, pipe: &redis::Pipeline, atomic: bool) -> Result<Replies> {
        use redis::aio::ConnectionLike;
        let n = pipe.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut p = pipe.clone();
        // MULTI, the commands, EXEC: only EXEC's reply (an array) is read back.
        let (offset, count) = if atomic {
            p.atomic();
            (n + 1, 1)
        } else {
            (0, n)
        };
        let work = async {
            let mut values = match &self.backend {
                Backend::Single(pool) => {
                    let mut c = pool.get().await.map_err(|e| Error::Pool(e.to_string()))?;
                    c.req_packed_commands(&p, offset, count).await?
                }
                Backend::Cluster(pool) => {
                    let mut c = pool.get().await.map_err(|e| Error::Pool(e.to_string()))?;
                    c.req_packed_commands(&p, offset, count).await?
                }
            };
            if atomic {
                values = match values.pop() {
                    Some(redis::Value::Array(items)) => items,
                    Some(redis::Value::ServerError(e)) => return Err(Error::Redis(e.into())),
                    other => return Err(Error::Pool(format!("unexpected reply to EXEC: {other:?}"))),
                };
            }
            Ok(values
                .into_iter()
                .map(|v| match v {
                    redis::Value::ServerError(e) => Err(Error::Redis(e.into())),
                    v => Ok(v),
                })
                .collect())
        };
        tokio::time::timeout(self.config.timeout, work).await.map_err(|_| Error::Timeout(self.config.timeout))?
    }

    fn key(&self, key: &str) -> String {
        self.config.full_key(key)
    }

    fn flights(&self) -> &Flights {
        &self.flights
    }
}
