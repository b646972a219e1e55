//! Apply's state for one batch of log entries: writes go to one storage `Batch`,
//! reads see the batch's own earlier writes first (an overlay over RocksDB), so a
//! batch of `SET k 1; INCR k` applies as if the commands ran one by one, and a
//! transaction or script reads what its earlier commands wrote.
//!
//! Deterministic: time, versions and randomness come from the log entry.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use ahash::AHashMap;
use bytes::Bytes;

use super::cache::{Epochs, ReadCache};
use super::dbs::Dbs;
use super::found::Found;
use super::members::{MemberIndex, Sorted};
use super::mkey_in;
use super::notify::{self, Event};
use super::view::Source;
use super::watches::Watches;
use super::zset_nodes::NodeCache;
use crate::storage::keys::{
    db_of, db_slot_range, decode_meta_key, decode_meta_key_in, expire_index_key, in_db, slot_lower_bound,
    slot_upper_bound, KeyType,
};
use crate::storage::meta::Meta;
use crate::storage::{Batch, Cf, Storage, StorageError};

/// A FLUSH deletes up to this many keys one by one, more by range.
const POINT_FLUSH_MAX: usize = 1024;

/// Bits of a version below the entry's log index (new composite keys per entry).
pub const VERSION_SHIFT: u32 = 24;

/// The overlay of `Cf::Subkey` (0) or `Cf::ZsetScore` (1).
fn element_slot(cf: Cf) -> Option<usize> {
    match cf {
        Cf::Subkey => Some(0),
        Cf::ZsetScore => Some(1),
        _ => None,
    }
}

/// Runs what the command layer keeps of apply: programs, which need the whole
/// command table (a transaction's commands, scripts, function changes), and
/// stream writes (their apply shares the stream commands' id parsing, errors
/// and replies). Implemented by the command layer and handed to each region's
/// state machine, so this layer does not depend on it.
pub trait Programs: Send + Sync {
    /// Run a transaction's commands in order against `ctx`; one reply each.
    fn exec(&self, ctx: &mut ApplyCtx, op: &crate::pb::Exec) -> Result<crate::protocol::Reply, StorageError>;
    /// Run a script or a function against `ctx`.
    fn eval(&self, ctx: &mut ApplyCtx, op: &crate::pb::Eval) -> Result<crate::protocol::Reply, StorageError>;
    /// Change the region's function libraries.
    fn functions(&self, ctx: &mut ApplyCtx, op: &crate::pb::Functions) -> Result<crate::protocol::Reply, StorageError>;
    /// Run a stream write (`cmd::stream_apply`).
    fn stream(&self, ctx: &mut ApplyCtx, op: &crate::pb::Stream) -> Result<crate::protocol::Reply, StorageError>;
    /// True if the transaction queues a script (which may run long).
    fn queues_script(&self, op: &crate::pb::Exec) -> bool;
    /// A snapshot from the leader replaced the region: reload what is kept of
    /// it outside RocksDB (its function libraries).
    fn region_replaced(&self, _region: u32) {}
    /// Region `child` split off `parent` in the batch `ctx` writes: it
    /// takes a copy of `parent`'s function libraries.
    fn split(&self, _ctx: &mut ApplyCtx, _parent: u32, _child: u32) {}
}

/// See the module doc.
pub struct ApplyCtx {
    storage: Storage,
    /// The region being applied.
    pub region: u32,
    /// The leader's clock, from the log entry.
    pub now_ms: u64,
    /// The entry being applied (its log index) and the command's position in it.
    pub index: u64,
    pub cmd_pos: u32,
    /// The stream node limits of the operation being applied (its leader's
    /// `stream-node-max-*`, carried in the log entry).
    pub stream_limits: super::stream_node::Limits,
    slot_start: u16,
    slot_end: u32,
    /// The command's database: logical (as the client named it: events) and
    /// physical (where its keys are stored), and the mapping between them.
    pub ldb: u16,
    db: u16,
    dbs: Option<Arc<Dbs>>,
    /// The mapping after a SWAPDB of this batch (published by the state
    /// machine once the batch is stored: until then readers keep the old one).
    swapped_map: Option<Vec<u16>>,
    overlay: AHashMap<Vec<u8>, Option<Bytes>>,
    /// Metadata this batch read from RocksDB (`None`: absent; values up to
    /// [`READ_MEMO_MAX`] bytes), so a key many commands of one batch read costs
    /// one point read (SPOPs of a missing set, each command's first look at a
    /// key). Only ever holds what RocksDB has under the batch: the overlay
    /// shadows it, and it goes with the batch.
    read_metas: RefCell<AHashMap<Vec<u8>, Option<Bytes>>>,
    /// Element writes (`subkey`, `zset_score`) not yet in RocksDB, in key order.
    elements: [BTreeMap<Vec<u8>, Option<Bytes>>; 2],
    /// Metadata keys of user keys whose elements changed without a metadata write
    /// (a hash field overwritten, LSET, a score changed): with the metadata
    /// written, what the batch changed (read cache, blocked clients).
    touched: Vec<Vec<u8>>,
    /// Metadata keys of the keys commands modified (WATCH).
    modified: Vec<Vec<u8>>,
    /// Metadata keys of the keys deleted for having expired (WATCH).
    reaped: Vec<Vec<u8>>,
    /// Keys clients watch, consulted by FLUSH (`None` in tests and tools).
    watches: Option<Arc<Watches>>,
    /// Runs transactions and scripts (`None` where only single commands apply).
    programs: Option<Arc<dyn Programs>>,
    /// The keyspace event classes to record (0 when `notify-keyspace-events`
    /// names no channel), and the events recorded.
    notify: u32,
    events: Vec<Event>,
    /// Ranges of the data column families this batch flushed (FLUSHDB,
    /// FLUSHALL): storage shows nothing there to the batch's reads.
    flushed: Vec<(Vec<u8>, Vec<u8>)>,
    /// A SWAPDB applied in this batch.
    swapped: bool,
    batch: Batch,
    /// Versions for new composite keys: `entry index << VERSION_SHIFT`, plus a
    /// counter within the entry. Log indexes only grow, so a new version is
    /// greater than every version the region ever handed out.
    version_base: u64,
    versions_used: u64,
    /// A cross-region write (`raft::cross`): each participant's slots and its
    /// log index for the entry. A new key takes its version from its own
    /// region's index, so versions stay unique per region.
    cross: Vec<(u16, u32, u64)>,
    /// Per log entry: first and last member of sets SPOP drew from (see
    /// `set::pick_with`); cleared at every entry so replicas agree.
    pub pick_ends: AHashMap<Vec<u8>, (Bytes, Bytes)>,
    /// What apply keeps in memory between batches (see [`Kept`]).
    kept: Kept,
}

/// What apply keeps in memory from one batch to the next: exact copies of
/// what the region's storage holds, kept in step with every element write
/// through [`ApplyCtx`]. The state machine carries it between batches and
/// clears it when something writes behind apply's back (a cross-region entry,
/// a snapshot install) or an apply fails (the context, and it, are dropped).
#[derive(Debug, Default)]
pub struct Kept {
    /// The members of the sets SPOP draws from (`types::members`).
    pub members: MemberIndex,
    /// Decoded rank-counter nodes of sorted sets (`zset::NodeCache`).
    pub zset_nodes: NodeCache,
}

impl Kept {
    pub fn clear(&mut self) {
        self.members.clear();
        self.zset_nodes.clear();
    }
}

impl ApplyCtx {
    /// A context for the region covering slots `[slot_start, slot_end)`.
    pub fn new(storage: &Storage, slot_start: u16, slot_end: u32) -> Self {
        ApplyCtx {
            storage: storage.clone(),
            region: 0,
            now_ms: 0,
            index: 0,
            cmd_pos: 0,
            stream_limits: Default::default(),
            slot_start,
            slot_end,
            ldb: 0,
            db: 0,
            dbs: None,
            swapped_map: None,
            overlay: AHashMap::new(),
            read_metas: RefCell::new(AHashMap::new()),
            elements: [BTreeMap::new(), BTreeMap::new()],
            touched: Vec::new(),
            modified: Vec::new(),
            reaped: Vec::new(),
            watches: None,
            programs: None,
            notify: 0,
            events: Vec::new(),
            flushed: Vec::new(),
            swapped: false,
            batch: Batch::new(),
            version_base: 1 << VERSION_SHIFT,
            versions_used: 0,
            cross: Vec::new(),
            pick_ends: AHashMap::new(),
            kept: Kept::default(),
        }
    }

    /// Apply a cross-region write: `participants` are each region's slots
    /// `[start, end)` and its index for the entry.
    pub fn for_cross(mut self, participants: Vec<(u16, u32, u64)>) -> Self {
        self.cross = participants;
        self
    }

    /// Apply for `region`.
    pub fn for_region(mut self, region: u32) -> Self {
        self.region = region;
        self
    }

    /// Keep what the batches before kept in memory up to date, and use it.
    pub fn with_kept(mut self, kept: Kept) -> Self {
        self.kept = kept;
        self
    }

    /// Hand what is kept back, for the next batch (once this one is written).
    pub fn take_kept(&mut self) -> Kept {
        std::mem::take(&mut self.kept)
    }

    /// The rank-counter nodes kept between batches.
    pub(crate) fn zset_nodes(&mut self) -> &mut NodeCache {
        &mut self.kept.zset_nodes
    }

    /// Write (or, `None`, delete) a rank-counter node `zset_nodes` holds too.
    pub(crate) fn put_node(&mut self, key: Vec<u8>, value: Option<Bytes>) {
        self.elements[1].insert(key, value);
    }

    /// The set `found` in order from the index, indexing it first (one walk) if
    /// it is small enough. `None`: not indexed; walk storage instead.
    pub fn indexed_members(&mut self, found: &Found) -> Result<Option<&Sorted>, StorageError> {
        // (An index that disagrees with the metadata is dropped and loaded again:
        // it must never answer for a set it does not copy exactly.)
        if self.kept.members.get(&found.prefix).is_some_and(|s| s.len() as u64 != found.coll.size) {
            debug_assert!(false, "the member index lost step with a set");
            self.kept.members.forget(&found.prefix);
        }
        if self.kept.members.get(&found.prefix).is_none() {
            if !self.kept.members.fits(found.coll.size) {
                return Ok(None);
            }
            let mut all = Vec::with_capacity(found.coll.size as usize);
            self.scan_elements(Cf::Subkey, &found.prefix, &found.end(), false, |k, _| {
                all.push(Bytes::copy_from_slice(&k[found.prefix.len()..]));
                true
            })?;
            if all.len() as u64 != found.coll.size || !self.kept.members.load(found.prefix.clone(), all) {
                return Ok(None);
            }
        }
        Ok(self.kept.members.get(&found.prefix))
    }

    /// The storage under the overlay (what a script's host reads besides it).
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Record a deletion outside the data column families in the same batch.
    pub fn del_raw(&mut self, cf: Cf, key: impl Into<Vec<u8>>) {
        self.batch.delete(cf, key);
    }

    /// Record a range deletion outside the data column families in the same batch.
    pub fn del_raw_range(&mut self, cf: Cf, from: impl Into<Vec<u8>>, to: impl Into<Vec<u8>>) {
        self.batch.delete_range(cf, from, to);
    }

    /// Consult `watches` (FLUSH marks the watched keys that existed).
    pub fn with_watches(mut self, watches: Arc<Watches>) -> Self {
        self.watches = Some(watches);
        self
    }

    /// Map databases with `dbs` (SWAPDB's mapping; none: every database is
    /// its own).
    pub fn with_dbs(mut self, dbs: Arc<Dbs>) -> Self {
        self.dbs = Some(dbs);
        self
    }

    /// The databases' mapping, if any.
    pub fn dbs(&self) -> Option<&Arc<Dbs>> {
        self.dbs.as_ref()
    }

    /// The physical database of logical `db`.
    pub fn physical(&self, db: u16) -> u16 {
        match &self.swapped_map {
            Some(m) => m.get(db as usize).copied().unwrap_or(db),
            None => self.dbs.as_ref().map_or(db, |d| d.physical(db)),
        }
    }

    /// The logical database of physical `db`.
    pub fn logical(&self, db: u16) -> u16 {
        match &self.swapped_map {
            Some(m) => m.iter().position(|&p| p == db).map_or(db, |l| l as u16),
            None => self.dbs.as_ref().map_or(db, |d| d.logical(db)),
        }
    }

    /// Run the next commands in logical database `db` (a write's `db`, SELECT
    /// in a transaction or script).
    pub fn select(&mut self, db: u16) {
        self.ldb = db;
        self.db = self.physical(db);
    }

    /// The physical database of the command.
    pub fn db(&self) -> u16 {
        self.db
    }

    /// The metadata key of `key` in the command's database.
    pub fn mkey(&self, key: &[u8]) -> Vec<u8> {
        mkey_in(self.db, key)
    }

    /// The metadata key of `key` in logical database `db`.
    pub fn mkey_of(&self, db: u16, key: &[u8]) -> Vec<u8> {
        mkey_in(self.physical(db), key)
    }

    /// SWAPDB a b: swap the logical databases' data (the mapping), stored
    /// with the batch. The watched keys of either that exist in either are
    /// modified, and every blocked client tries again.
    pub fn swap_dbs(&mut self, a: u16, b: u16) -> Result<(), StorageError> {
        let Some(dbs) = self.dbs.clone() else { return Ok(()) };
        if a == b {
            return Ok(());
        }
        let (pa, pb) = (self.physical(a), self.physical(b));
        // What this batch changed so far is mapped back to logical databases
        // by the mapping after it (`Applied::to_logical`): a key changed in
        // `pa` before the swap is then filed under `pb`, which maps back to
        // the same logical database.
        for list in [&mut self.modified, &mut self.reaped, &mut self.touched] {
            for mk in list.iter_mut() {
                match db_of(mk).0 {
                    d if d == pa => *mk = in_db(mk, pb),
                    d if d == pb => *mk = in_db(mk, pa),
                    _ => {}
                }
            }
        }
        let mut touched = Vec::new();
        if let Some(w) = self.watches.clone().filter(|w| w.any()) {
            for mk in w.keys_in(self.slot_start, self.slot_end) {
                let (l, _) = db_of(&mk);
                if l != a && l != b {
                    continue;
                }
                if self.live_meta(&in_db(&mk, pa))?.is_some() || self.live_meta(&in_db(&mk, pb))?.is_some() {
                    touched.push((mk, l));
                }
            }
        }
        let mut map = self.swapped_map.take().unwrap_or_else(|| dbs.map());
        let need = a.max(b) as usize + 1;
        while map.len() < need {
            map.push(map.len() as u16);
        }
        map.swap(a as usize, b as usize);
        self.batch.put(Cf::RaftState, super::dbs::map_key().to_vec(), super::dbs::encode(&map));
        self.swapped_map = Some(map);
        // Filed where the batch's changes are mapped back from: the
        // mapping after the swap.
        for (mk, l) in touched {
            let p = self.physical(l);
            self.modified.push(in_db(&mk, p));
        }
        self.swapped = true;
        self.db = self.physical(self.ldb);
        Ok(())
    }

    /// Run transactions and scripts with `programs`.
    pub fn with_programs(mut self, programs: Arc<dyn Programs>) -> Self {
        self.programs = Some(programs);
        self
    }

    /// Record the keyspace events of the classes in `flags` (a
    /// `notify-keyspace-events` value) for this batch.
    pub fn with_notify(mut self, flags: u32) -> Self {
        self.notify = if flags & (notify::KEYSPACE | notify::KEYEVENT) != 0 { flags } else { 0 };
        self
    }

    /// [`ApplyCtx::event`] on `key` of logical database `db` (MOVE, COPY ... DB).
    pub fn event_in(&mut self, db: u16, class: u32, name: &'static str, key: &[u8]) {
        if self.notify & class != 0 {
            self.events.push(Event { name, key: Bytes::copy_from_slice(key), db });
        }
    }

    /// Record keyspace event `name` of `class` on `key` (published once the
    /// batch is stored). Commands call it after their writes, as Redis does.
    pub fn event(&mut self, class: u32, name: &'static str, key: &[u8]) {
        if self.notify & class != 0 {
            self.events.push(Event { name, key: Bytes::copy_from_slice(key), db: self.ldb });
        }
    }

    /// The `del` event that follows a command's own when it left `key` empty
    /// (and so deleted it).
    pub fn event_if_gone(&mut self, key: &[u8]) -> Result<(), StorageError> {
        if self.notify & notify::GENERIC != 0 && self.live_meta(&self.mkey(key))?.is_none() {
            self.event(notify::GENERIC, "del", key);
        }
        Ok(())
    }

    /// Whether `key` exists, asked by a *STORE before it replaces its
    /// destination, for the `del` event of an empty result (false, unread,
    /// when no generic events are recorded).
    pub fn exists_for_events(&self, key: &[u8]) -> Result<bool, StorageError> {
        Ok(self.notify & notify::GENERIC != 0 && self.live_meta(&self.mkey(key))?.is_some())
    }

    /// A *STORE's event: `name` when it stored a result in `dst`, `del` when
    /// an empty result deleted an existing `dst`.
    pub fn store_event(&mut self, class: u32, name: &'static str, dst: &[u8], stored: bool, existed: bool) {
        if stored {
            self.event(class, name, dst);
        } else if existed {
            self.event(notify::GENERIC, "del", dst);
        }
    }

    /// What runs transactions and scripts here, if anything.
    pub fn programs(&self) -> Option<Arc<dyn Programs>> {
        self.programs.clone()
    }

    /// Start applying the log entry at `index`, stamped `now_ms` by its leader.
    pub fn begin_entry(&mut self, index: u64, now_ms: u64) {
        self.now_ms = now_ms;
        self.index = index;
        self.cmd_pos = 0;
        self.version_base = index << VERSION_SHIFT;
        self.versions_used = 0;
        self.pick_ends.clear();
    }

    /// The region being applied now covers `[start, end)` (a split applied
    /// before the next command).
    pub fn set_slots(&mut self, start: u16, end: u32) {
        (self.slot_start, self.slot_end) = (start, end);
    }

    /// The slots `[start, end)` of the region being applied.
    pub fn slots(&self) -> (u16, u32) {
        (self.slot_start, self.slot_end)
    }

    /// A version for a new composite key, unique in the region for all time: a
    /// command creates at most one composite key and an entry carries at most
    /// `raft::region::MAX_CMDS_PER_ENTRY` (2^16) commands, well under 2^24. (A
    /// transaction or script is one command that may create more: it checks
    /// [`ApplyCtx::versions_left`].)
    /// `key` is the user key the version is for: in a cross-region write the
    /// base is its own region's index for the entry.
    pub fn new_version(&mut self, key: &[u8]) -> u64 {
        self.versions_used += 1;
        debug_assert!(self.versions_used < 1 << VERSION_SHIFT);
        let base = if self.cross.is_empty() {
            self.version_base
        } else {
            let slot = crate::cluster::key_slot(key) as u32;
            let at = self.cross.iter().find(|&&(s, e, _)| slot >= s as u32 && slot < e);
            // A key outside every participant never reaches here (the
            // coordinator names every region a cross write may touch).
            at.map_or(self.version_base, |&(_, _, index)| index << VERSION_SHIFT)
        };
        base + self.versions_used.min((1 << VERSION_SHIFT) - 1)
    }

    /// How many more composite keys this entry may create.
    pub fn versions_left(&self) -> u64 {
        ((1 << VERSION_SHIFT) - 1) - self.versions_used.min((1 << VERSION_SHIFT) - 1)
    }

    /// Read an element entry (`Cf::Subkey` or `Cf::ZsetScore`), seeing this batch's writes.
    pub fn get_element(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        if let Some(v) = element_slot(cf).and_then(|i| self.elements[i].get(key)) {
            return Ok(v.clone());
        }
        if self.is_flushed(key) {
            return Ok(None);
        }
        self.storage.get(cf, key)
    }

    pub fn put_element(&mut self, cf: Cf, key: Vec<u8>, value: impl Into<Bytes>) {
        let i = element_slot(cf).expect("an element column family");
        if i == 0 {
            self.kept.members.note(&key, true);
        } else if !self.kept.zset_nodes.is_empty() {
            self.kept.zset_nodes.forget(&key);
        }
        self.elements[i].insert(key, Some(value.into()));
    }

    pub fn del_element(&mut self, cf: Cf, key: Vec<u8>) {
        let i = element_slot(cf).expect("an element column family");
        if i == 0 {
            self.kept.members.note(&key, false);
        } else if !self.kept.zset_nodes.is_empty() {
            self.kept.zset_nodes.forget(&key);
        }
        self.elements[i].insert(key, None);
    }

    /// Delete every element entry in `[from, to)` with one range deletion, and
    /// forget this batch's own writes there. Storage still shows the range
    /// until the batch is written: the caller must keep this batch's reads out
    /// of it (a stream's trim floor does).
    pub fn del_element_range(&mut self, cf: Cf, from: Vec<u8>, to: Vec<u8>) {
        if from >= to {
            return;
        }
        let i = element_slot(cf).expect("an element column family");
        let mine: Vec<Vec<u8>> = self.elements[i]
            .range::<[u8], _>((Bound::Included(&from[..]), Bound::Excluded(&to[..])))
            .map(|(k, _)| k.clone())
            .collect();
        for k in mine {
            self.elements[i].remove(&k);
        }
        self.batch.delete_range(cf, from, to);
    }

    /// Take the stream node limits an operation carries (absent: Redis's
    /// defaults, as every entry written before they were carried).
    pub fn use_stream_limits(&mut self, l: Option<&crate::pb::StreamLimits>) {
        self.stream_limits = l.map(Into::into).unwrap_or_default();
    }

    /// Record that `key`'s elements were rewritten without changing what the
    /// key holds (its rank counters rebuilt): readers' caches must drop them, but
    /// WATCH does not see a change.
    pub fn rewrote(&mut self, key: &[u8]) {
        let mk = self.mkey(key);
        self.touched.push(mk);
    }

    /// True if `key` (of a data column family) lies in a range this batch flushed.
    fn is_flushed(&self, key: &[u8]) -> bool {
        in_any(&self.flushed, key)
    }

    /// Where the record of keys modified for WATCH stands now (see
    /// [`ApplyCtx::not_modified_since`]).
    pub fn modified_mark(&self) -> usize {
        self.modified.len()
    }

    /// The writes to `key` since `mark` are not a modification WATCH sees:
    /// Redis writes without signalling the key (XSETID; a BITFIELD that grew
    /// the string but whose every write failed).
    pub fn not_modified_since(&mut self, mark: usize, key: &[u8]) {
        let mk = self.mkey(key);
        let mut i = mark;
        while i < self.modified.len() {
            if self.modified[i] == mk {
                self.modified.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// `key` counts as modified for WATCH though nothing of it was written, as
    /// Redis signals it (an LTRIM that keeps the whole list).
    pub fn signal_modified(&mut self, key: &[u8]) {
        let mk = self.mkey(key);
        self.modified.push(mk);
    }

    /// Record that `key`'s elements changed though its metadata did not.
    pub fn touch(&mut self, key: &[u8]) {
        let mk = self.mkey(key);
        self.modified.push(mk.clone());
        self.touched.push(mk);
    }

    /// Visit entries of `cf` in `[from, to)` in order (or reverse), this batch's
    /// writes merged over RocksDB, until `f` says stop.
    pub fn scan_elements(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        if from >= to {
            return Ok(());
        }
        let pending: Vec<(&[u8], Option<&[u8]>)> = match element_slot(cf) {
            Some(i) => self.elements[i]
                .range::<[u8], _>((Bound::Included(from), Bound::Excluded(to)))
                .map(|(k, v)| (&k[..], v.as_deref()))
                .collect(),
            None if cf == Cf::Metadata => {
                let mut p: Vec<(&[u8], Option<&[u8]>)> = self
                    .overlay
                    .iter()
                    .filter(|(k, _)| &k[..] >= from && &k[..] < to)
                    .map(|(k, v)| (&k[..], v.as_deref()))
                    .collect();
                p.sort_unstable_by(|a, b| a.0.cmp(b.0));
                p
            }
            None => Vec::new(),
        };
        merge_scan(&self.storage, &self.flushed, cf, from, to, reverse, pending, f)
    }

    fn raw_meta(&self, mk: &[u8]) -> Result<Option<Bytes>, StorageError> {
        if let Some(v) = self.overlay.get(mk) {
            return Ok(v.clone());
        }
        if self.is_flushed(mk) {
            return Ok(None);
        }
        if let Some(v) = self.read_metas.borrow().get(mk) {
            return Ok(v.clone());
        }
        let v = self.storage.get(Cf::Metadata, mk)?;
        // Absences and small values only (a collection's metadata, short
        // strings): a batch deleting many big strings must not hold them all.
        if v.as_ref().is_none_or(|v| v.len() <= READ_MEMO_MAX) {
            self.read_metas.borrow_mut().insert(mk.to_vec(), v.clone());
        }
        Ok(v)
    }

    /// The key's metadata if it exists and has not expired at the entry's time.
    pub fn live_meta(&self, mk: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(Meta::live(self.raw_meta(mk)?, self.now_ms))
    }

    /// The key's metadata even if expired (for cleanup).
    pub fn any_meta(&self, mk: &[u8]) -> Result<Option<Meta>, StorageError> {
        Ok(self.raw_meta(mk)?.and_then(Meta::decode))
    }

    /// Write a key's metadata without knowing what it replaces (blind overwrite).
    /// A TTL in `value` is added to the expire index.
    pub fn put_meta(&mut self, mk: Vec<u8>, value: Vec<u8>) {
        self.put_meta_over(mk, None, value);
    }

    /// Write a key's metadata over `old` (what the key held, if anything): the
    /// expire index gains the new TTL and loses the old one when it changes.
    pub fn put_meta_over(&mut self, mk: Vec<u8>, old: Option<&Meta>, value: Vec<u8>) {
        if self.notify & notify::NEW != 0 {
            self.event_new(&mk, old);
        }
        let at = expire_of(&value);
        let old_at = old.map(|m| m.expire_ms).unwrap_or(0);
        if old_at != at {
            if old_at != 0 {
                self.index(&mk, old_at, false);
            }
            if at != 0 {
                self.index(&mk, at, true);
            }
        }
        self.modified.push(mk.clone());
        self.overlay.insert(mk, Some(Bytes::from(value)));
    }

    /// The `new` event, when the key `mk` (which held `old`, `None` = not read)
    /// does not exist before this write.
    fn event_new(&mut self, mk: &[u8], old: Option<&Meta>) {
        let live = match old {
            Some(m) => !m.is_expired(self.now_ms),
            None => matches!(self.live_meta(mk), Ok(Some(_))),
        };
        if !live {
            if let Some((db, _, key)) = decode_meta_key_in(mk) {
                let key = key.to_vec();
                self.event_in(self.logical(db), notify::NEW, "new", &key);
            }
        }
    }

    /// Delete a key whose metadata is `old`, with its expire index entry.
    pub fn del_key(&mut self, mk: Vec<u8>, old: &Meta) {
        self.modified.push(mk.clone());
        self.drop_meta(mk, old);
    }

    /// Delete a key that exists but has expired at the entry's time (as Redis's
    /// expiry does: not a modification for a client that watched it expired).
    pub fn del_expired(&mut self, mk: Vec<u8>, old: &Meta) {
        if self.notify & notify::EXPIRED != 0 {
            if let Some((_, key)) = decode_meta_key(&mk) {
                // Active expiry names keys of any database.
                let db = self.logical(db_of(&mk).0);
                let key = Bytes::copy_from_slice(key);
                self.events.push(Event { name: "expired", key, db });
            }
        }
        self.reaped.push(mk.clone());
        self.drop_meta(mk, old);
    }

    /// Delete a key, live or expired, as the right kind of change.
    pub fn del_any(&mut self, mk: Vec<u8>, old: &Meta) {
        if old.is_expired(self.now_ms) {
            self.del_expired(mk, old)
        } else {
            self.del_key(mk, old)
        }
    }

    fn drop_meta(&mut self, mk: Vec<u8>, old: &Meta) {
        if self.kept.members.sets() > 0 && old.kind == KeyType::Set {
            // A deleted set's prefix never comes back: its index goes now.
            if let Some(found) = decode_meta_key_in(&mk).and_then(|(db, _, key)| Found::from_meta(db, key, old.clone()))
            {
                self.kept.members.forget(&found.prefix);
            }
        }
        if old.expire_ms != 0 {
            self.index(&mk, old.expire_ms, false);
        }
        self.overlay.insert(mk, None);
    }

    /// Add or remove the expire index entry (`mk`'s key, `at`).
    pub fn index(&mut self, mk: &[u8], at: u64, add: bool) {
        if decode_meta_key(mk).is_some() {
            let ik = expire_index_key(mk, at);
            if add {
                self.batch.put(Cf::ExpireIndex, ik, Vec::new());
            } else {
                self.batch.delete(Cf::ExpireIndex, ik);
            }
        }
    }

    /// Delete every key of the region in logical database `db` (FLUSHDB), or
    /// in every database (`None`, FLUSHALL).
    pub fn flush_region(&mut self, db: Option<u16>) -> Result<(), StorageError> {
        let physical: Vec<u16> = match db {
            Some(l) => vec![self.physical(l)],
            None => (0..self.dbs.as_ref().map_or(1, |d| d.stored_len()) as u32).map(|d| d as u16).collect(),
        };
        // The watched keys that exist are modified; missing or expired ones are not.
        if let Some(w) = self.watches.clone().filter(|w| w.any()) {
            for mk in w.keys_in(self.slot_start, self.slot_end) {
                let p = self.physical(db_of(&mk).0);
                if !physical.contains(&p) {
                    continue;
                }
                let mk = in_db(&mk, p);
                if self.live_meta(&mk)?.is_some() {
                    self.modified.push(mk);
                }
            }
        }
        for p in physical {
            let (lo, hi) = db_slot_range(p, self.slot_start, self.slot_end);
            self.flush_range(lo, hi, db.is_none() && p == 0)?;
        }
        self.kept.clear();
        Ok(())
    }

    /// Delete every key in `[lo, hi)` of the data column families (one
    /// database's part of the region); `expiry`: its expire index entries too
    /// (the whole region's, every database's: FLUSHALL).
    fn flush_range(&mut self, lo: Vec<u8>, hi: Vec<u8>, expiry: bool) -> Result<(), StorageError> {
        // A small range is flushed as DEL deletes: each key's metadata goes, and
        // the compaction filters (`storage::gc`) collect its elements, expire
        // index entry and link. A big one is deleted by ranges. (Every range
        // deletion stays in the memtable until it is flushed, and the reads after
        // each new one re-sort them all: a test suite's FLUSHALL after every test
        // would slow every read down by the number of flushes before it.)
        let mut keys = Vec::new();
        let mut small = true;
        self.storage.scan(Cf::Metadata, &lo, &hi, false, |k, _| {
            small = keys.len() < POINT_FLUSH_MAX;
            if small {
                keys.push(k.to_vec());
            }
            small
        })?;
        if small {
            keys.into_iter().for_each(|k| self.batch.delete(Cf::Metadata, k));
        } else {
            for cf in [Cf::Metadata, Cf::Subkey, Cf::ZsetScore, Cf::Links] {
                self.batch.delete_range(cf, lo.clone(), hi.clone());
            }
            if expiry {
                let (elo, ehi) = (slot_lower_bound(self.slot_start), slot_upper_bound(self.slot_end));
                self.batch.delete_range(Cf::ExpireIndex, elo, ehi);
            }
        }
        let out = |k: &Vec<u8>| !(&lo[..] <= &k[..] && &k[..] < &hi[..]);
        self.overlay.retain(|k, _| out(k));
        self.read_metas.get_mut().retain(|k, _| out(k));
        for m in self.elements.iter_mut() {
            m.retain(|k, _| out(k));
        }
        self.flushed.push((lo, hi));
        Ok(())
    }

    /// Record a non-metadata write (e.g. Raft applied state) in the same batch.
    pub fn put_raw(&mut self, cf: Cf, key: impl Into<Vec<u8>>, value: impl Into<Bytes>) {
        self.batch.put(cf, key, value);
    }

    pub fn delete_raw(&mut self, cf: Cf, key: impl Into<Vec<u8>>) {
        self.batch.delete(cf, key);
    }

    /// Forget the overlay (the batch was written) and hand the batch out.
    pub fn take_batch(&mut self) -> Batch {
        self.take().batch
    }

    /// Hand out the batch with what it changed, and start afresh.
    ///
    /// Each metadata key written in the batch is written once, with its final value,
    /// and the keys go in sorted order: RocksDB's memtable skiplist reuses its
    /// search position between consecutive inserts, so sorted inserts cost far less
    /// than random ones, and a key written many times in one batch costs one insert.
    /// They follow any range deletion of a FLUSH in the batch, which the overlay
    /// already accounts for (a flush clears it).
    pub fn take(&mut self) -> Applied {
        self.read_metas.get_mut().clear();
        let mut entries: Vec<(Vec<u8>, Option<Bytes>)> = self.overlay.drain().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut batch = std::mem::take(&mut self.batch);
        for (i, cf) in [Cf::Subkey, Cf::ZsetScore].into_iter().enumerate() {
            for (k, v) in std::mem::take(&mut self.elements[i]) {
                match v {
                    Some(v) => batch.put(cf, k, v),
                    None => batch.delete(cf, k),
                }
            }
        }
        let mut written = std::mem::take(&mut self.touched);
        written.reserve(entries.len());
        let mut stored = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            match &v {
                Some(v) => batch.put(Cf::Metadata, k.clone(), v.clone()),
                None => batch.delete(Cf::Metadata, k.clone()),
            }
            written.push(k);
            stored.push(v);
        }
        let swapped = std::mem::take(&mut self.swapped);
        let flushed = !std::mem::take(&mut self.flushed).is_empty() || swapped;
        let dbs_map = self.swapped_map.take();
        let modified = std::mem::take(&mut self.modified);
        let reaped = std::mem::take(&mut self.reaped);
        let events = std::mem::take(&mut self.events);
        Applied { batch, written, stored, modified, reaped, flushed, events, dbs_map }
    }
}

/// True if `key` lies in one of the ranges `[lo, hi)`.
fn in_any(ranges: &[(Vec<u8>, Vec<u8>)], key: &[u8]) -> bool {
    ranges.iter().any(|(lo, hi)| &lo[..] <= key && key < &hi[..])
}

/// Merge `pending` (this batch's writes in `[from, to)`, sorted; `None` = a
/// deletion) over RocksDB's entries, visiting in order or reverse.
#[allow(clippy::too_many_arguments)]
fn merge_scan(
    storage: &Storage,
    flushed: &[(Vec<u8>, Vec<u8>)],
    cf: Cf,
    from: &[u8],
    to: &[u8],
    reverse: bool,
    mut pending: Vec<(&[u8], Option<&[u8]>)>,
    mut f: impl FnMut(&[u8], &[u8]) -> bool,
) -> Result<(), StorageError> {
    if !reverse {
        pending.reverse();
    }
    // `pending` is now consumed from its end, in visiting order.
    let before = |a: &[u8], b: &[u8]| if reverse { a > b } else { a < b };
    let mut go = true;
    if !flushed.iter().any(|(lo, hi)| &lo[..] <= from && to <= &hi[..]) {
        storage.scan(cf, from, to, reverse, |k, v| {
            if in_any(flushed, k) {
                return true;
            }
            while let Some(&(pk, pv)) = pending.last() {
                if !before(pk, k) {
                    break;
                }
                pending.pop();
                if let Some(pv) = pv {
                    if !f(pk, pv) {
                        go = false;
                        return false;
                    }
                }
            }
            if let Some(&(pk, pv)) = pending.last() {
                if pk == k {
                    pending.pop();
                    return match pv {
                        Some(pv) => {
                            go = f(pk, pv);
                            go
                        }
                        None => true,
                    };
                }
            }
            go = f(k, v);
            go
        })?;
    }
    while go {
        let Some((pk, pv)) = pending.pop() else { break };
        if let Some(pv) = pv {
            go = f(pk, pv);
        }
    }
    Ok(())
}

impl Source for ApplyCtx {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }
    fn db(&self) -> u16 {
        self.db
    }
    fn meta(&self, key: &[u8]) -> Result<Option<Meta>, StorageError> {
        self.live_meta(&self.mkey(key))
    }
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        match cf {
            Cf::Metadata => self.raw_meta(key),
            _ => self.get_element(cf, key),
        }
    }
    fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        self.scan_elements(cf, from, to, reverse, f)
    }
}

/// The expire time of an encoded metadata value (0 = none).
fn expire_of(value: &[u8]) -> u64 {
    Meta::decode_header(value).map(|(_, at)| at).unwrap_or(0)
}

/// What an apply batch changed: its writes, the metadata keys it changed (read
/// cache, blocked clients), the keys commands modified and the expired keys
/// reaped (WATCH), whether it flushed its region, and its keyspace events.
pub struct Applied {
    pub batch: Batch,
    pub written: Vec<Vec<u8>>,
    /// The final metadata values (`None`: deleted) of the last `stored.len()`
    /// keys of `written` (the others had only elements written).
    pub stored: Vec<Option<Bytes>>,
    pub modified: Vec<Vec<u8>>,
    pub reaped: Vec<Vec<u8>>,
    pub flushed: bool,
    pub events: Vec<Event>,
    /// The databases' mapping after a SWAPDB in this batch: to publish
    /// ([`Applied::publish`]) once the batch is stored.
    pub dbs_map: Option<Vec<u16>>,
}

impl Applied {
    /// Once the batch is stored: its SWAPDB's mapping becomes the one readers
    /// use; then name the keys this batch changed as their logical databases
    /// do (blocked clients and WATCH file them so). After the read cache is
    /// filled (by physical keys).
    pub fn publish(&mut self, dbs: &Dbs) {
        if let Some(m) = self.dbs_map.take() {
            dbs.publish(&m);
        }
        self.to_logical(dbs);
    }

    fn to_logical(&mut self, dbs: &Dbs) {
        if dbs.is_identity() {
            return;
        }
        for list in [&mut self.written, &mut self.modified, &mut self.reaped] {
            for mk in list.iter_mut() {
                if let Some(l) = dbs.logical_mk(mk) {
                    *mk = l;
                }
            }
        }
    }

    /// Before `batch` goes to RocksDB: announce the keys it writes, so that no
    /// core serves them from its read cache until [`Applied::invalidate`].
    pub fn announce(&self, epochs: &Epochs) {
        self.each_written(|| epochs.writing_all(), |key| epochs.writing(key));
    }

    /// After `batch` is in RocksDB: invalidate cached reads of what it changed
    /// (ends what [`Applied::announce`] began).
    pub fn invalidate(&self, epochs: &Epochs) {
        self.each_written(|| epochs.bump_all(), |key| epochs.bump(key));
    }

    /// `all` if the batch flushed its region, then `one` for every user key it
    /// wrote: the same walk announces and ends, so the two always pair up.
    fn each_written(&self, all: impl FnOnce(), mut one: impl FnMut(&[u8])) {
        if self.flushed {
            all();
        }
        for mk in &self.written {
            if let Some((_, key)) = decode_meta_key(mk) {
                one(key);
            }
        }
    }

    /// After [`Applied::invalidate`]: file the metadata this batch wrote in the
    /// applying core's read cache (write-through), so a read that follows a
    /// write on this core finds it without a RocksDB lookup. Exact: each key is
    /// filed under the stamp loaded after its bump, and only this core writes
    /// it (a key belongs to one region, applied by its owning core), so no
    /// later write of the key can come before that load; a later one bumps the
    /// stamp again. Values over [`WRITE_THROUGH_MAX`] are left for reads to fetch.
    pub fn fill(&self, cache: &ReadCache, epochs: &Epochs) {
        let metas = &self.written[self.written.len() - self.stored.len()..];
        for (mk, v) in metas.iter().zip(&self.stored) {
            if v.as_ref().is_some_and(|v| v.len() > WRITE_THROUGH_MAX) {
                continue;
            }
            let Some((_, key)) = decode_meta_key(mk) else { continue };
            // (No stamp: another core is writing a key of the same bucket.)
            if let Some(stamp) = epochs.stamp(key) {
                cache.put(mk, stamp, v.clone());
            }
        }
    }
}

/// The largest metadata value (a string's value is inline) apply files in the
/// read cache as it writes it: big values would churn the cache for reads that
/// may never come.
pub const WRITE_THROUGH_MAX: usize = 16 * 1024;

/// The largest metadata value an apply batch keeps after reading it
/// (`ApplyCtx::read_metas`).
const READ_MEMO_MAX: usize = 128;
