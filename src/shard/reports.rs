//! What this node tells every other node of the regions it leads (cluster
//! mode): each region's term, voters and learners, five times a second, on
//! the heartbeat links. A region lives on `--replicas` of the nodes
//! (`cluster::placement`); a node that is not in it learns from these
//! reports where its leader is (MOVED) and who its voters are (CLUSTER
//! SLOTS, SHARDS, NODES), `Nodes::learn`. A node that is in a region knows
//! that from its own group and ignores reports of it.

use std::rc::Rc;
use std::time::Duration;

use super::Core;
use crate::cluster::Descriptor;
use crate::net::Class;
use crate::pb::peer_frame::Body;
use crate::pb::{LeadsReq, LeadsResp, RegionReport};

/// How often the reports go out.
pub const EVERY: Duration = Duration::from_millis(200);

/// Send this node's reports until the node stops (run on one core).
pub async fn run(core: Rc<Core>) {
    let (Some(links), Some(nodes)) = (core.links.clone(), core.shared.nodes.clone()) else { return };
    loop {
        glommio::timer::sleep(EVERY).await;
        if core.shared.stopping.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let router = core.shared.router();
        let regions: Vec<RegionReport> = router
            .regions()
            .iter()
            .filter_map(|r| {
                let st = nodes.status(r.id);
                (st.member && st.leading).then(|| RegionReport {
                    region: r.id,
                    term: st.term,
                    voters: st.voters.clone(),
                    learners: st.learners.clone(),
                    slot_start: r.start as u32,
                    slot_end: r.end,
                    epoch: r.epoch,
                })
            })
            .collect();
        if regions.is_empty() {
            continue;
        }
        for (id, _) in nodes.all().into_iter().filter(|(id, _)| *id != nodes.me) {
            let link = links.link(id, Class::Heartbeat);
            let body = Body::Leads(LeadsReq { regions: regions.clone() });
            glommio::spawn_local(async move {
                let _ = link.call(0, body, EVERY * 2).await;
            })
            .detach();
        }
    }
}

/// A report from node `from`.
pub fn receive(core: &Core, from: u64, req: LeadsReq) -> Body {
    if let Some(nodes) = &core.shared.nodes {
        let spans: Vec<Descriptor> = req
            .regions
            .iter()
            .filter(|r| r.slot_start < r.slot_end && r.slot_end <= crate::cluster::SLOT_COUNT)
            .map(|r| Descriptor { id: r.region, start: r.slot_start as u16, end: r.slot_end, epoch: r.epoch })
            .collect();
        // Routes first: a region learned here is then known with its leader.
        core.shared.learn_regions(&spans);
        for r in req.regions {
            nodes.learn(r.region, r.term, from, &r.voters, &r.learners);
        }
    }
    Body::LeadsResp(LeadsResp {})
}
