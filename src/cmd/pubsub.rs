//! Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
//! SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB.
//!
//! Subscriptions live in the node-wide registry (`shard::pubsub`); a
//! subscribing connection keeps its side in its session (`session::SubState`) and its loop
//! delivers what arrives. Each (un)subscribe answers one frame per channel
//! (`>` pushes in RESP3); a RESP2 client with subscriptions may only run the
//! commands Redis allows in that context.

use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::ctx::{err, reply, CmdResult, Ctx};
use super::key_specs as ks;
use super::session::SubState;
use super::table::{container, flag::*, row, CommandSpec, Group};
use crate::protocol::Reply;
use crate::shard::pubsub::Kind;

const NAMES: [(&str, &str); 3] =
    [("subscribe", "unsubscribe"), ("psubscribe", "punsubscribe"), ("ssubscribe", "sunsubscribe")];

fn index(kind: Kind) -> usize {
    match kind {
        Kind::Channel => 0,
        Kind::Pattern => 1,
        Kind::Shard | Kind::Monitor => 2,
    }
}

fn subscribe_generic(ctx: &mut Ctx<'_>, args: &[Bytes], kind: Kind) -> CmdResult {
    if ctx.detached() {
        return Err(err("ERR This Redis command is not allowed from script"));
    }
    if kind == Kind::Shard && ctx.session.in_exec {
        return Err(err("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"));
    }
    let shared = ctx.shared;
    let entry = ctx.session.entry.clone();
    let state = ctx.session.pubsub.get_or_insert_with(|| SubState::new(entry.clone()));
    let mut frames = Vec::with_capacity(args.len() - 1);
    for name in &args[1..] {
        if state.set(kind).insert(name.clone()) {
            shared.pubsub.subscribe(kind, name.clone(), &state.sub);
        }
        frames.push(Reply::Push(vec![
            Reply::bulk_str(NAMES[index(kind)].0),
            Reply::Bulk(name.clone()),
            Reply::Int(state.count(kind)),
        ]));
    }
    entry.subs[index(kind)].store(state.set(kind).len(), Ordering::Relaxed);
    reply(Reply::Frames(frames))
}

fn unsubscribe_generic(ctx: &mut Ctx<'_>, args: &[Bytes], kind: Kind) -> CmdResult {
    let shared = ctx.shared;
    let entry = ctx.session.entry.clone();
    let name = NAMES[index(kind)].1;
    let Some(state) = ctx.session.pubsub.as_mut() else {
        let frames = if args.len() > 1 {
            args[1..]
                .iter()
                .map(|c| Reply::Push(vec![Reply::bulk_str(name), Reply::Bulk(c.clone()), Reply::Int(0)]))
                .collect()
        } else {
            vec![Reply::Push(vec![Reply::bulk_str(name), Reply::Nil, Reply::Int(0)])]
        };
        return reply(Reply::Frames(frames));
    };
    let targets: Vec<Bytes> =
        if args.len() > 1 { args[1..].to_vec() } else { state.set(kind).iter().cloned().collect() };
    let mut frames = Vec::with_capacity(targets.len().max(1));
    if targets.is_empty() {
        frames.push(Reply::Push(vec![Reply::bulk_str(name), Reply::Nil, Reply::Int(state.count(kind))]));
    }
    for t in targets {
        if state.set(kind).remove(&t) {
            shared.pubsub.unsubscribe(kind, &t, &state.sub);
        }
        frames.push(Reply::Push(vec![Reply::bulk_str(name), Reply::Bulk(t), Reply::Int(state.count(kind))]));
    }
    entry.subs[index(kind)].store(state.set(kind).len(), Ordering::Relaxed);
    reply(Reply::Frames(frames))
}

fn subscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_generic(ctx, args, Kind::Channel)
}
fn psubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_generic(ctx, args, Kind::Pattern)
}
fn ssubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_generic(ctx, args, Kind::Shard)
}
fn unsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_generic(ctx, args, Kind::Channel)
}
fn punsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_generic(ctx, args, Kind::Pattern)
}
fn sunsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_generic(ctx, args, Kind::Shard)
}

/// PUBLISH: delivered here and, in a cluster, handed to every other node; the
/// reply counts this node's receivers, as Redis Cluster's does.
fn publish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if let Some(core) = ctx.core() {
        core.broadcast_publish(false, &args[1], &args[2]);
    }
    reply(Reply::Int(ctx.shared.pubsub.publish(Kind::Channel, &args[1], &args[2]) as i64))
}

/// SPUBLISH: sent to the shard channel's leader (its key routes it), which
/// delivers it and hands it to the region's other members.
fn spublish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if let Some(core) = ctx.core() {
        core.broadcast_publish(true, &args[1], &args[2]);
    }
    reply(Reply::Int(ctx.shared.pubsub.publish(Kind::Shard, &args[1], &args[2]) as i64))
}

fn wrong_args(sub: &str) -> super::CmdError {
    err(format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try PUBSUB HELP."))
}

fn channels_generic(ctx: &mut Ctx<'_>, args: &[Bytes], shard: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(wrong_args(&String::from_utf8_lossy(&args[1])));
    }
    let list = ctx.shared.pubsub.channels(shard, args.get(2).map(|p| &p[..]));
    reply(Reply::Array(list.into_iter().map(Reply::Bulk).collect()))
}

fn numsub_generic(ctx: &mut Ctx<'_>, args: &[Bytes], shard: bool) -> CmdResult {
    let mut out = Vec::with_capacity(2 * args.len().saturating_sub(2));
    for c in &args[2..] {
        out.push(Reply::Bulk(c.clone()));
        out.push(Reply::Int(ctx.shared.pubsub.numsub(shard, c) as i64));
    }
    reply(Reply::Array(out))
}

fn pubsub_channels(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    channels_generic(ctx, args, false)
}
fn pubsub_shardchannels(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    channels_generic(ctx, args, true)
}
fn pubsub_numsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    numsub_generic(ctx, args, false)
}
fn pubsub_shardnumsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    numsub_generic(ctx, args, true)
}
fn pubsub_numpat(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    reply(Reply::Int(ctx.shared.pubsub.numpat() as i64))
}

fn pubsub_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let lines = [
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
    ];
    super::ctx::help_reply(&lines)
}

const P: Group = Group::PubSub;
const F: u32 = NOSCRIPT | LOADING | STALE;

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "subscribe",
        -2,
        F | PUBSUB | WHILE_SUBSCRIBED,
        P,
        "2.0.0",
        "Listens for messages published to channels.",
        subscribe,
    ),
    row(
        "unsubscribe",
        -1,
        F | PUBSUB | WHILE_SUBSCRIBED,
        P,
        "2.0.0",
        "Stops listening to messages posted to channels.",
        unsubscribe,
    ),
    row(
        "psubscribe",
        -2,
        F | PUBSUB | WHILE_SUBSCRIBED,
        P,
        "2.0.0",
        "Listens for messages published to channels that match one or more patterns.",
        psubscribe,
    ),
    row(
        "punsubscribe",
        -1,
        F | PUBSUB | WHILE_SUBSCRIBED,
        P,
        "2.0.0",
        "Stops listening to messages published to channels that match one or more patterns.",
        punsubscribe,
    ),
    row(
        "ssubscribe",
        -2,
        F | PUBSUB | WHILE_SUBSCRIBED,
        P,
        "7.0.0",
        "Listens for messages published to shard channels.",
        ssubscribe,
    )
    .key_specs(&[ks::spec(ks::NOT_KEY, ks::index(1), ks::range(-1, 1, 0))]),
    row(
        "sunsubscribe",
        -1,
        F | PUBSUB | WHILE_SUBSCRIBED,
        P,
        "7.0.0",
        "Stops listening to messages posted to shard channels.",
        sunsubscribe,
    )
    .key_specs(&[ks::spec(ks::NOT_KEY, ks::index(1), ks::range(-1, 1, 0))]),
    row(
        "publish",
        3,
        LOADING | STALE | FAST | PUBSUB | MAY_REPLICATE,
        P,
        "2.0.0",
        "Posts a message to a channel.",
        publish,
    ),
    row(
        "spublish",
        3,
        LOADING | STALE | FAST | PUBSUB | MAY_REPLICATE,
        P,
        "7.0.0",
        "Post a message to a shard channel",
        spublish,
    )
    .key_specs(&[ks::key(ks::NOT_KEY, 1)]),
    container("pubsub", 0, P, "2.8.0", "A container for Pub/Sub commands.", None),
    row("pubsub|channels", -2, LOADING | STALE | PUBSUB, P, "2.8.0", "Returns the active channels.", pubsub_channels),
    row(
        "pubsub|numsub",
        -2,
        LOADING | STALE | PUBSUB,
        P,
        "2.8.0",
        "Returns a count of subscribers to channels.",
        pubsub_numsub,
    ),
    row(
        "pubsub|numpat",
        2,
        LOADING | STALE | PUBSUB,
        P,
        "2.8.0",
        "Returns a count of unique pattern subscriptions.",
        pubsub_numpat,
    ),
    row(
        "pubsub|shardchannels",
        -2,
        LOADING | STALE | PUBSUB,
        P,
        "7.0.0",
        "Returns the active shard channels.",
        pubsub_shardchannels,
    ),
    row(
        "pubsub|shardnumsub",
        -2,
        LOADING | STALE | PUBSUB,
        P,
        "7.0.0",
        "Returns the count of subscribers of shard channels.",
        pubsub_shardnumsub,
    ),
    row(
        "pubsub|help",
        2,
        LOADING | STALE,
        P,
        "6.2.0",
        "Returns helpful text about the different subcommands.",
        pubsub_help,
    ),
];
