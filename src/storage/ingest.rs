//! Replacing a key range with data that arrives from elsewhere (a region's
//! snapshot from its leader), through SST files instead of the write path.
//!
//! A [`Stager`] is a thread of its own that receives the entries in key order,
//! one column family after another, and writes them with RocksDB's
//! `SstFileWriter`: one file per column family, which opens with a range
//! tombstone over the whole range being replaced. Such a tombstone deletes what
//! the database holds in the range and none of the file's own entries, so each
//! file replaces its column family's range by itself, and ingesting it twice
//! gives the same result as once. Memory stays bounded by one chunk, and the
//! reactor that receives the chunks never compresses or writes a file.
//!
//! [`install`] makes the replacement of several column families crash-safe (RocksDB
//! ingests atomically per column family only): a synced marker naming the staged
//! files is written first, the files are ingested, and the batch that finishes
//! the install (the caller's applied state) deletes the marker. A restart that
//! finds the marker ingests the same files again ([`redo`]) before anything reads.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use bytes::Bytes;
use futures_channel::oneshot;
use rocksdb::{IngestExternalFileOptions, SstFileWriter};

use super::{Batch, Cf, Result, Storage, StorageError};

/// The directory under the database's where snapshots being received are staged.
pub const STAGING: &str = "snapshot-in";

fn err(what: impl std::fmt::Display) -> StorageError {
    StorageError(what.to_string())
}

/// The files of one finished staging, one per column family, in the order given.
#[derive(Debug)]
pub struct Staged {
    pub dir: PathBuf,
    pub files: Vec<(Cf, PathBuf)>,
}

impl Staged {
    /// Forget the files (when an install failed part way: the marker names them
    /// and the restart needs them).
    fn keep(mut self) {
        self.files.clear();
        self.dir = PathBuf::new();
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

enum Msg {
    Entries(Vec<(Cf, Bytes, Bytes)>, oneshot::Sender<Result<()>>),
    Finish(oneshot::Sender<Result<Staged>>),
}

/// How long a staging waits for its next chunk before it gives up.
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);

/// Writes a range's replacement into SST files on a thread of its own. Dropped
/// before [`Stager::finish`], the thread stops and removes what it wrote.
pub struct Stager {
    tx: mpsc::Sender<Msg>,
}

/// Snapshots received at once (each has its staging thread).
pub const MAX_STAGING: usize = 4;
static STAGING_NOW: AtomicUsize = AtomicUsize::new(0);

impl Stager {
    /// Stage into `<db>/snapshot-in/<name>/` the replacement of `ranges`
    /// (`[from, to)` per column family; entries must come in this order).
    pub fn start(storage: &Storage, name: &str, ranges: Vec<(Cf, Vec<u8>, Vec<u8>)>) -> Result<Stager> {
        let dir = storage.staging_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| err(format!("create {}: {e}", dir.display())))?;
        // The directory's name must be durable before an install marker names it.
        sync_dir(&storage.staging_dir())?;
        sync_dir(&storage.inner.path)?;
        // One staging thread per snapshot being received, and at most
        // MAX_STAGING of them: a peer starting transfers without end costs
        // bounded threads (a refused transfer is sent again later).
        if STAGING_NOW.fetch_add(1, Ordering::AcqRel) >= MAX_STAGING {
            STAGING_NOW.fetch_sub(1, Ordering::AcqRel);
            let _ = std::fs::remove_dir_all(&dir);
            return Err(err(format!("{MAX_STAGING} snapshots are being received already; send this one later")));
        }
        let (tx, rx) = mpsc::channel();
        let storage = storage.clone();
        let spawned = std::thread::Builder::new().name("neokv-stage".into()).spawn(move || {
            stage(&storage, dir, &ranges, rx);
            STAGING_NOW.fetch_sub(1, Ordering::AcqRel);
        });
        if let Err(e) = spawned {
            STAGING_NOW.fetch_sub(1, Ordering::AcqRel);
            return Err(err(e));
        }
        Ok(Stager { tx })
    }

    /// Add entries (in key order within each column family).
    pub async fn push(&self, entries: Vec<(Cf, Bytes, Bytes)>) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Entries(entries, tx)).map_err(|_| err("staging thread gone"))?;
        rx.await.map_err(|_| err("staging thread gone"))?
    }

    /// Close every file (each synced to disk) and hand them over.
    pub async fn finish(self) -> Result<Staged> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Finish(tx)).map_err(|_| err("staging thread gone"))?;
        rx.await.map_err(|_| err("staging thread gone"))?
    }
}

/// The staging thread: one writer open at a time, column families in order.
fn stage(storage: &Storage, dir: PathBuf, ranges: &[(Cf, Vec<u8>, Vec<u8>)], rx: mpsc::Receiver<Msg>) {
    let mut staged = Staged { dir, files: Vec::new() };
    let mut writer: Option<SstFileWriter<'_>> = None;
    let mut failed: Option<StorageError> = None;
    // A sender that went quiet (its leader died or gave up) is not waited for
    // forever: the staging goes, and a late chunk finds the thread gone.
    while let Ok(msg) = rx.recv_timeout(IDLE) {
        match msg {
            Msg::Entries(entries, reply) => {
                let r = match &failed {
                    Some(e) => Err(e.clone()),
                    None => entries.iter().try_for_each(|(cf, k, v)| {
                        let i = ranges
                            .iter()
                            .position(|(c, ..)| c == cf)
                            .ok_or_else(|| err(format!("{cf:?} is not staged")))?;
                        if i + 1 < staged.files.len() {
                            return Err(err(format!("{cf:?} entries after the next column family's")));
                        }
                        let (_, from, to) = &ranges[i];
                        if k.as_ref() < from.as_slice() || k.as_ref() >= to.as_slice() {
                            return Err(err(format!("a {cf:?} key outside the range being replaced")));
                        }
                        advance(storage, ranges, &mut writer, &mut staged, i)?;
                        writer.as_mut().expect("opened above").put(k, v)?;
                        Ok(())
                    }),
                };
                if let Err(e) = &r {
                    failed.get_or_insert(e.clone());
                }
                let _ = reply.send(r);
            }
            Msg::Finish(reply) => {
                let r = match failed.take() {
                    Some(e) => Err(e),
                    None => (|| {
                        advance(storage, ranges, &mut writer, &mut staged, ranges.len() - 1)?;
                        writer.take().expect("the last file is open").finish()?;
                        sync_dir(&staged.dir)?;
                        Ok(std::mem::replace(&mut staged, Staged { dir: PathBuf::new(), files: Vec::new() }))
                    })(),
                };
                // Not handed over (an error, or the receiver gave up): `staged`
                // drops and removes the directory.
                let _ = reply.send(r);
                return;
            }
        }
    }
    // Abandoned (or idle too long): drop the open writer before its directory goes.
    drop(writer);
}

/// Open the files up to and including `ranges[upto]`'s, finishing the ones before.
fn advance<'a>(
    storage: &'a Storage,
    ranges: &[(Cf, Vec<u8>, Vec<u8>)],
    writer: &mut Option<SstFileWriter<'a>>,
    staged: &mut Staged,
    upto: usize,
) -> Result<()> {
    while staged.files.len() <= upto {
        if let Some(mut w) = writer.take() {
            w.finish()?;
        }
        let (cf, from, to) = &ranges[staged.files.len()];
        let path = staged.dir.join(format!("{}.sst", cf.name()));
        let mut w = SstFileWriter::create(storage.sst_options(*cf));
        w.open(&path)?;
        w.delete_range(from, to)?;
        *writer = Some(w);
        staged.files.push((*cf, path));
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| err(format!("sync {}: {e}", dir.display())))
}

/// Replace the staged ranges, crash-safely: `marker` (a key and value in
/// [`Cf::RaftState`], naming `staged.dir`) is written and synced, every file is
/// ingested in the order of `staged.files`, then `done` (which must delete the
/// marker) is written and synced, and the files go. On an error after the
/// marker the files stay for [`redo`].
pub fn install(storage: &Storage, staged: Staged, marker: (Vec<u8>, Vec<u8>), done: Batch) -> Result<()> {
    // From the marker on, the files belong to the install (a redo needs them):
    // nothing removes them until `done` is written, whatever fails or panics.
    let (dir, files) = (staged.dir.clone(), staged.files.clone());
    staged.keep();
    let mut b = Batch::new();
    b.put(Cf::RaftState, marker.0, marker.1);
    storage.write(b, true)?;
    ingest_all(storage, &files, true)?;
    crate::failpoint::crash("snapshot-ingest");
    storage.write(done, true)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Finish an install a crash interrupted: ingest the files of `dir` again (they
/// replace their ranges whole, so a second time is harmless) and write `done`.
pub fn redo(storage: &Storage, dir: &Path, cfs: &[Cf], done: Batch) -> Result<()> {
    let files: Vec<(Cf, PathBuf)> = cfs.iter().map(|cf| (*cf, dir.join(format!("{}.sst", cf.name())))).collect();
    if let Some((_, missing)) = files.iter().find(|(_, f)| !f.exists()) {
        return Err(err(format!(
            "an interrupted snapshot install cannot be finished: {} is missing",
            missing.display()
        )));
    }
    // Copied, not linked: the first attempt may have linked them into the database.
    ingest_all(storage, &files, false)?;
    storage.write(done, true)?;
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

/// Ingest each file into its column family. Moved: RocksDB links a second name
/// of the file into the database and unlinks that name, so the staged name
/// stays for a redo. Copied (a redo): the first attempt may have linked it.
///
/// RocksDB stops every write to the database while an ingest runs, and flushes
/// the column family's memtable inside that stop if it holds keys in the file's
/// range: a stall of the whole node (its Raft logs included). So the memtable is
/// flushed first, with writes flowing, and the ingest refuses to flush; only
/// if keys in the range arrived in between (nothing else writes a region being
/// installed) is that tried again, and at last let through.
fn ingest_all(storage: &Storage, files: &[(Cf, PathBuf)], move_files: bool) -> Result<()> {
    // Every column family at once (an atomic flush), never one alone: apply
    // writes past the WAL, so a data column family flushed without the applied
    // indexes in RaftState would, after kill -9, hold data ahead of its applied
    // index, and the replay would apply those entries a second time (an APPEND
    // twice). Once for all the files: nothing writes the region meanwhile.
    storage.flush_all()?;
    for (cf, path) in files {
        // A file system without hard links (some FUSE and network ones)
        // gets the file copied, as RocksDB itself falls back to.
        let link = path.with_extension("ingest");
        let _ = std::fs::remove_file(&link);
        let moved = move_files && std::fs::hard_link(path, &link).is_ok();
        let source = if moved { link } else { path.clone() };
        let mut tries = 0;
        loop {
            if tries > 0 {
                storage.flush_all()?;
            }
            let mut o = IngestExternalFileOptions::default();
            o.set_move_files(moved);
            o.set_allow_blocking_flush(tries == 2);
            match storage.inner.db.ingest_external_file_cf_opts(storage.cf(*cf), &o, vec![&source]) {
                Ok(()) => break,
                Err(e) if tries < 2 && e.as_ref().contains("flush") => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// Ingest one staged file (tests: to compact between column families).
#[cfg(test)]
pub fn ingest_one(storage: &Storage, cf: Cf, path: &Path) -> Result<()> {
    ingest_all(storage, &[(cf, path.to_path_buf())], false)
}

/// Remove staging directories whose names start with `prefix`, except `keep`.
pub fn clean(storage: &Storage, prefix: &str, keep: Option<&str>) {
    let Ok(dir) = std::fs::read_dir(storage.staging_dir()) else { return };
    for e in dir.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(prefix) && Some(name.as_ref()) != keep {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_lite::future::block_on;

    fn put_all(s: &Storage, cf: Cf, kvs: &[(&str, &str)]) {
        let mut b = Batch::new();
        for (k, v) in kvs {
            b.put(cf, k.as_bytes().to_vec(), Bytes::copy_from_slice(v.as_bytes()));
        }
        s.write(b, false).unwrap();
    }

    fn all(s: &Storage, cf: Cf) -> Vec<(String, String)> {
        let mut out = Vec::new();
        s.scan(cf, b"", b"\xff", false, |k, v| {
            out.push((String::from_utf8_lossy(k).into_owned(), String::from_utf8_lossy(v).into_owned()));
            true
        })
        .unwrap();
        out
    }

    fn e(cf: Cf, k: &str, v: &str) -> (Cf, Bytes, Bytes) {
        (cf, Bytes::copy_from_slice(k.as_bytes()), Bytes::copy_from_slice(v.as_bytes()))
    }

    fn ranges() -> Vec<(Cf, Vec<u8>, Vec<u8>)> {
        vec![(Cf::Metadata, b"b".to_vec(), b"d".to_vec()), (Cf::Subkey, b"b".to_vec(), b"d".to_vec())]
    }

    fn marker() -> (Vec<u8>, Vec<u8>) {
        (b"marker".to_vec(), b"staged".to_vec())
    }

    fn done() -> Batch {
        let mut b = Batch::new();
        b.delete(Cf::RaftState, b"marker".to_vec());
        b.put(Cf::RaftState, b"applied".to_vec(), Bytes::from_static(b"new"));
        b
    }

    #[test]
    fn a_staged_range_replaces_the_old_one_in_every_column_family() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &Default::default()).unwrap();
        put_all(&s, Cf::Metadata, &[("a", "keep"), ("b", "old"), ("bb", "gone"), ("c", "old"), ("d", "keep")]);
        put_all(&s, Cf::Subkey, &[("b1", "gone"), ("z", "keep")]);
        let st = Stager::start(&s, "r1-x", ranges()).unwrap();
        block_on(st.push(vec![e(Cf::Metadata, "b", "new"), e(Cf::Metadata, "c", "new")])).unwrap();
        block_on(st.push(vec![e(Cf::Metadata, "c0", "new")])).unwrap();
        // Nothing for Subkey: its range is emptied all the same.
        let staged = block_on(st.finish()).unwrap();
        assert_eq!(staged.files.len(), 2);
        let staged_dir = staged.dir.clone();
        install(&s, staged, marker(), done()).unwrap();
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            all(&s, Cf::Metadata),
            vec![kv("a", "keep"), kv("b", "new"), kv("c", "new"), kv("c0", "new"), kv("d", "keep")]
        );
        assert_eq!(all(&s, Cf::Subkey), vec![kv("z", "keep")]);
        assert_eq!(s.get(Cf::RaftState, b"marker").unwrap(), None);
        assert!(!staged_dir.exists(), "the staging directory is removed once installed");
        // Later writes to the range land over the ingested data as usual.
        put_all(&s, Cf::Metadata, &[("b", "later")]);
        assert_eq!(s.get(Cf::Metadata, b"b").unwrap().as_deref(), Some(&b"later"[..]));
    }

    #[test]
    fn an_interrupted_install_is_finished_by_ingesting_the_same_files_again() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &Default::default()).unwrap();
        put_all(&s, Cf::Metadata, &[("b", "old"), ("bz", "gone")]);
        let st = Stager::start(&s, "r1-y", ranges()).unwrap();
        block_on(st.push(vec![e(Cf::Metadata, "b", "new"), e(Cf::Subkey, "c", "sub")])).unwrap();
        let staged = block_on(st.finish()).unwrap();
        // As a crash after the first column family's ingest would leave it: the
        // marker, one file in, the other not (files kept for the restart).
        let mut b = Batch::new();
        b.put(Cf::RaftState, marker().0, marker().1);
        s.write(b, true).unwrap();
        ingest_all(&s, &staged.files[..1], true).unwrap();
        let (sdir, cfs): (PathBuf, Vec<Cf>) = (staged.dir.clone(), staged.files.iter().map(|f| f.0).collect());
        staged.keep();
        // Written after the first ingest and before the crash: a redo replaces it too.
        put_all(&s, Cf::Metadata, &[("bb", "stray")]);
        redo(&s, &sdir, &cfs, done()).unwrap();
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(all(&s, Cf::Metadata), vec![kv("b", "new")]);
        assert_eq!(all(&s, Cf::Subkey), vec![kv("c", "sub")]);
        assert_eq!(s.get(Cf::RaftState, b"applied").unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(s.get(Cf::RaftState, b"marker").unwrap(), None);
        assert!(!sdir.exists());
        // Without its files an install cannot be finished, and says so.
        let gone = redo(&s, &sdir, &cfs, done()).unwrap_err();
        assert!(gone.0.contains("missing"), "{gone}");
    }

    #[test]
    fn entries_out_of_range_or_order_are_refused_and_abandoned_staging_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &Default::default()).unwrap();
        let st = Stager::start(&s, "r2-a", ranges()).unwrap();
        assert!(block_on(st.push(vec![e(Cf::Metadata, "a", "outside")])).is_err());
        // Once failed, it stays failed.
        assert!(block_on(st.push(vec![e(Cf::Metadata, "b", "in")])).is_err());
        assert!(block_on(st.finish()).is_err());
        let st = Stager::start(&s, "r2-b", ranges()).unwrap();
        assert!(block_on(st.push(vec![e(Cf::Metadata, "c", "1"), e(Cf::Metadata, "b", "2")])).is_err());
        let st = Stager::start(&s, "r2-c", ranges()).unwrap();
        assert!(block_on(st.push(vec![e(Cf::Subkey, "b", "1"), e(Cf::Metadata, "b", "2")])).is_err());
        let st = Stager::start(&s, "r2-d", ranges()).unwrap();
        block_on(st.push(vec![e(Cf::Metadata, "b", "1")])).unwrap();
        let staging = s.staging_dir().join("r2-d");
        assert!(staging.exists());
        drop(st);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while staging.exists() || s.staging_dir().join("r2-a").exists() {
            assert!(std::time::Instant::now() < deadline, "abandoned staging was never removed");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Nothing was written to the database.
        assert!(all(&s, Cf::Metadata).is_empty());
        clean(&s, "r2-", None);
        assert_eq!(std::fs::read_dir(s.staging_dir()).unwrap().count(), 0);
    }
}
