//! [`Found`]: a composite key (Hash, List, Set, ZSet, Stream) as read, its
//! metadata and where its elements live.

use bytes::Bytes;

use crate::cluster::key_slot;
use crate::storage::keys::meta_key_in;
use crate::storage::meta::{Coll, Meta};

/// The smallest key greater than every key starting with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut e = prefix.to_vec();
    while let Some(last) = e.pop() {
        if last != 0xff {
            e.push(last + 1);
            return e;
        }
    }
    vec![0xff; prefix.len() + 1]
}

/// A composite key as read: its metadata and where its elements live.
#[derive(Debug, Clone)]
pub struct Found {
    pub meta: Meta,
    pub coll: Coll,
    /// `[slot][len][data key][version]`: every element key starts with it.
    pub prefix: Vec<u8>,
}

impl Found {
    /// `key` of (physical) database `db`, whose metadata is `meta`.
    pub fn from_meta(db: u16, key: &[u8], meta: Meta) -> Option<Found> {
        let coll = Coll::from_meta(&meta)?;
        let data = coll.data_key(key);
        let mut prefix = meta_key_in(db, key_slot(data), data);
        prefix.extend_from_slice(&coll.version.to_be_bytes());
        Some(Found { meta, coll, prefix })
    }

    /// A collection not yet written: `coll` (a new version) as `key` of
    /// (physical) database `db` will hold it.
    pub fn fresh(db: u16, key: &[u8], coll: &Coll) -> Found {
        let meta = Meta::decode(Bytes::from(coll.encode())).expect("a collection's metadata decodes");
        Found::from_meta(db, key, meta).expect("a collection's metadata is a collection's")
    }

    /// The element key of `sub` (a field, member, list index or score+member).
    pub fn element(&self, sub: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.prefix.len() + sub.len());
        k.extend_from_slice(&self.prefix);
        k.extend_from_slice(sub);
        k
    }

    /// The end of the element range: the first key after every `prefix…`.
    pub fn end(&self) -> Vec<u8> {
        prefix_end(&self.prefix)
    }
}
