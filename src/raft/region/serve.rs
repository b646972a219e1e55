//! What a region serves to its peers: Raft's RPCs, membership changes asked
//! of its leader, read indexes for followers' reads, and snapshot chunks
//! (staged into SST files, then installed).

use std::rc::Rc;

use super::{MemberChange, Region};
use crate::net::{error_body, FAILED};
use crate::pb::peer_frame::Body;
use crate::raft::wire;

/// A snapshot being received: its id, the next chunk expected, where it goes.
pub(super) struct Incoming {
    id: String,
    next: u64,
    /// Set while a chunk is being written: a chunk that arrives meanwhile is
    /// out of sequence.
    busy: bool,
    stager: Rc<crate::storage::ingest::Stager>,
}

impl Region {
    /// Serve an RPC another node sent this region.
    pub async fn serve_rpc(&self, body: Body) -> Body {
        match body {
            Body::Append(r) => {
                let call = |q| self.raft.append_entries(q);
                raft_rpc(wire::append_from_pb(r), call, |a| Body::AppendResp(wire::append_resp_to_pb(a))).await
            }
            Body::Vote(r) => {
                raft_rpc(wire::vote_req_from_pb(r), |q| self.raft.vote(q), |v| Body::VoteResp(wire::vote_resp_to_pb(v)))
                    .await
            }
            Body::PreVote(r) => {
                let call = |q| self.raft.pre_vote(q);
                raft_rpc(wire::vote_req_from_pb(r), call, |v| Body::VoteResp(wire::vote_resp_to_pb(v))).await
            }
            Body::Transfer(r) => {
                let call = |q| self.raft.handle_transfer_leader(q);
                raft_rpc(wire::transfer_from_pb(r), call, |t| Body::TransferResp(wire::transfer_resp_to_pb(t))).await
            }
            Body::Snapshot(c) => self.receive_snapshot(c).await,
            Body::Members(r) => {
                let change = match r.op {
                    1 => MemberChange::Add { id: r.node_id, addr: r.addr, incarnation: r.incarnation },
                    2 => MemberChange::Remove { id: r.node_id },
                    3 => MemberChange::Forget { id: r.node_id, incarnation: r.incarnation },
                    op => return error_body(FAILED, format!("membership change {op}")),
                };
                match self.change_members(change).await {
                    Ok(()) => Body::MembersResp(crate::pb::MembersResp {}),
                    Err(e) => e.to_body(),
                }
            }
            Body::ReadIndex(_) => {
                if let Err(e) = self.fresh_time().await {
                    return error_body(crate::net::UNREACHABLE, format!("{e:?}"));
                }
                match self.raft.get_read_linearizer(self.read_policy.clone()).await {
                    Ok(l) => Body::ReadIndexResp(crate::pb::ReadIndexResp {
                        read: Some(wire::log_id_to_pb(l.read_log_id().log_id())),
                        now_ms: self.read_time(),
                    }),
                    Err(e) => error_body(crate::net::UNREACHABLE, e.to_string()),
                }
            }
            _ => error_body(FAILED, "not a request"),
        }
    }

    /// One chunk of a snapshot from the leader (see `raft::snapshot`): its
    /// entries go to the staging thread's SST files; the last one closes them
    /// and installs the snapshot.
    async fn receive_snapshot(&self, c: crate::pb::SnapshotChunk) -> Body {
        let failed = |e: &dyn std::fmt::Display| error_body(FAILED, e.to_string());
        let vote = match wire::vote_from_pb(c.vote) {
            Ok(v) => v,
            Err(e) => return failed(&e),
        };
        let stager = {
            let mut inc = self.incoming.borrow_mut();
            if c.seq == 0 {
                // A new transfer replaces one in progress (dropping its stager
                // removes what it staged).
                // The snapshot's slots (a split the leader applied may have
                // changed them), else this replica's.
                let mine = self.span();
                let (from, to) = match c.slot_end {
                    0 => (mine.start, mine.end),
                    end => (c.slot_start as u16, end.min(crate::cluster::SLOT_COUNT)),
                };
                let ranges = crate::raft::snapshot::ranges(self.id, from, to)
                    .into_iter()
                    .map(|(_, cf, from, to)| (cf, from, to))
                    .collect();
                let Some(name) = crate::raft::snapshot::staging_name(self.id, &c.snapshot_id) else {
                    *inc = None;
                    return error_body(FAILED, "malformed snapshot id");
                };
                match crate::storage::ingest::Stager::start(&self.storage, &name, ranges) {
                    Ok(s) => {
                        *inc = Some(Incoming { id: c.snapshot_id.clone(), next: 0, busy: false, stager: Rc::new(s) })
                    }
                    Err(e) => {
                        *inc = None;
                        return failed(&e);
                    }
                }
            }
            let Some(i) = inc.as_mut().filter(|i| i.id == c.snapshot_id && i.next == c.seq && !i.busy) else {
                *inc = None;
                return error_body(FAILED, "snapshot chunk out of sequence");
            };
            i.next += 1;
            i.busy = true;
            i.stager.clone()
        };
        let mut entries = Vec::new();
        let written = match crate::raft::snapshot::entries(c.data, &mut entries) {
            Ok(()) => stager.push(entries).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        drop(stager);
        let finished = {
            let mut inc = self.incoming.borrow_mut();
            // Still the same transfer (a new one may have started meanwhile)?
            let ours = inc.as_ref().is_some_and(|i| i.id == c.snapshot_id && i.next == c.seq + 1);
            if let Err(e) = written {
                if ours {
                    *inc = None;
                }
                return failed(&e);
            }
            if !ours {
                return error_body(FAILED, "snapshot transfer replaced by another");
            }
            if !c.done {
                inc.as_mut().expect("checked above").busy = false;
                return Body::SnapshotResp(crate::pb::SnapshotResp { vote: Some(wire::vote_to_pb(&vote)) });
            }
            inc.take()
        };
        let Some(i) = finished else { return error_body(FAILED, "no snapshot") };
        let Ok(stager) = Rc::try_unwrap(i.stager) else { return error_body(FAILED, "snapshot still being written") };
        let staged = match stager.finish().await {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let (last_log_id, last_membership, now_ms, removed) = match crate::raft::codec::decode_applied_full(&c.applied)
        {
            Ok(a) => a,
            Err(e) => return failed(&e),
        };
        let meta = crate::raft::SnapshotMeta { last_log_id, last_membership };
        let span = match crate::raft::codec::decode_span(self.id, &c.applied) {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let data = crate::raft::state_machine::SnapshotData::Received { staged, now_ms, removed, span };
        match self.raft.install_full_snapshot(vote, openraft::storage::Snapshot { meta, snapshot: data }).await {
            Ok(resp) => {
                if let Some(n) = &self.nodes {
                    n.update_status(self.id, |s| s.snapshots_in += 1);
                }
                Body::SnapshotResp(crate::pb::SnapshotResp { vote: Some(wire::vote_to_pb(&resp.vote)) })
            }
            Err(e) => failed(&e),
        }
    }
}

/// One of Raft's RPCs: the request decoded, `call` on it, its answer encoded;
/// a request that does not decode, or a call that fails, answers the error.
async fn raft_rpc<Q, R, D: std::fmt::Display, E: std::fmt::Display, F: std::future::Future<Output = Result<R, E>>>(
    req: Result<Q, D>,
    call: impl FnOnce(Q) -> F,
    answer: impl FnOnce(&R) -> Body,
) -> Body {
    match req {
        Ok(req) => match call(req).await {
            Ok(resp) => answer(&resp),
            Err(e) => error_body(FAILED, e.to_string()),
        },
        Err(e) => error_body(FAILED, e.to_string()),
    }
}
