//! Stream writes inside apply: each `pb::Stream` operation (made by the
//! handlers of `cmd::stream` and `cmd::stream_group`) run over the entry's
//! state, the same on every replica. Arguments Redis judges only once it has
//! found the key (XDEL's and XACK's ids, XCLAIM's options, XGROUP's id,
//! XREADGROUP's ids) arrive as sent and are judged here, in Redis's order.

use bytes::Bytes;

use super::stream::{
    c_str, entries_reply, entry_reply, int_or, loose_id, no_such_group, nogroup, quoted, stor, streams_reply,
    strict_id, ReadArgs,
};
use super::{err, CmdError};
use crate::pb::{self, stream::Op as S};
use crate::protocol::Reply;
use crate::storage::StorageError;
use crate::types::notify::STREAM;
use crate::types::stream::{self as st, NewId, Sid, Stream, Trim};
use crate::types::{ApplyCtx, TypeError};

/// What an apply-side stream write needs of its client.
pub(super) struct Ctx2 {
    pub(super) resp: u8,
    pub(super) retry: bool,
}

/// Run the stream write `op`: its reply (a command's error as an error
/// reply); `Err` only if storage failed.
pub fn apply(a: &mut ApplyCtx, op: &pb::Stream) -> Result<Reply, StorageError> {
    a.use_stream_limits(op.limits.as_ref());
    let c = Ctx2 { resp: op.resp as u8, retry: op.retry };
    let r = match &op.op {
        Some(S::Xadd(o)) => xadd(a, o),
        Some(S::Xtrim(o)) => xtrim(a, o),
        Some(S::Xdel(o)) => xdel(a, o),
        Some(S::Xsetid(o)) => xsetid(a, o),
        Some(S::Xgroup(o)) => xgroup(a, o),
        Some(S::Xack(o)) => xack(a, o),
        Some(S::Xclaim(o)) => xclaim(a, o),
        Some(S::Xautoclaim(o)) => xautoclaim(a, o),
        Some(S::Xreadgroup(o)) => {
            let r = ReadArgs {
                count: o.count as usize,
                block: None,
                group: None,
                noack: o.noack,
                keys: o.keys.clone(),
                ids: o.ids.clone(),
            };
            readgroup(a, &c, &r, &o.group, &o.consumer)
        }
        None => Err(err("ERR unknown stream operation")),
    };
    match r {
        Ok(r) => Ok(r),
        Err(CmdError::Storage(e)) => Err(e),
        Err(e) => Ok(e.into_reply()),
    }
}

/// An id of the operation (absent: 0-0).
fn sid(id: Option<&pb::StreamId>) -> Sid {
    id.map_or(Sid::ZERO, Sid::from)
}

/// The stream at `key` for a write: `None` if absent.
pub(super) fn open_write(a: &ApplyCtx, key: &[u8]) -> Result<Option<(Stream, crate::storage::meta::Meta)>, CmdError> {
    Ok(stor(st::open_write(a, key))??)
}

// ---- XADD, XTRIM, XDEL, XSETID ----

/// An operation's trim: the strategy, `~`, and the LIMIT (`None`: `~`
/// without LIMIT, whose limit comes from the node limits).
fn trim_of(t: &pb::StreamTrim) -> (Trim, bool, Option<u64>) {
    let how = if t.minid { Trim::MinId(sid(t.min.as_ref())) } else { Trim::MaxLen(t.maxlen) };
    (how, t.approx, t.has_limit.then_some(t.limit))
}

fn xadd(a: &mut ApplyCtx, o: &pb::Xadd) -> Result<Reply, CmdError> {
    let key = &o.key;
    let (mut s, old) = match open_write(a, key)? {
        Some((s, m)) => (s, Some(m)),
        None if o.nomkstream => return Ok(Reply::Nil),
        None => (st::create(a, key), None),
    };
    let id = match (&o.exact, o.has_ms) {
        (Some(e), _) => NewId::Exact(Sid::from(e)),
        (None, true) => NewId::Ms(o.ms),
        (None, false) => NewId::Auto,
    };
    let lim = a.stream_limits;
    let id = match stor(st::add(a, &mut s, id, &o.fields, &lim))? {
        Ok(id) => id,
        // A new stream takes any id above 0-0: only an existing one refuses.
        Err(e) => return Err(err(e)),
    };
    a.event(STREAM, "xadd", key);
    if let Some((how, approx, limit)) = o.trim.as_ref().map(trim_of) {
        let limit = limit.unwrap_or(lim.default_trim_limit());
        if stor(st::trim(a, key, &mut s, how, approx, limit))? > 0 {
            a.event(STREAM, "xtrim", key);
        }
    }
    let old = match old {
        Some(m) => Some(m),
        None => stor(a.any_meta(&a.mkey(key)))?,
    };
    st::save(a, key, old.as_ref(), &mut s);
    Ok(Reply::Bulk(id.text()))
}

fn xtrim(a: &mut ApplyCtx, o: &pb::Xtrim) -> Result<Reply, CmdError> {
    let key = &o.key;
    let Some((mut s, old)) = open_write(a, key)? else { return Ok(Reply::Int(0)) };
    let Some((how, approx, limit)) = o.trim.as_ref().map(trim_of) else { return Ok(Reply::Int(0)) };
    let limit = limit.unwrap_or(a.stream_limits.default_trim_limit());
    let n = stor(st::trim(a, key, &mut s, how, approx, limit))?;
    if n > 0 {
        a.event(STREAM, "xtrim", key);
        st::save(a, key, Some(&old), &mut s);
    }
    Ok(Reply::Int(n as i64))
}

fn xdel(a: &mut ApplyCtx, o: &pb::Xdel) -> Result<Reply, CmdError> {
    let key = &o.key;
    let Some((mut s, old)) = open_write(a, key)? else { return Ok(Reply::Int(0)) };
    let ids = o.ids.iter().map(|a| strict_id(a)).collect::<Result<Vec<_>, _>>()?;
    let n = stor(st::delete(a, &mut s, &ids))?;
    if n > 0 {
        a.event(STREAM, "xdel", key);
        st::save(a, key, Some(&old), &mut s);
    }
    Ok(Reply::Int(n as i64))
}

fn xsetid(a: &mut ApplyCtx, o: &pb::Xsetid) -> Result<Reply, CmdError> {
    let key = &o.key;
    let Some((mut s, old)) = open_write(a, key)? else { return Err(TypeError::NoSuchKey.into()) };
    let added = o.has_added.then_some(o.added);
    stor(st::set_id(a, &mut s, sid(o.last.as_ref()), added, sid(o.max_deleted.as_ref())))?.map_err(err)?;
    a.event(STREAM, "xsetid", key);
    // Redis 7.0 does not signal the key: WATCH does not see XSETID.
    let mark = a.modified_mark();
    st::save(a, key, Some(&old), &mut s);
    a.not_modified_since(mark, key);
    Ok(Reply::Ok)
}

// ---- XREADGROUP ----

/// What an XREADGROUP asks of one stream.
#[derive(Clone, Copy)]
enum ReadFrom {
    /// `>`: entries never delivered to the group.
    New,
    /// The consumer's pending entries after this id.
    History(Sid),
}

/// One stream an XREADGROUP serves: its key, the stream, its metadata, the
/// group as it was, and where to read from.
type Served = (Bytes, Stream, crate::storage::meta::Meta, st::Group, ReadFrom);

fn readgroup(a: &mut ApplyCtx, c: &Ctx2, r: &ReadArgs, group: &[u8], consumer: &[u8]) -> Result<Reply, CmdError> {
    let found = readgroup_streams(a, c, r, group)?;
    // A retry that finds nothing writes nothing.
    if c.retry {
        let mut any = false;
        for (_, s, _, g, _) in &found {
            any |= !s.is_empty() && stor(st::last_live(a, s))? > g.last;
        }
        if !any {
            return Ok(Reply::NilArray);
        }
    }
    let now = a.now_ms;
    let count = if r.count == 0 { usize::MAX } else { r.count };
    let mut served = Vec::new();
    for (key, s, _, g, from) in found {
        // The group as this command left it (a stream named twice is served once).
        let mut g = stor(st::group(a, &s, group))?.unwrap_or(g);
        // Redis serves a stream when it reads history, or when the stream has
        // entries past the group's last id; only then is the consumer looked
        // up (created, its seen time set).
        if matches!(from, ReadFrom::New) && (s.is_empty() || stor(st::last_live(a, &s))? <= g.last) {
            continue;
        }
        let mut cons = match stor(st::consumer(a, &s, group, consumer))? {
            Some(cons) => cons,
            None => {
                a.event(STREAM, "xgroup-createconsumer", &key);
                st::Consumer { name: Bytes::copy_from_slice(consumer), seen: now, pending: 0 }
            }
        };
        cons.seen = now;
        st::put_consumer(a, &s, group, &cons);
        let reply = match from {
            ReadFrom::History(after) => serve_history(a, &s, group, &mut g, consumer, after, count, now)?,
            ReadFrom::New => match serve_new(a, &s, group, &mut g, &mut cons, r.noack, count, now)? {
                Some(reply) => reply,
                None => continue,
            },
        };
        served.push((key.clone(), reply));
        st::put_group(a, &s, &g);
        a.rewrote(&key);
    }
    if served.is_empty() {
        return Ok(Reply::NilArray);
    }
    Ok(streams_reply(c.resp, served))
}

/// Every stream and group an XREADGROUP names, checked before any is served
/// (as Redis checks them), with where each is read from.
fn readgroup_streams(a: &mut ApplyCtx, c: &Ctx2, r: &ReadArgs, group: &[u8]) -> Result<Vec<Served>, CmdError> {
    let mut found = Vec::with_capacity(r.keys.len());
    for (key, id) in r.keys.iter().zip(&r.ids) {
        let s = match open_write(a, key) {
            Ok(s) => s,
            Err(e) if c.retry => return Err(unblocked_gone(e)),
            Err(e) => return Err(e),
        };
        let g = match &s {
            Some((s, _)) => stor(st::group(a, s, group))?,
            None => None,
        };
        let exists = s.is_some();
        let (Some((s, old)), Some(g)) = (s, g) else {
            if c.retry {
                return Err(if !exists {
                    err("UNBLOCKED the stream key no longer exists")
                } else {
                    err("NOGROUP the consumer group this client was blocked on no longer exists")
                });
            }
            return Err(quoted(&[
                b"NOGROUP No such key '",
                c_str(key),
                b"' or consumer group '",
                c_str(group),
                b"' in XREADGROUP with GROUP option",
            ]));
        };
        let from = match &id[..] {
            // The largest id is how Redis marks `>`: it reads as `>`.
            b">" => ReadFrom::New,
            _ if strict_id(id).is_ok_and(|i| i == Sid::MAX) => ReadFrom::New,
            b"$" => {
                return Err(err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."));
            }
            _ => ReadFrom::History(strict_id(id)?),
        };
        found.push((key.clone(), s, old, g, from));
    }
    Ok(found)
}

/// XREADGROUP of a consumer's history: its pending entries after `after`,
/// each delivered once more (a deleted entry shows as nil).
#[allow(clippy::too_many_arguments)]
fn serve_history(
    a: &mut ApplyCtx,
    s: &Stream,
    group: &[u8],
    g: &mut st::Group,
    consumer: &[u8],
    after: Sid,
    count: usize,
    now: u64,
) -> Result<Reply, CmdError> {
    let mut out = Vec::new();
    if let Some(start) = after.next() {
        let pend = stor(st::pending(a, s, group, start, Sid::MAX, count, Some(consumer), |_| true))?;
        for mut p in pend {
            match stor(st::entry(a, s, p.id))? {
                Some(f) => {
                    out.push(entry_reply(p.id, f));
                    p.delivered = now;
                    p.deliveries += 1;
                    let before = p.clone();
                    stor(st::put_pending(a, s, g, Some(&before), &p, |_, _, _| Ok(())))?;
                }
                None => out.push(Reply::Array(vec![Reply::Bulk(p.id.text()), Reply::NilArray])),
            }
        }
    }
    Ok(Reply::Array(out))
}

/// XREADGROUP of `>`: the entries never delivered to the group, now
/// delivered to `cons` (pending unless NOACK). `None` if there are none.
#[allow(clippy::too_many_arguments)]
fn serve_new(
    a: &mut ApplyCtx,
    s: &Stream,
    group: &[u8],
    g: &mut st::Group,
    cons: &mut st::Consumer,
    noack: bool,
    count: usize,
    now: u64,
) -> Result<Option<Reply>, CmdError> {
    let Some(start) = g.last.next() else { return Ok(None) };
    let got = stor(st::range(a, s, start, Sid::MAX, count, false))?;
    let mut mine = 0i64;
    for (id, _) in &got {
        st::delivered(s, g, *id);
        if !noack {
            let old = stor(st::pending_entry(a, s, group, *id))?;
            let p = st::Pending { id: *id, consumer: cons.name.clone(), delivered: now, deliveries: 1 };
            let name = cons.name.clone();
            let s2 = s.clone();
            let group_name = g.name.clone();
            stor(st::put_pending(a, s, g, old.as_ref(), &p, |a, who, by| {
                if who == &name[..] {
                    mine += by;
                    Ok(())
                } else {
                    st::bump_consumer(a, &s2, &group_name, who, by)
                }
            }))?;
        }
    }
    if mine != 0 {
        cons.pending = cons.pending.saturating_add_signed(mine);
        st::put_consumer(a, s, group, cons);
    }
    Ok(Some(entries_reply(got)))
}

fn unblocked_gone(e: CmdError) -> CmdError {
    match e {
        CmdError::Type(TypeError::WrongType) => err("UNBLOCKED the stream key no longer exists"),
        e => e,
    }
}

// ---- XGROUP ----

const REQUIRES_KEY: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";

/// The stream and group an XGROUP subcommand names, checked as Redis does.
fn group_of(a: &ApplyCtx, key: &[u8], group: &[u8]) -> Result<(Stream, st::Group), CmdError> {
    let Some((s, _)) = open_write(a, key)? else { return Err(err(REQUIRES_KEY)) };
    match stor(st::group(a, &s, group))? {
        Some(g) => Ok((s, g)),
        None => Err(no_such_group(key, group)),
    }
}

fn xgroup(a: &mut ApplyCtx, o: &pb::Xgroup) -> Result<Reply, CmdError> {
    use pb::xgroup::Action;
    let key = &o.key;
    let read = o.has_read.then_some(o.read);
    match o.action() {
        Action::Create => {
            let (mut s, old) = match open_write(a, key)? {
                Some((s, m)) => (s, Some(m)),
                None if o.mkstream => (st::create(a, key), None),
                None => return Err(err(REQUIRES_KEY)),
            };
            let last = if &o.id[..] == b"$" { s.state.last } else { strict_id(&o.id)? };
            if stor(st::group(a, &s, &o.group))?.is_some() {
                return Err(err("BUSYGROUP Consumer Group name already exists"));
            }
            if old.is_none() {
                let expired = stor(a.any_meta(&a.mkey(key)))?;
                st::save(a, key, expired.as_ref(), &mut s);
            } else {
                a.rewrote(key);
            }
            st::put_group(a, &s, &st::Group { name: o.group.clone(), last, read, pending: 0 });
            a.event(STREAM, "xgroup-create", key);
            Ok(Reply::Ok)
        }
        Action::Setid => {
            let (s, mut g) = group_of(a, key, &o.group)?;
            g.last = if &o.id[..] == b"$" { s.state.last } else { loose_id(&o.id, 0)? };
            g.read = read;
            st::put_group(a, &s, &g);
            a.rewrote(key);
            a.event(STREAM, "xgroup-setid", key);
            Ok(Reply::Ok)
        }
        Action::Destroy => {
            let Some((s, _)) = open_write(a, key)? else { return Err(err(REQUIRES_KEY)) };
            let Some(g) = stor(st::group(a, &s, &o.group))? else { return Ok(Reply::Int(0)) };
            stor(st::destroy_group(a, &s, &g))?;
            a.rewrote(key);
            a.event(STREAM, "xgroup-destroy", key);
            Ok(Reply::Int(1))
        }
        Action::Createconsumer => {
            let (s, g) = group_of(a, key, &o.group)?;
            if stor(st::consumer(a, &s, &g.name, &o.consumer))?.is_some() {
                return Ok(Reply::Int(0));
            }
            let cons = st::Consumer { name: o.consumer.clone(), seen: a.now_ms, pending: 0 };
            st::put_consumer(a, &s, &g.name, &cons);
            a.rewrote(key);
            a.event(STREAM, "xgroup-createconsumer", key);
            Ok(Reply::Int(1))
        }
        Action::Delconsumer => {
            let (s, mut g) = group_of(a, key, &o.group)?;
            let mut n = 0;
            if let Some(cons) = stor(st::consumer(a, &s, &g.name, &o.consumer))? {
                n = stor(st::delete_consumer(a, &s, &mut g, &cons))?;
                st::put_group(a, &s, &g);
                a.rewrote(key);
            }
            a.event(STREAM, "xgroup-delconsumer", key);
            Ok(Reply::Int(n as i64))
        }
    }
}

// ---- XACK, XCLAIM, XAUTOCLAIM ----

/// A pending entry changes hands: the group's, old and new owner's counts.
fn move_pending(
    a: &mut ApplyCtx,
    s: &Stream,
    g: &mut st::Group,
    old: Option<&st::Pending>,
    p: &st::Pending,
) -> Result<(), CmdError> {
    let group = g.name.clone();
    let s2 = s.clone();
    stor(st::put_pending(a, s, g, old, p, |a, who, by| st::bump_consumer(a, &s2, &group, who, by)))
}

fn drop_pending(a: &mut ApplyCtx, s: &Stream, g: &mut st::Group, p: &st::Pending) -> Result<(), CmdError> {
    let group = g.name.clone();
    let s2 = s.clone();
    stor(st::drop_pending(a, s, g, p, |a, who, by| st::bump_consumer(a, &s2, &group, who, by)))
}

/// The claiming consumer, created on first use (`streamLookupConsumer` then
/// `streamCreateConsumer`); its seen time is the command's.
fn claimer(
    a: &mut ApplyCtx,
    key: &[u8],
    s: &Stream,
    g: &st::Group,
    name: &Bytes,
    now: u64,
) -> Result<st::Consumer, CmdError> {
    let c = match stor(st::consumer(a, s, &g.name, name))? {
        Some(c) => c,
        None => {
            a.event(STREAM, "xgroup-createconsumer", key);
            st::Consumer { name: name.clone(), seen: now, pending: 0 }
        }
    };
    let c = st::Consumer { seen: now, ..c };
    st::put_consumer(a, s, &g.name, &c);
    Ok(c)
}

fn xack(a: &mut ApplyCtx, o: &pb::Xack) -> Result<Reply, CmdError> {
    let Some((s, _)) = open_write(a, &o.key)? else { return Ok(Reply::Int(0)) };
    let Some(mut g) = stor(st::group(a, &s, &o.group))? else { return Ok(Reply::Int(0)) };
    let ids = o.ids.iter().map(|x| strict_id(x)).collect::<Result<Vec<_>, _>>()?;
    let mut n = 0;
    for id in ids {
        if let Some(p) = stor(st::pending_entry(a, &s, &g.name, id))? {
            drop_pending(a, &s, &mut g, &p)?;
            n += 1;
        }
    }
    if n > 0 {
        st::put_group(a, &s, &g);
        a.rewrote(&o.key);
    }
    Ok(Reply::Int(n))
}

fn xclaim(a: &mut ApplyCtx, o: &pb::Xclaim) -> Result<Reply, CmdError> {
    let args = &o.args;
    let key = &o.key;
    let Some((s, _)) = open_write(a, key)? else { return Err(nogroup(key, &o.group)) };
    let Some(mut g) = stor(st::group(a, &s, &o.group))? else { return Err(nogroup(key, &o.group)) };
    let min_idle = int_or(args.first().map_or(&b""[..], |b| &b[..]), "ERR Invalid min-idle-time argument for XCLAIM")?
        .max(0) as u64;
    let mut j = 1;
    let mut ids = Vec::new();
    while j < args.len() {
        match strict_id(&args[j]) {
            Ok(id) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let now = a.now_ms;
    let (mut force, mut justid) = (false, false);
    let mut delivery: Option<i64> = None;
    let mut retrycount: Option<i64> = None;
    let mut last_id = Sid::ZERO;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = &args[j];
        if opt.eq_ignore_ascii_case(b"force") {
            force = true;
        } else if opt.eq_ignore_ascii_case(b"justid") {
            justid = true;
        } else if opt.eq_ignore_ascii_case(b"idle") && more > 0 {
            j += 1;
            let idle = int_or(&args[j], "ERR Invalid IDLE option argument for XCLAIM")?;
            delivery = Some((now as i64).wrapping_sub(idle));
        } else if opt.eq_ignore_ascii_case(b"time") && more > 0 {
            j += 1;
            delivery = Some(int_or(&args[j], "ERR Invalid TIME option argument for XCLAIM")?);
        } else if opt.eq_ignore_ascii_case(b"retrycount") && more > 0 {
            j += 1;
            retrycount = Some(int_or(&args[j], "ERR Invalid RETRYCOUNT option argument for XCLAIM")?);
        } else if opt.eq_ignore_ascii_case(b"lastid") && more > 0 {
            j += 1;
            last_id = strict_id(&args[j])?;
        } else {
            return Err(quoted(&[b"ERR Unrecognized XCLAIM option '", c_str(opt), b"'"]));
        }
        j += 1;
    }
    let mut touched = false;
    if last_id > g.last {
        g.last = last_id;
        touched = true;
    }
    let delivery = match delivery {
        Some(t) if t >= 0 && (t as u64) <= now => t as u64,
        _ => now,
    };
    let mut claimer_rec: Option<st::Consumer> = None;
    let mut out = Vec::new();
    for id in ids {
        let old = stor(st::pending_entry(a, &s, &g.name, id))?;
        let Some(fields) = stor(st::entry(a, &s, id))? else {
            if let Some(p) = old {
                drop_pending(a, &s, &mut g, &p)?;
                touched = true;
            }
            continue;
        };
        let old = match old {
            Some(p) => {
                if min_idle > 0 && (now as i64).wrapping_sub(p.delivered as i64) < min_idle as i64 {
                    continue;
                }
                Some(p)
            }
            None if force => None,
            None => continue,
        };
        if claimer_rec.is_none() {
            claimer_rec = Some(claimer(a, key, &s, &g, &o.consumer, now)?);
        }
        let deliveries = match (retrycount, &old) {
            (Some(n), _) => n as u64,
            (None, Some(p)) if !justid => p.deliveries + 1,
            (None, Some(p)) => p.deliveries,
            // FORCE creates the pending entry delivered once, then counts this claim.
            (None, None) if !justid => 2,
            (None, None) => 1,
        };
        let p = st::Pending { id, consumer: o.consumer.clone(), delivered: delivery, deliveries };
        move_pending(a, &s, &mut g, old.as_ref(), &p)?;
        touched = true;
        out.push(if justid { Reply::Bulk(id.text()) } else { entry_reply(id, fields) });
    }
    if touched || claimer_rec.is_some() {
        st::put_group(a, &s, &g);
        a.rewrote(key);
    }
    Ok(Reply::Array(out))
}

fn xautoclaim(a: &mut ApplyCtx, o: &pb::Xautoclaim) -> Result<Reply, CmdError> {
    let key = &o.key;
    let (min_idle, count, justid) = (o.min_idle, o.count, o.justid);
    let Some((s, _)) = open_write(a, key)? else { return Err(nogroup(key, &o.group)) };
    let Some(mut g) = stor(st::group(a, &s, &o.group))? else { return Err(nogroup(key, &o.group)) };
    let now = a.now_ms;
    let mut attempts = count.saturating_mul(10);
    let mut left = count;
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut claimer_rec: Option<st::Consumer> = None;
    let mut cursor = sid(o.start.as_ref());
    let next: Sid;
    let mut touched = false;
    'scan: loop {
        let page = stor(st::pending(a, &s, &g.name, cursor, Sid::MAX, 64, None, |_| true))?;
        if page.is_empty() {
            next = Sid::ZERO;
            break;
        }
        for p in page {
            if attempts == 0 || left == 0 {
                next = p.id;
                break 'scan;
            }
            attempts -= 1;
            cursor = p.id.next().unwrap_or(Sid::MAX);
            let Some(fields) = stor(st::entry(a, &s, p.id))? else {
                drop_pending(a, &s, &mut g, &p)?;
                deleted.push(Reply::Bulk(p.id.text()));
                left -= 1;
                touched = true;
                continue;
            };
            if min_idle > 0 && (now as i64).wrapping_sub(p.delivered as i64) < min_idle as i64 {
                continue;
            }
            if claimer_rec.is_none() {
                claimer_rec = Some(claimer(a, key, &s, &g, &o.consumer, now)?);
            }
            let np = st::Pending {
                id: p.id,
                consumer: o.consumer.clone(),
                delivered: now,
                deliveries: if justid { p.deliveries } else { p.deliveries + 1 },
            };
            move_pending(a, &s, &mut g, Some(&p), &np)?;
            touched = true;
            claimed.push(if justid { Reply::Bulk(p.id.text()) } else { entry_reply(p.id, fields) });
            left -= 1;
            if p.id == Sid::MAX {
                next = Sid::ZERO;
                break 'scan;
            }
        }
    }
    if touched || claimer_rec.is_some() {
        st::put_group(a, &s, &g);
        a.rewrote(key);
    }
    Ok(Reply::Array(vec![Reply::Bulk(next.text()), Reply::Array(claimed), Reply::Array(deleted)]))
}
