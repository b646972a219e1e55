//! Shipping a region to a node that fell behind the purged log.
//!
//! A region's data is its slot range in every data column family (plus its
//! function libraries). The leader reads it from ONE RocksDB snapshot together
//! with the region's applied state (written in the same batches as the data, so
//! the two agree), and streams it in chunks of about a megabyte, each answered
//! before the next is sent (the timeout is per chunk). The snapshot's log id is
//! the applied id read there, which may be later than the one openraft had in
//! mind: the follower then treats the entries in between as already committed
//! and skips them (openraft's `has_log_id` accepts every index below the
//! committed one), so nothing is applied twice.
//!
//! The follower hands each chunk to a staging thread (`storage::ingest`) that
//! writes one SST file per column family, each opening with a range tombstone
//! over the region's range there; the last chunk closes them, and the install
//! ingests them and writes the new applied state. A marker written first makes
//! the install crash-safe: a restart that finds it ingests the same files again
//! before the region opens, so a crash leaves either the old region or the new
//! one, never a mix.

use std::io;

use bytes::{Buf, Bytes};

use crate::storage::keys::{function_key, slot_lower_bound, slot_upper_bound};
use crate::storage::Cf;

/// Bytes of key-value data per chunk.
pub const CHUNK_BYTES: usize = 1 << 20;

/// The column families a region's data lives in, in the order they are shipped.
pub const DATA_CFS: [Cf; 6] = [Cf::Metadata, Cf::Subkey, Cf::ZsetScore, Cf::ExpireIndex, Cf::Links, Cf::Functions];

/// The order the column families are ingested in, one at a time. Garbage
/// collection (`storage::gc`) judges elements by the metadata and links that
/// refer to them, links by the metadata holding them, expiry entries by their
/// key's metadata: so the referrers go in first, and a compaction between two
/// ingests never judges new elements by old referrers (it would drop the
/// elements of a renamed key, which only its new link keeps alive).
pub const INGEST_ORDER: [Cf; 6] = [Cf::Metadata, Cf::Links, Cf::Subkey, Cf::ZsetScore, Cf::ExpireIndex, Cf::Functions];

/// `[from, to)` of the region in each data column family.
pub fn ranges(region: u32, slot_start: u16, slot_end: u32) -> Vec<(u8, Cf, Vec<u8>, Vec<u8>)> {
    DATA_CFS
        .iter()
        .enumerate()
        .map(|(i, &cf)| match cf {
            Cf::Functions => (i as u8, cf, function_key(region, b""), function_key(region + 1, b"")),
            _ => (i as u8, cf, slot_lower_bound(slot_start), slot_upper_bound(slot_end)),
        })
        .collect()
}

/// Append one entry to a chunk.
pub fn put(buf: &mut Vec<u8>, cf: u8, k: &[u8], v: &[u8]) {
    buf.push(cf);
    buf.extend_from_slice(&(k.len() as u32).to_be_bytes());
    buf.extend_from_slice(k);
    buf.extend_from_slice(&(v.len() as u32).to_be_bytes());
    buf.extend_from_slice(v);
}

/// The entries of a chunk, checked: a malformed chunk is an error.
pub fn entries(mut data: Bytes, out: &mut Vec<(Cf, Bytes, Bytes)>) -> io::Result<()> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "malformed snapshot chunk");
    while data.has_remaining() {
        if data.remaining() < 5 {
            return Err(bad());
        }
        let cf = *DATA_CFS.get(data.get_u8() as usize).ok_or_else(bad)?;
        let kl = data.get_u32() as usize;
        if data.remaining() < kl + 4 {
            return Err(bad());
        }
        let k = data.split_to(kl);
        let vl = data.get_u32() as usize;
        if data.remaining() < vl {
            return Err(bad());
        }
        let v = data.split_to(vl);
        out.push((cf, k, v));
    }
    Ok(())
}

/// The staging directory's name for snapshot `id` of `region`, if `id` is one
/// a leader makes (up to 32 hex digits): it comes off the wire and names a
/// directory.
pub fn staging_name(region: u32, id: &str) -> Option<String> {
    let ok = !id.is_empty() && id.len() <= 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| format!("{}{id}", staging_prefix(region)))
}

/// What every staging directory of `region` is named with first.
pub fn staging_prefix(region: u32) -> String {
    format!("r{region}-")
}

/// The value of a region's install marker: its staging directory's name, then
/// the applied state being installed.
pub fn encode_marker(dir: &str, applied: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + dir.len() + applied.len());
    v.push(dir.len() as u8);
    v.extend_from_slice(dir.as_bytes());
    v.extend_from_slice(applied);
    v
}

pub fn decode_marker(v: &[u8]) -> io::Result<(&str, &[u8])> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "malformed snapshot install marker");
    let n = *v.first().ok_or_else(bad)? as usize;
    let dir = v.get(1..1 + n).ok_or_else(bad)?;
    Ok((std::str::from_utf8(dir).map_err(|_| bad())?, &v[1 + n..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_roundtrip_and_refuse_garbage() {
        let mut buf = Vec::new();
        put(&mut buf, 0, b"key", b"value");
        put(&mut buf, 5, b"", b"");
        let mut out = Vec::new();
        entries(Bytes::from(buf.clone()), &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].0, &out[0].1[..], &out[0].2[..]), (Cf::Metadata, &b"key"[..], &b"value"[..]));
        assert_eq!(out[1].0, Cf::Functions);
        for cut in 1..buf.len() {
            let mut o = Vec::new();
            let r = entries(Bytes::copy_from_slice(&buf[..cut]), &mut o);
            assert!(r.is_err() || cut == 17, "cut at {cut}");
        }
        assert!(entries(Bytes::from_static(&[9, 0, 0, 0, 0, 0, 0, 0, 0]), &mut Vec::new()).is_err());
    }

    #[test]
    fn every_data_column_family_is_ingested_referrers_first() {
        let mut a = INGEST_ORDER.to_vec();
        let mut b = DATA_CFS.to_vec();
        a.sort_by_key(|c| c.name());
        b.sort_by_key(|c| c.name());
        assert_eq!(a, b);
        let pos = |cf| INGEST_ORDER.iter().position(|&c| c == cf).unwrap();
        for element in [Cf::Subkey, Cf::ZsetScore, Cf::ExpireIndex] {
            assert!(pos(Cf::Metadata) < pos(element) && pos(Cf::Links) < pos(element));
        }
        assert!(pos(Cf::Metadata) < pos(Cf::Links));
    }

    #[test]
    fn a_region_is_its_slot_range_and_its_functions() {
        let r = ranges(3, 100, 200);
        assert_eq!(r.len(), DATA_CFS.len());
        assert_eq!(r[0].2, 100u16.to_be_bytes().to_vec());
        assert_eq!(r[0].3, 200u16.to_be_bytes().to_vec());
        assert_eq!(r[5].2, 3u32.to_be_bytes().to_vec());
        assert_eq!(r[5].3, 4u32.to_be_bytes().to_vec());
    }

    #[test]
    fn install_markers_roundtrip() {
        for bad in ["", "../x", "a/b", &"f".repeat(33)] {
            assert_eq!(staging_name(7, bad), None, "{bad:?}");
        }
        let name = staging_name(7, "00ff").unwrap();
        assert!(name.starts_with(&staging_prefix(7)) && !name.starts_with(&staging_prefix(70)));
        let v = encode_marker(&name, b"applied");
        assert_eq!(decode_marker(&v).unwrap(), (name.as_str(), &b"applied"[..]));
        assert!(decode_marker(&v[..3]).is_err());
        assert!(decode_marker(&[]).is_err());
    }
}
