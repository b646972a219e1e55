//! A core's Raft log as an append-only segment log on io_uring (issue 11,
//! step 1): what `raft::log_store` writes to unless `--raft-log rocksdb`.
//!
//! One log per core, shared by the regions the core owns: every region's
//! entries of a reactor turn go out in one write and one `fdatasync` (group
//! commit across regions), which per-region files would split into as many
//! syncs as the core has regions with writes.
//!
//! Layout of `<dir>/seg-<seq:016x>.log` (preallocated, `SEGMENT_BYTES` by
//! default):
//! - a header: magic, the segment's number, and the number and valid length of
//!   the segment before it (so recovery knows exactly where that one ends);
//! - records: `[len:4][crc32c:4][body]`, body `[kind:1][region:4][index:8][term:8][payload]`
//!   (big-endian), the CRC over the body. A zero length ends the records.
//!
//! Recovery reads the segments in order. A segment followed by another must be
//! whole up to the length the next one's header names: a bad record there is
//! corruption, reported with the file and offset, and the log does not open.
//! The last segment ends at its first bad or incomplete record (a torn write of
//! a batch that was never acknowledged). Every open cuts the last segment to
//! its valid length (giving back its preallocated tail) and starts a fresh
//! one, so nothing is ever written after a torn tail.
//!
//! Records: entries, committed ids, and truncations (an entry replaces only
//! its own index; a caller replacing a suffix truncates first, and that
//! survives a restart like the entries do).
//!
//! Appends are buffered and go out in two stages, each batch holding what
//! queued while the previous one was in flight:
//! - a writer task writes batches in order, with pwrite(2) on the core's
//!   thread (a copy into preallocated space in the page cache, cheaper than a
//!   trip through the ring); [`SegLog::written`] waits for that.
//!   A written record survives kill -9 (the page cache), which is what lets
//!   Raft apply an entry that a quorum of *other* nodes has made durable
//!   before this node's own fdatasync returns: the entry is in the local file
//!   before it is applied, so a restart never finds the state machine ahead
//!   of its log;
//! - a syncer task (`Always`) fdatasyncs what was written;
//!   [`SegLog::sync`] waits for that. Appends and writes go on meanwhile.
//!
//! A failed write or fdatasync is retried in a fresh segment whose header
//! trusts the old one only as far as it was synced; every batch not yet known
//! durable is written again there, whole and in order, until that succeeds,
//! with [`SegLog::failure`] saying why meanwhile: waiters are never told
//! "failed" for a batch that may still become durable.
//!
//! Each region's vote and purge point live in a small file of their own,
//! replaced atomically (write, sync, rename, sync the directory); segments are
//! deleted oldest first once every region has purged what they hold.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use futures_channel::oneshot;
use glommio::io::{BufferedFile, Directory, OpenOptions};

use super::FsyncPolicy;

mod layout;
mod replay;
pub use layout::{layout, sync_files};

/// Segment size unless the caller asks for another.
pub const SEGMENT_BYTES: u64 = 32 << 20;

/// Where a data directory's segment logs live (`core-<k>` each, see [`layout`]).
pub fn raft_log_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("raftlog")
}
const MAGIC: &[u8; 8] = b"NKVSEG1\0";
const HEADER: u64 = 64;
const REC_HEAD: usize = 8;
const BODY_HEAD: usize = 1 + 4 + 8 + 8;
/// A record larger than this is corruption, not a length.
const MAX_RECORD: usize = 256 << 20;

const KIND_ENTRY: u8 = 1;
const KIND_COMMITTED: u8 = 2;
/// The region's entries from the record's index on are gone.
const KIND_TRUNCATE: u8 = 3;

/// Where an entry's payload is: in memory until its batch is durable, then
/// in a segment and still in memory while it is among the core's most
/// recent [`TAIL_BYTES`] (what apply and replication read), then only in its
/// segment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum At {
    Mem(Bytes),
    Both { mem: Bytes, seg: u64, off: u64, len: u32 },
    Disk { seg: u64, off: u64, len: u32 },
}

/// Payload bytes of durable entries a core keeps in memory besides its
/// segments: the log's recent tail, which apply and replication read.
const TAIL_BYTES: usize = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Loc {
    term: u64,
    at: At,
}

#[derive(Debug, Default)]
struct RegionLog {
    entries: BTreeMap<u64, Loc>,
    /// The last committed log id the region saved: its index and bytes.
    committed: Option<(u64, Bytes)>,
}

struct Segment {
    seq: u64,
    path: PathBuf,
    file: Rc<BufferedFile>,
    /// Bytes written (header included): where the next batch goes.
    len: u64,
    /// Bytes known to be on disk (fdatasynced).
    synced: u64,
    /// Per region, the highest entry index written here.
    max_index: HashMap<u32, u64>,
}

impl Segment {
    /// A segment holding only its header so far.
    fn new(seq: u64, path: PathBuf, file: BufferedFile) -> Segment {
        Segment { seq, path, file: Rc::new(file), len: HEADER, synced: HEADER, max_index: HashMap::new() }
    }
}

/// A region's vote and purge point (the `meta-<region>` file). Log ids and
/// votes are the caller's bytes; the log only needs indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionMeta {
    pub vote: Option<Bytes>,
    /// The last purged entry: its index and its log id.
    pub purged: Option<(u64, Bytes)>,
}

/// What the log holds for one region.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionState {
    pub meta: RegionMeta,
    /// The index of the last entry held (not of the purge point).
    pub last_index: Option<u64>,
    /// The last committed log id saved: its index and bytes.
    pub committed: Option<(u64, Bytes)>,
}

/// A batch written to the active segment and not yet known to be durable.
/// Kept whole: a failed write or fdatasync writes it again into a fresh
/// segment.
struct Unsynced {
    no: u64,
    bytes: Vec<u8>,
    /// Where it was written (0: nowhere yet).
    seg: u64,
    off: u64,
    /// Its entries: (region, index, payload, offset of the payload within `bytes`).
    locs: Vec<(u32, u64, Bytes, usize)>,
    /// Per region, the highest index among its entries.
    maxes: HashMap<u32, u64>,
}

type Waiters = Vec<(u64, oneshot::Sender<()>)>;

/// Take the waiters whose batch is at or below `upto`.
fn ready(waiters: &mut Waiters, upto: u64) -> Vec<oneshot::Sender<()>> {
    let (ready, wait): (Waiters, Waiters) = std::mem::take(waiters).into_iter().partition(|(t, _)| *t <= upto);
    *waiters = wait;
    ready.into_iter().map(|(_, tx)| tx).collect()
}

fn wake(txs: Vec<oneshot::Sender<()>>) {
    for tx in txs {
        let _ = tx.send(());
    }
}

struct Inner {
    segments: Vec<Segment>,
    regions: HashMap<u32, RegionLog>,
    metas: HashMap<u32, RegionMeta>,
    /// Records appended and not yet handed to the writer: batch `current`.
    pending: Vec<u8>,
    /// Per region: the highest index among `pending`'s entries.
    pending_max: HashMap<u32, u64>,
    /// Entries of `pending`: (region, index, payload, offset of the payload within `pending`).
    pending_locs: Vec<(u32, u64, Bytes, usize)>,
    /// The number of the batch `pending` is; the writer takes it whole.
    current: u64,
    /// Every batch up to this one is written to a segment (in the page
    /// cache: it survives the process, not yet the machine).
    written: u64,
    /// Every batch up to this one is durable.
    durable: u64,
    /// Written batches not yet durable, oldest first (all in the active segment).
    unsynced: Vec<Unsynced>,
    /// Durable entries whose payload is also kept in memory, oldest first:
    /// (region, index, payload address, payload length), and their total.
    tail: std::collections::VecDeque<(u32, u64, usize, usize)>,
    tail_bytes: usize,
    write_waiters: Waiters,
    sync_waiters: Waiters,
    /// The writer task runs (it writes batches, one at a time, in order).
    writing: bool,
    /// The syncer task runs (`Always`: it fdatasyncs what was written).
    syncing: bool,
    /// A write or an fdatasync failed: the writer puts every unsynced batch
    /// into a fresh segment before anything else.
    rewrite: bool,
    failure: Option<String>,
}

impl Inner {
    /// The batch that holds everything appended so far.
    fn target(&self) -> u64 {
        if self.pending.is_empty() {
            self.current - 1
        } else {
            self.current
        }
    }

    /// Batches up to `upto` are written: the waiters to wake.
    fn wrote(&mut self, upto: u64) -> Vec<oneshot::Sender<()>> {
        self.written = self.written.max(upto);
        ready(&mut self.write_waiters, self.written)
    }

    /// Batches up to `upto` are durable: their entries are read from their
    /// segment from now on. The waiters to wake.
    fn settle(&mut self, upto: u64) -> Vec<oneshot::Sender<()>> {
        self.durable = self.durable.max(upto);
        let (done, keep): (Vec<Unsynced>, Vec<Unsynced>) =
            std::mem::take(&mut self.unsynced).into_iter().partition(|u| u.no <= upto);
        self.unsynced = keep;
        for u in done {
            if let Some(segment) = self.segments.iter_mut().find(|s| s.seq == u.seg) {
                for (r, m) in &u.maxes {
                    let e = segment.max_index.entry(*r).or_default();
                    *e = (*e).max(*m);
                }
            }
            for (region, index, data, at) in u.locs {
                // Still the live entry of that index (not replaced since)?
                if let Some(loc) = self.regions.get_mut(&region).and_then(|l| l.entries.get_mut(&index)) {
                    if matches!(&loc.at, At::Mem(b) if b.as_ptr() == data.as_ptr()) {
                        let (seg, off, len) = (u.seg, u.off + at as u64, data.len() as u32);
                        self.tail.push_back((region, index, data.as_ptr() as usize, data.len()));
                        self.tail_bytes += data.len();
                        loc.at = At::Both { mem: data, seg, off, len };
                    }
                }
            }
        }
        self.trim_tail();
        ready(&mut self.sync_waiters, self.durable)
    }

    /// Keep at most [`TAIL_BYTES`] of durable payloads in memory: the oldest
    /// are read from their segments from now on.
    fn trim_tail(&mut self) {
        while self.tail_bytes > TAIL_BYTES {
            let Some((region, index, addr, n)) = self.tail.pop_front() else { break };
            self.tail_bytes -= n;
            if let Some(loc) = self.regions.get_mut(&region).and_then(|l| l.entries.get_mut(&index)) {
                if let At::Both { mem, seg, off, len } = &loc.at {
                    if mem.as_ptr() as usize == addr {
                        loc.at = At::Disk { seg: *seg, off: *off, len: *len };
                    }
                }
            }
        }
    }
}

/// A core's segment log. Single-threaded (`Rc`): lives on its core's reactor.
pub struct SegLog {
    dir: PathBuf,
    segment_bytes: u64,
    /// `Always`: a batch counts as durable once fdatasynced. Otherwise once
    /// written (the page cache survives kill -9), synced once a second
    /// (`EverySec`) or when the OS decides (`No`).
    policy: FsyncPolicy,
    /// Written since the last fdatasync (not `Always`).
    dirty: Cell<bool>,
    inner: RefCell<Inner>,
    /// Retries after a failed write or sync, since the log opened.
    retries: Cell<u64>,
    /// Batches written since the log opened.
    batches: Cell<u64>,
    /// fdatasyncs that succeeded since the log opened.
    syncs: Cell<u64>,
    /// A failpoint: while armed, fdatasyncs fail.
    pub(crate) fail_syncs: crate::failpoint::Countdown,
    /// The file system refused to preallocate a segment (said once).
    no_prealloc: Cell<bool>,
}

fn corrupt(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn seg_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("seg-{seq:016x}.log"))
}

fn meta_path(dir: &Path, region: u32) -> PathBuf {
    dir.join(format!("meta-{region}"))
}

fn header(seq: u64, prev_seq: u64, prev_len: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER as usize);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&seq.to_be_bytes());
    h.extend_from_slice(&prev_seq.to_be_bytes());
    h.extend_from_slice(&prev_len.to_be_bytes());
    let crc = crc32c::crc32c(&h);
    h.extend_from_slice(&crc.to_be_bytes());
    h.resize(HEADER as usize, 0);
    h
}

/// (seq, prev_seq, prev_len) of a segment header.
fn parse_header(h: &[u8]) -> Option<(u64, u64, u64)> {
    if h.len() < 36 || &h[..8] != MAGIC {
        return None;
    }
    let crc = u32::from_be_bytes(h[32..36].try_into().ok()?);
    if crc32c::crc32c(&h[..32]) != crc {
        return None;
    }
    let n = |i: usize| u64::from_be_bytes(h[i..i + 8].try_into().unwrap_or_default());
    Some((n(8), n(16), n(24)))
}

fn push_record(out: &mut Vec<u8>, kind: u8, region: u32, index: u64, term: u64, payload: &[u8]) -> usize {
    let body_len = BODY_HEAD + payload.len();
    let start = out.len();
    out.extend_from_slice(&(body_len as u32).to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(kind);
    out.extend_from_slice(&region.to_be_bytes());
    out.extend_from_slice(&index.to_be_bytes());
    out.extend_from_slice(&term.to_be_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c(&out[start + REC_HEAD..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_be_bytes());
    start + REC_HEAD + BODY_HEAD
}

/// One record read back: kind, region, index, term, payload range in the buffer.
struct Parsed {
    kind: u8,
    region: u32,
    index: u64,
    term: u64,
    payload: std::ops::Range<usize>,
    next: usize,
}

/// The record at `at` of `buf`, or `None` where the records end (a zero or
/// impossible length, a short or damaged record).
fn parse_record(buf: &[u8], at: usize) -> Option<Parsed> {
    let head = buf.get(at..at + REC_HEAD)?;
    let len = u32::from_be_bytes(head[..4].try_into().ok()?) as usize;
    if !(BODY_HEAD..=MAX_RECORD).contains(&len) {
        return None;
    }
    let crc = u32::from_be_bytes(head[4..8].try_into().ok()?);
    let body = buf.get(at + REC_HEAD..at + REC_HEAD + len)?;
    if crc32c::crc32c(body) != crc {
        return None;
    }
    let start = at + REC_HEAD;
    Some(Parsed {
        kind: body[0],
        region: u32::from_be_bytes(body[1..5].try_into().ok()?),
        index: u64::from_be_bytes(body[5..13].try_into().ok()?),
        term: u64::from_be_bytes(body[13..21].try_into().ok()?),
        payload: start + BODY_HEAD..start + len,
        next: start + len,
    })
}

async fn read_all(file: &BufferedFile, len: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(len as usize);
    while (out.len() as u64) < len {
        let want = ((len - out.len() as u64) as usize).min(4 << 20);
        let r = file.read_at(out.len() as u64, want).await?;
        if r.is_empty() {
            break;
        }
        out.extend_from_slice(&r);
    }
    Ok(out)
}

async fn write_all(file: &BufferedFile, mut buf: Vec<u8>, mut pos: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = file.write_at(buf.clone(), pos).await?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote nothing"));
        }
        buf.drain(..n);
        pos += n as u64;
    }
    Ok(())
}

/// Write `buf` at `pos` with pwrite(2), on the calling thread: a copy into
/// the page cache (the segment's space is preallocated), which costs less
/// than a round trip through the ring for the small batches of the write
/// path, and lets an append return in the same reactor turn. fdatasyncs stay
/// on the ring.
fn pwrite_all(file: &BufferedFile, buf: &[u8], pos: u64) -> io::Result<()> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::fs::FileExt;
    // SAFETY: borrows the descriptor `file` owns for this call only;
    // ManuallyDrop never closes it.
    let f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(file.as_raw_fd()) });
    f.write_all_at(buf, pos)
}

fn encode_meta(m: &RegionMeta) -> Vec<u8> {
    let mut b = Vec::new();
    match &m.purged {
        Some((i, id)) => {
            b.push(1);
            b.extend_from_slice(&i.to_be_bytes());
            b.extend_from_slice(&(id.len() as u32).to_be_bytes());
            b.extend_from_slice(id);
        }
        None => b.push(0),
    }
    match &m.vote {
        Some(v) => {
            b.push(1);
            b.extend_from_slice(v);
        }
        None => b.push(0),
    }
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_be_bytes());
    b
}

fn decode_meta(b: &[u8]) -> Option<RegionMeta> {
    let (body, crc) = b.split_at(b.len().checked_sub(4)?);
    if crc32c::crc32c(body) != u32::from_be_bytes(crc.try_into().ok()?) {
        return None;
    }
    let mut m = RegionMeta::default();
    let rest = match body.first()? {
        1 => {
            let i = u64::from_be_bytes(body.get(1..9)?.try_into().ok()?);
            let n = u32::from_be_bytes(body.get(9..13)?.try_into().ok()?) as usize;
            m.purged = Some((i, Bytes::copy_from_slice(body.get(13..13 + n)?)));
            &body[13 + n..]
        }
        0 => &body[1..],
        _ => return None,
    };
    match rest.first()? {
        1 => m.vote = Some(Bytes::copy_from_slice(&rest[1..])),
        0 => {}
        _ => return None,
    }
    Some(m)
}

impl SegLog {
    /// Open (or create) the log in `dir`: read every segment and meta file,
    /// then start a fresh segment. What each region holds is in
    /// [`state`](Self::state).
    pub async fn open(dir: impl Into<PathBuf>, segment_bytes: u64, policy: FsyncPolicy) -> io::Result<Rc<SegLog>> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let (seqs, metas) = replay::list_files(&dir)?;
        let (mut segments, headers) = replay::open_segments(&dir, &seqs).await?;
        let mut regions = replay::replay(&mut segments, &headers).await?;
        // Entries at or below a region's purge point are gone.
        for (r, m) in &metas {
            if let (Some((p, _)), Some(log)) = (&m.purged, regions.get_mut(r)) {
                log.entries = log.entries.split_off(&(p + 1));
            }
        }
        let log = Rc::new(SegLog {
            dir,
            segment_bytes: segment_bytes.max(HEADER + 4096),
            policy,
            dirty: Cell::new(false),
            inner: RefCell::new(Inner {
                segments,
                regions,
                metas,
                pending: Vec::new(),
                pending_max: HashMap::new(),
                pending_locs: Vec::new(),
                current: 1,
                written: 0,
                durable: 0,
                unsynced: Vec::new(),
                tail: Default::default(),
                tail_bytes: 0,
                write_waiters: Vec::new(),
                sync_waiters: Vec::new(),
                writing: false,
                syncing: false,
                rewrite: false,
                failure: None,
            }),
            retries: Cell::new(0),
            batches: Cell::new(0),
            syncs: Cell::new(0),
            fail_syncs: Default::default(),
            no_prealloc: Cell::new(false),
        });
        // The last segment ends where its records do: give back its
        // preallocated tail (and any torn batch in it) before the next one
        // starts, so restarts do not pile up preallocated space.
        let last = log.inner.borrow().segments.last().map(|s| (s.file.clone(), s.len));
        if let Some((file, len)) = last {
            file.truncate(len).await?;
            file.fdatasync().await?;
        }
        log.roll(true).await?;
        log.delete_purged_segments().await;
        if policy == FsyncPolicy::EverySec {
            glommio::spawn_local(every_second(Rc::downgrade(&log))).detach();
        }
        Ok(log)
    }

    /// fdatasync `file` (a failpoint can make the next ones fail).
    async fn fdatasync(&self, file: &BufferedFile) -> io::Result<()> {
        if self.fail_syncs.fire() {
            return Err(io::Error::other("injected fdatasync failure"));
        }
        file.fdatasync().await.map_err(io::Error::from)?;
        self.syncs.set(self.syncs.get() + 1);
        Ok(())
    }

    /// The active segment: its file, number and length.
    fn active(&self) -> (Rc<BufferedFile>, u64, u64) {
        let inner = self.inner.borrow();
        let s = inner.segments.last().expect("an active segment");
        (s.file.clone(), s.seq, s.len)
    }

    /// Segment `seq` is on disk up to `len`.
    fn synced_to(&self, seq: u64, len: u64) {
        if let Some(s) = self.inner.borrow_mut().segments.iter_mut().find(|s| s.seq == seq) {
            s.synced = s.synced.max(len);
        }
    }

    /// fdatasync the active segment if anything was written since the last one
    /// (`EverySec` and `No`).
    async fn sync_dirty(&self) -> io::Result<()> {
        if !self.dirty.replace(false) {
            return Ok(());
        }
        let (file, seq, len) = self.active();
        self.fdatasync(&file).await.inspect_err(|_| self.dirty.set(true))?;
        self.synced_to(seq, len);
        Ok(())
    }

    /// Start a new segment after the last one (synced, its directory entry
    /// too). `keep`: the old one is synced first and recovery trusts all of
    /// it; otherwise (after a failed write or sync) only what was synced of it.
    async fn roll(&self, keep: bool) -> io::Result<()> {
        let last = {
            let inner = self.inner.borrow();
            inner.segments.last().map(|s| (s.file.clone(), s.seq, s.len, s.synced))
        };
        let (seq, prev_seq, prev_len) = match last {
            Some((file, seq, len, synced)) => {
                let prev_len = if keep {
                    if synced < len {
                        self.dirty.set(false);
                        self.fdatasync(&file).await.inspect_err(|_| self.dirty.set(true))?;
                        self.synced_to(seq, len);
                        // Every batch written so far is in this segment or an older one.
                        let woken = {
                            let mut inner = self.inner.borrow_mut();
                            let w = inner.written;
                            inner.settle(w)
                        };
                        wake(woken);
                    }
                    len
                } else {
                    synced
                };
                (seq + 1, seq, prev_len)
            }
            None => (1, 0, 0),
        };
        let path = seg_path(&self.dir, seq);
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).buffered_open(&path).await?;
        // A file system without fallocate (some FUSE and network ones): the
        // segment grows by its writes instead, as RocksDB's files do.
        if let Err(e) = file.pre_allocate(self.segment_bytes, false).await {
            let e: io::Error = e.into();
            // (glommio keeps the kind, not the errno: EOPNOTSUPP and ENOSYS are both Unsupported.)
            if e.kind() != io::ErrorKind::Unsupported {
                return Err(e);
            }
            if !self.no_prealloc.replace(true) {
                eprintln!("{}: the file system cannot preallocate; the Raft log grows by writing", self.dir.display());
            }
        }
        write_all(&file, header(seq, prev_seq, prev_len), 0).await?;
        self.fdatasync(&file).await?;
        Directory::open(&self.dir).await?.sync().await?;
        self.inner.borrow_mut().segments.push(Segment::new(seq, path, file));
        Ok(())
    }

    /// What the log holds for `region`.
    pub fn state(&self, region: u32) -> RegionState {
        let inner = self.inner.borrow();
        let log = inner.regions.get(&region);
        let meta = inner.metas.get(&region).cloned().unwrap_or_default();
        let last_index = log.and_then(|l| l.entries.keys().next_back().copied());
        RegionState { meta, last_index, committed: log.and_then(|l| l.committed.clone()) }
    }

    /// Queue an entry: [`written`](Self::written) waits until it is in the
    /// file, [`sync`](Self::sync) until it is durable. It replaces only its
    /// own index: a caller replacing a suffix truncates first.
    pub fn append(&self, region: u32, index: u64, term: u64, payload: &[u8]) {
        self.append_owned(region, index, term, Bytes::copy_from_slice(payload))
    }

    /// [`append`](Self::append) of a payload the log may keep (as the
    /// in-memory copy of the entry) without copying it.
    pub fn append_owned(&self, region: u32, index: u64, term: u64, data: Bytes) {
        let mut inner = self.inner.borrow_mut();
        let inner = &mut *inner;
        let at = push_record(&mut inner.pending, KIND_ENTRY, region, index, term, &data);
        inner.pending_locs.push((region, index, data.clone(), at));
        let m = inner.pending_max.entry(region).or_default();
        *m = (*m).max(index);
        inner.regions.entry(region).or_default().entries.insert(index, Loc { term, at: At::Mem(data) });
    }

    /// Record the region's committed log id: queued like an entry, and
    /// written soon, without anyone waiting for it. Nothing needs to: the
    /// entries it covers are in the file before it, and a crash that loses it
    /// leaves an older committed id, which a restart only applies less far
    /// from (the rest commits again through Raft).
    pub fn save_committed(self: &Rc<Self>, region: u32, index: u64, id: &[u8]) {
        {
            let mut inner = self.inner.borrow_mut();
            push_record(&mut inner.pending, KIND_COMMITTED, region, index, 0, id);
            inner.regions.entry(region).or_default().committed = Some((index, Bytes::copy_from_slice(id)));
        }
        self.kick();
    }

    /// Drop the region's entries after `index` (all of them for `None`);
    /// queued like an entry.
    pub fn truncate_after(&self, region: u32, index: Option<u64>) {
        let from = index.map_or(0, |i| i + 1);
        let mut inner = self.inner.borrow_mut();
        push_record(&mut inner.pending, KIND_TRUNCATE, region, from, 0, &[]);
        if let Some(log) = inner.regions.get_mut(&region) {
            let _ = log.entries.split_off(&from);
        }
    }

    /// Wait until everything queued before this call is written to its
    /// segment: it survives the process (kill -9), not yet a power cut.
    pub async fn written(self: &Rc<Self>) {
        self.wait(false).await
    }

    /// Wait until everything queued before this call is durable. Errors
    /// are retried, not returned: this waits through a full disk until it can
    /// write again (see [`failure`](Self::failure)).
    pub async fn sync(self: &Rc<Self>) {
        self.wait(true).await
    }

    /// Wait until everything queued before this call is on disk, whatever the
    /// policy: what a node needs in order to start again (a membership
    /// change) must survive a power cut even under `no`.
    pub async fn sync_now(self: &Rc<Self>) -> io::Result<()> {
        if self.policy == FsyncPolicy::Always {
            self.sync().await;
            return Ok(());
        }
        self.written().await;
        self.dirty.set(true);
        self.sync_dirty().await
    }

    /// Wait until everything queued so far is written, or (`durable`) durable.
    async fn wait(self: &Rc<Self>, durable: bool) {
        let rx = {
            let mut inner = self.inner.borrow_mut();
            let inner = &mut *inner;
            let target = inner.target();
            let (done, waiters) = if durable {
                (inner.durable, &mut inner.sync_waiters)
            } else {
                (inner.written, &mut inner.write_waiters)
            };
            if target <= done {
                return;
            }
            let (tx, rx) = oneshot::channel();
            waiters.push((target, tx));
            rx
        };
        self.kick();
        let _ = rx.await;
    }

    /// Why the last write or sync failed, while the log is retrying it.
    pub fn failure(&self) -> Option<String> {
        self.inner.borrow().failure.clone()
    }

    /// Start the writer if something waits to be written, and the syncer if
    /// something written waits to be synced.
    fn kick(self: &Rc<Self>) {
        let (write, sync) = {
            let mut inner = self.inner.borrow_mut();
            let write = !inner.writing && (!inner.pending.is_empty() || inner.rewrite);
            inner.writing |= write;
            let sync =
                self.policy == FsyncPolicy::Always && !inner.syncing && !inner.rewrite && inner.written > inner.durable;
            inner.syncing |= sync;
            (write, sync)
        };
        if write {
            glommio::spawn_local(self.clone().writer()).detach();
        }
        if sync {
            glommio::spawn_local(self.clone().syncer()).detach();
        }
    }

    fn failed(&self, e: &io::Error) {
        self.retries.set(self.retries.get() + 1);
        let first = self.inner.borrow().failure.is_none();
        self.inner.borrow_mut().failure = Some(e.to_string());
        if first {
            eprintln!("neokv: the Raft log could not be written ({e}); retrying");
        }
    }

    /// Write batches, in order, until none is pending. Appends go on while a
    /// batch is written or synced; each batch holds what queued meanwhile.
    async fn writer(self: Rc<Self>) {
        let mut backoff = super::Backoff::default();
        loop {
            if self.inner.borrow().rewrite {
                match self.rewrite().await {
                    Ok(()) => backoff = super::Backoff::default(),
                    Err(e) => {
                        self.failed(&e);
                        backoff.wait().await;
                    }
                }
                continue;
            }
            let (bytes, locs, maxes, no) = {
                let mut inner = self.inner.borrow_mut();
                if inner.pending.is_empty() {
                    inner.writing = false;
                    return;
                }
                let batch = std::mem::take(&mut inner.pending);
                let locs = std::mem::take(&mut inner.pending_locs);
                let maxes = std::mem::take(&mut inner.pending_max);
                // Appends from here on belong to the next batch.
                let no = inner.current;
                inner.current += 1;
                (batch, locs, maxes, no)
            };
            let result = self.write_batch(&bytes).await;
            let mut inner = self.inner.borrow_mut();
            match result {
                Ok((seg, off)) => {
                    inner.unsynced.push(Unsynced { no, bytes, seg, off, locs, maxes });
                    let mut woken = inner.wrote(no);
                    if self.policy != FsyncPolicy::Always {
                        woken.extend(inner.settle(no));
                    }
                    drop(inner);
                    wake(woken);
                    self.kick();
                }
                Err(e) => {
                    inner.unsynced.push(Unsynced { no, bytes, seg: 0, off: 0, locs, maxes });
                    inner.rewrite = true;
                    drop(inner);
                    self.failed(&e);
                }
            }
        }
    }

    /// `Always`: fdatasync the active segment until everything written is durable.
    async fn syncer(self: Rc<Self>) {
        loop {
            let (file, seq, len, target) = {
                let mut inner = self.inner.borrow_mut();
                if inner.rewrite || inner.written <= inner.durable {
                    inner.syncing = false;
                    return;
                }
                let s = inner.segments.last().expect("an active segment");
                (s.file.clone(), s.seq, s.len, inner.written)
            };
            match self.fdatasync(&file).await {
                Ok(()) => {
                    self.synced_to(seq, len);
                    let woken = self.inner.borrow_mut().settle(target);
                    wake(woken);
                }
                Err(e) => {
                    self.failed(&e);
                    {
                        let mut inner = self.inner.borrow_mut();
                        inner.rewrite = true;
                        inner.syncing = false;
                    }
                    self.kick();
                    return;
                }
            }
        }
    }

    /// After a failed write or sync: what the active segment holds past its
    /// synced length is unknown, so every unsynced batch goes again, whole
    /// and in order, into a fresh segment that trusts the old one only up to
    /// that length. Waiters are never told "failed" for a batch that may
    /// still become durable.
    async fn rewrite(&self) -> io::Result<()> {
        self.roll(false).await?;
        let (file, seq) = {
            let inner = self.inner.borrow();
            let s = inner.segments.last().expect("an active segment");
            (s.file.clone(), s.seq)
        };
        let (bytes, last) = {
            let inner = self.inner.borrow();
            let mut all = Vec::new();
            for u in &inner.unsynced {
                all.extend_from_slice(&u.bytes);
            }
            (all, inner.unsynced.last().map(|u| u.no))
        };
        write_all(&file, bytes.clone(), HEADER).await?;
        self.fdatasync(&file).await?;
        let woken = {
            let mut inner = self.inner.borrow_mut();
            let end = HEADER + bytes.len() as u64;
            if let Some(s) = inner.segments.iter_mut().find(|s| s.seq == seq) {
                s.len = end;
                s.synced = end;
            }
            let mut off = HEADER;
            for u in inner.unsynced.iter_mut() {
                u.seg = seq;
                u.off = off;
                off += u.bytes.len() as u64;
            }
            inner.rewrite = false;
            if inner.failure.take().is_some() {
                eprintln!("neokv: the Raft log is written again");
            }
            let mut woken = Vec::new();
            if let Some(no) = last {
                woken = inner.wrote(no);
                woken.extend(inner.settle(no));
            }
            woken
        };
        wake(woken);
        Ok(())
    }

    /// Write `batch` at the end of the active segment (rolling first if it
    /// does not fit): (segment, offset of the batch). Not synced.
    async fn write_batch(&self, batch: &[u8]) -> io::Result<(u64, u64)> {
        let full = {
            let inner = self.inner.borrow();
            let s = inner.segments.last().expect("an active segment");
            s.len > HEADER && s.len + batch.len() as u64 > self.segment_bytes
        };
        if full {
            self.roll(true).await?;
        }
        let (file, seq, at) = self.active();
        pwrite_all(&file, batch, at)?;
        if self.policy != FsyncPolicy::Always {
            self.dirty.set(true);
        }
        self.batches.set(self.batches.get() + 1);
        let mut inner = self.inner.borrow_mut();
        if let Some(s) = inner.segments.iter_mut().find(|s| s.seq == seq) {
            s.len = at + batch.len() as u64;
        }
        Ok((seq, at))
    }

    /// The payloads of `region`'s entries in `from..to` (as many as are
    /// there, in order): (index, term, payload).
    pub async fn read(&self, region: u32, from: u64, to: u64) -> io::Result<Vec<(u64, u64, Bytes)>> {
        let locs: Vec<(u64, Loc)> = {
            let inner = self.inner.borrow();
            match inner.regions.get(&region) {
                Some(l) => l.entries.range(from..to).map(|(i, l)| (*i, l.clone())).collect(),
                None => Vec::new(),
            }
        };
        let mut out = Vec::with_capacity(locs.len());
        for (index, loc) in locs {
            let (seg, off, len) = match loc.at {
                At::Mem(b) | At::Both { mem: b, .. } => {
                    out.push((index, loc.term, b));
                    continue;
                }
                At::Disk { seg, off, len } => (seg, off, len),
            };
            let file = {
                let inner = self.inner.borrow();
                inner.segments.iter().find(|s| s.seq == seg).map(|s| s.file.clone())
            };
            let file = file.ok_or_else(|| corrupt(format!("segment {seg} of entry {index} is gone")))?;
            let r = file.read_at(off, len as usize).await?;
            if r.len() != len as usize {
                return Err(corrupt(format!("entry {index}: short read")));
            }
            out.push((index, loc.term, Bytes::copy_from_slice(&r)));
        }
        Ok(out)
    }

    /// Replace the region's meta file atomically (write, sync, rename, sync
    /// the directory): its vote or purge point survives any crash whole.
    async fn save_meta(&self, region: u32, meta: RegionMeta) -> io::Result<()> {
        let path = meta_path(&self.dir, region);
        let tmp = path.with_extension("tmp");
        let mut f = OpenOptions::new().write(true).create(true).truncate(true).buffered_open(&tmp).await?;
        write_all(&f, encode_meta(&meta), 0).await?;
        f.fdatasync().await?;
        f.rename(&path).await?;
        f.close().await?;
        Directory::open(&self.dir).await?.sync().await?;
        self.inner.borrow_mut().metas.insert(region, meta);
        Ok(())
    }

    /// Save the region's vote (durable when this returns).
    pub async fn save_vote(&self, region: u32, vote: Bytes) -> io::Result<()> {
        let mut m = self.inner.borrow().metas.get(&region).cloned().unwrap_or_default();
        m.vote = Some(vote);
        self.save_meta(region, m).await
    }

    /// Forget the region's entries up to `index` (whose log id is `id`): the
    /// purge point is saved first, then segments nobody needs are deleted.
    pub async fn purge(&self, region: u32, index: u64, id: Bytes) -> io::Result<()> {
        let mut m = self.inner.borrow().metas.get(&region).cloned().unwrap_or_default();
        if m.purged.as_ref().is_some_and(|(p, _)| *p >= index) {
            return Ok(());
        }
        m.purged = Some((index, id));
        self.save_meta(region, m).await?;
        if let Some(log) = self.inner.borrow_mut().regions.get_mut(&region) {
            log.entries = log.entries.split_off(&(index + 1));
        }
        self.delete_purged_segments().await;
        Ok(())
    }

    /// Delete the oldest segments (never the active one) whose entries every
    /// region has purged.
    async fn delete_purged_segments(&self) {
        loop {
            let victim = {
                let inner = self.inner.borrow();
                let Some(first) = inner.segments.first() else { return };
                if inner.segments.len() < 2 {
                    return;
                }
                let purged = |r: &u32| inner.metas.get(r).and_then(|m| m.purged.as_ref()).map(|(i, _)| *i);
                if !first.max_index.iter().all(|(r, max)| purged(r).is_some_and(|p| p >= *max)) {
                    return;
                }
                (first.path.clone(), first.file.clone())
            };
            // Deleting the oldest is safe at any point: recovery starts at
            // whatever oldest segment is left, which names its predecessor
            // only to bound it.
            if victim.1.remove().await.is_err() && std::fs::remove_file(&victim.0).is_err() {
                return;
            }
            self.inner.borrow_mut().segments.remove(0);
        }
    }

    /// Make this log hold `region` exactly as given (its entries, committed
    /// id, vote and purge point), whatever it held of it before; durable when
    /// this returns. For moving a region's log here from elsewhere: run again
    /// after a crash, it gives the same result.
    pub async fn import(
        self: &Rc<Self>,
        region: u32,
        entries: Vec<(u64, u64, Bytes)>,
        committed: Option<(u64, Bytes)>,
        meta: RegionMeta,
    ) -> io::Result<()> {
        self.truncate_after(region, None);
        for (i, t, p) in &entries {
            self.append(region, *i, *t, p);
        }
        if let Some((i, id)) = &committed {
            self.save_committed(region, *i, id);
        }
        self.sync().await;
        self.save_meta(region, meta.clone()).await?;
        if let (Some((p, _)), Some(log)) = (&meta.purged, self.inner.borrow_mut().regions.get_mut(&region)) {
            log.entries = log.entries.split_off(&(p + 1));
        }
        Ok(())
    }

    /// The payload length of each entry the log holds for `region`, by index
    /// (what retention by size counts, `raft::log_store::LogSizes`).
    pub fn entry_sizes(&self, region: u32) -> Vec<(u64, u32)> {
        let inner = self.inner.borrow();
        let Some(log) = inner.regions.get(&region) else { return Vec::new() };
        log.entries
            .iter()
            .map(|(&i, loc)| {
                let len = match &loc.at {
                    At::Mem(b) => b.len() as u32,
                    At::Both { len, .. } | At::Disk { len, .. } => *len,
                };
                (i, len)
            })
            .collect()
    }

    /// Every region the log holds anything of (entries, a committed id, a
    /// vote or a purge point), ascending.
    pub fn regions(&self) -> Vec<u32> {
        let inner = self.inner.borrow();
        let mut r: Vec<u32> = inner.regions.keys().chain(inner.metas.keys()).copied().collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Retries after failed writes or syncs since the log opened.
    pub fn retries(&self) -> u64 {
        self.retries.get()
    }

    /// Batches written (one pwrite each) since the log opened.
    pub fn batches(&self) -> u64 {
        self.batches.get()
    }

    /// fdatasyncs since the log opened (each covers every batch written before it).
    pub fn syncs(&self) -> u64 {
        self.syncs.get()
    }

    /// The segment files, oldest first (for tests and INFO).
    pub fn segment_paths(&self) -> Vec<PathBuf> {
        self.inner.borrow().segments.iter().map(|s| s.path.clone()).collect()
    }
}

/// `EverySec`: fdatasync what was written, once a second, while the log lives.
async fn every_second(log: std::rc::Weak<SegLog>) {
    loop {
        glommio::timer::sleep(Duration::from_secs(1)).await;
        let Some(log) = log.upgrade() else { return };
        if let Err(e) = log.sync_dirty().await {
            eprintln!("neokv: fdatasync of the Raft log failed ({e}); trying again in a second");
        }
    }
}

#[cfg(test)]
mod tests;
