//! SORT and SORT_RO: handlers first, table rows last. The sorting is
//! `types::sort`; here are the grammar, where it runs, and STORE.
//!
//! A SORT that stores (and, in cluster mode, any SORT: a leader's read is only
//! linearizable through the log) is proposed as its operation (`pb::Sort`,
//! `types::sort::apply_sort`), so apply sorts and writes the destination
//! atomically, over the same state on every replica. Standalone with several regions, a BY or
//! GET pattern may name keys of any region: such a SORT ... STORE is a
//! cross-region write (`shard::cross`), as a script touching undeclared keys
//! is. Without STORE it reads one snapshot on the connection's core (the
//! blocking pool for a big collection).

use bytes::Bytes;

use super::key_specs as ks;
use super::table::{cat, flag::*, row, CommandSpec, Group};
use super::{CmdResult, Ctx, Shape};
use crate::cluster::key_slot;
use crate::pb::write_cmd::Op;
use crate::protocol::cursor::{parse_i64, ArgError};
use crate::types::sort::{items_reply, sort, SortSpec};

/// Redis Cluster's refusal of a pattern whose keys may lie in other slots.
fn denied(option: &str) -> super::CmdError {
    super::err(format!(
        "ERR {option} option of SORT denied in Cluster mode when keys formed by the pattern may be in different slots."
    ))
}

/// The one slot every key a pattern forms hashes to, if there is one (Redis's
/// patternHashSlot): a `{tag}` before any wildcard, or a pattern without any.
fn pattern_slot(p: &[u8]) -> Option<u16> {
    let mut open = None;
    for (i, &c) in p.iter().enumerate() {
        match c {
            b'*' | b'?' | b'[' | b'\\' => return None,
            b'{' if open.is_none() => open = Some(i),
            b'}' => match open {
                Some(s) if i == s + 1 => open = Some(usize::MAX),
                Some(s) if s != usize::MAX => return Some(key_slot(&p[s..=i])),
                _ => {}
            },
            _ => {}
        }
    }
    Some(key_slot(p))
}

/// Parse SORT's options as Redis does: left to right, the last of each
/// winning; STORE only for SORT (a syntax error for SORT_RO).
fn parse(ctx: &Ctx<'_>, args: &[Bytes], read_only: bool) -> Result<SortSpec, super::CmdError> {
    let mut spec = SortSpec::new();
    let cluster = ctx.shared.nodes.is_some();
    let same_slot = |p: &[u8]| pattern_slot(p) == Some(key_slot(&args[1]));
    let mut j = 2;
    while j < args.len() {
        let a = &args[j][..];
        let left = args.len() - j - 1;
        if a.eq_ignore_ascii_case(b"asc") {
            spec.desc = false;
        } else if a.eq_ignore_ascii_case(b"desc") {
            spec.desc = true;
        } else if a.eq_ignore_ascii_case(b"alpha") {
            spec.alpha = true;
        } else if a.eq_ignore_ascii_case(b"limit") && left >= 2 {
            spec.offset = parse_i64(&args[j + 1]).ok_or(ArgError::NotInteger)?;
            spec.count = parse_i64(&args[j + 2]).ok_or(ArgError::NotInteger)?;
            j += 2;
        } else if !read_only && a.eq_ignore_ascii_case(b"store") && left >= 1 {
            spec.store = Some(args[j + 1].clone());
            j += 1;
        } else if a.eq_ignore_ascii_case(b"by") && left >= 1 {
            let p = &args[j + 1];
            // Redis reads the pattern as a C string.
            let c = memchr::memchr(0, p).map_or(&p[..], |n| &p[..n]);
            if memchr::memchr(b'*', c).is_none() {
                spec.dontsort = true;
            } else if cluster && !same_slot(p) {
                return Err(denied("BY"));
            }
            spec.by = Some(p.clone());
            j += 1;
        } else if a.eq_ignore_ascii_case(b"get") && left >= 1 {
            let p = &args[j + 1];
            if cluster && &p[..] != b"#" && !same_slot(p) {
                return Err(denied("GET"));
            }
            spec.gets.push(p.clone());
            j += 1;
        } else {
            return Err(ArgError::Syntax.into());
        }
        j += 1;
    }
    if spec.dontsort {
        spec.by = None;
    }
    Ok(spec)
}

fn sort_cmd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    sort_generic(ctx, args, false)
}

fn sort_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    sort_generic(ctx, args, true)
}

fn sort_generic(ctx: &mut Ctx<'_>, args: &[Bytes], read_only: bool) -> CmdResult {
    let spec = parse(ctx, args, read_only)?;
    let cluster = ctx.shared.nodes.is_some();
    let detached = ctx.detached();
    if spec.store.is_some() || (cluster && !read_only && !detached) {
        // Sorted (and stored) inside apply: see the module doc.
        let standalone_regions = !cluster && ctx.shared.router().regions().len() > 1;
        let region = if standalone_regions && spec.reads_other_keys() {
            crate::shard::cross::ALL_REGIONS
        } else {
            ctx.region.unwrap_or(0)
        };
        return ctx.write_to(region, Op::Sort(spec.to_op(args[1].clone())), Shape::Natural);
    }
    let key = args[1].clone();
    ctx.walk([&args[1]], move |view| Ok(items_reply(sort(view, &key, &spec, detached)??)))
}

const G: Group = Group::Generic;

pub static COMMANDS: &[CommandSpec] = &[
    row(
        "sort",
        -2,
        WRITE | DENYOOM | READS_INLINE,
        G,
        "1.0.0",
        "Sort the elements in a list, set or sorted set",
        sort_cmd,
    ).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1), ks::spec(ks::RO | ks::ACCESS, ks::UNKNOWN_BEGIN, ks::UNKNOWN_FIND).notes("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"), ks::spec(ks::OW | ks::UPDATE, ks::UNKNOWN_BEGIN, ks::UNKNOWN_FIND).notes("For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array")]).key_proc(ks::KeyProc::Sort { store: true })
    .cats(cat::SET | cat::SORTEDSET | cat::LIST | cat::DANGEROUS),
    row(
        "sort_ro",
        -2,
        READONLY,
        G,
        "7.0.0",
        "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
        sort_ro,
    ).key_specs(&[ks::key(ks::RO | ks::ACCESS, 1), ks::spec(ks::RO | ks::ACCESS, ks::UNKNOWN_BEGIN, ks::UNKNOWN_FIND).notes("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort")]).key_proc(ks::KeyProc::Sort { store: false })
    .cats(cat::SET | cat::SORTEDSET | cat::LIST | cat::DANGEROUS),
];
