//! The nodes of a cluster as this node knows them: ids, node-to-node addresses
//! (from `--peers`, and from the membership for nodes added later), client
//! addresses (learned from each link's hello), the current leader and voters of
//! every region (kept up to date by each region's owning core, read by every
//! core to route a command or answer MOVED), and the ids removed from the
//! cluster, which never join again.
//!
//! Pure data shared by all cores; no I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

/// A node's 40-character id as Redis Cluster clients expect it (CLUSTER NODES,
/// CLUSTER SLOTS): the numeric id, zero-padded, so it reads back at a glance.
pub fn node_name(id: u64) -> String {
    format!("{id:040}")
}

/// Parse `--peers`: `1=127.0.0.1:7001,2=127.0.0.1:7002,...`.
pub fn parse_peers(s: &str) -> Result<BTreeMap<u64, String>, String> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (id, addr) = part.split_once('=').ok_or_else(|| format!("peer '{part}': expected id=host:port"))?;
        let id: u64 = id.trim().parse().map_err(|_| format!("peer '{part}': the id must be a positive integer"))?;
        if id == 0 {
            return Err(format!("peer '{part}': node id 0 is reserved"));
        }
        let addr = addr.trim();
        if addr.rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok()).is_none() {
            return Err(format!("peer '{part}': expected host:port"));
        }
        if out.insert(id, addr.to_string()).is_some() {
            return Err(format!("peer id {id} listed twice"));
        }
    }
    if out.is_empty() {
        return Err("--peers lists no node".into());
    }
    Ok(out)
}

/// One region's Raft state as this node sees it (INFO replication, ROLE, WAIT).
#[derive(Debug, Clone, Default)]
pub struct RegionStatus {
    pub leader: Option<u64>,
    /// This node leads it.
    pub leading: bool,
    pub term: u64,
    pub last_log: u64,
    pub applied: u64,
    /// The last log index purged here (behind a snapshot).
    pub purged: u64,
    /// Ascending.
    pub voters: Vec<u64>,
    /// On the leader: each other member's matched log index.
    pub matched: Vec<(u64, u64)>,
    /// Snapshots from a leader installed here since the process started.
    pub snapshots_in: u64,
    /// openraft's server state (`leader`, `candidate`, `follower`, `learner`,
    /// `shutdown`): a candidate also shows as a follower in `leading`/`voters`.
    pub state: &'static str,
    /// This node's vote is for a leader a quorum granted (false while an
    /// election is open or lost).
    pub vote_committed: bool,
    /// When a probe of the region's Raft core was sent that has not been
    /// answered yet (the core answers between events; a core stuck on a
    /// storage call or a long step leaves it waiting).
    pub probe_sent: Option<std::time::Instant>,
}

pub struct Nodes {
    /// This node's id.
    pub me: u64,
    /// Started with `--join`: a fresh node waits to be added (CLUSTER ADDNODE)
    /// instead of initialising its regions with the `--peers` as voters.
    pub join: bool,
    /// The nodes of `--peers`: the voters a fresh cluster starts with.
    initial: Vec<u64>,
    /// Each region's Raft state as last seen here.
    status: Vec<Mutex<RegionStatus>>,
    /// Per region: the log index of the last entry whose writes were
    /// acknowledged here (as leader), at least that of any write answered so far.
    acked: Vec<AtomicU64>,
    /// Ids removed from some region's membership.
    removed: RwLock<BTreeSet<u64>>,
    /// Where each node listens for node-to-node links.
    cluster_addrs: RwLock<BTreeMap<u64, String>>,
    /// Where each node serves clients (this node's own from its config).
    client_addrs: RwLock<BTreeMap<u64, String>>,
    /// The leader of each region as last seen here; 0: none known.
    leaders: Vec<AtomicU64>,
    /// When each other node was last heard from (any frame on a link, either way).
    heard: Mutex<BTreeMap<u64, std::time::Instant>>,
}

/// A node heard from within this long counts as live (heartbeats go every 0.1 s).
pub const LIVE: std::time::Duration = std::time::Duration::from_secs(1);

impl Nodes {
    pub fn new(me: u64, client_addr: String, peers: BTreeMap<u64, String>, regions: usize, join: bool) -> Nodes {
        Nodes {
            me,
            join,
            initial: peers.keys().copied().collect(),
            status: (0..regions).map(|_| Mutex::new(RegionStatus::default())).collect(),
            acked: (0..regions).map(|_| AtomicU64::new(0)).collect(),
            removed: RwLock::new(BTreeSet::new()),
            cluster_addrs: RwLock::new(peers),
            client_addrs: RwLock::new(BTreeMap::from([(me, client_addr)])),
            leaders: (0..regions).map(|_| AtomicU64::new(0)).collect(),
            heard: Mutex::new(BTreeMap::new()),
        }
    }

    /// A frame came from node `id` (a request on the cluster port, or a
    /// response on one of this node's links).
    pub fn heard_from(&self, id: u64) {
        if let Ok(mut h) = self.heard.lock() {
            h.insert(id, std::time::Instant::now());
        }
    }

    /// This node, or one heard from within [`LIVE`].
    pub fn is_live(&self, id: u64) -> bool {
        id == self.me || self.heard.lock().is_ok_and(|h| h.get(&id).is_some_and(|t| t.elapsed() < LIVE))
    }

    /// True once `region` is served as it will stay: its leader is known with
    /// the address clients reach it at, and it is the node that should lead it
    /// ([`Nodes::preferred_leader`]), or that node is not live (the leader
    /// hands leadership back to it once it is: until then clients would see
    /// the slots move).
    pub fn settled(&self, region: u32) -> bool {
        let Some(leader) = self.leader(region) else { return false };
        if self.client_addr(leader).is_none() {
            return false;
        }
        let want = self.preferred_leader(region);
        leader == want || self.is_removed(want) || !self.is_live(want)
    }

    /// The voters a fresh cluster starts with: every node of `--peers`.
    pub fn initial_members(&self) -> Vec<u64> {
        self.initial.clone()
    }

    /// How many regions the slots are split into here.
    pub fn regions(&self) -> usize {
        self.leaders.len()
    }

    /// A region's voters as last seen here, ascending (the `--peers` until known).
    pub fn voters(&self, region: u32) -> Vec<u64> {
        match self.status.get(region as usize).and_then(|s| s.lock().ok()).map(|s| s.voters.clone()) {
            Some(v) if !v.is_empty() => v,
            _ => self.initial.clone(),
        }
    }

    /// Update what is known of `region`'s Raft state (its owning core, as it changes).
    pub fn update_status(&self, region: u32, f: impl FnOnce(&mut RegionStatus)) {
        if let Some(Ok(mut s)) = self.status.get(region as usize).map(|s| s.lock()) {
            f(&mut s);
        }
    }

    pub fn status(&self, region: u32) -> RegionStatus {
        self.status.get(region as usize).and_then(|s| s.lock().ok()).map(|s| s.clone()).unwrap_or_default()
    }

    /// An entry of `region` holding acknowledged writes was applied at `index`.
    pub fn set_acked(&self, region: u32, index: u64) {
        if let Some(a) = self.acked.get(region as usize) {
            a.fetch_max(index, Ordering::AcqRel);
        }
    }

    /// At least the log index of every write of `region` acknowledged so far.
    pub fn acked(&self, region: u32) -> u64 {
        self.acked.get(region as usize).map_or(0, |a| a.load(Ordering::Acquire))
    }

    pub fn is_removed(&self, id: u64) -> bool {
        self.removed.read().is_ok_and(|r| r.contains(&id))
    }

    pub fn mark_removed(&self, ids: &BTreeSet<u64>) {
        if ids.is_empty() {
            return;
        }
        if let Ok(mut r) = self.removed.write() {
            r.extend(ids.iter().copied());
        }
    }

    pub fn cluster_addr(&self, id: u64) -> Option<String> {
        self.cluster_addrs.read().ok()?.get(&id).cloned()
    }

    /// Learn a node's node-to-node address (a membership change), unless
    /// `--peers` already named one (a test's proxy stands there).
    pub fn learn_cluster_addr(&self, id: u64, addr: &str) {
        if let Ok(mut m) = self.cluster_addrs.write() {
            m.entry(id).or_insert_with(|| addr.to_string());
        }
    }

    pub fn client_addr(&self, id: u64) -> Option<String> {
        self.client_addrs.read().ok()?.get(&id).cloned()
    }

    pub fn learn_client_addr(&self, id: u64, addr: &str) {
        if id == self.me || addr.is_empty() {
            return;
        }
        if let Ok(mut m) = self.client_addrs.write() {
            if m.get(&id).map(String::as_str) != Some(addr) {
                m.insert(id, addr.to_string());
            }
        }
    }

    /// Every node of the cluster (a voter of some region, or this node), with
    /// its client address if learned.
    pub fn all(&self) -> Vec<(u64, Option<String>)> {
        let mut ids: BTreeSet<u64> = (0..self.regions() as u32).flat_map(|r| self.voters(r)).collect();
        ids.insert(self.me);
        ids.into_iter()
            .filter(|&id| id == self.me || !self.is_removed(id))
            .map(|id| (id, self.client_addr(id)))
            .collect()
    }

    pub fn leader(&self, region: u32) -> Option<u64> {
        match self.leaders.get(region as usize)?.load(Ordering::Acquire) {
            0 => None,
            id => Some(id),
        }
    }

    pub fn set_leader(&self, region: u32, leader: Option<u64>) {
        if let Some(l) = self.leaders.get(region as usize) {
            l.store(leader.unwrap_or(0), Ordering::Release);
        }
    }

    /// The node that should lead `region` when every node is up: leaders are
    /// spread round-robin over the region's voters (the `--peers` at first).
    pub fn preferred_leader(&self, region: u32) -> u64 {
        let ids = self.voters(region);
        ids.get(region as usize % ids.len().max(1)).copied().unwrap_or(self.me)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_parse_and_refuse_what_is_not_a_peer_list() {
        let p = parse_peers("1=127.0.0.1:7001, 2=127.0.0.1:7002,3=localhost:7003").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[&3], "localhost:7003");
        for bad in ["", "1=127.0.0.1", "x=1.2.3.4:5", "0=1.2.3.4:5", "1=a:1,1=b:2", "1:127.0.0.1:7001"] {
            assert!(parse_peers(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_forty_characters() {
        assert_eq!(node_name(3).len(), 40);
        assert_ne!(node_name(3), node_name(30));
    }

    #[test]
    fn leaders_are_spread_over_the_members() {
        let peers = parse_peers("1=h:1,2=h:2,3=h:3").unwrap();
        let n = Nodes::new(1, "h:10".into(), peers, 6, false);
        let led: Vec<u64> = (0..6).map(|r| n.preferred_leader(r)).collect();
        assert_eq!(led, [1, 2, 3, 1, 2, 3]);
        assert_eq!(n.leader(4), None);
        n.set_leader(4, Some(2));
        assert_eq!(n.leader(4), Some(2));
        // A fourth voter takes a share; a removed node leaves the list.
        for r in 0..6 {
            n.update_status(r, |s| s.voters = vec![1, 2, 3, 4]);
        }
        let led: Vec<u64> = (0..6).map(|r| n.preferred_leader(r)).collect();
        assert_eq!(led, [1, 2, 3, 4, 1, 2]);
        for r in 0..6 {
            n.update_status(r, |s| s.voters = vec![1, 3, 4]);
        }
        n.mark_removed(&BTreeSet::from([2]));
        assert!(n.is_removed(2) && !n.is_removed(3));
        let all: Vec<u64> = n.all().into_iter().map(|(id, _)| id).collect();
        assert_eq!(all, [1, 3, 4]);
    }
}
