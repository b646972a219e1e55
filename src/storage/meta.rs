//! Metadata values: `[flags:1][expire_ms:8]` then the type's payload.
//! `flags = 0x80 | type`, plus [`CHUNKED`] for a string stored in chunks;
//! `expire_ms = 0` means no TTL.
//!
//! A string is held in its metadata value up to `types::string::INLINE_MAX`
//! bytes. A longer one is *chunked*: its metadata is a collection's
//! (`[version:8][size:8]`, size in bytes) and its bytes live in fixed-size
//! chunks under the key's version in `subkey` (`types::string`), so a write
//! of a few bytes (SETBIT, SETRANGE, APPEND) rewrites one chunk, not the
//! value; deleting, renaming, copying and reclaiming it are a collection's.

use bytes::Bytes;

use super::keys::KeyType;

pub const META_HEADER: usize = 9;
/// The flag bit of a chunked string's metadata.
pub const CHUNKED: u8 = 0x40;
/// List head/tail pointers start in the middle of the u64 range.
pub const LIST_INITIAL_INDEX: u64 = u64::MAX / 2;

/// A decoded metadata value. For strings `payload` is the value itself; for
/// composite types it is `[version:8][size:8]` (+ `[head:8][tail:8]` for lists).
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub kind: KeyType,
    pub expire_ms: u64,
    pub payload: Bytes,
    /// A string stored in chunks: `payload` is a collection's (see the module doc).
    pub chunked: bool,
}

impl Meta {
    /// Decode; `None` if the bytes are not a metadata value.
    pub fn decode(raw: Bytes) -> Option<Meta> {
        if raw.len() < META_HEADER || raw[0] & 0x80 == 0 {
            return None;
        }
        let kind = KeyType::from_u8(raw[0] & 0x0f)?;
        let expire_ms = u64::from_be_bytes(raw[1..9].try_into().ok()?);
        let chunked = raw[0] & CHUNKED != 0;
        Some(Meta { kind, expire_ms, payload: raw.slice(META_HEADER..), chunked })
    }

    /// A stored value as a key's live metadata at `now_ms`: `None` if absent,
    /// malformed or expired.
    pub fn live(raw: Option<Bytes>, now_ms: u64) -> Option<Meta> {
        raw.and_then(Meta::decode).filter(|m| !m.is_expired(now_ms))
    }

    /// Type and expiry only, without copying the payload (scans need no values).
    pub fn decode_header(raw: &[u8]) -> Option<(KeyType, u64)> {
        if raw.len() < META_HEADER || raw[0] & 0x80 == 0 {
            return None;
        }
        Some((KeyType::from_u8(raw[0] & 0x0f)?, u64::from_be_bytes(raw[1..9].try_into().ok()?)))
    }

    /// True if the key has a TTL that has passed at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        expired(self.expire_ms, now_ms)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut v = encode(self.kind, self.expire_ms, &self.payload);
        if self.chunked {
            v[0] |= CHUNKED;
        }
        v
    }

    /// Version of a composite key.
    pub fn version(&self) -> Option<u64> {
        Some(u64::from_be_bytes(self.payload.get(0..8)?.try_into().ok()?))
    }

    /// Element count of a composite key.
    pub fn size(&self) -> Option<u64> {
        Some(u64::from_be_bytes(self.payload.get(8..16)?.try_into().ok()?))
    }
}

/// The metadata of a composite key (Hash, List, Set, ZSet), decoded.
///
/// `owner` is NeoKV's one addition to the seed's payload, appended after its
/// fields: after `RENAME src dst` of a composite key, `dst`'s metadata keeps the
/// elements where they are, in `src`'s subkey namespace `(src, version)`, and
/// names `src` here (a `links` entry maps that namespace back to `dst` for the
/// garbage collector). `None`: the elements live under the key itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Coll {
    pub kind: KeyType,
    pub expire_ms: u64,
    pub version: u64,
    pub size: u64,
    /// List only: index of the first element, and one past the last.
    pub head: u64,
    pub tail: u64,
    pub owner: Option<Bytes>,
    /// Stream only: its fixed fields after `[version][size]`
    /// ([`STREAM_FIELDS`] bytes, see `types::stream::State`); empty otherwise.
    pub stream: Bytes,
}

/// The bytes of a stream's own metadata fields: last id, first id, max
/// deleted id, entries added, trim floor, last node (`types::stream::State`).
pub const STREAM_FIELDS: usize = 16 + 16 + 16 + 8 + 16 + 16;

impl Coll {
    /// A new, empty collection.
    pub fn new(kind: KeyType, version: u64) -> Coll {
        let stream = if kind == KeyType::Stream { Bytes::from(vec![0; STREAM_FIELDS]) } else { Bytes::new() };
        Coll {
            kind,
            expire_ms: 0,
            version,
            size: 0,
            head: LIST_INITIAL_INDEX,
            tail: LIST_INITIAL_INDEX,
            owner: None,
            stream,
        }
    }

    /// Decode a composite key's (or a chunked string's) metadata; `None` for
    /// strings held inline, or malformed payloads.
    pub fn from_meta(m: &Meta) -> Option<Coll> {
        let p = &m.payload;
        let fixed = match m.kind {
            KeyType::String if !m.chunked => return None,
            KeyType::List => 32,
            KeyType::Stream => 16 + STREAM_FIELDS,
            _ => 16,
        };
        if p.len() < fixed {
            return None;
        }
        let word = |i: usize| u64::from_be_bytes(p[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let (head, tail) =
            if m.kind == KeyType::List { (word(2), word(3)) } else { (LIST_INITIAL_INDEX, LIST_INITIAL_INDEX) };
        Some(Coll {
            kind: m.kind,
            expire_ms: m.expire_ms,
            version: word(0),
            size: word(1),
            head,
            tail,
            owner: (p.len() > fixed).then(|| p.slice(fixed..)),
            stream: if m.kind == KeyType::Stream { p.slice(16..fixed) } else { Bytes::new() },
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let owner = self.owner.as_deref().unwrap_or(b"");
        if self.kind == KeyType::List {
            let mut p = list_payload(self.version, self.size, self.head, self.tail).to_vec();
            p.extend_from_slice(owner);
            encode(self.kind, self.expire_ms, &p)
        } else {
            let mut p = composite_payload(self.version, self.size).to_vec();
            p.extend_from_slice(&self.stream);
            p.extend_from_slice(owner);
            let mut v = encode(self.kind, self.expire_ms, &p);
            if self.kind == KeyType::String {
                v[0] |= CHUNKED;
            }
            v
        }
    }

    /// The user key whose subkey namespace holds the elements.
    pub fn data_key<'a>(&'a self, key: &'a [u8]) -> &'a [u8] {
        self.owner.as_deref().unwrap_or(key)
    }
}

/// The TTL rule: `expire_ms` (0 = no TTL) has passed at `now_ms`.
pub fn expired(expire_ms: u64, now_ms: u64) -> bool {
    expire_ms != 0 && expire_ms <= now_ms
}

/// Encode a metadata value from its parts.
pub fn encode(kind: KeyType, expire_ms: u64, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(META_HEADER + payload.len());
    v.push(0x80 | kind as u8);
    v.extend_from_slice(&expire_ms.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// Payload of a Hash/Set/ZSet: `[version:8][size:8]`.
pub fn composite_payload(version: u64, size: u64) -> [u8; 16] {
    let mut p = [0u8; 16];
    p[..8].copy_from_slice(&version.to_be_bytes());
    p[8..].copy_from_slice(&size.to_be_bytes());
    p
}

/// Payload of a List: `[version:8][size:8][head:8][tail:8]`.
pub fn list_payload(version: u64, size: u64, head: u64, tail: u64) -> [u8; 32] {
    let mut p = [0u8; 32];
    p[..16].copy_from_slice(&composite_payload(version, size));
    p[16..24].copy_from_slice(&head.to_be_bytes());
    p[24..].copy_from_slice(&tail.to_be_bytes());
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_roundtrip() {
        let raw = encode(KeyType::String, 1234, b"value");
        assert_eq!(raw[0], 0x81);
        let m = Meta::decode(Bytes::from(raw.clone())).unwrap();
        assert_eq!((m.kind, m.expire_ms, &m.payload[..]), (KeyType::String, 1234, &b"value"[..]));
        assert_eq!(m.encode(), raw);
        assert!(m.is_expired(1234) && !m.is_expired(1233));
        assert_eq!(Meta::decode_header(&raw), Some((KeyType::String, 1234)));
        assert!(!Meta { expire_ms: 0, ..m }.is_expired(u64::MAX));
    }

    #[test]
    fn coll_roundtrip_with_and_without_owner() {
        let mut c = Coll::new(KeyType::List, 42);
        c.size = 3;
        c.head -= 1;
        c.tail += 2;
        c.expire_ms = 99;
        let m = Meta::decode(Bytes::from(c.encode())).unwrap();
        assert_eq!(m.payload.len(), 32, "a list without owner is exactly the seed's layout");
        assert_eq!(Coll::from_meta(&m), Some(c.clone()));
        c.owner = Some(Bytes::from_static(b"src"));
        let m = Meta::decode(Bytes::from(c.encode())).unwrap();
        assert_eq!(Coll::from_meta(&m).unwrap().data_key(b"dst"), b"src");
        let mut h = Coll::new(KeyType::Hash, 7);
        h.size = 1;
        let m = Meta::decode(Bytes::from(h.encode())).unwrap();
        assert_eq!((m.version(), m.size(), m.payload.len()), (Some(7), Some(1), 16));
        assert_eq!(Coll::from_meta(&m).unwrap().data_key(b"h"), b"h");
        assert!(Coll::from_meta(&Meta::decode(Bytes::from(encode(KeyType::String, 0, b"x"))).unwrap()).is_none());
        // A chunked string is a collection of its bytes.
        let mut s = Coll::new(KeyType::String, 9);
        s.size = 1 << 20;
        s.expire_ms = 5;
        let raw = s.encode();
        assert_eq!(raw[0], 0x80 | CHUNKED | 1);
        let m = Meta::decode(Bytes::from(raw.clone())).unwrap();
        assert!(m.chunked && m.kind == KeyType::String);
        assert_eq!(Coll::from_meta(&m), Some(s));
        assert_eq!(Meta { expire_ms: 7, ..m }.encode()[0], raw[0], "a new TTL keeps it chunked");
    }

    #[test]
    fn composite_roundtrip() {
        let raw = encode(KeyType::List, 0, &list_payload(7, 3, LIST_INITIAL_INDEX - 1, LIST_INITIAL_INDEX + 2));
        let m = Meta::decode(Bytes::from(raw)).unwrap();
        assert_eq!((m.kind, m.version(), m.size()), (KeyType::List, Some(7), Some(3)));
        assert_eq!(m.payload.len(), 32);
        assert!(Meta::decode(Bytes::from_static(b"\x01abcdefgh")).is_none(), "flag bit 0x80 required");
        assert!(Meta::decode(Bytes::from_static(b"\x81abc")).is_none(), "too short");
    }
}
