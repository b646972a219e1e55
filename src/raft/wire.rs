//! openraft's RPCs as node-to-node frames (`proto/peer.proto`) and back. A
//! frame that does not decode is an `InvalidData` error, never a panic: the
//! other end may run another version or be something else entirely.

use std::io;

use openraft::impls::leader_id_adv::LeaderId;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, TransferLeaderError, TransferLeaderRequest, TransferLeaderResponse,
    VoteRequest, VoteResponse,
};

use super::codec::{entry_from_pb, entry_to_pb, invalid, log_id};
use super::{LogId, TypeConfig, Vote};
use crate::pb;

pub fn log_id_to_pb(id: &LogId) -> pb::PeerLogId {
    pb::PeerLogId { term: id.leader_id.term, node: id.leader_id.node_id, index: id.index }
}

pub fn log_id_from_pb(id: pb::PeerLogId) -> LogId {
    log_id(id.term, id.node, id.index)
}

pub fn vote_to_pb(v: &Vote) -> pb::PeerVote {
    pb::PeerVote { term: v.leader_id.term, node: v.leader_id.node_id, committed: v.committed }
}

pub fn vote_from_pb(v: Option<pb::PeerVote>) -> io::Result<Vote> {
    let v = v.ok_or_else(|| invalid("frame without its vote"))?;
    Ok(Vote { leader_id: LeaderId { term: v.term, node_id: v.node }, committed: v.committed })
}

fn opt_log_id(id: &Option<LogId>) -> Option<pb::PeerLogId> {
    id.as_ref().map(log_id_to_pb)
}

pub fn append_to_pb(r: &AppendEntriesRequest<TypeConfig>) -> pb::AppendReq {
    pb::AppendReq {
        vote: Some(vote_to_pb(&r.vote)),
        prev: opt_log_id(&r.prev_log_id),
        entries: r.entries.iter().map(entry_to_pb).collect(),
        commit: opt_log_id(&r.leader_commit),
    }
}

pub fn append_from_pb(r: pb::AppendReq) -> io::Result<AppendEntriesRequest<TypeConfig>> {
    Ok(AppendEntriesRequest {
        vote: vote_from_pb(r.vote)?,
        prev_log_id: r.prev.map(log_id_from_pb),
        entries: r.entries.into_iter().map(entry_from_pb).collect::<io::Result<_>>()?,
        leader_commit: r.commit.map(log_id_from_pb),
    })
}

pub fn append_resp_to_pb(r: &AppendEntriesResponse<TypeConfig>) -> pb::AppendResp {
    use pb::append_resp::Kind;
    match r {
        AppendEntriesResponse::Success => pb::AppendResp { kind: Kind::Success as i32, ..Default::default() },
        AppendEntriesResponse::PartialSuccess(m) => {
            pb::AppendResp { kind: Kind::Partial as i32, matched: opt_log_id(m), ..Default::default() }
        }
        AppendEntriesResponse::Conflict => pb::AppendResp { kind: Kind::Conflict as i32, ..Default::default() },
        AppendEntriesResponse::HigherVote(v) => {
            pb::AppendResp { kind: Kind::HigherVote as i32, vote: Some(vote_to_pb(v)), ..Default::default() }
        }
    }
}

pub fn append_resp_from_pb(r: pb::AppendResp) -> io::Result<AppendEntriesResponse<TypeConfig>> {
    use pb::append_resp::Kind;
    Ok(match Kind::try_from(r.kind).map_err(|_| invalid(format!("append response kind {}", r.kind)))? {
        Kind::Success => AppendEntriesResponse::Success,
        Kind::Partial => AppendEntriesResponse::PartialSuccess(r.matched.map(log_id_from_pb)),
        Kind::Conflict => AppendEntriesResponse::Conflict,
        Kind::HigherVote => AppendEntriesResponse::HigherVote(vote_from_pb(r.vote)?),
    })
}

pub fn vote_req_to_pb(r: &VoteRequest<TypeConfig>) -> pb::VoteReq {
    pb::VoteReq {
        vote: Some(vote_to_pb(&r.vote)),
        last: opt_log_id(&r.last_log_id),
        leadership_transfer: r.leadership_transfer,
    }
}

pub fn vote_req_from_pb(r: pb::VoteReq) -> io::Result<VoteRequest<TypeConfig>> {
    let mut req = VoteRequest::new(vote_from_pb(r.vote)?, r.last.map(log_id_from_pb));
    req.leadership_transfer = r.leadership_transfer;
    Ok(req)
}

pub fn vote_resp_to_pb(r: &VoteResponse<TypeConfig>) -> pb::VoteResp {
    pb::VoteResp { vote: Some(vote_to_pb(&r.vote)), granted: r.vote_granted, last: opt_log_id(&r.last_log_id) }
}

pub fn vote_resp_from_pb(r: pb::VoteResp) -> io::Result<VoteResponse<TypeConfig>> {
    Ok(VoteResponse::new(vote_from_pb(r.vote)?, r.last.map(log_id_from_pb), r.granted))
}

pub fn transfer_to_pb(r: &TransferLeaderRequest<TypeConfig>) -> pb::TransferReq {
    pb::TransferReq {
        from: Some(vote_to_pb(r.from_leader())),
        to: *r.to_node_id(),
        last: r.last_log_id().map(log_id_to_pb),
    }
}

pub fn transfer_from_pb(r: pb::TransferReq) -> io::Result<TransferLeaderRequest<TypeConfig>> {
    Ok(TransferLeaderRequest::new(vote_from_pb(r.from)?, r.to, r.last.map(log_id_from_pb)))
}

pub fn transfer_resp_to_pb(r: &TransferLeaderResponse<TypeConfig>) -> pb::TransferResp {
    match r {
        Ok(()) => pb::TransferResp::default(),
        Err(TransferLeaderError::VoteChanged { expected, actual }) => pb::TransferResp {
            rejected: 1,
            expected_vote: Some(vote_to_pb(expected)),
            actual_vote: Some(vote_to_pb(actual)),
            ..Default::default()
        },
        Err(TransferLeaderError::LogNotFlushed { expected, actual }) => pb::TransferResp {
            rejected: 2,
            expected_log: opt_log_id(expected),
            actual_log: opt_log_id(actual),
            ..Default::default()
        },
    }
}

pub fn transfer_resp_from_pb(r: pb::TransferResp) -> io::Result<TransferLeaderResponse<TypeConfig>> {
    Ok(match r.rejected {
        0 => Ok(()),
        1 => Err(TransferLeaderError::VoteChanged {
            expected: vote_from_pb(r.expected_vote)?,
            actual: vote_from_pb(r.actual_vote)?,
        }),
        2 => Err(TransferLeaderError::LogNotFlushed {
            expected: r.expected_log.map(log_id_from_pb),
            actual: r.actual_log.map(log_id_from_pb),
        }),
        k => return Err(invalid(format!("transfer response kind {k}"))),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use crate::raft::Member;
    use openraft::EntryPayload;
    use prost::Message;

    use super::*;
    use crate::raft::{Entry, Membership, Proposal};

    fn vote(term: u64, node: u64, committed: bool) -> Vote {
        Vote { leader_id: LeaderId { term, node_id: node }, committed }
    }

    /// Every RPC survives the trip through bytes, with each optional part both
    /// present and absent.
    #[test]
    fn rpcs_roundtrip_through_frames() {
        let batch = pb::RaftBatch { now_ms: 7, ..Default::default() };
        let members = Membership::new(
            vec![BTreeSet::from([1u64, 2, 3])],
            BTreeMap::from([(1u64, Member::default()), (2, Member::default()), (3, Member::default())]),
        )
        .unwrap();
        let entries = vec![
            Entry { log_id: log_id(2, 1, 5), payload: EntryPayload::Blank },
            Entry { log_id: log_id(2, 1, 6), payload: EntryPayload::Normal(Proposal(batch)) },
            Entry { log_id: log_id(2, 1, 7), payload: EntryPayload::Membership(members) },
        ];
        for (prev, commit, entries) in
            [(Some(log_id(2, 1, 4)), Some(log_id(2, 1, 3)), entries.clone()), (None, None, Vec::new())]
        {
            let req = AppendEntriesRequest::<TypeConfig> {
                vote: vote(2, 1, true),
                prev_log_id: prev,
                entries,
                leader_commit: commit,
            };
            let bytes = append_to_pb(&req).encode_to_vec();
            let back = append_from_pb(pb::AppendReq::decode(&bytes[..]).unwrap()).unwrap();
            assert_eq!(format!("{back:?}"), format!("{req:?}"));
        }
        for r in [
            AppendEntriesResponse::Success,
            AppendEntriesResponse::PartialSuccess(Some(log_id(3, 2, 9))),
            AppendEntriesResponse::PartialSuccess(None),
            AppendEntriesResponse::Conflict,
            AppendEntriesResponse::HigherVote(vote(9, 3, false)),
        ] {
            let bytes = append_resp_to_pb(&r).encode_to_vec();
            assert_eq!(append_resp_from_pb(pb::AppendResp::decode(&bytes[..]).unwrap()).unwrap(), r);
        }
        let mut v = VoteRequest::<TypeConfig>::new(vote(4, 2, false), Some(log_id(3, 1, 20)));
        v.leadership_transfer = true;
        assert_eq!(vote_req_from_pb(vote_req_to_pb(&v)).unwrap(), v);
        let v = VoteRequest::<TypeConfig>::new(vote(1, 3, false), None);
        assert_eq!(vote_req_from_pb(vote_req_to_pb(&v)).unwrap(), v);
        for r in [
            VoteResponse::<TypeConfig>::new(vote(4, 2, false), Some(log_id(3, 1, 20)), true),
            VoteResponse::new(vote(5, 1, true), None, false),
        ] {
            assert_eq!(vote_resp_from_pb(vote_resp_to_pb(&r)).unwrap(), r);
        }
        let t = TransferLeaderRequest::<TypeConfig>::new(vote(6, 1, true), 3, Some(log_id(6, 1, 40)));
        assert_eq!(transfer_from_pb(transfer_to_pb(&t)).unwrap(), t);
        for r in [
            Ok(()),
            Err(TransferLeaderError::VoteChanged { expected: vote(6, 1, true), actual: vote(7, 2, false) }),
            Err(TransferLeaderError::LogNotFlushed { expected: Some(log_id(6, 1, 40)), actual: None }),
        ] {
            assert_eq!(transfer_resp_from_pb(transfer_resp_to_pb(&r)).unwrap(), r);
        }
    }

    #[test]
    fn a_frame_without_its_vote_is_an_error() {
        assert!(append_from_pb(pb::AppendReq::default()).is_err());
        assert!(vote_resp_from_pb(pb::VoteResp::default()).is_err());
        assert!(append_resp_from_pb(pb::AppendResp { kind: 99, ..Default::default() }).is_err());
    }
}
