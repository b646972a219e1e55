//! The pipeline DSL of the spec (§3.2): commands queued in a block, sent in
//! ONE round trip, each with its own result; `transaction` wraps the same in
//! MULTI/EXEC.

use std::time::Duration;

use serde::Serialize;

use crate::codec;
use crate::error::Error;

/// Commands queued by [`RedisClientExt::pipeline`](crate::RedisClientExt::pipeline)
/// or [`transaction`](crate::RedisClientExt::transaction): keys get the
/// client's prefix, values are encoded as [`RedisClientExt::set`](crate::RedisClientExt::set) does.
pub struct RedisPipeline<'a> {
    pub(crate) pipe: redis::Pipeline,
    key: Box<dyn Fn(&str) -> String + Send + Sync + 'a>,
    /// The first value that did not encode: reported instead of sending.
    pub(crate) error: Option<Error>,
}

impl<'a> RedisPipeline<'a> {
    pub(crate) fn new(key: impl Fn(&str) -> String + Send + Sync + 'a) -> Self {
        RedisPipeline { pipe: redis::pipe(), key: Box::new(key), error: None }
    }

    fn cmd(&mut self, name: &str, key: &str) -> &mut redis::Pipeline {
        let k = (self.key)(key);
        self.pipe.cmd(name).arg(k)
    }

    /// `SET key value [PX ttl]`.
    pub fn set<T: Serialize + ?Sized>(&mut self, key: &str, value: &T, ttl: Option<Duration>) -> &mut Self {
        match codec::encode(value) {
            Ok(text) => {
                let c = self.cmd("SET", key).arg(text);
                if let Some(t) = ttl {
                    c.arg("PX").arg((t.as_millis() as u64).max(1));
                }
            }
            Err(reason) => {
                self.error.get_or_insert(Error::Encode { key: key.to_string(), reason });
            }
        }
        self
    }

    /// `DEL key`.
    pub fn delete(&mut self, key: &str) -> &mut Self {
        self.cmd("DEL", key);
        self
    }

    /// `INCR key`.
    pub fn incr(&mut self, key: &str) -> &mut Self {
        self.cmd("INCR", key);
        self
    }

    /// `DECR key`.
    pub fn decr(&mut self, key: &str) -> &mut Self {
        self.cmd("DECR", key);
        self
    }

    /// `HSET key field value`.
    pub fn hset(&mut self, key: &str, field: &str, value: &str) -> &mut Self {
        self.cmd("HSET", key).arg(field).arg(value);
        self
    }

    /// `LPUSH key value`.
    pub fn lpush(&mut self, key: &str, value: &str) -> &mut Self {
        self.cmd("LPUSH", key).arg(value);
        self
    }

    /// `RPUSH key value`.
    pub fn rpush(&mut self, key: &str, value: &str) -> &mut Self {
        self.cmd("RPUSH", key).arg(value);
        self
    }

    /// `SADD key member`.
    pub fn sadd(&mut self, key: &str, member: &str) -> &mut Self {
        self.cmd("SADD", key).arg(member);
        self
    }

    /// How many commands are queued.
    pub fn len(&self) -> usize {
        self.pipe.cmd_iter().count()
    }

    /// Nothing queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
