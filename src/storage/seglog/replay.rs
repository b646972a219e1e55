//! Reading the log back when it opens: which segments and meta files are
//! there, each segment's header, and every record, into what each region's
//! log holds.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use bytes::Bytes;
use glommio::io::OpenOptions;

use super::*;

/// The segments' sequence numbers (ascending) and the regions' meta files in
/// `dir`; a meta replacement never renamed in is removed (the old one stands).
pub(super) fn list_files(dir: &Path) -> io::Result<(Vec<u64>, HashMap<u32, RegionMeta>)> {
    let mut seqs = Vec::new();
    let mut metas = HashMap::new();
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if let Some(hex) = name.strip_prefix("seg-").and_then(|n| n.strip_suffix(".log")) {
            if let Ok(seq) = u64::from_str_radix(hex, 16) {
                seqs.push(seq);
            }
        } else if let Some(r) = name.strip_prefix("meta-").and_then(|r| r.parse::<u32>().ok()) {
            let bytes = std::fs::read(dir.join(&name))?;
            let m = decode_meta(&bytes).ok_or_else(|| corrupt(format!("{}: damaged", dir.join(&name).display())))?;
            metas.insert(r, m);
        } else if name.starts_with("meta-") && name.ends_with(".tmp") {
            // A replacement that never got renamed in: the old file stands.
            let _ = std::fs::remove_file(dir.join(&name));
        }
    }
    seqs.sort_unstable();
    Ok((seqs, metas))
}

/// Open every segment and read its header: the segments, and each one's
/// header (the segment before it and that one's length). A last segment
/// whose header never made it to disk (a crash while starting it) holds
/// nothing and is removed.
pub(super) async fn open_segments(dir: &Path, seqs: &[u64]) -> io::Result<(Vec<Segment>, Vec<(u64, u64)>)> {
    let mut segments = Vec::new();
    // Each segment's header: (prev_seq, prev_len), to bound the one before.
    let mut headers = Vec::new();
    for (n, &seq) in seqs.iter().enumerate() {
        let path = seg_path(dir, seq);
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
        segments.push(Segment::new(seq, path, file));
    }
    Ok((segments, headers))
}

/// Read every record of every segment: what each region's log holds. Each
/// segment is bounded by the next one's header (a damaged record inside it
/// is an error), the last by its records (a torn tail ends it).
pub(super) async fn replay(segments: &mut [Segment], headers: &[(u64, u64)]) -> io::Result<HashMap<u32, RegionLog>> {
    let mut regions: HashMap<u32, RegionLog> = HashMap::new();
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
    Ok(regions)
}
