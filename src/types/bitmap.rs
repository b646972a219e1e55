//! Bitmap writes (SETBIT, BITOP, BITFIELD) in apply, over string values. The
//! bit arithmetic is `bits`; the bytes come and go through `string`'s range
//! reads and writes, so a bit write on a chunked value rewrites one chunk
//! (O(chunk) whatever the value's length), as on a short inline one.

use bytes::Bytes;

use crate::pb;
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::meta::Meta;

use super::bits::{self, BitOp, FieldOp, FieldType};
use super::notify::{GENERIC, STRING};
use super::string::{read_range, value, value_len};
use super::view::Source;
use super::ApplyResult;
use super::{ApplyCtx, TypeError};

fn string_meta_of(ctx: &ApplyCtx, key: &[u8]) -> Result<Result<Option<Meta>, TypeError>, crate::storage::StorageError> {
    Ok(match ctx.live_meta(&ctx.mkey(key))? {
        Some(m) if m.kind != KeyType::String => Err(TypeError::WrongType),
        m => Ok(m),
    })
}

/// The bytes `[from, to)` of `key` (live metadata `m`, read from `src`),
/// zero-padded to the full width when the value is shorter.
pub fn window(
    src: &impl Source,
    key: &[u8],
    m: Option<&Meta>,
    from: u64,
    to: u64,
) -> Result<Vec<u8>, crate::storage::StorageError> {
    let mut w = match m {
        Some(m) => read_range(src, key, m, from, to)?,
        None => Vec::new(),
    };
    w.resize((to - from) as usize, 0);
    Ok(w)
}

pub fn apply_setbit(ctx: &mut ApplyCtx, op: &pb::Setbit) -> ApplyResult {
    let old = tri!(string_meta_of(ctx, &op.key)?);
    let byte = op.offset >> 3;
    let mask = 0x80u8 >> (op.offset & 7);
    let cur = window(ctx, &op.key, old.as_ref(), byte, byte + 1)?[0];
    let was = (cur & mask != 0) as i64;
    // As Redis: a bit set to what it was, in a string that need not grow, is
    // no write (no event, and WATCH sees nothing).
    let grows = old.as_ref().is_none_or(|m| byte >= value_len(m));
    if !grows && was == op.on as i64 {
        return Ok(Ok(Reply::Int(was)));
    }
    let new = if op.on { cur | mask } else { cur & !mask };
    ctx.write_string_range(&op.key, old.as_ref(), byte, &[new])?;
    ctx.event(STRING, "setbit", &op.key);
    Ok(Ok(Reply::Int(was)))
}

pub fn apply_bitop(ctx: &mut ApplyCtx, op: &pb::Bitop) -> ApplyResult {
    let which = match op.op {
        0 => BitOp::And,
        1 => BitOp::Or,
        2 => BitOp::Xor,
        _ => BitOp::Not,
    };
    // Each key is read once however often it is named (a big value named
    // many times costs its bytes once).
    let mut read: std::collections::HashMap<&[u8], Bytes> = std::collections::HashMap::new();
    let mut values: Vec<Bytes> = Vec::with_capacity(op.sources.len());
    for k in &op.sources {
        if let Some(v) = read.get(&k[..]) {
            values.push(v.clone());
            continue;
        }
        let v = match tri!(string_meta_of(ctx, k)?) {
            Some(m) => value(ctx, k, &m)?,
            None => Bytes::new(),
        };
        read.insert(&k[..], v.clone());
        values.push(v);
    }
    let srcs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
    let out = bits::bitop(which, &srcs);
    let mk = ctx.mkey(&op.dest);
    let old = ctx.any_meta(&mk)?;
    if out.is_empty() {
        if let Some(old) = old {
            let live = !old.is_expired(ctx.now_ms);
            ctx.del_any(mk, &old);
            if live {
                ctx.event(GENERIC, "del", &op.dest);
            }
        }
        return Ok(Ok(Reply::Int(0)));
    }
    let meta = ctx.string_meta(&op.dest, 0, &out);
    ctx.put_meta_over(mk, old.as_ref(), meta);
    ctx.event(STRING, "set", &op.dest);
    Ok(Ok(Reply::Int(out.len() as i64)))
}

/// The bytes a field at `bit` of type `t` spans: `[first, end)`.
pub fn field_bytes(bit: u64, t: FieldType) -> (u64, u64) {
    (bit >> 3, (bit + t.bits as u64 - 1) / 8 + 1)
}

pub fn apply_bitfield(ctx: &mut ApplyCtx, op: &pb::Bitfield) -> ApplyResult {
    let ops = match bits::parse_bitfield(&op.args, false) {
        Ok(ops) => ops,
        // Checked on the connection; a replica parses the same bytes alike.
        Err(e) => return Ok(Ok(Reply::Error(e.into()))),
    };
    let key = &op.key;
    let mut m = tri!(string_meta_of(ctx, key)?);
    // Redis grows (and creates) the value first, even if every write fails;
    // it then signals the key only if a write took effect (and, the value
    // having grown, every write that did not fail counts).
    let mark = ctx.modified_mark();
    let mut grew = false;
    if let Some(grow) = bits::bitfield_grow_len(&ops) {
        if grow > m.as_ref().map_or(0, value_len) {
            ctx.write_string_range(key, m.as_ref(), grow - 1, &[0])?;
            m = ctx.live_meta(&ctx.mkey(key))?;
            grew = true;
        }
    }
    let mut out = Vec::with_capacity(ops.len());
    let mut changes = 0;
    for f in &ops {
        let (t, bit) = match *f {
            FieldOp::Get { t, bit } | FieldOp::Set { t, bit, .. } | FieldOp::Incr { t, bit, .. } => (t, bit),
        };
        let (from, to) = field_bytes(bit, t);
        let mut w = window(ctx, key, m.as_ref(), from, to)?;
        let at = bit - from * 8;
        let old = bits::get_field(&w, at, t);
        let new = match *f {
            FieldOp::Get { .. } => {
                out.push(Reply::Int(old));
                continue;
            }
            FieldOp::Set { value, overflow, .. } => bits::set_value(value, t, overflow).map(|v| (v, old)),
            FieldOp::Incr { incr, overflow, .. } => bits::incr_field(old, incr, t, overflow).map(|v| (v, v)),
        };
        let Some((stored, shown)) = new else {
            out.push(Reply::Nil);
            continue;
        };
        out.push(Reply::Int(shown));
        let before = w.clone();
        bits::set_field(&mut w, at, t, stored);
        if w == before && !grew {
            // The value already there: no write, as in Redis.
            continue;
        }
        ctx.write_string_range(key, m.as_ref(), from, &w)?;
        m = ctx.live_meta(&ctx.mkey(key))?;
        changes += 1;
    }
    if changes > 0 {
        ctx.event(STRING, "setbit", key);
    } else if grew {
        ctx.not_modified_since(mark, key);
    }
    Ok(Ok(Reply::Array(out)))
}
