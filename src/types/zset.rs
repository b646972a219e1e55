//! Sorted-set semantics: ZADD/ZINCRBY, ZREM, pops, ZREMRANGEBY*, ZRANGESTORE and
//! Z*STORE (apply), and the reads, over two indexes kept in step by one batch:
//!
//! - `subkey`: `[prefix][member] -> score` (member lookups: ZSCORE, ZADD);
//! - `zset_score`: `[prefix][score:8][member] -> ""` (order: ranges, pops).
//!
//! Scores are encoded so that byte order is numeric order (`enc`).
//!
//! ## Ranks in O(log n) instead of O(rank)
//!
//! Next to the score index, in the same namespace and CF, each set keeps *rank
//! counters*: for every depth `d` in 1..=[`DEPTHS`], how many members have a
//! score whose encoding starts with a given `d`-byte prefix. The counters of
//! the (up to 256) prefixes that extend one `d - 1`-byte prefix are one entry,
//! a *node*, at `[prefix][FF FE][d][first d - 1 bytes of the score]`, after
//! every score key (no encoded score starts with `FF FE`: +inf is `FF F0…`), so
//! they go wherever the namespace goes (RENAME, COPY, lazy deletion, GC) and
//! are updated in the same batch as the indexes.
//!
//! The rank of a key is the sum, at each depth, of the counts in its node
//! before its own byte (one point read per depth: a point read finds a node's
//! newest version at once, where a scan over counters rewritten by every batch
//! would step past their older versions), plus a scan of the members that
//! share its first [`DEPTHS`] score bytes (its exact score, for integer scores
//! below 2^28, else scores equal to about eight significant digits). Selecting
//! the member at rank `r` descends the same nodes. ZRANK, ZRANGE by rank,
//! LIMIT offsets and ZCOUNT use them; a key's cost no longer grows with its rank.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::pb::{self, Aggregate, Algebra, ZBy};
use crate::protocol::cursor::parse_f64_bound;
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::{Cf, StorageError};

use super::coll::{find, Found};
use super::list::range_of;
use super::notify::ZSET;
use super::view::Source;
use super::zset_nodes::Node;
use super::ApplyResult;
use super::{ApplyCtx, ReadResult, TypeError};

/// Score bytes covered by rank counters.
pub const DEPTHS: usize = 5;
/// Where a set's counter nodes begin (after every score key).
const NODES: [u8; 2] = [0xff, 0xfe];
/// Up to this many elements, positions are found by walking, not by counters.
const SHORT_WALK: u64 = 256;

/// A score as bytes that sort in numeric order (-0 is stored as 0, as Redis
/// compares them equal).
pub fn enc(score: f64) -> [u8; 8] {
    let s = if score == 0.0 { 0.0 } else { score };
    let bits = s.to_bits();
    let b = if bits >> 63 == 1 { !bits } else { bits ^ (1 << 63) };
    b.to_be_bytes()
}

pub fn dec(b: &[u8]) -> f64 {
    let mut a = [0u8; 8];
    let n = b.len().min(8);
    a[..n].copy_from_slice(&b[..n]);
    let bits = u64::from_be_bytes(a);
    f64::from_bits(if bits >> 63 == 1 { bits ^ (1 << 63) } else { !bits })
}

/// The encoded score right after `e` (exclusive bounds).
fn next_enc(e: [u8; 8]) -> [u8; 8] {
    u64::from_be_bytes(e).saturating_add(1).to_be_bytes()
}

/// The key of the node holding the counters of the `depth`-byte score
/// prefixes that extend `parent` (`depth - 1` bytes).
fn node_key(found: &Found, depth: usize, parent: &[u8]) -> Vec<u8> {
    let mut sub = Vec::with_capacity(3 + parent.len());
    sub.extend_from_slice(&NODES);
    sub.push(depth as u8);
    sub.extend_from_slice(parent);
    found.element(&sub)
}

fn decode_node(v: &[u8]) -> Node {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let b = v[i];
        i += 1;
        let (mut n, mut shift) = (0u64, 0);
        while let Some(&x) = v.get(i) {
            i += 1;
            n |= u64::from(x & 0x7f) << shift;
            shift += 7;
            if x & 0x80 == 0 || shift >= 64 {
                break;
            }
        }
        out.push((b, n));
    }
    out
}

fn encode_node(node: &Node) -> Vec<u8> {
    let mut v = Vec::with_capacity(node.len() * 3);
    for &(b, mut n) in node {
        v.push(b);
        while n >= 0x80 {
            v.push(n as u8 | 0x80);
            n >>= 7;
        }
        v.push(n as u8);
    }
    v
}

fn read_node(src: &impl Source, found: &Found, depth: usize, parent: &[u8]) -> Result<Node, StorageError> {
    Ok(src.get(Cf::ZsetScore, &node_key(found, depth, parent))?.map(|v| decode_node(&v)).unwrap_or_default())
}

/// Whether a root node accounts for every one of `size` members: true of
/// every set this build wrote, false of one whose counters an earlier build
/// kept as single entries (no nodes, or nodes a build between counted from
/// nothing).
fn counted(root: &Node, size: u64) -> bool {
    size > 0 && root.iter().fold(0u64, |a, &(_, c)| a.wrapping_add(c)) == size
}

/// The end of the score index of `found` (where the counters begin).
fn scores_end(found: &Found) -> Vec<u8> {
    found.element(&NODES)
}

/// How many elements sort before the score-index sub-key `k` (an encoded score,
/// optionally followed by a member).
pub fn count_below(src: &impl Source, found: &Found, k: &[u8]) -> Result<u64, StorageError> {
    let root = if found.coll.size <= SHORT_WALK { Vec::new() } else { read_node(src, found, 1, &[])? };
    if !counted(&root, found.coll.size) {
        // A small set, or one whose counter nodes do not add up (written by an
        // earlier build, and not written since): walk.
        let mut n = 0;
        src.scan(Cf::ZsetScore, &found.prefix, &found.element(k), false, |_, _| {
            n += 1;
            true
        })?;
        return Ok(n);
    }
    let mut n = root.iter().take_while(|&&(b, _)| b < k[0]).map(|&(_, c)| c).sum::<u64>();
    for d in 2..=DEPTHS {
        n += read_node(src, found, d, &k[..d - 1])?
            .iter()
            .take_while(|&&(b, _)| b < k[d - 1])
            .map(|&(_, c)| c)
            .sum::<u64>();
    }
    src.scan(Cf::ZsetScore, &found.element(&k[..DEPTHS]), &found.element(k), false, |_, _| {
        n += 1;
        true
    })?;
    Ok(n)
}

/// The score-index sub-key of the element at position `r` (0 = lowest score).
pub fn select(src: &impl Source, found: &Found, mut r: u64) -> Result<Option<Vec<u8>>, StorageError> {
    let n = found.prefix.len();
    let mut from = found.prefix.clone();
    let root = if r > SHORT_WALK { read_node(src, found, 1, &[])? } else { Vec::new() };
    // (Nodes that do not add up: a set from an earlier build: walk.)
    if counted(&root, found.coll.size) {
        let mut p = Vec::with_capacity(DEPTHS);
        for d in 1..=DEPTHS {
            let mut next = None;
            let node = if d == 1 { root.clone() } else { read_node(src, found, d, &p)? };
            for (b, c) in node {
                if r < c {
                    next = Some(b);
                    break;
                }
                r -= c;
            }
            let Some(b) = next else { return Ok(None) };
            p.push(b);
        }
        from = found.element(&p);
    }
    let mut out = None;
    src.scan(Cf::ZsetScore, &from, &scores_end(found), false, |k, _| {
        if r == 0 {
            out = Some(k[n..].to_vec());
            return false;
        }
        r -= 1;
        true
    })?;
    Ok(out)
}

/// One end of a score range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreBound {
    pub v: f64,
    pub excl: bool,
}

/// One end of a lex range.
#[derive(Debug, Clone, PartialEq)]
pub enum LexBound {
    /// `-`
    Min,
    /// `+`
    Max,
    Incl(Bytes),
    Excl(Bytes),
}

/// Redis's score bound: `1.5`, `(1.5`, `-inf`, `+inf`.
pub fn parse_score_bound(a: &[u8]) -> Option<ScoreBound> {
    let (excl, num) = match a.first() {
        Some(b'(') => (true, &a[1..]),
        _ => (false, a),
    };
    parse_f64_bound(num).map(|v| ScoreBound { v, excl })
}

/// Redis's lex bound: `[a`, `(a`, `-`, `+`.
pub fn parse_lex_bound(a: &[u8]) -> Option<LexBound> {
    match a.first()? {
        b'-' if a.len() == 1 => Some(LexBound::Min),
        b'+' if a.len() == 1 => Some(LexBound::Max),
        b'[' => Some(LexBound::Incl(Bytes::copy_from_slice(&a[1..]))),
        b'(' => Some(LexBound::Excl(Bytes::copy_from_slice(&a[1..]))),
        _ => None,
    }
}

pub const NOT_FLOAT_RANGE: &str = "ERR min or max is not a float";
pub const NOT_LEX_RANGE: &str = "ERR min or max not valid string range item";

/// What a range selects (bounds always low to high; REV only changes the order).
#[derive(Debug, Clone, PartialEq)]
pub enum ZRange {
    Rank(i64, i64),
    Score(ScoreBound, ScoreBound),
    Lex(LexBound, LexBound),
}

impl ZRange {
    /// Parse `min max` as the kind `by` says.
    pub fn parse(by: ZBy, min: &[u8], max: &[u8]) -> Result<ZRange, TypeError> {
        use crate::protocol::cursor::parse_i64;
        Ok(match by {
            ZBy::Score => match (parse_score_bound(min), parse_score_bound(max)) {
                (Some(a), Some(b)) => ZRange::Score(a, b),
                _ => return Err(TypeError::Msg(NOT_FLOAT_RANGE)),
            },
            ZBy::Lex => match (parse_lex_bound(min), parse_lex_bound(max)) {
                (Some(a), Some(b)) => ZRange::Lex(a, b),
                _ => return Err(TypeError::Msg(NOT_LEX_RANGE)),
            },
            ZBy::Rank => match (parse_i64(min), parse_i64(max)) {
                (Some(a), Some(b)) => ZRange::Rank(a, b),
                _ => return Err(TypeError::NotInteger),
            },
        })
    }
}

fn lex_ge_min(m: &[u8], b: &LexBound) -> bool {
    match b {
        LexBound::Min => true,
        LexBound::Max => false,
        LexBound::Incl(x) => m >= &x[..],
        LexBound::Excl(x) => m > &x[..],
    }
}

fn lex_le_max(m: &[u8], b: &LexBound) -> bool {
    match b {
        LexBound::Min => false,
        LexBound::Max => true,
        LexBound::Incl(x) => m <= &x[..],
        LexBound::Excl(x) => m < &x[..],
    }
}

/// A range query: the range, REV, and LIMIT (`count` < 0: no limit).
#[derive(Debug, Clone)]
pub struct Query {
    pub range: ZRange,
    pub rev: bool,
    pub offset: i64,
    pub count: i64,
}

/// The score-index sub-keys `[lo, hi)` of a score range; `None` when empty.
fn score_keys(min: ScoreBound, max: ScoreBound) -> Option<([u8; 8], [u8; 8])> {
    let lo = if min.excl { next_enc(enc(min.v)) } else { enc(min.v) };
    let hi = if max.excl { enc(max.v) } else { next_enc(enc(max.v)) };
    (lo < hi).then_some((lo, hi))
}

/// Visit the members (with scores) a query selects, in its order. Seeks
/// straight to the first one (by score, or through the rank counters for
/// positions and LIMIT offsets) and never materialises more than it visits.
pub fn query(src: &impl Source, found: &Found, q: &Query, mut f: impl FnMut(&[u8], f64)) -> Result<(), StorageError> {
    /// Where a walk starts: a position (through the counters) or a key range.
    enum Start {
        Pos(u64),
        Keys(Vec<u8>, Vec<u8>),
    }
    if q.offset < 0 || q.count == 0 {
        return Ok(());
    }
    let n = found.prefix.len();
    let size = found.coll.size;
    let mut skip = q.offset as u64;
    let mut left = if q.count < 0 { u64::MAX } else { q.count as u64 };
    let mut lex_stop = None;
    // Mixed-score lex walks: members are skipped until one passes this bound.
    let mut lex_seek: Option<&LexBound> = None;
    let start = match &q.range {
        ZRange::Rank(start, stop) => {
            // LIMIT does not apply to ranks; positions count from the end with REV.
            let Some((s, e)) = range_of(*start, *stop, size) else { return Ok(()) };
            (skip, left) = (0, e - s + 1);
            Start::Pos(if q.rev { size - 1 - s } else { s })
        }
        ZRange::Score(min, max) => {
            let Some((lo, hi)) = score_keys(*min, *max) else { return Ok(()) };
            if skip > SHORT_WALK {
                // Jump over the offset by rank instead of walking it.
                let (below_lo, below_hi) = (count_below(src, found, &lo)?, count_below(src, found, &hi)?);
                if below_lo + skip >= below_hi {
                    return Ok(());
                }
                left = left.min(below_hi - below_lo - skip);
                let first = if q.rev { below_hi - 1 - skip } else { below_lo + skip };
                skip = 0;
                Start::Pos(first)
            } else {
                Start::Keys(found.element(&lo), found.element(&hi))
            }
        }
        ZRange::Lex(min, max) => {
            // Lex ranges assume one score for every member. Then the walk seeks to
            // the bound within that score. With mixed scores it does what Redis
            // does (its listpack walk; its skiplist's answer depends on random
            // node levels): nothing unless the lowest member is ≤ max and the
            // highest ≥ min; else from the first member (in score order) past the
            // start bound, as long as the members stay within the other.
            let Some(edge) = end_key(src, found, q.rev)? else { return Ok(()) };
            let at = |m: &[u8]| found.element(&[&edge[..8], m].concat());
            let Some(other) = end_key(src, found, !q.rev)? else { return Ok(()) };
            lex_stop = Some(if q.rev { min } else { max });
            if edge[..8] != other[..8] {
                let (lowest, highest) = if q.rev { (&other, &edge) } else { (&edge, &other) };
                if !lex_le_max(&lowest[8..], max) || !lex_ge_min(&highest[8..], min) {
                    return Ok(());
                }
                lex_seek = Some(if q.rev { max } else { min });
                Start::Keys(found.prefix.clone(), scores_end(found))
            } else if q.rev {
                let to = match max {
                    LexBound::Max => scores_end(found),
                    LexBound::Min => return Ok(()),
                    LexBound::Incl(m) => with_zero(at(m)),
                    LexBound::Excl(m) => at(m),
                };
                Start::Keys(found.prefix.clone(), to)
            } else {
                let from = match min {
                    LexBound::Min => found.prefix.clone(),
                    LexBound::Max => return Ok(()),
                    LexBound::Incl(m) => at(m),
                    LexBound::Excl(m) => with_zero(at(m)),
                };
                Start::Keys(from, scores_end(found))
            }
        }
    };
    let (from, to) = match start {
        Start::Keys(a, b) => (a, b),
        Start::Pos(0) if !q.rev => (found.prefix.clone(), scores_end(found)),
        Start::Pos(p) => {
            let Some(k) = select(src, found, p)? else { return Ok(()) };
            let k = found.element(&k);
            if q.rev {
                (found.prefix.clone(), with_zero(k))
            } else {
                (k, scores_end(found))
            }
        }
    };
    src.scan(Cf::ZsetScore, &from, &to, q.rev, |k, _| {
        let m = &k[n + 8..];
        if let Some(b) = lex_seek {
            if !(if q.rev { lex_le_max(m, b) } else { lex_ge_min(m, b) }) {
                return true;
            }
            lex_seek = None;
        }
        if let Some(b) = lex_stop {
            if !(if q.rev { lex_ge_min(m, b) } else { lex_le_max(m, b) }) {
                return false;
            }
        }
        if skip > 0 {
            skip -= 1;
            return true;
        }
        f(m, dec(&k[n..n + 8]));
        left -= 1;
        left > 0
    })
}

fn with_zero(mut k: Vec<u8>) -> Vec<u8> {
    k.push(0);
    k
}

/// The score-index sub-key of the lowest (or highest) member.
fn end_key(src: &impl Source, found: &Found, highest: bool) -> Result<Option<Vec<u8>>, StorageError> {
    let n = found.prefix.len();
    let mut out = None;
    src.scan(Cf::ZsetScore, &found.prefix, &scores_end(found), highest, |k, _| {
        out = Some(k[n..].to_vec());
        false
    })?;
    Ok(out)
}

/// `want` (fewer than half) distinct members of a big sorted set, exactly
/// uniformly: distinct random ranks (Floyd), each found through the counters.
pub fn pick_by_rank(
    src: &impl Source,
    found: &Found,
    want: u64,
    rng: &mut super::coll::Rng,
) -> Result<Vec<Bytes>, StorageError> {
    let size = found.coll.size;
    let mut ranks = Vec::new();
    let mut chosen = std::collections::BTreeSet::new();
    for j in size - want..size {
        let t = rng.below(j + 1);
        let r = if chosen.insert(t) { t } else { j };
        chosen.insert(r);
        ranks.push(r);
    }
    let mut out = Vec::with_capacity(ranks.len());
    for r in ranks {
        if let Some(k) = select(src, found, r)? {
            out.push(Bytes::copy_from_slice(&k[8..]));
        }
    }
    // Floyd's order leans towards high ranks: shuffle so the order says nothing.
    for k in (1..out.len()).rev() {
        out.swap(k, rng.below(k as u64 + 1) as usize);
    }
    Ok(out)
}

/// Members (with scores) a query selects.
pub fn collect(src: &impl Source, found: &Found, q: &Query) -> Result<Vec<(Bytes, f64)>, StorageError> {
    let mut out = Vec::new();
    query(src, found, q, |m, s| out.push((Bytes::copy_from_slice(m), s)))?;
    Ok(out)
}

/// Number of members a score or lex range holds (ZCOUNT, ZLEXCOUNT).
pub fn count(src: &impl Source, found: &Found, range: &ZRange) -> Result<u64, StorageError> {
    if let ZRange::Score(min, max) = range {
        let Some((lo, hi)) = score_keys(*min, *max) else { return Ok(0) };
        return Ok(count_below(src, found, &hi)? - count_below(src, found, &lo)?);
    }
    let mut n = 0;
    query(src, found, &Query { range: range.clone(), rev: false, offset: 0, count: -1 }, |_, _| n += 1)?;
    Ok(n)
}

/// The member's score.
pub fn score_of(src: &impl Source, found: &Found, member: &[u8]) -> Result<Option<f64>, StorageError> {
    Ok(src.get(Cf::Subkey, &found.element(member))?.map(|v| dec(&v)))
}

/// ZRANK: the member's position from the low end, with its score.
pub fn rank(src: &impl Source, found: &Found, member: &[u8]) -> Result<Option<(u64, f64)>, StorageError> {
    let Some(score) = score_of(src, found, member)? else { return Ok(None) };
    let k = [&enc(score)[..], member].concat();
    Ok(Some((count_below(src, found, &k)?, score)))
}

// ---- apply ----

impl ApplyCtx {
    /// Add `delta` to the counters of `e`'s prefixes from depth `from` down (a
    /// score change leaves the counters of the prefixes both scores share).
    fn zset_counters(&mut self, found: &Found, e: &[u8; 8], delta: i64, from: usize) -> Result<(), StorageError> {
        for d in from..=DEPTHS {
            let nk = node_key(found, d, &e[..d - 1]);
            let mut node = match self.zset_nodes().take(&nk) {
                Some(node) => node,
                None => self.get_element(Cf::ZsetScore, &nk)?.map(|v| decode_node(&v)).unwrap_or_default(),
            };
            let at = node.partition_point(|&(b, _)| b < e[d - 1]);
            match node.get_mut(at) {
                Some((b, c)) if *b == e[d - 1] => *c = c.wrapping_add(delta as u64),
                _ => node.insert(at, (e[d - 1], delta as u64)),
            }
            if node[at].1 == 0 {
                node.remove(at);
            }
            let value = (!node.is_empty()).then(|| Bytes::from(encode_node(&node)));
            self.put_node(nk.clone(), value);
            self.zset_nodes().put(nk, node);
        }
        Ok(())
    }

    /// Give a set written by an earlier build (rank counters one entry each, at
    /// `FF FF`) its counter nodes, counted from its score index, before a
    /// command first changes it (reads walk such a set until then): every
    /// counter entry it has goes, and the nodes its members make are written.
    /// One point read (of the root node) for any other set. Called once per
    /// command, before its first change: `found` is the set as it was, `key`
    /// its name. A rebuild is announced for the key even if the command then
    /// changes nothing, so that readers (`Ctx::read_key`) never trust elements
    /// read before it.
    fn zset_counted(&mut self, key: &[u8], found: &Found) -> Result<(), StorageError> {
        if found.coll.size == 0 {
            return Ok(());
        }
        let rk = node_key(found, 1, &[]);
        if let Some(root) = self.zset_nodes().get(&rk) {
            if counted(root, found.coll.size) {
                return Ok(());
            }
        } else {
            let root = self.get_element(Cf::ZsetScore, &rk)?.map(|v| decode_node(&v)).unwrap_or_default();
            let done = counted(&root, found.coll.size);
            self.zset_nodes().put(rk, root);
            if done {
                return Ok(());
            }
        }
        let n = found.prefix.len();
        let mut nodes: BTreeMap<(usize, Vec<u8>), BTreeMap<u8, u64>> = BTreeMap::new();
        self.scan_elements(Cf::ZsetScore, &found.prefix, &scores_end(found), false, |k, _| {
            let e = &k[n..];
            if e.len() >= DEPTHS {
                for d in 1..=DEPTHS {
                    *nodes.entry((d, e[..d - 1].to_vec())).or_default().entry(e[d - 1]).or_default() += 1;
                }
            }
            true
        })?;
        // Deleted one by one (not by range): later reads in this batch see it.
        let mut stale = Vec::new();
        self.scan_elements(Cf::ZsetScore, &scores_end(found), &found.end(), false, |k, _| {
            stale.push(k.to_vec());
            true
        })?;
        for k in stale {
            self.del_element(Cf::ZsetScore, k);
        }
        for ((d, parent), counts) in nodes {
            let node: Node = counts.into_iter().collect();
            self.put_element(Cf::ZsetScore, node_key(found, d, &parent), Bytes::from(encode_node(&node)));
        }
        self.rewrote(key);
        Ok(())
    }

    /// Set `member`'s score (it had `old`), keeping both indexes and the counters.
    fn zset_put(&mut self, found: &Found, member: &[u8], score: f64, old: Option<f64>) -> Result<(), StorageError> {
        let e = enc(score);
        let mut from = 1;
        if let Some(o) = old {
            let oe = enc(o);
            if oe == e {
                return Ok(());
            }
            self.del_element(Cf::ZsetScore, found.element(&[&oe[..], member].concat()));
            from = 1 + oe.iter().zip(&e).take(DEPTHS).take_while(|(a, b)| a == b).count();
            self.zset_counters(found, &oe, -1, from)?;
        }
        self.put_element(Cf::Subkey, found.element(member), Bytes::copy_from_slice(&e));
        self.put_element(Cf::ZsetScore, found.element(&[&e[..], member].concat()), Bytes::new());
        self.zset_counters(found, &e, 1, from)
    }

    fn zset_del(&mut self, found: &Found, member: &[u8], score: f64) -> Result<(), StorageError> {
        let e = enc(score);
        self.del_element(Cf::Subkey, found.element(member));
        self.del_element(Cf::ZsetScore, found.element(&[&e[..], member].concat()));
        self.zset_counters(found, &e, -1, 1)
    }
}

/// ZADD (NX/XX/GT/LT/CH/INCR) and ZINCRBY.
pub fn apply_zadd(ctx: &mut ApplyCtx, op: &pb::Zadd) -> ApplyResult {
    let key = &op.key;
    let (found, old) = tri!(ctx.open_coll(key, KeyType::ZSet)?);
    ctx.zset_counted(key, &found)?;
    let mut coll = found.coll.clone();
    let (mut added, mut changed) = (0i64, 0i64);
    let mut last = None;
    for (&by, member) in op.scores.iter().zip(&op.members) {
        match score_of(ctx, &found, member)? {
            Some(cur) => {
                if op.nx {
                    continue;
                }
                let new = if op.incr { cur + by } else { by };
                if new.is_nan() {
                    return Ok(Err(TypeError::Msg("ERR resulting score is not a number (NaN)")));
                }
                if (op.gt && new <= cur) || (op.lt && new >= cur) {
                    continue;
                }
                last = Some(new);
                if new != cur {
                    ctx.zset_put(&found, member, new, Some(cur))?;
                    changed += 1;
                }
            }
            None => {
                if op.xx {
                    continue;
                }
                ctx.zset_put(&found, member, by, None)?;
                coll.size += 1;
                added += 1;
                last = Some(by);
            }
        }
    }
    // Score changes leave the metadata as it was; a new member changes the size.
    if added > 0 {
        ctx.save_coll(key, old.as_ref(), &coll);
    } else if changed > 0 {
        ctx.touch(key);
    }
    if added > 0 || changed > 0 {
        ctx.event(ZSET, if op.incr { "zincr" } else { "zadd" }, key);
    }
    Ok(Ok(if op.incr {
        last.map(Reply::Double).unwrap_or(Reply::Nil)
    } else {
        Reply::Int(if op.ch { added + changed } else { added })
    }))
}

pub fn apply_zrem(ctx: &mut ApplyCtx, op: &pb::Zrem) -> ApplyResult {
    let key = &op.key;
    let Some(found) = tri!(find(ctx, key, KeyType::ZSet)?) else { return Ok(Ok(Reply::Int(0))) };
    ctx.zset_counted(key, &found)?;
    let mut coll = found.coll.clone();
    let mut n = 0;
    for m in &op.members {
        if let Some(s) = score_of(ctx, &found, m)? {
            ctx.zset_del(&found, m, s)?;
            coll.size -= 1;
            n += 1;
        }
    }
    if n > 0 {
        ctx.save_coll(key, Some(&found.meta), &coll);
        ctx.event(ZSET, "zrem", key);
        ctx.event_if_gone(key)?;
    }
    Ok(Ok(Reply::Int(n)))
}

/// Remove the members a query selects; they are returned.
fn remove_selected(
    ctx: &mut ApplyCtx,
    key: &[u8],
    found: &Found,
    q: &Query,
) -> Result<Vec<(Bytes, f64)>, StorageError> {
    let gone = collect(ctx, found, q)?;
    if !gone.is_empty() {
        ctx.zset_counted(key, found)?;
    }
    for (m, s) in &gone {
        ctx.zset_del(found, m, *s)?;
    }
    if !gone.is_empty() {
        let mut coll = found.coll.clone();
        coll.size -= gone.len() as u64;
        ctx.save_coll(key, Some(&found.meta), &coll);
    }
    Ok(gone)
}

/// ZPOPMIN/ZPOPMAX, ZMPOP and the blocking pops: up to `count` members from the
/// first non-empty key. Result: `[key, [[member, score], ...]]` or a null array.
pub fn apply_zpop(ctx: &mut ApplyCtx, op: &pb::Zpop) -> ApplyResult {
    for key in &op.keys {
        let found = match find(ctx, key, KeyType::ZSet)? {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(_) if op.blocked => continue,
            Err(e) => return Ok(Err(e)),
        };
        let n = op.count.min(i64::MAX as u64) as i64;
        let q = Query { range: ZRange::Rank(0, n - 1), rev: op.max, offset: 0, count: -1 };
        let got = if n == 0 { Vec::new() } else { remove_selected(ctx, key, &found, &q)? };
        if !got.is_empty() {
            ctx.event(ZSET, if op.max { "zpopmax" } else { "zpopmin" }, key);
            ctx.event_if_gone(key)?;
        }
        return Ok(Ok(Reply::Array(vec![
            Reply::Bulk(key.clone()),
            Reply::Array(got.into_iter().map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)])).collect()),
        ])));
    }
    Ok(Ok(Reply::NilArray))
}

/// ZREMRANGEBYRANK/BYSCORE/BYLEX: the bounds as sent, parsed again here (the
/// handler checked them for the error reply).
pub fn apply_zremrange(ctx: &mut ApplyCtx, op: &pb::Zremrange) -> ApplyResult {
    let range = tri!(ZRange::parse(op.by(), &op.min, &op.max));
    let key = &op.key;
    let Some(found) = tri!(find(ctx, key, KeyType::ZSet)?) else { return Ok(Ok(Reply::Int(0))) };
    let gone = remove_selected(ctx, key, &found, &Query { range, rev: false, offset: 0, count: -1 })?;
    if !gone.is_empty() {
        let name = match op.by() {
            ZBy::Rank => "zremrangebyrank",
            ZBy::Score => "zremrangebyscore",
            ZBy::Lex => "zremrangebylex",
        };
        ctx.event(ZSET, name, key);
        ctx.event_if_gone(key)?;
    }
    Ok(Ok(Reply::Int(gone.len() as i64)))
}

/// ZRANGESTORE dst src min max [BY...] [REV] [LIMIT].
pub fn apply_zrangestore(ctx: &mut ApplyCtx, op: &pb::Zrangestore) -> ApplyResult {
    let range = tri!(ZRange::parse(op.by(), &op.min, &op.max));
    let got = match tri!(find(ctx, &op.src, KeyType::ZSet)?) {
        Some(found) => collect(ctx, &found, &Query { range, rev: op.rev, offset: op.offset, count: op.count })?,
        None => Vec::new(),
    };
    let n = got.len() as i64;
    let existed = ctx.exists_for_events(&op.dst)?;
    store(ctx, &op.dst, got)?;
    ctx.store_event(ZSET, "zrangestore", &op.dst, n > 0, existed);
    Ok(Ok(Reply::Int(n)))
}

/// Replace `dst` (whatever it held) by a sorted set of `members`; none deletes it.
pub fn store(ctx: &mut ApplyCtx, dst: &[u8], members: Vec<(Bytes, f64)>) -> Result<(), StorageError> {
    if let Some(found) = ctx.replace_coll(dst, KeyType::ZSet, members.len() as u64)? {
        for (m, s) in members {
            ctx.zset_put(&found, &m, s, None)?;
        }
    }
    Ok(())
}

/// Combine two scores of one member as `agg` says.
fn aggregate(agg: Aggregate, a: f64, b: f64) -> f64 {
    match agg {
        // inf + -inf is NaN: Redis makes it 0.
        Aggregate::Sum => {
            let s = a + b;
            if s.is_nan() {
                0.0
            } else {
                s
            }
        }
        Aggregate::Min => a.min(b),
        Aggregate::Max => a.max(b),
    }
}

/// The members (with scores) of one input of ZUNION/ZINTER/ZDIFF: a sorted set,
/// or a plain set (every score 1). WRONGTYPE for anything else.
fn input(src: &impl Source, key: &[u8]) -> ReadResult<Option<(Found, bool)>> {
    Ok(Ok(match src.meta(key)? {
        None => None,
        Some(m) if m.kind == KeyType::ZSet => Found::from_meta(src.db(), key, m).map(|f| (f, true)),
        Some(m) if m.kind == KeyType::Set => Found::from_meta(src.db(), key, m).map(|f| (f, false)),
        Some(_) => return Ok(Err(TypeError::WrongType)),
    }))
}

fn each_scored(
    src: &impl Source,
    found: &Found,
    zset: bool,
    mut f: impl FnMut(&[u8], f64),
) -> Result<(), StorageError> {
    super::coll::each(src, Cf::Subkey, found, false, |m, v| {
        f(m, if zset { dec(v) } else { 1.0 });
        true
    })
}

fn weighted(score: f64, w: f64) -> f64 {
    let v = score * w;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// ZUNION / ZINTER / ZDIFF of `keys` with `weights` (one per key) and
/// `agg`, in (score, member) order. `limit` stops an intersection early (ZINTERCARD).
pub fn combine(
    src: &impl Source,
    op: Algebra,
    keys: &[Bytes],
    weights: &[f64],
    agg: Aggregate,
    limit: usize,
) -> ReadResult<Vec<(Bytes, f64)>> {
    let mut inputs = Vec::with_capacity(keys.len());
    for k in keys {
        inputs.push(tri!(input(src, k)?));
    }
    let w = |i: usize| weights.get(i).copied().unwrap_or(1.0);
    // As Redis, union and intersection visit the inputs smallest first (a stable
    // order): sums of doubles then round the same way.
    let mut by_size: Vec<usize> = (0..inputs.len()).collect();
    by_size.sort_by_key(|&i| inputs[i].as_ref().map(|(f, _)| f.coll.size).unwrap_or(0));
    let mut acc: BTreeMap<Bytes, f64> = BTreeMap::new();
    match op {
        Algebra::Union => {
            for &i in &by_size {
                let Some((f, z)) = &inputs[i] else { continue };
                each_scored(src, f, *z, |m, s| {
                    let v = weighted(s, w(i));
                    acc.entry(Bytes::copy_from_slice(m)).and_modify(|a| *a = aggregate(agg, *a, v)).or_insert(v);
                })?;
            }
        }
        Algebra::Inter => {
            if inputs.iter().any(Option::is_none) {
                return Ok(Ok(Vec::new()));
            }
            let (first, rest) = by_size.split_first().expect("at least one key");
            let (ff, fz) = inputs[*first].as_ref().expect("checked above");
            let mut err = None;
            each_scored(src, ff, *fz, |m, s| {
                if err.is_some() || (limit > 0 && acc.len() >= limit) {
                    return;
                }
                let mut v = weighted(s, w(*first));
                for &j in rest {
                    let (f, z) = inputs[j].as_ref().expect("checked above");
                    match src.get(Cf::Subkey, &f.element(m)) {
                        // As Redis: a later input's product is not made 0 when
                        // it is NaN (inf * 0); the sum it makes is, and MIN and
                        // MAX pass it over.
                        Ok(Some(sv)) => v = aggregate(agg, v, if *z { dec(&sv) } else { 1.0 } * w(j)),
                        Ok(None) => return,
                        Err(e) => {
                            err = Some(e);
                            return;
                        }
                    }
                }
                acc.insert(Bytes::copy_from_slice(m), v);
            })?;
            if let Some(e) = err {
                return Err(e);
            }
        }
        Algebra::Diff => {
            let Some(Some((ff, fz))) = inputs.first() else { return Ok(Ok(Vec::new())) };
            let mut err = None;
            each_scored(src, ff, *fz, |m, s| {
                for (f, _) in inputs[1..].iter().flatten() {
                    match src.get(Cf::Subkey, &f.element(m)) {
                        Ok(None) => {}
                        Ok(Some(_)) => return,
                        Err(e) => {
                            err = Some(e);
                            return;
                        }
                    }
                }
                acc.insert(Bytes::copy_from_slice(m), s);
            })?;
            if let Some(e) = err {
                return Err(e);
            }
        }
    }
    let mut out: Vec<(Bytes, f64)> = acc.into_iter().collect();
    // As Redis's skiplist: -0 and 0 are one score, ordered by member.
    out.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.0.cmp(&b.0)));
    Ok(Ok(out))
}

/// ZUNIONSTORE / ZINTERSTORE / ZDIFFSTORE.
pub fn apply_zstore(ctx: &mut ApplyCtx, op: &pb::Zstore) -> ApplyResult {
    let got = tri!(combine(ctx, op.algebra(), &op.keys, &op.weights, op.aggregate(), 0)?);
    let n = got.len() as i64;
    let existed = ctx.exists_for_events(&op.dst)?;
    store(ctx, &op.dst, got)?;
    let name = match op.algebra() {
        Algebra::Inter => "zinterstore",
        Algebra::Union => "zunionstore",
        Algebra::Diff => "zdiffstore",
    };
    ctx.store_event(ZSET, name, &op.dst, n > 0, existed);
    Ok(Ok(Reply::Int(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_encoding_sorts_numerically() {
        let xs =
            [f64::NEG_INFINITY, -1e300, -100.0, -1.5, -f64::MIN_POSITIVE, 0.0, 1e-300, 1.0, 1.5, 1e300, f64::INFINITY];
        for w in xs.windows(2) {
            assert!(enc(w[0]) < enc(w[1]), "{} < {}", w[0], w[1]);
        }
        for x in xs {
            assert_eq!(dec(&enc(x)), x);
        }
        assert_eq!(enc(-0.0), enc(0.0), "-0 and 0 are one score");
        assert!(enc(f64::INFINITY) < [0xff, 0xfe, 0, 0, 0, 0, 0, 0], "counters sort after every score");
    }

    #[test]
    fn counter_nodes_round_trip() {
        let nodes: [Node; 4] = [
            vec![],
            vec![(0, 1)],
            vec![(0, 127), (1, 128), (0x7f, 300), (0xfe, u32::MAX as u64 + 5), (0xff, u64::MAX)],
            (0..=255u8).map(|b| (b, 1u64 << (b % 64))).collect(),
        ];
        for n in nodes {
            assert_eq!(decode_node(&encode_node(&n)), n);
        }
        assert_eq!(encode_node(&vec![(7, 5), (9, 200)]), vec![7, 5, 9, 0xc8, 0x01]);
    }
}
