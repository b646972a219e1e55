//! Storage: the only module that talks to RocksDB.
//!
//! Owns: opening the database and its column families, every on-disk byte layout
//! (`keys`, `meta`), write batches, iterators, and the WAL syncer thread that makes
//! Raft log appends durable with one fsync per group of appends when the log is
//! in RocksDB (`--raft-log rocksdb`). `seglog` is the io_uring segment log that
//! holds the Raft log by default (per core, glommio-bound); applied state is
//! then written past RocksDB's WAL and made durable by atomic flushes
//! ([`Storage::persist_applied`]) before the log behind it is purged.
//! Depends on nothing above it. Thread-safe: one `Storage` is shared by all cores.

pub mod gate;
mod gc;
pub mod identity;
pub mod ingest;
pub mod keys;
pub mod meta;
pub mod reserve;
pub mod seglog;
mod syncer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DBCompressionType, Direction, IteratorMode,
    Options, ReadOptions, WriteOptions, DB,
};

pub use syncer::{FsyncPolicy, SyncTicket};

pub const CF_METADATA: &str = "metadata";
pub const CF_SUBKEY: &str = "subkey";
pub const CF_ZSET_SCORE: &str = "zset_score";
pub const CF_EXPIRE_INDEX: &str = "expire_index";
pub const CF_LINKS: &str = "links";
pub const CF_RAFT_LOG: &str = "raft_log";
pub const CF_RAFT_STATE: &str = "raft_state";
pub const CF_FUNCTIONS: &str = "functions";

/// The wait between retries of a write that must land (the Raft log, or
/// applied state, on a full disk): 50 ms, doubling up to a second.
pub struct Backoff(std::time::Duration);

impl Default for Backoff {
    fn default() -> Self {
        Backoff(std::time::Duration::from_millis(50))
    }
}

impl Backoff {
    /// Sleep (on the current glommio executor), then wait longer next time.
    pub async fn wait(&mut self) {
        glommio::timer::sleep(self.0).await;
        self.0 = (self.0 * 2).min(std::time::Duration::from_secs(1));
    }
}

/// A key in `raft_state` nothing holds, deleted (WAL-free) to ask RocksDB
/// whether it takes writes (see [`Storage::persist_applied`]).
const PROBE_KEY: &[u8] = b"neokv-write-probe";

/// Why applied state cannot be written: `Inner::failure` holds 0 (it can) or
/// one more than an index here.
const FAILURES: [&str; 2] = ["No space left on device", "Input/output error"];

/// A storage failure. The message is RocksDB's.
#[derive(Debug, Clone, thiserror::Error)]
#[error("storage error: {0}")]
pub struct StorageError(pub String);

impl From<rocksdb::Error> for StorageError {
    fn from(e: rocksdb::Error) -> Self {
        StorageError(e.into_string())
    }
}

pub type Result<T> = std::result::Result<T, StorageError>;

/// Tunables for opening the database.
#[derive(Debug, Clone)]
pub struct StorageOptions {
    pub block_cache_bytes: usize,
    pub write_buffer_bytes: usize,
    pub fsync: FsyncPolicy,
    /// Whether applied state goes through RocksDB's WAL ([`Storage::write_applied`]).
    /// `false` when the Raft log is outside RocksDB (segment logs): the log is
    /// the durability, and every flush is atomic across column families, so
    /// what a restart finds in RocksDB is the state as of one applied index.
    pub apply_wal: bool,
    /// Disk space held in reserve in the data directory, given up when the
    /// server starts on a nearly full disk (see `reserve`); 0: none.
    pub reserve_bytes: u64,
}

impl Default for StorageOptions {
    fn default() -> Self {
        StorageOptions {
            block_cache_bytes: 256 << 20,
            write_buffer_bytes: 64 << 20,
            fsync: FsyncPolicy::Always,
            apply_wal: true,
            reserve_bytes: 0,
        }
    }
}

struct Inner {
    db: Arc<DB>,
    path: PathBuf,
    /// Each column family's options, for SST files written to be ingested.
    cf_opts: Vec<(Cf, Options)>,
    syncer: syncer::Syncer,
    gate: Arc<gate::Gate>,
    apply_wal: bool,
    /// The state garbage collection judges by (see `gc`), without the WAL.
    durable: gc::Durable,
    /// Why the last write of applied state (or flush of it) failed, until one
    /// succeeds again.
    /// (An atomic, not a lock: it is read before every proposal batch and
    /// written after every apply batch. See `FAILURES`.)
    failure: std::sync::atomic::AtomicU8,
    /// The disk reserve's size (see `reserve`).
    reserve_bytes: u64,
}

impl Drop for Inner {
    /// Wait for running flushes and compactions first: a compaction filter holds
    /// the database while it runs (`gc`), and were its hold the last one, the
    /// database would close on RocksDB's own background thread, which waits for
    /// itself (the process then hangs at exit).
    fn drop(&mut self) {
        self.db.cancel_all_background_work(true);
        // The published view holds the database (and the factories hold it).
        self.durable.publish(None);
    }
}

/// The shared database handle. Cheap to clone.
#[derive(Clone)]
pub struct Storage {
    inner: Arc<Inner>,
}

/// The column family a write or read goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cf {
    Metadata,
    Subkey,
    ZsetScore,
    ExpireIndex,
    /// Renamed composite keys: `[subkey prefix of the owner's namespace]` -> the
    /// metadata key now holding it (see `meta::Coll::owner`).
    Links,
    RaftLog,
    RaftState,
    /// Function libraries, per region: `[region:4][library name]` -> code.
    Functions,
}

impl Cf {
    pub fn name(self) -> &'static str {
        match self {
            Cf::Metadata => CF_METADATA,
            Cf::Subkey => CF_SUBKEY,
            Cf::ZsetScore => CF_ZSET_SCORE,
            Cf::ExpireIndex => CF_EXPIRE_INDEX,
            Cf::Links => CF_LINKS,
            Cf::RaftLog => CF_RAFT_LOG,
            Cf::RaftState => CF_RAFT_STATE,
            Cf::Functions => CF_FUNCTIONS,
        }
    }
}

/// Read options for an iterator over `[from, to)`.
fn bounded(from: &[u8], to: &[u8]) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_iterate_lower_bound(from.to_vec());
    ro.set_iterate_upper_bound(to.to_vec());
    ro
}

/// A seekable iterator handed out by [`Storage::with_iter`].
pub struct Cursor<'a> {
    it: rocksdb::DBRawIteratorWithThreadMode<'a, DB>,
}

impl Cursor<'_> {
    pub fn seek(&mut self, key: &[u8]) {
        self.it.seek(key);
    }
    pub fn next(&mut self) {
        self.it.next();
    }
    /// The current key, or `None` past the end (or on error, reported by `with_iter`).
    pub fn key(&self) -> Option<&[u8]> {
        if self.it.valid() {
            self.it.key()
        } else {
            None
        }
    }
}

/// A consistent point-in-time view for reads of more than one entry.
pub struct View<'a> {
    snap: rocksdb::SnapshotWithThreadMode<'a, DB>,
    storage: &'a Storage,
    _pass: gate::Pass<'a>,
}

impl View<'_> {
    pub fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>> {
        Ok(self.snap.get_pinned_cf(self.storage.cf(cf), key)?.map(|v| Bytes::copy_from_slice(&v)))
    }

    /// Visit entries of `cf` in `[from, to)` in order (or reverse) until `f` says stop.
    pub fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let mut ro = bounded(from, to);
        ro.set_snapshot(&self.snap);
        walk(self.storage.inner.db.raw_iterator_cf_opt(self.storage.cf(cf), ro), reverse, f)
    }
}

fn walk(
    mut it: rocksdb::DBRawIteratorWithThreadMode<'_, DB>,
    reverse: bool,
    mut f: impl FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while it.valid() {
        let (Some(k), Some(v)) = (it.key(), it.value()) else {
            break;
        };
        if !f(k, v) {
            return Ok(());
        }
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status()?;
    Ok(())
}

/// A set of writes applied atomically by [`Storage::write`].
#[derive(Default)]
pub struct Batch {
    ops: Vec<BatchOp>,
}

enum BatchOp {
    Put(Cf, Vec<u8>, Bytes),
    Delete(Cf, Vec<u8>),
    DeleteRange(Cf, Vec<u8>, Vec<u8>),
}

impl Batch {
    pub fn new() -> Self {
        Batch::default()
    }
    pub fn put(&mut self, cf: Cf, key: impl Into<Vec<u8>>, value: impl Into<Bytes>) {
        self.ops.push(BatchOp::Put(cf, key.into(), value.into()));
    }
    pub fn delete(&mut self, cf: Cf, key: impl Into<Vec<u8>>) {
        self.ops.push(BatchOp::Delete(cf, key.into()));
    }
    /// Delete `[from, to)`.
    pub fn delete_range(&mut self, cf: Cf, from: impl Into<Vec<u8>>, to: impl Into<Vec<u8>>) {
        self.ops.push(BatchOp::DeleteRange(cf, from.into(), to.into()));
    }
    /// Drop the writes added after the first `len`.
    pub fn truncate(&mut self, len: usize) {
        self.ops.truncate(len);
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

impl Storage {
    /// Open (or create) the database at `path` with every column family.
    pub fn open(path: &Path, opts: &StorageOptions) -> Result<Storage> {
        std::fs::create_dir_all(path).map_err(|e| StorageError(format!("create {}: {e}", path.display())))?;
        reserve::release_if_short(path, opts.reserve_bytes);
        let cache = Cache::new_lru_cache(opts.block_cache_bytes);
        let mut db_opts = Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        db_opts.set_max_background_jobs(2);
        db_opts.set_max_total_wal_size(512 << 20);
        db_opts.set_keep_log_file_num(4);
        db_opts.set_max_log_file_size(16 << 20);
        // Without the WAL under applied state, a flush must capture every
        // column family at the same point: RocksDB then switches all their
        // memtables together, so no write batch is split across a flush (the
        // region's applied index is in the batch with the data it covers).
        db_opts.set_atomic_flush(!opts.apply_wal);

        let gate = Arc::new(gate::Gate::default());
        let db_slot = gc::DbSlot::default();
        let data_cf = |bloom: bool| {
            let mut o = Options::default();
            let mut t = BlockBasedOptions::default();
            t.set_block_cache(&cache);
            if bloom {
                // Point lookups: a whole-key bloom filter in SSTs and in the memtable
                // (a miss skips the skiplist walk), and hash-indexed data blocks.
                t.set_bloom_filter(10.0, false);
                t.set_whole_key_filtering(true);
                t.set_data_block_index_type(rocksdb::DataBlockIndexType::BinaryAndHash);
                t.set_data_block_hash_ratio(0.75);
                o.set_memtable_prefix_bloom_ratio(0.1);
                o.set_memtable_whole_key_filtering(true);
            }
            t.set_cache_index_and_filter_blocks(true);
            t.set_pin_l0_filter_and_index_blocks_in_cache(true);
            o.set_block_based_table_factory(&t);
            o.set_compression_type(DBCompressionType::Lz4);
            o.set_bottommost_compression_type(DBCompressionType::Zstd);
            o.set_write_buffer_size(opts.write_buffer_bytes);
            o
        };
        let mut log_opts = Options::default();
        log_opts.set_compression_type(DBCompressionType::None);
        log_opts.set_write_buffer_size(opts.write_buffer_bytes);
        // Column families of a few small records.
        let mut small = Options::default();
        small.set_write_buffer_size(opts.write_buffer_bytes);
        // Garbage collection of lazily deleted composite keys (see `gc`).
        let durable = gc::Durable::default();
        let judge_by = (!opts.apply_wal).then(|| durable.clone());
        let collected = |what: gc::What, bloom: bool| {
            let mut o = data_cf(bloom);
            o.set_compaction_filter_factory(gc::Factory::new(what, db_slot.clone(), gate.clone(), judge_by.clone()));
            o
        };
        let cfs = [
            (Cf::Metadata, data_cf(true)),
            // Elements are point-read on every write (is this field or member new?),
            // mostly missing for new ones: whole-key blooms answer those misses.
            (Cf::Subkey, collected(gc::What::Elements(CF_SUBKEY), true)),
            (Cf::ZsetScore, {
                // Rank counters are rewritten by every batch that touches their
                // set: an iterator over them steps past many versions of each key
                // in the memtable. Reseek to the next key after two, not eight.
                let mut o = collected(gc::What::Elements(CF_ZSET_SCORE), true);
                o.set_max_sequential_skip_in_iterations(2);
                o
            }),
            (Cf::ExpireIndex, collected(gc::What::ExpireIndex, false)),
            (Cf::Links, collected(gc::What::Links, false)),
            (Cf::RaftLog, log_opts),
            (Cf::RaftState, small.clone()),
            (Cf::Functions, small.clone()),
        ];
        // The default column family holds nothing, but its write buffer size
        // counts like the others' (rust-rocksdb would open it with RocksDB's
        // defaults): it sizes the WAL's preallocation, and after a full disk
        // RocksDB resumes once the largest write buffer is free.
        let default_cf = ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, small.clone());
        let descriptors = cfs
            .iter()
            .map(|(cf, o)| ColumnFamilyDescriptor::new(cf.name(), o.clone()))
            .chain(std::iter::once(default_cf));
        let db = Arc::new(DB::open_cf_descriptors(&db_opts, path, descriptors)?);
        db_slot.set(&db);
        let syncer = syncer::Syncer::start(db.clone(), opts.fsync);
        let apply_wal = opts.apply_wal;
        let failure = Default::default();
        let reserve_bytes = opts.reserve_bytes;
        reserve::keep(path, reserve_bytes);
        let inner = Inner {
            db,
            path: path.to_path_buf(),
            cf_opts: cfs.into(),
            syncer,
            gate,
            apply_wal,
            durable,
            failure,
            reserve_bytes,
        };
        Ok(Storage { inner: Arc::new(inner) })
    }

    /// Where snapshots being received are staged (see `ingest`).
    pub fn staging_dir(&self) -> PathBuf {
        self.inner.path.join(ingest::STAGING)
    }

    /// The options `cf` was opened with.
    fn sst_options(&self, cf: Cf) -> &Options {
        &self.inner.cf_opts.iter().find(|(c, _)| *c == cf).expect("every column family is listed").1
    }

    fn cf(&self, cf: Cf) -> &ColumnFamily {
        self.inner.db.cf_handle(cf.name()).expect("column family opened at start")
    }

    pub fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>> {
        Ok(self.inner.db.get_pinned_cf(self.cf(cf), key)?.map(|v| Bytes::copy_from_slice(&v)))
    }

    /// Apply `batch` atomically. `sync` = fsync the WAL before returning.
    pub fn write(&self, batch: Batch, sync: bool) -> Result<()> {
        let mut wo = WriteOptions::default();
        wo.set_sync(sync);
        self.write_opt(&batch, &wo)
    }

    /// Write a batch of applied state (data and the applied index that covers
    /// it): through the WAL, unsynced, when the Raft log is in RocksDB; past
    /// it otherwise (the log replays what a crash loses from the memtables;
    /// see [`Storage::persist_applied`]).
    ///
    /// A failure is remembered ([`Storage::failure`]) until a write succeeds:
    /// applied state is committed, so the caller retries the same batch
    /// rather than drop it (RocksDB stops writing after a flush fails on a
    /// full disk, and resumes by itself once space is back).
    pub fn write_applied(&self, batch: &Batch) -> Result<()> {
        let mut wo = WriteOptions::default();
        wo.disable_wal(!self.inner.apply_wal);
        self.noted(self.write_opt(batch, &wo))
    }

    /// Write `batch` through the WAL and fsync it (Raft's own records, such
    /// as a snapshot's), noting a failure as [`Storage::write_applied`] does.
    pub fn write_durable(&self, batch: &Batch) -> Result<()> {
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        self.noted(self.write_opt(batch, &wo))
    }

    /// Why applied state cannot be written right now, in words a client may
    /// see (no paths or RocksDB internals).
    pub fn failure(&self) -> Option<String> {
        let code = self.inner.failure.load(std::sync::atomic::Ordering::Relaxed);
        (code as usize).checked_sub(1).and_then(|i| FAILURES.get(i)).map(|c| c.to_string())
    }

    fn noted(&self, r: Result<()>) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let code = match &r {
            Ok(()) => 0,
            Err(e) if e.0.contains("No space left on device") => 1,
            Err(_) => 2,
        };
        let was = self.inner.failure.swap(code, Relaxed);
        match &r {
            Ok(()) if was != 0 => eprintln!("neokv: RocksDB is written again"),
            Err(e) if was == 0 => eprintln!("neokv: applied state could not be written ({}); retrying", e.0),
            _ => {}
        }
        r
    }

    /// Whether applied state is written through the WAL.
    pub fn apply_wal(&self) -> bool {
        self.inner.apply_wal
    }

    /// Make every applied state written so far durable, before the Raft log
    /// behind it may be purged: the WAL fsynced, or (without the WAL) every
    /// column family's memtables flushed to SST files in one atomic flush.
    /// Blocking: call it off the reactor.
    pub fn persist_applied(&self) -> Result<()> {
        if self.inner.apply_wal {
            self.sync_wal_blocking()?;
        } else {
            // While a background error (a full disk) stops RocksDB, a manual
            // flush fails at once but keeps a background flush job busy for a
            // second, and RocksDB's own recovery first waits for its
            // background work to end: flushes retried every second starved it
            // for good. So ask for a flush only once RocksDB takes writes.
            let mut probe = Batch::new();
            probe.delete(Cf::RaftState, PROBE_KEY);
            self.write_applied(&probe)?;
            // Garbage collection may judge by what this flush makes durable: the
            // view is taken first, so everything it shows is in the flush.
            let view = gc::Durable::capture(&self.inner.db);
            self.noted(self.flush_all())?;
            self.inner.durable.publish(Some(view));
        }
        // A reserve given up to start on a full disk is made again once
        // there is room.
        reserve::keep(&self.inner.path, self.inner.reserve_bytes);
        Ok(())
    }

    /// Flush the memtables of every column family in one atomic flush.
    pub(crate) fn flush_all(&self) -> Result<()> {
        let cfs: Vec<&ColumnFamily> = self.inner.cf_opts.iter().map(|(cf, _)| self.cf(*cf)).collect();
        let mut fo = rocksdb::FlushOptions::default();
        fo.set_wait(true);
        self.inner.db.flush_cfs_opt(&cfs, &fo)?;
        Ok(())
    }

    fn write_opt(&self, batch: &Batch, wo: &WriteOptions) -> Result<()> {
        let mut wb = rocksdb::WriteBatch::default();
        for op in &batch.ops {
            match op {
                BatchOp::Put(cf, k, v) => wb.put_cf(self.cf(*cf), k, v),
                BatchOp::Delete(cf, k) => wb.delete_cf(self.cf(*cf), k),
                BatchOp::DeleteRange(cf, a, b) => wb.delete_range_cf(self.cf(*cf), a, b),
            }
        }
        self.inner.db.write_opt(wb, wo)?;
        Ok(())
    }

    /// Make every write so far durable, according to the fsync policy: the ticket
    /// resolves once the WAL holding them has been fsynced (or at once under
    /// `everysec`/`no`, whose syncs run on their own clock).
    pub fn sync_wal(&self) -> SyncTicket {
        self.inner.syncer.request()
    }

    /// fsync the WAL now, on this thread.
    pub fn sync_wal_blocking(&self) -> Result<()> {
        self.inner.db.flush_wal(true)?;
        Ok(())
    }

    /// Visit entries of `cf` in `[from, to)` in order (or reverse), until `f` returns false.
    pub fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        walk(self.inner.db.raw_iterator_cf_opt(self.cf(cf), bounded(from, to)), reverse, f)
    }

    /// Run `f` with an iterator over `[from, to)` of `cf` that it may seek around in.
    pub fn with_iter<T>(&self, cf: Cf, from: &[u8], to: &[u8], f: impl FnOnce(&mut Cursor<'_>) -> T) -> Result<T> {
        let mut c = Cursor { it: self.inner.db.raw_iterator_cf_opt(self.cf(cf), bounded(from, to)) };
        let out = f(&mut c);
        c.it.status()?;
        Ok(out)
    }

    /// The last key of `cf` in `[from, to)`.
    pub fn last_key(&self, cf: Cf, from: &[u8], to: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut out = None;
        self.scan(cf, from, to, true, |k, _| {
            out = Some(k.to_vec());
            false
        })?;
        Ok(out)
    }

    /// Count keys of `cf` in `[from, to)` (cheap estimate not used: exact walk).
    pub fn iter_all(&self, cf: Cf) -> impl Iterator<Item = (Box<[u8]>, Box<[u8]>)> + '_ {
        self.inner.db.iterator_cf(self.cf(cf), IteratorMode::From(&[], Direction::Forward)).map_while(|r| r.ok())
    }

    /// A consistent read view (a RocksDB snapshot), inside the read gate so that
    /// garbage collection cannot remove what it shows.
    pub fn view(&self) -> View<'_> {
        let pass = self.inner.gate.enter();
        View { snap: self.inner.db.snapshot(), storage: self, _pass: pass }
    }

    /// Flush memtables and compact every data column family fully (tests and
    /// DEBUG tooling; garbage collection runs in compactions).
    pub fn compact_all(&self) -> Result<()> {
        // All together: a flush of some column families alone would persist
        // applied data without the applied index that covers it. Without the
        // WAL, the flush is also what garbage collection judges by.
        if self.inner.apply_wal {
            self.flush_all()?;
        } else {
            self.persist_applied()?;
        }
        self.compact()
    }

    /// Compact every data column family fully, flushing nothing first.
    pub(crate) fn compact(&self) -> Result<()> {
        let mut o = rocksdb::CompactOptions::default();
        o.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        for cf in [Cf::Metadata, Cf::Subkey, Cf::ZsetScore, Cf::ExpireIndex, Cf::Links] {
            self.inner.db.compact_range_cf_opt(self.cf(cf), None::<&[u8]>, None::<&[u8]>, &o);
        }
        Ok(())
    }

    /// RocksDB's estimate of the bytes `[from, to)` of `cf` takes in SST
    /// files (what is still only in a memtable is not counted).
    pub fn range_bytes(&self, cf: Cf, from: &[u8], to: &[u8]) -> u64 {
        let range = rocksdb::Range::new(from, to);
        self.inner.db.get_approximate_sizes_cf(self.cf(cf), &[range]).into_iter().sum()
    }

    /// The bytes (keys and values) database 0 stores in each slot of
    /// `[start, end)`, over the data column families, counted by a scan of
    /// a consistent view (memtables included, unlike `range_bytes`); `[i]`
    /// is slot `start + i`.
    pub fn slot_bytes(&self, start: u16, end: u32) -> Result<Vec<u64>> {
        let mut out = vec![0u64; end.saturating_sub(start as u32) as usize];
        let (lo, hi) = (keys::slot_lower_bound(start), keys::slot_upper_bound(end));
        let view = self.view();
        for cf in [Cf::Metadata, Cf::Subkey, Cf::ZsetScore] {
            view.scan(cf, &lo, &hi, false, |k, v| {
                if k.len() >= 2 {
                    let slot = u16::from_be_bytes([k[0], k[1]]);
                    if let Some(b) = out.get_mut(slot.wrapping_sub(start) as usize) {
                        *b += (k.len() + v.len()) as u64;
                    }
                }
                true
            })?;
        }
        Ok(out)
    }

    /// Bytes in the memtables of the data column families (what
    /// `range_bytes` leaves out).
    pub fn memtable_bytes(&self) -> u64 {
        [Cf::Metadata, Cf::Subkey, Cf::ZsetScore]
            .into_iter()
            .filter_map(|cf| {
                self.inner.db.property_int_value_cf(self.cf(cf), "rocksdb.cur-size-all-mem-tables").ok().flatten()
            })
            .sum()
    }

    /// RocksDB's estimate of the live data size, for INFO.
    pub fn approximate_size(&self) -> u64 {
        let mut total = 0;
        for cf in [Cf::Metadata, Cf::Subkey, Cf::ZsetScore] {
            if let Ok(Some(v)) = self.inner.db.property_int_value_cf(self.cf(cf), "rocksdb.estimate-live-data-size") {
                total += v;
            }
            if let Ok(Some(v)) = self.inner.db.property_int_value_cf(self.cf(cf), "rocksdb.cur-size-all-mem-tables") {
                total += v;
            }
        }
        total
    }
}
