//! What every composite type (Hash, List, Set, ZSet) shares: where its elements
//! live, finding and walking them through any [`Source`], and writing its
//! metadata back (an emptied collection is deleted).

use bytes::Bytes;

use crate::storage::keys::KeyType;
use crate::storage::meta::{Coll, Meta};
use crate::storage::{Cf, StorageError};

pub use super::found::{prefix_end, Found};
use super::view::Source;
use super::{ApplyCtx, TypeError};

/// The live composite key `key` of type `kind`: `Ok(None)` if absent, WRONGTYPE
/// if it holds another type.
pub fn find(src: &impl Source, key: &[u8], kind: KeyType) -> Result<Result<Option<Found>, TypeError>, StorageError> {
    Ok(match src.meta(key)? {
        None => Ok(None),
        Some(m) if m.kind != kind => Err(TypeError::WrongType),
        Some(m) => Ok(Found::from_meta(src.db(), key, m)),
    })
}

/// Walk every element of `f` (sub-keys after the prefix, with values) in order.
pub fn each(
    src: &impl Source,
    cf: Cf,
    found: &Found,
    reverse: bool,
    mut f: impl FnMut(&[u8], &[u8]) -> bool,
) -> Result<(), StorageError> {
    let n = found.prefix.len();
    src.scan(cf, &found.prefix, &found.end(), reverse, |k, v| f(&k[n..], v))
}

impl ApplyCtx {
    /// The key `key` of `kind` for a write: the live one, or a new empty one with
    /// a fresh version (`Ok(None)` from `find` never reaches the caller).
    pub fn open_coll(
        &mut self,
        key: &[u8],
        kind: KeyType,
    ) -> Result<Result<(Found, Option<Meta>), TypeError>, StorageError> {
        let mk = self.mkey(key);
        let any = self.any_meta(&mk)?;
        match any {
            Some(m) if !m.is_expired(self.now_ms) => {
                if m.kind != kind {
                    return Ok(Err(TypeError::WrongType));
                }
                match Found::from_meta(self.db(), key, m.clone()) {
                    Some(f) => Ok(Ok((f, Some(m)))),
                    None => Ok(Err(TypeError::WrongType)),
                }
            }
            old => {
                let found = Found::fresh(self.db(), key, &Coll::new(kind, self.new_version(key)));
                // An expired leftover is replaced: its expire index entry goes.
                Ok(Ok((found, old)))
            }
        }
    }

    /// Remove the elements `subs` (fields, members) of `key`; the count removed.
    /// An emptied key is deleted.
    pub fn remove_elements(&mut self, key: &[u8], kind: KeyType, subs: &[Bytes]) -> super::ReadResult<i64> {
        let Some(found) = tri!(find(self, key, kind)?) else { return Ok(Ok(0)) };
        let mut coll = found.coll.clone();
        let mut n = 0;
        for sub in subs {
            let ek = found.element(sub);
            if self.get_element(Cf::Subkey, &ek)?.is_some() {
                self.del_element(Cf::Subkey, ek);
                coll.size -= 1;
                n += 1;
            }
        }
        if n > 0 {
            self.save_coll(key, Some(&found.meta), &coll);
        }
        Ok(Ok(n))
    }

    /// Replace `key` (whatever it held) by a new, empty-for-now collection of
    /// `kind` that will hold `size` elements, in a fresh version; the caller
    /// writes the elements under the returned namespace. `size` 0 just deletes
    /// `key` (`None`). For the *STORE commands.
    pub fn replace_coll(&mut self, key: &[u8], kind: KeyType, size: u64) -> Result<Option<Found>, StorageError> {
        let mk = self.mkey(key);
        let old = self.any_meta(&mk)?;
        if size == 0 {
            if let Some(old) = old {
                self.del_any(mk, &old);
            }
            return Ok(None);
        }
        let mut coll = Coll::new(kind, self.new_version(key));
        coll.size = size;
        let found = Found::fresh(self.db(), key, &coll);
        self.put_meta_over(mk, old.as_ref(), coll.encode());
        Ok(Some(found))
    }

    /// Write back a collection's metadata after its elements changed; an empty one
    /// is deleted (Redis never keeps an empty composite key).
    pub fn save_coll(&mut self, key: &[u8], old: Option<&Meta>, coll: &Coll) {
        let mk = self.mkey(key);
        if coll.size == 0 {
            if let Some(old) = old {
                self.del_key(mk, old);
            }
        } else {
            self.put_meta_over(mk, old, coll.encode());
        }
    }
}

/// One page of a `*SCAN`: up to `count` elements strictly after `after`, in
/// order. Returns the sub-key to resume after, or `None` when the walk is done.
pub fn scan_page(
    src: &impl Source,
    cf: Cf,
    found: &Found,
    after: Option<&[u8]>,
    count: usize,
    mut f: impl FnMut(&[u8], &[u8]),
) -> Result<Option<Vec<u8>>, StorageError> {
    let n = found.prefix.len();
    let from = match after {
        Some(a) => {
            let mut k = found.element(a);
            k.push(0);
            k
        }
        None => found.prefix.clone(),
    };
    let mut seen = 0usize;
    let mut last = None;
    let mut more = false;
    src.scan(cf, &from, &found.end(), false, |k, v| {
        if seen == count {
            more = true;
            return false;
        }
        seen += 1;
        f(&k[n..], v);
        last = Some(k[n..].to_vec());
        true
    })?;
    Ok(if more { last } else { None })
}

/// A small deterministic generator (splitmix64) for apply's random choices: the
/// leader picks the seed, every replica draws the same sequence from it.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}
