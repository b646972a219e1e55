//! Streams: their nodes (listpacks of entries under a master entry), consumer
//! groups and pending entries, read from v1 and v2 payloads and written as v2.

use std::collections::{HashMap, HashSet};

use super::listpack::{listpack, Item, Listpack};
use super::reader::{sid_be, In};
use super::{
    Consumer, Fields, Group, Pending, Sid, Stream, STREAM_NODE_BYTES, STREAM_NODE_ENTRIES, ST_DELETED, ST_SAMEFIELDS,
    T_STREAM_LISTPACKS_2,
};
use crate::protocol::rdb;

pub(super) fn stream(r: &mut In, v2: bool) -> Option<Stream> {
    let n = r.len()?;
    let mut nodes: Vec<(Sid, Vec<(Sid, Fields)>)> = Vec::with_capacity(r.cap(n));
    for _ in 0..n {
        let key: [u8; 16] = r.string()?.try_into().ok()?;
        let master = sid_be(&key);
        nodes.push((master, stream_node(&r.string()?, master)?));
    }
    // Redis keeps the nodes in a radix tree by master ID, whatever their order
    // here. Each live entry must sit in [its node's ID, the next node's ID),
    // in order, or Redis's lookups would miss it.
    nodes.sort_by_key(|(key, _)| *key);
    for i in 0..nodes.len() {
        let (key, entries) = &nodes[i];
        let next = nodes.get(i + 1).map(|(k, _)| *k);
        if next == Some(*key) {
            return None;
        }
        let mut prev: Option<Sid> = None;
        for (id, _) in entries {
            if *id < *key || next.is_some_and(|nk| *id >= nk) || prev.is_some_and(|p| *id <= p) {
                return None;
            }
            prev = Some(*id);
        }
    }
    let entries: Vec<(Sid, Fields)> = nodes.into_iter().flat_map(|(_, e)| e).collect();
    let length = r.len()?;
    let last_id = Sid { ms: r.len()?, seq: r.len()? };
    if length != entries.len() as u64 || entries.last().is_some_and(|(id, _)| *id > last_id) {
        return None;
    }
    let (first_id, max_deleted_id, entries_added) = if v2 {
        let first = Sid { ms: r.len()?, seq: r.len()? };
        let max_deleted = Sid { ms: r.len()?, seq: r.len()? };
        (first, max_deleted, r.len()?)
    } else {
        // What Redis derives for a pre-7.0 stream (an empty one gets
        // u64::MAX-u64::MAX as its first ID).
        let first = entries.first().map_or(Sid { ms: u64::MAX, seq: u64::MAX }, |(id, _)| *id);
        (first, Sid::default(), length)
    };
    let mut s = Stream { entries, last_id, first_id, max_deleted_id, entries_added, groups: Vec::new() };

    let ngroups = r.len()?;
    let mut names = HashSet::new();
    for _ in 0..ngroups {
        let name = r.string()?;
        let last_id = Sid { ms: r.len()?, seq: r.len()? };
        let entries_read =
            if v2 { Some(r.len()?).filter(|&v| v != u64::MAX) } else { estimate_entries_read(&s, last_id) };
        if !names.insert(name.clone()) {
            return None;
        }
        // The global PEL, then each consumer's share of it: every pending
        // entry must have exactly one owner.
        let npel = r.len()?;
        let mut pel = Vec::with_capacity(r.cap(npel));
        let mut index = HashMap::new();
        for _ in 0..npel {
            let id = r.raw_id()?;
            let delivery_time_ms = r.u64_le()?;
            let delivery_count = r.len()?;
            if index.insert(id, pel.len()).is_some() {
                return None;
            }
            pel.push(Pending { id, delivery_time_ms, delivery_count });
        }
        let mut owned = vec![false; pel.len()];
        let nconsumers = r.len()?;
        let mut consumers = Vec::with_capacity(r.cap(nconsumers));
        let mut cnames = HashSet::new();
        for _ in 0..nconsumers {
            let name = r.string()?;
            if !cnames.insert(name.clone()) {
                return None;
            }
            let seen_time_ms = r.u64_le()?;
            let n = r.len()?;
            let mut pending = Vec::with_capacity(r.cap(n));
            for _ in 0..n {
                let id = r.raw_id()?;
                let owner = owned.get_mut(*index.get(&id)?)?;
                if std::mem::replace(owner, true) {
                    return None;
                }
                pending.push(id);
            }
            consumers.push(Consumer { name, seen_time_ms, pending });
        }
        if owned.contains(&false) {
            return None;
        }
        // Redis keeps all of these in radix trees: hand them out in that order.
        pel.sort_unstable_by_key(|p: &Pending| p.id);
        consumers.sort_unstable_by(|a: &Consumer, b: &Consumer| a.name.cmp(&b.name));
        for c in &mut consumers {
            c.pending.sort_unstable();
        }
        s.groups.push(Group { name, last_id, entries_read, pel, consumers });
    }
    s.groups.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Some(s)
}

/// The read counter Redis guesses for a group of a pre-7.0 stream
/// (`streamEstimateDistanceFromFirstEverEntry`).
fn estimate_entries_read(s: &Stream, id: Sid) -> Option<u64> {
    let length = s.entries.len() as u64;
    if s.entries_added == 0 {
        return Some(0);
    }
    if length == 0 && id <= s.last_id {
        return Some(s.entries_added);
    }
    if id == s.last_id {
        return Some(s.entries_added);
    }
    if id > s.last_id {
        return None;
    }
    if s.max_deleted_id == Sid::default() || s.max_deleted_id < s.first_id {
        if id < s.first_id {
            return Some(s.entries_added.wrapping_sub(length));
        }
        if id == s.first_id {
            return Some(s.entries_added.wrapping_sub(length).wrapping_add(1));
        }
    }
    None
}

/// The live entries of one stream node. The listpack holds a master entry
/// (live count, deleted count, n, n field names, 0), then entries of
/// `flags, ms delta, seq delta, n, field, value, ..., lp-count`, or
/// `flags, ms delta, seq delta, value, ..., lp-count` when SAMEFIELDS says the
/// fields are the master's.
fn stream_node(lp: &[u8], master: Sid) -> Option<Vec<(Sid, Fields)>> {
    let items = listpack(lp)?;
    let mut it = items.iter().copied();
    let count = next_int(&mut it)?;
    let deleted = next_int(&mut it)?;
    let nmaster = usize::try_from(next_int(&mut it)?).ok()?;
    let master_fields = take_items(&mut it, nmaster)?;
    if next_int(&mut it)? != 0 {
        return None;
    }
    let (mut live, mut dead) = (0i64, 0i64);
    let mut entries = Vec::new();
    while let Some(flags) = it.next() {
        let flags = flags.int()?;
        let ms = next_int(&mut it)?;
        let seq = next_int(&mut it)?;
        let id = Sid { ms: master.ms.wrapping_add(ms as u64), seq: master.seq.wrapping_add(seq as u64) };
        let same = flags & ST_SAMEFIELDS != 0;
        let pairs: Vec<(Item, Item)> = if same {
            master_fields.iter().copied().zip(take_items(&mut it, master_fields.len())?).collect()
        } else {
            let n = usize::try_from(next_int(&mut it)?).ok()?;
            let items = take_items(&mut it, n.checked_mul(2)?)?;
            items.chunks_exact(2).map(|p| (p[0], p[1])).collect()
        };
        // lp-count: the entry's own items bar itself and, if not SAMEFIELDS,
        // its field names and their count.
        let n = pairs.len() as i64;
        let expect = n + 3 + if same { 0 } else { n + 1 };
        if next_int(&mut it)? != expect {
            return None;
        }
        if flags & ST_DELETED != 0 {
            dead += 1;
        } else {
            live += 1;
            entries.push((id, pairs.into_iter().map(|(f, v)| (f.bytes(), v.bytes())).collect()));
        }
    }
    (live == count && dead == deleted).then_some(entries)
}

fn next_int<'a>(it: &mut impl Iterator<Item = Item<'a>>) -> Option<i64> {
    it.next()?.int()
}

fn take_items<'a>(it: &mut impl Iterator<Item = Item<'a>>, n: usize) -> Option<Vec<Item<'a>>> {
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(it.next()?);
    }
    Some(v)
}

pub(super) fn put_stream(out: &mut Vec<u8>, s: &Stream) {
    out.push(T_STREAM_LISTPACKS_2);
    let mut nodes = Vec::new();
    let mut rest = &s.entries[..];
    while !rest.is_empty() {
        let (master, lp, taken) = stream_node_lp(rest);
        nodes.push((master, lp));
        rest = rest.get(taken..).unwrap_or_default();
    }
    rdb::put_len(out, nodes.len() as u64);
    for (master, lp) in &nodes {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&master.ms.to_be_bytes());
        key[8..].copy_from_slice(&master.seq.to_be_bytes());
        rdb::put_string(out, &key);
        rdb::put_string(out, lp);
    }
    rdb::put_len(out, s.entries.len() as u64);
    for id in [s.last_id, s.first_id, s.max_deleted_id] {
        rdb::put_len(out, id.ms);
        rdb::put_len(out, id.seq);
    }
    rdb::put_len(out, s.entries_added);
    rdb::put_len(out, s.groups.len() as u64);
    for g in &s.groups {
        rdb::put_string(out, &g.name);
        rdb::put_len(out, g.last_id.ms);
        rdb::put_len(out, g.last_id.seq);
        rdb::put_len(out, g.entries_read.unwrap_or(u64::MAX));
        rdb::put_len(out, g.pel.len() as u64);
        for p in &g.pel {
            put_raw_id(out, p.id);
            out.extend_from_slice(&p.delivery_time_ms.to_le_bytes());
            rdb::put_len(out, p.delivery_count);
        }
        rdb::put_len(out, g.consumers.len() as u64);
        for c in &g.consumers {
            rdb::put_string(out, &c.name);
            out.extend_from_slice(&c.seen_time_ms.to_le_bytes());
            rdb::put_len(out, c.pending.len() as u64);
            for id in &c.pending {
                put_raw_id(out, *id);
            }
        }
    }
}

pub(super) fn put_raw_id(out: &mut Vec<u8>, id: Sid) {
    out.extend_from_slice(&id.ms.to_be_bytes());
    out.extend_from_slice(&id.seq.to_be_bytes());
}

/// One stream node from the front of `entries` (non-empty), filled as
/// `streamAppendItem` fills one: a new node once 100 entries are in, or once
/// the next entry's fields and values would take the node to 4 KB. Returns the
/// node's master ID, its listpack and how many entries it took.
pub(super) fn stream_node_lp(entries: &[(Sid, Fields)]) -> (Sid, Vec<u8>, usize) {
    let Some((master, master_fields)) = entries.first() else {
        return (Sid::default(), Listpack::new().finish(), 0);
    };
    let master_entry = |count: usize| {
        let mut lp = Listpack::new();
        lp.push_int(count as i64);
        lp.push_int(0); // deleted
        lp.push_int(master_fields.len() as i64);
        for (f, _) in master_fields {
            lp.push_str(f);
        }
        lp.push_int(0); // the master entry's terminator
        lp
    };
    let head_size = master_entry(0).size();
    let mut body = Listpack::new();
    let mut taken = 0;
    for (id, fields) in entries {
        let payload: usize = fields.iter().map(|(f, v)| f.len() + v.len()).sum();
        if taken == STREAM_NODE_ENTRIES
            || (taken > 0 && head_size + body.size() - Listpack::EMPTY + payload >= STREAM_NODE_BYTES)
        {
            break;
        }
        let same =
            fields.len() == master_fields.len() && fields.iter().zip(master_fields).all(|((a, _), (b, _))| a == b);
        let n = fields.len() as i64;
        body.push_int(if same { ST_SAMEFIELDS } else { 0 });
        body.push_int(id.ms.wrapping_sub(master.ms) as i64);
        body.push_int(id.seq.wrapping_sub(master.seq) as i64);
        if !same {
            body.push_int(n);
        }
        for (f, v) in fields {
            if !same {
                body.push_str(f);
            }
            body.push_str(v);
        }
        body.push_int(n + 3 + if same { 0 } else { n + 1 });
        taken += 1;
    }
    let mut lp = master_entry(taken);
    lp.append(body);
    (*master, lp.finish(), taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    #[test]
    fn stream_nodes_hold_deleted_entries_and_differing_fields() {
        // A node written by hand: master fields [a], then an entry with the
        // same fields, a deleted one, and one with fields of its own.
        let master = Sid { ms: 10, seq: 0 };
        let mut lp = Listpack::new();
        for v in [2, 1, 1] {
            lp.push_int(v);
        }
        lp.push_str(b"a");
        lp.push_int(0);
        // flags, ms delta, seq delta, [n, field, value, ...| value, ...], lp-count
        let entries: [&[&str]; 3] = [
            &["2", "0", "0", "1", "4"],
            &["3", "0", "1", "gone", "4"],
            &["0", "5", "-1", "2", "b", "x", "c", "y", "8"],
        ];
        for e in entries {
            for item in e {
                lp.push_str(item.as_bytes());
            }
        }
        let lp = lp.finish();
        let entries = stream_node(&lp, master).unwrap();
        assert_eq!(
            entries,
            vec![
                (Sid { ms: 10, seq: 0 }, vec![(b("a"), b("1"))]),
                (Sid { ms: 15, seq: u64::MAX }, vec![(b("b"), b("x")), (b("c"), b("y"))]),
            ]
        );
    }
}
