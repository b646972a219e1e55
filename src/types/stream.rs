//! Streams: entries by id, consumer groups beside them, all in the `subkey`
//! space of the stream's version (so DEL, RENAME, expiry and garbage
//! collection are a collection's).
//!
//! Under the stream's element prefix `[slot][len][key][version]`:
//!
//! | tag | rest of the key | value |
//! |---|---|---|
//! | 1 entry | `[ms:8][seq:8]` | `[len:4][field][len:4][value]`… |
//! | 2 node | `[master ms:8][seq:8]` | `stream_node::Node`: the listpack Redis would hold |
//! | 3 group | `[name]` | `[last ms:8][seq:8][entries read:8, MAX = unknown][pending:8]` |
//! | 4 consumer | `[group len:4][group][name]` | `[seen ms:8][pending:8]` |
//! | 5 pending | `[group len:4][group][ms:8][seq:8]` | `[delivered ms:8][deliveries:8][consumer]` |
//! | 6 owned | `[group len:4][group][consumer len:4][consumer][ms:8][seq:8]` | empty: a consumer's pending entries |
//!
//! The metadata's size is the number of entries; the stream's own fields
//! (last id, first id, max deleted id, entries added, trim floor, the last
//! node's master id) follow it
//! ([`State`]). A stream may be empty and still exist (XDEL, XTRIM, MKSTREAM):
//! only DEL removes it.
//!
//! Trimming works by node, as Redis's does (`stream_node`): whole nodes go
//! from the head, and an exact trim marks entries of one node deleted. Every
//! entry below the *floor* is dead: a trim moves the floor past the nodes it
//! drops and deletes their entries as one span, with one range deletion when
//! it holds more than a few hundred keys, so a big trim costs the node
//! records it reads, not the entries it drops; readers never look below the
//! floor.
//!
//! Writes run inside apply (each stream write command is proposed as a
//! one-command transaction, `cmd::stream`), reading and writing through
//! [`ApplyCtx`]; reads take any [`Source`].

use bytes::Bytes;

use super::coll::{prefix_end, Found};
use super::stream_node::plan_trim;
pub use super::stream_node::{Limits, Node, Sid, Trim};
use super::view::Source;
use super::{ApplyCtx, TypeError};
use crate::storage::keys::KeyType;
use crate::storage::meta::{Coll, Meta, STREAM_FIELDS};
use crate::storage::{Cf, StorageError};
use std::cell::RefCell;

const ENTRY: u8 = 1;
const NODE: u8 = 2;
const GROUP: u8 = 3;
const CONSUMER: u8 = 4;
const PENDING: u8 = 5;
const OWNED: u8 = 6;

/// Deletions of up to this many keys are written one by one; more become one
/// range deletion.
const SMALL_SPAN: usize = 256;

/// A command's failure: the Redis error text.
pub type Failed = String;
/// Storage failure outside, the command's failure inside.
pub type Res<T> = Result<Result<T, Failed>, StorageError>;

/// Redis's error for an id at or below the stream's top.
pub const ID_TOO_SMALL: &str = "ERR The ID specified in XADD is equal or smaller than the target stream top item";

impl Sid {
    pub const MAX: Sid = Sid { ms: u64::MAX, seq: u64::MAX };
    pub const ZERO: Sid = Sid { ms: 0, seq: 0 };

    pub fn new(ms: u64, seq: u64) -> Sid {
        Sid { ms, seq }
    }

    /// Big-endian: byte order is id order.
    pub fn bytes(self) -> [u8; 16] {
        let mut b = [0; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<Sid> {
        let b: &[u8; 16] = b.get(..16)?.try_into().ok()?;
        Some(Sid { ms: u64::from_be_bytes(b[..8].try_into().ok()?), seq: u64::from_be_bytes(b[8..].try_into().ok()?) })
    }

    /// The next id (`None` past the last).
    pub fn next(self) -> Option<Sid> {
        match (self.ms, self.seq) {
            (u64::MAX, u64::MAX) => None,
            (ms, u64::MAX) => Some(Sid { ms: ms + 1, seq: 0 }),
            (ms, seq) => Some(Sid { ms, seq: seq + 1 }),
        }
    }

    /// The previous id (`None` before 0-0).
    pub fn prev(self) -> Option<Sid> {
        match (self.ms, self.seq) {
            (0, 0) => None,
            (ms, 0) => Some(Sid { ms: ms - 1, seq: u64::MAX }),
            (ms, seq) => Some(Sid { ms, seq: seq - 1 }),
        }
    }

    pub fn is_zero(self) -> bool {
        self == Sid::ZERO
    }

    /// `ms-seq`, as replies show it.
    pub fn text(self) -> Bytes {
        Bytes::from(format!("{}-{}", self.ms, self.seq))
    }
}

/// A stream's own metadata fields.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct State {
    /// The last id ever added (or set by XSETID).
    pub last: Sid,
    /// The first live entry's id, 0-0 when empty.
    pub first: Sid,
    /// The greatest id XDEL removed.
    pub max_deleted: Sid,
    /// Entries ever added.
    pub added: u64,
    /// Every entry and node below it is gone.
    pub floor: Sid,
    /// The master id of the last node, where XADD appends (0-0: look it up).
    pub tail: Sid,
}

impl State {
    fn of(c: &Coll) -> State {
        let b = &c.stream[..];
        if b.len() < STREAM_FIELDS {
            return State::default();
        }
        let id = |i: usize| Sid::from_bytes(&b[i..]).unwrap_or_default();
        State {
            last: id(0),
            first: id(16),
            max_deleted: id(32),
            added: u64::from_be_bytes(b[48..56].try_into().unwrap_or([0; 8])),
            floor: id(56),
            tail: id(72),
        }
    }

    fn put(&self, c: &mut Coll) {
        let mut b = Vec::with_capacity(STREAM_FIELDS);
        b.extend_from_slice(&self.last.bytes());
        b.extend_from_slice(&self.first.bytes());
        b.extend_from_slice(&self.max_deleted.bytes());
        b.extend_from_slice(&self.added.to_be_bytes());
        b.extend_from_slice(&self.floor.bytes());
        b.extend_from_slice(&self.tail.bytes());
        c.stream = Bytes::from(b);
    }
}

/// An entry's fields and values, alternating.
pub type Fields = Vec<Bytes>;

/// A stream, as read.
#[derive(Debug, Clone)]
pub struct Stream {
    pub found: Found,
    pub state: State,
}

impl Stream {
    fn of(found: Found) -> Stream {
        let state = State::of(&found.coll);
        Stream { found, state }
    }

    /// Entries in the stream (XLEN).
    pub fn len(&self) -> u64 {
        self.found.coll.size
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, tag: u8, parts: &[&[u8]]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.found.prefix.len() + 1 + parts.iter().map(|p| p.len()).sum::<usize>());
        k.extend_from_slice(&self.found.prefix);
        k.push(tag);
        for p in parts {
            k.extend_from_slice(p);
        }
        k
    }

    fn entry_key(&self, id: Sid) -> Vec<u8> {
        self.key(ENTRY, &[&id.bytes()])
    }

    /// The end of an entry range that stops before `end` (`None`: past every id).
    fn entries_before(&self, end: Option<Sid>) -> Vec<u8> {
        match end {
            Some(e) => self.entry_key(e),
            None => self.key(ENTRY + 1, &[]),
        }
    }

    fn node_key(&self, master: Sid) -> Vec<u8> {
        self.key(NODE, &[&master.bytes()])
    }

    fn group_key(&self, group: &[u8]) -> Vec<u8> {
        self.key(GROUP, &[group])
    }

    fn consumer_key(&self, group: &[u8], name: &[u8]) -> Vec<u8> {
        self.key(CONSUMER, &[&(group.len() as u32).to_be_bytes(), group, name])
    }

    fn pending_key(&self, group: &[u8], id: Sid) -> Vec<u8> {
        self.key(PENDING, &[&(group.len() as u32).to_be_bytes(), group, &id.bytes()])
    }

    fn owned_key(&self, group: &[u8], consumer: &[u8], id: Sid) -> Vec<u8> {
        let (gl, cl) = ((group.len() as u32).to_be_bytes(), (consumer.len() as u32).to_be_bytes());
        self.key(OWNED, &[&gl, group, &cl, consumer, &id.bytes()])
    }
}

/// The stream at `key` (`Ok(None)` if absent, WRONGTYPE if another type).
pub fn open(src: &impl Source, key: &[u8]) -> Result<Result<Option<Stream>, TypeError>, StorageError> {
    Ok(match src.meta(key)? {
        None => Ok(None),
        Some(m) if m.kind != KeyType::Stream => Err(TypeError::WrongType),
        Some(m) => Ok(Found::from_meta(src.db(), key, m).map(Stream::of)),
    })
}

// ---- entries ----

fn encode_fields(fv: &[Bytes]) -> Vec<u8> {
    let mut v = Vec::with_capacity(fv.iter().map(|b| b.len() + 4).sum());
    for b in fv {
        v.extend_from_slice(&(b.len() as u32).to_be_bytes());
        v.extend_from_slice(b);
    }
    v
}

fn decode_fields(mut v: &[u8]) -> Fields {
    let mut out = Vec::new();
    while v.len() >= 4 {
        let n = u32::from_be_bytes([v[0], v[1], v[2], v[3]]) as usize;
        let Some(b) = v.get(4..4 + n) else { break };
        out.push(Bytes::copy_from_slice(b));
        v = &v[4 + n..];
    }
    out
}

/// Entries with ids in `[start, end]`, ascending (or descending with `rev`),
/// at most `count`.
pub fn range(
    src: &impl Source,
    s: &Stream,
    start: Sid,
    end: Sid,
    count: usize,
    rev: bool,
) -> Result<Vec<(Sid, Fields)>, StorageError> {
    let mut out = Vec::new();
    let start = start.max(s.state.floor);
    if start > end || count == 0 || s.is_empty() {
        return Ok(out);
    }
    let from = s.entry_key(start);
    let to = s.entries_before(end.next());
    let n = s.found.prefix.len() + 1;
    src.scan(Cf::Subkey, &from, &to, rev, |k, v| {
        if let Some(id) = Sid::from_bytes(&k[n..]) {
            out.push((id, decode_fields(v)));
        }
        out.len() < count
    })?;
    Ok(out)
}

/// The ids of the live entries in `[start, end]`, ascending, at most `count`.
fn ids(src: &impl Source, s: &Stream, start: Sid, end: Sid, count: usize) -> Result<Vec<Sid>, StorageError> {
    let mut out = Vec::new();
    let start = start.max(s.state.floor);
    if start > end || count == 0 {
        return Ok(out);
    }
    let to = s.entries_before(end.next());
    let n = s.found.prefix.len() + 1;
    src.scan(Cf::Subkey, &s.entry_key(start), &to, false, |k, _| {
        out.extend(Sid::from_bytes(&k[n..]));
        out.len() < count
    })?;
    Ok(out)
}

/// The id of the last live entry (0-0 if none).
pub fn last_live(src: &impl Source, s: &Stream) -> Result<Sid, StorageError> {
    Ok(range(src, s, Sid::ZERO, Sid::MAX, 1, true)?.first().map_or(Sid::ZERO, |e| e.0))
}

/// One entry's fields, if it is live.
pub fn entry(src: &impl Source, s: &Stream, id: Sid) -> Result<Option<Fields>, StorageError> {
    if id < s.state.floor {
        return Ok(None);
    }
    Ok(src.get(Cf::Subkey, &s.entry_key(id))?.map(|v| decode_fields(&v)))
}

/// The node records from `from` on, ascending, at most `count`.
fn nodes_from(src: &impl Source, s: &Stream, from: Sid, count: usize) -> Result<Vec<Node>, StorageError> {
    let mut out = Vec::new();
    let lo = s.node_key(from.max(s.state.floor));
    src.scan(Cf::Subkey, &lo, &s.key(NODE + 1, &[]), false, |_, v| {
        out.extend(Node::decode(v));
        out.len() < count
    })?;
    Ok(out)
}

/// The node holding `id` (the last one whose master is at or before it).
fn node_of(src: &impl Source, s: &Stream, id: Sid) -> Result<Option<Node>, StorageError> {
    let mut found = None;
    let hi = match id.next() {
        Some(n) => s.node_key(n),
        None => s.key(NODE + 1, &[]),
    };
    src.scan(Cf::Subkey, &s.node_key(s.state.floor), &hi, true, |_, v| {
        found = Node::decode(v);
        false
    })?;
    Ok(found)
}

/// The number of nodes (XINFO's `radix-tree-keys`).
pub fn node_count(src: &impl Source, s: &Stream) -> Result<u64, StorageError> {
    let mut n = 0;
    src.scan(Cf::Subkey, &s.node_key(s.state.floor), &s.key(NODE + 1, &[]), false, |_, _| {
        n += 1;
        true
    })?;
    Ok(n)
}

// ---- consumer groups ----

/// A consumer group.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: Bytes,
    /// The last id delivered.
    pub last: Sid,
    /// Entries read (Redis's logical read counter), `None` when unknown.
    pub read: Option<u64>,
    /// Entries delivered and not acknowledged.
    pub pending: u64,
}

impl Group {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(32);
        v.extend_from_slice(&self.last.bytes());
        v.extend_from_slice(&self.read.unwrap_or(u64::MAX).to_be_bytes());
        v.extend_from_slice(&self.pending.to_be_bytes());
        v
    }

    fn decode(name: &[u8], v: &[u8]) -> Option<Group> {
        let last = Sid::from_bytes(v)?;
        let read = u64::from_be_bytes(v.get(16..24)?.try_into().ok()?);
        let pending = u64::from_be_bytes(v.get(24..32)?.try_into().ok()?);
        Some(Group { name: Bytes::copy_from_slice(name), last, read: (read != u64::MAX).then_some(read), pending })
    }
}

/// A consumer of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Consumer {
    pub name: Bytes,
    /// When it last read or claimed (ms).
    pub seen: u64,
    pub pending: u64,
}

/// A delivered, unacknowledged entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub id: Sid,
    pub consumer: Bytes,
    /// When it was last delivered (ms).
    pub delivered: u64,
    pub deliveries: u64,
}

impl Pending {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16 + self.consumer.len());
        v.extend_from_slice(&self.delivered.to_be_bytes());
        v.extend_from_slice(&self.deliveries.to_be_bytes());
        v.extend_from_slice(&self.consumer);
        v
    }

    fn decode(id: Sid, v: &[u8]) -> Option<Pending> {
        Some(Pending {
            id,
            delivered: u64::from_be_bytes(v.get(..8)?.try_into().ok()?),
            deliveries: u64::from_be_bytes(v.get(8..16)?.try_into().ok()?),
            consumer: Bytes::copy_from_slice(v.get(16..)?),
        })
    }
}

pub fn group(src: &impl Source, s: &Stream, name: &[u8]) -> Result<Option<Group>, StorageError> {
    Ok(src.get(Cf::Subkey, &s.group_key(name))?.and_then(|v| Group::decode(name, &v)))
}

/// Every group, by name.
pub fn groups(src: &impl Source, s: &Stream) -> Result<Vec<Group>, StorageError> {
    let mut out = Vec::new();
    let n = s.found.prefix.len() + 1;
    src.scan(Cf::Subkey, &s.key(GROUP, &[]), &s.key(GROUP + 1, &[]), false, |k, v| {
        out.extend(Group::decode(&k[n..], v));
        true
    })?;
    Ok(out)
}

fn decode_consumer(name: &[u8], v: &[u8]) -> Option<Consumer> {
    Some(Consumer {
        name: Bytes::copy_from_slice(name),
        seen: u64::from_be_bytes(v.get(..8)?.try_into().ok()?),
        pending: u64::from_be_bytes(v.get(8..16)?.try_into().ok()?),
    })
}

pub fn consumer(src: &impl Source, s: &Stream, group: &[u8], name: &[u8]) -> Result<Option<Consumer>, StorageError> {
    Ok(src.get(Cf::Subkey, &s.consumer_key(group, name))?.and_then(|v| decode_consumer(name, &v)))
}

/// A group's consumers, by name.
pub fn consumers(src: &impl Source, s: &Stream, group: &[u8]) -> Result<Vec<Consumer>, StorageError> {
    let mut out = Vec::new();
    let lo = s.consumer_key(group, b"");
    let n = lo.len();
    src.scan(Cf::Subkey, &lo, &prefix_end(&lo), false, |k, v| {
        out.extend(decode_consumer(&k[n..], v));
        true
    })?;
    Ok(out)
}

pub fn pending_entry(src: &impl Source, s: &Stream, group: &[u8], id: Sid) -> Result<Option<Pending>, StorageError> {
    Ok(src.get(Cf::Subkey, &s.pending_key(group, id))?.and_then(|v| Pending::decode(id, &v)))
}

/// A group's pending entries with ids in `[start, end]`, ascending, at most
/// `count`, those of `consumer` only if given, and `keep` says which count.
pub fn pending(
    src: &impl Source,
    s: &Stream,
    group: &[u8],
    start: Sid,
    end: Sid,
    count: usize,
    consumer: Option<&[u8]>,
    mut keep: impl FnMut(&Pending) -> bool,
) -> Result<Vec<Pending>, StorageError> {
    let mut out = Vec::new();
    if start > end || count == 0 {
        return Ok(out);
    }
    match consumer {
        None => {
            let lo = s.pending_key(group, start);
            let n = lo.len() - 16;
            let hi = match end.next() {
                Some(e) => s.pending_key(group, e),
                None => prefix_end(&s.pending_key(group, Sid::ZERO)[..n]),
            };
            src.scan(Cf::Subkey, &lo, &hi, false, |k, v| {
                if let Some(p) = Sid::from_bytes(&k[n..]).and_then(|id| Pending::decode(id, v)) {
                    if keep(&p) {
                        out.push(p);
                    }
                }
                out.len() < count
            })?;
        }
        Some(c) => {
            // The consumer's own index, then each entry's record.
            let lo = s.owned_key(group, c, start);
            let n = lo.len() - 16;
            let hi = match end.next() {
                Some(e) => s.owned_key(group, c, e),
                None => prefix_end(&lo[..n]),
            };
            let mut ids = Vec::new();
            let mut err = None;
            src.scan(Cf::Subkey, &lo, &hi, false, |k, _| {
                let Some(id) = Sid::from_bytes(&k[n..]) else { return true };
                match pending_entry(src, s, group, id) {
                    Ok(Some(p)) if keep(&p) => ids.push(p),
                    Ok(_) => {}
                    Err(e) => {
                        err = Some(e);
                        return false;
                    }
                }
                ids.len() < count
            })?;
            if let Some(e) = err {
                return Err(e);
            }
            out = ids;
        }
    }
    Ok(out)
}

/// The greatest id among a group's pending entries.
pub fn last_pending(src: &impl Source, s: &Stream, group: &[u8]) -> Result<Option<Sid>, StorageError> {
    let lo = s.pending_key(group, Sid::ZERO);
    let n = lo.len() - 16;
    let mut last = None;
    src.scan(Cf::Subkey, &lo, &prefix_end(&lo[..n]), true, |k, _| {
        last = Sid::from_bytes(&k[n..]);
        false
    })?;
    Ok(last)
}

// ---- the consumer group's logical read counter (Redis's lag) ----

/// True if an entry in `[start, ..]` was deleted by XDEL (the read counter
/// can no longer be trusted past it).
fn has_tombstones(s: &Stream, start: Sid) -> bool {
    let st = &s.state;
    if s.is_empty() || st.max_deleted.is_zero() || st.first > st.max_deleted {
        return false;
    }
    start <= st.max_deleted
}

/// The number of entries ever added up to and including `id`, when the
/// stream's fields tell it (`streamEstimateDistanceFromFirstEverEntry`).
fn estimate_read(s: &Stream, id: Sid) -> Option<u64> {
    let st = &s.state;
    if st.added == 0 {
        return Some(0);
    }
    if s.is_empty() && id <= st.last {
        return Some(st.added);
    }
    if id == st.last {
        return Some(st.added);
    }
    if id > st.last {
        return None;
    }
    if st.max_deleted.is_zero() || st.max_deleted < st.first {
        if id < st.first {
            return Some(st.added.wrapping_sub(s.len()));
        }
        if id == st.first {
            return Some(st.added.wrapping_sub(s.len()).wrapping_add(1));
        }
    }
    None
}

/// A group's lag (`None`: unknown, a nil reply). Signed, as Redis's: an
/// ENTRIESREAD past the entries added makes it negative.
pub fn lag(s: &Stream, g: &Group) -> Option<i64> {
    let st = &s.state;
    if st.added == 0 {
        return Some(0);
    }
    let added = st.added as i64;
    if let Some(read) = g.read {
        if !has_tombstones(s, g.last) {
            return Some(added.wrapping_sub(read as i64));
        }
    }
    estimate_read(s, g.last).map(|r| added.wrapping_sub(r as i64))
}

// ---- writes (inside apply) ----

/// The stream at `key` for a write: `Ok(None)` if absent.
pub fn open_write(a: &ApplyCtx, key: &[u8]) -> Result<Result<Option<(Stream, Meta)>, TypeError>, StorageError> {
    let Some(m) = a.live_meta(&a.mkey(key))? else { return Ok(Ok(None)) };
    if m.kind != KeyType::Stream {
        return Ok(Err(TypeError::WrongType));
    }
    Ok(Ok(Found::from_meta(a.db(), key, m.clone()).map(|f| (Stream::of(f), m))))
}

/// A new, empty stream at `key` (not yet saved).
pub fn create(a: &mut ApplyCtx, key: &[u8]) -> Stream {
    let coll = Coll::new(KeyType::Stream, a.new_version(key));
    Stream::of(Found::fresh(a.db(), key, &coll))
}

/// Write the stream's metadata (its size and fields) back; `old` is what the
/// key held before (an expired leftover, or the stream itself).
pub fn save(a: &mut ApplyCtx, key: &[u8], old: Option<&Meta>, s: &mut Stream) {
    let mut coll = s.found.coll.clone();
    s.state.put(&mut coll);
    a.put_meta_over(a.mkey(key), old, coll.encode());
    s.found.coll = coll;
}

/// What XADD asks for as the new entry's id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NewId {
    /// `*`: the entry's time, or after the last id.
    Auto,
    /// `ms-*`.
    Ms(u64),
    Exact(Sid),
}

/// Add an entry; its id.
pub fn add(a: &mut ApplyCtx, s: &mut Stream, id: NewId, fv: &[Bytes], lim: &Limits) -> Res<Sid> {
    let last = s.state.last;
    if last == Sid::MAX {
        return Ok(Err("ERR The stream has exhausted the last possible ID, unable to add more items".into()));
    }
    let id = match id {
        NewId::Auto if a.now_ms > last.ms => Sid::new(a.now_ms, 0),
        NewId::Auto => last.next().unwrap_or(Sid::MAX),
        NewId::Ms(ms) if ms == last.ms => match last.next() {
            Some(n) if n.ms == ms => n,
            _ => return Ok(Err(ID_TOO_SMALL.into())),
        },
        NewId::Ms(ms) => Sid::new(ms, 0),
        NewId::Exact(id) => id,
    };
    if id <= last {
        return Ok(Err(ID_TOO_SMALL.into()));
    }
    let pairs: Vec<(&[u8], &[u8])> = fv.chunks_exact(2).map(|p| (&p[0][..], &p[1][..])).collect();
    let node = match last_node(a, s)? {
        // An id below the node's own (XSETID took an emptied stream back)
        // starts a node, so that a node's ids always run master..=last.
        Some(mut n) if n.fits(&pairs, lim) && id > n.master && id > n.last => {
            n.push(id, &pairs);
            n
        }
        _ => Node::first(id, &pairs),
    };
    a.put_element(Cf::Subkey, s.node_key(node.master), node.encode());
    a.put_element(Cf::Subkey, s.entry_key(id), encode_fields(fv));
    s.state.tail = node.master;
    s.found.coll.size += 1;
    s.state.added += 1;
    s.state.last = id;
    if s.found.coll.size == 1 {
        s.state.first = id;
    }
    Ok(Ok(id))
}

/// The node XADD appends to: by the state's pointer (one point read), else
/// the last node record.
fn last_node(a: &ApplyCtx, s: &Stream) -> Result<Option<Node>, StorageError> {
    if !s.state.tail.is_zero() {
        if let Some(v) = a.get_element(Cf::Subkey, &s.node_key(s.state.tail))? {
            return Ok(Node::decode(&v));
        }
    }
    let mut found = None;
    a.scan_elements(Cf::Subkey, &s.node_key(s.state.floor), &s.key(NODE + 1, &[]), true, |_, v| {
        found = Node::decode(v);
        false
    })?;
    Ok(found)
}

/// Node records from the floor on, read a page at a time (a storage
/// failure ends the walk and is kept in `failed`).
struct Nodes<'a, S: Source> {
    src: &'a S,
    s: &'a Stream,
    cursor: Option<Sid>,
    page: std::collections::VecDeque<Node>,
    /// Records read per page: from 2 (most trims stop at the first node), doubling to 64.
    size: usize,
    failed: &'a RefCell<Option<StorageError>>,
}

impl<S: Source> Iterator for Nodes<'_, S> {
    type Item = Node;

    fn next(&mut self) -> Option<Node> {
        if self.page.is_empty() {
            let from = self.cursor?;
            let size = self.size;
            self.size = (size * 2).min(64);
            match nodes_from(self.src, self.s, from, size) {
                Ok(p) => self.page = p.into(),
                Err(e) => {
                    *self.failed.borrow_mut() = Some(e);
                    return None;
                }
            }
            self.cursor = self.page.back().and_then(|n| n.master.next());
        }
        self.page.pop_front()
    }
}

/// Trim as Redis's `streamTrim` does (`stream_node::plan_trim`: whole nodes
/// from the head while they may go, then, unless `approx`, entries of the
/// next node; `limit`, 0 for none, caps the entries removed). The number of
/// entries removed.
pub fn trim(
    a: &mut ApplyCtx,
    key: &[u8],
    s: &mut Stream,
    how: Trim,
    approx: bool,
    limit: u64,
) -> Result<u64, StorageError> {
    if matches!(how, Trim::MaxLen(max) if s.len() <= max) {
        return Ok(0);
    }
    let failed = RefCell::new(None);
    let seen = RefCell::new(Vec::new());
    let plan = {
        let src: &ApplyCtx = a;
        let nodes = Nodes { src, s, cursor: Some(s.state.floor), page: Default::default(), size: 2, failed: &failed };
        let nodes = nodes.inspect(|n| seen.borrow_mut().push(n.clone()));
        plan_trim(s.len(), &how, approx, limit, nodes, |node, min| {
            match ids(src, s, node.master.max(s.state.floor), node.last, usize::MAX) {
                Ok(live) => live.iter().take_while(|id| **id < min).count() as u64,
                Err(e) => {
                    *failed.borrow_mut() = Some(e);
                    0
                }
            }
        })
    };
    if let Some(e) = failed.into_inner() {
        return Err(e);
    }
    let seen = seen.into_inner();
    // The removed nodes are the head's, one after another: their entries are
    // one span, deleted at once (one range deletion when long).
    let mut dead_below = s.state.floor;
    let removed = &seen[..plan.remove];
    // A node's entries run from its master to its last id, and never reach
    // the next node's master (after XSETID took the stream back, a node's
    // deleted entries can lie above the next node's ids).
    let bound = |end: Option<Sid>, next: Option<&Node>| match (end, next) {
        (Some(e), Some(n)) => Some(e.min(n.master)),
        (e, None) => e,
        (None, Some(n)) => Some(n.master),
    };
    if let (Some(first), Some(last)) = (removed.first(), removed.last()) {
        let end = bound(last.last.next(), seen.get(plan.remove));
        let to = s.entries_before(end);
        let keys: u64 = removed.iter().map(|n| n.live + n.deleted).sum();
        drop_span(a, s.entry_key(first.master.max(s.state.floor)), to, keys)?;
        dead_below = end.unwrap_or(Sid::MAX);
    }
    for node in removed {
        a.del_element(Cf::Subkey, s.node_key(node.master));
        if node.master == s.state.tail {
            s.state.tail = Sid::ZERO;
        }
        s.found.coll.size -= node.live.min(s.found.coll.size);
    }
    if plan.mark > 0 {
        let mut node = seen[plan.remove].clone();
        let next = nodes_from(a, s, node.master.next().unwrap_or(Sid::MAX), 1)?;
        let top = bound(node.last.next(), next.first()).and_then(Sid::prev).unwrap_or(Sid::MAX);
        for id in ids(a, s, node.master.max(s.state.floor), top, plan.mark as usize)? {
            a.del_element(Cf::Subkey, s.entry_key(id));
        }
        node.delete(plan.mark);
        a.put_element(Cf::Subkey, s.node_key(node.master), node.encode());
        s.found.coll.size -= plan.mark.min(s.found.coll.size);
    }
    s.state.floor = s.state.floor.max(dead_below);
    if plan.deleted > 0 {
        refresh_first(a, s)?;
    } else if plan.remove > 0 {
        // Only nodes left empty went: readers' caches must forget them, but
        // the stream's content (and so WATCH) is unchanged, as in Redis.
        a.rewrote(key);
    }
    Ok(plan.deleted)
}

/// Delete the keys in `[from, to)` (about `hint` of them): one by one when
/// few, else with one range deletion (the floor keeps readers out of it).
fn drop_span(a: &mut ApplyCtx, from: Vec<u8>, to: Vec<u8>, hint: u64) -> Result<(), StorageError> {
    if hint as usize <= SMALL_SPAN {
        let mut keys = Vec::new();
        a.scan_elements(Cf::Subkey, &from, &to, false, |k, _| {
            keys.push(k.to_vec());
            true
        })?;
        for k in keys {
            a.del_element(Cf::Subkey, k);
        }
    } else {
        a.del_element_range(Cf::Subkey, from, to);
    }
    Ok(())
}

/// Set the first id after entries went from the head.
fn refresh_first(a: &ApplyCtx, s: &mut Stream) -> Result<(), StorageError> {
    s.state.first = if s.is_empty() {
        Sid::ZERO
    } else {
        ids(a, s, s.state.floor, Sid::MAX, 1)?.first().copied().unwrap_or(Sid::ZERO)
    };
    Ok(())
}

/// XDEL: remove the entries `ids` that exist; how many did.
pub fn delete(a: &mut ApplyCtx, s: &mut Stream, ids: &[Sid]) -> Result<u64, StorageError> {
    let mut deleted = 0;
    let mut first_gone = false;
    for &id in ids {
        if entry(a, s, id)?.is_none() {
            continue;
        }
        a.del_element(Cf::Subkey, s.entry_key(id));
        if let Some(mut node) = node_of(a, s, id)? {
            node.delete(1);
            if node.live == 0 {
                a.del_element(Cf::Subkey, s.node_key(node.master));
                if node.master == s.state.tail {
                    s.state.tail = Sid::ZERO;
                }
            } else {
                a.put_element(Cf::Subkey, s.node_key(node.master), node.encode());
            }
        }
        s.found.coll.size -= 1;
        first_gone |= id == s.state.first;
        if id > s.state.max_deleted {
            s.state.max_deleted = id;
        }
        deleted += 1;
    }
    if deleted > 0 && (s.is_empty() || first_gone) {
        refresh_first(a, s)?;
    }
    Ok(deleted)
}

/// XSETID, once its arguments are checked (the max deleted id against the
/// new last id): the checks against the stream, then the new fields.
pub fn set_id(a: &mut ApplyCtx, s: &mut Stream, last: Sid, added: Option<u64>, max_deleted: Sid) -> Res<()> {
    if !s.is_empty() {
        let top = last_live(a, s)?;
        if last < top {
            return Ok(Err("ERR The ID specified in XSETID is smaller than the target stream top item".into()));
        }
        if added.is_some_and(|n| n < s.len()) {
            return Ok(
                Err("ERR The entries_added specified in XSETID is smaller than the target stream length".into()),
            );
        }
    }
    s.state.last = last;
    // An empty stream may be set back below entries it trimmed: new ids
    // will come after `last`, so the floor comes down to it (whatever this
    // batch still shows in between is deleted for good).
    if let Some(floor) = last.next().filter(|&f| f < s.state.floor) {
        let (from, to) = (s.entry_key(floor), s.entry_key(s.state.floor));
        let mut dead = Vec::new();
        a.scan_elements(Cf::Subkey, &from, &to, false, |k, _| {
            dead.push(k.to_vec());
            true
        })?;
        for k in dead {
            a.del_element(Cf::Subkey, k);
        }
        s.state.floor = floor;
    }
    if let Some(n) = added {
        s.state.added = n;
    }
    if !max_deleted.is_zero() {
        s.state.max_deleted = max_deleted;
    }
    Ok(Ok(()))
}

/// Write a group record.
pub fn put_group(a: &mut ApplyCtx, s: &Stream, g: &Group) {
    a.put_element(Cf::Subkey, s.group_key(&g.name), g.encode());
}

/// Remove a group with its consumers and pending entries.
pub fn destroy_group(a: &mut ApplyCtx, s: &Stream, g: &Group) -> Result<(), StorageError> {
    a.del_element(Cf::Subkey, s.group_key(&g.name));
    let gl = (g.name.len() as u32).to_be_bytes();
    // One by one: a range deletion would hide nothing from this batch's own
    // reads, and a group of the same name may be created in it again.
    for tag in [CONSUMER, PENDING, OWNED] {
        let lo = s.key(tag, &[&gl, &g.name]);
        let hi = prefix_end(&lo);
        drop_span(a, lo, hi, 0)?;
    }
    Ok(())
}

/// Write a consumer record.
pub fn put_consumer(a: &mut ApplyCtx, s: &Stream, group: &[u8], c: &Consumer) {
    let mut v = Vec::with_capacity(16);
    v.extend_from_slice(&c.seen.to_be_bytes());
    v.extend_from_slice(&c.pending.to_be_bytes());
    a.put_element(Cf::Subkey, s.consumer_key(group, &c.name), v);
}

/// Remove a consumer and its pending entries; how many it had.
pub fn delete_consumer(a: &mut ApplyCtx, s: &Stream, g: &mut Group, c: &Consumer) -> Result<u64, StorageError> {
    let owned = pending(a, s, &g.name, Sid::ZERO, Sid::MAX, usize::MAX, Some(&c.name), |_| true)?;
    for p in &owned {
        a.del_element(Cf::Subkey, s.pending_key(&g.name, p.id));
        a.del_element(Cf::Subkey, s.owned_key(&g.name, &c.name, p.id));
    }
    a.del_element(Cf::Subkey, s.consumer_key(&g.name, &c.name));
    g.pending -= (owned.len() as u64).min(g.pending);
    Ok(owned.len() as u64)
}

/// Give pending entry `p` (new, or `old` before) to its consumer. Keeps the
/// group's and the consumers' counts; the caller saves `g` and the consumers
/// it holds (`owner`, `p.consumer`'s record, is updated through `bump`).
pub fn put_pending(
    a: &mut ApplyCtx,
    s: &Stream,
    g: &mut Group,
    old: Option<&Pending>,
    p: &Pending,
    mut bump: impl FnMut(&mut ApplyCtx, &[u8], i64) -> Result<(), StorageError>,
) -> Result<(), StorageError> {
    match old {
        None => {
            g.pending += 1;
            bump(a, &p.consumer, 1)?;
            a.put_element(Cf::Subkey, s.owned_key(&g.name, &p.consumer, p.id), Bytes::new());
        }
        Some(o) if o.consumer != p.consumer => {
            a.del_element(Cf::Subkey, s.owned_key(&g.name, &o.consumer, p.id));
            bump(a, &o.consumer, -1)?;
            bump(a, &p.consumer, 1)?;
            a.put_element(Cf::Subkey, s.owned_key(&g.name, &p.consumer, p.id), Bytes::new());
        }
        Some(_) => {}
    }
    a.put_element(Cf::Subkey, s.pending_key(&g.name, p.id), p.encode());
    Ok(())
}

/// Remove pending entry `p`.
pub fn drop_pending(
    a: &mut ApplyCtx,
    s: &Stream,
    g: &mut Group,
    p: &Pending,
    mut bump: impl FnMut(&mut ApplyCtx, &[u8], i64) -> Result<(), StorageError>,
) -> Result<(), StorageError> {
    a.del_element(Cf::Subkey, s.pending_key(&g.name, p.id));
    a.del_element(Cf::Subkey, s.owned_key(&g.name, &p.consumer, p.id));
    g.pending = g.pending.saturating_sub(1);
    bump(a, &p.consumer, -1)
}

/// Adjust the pending count of consumer `name` by `by`.
pub fn bump_consumer(a: &mut ApplyCtx, s: &Stream, group: &[u8], name: &[u8], by: i64) -> Result<(), StorageError> {
    if let Some(mut c) = consumer(a, s, group, name)? {
        c.pending = c.pending.saturating_add_signed(by);
        put_consumer(a, s, group, &c);
    }
    Ok(())
}

/// A group delivered entry `id` (XREADGROUP `>`): its last id and read
/// counter move as Redis's do.
pub fn delivered(s: &Stream, g: &mut Group, id: Sid) {
    if id <= g.last {
        return;
    }
    if g.read.is_some() && !has_tombstones(s, id) {
        g.read = g.read.map(|r| r + 1);
    } else if s.state.added != 0 {
        g.read = estimate_read(s, id);
    }
    g.last = id;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_order_and_step() {
        let a = Sid::new(1, u64::MAX);
        assert_eq!(a.next(), Some(Sid::new(2, 0)));
        assert_eq!(Sid::new(2, 0).prev(), Some(a));
        assert_eq!(Sid::MAX.next(), None);
        assert_eq!(Sid::ZERO.prev(), None);
        assert!(a.bytes() < Sid::new(2, 0).bytes(), "byte order is id order");
        assert_eq!(Sid::from_bytes(&a.bytes()), Some(a));
        assert_eq!(&a.text()[..], b"1-18446744073709551615");
    }

    #[test]
    fn fields_round_trip() {
        let fv: Fields = vec![Bytes::from_static(b"f"), Bytes::new(), Bytes::from(vec![0u8; 300])];
        assert_eq!(decode_fields(&encode_fields(&fv)), fv);
    }
}
