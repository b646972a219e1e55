//! Writing strings (as integers where Redis would) and lists (quicklists of
//! listpacks) for `encode`.

use super::listpack::{canonical_i64, Listpack};
use super::{LIST_NODE_BYTES, LIST_PLAIN_AT, QL_PACKED, QL_PLAIN, T_LIST_QUICKLIST_2};
use crate::protocol::rdb;

/// An RDB string, as an 8/16/32-bit integer where Redis would write one.
pub(super) fn put_string_or_int(out: &mut Vec<u8>, s: &[u8]) {
    match canonical_i64(s) {
        Some(v) if s.len() <= 11 => {
            if let Ok(v) = i8::try_from(v) {
                out.push(0xc0);
                out.push(v as u8);
            } else if let Ok(v) = i16::try_from(v) {
                out.push(0xc1);
                out.extend_from_slice(&v.to_le_bytes());
            } else if let Ok(v) = i32::try_from(v) {
                out.push(0xc2);
                out.extend_from_slice(&v.to_le_bytes());
            } else {
                rdb::put_string(out, s);
            }
        }
        _ => rdb::put_string(out, s),
    }
}

/// A quicklist of listpacks of at most 8 KB each (a bigger element gets a node
/// of its own), with elements of 1 GB or more in plain nodes, as Redis does.
pub(super) fn put_list(out: &mut Vec<u8>, items: &[Vec<u8>]) {
    let mut nodes: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut cur: Option<Listpack> = None;
    for item in items {
        if item.len() >= LIST_PLAIN_AT {
            nodes.extend(cur.take().map(|lp| (QL_PACKED, lp.finish())));
            nodes.push((QL_PLAIN, item.clone()));
            continue;
        }
        if cur.as_ref().is_some_and(|lp| lp.size() + Listpack::str_size(item) > LIST_NODE_BYTES) {
            nodes.extend(cur.take().map(|lp| (QL_PACKED, lp.finish())));
        }
        cur.get_or_insert_with(Listpack::new).push_str(item);
    }
    nodes.extend(cur.map(|lp| (QL_PACKED, lp.finish())));
    out.push(T_LIST_QUICKLIST_2);
    rdb::put_len(out, nodes.len() as u64);
    for (container, data) in &nodes {
        rdb::put_len(out, *container);
        rdb::put_string(out, data);
    }
}
