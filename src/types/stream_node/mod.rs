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

mod size;
mod trim;

#[cfg(test)]
mod diff;

pub use trim::{plan_trim, Trim, TrimPlan};

use size::{entry_len, int_elem, str_elem};

/// A stream entry id.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Sid {
    pub ms: u64,
    pub seq: u64,
}

/// An id as a stream write's log entry carries it.
impl From<Sid> for crate::pb::StreamId {
    fn from(id: Sid) -> Self {
        crate::pb::StreamId { ms: id.ms, seq: id.seq }
    }
}

impl From<&crate::pb::StreamLimits> for Limits {
    fn from(l: &crate::pb::StreamLimits) -> Self {
        Limits { max_entries: l.max_entries, max_bytes: l.max_bytes }
    }
}

impl From<&crate::pb::StreamId> for Sid {
    fn from(id: &crate::pb::StreamId) -> Self {
        Sid { ms: id.ms, seq: id.seq }
    }
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
    /// The limits as a write carries them to apply: absent when they are
    /// Redis's defaults (as in every entry written before they were carried).
    pub fn carried(self) -> Option<crate::pb::StreamLimits> {
        (self != Limits::default())
            .then_some(crate::pb::StreamLimits { max_entries: self.max_entries, max_bytes: self.max_bytes })
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn sid(ms: u64, seq: u64) -> Sid {
        Sid { ms, seq }
    }

    fn fv<'a>(p: &'a [(&'a str, &'a str)]) -> Vec<(&'a [u8], &'a [u8])> {
        p.iter().map(|(f, v)| (f.as_bytes(), v.as_bytes())).collect()
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
