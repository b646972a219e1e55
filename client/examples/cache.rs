//! `remember` as a read-through cache: a slow lookup (a pretend database,
//! 300 ms) is cached for 30 s. The first read of a key loads it, and twenty
//! concurrent readers of the cold key share that one load (singleflight);
//! the next read is served from the store in about a round trip.
//!
//! ```text
//! make run                                       # a NeoKV on 127.0.0.1:6379 (any Redis works too)
//! cargo run --release -p neokv-client --example cache -- --redis 127.0.0.1:6379
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use neokv_client::{RedisClient, RedisClientExt};
use serde::{Deserialize, Serialize};

mod common;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Product {
    id: u64,
    name: String,
    price_cents: u64,
}

/// The pretend database: slow, and it counts its reads.
async fn load_product(id: u64, reads: &AtomicUsize) -> Result<Product, String> {
    reads.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(Product { id, name: format!("product {id}"), price_cents: 100 * id })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = common::client("shop", 16)?;
    let reads = Arc::new(AtomicUsize::new(0));
    // A key of this run's own, so the first read is a miss.
    let id = std::process::id() as u64;
    let key = format!("product:{id}");
    client.delete(&[key.as_str()]).await?;

    let started = Instant::now();
    let readers: Vec<_> = (0..20)
        .map(|_| {
            let (client, reads, key) = (client.clone(), reads.clone(), key.clone());
            tokio::spawn(async move {
                client.remember(&key, Duration::from_secs(30), || async move { load_product(id, &reads).await }).await
            })
        })
        .collect();
    let mut first = None;
    for r in readers {
        let p = r.await??;
        assert!(first.get_or_insert_with(|| p.clone()) == &p, "readers saw different products");
    }
    let cold = started.elapsed();
    println!("cold: 20 concurrent readers in {cold:?}, database read {} time(s)", reads.load(Ordering::SeqCst));

    let started = Instant::now();
    let reads2 = reads.clone();
    let p: Product =
        client.remember(&key, Duration::from_secs(30), || async move { load_product(id, &reads2).await }).await?;
    println!(
        "warm: {} in {:?}, database read {} time(s) in all",
        p.name,
        started.elapsed(),
        reads.load(Ordering::SeqCst)
    );
    println!("stored as {}", client.get_value(&key).await?.unwrap_or_default());
    client.delete(&[key.as_str()]).await?;
    Ok(())
}
