//! What runs whole command lines inside apply ([`Executor`], the
//! `types::apply::Programs` every region's state machine is handed): a
//! transaction's commands (`txn` built the entry), a script or function
//! (`script`), and changes to the function libraries; and the stream writes
//! (`stream_apply`).

use std::sync::{Arc, Weak};

use super::in_apply::run_in_apply;
use super::session::Session;
use super::table::{flag::PROGRAM, Table};
use crate::pb;
use crate::protocol::Reply;
use crate::shard::Shared;
use crate::storage::StorageError;
use crate::types::apply::Programs;
use crate::types::coll::Rng;
use crate::types::ApplyCtx;

/// Runs transactions and scripts inside apply; handed to every region's
/// state machine.
pub struct Executor {
    shared: Weak<Shared>,
    table: &'static Table,
}

impl Executor {
    pub fn new(shared: &Arc<Shared>, table: &'static Table) -> Executor {
        Executor { shared: Arc::downgrade(shared), table }
    }
}

impl Programs for Executor {
    fn region_replaced(&self, _region: u32) {
        if let Some(shared) = self.shared.upgrade() {
            if let Err(e) = super::script::load_functions(&shared) {
                eprintln!("reloading function libraries after a snapshot: {e}");
            }
        }
    }

    fn split(&self, apply: &mut ApplyCtx, parent: u32, child: u32) {
        if let Some(shared) = self.shared.upgrade() {
            super::script::split_functions(&shared, apply, parent, child);
        }
    }

    fn exec(&self, apply: &mut ApplyCtx, op: &pb::Exec) -> Result<Reply, StorageError> {
        let Some(shared) = self.shared.upgrade() else { return Ok(Reply::error("ERR server shutting down")) };
        let mut rng = Rng::new(op.seed);
        let mut session = Session::detached(op.resp as u8, apply.now_ms);
        session.retry = op.retry;
        session.db = apply.ldb;
        apply.use_stream_limits(op.stream_limits.as_ref());
        let mut out = Vec::with_capacity(op.cmds.len());
        for argv in &op.cmds {
            out.push(run_in_apply(&shared, self.table, &mut session, apply, &mut rng, &argv.args)?);
        }
        Ok(Reply::Array(out))
    }

    fn eval(&self, apply: &mut ApplyCtx, op: &pb::Eval) -> Result<Reply, StorageError> {
        let Some(shared) = self.shared.upgrade() else { return Ok(Reply::error("ERR server shutting down")) };
        super::script::apply_eval(&shared, self.table, apply, op)
    }

    fn functions(&self, apply: &mut ApplyCtx, op: &pb::Functions) -> Result<Reply, StorageError> {
        let Some(shared) = self.shared.upgrade() else { return Ok(Reply::error("ERR server shutting down")) };
        super::script::apply_function_change(&shared, apply, op)
    }

    fn stream(&self, apply: &mut ApplyCtx, op: &pb::Stream) -> Result<Reply, StorageError> {
        super::stream_apply::apply(apply, op)
    }

    fn queues_script(&self, op: &pb::Exec) -> bool {
        op.cmds.iter().any(|argv| self.table.resolve(&argv.args).is_ok_and(|s| s.flags & PROGRAM != 0))
    }
}
