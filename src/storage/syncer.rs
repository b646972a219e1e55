//! WAL syncer: group commit for Raft log appends.
//!
//! Appends are written to RocksDB without fsync (visible at once, safe against a
//! process crash); durability against power loss comes from fsyncing the WAL. One
//! thread does the fsyncs: it takes every request queued while the previous fsync
//! ran and answers all of them with one `flush_wal(true)`.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_channel::oneshot;
use rocksdb::DB;

use super::StorageError;

/// When the Raft log is fsynced (Redis's `appendfsync` vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// Every append batch is fsynced before it is acknowledged (default).
    Always,
    /// fsync once a second; a power loss may lose the last second of writes.
    EverySec,
    /// Never fsync explicitly; the OS decides.
    No,
}

impl FsyncPolicy {
    pub fn parse(s: &str) -> Option<FsyncPolicy> {
        match s.to_ascii_lowercase().as_str() {
            "always" => Some(FsyncPolicy::Always),
            "everysec" => Some(FsyncPolicy::EverySec),
            "no" => Some(FsyncPolicy::No),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            FsyncPolicy::Always => "always",
            FsyncPolicy::EverySec => "everysec",
            FsyncPolicy::No => "no",
        }
    }
}

type Waiter = oneshot::Sender<Result<(), StorageError>>;

/// Dropping it stops and joins its thread, so that once a `Storage` is dropped
/// nothing holds the database open any more (a restart in the same process, or a
/// test reopening a directory, must not race RocksDB's lock file).
pub(super) struct Syncer {
    tx: Option<mpsc::Sender<Waiter>>,
    /// EverySec: closing it stops the thread.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.tx.take();
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Syncer {
    pub(super) fn start(db: Arc<DB>, policy: FsyncPolicy) -> Syncer {
        match policy {
            FsyncPolicy::Always => {
                let (tx, rx) = mpsc::channel::<Waiter>();
                let thread = std::thread::Builder::new()
                    .name("neokv-wal-sync".into())
                    .spawn(move || {
                        while let Ok(first) = rx.recv() {
                            let mut waiters = vec![first];
                            while let Ok(w) = rx.try_recv() {
                                waiters.push(w);
                            }
                            let r = db.flush_wal(true).map_err(StorageError::from);
                            for w in waiters {
                                let _ = w.send(r.clone());
                            }
                        }
                    })
                    .expect("spawn wal sync thread");
                Syncer { tx: Some(tx), stop: None, thread: Some(thread) }
            }
            FsyncPolicy::EverySec => {
                let (stop, stopped) = mpsc::channel::<()>();
                let thread = std::thread::Builder::new()
                    .name("neokv-wal-sync".into())
                    .spawn(move || {
                        while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(Duration::from_secs(1)) {
                            let _ = db.flush_wal(true);
                        }
                    })
                    .expect("spawn wal sync thread");
                Syncer { tx: None, stop: Some(stop), thread: Some(thread) }
            }
            FsyncPolicy::No => Syncer { tx: None, stop: None, thread: None },
        }
    }

    pub(super) fn request(&self) -> SyncTicket {
        match &self.tx {
            None => SyncTicket(None),
            Some(tx) => {
                let (wtx, wrx) = oneshot::channel();
                if tx.send(wtx).is_err() {
                    return SyncTicket(Some(stopped_rx()));
                }
                SyncTicket(Some(wrx))
            }
        }
    }
}

fn stopped_rx() -> oneshot::Receiver<Result<(), StorageError>> {
    let (tx, rx) = oneshot::channel();
    let _ = tx.send(Err(StorageError("wal sync thread stopped".into())));
    rx
}

/// Resolves when the writes made before [`super::Storage::sync_wal`] are durable.
pub struct SyncTicket(Option<oneshot::Receiver<Result<(), StorageError>>>);

impl Future for SyncTicket {
    type Output = Result<(), StorageError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.0 {
            None => Poll::Ready(Ok(())),
            Some(rx) => match Pin::new(rx).poll(cx) {
                Poll::Ready(Ok(r)) => Poll::Ready(r),
                Poll::Ready(Err(_)) => Poll::Ready(Err(StorageError("wal sync thread stopped".into()))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Storage, StorageOptions};

    #[test]
    fn dropping_storage_releases_the_database() {
        let dir = tempfile::tempdir().unwrap();
        for fsync in [FsyncPolicy::Always, FsyncPolicy::EverySec, FsyncPolicy::No] {
            let opts = StorageOptions { fsync, ..Default::default() };
            for _ in 0..3 {
                let s = Storage::open(dir.path(), &opts).unwrap();
                drop(s);
                // Reopening at once fails on RocksDB's lock if anything still holds it.
            }
            Storage::open(dir.path(), &opts).unwrap_or_else(|e| panic!("{fsync:?}: {e}"));
        }
    }
}
