//! The Raft log of one region, in one of two places:
//! - its core's segment log (`storage::seglog`, the default): entries,
//!   committed ids and truncations are records, the vote and purge point a
//!   small file per region. A region whose log is still in RocksDB (a data
//!   directory from before) is moved over at its first open;
//! - the `raft_log` column family (`--raft-log rocksdb`), keyed
//!   `[region:4][index:8]`, with the vote, committed id and purge point in
//!   `raft_state`, made durable by the WAL syncer.
//!
//! Either way, an append, a truncation or a committed id is written (in the
//! page cache, so it survives kill -9) before the call returns, and openraft
//! is told an append is flushed only once it is durable (group commit: one
//! fsync for whatever queued meanwhile). The first half matters: openraft may
//! apply an entry that a quorum of other nodes holds before this node's own
//! flush ends, and a restart must never find the state machine ahead of the
//! log.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::rc::Rc;

use openraft::storage::{IOFlushed, LogState, RaftLogStorage};
use openraft::{OptionalSend, RaftLogReader};

use super::codec::{decode_entry, decode_log_id, decode_vote, encode_entry, encode_log_id, encode_vote};
use super::{Entry, LogId, StartError, TypeConfig, Vote};
use crate::storage::keys::{log_index_of, log_key, state_key, StateKind};
use crate::storage::seglog::{RegionMeta, SegLog};
use crate::storage::{Batch, Cf, Storage};

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// The bytes of each entry a region's log holds, as running totals by index:
/// what retention by size reads (`raft::region::retention`). Kept by the
/// log store as it appends, truncates and purges; filled from the log at open.
#[derive(Debug, Default)]
pub struct LogSizes {
    /// Index -> bytes of every entry held up to and including it, counted
    /// from the first entry ever held (so a purge leaves the others alone).
    ends: BTreeMap<u64, u64>,
    /// The running total before the first entry held.
    base: u64,
    /// Told once the running total reaches the number ([`LogSizes::wake_after`]).
    wake: Option<(u64, futures_channel::oneshot::Sender<()>)>,
}

impl LogSizes {
    /// Entry `index` of `len` bytes was appended (after a truncation of
    /// anything from it on, if it replaces entries).
    pub fn append(&mut self, index: u64, len: u64) {
        if self.ends.range(index..).next().is_some() {
            self.truncate_from(index);
        }
        let end = self.last_end() + len;
        self.ends.insert(index, end);
        if self.wake.as_ref().is_some_and(|(at, _)| end >= *at) {
            if let Some((_, tx)) = self.wake.take() {
                let _ = tx.send(());
            }
        }
    }

    /// Answered once the entries after `index` hold `bytes` (at once if
    /// they do already); replaces an earlier wake.
    pub fn wake_after(&mut self, index: u64, bytes: u64) -> futures_channel::oneshot::Receiver<()> {
        let (tx, rx) = futures_channel::oneshot::channel();
        let at = self.end_at(index) + bytes;
        if self.last_end() >= at {
            let _ = tx.send(());
        } else {
            self.wake = Some((at, tx));
        }
        rx
    }

    /// The entries from `index` on are gone.
    pub fn truncate_from(&mut self, index: u64) {
        let _ = self.ends.split_off(&index);
    }

    /// The entries up to and including `index` are gone.
    pub fn purge_upto(&mut self, index: u64) {
        let keep = self.ends.split_off(&(index + 1));
        if let Some((_, &end)) = self.ends.iter().next_back() {
            self.base = end;
        }
        self.ends = keep;
    }

    fn last_end(&self) -> u64 {
        self.ends.values().next_back().copied().unwrap_or(self.base)
    }

    /// The running total through `index` (the base below the first entry
    /// held: never less than it).
    fn end_at(&self, index: u64) -> u64 {
        self.ends.range(..=index).next_back().map_or(self.base, |(_, &e)| e)
    }

    /// Bytes of every entry held.
    pub fn total(&self) -> u64 {
        self.last_end() - self.base
    }

    /// Bytes of the entries held after `index`.
    pub fn after(&self, index: u64) -> u64 {
        self.last_end() - self.end_at(index)
    }

    /// Entries held.
    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// Where to purge so that at most `keep` bytes of the entries through
    /// `upto` stay held: the lowest such index (purging it and everything
    /// before it), `None` if they are within `keep` already.
    pub fn purge_point(&self, upto: u64, keep: u64) -> Option<u64> {
        let through = self.end_at(upto);
        if through - self.base <= keep {
            return None;
        }
        let mut point = None;
        for (&i, &end) in self.ends.range(..=upto).rev() {
            if through - end > keep {
                break;
            }
            point = Some(i);
        }
        point
    }
}

#[derive(Clone)]
pub struct LogStore {
    storage: Storage,
    region: u32,
    /// The core's segment log (`None`: the log is in RocksDB).
    seg: Option<Rc<SegLog>>,
    sizes: Rc<RefCell<LogSizes>>,
}

impl LogStore {
    /// The region's log in RocksDB.
    pub fn new(storage: Storage, region: u32) -> Self {
        LogStore { storage, region, seg: None, sizes: Rc::default() }
    }

    /// The sizes of the entries this log holds, kept up to date by it.
    pub fn sizes(&self) -> Rc<RefCell<LogSizes>> {
        self.sizes.clone()
    }

    /// Fill [`LogStore::sizes`] from what the log holds.
    fn measure(&self) -> io::Result<()> {
        let mut sizes = LogSizes::default();
        match &self.seg {
            Some(seg) => {
                for (i, len) in seg.entry_sizes(self.region) {
                    sizes.append(i, len as u64);
                }
            }
            None => {
                let (lo, hi) = self.key_range(0, None);
                self.storage
                    .scan(Cf::RaftLog, &lo, &hi, false, |k, v| {
                        if let Some(i) = log_index_of(k) {
                            sizes.append(i, v.len() as u64);
                        }
                        true
                    })
                    .map_err(io_err)?;
            }
        }
        *self.sizes.borrow_mut() = sizes;
        Ok(())
    }

    /// The region's log where it lives: in its core's segment log `seg`
    /// ([`LogStore::segments`]), or in RocksDB without one; errors name the region.
    pub async fn open(storage: Storage, region: u32, seg: Option<&Rc<SegLog>>) -> Result<Self, StartError> {
        let log = match seg {
            Some(seg) => {
                Self::segments(storage, region, seg.clone()).await.map_err(|e| StartError::Log { region, e })?
            }
            None => Self::new(storage, region),
        };
        log.measure().map_err(|e| StartError::Log { region, e })?;
        Ok(log)
    }

    /// The region's log in its core's segment log `seg`. A log still in
    /// RocksDB is moved over first: copied whole and made durable, then
    /// deleted from RocksDB in one synced write (a crash in between copies it
    /// again, since RocksDB's copy stays the one that counts until then).
    pub async fn segments(storage: Storage, region: u32, seg: Rc<SegLog>) -> io::Result<Self> {
        let mut rocks = LogStore::new(storage.clone(), region);
        let vote = rocks.state(StateKind::Vote)?;
        let (lo, hi) = rocks.key_range(0, None);
        let has_entries = storage.last_key(Cf::RaftLog, &lo, &hi).map_err(io_err)?.is_some();
        if vote.is_some() || has_entries {
            let entries: Vec<(u64, u64, bytes::Bytes)> = rocks
                .try_get_log_entries(..)
                .await?
                .into_iter()
                .map(|e| (e.log_id.index, e.log_id.leader_id.term, bytes::Bytes::from(encode_entry(&e))))
                .collect();
            let committed =
                rocks.state(StateKind::Committed)?.map(|b| decode_log_id(&b).map(|id| (id.index, b))).transpose()?;
            let purged =
                rocks.state(StateKind::LastPurged)?.map(|b| decode_log_id(&b).map(|id| (id.index, b))).transpose()?;
            let n = entries.len();
            seg.import(region, entries, committed, RegionMeta { vote, purged }).await?;
            let mut b = Batch::new();
            for kind in [StateKind::Vote, StateKind::Committed, StateKind::LastPurged] {
                b.delete(Cf::RaftState, state_key(region, kind));
            }
            b.delete_range(Cf::RaftLog, lo, hi);
            glommio::executor().spawn_blocking(move || storage.write(b, true)).await.map_err(io_err)?;
            eprintln!("neokv: region {region}: moved its Raft log ({n} entries) from RocksDB to the segment log");
        }
        Ok(LogStore { storage: rocks.storage, region, seg: Some(seg), sizes: Rc::default() })
    }

    fn state(&self, kind: StateKind) -> io::Result<Option<bytes::Bytes>> {
        self.storage.get(Cf::RaftState, &state_key(self.region, kind)).map_err(io_err)
    }

    /// `[from, to)` keys of this region's log.
    fn key_range(&self, start: u64, end: Option<u64>) -> ([u8; 12], [u8; 12]) {
        let hi = match end {
            Some(e) => log_key(self.region, e),
            None => log_key(self.region + 1, 0),
        };
        (log_key(self.region, start), hi)
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => Some(e + 1),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => None,
        };
        if let Some(seg) = &self.seg {
            return seg
                .read(self.region, start, end.unwrap_or(u64::MAX))
                .await?
                .iter()
                .map(|(_, _, p)| decode_entry(p))
                .collect();
        }
        let (lo, hi) = self.key_range(start, end);
        let mut out = Vec::new();
        let mut err = None;
        self.storage
            .scan(Cf::RaftLog, &lo, &hi, false, |_, v| match decode_entry(v) {
                Ok(e) => {
                    out.push(e);
                    true
                }
                Err(e) => {
                    err = Some(e);
                    false
                }
            })
            .map_err(io_err)?;
        if let Some(e) = err {
            return Err(e);
        }
        Ok(out)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        if let Some(seg) = &self.seg {
            return seg.state(self.region).meta.vote.map(|b| decode_vote(&b)).transpose();
        }
        self.state(StateKind::Vote)?.map(|b| decode_vote(&b)).transpose()
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        if let Some(seg) = &self.seg {
            let st = seg.state(self.region);
            let last_purged = st.meta.purged.map(|(_, b)| decode_log_id(&b)).transpose()?;
            let last = match st.last_index {
                Some(i) => self.try_get_log_entries(i..=i).await?.pop().map(|e| e.log_id),
                None => None,
            };
            return Ok(LogState { last_purged_log_id: last_purged, last_log_id: last.or(last_purged) });
        }
        let last_purged = self.state(StateKind::LastPurged)?.map(|b| decode_log_id(&b)).transpose()?;
        let (lo, hi) = self.key_range(0, None);
        let last_key = self.storage.last_key(Cf::RaftLog, &lo, &hi).map_err(io_err)?;
        let last = match last_key {
            Some(k) => {
                let idx = log_index_of(&k).ok_or_else(|| io_err("bad log key"))?;
                let mut es = self.try_get_log_entries(idx..=idx).await?;
                es.pop().map(|e| e.log_id)
            }
            None => None,
        };
        Ok(LogState { last_purged_log_id: last_purged, last_log_id: last.or(last_purged) })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        if let Some(seg) = &self.seg {
            return seg.save_vote(self.region, encode_vote(vote).into()).await;
        }
        let mut b = Batch::new();
        b.put(Cf::RaftState, state_key(self.region, StateKind::Vote), encode_vote(vote));
        // The fsync runs on the blocking pool: this core drives heartbeats.
        let storage = self.storage.clone();
        glommio::executor().spawn_blocking(move || storage.write(b, true)).await.map_err(io_err)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), io::Error> {
        if let (Some(seg), Some(c)) = (&self.seg, committed) {
            seg.save_committed(self.region, c.index, &encode_log_id(&c));
            return Ok(());
        }
        if let Some(c) = committed {
            let mut b = Batch::new();
            b.put(Cf::RaftState, state_key(self.region, StateKind::Committed), encode_log_id(&c).to_vec());
            self.storage.write(b, false).map_err(io_err)?;
        }
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, io::Error> {
        if let Some(seg) = &self.seg {
            return seg.state(self.region).committed.map(|(_, b)| decode_log_id(&b)).transpose();
        }
        self.state(StateKind::Committed)?.map(|b| decode_log_id(&b)).transpose()
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<TypeConfig>) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        if let Some(seg) = &self.seg {
            // A membership entry is what the region needs to start again (its
            // voters; the vote beside it is synced already): durable before
            // it counts, whatever the fsync policy.
            let mut membership = false;
            let mut sizes = self.sizes.borrow_mut();
            for e in entries {
                membership |= matches!(e.payload, openraft::EntryPayload::Membership(_));
                let payload: bytes::Bytes = encode_entry(&e).into();
                sizes.append(e.log_id.index, payload.len() as u64);
                seg.append_owned(self.region, e.log_id.index, e.log_id.leader_id.term, payload);
            }
            drop(sizes);
            seg.written().await;
            let seg = seg.clone();
            glommio::spawn_local(async move {
                let r = if membership { seg.sync_now().await } else { Ok(seg.sync().await) };
                callback.io_completed(r);
            })
            .detach();
            return Ok(());
        }
        let mut b = Batch::new();
        let mut sizes = self.sizes.borrow_mut();
        for e in entries {
            let payload = encode_entry(&e);
            sizes.append(e.log_id.index, payload.len() as u64);
            b.put(Cf::RaftLog, log_key(self.region, e.log_id.index), payload);
        }
        drop(sizes);
        self.storage.write(b, false).map_err(io_err)?;
        let ticket = self.storage.sync_wal();
        glommio::spawn_local(async move {
            callback.io_completed(ticket.await.map_err(io_err));
        })
        .detach();
        Ok(())
    }

    async fn truncate_after(&mut self, last_log_id: Option<LogId>) -> Result<(), io::Error> {
        self.sizes.borrow_mut().truncate_from(last_log_id.map_or(0, |l| l.index + 1));
        if let Some(seg) = &self.seg {
            seg.truncate_after(self.region, last_log_id.map(|l| l.index));
            seg.written().await;
            return Ok(());
        }
        let from = last_log_id.map(|l| l.index + 1).unwrap_or(0);
        let (lo, hi) = self.key_range(from, None);
        let mut b = Batch::new();
        b.delete_range(Cf::RaftLog, lo, hi);
        self.storage.write(b, false).map_err(io_err)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), io::Error> {
        self.sizes.borrow_mut().purge_upto(log_id.index);
        if let Some(seg) = &self.seg {
            seg.purge(self.region, log_id.index, encode_log_id(&log_id).to_vec().into()).await?;
            crate::failpoint::crash("log-purged");
            return Ok(());
        }
        let (lo, hi) = self.key_range(0, Some(log_id.index + 1));
        let mut b = Batch::new();
        b.put(Cf::RaftState, state_key(self.region, StateKind::LastPurged), encode_log_id(&log_id).to_vec());
        b.delete_range(Cf::RaftLog, lo, hi);
        self.storage.write(b, false).map_err(io_err)
    }
}

#[cfg(test)]
mod tests {
    use super::LogSizes;

    #[test]
    fn sizes_follow_appends_truncations_and_purges() {
        let mut s = LogSizes::default();
        for i in 1..=10 {
            s.append(i, 100);
        }
        assert_eq!((s.total(), s.count()), (1000, 10));
        assert_eq!(s.after(4), 600);
        assert_eq!(s.after(0), 1000);
        // A conflicting suffix is replaced.
        s.append(9, 50);
        assert_eq!((s.total(), s.count()), (850, 9));
        s.truncate_from(9);
        assert_eq!(s.total(), 800);
        s.purge_upto(3);
        assert_eq!((s.total(), s.count()), (500, 5));
        assert_eq!(s.after(3), 500);
        assert_eq!(s.after(6), 200);
        // Keep at most 250 bytes through index 8 (entries 4..=8 hold 500):
        // purging through 6 leaves 7 and 8 (200).
        assert_eq!(s.purge_point(8, 250), Some(6));
        assert_eq!(s.purge_point(8, 200), Some(6));
        assert_eq!(s.purge_point(8, 199), Some(7));
        assert_eq!(s.purge_point(8, 500), None);
        assert_eq!(s.purge_point(2, 0), None, "nothing held through 2");
        s.purge_upto(8);
        assert_eq!((s.total(), s.count()), (0, 0));
        s.append(9, 7);
        assert_eq!((s.total(), s.after(8)), (7, 7));
        // A wake when the entries after 9 reach 10 bytes: not at 9, at 10.
        let mut rx = s.wake_after(9, 10);
        s.append(10, 9);
        assert_eq!(rx.try_recv(), Ok(None));
        s.append(11, 1);
        assert_eq!(rx.try_recv(), Ok(Some(())));
        assert_eq!(s.wake_after(9, 10).try_recv(), Ok(Some(())), "reached already");
    }
}
