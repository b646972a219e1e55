//! Where a request's keys are: the region they live in (standalone; cluster
//! mode routes by slot in `cluster::route`), CROSSSLOT, and the access records
//! their use leaves (OBJECT IDLETIME / FREQ).

use bytes::Bytes;

use super::session::Session;
use super::table::{flag, CommandSpec};
use crate::protocol::Reply;
use crate::shard::Core;

/// Redis Cluster's error for keys in different slots (here: regions).
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

/// The region all of a request's keys live in, from the row's key specs:
/// `Ok(None)` without keys, [`crate::shard::cross::ALL_REGIONS`] if they span
/// regions (standalone; cluster mode routes by slot in `cluster::route`).
pub fn region_of(core: &Core, spec: &CommandSpec, args: &[Bytes]) -> Result<Option<u32>, Reply> {
    region_at(core, spec.keys_of(args).as_deref(), args)
}

/// [`region_of`] for key positions already found.
pub fn region_at(core: &Core, at: Option<&[usize]>, args: &[Bytes]) -> Result<Option<u32>, Reply> {
    let Some(at) = at else { return Ok(None) };
    let router = core.shared.router();
    let mut region = None;
    for &i in at {
        let r = router.region_of_key(&args[i]).id;
        match region {
            None => region = Some(r),
            // Standalone: keys of several regions make a cross-region write
            // (`shard::cross`); a read reads one snapshot, whatever the region.
            Some(x) if x != r => return Ok(Some(crate::shard::cross::ALL_REGIONS)),
            _ => {}
        }
    }
    Ok(region)
}

/// Record that a command used its keys (Redis touches a key on lookup): OBJECT
/// IDLETIME and FREQ read these records (`shard::access`). Commands that look
/// without touching (`NO_TOUCH`) leave them, as does a client in CLIENT
/// NO-TOUCH mode (except for TOUCH itself); deletes (`FORGETS`) drop them.
pub fn record_access(core: &Core, session: &Session, spec: &CommandSpec, at: &[usize], args: &[Bytes]) {
    let keys = at.iter().filter_map(|&i| args.get(i)).map(|k| &k[..]);
    if spec.flags & flag::FORGETS != 0 {
        core.shared.access.forget(keys);
    } else if spec.flags & flag::NO_TOUCH == 0 && (!session.no_touch || spec.flags & flag::TOUCHES != 0) {
        let now_ms = session.now_ms;
        core.shared.access.touch(core.id, now_ms, keys);
    }
}
