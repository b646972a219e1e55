//! Byte encodings of Raft state: log entries (prost `LogEntry`), votes, log ids
//! and memberships. Storage only sees opaque bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use bytes::Bytes;
use openraft::impls::leader_id_adv::LeaderId;
use openraft::EntryPayload;
use prost::Message;

use super::{Entry, LogId, Member, Membership, Proposal, StoredMembership, Vote};
use crate::cluster::Descriptor;
use crate::pb;

pub fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

pub fn log_id(term: u64, node: u64, index: u64) -> LogId {
    LogId::new(LeaderId { term, node_id: node }, index)
}

/// A region's record of the nodes CLUSTER FORGET removed (`pb::Forget`) and no
/// membership added back: id → the incarnation removed (0: a founding member).
pub type Removed = BTreeMap<u64, u64>;

pub fn membership_to_pb(m: &Membership) -> pb::Membership {
    pb::Membership {
        configs: m.get_joint_config().iter().map(|s| pb::VoterSet { ids: s.iter().copied().collect() }).collect(),
        nodes: m.nodes().map(|(id, n)| (*id, n.addr.clone())).collect(),
        incarnations: m.nodes().filter(|(_, n)| n.incarnation != 0).map(|(id, n)| (*id, n.incarnation)).collect(),
    }
}

pub fn membership_from_pb(m: pb::Membership) -> io::Result<Membership> {
    let configs: Vec<BTreeSet<u64>> = m.configs.into_iter().map(|c| c.ids.into_iter().collect()).collect();
    let incarnations = m.incarnations;
    let nodes: BTreeMap<u64, Member> = m
        .nodes
        .into_iter()
        .map(|(id, addr)| (id, Member { addr, incarnation: incarnations.get(&id).copied().unwrap_or(0) }))
        .collect();
    Membership::new(configs, nodes).map_err(|e| invalid(format!("membership: {e}")))
}

pub fn entry_to_pb(e: &Entry) -> pb::LogEntry {
    let mut pe = pb::LogEntry {
        term: e.log_id.leader_id.term,
        leader_node: e.log_id.leader_id.node_id,
        index: e.log_id.index,
        ..Default::default()
    };
    match &e.payload {
        EntryPayload::Blank => pe.kind = 0,
        EntryPayload::Normal(p) => {
            pe.kind = 1;
            pe.batch = Some(p.0.clone());
        }
        EntryPayload::Membership(m) => {
            pe.kind = 2;
            pe.membership = Some(membership_to_pb(m));
        }
    }
    pe
}

pub fn entry_from_pb(pe: pb::LogEntry) -> io::Result<Entry> {
    let payload = match pe.kind {
        0 => EntryPayload::Blank,
        1 => EntryPayload::Normal(Proposal(pe.batch.unwrap_or_default())),
        2 => EntryPayload::Membership(membership_from_pb(pe.membership.unwrap_or_default())?),
        k => return Err(invalid(format!("log entry kind {k}"))),
    };
    Ok(Entry { log_id: log_id(pe.term, pe.leader_node, pe.index), payload })
}

pub fn encode_entry(e: &Entry) -> Vec<u8> {
    entry_to_pb(e).encode_to_vec()
}

pub fn decode_entry(b: &[u8]) -> io::Result<Entry> {
    entry_from_pb(pb::LogEntry::decode(b).map_err(|e| invalid(format!("log entry: {e}")))?)
}

/// A vote: `[term:8][node:8][committed:1]`.
pub fn encode_vote(v: &Vote) -> Vec<u8> {
    let mut b = Vec::with_capacity(17);
    b.extend_from_slice(&v.leader_id.term.to_be_bytes());
    b.extend_from_slice(&v.leader_id.node_id.to_be_bytes());
    b.push(v.committed as u8);
    b
}

pub fn decode_vote(b: &[u8]) -> io::Result<Vote> {
    if b.len() != 17 {
        return Err(invalid("vote length"));
    }
    let term = u64::from_be_bytes(b[..8].try_into().unwrap_or_default());
    let node = u64::from_be_bytes(b[8..16].try_into().unwrap_or_default());
    Ok(Vote { leader_id: LeaderId { term, node_id: node }, committed: b[16] != 0 })
}

/// A log id: `[term:8][node:8][index:8]`.
pub fn encode_log_id(id: &LogId) -> [u8; 24] {
    let mut b = [0u8; 24];
    b[..8].copy_from_slice(&id.leader_id.term.to_be_bytes());
    b[8..16].copy_from_slice(&id.leader_id.node_id.to_be_bytes());
    b[16..].copy_from_slice(&id.index.to_be_bytes());
    b
}

pub fn decode_log_id(b: &[u8]) -> io::Result<LogId> {
    if b.len() < 24 {
        return Err(invalid("log id length"));
    }
    let n = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap_or_default());
    Ok(log_id(n(0), n(8), n(16)))
}

/// Applied state: the last applied log id (optional) and the stored membership,
/// as a `LogEntry` (term/node/index = applied id; kind 1 = has id; membership +
/// its log id in `batch.now_ms`-free fields).
pub fn encode_applied(applied: Option<&LogId>, membership: &StoredMembership) -> Vec<u8> {
    encode_applied_at(applied, membership, 0)
}

/// [`encode_applied`] with the time of the last entry applied (`batch.now_ms`).
pub fn encode_applied_at(applied: Option<&LogId>, membership: &StoredMembership, now_ms: u64) -> Vec<u8> {
    encode_applied_full(applied, membership, now_ms, &Removed::new())
}

/// [`encode_applied_at`] with the nodes removed from the cluster ([`Removed`])
/// and not added back, each with the incarnation it was removed as.
pub fn encode_applied_full(
    applied: Option<&LogId>,
    membership: &StoredMembership,
    now_ms: u64,
    removed: &Removed,
) -> Vec<u8> {
    encode_applied_spanned(applied, membership, now_ms, removed, None)
}

/// [`encode_applied_full`] with the region's slots and epoch, once a split
/// changed them (`None`: as a fresh cluster's `--regions` cut them).
pub fn encode_applied_spanned(
    applied: Option<&LogId>,
    membership: &StoredMembership,
    now_ms: u64,
    removed: &Removed,
    span: Option<&Descriptor>,
) -> Vec<u8> {
    let mut pe = pb::LogEntry {
        removed_nodes: removed.keys().copied().collect(),
        removed_incarnations: removed.values().copied().collect(),
        ..Default::default()
    };
    if let Some(d) = span {
        pe.slot_start = d.start as u32;
        pe.slot_end = d.end;
        pe.epoch = d.epoch;
    }
    if now_ms > 0 {
        pe.batch = Some(pb::RaftBatch { now_ms, ..Default::default() });
    }
    if let Some(id) = applied {
        pe.kind = 1;
        pe.term = id.leader_id.term;
        pe.leader_node = id.leader_id.node_id;
        pe.index = id.index;
    }
    pe.membership = Some(membership_to_pb(membership.membership()));
    let mut out = pe.encode_to_vec();
    // The membership's own log id follows, if any.
    if let Some(mid) = membership.log_id() {
        let mut v = encode_log_id(mid).to_vec();
        v.extend_from_slice(&out);
        out = [&[1u8][..], &v].concat();
    } else {
        out = [&[0u8][..], &out].concat();
    }
    out
}

pub fn decode_applied(b: &[u8]) -> io::Result<(Option<LogId>, StoredMembership)> {
    decode_applied_at(b).map(|(a, m, _)| (a, m))
}

/// [`decode_applied`] with the time of the last entry applied (0 if unknown).
pub fn decode_applied_at(b: &[u8]) -> io::Result<(Option<LogId>, StoredMembership, u64)> {
    decode_applied_full(b).map(|(a, m, now, _)| (a, m, now))
}

/// [`decode_applied_at`] with the nodes removed from the membership.
pub fn decode_applied_full(b: &[u8]) -> io::Result<(Option<LogId>, StoredMembership, u64, Removed)> {
    let (mid, pe) = decode_record(b)?;
    let applied = (pe.kind == 1).then(|| log_id(pe.term, pe.leader_node, pe.index));
    let now_ms = pe.batch.as_ref().map_or(0, |b| b.now_ms);
    let incarnation = |i: usize| pe.removed_incarnations.get(i).copied().unwrap_or(0);
    let removed = pe.removed_nodes.iter().enumerate().map(|(i, &id)| (id, incarnation(i))).collect();
    let m = membership_from_pb(pe.membership.unwrap_or_default())?;
    Ok((applied, StoredMembership::new(mid, m), now_ms, removed))
}

/// An applied-state record: the membership's log id, then the rest.
fn decode_record(b: &[u8]) -> io::Result<(Option<LogId>, pb::LogEntry)> {
    let (mid, rest) = match b.first() {
        Some(1) => (Some(decode_log_id(&b[1..])?), &b[25..]),
        Some(0) => (None, &b[1..]),
        _ => return Err(invalid("applied state")),
    };
    let pe = pb::LogEntry::decode(Bytes::copy_from_slice(rest)).map_err(|e| invalid(format!("applied state: {e}")))?;
    Ok((mid, pe))
}

/// The slots and epoch of `region` an applied-state record holds (`None`:
/// never split, the range `--regions` cut).
pub fn decode_span(region: u32, b: &[u8]) -> io::Result<Option<Descriptor>> {
    let (_, pe) = decode_record(b)?;
    if pe.slot_end == 0 {
        return Ok(None);
    }
    let d = Descriptor { id: region, start: pe.slot_start as u16, end: pe.slot_end, epoch: pe.epoch };
    match pe.slot_start < pe.slot_end && pe.slot_end <= crate::cluster::SLOT_COUNT {
        true => Ok(Some(d)),
        false => Err(invalid("applied state: slot range")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_roundtrip() {
        let set = pb::Set { key: Bytes::from_static(b"k"), value: Bytes::from_static(b"v"), ..Default::default() };
        let batch = pb::RaftBatch {
            now_ms: 42,
            cmds: vec![pb::WriteCmd { op: Some(pb::write_cmd::Op::Set(set)), db: 0, epoch: 0 }],
            ..Default::default()
        };
        for payload in [
            EntryPayload::Blank,
            EntryPayload::Normal(Proposal(batch)),
            EntryPayload::Membership(
                Membership::new(
                    vec![BTreeSet::from([1u64])],
                    BTreeMap::from([(1u64, Member { addr: "127.0.0.1:1".into(), incarnation: 77 })]),
                )
                .unwrap(),
            ),
        ] {
            let e = Entry { log_id: log_id(3, 1, 9), payload };
            let back = decode_entry(&encode_entry(&e)).unwrap();
            assert_eq!(back.log_id, e.log_id);
            assert_eq!(format!("{:?}", back.payload), format!("{:?}", e.payload));
        }
    }

    #[test]
    fn vote_and_applied_roundtrip() {
        let v = Vote { leader_id: LeaderId { term: 7, node_id: 1 }, committed: true };
        assert_eq!(decode_vote(&encode_vote(&v)).unwrap(), v);
        let m = StoredMembership::new(
            Some(log_id(1, 1, 1)),
            Membership::new(vec![BTreeSet::from([1u64])], BTreeMap::from([(1u64, Member::default())])).unwrap(),
        );
        let (a, m2) = decode_applied(&encode_applied(Some(&log_id(2, 1, 5)), &m)).unwrap();
        assert_eq!(a, Some(log_id(2, 1, 5)));
        assert_eq!(m2, m);
        let (a, _) = decode_applied(&encode_applied(None, &StoredMembership::default())).unwrap();
        assert_eq!(a, None);
        let (a, m3, now) =
            decode_applied_at(&encode_applied_at(Some(&log_id(2, 1, 5)), &m, 1_700_000_000_123)).unwrap();
        assert_eq!((a, m3, now), (Some(log_id(2, 1, 5)), m.clone(), 1_700_000_000_123));
        let gone = Removed::from([(2u64, 0), (9, 31)]);
        let back = decode_applied_full(&encode_applied_full(Some(&log_id(2, 1, 5)), &m, 7, &gone)).unwrap();
        assert_eq!(back, (Some(log_id(2, 1, 5)), m.clone(), 7, gone.clone()));
        assert_eq!(decode_span(3, &encode_applied_full(Some(&log_id(2, 1, 5)), &m, 7, &gone)).unwrap(), None);
        let d = Descriptor { id: 3, start: 100, end: 200, epoch: 4 };
        let b = encode_applied_spanned(Some(&log_id(2, 1, 5)), &m, 7, &gone, Some(&d));
        assert_eq!(decode_span(3, &b).unwrap(), Some(d));
        assert_eq!(decode_applied_full(&b).unwrap(), (Some(log_id(2, 1, 5)), m, 7, gone));
    }
}
