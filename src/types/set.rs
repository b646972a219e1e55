//! Set semantics: SADD, SREM, SPOP, SMOVE, S*STORE (apply), and the reads.
//! Members live in `subkey` as `[prefix][member] -> ""`; the metadata's size is
//! the member count.

use std::collections::BTreeSet;

use bytes::Bytes;

use crate::pb::{self, Algebra};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::{Cf, StorageError};

use super::coll::{each, find, Found, Rng};
use super::members::Sorted;
use super::notify::SET;
use super::view::Source;
use super::ApplyResult;
use super::{ApplyCtx, ReadResult};

/// Up to this size (or when half the key or more is wanted) members are drawn
/// exactly uniformly, by one walk (a few hundred microseconds at most); above
/// it a sorted set draws ranks through its counters (exact, O(log n)) and a set
/// or hash seeks to a random point of its key range (O(log n), approximately
/// uniform: Redis's SRANDMEMBER is O(1), a walk of a million members is not).
const UNIFORM_PICK_MAX: u64 = 4096;

/// A sorted set bigger than this draws by rank.
const RANK_PICK_MIN: u64 = 256;

/// A seek draws among this many members from where it lands, so members that
/// sort close together (sharing a long prefix) are all within reach.
const SEEK_WINDOW: usize = 64;

pub fn apply_sadd(ctx: &mut ApplyCtx, op: &pb::Sadd) -> ApplyResult {
    let key = &op.key;
    let (found, old) = tri!(ctx.open_coll(key, KeyType::Set)?);
    let mut coll = found.coll.clone();
    let mut added = 0;
    for m in &op.members {
        let ek = found.element(m);
        if ctx.get_element(Cf::Subkey, &ek)?.is_none() {
            ctx.put_element(Cf::Subkey, ek, Bytes::new());
            coll.size += 1;
            added += 1;
        }
    }
    if added > 0 {
        ctx.save_coll(key, old.as_ref(), &coll);
        ctx.event(SET, "sadd", key);
    }
    Ok(Ok(Reply::Int(added)))
}

pub fn apply_srem(ctx: &mut ApplyCtx, op: &pb::Srem) -> ApplyResult {
    let n = tri!(ctx.remove_elements(&op.key, KeyType::Set, &op.members)?);
    if n > 0 {
        ctx.event(SET, "srem", &op.key);
        ctx.event_if_gone(&op.key)?;
    }
    Ok(Ok(Reply::Int(n)))
}

/// SPOP key [count]: without `count`, one member or nil.
pub fn apply_spop(ctx: &mut ApplyCtx, op: &pb::Spop) -> ApplyResult {
    let key = &op.key;
    let single = op.count.is_none();
    let Some(found) = tri!(find(ctx, key, KeyType::Set)?) else {
        return Ok(Ok(if single { Reply::Nil } else { Reply::Set(Vec::new()) }));
    };
    let want = op.count.unwrap_or(1);
    let mut ends = ctx.pick_ends.remove(&found.prefix);
    let rng = &mut Rng::new(op.seed);
    // From apply's index of the set when it has one: the same choice as the
    // walk of storage, without stepping over the tombstones of earlier pops.
    let picked = match ctx.indexed_members(&found)? {
        Some(set) => draw(set, found.coll.size, want, rng, &mut ends)?,
        None => pick_with(ctx, &found, want, rng, &mut ends)?,
    };
    if let Some(e) = ends {
        ctx.pick_ends.insert(found.prefix.clone(), e);
    }
    let mut coll = found.coll.clone();
    for m in &picked {
        ctx.del_element(Cf::Subkey, found.element(m));
        coll.size -= 1;
    }
    if !picked.is_empty() {
        ctx.save_coll(key, Some(&found.meta), &coll);
        ctx.event(SET, "spop", key);
        ctx.event_if_gone(key)?;
    }
    Ok(Ok(if single {
        picked.into_iter().next().map(Reply::Bulk).unwrap_or(Reply::Nil)
    } else {
        Reply::Set(picked.into_iter().map(Reply::Bulk).collect())
    }))
}

/// `want` distinct members chosen at random (all of them if `want` ≥ size).
pub fn pick(src: &impl Source, found: &Found, want: u64, rng: &mut Rng) -> Result<Vec<Bytes>, StorageError> {
    pick_with(src, found, want, rng, &mut None)
}

/// [`pick`], with the key's first and last member remembered in `ends` between
/// calls (apply keeps them for one log entry: a stale end only moves where a seek
/// starts, and every replica applies the same entries, so choices stay identical).
pub fn pick_with(
    src: &impl Source,
    found: &Found,
    want: u64,
    rng: &mut Rng,
    ends: &mut Option<(Bytes, Bytes)>,
) -> Result<Vec<Bytes>, StorageError> {
    let size = found.coll.size;
    let by_rank = found.coll.kind == KeyType::ZSet && size > RANK_PICK_MIN;
    if by_rank && want > 0 && !uniform(size, want, true) {
        return super::zset::pick_by_rank(src, found, want, rng);
    }
    draw(&Stored { src, found }, size, want, rng, ends)
}

/// Whether `want` of `size` members are drawn exactly uniformly, by position.
fn uniform(size: u64, want: u64, by_rank: bool) -> bool {
    want >= size || (size <= UNIFORM_PICK_MAX && !by_rank) || want > size / 2
}

/// A set's members in order, by position: walked in storage ([`Stored`]), or
/// from apply's index ([`Sorted`]). Both answer alike, so a choice does not
/// depend on whether the replica making it had the set indexed.
trait Ordered {
    /// The members at `positions` (ascending, each below the size), in order.
    fn at(&self, positions: &BTreeSet<u64>) -> Result<Vec<Bytes>, StorageError>;
    /// The first and last member (`None`: empty).
    fn ends(&self) -> Result<Option<(Bytes, Bytes)>, StorageError>;
    /// From the first member ≥ `from` onwards, wrapping to the first member
    /// after the last, the `skip`-th member seen (all of them seen once more
    /// after the wrap, then cyclically in that sequence when it is shorter).
    fn after(&self, from: &[u8], skip: usize) -> Result<Option<Bytes>, StorageError>;
}

struct Stored<'a, S> {
    src: &'a S,
    found: &'a Found,
}

impl<S: Source> Ordered for Stored<'_, S> {
    fn at(&self, positions: &BTreeSet<u64>) -> Result<Vec<Bytes>, StorageError> {
        let mut out = Vec::with_capacity(positions.len());
        let mut i = 0u64;
        let mut next = positions.iter().copied().peekable();
        each(self.src, Cf::Subkey, self.found, false, |m, _| {
            if next.peek() == Some(&i) {
                next.next();
                out.push(Bytes::copy_from_slice(m));
            }
            i += 1;
            next.peek().is_some()
        })?;
        Ok(out)
    }

    fn ends(&self) -> Result<Option<(Bytes, Bytes)>, StorageError> {
        let bound = |reverse| {
            let mut got = None;
            each(self.src, Cf::Subkey, self.found, reverse, |m, _| {
                got = Some(Bytes::copy_from_slice(m));
                false
            })
            .map(|()| got)
        };
        Ok(bound(false)?.zip(bound(true)?))
    }

    fn after(&self, from: &[u8], skip: usize) -> Result<Option<Bytes>, StorageError> {
        let (found, n) = (self.found, self.found.prefix.len());
        let mut window = Vec::with_capacity(skip + 1);
        for from in [found.element(from), found.prefix.clone()] {
            self.src.scan(Cf::Subkey, &from, &found.end(), false, |k, _| {
                window.push(Bytes::copy_from_slice(&k[n..]));
                window.len() <= skip
            })?;
            if window.len() > skip {
                break;
            }
        }
        // A key smaller than the window wraps to its start as often as needed.
        Ok((!window.is_empty()).then(|| window.swap_remove(skip % window.len())))
    }
}

impl Ordered for Sorted {
    fn at(&self, positions: &BTreeSet<u64>) -> Result<Vec<Bytes>, StorageError> {
        Ok(Sorted::at(self, positions.iter().map(|&i| i as usize)))
    }

    fn ends(&self) -> Result<Option<(Bytes, Bytes)>, StorageError> {
        Ok((!self.is_empty()).then(|| (self.nth(0).clone(), self.nth(self.len() - 1).clone())))
    }

    fn after(&self, from: &[u8], skip: usize) -> Result<Option<Bytes>, StorageError> {
        if self.is_empty() {
            return Ok(None);
        }
        let (n, lb) = (self.len(), self.lower_bound(from));
        // The sequence: the `n - lb` members from `lb`, then all `n` again.
        let seq = 2 * n - lb;
        let j = if skip < seq { skip } else { skip % seq };
        Ok(Some(if j < n - lb { self.nth(lb + j) } else { self.nth(j - (n - lb)) }.clone()))
    }
}

/// Draw `want` distinct members of a set of `size` (all of them if `want` ≥ size).
fn draw(
    set: &impl Ordered,
    size: u64,
    want: u64,
    rng: &mut Rng,
    ends: &mut Option<(Bytes, Bytes)>,
) -> Result<Vec<Bytes>, StorageError> {
    if want == 0 {
        return Ok(Vec::new());
    }
    if uniform(size, want, false) {
        // Floyd's sampling of `want` distinct positions, then one ordered walk.
        let mut chosen = BTreeSet::new();
        if want >= size {
            chosen.extend(0..size);
        } else {
            for j in size - want..size {
                let t = rng.below(j + 1);
                if !chosen.insert(t) {
                    chosen.insert(j);
                }
            }
        }
        let mut out = set.at(&chosen)?;
        // Members picked in key order; shuffle so the order says nothing.
        for k in (1..out.len()).rev() {
            out.swap(k, rng.below(k as u64 + 1) as usize);
        }
        return Ok(out);
    }
    if ends.is_none() {
        *ends = set.ends()?;
    }
    let mut out = Vec::new();
    let Some((first, last)) = ends.clone() else { return Ok(out) };
    let mut seen = BTreeSet::new();
    let mut tries = 0;
    while (out.len() as u64) < want && tries < want * 8 + 64 {
        tries += 1;
        if let Some(m) = pick_by_seek(set, &first, &last, rng)? {
            if seen.insert(m.clone()) {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// `count` random members: distinct (at most the size) or drawn independently,
/// repeats allowed (HRANDFIELD / SRANDMEMBER with a negative count).
pub fn sample(
    src: &impl Source,
    found: &Found,
    count: u64,
    distinct: bool,
    rng: &mut Rng,
) -> Result<Vec<Bytes>, StorageError> {
    if distinct {
        return pick(src, found, count, rng);
    }
    let all = pick(src, found, found.coll.size, rng)?;
    if all.is_empty() {
        return Ok(all);
    }
    Ok((0..count).map(|_| all[rng.below(all.len() as u64) as usize].clone()).collect())
}

/// One member of a big set: seek to a random point between the first and last
/// member, then take one of the [`SEEK_WINDOW`] members from there (wrapping
/// to the first). Not exactly uniform, O(log n); every member can come up.
fn pick_by_seek(set: &impl Ordered, first: &Bytes, last: &Bytes, rng: &mut Rng) -> Result<Option<Bytes>, StorageError> {
    let common = first.iter().zip(last.iter()).take_while(|(a, b)| a == b).count();
    // Past the common prefix, bytes mostly from the range the two ends use
    // (members like "user:123" then land on random digits, not between
    // character groups), sometimes any byte (so no run of members sorts where
    // no target lands), of any length up to a little more than either end's.
    let tails = first[common..].iter().chain(last[common..].iter());
    let (lo, hi) = tails.fold((255u8, 0u8), |(lo, hi), &b| (lo.min(b), hi.max(b)));
    let (lo, hi) = if lo > hi { (0, 255) } else { (lo as u64, hi as u64) };
    let len = first.len().max(last.len()) - common + 1;
    let mut target = first[..common].to_vec();
    for _ in 0..rng.below(len as u64) + 1 {
        let b = if rng.below(4) == 0 { rng.below(256) } else { lo + rng.below(hi - lo + 1) };
        target.push(b as u8);
    }
    let skip = rng.below(SEEK_WINDOW as u64) as usize;
    set.after(&target, skip)
}

pub fn apply_smove(ctx: &mut ApplyCtx, op: &pb::Smove) -> ApplyResult {
    let (src, dst, member) = (&op.from, &op.to, &op.member);
    // As Redis: an absent source answers 0 before the destination's type is checked.
    let Some(from) = tri!(find(ctx, src, KeyType::Set)?) else { return Ok(Ok(Reply::Int(0))) };
    tri!(find(ctx, dst, KeyType::Set)?);
    let ek = from.element(member);
    let present = ctx.get_element(Cf::Subkey, &ek)?.is_some();
    if src == dst || !present {
        return Ok(Ok(Reply::Int(present as i64)));
    }
    ctx.del_element(Cf::Subkey, ek);
    let mut coll = from.coll.clone();
    coll.size -= 1;
    ctx.save_coll(src, Some(&from.meta), &coll);
    ctx.event(SET, "srem", src);
    ctx.event_if_gone(src)?;
    let (to, old) = tri!(ctx.open_coll(dst, KeyType::Set)?);
    let tk = to.element(member);
    if ctx.get_element(Cf::Subkey, &tk)?.is_none() {
        ctx.put_element(Cf::Subkey, tk, Bytes::new());
        let mut c = to.coll.clone();
        c.size += 1;
        ctx.save_coll(dst, old.as_ref(), &c);
        ctx.event(SET, "sadd", dst);
    }
    Ok(Ok(Reply::Int(1)))
}

/// The result of `op` over `keys`, in member order; WRONGTYPE if any key holds
/// another type (every key is checked first, as Redis does). `limit` stops an
/// intersection early (SINTERCARD; 0 = none).
pub fn algebra(src: &impl Source, op: Algebra, keys: &[Bytes], limit: usize) -> ReadResult<Vec<Bytes>> {
    let mut sets = Vec::with_capacity(keys.len());
    for k in keys {
        sets.push(tri!(find(src, k, KeyType::Set)?));
    }
    let mut out = Vec::new();
    match op {
        Algebra::Inter => {
            if sets.iter().any(Option::is_none) {
                return Ok(Ok(out));
            }
            let mut sets: Vec<Found> = sets.into_iter().flatten().collect();
            // Walk the smallest, probe the others.
            sets.sort_by_key(|f| f.coll.size);
            let (first, rest) = sets.split_first().expect("at least one key");
            let mut err = None;
            each(src, Cf::Subkey, first, false, |m, _| {
                for s in rest {
                    match src.get(Cf::Subkey, &s.element(m)) {
                        Ok(Some(_)) => {}
                        Ok(None) => return true,
                        Err(e) => {
                            err = Some(e);
                            return false;
                        }
                    }
                }
                out.push(Bytes::copy_from_slice(m));
                limit == 0 || out.len() < limit
            })?;
            if let Some(e) = err {
                return Err(e);
            }
        }
        Algebra::Union => {
            let mut all = BTreeSet::new();
            for s in sets.iter().flatten() {
                each(src, Cf::Subkey, s, false, |m, _| {
                    all.insert(Bytes::copy_from_slice(m));
                    true
                })?;
            }
            out.extend(all);
        }
        Algebra::Diff => {
            let Some(Some(first)) = sets.first() else { return Ok(Ok(out)) };
            let rest: Vec<&Found> = sets[1..].iter().flatten().collect();
            let mut err = None;
            each(src, Cf::Subkey, first, false, |m, _| {
                for s in &rest {
                    match src.get(Cf::Subkey, &s.element(m)) {
                        Ok(None) => {}
                        Ok(Some(_)) => return true,
                        Err(e) => {
                            err = Some(e);
                            return false;
                        }
                    }
                }
                out.push(Bytes::copy_from_slice(m));
                true
            })?;
            if let Some(e) = err {
                return Err(e);
            }
        }
    }
    Ok(Ok(out))
}

/// SINTERSTORE / SUNIONSTORE / SDIFFSTORE.
pub fn apply_sstore(ctx: &mut ApplyCtx, op: &pb::Sstore) -> ApplyResult {
    let members = tri!(algebra(ctx, op.algebra(), &op.keys, 0)?);
    let n = members.len() as i64;
    let existed = ctx.exists_for_events(&op.dst)?;
    store_set(ctx, &op.dst, members)?;
    let name = match op.algebra() {
        Algebra::Inter => "sinterstore",
        Algebra::Union => "sunionstore",
        Algebra::Diff => "sdiffstore",
    };
    ctx.store_event(SET, name, &op.dst, n > 0, existed);
    Ok(Ok(Reply::Int(n)))
}

/// Replace `dst` (whatever it held) by a set of `members`; none deletes it.
pub fn store_set(ctx: &mut ApplyCtx, dst: &[u8], members: Vec<Bytes>) -> Result<(), StorageError> {
    if let Some(found) = ctx.replace_coll(dst, KeyType::Set, members.len() as u64)? {
        for m in members {
            ctx.put_element(Cf::Subkey, found.element(&m), Bytes::new());
        }
    }
    Ok(())
}

// ---- reads ----

pub fn is_member(src: &impl Source, key: &[u8], member: &[u8]) -> ReadResult<bool> {
    let Some(found) = tri!(find(src, key, KeyType::Set)?) else { return Ok(Ok(false)) };
    Ok(Ok(src.get(Cf::Subkey, &found.element(member))?.is_some()))
}

pub fn members(src: &impl Source, key: &[u8]) -> ReadResult<Vec<Bytes>> {
    let Some(found) = tri!(find(src, key, KeyType::Set)?) else { return Ok(Ok(Vec::new())) };
    let mut out = Vec::with_capacity(found.coll.size.min(1 << 20) as usize);
    each(src, Cf::Subkey, &found, false, |m, _| {
        out.push(Bytes::copy_from_slice(m));
        true
    })?;
    Ok(Ok(out))
}

pub fn card(src: &impl Source, key: &[u8]) -> ReadResult<u64> {
    Ok(Ok(tri!(find(src, key, KeyType::Set)?).map(|f| f.coll.size).unwrap_or(0)))
}
