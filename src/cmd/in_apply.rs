//! One command line run inside apply, as a transaction's or a script's
//! command: the same handlers as on a connection, in `Env::Apply`.

use bytes::Bytes;

use super::ctx::{CmdError, Ctx, Env, Plan};
use super::session::Session;
use super::table::{Handler, Table};
use crate::protocol::Reply;
use crate::shard::Shared;
use crate::storage::StorageError;
use crate::types::coll::Rng;
use crate::types::ApplyCtx;

/// Run one command line inside apply, as part of a transaction or a script.
/// A storage failure is fatal for apply (as for any write); every other failure
/// is the command's error reply.
pub fn run_in_apply(
    shared: &Shared,
    table: &'static Table,
    session: &mut Session,
    apply: &mut ApplyCtx,
    rng: &mut Rng,
    args: &[Bytes],
) -> Result<Reply, StorageError> {
    let spec = match table.resolve(args) {
        Ok(s) => s,
        Err(r) => return Ok(r),
    };
    let (Handler::Fn(f) | Handler::Container(Some(f))) = spec.handler else {
        return Ok(Reply::error("ERR container command without subcommand"));
    };
    if apply.versions_left() == 0 {
        // Each command creates at most one composite key, whose version must stay
        // under the entry's index: a transaction this large is cut off here.
        return Ok(Reply::error("ERR too many commands in one transaction"));
    }
    // Each command in the session's database (a script before it may have
    // selected another for itself).
    apply.select(session.db);
    let mut ctx = Ctx::new(shared, session, table, spec, None, Env::Apply { apply, rng });
    Ok(match f(&mut ctx, args) {
        Ok(Plan::Reply(r)) => r,
        Ok(_) => Reply::error("ERR command cannot run inside a transaction"),
        Err(CmdError::Storage(e)) => return Err(e),
        Err(e) => e.into_reply(),
    })
}
