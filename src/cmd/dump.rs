//! DUMP and RESTORE, in Redis 7.0's serialization (an RDB version 10 object
//! and its CRC64: `protocol::rdb_value`), so values move between NeoKV and
//! redis-server both ways.
//!
//! DUMP reads the key over one snapshot (a big key on the blocking pool).
//! RESTORE is proposed as its operation with the payload (`pb::Restore`):
//! apply checks BUSYKEY, the TTL and the payload in Redis's order, and writes
//! the value with its TTL (`types::dump::apply_restore`).

use bytes::Bytes;

use super::ctx::READONLY_SCRIPT;
use super::key_specs as ks;
use super::table::{cat, flag::*, row, CommandSpec, Group};
use super::{err, CmdError, CmdResult, Ctx, Shape};
use crate::pb::{self, write_cmd::Op};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::rdb_value;
use crate::protocol::Reply;
use crate::types::Source;

fn dump(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[1].clone();
    ctx.walk([&args[1]], move |v| {
        let Some(m) = v.meta(&key)? else { return Ok(Reply::Nil) };
        let value = crate::types::dump::read(v, &key, m)?;
        Ok(Reply::Bulk(Bytes::from(rdb_value::encode(&value))))
    })
}

/// RESTORE's options.
struct Opts {
    replace: bool,
    absttl: bool,
    idle: Option<u64>,
    freq: Option<u8>,
}

fn options(args: &[Bytes]) -> Result<Opts, CmdError> {
    let mut o = Opts { replace: false, absttl: false, idle: None, freq: None };
    let mut j = 4;
    while j < args.len() {
        let more = args.len() - j - 1;
        let a = &args[j];
        if a.eq_ignore_ascii_case(b"replace") {
            o.replace = true;
        } else if a.eq_ignore_ascii_case(b"absttl") {
            o.absttl = true;
        } else if a.eq_ignore_ascii_case(b"idletime") && more > 0 && o.freq.is_none() {
            j += 1;
            let n = parse_i64(&args[j]).ok_or(ArgError::NotInteger)?;
            if n < 0 {
                return Err(err("ERR Invalid IDLETIME value, must be >= 0"));
            }
            o.idle = Some(n as u64);
        } else if a.eq_ignore_ascii_case(b"freq") && more > 0 && o.idle.is_none() {
            j += 1;
            let n = parse_i64(&args[j]).ok_or(ArgError::NotInteger)?;
            if !(0..=255).contains(&n) {
                return Err(err("ERR Invalid FREQ value, must be >= 0 and <= 255"));
            }
            o.freq = Some(n as u8);
        } else {
            return Err(ArgError::Syntax.into());
        }
        j += 1;
    }
    Ok(o)
}

fn restore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.read_only() {
        return Err(err(READONLY_SCRIPT));
    }
    let o = options(args)?;
    // The access record IDLETIME and FREQ set is this core's, kept outside
    // the log (OBJECT IDLETIME / FREQ read it).
    if !ctx.detached() && (o.idle.is_some() || o.freq.is_some()) {
        if let Some(core) = ctx.core() {
            let now = ctx.now_ms();
            ctx.shared.access.set(core.id, &args[1], now, o.idle.map(|s| s.saturating_mul(1000)), o.freq);
        }
    }
    let op = pb::Restore {
        key: args[1].clone(),
        ttl: args[2].clone(),
        payload: args[3].clone(),
        replace: o.replace,
        absttl: o.absttl,
    };
    ctx.write(Op::Restore(op), Shape::Natural)
}

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "dump",
        2,
        READONLY,
        Group::Generic,
        "2.6.0",
        "Returns a serialized representation of the value stored at a key.",
        dump,
    )
    .key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row(
        "restore",
        -4,
        WRITE | DENYOOM,
        Group::Generic,
        "2.6.0",
        "Creates a key from the serialized representation of a value.",
        restore,
    )
    .key_specs(&[ks::key(ks::OW | ks::UPDATE, 1)])
    .cats(cat::KEYSPACE | cat::DANGEROUS),
];
