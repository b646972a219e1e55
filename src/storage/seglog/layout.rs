//! Operations over a data directory's set of per-core logs rather than one
//! log: laying them out for a core count, and syncing every segment file.

use std::io;
use std::path::{Path, PathBuf};

use super::SegLog;
use crate::storage::FsyncPolicy;

/// fdatasync every segment file under `root` (the [`super::raft_log_dir`]), from
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

pub(super) fn layout_cores(root: &Path) -> Option<usize> {
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
