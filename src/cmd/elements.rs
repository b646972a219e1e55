//! What the Hash, Set and Sorted Set handlers share: the element scans (HSCAN,
//! SSCAN, ZSCAN) and the single random pick of HRANDFIELD / SRANDMEMBER /
//! ZRANDMEMBER without a count.

use bytes::Bytes;

use super::args::{cursor, ScanOpts};
use super::ctx::{reply, CmdResult, Ctx};
use crate::protocol::Reply;
use crate::storage::keys::KeyType;
use crate::storage::Cf;
use crate::types::coll::{find, scan_page, Rng};
use crate::types::glob::glob_match;
use crate::types::set as st;

/// Keys up to this size answer a `*SCAN` in one page.
pub const SMALL_SCAN: u64 = 128;

/// How a `*SCAN` shows one element: `out` gains the member/field (and value).
pub type Render = fn(&[u8], &[u8], &mut Vec<Reply>);

/// HSCAN / SSCAN / ZSCAN key cursor [MATCH pattern] [COUNT count]. A key of at
/// most [`SMALL_SCAN`] elements comes back whole with cursor 0 (as Redis does for
/// its compact encodings); bigger ones page by COUNT, the cursor naming where the
/// last page stopped (an unknown cursor starts over: elements may repeat, none is
/// skipped). Inside a transaction or a script every key comes back whole.
pub fn elem_scan(ctx: &mut Ctx<'_>, args: &[Bytes], kind: KeyType, render: Render) -> CmdResult {
    // Redis's order: the cursor, the key (absent: an empty page, options
    // unread), its type, then the options.
    let cursor = cursor(&args[2])?;
    let key = &args[1];
    let s = ctx.snap();
    let Some(found) = find(&s, key, kind)?? else {
        return reply(Reply::Array(vec![Reply::bulk_str("0"), Reply::Array(Vec::new())]));
    };
    let ScanOpts { count, pattern, .. } = ScanOpts::parse(&args[3..], false)?;
    let cursors = &ctx.shared.scan_cursors;
    let after = if cursor == 0 || ctx.detached() {
        None
    } else {
        cursors.lock().ok().and_then(|c| c.get(cursor)).and_then(|saved| {
            let klen = u32::from_be_bytes(saved.get(..4)?.try_into().ok()?) as usize;
            (saved.get(4..4 + klen)? == &key[..]).then(|| saved[4 + klen..].to_vec())
        })
    };
    let count = if found.coll.size <= SMALL_SCAN || ctx.detached() { usize::MAX } else { count };
    let mut out = Vec::new();
    let last = scan_page(&s, Cf::Subkey, &found, after.as_deref(), count, |sub, v| {
        if pattern.as_ref().is_none_or(|p| glob_match(p, sub, false)) {
            render(sub, v, &mut out);
        }
    })?;
    let next = match last {
        Some(sub) => {
            let mut saved = (key.len() as u32).to_be_bytes().to_vec();
            saved.extend_from_slice(key);
            saved.extend_from_slice(&sub);
            cursors.lock().map(|mut c| c.put(saved)).unwrap_or(0)
        }
        None => 0,
    };
    reply(Reply::Array(vec![Reply::bulk_str(&next.to_string()), Reply::Array(out)]))
}

/// HRANDFIELD / SRANDMEMBER / ZRANDMEMBER without count: one random field or
/// member, or nil.
pub fn random_one(ctx: &mut Ctx<'_>, key: &[u8], kind: KeyType) -> CmdResult {
    let seed = ctx.random();
    let s = ctx.snap();
    let Some(found) = find(&s, key, kind)?? else { return reply(Reply::Nil) };
    let got = st::pick(&s, &found, 1, &mut Rng::new(seed))?;
    reply(got.into_iter().next().map(Reply::Bulk).unwrap_or(Reply::Nil))
}
