//! The Raft log of one region in the `raft_log` column family, keyed
//! `[region:4][index:8]`, with the vote, committed id and purge point in `raft_state`.
//!
//! Appends are written at once (visible to readers) and made durable by the WAL
//! syncer, which fsyncs once for every append queued while the previous fsync
//! ran (group commit). openraft is told an append is flushed only after that.

use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};

use openraft::storage::{IOFlushed, LogState, RaftLogStorage};
use openraft::{OptionalSend, RaftLogReader};

use super::codec::{decode_entry, decode_log_id, decode_vote, encode_entry, encode_log_id, encode_vote};
use super::{Entry, LogId, TypeConfig, Vote};
use crate::storage::keys::{log_index_of, log_key, state_key, StateKind};
use crate::storage::{Batch, Cf, Storage};

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

#[derive(Clone)]
pub struct LogStore {
    storage: Storage,
    region: u32,
}

impl LogStore {
    pub fn new(storage: Storage, region: u32) -> Self {
        LogStore { storage, region }
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
        self.state(StateKind::Vote)?.map(|b| decode_vote(&b)).transpose()
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
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
        let mut b = Batch::new();
        b.put(Cf::RaftState, state_key(self.region, StateKind::Vote), encode_vote(vote));
        // The fsync runs on the blocking pool: this core drives heartbeats.
        let storage = self.storage.clone();
        glommio::executor().spawn_blocking(move || storage.write(b, true)).await.map_err(io_err)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), io::Error> {
        if let Some(c) = committed {
            let mut b = Batch::new();
            b.put(Cf::RaftState, state_key(self.region, StateKind::Committed), encode_log_id(&c).to_vec());
            self.storage.write(b, false).map_err(io_err)?;
        }
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, io::Error> {
        self.state(StateKind::Committed)?.map(|b| decode_log_id(&b)).transpose()
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<TypeConfig>) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut b = Batch::new();
        for e in entries {
            b.put(Cf::RaftLog, log_key(self.region, e.log_id.index), encode_entry(&e));
        }
        self.storage.write(b, false).map_err(io_err)?;
        let ticket = self.storage.sync_wal();
        glommio::spawn_local(async move {
            callback.io_completed(ticket.await.map_err(io_err));
        })
        .detach();
        Ok(())
    }

    async fn truncate_after(&mut self, last_log_id: Option<LogId>) -> Result<(), io::Error> {
        let from = last_log_id.map(|l| l.index + 1).unwrap_or(0);
        let (lo, hi) = self.key_range(from, None);
        let mut b = Batch::new();
        b.delete_range(Cf::RaftLog, lo, hi);
        self.storage.write(b, false).map_err(io_err)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), io::Error> {
        let (lo, hi) = self.key_range(0, Some(log_id.index + 1));
        let mut b = Batch::new();
        b.put(Cf::RaftState, state_key(self.region, StateKind::LastPurged), encode_log_id(&log_id).to_vec());
        b.delete_range(Cf::RaftLog, lo, hi);
        self.storage.write(b, false).map_err(io_err)
    }
}
