//! The distributed lock of the spec (§5, the v1 rules), with fencing tokens.
//!
//! Acquire: one Lua script does `SET <prefix>:lock:<key> <token> NX PX <ttl>`
//! and, only if that set the key, `INCR`s a companion counter in the same slot
//! and returns it: the fencing token, which grows with every acquisition of
//! the key, so a resource can refuse a holder whose lock expired meanwhile.
//! Release and renew: compare-the-token scripts (`DEL` / `PEXPIRE` only if the
//! key still holds this holder's token). Scripts run by `EVALSHA` after
//! `SCRIPT LOAD`; a server that answers `NOSCRIPT` (restarted, flushed, another
//! cluster node) gets `EVAL` and the script is loaded again.
//!
//! On a single Redis the lock is what the spec calls a best-effort lock: a
//! failover can lose an acquisition. On NeoKV an acquisition is committed by a
//! majority before it is answered, and survives a failover and kill -9; the
//! fencing counter too.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use tokio::sync::{watch, RwLock};

use crate::client::RedisClient;
use crate::error::Error;

/// Why `with_lock` did not run its block.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock was held by someone else for all of `wait` (the spec's
    /// `LockNotAcquiredException`; a web layer maps it to 409 Conflict).
    #[error("lock {key:?} not acquired")]
    NotAcquired {
        /// The business key (without prefixes).
        key: String,
    },
    /// Talking to the server failed.
    #[error(transparent)]
    Redis(#[from] Error),
}

const ACQUIRE: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                       return redis.call('INCR', KEYS[2]) end return false";
const RELEASE: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
const RENEW: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
/// Re-entry: still this holder's? Then make it last at least ARGV[2] ms more
/// (never shorter than the outer hold asked for).
const REENTER: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                       if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then \
                       redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 1 end return 0";

/// A Lua script run by EVALSHA, with EVAL and a new SCRIPT LOAD on NOSCRIPT.
struct Script {
    source: &'static str,
    sha: RwLock<Option<String>>,
}

impl Script {
    fn new(source: &'static str) -> Self {
        Script { source, sha: RwLock::new(None) }
    }

    async fn load(&self, client: &dyn RedisClient) -> Result<String, Error> {
        let v = client.command(redis::cmd("SCRIPT").arg("LOAD").arg(self.source)).await?;
        let sha: String = redis::from_redis_value(&v)?;
        *self.sha.write().await = Some(sha.clone());
        Ok(sha)
    }

    async fn run(&self, client: &dyn RedisClient, keys: &[&str], args: &[String]) -> Result<redis::Value, Error> {
        // (The read guard must be gone before `load` takes the write lock.)
        let known = self.sha.read().await.clone();
        let sha = match known {
            Some(s) => s,
            None => self.load(client).await?,
        };
        let mut c = redis::cmd("EVALSHA");
        c.arg(&sha).arg(keys.len()).arg(keys).arg(args);
        match client.command(&c).await {
            Err(Error::Redis(e)) if e.code() == Some("NOSCRIPT") => {
                let mut c = redis::cmd("EVAL");
                c.arg(self.source).arg(keys.len()).arg(keys).arg(args);
                let v = client.command(&c).await?;
                // Loaded again for the next call.
                self.load(client).await?;
                Ok(v)
            }
            other => other,
        }
    }
}

struct Scripts {
    acquire: Script,
    release: Script,
    renew: Script,
    reenter: Script,
}

/// How [`LockManager::with_lock_options`] takes and keeps a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockOptions {
    /// How long the lock lives unless renewed (required, more than zero).
    pub ttl: Duration,
    /// How long to keep trying while someone else holds it (zero: one try).
    pub wait: Duration,
    /// The sleep between tries.
    pub retry_interval: Duration,
    /// Renew the lock every third of its TTL while the block runs (long
    /// jobs; see [`DistributedLock::auto_renew`]).
    pub auto_renew: bool,
}

impl LockOptions {
    /// `ttl`, no waiting, a 50 ms retry interval, no automatic renewal (the
    /// spec's `@Lock` defaults apart from the TTL).
    pub fn new(ttl: Duration) -> Self {
        LockOptions { ttl, wait: Duration::ZERO, retry_interval: Duration::from_millis(50), auto_renew: false }
    }

    /// Keep trying for `wait`.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Sleep `retry_interval` between tries.
    pub fn retry_interval(mut self, retry_interval: Duration) -> Self {
        self.retry_interval = retry_interval;
        self
    }

    /// Renew automatically while the block runs.
    pub fn auto_renew(mut self, on: bool) -> Self {
        self.auto_renew = on;
        self
    }
}

/// A lock this task holds, as seen by the blocks run under it.
#[derive(Clone)]
struct Held {
    token: String,
    fence: u64,
    /// How many `with_lock`s of this key enclose the current block.
    depth: usize,
}

/// Which manager (its scripts) and which full key.
type HeldKey = (usize, String);

tokio::task_local! {
    /// The locks held by the `with_lock` calls that enclose the running code.
    /// Each block gets its own copy with its lock added, so only code nested
    /// inside a block sees it: a sibling future in the same task (`join!`)
    /// does not, and takes the lock for real.
    static HELD: HashMap<HeldKey, Held>;
}

/// Hands out [`DistributedLock`]s over one client (keys get `lock:` here and
/// the client's prefix there: `neton:lock:order:1`).
#[derive(Clone)]
pub struct LockManager {
    client: Arc<dyn RedisClient>,
    scripts: Arc<Scripts>,
}

impl std::fmt::Debug for LockManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockManager").finish_non_exhaustive()
    }
}

/// A held lock. Release it with [`release`](Self::release) (a dropped lock
/// is not released: it expires after its TTL).
pub struct DistributedLock {
    key: String,
    token: String,
    fence: u64,
    ttl: Duration,
    full_key: String,
    manager: LockManager,
}

/// The automatic renewal of a [`DistributedLock`] (from
/// [`auto_renew`](DistributedLock::auto_renew)): a task that renews it to its
/// TTL every third of the TTL, until this is dropped or the lock is lost.
#[derive(Debug)]
pub struct Renewal {
    lost: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Renewal {
    /// True once a renewal found the lock no longer this holder's, or none
    /// succeeded for a whole TTL (the server unreachable): from then on the
    /// holder must assume someone else may hold it. Renewal has stopped.
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// Wait until the lock is lost (forever, while renewal keeps it).
    pub async fn lost(&mut self) {
        let _ = self.lost.wait_for(|l| *l).await;
    }
}

impl Drop for Renewal {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for DistributedLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedLock").field("key", &self.key).field("fence", &self.fence).finish()
    }
}

/// A lock's TTL in milliseconds; zero is refused (the spec's v1 rule).
fn ttl_ms(key: &str, ttl: Duration) -> Result<u64, Error> {
    if ttl.is_zero() {
        return Err(Error::Config(format!("lock {key:?}: the TTL must be more than zero")));
    }
    Ok((ttl.as_millis() as u64).max(1))
}

/// The companion counter of a lock key, in the same cluster slot.
fn fence_key(full: &str) -> String {
    if full.contains('{') {
        // The lock key's own hash tag decides its slot: keep it first.
        format!("{full}:fence")
    } else {
        format!("{{{full}}}:fence")
    }
}

impl LockManager {
    /// Locks over `client`.
    pub fn new(client: Arc<dyn RedisClient>) -> Self {
        LockManager {
            client,
            scripts: Arc::new(Scripts {
                acquire: Script::new(ACQUIRE),
                release: Script::new(RELEASE),
                renew: Script::new(RENEW),
                reenter: Script::new(REENTER),
            }),
        }
    }

    fn id(&self) -> usize {
        Arc::as_ptr(&self.scripts) as usize
    }

    /// The key the lock of `key` is stored under: `<prefix>:lock:<key>`.
    fn full_key(&self, key: &str) -> String {
        self.client.key(&format!("lock:{key}"))
    }

    /// The hold of `key` by the `with_lock` blocks enclosing the calling code.
    fn held(&self, key: &str) -> Option<Held> {
        let id = (self.id(), self.full_key(key));
        HELD.try_with(|h| h.get(&id).cloned()).ok().flatten()
    }

    /// How many [`with_lock`](Self::with_lock) blocks of `key` (on this
    /// manager or a clone) enclose the calling code: 0 if it holds no such
    /// lock, 2 inside a re-entered one.
    pub fn hold_depth(&self, key: &str) -> usize {
        self.held(key).map_or(0, |h| h.depth)
    }

    /// Try to take the lock of `key` for `ttl` (which must not be zero),
    /// trying again every `retry_interval` (sleeping in between, never
    /// spinning) until `wait` has passed; `Ok(None)` if it stayed taken.
    pub async fn try_lock(
        &self,
        key: &str,
        ttl: Duration,
        wait: Duration,
        retry_interval: Duration,
    ) -> Result<Option<DistributedLock>, Error> {
        let ttl_ms = ttl_ms(key, ttl)?;
        let full_key = self.full_key(key);
        let fence = fence_key(&full_key);
        let deadline = Instant::now() + wait;
        loop {
            // 128 random bits, as 36 characters.
            let token = uuid::Uuid::new_v4().to_string();
            let v = self
                .scripts
                .acquire
                .run(self.client.as_ref(), &[&full_key, &fence], &[token.clone(), ttl_ms.to_string()])
                .await?;
            if let Some(n) = redis::from_redis_value::<Option<u64>>(&v)? {
                return Ok(Some(DistributedLock {
                    key: key.to_string(),
                    token,
                    fence: n,
                    ttl,
                    full_key,
                    manager: self.clone(),
                }));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(retry_interval.max(Duration::from_millis(1)).min(deadline - now)).await;
        }
    }

    /// Run `block` holding the lock of `key` (see [`try_lock`](Self::try_lock)),
    /// and release it on every way out: the block's value (or error: it is in
    /// `R`, untouched), a panic (released, then the panic goes on), or the
    /// future being dropped (then the lock expires after its TTL). Not acquired
    /// within `wait`: [`LockError::NotAcquired`].
    ///
    /// Re-entrant: a `with_lock` of the same key nested inside the block (in
    /// the same task, on this manager or a clone) does not try to take it
    /// again. It checks the lock is still this holder's, stretches it to at
    /// least its own TTL, and runs its block; only the outermost call
    /// releases. If the outer hold has expired meanwhile, the inner call takes
    /// the lock anew like any other caller. Code that is not nested inside the
    /// block (a task it spawns, a future joined beside the call) does not
    /// share the hold.
    pub async fn with_lock<R, Fut>(
        &self,
        key: &str,
        ttl: Duration,
        wait: Duration,
        retry_interval: Duration,
        block: impl FnOnce() -> Fut,
    ) -> Result<R, LockError>
    where
        Fut: Future<Output = R>,
    {
        let opts = LockOptions { ttl, wait, retry_interval, auto_renew: false };
        self.with_lock_options(key, opts, block).await
    }

    /// [`with_lock`](Self::with_lock) with options, among them automatic
    /// renewal for blocks that may outlive the TTL.
    pub async fn with_lock_options<R, Fut>(
        &self,
        key: &str,
        opts: LockOptions,
        block: impl FnOnce() -> Fut,
    ) -> Result<R, LockError>
    where
        Fut: Future<Output = R>,
    {
        let full_key = self.full_key(key);
        let id = (self.id(), full_key.clone());
        let mut held = HELD.try_with(|h| h.clone()).unwrap_or_default();
        if let Some(outer) = held.get(&id).cloned() {
            let ms = ttl_ms(key, opts.ttl)?.to_string();
            let v = self.scripts.reenter.run(self.client.as_ref(), &[&full_key], &[outer.token.clone(), ms]).await?;
            if redis::from_redis_value::<i64>(&v).map_err(Error::from)? == 1 {
                let renewal =
                    opts.auto_renew.then(|| renewal(self.clone(), full_key.clone(), outer.token.clone(), opts.ttl));
                held.insert(id, Held { depth: outer.depth + 1, ..outer });
                // Nothing to release here: the outermost call does.
                let out = HELD.scope(held, async move { block().await }).await;
                drop(renewal);
                return Ok(out);
            }
            // The outer hold is gone (expired): take it like anyone else.
        }
        let Some(lock) = self.try_lock(key, opts.ttl, opts.wait, opts.retry_interval).await? else {
            return Err(LockError::NotAcquired { key: key.to_string() });
        };
        held.insert(id, Held { token: lock.token.clone(), fence: lock.fence, depth: 1 });
        let renewal = opts.auto_renew.then(|| lock.auto_renew());
        // block() is called inside: a panic while it builds its future is caught too.
        let out = AssertUnwindSafe(HELD.scope(held, async move { block().await })).catch_unwind().await;
        drop(renewal);
        // A failed release is not the block's failure: the lock expires.
        let _ = lock.release().await;
        match out {
            Ok(r) => Ok(r),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// The fencing token of the lock of `key` that the calling code runs
    /// under (inside a [`with_lock`](Self::with_lock) block of it), if any.
    pub fn held_fencing_token(&self, key: &str) -> Option<u64> {
        self.held(key).map(|h| h.fence)
    }
}

impl DistributedLock {
    /// The business key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// This holder's token (the value stored under the lock key).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The fencing token: larger than that of every earlier acquisition of
    /// this key. Pass it to the resource the lock protects, which keeps the
    /// largest it has seen and refuses smaller ones.
    pub fn fencing_token(&self) -> u64 {
        self.fence
    }

    /// Release: delete the lock key only if it still holds this token. True
    /// if this holder released it; false if it had expired (and maybe been
    /// taken by someone else, whose lock stays).
    pub async fn release(&self) -> Result<bool, Error> {
        let m = &self.manager;
        let v = m.scripts.release.run(m.client.as_ref(), &[&self.full_key], std::slice::from_ref(&self.token)).await?;
        Ok(redis::from_redis_value::<i64>(&v)? == 1)
    }

    /// Extend the lock to `ttl` from now, only if it is still this holder's.
    pub async fn renew(&self, ttl: Duration) -> Result<bool, Error> {
        renew(&self.manager, &self.full_key, &self.token, ttl).await
    }

    /// Keep the lock alive while a long job runs: a background task (on the
    /// current tokio runtime) renews it to its TTL every third of the TTL
    /// until the returned [`Renewal`] is dropped. Renewal stops, and the
    /// `Renewal` reports the lock lost, when a renewal finds another token
    /// under the key, or when no renewal has succeeded for a whole TTL.
    /// Renewal narrows the window in which a slow holder loses its lock; it
    /// cannot close it (a paused process renews nothing): the fencing token
    /// is what a resource should check.
    pub fn auto_renew(&self) -> Renewal {
        renewal(self.manager.clone(), self.full_key.clone(), self.token.clone(), self.ttl)
    }
}

/// The task behind [`DistributedLock::auto_renew`].
fn renewal(manager: LockManager, full_key: String, token: String, ttl: Duration) -> Renewal {
    let (tx, lost) = watch::channel(false);
    let every = (ttl / 3).max(Duration::from_millis(1));
    let task = tokio::spawn(async move {
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep(every).await;
            match renew(&manager, &full_key, &token, ttl).await {
                Ok(true) => renewed = Instant::now(),
                Ok(false) => break,
                // Unknown: try again, until the TTL has surely run out.
                Err(_) if renewed.elapsed() < ttl => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(true);
    });
    Renewal { lost, task }
}

async fn renew(m: &LockManager, full_key: &str, token: &str, ttl: Duration) -> Result<bool, Error> {
    let ms = (ttl.as_millis() as u64).max(1).to_string();
    let v = m.scripts.renew.run(m.client.as_ref(), &[full_key], &[token.to_string(), ms]).await?;
    Ok(redis::from_redis_value::<i64>(&v)? == 1)
}

#[cfg(test)]
mod tests {
    use super::fence_key;

    /// The counter shares the lock key's cluster slot.
    #[test]
    fn the_fence_counter_hashes_with_its_lock() {
        assert_eq!(fence_key("neton:lock:order:1"), "{neton:lock:order:1}:fence");
        assert_eq!(fence_key("lock:{user}:1"), "lock:{user}:1:fence");
    }
}
