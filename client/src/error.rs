//! The client's one error type.

use std::time::Duration;

/// What a client call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is not usable; the message names the setting.
    #[error("invalid redis config: {0}")]
    Config(String),
    /// The server answered an error, or the connection failed.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// No connection could be had from the pool.
    #[error("redis connection pool: {0}")]
    Pool(String),
    /// The call took longer than the configured timeout.
    #[error("redis call timed out after {0:?}")]
    Timeout(Duration),
    /// A stored value is not of the type asked for.
    #[error("the value of {key:?} does not decode as {type_name}: {reason}")]
    Decode {
        /// The key as the caller named it (without the prefix).
        key: String,
        /// The Rust type asked for.
        type_name: &'static str,
        /// What did not fit.
        reason: String,
    },
    /// `remember`'s loader failed (or its value could not be stored).
    #[error("loading {key:?} failed: {reason}")]
    Load {
        /// The key as the caller named it.
        key: String,
        /// The loader's error.
        reason: String,
    },
    /// A value could not be encoded for storing.
    #[error("the value for {key:?} does not encode: {reason}")]
    Encode {
        /// The key as the caller named it.
        key: String,
        /// What did not fit.
        reason: String,
    },
}

/// The client's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
