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
    /// Tests: this many coming fdatasyncs fail.
    fail_syncs: Cell<u32>,
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
        let mut seqs = Vec::new();
        let mut metas = HashMap::new();
        for e in std::fs::read_dir(&dir)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            if let Some(hex) = name.strip_prefix("seg-").and_then(|n| n.strip_suffix(".log")) {
                if let Ok(seq) = u64::from_str_radix(hex, 16) {
                    seqs.push(seq);
                }
            } else if let Some(r) = name.strip_prefix("meta-").and_then(|r| r.parse::<u32>().ok()) {
                let bytes = std::fs::read(dir.join(&name))?;
                let m =
                    decode_meta(&bytes).ok_or_else(|| corrupt(format!("{}: damaged", dir.join(&name).display())))?;
                metas.insert(r, m);
            } else if name.starts_with("meta-") && name.ends_with(".tmp") {
                // A replacement that never got renamed in: the old file stands.
                let _ = std::fs::remove_file(dir.join(&name));
            }
        }
        seqs.sort_unstable();
        let mut segments = Vec::new();
        let mut regions: HashMap<u32, RegionLog> = HashMap::new();
        // Each segment's header: (prev_seq, prev_len), to bound the one before.
        let mut headers = Vec::new();
        for (n, &seq) in seqs.iter().enumerate() {
            let path = seg_path(&dir, seq);
            let file = OpenOptions::new().read(true).write(true).buffered_open(&path).await?;
            let h = file.read_at(0, HEADER as usize).await?;
            let Some((s, prev_seq, prev_len)) = parse_header(&h) else {
                if n + 1 == seqs.len() {
                    // A crash while starting it: its header is synced before
                    // any record goes in, so it holds nothing.
                    drop(file);
                    std::fs::remove_file(&path)?;
                    break;
                }
                return Err(corrupt(format!("{}: bad segment header", path.display())));
            };
            if s != seq {
                return Err(corrupt(format!("{}: header says segment {s}", path.display())));
            }
            headers.push((prev_seq, prev_len));
            segments.push(Segment {
                seq,
                path,
                file: Rc::new(file),
                len: HEADER,
                synced: HEADER,
                max_index: HashMap::new(),
            });
        }
        for i in 0..segments.len() {
            // Bounded by the next segment's header, or (the last) by its records.
            let bound = match headers.get(i + 1) {
                Some(&(prev_seq, prev_len)) => {
                    if prev_seq != segments[i].seq {
                        return Err(corrupt(format!(
                            "{}: follows segment {prev_seq}, not {} (a segment is missing)",
                            segments[i + 1].path.display(),
                            segments[i].seq
                        )));
                    }
                    Some(prev_len)
                }
                None => None,
            };
            let size = segments[i].file.file_size().await?;
            let buf = read_all(&segments[i].file, bound.unwrap_or(size).min(size)).await?;
            let mut at = HEADER as usize;
            loop {
                if bound.is_some_and(|b| at as u64 >= b) {
                    break;
                }
                let Some(p) = parse_record(&buf, at) else {
                    if let Some(b) = bound {
                        return Err(corrupt(format!(
                            "{}: damaged record at offset {at} (the segment holds {b} bytes)",
                            segments[i].path.display()
                        )));
                    }
                    break;
                };
                let seg = &mut segments[i];
                let log = regions.entry(p.region).or_default();
                match p.kind {
                    KIND_ENTRY => {
                        // Replaces only its own index: a conflicting suffix
                        // went with a truncate record first.
                        let at = At::Disk { seg: seg.seq, off: p.payload.start as u64, len: p.payload.len() as u32 };
                        log.entries.insert(p.index, Loc { term: p.term, at });
                        let m = seg.max_index.entry(p.region).or_default();
                        *m = (*m).max(p.index);
                    }
                    KIND_COMMITTED => log.committed = Some((p.index, Bytes::copy_from_slice(&buf[p.payload.clone()]))),
                    KIND_TRUNCATE => {
                        let _ = log.entries.split_off(&p.index);
                    }
                    k => {
                        return Err(corrupt(format!(
                            "{}: unknown record kind {k} at offset {at}",
                            segments[i].path.display()
                        )))
                    }
                }
                at = p.next;
            }
            segments[i].len = at as u64;
            segments[i].synced = at as u64;
        }
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
            fail_syncs: Cell::new(0),
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

    /// fdatasync `file` (tests can make the next ones fail).
    async fn fdatasync(&self, file: &BufferedFile) -> io::Result<()> {
        if self.fail_syncs.get() > 0 {
            self.fail_syncs.set(self.fail_syncs.get() - 1);
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
        file.pre_allocate(self.segment_bytes, false).await?;
        write_all(&file, header(seq, prev_seq, prev_len), 0).await?;
        self.fdatasync(&file).await?;
        Directory::open(&self.dir).await?.sync().await?;
        self.inner.borrow_mut().segments.push(Segment {
            seq,
            path,
            file: Rc::new(file),
            len: HEADER,
            synced: HEADER,
            max_index: HashMap::new(),
        });
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
        let mut inner = self.inner.borrow_mut();
        let inner = &mut *inner;
        let at = push_record(&mut inner.pending, KIND_ENTRY, region, index, term, payload);
        let data = Bytes::copy_from_slice(payload);
        inner.pending_locs.push((region, index, data.clone(), at));
        let m = inner.pending_max.entry(region).or_default();
        *m = (*m).max(index);
        inner.regions.entry(region).or_default().entries.insert(index, Loc { term, at: At::Mem(data) });
    }

    /// Record the region's committed log id (queued like an entry).
    pub fn save_committed(&self, region: u32, index: u64, id: &[u8]) {
        let mut inner = self.inner.borrow_mut();
        push_record(&mut inner.pending, KIND_COMMITTED, region, index, 0, id);
        inner.regions.entry(region).or_default().committed = Some((index, Bytes::copy_from_slice(id)));
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
        let rx = {
            let mut inner = self.inner.borrow_mut();
            let target = inner.target();
            if target <= inner.written {
                return;
            }
            let (tx, rx) = oneshot::channel();
            inner.write_waiters.push((target, tx));
            rx
        };
        self.kick();
        let _ = rx.await;
    }

    /// Wait until everything queued before this call is durable. Errors
    /// are retried, not returned: this waits through a full disk until it can
    /// write again (see [`failure`](Self::failure)).
    pub async fn sync(self: &Rc<Self>) {
        let rx = {
            let mut inner = self.inner.borrow_mut();
            let target = inner.target();
            if target <= inner.durable {
                return;
            }
            let (tx, rx) = oneshot::channel();
            inner.sync_waiters.push((target, tx));
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
            let sync = self.policy == FsyncPolicy::Always
                && !inner.syncing
                && !inner.rewrite
                && inner.written > inner.durable;
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
        let mut backoff = Duration::from_millis(50);
        loop {
            if self.inner.borrow().rewrite {
                match self.rewrite().await {
                    Ok(()) => backoff = Duration::from_millis(50),
                    Err(e) => {
                        self.failed(&e);
                        glommio::timer::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(1));
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

/// fdatasync every segment file under `root` (the [`raft_log_dir`]), from
/// any thread: what the cores wrote is durable when this returns (fsync acts
/// on the file, whichever descriptor wrote it). For SAVE and shutdown with
/// `everysec` or `no`.
pub fn sync_files(root: &Path) -> io::Result<()> {
    let Ok(cores) = std::fs::read_dir(root) else { return Ok(()) };
    for core in cores {
        let core = core?.path();
        if !core.is_dir() {
            continue;
        }
        for seg in std::fs::read_dir(&core)? {
            let seg = seg?.path();
            if seg.file_name().is_some_and(|n| n.to_string_lossy().starts_with("seg-")) {
                std::fs::File::open(&seg)?.sync_data()?;
            }
        }
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

fn layout_cores(root: &Path) -> Option<usize> {
    std::fs::read_to_string(root.join("LAYOUT")).ok()?.trim().strip_prefix("cores=")?.parse().ok()
}

/// The per-core logs under `root` (`core-<k>`), laid out for `cores` cores
/// with region `r` in core `owner(r)`'s log. `root/LAYOUT` says for how many
/// cores they were written. When that differs (`--cores` changed), every
/// region's entries, committed id, vote and purge point are copied into a new
/// set of logs beside it (`<root>.new`, synced, `LAYOUT` written last), which
/// then replaces the old set by two renames. A crash anywhere leaves either
/// the old set or the complete new one, and the next start finishes the job.
/// Runs before the cores start (it opens logs on the calling executor).
pub async fn layout(
    root: &Path,
    cores: usize,
    owner: impl Fn(u32) -> usize,
    segment_bytes: u64,
    policy: FsyncPolicy,
) -> io::Result<()> {
    let new = root.with_extension("new");
    let old = root.with_extension("old");
    let parent = root.parent().unwrap_or(Path::new("."));
    // Finish a swap that a crash cut short.
    if old.exists() {
        if !root.exists() && layout_cores(&new).is_some() {
            std::fs::rename(&new, root)?;
            sync_dir(parent)?;
        }
        std::fs::remove_dir_all(&old)?;
    }
    if new.exists() {
        std::fs::remove_dir_all(&new)?;
    }
    std::fs::create_dir_all(root)?;
    let mut olds: Vec<PathBuf> = std::fs::read_dir(root)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("core-")))
        .collect();
    olds.sort();
    match layout_cores(root) {
        Some(n) if n == cores => return Ok(()),
        None if olds.is_empty() => {
            std::fs::write(root.join("LAYOUT"), format!("cores={cores}\n"))?;
            std::fs::File::open(root.join("LAYOUT"))?.sync_all()?;
            return sync_dir(root);
        }
        _ => {}
    }
    std::fs::create_dir_all(&new)?;
    let mut logs = Vec::with_capacity(cores);
    for k in 0..cores {
        logs.push(SegLog::open(new.join(format!("core-{k}")), segment_bytes, policy).await?);
    }
    for dir in &olds {
        let src = SegLog::open(dir, segment_bytes, policy).await?;
        for r in src.regions() {
            let dst = &logs[owner(r) % cores];
            for (i, t, p) in src.read(r, 0, u64::MAX).await? {
                dst.append(r, i, t, &p);
            }
            let st = src.state(r);
            if let Some((i, id)) = &st.committed {
                dst.save_committed(r, *i, id);
            }
            dst.sync().await;
            if let Some(v) = st.meta.vote {
                dst.save_vote(r, v).await?;
            }
            if let Some((i, id)) = st.meta.purged {
                dst.purge(r, i, id).await?;
            }
        }
    }
    drop(logs);
    std::fs::write(new.join("LAYOUT"), format!("cores={cores}\n"))?;
    std::fs::File::open(new.join("LAYOUT"))?.sync_all()?;
    sync_dir(&new)?;
    std::fs::rename(root, &old)?;
    std::fs::rename(&new, root)?;
    sync_dir(parent)?;
    std::fs::remove_dir_all(&old)
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
mod tests {
    use super::*;

    fn run<T: 'static>(f: impl std::future::Future<Output = T> + 'static) -> T {
        glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound).make().expect("executor").run(f)
    }

    async fn read_all_of(log: &SegLog, region: u32) -> Vec<(u64, u64, Vec<u8>)> {
        log.read(region, 0, u64::MAX).await.unwrap().into_iter().map(|(i, t, p)| (i, t, p.to_vec())).collect()
    }

    fn payload(region: u32, i: u64) -> Vec<u8> {
        format!("r{region}-e{i}-").repeat((i % 7 + 1) as usize).into_bytes()
    }

    /// Entries of several regions, appended in batches and synced, come back
    /// after a reopen with their terms and payloads; a truncated and
    /// rewritten tail reads as rewritten; committed ids and votes survive.
    #[test]
    fn entries_votes_and_commits_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            for batch in 0..10u64 {
                for r in [1u32, 2, 3] {
                    for k in 0..5 {
                        let i = batch * 5 + k + 1;
                        log.append(r, i, 1 + batch / 4, &payload(r, i));
                    }
                }
                log.sync().await;
            }
            log.truncate_after(2, Some(40));
            log.append(2, 41, 9, b"rewritten");
            log.save_committed(1, 50, b"id-50");
            log.sync().await;
            log.save_vote(3, Bytes::from_static(b"vote-3")).await.unwrap();
            drop(log);
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            let one = read_all_of(&log, 1).await;
            assert_eq!(one.len(), 50);
            assert!(one.iter().all(|(i, t, p)| *p == payload(1, *i) && *t == 1 + (*i - 1) / 20));
            let two = read_all_of(&log, 2).await;
            assert_eq!(two.len(), 41);
            assert_eq!(two.last().unwrap(), &(41, 9, b"rewritten".to_vec()));
            assert_eq!(log.state(2).last_index, Some(41));
            assert_eq!(log.state(1).committed, Some((50, Bytes::from_static(b"id-50"))));
            assert_eq!(log.state(3).meta.vote.as_deref(), Some(&b"vote-3"[..]));
            assert!(read_all_of(&log, 4).await.is_empty());
        });
    }

    /// Segments roll when full; purging deletes the oldest ones once every
    /// region is past them, never a segment a region still needs.
    #[test]
    fn segments_roll_and_are_deleted_once_purged_by_every_region() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            let log = SegLog::open(&d, 16 << 10, FsyncPolicy::Always).await.unwrap();
            for i in 1..=400u64 {
                log.append(1, i, 1, &[7u8; 200]);
                if i % 3 == 0 {
                    log.append(2, i / 3, 1, &[8u8; 100]);
                }
                log.sync().await;
            }
            let before = log.segment_paths().len();
            assert!(before > 5, "{before} segments");
            log.purge(1, 390, Bytes::from_static(b"p1")).await.unwrap();
            // Region 2 still needs everything: nothing goes.
            assert_eq!(log.segment_paths().len(), before);
            log.purge(2, 100, Bytes::from_static(b"p2")).await.unwrap();
            let after = log.segment_paths().len();
            assert!(after < before && after >= 2, "{before} -> {after}");
            assert_eq!(read_all_of(&log, 1).await.len(), 10);
            assert_eq!(read_all_of(&log, 2).await.len(), 33);
            drop(log);
            let log = SegLog::open(&d, 16 << 10, FsyncPolicy::Always).await.unwrap();
            let one = read_all_of(&log, 1).await;
            assert_eq!(one.first().map(|e| e.0), Some(391));
            assert_eq!(one.len(), 10);
            assert_eq!(read_all_of(&log, 2).await.len(), 33);
            assert_eq!(log.state(1).meta.purged, Some((390, Bytes::from_static(b"p1"))));
        });
    }

    /// A torn last batch (a crash mid-write) is cut off at its first bad
    /// record, and appends go on in a fresh segment; damage before the end of
    /// a segment that another follows is corruption, and the log refuses to
    /// open.
    #[test]
    fn a_torn_tail_is_cut_and_damage_inside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let first = seg_path(&d, 1);
        let d1 = d.clone();
        run(async move {
            let log = SegLog::open(&d1, 1 << 20, FsyncPolicy::Always).await.unwrap();
            for i in 1..=20u64 {
                log.append(1, i, 1, &payload(1, i));
                log.sync().await;
            }
        });
        // Damage the last record of the only segment, as a torn write would.
        let mut bytes = std::fs::read(&first).unwrap();
        let end = bytes.iter().rposition(|b| *b != 0).unwrap();
        bytes[end - 3] ^= 0xff;
        std::fs::write(&first, &bytes).unwrap();
        let d2 = d.clone();
        run(async move {
            let log = SegLog::open(&d2, 1 << 20, FsyncPolicy::Always).await.unwrap();
            let got = read_all_of(&log, 1).await;
            assert_eq!(got.len(), 19, "the torn last entry is dropped, the rest kept");
            assert_eq!(log.state(1).last_index, Some(19));
            log.append(1, 20, 2, b"again");
            log.sync().await;
            drop(log);
            let log = SegLog::open(&d2, 1 << 20, FsyncPolicy::Always).await.unwrap();
            let got = read_all_of(&log, 1).await;
            assert_eq!(got.len(), 20);
            assert_eq!(got.last().unwrap(), &(20, 2, b"again".to_vec()));
        });
        // Now the first segment is bounded by the next one's header: damage
        // inside it is refused, not cut.
        let mut bytes = std::fs::read(&first).unwrap();
        bytes[HEADER as usize + 20] ^= 0xff;
        std::fs::write(&first, &bytes).unwrap();
        run(async move {
            let e = SegLog::open(&d, 1 << 20, FsyncPolicy::Always)
                .await
                .err()
                .expect("damage inside a bounded segment must be refused");
            assert!(e.to_string().contains("damaged record at offset 64"), "{e}");
        });
    }

    /// One sync covers every append queued before it, whoever queued it:
    /// concurrent appenders on a core share fdatasyncs.
    #[test]
    fn concurrent_syncs_share_batches() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            let log = SegLog::open(&d, 4 << 20, FsyncPolicy::Always).await.unwrap();
            let tasks: Vec<_> = (0..8u32)
                .map(|r| {
                    let log = log.clone();
                    glommio::spawn_local(async move {
                        for i in 1..=50u64 {
                            log.append(r, i, 1, &payload(r, i));
                            log.sync().await;
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await;
            }
            // 400 appends, each waited for: fdatasyncs shared by the tasks.
            let syncs = log.syncs();
            assert!(syncs <= 200, "{syncs} fdatasyncs for 400 appends by 8 tasks");
            for r in 0..8 {
                assert_eq!(read_all_of(&log, r).await.len(), 50);
            }
            drop(log);
            let log = SegLog::open(&d, 4 << 20, FsyncPolicy::Always).await.unwrap();
            for r in 0..8 {
                let got = read_all_of(&log, r).await;
                assert_eq!(got.len(), 50, "region {r}");
                assert!(got.iter().all(|(i, _, p)| *p == payload(r, *i)));
            }
        });
    }

    /// Reopening cuts the last segment to what it holds: ten restarts leave
    /// ten small files, not ten preallocated ones.
    #[test]
    fn restarts_give_back_preallocated_space() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            for i in 1..=10u64 {
                let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
                log.append(1, i, 1, &payload(1, i));
                log.sync().await;
            }
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            assert_eq!(read_all_of(&log, 1).await.len(), 10);
            let paths = log.segment_paths();
            let sizes: Vec<u64> = paths.iter().map(|p| std::fs::metadata(p).unwrap().len()).collect();
            // Every segment but the active one holds one small record.
            assert!(sizes[..sizes.len() - 1].iter().all(|s| *s < 4096), "{sizes:?}");
        });
    }

    /// `--cores` changed: every region's log moves to its new core's log,
    /// whole (entries, committed id, vote, purge point); the same layout
    /// again changes nothing.
    #[test]
    fn a_new_core_count_moves_every_region_to_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("raftlog");
        run(async move {
            let owner = |r: u32| r as usize;
            layout(&root, 2, |r| owner(r) % 2, 1 << 20, FsyncPolicy::Always).await.unwrap();
            for k in 0..2u32 {
                let log = SegLog::open(root.join(format!("core-{k}")), 1 << 20, FsyncPolicy::Always).await.unwrap();
                for r in (0..6u32).filter(|r| r % 2 == k) {
                    for i in 1..=30u64 {
                        log.append(r, i, 2, &payload(r, i));
                    }
                    log.save_committed(r, 25, b"c25");
                    log.sync().await;
                    log.save_vote(r, Bytes::from(format!("vote-{r}"))).await.unwrap();
                    log.purge(r, 10, Bytes::from_static(b"p10")).await.unwrap();
                }
            }
            layout(&root, 3, |r| owner(r) % 3, 1 << 20, FsyncPolicy::Always).await.unwrap();
            assert_eq!(layout_cores(&root), Some(3));
            assert!(!root.with_extension("new").exists() && !root.with_extension("old").exists());
            for k in 0..3u32 {
                let log = SegLog::open(root.join(format!("core-{k}")), 1 << 20, FsyncPolicy::Always).await.unwrap();
                let want: Vec<u32> = (0..6u32).filter(|r| r % 3 == k).collect();
                assert_eq!(log.regions(), want, "core {k}");
                for r in want {
                    let got = read_all_of(&log, r).await;
                    assert_eq!(got.len(), 20, "region {r}");
                    assert!(got.iter().all(|(i, t, p)| *t == 2 && *p == payload(r, *i)));
                    let st = log.state(r);
                    assert_eq!(st.committed, Some((25, Bytes::from_static(b"c25"))));
                    assert_eq!(st.meta.vote, Some(Bytes::from(format!("vote-{r}"))));
                    assert_eq!(st.meta.purged, Some((10, Bytes::from_static(b"p10"))));
                }
            }
            // A crash after the first rename: the complete new set is put in place.
            std::fs::rename(&root, root.with_extension("old")).unwrap();
            std::fs::create_dir_all(root.with_extension("new")).unwrap();
            std::fs::write(root.with_extension("new").join("LAYOUT"), "cores=3\n").unwrap();
            layout(&root, 3, |r| owner(r) % 3, 1 << 20, FsyncPolicy::Always).await.unwrap();
            assert_eq!(layout_cores(&root), Some(3));
            assert!(!root.with_extension("old").exists());
        });
    }

    /// `EverySec`: a batch counts once written (it survives the process in
    /// the page cache) and is synced within a second.
    #[test]
    fn everysec_writes_without_waiting_for_the_disk_and_syncs_later() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::EverySec).await.unwrap();
            for i in 1..=10u64 {
                log.append(5, i, 1, &payload(5, i));
                log.sync().await;
            }
            assert!(log.dirty.get(), "written, not yet synced");
            glommio::timer::sleep(Duration::from_millis(1500)).await;
            assert!(!log.dirty.get(), "not synced within a second and a half");
            drop(log);
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::EverySec).await.unwrap();
            assert_eq!(read_all_of(&log, 5).await.len(), 10);
        });
    }

    /// A truncation is a record: it survives a reopen even when nothing was
    /// appended after it, and entries written after it replace the cut ones.
    #[test]
    fn a_truncation_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            for i in 1..=10u64 {
                log.append(1, i, 1, &payload(1, i));
            }
            log.sync().await;
            log.truncate_after(1, Some(5));
            log.written().await;
            drop(log);
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            assert_eq!(log.state(1).last_index, Some(5), "the cut entries came back");
            log.truncate_after(1, Some(3));
            log.append(1, 4, 2, b"four");
            log.sync().await;
            drop(log);
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            let got = read_all_of(&log, 1).await;
            assert_eq!(got.len(), 4);
            assert_eq!(got.last().unwrap(), &(4, 2, b"four".to_vec()));
        });
    }

    /// A failed fdatasync leaves the active segment's unsynced tail unknown:
    /// the batches go again into a fresh segment (retried until it works),
    /// the waiters are told only once they are durable, and a reopen finds
    /// every entry once.
    #[test]
    fn a_failed_sync_writes_the_batches_again_in_a_fresh_segment() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        run(async move {
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            for i in 1..=5u64 {
                log.append(1, i, 1, &payload(1, i));
            }
            log.sync().await;
            let before = log.segment_paths().len();
            // The syncer's fdatasync fails, then the first fresh segment's.
            log.fail_syncs.set(2);
            for i in 6..=10u64 {
                log.append(1, i, 1, &payload(1, i));
            }
            log.written().await;
            log.sync().await;
            assert_eq!(log.fail_syncs.get(), 0);
            assert_eq!(log.retries(), 2);
            assert!(log.failure().is_none());
            assert!(log.segment_paths().len() > before, "no fresh segment");
            log.append(1, 11, 1, &payload(1, 11));
            log.sync().await;
            drop(log);
            let log = SegLog::open(&d, 1 << 20, FsyncPolicy::Always).await.unwrap();
            let got = read_all_of(&log, 1).await;
            assert_eq!(got.iter().map(|e| e.0).collect::<Vec<_>>(), (1..=11).collect::<Vec<_>>());
            assert!(got.iter().all(|(i, _, p)| *p == payload(1, *i)));
        });
    }

    #[test]
    fn meta_files_round_trip_and_detect_damage() {
        let m = RegionMeta { vote: Some(Bytes::from_static(b"v")), purged: Some((9, Bytes::from_static(b"id"))) };
        let mut b = encode_meta(&m);
        assert_eq!(decode_meta(&b), Some(m));
        assert_eq!(decode_meta(&encode_meta(&RegionMeta::default())), Some(RegionMeta::default()));
        b[2] ^= 1;
        assert_eq!(decode_meta(&b), None);
    }
}
