//! Consumer groups' commands: XREADGROUP, XGROUP, XACK, XCLAIM, XAUTOCLAIM,
//! XPENDING. Their writes are `pb::Stream` operations, run inside apply by
//! `cmd::stream_apply`; their rows are in `cmd::stream`'s table, their id
//! parsing and replies in `cmd::stream`.

use bytes::Bytes;

use super::ctx::help_reply as help;
use super::ctx::{Attempt, Block};
use super::key_specs as ks;
use super::shape::Shape;
use super::stream::{
    end_bound, int, int_or, message, nogroup, parse_read, quoted, read_stream, refuse_in_read_only, start_bound, stor,
    write,
};
use super::stream::{G, R, W};
use super::table::{container, flag::*, row, CommandSpec};
use super::{err, CmdError, CmdResult, Ctx, Plan};
use crate::pb::{self, stream::Op as S, write_cmd::Op, xgroup::Action, WriteCmd};
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::protocol::Reply;
use crate::types::blocked::Lane;
use crate::types::stream::{self as st, Sid};

fn xreadgroup(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let r = parse_read(args, true)?;
    if r.block.is_some() && ctx.session.in_script {
        return Err(err("ERR xreadgroup command is not allowed with BLOCK option from scripts"));
    }
    let Some((group, consumer)) = r.group.clone() else { return Err(ArgError::Syntax.into()) };
    let op = pb::Xreadgroup {
        group: group.clone(),
        consumer,
        count: r.count as u64,
        noack: r.noack,
        keys: r.keys.clone(),
        ids: r.ids.clone(),
    };
    // A history read is served at once; only `>` everywhere may wait.
    let all_new = r.ids.iter().all(|id| &id[..] == b">");
    match r.block {
        Some(ms) if all_new && !ctx.detached() => {
            let first = message(ctx, S::Xreadgroup(op));
            let retry = pb::Stream { retry: true, ..first.clone() };
            let cmd = |m: pb::Stream| WriteCmd { op: Some(Op::Stream(m)), db: ctx.session.db as u32, epoch: ctx.epoch };
            Ok(Plan::Block(Block {
                region: ctx.region.unwrap_or(0),
                attempt: Attempt::Write { cmd: cmd(first), retry: cmd(retry) },
                keys: r.keys.clone(),
                db: ctx.session.db,
                timeout: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
                shape: Shape::Natural,
                lane: Lane::Group(group),
            }))
        }
        _ => write(ctx, S::Xreadgroup(op)),
    }
}

// ---- XGROUP ----

fn subcommand_error(args: &[Bytes], container: &str) -> CmdError {
    let sub = args.get(1).map(|b| &b[..]).unwrap_or(b"");
    let sub = &sub[..sub.len().min(128)];
    quoted(&[
        b"ERR unknown subcommand or wrong number of arguments for '",
        sub,
        format!("'. Try {container} HELP.").as_bytes(),
    ])
}

/// ENTRIESREAD's value: `None` is Redis's -1 (unknown).
fn entries_read_opt(args: &[Bytes], from: usize, mkstream_ok: bool) -> Result<(Option<u64>, bool), CmdError> {
    let mut read = None;
    let mut mkstream = false;
    let mut i = from;
    while i < args.len() {
        if mkstream_ok && args[i].eq_ignore_ascii_case(b"mkstream") {
            mkstream = true;
            i += 1;
        } else if args[i].eq_ignore_ascii_case(b"entriesread") && i + 1 < args.len() {
            let n = int(&args[i + 1])?;
            if n < 0 && n != -1 {
                return Err(err("ERR value for ENTRIESREAD must be positive or -1"));
            }
            read = (n >= 0).then_some(n as u64);
            i += 2;
        } else {
            return Err(subcommand_error(args, "XGROUP"));
        }
    }
    Ok((read, mkstream))
}

fn xgroup_create(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    if args.len() > 8 {
        return Err(subcommand_error(args, "XGROUP"));
    }
    let (read, mkstream) = entries_read_opt(args, 5, true)?;
    let mut op = xgroup_op(Action::Create, args, read);
    (op.id, op.mkstream) = (args[4].clone(), mkstream);
    write(ctx, S::Xgroup(op))
}

fn xgroup_setid(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    if args.len() != 5 && args.len() != 7 {
        return Err(subcommand_error(args, "XGROUP"));
    }
    let (read, _) = entries_read_opt(args, 5, false)?;
    let mut op = xgroup_op(Action::Setid, args, read);
    op.id = args[4].clone();
    write(ctx, S::Xgroup(op))
}

fn xgroup_destroy(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    write(ctx, S::Xgroup(xgroup_op(Action::Destroy, args, None)))
}

fn xgroup_createconsumer(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let mut op = xgroup_op(Action::Createconsumer, args, None);
    op.consumer = args[4].clone();
    write(ctx, S::Xgroup(op))
}

fn xgroup_delconsumer(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let mut op = xgroup_op(Action::Delconsumer, args, None);
    op.consumer = args[4].clone();
    write(ctx, S::Xgroup(op))
}

/// XGROUP `action` of the key and group `args` name.
fn xgroup_op(action: Action, args: &[Bytes], read: Option<u64>) -> pb::Xgroup {
    pb::Xgroup {
        action: action as i32,
        key: args[2].clone(),
        group: args[3].clone(),
        has_read: read.is_some(),
        read: read.unwrap_or(0),
        ..Default::default()
    }
}

fn xgroup_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    help(&[
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
    ])
}

// ---- XACK, XCLAIM, XAUTOCLAIM ----

fn xack(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    write(ctx, S::Xack(pb::Xack { key: args[1].clone(), group: args[2].clone(), ids: args[3..].to_vec() }))
}

fn xclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let op = pb::Xclaim {
        key: args[1].clone(),
        group: args[2].clone(),
        consumer: args[3].clone(),
        args: args[4..].to_vec(),
    };
    write(ctx, S::Xclaim(op))
}

fn xautoclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    refuse_in_read_only(ctx)?;
    let min_idle = int_or(&args[4], "ERR Invalid min-idle-time argument for XAUTOCLAIM")?.max(0) as u64;
    let start = start_bound(&args[5])?;
    let mut count: u64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if args[j].eq_ignore_ascii_case(b"count") && more > 0 {
            let max = (i64::MAX / 16) as u64;
            count = parse_i64(&args[j + 1])
                .filter(|&n| n >= 1 && n as u64 <= max)
                .ok_or_else(|| err("ERR COUNT must be > 0"))? as u64;
            j += 1;
        } else if args[j].eq_ignore_ascii_case(b"justid") {
            justid = true;
        } else {
            return Err(ArgError::Syntax.into());
        }
        j += 1;
    }
    let op = pb::Xautoclaim {
        key: args[1].clone(),
        group: args[2].clone(),
        consumer: args[3].clone(),
        min_idle,
        start: Some(start.into()),
        count,
        justid,
    };
    write(ctx, S::Xautoclaim(op))
}

// ---- XPENDING ----

fn xpending(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(ArgError::Syntax.into());
    }
    let mut ext: Option<(u64, Sid, Sid, usize, Option<Bytes>)> = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if args[3].eq_ignore_ascii_case(b"idle") {
            min_idle = int(&args[4])?.max(0) as u64;
            if argc < 8 {
                return Err(ArgError::Syntax.into());
            }
            at += 2;
        }
        let count = int(&args[at + 2])?.max(0) as usize;
        let start = start_bound(&args[at])?;
        let end = end_bound(&args[at + 1])?;
        let consumer = args.get(at + 3).cloned();
        ext = Some((min_idle, start, end, count, consumer));
    }
    let (key, group) = (args[1].clone(), args[2].clone());
    let now = ctx.now_ms();
    ctx.read_key(&args[1], move |v| {
        let s = read_stream(v, &key)?;
        let g = match &s {
            Some(s) => stor(st::group(v, s, &group))?,
            None => None,
        };
        let (Some(s), Some(g)) = (s, g) else { return Err(nogroup(&key, &group)) };
        match &ext {
            None => {
                if g.pending == 0 {
                    return Ok(Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]));
                }
                let first = stor(st::pending(v, &s, &g.name, Sid::ZERO, Sid::MAX, 1, None, |_| true))?;
                let last = stor(st::last_pending(v, &s, &g.name))?;
                let mut per = Vec::new();
                for c in stor(st::consumers(v, &s, &g.name))? {
                    if c.pending > 0 {
                        per.push(Reply::Array(vec![
                            Reply::Bulk(c.name.clone()),
                            Reply::Bulk(Bytes::from(c.pending.to_string())),
                        ]));
                    }
                }
                Ok(Reply::Array(vec![
                    Reply::Int(g.pending as i64),
                    first.first().map_or(Reply::Nil, |p| Reply::Bulk(p.id.text())),
                    last.map_or(Reply::Nil, |id| Reply::Bulk(id.text())),
                    Reply::Array(per),
                ]))
            }
            Some((min_idle, start, end, count, consumer)) => {
                if let Some(c) = consumer {
                    if stor(st::consumer(v, &s, &g.name, c))?.is_none() {
                        return Ok(Reply::Array(Vec::new()));
                    }
                }
                let idle = |p: &st::Pending| (now as i64).wrapping_sub(p.delivered as i64);
                let min = *min_idle as i64;
                let list = stor(st::pending(v, &s, &g.name, *start, *end, *count, consumer.as_deref(), |p| {
                    min == 0 || idle(p) >= min
                }))?;
                Ok(Reply::Array(
                    list.into_iter()
                        .map(|p| {
                            Reply::Array(vec![
                                Reply::Bulk(p.id.text()),
                                Reply::Bulk(p.consumer.clone()),
                                Reply::Int(idle(&p).max(0)),
                                Reply::Int(p.deliveries as i64),
                            ])
                        })
                        .collect(),
                ))
            }
        }
    })
}

pub static COMMANDS: &[CommandSpec] = &[
    row("xreadgroup", -7, WRITE | BLOCKING, G, "5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", xreadgroup).key_specs(&[ks::spec(ks::RO | ks::ACCESS, ks::keyword("STREAMS", 4), ks::range(-1, 1, 2))]),
    row("xack", -4, WRITE | FAST, G, "5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", xack).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("xpending", -3, R, G, "5.0.0", "Returns the information and entries from a stream consumer group's pending entries list.", xpending).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1)]),
    row("xclaim", -6, WRITE | FAST, G, "5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", xclaim).key_specs(&[ks::key(ks::RW | ks::UPDATE, 1)]),
    row("xautoclaim", -6, WRITE | FAST, G, "6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", xautoclaim).key_specs(&[ks::key(ks::RW | ks::DELETE, 1)]),
    container("xgroup", 0, G, "5.0.0", "A container for consumer groups commands.", None),
    row("xgroup|create", -5, W, G, "5.0.0", "Creates a consumer group.", xgroup_create).key_specs(&[ks::key(ks::RW | ks::INSERT, 2)]),
    row("xgroup|setid", -5, WRITE, G, "5.0.0", "Sets the last-delivered ID of a consumer group.", xgroup_setid).key_specs(&[ks::key(ks::RW | ks::UPDATE, 2)]),
    row("xgroup|destroy", 4, WRITE, G, "5.0.0", "Destroys a consumer group.", xgroup_destroy).key_specs(&[ks::key(ks::RW | ks::DELETE, 2)]),
    row("xgroup|createconsumer", 5, W, G, "6.2.0", "Creates a consumer in a consumer group.", xgroup_createconsumer).key_specs(&[ks::key(ks::RW | ks::INSERT, 2)]),
    row("xgroup|delconsumer", 5, WRITE, G, "5.0.0", "Deletes a consumer from a consumer group.", xgroup_delconsumer).key_specs(&[ks::key(ks::RW | ks::DELETE, 2)]),
    row("xgroup|help", 2, LOADING | STALE, G, "5.0.0", "Returns helpful text about the different subcommands.", xgroup_help),
];
