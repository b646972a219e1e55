//! Introspection commands: MEMORY, OBJECT, ROLE, LOLWUT, WAIT (COMMAND GETKEYS
//! and GETKEYSANDFLAGS, with Redis's key specs, are `key_specs`). Handlers
//! first, table rows last.
//!
//! Where Redis's answer follows from its semantics (errors, HELP, ROLE, key
//! flags, WAIT on a server without replicas) NeoKV answers the same bytes; where
//! it is a measurement of Redis's own memory layout, NeoKV estimates:
//!
//! - MEMORY USAGE prices a key as Redis 7.0 would hold it (jemalloc size classes,
//!   sds headers, a dict entry; the encodings OBJECT ENCODING names), sampling
//!   up to SAMPLES elements of a collection as Redis does. Strings come out as
//!   Redis's figures; collections are the same model over NeoKV's elements.
//! - MEMORY STATS has Redis 7.0's keys in Redis's order. Allocator figures are
//!   glibc's (`mallinfo2`), RSS is /proc's; `dataset.bytes` is the MEMORY USAGE
//!   model summed over the keyspace (a scan of every key's metadata, off the
//!   reactor), so it is the data's size, not RocksDB's caches, and
//!   `overhead.total + dataset.bytes` is less than `total.allocated` by what the
//!   storage engine holds. `peak.allocated` is the highest figure seen by MEMORY
//!   STATS.
//! - MEMORY DOCTOR opens as Redis does for an instance with under 5 MB of data,
//!   and otherwise reports no issue.
//! - OBJECT IDLETIME / FREQ read the access records dispatch keeps
//!   (`shard::access`); OBJECT itself looks without touching.
//! - LOLWUT draws no art: every version answers `Redis ver. <version>\n` (what
//!   Redis 7.0 answers without VERSION 5 or 6), after checking the arguments
//!   those versions take.
//! - WAIT, standalone: NeoKV has no Redis replicas (its Raft replication is acknowledged
//!   before a write replies), so no replica ever acknowledges: `WAIT 0 t` answers
//!   0 at once, `WAIT n t` answers 0 after `t` ms, and `WAIT n 0` waits until the
//!   client disconnects, as Redis's would with no replica. Inside MULTI it
//!   answers at once. In cluster mode it counts the followers of the region of
//!   the connection's last write whose log holds it (a majority already does
//!   when the write is acknowledged), waiting up to the timeout for more.
//! - ROLE in cluster mode: `master` with the other members as replicas if this
//!   node leads any region (offsets: sums of log indexes over the regions it
//!   leads), otherwise `slave` of region 0's leader.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;

use super::ctx::help_reply as help;
use super::info::rss_bytes;
use super::key_specs as ks;
use super::table::{cat, container, flag::*, row, CommandSpec, Group};
use super::{err, reply, CmdResult, Ctx, Plan};
use crate::cluster::SLOT_COUNT;
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::Reply;
use crate::protocol::REDIS_VERSION;
use crate::shard::shared::heap_bytes;
use crate::storage::keys::{db_slot_range, decode_meta_key, KeyType};
use crate::storage::meta::{expired, Meta, CHUNKED, META_HEADER};
use crate::storage::{Cf, StorageError};
use crate::types::coll::{each, find, scan_page, Found};
use crate::types::Source;

// ---- Redis 7.0's memory model ----

/// `sizeof(robj)`, `sizeof(dictEntry)`, `sizeof(dict)`, a pointer.
const ROBJ: u64 = 16;
const DICT_ENTRY: u64 = 24;
const DICT: u64 = 56;
const PTR: u64 = 8;

/// jemalloc's size class for `n` bytes (what zmalloc_size reports): 8, steps of
/// 16 up to 128, then four classes per doubling.
fn alloc_size(n: u64) -> u64 {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return n.div_ceil(16) * 16;
    }
    let step = 1u64 << (63 - (n - 1).leading_zeros() - 2);
    n.div_ceil(step) * step
}

/// The allocation of an sds string of `len` bytes (header by length, NUL).
fn sds_size(len: u64) -> u64 {
    let header = match len {
        0..32 => 1,
        32..256 => 3,
        256..65_536 => 5,
        65_536..0x1_0000_0000 => 9,
        _ => 17,
    };
    alloc_size(header + len + 1)
}

/// Redis's encoding name for a string value.
fn string_encoding(v: &[u8]) -> &'static str {
    if v.len() <= 20 && parse_i64(v).is_some() {
        "int"
    } else if v.len() <= 44 {
        "embstr"
    } else {
        "raw"
    }
}

/// A string value as Redis holds it: an integer in the object, an embedded
/// string in the object's allocation, or an object pointing to an sds.
fn string_size(v: &[u8]) -> u64 {
    let len = v.len() as u64;
    match string_encoding(v) {
        "int" => ROBJ,
        "embstr" => alloc_size(ROBJ + 3 + len + 1),
        _ => ROBJ + sds_size(len),
    }
}

/// What a key's name costs in the main dict: its sds and the dict entry.
fn key_size(key: &[u8]) -> u64 {
    sds_size(key.len() as u64) + DICT_ENTRY
}

/// Slots of a dict holding `n` entries.
fn dict_slots(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        n.next_power_of_two().max(4)
    }
}

/// A listpack entry holding a string of `len` bytes (header, data, back-length).
fn listpack_entry(len: u64) -> u64 {
    let header = match len {
        0..64 => 1,
        64..4096 => 2,
        _ => 5,
    };
    let body = header + len;
    body + if body < 128 { 1 } else { 2 }
}

/// A collection of `n` elements whose elements cost `elem` bytes on average,
/// without its key (hashtable, hashtable, skiplist, quicklist: the encodings
/// OBJECT ENCODING reports).
fn collection_size(kind: KeyType, n: u64, elem: f64) -> u64 {
    let elems = (elem * n as f64) as u64;
    let table = DICT + dict_slots(n) * PTR;
    match kind {
        KeyType::String => 0,
        KeyType::Hash | KeyType::Set => ROBJ + table + elems,
        // zset struct, skiplist struct and its 32-level header node.
        KeyType::ZSet => ROBJ + 16 + 32 + table + alloc_size(24 + 32 * 16) + elems,
        // quicklist struct, and a node per 8 KB listpack.
        KeyType::List => ROBJ + 40 + elems.div_ceil(8192).max(1) * (32 + 8) + elems,
        // stream struct, and a radix tree node per 4 KB listpack.
        KeyType::Stream => ROBJ + 80 + elems.div_ceil(4096).max(1) * (48 + 8) + elems,
    }
}

/// One element of a collection as Redis holds it (`sub` and `v` as stored).
fn element_size(kind: KeyType, sub: &[u8], v: &[u8]) -> u64 {
    let sub_len = sub.len() as u64;
    match kind {
        KeyType::Hash => DICT_ENTRY + sds_size(sub_len) + sds_size(v.len() as u64),
        KeyType::Set => DICT_ENTRY + sds_size(sub_len),
        // dict entry, member sds, skiplist node (a level or two).
        KeyType::ZSet => DICT_ENTRY + sds_size(sub_len) + 48,
        KeyType::List => listpack_entry(v.len() as u64),
        KeyType::Stream => listpack_entry(v.len() as u64) + 3,
        KeyType::String => 0,
    }
}

/// A typical element, for keys priced without reading their elements.
fn typical_element(kind: KeyType) -> f64 {
    match kind {
        KeyType::String => 0.0,
        KeyType::List => listpack_entry(8) as f64,
        other => element_size(other, &[0; 8], &[0; 8]) as f64,
    }
}

/// MEMORY USAGE key [SAMPLES count]
fn memory_usage(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut samples = 5u64;
    let mut j = 3;
    while j < args.len() {
        if args[j].eq_ignore_ascii_case(b"SAMPLES") && j + 1 < args.len() {
            let n = parse_i64(&args[j + 1]).ok_or(ArgError::NotInteger)?;
            if n < 0 {
                return Err(ArgError::Syntax.into());
            }
            samples = if n == 0 { u64::MAX } else { n as u64 };
            j += 2;
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    let key = args[2].clone();
    let Some(meta) = ctx.reader().meta(&key)? else { return reply(Reply::Nil) };
    if meta.kind == KeyType::String && meta.chunked {
        // Longer than any embedded or integer string: an object and its sds.
        let len = crate::types::string::value_len(&meta);
        return reply(Reply::Int((key_size(&key) + ROBJ + sds_size(len)) as i64));
    }
    if meta.kind == KeyType::String {
        return reply(Reply::Int((key_size(&key) + string_size(&meta.payload)) as i64));
    }
    let kind = meta.kind;
    let size = meta.size().unwrap_or(0);
    ctx.walk_sized(samples.min(size), move |r| {
        let Some(found) = find(r, &key, kind)?? else { return Ok(Reply::Nil) };
        let n = found.coll.size;
        let (mut seen, mut bytes) = (0u64, 0u64);
        let count = usize::try_from(samples.min(n)).unwrap_or(usize::MAX);
        scan_page(r, Cf::Subkey, &found, None, count, |sub, v| {
            seen += 1;
            bytes += element_size(kind, sub, v);
        })?;
        let avg = if seen == 0 { 0.0 } else { bytes as f64 / seen as f64 };
        Ok(Reply::Int((key_size(&key) + collection_size(kind, n, avg)) as i64))
    })
}

/// What the keyspace holds, by the MEMORY USAGE model (collections at a
/// typical element size: pricing them exactly would read every element).
#[derive(Default)]
struct Dataset {
    keys: u64,
    expires: u64,
    bytes: u64,
}

/// Each database's [`dataset`], by logical number.
fn datasets(
    storage: &crate::storage::Storage,
    now_ms: u64,
    dbs: &crate::types::dbs::Dbs,
) -> Result<Vec<(usize, Dataset)>, StorageError> {
    (0..dbs.count())
        .map(|db| dataset(&crate::types::Reader::at(storage, now_ms).in_db(dbs.physical(db as u16))).map(|d| (db, d)))
        .collect()
}

fn dataset(r: &impl Source) -> Result<Dataset, StorageError> {
    let now = r.now_ms();
    let mut d = Dataset::default();
    let (from, to) = db_slot_range(r.db(), 0, SLOT_COUNT);
    r.scan(Cf::Metadata, &from, &to, false, |k, v| {
        let (Some((_, key)), Some((kind, at))) = (decode_meta_key(k), Meta::decode_header(v)) else { return true };
        if expired(at, now) {
            return true;
        }
        d.keys += 1;
        d.expires += (at != 0) as u64;
        let value = &v[META_HEADER..];
        let size = |value: &[u8]| value.get(8..16).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes).unwrap_or(0);
        d.bytes += key_size(key)
            + match kind {
                // A chunked value's metadata holds its length, not its bytes.
                KeyType::String if v[0] & CHUNKED != 0 => ROBJ + sds_size(size(value)),
                KeyType::String => string_size(value),
                _ => collection_size(kind, size(value), typical_element(kind)),
            };
        true
    })?;
    Ok(d)
}

/// The highest `total.allocated` MEMORY STATS has seen.
static PEAK: AtomicU64 = AtomicU64::new(0);

/// A ratio as Redis computes it (in `float`) and prints it (as a double).
fn ratio(a: u64, b: u64) -> Reply {
    Reply::Double((a as f32 / b.max(1) as f32) as f64)
}

/// A signed difference of two byte counts.
fn diff(a: u64, b: u64) -> Reply {
    Reply::Int((a as i128 - b as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64)
}

fn int(v: u64) -> Reply {
    Reply::Int(v.min(i64::MAX as u64) as i64)
}

/// MEMORY STATS: Redis 7.0's fields, in its order (see the module doc).
fn memory_stats(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let shared = ctx.shared;
    let (allocated, active) = heap_bytes();
    let rss = rss_bytes();
    let total = if allocated == 0 { rss } else { allocated };
    let peak = PEAK.fetch_max(total, Ordering::Relaxed).max(total);
    let startup = shared.startup_allocated.min(total);
    // A connection holds a read buffer, a reply buffer and a read scratch.
    let clients = shared.connected_clients() as u64 * 3 * 16 * 1024;
    let scripts = shared.scripts.len() as u64;
    let lua = scripts * (DICT_ENTRY + sds_size(40) + 64) + dict_slots(scripts) * PTR;
    let libraries: u64 =
        shared.functions.read().map(|f| f.values().map(|l| (l.len() + l.function_count()) as u64).sum()).unwrap_or(0);
    let functions = 200 + libraries * 128;
    let (storage, dbs) = (shared.storage.clone(), shared.dbs.clone());
    ctx.blocking(move |r| {
        let each = datasets(&storage, r.now_ms(), &dbs)?;
        let mut d = Dataset::default();
        for (_, x) in &each {
            d.keys += x.keys;
            d.expires += x.expires;
            d.bytes += x.bytes;
        }
        let s = |t: &str| Reply::bulk_str(t);
        let tables = |d: &Dataset| {
            let main = d.keys * (DICT_ENTRY + ROBJ) + dict_slots(d.keys) * PTR;
            (main, d.expires * DICT_ENTRY + dict_slots(d.expires) * PTR)
        };
        let overhead =
            startup + clients + lua + functions + each.iter().map(|(_, x)| tables(x).0 + tables(x).1).sum::<u64>();
        let net = total.saturating_sub(startup);
        let mut m = vec![
            (s("peak.allocated"), int(peak)),
            (s("total.allocated"), int(total)),
            (s("startup.allocated"), int(startup)),
            (s("replication.backlog"), Reply::Int(0)),
            (s("clients.slaves"), Reply::Int(0)),
            (s("clients.normal"), int(clients)),
            (s("cluster.links"), Reply::Int(0)),
            (s("aof.buffer"), Reply::Int(0)),
            (s("lua.caches"), int(lua)),
            (s("functions.caches"), int(functions)),
        ];
        for (db, x) in each.iter().filter(|(_, x)| x.keys > 0) {
            let (main, expires) = tables(x);
            m.push((
                s(&format!("db.{db}")),
                Reply::Map(vec![
                    (s("overhead.hashtable.main"), int(main)),
                    (s("overhead.hashtable.expires"), int(expires)),
                    (s("overhead.hashtable.slot-to-keys"), Reply::Int(0)),
                ]),
            ));
        }
        m.extend([
            (s("overhead.total"), int(overhead)),
            (s("keys.count"), int(d.keys)),
            (s("keys.bytes-per-key"), int(d.bytes.checked_div(d.keys).unwrap_or(0))),
            (s("dataset.bytes"), int(d.bytes)),
            (s("dataset.percentage"), Reply::Double((d.bytes as f32 * 100.0 / net.max(1) as f32) as f64)),
            (s("peak.percentage"), Reply::Double((total as f32 * 100.0 / peak.max(1) as f32) as f64)),
            (s("allocator.allocated"), int(allocated)),
            (s("allocator.active"), int(active)),
            (s("allocator.resident"), int(active)),
            (s("allocator-fragmentation.ratio"), ratio(active, allocated)),
            (s("allocator-fragmentation.bytes"), diff(active, allocated)),
            (s("allocator-rss.ratio"), ratio(active, active)),
            (s("allocator-rss.bytes"), Reply::Int(0)),
            (s("rss-overhead.ratio"), ratio(rss, active)),
            (s("rss-overhead.bytes"), diff(rss, active)),
            (s("fragmentation"), ratio(rss, total)),
            (s("fragmentation.bytes"), diff(rss, total)),
        ]);
        Ok(Reply::Map(m))
    })
}

const DOCTOR_EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";
const DOCTOR_FINE: &str =
    "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n";

/// MEMORY DOCTOR: Redis's opening for under 5 MB of data, else no issue found.
fn memory_doctor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let (storage, dbs) = (ctx.shared.storage.clone(), ctx.shared.dbs.clone());
    ctx.blocking(move |r| {
        let bytes: u64 = datasets(&storage, r.now_ms(), &dbs)?.iter().map(|(_, d)| d.bytes).sum();
        let text = if bytes < 5 << 20 { DOCTOR_EMPTY } else { DOCTOR_FINE };
        Ok(Reply::Verbatim(Bytes::from_static(text.as_bytes())))
    })
}

/// MEMORY MALLOC-STATS: Redis built without jemalloc answers this.
fn memory_malloc_stats(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::bulk_str("Stats not supported for the current allocator"))
}

/// MEMORY PURGE: give the allocator's free pages back to the system.
fn memory_purge(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory the allocator holds.
    unsafe {
        libc::malloc_trim(0);
    }
    reply(Reply::Ok)
}

fn memory_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
    ])
}

// ---- OBJECT ----

fn object_encoding(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = ctx.snap();
    let Some(m) = s.meta(&args[2])? else {
        return reply(Reply::Nil);
    };
    let enc = match m.kind {
        KeyType::String if m.chunked => "raw",
        // PFADD and PFMERGE build their value in place: raw in Redis, however short.
        KeyType::String if crate::types::hll::validate(&m.payload).is_ok() => "raw",
        KeyType::String => string_encoding(&m.payload),
        // Redis 7.0 keeps every list in a quicklist (a listpack alone is 7.2's).
        KeyType::List => "quicklist",
        KeyType::Stream => "stream",
        kind => {
            let Some(found) = Found::from_meta(s.db(), &args[2], m) else { return reply(Reply::Nil) };
            let limit = |name: &str, default: u64| {
                ctx.shared.config().param(name).and_then(|v| v.parse::<u64>().ok()).unwrap_or(default)
            };
            let (compact, big, entries, value) = match kind {
                KeyType::Hash => (
                    "listpack",
                    "hashtable",
                    limit("hash-max-listpack-entries", 512),
                    limit("hash-max-listpack-value", 64),
                ),
                KeyType::ZSet => (
                    "listpack",
                    "skiplist",
                    limit("zset-max-listpack-entries", 128),
                    limit("zset-max-listpack-value", 64),
                ),
                _ => ("intset", "hashtable", limit("set-max-intset-entries", 512), 0),
            };
            // The compact encoding while the key is small and its elements are
            // (an intset: integers only; a listpack: no field, value or member
            // longer than the limit). Judged by what the key holds now: Redis
            // never converts back, so a key that once grew past a limit and
            // shrank stays in the big encoding there. Walks at most 8192.
            let small = found.coll.size <= entries.min(8192) && {
                let mut fits = true;
                each(&s, Cf::Subkey, &found, false, |sub, v| {
                    fits = match kind {
                        KeyType::Set => sub.len() <= 20 && parse_i64(sub).is_some(),
                        KeyType::Hash => sub.len() as u64 <= value && v.len() as u64 <= value,
                        _ => sub.len() as u64 <= value,
                    };
                    fits
                })?;
                fits
            };
            if small {
                compact
            } else {
                big
            }
        }
    };
    reply(Reply::bulk_str(enc))
}

/// The configured maxmemory-policy, lowercased.
fn policy(ctx: &Ctx<'_>) -> String {
    ctx.shared.config().param("maxmemory-policy").unwrap_or("noeviction").to_ascii_lowercase()
}

fn lfu_policy(ctx: &Ctx<'_>) -> bool {
    policy(ctx).ends_with("-lfu")
}

fn object_freq(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.reader().meta(&args[2])?.is_none() {
        return reply(Reply::Nil);
    }
    if !lfu_policy(ctx) {
        return Err(err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."));
    }
    reply(Reply::Int(ctx.shared.access.freq(&args[2], ctx.now_ms()) as i64))
}

fn object_idletime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.reader().meta(&args[2])?.is_none() {
        return reply(Reply::Nil);
    }
    if lfu_policy(ctx) {
        return Err(err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."));
    }
    reply(Reply::Int(ctx.shared.access.idle_secs(&args[2], ctx.now_ms()) as i64))
}

/// Redis shares the objects of the integers 0..9999 (unless an LRU or LFU
/// policy needs per-key access data): their refcount reads INT_MAX.
fn object_refcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let Some(m) = ctx.reader().meta(&args[2])? else { return reply(Reply::Nil) };
    let shared_int = m.kind == KeyType::String
        && !m.chunked
        && string_encoding(&m.payload) == "int"
        && parse_i64(&m.payload).is_some_and(|v| (0..10_000).contains(&v))
        && !(policy(ctx).contains("lru") || policy(ctx).contains("lfu"));
    reply(Reply::Int(if shared_int { i32::MAX as i64 } else { 1 }))
}

fn object_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
    ])
}

// ---- ROLE, LOLWUT, WAIT ----

/// ROLE: standalone, a master without replicas at replication offset 0 (as
/// INFO says); in cluster mode see the module doc.
fn role(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let Some(nodes) = ctx.shared.nodes.as_deref() else {
        return reply(Reply::Array(vec![Reply::bulk_str("master"), Reply::Int(0), Reply::Array(Vec::new())]));
    };
    let rep = super::info::replication_summary(nodes);
    let host_port = |id: u64| {
        let addr = nodes.client_addr(id).unwrap_or_default();
        let (h, p) = addr.rsplit_once(':').unwrap_or((addr.as_str(), "0"));
        (h.to_string(), p.to_string())
    };
    if rep.led > 0 {
        let replicas = rep
            .followers
            .iter()
            .map(|(id, off)| {
                let (h, p) = host_port(*id);
                Reply::Array(vec![Reply::bulk_str(&h), Reply::bulk_str(&p), Reply::bulk_str(&off.to_string())])
            })
            .collect();
        return reply(Reply::Array(vec![
            Reply::bulk_str("master"),
            Reply::Int(rep.offset as i64),
            Reply::Array(replicas),
        ]));
    }
    let leader = nodes.leader(0).unwrap_or(0);
    let (h, p) = host_port(leader);
    reply(Reply::Array(vec![
        Reply::bulk_str("slave"),
        Reply::bulk_str(&h),
        Reply::Int(p.parse().unwrap_or(0)),
        Reply::bulk_str(if leader == 0 { "connect" } else { "connected" }),
        Reply::Int(rep.offset as i64),
    ]))
}

/// LOLWUT [VERSION version] [version's arguments]: see the module doc.
fn lolwut(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() >= 3 && args[1].eq_ignore_ascii_case(b"VERSION") {
        let v = parse_i64(&args[2]).ok_or(ArgError::NotInteger)?;
        // Redis reads the version as an unsigned int: 5 and 6 have their own
        // drawings, whose width and grid arguments (up to three) are integers.
        if matches!(v as u32, 5 | 6) {
            for a in args[3..].iter().take(3) {
                parse_i64(a).ok_or(ArgError::NotInteger)?;
            }
        }
    }
    reply(Reply::Verbatim(Bytes::from(format!("Redis ver. {REDIS_VERSION}\n"))))
}

/// WAIT numreplicas timeout: see the module doc.
fn wait(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let wanted = parse_i64(&args[1]).ok_or(ArgError::NotInteger)?;
    let ms = parse_i64(&args[2]).ok_or_else(|| err("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(err("ERR timeout is negative"));
    }
    if ctx.shared.nodes.is_some() && !ctx.detached() && !ctx.session.in_exec {
        let timeout = if ms == 0 { Duration::MAX } else { Duration::from_millis(ms as u64) };
        return Ok(Plan::WaitReplicas { replicas: wanted, timeout });
    }
    let acked = 0;
    if acked >= wanted || ctx.detached() || ctx.session.in_exec {
        return reply(Reply::Int(acked));
    }
    let d = if ms == 0 { Duration::MAX } else { Duration::from_millis(ms as u64) };
    Ok(Plan::Sleep(d, Reply::Int(acked)))
}

const S: Group = Group::Server;
const OBJ: u32 = READONLY | NO_TOUCH;

pub static COMMANDS: &[CommandSpec] = &[
    container("memory", 0, S, "4.0.0", "A container for memory diagnostics commands.", None),
    row("memory|doctor", 2, 0, S, "4.0.0", "Outputs a memory problems report.", memory_doctor),
    row(
        "memory|help",
        2,
        LOADING | STALE,
        S,
        "4.0.0",
        "Returns helpful text about the different subcommands.",
        memory_help,
    ),
    row("memory|malloc-stats", 2, 0, S, "4.0.0", "Returns the allocator statistics.", memory_malloc_stats),
    row("memory|purge", 2, 0, S, "4.0.0", "Asks the allocator to release memory.", memory_purge),
    row("memory|stats", 2, 0, S, "4.0.0", "Returns details about memory usage.", memory_stats),
    row("memory|usage", -3, OBJ, S, "4.0.0", "Estimates the memory usage of a key.", memory_usage).key_specs(&[ks::key(ks::RO, 2)]),
    container("object", 0, Group::Generic, "2.2.3", "A container for object introspection commands.", None),
    row(
        "object|encoding",
        3,
        OBJ,
        Group::Generic,
        "2.2.3",
        "Returns the internal encoding of a Redis object.",
        object_encoding,
    ).key_specs(&[ks::key(ks::RO, 2)]),
    row(
        "object|freq",
        3,
        OBJ,
        Group::Generic,
        "4.0.0",
        "Returns the logarithmic access frequency counter of a Redis object.",
        object_freq,
    ).key_specs(&[ks::key(ks::RO, 2)]),
    row(
        "object|idletime",
        3,
        OBJ,
        Group::Generic,
        "2.2.3",
        "Returns the time since the last access to a Redis object.",
        object_idletime,
    ).key_specs(&[ks::key(ks::RO, 2)]),
    row(
        "object|refcount",
        3,
        OBJ,
        Group::Generic,
        "2.2.3",
        "Returns the reference count of a value of a key.",
        object_refcount,
    ).key_specs(&[ks::key(ks::RO, 2)]),
    row(
        "object|help",
        2,
        LOADING | STALE,
        Group::Generic,
        "6.2.0",
        "Returns helpful text about the different subcommands.",
        object_help,
    ),
    row(
        "command|getkeysandflags",
        -4,
        LOADING | STALE,
        S,
        "7.0.0",
        "Extracts the key names and access flags for an arbitrary command.",
        super::server::command_getkeysandflags,
    ).cats(cat::CONNECTION),
    row(
        "role",
        1,
        NOSCRIPT | LOADING | STALE | FAST,
        S,
        "2.8.12",
        "Returns the replication role.",
        role,
    ).cats(cat::ADMIN | cat::DANGEROUS),
    row("lolwut", -1, READONLY | FAST, S, "5.0.0", "Displays computer art and the Redis version", lolwut),
    row(
        "wait",
        3,
        NOSCRIPT,
        Group::Generic,
        "3.0.0",
        "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.",
        wait,
    ).cats(cat::CONNECTION),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_follow_jemalloc_classes() {
        let classes: Vec<u64> = [1, 8, 9, 23, 49, 64, 129, 160, 161, 257, 1006, 5000].map(alloc_size).to_vec();
        assert_eq!(classes, vec![8, 8, 16, 32, 64, 64, 160, 160, 192, 320, 1024, 5120]);
    }

    #[test]
    fn strings_cost_what_redis_reports() {
        // MEMORY USAGE of `foo` in redis-server 7.0.15 (jemalloc).
        let usage = |v: &[u8]| key_size(b"foo") + string_size(v);
        assert_eq!(usage(b"bar"), 64);
        assert_eq!(usage(b"12345"), 48);
        assert_eq!(usage(&[b'a'; 44]), 96);
        assert_eq!(usage(&[b'a'; 45]), 112);
        assert_eq!(usage(&[b'a'; 1000]), 1072);
    }
}
