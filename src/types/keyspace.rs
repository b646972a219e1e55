//! Keyspace semantics: DEL, EXPIRE family, PERSIST, RENAME, COPY, active expiry
//! (apply), and TTL, TYPE, EXISTS, SCAN, KEYS, RANDOMKEY, DBSIZE (reads).

use bytes::Bytes;

use crate::cluster::key_slot;
use crate::pb;
use crate::protocol::Reply;
use crate::storage::keys::{db_slot_range, decode_meta_key, meta_key_in, KeyType};
use crate::storage::meta::{Coll, Meta};
use crate::storage::{Cf, StorageError};

use super::coll::Found;
use super::glob::glob_match;
use super::notify::{GENERIC, NEW};
use super::view::Source;
use super::ApplyResult;
use super::{ApplyCtx, TypeError};

pub fn apply_del(ctx: &mut ApplyCtx, op: &pb::Del) -> ApplyResult {
    let mut n = 0;
    for k in &op.keys {
        let mk = ctx.mkey(k);
        if let Some(m) = ctx.any_meta(&mk)? {
            let live = !m.is_expired(ctx.now_ms);
            ctx.del_any(mk, &m);
            if live {
                n += 1;
                ctx.event(GENERIC, "del", k);
            }
        }
    }
    Ok(Ok(Reply::Int(n)))
}

/// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT with NX/XX/GT/LT (`at_ms` absolute).
pub fn apply_expire(ctx: &mut ApplyCtx, op: &pb::Expire) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    let Some(m) = ctx.live_meta(&mk)? else {
        return Ok(Ok(Reply::Int(0)));
    };
    let when = op.at_ms;
    let cur = m.expire_ms;
    if op.nx && cur != 0 {
        return Ok(Ok(Reply::Int(0)));
    }
    if op.xx && cur == 0 {
        return Ok(Ok(Reply::Int(0)));
    }
    // No TTL counts as an infinite TTL for GT and LT.
    if op.gt && (cur == 0 || when <= cur) {
        return Ok(Ok(Reply::Int(0)));
    }
    if op.lt && cur != 0 && when >= cur {
        return Ok(Ok(Reply::Int(0)));
    }
    if when <= ctx.now_ms {
        ctx.del_key(mk, &m);
        ctx.event(GENERIC, "del", &op.key);
    } else {
        let new = Meta { expire_ms: when, ..m.clone() }.encode();
        ctx.put_meta_over(mk, Some(&m), new);
        ctx.event(GENERIC, "expire", &op.key);
    }
    Ok(Ok(Reply::Int(1)))
}

pub fn apply_persist(ctx: &mut ApplyCtx, op: &pb::Persist) -> ApplyResult {
    let mk = ctx.mkey(&op.key);
    match ctx.live_meta(&mk)? {
        Some(m) if m.expire_ms != 0 => {
            let new = Meta { expire_ms: 0, ..m.clone() }.encode();
            ctx.put_meta_over(mk, Some(&m), new);
            ctx.event(GENERIC, "persist", &op.key);
            Ok(Ok(Reply::Int(1)))
        }
        _ => Ok(Ok(Reply::Int(0))),
    }
}

/// RENAME, and RENAMENX (`nx`): `+OK`, or nil when NX refuses.
pub fn apply_rename(ctx: &mut ApplyCtx, op: &pb::Rename) -> ApplyResult {
    let (src, dst) = (ctx.mkey(&op.from), ctx.mkey(&op.to));
    let Some(m) = ctx.live_meta(&src)? else {
        return Ok(Err(TypeError::NoSuchKey));
    };
    if src == dst {
        return Ok(Ok(if op.nx { Reply::Nil } else { Reply::Ok }));
    }
    let old_dst = ctx.any_meta(&dst)?;
    if op.nx && old_dst.as_ref().is_some_and(|d| !d.is_expired(ctx.now_ms)) {
        return Ok(Ok(Reply::Nil));
    }
    // Redis deletes a replaced destination and adds the key anew.
    if old_dst.as_ref().is_some_and(|d| !d.is_expired(ctx.now_ms)) {
        ctx.event(NEW, "new", &op.to);
    }
    let moved = match Coll::from_meta(&m) {
        // A composite key keeps its elements where they are: the new name's
        // metadata names the namespace's owner, and a link tells the garbage
        // collector who holds it now. O(1) whatever the size.
        Some(mut c) => {
            let owner = Bytes::copy_from_slice(c.data_key(&op.from));
            if owner[..] == op.to[..] {
                c.owner = None;
            } else {
                let mut link = meta_key_in(ctx.db(), key_slot(&owner), &owner);
                link.extend_from_slice(&c.version.to_be_bytes());
                ctx.put_raw(Cf::Links, link, Bytes::from(dst.clone()));
                c.owner = Some(owner);
            }
            c.encode()
        }
        None => m.encode(),
    };
    ctx.put_meta_over(dst, old_dst.as_ref(), moved);
    ctx.del_key(src, &m);
    ctx.event(GENERIC, "rename_from", &op.from);
    ctx.event(GENERIC, "rename_to", &op.to);
    Ok(Ok(Reply::Ok))
}

/// COPY src dst [REPLACE] [DB db]: 1 if copied.
pub fn apply_copy(ctx: &mut ApplyCtx, op: &pb::Copy) -> ApplyResult {
    let to_db = if op.to_db { op.db as u16 } else { ctx.ldb };
    let src = ctx.mkey(&op.from);
    let Some(m) = ctx.live_meta(&src)? else {
        return Ok(Ok(Reply::Int(0)));
    };
    let copied = copy_value(ctx, &op.from, m, to_db, &op.to, op.replace)?;
    if copied {
        ctx.event_in(to_db, GENERIC, "copy_to", &op.to);
    }
    Ok(Ok(Reply::Int(copied as i64)))
}

/// Write a copy of `from` (of the command's database, whose metadata is `m`)
/// as `to` of logical database `to_db`, unless `to` exists there and not
/// `replace`. True if written.
fn copy_value(
    ctx: &mut ApplyCtx,
    from: &[u8],
    m: Meta,
    to_db: u16,
    to: &[u8],
    replace: bool,
) -> Result<bool, StorageError> {
    let dst = ctx.mkey_of(to_db, to);
    let old_dst = ctx.any_meta(&dst)?;
    let dst_live = old_dst.as_ref().is_some_and(|d| !d.is_expired(ctx.now_ms));
    if !replace && dst_live {
        return Ok(false);
    }
    if dst_live {
        ctx.event_in(to_db, NEW, "new", to);
    }
    let copied = match Found::from_meta(ctx.db(), from, m.clone()) {
        // Elements are copied into a fresh namespace of the destination.
        Some(from) => {
            let mut c = from.coll.clone();
            c.version = ctx.new_version(to);
            c.owner = None;
            let mut prefix = dst.clone();
            prefix.extend_from_slice(&c.version.to_be_bytes());
            for cf in [Cf::Subkey, Cf::ZsetScore] {
                let mut items = Vec::new();
                ctx.scan_elements(cf, &from.prefix, &from.end(), false, |k, v| {
                    items.push((k[from.prefix.len()..].to_vec(), Bytes::copy_from_slice(v)));
                    true
                })?;
                for (sub, v) in items {
                    let mut k = prefix.clone();
                    k.extend_from_slice(&sub);
                    ctx.put_element(cf, k, v);
                }
            }
            c.encode()
        }
        None => m.encode(),
    };
    ctx.put_meta_over(dst, old_dst.as_ref(), copied);
    Ok(true)
}

/// MOVE key db: 1 if `key` went to logical database `db` (where it was
/// absent), with its TTL.
pub fn apply_move(ctx: &mut ApplyCtx, op: &pb::Move) -> ApplyResult {
    let src = ctx.mkey(&op.key);
    let Some(m) = ctx.live_meta(&src)? else {
        return Ok(Ok(Reply::Int(0)));
    };
    let to_db = op.db as u16;
    if !copy_value(ctx, &op.key, m.clone(), to_db, &op.key, false)? {
        return Ok(Ok(Reply::Int(0)));
    }
    ctx.del_key(src, &m);
    ctx.event(GENERIC, "move_from", &op.key);
    ctx.event_in(to_db, GENERIC, "move_to", &op.key);
    Ok(Ok(Reply::Int(1)))
}

/// Active expiry: `keys[i]` of physical database `dbs[i]` (0 when absent) with
/// `at_ms[i]` (the expire time of its index entry). Each key whose TTL has
/// passed at the entry's time is deleted; an index entry is dropped once due
/// or stale (the key no longer has that TTL). Result: keys deleted.
pub fn apply_expire_keys(ctx: &mut ApplyCtx, op: &pb::ExpireKeys) -> ApplyResult {
    let mut n = 0;
    for (i, (k, &at)) in op.keys.iter().zip(&op.at_ms).enumerate() {
        let db = op.dbs.get(i).copied().unwrap_or(0) as u16;
        let mk = meta_key_in(db, key_slot(k), k);
        let meta = ctx.any_meta(&mk)?;
        match meta {
            Some(m) if m.is_expired(ctx.now_ms) => {
                ctx.del_expired(mk.clone(), &m);
                n += 1;
                if m.expire_ms != at {
                    ctx.index(&mk, at, false);
                }
            }
            // Not yet due at the entry's time (clocks differ): keep the entry.
            Some(m) if m.expire_ms == at => {}
            _ => ctx.index(&mk, at, false),
        }
    }
    Ok(Ok(Reply::Int(n)))
}

// ---- reads ----

/// TTL/PTTL/EXPIRETIME/PEXPIRETIME: -2 absent, -1 no TTL.
pub fn ttl(r: &impl Source, key: &[u8], millis: bool, absolute: bool) -> Result<i64, StorageError> {
    let Some(m) = r.meta(key)? else { return Ok(-2) };
    if m.expire_ms == 0 {
        return Ok(-1);
    }
    let t = if absolute { m.expire_ms as i64 } else { (m.expire_ms as i64 - r.now_ms() as i64).max(0) };
    Ok(if millis { t } else { (t + 500) / 1000 })
}

pub fn type_name(r: &impl Source, key: &[u8]) -> Result<&'static str, StorageError> {
    Ok(r.meta(key)?.map(|m| m.kind.name()).unwrap_or("none"))
}

/// A key found by a metadata scan: its name, type and expiry (not its value).
pub struct ScannedKey {
    pub key: Bytes,
    pub kind: KeyType,
    pub expire_ms: u64,
}

impl ScannedKey {
    pub fn is_expired(&self, now_ms: u64) -> bool {
        crate::storage::meta::expired(self.expire_ms, now_ms)
    }
}

/// Walk stored keys (live or expired) of the reader's database in slots
/// `[slot_start, slot_end)` starting after `after` (a metadata key), visiting
/// at most `budget` entries. Returns the last metadata key visited if the
/// budget ran out, `None` if the range was exhausted.
pub fn walk_keys(
    r: &impl Source,
    slots: (u16, u32),
    after: Option<&[u8]>,
    budget: usize,
    mut f: impl FnMut(ScannedKey),
) -> Result<Option<Vec<u8>>, StorageError> {
    let (lo, to) = db_slot_range(r.db(), slots.0, slots.1);
    let from = match after {
        Some(a) if &a[..] >= &lo[..] => {
            let mut v = a.to_vec();
            v.push(0);
            v
        }
        _ => lo,
    };
    let mut visited = 0;
    let mut last = None;
    r.scan(Cf::Metadata, &from, &to, false, |k, v| {
        visited += 1;
        if let (Some((_, key)), Some((kind, expire_ms))) = (decode_meta_key(k), Meta::decode_header(v)) {
            f(ScannedKey { key: Bytes::copy_from_slice(key), kind, expire_ms });
        }
        if visited >= budget {
            last = Some(k.to_vec());
            return false;
        }
        true
    })?;
    Ok(last)
}

/// Like [`walk_keys`] over the slots from `from_slot` on, visiting only keys
/// alive at the reader's time.
pub fn scan_keys(
    r: &impl Source,
    slots: &SlotRanges,
    from_slot: u16,
    after: Option<&[u8]>,
    budget: usize,
    mut f: impl FnMut(ScannedKey),
) -> Result<Option<Vec<u8>>, StorageError> {
    let now = r.now_ms();
    let mut budget = budget;
    for (lo, hi) in ranges_from(slots, from_slot) {
        // The key a cursor stopped at counts only if its slot is where we resume.
        let after = after.filter(|_| lo == from_slot);
        let mut seen = 0;
        let last = walk_keys(r, (lo, hi), after, budget, |sk| {
            seen += 1;
            if !sk.is_expired(now) {
                f(sk)
            }
        })?;
        if last.is_some() {
            return Ok(last);
        }
        budget = budget.saturating_sub(seen).max(1);
    }
    Ok(None)
}

/// The slots a whole-keyspace command covers: every slot (`None`: standalone)
/// or, in cluster mode, the ranges `[start, end)` of the regions this node
/// leads, ascending, as a Redis Cluster node answers for its own slots (a
/// cluster client asks every master and adds up).
pub type SlotRanges = Option<Vec<(u16, u32)>>;

/// The ranges of `slots` at or after `from`.
fn ranges_from(slots: &SlotRanges, from: u16) -> Vec<(u16, u32)> {
    match slots {
        None => vec![(from, crate::cluster::SLOT_COUNT)],
        Some(v) => v.iter().filter(|r| r.1 > from as u32).map(|&(lo, hi)| (lo.max(from), hi)).collect(),
    }
}

/// KEYS pattern: every live key matching, in storage order.
pub fn keys(r: &impl Source, slots: &SlotRanges, pattern: &[u8]) -> Result<Vec<Bytes>, StorageError> {
    let all = pattern == b"*";
    let mut out = Vec::new();
    scan_keys(r, slots, 0, None, usize::MAX, |sk| {
        if all || glob_match(pattern, &sk.key, false) {
            out.push(sk.key);
        }
    })?;
    Ok(out)
}

/// DBSIZE: number of live keys.
pub fn dbsize(r: &impl Source, slots: &SlotRanges) -> Result<i64, StorageError> {
    let mut n = 0;
    scan_keys(r, slots, 0, None, usize::MAX, |_| n += 1)?;
    Ok(n)
}

/// Live keys RANDOMKEY chooses among: the first ones at or after a random slot.
const RANDOM_KEY_WINDOW: usize = 16;

/// RANDOMKEY: one of the first [`RANDOM_KEY_WINDOW`] live keys at or after a
/// random slot (wrapping), chosen by `pick`. Every key can come up (keys that
/// share a slot too); with at most the window's worth of keys the choice is
/// uniform, beyond it a key after a long run of empty slots comes up more often.
pub fn random_key(
    r: &impl Source,
    slots: &SlotRanges,
    start_slot: u16,
    pick: u64,
) -> Result<Option<Bytes>, StorageError> {
    let mut window = Vec::new();
    let now = r.now_ms();
    // From the start slot to the end, then from the beginning up to it.
    let mut ranges: Vec<(u32, u32)> =
        ranges_from(slots, start_slot).into_iter().map(|(lo, hi)| (lo as u32, hi)).collect();
    ranges.extend(ranges_from(slots, 0).into_iter().map(|(lo, hi)| (lo as u32, hi.min(start_slot as u32))));
    for (lo, hi) in ranges {
        if lo >= hi || window.len() == RANDOM_KEY_WINDOW {
            continue;
        }
        let (from, to) = db_slot_range(r.db(), lo as u16, hi);
        r.scan(Cf::Metadata, &from, &to, false, |k, v| {
            if let (Some((_, key)), Some((_, at))) = (decode_meta_key(k), Meta::decode_header(v)) {
                if !crate::storage::meta::expired(at, now) {
                    window.push(Bytes::copy_from_slice(key));
                }
            }
            window.len() < RANDOM_KEY_WINDOW
        })?;
    }
    Ok((!window.is_empty()).then(|| window.swap_remove((pick % window.len() as u64) as usize)))
}

/// The type filter SCAN accepts.
pub fn parse_type_name(name: &[u8]) -> Option<KeyType> {
    Some(match name.to_ascii_lowercase().as_slice() {
        b"string" => KeyType::String,
        b"hash" => KeyType::Hash,
        b"list" => KeyType::List,
        b"set" => KeyType::Set,
        b"zset" => KeyType::ZSet,
        b"stream" => KeyType::Stream,
        _ => return None,
    })
}
