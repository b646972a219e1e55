//! The read gate: keeps garbage collection from pulling entries out from under a
//! reader.
//!
//! RocksDB snapshots do not protect against compaction filters: a reader holding a
//! snapshot in which a composite key is alive may find that key's elements gone
//! if the key was deleted later and a compaction dropped them. So every snapshot
//! reader passes the gate, and the garbage-collecting filter, which decides what is
//! garbage from its own snapshot `S`, first waits for every reader that entered
//! before `S` to leave (a grace period, as in RCU). Readers entering later see
//! the deletion already and never look at the dropped entries.
//!
//! Two counters, one per epoch parity: a reader counts itself in the current
//! epoch; a waiter advances the epoch and waits until the previous one drains.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Gate {
    epoch: AtomicU64,
    active: [AtomicUsize; 2],
    /// One grace period at a time.
    waiter: Mutex<()>,
}

/// A reader inside the gate; leaves on drop.
pub struct Pass<'a> {
    gate: &'a Gate,
    parity: usize,
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.gate.active[self.parity].fetch_sub(1, SeqCst);
    }
}

impl Gate {
    /// Enter as a reader.
    pub fn enter(&self) -> Pass<'_> {
        loop {
            let e = self.epoch.load(SeqCst);
            let parity = (e & 1) as usize;
            self.active[parity].fetch_add(1, SeqCst);
            // A waiter that advanced the epoch in between may already have seen the
            // old count drain: count again in the new epoch.
            if self.epoch.load(SeqCst) == e {
                return Pass { gate: self, parity };
            }
            self.active[parity].fetch_sub(1, SeqCst);
        }
    }

    /// Wait until every reader that entered before this call has left. False if
    /// that took longer than `limit` (the caller must then not rely on it).
    pub fn wait_for_readers(&self, limit: Duration) -> bool {
        let _one = self.waiter.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = Instant::now() + limit;
        let drained = |parity: usize| {
            while self.active[parity].load(SeqCst) != 0 {
                if Instant::now() >= deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            true
        };
        let cur = self.epoch.load(SeqCst);
        // Readers left in the other parity by an earlier wait that gave up must be
        // gone before new readers are counted there.
        if !drained(((cur + 1) & 1) as usize) {
            return false;
        }
        self.epoch.store(cur + 1, SeqCst);
        if !drained((cur & 1) as usize) {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waits_for_earlier_readers_only() {
        let g = Arc::new(Gate::default());
        let p = g.enter();
        assert!(!g.wait_for_readers(Duration::from_millis(20)), "an earlier reader is still inside");
        drop(p);
        assert!(g.wait_for_readers(Duration::from_millis(20)));
        // Each wait covers readers of either parity.
        for _ in 0..3 {
            let p = g.enter();
            assert!(!g.wait_for_readers(Duration::from_millis(5)));
            drop(p);
            assert!(g.wait_for_readers(Duration::from_millis(5)));
        }
    }
}
