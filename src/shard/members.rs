//! Membership changes of the whole cluster (CLUSTER ADDNODE, CLUSTER FORGET):
//! a region is one Raft group on `--replicas` of the nodes, so a node joining
//! or leaving moves replicas between nodes (`change_everywhere`), each step
//! one change on that region's leader, wherever it is. The node that
//! got the command drives them all at once: a region it leads changes here
//! (on the owning core), any other is sent to its leader over the links; a
//! region without a leader, or whose leader moved, is tried again until a
//! deadline. A refusal (a removed id, the last member) ends it at once.
//!
//! Adding: each region's leader makes the node a learner, waits until it
//! holds the log (by appends or a snapshot), then makes it a voter; the new
//! node then leads its share of the regions (`raft::region`'s rebalance).
//! Removing: leadership of a region the node leads is handed to another voter
//! first. A node leaving a region's membership stays in the cluster (a move);
//! CLUSTER FORGET then writes to every region's log that the node's
//! incarnation is forgotten (`pb::Forget`), and every replica records it (with
//! the applied state and in snapshots): such an id is refused by ADDNODE and
//! its links are refused, so a node with a reused id can never split a region.

use std::time::{Duration, Instant};

use super::Core;
use crate::cluster::placement;
use crate::net::link::CallError;
use crate::net::Class;
use crate::pb::peer_frame::Body;
use crate::raft::region::{ChangeError, MemberChange};

/// How long one change may take in all (a learner may need a snapshot first).
const DEADLINE: Duration = Duration::from_secs(120);

/// CLUSTER ADDNODE / FORGET as moves of replicas (`cluster::placement`):
/// adding a node gives it its share of the replicas (`share_for`: in each
/// region chosen, the node is added, then the busiest node's replica there
/// removed); removing one re-creates each of its replicas on the node
/// holding the fewest first (`replace`), then removes it from every region
/// (a learner too) and records it forgotten there (`pb::Forget`), so no
/// region has fewer than `--replicas` voters because of the command. Regions
/// change at once, each its steps in order; `Err` says which did not and why.
pub async fn change_everywhere(core: &Core, mut change: MemberChange) -> Result<(), String> {
    let Some(nodes) = core.shared.nodes.clone() else { return Err("cluster support disabled".into()) };
    if let MemberChange::Add { id, addr, incarnation } = &mut change {
        reachable(core, *id, addr).await?;
        // The incarnation linked to is the one every region records.
        *incarnation = nodes.peer_incarnation(*id).ok_or_else(|| format!("node {id}: linked, but not admitted"))?;
    }
    // By position: `placement` names a region by its place in `ids`.
    let ids: Vec<u32> = core.shared.router().regions().iter().map(|r| r.id).collect();
    let regions = ids.len();
    let voters: Vec<Vec<u64>> = ids.iter().map(|&r| nodes.voters(r)).collect();
    let mut all: Vec<u64> = nodes.all().into_iter().map(|(id, _)| id).collect();
    // Each region's steps, in order.
    let mut steps: Vec<Vec<MemberChange>> = vec![Vec::new(); regions];
    // FORGET's record, for the regions made while it ran (see below).
    let mut forget_step: Option<MemberChange> = None;
    // Regions changed after the first round.
    let mut done: Vec<u32> = Vec::new();
    match &change {
        MemberChange::Add { id, .. } => {
            if !all.contains(id) {
                all.push(*id);
                all.sort_unstable();
            }
            // Each region of its share gains it, then drops the replica it
            // takes over (a node leaving a region stays in the cluster).
            for m in placement::share_for(*id, &voters, &all, nodes.replicas()) {
                let s = &mut steps[m.region as usize];
                s.push(change.clone());
                if m.remove != *id {
                    s.push(MemberChange::Remove { id: m.remove });
                }
            }
        }
        MemberChange::Remove { id } => {
            // Replicas go to nodes that answer (one down would hold a learner
            // that never catches up); the node leaving counts, as the one
            // whose regions are moved.
            let live: Vec<u64> = all.iter().copied().filter(|&n| n == *id || nodes.is_live(n)).collect();
            for m in placement::replace(*id, &voters, &live, nodes.replicas()) {
                if m.add != *id {
                    steps[m.region as usize].push(add_of(&nodes, m.add)?);
                }
            }
            // Every region drops it (a learner, a voter the placement did not
            // see), then records it forgotten: the incarnation its
            // memberships name (0 for a founding member), refused for good.
            let known = nodes.peer_incarnation(*id).ok_or_else(|| {
                format!("node {id} is not known to this node: run CLUSTER FORGET on a node that has met it")
            })?;
            let incarnation = if nodes.is_founding(*id, known) { 0 } else { known };
            for s in &mut steps {
                s.push(change.clone());
                s.push(MemberChange::Forget { id: *id, incarnation });
            }
            forget_step = Some(MemberChange::Forget { id: *id, incarnation });
        }
        // Only a step of the above.
        MemberChange::Forget { .. } => return Err("not a cluster-wide change".into()),
    }
    let by_pos = &ids;
    let results = futures_util::future::join_all(steps.into_iter().enumerate().map(|(r, steps)| async move {
        for step in steps {
            change_region(core, by_pos[r], step).await?;
        }
        Ok::<(), ChangeError>(())
    }))
    .await;
    let mut failed = Vec::new();
    for (pos, r) in results.into_iter().enumerate() {
        match r {
            Ok(()) => {}
            Err(ChangeError::Refused(m)) => return Err(m),
            Err(e) => failed.push(format!("region {}: {e:?}", ids[pos])),
        }
    }
    if !failed.is_empty() {
        return Err(format!("not every region changed (run it again to finish): {}", failed.join("; ")));
    }
    // A region split off while the node was being removed started with the
    // membership of its parent at the split: it goes the same way (its
    // leader makes a replacement a voter first: `raft::region::members`).
    if let (MemberChange::Remove { id }, Some(forget)) = (&change, forget_step) {
        for _round in 0..5 {
            // A split proposed before the removal applies before it: its
            // region is heard of within a report (0.2 s) or two.
            glommio::timer::sleep(Duration::from_secs(1)).await;
            let router = core.shared.router();
            let missed: Vec<u32> = router
                .regions()
                .iter()
                .map(|r| r.id)
                .filter(|r| !ids.contains(r) || nodes.voters(*r).contains(id) || nodes.status(*r).learners.contains(id))
                .filter(|r| !done.contains(r))
                .collect();
            if missed.is_empty() {
                break;
            }
            let results = futures_util::future::join_all(missed.iter().map(|&r| {
                let forget = forget.clone();
                async move {
                    change_region(core, r, MemberChange::Remove { id: *id }).await?;
                    change_region(core, r, forget).await
                }
            }))
            .await;
            for (&r, res) in missed.iter().zip(results) {
                match res {
                    Ok(()) => done.push(r),
                    Err(ChangeError::Refused(m)) => return Err(m),
                    Err(e) => failed.push(format!("region {r}: {e:?}")),
                }
            }
            if !failed.is_empty() {
                return Err(format!("not every region changed (run it again to finish): {}", failed.join("; ")));
            }
        }
    }
    Ok(())
}

/// The change that adds node `id` (already of the cluster) to a region: its
/// node-to-node address and the incarnation this node accepts of it.
fn add_of(nodes: &crate::cluster::nodes::Nodes, id: u64) -> Result<MemberChange, String> {
    let addr = nodes.cluster_addr(id).ok_or_else(|| format!("node {id}: no node-to-node address known"))?;
    let incarnation = if id == nodes.me {
        nodes.incarnation().0
    } else {
        nodes.peer_incarnation(id).ok_or_else(|| format!("node {id}: not linked yet"))?
    };
    Ok(MemberChange::Add { id, addr, incarnation })
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
        MemberChange::Forget { id, incarnation } => {
            crate::pb::MembersReq { op: 3, node_id: *id, incarnation: *incarnation, ..Default::default() }
        }
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
