//! The listpack "nodes" redis-server 7.0 would group a stream's entries into,
//! reduced to one small record per node, so that NeoKV (one RocksDB key per
//! entry) answers exactly as Redis does where Redis's answers depend on them:
//! `XADD`/`XTRIM` with `MAXLEN ~` / `MINID ~` (only whole nodes go, and `LIMIT`
//! counts node entries) and `XINFO STREAM`'s `radix-tree-keys` (the number of
//! nodes).
//!
//! A [`Node`] knows the byte size of the listpack Redis would hold (header, the
//! master entry, every entry with its flags, id deltas, fields or values only
//! when the fields equal the master's, its back-pointer count, each element's
//! integer or string encoding as `lpAppend` picks it, plus backlen bytes, and the
//! end byte), because `streamAppendItem` starts a new node on that size.
//!
//! What this module reproduces (`t_stream.c`, `listpack.c` of 7.0):
//! * [`Node::fits`]: `streamAppendItem`'s test for appending to the tail node:
//!   the tail listpack's bytes plus the raw lengths of the new entry's fields and
//!   values must stay below `stream-node-max-bytes` (0, or more than 1 GiB, means
//!   1 GiB), and, unless `stream-node-max-entries` is 0, the tail's live plus
//!   deleted entries must be below it.
//! * [`Node::push`] / [`Node::first`]: the bytes the entry adds (or the new
//!   listpack with its master entry), and the master count rewrite.
//! * [`Node::delete`]: entries flagged deleted (XDEL, exact trimming inside a
//!   node): the master's live and deleted counts are rewritten, and their encoded
//!   sizes may change (127 -> 128 takes one more byte).
//! * [`plan_trim`]: `streamTrim` with `approx` and `limit`, over the caller's
//!   node records from the head.
//!
//! What the caller does:
//! * XADD: refuse what Redis refuses before touching nodes (ids not above the
//!   last id; fields plus values over 2^30 bytes, "ERR Elements are too large to
//!   be stored"). Then if there is no node, or the tail node does not
//!   [`Node::fits`] the entry under the current [`Limits`], store a
//!   [`Node::first`]; else [`Node::push`] onto the tail. Then trim, if asked.
//! * Which node holds an entry: the last node whose `master` is <= the id (a
//!   node's entries are `master..=last`, deleted ones included).
//! * XDEL of an existing entry: [`Node::delete`]`(1)`, and if that leaves the
//!   node no live entry, drop the record: Redis frees the whole listpack then
//!   (`streamIteratorRemoveEntry`), even the tail's, deleted entries and all.
//! * Trimming (XTRIM, XADD's MAXLEN/MINID): the LIMIT is `n` for `~ LIMIT n`
//!   (0 = unlimited), [`Limits::default_trim_limit`] (100 x max-entries, so 0 =
//!   unlimited when max-entries is 0) for `~` without LIMIT, and 0 for exact
//!   trimming (LIMIT without `~` is a syntax error). Feed [`plan_trim`] the
//!   stream length and the node records from the head, then apply the
//!   [`TrimPlan`]: drop the first `remove` nodes with all their entries, then
//!   delete the first `mark` live entries of the next node and call
//!   [`Node::delete`]`(mark)` on it. Keep that node even when it is left with
//!   no live entries (only exact MINID can do that: its last entry was already
//!   deleted and is >= the MINID): Redis keeps such a listpack, counts it in
//!   `radix-tree-keys`, appends to it if it is the tail, and a later trim
//!   removes it (deleting 0 entries). `TrimPlan::deleted` is XTRIM's reply.
//! * XINFO STREAM `radix-tree-keys` is the number of node records.
//!
//! Not modelled: consumer groups (they do not touch listpacks); Redis setting
//! the LIMIT to 0 for trims it replays from its master or AOF; and a
//! redis-server 7.0.15 use-after-free: after `stream-node-max-bytes` is lowered
//! on a live stream, an XADD that starts a new node can leave the radix tree
//! pointing at a freed listpack (the old tail is shrunk and moved, the new node
//! grows into its old address), and later reads crash or see garbage (valkey
//! issue #4705, fix in valkey PR #4711). NeoKV just follows the model there.

use std::borrow::Borrow;

use crate::protocol::cursor::parse_i64;
use crate::protocol::rdb_value;

/// A stream entry id.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Sid {
    pub ms: u64,
    pub seq: u64,
}

/// One node's record: what NeoKV keeps of the listpack Redis would have.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node's master id (the first entry ever added to it), Redis's rax key.
    pub master: Sid,
    /// The master entry's field names (those of the first entry).
    pub fields: Vec<Vec<u8>>,
    /// Entries not flagged deleted (the master entry's "count").
    pub live: u64,
    /// Entries flagged deleted (the master entry's "deleted").
    pub deleted: u64,
    /// The id of the last entry added (deleted or not): `lpGetEdgeStreamID(lp,0,..)`.
    pub last: Sid,
    /// Bytes of the entries after the master entry (without the end byte).
    pub body: u64,
}

/// The two configs that shape nodes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Limits {
    /// `stream-node-max-bytes` (default 4096; 0 = no limit, i.e. 1 GiB).
    pub max_bytes: u64,
    /// `stream-node-max-entries` (default 100; 0 = no limit).
    pub max_entries: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_bytes: 4096, max_entries: 100 }
    }
}

impl Limits {
    /// The LIMIT Redis uses for `MAXLEN ~` / `MINID ~` without an explicit LIMIT:
    /// 100 x `stream-node-max-entries` (0, i.e. no limit, when that is 0).
    pub fn default_trim_limit(&self) -> u64 {
        self.max_entries.saturating_mul(100)
    }
}

/// `STREAM_LISTPACK_MAX_SIZE`: the byte cap used when `stream-node-max-bytes` is
/// 0 or larger.
const LISTPACK_MAX: u64 = 1 << 30;
/// Listpack header (32-bit total bytes, 16-bit element count) plus end byte.
const LP_OVERHEAD: u64 = 6 + 1;
/// Entry flags (`STREAM_ITEM_FLAG_*`).
const FLAG_SAMEFIELDS: i64 = 2;

/// Bytes of the backlen that follows an element whose encoding takes `l` bytes.
fn backlen_len(l: u64) -> u64 {
    rdb_value::backlen_size(l) as u64
}

/// Encoded bytes of an integer element (7-bit uint, 13/16/24/32/64-bit int).
fn int_enc_len(v: i64) -> u64 {
    rdb_value::int_size(v) as u64
}

/// Listpack bytes of an integer element, backlen included.
fn int_elem(v: i64) -> u64 {
    let l = int_enc_len(v);
    l + backlen_len(l)
}

/// `lpStringToInt64`: Redis's `string2ll` rules ("0", or an optional '-' then
/// a digit 1-9 and more digits, within i64). Anything else stays a string.
fn lp_string_to_i64(s: &[u8]) -> Option<i64> {
    parse_i64(s)
}

/// Listpack bytes of a string element as `lpAppend` stores it (as an integer
/// when it reads as one), backlen included.
fn str_elem(s: &[u8]) -> u64 {
    if let Some(v) = lp_string_to_i64(s) {
        return int_elem(v);
    }
    let n = s.len() as u64;
    let l = match n {
        0..=63 => 1 + n,
        64..=4095 => 2 + n,
        _ => 5 + n,
    };
    l + backlen_len(l)
}

/// Bytes one entry takes in a node whose master id is `master`.
fn entry_len(master: Sid, same_fields: bool, id: Sid, fv: &[(&[u8], &[u8])]) -> u64 {
    let n = fv.len() as u64;
    // The flags (0 or SAMEFIELDS, later | DELETED) are all one-byte integers.
    let mut b = int_elem(FLAG_SAMEFIELDS);
    b += int_elem(id.ms.wrapping_sub(master.ms) as i64);
    b += int_elem(id.seq.wrapping_sub(master.seq) as i64);
    let mut lp_count = n + 3;
    if !same_fields {
        b += int_elem(n as i64);
        lp_count += n + 1;
    }
    for (f, v) in fv {
        if !same_fields {
            b += str_elem(f);
        }
        b += str_elem(v);
    }
    b + int_elem(lp_count as i64)
}

impl Node {
    /// The node Redis creates for this entry (its master entry takes the fields).
    pub fn first(id: Sid, fv: &[(&[u8], &[u8])]) -> Node {
        Node {
            master: id,
            fields: fv.iter().map(|(f, _)| f.to_vec()).collect(),
            live: 1,
            deleted: 0,
            last: id,
            body: entry_len(id, true, id, fv),
        }
    }

    /// Whether Redis appends this entry to this (tail) node; false: it starts a
    /// new node with [`Node::first`].
    pub fn fits(&self, fv: &[(&[u8], &[u8])], lim: &Limits) -> bool {
        let cap = if lim.max_bytes == 0 || lim.max_bytes > LISTPACK_MAX { LISTPACK_MAX } else { lim.max_bytes };
        let raw: u64 = fv.iter().map(|(f, v)| (f.len() + v.len()) as u64).sum();
        if self.lp_bytes().saturating_add(raw) >= cap {
            return false;
        }
        lim.max_entries == 0 || self.live.saturating_add(self.deleted) < lim.max_entries
    }

    /// Appends an entry (its id above `last`) to this node.
    pub fn push(&mut self, id: Sid, fv: &[(&[u8], &[u8])]) {
        let same = fv.len() == self.fields.len() && fv.iter().zip(&self.fields).all(|((f, _), m)| *f == &m[..]);
        self.body = self.body.saturating_add(entry_len(self.master, same, id, fv));
        self.live = self.live.saturating_add(1);
        self.last = id;
    }

    /// Flags `n` live entries deleted. A node that XDEL leaves with no live
    /// entry must be dropped (see the module doc); one that exact trimming
    /// leaves so must be kept.
    pub fn delete(&mut self, n: u64) {
        debug_assert!(n <= self.live, "deleting {n} of {} live entries", self.live);
        let n = n.min(self.live);
        self.live -= n;
        self.deleted = self.deleted.saturating_add(n);
    }

    /// Bytes of the master entry: count, deleted, num-fields, the field names, 0.
    fn master_len(&self) -> u64 {
        int_elem(self.live as i64)
            + int_elem(self.deleted as i64)
            + int_elem(self.fields.len() as i64)
            + self.fields.iter().map(|f| str_elem(f)).sum::<u64>()
            + int_elem(0)
    }

    /// The listpack's total bytes (`lpBytes`) as Redis has it.
    pub fn lp_bytes(&self) -> u64 {
        (LP_OVERHEAD + self.master_len()).saturating_add(self.body)
    }

    /// The record's bytes for storage (decoded by [`Node::decode`]).
    pub fn encode(&self) -> Vec<u8> {
        let flen: usize = self.fields.iter().map(|f| 4 + f.len()).sum();
        let mut b = Vec::with_capacity(1 + 7 * 8 + 4 + flen);
        b.push(ENCODING_V1);
        for v in [self.master.ms, self.master.seq, self.last.ms, self.last.seq, self.live, self.deleted, self.body] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&(self.fields.len() as u32).to_be_bytes());
        for f in &self.fields {
            b.extend_from_slice(&(f.len() as u32).to_be_bytes());
            b.extend_from_slice(f);
        }
        b
    }

    /// Reads [`Node::encode`]'s bytes; `None` for anything else (never panics).
    pub fn decode(b: &[u8]) -> Option<Node> {
        let (&version, mut rest) = b.split_first()?;
        if version != ENCODING_V1 {
            return None;
        }
        let mut take = |n: usize| -> Option<&[u8]> {
            if rest.len() < n {
                return None;
            }
            let (head, tail) = rest.split_at(n);
            rest = tail;
            Some(head)
        };
        let mut u = [0u64; 7];
        for v in &mut u {
            *v = u64::from_be_bytes(take(8)?.try_into().ok()?);
        }
        let nf = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
        let mut fields = Vec::with_capacity(nf.min(1024));
        for _ in 0..nf {
            let len = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
            fields.push(take(len)?.to_vec());
        }
        if !rest.is_empty() {
            return None;
        }
        Some(Node {
            master: Sid { ms: u[0], seq: u[1] },
            last: Sid { ms: u[2], seq: u[3] },
            live: u[4],
            deleted: u[5],
            body: u[6],
            fields,
        })
    }
}

const ENCODING_V1: u8 = 1;

/// A trimming strategy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Trim {
    /// `MAXLEN n`: keep at most n entries.
    MaxLen(u64),
    /// `MINID id`: drop entries below id.
    MinId(Sid),
}

/// What `streamTrim` does: drop the first `remove` nodes whole, then flag the
/// first `mark` live entries of the node after them deleted (0: none).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TrimPlan {
    /// Whole nodes removed from the head, with all their entries.
    pub remove: usize,
    /// Live entries marked deleted, from the first, in node number `remove`.
    pub mark: u64,
    /// Entries deleted in all (XTRIM's reply): the removed nodes' live entries
    /// plus `mark`.
    pub deleted: u64,
}

/// `streamTrim`: given the stream's length and its node records from the head
/// (pulled lazily, one at a time, until the plan is decided), with `approx` (`~`)
/// and `limit` (0 = none; see the module doc for the value Redis uses).
///
/// `count_below(node, minid)` is called at most once, for exact MINID trimming
/// inside a node: it must return how many live entries of that node have ids
/// below `minid` (they are the node's first live entries).
pub fn plan_trim<I, F>(length: u64, trim: &Trim, approx: bool, limit: u64, nodes: I, count_below: F) -> TrimPlan
where
    I: IntoIterator,
    I::Item: Borrow<Node>,
    F: FnOnce(&Node, Sid) -> u64,
{
    let mut plan = TrimPlan::default();
    let mut length = length;
    for node in nodes {
        let node = node.borrow();
        if let Trim::MaxLen(max) = *trim {
            if length <= max {
                break;
            }
        }
        let entries = node.live;
        if limit != 0 && plan.deleted + entries > limit {
            break;
        }
        let remove = match *trim {
            Trim::MaxLen(max) => length.saturating_sub(entries) >= max,
            Trim::MinId(min) => node.last < min,
        };
        if remove {
            plan.remove += 1;
            plan.deleted += entries;
            length = length.saturating_sub(entries);
            continue;
        }
        if !approx {
            plan.mark = match *trim {
                Trim::MaxLen(max) => length - max,
                Trim::MinId(min) => count_below(node, min),
            }
            .min(entries);
            plan.deleted += plan.mark;
        }
        break;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn sid(ms: u64, seq: u64) -> Sid {
        Sid { ms, seq }
    }

    fn fv<'a>(p: &'a [(&'a str, &'a str)]) -> Vec<(&'a [u8], &'a [u8])> {
        p.iter().map(|(f, v)| (f.as_bytes(), v.as_bytes())).collect()
    }

    #[test]
    fn string_to_int_rules() {
        for (s, v) in [
            ("0", Some(0)),
            ("12", Some(12)),
            ("-5", Some(-5)),
            ("007", None),
            ("-0", None),
            ("", None),
            ("-", None),
            ("+1", None),
            (" 1", None),
            ("1e3", None),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("00000000000000000000001", None),
        ] {
            assert_eq!(lp_string_to_i64(s.as_bytes()), v, "{s:?}");
        }
    }

    #[test]
    fn element_sizes() {
        assert_eq!(str_elem(b""), 2);
        assert_eq!(str_elem(b"127"), 2);
        assert_eq!(str_elem(b"128"), 3);
        assert_eq!(str_elem(b"-4096"), 3);
        assert_eq!(str_elem(b"-4097"), 4);
        assert_eq!(str_elem(b"2147483648"), 10);
        assert_eq!(str_elem(&[b'x'; 63]), 65);
        assert_eq!(str_elem(&[b'x'; 64]), 67);
        // 2+126 = 128 bytes of encoding take a 2-byte backlen.
        assert_eq!(str_elem(&[b'x'; 125]), 128);
        assert_eq!(str_elem(&[b'x'; 126]), 130);
        assert_eq!(str_elem(&[b'x'; 4096]), 4101 + 2);
    }

    /// redis-server 7.0.15 (--rdbcompression no): `XADD k 1-1 f v`,
    /// `XADD k 4294967297-1 f v`, `XTRIM k MINID 2-0` answered 1, and
    /// `DEBUG OBJECT k` serializedlength:92, i.e. a 48-byte listpack.
    #[test]
    fn pinned_lp_bytes() {
        let e = fv(&[("f", "v")]);
        let mut n = Node::first(sid(1, 1), &e);
        n.push(sid(4294967297, 1), &e);
        let plan = plan_trim(2, &Trim::MinId(sid(2, 0)), false, 0, [&n], |_, _| 1);
        assert_eq!(plan, TrimPlan { remove: 0, mark: 1, deleted: 1 });
        n.delete(plan.mark);
        assert_eq!(n.lp_bytes(), 48);
    }

    #[test]
    fn counts_change_size() {
        let e = fv(&[("f", "v")]);
        let mut n = Node::first(sid(1, 0), &e);
        for i in 2..=127 {
            n.push(sid(i, 0), &e);
        }
        let b127 = n.lp_bytes();
        n.push(sid(128, 0), &e);
        // The new entry (11 bytes) plus one byte more for count 128.
        assert_eq!(n.lp_bytes(), b127 + 11 + 1);
        n.delete(1);
        assert_eq!(n.lp_bytes(), b127 + 11);
    }

    #[test]
    fn encode_roundtrip_and_garbage() {
        let e = fv(&[("name", "x"), ("12", "-5"), ("", "")]);
        let mut n = Node::first(sid(5, 9), &e);
        n.push(sid(6, 0), &e);
        n.delete(1);
        let b = n.encode();
        assert_eq!(Node::decode(&b), Some(n));
        for i in 0..b.len() {
            assert_eq!(Node::decode(&b[..i]), None);
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(Node::decode(&longer), None);
        assert_eq!(Node::decode(&[1, 0xff, 0xff]), None);
        // Any byte changed: decodes to something or nothing, and what decodes
        // can be sized and tested without panicking.
        for i in 0..b.len() {
            for x in [0u8, 1, 0x7f, 0xff] {
                let mut m = b.clone();
                m[i] = x;
                if let Some(n) = Node::decode(&m) {
                    let _ = (n.lp_bytes(), n.fits(&e, &Limits::default()));
                }
            }
        }
        let mut huge = vec![1u8; 1 + 56];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(Node::decode(&huge), None);
    }

    /// Appends as XADD does (the caller's part), returning the node count.
    fn add(nodes: &mut Vec<Node>, id: Sid, e: &[(&[u8], &[u8])], lim: &Limits) -> usize {
        match nodes.last_mut() {
            Some(t) if t.fits(e, lim) => t.push(id, e),
            _ => nodes.push(Node::first(id, e)),
        }
        nodes.len()
    }

    /// Applies a plan as the caller must (`mark` only touches the counts here).
    fn apply(nodes: &mut Vec<Node>, length: &mut u64, plan: TrimPlan) -> u64 {
        nodes.drain(..plan.remove);
        if plan.mark > 0 {
            nodes[0].delete(plan.mark);
        }
        *length -= plan.deleted;
        plan.deleted
    }

    /// redis-server 7.0.15, `XADD a 1-1 f v`, `XADD a 1-2 f v`: with
    /// stream-node-max-bytes 31, radix-tree-keys 2; with 32, 1 (29 + 2 >= 31).
    #[test]
    fn pinned_byte_cap_is_inclusive() {
        let e = fv(&[("f", "v")]);
        for (max_bytes, keys) in [(31, 2), (32, 1)] {
            let lim = Limits { max_bytes, max_entries: 100 };
            let mut nodes = Vec::new();
            add(&mut nodes, sid(1, 1), &e, &lim);
            assert_eq!(nodes[0].lp_bytes(), 29);
            assert_eq!(add(&mut nodes, sid(1, 2), &e, &lim), keys);
        }
    }

    /// redis-server 7.0.15, defaults: `XADD g i-1 f <100 x 'a'>` for i = 1..:
    /// radix-tree-keys turned 2 at the 37th entry (byte cap, not the count).
    #[test]
    fn pinned_byte_split() {
        let v = vec![b'a'; 100];
        let e: Vec<(&[u8], &[u8])> = vec![(b"f", &v)];
        let mut nodes = Vec::new();
        for i in 1..=37 {
            let n = add(&mut nodes, sid(i, 1), &e, &Limits::default());
            assert_eq!(n, if i < 37 { 1 } else { 2 }, "entry {i}");
        }
    }

    /// redis-server 7.0.15, defaults: 250 x `XADD b i-1 f v`: radix-tree-keys 3;
    /// `XTRIM b MAXLEN ~ 120` -> 100, then `XTRIM b MAXLEN ~ 100` -> 0 (XLEN 150).
    /// With stream-node-max-entries 10 and 50 entries (5 nodes):
    /// `XTRIM e MAXLEN ~ 0 LIMIT 25` -> 20, then `XTRIM e MAXLEN ~ 0` -> 30.
    #[test]
    fn pinned_approx_and_limit() {
        let e = fv(&[("f", "v")]);
        let lim = Limits::default();
        let mut nodes = Vec::new();
        for i in 1..=250 {
            add(&mut nodes, sid(i, 1), &e, &lim);
        }
        assert_eq!(nodes.len(), 3);
        let mut len = 250;
        let limit = lim.default_trim_limit();
        let p = plan_trim(len, &Trim::MaxLen(120), true, limit, &nodes, |_, _| unreachable!());
        assert_eq!(apply(&mut nodes, &mut len, p), 100);
        let p = plan_trim(len, &Trim::MaxLen(100), true, limit, &nodes, |_, _| unreachable!());
        assert_eq!(apply(&mut nodes, &mut len, p), 0);
        assert_eq!(len, 150);

        let lim = Limits { max_bytes: 4096, max_entries: 10 };
        let mut nodes = Vec::new();
        for i in 1..=50 {
            add(&mut nodes, sid(i, 1), &e, &lim);
        }
        assert_eq!(nodes.len(), 5);
        let mut len = 50;
        let p = plan_trim(len, &Trim::MaxLen(0), true, 25, &nodes, |_, _| unreachable!());
        assert_eq!(apply(&mut nodes, &mut len, p), 20);
        let p = plan_trim(len, &Trim::MaxLen(0), true, lim.default_trim_limit(), &nodes, |_, _| unreachable!());
        assert_eq!(apply(&mut nodes, &mut len, p), 30);
        assert!(nodes.is_empty());
    }

    /// redis-server 7.0.15: `XADD c 1-1 f v` (and 1-2, 1-3), `XDEL c 1-3`,
    /// `XTRIM c MINID 1-3` -> 2 with XLEN 0 and radix-tree-keys still 1; then
    /// `XADD c 1-4 f v` keeps radix-tree-keys 1 (appended to that node), and
    /// `XTRIM c MAXLEN 0` -> 1 with radix-tree-keys 0.
    #[test]
    fn pinned_node_left_without_live_entries() {
        let e = fv(&[("f", "v")]);
        let lim = Limits::default();
        let mut nodes = Vec::new();
        for s in 1..=3 {
            add(&mut nodes, sid(1, s), &e, &lim);
        }
        nodes[0].delete(1); // XDEL 1-3: 2 live entries remain, the node stays.
        let mut len = 2;
        let p = plan_trim(len, &Trim::MinId(sid(1, 3)), false, 0, &nodes, |n, min| {
            assert_eq!((n.master, min), (sid(1, 1), sid(1, 3)));
            2
        });
        assert_eq!(p, TrimPlan { remove: 0, mark: 2, deleted: 2 });
        apply(&mut nodes, &mut len, p);
        assert_eq!((len, nodes.len(), nodes[0].live, nodes[0].deleted), (0, 1, 0, 3));
        assert_eq!(add(&mut nodes, sid(1, 4), &e, &lim), 1);
        len += 1;
        let p = plan_trim(len, &Trim::MaxLen(0), false, 0, &nodes, |_, _| unreachable!());
        assert_eq!(p, TrimPlan { remove: 1, mark: 0, deleted: 1 });
    }

    /// Differential check against redis-server 7.0 (ignored by default):
    /// `cargo test --lib stream_node -- --ignored --nocapture` starts
    /// `redis-server` from PATH on a free loopback port (killed at the end), or
    /// uses STREAM_NODE_REDIS=host:port (that server needs
    /// `--enable-debug-command local` for the byte check). More env:
    /// STREAM_NODE_SEEDS (200), STREAM_NODE_STEPS (400), STREAM_NODE_SEED0 (1),
    /// STREAM_NODE_TRACE (print every command). Each step compares XTRIM's and
    /// XDEL's replies with the model, then XLEN, XINFO STREAM's radix-tree-keys,
    /// first entry and last id, and DEBUG OBJECT's serializedlength (with
    /// rdbcompression off: the nodes' listpack bytes plus framing, so it checks
    /// `lp_bytes` of every node).
    #[test]
    #[ignore]
    fn differential_against_redis() {
        diff::run();
    }
}

#[cfg(test)]
mod diff {
    use super::tests::sid;
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;

    #[derive(Debug)]
    enum V {
        Int(i64),
        Bulk(Option<Vec<u8>>),
        Arr(Option<Vec<V>>),
        Status(String),
        Err(String),
    }

    struct Conn {
        r: BufReader<TcpStream>,
        w: TcpStream,
        trace: bool,
    }

    impl Conn {
        fn cmd(&mut self, args: &[Vec<u8>]) -> V {
            let mut b = format!("*{}\r\n", args.len()).into_bytes();
            for a in args {
                b.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                b.extend_from_slice(a);
                b.extend_from_slice(b"\r\n");
            }
            if self.trace {
                let shown: Vec<String> = args.iter().map(|a| format!("{:?}", String::from_utf8_lossy(a))).collect();
                eprintln!("> {}", shown.join(" "));
            }
            self.w.write_all(&b).unwrap();
            self.read()
        }

        fn read(&mut self) -> V {
            let mut line = Vec::new();
            self.r.read_until(b'\n', &mut line).unwrap();
            assert!(line.len() >= 3, "the server closed the connection");
            let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
            match line[0] {
                b'+' => V::Status(body),
                b'-' => V::Err(body),
                b':' => V::Int(body.parse().unwrap()),
                b'$' => {
                    let n: i64 = body.parse().unwrap();
                    if n < 0 {
                        return V::Bulk(None);
                    }
                    let mut d = vec![0; n as usize + 2];
                    self.r.read_exact(&mut d).unwrap();
                    d.truncate(n as usize);
                    V::Bulk(Some(d))
                }
                b'*' => {
                    let n: i64 = body.parse().unwrap();
                    if n < 0 {
                        return V::Arr(None);
                    }
                    V::Arr(Some((0..n).map(|_| self.read()).collect()))
                }
                c => panic!("bad reply byte {c}"),
            }
        }

        fn ok(&mut self, args: &[&str]) {
            let a: Vec<Vec<u8>> = args.iter().map(|s| s.as_bytes().to_vec()).collect();
            if let V::Err(e) = self.cmd(&a) {
                panic!("{args:?}: {e}");
            }
        }
    }

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
            &xs[self.below(xs.len() as u64) as usize]
        }
    }

    const INTS: &[&str] = &[
        "12",
        "-5",
        "007",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "-9223372036854775809",
        "1e3",
        "0",
        "-0",
        "127",
        "128",
        "-1",
        "4095",
        "4096",
        "-4096",
        "-4097",
        "32767",
        "32768",
        "-32768",
        "-32769",
        "8388607",
        "8388608",
        "-8388608",
        "-8388609",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "+1",
        " 1",
        "1 ",
        "00",
        "-",
        "18446744073709551615",
        "99999999999999999999",
    ];

    fn letters(rng: &mut Rng, n: u64) -> Vec<u8> {
        (0..n).map(|_| b'a' + rng.below(26) as u8).collect()
    }

    fn value(rng: &mut Rng, big: bool) -> Vec<u8> {
        match rng.below(10) {
            0..=2 => rng.pick(INTS).as_bytes().to_vec(),
            3 => {
                let mut v = Vec::new();
                if rng.below(3) == 0 {
                    v.push(b'-');
                }
                for _ in 0..1 + rng.below(22) {
                    v.push(b'0' + rng.below(10) as u8);
                }
                v
            }
            _ => {
                let n = if big && rng.below(30) == 0 { 4000 + rng.below(1200) } else { rng.below(301) };
                letters(rng, n)
            }
        }
    }

    fn field(rng: &mut Rng, short: bool) -> Vec<u8> {
        if short {
            let n = rng.below(3);
            return letters(rng, n);
        }
        match rng.below(8) {
            0..=3 => rng.pick(&["f", "name", "a", "b", "12", "-5", "0", ""]).as_bytes().to_vec(),
            4 => rng.pick(INTS).as_bytes().to_vec(),
            5 => {
                let n = rng.below(71);
                letters(rng, n)
            }
            6 => vec![b'x'; 63 + rng.below(2) as usize],
            _ => letters(rng, 1),
        }
    }

    struct SimNode {
        node: Node,
        ids: Vec<(Sid, bool)>,
    }

    #[derive(Default)]
    struct Stats {
        steps: u64,
        xadd: u64,
        xadd_trim: u64,
        xdel: u64,
        xtrim: u64,
        approx: u64,
        trimmed: u64,
        removed_nodes: u64,
        marks: u64,
        zero_live_nodes: u64,
        split_bytes: u64,
        split_entries: u64,
        byte_checks: u64,
        max_nodes: usize,
        max_node_entries: u64,
        max_length: u64,
        limit_bound: u64,
    }

    struct Sim {
        nodes: Vec<SimNode>,
        length: u64,
        last: Sid,
        lim: Limits,
    }

    impl Sim {
        fn xadd(&mut self, id: Sid, fv: &[(&[u8], &[u8])], st: &mut Stats) {
            let lim = self.lim;
            match self.nodes.last_mut() {
                Some(t) if t.node.fits(fv, &lim) => {
                    t.node.push(id, fv);
                    t.ids.push((id, true));
                }
                tail => {
                    if let Some(t) = tail {
                        if lim.max_entries != 0 && t.node.live + t.node.deleted >= lim.max_entries {
                            st.split_entries += 1;
                        } else {
                            st.split_bytes += 1;
                        }
                    }
                    self.nodes.push(SimNode { node: Node::first(id, fv), ids: vec![(id, true)] });
                }
            }
            self.length += 1;
            self.last = id;
        }

        fn xdel(&mut self, id: Sid) -> bool {
            let Some(i) = self.nodes.iter().rposition(|n| n.node.master <= id) else { return false };
            let n = &mut self.nodes[i];
            let Some(p) = n.ids.iter().position(|&(x, live)| x == id && live) else { return false };
            if n.node.live == 1 {
                self.nodes.remove(i);
            } else {
                n.ids[p].1 = false;
                n.node.delete(1);
            }
            self.length -= 1;
            true
        }

        fn trim(&mut self, t: &Trim, approx: bool, limit: u64, st: &mut Stats) -> u64 {
            let nodes = &self.nodes;
            let plan = plan_trim(self.length, t, approx, limit, nodes.iter().map(|n| &n.node), |node, min| {
                let sn = nodes.iter().find(|s| s.node.master == node.master).unwrap();
                sn.ids.iter().filter(|&&(x, live)| live && x < min).count() as u64
            });
            if limit != 0 {
                let unlimited = plan_trim(self.length, t, approx, 0, nodes.iter().map(|n| &n.node), |_, _| 0);
                if unlimited.remove != plan.remove {
                    st.limit_bound += 1;
                }
            }
            let mut deleted = 0;
            for n in self.nodes.drain(..plan.remove) {
                deleted += n.node.live;
            }
            if plan.mark > 0 {
                let n = &mut self.nodes[0];
                let mut k = plan.mark;
                for e in n.ids.iter_mut() {
                    if k > 0 && e.1 {
                        e.1 = false;
                        k -= 1;
                    }
                }
                assert_eq!(k, 0);
                n.node.delete(plan.mark);
                deleted += plan.mark;
                st.marks += 1;
                if n.node.live == 0 {
                    st.zero_live_nodes += 1;
                }
            }
            assert_eq!(deleted, plan.deleted);
            self.length -= deleted;
            st.removed_nodes += plan.remove as u64;
            st.trimmed += deleted;
            deleted
        }

        fn first_live(&self) -> Option<Sid> {
            self.nodes.iter().flat_map(|n| n.ids.iter()).find(|e| e.1).map(|e| e.0)
        }

        fn all_ids(&self) -> Vec<Sid> {
            self.nodes.iter().flat_map(|n| n.ids.iter().map(|e| e.0)).collect()
        }
    }

    fn sid_str(s: Sid) -> String {
        format!("{}-{}", s.ms, s.seq)
    }

    fn parse_sid(b: &[u8]) -> Sid {
        let s = std::str::from_utf8(b).unwrap();
        let (a, b) = s.split_once('-').unwrap();
        sid(a.parse().unwrap(), b.parse().unwrap())
    }

    fn rdb_len(n: u64) -> u64 {
        match n {
            0..=63 => 1,
            64..=16383 => 2,
            16384..=0xFFFF_FFFF => 5,
            _ => 9,
        }
    }

    fn next_id(rng: &mut Rng, last: Sid) -> Option<Sid> {
        let r = rng.below(100);
        Some(match r {
            0..=11 => return None,
            12..=49 => sid(last.ms, last.seq + 1 + rng.below(3)),
            50..=79 => sid(last.ms + 1 + rng.below(5), if rng.below(3) == 0 { rng.below(70) } else { rng.below(5) }),
            80..=89 => sid(last.ms + 1 + rng.below(100_000), rng.below(20_000)),
            90..=95 => {
                sid(last.ms + (1 << (7 + rng.below(34))) + rng.below(1000), (1 << rng.below(41)) + rng.below(10))
            }
            _ => sid(last.ms, last.seq + (1 << rng.below(40))),
        })
    }

    /// Trimming arguments: (words, strategy, approx, effective limit).
    fn trim_args(rng: &mut Rng, sim: &Sim) -> (Vec<Vec<u8>>, Trim, bool, u64) {
        let mut w: Vec<Vec<u8>> = Vec::new();
        let maxlen = rng.below(100) < 55;
        w.push(if maxlen { b"MAXLEN".to_vec() } else { b"MINID".to_vec() });
        let mode = rng.below(3);
        let approx = mode == 2;
        match mode {
            1 => w.push(b"=".to_vec()),
            2 => w.push(b"~".to_vec()),
            _ => {}
        }
        let trim = if maxlen {
            let n = match rng.below(4) {
                0 => rng.below(sim.length + 3),
                1 => sim.length.saturating_sub(rng.below(400)),
                _ => sim.length.saturating_sub(rng.below(60)),
            };
            w.push(n.to_string().into_bytes());
            Trim::MaxLen(n)
        } else {
            let ids = sim.all_ids();
            let id = match rng.below(20) {
                0..=2 => sid(0, rng.below(2)),
                3..=4 => sid(sim.last.ms, sim.last.seq.saturating_add(rng.below(2))),
                _ if ids.is_empty() => sim.last,
                _ => {
                    let id = *rng.pick(&ids);
                    match rng.below(4) {
                        0 => sid(id.ms, id.seq.saturating_add(1)),
                        1 => sid(id.ms, id.seq.saturating_sub(1)),
                        _ => id,
                    }
                }
            };
            w.push(sid_str(id).into_bytes());
            Trim::MinId(id)
        };
        let mut limit = if approx { sim.lim.default_trim_limit() } else { 0 };
        if approx && rng.below(2) == 0 {
            let any = rng.below(300);
            limit = *rng.pick(&[0, 1, 5, 50, 100, 150, 1000, any]);
            w.push(b"LIMIT".to_vec());
            w.push(limit.to_string().into_bytes());
        }
        (w, trim, approx, limit)
    }

    fn info(c: &mut Conn, key: &[u8]) -> Vec<(String, V)> {
        match c.cmd(&[b"XINFO".to_vec(), b"STREAM".to_vec(), key.to_vec()]) {
            V::Arr(Some(items)) => {
                let mut out = Vec::new();
                let mut it = items.into_iter();
                while let (Some(V::Bulk(Some(k))), Some(v)) = (it.next(), it.next()) {
                    out.push((String::from_utf8(k).unwrap(), v));
                }
                out
            }
            v => panic!("XINFO: {v:?}"),
        }
    }

    fn get<'a>(info: &'a [(String, V)], k: &str) -> &'a V {
        &info.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1
    }

    fn int(v: &V) -> u64 {
        match v {
            V::Int(i) => *i as u64,
            v => panic!("not an int: {v:?}"),
        }
    }

    fn bulk_sid(v: &V) -> Sid {
        match v {
            V::Bulk(Some(b)) => parse_sid(b),
            v => panic!("not an id: {v:?}"),
        }
    }

    const MAX_BYTES: &[u64] = &[4096, 4096, 4096, 0, 1, 60, 120, 300, 700, 1500, 8192, 65536];
    const MAX_ENTRIES: &[u64] = &[100, 100, 100, 0, 1, 2, 3, 7, 20, 50, 500];

    fn set_limits(c: &mut Conn, lim: &Limits) {
        c.ok(&["CONFIG", "SET", "stream-node-max-bytes", &lim.max_bytes.to_string()]);
        c.ok(&["CONFIG", "SET", "stream-node-max-entries", &lim.max_entries.to_string()]);
    }

    fn env(name: &str, default: u64) -> u64 {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    }

    /// A redis-server child on a free loopback port, killed on drop.
    struct Child(std::process::Child);

    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn spawn_redis() -> (Child, String) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(std::env::temp_dir())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server (7.0) must be on PATH");
        let child = Child(child);
        let addr = format!("127.0.0.1:{port}");
        for _ in 0..100 {
            if TcpStream::connect(&addr).is_ok() {
                return (child, addr);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("redis-server did not listen on {addr}");
    }

    pub(super) fn run() {
        let (_child, addr) = match std::env::var("STREAM_NODE_REDIS") {
            Ok(addr) => (None, addr),
            Err(_) => {
                let (child, addr) = spawn_redis();
                (Some(child), addr)
            }
        };
        let w = TcpStream::connect(&addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        let trace = std::env::var_os("STREAM_NODE_TRACE").is_some();
        let mut c = Conn { r: BufReader::new(w.try_clone().unwrap()), w, trace };
        c.ok(&["CONFIG", "SET", "rdbcompression", "no"]);
        let seeds = env("STREAM_NODE_SEEDS", 200);
        let steps = env("STREAM_NODE_STEPS", 400);
        let seed0 = env("STREAM_NODE_SEED0", 1);
        let key = b"stream_node:diff".to_vec();
        let mut st = Stats::default();
        let mut debug = true;
        for seed in seed0..seed0 + seeds {
            if trace {
                eprintln!("seed {seed}");
            }
            let mut rng = Rng(seed.wrapping_mul(0x2545F4914F6CDD1D));
            let mut lim = Limits { max_bytes: *rng.pick(MAX_BYTES), max_entries: *rng.pick(MAX_ENTRIES) };
            if seed % 14 == 6 {
                // Long streams in big nodes: master counts above 127.
                lim = Limits { max_bytes: *rng.pick(&[0, 65536]), max_entries: *rng.pick(&[0, 500]) };
            }
            set_limits(&mut c, &lim);
            c.ok(&["DEL", "stream_node:diff"]);
            let big = seed % 5 == 0;
            let mut sim = Sim { nodes: Vec::new(), length: 0, last: sid(rng.below(1000), 0), lim };
            let mut prev_fields: Vec<Vec<u8>> = Vec::new();
            for step in 0..steps {
                st.steps += 1;
                let long = seed % 7 == 6;
                if !long && rng.below(100) == 0 {
                    // Never lower the listpack preallocation mid-stream: redis-server
                    // 7.0.15 can then leave a dangling node pointer (XADD shrinks the
                    // old tail, the new node lands on its old address; valkey issue
                    // #4705, fix PR #4711) and crash or read freed memory.
                    let prealloc = |b: u64| if b == 0 || b > 4096 { 4096 } else { b };
                    let mut max_bytes = *rng.pick(MAX_BYTES);
                    if prealloc(max_bytes) < prealloc(lim.max_bytes) {
                        max_bytes = lim.max_bytes;
                    }
                    lim = Limits { max_bytes, max_entries: *rng.pick(MAX_ENTRIES) };
                    set_limits(&mut c, &lim);
                    sim.lim = lim;
                }
                // Op mix by seed: balanced, growing, or XDEL-heavy.
                let (add, del) = if long { (99, 100) } else { [(60, 75), (85, 95), (50, 85)][(seed % 3) as usize] };
                let op = if step == 0 { 0 } else { rng.below(100) };
                let ctx = |what: &str| format!("seed {seed} step {step} ({lim:?}): {what}");
                let mut args: Vec<Vec<u8>> = Vec::new();
                if op < add {
                    // XADD
                    st.xadd += 1;
                    args.push(b"XADD".to_vec());
                    args.push(key.clone());
                    let trim_pct = if long {
                        (step * 5 > steps * 4) as u64 * 10
                    } else if seed % 3 == 1 {
                        5
                    } else {
                        20
                    };
                    let trim = if rng.below(100) < trim_pct {
                        st.xadd_trim += 1;
                        let t = trim_args(&mut rng, &sim);
                        args.extend(t.0.iter().cloned());
                        Some(t)
                    } else {
                        None
                    };
                    let id = next_id(&mut rng, sim.last);
                    args.push(id.map_or(b"*".to_vec(), |id| sid_str(id).into_bytes()));
                    let r = rng.below(100);
                    let fields: Vec<Vec<u8>> = if r < 35 && !prev_fields.is_empty() {
                        prev_fields.clone()
                    } else if r < 50 && !sim.nodes.is_empty() {
                        sim.nodes.last().unwrap().node.fields.clone()
                    } else {
                        // Now and then many fields, for counts above 127.
                        let n = if rng.below(40) == 0 { 1 + rng.below(140) } else { 1 + rng.below(6) };
                        (0..n)
                            .map(|_| {
                                let short = n > 6 && rng.below(2) == 0;
                                field(&mut rng, short)
                            })
                            .collect()
                    };
                    let values: Vec<Vec<u8>> = if fields.len() > 6 {
                        fields
                            .iter()
                            .map(|_| match rng.below(3) {
                                0 => rng.pick(INTS).as_bytes().to_vec(),
                                _ => {
                                    let n = rng.below(4);
                                    letters(&mut rng, n)
                                }
                            })
                            .collect()
                    } else {
                        fields.iter().map(|_| value(&mut rng, big)).collect()
                    };
                    for (f, v) in fields.iter().zip(&values) {
                        args.push(f.clone());
                        args.push(v.clone());
                    }
                    let got = match c.cmd(&args) {
                        V::Bulk(Some(b)) => parse_sid(&b),
                        v => panic!("{}", ctx(&format!("XADD replied {v:?}"))),
                    };
                    if let Some(id) = id {
                        assert_eq!(got, id, "{}", ctx("XADD id"));
                    }
                    let fv: Vec<(&[u8], &[u8])> = fields.iter().zip(&values).map(|(f, v)| (&f[..], &v[..])).collect();
                    sim.xadd(got, &fv, &mut st);
                    prev_fields = fields;
                    if let Some((_, t, approx, limit)) = trim {
                        st.approx += approx as u64;
                        sim.trim(&t, approx, limit, &mut st);
                    }
                } else if op < del {
                    // XDEL
                    st.xdel += 1;
                    let ids = sim.all_ids();
                    let mut del = Vec::new();
                    for _ in 0..1 + rng.below(3) {
                        del.push(match rng.below(10) {
                            0 => sid(sim.last.ms, sim.last.seq + 1),
                            _ if ids.is_empty() => sid(0, 1),
                            _ => *rng.pick(&ids),
                        });
                    }
                    args.push(b"XDEL".to_vec());
                    args.push(key.clone());
                    args.extend(del.iter().map(|&d| sid_str(d).into_bytes()));
                    let want = del.iter().filter(|&&d| sim.xdel(d)).count() as u64;
                    match c.cmd(&args) {
                        V::Int(n) => assert_eq!(n as u64, want, "{}", ctx("XDEL reply")),
                        v => panic!("{}", ctx(&format!("XDEL replied {v:?}"))),
                    }
                } else {
                    // XTRIM
                    st.xtrim += 1;
                    let (w, t, approx, limit) = trim_args(&mut rng, &sim);
                    st.approx += approx as u64;
                    args.push(b"XTRIM".to_vec());
                    args.push(key.clone());
                    args.extend(w);
                    let want = sim.trim(&t, approx, limit, &mut st);
                    match c.cmd(&args) {
                        V::Int(n) => assert_eq!(
                            n as u64,
                            want,
                            "{}",
                            ctx(&format!("XTRIM reply to {t:?} ~{approx} limit {limit}"))
                        ),
                        v => panic!("{}", ctx(&format!("XTRIM replied {v:?}"))),
                    }
                }
                let what = || String::from_utf8_lossy(&args.concat()).chars().take(200).collect::<String>();
                match c.cmd(&[b"XLEN".to_vec(), key.clone()]) {
                    V::Int(n) => assert_eq!(n as u64, sim.length, "{}", ctx(&format!("XLEN after {}", what()))),
                    v => panic!("XLEN: {v:?}"),
                }
                let inf = info(&mut c, &key);
                assert_eq!(
                    int(get(&inf, "radix-tree-keys")),
                    sim.nodes.len() as u64,
                    "{}",
                    ctx(&format!("radix-tree-keys after {}", what()))
                );
                let last = bulk_sid(get(&inf, "last-generated-id"));
                assert_eq!(last, sim.last, "{}", ctx("last-generated-id"));
                let first = match get(&inf, "first-entry") {
                    V::Arr(Some(e)) => Some(bulk_sid(&e[0])),
                    _ => None,
                };
                assert_eq!(first, sim.first_live(), "{}", ctx("first-entry"));
                st.max_nodes = st.max_nodes.max(sim.nodes.len());
                st.max_length = st.max_length.max(sim.length);
                for n in &sim.nodes {
                    st.max_node_entries = st.max_node_entries.max(n.node.live + n.node.deleted);
                }
                if debug {
                    match c.cmd(&[b"DEBUG".to_vec(), b"OBJECT".to_vec(), key.clone()]) {
                        V::Status(s) => {
                            let got: u64 = s
                                .split(' ')
                                .find_map(|p| p.strip_prefix("serializedlength:"))
                                .unwrap()
                                .parse()
                                .unwrap();
                            let rec_first = bulk_sid(get(&inf, "recorded-first-entry-id"));
                            let maxdel = bulk_sid(get(&inf, "max-deleted-entry-id"));
                            let mut want = rdb_len(sim.nodes.len() as u64);
                            for n in &sim.nodes {
                                let b = n.node.lp_bytes();
                                want += 1 + 16 + rdb_len(b) + b;
                            }
                            want += rdb_len(sim.length);
                            for x in [last, rec_first, maxdel] {
                                want += rdb_len(x.ms) + rdb_len(x.seq);
                            }
                            want += rdb_len(int(get(&inf, "entries-added"))) + rdb_len(0);
                            assert_eq!(got, want, "{}", ctx(&format!("serializedlength after {}", what())));
                            st.byte_checks += 1;
                        }
                        V::Err(e) => {
                            eprintln!("DEBUG OBJECT unavailable ({e}): listpack bytes not checked");
                            debug = false;
                        }
                        v => panic!("DEBUG OBJECT: {v:?}"),
                    }
                }
            }
        }
        if std::env::var_os("STREAM_NODE_KEEP").is_none() {
            set_limits(&mut c, &Limits::default());
            c.ok(&["CONFIG", "SET", "rdbcompression", "yes"]);
            c.ok(&["DEL", "stream_node:diff"]);
        }
        let s = &st;
        println!(
            "seeds {seed0}..{}: {} steps (XADD {}, with trim {}; XDEL {}; XTRIM {}; approx trims {}), \
             {} entries trimmed, {} nodes removed by trims, {} in-node marks ({} leaving 0 live), \
             {} trims cut short by LIMIT, splits by bytes {} / by entries {}, max nodes {}, \
             max entries in a node {}, max length {}, {} listpack-size checks",
            seed0 + seeds - 1,
            s.steps,
            s.xadd,
            s.xadd_trim,
            s.xdel,
            s.xtrim,
            s.approx,
            s.trimmed,
            s.removed_nodes,
            s.marks,
            s.zero_live_nodes,
            s.limit_bound,
            s.split_bytes,
            s.split_entries,
            s.max_nodes,
            s.max_node_entries,
            s.max_length,
            s.byte_checks
        );
    }
}
