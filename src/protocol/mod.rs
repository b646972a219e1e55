//! RESP wire protocol: request decoding, reply encoding, argument parsing.
//!
//! Owns: the byte-level RESP2/RESP3 grammar. Depends on nothing else in the crate.
//! `decode` never copies an argument: every argument is a `Bytes` slice of the frame
//! that was read from the socket. An incomplete frame is `Ok(None)`, not an error.

pub mod cursor;
pub mod decode;
pub mod number;
pub mod rdb;
pub mod rdb_value;
pub mod reply;

pub use cursor::ArgCursor;
pub use decode::{DecodeLimits, Decoder, ProtocolError};
pub use reply::Reply;

/// The Redis version NeoKV answers as (INFO, LOLWUT, `redis.REDIS_VERSION`):
/// the one whose replies it follows.
pub const REDIS_VERSION: &str = "7.0.15";
