//! The Redis Cluster protocol as NeoKV serves it: CLUSTER SLOTS / SHARDS /
//! NODES / INFO / MYID / KEYSLOT / COUNTKEYSINSLOT / GETKEYSINSLOT, READONLY,
//! READWRITE, ASKING, and the routing every keyed command goes through in
//! cluster mode ([`route`]: MOVED to the node leading the key's region,
//! CLUSTERDOWN while it has none, CROSSSLOT for keys of different slots).
//!
//! Each node is shown as a master of the slot ranges whose regions it leads and
//! the other voters of each region as its replicas (a region lives on
//! `--replicas` of the nodes; a node not in it knows them from the leaders'
//! reports, `shard::reports`); node ids are the numeric
//! ids padded to Redis's 40 characters. A standalone server answers the CLUSTER
//! commands with Redis's "cluster support disabled" error.

use bytes::Bytes;

use super::ctx::help_reply;
use super::table::{cat, container, flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdError, CmdResult, Ctx, Session};
use crate::cluster::nodes::{node_name, Nodes};
use crate::cluster::{key_slot, SLOT_COUNT};
use crate::protocol::cursor::parse_i64;
use crate::protocol::Reply;
use crate::shard::Shared;
use crate::types::keyspace as ks;

const DISABLED: &str = "ERR This instance has cluster support disabled";
pub const CLUSTERDOWN: &str = "CLUSTERDOWN The cluster is down";

fn nodes<'a>(ctx: &'a Ctx<'_>) -> Result<&'a Nodes, CmdError> {
    ctx.shared.nodes.as_deref().ok_or_else(|| err(DISABLED))
}

/// Where a command with `keys` must run, in cluster mode: `Ok(Some(region))`
/// when this node leads the region of their slot (or `follower_reads` is set,
/// the command only reads and this node holds a replica of the region), MOVED
/// or CLUSTERDOWN otherwise. Keys of
/// different slots are CROSSSLOT, as in Redis Cluster. `Ok(None)` without keys.
pub fn route<'k>(
    shared: &Shared,
    keys: impl IntoIterator<Item = &'k [u8]>,
    follower_reads: bool,
) -> Result<Option<(u32, u64)>, Reply> {
    let Some(nodes) = shared.nodes.as_deref() else { return Ok(None) };
    let mut slot = None;
    for k in keys {
        let s = key_slot(k);
        match slot {
            None => slot = Some(s),
            Some(x) if x != s => return Err(Reply::error(super::route::CROSSSLOT)),
            _ => {}
        }
    }
    let Some(slot) = slot else { return Ok(None) };
    let router = shared.router();
    let (region, epoch) = (router.region_of_slot(slot).id, router.slot_epoch(slot));
    match nodes.leader(region) {
        Some(l) if l == nodes.me => Ok(Some((region, epoch))),
        _ if follower_reads && nodes.hosts(region) => Ok(Some((region, epoch))),
        Some(l) => match nodes.client_addr(l) {
            Some(addr) => Err(Reply::Error(format!("MOVED {slot} {addr}").into())),
            None => Err(Reply::error(CLUSTERDOWN)),
        },
        None => Err(Reply::error(CLUSTERDOWN)),
    }
}

/// Cluster mode: the region of the keys of `spec` with `args` when no leader
/// of it is known here (an election is open: a leadership handed over, a
/// region just split, a leader lost), so [`route`] answers CLUSTERDOWN now
/// and dispatch may wait for the election to end first. Asked only after
/// routing failed.
pub fn leaderless(shared: &Shared, spec: &CommandSpec, args: &[Bytes]) -> Option<u32> {
    let nodes = shared.nodes.as_deref()?;
    let at = spec.keys_of(args)?;
    let region = shared.router().region_of_key(&args[*at.first()?]).id;
    nodes.leader(region).is_none().then_some(region)
}

/// What a command reads outside apply, in cluster mode, that dispatch makes
/// linearizable before it runs: ReadIndex on a region this node leads (its
/// leadership confirmed by a quorum, then applied up to the commit index of
/// that moment); on a follower (READONLY) the leader's read index, then
/// applied that far. A write reads inside apply, at its entry's place in the
/// log, and needs none of this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadScope {
    /// Nothing replicated is read here (or standalone, or the command's routing
    /// fails and dispatch answers that).
    None,
    /// The region of the command's keys, or of the slot it names: failing to
    /// confirm it is the command's answer (MOVED, CLUSTERDOWN).
    One { region: u32, on_follower: bool },
    /// A read without keys, or a script that declares none: every region this
    /// node leads, and for a READONLY connection's script every other region
    /// too (`true`: as a follower). A region found led elsewhere is left out
    /// (the read answers for the slots this node does lead); a region whose
    /// leadership cannot be confirmed fails the read (CLUSTERDOWN).
    Many(Vec<(u32, bool)>),
}

/// The [`ReadScope`] of `spec` with `args` for `session`.
pub fn read_scope(shared: &Shared, session: &Session, spec: &CommandSpec, args: &[Bytes]) -> ReadScope {
    let Some(nodes) = shared.nodes.as_deref() else { return ReadScope::None };
    let program = spec.flags & PROGRAM != 0;
    if spec.is_write() && spec.flags & READS_INLINE == 0 && !program {
        return ReadScope::None;
    }
    let router = shared.router();
    let led = |region: u32| nodes.leader(region) == Some(nodes.me);
    if spec.flags & READS_SLOT != 0 {
        // An invalid slot is the handler's error to give.
        let Some(slot) = args.get(2).and_then(|a| slot_arg(a).ok()) else { return ReadScope::None };
        let region = router.region_of_slot(slot).id;
        // A node without a replica of the slot's region counts its own keys
        // there (none), as a Redis Cluster node does for a slot it does not serve.
        if !led(region) && !nodes.hosts(region) {
            return ReadScope::None;
        }
        return ReadScope::One { region, on_follower: !led(region) };
    }
    let at = spec.keys_of(args).unwrap_or_default();
    if !at.is_empty() {
        let keys = || at.iter().map(|&i| &args[i][..]);
        return match route(shared, keys(), false) {
            Ok(Some((region, _))) => ReadScope::One { region, on_follower: false },
            Err(_) if session.follower_reads && !spec.is_write() => match route(shared, keys(), true) {
                Ok(Some((region, _))) => ReadScope::One { region, on_follower: true },
                _ => ReadScope::None,
            },
            _ => ReadScope::None,
        };
    }
    if spec.flags & KEYLESS_READ == 0 && !program {
        return ReadScope::None;
    }
    let every = program && session.follower_reads;
    // A follower's read runs only where the node holds a replica.
    let mine = |r: u32, f: bool| !f || (every && nodes.hosts(r));
    ReadScope::Many(router.regions().iter().map(|r| (r.id, !led(r.id))).filter(|&(r, f)| mine(r, f)).collect())
}

/// Cluster mode: whether a script's `redis.call` of `spec` may touch its keys
/// here. They must hash to a region dispatch confirmed for the script
/// (`Session::confirmed`: its declared keys' region, or, without declared
/// keys, the regions this node leads), as a direct command to this node would
/// have to; otherwise Redis Cluster's refusal. Standalone, or without keys: Ok.
pub fn script_call_local(shared: &Shared, session: &Session, spec: &CommandSpec, args: &[Bytes]) -> Result<(), Reply> {
    if shared.nodes.is_none() {
        return Ok(());
    }
    let Some(at) = spec.keys_of(args) else { return Ok(()) };
    let confirmed = session.confirmed.as_deref().unwrap_or(&[]);
    let router = shared.router();
    if at.iter().all(|&i| confirmed.contains(&router.region_of_key(&args[i]).id)) {
        return Ok(());
    }
    Err(Reply::error(NON_LOCAL))
}

/// Redis Cluster's refusal of a script's call of a key this node does not serve.
pub const NON_LOCAL: &str = "ERR Script attempted to access a non local key in a cluster node";

/// Cluster mode: the slot ranges of the regions this node leads (INFO
/// keyspace's counts: not confirmed, as INFO must answer on a node cut off
/// from the others); `None` standalone (every slot). Reads of data use
/// [`Ctx::scope_ranges`] instead, over what dispatch confirmed.
pub fn led_ranges(shared: &Shared) -> crate::types::keyspace::SlotRanges {
    let nodes = shared.nodes.as_deref()?;
    Some(
        shared
            .router()
            .regions()
            .iter()
            .filter(|r| nodes.leader(r.id) == Some(nodes.me))
            .map(|r| (r.start, r.end))
            .collect(),
    )
}

/// `host:port` split for the replies that show them apart.
fn host_port(addr: &str) -> (String, i64) {
    match addr.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(0)),
        None => (addr.to_string(), 0),
    }
}

/// Each run of slots of one region `[start, end]` with its leader, if known
/// (a region is one range; one seen cut by a newer region this node was not
/// told of yet shows as two).
fn ranges(shared: &Shared, nodes: &Nodes) -> Vec<(u16, u16, Option<u64>)> {
    shared.router().runs().iter().map(|(s, e, r)| (*s, (e - 1) as u16, nodes.leader(r.id))).collect()
}

fn node_entry(nodes: &Nodes, id: u64) -> Reply {
    let (host, port) = host_port(&nodes.client_addr(id).unwrap_or_default());
    Reply::Array(vec![
        Reply::bulk_str(&host),
        Reply::Int(port),
        Reply::bulk_str(&node_name(id)),
        Reply::Map(Vec::new()),
    ])
}

/// CLUSTER SLOTS: every region's range, its leader first, its other voters after.
///
/// Every node leads some regions and follows in the others, which Redis
/// Cluster never shows; clients such as redis-py take a node's role from the
/// first entry it appears in, and would then send their fan-out commands
/// (DBSIZE, KEYS, SCAN, FLUSHALL to every master) to some leaders only. So
/// one range of each leader comes first, and until every leader has appeared
/// as a master those first ranges list no followers.
fn slots(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let nodes = nodes(ctx)?;
    let router = ctx.shared.router();
    let mut led: Vec<(u16, u16, u64)> =
        ranges(ctx.shared, nodes).into_iter().filter_map(|(s, e, l)| l.map(|l| (s, e, l))).collect();
    let mut first: Vec<(u16, u16, u64)> = Vec::new();
    for &r in &led {
        if !first.iter().any(|f| f.2 == r.2) {
            first.push(r);
        }
    }
    led.retain(|r| !first.contains(r));
    let bare = first.len().saturating_sub(1);
    let mut out = Vec::new();
    for (n, (start, end, leader)) in first.into_iter().chain(led).enumerate() {
        let mut e = vec![Reply::Int(start as i64), Reply::Int(end as i64), node_entry(nodes, leader)];
        if n >= bare {
            // The region's other voters are its replicas.
            let voters = nodes.voters(router.region_of_slot(start).id);
            e.extend(voters.iter().filter(|&&id| id != leader).map(|&id| node_entry(nodes, id)));
        }
        out.push(Reply::Array(e));
    }
    reply(Reply::Array(out))
}

/// CLUSTER SHARDS: one shard per region: its slot range, its leader as
/// `master`, its other voters as `replica`, each with its health (`online`
/// heard from within a second, `failed` not, `loading` no client address
/// learned yet). A region without a known leader lists its voters as replicas.
fn shards(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let nodes = nodes(ctx)?;
    let mut out = Vec::new();
    let router = ctx.shared.router();
    for (start, end, r) in router.runs() {
        let leader = nodes.leader(r.id);
        let node = |id: u64| {
            let addr = nodes.client_addr(id);
            let (host, port) = host_port(addr.as_deref().unwrap_or_default());
            let role = if Some(id) == leader { "master" } else { "replica" };
            let health = match addr {
                None => "loading",
                Some(_) if nodes.is_live(id) => "online",
                Some(_) => "failed",
            };
            Reply::Map(vec![
                (Reply::bulk_str("id"), Reply::bulk_str(&node_name(id))),
                (Reply::bulk_str("port"), Reply::Int(port)),
                (Reply::bulk_str("ip"), Reply::bulk_str(&host)),
                (Reply::bulk_str("endpoint"), Reply::bulk_str(&host)),
                (Reply::bulk_str("role"), Reply::bulk_str(role)),
                (Reply::bulk_str("replication-offset"), Reply::Int(nodes.status(r.id).applied as i64)),
                (Reply::bulk_str("health"), Reply::bulk_str(health)),
            ])
        };
        let voters = nodes.voters(r.id);
        let members = leader
            .filter(|l| voters.contains(l))
            .into_iter()
            .chain(voters.iter().copied().filter(|&v| Some(v) != leader));
        out.push(Reply::Map(vec![
            (Reply::bulk_str("slots"), Reply::Array(vec![Reply::Int(start as i64), Reply::Int(end as i64 - 1)])),
            (Reply::bulk_str("nodes"), Reply::Array(members.map(node).collect())),
        ]));
    }
    reply(Reply::Array(out))
}

/// CLUSTER NODES: Redis's line format, one line per node.
fn cluster_nodes(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let nodes = nodes(ctx)?;
    let rs = ranges(ctx.shared, nodes);
    let mut text = String::new();
    for (id, addr) in nodes.all() {
        let addr = addr.unwrap_or_else(|| ":0".into());
        let cport = nodes.cluster_addr(id).map(|a| host_port(&a).1).unwrap_or(0);
        let me = if id == nodes.me { "myself," } else { "" };
        let link = if id == nodes.me || nodes.client_addr(id).is_some() { "connected" } else { "disconnected" };
        text.push_str(&format!("{} {addr}@{cport} {me}master - 0 0 {id} {link}", node_name(id)));
        for (start, end, _) in rs.iter().filter(|r| r.2 == Some(id)) {
            if start == end {
                text.push_str(&format!(" {start}"));
            } else {
                text.push_str(&format!(" {start}-{end}"));
            }
        }
        text.push('\n');
    }
    reply(Reply::Verbatim(Bytes::from(text)))
}

/// CLUSTER INFO: `ok` once every region is served as it will stay
/// ([`Nodes::settled`]): a leader clients can reach, and no hand-over of the
/// start-up balance still to come. A client that reads the topology the
/// moment it says ok (redis-benchmark drops masters without slots, and stops
/// when a node it dropped shows up leading slots) then sees the slots stay.
fn info(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let nodes = nodes(ctx)?;
    let rs = ranges(ctx.shared, nodes);
    let ok_slots: u64 = rs.iter().filter(|r| r.2.is_some()).map(|r| (r.1 - r.0) as u64 + 1).sum();
    let leaders: std::collections::BTreeSet<u64> = rs.iter().filter_map(|r| r.2).collect();
    let known = nodes.all().len();
    let settled = ctx.shared.router().regions().iter().all(|r| nodes.settled(r.id));
    let state = if ok_slots == SLOT_COUNT as u64 && settled { "ok" } else { "fail" };
    let lines = [
        format!("cluster_state:{state}"),
        format!("cluster_slots_assigned:{SLOT_COUNT}"),
        format!("cluster_slots_ok:{ok_slots}"),
        "cluster_slots_pfail:0".into(),
        format!("cluster_slots_fail:{}", SLOT_COUNT as u64 - ok_slots),
        format!("cluster_known_nodes:{known}"),
        format!("cluster_size:{}", leaders.len()),
        "cluster_current_epoch:0".into(),
        "cluster_my_epoch:0".into(),
        "cluster_stats_messages_sent:0".into(),
        "cluster_stats_messages_received:0".into(),
        "total_cluster_links_buffer_limit_exceeded:0".into(),
    ];
    reply(Reply::Verbatim(Bytes::from(lines.join("\r\n") + "\r\n")))
}

fn myid(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let nodes = nodes(ctx)?;
    reply(Reply::bulk_str(&node_name(nodes.me)))
}

fn keyslot(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    reply(Reply::Int(key_slot(&args[2]) as i64))
}

fn slot_arg(a: &[u8]) -> Result<u16, CmdError> {
    match parse_i64(a) {
        Some(s) if (0..SLOT_COUNT as i64).contains(&s) => Ok(s as u16),
        _ => Err(err("ERR Invalid slot")),
    }
}

fn countkeysinslot(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    let slot = slot_arg(&args[2])?;
    ctx.blocking(move |r| {
        let mut n = 0;
        ks::walk_keys(r, (slot, slot as u32 + 1), None, usize::MAX, |_| n += 1)?;
        Ok(Reply::Int(n))
    })
}

fn getkeysinslot(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    let slot = slot_arg(&args[2])?;
    let count = match parse_i64(&args[3]) {
        Some(c) if c >= 0 => c as usize,
        _ => return Err(err("ERR Invalid number of keys")),
    };
    ctx.blocking(move |r| {
        let mut keys = Vec::new();
        if count > 0 {
            ks::walk_keys(r, (slot, slot as u32 + 1), None, count, |k| keys.push(Reply::Bulk(k.key)))?;
        }
        Ok(Reply::Array(keys))
    })
}

/// A node id as CLUSTER commands take it: the number, or its 40-character name.
fn node_id_arg(a: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(a).ok()?;
    let digits = if s.len() == 40 { s.trim_start_matches('0') } else { s };
    digits.parse::<u64>().ok().filter(|&id| id > 0)
}

/// CLUSTER ADDNODE id host:port: the node (started with `--join`, its
/// node-to-node listener at host:port) joins every region, first as a
/// learner, then, once it holds the log, as a voter. Replies when every
/// region has it; running it again finishes what a failure left.
fn addnode(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    let id = node_id_arg(&args[2]).ok_or_else(|| err("ERR Invalid node id"))?;
    let addr = std::str::from_utf8(&args[3]).map_err(|_| err("ERR Invalid node address"))?;
    if addr.rsplit_once(':').and_then(|(h, p)| p.parse::<u16>().ok().filter(|_| !h.is_empty())).is_none() {
        return Err(err("ERR Invalid node address: expected host:port"));
    }
    Ok(super::Plan::Members(crate::raft::region::MemberChange::Add { id, addr: addr.to_string(), incarnation: 0 }))
}

/// CLUSTER FORGET id: the node leaves every region (leadership of the regions
/// it leads moves first), and the incarnation it had is refused for good (the
/// id may come back as a fresh node: `--join`, CLUSTER ADDNODE). Unlike Redis's
/// FORGET, which only drops the node from one node's table, this changes the
/// cluster: the Raft membership is the one table.
fn forget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let nodes = nodes(ctx)?;
    let id = node_id_arg(&args[2]);
    let name = String::from_utf8_lossy(&args[2]).into_owned();
    let Some(id) = id.filter(|id| nodes.all().iter().any(|(n, _)| n == id)) else {
        return Err(err(format!("ERR Unknown node {name}")));
    };
    if id == nodes.me {
        return Err(err("ERR I tried hard but I can't forget myself..."));
    }
    Ok(super::Plan::Members(crate::raft::region::MemberChange::Remove { id }))
}

/// READONLY: reads of this connection may be served by a follower (still
/// linearizable: it waits for the leader's read index).
fn readonly(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    ctx.session.follower_reads = true;
    reply(Reply::Ok)
}

fn readwrite(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    ctx.session.follower_reads = false;
    reply(Reply::Ok)
}

/// ASKING: slots never migrate between regions here, so there is nothing to ask.
fn asking(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    reply(Reply::Ok)
}

/// NEOKV.REGION slot: the region holding `slot`, its applied log index here,
/// and a digest (SHA-1) of its keys' metadata records (type, TTL, version, and
/// a string's value), read from one RocksDB snapshot. Replicas that applied the
/// same entries answer the same; tests compare them after a catch-up.
fn region_info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let slot = slot_arg(&args[1])?;
    let route = ctx.shared.router().region_of_slot(slot).clone();
    let storage = ctx.shared.storage.clone();
    Ok(super::Plan::Blocking(super::ctx::BlockingWork(Box::new(move || {
        use crate::storage::keys::{slot_lower_bound, slot_upper_bound, state_key, StateKind};
        use crate::storage::Cf;
        let view = storage.view();
        let applied = match view.get(Cf::RaftState, &state_key(route.id, StateKind::Applied)) {
            Ok(Some(b)) => crate::raft::codec::decode_applied(&b).ok().and_then(|(a, _)| a).map_or(0, |l| l.index),
            Ok(None) => 0,
            Err(e) => return Reply::Error(format!("ERR {e}").into()),
        };
        let mut h = sha1_smol::Sha1::new();
        let mut keys = 0i64;
        let scanned =
            view.scan(Cf::Metadata, &slot_lower_bound(route.start), &slot_upper_bound(route.end), false, |k, v| {
                h.update(&(k.len() as u32).to_be_bytes());
                h.update(k);
                h.update(&(v.len() as u32).to_be_bytes());
                h.update(v);
                keys += 1;
                true
            });
        if let Err(e) = scanned {
            return Reply::Error(format!("ERR {e}").into());
        }
        Reply::Array(vec![
            Reply::Int(route.id as i64),
            Reply::Int(applied as i64),
            Reply::Int(keys),
            Reply::bulk_str(&h.digest().to_string()),
        ])
    }))))
}

/// NEOKV.REGIONS: one map per region: its id, slot ranges (inclusive pairs,
/// as CLUSTER SHARDS gives them), its epoch (how many splits made its range),
/// its bytes in SST files (RocksDB's estimate;
/// a memtable's are not counted), the keys stored here (metadata records,
/// counted from one RocksDB snapshot), writes per second proposed here as its
/// leader, its Raft log's bytes and entries here, voters, learners, leader,
/// and the operation under way on it, or why one is refused (`none`: no
/// split due; `raft::region::split`). Standalone, the node is the one voter
/// and the leader of every region (node id 1).
fn regions(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    struct Row {
        id: u32,
        slots: (u16, u32),
        epoch: u64,
        operation: String,
        ops: u64,
        log: (u64, u64),
        voters: Vec<u64>,
        learners: Vec<u64>,
        leader: Option<u64>,
    }
    let rows: Vec<Row> = ctx
        .shared
        .router()
        .regions()
        .iter()
        .map(|r| {
            let load = ctx.shared.load.get(r.id);
            let figure = |f: fn(&crate::cluster::load::RegionLoad) -> &std::sync::atomic::AtomicU64| {
                load.as_ref().map_or(0, |l| l.get(f))
            };
            let (voters, learners, leader) = match ctx.shared.nodes.as_deref() {
                Some(nodes) => {
                    let st = nodes.status(r.id);
                    (nodes.voters(r.id), st.learners.clone(), nodes.leader(r.id))
                }
                None => (vec![crate::raft::NODE_ID], Vec::new(), Some(crate::raft::NODE_ID)),
            };
            let operation = load.as_ref().map(|l| l.operation()).filter(|o| !o.is_empty());
            Row {
                id: r.id,
                slots: (r.start, r.end),
                epoch: r.epoch,
                operation: operation.unwrap_or_else(|| "none".into()),
                ops: figure(|l| &l.ops_per_sec),
                log: (figure(|l| &l.log_bytes), figure(|l| &l.log_entries)),
                voters,
                learners,
                leader,
            }
        })
        .collect();
    let storage = ctx.shared.storage.clone();
    Ok(super::Plan::Blocking(super::ctx::BlockingWork(Box::new(move || {
        use crate::storage::keys::{slot_lower_bound, slot_upper_bound};
        use crate::storage::Cf;
        let view = storage.view();
        let ids = |v: &[u64]| Reply::Array(v.iter().map(|&id| Reply::Int(id as i64)).collect());
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let (lo, hi) = (slot_lower_bound(r.slots.0), slot_upper_bound(r.slots.1));
            let bytes: u64 = crate::raft::snapshot::ranges(r.id, r.slots.0, r.slots.1)
                .iter()
                .map(|(_, cf, from, to)| storage.range_bytes(*cf, from, to))
                .sum();
            let mut keys = 0i64;
            if let Err(e) = view.scan(Cf::Metadata, &lo, &hi, false, |_, _| {
                keys += 1;
                true
            }) {
                return Reply::Error(format!("ERR {e}").into());
            }
            let field = |k: &str, v: Reply| (Reply::bulk_str(k), v);
            out.push(Reply::Map(vec![
                field("id", Reply::Int(r.id as i64)),
                field("slots", Reply::Array(vec![Reply::Int(r.slots.0 as i64), Reply::Int(r.slots.1 as i64 - 1)])),
                field("epoch", Reply::Int(r.epoch as i64)),
                field("bytes", Reply::Int(bytes as i64)),
                field("keys", Reply::Int(keys)),
                field("ops_per_sec", Reply::Int(r.ops as i64)),
                field("log_bytes", Reply::Int(r.log.0 as i64)),
                field("log_entries", Reply::Int(r.log.1 as i64)),
                field("voters", ids(&r.voters)),
                field("learners", ids(&r.learners)),
                field("leader", r.leader.map_or(Reply::Nil, |l| Reply::Int(l as i64))),
                field("operation", Reply::bulk_str(&r.operation)),
            ]));
        }
        Reply::Array(out)
    }))))
}

/// The Redis Cluster subcommands that manage slots, epochs and replicas by
/// hand: NeoKV's cluster does all of that itself. Their rows carry Redis's
/// flags (so a script may not call CLUSTER RESET, as in Redis).
fn unsupported(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    let (_, sub) = ctx.spec.name.split_once('|').unwrap_or(("cluster", ctx.spec.name));
    Err(err(format!(
        "ERR CLUSTER {} is not supported: NeoKV's cluster assigns slots to regions and moves leadership \
         itself (nodes join with CLUSTER ADDNODE and leave with CLUSTER FORGET)",
        sub.to_ascii_uppercase()
    )))
}

fn help(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    nodes(ctx)?;
    help_reply(&[
        "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "SHARDS",
        "    Return information about slot range mappings and the nodes they map to.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "ADDNODE <node-id> <host:port>",
        "    NeoKV: add a node (started with --join) to every region.",
        "FORGET <node-id>",
        "    NeoKV: remove a node from every region, for good.",
    ])
}

const C: Group = Group::Cluster;

pub static COMMANDS: &[CommandSpec] = &[
    container("cluster", 0, C, "3.0.0", "A container for Redis Cluster commands.", None),
    row("cluster|info", 2, STALE, C, "3.0.0", "Returns information about the state of a node.", info),
    row("cluster|myid", 2, STALE, C, "3.0.0", "Returns the ID of a node.", myid),
    row(
        "cluster|addnode",
        4,
        ADMIN | STALE,
        C,
        "0.1.0",
        "NeoKV: adds a node (started with --join) to every region, as a learner and then a voter.",
        addnode,
    ),
    row(
        "cluster|forget",
        3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Removes a node from every region of the cluster; its id never joins again.",
        forget,
    ),
    row("cluster|nodes", 2, STALE, C, "3.0.0", "Returns the cluster configuration for a node.", cluster_nodes),
    row("cluster|slots", 2, STALE, C, "3.0.0", "Returns the mapping of cluster slots to nodes.", slots),
    row("cluster|shards", 2, STALE, C, "7.0.0", "Returns the mapping of cluster slots to shards.", shards),
    row("cluster|keyslot", 3, STALE, C, "3.0.0", "Returns the hash slot for a key.", keyslot),
    row(
        "cluster|countkeysinslot",
        3,
        STALE | READS_SLOT,
        C,
        "3.0.0",
        "Returns the number of keys in a hash slot.",
        countkeysinslot,
    ),
    row(
        "cluster|getkeysinslot",
        4,
        STALE | READS_SLOT,
        C,
        "3.0.0",
        "Returns the key names in a hash slot.",
        getkeysinslot,
    ),
    row(
        "readonly",
        1,
        FAST | LOADING | STALE,
        C,
        "3.0.0",
        "Enables read-only queries for a connection to a Redis Cluster replica node.",
        readonly,
    )
    .cats(cat::CONNECTION),
    row(
        "readwrite",
        1,
        FAST | LOADING | STALE,
        C,
        "3.0.0",
        "Enables read-write queries for a connection to a Redis Cluster replica node.",
        readwrite,
    )
    .cats(cat::CONNECTION),
    row("asking", 1, FAST, C, "3.0.0", "Signals that a cluster client is following an -ASK redirect.", asking)
        .cats(cat::CONNECTION),
    row(
        "neokv.regions",
        1,
        STALE,
        C,
        "0.1.0",
        "NeoKV: every region's slots, size, keys, write rate, Raft log size, voters, learners and leader.",
        regions,
    ),
    row(
        "neokv.region",
        2,
        STALE,
        C,
        "0.1.0",
        "NeoKV: a region's id, applied log index, key count and data digest on this node.",
        region_info,
    ),
    row(
        "cluster|addslots",
        -3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Assigns new hash slots to a node.",
        unsupported,
    ),
    row(
        "cluster|addslotsrange",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "7.0.0",
        "Assigns new hash slot ranges to a node.",
        unsupported,
    ),
    row(
        "cluster|bumpepoch",
        2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Advances the cluster config epoch.",
        unsupported,
    ),
    row(
        "cluster|count-failure-reports",
        3,
        ADMIN | STALE,
        C,
        "3.0.0",
        "Returns the number of active failure reports active for a node.",
        unsupported,
    ),
    row(
        "cluster|delslots",
        -3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Sets hash slots as unbound for a node.",
        unsupported,
    ),
    row(
        "cluster|delslotsrange",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "7.0.0",
        "Sets hash slot ranges as unbound for a node.",
        unsupported,
    ),
    row(
        "cluster|failover",
        -2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Forces a replica to perform a manual failover of its master.",
        unsupported,
    ),
    row(
        "cluster|flushslots",
        2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Deletes all slots information from a node.",
        unsupported,
    ),
    row("cluster|links", 2, STALE, C, "7.0.0", "Returns a list of all TCP links to and from peer nodes.", unsupported),
    row(
        "cluster|meet",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Forces a node to handshake with another node.",
        unsupported,
    ),
    row("cluster|replicas", 3, ADMIN | STALE, C, "5.0.0", "Lists the replica nodes of a master node.", unsupported),
    row(
        "cluster|replicate",
        3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Configure a node as replica of a master node.",
        unsupported,
    ),
    row("cluster|reset", -2, ADMIN | NOSCRIPT | STALE, C, "3.0.0", "Resets a node.", unsupported),
    row(
        "cluster|saveconfig",
        2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Forces a node to save the cluster configuration to disk.",
        unsupported,
    ),
    row(
        "cluster|set-config-epoch",
        3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Sets the configuration epoch for a new node.",
        unsupported,
    ),
    row(
        "cluster|setslot",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        C,
        "3.0.0",
        "Binds a hash slot to a node.",
        unsupported,
    ),
    row("cluster|slaves", 3, ADMIN | STALE, C, "3.0.0", "Lists the replica nodes of a master node.", unsupported),
    row("cluster|help", 2, LOADING | STALE, C, "5.0.0", "Returns helpful text about the different subcommands.", help),
];
