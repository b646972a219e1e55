//! A cluster node's identity file, `<dir>/NEOKV-NODE` (`cluster::nodes::Identity`
//! is its content): written before any Raft state of the directory, and
//! replaced atomically (write, fsync, rename, fsync the directory) each time
//! it changes (a peer met for the first time, a node removed).

use std::io::Write;
use std::path::Path;

/// The file's name in the data directory.
pub const FILE: &str = "NEOKV-NODE";

/// The file's text, if the directory has one.
pub fn load(dir: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(dir.join(FILE)) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replace the file with `text`, durably.
pub fn save(dir: &Path, text: &str) -> std::io::Result<()> {
    let tmp = dir.join(format!("{FILE}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(FILE))?;
    std::fs::File::open(dir)?.sync_all()
}
