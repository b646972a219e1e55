//! The nodes of a cluster as this node knows them: ids, node-to-node addresses
//! (from `--peers`), client addresses (learned from each link's hello), and the
//! current leader of every region (kept up to date by each region's owning core,
//! read by every core to route a command or answer MOVED).
//!
//! Pure data shared by all cores; no I/O.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

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

pub struct Nodes {
    /// This node's id.
    pub me: u64,
    /// Where each node listens for node-to-node links.
    cluster_addrs: RwLock<BTreeMap<u64, String>>,
    /// Where each node serves clients (this node's own from its config).
    client_addrs: RwLock<BTreeMap<u64, String>>,
    /// The leader of each region as last seen here; 0: none known.
    leaders: Vec<AtomicU64>,
}

impl Nodes {
    pub fn new(me: u64, client_addr: String, peers: BTreeMap<u64, String>, regions: usize) -> Nodes {
        Nodes {
            me,
            cluster_addrs: RwLock::new(peers),
            client_addrs: RwLock::new(BTreeMap::from([(me, client_addr)])),
            leaders: (0..regions).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The voters a fresh cluster starts with: every node of `--peers`.
    pub fn initial_members(&self) -> Vec<u64> {
        self.cluster_addrs.read().map(|m| m.keys().copied().collect()).unwrap_or_default()
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

    /// Every node known, with its client address if learned.
    pub fn all(&self) -> Vec<(u64, Option<String>)> {
        let ids: Vec<u64> = self.cluster_addrs.read().map(|m| m.keys().copied().collect()).unwrap_or_default();
        ids.into_iter().map(|id| (id, self.client_addr(id))).collect()
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
    /// spread round-robin over the initial members.
    pub fn preferred_leader(&self, region: u32) -> u64 {
        let ids = self.initial_members();
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
        let n = Nodes::new(1, "h:10".into(), peers, 6);
        let led: Vec<u64> = (0..6).map(|r| n.preferred_leader(r)).collect();
        assert_eq!(led, [1, 2, 3, 1, 2, 3]);
        assert_eq!(n.leader(4), None);
        n.set_leader(4, Some(2));
        assert_eq!(n.leader(4), Some(2));
    }
}
