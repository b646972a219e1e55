//! The coordinator of a cross-region write (standalone, several regions): a
//! multi-key command, transaction or script whose keys span regions.
//!
//! It holds every region's proposer in ascending region id (each proposer
//! stops proposing and waits until everything it proposed is applied; holds are
//! taken in one order, so two coordinators never deadlock and cross entries
//! stand in the same relative order in every log), checks the watched keys of a
//! transaction, and has every region propose the same `Cross` entry. Apply runs
//! it once (`raft::cross`); the reply is the first region's.
//!
//! Every region takes part, not only those of the keys: a script may touch
//! keys it did not declare, and a transaction may hold FLUSHALL. An entry costs
//! a hold of every region and a log round on each, so a core's coordinator
//! sends the cross-region writes that gathered meanwhile as one entry
//! ([`CrossQueue`]).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures_channel::oneshot;

use super::{Core, CoreMsg};
use crate::pb::write_cmd::Op;
use crate::pb::{Cross, WriteCmd};
use crate::protocol::Reply;
use crate::raft::outcome::{WriteError, WriteResult};
use crate::raft::region::CrossHold;
use crate::types::watches::Watched;

/// The region id that stands for "every region": a write planned with it is a
/// cross-region write.
pub const ALL_REGIONS: u32 = u32::MAX;

/// The most writes one cross entry carries.
const MAX_BATCH: usize = 1024;

/// A core's cross-region writes waiting for its coordinator: while one entry
/// is under way, the next ones gather, and go together as one entry (one
/// hold of every region, one log round), so cross-region writes from many
/// clients cost about what one does.
#[derive(Default)]
pub struct CrossQueue {
    waiting: RefCell<VecDeque<Pending>>,
    running: Cell<bool>,
}

struct Pending {
    cmd: WriteCmd,
    watched: Vec<Watched>,
    tx: oneshot::Sender<WriteResult>,
}

impl Core {
    /// Run `cmd` as a cross-region write (see the module doc); with `watched`,
    /// only if none of those keys changed (else a null array, as EXEC).
    pub fn submit_cross(&self, cmd: WriteCmd, watched: Vec<Watched>) -> oneshot::Receiver<WriteResult> {
        let (tx, rx) = oneshot::channel();
        self.cross.waiting.borrow_mut().push_back(Pending { cmd, watched, tx });
        if self.cross.running.replace(true) {
            return rx;
        }
        let shared = self.shared.clone();
        let queue = self.cross.clone();
        let regions: Vec<(u32, Hold)> = shared
            .router()
            .regions()
            .iter()
            .map(|r| {
                let hold = match self.local_region(r.id) {
                    Some(region) if r.core == self.id => Hold::Here(region),
                    _ => Hold::There(r.core),
                };
                (r.id, hold)
            })
            .collect();
        glommio::spawn_local(async move {
            // Every connection with bytes ready this turn adds its writes first.
            futures_lite::future::yield_now().await;
            loop {
                let batch = next_batch(&mut queue.waiting.borrow_mut());
                if batch.is_empty() {
                    queue.running.set(false);
                    return;
                }
                coordinate(&shared, &regions, batch).await;
            }
        })
        .detach();
        rx
    }
}

/// The next entry's writes, in order: a write with watched keys goes first in
/// its entry (it is checked against everything before it) or alone.
fn next_batch(waiting: &mut VecDeque<Pending>) -> Vec<Pending> {
    let mut batch = Vec::new();
    while let Some(p) = waiting.front() {
        if batch.len() >= MAX_BATCH || (!batch.is_empty() && !p.watched.is_empty()) {
            break;
        }
        batch.extend(waiting.pop_front());
    }
    batch
}

enum Hold {
    Here(Rc<crate::raft::region::Region>),
    There(usize),
}

async fn coordinate(shared: &super::Shared, regions: &[(u32, Hold)], mut batch: Vec<Pending>) {
    let fail = |batch: Vec<Pending>, e: WriteError| {
        for p in batch {
            let _ = p.tx.send(Err(e.clone()));
        }
    };
    let stopped = || WriteError::Unavailable("owning core stopped");
    // Hold every proposer, in ascending region id.
    let mut gos = Vec::with_capacity(regions.len());
    for (id, hold) in regions {
        let (held_tx, held_rx) = oneshot::channel();
        let (go_tx, go_rx) = oneshot::channel();
        let h = CrossHold { held: held_tx, go: go_rx };
        match hold {
            Hold::Here(region) => region.submit_cross(h),
            Hold::There(core) => {
                if shared.mesh[*core].unbounded_send(CoreMsg::Cross { region: *id, h }).is_err() {
                    return fail(batch, stopped());
                }
            }
        }
        match held_rx.await {
            Ok(Ok(())) => gos.push(go_tx),
            // Dropping `gos` releases the regions held so far.
            Ok(Err(e)) => return fail(batch, e),
            Err(_) => return fail(batch, stopped()),
        }
    }
    // Everything proposed anywhere is applied, and nothing moves: a
    // transaction's watched keys (only the first write of a batch has any).
    if let Some(first) = batch.first().filter(|p| !p.watched.is_empty()) {
        let dirty = match shared.watches.dirty(&shared.storage, &first.watched, crate::types::now_ms()) {
            Ok(d) => d.then_some(Reply::NilArray),
            Err(e) => Some(Reply::error(format!("ERR {e}"))),
        };
        if let Some(r) = dirty {
            let _ = batch.remove(0).tx.send(Ok(r));
            if batch.is_empty() {
                return;
            }
        }
    }
    let participants: Vec<u32> = regions.iter().map(|(id, _)| *id).collect();
    let txn: [u8; 16] = rand::random();
    let (cmds, txs): (Vec<WriteCmd>, Vec<_>) = batch.into_iter().map(|p| (p.cmd, p.tx)).unzip();
    let entry =
        WriteCmd { op: Some(Op::Cross(Cross { txn: txn.to_vec().into(), participants, cmds })), db: 0, epoch: 0 };
    let mut replies = Vec::with_capacity(gos.len());
    for go in gos {
        let (tx, rx) = oneshot::channel();
        let _ = go.send(Some((entry.clone(), tx)));
        replies.push(rx);
    }
    // The first region ran the writes and answers with their replies; another
    // region's failure (the entry's fate unknown there) is every write's answer.
    let mut answer = None;
    for rx in replies {
        let r = rx.await.unwrap_or(Err(WriteError::Aborted));
        match &answer {
            None => answer = Some(r),
            Some(_) if r.is_err() => answer = Some(r),
            Some(_) => {}
        }
    }
    match answer {
        Some(Ok(Reply::Array(each))) if each.len() == txs.len() => {
            for (tx, r) in txs.into_iter().zip(each) {
                let _ = tx.send(Ok(r));
            }
        }
        other => {
            let r = match other {
                Some(Err(e)) => Err(e),
                Some(Ok(r)) if r.is_error() => Ok(r),
                _ => Ok(Reply::error("ERR cross-region write answered out of shape")),
            };
            for tx in txs {
                let _ = tx.send(r.clone());
            }
        }
    }
}
