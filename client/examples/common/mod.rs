//! What the examples share: their command-line flags and the client they
//! build from `--redis host:port`.

use std::sync::Arc;

use neokv_client::{DefaultRedisClient, RedisConfig};

/// The value after `name` on the command line, or `default`.
pub fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.into())
}

/// A client of the server `--redis` names (127.0.0.1:6379 by default),
/// with `prefix` on every key and a pool of `pool_size` connections.
pub fn client(prefix: &str, pool_size: usize) -> Result<Arc<DefaultRedisClient>, Box<dyn std::error::Error>> {
    let redis = arg("--redis", "127.0.0.1:6379");
    let (host, port) = redis.rsplit_once(':').ok_or("--redis takes host:port")?;
    Ok(Arc::new(DefaultRedisClient::new(RedisConfig {
        host: host.into(),
        port: port.parse()?,
        pool_size,
        key_prefix: Some(prefix.into()),
        ..Default::default()
    })?))
}
