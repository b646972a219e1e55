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
use openraft::{BasicNode, OptionalSend, RaftNetworkFactory, RaftNetworkV2};

use super::state_machine::SnapshotData;
use super::{wire, TypeConfig, Vote};
use crate::net::link::{CallError, Link, Links};
use crate::net::{Class, UNREACHABLE};
use crate::pb::peer_frame::Body;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct NetError(String);

/// The network factory of one region.
#[derive(Clone)]
pub enum Network {
    /// A single-member group: nothing to send.
    Standalone,
    /// A region of a cluster, over its core's links.
    Cluster { links: Rc<Links>, region: u32 },
}

/// The client for one target node.
pub struct Peer {
    link: Option<Rc<Link>>,
    region: u32,
}

impl Network {
    fn client(&self, target: u64, class: Class) -> Peer {
        match self {
            Network::Standalone => Peer { link: None, region: 0 },
            Network::Cluster { links, region } => Peer { link: Some(links.link(target, class)), region: *region },
        }
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: u64, _node: &BasicNode) -> Peer {
        self.client(target, Class::Raft)
    }

    async fn new_heartbeat_client(&mut self, target: u64, _node: &BasicNode) -> Peer {
        self.client(target, Class::Heartbeat)
    }

    async fn new_snapshot_client(&mut self, target: u64, _node: &BasicNode) -> Peer {
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

impl Peer {
    async fn call(&self, body: Body, option: &RPCOption) -> Result<Body, RPCError<TypeConfig>> {
        let Some(link) = &self.link else {
            return Err(RPCError::Unreachable(Unreachable::new(&NetError("standalone node".into()))));
        };
        let ttl = option.soft_ttl().max(Duration::from_millis(50));
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

    async fn full_snapshot(
        &mut self,
        _vote: Vote,
        _snapshot: openraft::alias::SnapshotOf<TypeConfig, SnapshotData>,
        _cancel: impl std::future::Future<Output = ReplicationClosed> + OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        // Snapshot shipping (SST files of the region's slot range) is not built yet.
        Err(StreamingError::Unreachable(Unreachable::new(&NetError("snapshot transfer not implemented yet".into()))))
    }
}
