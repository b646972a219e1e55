//! Per-connection state commands can change: protocol version, name, auth.

use std::sync::Arc;

use crate::shard::shared::ClientEntry;

pub struct Session {
    pub id: u64,
    /// 2 or 3 (HELLO).
    pub resp: u8,
    pub authed: bool,
    /// Set by QUIT.
    pub closing: bool,
    /// The clock as of this batch of commands (Redis's command time snapshot):
    /// reads judge expiry by it. The connection refreshes it per read and after
    /// waiting for writes.
    pub now_ms: u64,
    /// The registry entry CLIENT LIST shows.
    pub entry: Arc<ClientEntry>,
}

impl Session {
    pub fn new(entry: Arc<ClientEntry>, authed: bool) -> Session {
        Session { id: entry.id, resp: 2, authed, closing: false, now_ms: crate::types::now_ms(), entry }
    }
}
