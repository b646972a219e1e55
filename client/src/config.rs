//! `RedisConfig`: where the server is and how to talk to it, from code, a map
//! or a TOML file with the Neton spec's key names.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::{Error, Result};

/// How a [`DefaultRedisClient`](crate::DefaultRedisClient) connects.
///
/// ```
/// use neokv_client::RedisConfig;
/// let c = RedisConfig::from_toml_str("[redis]\nhost = \"10.0.0.5\"\nport = 7000\npoolSize = 32\nkeyPrefix = \"neton\"").unwrap();
/// assert_eq!((c.port, c.pool_size, c.key_prefix.as_deref()), (7000, 32, Some("neton")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// Server host (single-server mode).
    pub host: String,
    /// Server port (single-server mode).
    pub port: u16,
    /// Database number (`SELECT`); 0 in cluster mode.
    pub database: i64,
    /// Connections in the pool at most (the spec's `poolSize`, alias `maxConnections`).
    pub pool_size: usize,
    /// Username for `AUTH` (ACL users); `None` authenticates as `default`.
    pub username: Option<String>,
    /// Password for `AUTH`; `None` sends no `AUTH`.
    pub password: Option<String>,
    /// Longest a call may take, waiting for a connection included.
    pub timeout: Duration,
    /// Prepended with a `:` to every key the client sends (`neton` → `neton:user:1`).
    pub key_prefix: Option<String>,
    /// `host:port` of some cluster nodes: set, the client speaks the Redis Cluster
    /// protocol (follows MOVED and ASK) instead of using `host` and `port`.
    pub cluster_nodes: Vec<String>,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            host: "127.0.0.1".into(),
            port: 6379,
            database: 0,
            pool_size: 16,
            username: None,
            password: None,
            timeout: Duration::from_secs(5),
            key_prefix: None,
            cluster_nodes: Vec::new(),
        }
    }
}

/// The keys `from_map` understands, after an optional `redis.` prefix.
const KEYS: &[&str] = &[
    "host",
    "port",
    "database",
    "poolSize",
    "maxConnections",
    "username",
    "password",
    "timeout",
    "timeoutMs",
    "keyPrefix",
    "clusterNodes",
    "debug",
];

fn bad(what: impl Into<String>) -> Error {
    Error::Config(what.into())
}

impl RedisConfig {
    /// Check that the settings can work; the error names the one that cannot.
    pub fn validate(&self) -> Result<()> {
        if self.cluster_nodes.is_empty() {
            if self.host.trim().is_empty() {
                return Err(bad("redis.host is empty"));
            }
            if self.port == 0 {
                return Err(bad("redis.port must be 1-65535"));
            }
        } else {
            for n in &self.cluster_nodes {
                let ok =
                    n.rsplit_once(':').is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
                if !ok {
                    return Err(bad(format!("redis.clusterNodes: {n:?} is not host:port")));
                }
            }
            if self.database != 0 {
                return Err(bad("redis.database must be 0 in cluster mode (Redis Cluster has one database)"));
            }
        }
        if self.database < 0 {
            return Err(bad(format!("redis.database must not be negative (got {})", self.database)));
        }
        if self.pool_size == 0 {
            return Err(bad("redis.poolSize must be at least 1"));
        }
        if self.timeout.is_zero() {
            return Err(bad("redis.timeout must be more than 0 ms"));
        }
        if let Some(p) = &self.key_prefix {
            if p.is_empty() || p.ends_with(':') {
                return Err(bad(format!("redis.keyPrefix {p:?}: give it without the trailing ':' (and not empty)")));
            }
        }
        Ok(())
    }

    /// Settings from a flat map, as a TOML or properties loader produces: the
    /// spec's keys `redis.host`, `redis.port`, `redis.database`, `redis.poolSize`
    /// (or `redis.maxConnections`), `redis.username`, `redis.password`,
    /// `redis.timeout` (milliseconds), plus `redis.keyPrefix` and
    /// `redis.clusterNodes` (comma-separated `host:port`). The `redis.` prefix may
    /// be left out; `redis.debug` is accepted and ignored. Any other key is an
    /// error (a typo should not pass silently). The result is validated.
    pub fn from_map<K: AsRef<str>, V: AsRef<str>>(map: impl IntoIterator<Item = (K, V)>) -> Result<Self> {
        let mut c = RedisConfig::default();
        for (k, v) in map {
            let (k, v) = (k.as_ref(), v.as_ref().trim());
            let name = k.strip_prefix("redis.").unwrap_or(k);
            let num = |what: &str| -> Result<u64> {
                v.parse::<u64>().map_err(|_| bad(format!("redis.{what}: {v:?} is not a non-negative integer")))
            };
            match name {
                "host" => c.host = v.to_string(),
                "port" => {
                    c.port = u16::try_from(num("port")?).map_err(|_| bad(format!("redis.port: {v} is out of range")))?
                }
                "database" => {
                    c.database = i64::try_from(num("database")?).map_err(|_| bad("redis.database is out of range"))?
                }
                "poolSize" | "maxConnections" => c.pool_size = num(name)? as usize,
                "username" => c.username = Some(v.to_string()).filter(|s| !s.is_empty()),
                "password" => c.password = Some(v.to_string()).filter(|s| !s.is_empty()),
                "timeout" | "timeoutMs" => c.timeout = Duration::from_millis(num(name)?),
                "keyPrefix" => c.key_prefix = Some(v.to_string()).filter(|s| !s.is_empty()),
                "clusterNodes" => {
                    c.cluster_nodes = v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
                }
                "debug" => {}
                _ => {
                    return Err(bad(format!("unknown setting {k:?} (known: {})", KEYS.join(", "))));
                }
            }
        }
        c.validate()?;
        Ok(c)
    }

    /// Settings from TOML text: the `[redis]` table (or the top level if there
    /// is none), with [`from_map`](Self::from_map)'s key names. Numbers may be
    /// TOML integers or strings; `clusterNodes` may be an array.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        let doc: toml::Table = text.parse().map_err(|e| bad(format!("not TOML: {e}")))?;
        let table = match doc.get("redis") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(_) => return Err(bad("`redis` must be a table")),
            None => doc,
        };
        let mut flat: HashMap<String, String> = HashMap::new();
        for (k, v) in table {
            let s = match v {
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Array(a) => a
                    .iter()
                    .map(|x| x.as_str().map(String::from).ok_or_else(|| bad(format!("redis.{k}: expected strings"))))
                    .collect::<Result<Vec<_>>>()?
                    .join(","),
                other => return Err(bad(format!("redis.{k}: unexpected {}", other.type_str()))),
            };
            flat.insert(k, s);
        }
        Self::from_map(flat)
    }

    /// [`from_toml_str`](Self::from_toml_str) of a file.
    pub fn from_toml_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let p = path.as_ref();
        let text = std::fs::read_to_string(p).map_err(|e| bad(format!("read {}: {e}", p.display())))?;
        Self::from_toml_str(&text)
    }

    /// `key` as sent to the server: with the prefix, if there is one.
    pub fn full_key(&self, key: &str) -> String {
        match &self.key_prefix {
            Some(p) => format!("{p}:{key}"),
            None => key.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_keys_load_and_bad_settings_are_named() {
        let c = RedisConfig::from_map([
            ("redis.host", "db.local"),
            ("redis.port", "7001"),
            ("redis.database", "3"),
            ("redis.maxConnections", "8"),
            ("redis.password", "s3cret"),
            ("redis.timeout", "250"),
            ("redis.debug", "true"),
        ])
        .unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.database, c.pool_size, c.password.as_deref(), c.timeout),
            ("db.local", 7001, 3, 8, Some("s3cret"), Duration::from_millis(250))
        );
        for (k, v, says) in [
            ("redis.port", "0", "redis.port"),
            ("redis.port", "70000", "redis.port"),
            ("redis.port", "x", "redis.port"),
            ("redis.poolSize", "0", "poolSize"),
            ("redis.timeout", "0", "timeout"),
            ("redis.database", "-1", "database"),
            ("redis.hots", "a", "unknown setting \"redis.hots\""),
            ("redis.keyPrefix", "neton:", "keyPrefix"),
            ("redis.clusterNodes", "a:1,b", "clusterNodes"),
        ] {
            let e = RedisConfig::from_map([(k, v)]).unwrap_err().to_string();
            assert!(e.contains(says), "{k}={v}: {e}");
        }
        let e = RedisConfig::from_map([("clusterNodes", "a:1"), ("database", "2")]).unwrap_err().to_string();
        assert!(e.contains("cluster mode"), "{e}");
    }

    #[test]
    fn toml_tables_and_arrays() {
        let c = RedisConfig::from_toml_str(
            "[redis]\nclusterNodes = [\"127.0.0.1:7001\", \"127.0.0.1:7002\"]\npoolSize = 4\nkeyPrefix = \"neton\"\n",
        )
        .unwrap();
        assert_eq!(c.cluster_nodes, vec!["127.0.0.1:7001", "127.0.0.1:7002"]);
        assert_eq!(c.full_key("lock:order:1"), "neton:lock:order:1");
        assert!(RedisConfig::from_toml_str("port = 6380").is_ok_and(|c| c.port == 6380));
        assert!(RedisConfig::from_toml_str("[redis]\nport = 1.5").is_err());
        assert!(RedisConfig::from_toml_str("[redis\n").unwrap_err().to_string().contains("not TOML"));
        assert!(RedisConfig::from_toml_str("redis = 3").is_err());
    }
}
