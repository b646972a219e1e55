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

pub(super) struct Syncer {
    tx: Option<mpsc::Sender<Waiter>>,
}

impl Syncer {
    pub(super) fn start(db: Arc<DB>, policy: FsyncPolicy) -> Syncer {
        match policy {
            FsyncPolicy::Always => {
                let (tx, rx) = mpsc::channel::<Waiter>();
                std::thread::Builder::new()
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
                Syncer { tx: Some(tx) }
            }
            FsyncPolicy::EverySec => {
                std::thread::Builder::new()
                    .name("neokv-wal-sync".into())
                    .spawn(move || loop {
                        std::thread::sleep(Duration::from_secs(1));
                        let _ = db.flush_wal(true);
                    })
                    .expect("spawn wal sync thread");
                Syncer { tx: None }
            }
            FsyncPolicy::No => Syncer { tx: None },
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
