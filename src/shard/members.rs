//! Membership changes of the whole cluster (CLUSTER ADDNODE, CLUSTER FORGET):
//! every region is one Raft group, so a node joins or leaves each of them, one
//! change per region on that region's leader, wherever it is. The node that
//! got the command drives them all at once: a region it leads changes here
//! (on the owning core), any other is sent to its leader over the links; a
//! region without a leader, or whose leader moved, is tried again until a
//! deadline. A refusal (a removed id, the last member) ends it at once.
//!
//! Adding: each region's leader makes the node a learner, waits until it
//! holds the log (by appends or a snapshot), then makes it a voter; the new
//! node then leads its share of the regions (`raft::region`'s rebalance).
//! Removing: leadership of a region the node leads is handed to another voter
//! first. Every replica records each id a membership change removed (with the
//! applied state and in snapshots): such an id is refused by ADDNODE and its
//! links are refused, so a node with a reused id can never split a region.

use std::time::{Duration, Instant};

use super::Core;
use crate::net::link::CallError;
use crate::net::Class;
use crate::pb::peer_frame::Body;
use crate::raft::region::{ChangeError, MemberChange};

/// How long one change may take in all (a learner may need a snapshot first).
const DEADLINE: Duration = Duration::from_secs(120);

/// Apply `change` to every region; `Err` says which regions did not change and why.
pub async fn change_everywhere(core: &Core, mut change: MemberChange) -> Result<(), String> {
    let Some(nodes) = core.shared.nodes.clone() else { return Err("cluster support disabled".into()) };
    if let MemberChange::Add { id, addr, incarnation } = &mut change {
        reachable(core, *id, addr).await?;
        // The incarnation linked to is the one every region records.
        *incarnation = nodes.peer_incarnation(*id).ok_or_else(|| format!("node {id}: linked, but not admitted"))?;
    }
    let regions = nodes.regions() as u32;
    let results = futures_util::future::join_all((0..regions).map(|r| change_region(core, r, change.clone()))).await;
    let mut failed = Vec::new();
    for (region, r) in results.into_iter().enumerate() {
        match r {
            Ok(()) => {}
            Err(ChangeError::Refused(m)) => return Err(m),
            Err(e) => failed.push(format!("region {region}: {e:?}")),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("not every region changed (run it again to finish): {}", failed.join("; ")))
    }
}

/// Before a node is added: this node can link to it, and it is an
/// incarnation the cluster accepts (`Nodes::admit`: not one removed, not one
/// that lost its data under an id still in the cluster). A node no region can
/// reach would sit as a learner that never catches up.
async fn reachable(core: &Core, id: u64, addr: &str) -> Result<(), String> {
    let (Some(links), Some(nodes)) = (&core.links, &core.shared.nodes) else { return Ok(()) };
    nodes.learn_cluster_addr(id, addr);
    // A node just started may not listen yet: tried for a few seconds.
    let deadline = Instant::now() + Duration::from_secs(8);
    let e = loop {
        let probe = Body::Hello(crate::pb::PeerHello::default());
        match links.link(id, Class::Raft).call(0, probe, Duration::from_secs(2)).await {
            // Linked: its answer to a hello as a request does not matter.
            Ok(_) | Err(CallError::Remote(..)) => return Ok(()),
            Err(e) if Instant::now() >= deadline => break e,
            Err(_) => glommio::timer::sleep(Duration::from_millis(200)).await,
        }
    };
    match e {
        e if nodes.is_removed(id) => Err(format!(
            "node {id} was removed from the cluster: only a fresh node (an empty data directory, --join) may take its id back, and none was linked at {addr}: {e}"
        )),
        e => Err(format!("node {id} cannot be linked at {addr}: {e}")),
    }
}

async fn change_region(core: &Core, region: u32, change: MemberChange) -> Result<(), ChangeError> {
    let Some(nodes) = core.shared.nodes.clone() else { return Err(ChangeError::Refused("standalone".into())) };
    let deadline = Instant::now() + DEADLINE;
    let mut last = ChangeError::NotLeader(None);
    loop {
        let leader = match &last {
            ChangeError::NotLeader(Some(l)) => Some(*l),
            _ => nodes.leader(region),
        };
        let r = match leader {
            None => Err(ChangeError::NotLeader(None)),
            Some(l) if l == nodes.me => core.change_members(region, change.clone()).await,
            Some(l) => remote(core, l, region, &change, deadline).await,
        };
        match r {
            Ok(()) => return Ok(()),
            Err(e @ ChangeError::Refused(_)) => return Err(e),
            Err(e) => last = e,
        }
        if Instant::now() >= deadline {
            return Err(last);
        }
        // A hint names the new leader: ask it soon; otherwise wait a little.
        let pause = if matches!(last, ChangeError::NotLeader(Some(_))) { 20 } else { 200 };
        glommio::timer::sleep(Duration::from_millis(pause)).await;
    }
}

/// Ask node `leader` to change `region`.
async fn remote(
    core: &Core,
    leader: u64,
    region: u32,
    change: &MemberChange,
    deadline: Instant,
) -> Result<(), ChangeError> {
    let Some(links) = &core.links else { return Err(ChangeError::Refused("standalone".into())) };
    let req = match change {
        MemberChange::Add { id, addr, incarnation } => {
            crate::pb::MembersReq { op: 1, node_id: *id, addr: addr.clone(), incarnation: *incarnation }
        }
        MemberChange::Remove { id } => crate::pb::MembersReq { op: 2, node_id: *id, ..Default::default() },
    };
    // A leader's step is bounded (raft::region::CHANGE_STEP); a leader that
    // cannot be heard from is not waited on longer than that.
    let ttl =
        deadline.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(100), Duration::from_secs(45));
    match links.link(leader, Class::Raft).call(region, Body::Members(req), ttl).await {
        Ok(Body::MembersResp(_)) => Ok(()),
        Ok(_) => Err(ChangeError::Failed("unexpected answer".into())),
        Err(CallError::Remote(kind, m)) => Err(ChangeError::from_remote(kind, m)),
        Err(e) => Err(ChangeError::Failed(e.to_string())),
    }
}
