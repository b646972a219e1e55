//! The nodes of a cluster as this node knows them: ids, node-to-node addresses
//! (from `--peers`, and from the membership for nodes added later), client
//! addresses (learned from each link's hello), the current leader and voters of
//! every region (kept up to date by each region's owning core, read by every
//! core to route a command or answer MOVED), the ids removed from the
//! cluster, and this node's identity ([`Identity`]: its incarnation, the
//! cluster id, the incarnations of its peers it accepts).
//!
//! Pure data shared by all cores; no I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

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
    /// Members that are not voters (yet), ascending.
    pub learners: Vec<u64>,
    /// This node is in the region's membership (a voter or a learner) as its
    /// own group knows it: the fields above are the group's. Otherwise they
    /// are what the region's leader last reported ([`Nodes::learn`]).
    pub member: bool,
    /// The region's leader reported voters and learners without this node
    /// while its own group still counted it in: its replica moved elsewhere
    /// and the group never applied the membership that says so (a removed
    /// node is sent nothing more). The reports stand until one lists it again.
    pub left: bool,
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

/// A node's durable identity, and what it knows of its peers' (kept in
/// `<dir>/NEOKV-NODE`, `storage::identity`, written before any Raft state).
///
/// The incarnation is drawn when a data directory is first used: a node that
/// lost its directory comes back under its old id with a new incarnation, and
/// its peers, which recorded the old one at first contact, refuse it (it
/// forgot its votes and its log, and must never vote or take appends as its
/// old self) until an operator removes it (CLUSTER FORGET) and adds it back
/// fresh (`--join`, CLUSTER ADDNODE). The cluster id is the incarnation of the
/// lowest-numbered node of a fresh cluster's `--peers`, made when it first
/// starts; the others learn it at first contact and keep it, and nodes that
/// know different ones never talk. Every hello carries both; votes and
/// appends only travel on links whose hellos were accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub node_id: u64,
    pub incarnation: u64,
    /// 0: not learned yet.
    pub cluster_id: u64,
    /// Each peer's incarnation, as first met.
    pub peers: BTreeMap<u64, u64>,
    /// Peers whose incarnation was made by `--join` (their hello said so),
    /// as first met: not a founding member of the cluster.
    pub joined: BTreeSet<(u64, u64)>,
    /// Incarnations removed from the cluster (CLUSTER FORGET): refused for
    /// good. `(id, 0)`: the founding member `id` was removed, whatever its
    /// incarnation (no log entry names a founding member's).
    pub removed: BTreeSet<(u64, u64)>,
}

impl Identity {
    /// A data directory used for the first time by node `node_id`; `founder`:
    /// it is the lowest-numbered node of a fresh cluster, whose incarnation
    /// becomes the cluster id.
    pub fn fresh(node_id: u64, founder: bool) -> Identity {
        let incarnation = rand::random::<u64>().max(1);
        Identity { node_id, incarnation, cluster_id: if founder { incarnation } else { 0 }, ..Default::default() }
    }

    /// Its text, one fact a line.
    pub fn encode(&self) -> String {
        let mut s = format!("node {}\nincarnation {}\ncluster {}\n", self.node_id, self.incarnation, self.cluster_id);
        for (id, inc) in &self.peers {
            s.push_str(&format!("peer {id} {inc}\n"));
        }
        for (id, inc) in &self.joined {
            s.push_str(&format!("joined {id} {inc}\n"));
        }
        for (id, inc) in &self.removed {
            s.push_str(&format!("removed {id} {inc}\n"));
        }
        s
    }

    pub fn decode(text: &str) -> Result<Identity, String> {
        let mut out = Identity::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let num =
                |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).ok_or_else(|| format!("bad line '{line}'"));
            match f[0] {
                "node" => out.node_id = num(1)?,
                "incarnation" => out.incarnation = num(1)?,
                "cluster" => out.cluster_id = num(1)?,
                "peer" => {
                    out.peers.insert(num(1)?, num(2)?);
                }
                "removed" => {
                    out.removed.insert((num(1)?, num(2)?));
                }
                "joined" => {
                    out.joined.insert((num(1)?, num(2)?));
                }
                // Written by an earlier NeoKV, which counted removals by log
                // entry: a removal now names its incarnation.
                "forget" | "rejoining" => {}
                _ => return Err(format!("unknown line '{line}'")),
            }
        }
        if out.node_id == 0 || out.incarnation == 0 {
            return Err("no node id or incarnation".into());
        }
        Ok(out)
    }
}

/// What a node knows of one region ([`Nodes`]).
#[derive(Debug, Default)]
struct Known {
    /// The voters it starts with in a fresh cluster (`placement::initial`;
    /// none for a region made by a split).
    initial: Vec<u64>,
    /// Its Raft state as last seen here.
    status: Mutex<RegionStatus>,
    /// The log index of the last entry whose writes were acknowledged here
    /// (as leader), at least that of any write answered so far.
    acked: AtomicU64,
    /// Its leader as last seen here; 0: none known.
    leader: AtomicU64,
    /// The ids CLUSTER FORGET removed (`pb::Forget`) and no membership
    /// change added back.
    removed: Mutex<BTreeSet<u64>>,
}

/// Writes this node's identity durably (`storage::identity::save`), set by
/// the server: `Nodes` itself does no I/O.
pub type Persist = Box<dyn Fn(&Identity) -> Result<(), String> + Send + Sync>;

pub struct Nodes {
    /// This node's id.
    pub me: u64,
    /// Started with `--join`: a fresh node waits to be added (CLUSTER ADDNODE)
    /// instead of initialising its regions with the `--peers` as voters.
    pub join: bool,
    /// The nodes of `--peers`: the nodes a fresh cluster starts with.
    initial: Vec<u64>,
    /// Voters per region (`--replicas`).
    replicas: usize,
    /// How many regions a fresh cluster starts with (`--regions`).
    initial_regions: usize,
    /// What this node knows of each region: every region of a fresh
    /// cluster, then those made by splits or learned from reports.
    regions: RwLock<BTreeMap<u32, Arc<Known>>>,
    /// Where each node listens for node-to-node links.
    cluster_addrs: RwLock<BTreeMap<u64, String>>,
    /// Where each node serves clients (this node's own from its config).
    client_addrs: RwLock<BTreeMap<u64, String>>,
    /// When each other node was last heard from (any frame on a link, either way).
    heard: Mutex<BTreeMap<u64, std::time::Instant>>,
    /// This node's identity and its peers' incarnations.
    identity: Mutex<Identity>,
    persist: Option<Persist>,
    /// Refusals already logged (one line per peer incarnation, not per retry).
    warned: Mutex<BTreeSet<(u64, u64)>>,
}

/// A node heard from within this long counts as live (heartbeats go every 0.1 s).
pub const LIVE: std::time::Duration = std::time::Duration::from_secs(1);

impl Nodes {
    pub fn new(me: u64, client_addr: String, peers: BTreeMap<u64, String>, regions: usize, join: bool) -> Nodes {
        Self::with_identity(me, client_addr, peers, regions, join, Identity::fresh(me, false), None)
    }

    /// [`Nodes::new`] for a node with this identity, kept by `persist`.
    pub fn with_identity(
        me: u64,
        client_addr: String,
        peers: BTreeMap<u64, String>,
        regions: usize,
        join: bool,
        identity: Identity,
        persist: Option<Persist>,
    ) -> Nodes {
        Nodes {
            identity: Mutex::new(identity),
            persist,
            warned: Mutex::new(BTreeSet::new()),
            me,
            join,
            initial: peers.keys().copied().collect(),
            replicas: peers.len(),
            initial_regions: regions,
            regions: RwLock::new(
                (0..regions as u32)
                    .map(|r| (r, Arc::new(Known { initial: peers.keys().copied().collect(), ..Known::default() })))
                    .collect(),
            ),
            cluster_addrs: RwLock::new(peers),
            client_addrs: RwLock::new(BTreeMap::from([(me, client_addr)])),
            heard: Mutex::new(BTreeMap::new()),
        }
    }

    /// Place `replicas` voters per region (at most every node; see
    /// `cluster::placement`) instead of every node.
    pub fn with_replicas(mut self, replicas: usize) -> Nodes {
        self.replicas = replicas.max(1);
        // A node joining a running cluster places nothing: it learns where
        // the regions are from the others' reports.
        let placement = match self.join {
            true => vec![Vec::new(); self.initial_regions],
            false => super::placement::initial(self.initial_regions, &self.initial, self.replicas),
        };
        let regions = placement
            .into_iter()
            .enumerate()
            .map(|(r, initial)| (r as u32, Arc::new(Known { initial, ..Known::default() })))
            .collect();
        self.regions = RwLock::new(regions);
        self
    }

    /// Voters per region (`--replicas`; a fresh cluster of fewer nodes starts
    /// with every node a voter, and regions gain the nodes added later).
    pub fn replicas(&self) -> usize {
        self.replicas
    }

    /// Why a node whose hello says `regions` and `replicas` cannot be of this
    /// node's cluster (0: not said), if it cannot.
    pub fn layout_conflict(&self, id: u64, regions: u32, replicas: u32) -> Option<String> {
        if regions != 0 && regions as usize != self.initial_regions {
            return Some(format!(
                "node {id} has {regions} regions, this node {} (start it with --regions {})",
                self.initial_regions, self.initial_regions
            ));
        }
        if replicas != 0 && replicas as usize != self.replicas && !self.join {
            return Some(format!(
                "node {id} places {replicas} voters per region, this node {} (start it with --replicas {})",
                self.replicas, self.replicas
            ));
        }
        None
    }

    /// The voters `region` starts with in a fresh cluster.
    pub fn initial_voters(&self, region: u32) -> Vec<u64> {
        self.known(region).map(|k| k.initial.clone()).unwrap_or_default()
    }

    /// `region`'s leader reported it without this node, which its own group
    /// has not learned ([`RegionStatus::left`]).
    pub fn left(&self, region: u32) -> bool {
        self.known(region).is_some_and(|k| k.status.lock().is_ok_and(|s| s.left))
    }

    /// This node is in `region`'s membership (as its own group knows).
    pub fn hosts(&self, region: u32) -> bool {
        self.known(region).is_some_and(|k| k.status.lock().is_ok_and(|s| s.member))
    }

    /// What `region`'s leader `leader` reports of it in term `term`: taken
    /// unless this node is a member (its own group knows better) or knows a
    /// later term.
    pub fn learn(&self, region: u32, term: u64, leader: u64, voters: &[u64], learners: &[u64]) {
        let k = self.known_or_add(region);
        let Ok(mut s) = k.status.lock() else { return };
        let listed = voters.contains(&self.me) || learners.contains(&self.me);
        if listed {
            s.left = false;
        } else if s.member && !s.leading && term >= s.term {
            s.member = false;
            s.left = true;
        }
        if s.member || term < s.term {
            return;
        }
        s.term = term;
        s.leader = Some(leader);
        s.leading = false;
        s.voters = voters.to_vec();
        s.learners = learners.to_vec();
        drop(s);
        self.set_leader(region, Some(leader));
    }

    /// This node's incarnation and the cluster id it knows (0: none yet), for
    /// its hellos.
    pub fn incarnation(&self) -> (u64, u64) {
        let i = self.identity.lock().unwrap_or_else(|e| e.into_inner());
        (i.incarnation, i.cluster_id)
    }

    /// A hello from node `id`, incarnation `incarnation`, of cluster
    /// `cluster` (0: not known to it): may a link to it carry frames? The first
    /// incarnation met of each peer is recorded (durably, before the answer);
    /// another one later is a node that lost its data and is refused, as is an
    /// incarnation removed from the cluster or another cluster's node. Once an
    /// id was forgotten, only a `joining` node (fresh, `--join`) takes it back;
    /// whether it joined is recorded with it (a founding member's removal
    /// names no incarnation, [`Nodes::forgot`]).
    pub fn admit(&self, id: u64, incarnation: u64, cluster: u64, joining: bool) -> Result<(), String> {
        let mut i = self.identity.lock().unwrap_or_else(|e| e.into_inner());
        let refusal = if id == self.me {
            Some(format!("node {id} is this node's own id"))
        } else if incarnation == 0 {
            Some(format!("node {id} sent no incarnation (a NeoKV without node identities)"))
        } else if cluster != 0 && i.cluster_id != 0 && cluster != i.cluster_id {
            Some(format!("node {id} belongs to another cluster (id {cluster}, this one {})", i.cluster_id))
        } else if i.removed.contains(&(id, incarnation))
            || (!joining && !i.peers.contains_key(&id) && i.removed.iter().any(|&(r, _)| r == id))
        {
            Some(format!(
                "node {id} (incarnation {incarnation}) was removed from this cluster; to bring it back, restart it with an empty data directory and --join, then run CLUSTER ADDNODE {id} <host:cluster-port>"
            ))
        } else if i.peers.get(&id).is_some_and(|&known| known != incarnation) {
            Some(format!(
                "node {id} came back as a new incarnation ({incarnation}, known as {}): it lost its data directory and may not vote or take appends as its old self. Remove it with CLUSTER FORGET {id} on a node of the cluster, then restart it with an empty data directory and --join and run CLUSTER ADDNODE {id} <host:cluster-port>",
                i.peers[&id]
            ))
        } else {
            None
        };
        if let Some(why) = refusal {
            if self.warned.lock().is_ok_and(|mut w| w.insert((id, incarnation))) {
                eprintln!("neokv: refusing node {id}: {why}");
            }
            return Err(why);
        }
        let mut changed = i.peers.insert(id, incarnation).is_none();
        if changed && joining {
            i.joined.insert((id, incarnation));
        }
        if i.cluster_id == 0 && cluster != 0 {
            i.cluster_id = cluster;
            changed = true;
        }
        if changed {
            self.save(&i)?;
        }
        Ok(())
    }

    /// Incarnations CLUSTER FORGET removed (`pb::Forget`), as
    /// `(id, incarnation)`, 0 for a founding member: refused for good; a node
    /// brought back under the same id must be a new incarnation (an empty
    /// directory, `--join`). A removal names the incarnation it removed, so
    /// the same one applied again (a replay after a restart, a region that
    /// applies it late, a replica catching up from far behind) leaves alone
    /// the node added back since.
    pub fn forgot(&self, gone: &[(u64, u64)]) {
        if gone.is_empty() {
            return;
        }
        let mut i = self.identity.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = false;
        for &(id, inc) in gone {
            changed |= i.removed.insert((id, inc));
            let current = i.peers.get(&id).copied();
            // A founding member is the incarnation of the id that did not join.
            let removes = current.is_some_and(|c| c == inc || (inc == 0 && !i.joined.contains(&(id, c))));
            if let (true, Some(c)) = (removes, current) {
                i.peers.remove(&id);
                i.joined.remove(&(id, c));
                changed |= i.removed.insert((id, c));
            }
        }
        if changed {
            if let Err(e) = self.save(&i) {
                eprintln!("neokv: recording removed nodes {gone:?}: {e}");
            }
        }
    }

    /// `incarnation` is the one of `id` this node accepts, and a founding
    /// member's (it did not join).
    pub fn is_founding(&self, id: u64, incarnation: u64) -> bool {
        let i = self.identity.lock().unwrap_or_else(|e| e.into_inner());
        i.peers.get(&id) == Some(&incarnation) && !i.joined.contains(&(id, incarnation))
    }

    /// The incarnation of `id` this node accepts (first met), if any.
    pub fn peer_incarnation(&self, id: u64) -> Option<u64> {
        self.identity.lock().unwrap_or_else(|e| e.into_inner()).peers.get(&id).copied()
    }

    fn save(&self, i: &Identity) -> Result<(), String> {
        match &self.persist {
            Some(p) => p(i),
            None => Ok(()),
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

    /// How many regions a fresh cluster starts with (`--regions`).
    pub fn initial_regions(&self) -> usize {
        self.initial_regions
    }

    /// Every region known here, ascending.
    pub fn region_ids(&self) -> Vec<u32> {
        self.regions.read().map(|r| r.keys().copied().collect()).unwrap_or_default()
    }

    fn known(&self, region: u32) -> Option<Arc<Known>> {
        self.regions.read().ok()?.get(&region).cloned()
    }

    fn known_or_add(&self, region: u32) -> Arc<Known> {
        if let Some(k) = self.known(region) {
            return k;
        }
        let mut r = self.regions.write().unwrap_or_else(|e| e.into_inner());
        r.entry(region).or_default().clone()
    }

    /// `child`, split from `parent` here: it starts with what is known of
    /// its parent (its voters, learners, leader, term and removed nodes).
    pub fn split(&self, parent: u32, child: u32) {
        let Some(p) = self.known(parent) else { return };
        let k = self.known_or_add(child);
        if let (Ok(from), Ok(mut to)) = (p.status.lock(), k.status.lock()) {
            *to = from.clone();
            to.snapshots_in = 0;
            to.matched = Vec::new();
        }
        if let (Ok(from), Ok(mut to)) = (p.removed.lock(), k.removed.lock()) {
            *to = from.clone();
        }
        k.leader.store(p.leader.load(Ordering::Acquire), Ordering::Release);
    }

    /// `region` is gone here (merged into another): forget it.
    pub fn drop_region(&self, region: u32) {
        if let Ok(mut r) = self.regions.write() {
            r.remove(&region);
        }
    }

    /// A region's voters as last seen here, ascending (those it starts with
    /// until known).
    pub fn voters(&self, region: u32) -> Vec<u64> {
        match self.known(region).and_then(|k| k.status.lock().ok().map(|s| s.voters.clone())) {
            Some(v) if !v.is_empty() => v,
            _ => self.initial_voters(region),
        }
    }

    /// Update what is known of `region`'s Raft state (its owning core, as it changes).
    pub fn update_status(&self, region: u32, f: impl FnOnce(&mut RegionStatus)) {
        let k = self.known_or_add(region);
        let mut s = k.status.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
    }

    pub fn status(&self, region: u32) -> RegionStatus {
        self.known(region).and_then(|k| k.status.lock().ok().map(|s| s.clone())).unwrap_or_default()
    }

    /// An entry of `region` holding acknowledged writes was applied at `index`.
    pub fn set_acked(&self, region: u32, index: u64) {
        if let Some(k) = self.known(region) {
            k.acked.fetch_max(index, Ordering::AcqRel);
        }
    }

    /// At least the log index of every write of `region` acknowledged so far.
    pub fn acked(&self, region: u32) -> u64 {
        self.known(region).map_or(0, |k| k.acked.load(Ordering::Acquire))
    }

    /// Removed from the cluster: some region's membership removed it and has
    /// not added it back.
    pub fn is_removed(&self, id: u64) -> bool {
        self.regions.read().is_ok_and(|r| r.values().any(|k| k.removed.lock().is_ok_and(|s| s.contains(&id))))
    }

    /// `region`'s removed ids, as its applied state says.
    pub fn set_removed(&self, region: u32, ids: &BTreeSet<u64>) {
        let k = self.known_or_add(region);
        let mut s = k.removed.lock().unwrap_or_else(|e| e.into_inner());
        if *s != *ids {
            *s = ids.clone();
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
        let mut ids: BTreeSet<u64> = self.region_ids().into_iter().flat_map(|r| self.voters(r)).collect();
        ids.insert(self.me);
        ids.into_iter()
            .filter(|&id| id == self.me || !self.is_removed(id))
            .map(|id| (id, self.client_addr(id)))
            .collect()
    }

    pub fn leader(&self, region: u32) -> Option<u64> {
        match self.regions.read().ok()?.get(&region)?.leader.load(Ordering::Acquire) {
            0 => None,
            id => Some(id),
        }
    }

    pub fn set_leader(&self, region: u32, leader: Option<u64>) {
        self.known_or_add(region).leader.store(leader.unwrap_or(0), Ordering::Release);
    }

    /// The node that should lead `region` when every node is up
    /// (`placement::preferred`: leaders spread over the nodes).
    pub fn preferred_leader(&self, region: u32) -> u64 {
        let all: Vec<u64> = self.all().into_iter().map(|(id, _)| id).collect();
        super::placement::preferred(region, &self.voters(region), &all).unwrap_or(self.me)
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
        n.set_removed(0, &BTreeSet::from([2]));
        assert!(n.is_removed(2) && !n.is_removed(3));
        let all: Vec<u64> = n.all().into_iter().map(|(id, _)| id).collect();
        assert_eq!(all, [1, 3, 4]);
    }

    #[test]
    fn regions_placed_elsewhere_are_known_by_their_leaders_reports() {
        let peers = parse_peers("1=h:1,2=h:2,3=h:3,4=h:4,5=h:5").unwrap();
        let n = Nodes::new(1, "h:10".into(), peers, 20, false).with_replicas(3);
        assert_eq!(n.replicas(), 3);
        assert_eq!(n.initial_voters(0), [1, 2, 3]);
        assert_eq!(n.initial_voters(3), [1, 4, 5]);
        assert_eq!(n.voters(2), [3, 4, 5], "placement until known");
        assert_eq!((n.preferred_leader(2), n.preferred_leader(3)), (3, 4));
        // A report of a region this node is not in is taken, an older term's is not.
        n.learn(2, 5, 4, &[3, 4, 5], &[]);
        assert_eq!(n.leader(2), Some(4));
        n.learn(2, 4, 3, &[3, 4, 5], &[]);
        assert_eq!(n.leader(2), Some(4));
        n.learn(2, 6, 5, &[2, 4, 5], &[3]);
        assert_eq!((n.leader(2), n.voters(2), n.status(2).learners), (Some(5), vec![2, 4, 5], vec![3]));
        // Of a region it is in, its own group knows better.
        n.update_status(0, |s| {
            s.member = true;
            s.term = 2;
        });
        n.set_leader(0, Some(1));
        n.learn(0, 9, 2, &[1, 2, 3], &[]);
        assert_eq!(n.leader(0), Some(1));
        assert!(n.hosts(0) && !n.hosts(2));
        // Its replica moved away, which its own group never learned: the
        // leader's report without it stands, until one lists it again.
        n.learn(0, 2, 2, &[2, 3, 4], &[]);
        assert!(!n.hosts(0) && n.left(0));
        assert_eq!((n.leader(0), n.voters(0)), (Some(2), vec![2, 3, 4]));
        n.learn(0, 2, 2, &[2, 3, 4], &[1]);
        assert!(!n.left(0));
        // More replicas than nodes: every node.
        let peers = parse_peers("1=h:1,2=h:2").unwrap();
        assert_eq!(Nodes::new(1, "h:10".into(), peers, 4, false).with_replicas(3).initial_voters(1), [1, 2]);
    }
}

#[cfg(test)]
mod identity_tests {
    use super::*;

    #[test]
    fn an_identity_reads_back_as_written() {
        let mut i = Identity::fresh(3, true);
        assert_eq!(i.cluster_id, i.incarnation);
        i.peers.insert(1, 77);
        i.removed.insert((2, 55));
        i.removed.insert((4, 0));
        i.joined.insert((1, 77));
        assert_eq!(Identity::decode(&i.encode()).unwrap(), i);
        // An earlier NeoKV's lines are read and dropped.
        let old = format!("{}forget 4 1200\nrejoining 2 56\n", i.encode());
        assert_eq!(Identity::decode(&old).unwrap(), i);
        assert!(Identity::decode("node 0\nincarnation 1\n").is_err());
    }

    #[test]
    fn a_peer_with_a_new_incarnation_is_refused_until_it_is_forgotten() {
        let peers = parse_peers("1=h:1,2=h:2,3=h:3").unwrap();
        let n = Nodes::with_identity(1, "h:10".into(), peers, 2, false, Identity::fresh(1, true), None);
        let (_, cluster) = n.incarnation();
        n.admit(2, 20, 0, false).unwrap();
        n.admit(2, 20, cluster, false).unwrap();
        let e = n.admit(2, 21, cluster, false).unwrap_err();
        assert!(e.contains("new incarnation") && e.contains("CLUSTER FORGET 2"), "{e}");
        assert!(n.admit(3, 30, cluster + 1, false).unwrap_err().contains("another cluster"));
        // FORGET 2 (a founding member: its removal names no incarnation).
        n.forgot(&[(2, 0)]);
        assert!(n.admit(2, 20, cluster, false).unwrap_err().contains("was removed"));
        // Only a fresh node started with --join takes the id back.
        assert!(n.admit(2, 22, cluster, false).unwrap_err().contains("--join"));
        n.admit(2, 21, cluster, true).unwrap();
        assert_eq!(n.peer_incarnation(2), Some(21));
        // The same removal again (a region applying it late, a replay, a
        // replica catching up): the incarnation that came back stays.
        n.forgot(&[(2, 0)]);
        n.admit(2, 21, cluster, true).unwrap();
        // Its own removal (added as 21) is of it; so is that of one added
        // back later, however often the old ones are applied again.
        n.forgot(&[(2, 21)]);
        assert!(n.admit(2, 21, cluster, true).unwrap_err().contains("was removed"));
        n.admit(2, 23, cluster, true).unwrap();
        n.forgot(&[(2, 0), (2, 21)]);
        n.admit(2, 23, cluster, true).unwrap();
        n.forgot(&[(2, 23)]);
        assert!(n.admit(2, 23, cluster, true).unwrap_err().contains("was removed"));
    }

    /// A replica that meets the node added back before it applies the old
    /// removals (a node added fresh, catching up from the log) keeps it.
    #[test]
    fn a_replica_catching_up_keeps_the_node_added_back() {
        let peers = parse_peers("1=h:1,2=h:2,3=h:3").unwrap();
        let n = Nodes::with_identity(4, "h:10".into(), peers, 2, true, Identity::fresh(4, false), None);
        n.admit(2, 25, 0, true).unwrap();
        n.admit(3, 30, 0, false).unwrap();
        n.forgot(&[(2, 0), (2, 21)]);
        n.admit(2, 25, 0, true).unwrap();
        // The founding member 3's removal removes it.
        n.forgot(&[(3, 0)]);
        assert!(n.admit(3, 30, 0, false).unwrap_err().contains("was removed"));
    }
}
