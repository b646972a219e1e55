//! DUMP and RESTORE: a key's value as Redis serializes it
//! (`protocol::rdb_value::Value`), read from any [`Source`], and written
//! inside apply as what a RESTORE of it leaves.

use bytes::Bytes;

use super::coll::{each, Found};
use super::notify;
use super::stream::{self as st, Limits, NewId, Sid, Stream};
use super::view::Source;
use super::{ApplyCtx, ApplyResult, TypeError};
use crate::pb;
use crate::protocol::cursor::parse_i64;
use crate::protocol::rdb_value::{self as rv, Value};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::{Coll, Meta};
use crate::storage::{Cf, StorageError};

fn sid(s: Sid) -> rv::Sid {
    rv::Sid { ms: s.ms, seq: s.seq }
}

fn nsid(s: rv::Sid) -> Sid {
    Sid::new(s.ms, s.seq)
}

/// The value of `key`, whose live metadata is `m`.
pub fn read(src: &impl Source, key: &[u8], m: Meta) -> Result<Value, StorageError> {
    if m.kind == KeyType::String {
        return Ok(Value::String(super::string::value(src, key, &m)?.to_vec()));
    }
    let kind = m.kind;
    let Some(found) = Found::from_meta(src.db(), key, m) else { return Ok(Value::String(Vec::new())) };
    let mut out = Vec::new();
    match kind {
        KeyType::List => {
            let items = super::list::elements(src, &found, 0, found.coll.size)?;
            return Ok(Value::List(items.into_iter().map(|b| b.to_vec()).collect()));
        }
        KeyType::Set => {
            each(src, Cf::Subkey, &found, false, |sub, _| {
                out.push((sub.to_vec(), Vec::new()));
                true
            })?;
            return Ok(Value::Set(out.into_iter().map(|(m, _)| m).collect()));
        }
        KeyType::Hash => {
            each(src, Cf::Subkey, &found, false, |sub, v| {
                out.push((sub.to_vec(), v.to_vec()));
                true
            })?;
            return Ok(Value::Hash(out));
        }
        KeyType::ZSet => {
            let mut z = Vec::new();
            each(src, Cf::Subkey, &found, false, |sub, v| {
                z.push((sub.to_vec(), super::zset::dec(v)));
                true
            })?;
            return Ok(Value::ZSet(z));
        }
        KeyType::Stream => {}
        KeyType::String => unreachable!("handled above"),
    }
    let Some(s) = st::open(src, key)?.ok().flatten() else { return Ok(Value::Stream(Default::default())) };
    read_stream(src, &s)
}

fn read_stream(src: &impl Source, s: &Stream) -> Result<Value, StorageError> {
    let entries = st::range(src, s, Sid::ZERO, Sid::MAX, usize::MAX, false)?
        .into_iter()
        .map(|(id, f)| (sid(id), f.chunks_exact(2).map(|p| (p[0].to_vec(), p[1].to_vec())).collect()))
        .collect();
    let mut groups = Vec::new();
    for g in st::groups(src, s)? {
        let pel = st::pending(src, s, &g.name, Sid::ZERO, Sid::MAX, usize::MAX, None, |_| true)?;
        let mut consumers = Vec::new();
        for c in st::consumers(src, s, &g.name)? {
            let own = st::pending(src, s, &g.name, Sid::ZERO, Sid::MAX, usize::MAX, Some(&c.name), |_| true)?;
            consumers.push(rv::Consumer {
                name: c.name.to_vec(),
                seen_time_ms: c.seen,
                pending: own.iter().map(|p| sid(p.id)).collect(),
            });
        }
        groups.push(rv::Group {
            name: g.name.to_vec(),
            last_id: sid(g.last),
            entries_read: g.read,
            pel: pel
                .iter()
                .map(|p| rv::Pending { id: sid(p.id), delivery_time_ms: p.delivered, delivery_count: p.deliveries })
                .collect(),
            consumers,
        });
    }
    let state = &s.state;
    Ok(Value::Stream(rv::Stream {
        entries,
        last_id: sid(state.last),
        first_id: sid(state.first),
        max_deleted_id: sid(state.max_deleted),
        entries_added: state.added,
        groups,
    }))
}

/// RESTORE (`pb::Restore`): the key free (or REPLACE), the TTL, the payload,
/// checked in Redis's order; then the value, with its expiry. A TTL already
/// past deletes what was there and stores nothing.
pub fn apply_restore(a: &mut ApplyCtx, op: &pb::Restore) -> ApplyResult {
    let key = &op.key[..];
    let old = a.live_meta(&a.mkey(key))?;
    if !op.replace && old.is_some() {
        return Ok(Err(TypeError::Msg("BUSYKEY Target key name already exists.")));
    }
    let Some(ttl) = parse_i64(&op.ttl) else { return Ok(Err(TypeError::NotInteger)) };
    if ttl < 0 {
        return Ok(Err(TypeError::Msg("ERR Invalid TTL value, must be >= 0")));
    }
    let value = match rv::decode(&op.payload) {
        Ok(v) => v,
        Err(e) => return Ok(Err(TypeError::Msg(e.message()))),
    };
    let now = a.now_ms;
    let at = match ttl {
        0 => 0,
        t if op.absttl => t as u64,
        t => now.saturating_add(t as u64),
    };
    if at != 0 && at <= now {
        if let Some(m) = &old {
            a.del_key(a.mkey(key), m);
            a.event(notify::GENERIC, "del", key);
        }
        return Ok(Ok(Reply::Ok));
    }
    write(a, key, value, at)?;
    a.event(notify::GENERIC, "restore", key);
    Ok(Ok(Reply::Ok))
}

/// Write `v` as `key`'s value, expiring at `expire_ms` (0: never), over
/// whatever `key` held (already checked: absent, or REPLACE).
pub fn write(a: &mut ApplyCtx, key: &[u8], v: Value, expire_ms: u64) -> Result<(), StorageError> {
    let mk = a.mkey(key);
    if let Some(old) = a.any_meta(&mk)? {
        a.del_any(mk.clone(), &old);
    }
    match v {
        Value::String(b) => {
            let meta = a.string_meta(key, expire_ms, &b);
            a.put_meta(mk, meta);
            return Ok(());
        }
        Value::List(items) => {
            let items: Vec<Bytes> = items.into_iter().map(Bytes::from).collect();
            super::list::store_list(a, key, &items)?;
        }
        Value::Set(members) => super::set::store_set(a, key, members.into_iter().map(Bytes::from).collect())?,
        Value::ZSet(members) => {
            super::zset::store(a, key, members.into_iter().map(|(m, s)| (Bytes::from(m), s)).collect())?
        }
        Value::Hash(pairs) => {
            if let Some(found) = a.replace_coll(key, KeyType::Hash, pairs.len() as u64)? {
                for (f, v) in pairs {
                    a.put_element(Cf::Subkey, found.element(&f), Bytes::from(v));
                }
            }
        }
        Value::Stream(s) => write_stream(a, key, s)?,
    }
    if expire_ms != 0 {
        if let Some(m) = a.live_meta(&mk)? {
            let Some(mut c) = Coll::from_meta(&m) else { return Ok(()) };
            c.expire_ms = expire_ms;
            a.put_meta_over(mk, Some(&m), c.encode());
        }
    }
    Ok(())
}

fn write_stream(a: &mut ApplyCtx, key: &[u8], v: rv::Stream) -> Result<(), StorageError> {
    let mut s = st::create(a, key);
    let lim = Limits::default();
    for (id, fields) in v.entries {
        let fv: Vec<Bytes> = fields.into_iter().flat_map(|(f, v)| [Bytes::from(f), Bytes::from(v)]).collect();
        // The payload's ids ascend (the decoder checks it): each is accepted.
        let _ = st::add(a, &mut s, NewId::Exact(nsid(id)), &fv, &lim)?;
    }
    s.state.last = nsid(v.last_id).max(s.state.last);
    s.state.max_deleted = nsid(v.max_deleted_id);
    s.state.added = v.entries_added;
    // As Redis loads them: the counters and the recorded first id are the payload's.
    s.state.first = nsid(v.first_id);
    for g in v.groups {
        let name = Bytes::from(g.name);
        let mut group = st::Group { name: name.clone(), last: nsid(g.last_id), read: g.entries_read, pending: 0 };
        let mut owner = std::collections::HashMap::new();
        for c in &g.consumers {
            for id in &c.pending {
                owner.insert(*id, Bytes::from(c.name.clone()));
            }
            st::put_consumer(
                a,
                &s,
                &name,
                &st::Consumer {
                    name: Bytes::from(c.name.clone()),
                    seen: c.seen_time_ms,
                    pending: c.pending.len() as u64,
                },
            );
        }
        for p in g.pel {
            let Some(who) = owner.get(&p.id) else { continue };
            let pending = st::Pending {
                id: nsid(p.id),
                consumer: who.clone(),
                delivered: p.delivery_time_ms,
                deliveries: p.delivery_count,
            };
            st::put_pending(a, &s, &mut group, None, &pending, |_, _, _| Ok(()))?;
        }
        st::put_group(a, &s, &group);
    }
    st::save(a, key, None, &mut s);
    Ok(())
}
