//! One connection as the rest of the node sees it (CLIENT LIST / INFO / KILL,
//! Pub/Sub delivery, monitors): its identity, what it is doing, and how to
//! close it from any core.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use bytes::Bytes;

/// ClientEntry::flags bits (CLIENT LIST's `O`, `e`, `T`).
pub const CLIENT_MONITOR: u8 = 1;
pub const CLIENT_NO_EVICT: u8 = 2;
pub const CLIENT_NO_TOUCH: u8 = 4;
/// Waiting in a blocking command (CLIENT LIST's `b`).
pub const CLIENT_BLOCKED: u8 = 8;

/// What CLIENT LIST/INFO shows of a connection; updated once per batch of commands.
pub struct ClientEntry {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    pub created: Instant,
    pub last_active: Mutex<Instant>,
    pub last_cmd: AtomicUsize,
    pub resp: AtomicU8,
    pub name: Mutex<Option<Bytes>>,
    pub lib_name: Mutex<Option<Bytes>>,
    pub lib_ver: Mutex<Option<Bytes>>,
    /// Channels, patterns and shard channels subscribed (CLIENT LIST).
    pub subs: [AtomicUsize; 3],
    /// CLIENT_MONITOR | CLIENT_NO_EVICT | CLIENT_NO_TOUCH | CLIENT_BLOCKED.
    pub flags: AtomicU8,
    /// Bytes of the query buffer not yet done with (CLIENT LIST's `qbuf`): the
    /// batch being run, the commands it runs included, as Redis counts them.
    pub qbuf: AtomicUsize,
    /// The selected database (CLIENT LIST's `db`).
    pub db: std::sync::atomic::AtomicU16,
    /// Tells the connection to close (CLIENT KILL, a Pub/Sub buffer limit).
    kill: Mutex<Option<futures_channel::oneshot::Sender<()>>>,
}

impl ClientEntry {
    /// Turn the CLIENT_* flag bits `bit` on or off.
    pub fn set_flag(&self, bit: u8, on: bool) {
        if on {
            self.flags.fetch_or(bit, Ordering::Relaxed);
        } else {
            self.flags.fetch_and(!bit, Ordering::Relaxed);
        }
    }

    pub fn new(id: u64, addr: String, laddr: String) -> ClientEntry {
        ClientEntry {
            id,
            addr,
            laddr,
            created: Instant::now(),
            last_active: Mutex::new(Instant::now()),
            last_cmd: usize::MAX.into(),
            resp: 2.into(),
            name: Mutex::new(None),
            lib_name: Mutex::new(None),
            lib_ver: Mutex::new(None),
            subs: Default::default(),
            flags: AtomicU8::new(0),
            qbuf: AtomicUsize::new(0),
            db: Default::default(),
            kill: Mutex::new(None),
        }
    }

    /// Where `kill` is heard: the connection's loop.
    pub fn on_kill(&self, tx: futures_channel::oneshot::Sender<()>) {
        *self.kill.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
    }

    /// Close the connection (from any core); false if it was already told.
    pub fn kill(&self) -> bool {
        match self.kill.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(tx) => tx.send(()).is_ok(),
            None => false,
        }
    }
}
