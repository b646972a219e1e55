//! Client-side load for `perf/client.sh`: for `--secs` each, `--tasks`
//! concurrent tasks run
//! - `lock`: acquire and release a lock of their own (two scripts, two round
//!   trips), counting cycles and their latency;
//! - `contended`: `with_lock` of one shared key (wait 5 s, retry 1 ms) around
//!   an increment, counting cycles;
//! - `pipeline`: pipelines of `--batch` SETs of 256 B values, one round trip each;
//! - `set`: single SETs through the client, for its own per-call cost.
//!
//! Prints one line per workload: `name ops_per_s p50_ms p99_ms`.
//!
//! ```text
//! cargo run --release -p neokv-client --example bench -- --redis 127.0.0.1:6379 --secs 5 --tasks 32
//! ```

use std::time::{Duration, Instant};

use neokv_client::{LockManager, RedisClient, RedisClientExt};

mod common;
use common::arg;

/// Run `op` in `tasks` tasks for `secs`; operations per second and the
/// latency percentiles of one call of `op` (which does `per_call` operations).
async fn run<F, Fut>(tasks: usize, secs: u64, per_call: u64, op: F) -> (f64, f64, f64)
where
    F: Fn(usize, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let end = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let op = op.clone();
            tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut i = 0;
                while Instant::now() < end {
                    let s = Instant::now();
                    op(t, i).await;
                    lat.push(s.elapsed());
                    i += 1;
                }
                lat
            })
        })
        .collect();
    let mut lat = Vec::new();
    for h in handles {
        lat.extend(h.await.unwrap());
    }
    let took = started.elapsed().as_secs_f64();
    lat.sort_unstable();
    let pct = |p: f64| lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)));
    let ms = |d: Option<&Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    (lat.len() as f64 * per_call as f64 / took, ms(pct(0.5)), ms(pct(0.99)))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let secs: u64 = arg("--secs", "5").parse()?;
    let tasks: usize = arg("--tasks", "32").parse()?;
    let batch: u64 = arg("--batch", "100").parse()?;
    let client = common::client("bench", tasks.max(1))?;
    let locks = LockManager::new(client.clone());
    let ttl = Duration::from_secs(10);

    let l = locks.clone();
    let (ops, p50, p99) = run(tasks, secs, 1, move |t, _| {
        let l = l.clone();
        async move {
            let lock = l.try_lock(&format!("own:{t}"), ttl, Duration::ZERO, Duration::ZERO).await.unwrap();
            assert!(lock.expect("a task's own lock was taken").release().await.unwrap());
        }
    })
    .await;
    println!("lock {ops:.0} {p50:.3} {p99:.3}");

    let (l, c) = (locks.clone(), client.clone());
    let (ops, p50, p99) = run(tasks, secs, 1, move |_, _| {
        let (l, c) = (l.clone(), c.clone());
        async move {
            l.with_lock("shared", ttl, Duration::from_secs(5), Duration::from_millis(1), || async {
                c.incr("shared:count").await.unwrap();
            })
            .await
            .unwrap();
        }
    })
    .await;
    println!("contended {ops:.0} {p50:.3} {p99:.3}");

    let value = "v".repeat(256);
    let c = client.clone();
    let (ops, p50, p99) = run(tasks, secs, batch, move |t, i| {
        let (c, value) = (c.clone(), value.clone());
        async move {
            let replies = c
                .pipeline(|p| {
                    for k in 0..batch {
                        p.set(&format!("p:{}", (t as u64 * 1_000_003 + i * batch + k) % 100_000), &value, None);
                    }
                })
                .await
                .unwrap();
            assert!(replies.iter().all(|r| r.is_ok()));
        }
    })
    .await;
    println!("pipeline {ops:.0} {p50:.3} {p99:.3}");

    let value = "v".repeat(256);
    let c = client.clone();
    let (ops, p50, p99) = run(tasks, secs, 1, move |t, i| {
        let (c, value) = (c.clone(), value.clone());
        async move {
            c.set_value(&format!("s:{}", (t as u64 * 1_000_003 + i) % 100_000), &value, None).await.unwrap();
        }
    })
    .await;
    println!("set {ops:.0} {p50:.3} {p99:.3}");
    Ok(())
}
