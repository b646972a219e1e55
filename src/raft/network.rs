//! Node-to-node transport. Standalone groups have one member and never send an
//! RPC; the network answers every call with `Unreachable`. The TCP transport
//! (length-prefixed prost messages) comes with cluster mode.

use openraft::error::{RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::RPCOption;
use openraft::raft::{AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse};
use openraft::{BasicNode, OptionalSend, RaftNetworkFactory, RaftNetworkV2};

use super::state_machine::SnapshotData;
use super::{TypeConfig, Vote};

#[derive(Debug, thiserror::Error)]
#[error("no transport: standalone node")]
struct NoTransport;

/// Factory of [`NoNetwork`] clients.
#[derive(Clone, Default)]
pub struct Standalone;

pub struct NoNetwork;

impl RaftNetworkFactory<TypeConfig> for Standalone {
    type Network = NoNetwork;
    async fn new_client(&mut self, _target: u64, _node: &BasicNode) -> NoNetwork {
        NoNetwork
    }
}

impl RaftNetworkV2<TypeConfig> for NoNetwork {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        _rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        Err(RPCError::Unreachable(Unreachable::new(&NoTransport)))
    }

    async fn vote(
        &mut self,
        _rpc: VoteRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        Err(RPCError::Unreachable(Unreachable::new(&NoTransport)))
    }

    async fn full_snapshot(
        &mut self,
        _vote: Vote,
        _snapshot: openraft::alias::SnapshotOf<TypeConfig, SnapshotData>,
        _cancel: impl std::future::Future<Output = ReplicationClosed> + OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        Err(StreamingError::Unreachable(Unreachable::new(&NoTransport)))
    }
}
