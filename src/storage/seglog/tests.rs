use super::layout::layout_cores;
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
#[cfg(feature = "failpoints")]
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
        log.fail_syncs.arm(2);
        for i in 6..=10u64 {
            log.append(1, i, 1, &payload(1, i));
        }
        log.written().await;
        log.sync().await;
        assert_eq!(log.fail_syncs.left(), 0);
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
