//! Keyspace notifications: the event classes of `notify-keyspace-events`, and
//! the events apply records as it changes keys (published on
//! `__keyspace@<db>__:<key>` and `__keyevent@<db>__:<event>` once the batch is in
//! storage, by the node applying it).

use bytes::Bytes;

/// `K`: publish on `__keyspace@<db>__:<key>`.
pub const KEYSPACE: u32 = 1 << 0;
/// `E`: publish on `__keyevent@<db>__:<event>`.
pub const KEYEVENT: u32 = 1 << 1;
pub const GENERIC: u32 = 1 << 2;
pub const STRING: u32 = 1 << 3;
pub const LIST: u32 = 1 << 4;
pub const SET: u32 = 1 << 5;
pub const HASH: u32 = 1 << 6;
pub const ZSET: u32 = 1 << 7;
pub const EXPIRED: u32 = 1 << 8;
pub const EVICTED: u32 = 1 << 9;
pub const STREAM: u32 = 1 << 10;
pub const KEY_MISS: u32 = 1 << 11;
pub const MODULE: u32 = 1 << 13;
pub const NEW: u32 = 1 << 14;
/// `A`: every class but key-miss and new.
pub const ALL: u32 = GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// One event: its name, the key and the key's (logical) database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: &'static str,
    pub key: Bytes,
    pub db: u16,
}

/// Where apply's events go: the node's Pub/Sub (implemented above this layer).
pub trait Sink: Send + Sync {
    /// The classes to record now (`notify-keyspace-events`).
    fn flags(&self) -> u32;
    /// Publish a stored batch's events, in order.
    fn publish(&self, events: Vec<Event>);
}

/// The (channel, message) pairs Redis publishes for `e` under `flags`: the
/// keyspace channel first, then the keyevent one.
pub fn messages(flags: u32, e: &Event) -> impl Iterator<Item = (Bytes, Bytes)> {
    let space = (flags & KEYSPACE != 0).then(|| {
        let mut c = format!("__keyspace@{}__:", e.db).into_bytes();
        c.extend_from_slice(&e.key);
        (Bytes::from(c), Bytes::from_static(e.name.as_bytes()))
    });
    let event =
        (flags & KEYEVENT != 0).then(|| (Bytes::from(format!("__keyevent@{}__:{}", e.db, e.name)), e.key.clone()));
    space.into_iter().chain(event)
}

/// Parse a `notify-keyspace-events` value; `None` for a character Redis refuses.
pub fn parse(s: &str) -> Option<u32> {
    let mut f = 0;
    for c in s.chars() {
        f |= match c {
            'A' => ALL,
            'g' => GENERIC,
            '$' => STRING,
            'l' => LIST,
            's' => SET,
            'h' => HASH,
            'z' => ZSET,
            'x' => EXPIRED,
            'e' => EVICTED,
            'K' => KEYSPACE,
            'E' => KEYEVENT,
            't' => STREAM,
            'm' => KEY_MISS,
            'd' => MODULE,
            'n' => NEW,
            _ => return None,
        };
    }
    Some(f)
}

/// The flags as Redis 7.0 prints them back (`A` when all, then K, E, m; `n`
/// only shows without `A`, as 7.0 renders it).
pub fn render(f: u32) -> String {
    let mut s = String::new();
    if f & ALL == ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (GENERIC, 'g'),
            (STRING, '$'),
            (LIST, 'l'),
            (SET, 's'),
            (HASH, 'h'),
            (ZSET, 'z'),
            (EXPIRED, 'x'),
            (EVICTED, 'e'),
            (STREAM, 't'),
            (MODULE, 'd'),
            (NEW, 'n'),
        ] {
            if f & bit != 0 {
                s.push(c);
            }
        }
    }
    for (bit, c) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (KEY_MISS, 'm')] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_as_redis_prints_them() {
        for (set, get) in [
            ("gKE", "gKE"),
            ("$lshzxeKE", "$lshzxeKE"),
            ("KA", "AK"),
            ("EA", "AE"),
            ("KEA", "AKE"),
            ("KEg$", "g$KE"),
            ("", ""),
        ] {
            assert_eq!(render(parse(set).unwrap()), get, "{set}");
        }
        assert_eq!(render(parse("AKEn").unwrap()), "AKE", "7.0 leaves n out after A");
        assert!(parse("Q").is_none());
    }
}
