//! The state machine of one region: applies committed entries to the data column
//! families in ONE RocksDB write batch per apply call, together with the applied
//! log id, and hands each command's reply back through openraft's responder.
//!
//! Snapshots: the data already lives in RocksDB, so a snapshot this node takes
//! is its metadata once the applied state is durable there
//! ([`Storage::persist_applied`]: the WAL fsynced, or with segment logs, where
//! apply writes past the WAL, every memtable flushed in one atomic flush);
//! only then may openraft purge the log up to it. A crash before that loses
//! applied state from the memtables, never from the log: the restart replays
//! the log from the applied index RocksDB holds, which was written in the same
//! batches as the data it covers. Shipping one to another node reads the
//! region from a RocksDB snapshot (`raft::snapshot`); the receiver stages it in
//! SST files and installs them here (`storage::ingest`).

use std::io;
use std::rc::Rc;
use std::sync::Arc;

use futures_util::StreamExt;
use openraft::storage::{EntryResponder, RaftStateMachine, Snapshot};
use openraft::{EntryPayload, OptionalSend, RaftSnapshotBuilder};

use super::codec::{
    decode_applied, decode_applied_full, decode_span, encode_applied, encode_applied_full, encode_applied_spanned,
    invalid, Removed,
};
use super::cross::{Arrival, Met, Txn, CUT};
use super::{LogId, SnapshotMeta, StoredMembership, TypeConfig};
use crate::cluster::nodes::Nodes;
use crate::cluster::{child_id, Descriptor};
use crate::pb::write_cmd::Op;
use crate::protocol::Reply;
use crate::storage::keys::{decode_meta_key, decode_voided_key, state_key, voided_key, StateKind};
use crate::storage::{Cf, Storage};
use crate::types::apply::Kept;
use crate::types::apply::Programs;
use crate::types::blocked::Blocked;
use crate::types::cache::Epochs;
use crate::types::watches::Watches;
use crate::types::write::{apply_cmd, runs_long};
use crate::types::ApplyCtx;

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// Snapshot payload. A snapshot this node took carries no data (the data is
/// in RocksDB; `raft::snapshot` reads it when shipping); one received from the
/// leader carries the region's entries until it is installed.
#[derive(Debug, Default)]
pub enum SnapshotData {
    #[default]
    Local,
    Received {
        /// One SST file per data column family, each replacing the region's range.
        staged: crate::storage::ingest::Staged,
        now_ms: u64,
        /// The nodes the leader's replica had seen removed (and the
        /// incarnations removed).
        removed: Removed,
        /// The region's slots and epoch as of the snapshot, if a split
        /// changed them.
        span: Option<Descriptor>,
    },
}

/// What a region's state machine shares with the rest of the node.
#[derive(Clone)]
pub struct RegionDeps {
    pub storage: Storage,
    /// Write epochs that keep every core's read cache exact.
    pub epochs: Arc<Epochs>,
    /// Clients blocked on keys, woken after a write to their key lands.
    pub blocked: Arc<Blocked>,
    /// Keys clients watch, told what each batch modified.
    pub watches: Arc<Watches>,
    /// Where the copies of a cross-region write meet (`raft::cross`).
    pub cross: Arc<super::cross::Rendezvous>,
    /// Runs transactions inside apply.
    pub programs: Option<Arc<dyn Programs>>,
    /// Where keyspace events go (the node's Pub/Sub).
    pub notify: Option<Arc<dyn crate::types::notify::Sink>>,
    /// The cluster's nodes (`None`: standalone).
    pub nodes: Option<Arc<Nodes>>,
    /// The databases and SWAPDB's mapping.
    pub dbs: Arc<crate::types::dbs::Dbs>,
    /// The owning core's metadata read cache, filled with what apply writes
    /// (`None` in tools and tests).
    pub cache: Option<Rc<crate::types::cache::ReadCache>>,
    /// Told when a region's slots change here: a split applied, a snapshot
    /// installed with another range (the owning core routes by it and starts
    /// the new region; `None` in tools and tests).
    pub on_span: Option<Rc<dyn Fn(SpanChange)>>,
}

/// A change of a region's slots, as apply makes it ([`RegionDeps::on_span`]).
#[derive(Debug, Clone, Copy)]
pub enum SpanChange {
    /// `parent` split: it keeps its range now, `child` was made.
    Split { parent: Descriptor, child: Descriptor },
    /// A snapshot installed the region with this range.
    Installed(Descriptor),
}

/// The reply to a command routed to its region by an epoch the region has
/// left behind (it split: the command's slot may be another region's now).
/// Nothing was done; Redis Cluster clients send it again.
pub const MOVED_ON: &str = "TRYAGAIN the slot's region split while the command was on its way; nothing was done";

pub struct StateMachine {
    storage: Storage,
    deps: RegionDeps,
    region: u32,
    /// The region's slots and epoch (shared with its core: snapshots are
    /// read and expiry walks by it).
    span: Rc<std::cell::Cell<Descriptor>>,
    applied: Option<LogId>,
    membership: StoredMembership,
    /// The nodes CLUSTER FORGET removed (`pb::Forget`; before it, every
    /// membership change that dropped a node) and no membership added back,
    /// each with the incarnation removed (kept with the applied state,
    /// shipped with snapshots): that incarnation never links again.
    removed: Removed,
    /// Commands voided by SHUTDOWN NOSAVE (log index, position in the entry)
    /// not yet passed by the applied index: they apply as nothing.
    voided: Vec<(u64, u32)>,
    /// The time stamped on the last entry applied (kept with the applied state).
    applied_now: std::rc::Rc<std::cell::Cell<u64>>,
    /// What apply keeps in memory (`types::apply::Kept`: the index of the sets
    /// SPOP draws from, sorted sets' rank-counter nodes), carried from one batch
    /// to the next; dropped when a batch fails, a cross-region entry writes the
    /// region or a snapshot replaces it.
    kept: Kept,
}

impl StateMachine {
    /// Open the state machine of `region`, loading its applied state; `span`
    /// holds its slots as routed (set here to those of its applied state, if
    /// a split changed them).
    pub fn open(deps: RegionDeps, region: u32, span: Rc<std::cell::Cell<Descriptor>>) -> io::Result<Self> {
        let storage = deps.storage.clone();
        finish_interrupted_install(&deps, region)?;
        let (applied, membership, now, removed) =
            match storage.get(Cf::RaftState, &state_key(region, StateKind::Applied)).map_err(io_err)? {
                Some(b) => {
                    if let Some(d) = decode_span(region, &b)? {
                        span.set(d);
                    }
                    decode_applied_full(&b)?
                }
                None => (None, StoredMembership::default(), 0, Removed::new()),
            };
        if let Some(n) = &deps.nodes {
            // (Again: the identity file may have been written before a crash
            // cut the apply that removed them, or not at all.)
            publish_removed(n, region, &removed);
        }
        let voided = load_voided(&storage, region, applied.map_or(0, |l| l.index)).map_err(io_err)?;
        let applied_now = std::rc::Rc::new(std::cell::Cell::new(now));
        Ok(StateMachine {
            storage,
            deps,
            region,
            span,
            applied,
            membership,
            removed,
            voided,
            applied_now,
            kept: Kept::default(),
        })
    }

    /// The time of the last entry applied, as it moves (the region's proposer
    /// never stamps an entry earlier).
    pub fn applied_now(&self) -> std::rc::Rc<std::cell::Cell<u64>> {
        self.applied_now.clone()
    }

    /// Apply a run of entries (none of them cross-region) in one RocksDB batch.
    async fn apply_run(&mut self, batch: Vec<EntryResponder<TypeConfig>>) -> Result<(), io::Error> {
        let span = self.span.get();
        let mut ctx = ApplyCtx::new(&self.storage, span.start, span.end)
            .for_region(self.region)
            .with_dbs(self.deps.dbs.clone())
            .with_watches(self.deps.watches.clone())
            .with_kept(std::mem::take(&mut self.kept));
        if let Some(p) = &self.deps.programs {
            ctx = ctx.with_programs(p.clone());
        }
        if let Some(n) = &self.deps.notify {
            ctx = ctx.with_notify(n.flags());
        }
        let times = entry_times(self.applied, self.applied_now.get(), self.deps.nodes.is_some(), &batch);
        let now = times.last().copied().unwrap_or(self.applied_now.get());
        self.applied_now.set(now);
        let programs = ctx.programs();
        let long = batch.iter().any(|(entry, _)| match &entry.payload {
            EntryPayload::Normal(p) => p.0.cmds.iter().any(|c| runs_long(programs.as_deref(), c)),
            _ => false,
        });
        let removed_before = self.deps.nodes.is_some().then(|| self.removed.clone());
        let progress = Progress {
            applied: self.applied,
            membership: std::mem::take(&mut self.membership),
            removed: std::mem::take(&mut self.removed),
            removals: Vec::new(),
            span,
            splits: Vec::new(),
        };
        let (responders, progress) = if long {
            // A script may run long: the whole batch goes off the reactor in one
            // hop, so the core's connections (and SCRIPT KILL) are served meanwhile.
            let voided = self.voided.clone();
            let work = move || {
                let mut progress = progress;
                let out = apply_entries(&mut ctx, batch, &times, &mut progress, &voided);
                (ctx, progress, out)
            };
            let (back, progress, out) = glommio::executor().spawn_blocking(work).await;
            ctx = back;
            (out, progress)
        } else {
            let mut progress = progress;
            let out = apply_entries(&mut ctx, batch, &times, &mut progress, &self.voided);
            (out, progress)
        };
        let Progress { applied: a, membership, removed, removals, span, splits } = progress;
        (self.applied, self.membership, self.removed) = (a, membership, removed);
        let responders = responders?;
        if let (Some(n), Some(before)) = (&self.deps.nodes, removed_before) {
            if before != self.removed {
                n.set_removed(self.region, &self.removed.keys().copied().collect());
            }
            // Each removal names the incarnation it removed: replayed after a
            // restart, or applied late, it leaves alone the node added back
            // since under the same id.
            n.forgot(&removals);
        }
        if !self.voided.is_empty() {
            // Markers behind the applied index have served: they go with this batch.
            let index = self.applied.map_or(0, |l| l.index);
            for &(i, pos) in self.voided.iter().filter(|&&(i, _)| i <= index) {
                ctx.delete_raw(Cf::RaftState, voided_key(self.region, i, pos).to_vec());
            }
            self.voided.retain(|&(i, _)| i > index);
        }
        let spanned = (span.epoch > 0).then_some(&span);
        ctx.put_raw(
            Cf::RaftState,
            state_key(self.region, StateKind::Applied).to_vec(),
            encode_applied_spanned(self.applied.as_ref(), &self.membership, now, &self.removed, spanned),
        );
        let mut applied = ctx.take();
        // The index now matches what this batch leaves in storage.
        self.kept = ctx.take_kept();
        // Committed state must land: a write RocksDB refuses (it stops after a
        // flush fails on a full disk, until space is back) is retried, with new
        // writes refused meanwhile (`Storage::failure`, see `Region`).
        let mut backoff = crate::storage::Backoff::default();
        applied.announce(&self.deps.epochs);
        while self.storage.write_applied(&applied.batch).is_err() {
            backoff.wait().await;
        }
        // Cached reads of what changed turn stale, and watchers learn of it, before
        // anyone hears of the write.
        applied.invalidate(&self.deps.epochs);
        // Filled where reads of the region are served: standalone, or the
        // region's leader (a follower serves only READONLY reads, through a
        // read index like any other; it would fill for reads it never serves).
        let leads = self.deps.nodes.as_ref().is_none_or(|n| n.leader(self.region) == Some(n.me));
        if let (Some(cache), true) = (&self.deps.cache, leads) {
            applied.fill(cache, &self.deps.epochs);
        }
        applied.publish(&self.deps.dbs);
        let index = self.applied.map(|l| l.index).unwrap_or(0);
        self.deps.watches.applied_batch(self.region, index, &applied.modified, &applied.reaped);
        self.deps.blocked.notify_written(&applied.written);
        if applied.flushed {
            self.deps.blocked.notify_all();
        }
        // Keyspace events: published by the region's leader only (standalone,
        // the node applying the batch is the leader).
        if let (Some(n), false, true) = (&self.deps.notify, applied.events.is_empty(), leads) {
            n.publish(std::mem::take(&mut applied.events));
        }
        // The new regions, and the range this one keeps, before anyone hears
        // the split answered.
        self.span.set(span);
        for child in splits {
            let mut parent = span;
            parent.end = child.start as u32;
            self.deps.watches.moved(child.start, child.end);
            if let Some(on) = &self.deps.on_span {
                on(SpanChange::Split { parent, child });
            }
        }
        for (r, replies) in responders {
            r.send(replies);
        }
        Ok(())
    }

    /// A cross-region entry (see `raft::cross`): meet the other copies; the
    /// first participant runs the command once for all of them.
    async fn apply_cross(
        &mut self,
        entry: super::Entry,
        responder: Option<openraft::storage::ApplyResponder<TypeConfig>>,
    ) -> Result<(), io::Error> {
        let log_id = entry.log_id;
        let index = log_id.index;
        let EntryPayload::Normal(p) = entry.payload else { return Err(io_err("a cross entry without commands")) };
        let now = self.applied_now.get().max(p.0.now_ms);
        let Some(Op::Cross(c)) = p.0.cmds.into_iter().next().and_then(|c| c.op) else {
            return Err(io_err("a cross entry without its command"));
        };
        let reply = if self.voided.contains(&(index, CUT)) {
            // Every copy is voided (settled at open): nobody meets.
            self.applied = Some(log_id);
            self.applied_now.set(now);
            let mut b = crate::storage::Batch::new();
            b.put(
                Cf::RaftState,
                state_key(self.region, StateKind::Applied),
                encode_applied_full(self.applied.as_ref(), &self.membership, now, &self.removed),
            );
            b.delete(Cf::RaftState, voided_key(self.region, index, CUT));
            self.voided.retain(|&(i, _)| i > index);
            let mut backoff = crate::storage::Backoff::default();
            while self.storage.write_applied(&b).is_err() {
                backoff.wait().await;
            }
            self.deps.watches.applied_batch(self.region, index, &[], &[]);
            Reply::error(VOIDED)
        } else {
            let txn: Txn = c.txn[..].try_into().map_err(|_| io_err("a cross entry with a malformed name"))?;
            let applied = encode_applied_full(Some(&log_id), &self.membership, now, &self.removed);
            let span = self.span.get();
            let me = Arrival::new(self.region, index, now, (span.start, span.end), applied);
            let met = self.deps.cross.meet(txn, &c.participants, me).await.map_err(io_err)?;
            let (reply, at) = match met {
                // The executor answers the client; this copy's reply is not shown.
                Met::Done(at) => (Reply::Ok, at),
                Met::Run(all) => self.run_cross(c, all).await?,
            };
            self.applied = Some(log_id);
            self.applied_now.set(now.max(at));
            reply
        };
        // The command may have written sets of this region behind apply's back.
        self.kept.clear();
        if let Some(r) = responder {
            r.send(vec![reply]);
        }
        Ok(())
    }

    /// The executor of a cross entry: run its commands over every participant's
    /// slots and write them in one batch with every participant's applied
    /// state. The reply is an array of the commands' replies.
    async fn run_cross(&mut self, cross: crate::pb::Cross, all: Vec<Arrival>) -> Result<(Reply, u64), io::Error> {
        let cmds = cross.cmds;
        // Commands SHUTDOWN NOSAVE voided (a script it stopped): nothing.
        let index = all[0].index;
        let voided: Vec<u32> = self.voided.iter().filter(|&&(i, _)| i == index).map(|&(_, pos)| pos).collect();
        let now = all.iter().map(|a| a.now_ms).max().unwrap_or(0);
        let parts = all.iter().map(|a| (a.slots.0, a.slots.1, a.index)).collect();
        let mut ctx = ApplyCtx::new(&self.storage, 0, crate::cluster::SLOT_COUNT)
            .for_region(self.region)
            .for_cross(parts)
            .with_dbs(self.deps.dbs.clone())
            .with_watches(self.deps.watches.clone());
        if let Some(p) = &self.deps.programs {
            ctx = ctx.with_programs(p.clone());
        }
        if let Some(n) = &self.deps.notify {
            ctx = ctx.with_notify(n.flags());
        }
        ctx.begin_entry(all[0].index, now);
        let programs = ctx.programs();
        let long = cmds.iter().any(|c| runs_long(programs.as_deref(), c));
        let run = move |ctx: &mut ApplyCtx| -> Result<Reply, crate::storage::StorageError> {
            let mut out = Vec::with_capacity(cmds.len());
            for (pos, cmd) in cmds.iter().enumerate() {
                ctx.cmd_pos = pos as u32;
                out.push(if voided.contains(&(pos as u32)) { Reply::error(VOIDED) } else { apply_cmd(ctx, cmd)? });
            }
            Ok(Reply::Array(out))
        };
        let (mut ctx, reply) = if long {
            glommio::executor()
                .spawn_blocking(move || {
                    let r = run(&mut ctx);
                    (ctx, r)
                })
                .await
        } else {
            let r = run(&mut ctx);
            (ctx, r)
        };
        let reply = reply.map_err(io_err)?;
        for a in &all {
            // Every participant keeps the entry's time (the latest of its copies'),
            // so none stamps a later entry earlier after a restart.
            let (applied, membership, _, removed) = decode_applied_full(&a.applied)?;
            let state = encode_applied_full(applied.as_ref(), &membership, now, &removed);
            ctx.put_raw(Cf::RaftState, state_key(a.region, StateKind::Applied).to_vec(), state);
        }
        let mut applied = ctx.take();
        let mut backoff = crate::storage::Backoff::default();
        applied.announce(&self.deps.epochs);
        while self.storage.write_applied(&applied.batch).is_err() {
            backoff.wait().await;
        }
        // Tests: every participant's applied state is written, not flushed.
        crate::failpoint::crash("cross-applied");
        applied.invalidate(&self.deps.epochs);
        applied.publish(&self.deps.dbs);
        // Watchers judge a key by its own region's index.
        for a in &all {
            let (start, end) = (a.slots.0 as u32, a.slots.1);
            let mine = |mk: &&Vec<u8>| decode_meta_key(mk).is_some_and(|(s, _)| s as u32 >= start && (s as u32) < end);
            let modified: Vec<Vec<u8>> = applied.modified.iter().filter(mine).cloned().collect();
            let reaped: Vec<Vec<u8>> = applied.reaped.iter().filter(mine).cloned().collect();
            self.deps.watches.applied_batch(a.region, a.index, &modified, &reaped);
        }
        self.deps.blocked.notify_written(&applied.written);
        if applied.flushed {
            self.deps.blocked.notify_all();
        }
        if let (Some(n), false) = (&self.deps.notify, applied.events.is_empty()) {
            n.publish(std::mem::take(&mut applied.events));
        }
        for a in all {
            a.finish(now);
        }
        Ok((reply, now))
    }

    /// The cross entries of this region's log past its applied index (at open,
    /// see `raft::cross`).
    pub async fn cross_entries(
        storage: &Storage,
        log: &mut super::log_store::LogStore,
        region: u32,
    ) -> io::Result<Vec<super::cross::Found>> {
        use openraft::storage::RaftLogReader;
        let applied = match storage.get(Cf::RaftState, &state_key(region, StateKind::Applied)).map_err(io_err)? {
            Some(b) => decode_applied_full(&b)?.0.map_or(0, |l| l.index),
            None => 0,
        };
        let voided = load_voided(storage, region, applied).map_err(io_err)?;
        let mut out = Vec::new();
        for e in log.try_get_log_entries(applied + 1..).await? {
            let Some(c) = cross_of(&e) else { continue };
            let Ok(txn) = c.txn[..].try_into() else { continue };
            let index = e.log_id.index;
            out.push(super::cross::Found {
                txn,
                participants: c.participants.clone(),
                region,
                index,
                voided: voided.contains(&(index, CUT)),
            });
        }
        Ok(out)
    }
}

/// The cross-region write an entry carries, if it is one (always alone in
/// its entry).
fn cross_of(entry: &super::Entry) -> Option<&crate::pb::Cross> {
    match &entry.payload {
        EntryPayload::Normal(p) => match p.0.cmds.first().and_then(|c| c.op.as_ref()) {
            Some(Op::Cross(c)) => Some(c),
            _ => None,
        },
        _ => None,
    }
}

pub struct SnapshotBuilder {
    storage: Storage,
    region: u32,
    meta: SnapshotMeta,
}

/// Run `f` on the blocking pool until it succeeds, backing off between tries.
async fn until_ok<F>(storage: &Storage, f: F)
where
    F: Fn(&Storage) -> crate::storage::Result<()> + Clone + Send + 'static,
{
    let mut backoff = crate::storage::Backoff::default();
    loop {
        let (storage, f) = (storage.clone(), f.clone());
        if glommio::executor().spawn_blocking(move || f(&storage)).await.is_ok() {
            return;
        }
        backoff.wait().await;
    }
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    type SnapshotData = SnapshotData;

    async fn build_snapshot(&mut self) -> Result<openraft::alias::SnapshotOf<TypeConfig, SnapshotData>, io::Error> {
        // The applied state must be durable before the log behind it may be
        // purged (a WAL fsync, or without the WAL an atomic flush of every
        // column family). Both run on the blocking pool: this core drives
        // heartbeats.
        let mut b = crate::storage::Batch::new();
        b.put(
            Cf::RaftState,
            state_key(self.region, StateKind::Snapshot),
            encode_applied(self.meta.last_log_id.as_ref(), &self.meta.last_membership),
        );
        // A flush or record write that fails (a full disk) is retried, not
        // returned: openraft stops the region on a snapshot error. Apply goes
        // on meanwhile.
        until_ok(&self.storage, Storage::persist_applied).await;
        crate::failpoint::crash("snapshot-persisted");
        let b = std::sync::Arc::new(b);
        until_ok(&self.storage, move |s| s.write_durable(&b)).await;
        Ok(Snapshot { meta: self.meta.clone(), snapshot: SnapshotData::Local })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotData = SnapshotData;
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), io::Error> {
        Ok((self.applied, self.membership.clone()))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: futures_util::Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + OptionalSend,
    {
        let mut batch = Vec::new();
        while let Some(item) = entries.next().await {
            batch.push(item?);
        }
        crate::failpoint::delay("apply-delay").await;
        // Runs of ordinary entries, each in one RocksDB batch; a cross-region
        // entry between them meets its other copies (`raft::cross`).
        while !batch.is_empty() {
            match batch.iter().position(|(e, _)| cross_of(e).is_some()) {
                None => return self.apply_run(batch).await,
                Some(at) => {
                    let mut tail = batch.split_off(at);
                    if !batch.is_empty() {
                        self.apply_run(batch).await?;
                    }
                    batch = tail.split_off(1);
                    let (entry, responder) = tail.pop().expect("the cross entry");
                    self.apply_cross(entry, responder).await?;
                }
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            storage: self.storage.clone(),
            region: self.region,
            meta: SnapshotMeta { last_log_id: self.applied, last_membership: self.membership.clone() },
        }
    }

    /// Replace the region with a snapshot from the leader: its staged SST files
    /// are ingested (each replaces the region's range in its column family) and
    /// the new applied state written, behind a marker that lets a restart finish
    /// an install a crash interrupted (`storage::ingest`).
    async fn install_snapshot(&mut self, meta: &SnapshotMeta, snapshot: SnapshotData) -> Result<(), io::Error> {
        let SnapshotData::Received { mut staged, now_ms, removed, span } = snapshot else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a snapshot without data to install"));
        };
        // The snapshot replaces every set, whether or not it installs.
        self.kept.clear();
        // The leader's record as of the snapshot: nodes removed since, and
        // nodes added back since (a node that lost its data, re-added fresh).
        let applied =
            encode_applied_spanned(meta.last_log_id.as_ref(), &meta.last_membership, now_ms, &removed, span.as_ref());
        let name = staged.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let marker =
            (state_key(self.region, StateKind::Installing).to_vec(), super::snapshot::encode_marker(&name, &applied));
        let done = installed(self.region, &applied);
        let order = |cf: &Cf| super::snapshot::INGEST_ORDER.iter().position(|c| c == cf);
        staged.files.sort_by_key(|(cf, _)| order(cf));
        let storage = self.storage.clone();
        // Every cached read of this node may be of a key the snapshot replaces:
        // none is served from now until the stamps move, whether the install
        // succeeds or not (a failed one may have ingested some of its files).
        self.deps.epochs.writing_all();
        let ingested = glommio::executor()
            .spawn_blocking(move || crate::storage::ingest::install(&storage, staged, marker, done))
            .await;
        self.deps.epochs.bump_all();
        ingested.map_err(io_err)?;
        self.applied = meta.last_log_id;
        self.membership = meta.last_membership.clone();
        if let Some(n) = &self.deps.nodes {
            publish_removed(n, self.region, &removed);
        }
        self.removed = removed;
        self.applied_now.set(self.applied_now.get().max(now_ms));
        if let Some(p) = &self.deps.programs {
            p.region_replaced(self.region);
        }
        if let Some(d) = span.filter(|d| *d != self.span.get()) {
            self.span.set(d);
            if let Some(on) = &self.deps.on_span {
                on(SpanChange::Installed(d));
            }
        }
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<openraft::alias::SnapshotOf<TypeConfig, SnapshotData>>, io::Error> {
        let Some(b) = self.storage.get(Cf::RaftState, &state_key(self.region, StateKind::Snapshot)).map_err(io_err)?
        else {
            return Ok(None);
        };
        let (last_log_id, last_membership) = decode_applied(&b).map_err(|e| invalid(e.to_string()))?;
        Ok(Some(Snapshot { meta: SnapshotMeta { last_log_id, last_membership }, snapshot: SnapshotData::Local }))
    }
}

/// The slots and epoch of every region whose applied state here says a
/// split set them (at start: the routes are the fresh cluster's cut, then
/// these).
pub fn stored_spans(storage: &Storage) -> io::Result<Vec<Descriptor>> {
    let mut out = Vec::new();
    let mut err = None;
    storage
        .scan(Cf::RaftState, &[], &[0xff; 6], false, |k, v| {
            if k.len() == 5 && k[4] == StateKind::Applied as u8 {
                let region = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
                match decode_span(region, v) {
                    Ok(Some(d)) => out.push(d),
                    Ok(None) => {}
                    Err(e) => err = Some(e),
                }
            }
            true
        })
        .map_err(io_err)?;
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The batch that ends an install of `applied`: the region's applied state and
/// snapshot record, and the install marker gone.
fn installed(region: u32, applied: &[u8]) -> crate::storage::Batch {
    let mut b = crate::storage::Batch::new();
    b.put(Cf::RaftState, state_key(region, StateKind::Applied), applied.to_vec());
    b.put(Cf::RaftState, state_key(region, StateKind::Snapshot), applied.to_vec());
    b.delete(Cf::RaftState, state_key(region, StateKind::Installing));
    b
}

/// A snapshot install that a crash interrupted is finished before the region
/// opens (its staged files are ingested again), and staging left behind by
/// transfers that never completed is removed.
fn finish_interrupted_install(deps: &RegionDeps, region: u32) -> io::Result<()> {
    let storage = &deps.storage;
    if let Some(m) = storage.get(Cf::RaftState, &state_key(region, StateKind::Installing)).map_err(io_err)? {
        let (name, applied) = super::snapshot::decode_marker(&m)?;
        let dir = storage.staging_dir().join(name);
        let cfs: Vec<Cf> = super::snapshot::INGEST_ORDER.to_vec();
        deps.epochs.writing_all();
        let redone = crate::storage::ingest::redo(storage, &dir, &cfs, installed(region, applied));
        deps.epochs.bump_all();
        redone.map_err(|e| io_err(format!("region {region}: {e}")))?;
        eprintln!("region {region}: finished a snapshot install that a restart interrupted ({})", dir.display());
        if let Some(p) = &deps.programs {
            p.region_replaced(region);
        }
    }
    crate::storage::ingest::clean(storage, &super::snapshot::staging_prefix(region), None);
    Ok(())
}

/// The reply of a voided command (nobody waits for it: its client was cut off
/// by the shutdown).
const VOIDED: &str = "ERR Script killed by SHUTDOWN NOSAVE before it completed; it did nothing";

/// The voided commands of `region` after `applied`; markers at or before it
/// (the script ended before the process did) are deleted.
fn load_voided(storage: &Storage, region: u32, applied: u64) -> Result<Vec<(u64, u32)>, crate::storage::StorageError> {
    let from = state_key(region, StateKind::Voided);
    let mut to = from;
    to[4] += 1;
    let (mut live, mut stale) = (Vec::new(), crate::storage::Batch::new());
    storage.scan(Cf::RaftState, &from, &to, false, |k, _| {
        match decode_voided_key(k) {
            Some((i, pos)) if i > applied => live.push((i, pos)),
            _ => stale.delete(Cf::RaftState, k.to_vec()),
        }
        true
    })?;
    if !stale.is_empty() {
        storage.write(stale, false)?;
    }
    Ok(live)
}

type Responders = Vec<(openraft::storage::ApplyResponder<TypeConfig>, Vec<Reply>)>;

/// Apply a batch of committed entries to `ctx` in log order; `state` is the
/// region's applied log id and membership, advanced as entries go by. Returns
/// each waiting client's replies.
/// In a cluster, how far past the time of the last applied entry a leader
/// may judge expiry in a read (`Region::read_time`); and so how far past its
/// predecessor's last entry a new term's time starts, here in apply, on every
/// replica alike: no read a deposed leader answered was judged later than
/// the time its successor starts from, so a key read as expired never comes
/// back, whatever the successor's clock says.
pub const READ_AHEAD_MS: u64 = 1000;

/// The time each entry of `batch` is applied at (what expiry is judged by):
/// its leader's stamp, never earlier than the entry before it, and in a
/// cluster, for the first entry of a new term, at least [`READ_AHEAD_MS`] past
/// it. `applied` and `now`: the last entry applied before, and its time.
fn entry_times(applied: Option<LogId>, mut now: u64, cluster: bool, batch: &[EntryResponder<TypeConfig>]) -> Vec<u64> {
    let mut term = applied.map(|l| l.leader_id.term);
    let mut out = Vec::with_capacity(batch.len());
    for (entry, _) in batch {
        let t = entry.log_id.leader_id.term;
        if term.is_some_and(|x| x != t) && cluster {
            now += READ_AHEAD_MS;
        }
        term = Some(t);
        if let EntryPayload::Normal(p) = &entry.payload {
            now = now.max(p.0.now_ms);
        }
        out.push(now);
    }
    out
}

/// Tell this node's `Nodes` a region's whole record of removed nodes (at open,
/// and when a snapshot replaces it): the ids, and the incarnations refused.
fn publish_removed(nodes: &Nodes, region: u32, removed: &Removed) {
    nodes.set_removed(region, &removed.keys().copied().collect());
    nodes.forgot(&removed.iter().map(|(&id, &inc)| (id, inc)).collect::<Vec<_>>());
}

/// A region's state as a run of entries advances it (`apply_entries`).
struct Progress {
    applied: Option<LogId>,
    membership: StoredMembership,
    removed: Removed,
    /// The removals applied in this run: (node, incarnation).
    removals: Vec<(u64, u64)>,
    /// The region's slots and epoch.
    span: Descriptor,
    /// The regions split off in this run.
    splits: Vec<Descriptor>,
}

fn apply_entries(
    ctx: &mut ApplyCtx,
    batch: Vec<EntryResponder<TypeConfig>>,
    times: &[u64],
    state: &mut Progress,
    voided: &[(u64, u32)],
) -> Result<Responders, io::Error> {
    let mut responders = Vec::new();
    for ((entry, responder), &time) in batch.into_iter().zip(times) {
        state.applied = Some(entry.log_id);
        let replies: Vec<Reply> = match entry.payload {
            EntryPayload::Blank => Vec::new(),
            EntryPayload::Normal(p) => {
                if !p.0.legacy_cmds.is_empty() {
                    return Err(io_err(format!(
                        "log entry {} holds write commands in the format of an older NeoKV; restart that version once to apply them, then upgrade",
                        entry.log_id.index
                    )));
                }
                ctx.begin_entry(entry.log_id.index, time);
                let mut out = Vec::with_capacity(p.0.cmds.len());
                for (pos, c) in p.0.cmds.iter().enumerate() {
                    ctx.cmd_pos = pos as u32;
                    if voided.contains(&(entry.log_id.index, pos as u32)) {
                        out.push(Reply::error(VOIDED));
                        continue;
                    }
                    // Tests: the entry is committed and in the log, not applied.
                    crate::failpoint::crash("apply");
                    if c.epoch != 0 && c.epoch != state.span.epoch + 1 {
                        out.push(Reply::error(MOVED_ON));
                        continue;
                    }
                    match &c.op {
                        Some(Op::Forget(f)) => {
                            // CLUSTER FORGET: that incarnation is refused for good.
                            state.removed.insert(f.node_id, f.incarnation);
                            state.removals.push((f.node_id, f.incarnation));
                            out.push(Reply::Ok);
                            continue;
                        }
                        Some(Op::Split(sp)) => {
                            out.push(apply_split(ctx, state, entry.log_id, time, sp));
                            continue;
                        }
                        _ => {}
                    }
                    out.push(apply_cmd(ctx, c).map_err(io_err)?);
                }
                out
            }
            EntryPayload::Membership(m) => {
                // A node the new membership holds as another incarnation was
                // removed as the one it was. One it no longer holds left the
                // region only (its replica moved elsewhere): removal from the
                // cluster is CLUSTER FORGET's own record (`Op::Forget`). One it
                // holds again was added back (a new incarnation: the transport
                // refuses the removed one).
                for (id, was) in state.membership.membership().nodes() {
                    if m.get_node(id).is_some_and(|now| now.incarnation != was.incarnation) {
                        state.removals.push((*id, was.incarnation));
                    }
                }
                state.removed.retain(|id, _| m.get_node(id).is_none());
                state.membership = StoredMembership::new(Some(entry.log_id), m);
                Vec::new()
            }
        };
        if let Some(r) = responder {
            responders.push((r, replies));
        }
    }
    Ok(responders)
}

/// A split at `sp.at` (see `pb::Split`): the region keeps the slots below,
/// the child's applied state (this entry's log id, the region's membership
/// and removed nodes, the child's range) and function libraries go in this
/// batch. A split that does not follow from the region's range and epoch
/// (proposed twice, or by a leader that had not applied the last one) does
/// nothing.
fn apply_split(ctx: &mut ApplyCtx, state: &mut Progress, log_id: LogId, now: u64, sp: &crate::pb::Split) -> Reply {
    let d = state.span;
    let at = sp.at as u16;
    let valid = sp.at < crate::cluster::SLOT_COUNT
        && sp.epoch == d.epoch + 1
        && d.start < at
        && (at as u32) < d.end
        && child_id(sp.epoch, at) == Some(sp.child);
    if !valid {
        return Reply::error(format!(
            "ERR split of region {} at slot {} (epoch {}) does not follow from its slots {}-{} at epoch {}",
            d.id,
            sp.at,
            sp.epoch,
            d.start,
            d.end - 1,
            d.epoch
        ));
    }
    let child = Descriptor { id: sp.child, start: at, end: d.end, epoch: sp.epoch };
    let applied = encode_applied_spanned(Some(&log_id), &state.membership, now, &state.removed, Some(&child));
    ctx.put_raw(Cf::RaftState, state_key(child.id, StateKind::Applied).to_vec(), applied);
    if let Some(p) = ctx.programs() {
        p.split(ctx, d.id, child.id);
    }
    state.span = Descriptor { end: at as u32, epoch: sp.epoch, ..d };
    ctx.set_slots(d.start, at as u32);
    state.splits.push(child);
    Reply::Ok
}
