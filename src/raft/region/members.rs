//! Membership changes of one region, on its leader: the step CLUSTER ADDNODE
//! and CLUSTER FORGET take in every region (`shard::members` drives them and
//! retries; a peer asks this region's leader with a `Members` RPC).

use std::collections::BTreeMap;
use std::time::Duration;

use openraft::ServerState;

use super::Region;
use crate::net::{error_body, FAILED};
use crate::pb::peer_frame::Body;
use crate::raft::{Member, NODE_ID};

/// A membership change of one region: CLUSTER ADDNODE and CLUSTER FORGET make
/// one per region, each on the region's leader.
#[derive(Debug, Clone)]
pub enum MemberChange {
    /// `incarnation`: the one the node driving the change linked to (0 until
    /// it has: `shard::members`), recorded in the membership.
    Add {
        id: u64,
        addr: String,
        incarnation: u64,
    },
    Remove {
        id: u64,
    },
    /// CLUSTER FORGET's record, once the node left the region: that
    /// incarnation of it is refused for good (`pb::Forget`; 0: a founding
    /// member's).
    Forget {
        id: u64,
        incarnation: u64,
    },
}

/// How long one step of a membership change may take on a region's leader
/// before the caller is told to try again.
const CHANGE_STEP: Duration = Duration::from_secs(20);

fn step_timeout() -> ChangeError {
    ChangeError::Failed(format!("a membership step took over {CHANGE_STEP:?}"))
}

/// Why a membership change did not happen.
#[derive(Debug, Clone)]
pub enum ChangeError {
    /// Ask the leader (if known).
    NotLeader(Option<u64>),
    /// Never allowed (a removed id, the last member): do not retry.
    Refused(String),
    /// Failed this time (a change under way, no quorum): retry.
    Failed(String),
}

impl ChangeError {
    /// As a peer's answer: kind [`crate::net::NOT_LEADER`] with the leader's
    /// id, [`crate::net::REFUSED`], or [`FAILED`].
    pub fn to_body(&self) -> Body {
        match self {
            ChangeError::NotLeader(l) => error_body(crate::net::NOT_LEADER, l.unwrap_or(0).to_string()),
            ChangeError::Refused(m) => error_body(crate::net::REFUSED, m.clone()),
            ChangeError::Failed(m) => error_body(FAILED, m.clone()),
        }
    }

    pub fn from_remote(kind: u32, message: String) -> ChangeError {
        match kind {
            crate::net::NOT_LEADER => ChangeError::NotLeader(message.parse().ok().filter(|&l| l != 0)),
            crate::net::REFUSED => ChangeError::Refused(message),
            _ => ChangeError::Failed(message),
        }
    }
}

impl Region {
    /// Change this region's membership, on its leader (see [`MemberChange`]).
    /// Adding: the node becomes a learner, and once it holds the log, a voter.
    /// Removing the leader itself: leadership goes first to a voter that holds
    /// the whole log, and the caller asks the new leader.
    pub async fn change_members(&self, change: MemberChange) -> Result<(), ChangeError> {
        use openraft::async_runtime::WatchReceiver;
        use openraft::error::{ClientWriteError, RaftError};
        use openraft::ChangeMembers;
        let metrics = self.raft.metrics();
        let (state, leader, membership, last, matched) = {
            let m = metrics.borrow_watched();
            let matched: BTreeMap<u64, u64> = m
                .replication
                .as_ref()
                .map(|r| r.iter().filter_map(|(id, l)| l.as_ref().map(|l| (*id, l.index))).collect())
                .unwrap_or_default();
            (m.state, m.current_leader, m.membership_config.membership().clone(), m.last_log_index, matched)
        };
        if state != ServerState::Leader {
            return Err(ChangeError::NotLeader(leader));
        }
        let me = self.nodes.as_ref().map_or(NODE_ID, |n| n.me);
        let voters: std::collections::BTreeSet<u64> = membership.voter_ids().collect();
        let map = |e: RaftError<crate::raft::TypeConfig, ClientWriteError<crate::raft::TypeConfig>>| match e {
            RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => ChangeError::NotLeader(f.leader_id),
            e => ChangeError::Failed(e.to_string()),
        };
        match change {
            MemberChange::Add { id, addr, incarnation } => {
                if incarnation == 0 {
                    return Err(ChangeError::Refused(format!("node {id}: no incarnation to add")));
                }
                // The same incarnation added twice is no change; another one
                // of the id is still a member (its removal did not reach this
                // region): it goes first.
                let same = |m: &Member| {
                    m.incarnation == incarnation
                        || (m.incarnation == 0 && self.nodes.as_ref().is_some_and(|n| n.is_founding(id, incarnation)))
                };
                match membership.get_node(&id) {
                    Some(m) if same(m) && voters.contains(&id) => return Ok(()),
                    Some(m) if !same(m) => {
                        return Err(ChangeError::Refused(format!(
                            "node {id} is still a member of region {} as another incarnation: run CLUSTER FORGET {id} first",
                            self.id
                        )))
                    }
                    _ => {}
                }
                if let Some(n) = &self.nodes {
                    n.learn_cluster_addr(id, &addr);
                }
                // openraft waits without end for a learner to catch up and for a
                // change to commit; a step bounded here is tried again by the caller
                // (a learner added twice, or a voter already added, is no change).
                let learner = self.raft.add_learner(id, Member { addr, incarnation }, true);
                crate::net::within(CHANGE_STEP, learner).await.ok_or_else(step_timeout)?.map_err(map)?;
                let add = ChangeMembers::AddVoterIds(std::collections::BTreeSet::from([id]));
                let voter = self.raft.change_membership(add, false);
                crate::net::within(CHANGE_STEP, voter).await.ok_or_else(step_timeout)?.map_err(map)?;
            }
            MemberChange::Forget { id, incarnation } => {
                if membership.get_node(&id).is_some() {
                    return Err(ChangeError::Failed(format!("node {id} is still a member of region {}", self.id)));
                }
                let op = crate::pb::write_cmd::Op::Forget(crate::pb::Forget { node_id: id, incarnation });
                let cmd = crate::pb::WriteCmd { op: Some(op), ..Default::default() };
                let batch = crate::pb::RaftBatch { now_ms: self.stamp(), cmds: vec![cmd], ..Default::default() };
                let write = self.raft.client_write(crate::raft::Proposal(batch));
                crate::net::within(CHANGE_STEP, write).await.ok_or_else(step_timeout)?.map_err(map)?;
            }
            MemberChange::Remove { id } => {
                if membership.get_node(&id).is_none() {
                    return Ok(());
                }
                if voters.contains(&id) && voters.len() == 1 {
                    return Err(ChangeError::Refused(format!("node {id} is the last member of region {}", self.id)));
                }
                if id == me {
                    let to =
                        voters.iter().copied().find(|v| *v != me && matched.get(v).is_some_and(|&i| Some(i) >= last));
                    if let Some(to) = to {
                        let _ = self.raft.trigger().transfer_leader(to).await;
                        // Wait (briefly) for it to take over, so the caller asks the right node.
                        let _ = self
                            .raft
                            .wait(Some(Duration::from_secs(2)))
                            .metrics(|m| m.current_leader.is_some_and(|l| l != me), "leadership handed over")
                            .await;
                    }
                    let leader = metrics.borrow_watched().current_leader.filter(|&l| l != me);
                    return Err(ChangeError::NotLeader(leader));
                }
                // Never fewer than `--replicas` voters because of a removal
                // while a live node could hold a replica: whatever the
                // driver planned (its view of the voters may be stale, or
                // the region may have split off after it planned), a
                // replacement is made a voter here first.
                if let (true, Some(n)) = (voters.contains(&id), &self.nodes) {
                    if voters.len() - 1 < n.replicas() {
                        if let Some(spare) = spare(n, &membership, id) {
                            let Some(addr) = n.cluster_addr(spare) else {
                                return Err(ChangeError::Failed(format!("node {spare}: no address known")));
                            };
                            let incarnation = match spare == me {
                                true => n.incarnation().0,
                                false => n.peer_incarnation(spare).unwrap_or(0),
                            };
                            if incarnation == 0 {
                                return Err(ChangeError::Failed(format!("node {spare}: not linked yet")));
                            }
                            let learner = self.raft.add_learner(spare, Member { addr, incarnation }, true);
                            crate::net::within(CHANGE_STEP, learner).await.ok_or_else(step_timeout)?.map_err(map)?;
                            let add = ChangeMembers::AddVoterIds(std::collections::BTreeSet::from([spare]));
                            let voter = self.raft.change_membership(add, false);
                            crate::net::within(CHANGE_STEP, voter).await.ok_or_else(step_timeout)?.map_err(map)?;
                        }
                    }
                }
                let change = if voters.contains(&id) {
                    ChangeMembers::RemoveVoters(std::collections::BTreeSet::from([id]))
                } else {
                    ChangeMembers::RemoveNodes(std::collections::BTreeSet::from([id]))
                };
                let change = self.raft.change_membership(change, false);
                crate::net::within(CHANGE_STEP, change).await.ok_or_else(step_timeout)?.map_err(map)?;
            }
        }
        Ok(())
    }
}

/// The node to hold a replica of a region (`membership`) in place of `gone`:
/// a live node of the cluster, not removed, not a member yet, holding the
/// fewest replicas as this node sees them (then the lowest id).
fn spare(nodes: &crate::cluster::nodes::Nodes, membership: &crate::raft::Membership, gone: u64) -> Option<u64> {
    let regions = nodes.region_ids();
    nodes
        .all()
        .into_iter()
        .map(|(id, _)| id)
        .filter(|&id| id != gone && membership.get_node(&id).is_none() && nodes.is_live(id) && !nodes.is_removed(id))
        .min_by_key(|&id| (regions.iter().filter(|&&r| nodes.voters(r).contains(&id)).count(), id))
}
