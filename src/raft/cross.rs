//! The apply side of a cross-region write (standalone, several regions): the
//! node-wide rendezvous where the copies of one `Cross` entry meet, and the
//! check at open that voids copies a crash left in some logs only.
//!
//! The coordinator (`shard::cross`) holds every participant's proposer and has
//! each propose the same entry, so cross entries stand in the same relative
//! order in every log that holds them. Each participant's apply writes what
//! precedes the entry, then arrives here. The first participant (lowest region)
//! waits until all have arrived and runs the command once, over every
//! participant's slots, in one RocksDB batch that also holds every participant's
//! applied state; the others wait until it is written. A flush holds that batch
//! whole, so after a crash either every participant's applied index is past the
//! entry or none is, and a replay meets here again exactly as the first time.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_channel::oneshot;

/// The name of one cross-region write: 16 random bytes.
pub type Txn = [u8; 16];

/// One participant at the rendezvous.
pub struct Arrival {
    pub region: u32,
    /// The participant's log index of its copy.
    pub index: u64,
    /// The time its leader stamped on its copy.
    pub now_ms: u64,
    /// Its slots `[start, end)`.
    pub slots: (u16, u32),
    /// Its applied state with the copy applied, written in the executor's batch.
    pub applied: Vec<u8>,
    /// Told once the executor's batch is written (with the entry's time); `None`
    /// for the executor itself.
    done: Option<oneshot::Sender<u64>>,
}

impl Arrival {
    pub fn new(region: u32, index: u64, now_ms: u64, slots: (u16, u32), applied: Vec<u8>) -> Arrival {
        Arrival { region, index, now_ms, slots, applied, done: None }
    }

    /// Tell a waiting participant that the entry is applied, at `now_ms`.
    pub fn finish(self, now_ms: u64) {
        if let Some(d) = self.done {
            let _ = d.send(now_ms);
        }
    }
}

/// What a participant learns at the rendezvous.
pub enum Met {
    /// The executor: every participant (itself first); run the command.
    Run(Vec<Arrival>),
    /// Another participant: the executor wrote the entry, stamped with this time.
    Done(u64),
}

#[derive(Default)]
struct Meeting {
    arrived: Vec<Arrival>,
    executor: Option<oneshot::Sender<Vec<Arrival>>>,
}

/// See the module doc. One per node.
#[derive(Default)]
pub struct Rendezvous {
    meetings: Mutex<HashMap<Txn, Meeting>>,
    opening: Mutex<Opening>,
    /// Copies voided at open because a crash cut their write off before
    /// every participant's log held it (INFO persistence).
    pub voided_at_open: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct Opening {
    cores: usize,
    found: Vec<Found>,
}

/// A cross entry seen at open in a region's log past its applied index.
#[derive(Clone, Debug)]
pub struct Found {
    pub txn: Txn,
    pub participants: Vec<u32>,
    pub region: u32,
    pub index: u64,
    /// Its copy there is voided already (an earlier open found it cut off).
    pub voided: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Rendezvous {
    /// Arrive for `txn`, whose participants are `participants` (ascending).
    /// Err if the executor went away (its state machine failed).
    pub async fn meet(&self, txn: Txn, participants: &[u32], mut me: Arrival) -> Result<Met, CrossError> {
        let executor = participants.first() == Some(&me.region);
        let wait = {
            let mut all = lock(&self.meetings);
            let m = all.entry(txn).or_default();
            if executor {
                let (tx, rx) = oneshot::channel();
                m.arrived.insert(0, me);
                if m.arrived.len() >= participants.len() {
                    let m = all.remove(&txn).unwrap_or_default();
                    return Ok(Met::Run(m.arrived));
                }
                m.executor = Some(tx);
                Err(rx)
            } else {
                let (tx, rx) = oneshot::channel();
                me.done = Some(tx);
                m.arrived.push(me);
                if m.arrived.len() >= participants.len() {
                    if let Some(m) = all.remove(&txn) {
                        if let Some(x) = m.executor {
                            let _ = x.send(m.arrived);
                        }
                    }
                }
                Ok(rx)
            }
        };
        match wait {
            Err(rx) => rx.await.map(Met::Run).map_err(|_| CrossError::RendezvousDropped),
            Ok(rx) => rx.await.map(Met::Done).map_err(|_| CrossError::ExecutorFailed),
        }
    }

    /// At open, before any region applies: every core hands in the cross
    /// entries of its regions' unapplied logs (`cores` in all) and gets back
    /// those of its own regions (`mine`) to void: an entry missing from some
    /// participant's log (a crash cut it off before it reached every log; it was
    /// never acknowledged), or voided in one of them.
    /// Err if the other cores have not all handed theirs in within two
    /// minutes (one failed to open its log).
    pub async fn opening(&self, cores: usize, found: Vec<Found>, mine: &[u32]) -> Result<Vec<(u32, u64)>, CrossError> {
        {
            let mut o = lock(&self.opening);
            o.cores += 1;
            o.found.extend(found);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            {
                let o = lock(&self.opening);
                if o.cores >= cores {
                    return Ok(to_void(&o.found, mine));
                }
                if std::time::Instant::now() > deadline {
                    return Err(CrossError::CoresMissing { read: o.cores, cores });
                }
            }
            glommio::timer::sleep(std::time::Duration::from_millis(1)).await;
        }
    }
}

/// Why a cross-region entry could not be run, or the logs not checked at open.
#[derive(Debug, thiserror::Error)]
pub enum CrossError {
    #[error("the cross-region rendezvous was dropped")]
    RendezvousDropped,
    #[error("the executor of a cross-region write failed")]
    ExecutorFailed,
    #[error("only {read} of {cores} cores read their Raft logs at open")]
    CoresMissing { read: usize, cores: usize },
}

/// The position of a voided marker that voids a whole cross entry (one a crash
/// cut off): positions below it void one command of an entry.
pub const CUT: u32 = u32::MAX;

/// The copies of `mine` that `found` says to void (see [`Rendezvous::opening`]).
pub fn to_void(found: &[Found], mine: &[u32]) -> Vec<(u32, u64)> {
    let mut by_txn: HashMap<Txn, Vec<&Found>> = HashMap::new();
    for f in found {
        by_txn.entry(f.txn).or_default().push(f);
    }
    let mut out = Vec::new();
    for copies in by_txn.values() {
        let want = &copies[0].participants;
        let whole = want.iter().all(|r| copies.iter().any(|f| f.region == *r));
        let voided = copies.iter().any(|f| f.voided);
        if whole && !voided {
            continue;
        }
        out.extend(copies.iter().filter(|f| mine.contains(&f.region) && !f.voided).map(|f| (f.region, f.index)));
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(txn: u8, participants: &[u32], region: u32, index: u64, voided: bool) -> Found {
        Found { txn: [txn; 16], participants: participants.to_vec(), region, index, voided }
    }

    #[test]
    fn an_entry_in_every_participants_log_stays() {
        let f = [found(1, &[0, 1], 0, 5, false), found(1, &[0, 1], 1, 9, false)];
        assert!(to_void(&f, &[0, 1]).is_empty());
    }

    #[test]
    fn an_entry_missing_from_a_log_is_voided_where_it_is() {
        let f = [found(1, &[0, 1, 2], 0, 5, false), found(1, &[0, 1, 2], 2, 7, false)];
        assert_eq!(to_void(&f, &[0, 1, 2]), vec![(0, 5), (2, 7)]);
        assert_eq!(to_void(&f, &[2]), vec![(2, 7)]);
    }

    #[test]
    fn a_copy_voided_anywhere_is_voided_everywhere() {
        let f = [found(3, &[0, 1], 0, 5, true), found(3, &[0, 1], 1, 4, false)];
        assert_eq!(to_void(&f, &[0, 1]), vec![(1, 4)]);
    }

    #[test]
    fn the_executor_runs_once_everyone_arrived() {
        let r = std::sync::Arc::new(Rendezvous::default());
        let ex = glommio::LocalExecutorBuilder::default().make().unwrap();
        ex.run(async move {
            let a = Arrival::new(1, 10, 5, (100, 200), vec![]);
            let other = glommio::spawn_local({
                let r = r.clone();
                async move { r.meet([7; 16], &[0, 1], a).await }
            });
            glommio::timer::sleep(std::time::Duration::from_millis(5)).await;
            let me = Arrival::new(0, 3, 4, (0, 100), vec![]);
            let Ok(Met::Run(all)) = r.meet([7; 16], &[0, 1], me).await else { panic!("the executor must run") };
            assert_eq!(all.iter().map(|a| a.region).collect::<Vec<_>>(), vec![0, 1]);
            for a in all {
                a.finish(9);
            }
            assert!(matches!(other.await, Ok(Met::Done(9))));
        });
    }
}
