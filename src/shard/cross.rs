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
//! keys it did not declare, and a transaction may hold FLUSHALL. Cross writes
//! are rarer than single-region ones; each costs one log round on every region.

use std::rc::Rc;

use futures_channel::oneshot;

use super::{Core, CoreMsg};
use crate::pb::write_cmd::Op;
use crate::pb::{Cross, WriteCmd};
use crate::protocol::Reply;
use crate::raft::region::CrossHold;
use crate::types::watches::Watched;

/// The region id that stands for "every region": a write planned with it is a
/// cross-region write.
pub const ALL_REGIONS: u32 = u32::MAX;

impl Core {
    /// Run `cmd` as a cross-region write (see the module doc); with `watched`,
    /// only if none of those keys changed (else a null array, as EXEC).
    pub fn submit_cross(&self, cmd: WriteCmd, watched: Vec<Watched>) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        let shared = self.shared.clone();
        let regions: Vec<(u32, Hold)> = shared
            .router
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
            let r = coordinate(&shared, regions, cmd, watched).await;
            let _ = tx.send(r);
        })
        .detach();
        rx
    }
}

enum Hold {
    Here(Rc<crate::raft::region::Region>),
    There(usize),
}

async fn coordinate(shared: &super::Shared, regions: Vec<(u32, Hold)>, cmd: WriteCmd, watched: Vec<Watched>) -> Reply {
    let stopped = || Reply::error("ERR owning core stopped");
    // Hold every proposer, in ascending region id.
    let mut gos = Vec::with_capacity(regions.len());
    for (id, hold) in &regions {
        let (held_tx, held_rx) = oneshot::channel();
        let (go_tx, go_rx) = oneshot::channel();
        let h = CrossHold { held: held_tx, go: go_rx };
        match hold {
            Hold::Here(region) => region.submit_cross(h),
            Hold::There(core) => {
                if shared.mesh[*core].unbounded_send(CoreMsg::Cross { region: *id, h }).is_err() {
                    return stopped();
                }
            }
        }
        match held_rx.await {
            Ok(Ok(())) => gos.push(go_tx),
            // Dropping `gos` releases the regions held so far.
            Ok(Err(r)) => return r,
            Err(_) => return stopped(),
        }
    }
    // Everything proposed anywhere is applied, and nothing moves.
    if !watched.is_empty() {
        match shared.watches.dirty(&shared.storage, &watched, crate::types::now_ms()) {
            Ok(false) => {}
            Ok(true) => return Reply::NilArray,
            Err(e) => return Reply::error(format!("ERR {e}")),
        }
    }
    let participants: Vec<u32> = regions.iter().map(|(id, _)| *id).collect();
    let txn: [u8; 16] = rand::random();
    let entry = WriteCmd {
        op: Some(Op::Cross(Box::new(Cross { txn: txn.to_vec().into(), participants, cmd: Some(Box::new(cmd)) }))),
    };
    let mut replies = Vec::with_capacity(gos.len());
    for go in gos {
        let (tx, rx) = oneshot::channel();
        let _ = go.send(Some((entry.clone(), tx)));
        replies.push(rx);
    }
    // The first region ran the command; another's error (the entry's fate
    // unknown there) wins over it.
    let mut first = None;
    for rx in replies {
        let r = rx.await.unwrap_or_else(|_| Reply::error("ERR write aborted"));
        match &first {
            None => first = Some(r),
            Some(_) if r.is_error() => first = Some(r),
            Some(_) => {}
        }
    }
    first.unwrap_or_else(stopped)
}
