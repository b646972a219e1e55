//! When each key was last used, and how often: what OBJECT IDLETIME and OBJECT
//! FREQ report (Redis keeps both in every object's 24-bit `lru` field).
//!
//! Nothing here is persisted or replicated: it is this process's view of its
//! clients' commands. Dispatch records every keyed command it runs (Redis's
//! "touch" on lookup); a key this process never saw (or has forgotten) has been
//! idle since the tracker started and counts `LFU_INIT_VAL` less what has
//! decayed since.
//!
//! One lane per core. A lane is a fixed table of 4-way sets, one cache line
//! each: a key's 64-bit hash (from a per-process random seed) picks its set and
//! is its tag; a new key takes an empty way, or the way used least recently.
//! Recording a use is a hash, one cache line and no allocation; the table is
//! bounded ([`MAX_KEYS`] over all lanes, 16 bytes each, its pages taken from the
//! system only as they are written). Two keys share a record only if their
//! 64-bit hashes are equal.
//!
//! A core records only into its own lane, so the lane's lock is uncontended on
//! the command path; OBJECT, which runs rarely and on any core, reads every lane
//! and keeps the most recent use and the highest count. That is why the lanes
//! sit behind a `Mutex` in the shared state rather than in each core's `Rc`
//! state: their readers are on other cores. A key used from several cores counts
//! its uses per lane (the highest is reported), so its frequency grows as
//! Redis's does only when its clients share a core.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Redis's starting LFU counter for a new key.
pub const LFU_INIT_VAL: u8 = 5;
/// Keys remembered over all lanes.
pub const MAX_KEYS: usize = 1 << 20;
/// Ways per set; a set (tag and record per way) fills one 64-byte cache line.
const WAYS: usize = 4;
const SET_WORDS: usize = 2 * WAYS;

/// One key's record, packed in a word: tenths of a second since the tracker
/// started at the last use (low 32 bits: 13 years), minutes since it started
/// when the counter was last updated (24 bits), the logarithmic access counter
/// (high 8 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    ticks: u32,
    mins: u32,
    counter: u8,
}

impl Record {
    fn pack(self) -> u64 {
        self.ticks as u64 | ((self.mins as u64 & 0xff_ffff) << 32) | ((self.counter as u64) << 56)
    }
    fn unpack(w: u64) -> Record {
        Record { ticks: w as u32, mins: ((w >> 32) & 0xff_ffff) as u32, counter: (w >> 56) as u8 }
    }
}

/// One core's table: `sets` sets of `SET_WORDS` words (tag, record per way)
/// from `base` (where the cache lines start) in `words`. Tag 0 is a free way.
struct Lane {
    words: Vec<u64>,
    base: usize,
    sets: usize,
    rng: u64,
}

impl Lane {
    fn new(sets: usize, seed: u64) -> Lane {
        let mut l = Lane { words: Vec::new(), base: 0, sets, rng: seed | 1 };
        l.reset();
        l
    }

    /// Empty the table: fresh zeroed words (the system lends zero pages, so
    /// an unused table costs no memory), aligned to cache lines.
    fn reset(&mut self) {
        self.words = vec![0u64; self.sets * SET_WORDS + SET_WORDS];
        let misalign = (self.words.as_ptr() as usize / 8) % SET_WORDS;
        self.base = (SET_WORDS - misalign) % SET_WORDS;
    }

    fn set_of(&mut self, tag: u64) -> &mut [u64] {
        // The tag's high bits pick the set (the low ones are the tag's own).
        let at = self.base + ((tag >> 32) as usize & (self.sets - 1)) * SET_WORDS;
        &mut self.words[at..at + SET_WORDS]
    }

    fn get(&mut self, tag: u64) -> Option<Record> {
        let set = self.set_of(tag);
        (0..WAYS).find(|w| set[2 * w] == tag).map(|w| Record::unpack(set[2 * w + 1]))
    }
}

/// A lane on its own cache lines (cores never share one).
#[repr(align(128))]
struct Padded(Mutex<Lane>);

/// The access records of every core (see the module doc).
pub struct Access {
    lanes: Vec<Padded>,
    hasher: ahash::RandomState,
    /// Unix ms the clocks count from: 30 days before the tracker started,
    /// so RESTORE ... IDLETIME can date a key back before the start.
    epoch_ms: u64,
    /// Unix ms when the tracker started: "never seen" means idle since then.
    started_ms: u64,
    /// `lfu-log-factor` and `lfu-decay-time` (CONFIG SET updates them).
    log_factor: AtomicU32,
    decay_time: AtomicU32,
}

/// How far back before the start the clocks reach (RESTORE's IDLETIME).
const BACK_MS: u64 = 30 * 86_400_000;

impl Access {
    pub fn new(cores: usize, epoch_ms: u64) -> Access {
        Access::with_capacity(cores, MAX_KEYS, epoch_ms)
    }

    fn with_capacity(cores: usize, keys: usize, epoch_ms: u64) -> Access {
        let n = cores.max(1);
        let sets = (keys / n / WAYS).max(1).next_power_of_two();
        Access {
            lanes: (0..n).map(|i| Padded(Mutex::new(Lane::new(sets, rand::random::<u64>() ^ i as u64)))).collect(),
            hasher: ahash::RandomState::new(),
            epoch_ms: epoch_ms.saturating_sub(BACK_MS),
            started_ms: epoch_ms,
            log_factor: AtomicU32::new(10),
            decay_time: AtomicU32::new(1),
        }
    }

    /// Take `lfu-log-factor` and `lfu-decay-time` from their configured text
    /// (unparsable values keep the current setting).
    pub fn configure(&self, log_factor: Option<&str>, decay_time: Option<&str>) {
        if let Some(v) = log_factor.and_then(|v| v.trim().parse::<u32>().ok()) {
            self.log_factor.store(v, Ordering::Relaxed);
        }
        if let Some(v) = decay_time.and_then(|v| v.trim().parse::<u32>().ok()) {
            self.decay_time.store(v, Ordering::Relaxed);
        }
    }

    fn lock(p: &Padded) -> MutexGuard<'_, Lane> {
        p.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A key's tag: its hash, never 0 (a free way).
    fn tag(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key) | 1
    }

    /// Tenths of a second since the tracker started: idle times are whole
    /// seconds (as Redis's LRU clock), measured from a finer clock so that a
    /// key used a moment ago never reads as a second idle.
    fn ticks(&self, now_ms: u64) -> u32 {
        (now_ms.saturating_sub(self.epoch_ms) / 100).min(u32::MAX as u64) as u32
    }

    fn mins(&self, now_ms: u64) -> u32 {
        (now_ms.saturating_sub(self.epoch_ms) / 60_000).min(0xff_ffff) as u32
    }

    /// The counter as decayed by `now` (Redis's LFUDecrAndReturn).
    fn decayed(&self, r: Record, now_mins: u32) -> u8 {
        let decay = self.decay_time.load(Ordering::Relaxed);
        if decay == 0 {
            return r.counter;
        }
        let periods = now_mins.saturating_sub(r.mins) / decay;
        r.counter.saturating_sub(periods.min(255) as u8)
    }

    /// Record a use of each of `keys` at `now_ms` on core `lane` (Redis's
    /// updateLFU, or its LRU clock, on lookup). A key seen for the first time
    /// starts as a new key does: its counter at `LFU_INIT_VAL`.
    pub fn touch<'k>(&self, lane: usize, now_ms: u64, keys: impl IntoIterator<Item = &'k [u8]>) {
        let Some(p) = self.lanes.get(lane) else { return };
        let mut guard = Access::lock(p);
        let l = &mut *guard;
        let (ticks, mins) = (self.ticks(now_ms), self.mins(now_ms));
        let factor = self.log_factor.load(Ordering::Relaxed) as f64;
        for key in keys {
            let tag = self.tag(key);
            let mut rng = l.rng;
            let set = l.set_of(tag);
            match (0..WAYS).find(|w| set[2 * w] == tag) {
                Some(w) => {
                    let old = Record::unpack(set[2 * w + 1]);
                    let counter = log_incr(self.decayed(old, mins), factor, &mut rng);
                    set[2 * w + 1] = Record { ticks, mins, counter }.pack();
                }
                None => {
                    // A free way, else the one used least recently.
                    let w = (0..WAYS)
                        .min_by_key(
                            |&w| if set[2 * w] == 0 { 0 } else { 1 + Record::unpack(set[2 * w + 1]).ticks as u64 },
                        )
                        .unwrap_or(0);
                    set[2 * w] = tag;
                    set[2 * w + 1] = Record { ticks, mins, counter: LFU_INIT_VAL }.pack();
                }
            }
            l.rng = rng;
        }
    }

    /// RESTORE's IDLETIME / FREQ: `key`'s record on core `lane` becomes one
    /// last used `idle_ms` ago (default now) with counter `freq` (default a
    /// new key's); other cores' records of it are dropped.
    pub fn set(&self, lane: usize, key: &[u8], now_ms: u64, idle_ms: Option<u64>, freq: Option<u8>) {
        self.forget([key]);
        let at = now_ms.saturating_sub(idle_ms.unwrap_or(0));
        let Some(p) = self.lanes.get(lane) else { return };
        let mut l = Access::lock(p);
        let tag = self.tag(key);
        let set = l.set_of(tag);
        let w = (0..WAYS)
            .min_by_key(|&w| if set[2 * w] == 0 { 0 } else { 1 + Record::unpack(set[2 * w + 1]).ticks as u64 })
            .unwrap_or(0);
        set[2 * w] = tag;
        let rec = Record { ticks: self.ticks(at), mins: self.mins(now_ms), counter: freq.unwrap_or(LFU_INIT_VAL) };
        set[2 * w + 1] = rec.pack();
    }

    /// Forget `keys` (deleted: a key created again under the name is new).
    pub fn forget<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]> + Clone) {
        for p in &self.lanes {
            let mut l = Access::lock(p);
            for key in keys.clone() {
                let tag = self.tag(key);
                let set = l.set_of(tag);
                if let Some(w) = (0..WAYS).find(|w| set[2 * w] == tag) {
                    set[2 * w] = 0;
                    set[2 * w + 1] = 0;
                }
            }
        }
    }

    /// Forget every key (FLUSHALL).
    pub fn clear(&self) {
        for p in &self.lanes {
            Access::lock(p).reset();
        }
    }

    /// Every lane's record of `key`.
    fn records(&self, key: &[u8]) -> Vec<Record> {
        let tag = self.tag(key);
        self.lanes.iter().filter_map(|p| Access::lock(p).get(tag)).collect()
    }

    /// OBJECT IDLETIME: whole seconds since `key` was last used (since the
    /// tracker started if it never was).
    pub fn idle_secs(&self, key: &[u8], now_ms: u64) -> u64 {
        let now = self.ticks(now_ms);
        let last = self.records(key).iter().map(|r| r.ticks).max().unwrap_or(self.ticks(self.started_ms));
        now.saturating_sub(last) as u64 / 10
    }

    /// OBJECT FREQ: the logarithmic access counter of `key`, decayed to now.
    pub fn freq(&self, key: &[u8], now_ms: u64) -> u8 {
        let now = self.mins(now_ms);
        let recs = self.records(key);
        if recs.is_empty() {
            let start = Record { ticks: 0, mins: self.mins(self.started_ms), counter: LFU_INIT_VAL };
            return self.decayed(start, now);
        }
        recs.iter().map(|r| self.decayed(*r, now)).max().unwrap_or(0)
    }
}

/// Redis's LFULogIncr: one more use makes the counter grow with probability
/// 1 / ((counter - LFU_INIT_VAL) * lfu-log-factor + 1), saturating at 255.
fn log_incr(counter: u8, factor: f64, rng: &mut u64) -> u8 {
    if counter == 255 {
        return 255;
    }
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * factor + 1.0);
    // xorshift64*: a uniform draw in [0, 1).
    let mut x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    let r = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64;
    if r < p {
        counter + 1
    } else {
        counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000_000;

    #[test]
    fn records_pack_into_a_word() {
        let r = Record { ticks: 0xdead_beef, mins: 0x12_3456, counter: 255 };
        assert_eq!(Record::unpack(r.pack()), r);
    }

    #[test]
    fn idle_time_counts_from_the_last_use() {
        let a = Access::new(2, T0);
        assert_eq!(a.idle_secs(b"k", T0 + 5_000), 5, "never seen: since start");
        a.touch(0, T0 + 5_000, [&b"k"[..]]);
        assert_eq!(a.idle_secs(b"k", T0 + 5_000), 0);
        assert_eq!(a.idle_secs(b"k", T0 + 8_000), 3);
        // A use on another core counts too: the most recent one wins.
        a.touch(1, T0 + 7_000, [&b"k"[..]]);
        assert_eq!(a.idle_secs(b"k", T0 + 8_000), 1);
        a.forget([&b"k"[..]]);
        assert_eq!(a.idle_secs(b"k", T0 + 8_000), 8);
        // Whole seconds of idleness, not seconds crossed.
        a.touch(0, T0 + 8_950, [&b"k"[..]]);
        assert_eq!(a.idle_secs(b"k", T0 + 9_050), 0);
        a.clear();
        assert_eq!(a.idle_secs(b"k", T0 + 9_050), 9);
    }

    #[test]
    fn frequency_grows_logarithmically_and_decays() {
        let a = Access::new(1, T0);
        a.touch(0, T0, [&b"k"[..]]);
        assert_eq!(a.freq(b"k", T0), LFU_INIT_VAL, "a new key starts at LFU_INIT_VAL");
        for _ in 0..1000 {
            a.touch(0, T0, [&b"k"[..]]);
        }
        let f = a.freq(b"k", T0);
        // About 19 on average (Redis's table for factor 10: 1000 hits, 18).
        assert!((12..=28).contains(&f), "1000 uses at log factor 10: {f}");
        // One decrement per idle minute (lfu-decay-time 1).
        assert_eq!(a.freq(b"k", T0 + 3 * 60_000), f - 3);
        a.configure(Some("0"), Some("0"));
        a.touch(0, T0, [&b"n"[..]]);
        for _ in 0..100 {
            a.touch(0, T0, [&b"n"[..]]);
        }
        assert_eq!(a.freq(b"n", T0 + 600_000), 105, "factor 0: every use counts; decay 0: none");
        for _ in 0..300 {
            a.touch(0, T0, [&b"n"[..]]);
        }
        assert_eq!(a.freq(b"n", T0), 255);
    }

    #[test]
    fn a_full_table_forgets_the_least_recently_used() {
        // One set of four ways: the fifth key takes the oldest one's place.
        let a = Access::with_capacity(1, 4, T0);
        for (i, k) in [&b"a"[..], b"b", b"c", b"d"].into_iter().enumerate() {
            a.touch(0, T0 + i as u64 * 1000, [k]);
        }
        a.touch(0, T0 + 5000, [&b"a"[..]]);
        a.touch(0, T0 + 6000, [&b"e"[..]]);
        let idle = |k: &[u8]| a.idle_secs(k, T0 + 6000);
        assert_eq!([idle(b"a"), idle(b"c"), idle(b"d"), idle(b"e")], [1, 4, 3, 0]);
        assert_eq!(idle(b"b"), 6, "b, used least recently, is forgotten");
        // Many keys: the table never grows.
        let a = Access::with_capacity(1, 64, T0);
        for i in 0..10_000u32 {
            a.touch(0, T0, [&i.to_be_bytes()[..]]);
        }
        let lane = Access::lock(&a.lanes[0]);
        assert_eq!(lane.words.len(), 64 / WAYS * SET_WORDS + SET_WORDS);
        assert_eq!((lane.words.as_ptr() as usize + lane.base * 8) % 64, 0, "sets on cache lines");
    }
}
