//! Durability: every acknowledged write survives kill -9 (several rounds).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crate::common::{encode_cmd, Raw, Server};

/// Write pipelined batches until the connection breaks; record what was acknowledged.
fn writer(
    port: u16,
    round: usize,
    acked: Arc<Mutex<Vec<(String, String)>>>,
    incr_acked: Arc<Mutex<u64>>,
    stop: Arc<AtomicBool>,
) {
    let mut r = Raw::connect(port);
    let _ = r.w.set_read_timeout(Some(Duration::from_secs(5)));
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let mut batch = Vec::new();
        let mut sent = Vec::new();
        for _ in 0..50 {
            let (k, v) = (format!("r{round}:k{i}"), format!("v{i}-{}", "x".repeat((i % 7) as usize)));
            batch.extend(encode_cmd(&[b"SET", k.as_bytes(), v.as_bytes()]));
            batch.extend(encode_cmd(&[b"INCR", b"counter"]));
            sent.push((k, v));
            i += 1;
        }
        if std::io::Write::write_all(&mut r.w, &batch).is_err() {
            return;
        }
        for kv in sent {
            let mut out = Vec::new();
            if crate::common::read_frame(&mut r.r, &mut out).is_err() || out != b"+OK\r\n" {
                return;
            }
            acked.lock().unwrap().push(kv);
            let mut out = Vec::new();
            if crate::common::read_frame(&mut r.r, &mut out).is_err() || !out.starts_with(b":") {
                return;
            }
            *incr_acked.lock().unwrap() += 1;
        }
    }
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let mut s = Server::start_with(&["--cores", "2"]);
    let mut all_acked: Vec<(String, String)> = Vec::new();
    let mut total_incr = 0u64;
    for round in 0..3 {
        let acked = Arc::new(Mutex::new(Vec::new()));
        let incr = Arc::new(Mutex::new(0u64));
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..3)
            .map(|w| {
                let (a, n, st, port) = (acked.clone(), incr.clone(), stop.clone(), s.port);
                thread::spawn(move || writer(port, round * 10 + w, a, n, st))
            })
            .collect();
        // Let writes flow, then kill the server mid-stream.
        thread::sleep(Duration::from_millis(400 + 150 * round as u64));
        s.kill9();
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.join().unwrap();
        }
        let acked = std::mem::take(&mut *acked.lock().unwrap());
        assert!(!acked.is_empty(), "round {round}: some writes must have been acknowledged");
        all_acked.extend(acked);
        total_incr += *incr.lock().unwrap();
        s.kill_and_restart();
        let mut r = s.raw();
        for (k, v) in &all_acked {
            let got = r.cmd(&["GET", k]);
            assert_eq!(got, format!("${}\r\n{v}\r\n", v.len()), "round {round}: acknowledged {k} lost after kill -9");
        }
        let counter: u64 = r.cmd(&["GET", "counter"]).lines().nth(1).unwrap().parse().unwrap();
        assert!(counter >= total_incr, "round {round}: counter {counter} < {total_incr} acknowledged INCRs");
        // Unacknowledged INCRs may or may not have been applied; carry the real value.
        total_incr = counter;
    }
}

#[test]
fn clean_restart_keeps_data_and_ttls() {
    let mut s = Server::start();
    let mut r = s.raw();
    r.cmd(&["SET", "a", "1"]);
    r.cmd(&["SET", "b", "2", "EX", "1000"]);
    r.cmd(&["INCRBY", "n", "10"]);
    r.cmd(&["DEL", "a"]);
    s.kill_and_restart();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["EXISTS", "a"]), ":0\r\n");
    assert_eq!(r.cmd(&["GET", "b"]), "$1\r\n2\r\n");
    let ttl: i64 = r.cmd(&["TTL", "b"]).trim_start_matches(':').trim().parse().unwrap();
    assert!((990..=1000).contains(&ttl));
    assert_eq!(r.cmd(&["INCR", "n"]), ":11\r\n");
}

/// Region 0's log entries in a stopped server's data directory, and whether
/// a purge point was saved.
fn log_entries(dir: &Path, segments: bool) -> (usize, bool) {
    if !segments {
        let storage = neokv::storage::Storage::open(dir, &Default::default()).unwrap();
        let mut entries = 0;
        storage
            .scan(neokv::storage::Cf::RaftLog, &[0, 0, 0, 0], &[0, 0, 0, 1], false, |_, _| {
                entries += 1;
                true
            })
            .unwrap();
        return (entries, true);
    }
    let log = neokv::storage::seglog::raft_log_dir(dir).join("core-0");
    let ex = glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound).make().unwrap();
    ex.run(async move {
        use neokv::storage::{seglog::SegLog, FsyncPolicy};
        let log = SegLog::open(&log, 1 << 20, FsyncPolicy::Always).await.unwrap();
        let n = log.read(0, 0, u64::MAX).await.unwrap().len();
        (n, log.state(0).meta.purged.is_some())
    })
}

#[test]
fn log_is_purged_behind_snapshots_and_restarts_stay_whole() {
    purged_and_whole(&["--raft-log", "segments"], true);
}

#[test]
fn a_rocksdb_log_is_purged_behind_snapshots_and_restarts_stay_whole() {
    purged_and_whole(&["--raft-log", "rocksdb"], false);
}

fn purged_and_whole(log_args: &[&str], segments: bool) {
    // One entry per write (a single connection waits for each reply), a snapshot
    // every 100 entries: many snapshot and purge cycles.
    let mut args = vec!["--cores", "1", "--raft-snapshot-logs", "100"];
    args.extend_from_slice(log_args);
    let mut s = Server::start_with(&args);
    let mut r = s.raw();
    for i in 0..1500 {
        assert_eq!(r.cmd(&["SET", &format!("k{i}"), &i.to_string()]), "+OK\r\n");
    }
    assert_eq!(r.cmd(&["INCRBY", "n", "7"]), ":7\r\n");
    s.kill9();
    // The stopped server's log, read through the storage layer.
    let (entries, purged) = log_entries(&s.dir, segments);
    assert!(entries > 0, "recent entries are kept");
    assert!(purged, "no purge point saved");
    assert!(entries < 600, "{entries} log entries left: the log must be purged behind snapshots");
    s.kill_and_restart();
    let mut r = s.raw();
    for i in (0..1500).step_by(13) {
        assert_eq!(r.cmd(&["GET", &format!("k{i}")]), format!("${}\r\n{i}\r\n", i.to_string().len()));
    }
    assert_eq!(r.cmd(&["INCR", "n"]), ":8\r\n");
    // And it keeps working across further snapshots after the restart.
    for i in 0..300 {
        assert_eq!(r.cmd(&["SET", &format!("after{i}"), "x"]), "+OK\r\n");
    }
    s.kill_and_restart();
    assert_eq!(s.raw().cmd(&["GET", "after299"]), "$1\r\nx\r\n");
    assert_eq!(s.raw().cmd(&["DBSIZE"]), ":1801\r\n");
}

/// Write `n` keys `<prefix>:<i>` (values `v<i>`), then a SET that the
/// server (started with `NEOKV_CRASH_POINT=apply`) dies before applying: a
/// committed entry, in the log, not applied.
fn writes_then_die_before_apply(s: &mut Server, prefix: &str, n: usize) {
    let mut r = s.raw();
    for i in 0..n {
        assert_eq!(r.cmd(&["SET", &format!("{prefix}:{i}"), &format!("v{i}")]), "+OK\r\n");
    }
    let mut raw = Raw::connect(s.port);
    let _ = raw.w.set_read_timeout(Some(Duration::from_secs(10)));
    std::io::Write::write_all(&mut raw.w, &encode_cmd(&[b"SET", b"crash:apply:1", b"committed"])).unwrap();
    assert_eq!(s.wait_exit(Duration::from_secs(10)), Some(70), "the server did not die at the crash point");
}

fn all_there(s: &Server, prefix: &str, n: usize) {
    let mut r = s.raw();
    for i in 0..n {
        let v = format!("v{i}");
        assert_eq!(r.cmd(&["GET", &format!("{prefix}:{i}")]), format!("${}\r\n{v}\r\n", v.len()), "{prefix}:{i}");
    }
    assert_eq!(r.cmd(&["GET", "crash:apply:1"]), "$9\r\ncommitted\r\n", "the committed, unapplied entry was lost");
}

/// A data directory whose Raft log is in RocksDB (an older NeoKV, or
/// `--raft-log rocksdb`) starts with segment logs: the log moves over whole,
/// with an entry committed and not yet applied, which then applies; going
/// back to `--raft-log rocksdb` is refused rather than starting empty.
#[test]
fn a_rocksdb_log_moves_into_segment_logs_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let crash = [("NEOKV_CRASH_POINT", "apply")];
    let mut s = Server::start_in_env(dir, &["--cores", "1", "--raft-log", "rocksdb"], &crash);
    writes_then_die_before_apply(&mut s, "old", 200);
    assert!(log_entries(dir, false).0 > 0, "the RocksDB log holds entries before the move");
    s.restart_with(&["--cores", "1"], &[]);
    all_there(&s, "old", 200);
    assert_eq!(s.raw().cmd(&["SET", "new", "1"]), "+OK\r\n");
    s.kill9();
    assert_eq!(log_entries(dir, false).0, 0, "the RocksDB copy of the log was not deleted");
    s.restart_with(&["--cores", "1"], &[]);
    all_there(&s, "old", 200);
    assert_eq!(s.raw().cmd(&["GET", "new"]), "$1\r\n1\r\n");
    s.kill9();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_neokv-server"))
        .args(["--port", "1", "--no-pin", "--raft-log", "rocksdb", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("start with --raft-log segments"), "{err}");
}

/// `--cores` changes: every region's log moves to its new owner's segment
/// log, with an entry committed and not yet applied, across 2 -> 3 -> 1 cores.
#[test]
fn a_new_core_count_moves_every_regions_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let crash = [("NEOKV_CRASH_POINT", "apply")];
    let mut s = Server::start_in_env(dir, &["--cores", "2", "--regions", "4"], &crash);
    writes_then_die_before_apply(&mut s, "k", 300);
    s.restart_with(&["--cores", "3", "--regions", "4"], &[]);
    all_there(&s, "k", 300);
    assert_eq!(s.raw().cmd(&["SET", "three", "3"]), "+OK\r\n");
    s.restart_with(&["--cores", "1", "--regions", "4"], &[]);
    all_there(&s, "k", 300);
    assert_eq!(s.raw().cmd(&["GET", "three"]), "$1\r\n3\r\n");
    let layout = std::fs::read_to_string(neokv::storage::seglog::raft_log_dir(dir).join("LAYOUT")).unwrap();
    assert_eq!(layout.trim(), "cores=1");
}

/// Unmounts its tmpfs when dropped (lazily, so a server still holding
/// files there cannot keep it).
struct Tmpfs(std::path::PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// The Raft log's filesystem fills up (a 72 MB tmpfs mounted at
/// `<dir>/raftlog`, most of it taken by a filler file): the write whose
/// batch needs a new segment waits, later writes are refused at once with
/// `-MISCONF` naming the cause, reads are served; once the filler is gone,
/// the waiting write is acknowledged and writes go on, without a restart;
/// after a kill -9, everything acknowledged is there.
#[test]
fn a_full_log_disk_refuses_writes_then_resumes_by_itself() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Mounting needs root (CI runs as root): said loudly, not passed quietly.
        eprintln!("SKIPPED a_full_log_disk_refuses_writes_then_resumes_by_itself: needs root to mount a tmpfs");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log_dir = neokv::storage::seglog::raft_log_dir(dir);
    std::fs::create_dir_all(&log_dir).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=72m", "tmpfs"])
        .arg(&log_dir)
        .status()
        .unwrap();
    assert!(ok.success(), "mount a tmpfs at {}", log_dir.display());
    let _mount = Tmpfs(log_dir.clone());
    let mut s = Server::start_in(dir, &["--cores", "1"]);
    // The active segment (32 MB) is preallocated; leave less than another.
    let filler = log_dir.join("filler");
    let f = std::fs::File::create(&filler).unwrap();
    f.set_len(0).unwrap();
    let ok = std::process::Command::new("fallocate").args(["-l", "30m"]).arg(&filler).status().unwrap();
    assert!(ok.success());
    drop(f);

    let value = "v".repeat(256 << 10);
    let mut a = Raw::connect(s.port);
    a.w.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut acked = Vec::new();
    let mut stuck = None;
    for i in 0..200 {
        let key = format!("big:{i}");
        a.send(&encode_cmd(&[b"SET", key.as_bytes(), value.as_bytes()]));
        let mut out = Vec::new();
        match crate::common::read_frame(&mut a.r, &mut out) {
            Ok(()) => {
                assert_eq!(out, b"+OK\r\n", "SET {key}: {}", String::from_utf8_lossy(&out));
                acked.push(key);
            }
            Err(_) => {
                stuck = Some(key);
                break;
            }
        }
    }
    let stuck = stuck.expect("200 writes of 256 KB never filled the log's filesystem");
    eprintln!("{} writes acknowledged, {stuck} waits for the log", acked.len());
    let mut b = s.raw();
    let refused = b.cmd(&["SET", "small", "1"]);
    assert!(
        refused.starts_with("-MISCONF Errors writing to the Raft log: No space left on device."),
        "a write while the log cannot be written: {refused:?}"
    );
    assert!(!refused.contains("os error") && !refused.contains(".log"), "internals leaked: {refused}");
    assert_eq!(b.cmd(&["STRLEN", &acked[0]]), format!(":{}\r\n", value.len()), "reads must be served");

    std::fs::remove_file(&filler).unwrap();
    a.w.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let mut out = Vec::new();
    crate::common::read_frame(&mut a.r, &mut out).expect("the waiting write was never answered after space came back");
    assert_eq!(out, b"+OK\r\n", "the waiting write: {}", String::from_utf8_lossy(&out));
    acked.push(stuck);
    assert_eq!(b.cmd(&["SET", "small", "1"]), "+OK\r\n", "writes did not resume by themselves");

    s.kill_and_restart();
    let mut r = s.raw();
    for k in &acked {
        assert_eq!(r.cmd(&["STRLEN", k]), format!(":{}\r\n", value.len()), "{k} lost");
    }
    assert_eq!(r.cmd(&["GET", "small"]), "$1\r\n1\r\n");
}
