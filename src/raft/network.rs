//! openraft's network for one region: standalone groups have one member and
//! never send an RPC (every call answers `Unreachable`); in a cluster each RPC
//! becomes a frame on this core's link to the target node (`net::link`), tagged
//! with the region. Heartbeats and snapshots get links of their own, so neither
//! waits behind the other or behind a large append.

use std::rc::Rc;
use std::time::Duration;

use openraft::error::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest, TransferLeaderResponse,
    VoteRequest, VoteResponse,
};
use openraft::{OptionalSend, RaftNetworkFactory, RaftNetworkV2};

use super::state_machine::SnapshotData;
use super::{snapshot, wire, Member, TypeConfig, Vote};
use crate::net::link::{CallError, Link, Links};
use crate::net::{Class, UNREACHABLE};
use crate::pb;
use crate::pb::peer_frame::Body;
use crate::storage::keys::{state_key, StateKind};
use crate::storage::{Cf, Storage};

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct NetError(String);

/// Where a region's snapshot is read from when it is shipped.
#[derive(Clone)]
pub struct Source {
    pub storage: Storage,
    /// The region's slots and epoch as its state machine has them.
    pub span: std::rc::Rc<std::cell::Cell<crate::cluster::Descriptor>>,
}

/// The network factory of one region.
#[derive(Clone)]
pub enum Network {
    /// A single-member group: nothing to send.
    Standalone,
    /// A region of a cluster, over its core's links.
    Cluster { links: Rc<Links>, region: u32, source: Source },
}

/// The client for one target node.
pub struct Peer {
    link: Option<Rc<Link>>,
    region: u32,
    source: Option<Source>,
}

impl Network {
    fn client(&self, target: u64, class: Class) -> Peer {
        match self {
            Network::Standalone => Peer { link: None, region: 0, source: None },
            Network::Cluster { links, region, source } => {
                Peer { link: Some(links.link(target, class)), region: *region, source: Some(source.clone()) }
            }
        }
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: u64, node: &Member) -> Peer {
        // A node added online comes with its address (`--peers` names the first ones).
        if let (Network::Cluster { links, .. }, false) = (&*self, node.addr.is_empty()) {
            links.nodes().learn_cluster_addr(target, &node.addr);
        }
        self.client(target, Class::Raft)
    }

    async fn new_heartbeat_client(&mut self, target: u64, _node: &Member) -> Peer {
        self.client(target, Class::Heartbeat)
    }

    async fn new_snapshot_client(&mut self, target: u64, _node: &Member) -> Peer {
        self.client(target, Class::Snapshot)
    }
}

fn rpc_err(e: CallError) -> RPCError<TypeConfig> {
    match e {
        CallError::Unreachable(m) | CallError::Remote(UNREACHABLE, m) => {
            RPCError::Unreachable(Unreachable::new(&NetError(m)))
        }
        e => RPCError::Network(NetworkError::new(&NetError(e.to_string()))),
    }
}

fn bad_response(what: &str) -> RPCError<TypeConfig> {
    RPCError::Network(NetworkError::new(&NetError(format!("unexpected response to {what}"))))
}

fn decode_err(e: std::io::Error) -> RPCError<TypeConfig> {
    RPCError::Network(NetworkError::new(&e))
}

/// The least time a Raft RPC is given, whatever openraft asks.
const RPC_FLOOR_MS: u64 = 300;

impl Peer {
    async fn call(&self, body: Body, option: &RPCOption) -> Result<Body, RPCError<TypeConfig>> {
        let Some(link) = &self.link else {
            return Err(RPCError::Unreachable(Unreachable::new(&NetError("standalone node".into()))));
        };
        // openraft derives the time limits from the heartbeat interval (appends
        // and heartbeats) and the election timeout (votes): 75 and 150 ms here,
        // too little for a big append behind others on a loaded machine, where a
        // leader that never sees an answer stalls its region without an election.
        let ttl = option.soft_ttl().max(Duration::from_millis(RPC_FLOOR_MS));
        link.call(self.region, body, ttl).await.map_err(rpc_err)
    }
}

impl RaftNetworkV2<TypeConfig> for Peer {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        match self.call(Body::Append(wire::append_to_pb(&rpc)), &option).await? {
            Body::AppendResp(r) => wire::append_resp_from_pb(r).map_err(decode_err),
            _ => Err(bad_response("append")),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        match self.call(Body::Vote(wire::vote_req_to_pb(&rpc)), &option).await? {
            Body::VoteResp(r) => wire::vote_resp_from_pb(r).map_err(decode_err),
            _ => Err(bad_response("vote")),
        }
    }

    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        match self.call(Body::PreVote(wire::vote_req_to_pb(&rpc)), &option).await? {
            Body::VoteResp(r) => wire::vote_resp_from_pb(r).map_err(decode_err),
            _ => Err(bad_response("pre-vote")),
        }
    }

    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        match self.call(Body::Transfer(wire::transfer_to_pb(&req)), &option).await? {
            Body::TransferResp(r) => wire::transfer_resp_from_pb(r).map_err(decode_err),
            _ => Err(bad_response("transfer-leader")),
        }
    }

    /// Ship the region as it is now (see `raft::snapshot`): chunks read from one
    /// RocksDB snapshot, each answered before the next; the timeout is per chunk.
    async fn full_snapshot(
        &mut self,
        vote: Vote,
        _snapshot: openraft::alias::SnapshotOf<TypeConfig, SnapshotData>,
        cancel: impl std::future::Future<Output = ReplicationClosed> + OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let unreachable = |m: String| StreamingError::Unreachable(Unreachable::new(&NetError(m)));
        let Some(src) = self.source.clone() else { return Err(unreachable("standalone node".into())) };
        let storage = src.storage.clone();
        let view = storage.view();
        let applied = view
            .get(Cf::RaftState, &state_key(self.region, StateKind::Applied))
            .map_err(|e| unreachable(e.to_string()))?
            .ok_or_else(|| unreachable("nothing applied yet".into()))?;
        // The slots of the same moment as the data (a split may apply while
        // the snapshot is shipped): those of the applied state, if a split
        // set them, else the range the region always had.
        let span = crate::raft::codec::decode_span(self.region, &applied)
            .map_err(|e| unreachable(e.to_string()))?
            .unwrap_or_else(|| src.span.get());
        let id = format!("{:016x}", rand::random::<u64>());
        let mut cancel = std::pin::pin!(cancel);
        let ranges = snapshot::ranges(self.region, span.start, span.end);
        let mut queue = ranges.into_iter();
        let mut current = queue.next();
        let mut seq = 0;
        loop {
            let mut data = Vec::new();
            // Fill one chunk from where the last one stopped.
            while let Some((cf_no, cf, from, to)) = current.clone() {
                let mut resume = None;
                view.scan(cf, &from, &to, false, |k, v| {
                    snapshot::put(&mut data, cf_no, k, v);
                    if data.len() >= snapshot::CHUNK_BYTES {
                        let mut next = k.to_vec();
                        next.push(0);
                        resume = Some(next);
                        return false;
                    }
                    true
                })
                .map_err(|e| unreachable(e.to_string()))?;
                match resume {
                    Some(next) => {
                        current = Some((cf_no, cf, next, to));
                        break;
                    }
                    None => current = queue.next(),
                }
            }
            let done = current.is_none();
            let chunk = pb::SnapshotChunk {
                vote: Some(wire::vote_to_pb(&vote)),
                snapshot_id: id.clone(),
                data: data.into(),
                done,
                applied: if done { applied.clone() } else { Default::default() },
                seq,
                slot_start: span.start as u32,
                slot_end: span.end,
                epoch: span.epoch,
            };
            seq += 1;
            let send = self.call(Body::Snapshot(chunk), &option);
            let resp = match futures_lite::future::or(async { Some(send.await) }, async {
                let _ = (&mut cancel).await;
                None
            })
            .await
            {
                None => return Err(StreamingError::Closed(ReplicationClosed::new("snapshot transfer cancelled"))),
                Some(r) => r.map_err(|e| match e {
                    RPCError::Unreachable(u) => StreamingError::Unreachable(u),
                    e => StreamingError::Network(NetworkError::new(&NetError(e.to_string()))),
                })?,
            };
            let Body::SnapshotResp(r) = resp else {
                return Err(StreamingError::Network(NetworkError::new(&NetError(
                    "unexpected snapshot response".into(),
                ))));
            };
            let theirs = wire::vote_from_pb(r.vote)
                .map_err(|e| StreamingError::Network(NetworkError::new(&NetError(e.to_string()))))?;
            if done || theirs != vote {
                return Ok(SnapshotResponse::new(theirs));
            }
        }
    }
}
