//! Garbage collection of lazily deleted composite keys, as RocksDB compaction
//! filters.
//!
//! Deleting, overwriting, expiring or renaming a composite key only rewrites its
//! metadata; its elements stay behind under the old `(key, version)` namespace.
//! The filters drop them when a compaction passes over them:
//!
//! - `subkey` and `zset_score` entries of a namespace nobody refers to: the live
//!   metadata of the key has another version (or is gone, or expired more than
//!   [`EXPIRED_GRACE_MS`] ago), and no renamed key holds the namespace (`links`).
//! - `links` entries whose holder no longer refers to the namespace.
//! - `expire_index` entries whose key no longer has that expiry time.
//!
//! Why this is safe under Raft: versions come from the log index, so a namespace
//! that nobody refers to is never referred to again: no current or future log
//! entry can observe what is dropped. Decisions are made from one snapshot per
//! compaction, taken when the filter is created (every entry it sees was written
//! before that), so a key renamed twice while the filter runs is judged as of one
//! instant. Readers use snapshots too, which compaction filters ignore, so before
//! dropping any element the filter waits for readers older than its snapshot to
//! leave the read gate (`gate`).
//!
//! When apply writes past RocksDB's WAL (segment logs), the state a crash goes
//! back to is the last flush, and the log's entries after it apply again; an
//! entry that read a namespace then must find it as it did. So the filters
//! judge by the state of that flush instead ([`Durable`]: a snapshot taken
//! right before each flush of applied state, published once the flush
//! succeeds), which a crash never goes behind, and drop only what existed
//! there: a namespace nobody referred to then, whose element (or link) was
//! already written then, is dead for good; one born since is kept (it was not
//! referred to there because it did not exist yet). Expiry entries, which no
//! entry reads, go when both that state and the current one say so.

use std::ffi::CStr;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{SnapshotWithThreadMode, DB};

use super::gate::Gate;
use super::keys::{decode_expire_index_key, decode_meta_key, split_subkey};
use super::meta::{expired, Coll, Meta};
use super::{CF_LINKS, CF_METADATA};

/// An expired key's elements are kept this long past its expiry time: a log entry
/// stamped by a leader whose clock runs behind may still see the key alive.
pub const EXPIRED_GRACE_MS: u64 = 5 * 60 * 1000;

/// How long a filter waits for old readers before it gives up dropping anything.
const READER_WAIT: Duration = Duration::from_secs(10);

/// The database, once open (the filters are configured before it exists).
#[derive(Clone, Default)]
pub struct DbSlot(Arc<OnceLock<Weak<DB>>>);

impl DbSlot {
    pub fn set(&self, db: &Arc<DB>) {
        let _ = self.0.set(Arc::downgrade(db));
    }
}

/// The last durable state to judge by, when applied state is written past
/// the WAL (`None` inside: no flush of applied state yet, nothing is dropped).
/// Shared by the storage, which publishes, and every filter factory.
#[derive(Clone, Default)]
pub struct Durable(Arc<std::sync::Mutex<Option<Arc<Judge>>>>);

impl Durable {
    /// A view of the database now, to publish once a flush that started
    /// after it has succeeded.
    pub fn capture(db: &Arc<DB>) -> Arc<Judge> {
        Arc::new(Judge::new(db.clone()))
    }

    pub fn publish(&self, view: Option<Arc<Judge>>) {
        if let Ok(mut d) = self.0.lock() {
            *d = view;
        }
    }

    fn get(&self) -> Option<Arc<Judge>> {
        self.0.lock().ok().and_then(|d| d.clone())
    }
}

/// Which column family a filter serves.
#[derive(Clone, Copy, Debug)]
pub enum What {
    /// `subkey` and `zset_score` (the name): `[slot][len][key][version][...]`.
    Elements(&'static str),
    Links,
    ExpireIndex,
}

pub struct Factory {
    what: What,
    db: DbSlot,
    gate: Arc<Gate>,
    /// `Some`: applied state is written past the WAL; judge by the durable state.
    durable: Option<Durable>,
}

impl Factory {
    pub fn new(what: What, db: DbSlot, gate: Arc<Gate>, durable: Option<Durable>) -> Self {
        Factory { what, db, gate, durable }
    }
}

impl CompactionFilterFactory for Factory {
    type Filter = Filter;

    fn create(&mut self, _context: CompactionFilterContext) -> Filter {
        let db = self.db.0.get().and_then(Weak::upgrade);
        let view = db.map(Judge::new);
        let durable = self.durable.as_ref().map(|d| d.get());
        Filter {
            what: self.what,
            view,
            durable,
            gate: self.gate.clone(),
            readers_gone: None,
            last: Vec::new(),
            keep_last: true,
        }
    }

    fn name(&self) -> &CStr {
        c"neokv-gc"
    }
}

pub struct Judge {
    snap: SnapshotWithThreadMode<'static, DB>,
    db: Arc<DB>,
}

impl Judge {
    fn new(db: Arc<DB>) -> Judge {
        // SAFETY: the snapshot borrows the database, which `Judge` keeps alive
        // in the field declared after it (fields drop in declaration order).
        let snap: SnapshotWithThreadMode<'static, DB> = unsafe { std::mem::transmute(db.snapshot()) };
        Judge { snap, db }
    }

    /// Was `key` of `cf` written (and there) in this state? Errors say yes.
    fn has(&self, cf: &str, key: &[u8]) -> bool {
        !matches!(self.read_ok(cf, key), Ok(None))
    }

    fn read_ok(&self, cf: &str, key: &[u8]) -> Result<Option<Vec<u8>>, ()> {
        let cf = self.db.cf_handle(cf).ok_or(())?;
        self.snap.get_cf(cf, key).map_err(|_| ())
    }

    /// Does anybody refer to the namespace `(key of mk, version)`?
    fn namespace_live(&self, mk: &[u8], version: u64, now: u64) -> bool {
        let Some((_, key)) = decode_meta_key(mk) else { return true };
        // The key itself, unrenamed.
        match self.read_ok(CF_METADATA, mk) {
            Err(()) => return true,
            Ok(Some(v)) => {
                if let Some(c) = Meta::decode(v.into()).as_ref().and_then(Coll::from_meta) {
                    if c.version == version && c.owner.is_none() && !gone(c.expire_ms, now) {
                        return true;
                    }
                }
            }
            Ok(None) => {}
        }
        // A key it was renamed to.
        let mut ns = mk.to_vec();
        ns.extend_from_slice(&version.to_be_bytes());
        match self.read_ok(CF_LINKS, &ns) {
            Err(()) => true,
            Ok(None) => false,
            Ok(Some(holder)) => self.holds(&holder, key, version, now),
        }
    }

    /// Does the key at metadata key `holder` hold namespace `(owner, version)`?
    fn holds(&self, holder: &[u8], owner: &[u8], version: u64, now: u64) -> bool {
        match self.read_ok(CF_METADATA, holder) {
            Err(()) => true,
            Ok(None) => false,
            Ok(Some(v)) => Meta::decode(v.into())
                .as_ref()
                .and_then(Coll::from_meta)
                .is_some_and(|c| c.version == version && c.owner.as_deref() == Some(owner) && !gone(c.expire_ms, now)),
        }
    }
}

/// Expired long enough ago that no log entry can see it alive.
fn gone(expire_ms: u64, now: u64) -> bool {
    expire_ms != 0 && expired(expire_ms.saturating_add(EXPIRED_GRACE_MS), now)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

pub struct Filter {
    what: What,
    view: Option<Judge>,
    /// `Some`: judge by the durable state (`Some(None)`: there is none yet).
    durable: Option<Option<Arc<Judge>>>,
    gate: Arc<Gate>,
    /// Whether readers older than the snapshot have left (asked once, lazily).
    readers_gone: Option<bool>,
    /// The last namespace judged (`[meta key][version]`) and whether it was kept:
    /// a dropped big key is thousands of consecutive entries of one namespace.
    last: Vec<u8>,
    keep_last: bool,
}

impl Filter {
    fn elements(&mut self, key: &[u8]) -> Decision {
        let Some((mk, version, _)) = split_subkey(key) else { return Decision::Keep };
        let ns = &key[..mk.len() + 8];
        if !self.last.is_empty() && self.last == ns {
            return if self.keep_last { Decision::Keep } else { Decision::Remove };
        }
        let live = match (&self.durable, &self.view) {
            // Dead for good only if it existed in the durable state, unreferred:
            // its first element seen was already there.
            (Some(Some(d)), _) => !d.has(self.cf(), key) || d.namespace_live(mk, version, now_ms()),
            (Some(None), _) | (None, None) => true,
            (None, Some(view)) => view.namespace_live(mk, version, now_ms()),
        };
        let keep = live || !self.readers_gone();
        self.last.clear();
        self.last.extend_from_slice(ns);
        self.keep_last = keep;
        if keep {
            Decision::Keep
        } else {
            Decision::Remove
        }
    }

    fn cf(&self) -> &'static str {
        match self.what {
            What::Elements(cf) => cf,
            What::Links => CF_LINKS,
            What::ExpireIndex => super::CF_EXPIRE_INDEX,
        }
    }

    fn readers_gone(&mut self) -> bool {
        *self.readers_gone.get_or_insert_with(|| self.gate.wait_for_readers(READER_WAIT))
    }

    fn link(&self, key: &[u8], holder: &[u8]) -> Decision {
        let Some((mk, version, rest)) = split_subkey(key) else { return Decision::Keep };
        if let Some(durable) = &self.durable {
            // A link serves its namespace: it goes once that is dead for good
            // (the link already there, nobody referring to the namespace).
            return match durable {
                Some(d) if rest.is_empty() && d.has(CF_LINKS, key) && !d.namespace_live(mk, version, now_ms()) => {
                    Decision::Remove
                }
                _ => Decision::Keep,
            };
        }
        let Some(view) = &self.view else { return Decision::Keep };
        let Some((_, owner)) = decode_meta_key(mk) else { return Decision::Keep };
        if !rest.is_empty() || view.holds(holder, owner, version, now_ms()) {
            Decision::Keep
        } else {
            Decision::Remove
        }
    }

    fn expire_entry(&self, key: &[u8]) -> Decision {
        let Some(view) = &self.view else { return Decision::Keep };
        let Some((_, at, mk)) = decode_expire_index_key(key) else { return Decision::Keep };
        let stale = |j: &Judge| match j.read_ok(CF_METADATA, &mk) {
            Ok(Some(v)) => Meta::decode_header(&v).is_some_and(|(_, e)| e != at),
            Ok(None) => true,
            Err(()) => false,
        };
        let durable_stale = match &self.durable {
            None => true,
            Some(Some(d)) => d.has(super::CF_EXPIRE_INDEX, key) && stale(d),
            Some(None) => false,
        };
        if durable_stale && stale(view) {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }
}

impl CompactionFilter for Filter {
    fn filter(&mut self, _level: u32, key: &[u8], value: &[u8]) -> Decision {
        match self.what {
            What::Elements(_) => self.elements(key),
            What::Links => self.link(key, value),
            What::ExpireIndex => self.expire_entry(key),
        }
    }

    fn name(&self) -> &CStr {
        c"neokv-gc"
    }
}
