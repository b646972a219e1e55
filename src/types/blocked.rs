//! Clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ...): a node-wide registry
//! of who waits for which key, woken by apply after a write to the key lands.
//!
//! A blocked client does not pop inside apply: it is woken and retries its pop as
//! an ordinary replicated write, so every replica applies the same log. FIFO per
//! key: only the longest-waiting client of a key is woken, and while it retries,
//! further writes to the key are remembered and passed on when it leaves (served,
//! timed out or disconnected), so the next client is woken in turn.
//!
//! Streams wait in [`Lane`]s beside the pops: a write wakes every XREAD (reading
//! takes nothing from the others), and the longest-waiting XREADGROUP of each
//! consumer group (each group has its own entries to hand out; a group's
//! clients are served one after another, first come first served).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_channel::oneshot;

/// The registry. Cheap to consult when nobody waits (one atomic load).
#[derive(Default)]
pub struct Blocked {
    waiting: AtomicUsize,
    /// Clients whose first attempt found nothing and that wait (INFO's
    /// `blocked_clients`): one still trying its first attempt is not blocked
    /// yet, as in Redis, where a command blocks only after it found nothing.
    parked: Arc<AtomicUsize>,
    queues: Mutex<HashMap<Bytes, VecDeque<Arc<Waiter>>>>,
}

/// Who a blocked client competes with for a write to its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// A blocking pop: with every other pop of the key.
    Pop,
    /// XREADGROUP: with the other clients of the same consumer group.
    Group(Bytes),
    /// XREAD: with nobody, every write wakes it.
    Reader,
}

/// One blocked client.
pub struct Waiter {
    keys: Vec<Bytes>,
    lane: Lane,
    state: Mutex<State>,
    /// The registry's count of waiting clients, which this one joins at its
    /// first wait.
    parked: Arc<AtomicUsize>,
}

#[derive(Default)]
struct State {
    /// Trying its pop (at first, and after each wake-up).
    busy: bool,
    /// A write to one of its keys landed while it was busy.
    missed: bool,
    wake: Option<oneshot::Sender<()>>,
    /// Counted in `Blocked::parked` (it has waited once).
    parked: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Blocked {
    /// Queue a client on `keys`, metadata keys in its logical database (it
    /// is busy with its first attempt: a write landing before that attempt's
    /// answer is not lost).
    pub fn register(&self, keys: &[Bytes]) -> Arc<Waiter> {
        self.register_in(keys, Lane::Pop)
    }

    /// [`Blocked::register`] in `lane`.
    pub fn register_in(&self, keys: &[Bytes], lane: Lane) -> Arc<Waiter> {
        let w = Arc::new(Waiter {
            keys: keys.to_vec(),
            lane,
            state: Mutex::new(State { busy: true, ..State::default() }),
            parked: self.parked.clone(),
        });
        let mut q = lock(&self.queues);
        for k in &w.keys {
            let queue = q.entry(k.clone()).or_default();
            if !queue.iter().any(|o| Arc::ptr_eq(o, &w)) {
                queue.push_back(w.clone());
            }
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        w
    }

    /// Remove a client from every queue. Wake-ups it received or missed and did
    /// not use pass to the next client of each of its keys.
    pub fn unregister(&self, w: &Arc<Waiter>) {
        let pass = {
            let mut s = lock(&w.state);
            if std::mem::take(&mut s.parked) {
                self.parked.fetch_sub(1, Ordering::Relaxed);
            }
            s.busy || s.missed
        };
        let mut q = lock(&self.queues);
        for k in &w.keys {
            if let Some(queue) = q.get_mut(k) {
                queue.retain(|o| !Arc::ptr_eq(o, w));
                if queue.is_empty() {
                    q.remove(k);
                } else if pass && w.lane != Lane::Reader {
                    wake_heads(queue, Some(&w.lane));
                }
            }
        }
        self.waiting.fetch_sub(1, Ordering::Relaxed);
    }

    /// After an apply batch is in storage: wake the first client of every
    /// written key (`written` are metadata keys).
    pub fn notify_written(&self, written: &[Vec<u8>]) {
        if self.waiting.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut q = lock(&self.queues);
        for mk in written {
            if let Some(queue) = q.get_mut(&mk[..]) {
                wake_heads(queue, None);
            }
        }
    }

    /// After a FLUSHALL / FLUSHDB: every key may be gone, so the first
    /// client of each lane of every key tries again (a blocked XREADGROUP then
    /// learns its stream went away).
    pub fn notify_all(&self) {
        if self.waiting.load(Ordering::Relaxed) == 0 {
            return;
        }
        let q = lock(&self.queues);
        for queue in q.values() {
            wake_heads(queue, None);
        }
    }

    /// Clients blocked right now (INFO's `blocked_clients`): those waiting
    /// after an attempt that found nothing.
    pub fn blocked(&self) -> usize {
        self.parked.load(Ordering::Relaxed)
    }
}

/// Wake the first waiter of each lane (every reader), or only of `lane`.
fn wake_heads(queue: &VecDeque<Arc<Waiter>>, lane: Option<&Lane>) {
    let mut seen: Vec<&Lane> = Vec::new();
    for w in queue {
        if lane.is_some_and(|l| *l != w.lane) {
            continue;
        }
        if w.lane != Lane::Reader {
            if seen.contains(&&w.lane) {
                continue;
            }
            seen.push(&w.lane);
        }
        wake(w);
    }
}

fn wake(w: &Waiter) {
    let mut s = lock(&w.state);
    match s.wake.take() {
        Some(tx) if !s.busy => {
            s.busy = true;
            let _ = tx.send(());
        }
        other => {
            s.wake = other;
            s.missed = true;
        }
    }
}

impl Waiter {
    /// Its attempt found nothing: wait for a wake-up (ready at once if a write
    /// landed during the attempt).
    pub fn wait(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        let mut s = lock(&self.state);
        if !std::mem::replace(&mut s.parked, true) {
            self.parked.fetch_add(1, Ordering::Relaxed);
        }
        if std::mem::take(&mut s.missed) {
            let _ = tx.send(());
        } else {
            s.busy = false;
            s.wake = Some(tx);
        }
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::keys::meta_key;

    fn mk(k: &str) -> Vec<u8> {
        meta_key(crate::cluster::key_slot(k.as_bytes()), k.as_bytes())
    }

    fn ready(rx: &mut oneshot::Receiver<()>) -> bool {
        matches!(rx.try_recv(), Ok(Some(())))
    }

    #[test]
    fn first_come_first_woken() {
        let w = Blocked::default();
        let k = [Bytes::from(mk("k"))];
        let (a, b) = (w.register(&k), w.register(&k));
        let (mut ra, mut rb) = (a.wait(), b.wait());
        w.notify_written(&[mk("k")]);
        assert!(ready(&mut ra) && !ready(&mut rb), "only the first waiter is woken");
        // a retries; its own pop lands while it is busy: remembered, not passed yet.
        w.notify_written(&[mk("k")]);
        assert!(!ready(&mut rb));
        w.unregister(&a);
        assert!(ready(&mut rb), "a left after being woken: b is next");
        assert_eq!(w.blocked(), 1);
        w.unregister(&b);
        assert_eq!(w.blocked(), 0);
        assert!(lock(&w.queues).is_empty());
    }

    #[test]
    fn a_write_during_the_first_attempt_is_not_lost() {
        let w = Blocked::default();
        let a = w.register(&[Bytes::from(mk("k"))]);
        w.notify_written(&[mk("k"), mk("other")]);
        assert!(ready(&mut a.wait()), "the push raced the first attempt: retry at once");
    }

    #[test]
    fn lanes_wake_every_reader_and_one_client_per_group() {
        let w = Blocked::default();
        let k = [Bytes::from(mk("s"))];
        let g = |n: &'static [u8]| Lane::Group(Bytes::from_static(n));
        let (a1, a2, b1) = (w.register_in(&k, g(b"a")), w.register_in(&k, g(b"a")), w.register_in(&k, g(b"b")));
        let (r1, pop, r2) = (w.register_in(&k, Lane::Reader), w.register(&k), w.register_in(&k, Lane::Reader));
        let mut rx: Vec<_> = [&a1, &a2, &b1, &r1, &pop, &r2].iter().map(|x| x.wait()).collect();
        w.notify_written(&[mk("s")]);
        let woken: Vec<bool> = rx.iter_mut().map(ready).collect();
        assert_eq!(woken, [true, false, true, true, true, true], "a1, b1, both readers and the pop");
        // a1 leaves after its wake-up: only group a's next client inherits it.
        let mut rx2: Vec<_> = [&b1, &r1, &pop, &r2].iter().map(|x| x.wait()).collect();
        w.unregister(&a1);
        assert!(!rx2.iter_mut().any(ready), "nobody outside group a");
        assert!(ready(&mut rx[1]), "a2 is group a's next");
        // A reader leaving passes nothing on.
        let mut b = b1.wait();
        w.unregister(&r1);
        assert!(!ready(&mut b));
    }

    #[test]
    fn leaving_without_a_wakeup_wakes_nobody() {
        let w = Blocked::default();
        let k = [Bytes::from(mk("k"))];
        let (a, b) = (w.register(&k), w.register(&k));
        let (_ra, mut rb) = (a.wait(), b.wait());
        w.unregister(&a);
        assert!(!ready(&mut rb), "a timed out idle: b sleeps on");
    }
}
