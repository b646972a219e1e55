//! Linearizability checker for the history of one Redis string key.
//!
//! The algorithm is Wing & Gong's search as improved by Lowe (WGL). Each operation has a *call*
//! entry at its invoke time and a *return* entry at its return time, in one doubly linked list
//! sorted by time. Any operation whose call comes before the first return still in the list may
//! be linearized next, if the model (a Redis string register) gives the answer the client saw.
//! Linearizing an operation lifts its entries out of the list and pushes it on a stack; when
//! nothing can go next, the search pops the stack, puts the entries back and tries the next
//! candidate. A cache of explored configurations (linearized set, model state) keeps any
//! configuration from being searched twice. The search is a loop, not recursion.
//!
//! "Unknown" outcome: `Event::ret == None` means the client never learned what happened
//! (timeout, lost connection, ...). The operation may take effect at any moment after its
//! invoke, or never. Its return time is +infinity (no return entry), and the search succeeds as
//! soon as every operation *with* an answer is linearized. Unknown GETs are dropped.
//!
//! Sound reductions, needed mostly because unknown operations stay candidates forever:
//! * A GET that matches the current state is linearized at once, without trying alternatives.
//! * Answered operations are tried before unknown ones.
//! * Unknown operations that are interchangeable are used in invoke order: identical ones, and
//!   "blind" writes of equal length (values that cannot be integers and that no GET ever
//!   returned, even inside a longer string, so that only their length can be observed).
//! * A SET never directly follows an unknown operation: dropping the unknown one changes
//!   nothing. So after an unknown operation, some answered non-SET candidate must be able to
//!   come next (possibly after more unknown ones), or the branch is cut.
//! * Look-ahead: every answered operation invoked soon must go before its own return, so only
//!   SETs invoked by then can help it reach the state its answer needs. If none can, and
//!   APPEND/INCR cannot either, the configuration is dead.
//! * The cache keeps the unknown part of a configuration apart: a configuration is skipped if an
//!   explored one had the same answered operations and state and a subset of its unknown ones.
//!
//! Histories with many unknown operations can still be very hard (the problem is NP-complete),
//! so a check gives up with an error after `MAX_CONFIGS` configurations.

use std::collections::HashMap;
use std::fmt::Write as _;

/// One client operation on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Set(String),
    Get,
    Incr,
    Append(String),
    /// The key deleted (DEL, or a FLUSHALL of its slot): answers OK.
    Del,
}

/// What it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ret {
    Ok,                    // SET
    Value(Option<String>), // GET: nil or the string
    Int(i64),              // INCR: the new value
    Len(i64),              // APPEND: the new length
    /// Never in a caller's history: an APPEND of unknown outcome whose value a
    /// GET returned took effect, before that GET returned (`pin_seen_appends`).
    Happened,
}

#[derive(Debug, Clone)]
pub struct Event {
    pub client: usize,
    pub op: Op,
    /// Nanoseconds (any monotonic origin) when the request was sent.
    pub invoke: u64,
    /// When and what it answered; `None`: the outcome is unknown (timeout, connection lost,
    /// "write outcome unknown" error): it may take effect at any time after `invoke`, or never.
    pub ret: Option<(u64, Ret)>,
}

/// Upper bound on the configurations one check explores: at most about 200 MB, 5 s in release
/// mode, 15-20 s in debug. A history that needs more is reported as an error ("gave up").
pub const MAX_CONFIGS: usize = 2_000_000;

/// Check one key's history against a Redis string register that starts as `initial`
/// (None = key absent). Ok(()) if some linearization exists; Err with a human-readable
/// explanation (the longest linearizable prefix found and the operation(s) that could not
/// be placed, with their times) otherwise.
///
/// Inside, an absent key is the empty string (no operation writes one: SET and
/// APPEND values are never empty, and INCR counts from 0 on either), so a
/// delete is a SET of "" and every pruning rule about SETs holds for it.
pub fn check(history: &[Event], initial: Option<String>) -> Result<(), String> {
    check_within(history, initial, MAX_CONFIGS)
}

/// [`check`], giving up after `max_configs` configurations instead (a saved
/// history checked offline may take more: about 100 bytes each).
pub fn check_within(history: &[Event], initial: Option<String>, max_configs: usize) -> Result<(), String> {
    if let Some(e) = history.iter().find(|e| matches!(&e.op, Op::Set(v) | Op::Append(v) if v.is_empty())) {
        return Err(format!("malformed history: an empty value written (the model keeps \"\" for nil): {e:?}"));
    }
    let mut ops: Vec<Rec> = (history.iter().enumerate())
        .filter(|(_, e)| !(e.op == Op::Get && e.ret.is_none()))
        .map(|(i, e)| {
            // A return stamped before its own invoke would break the ordering: clamp it.
            let ret = e.ret.clone().map(|(t, r)| match r {
                Ret::Value(None) => (t.max(e.invoke), Ret::Value(Some(String::new()))),
                r => (t.max(e.invoke), r),
            });
            let op = if e.op == Op::Del { Op::Set(String::new()) } else { e.op.clone() };
            Rec { orig: i, client: e.client, op, invoke: e.invoke, ret }
        })
        .collect();
    let initial = Some(initial.unwrap_or_default());
    ops.sort_by_key(|r| (r.invoke, r.orig));
    for r in &ops {
        match (&r.op, r.ret.as_ref().map(|x| &x.1)) {
            (_, None) | (Op::Set(_) | Op::Del, Some(Ret::Ok)) | (Op::Get, Some(Ret::Value(_))) => {}
            (Op::Incr, Some(Ret::Int(_))) | (Op::Append(_), Some(Ret::Len(_))) => {}
            _ => return Err(format!("malformed history: answer of the wrong kind: {}", describe(r))),
        }
    }
    pin_seen_appends(&mut ops);
    Search::new(ops, initial, max_configs).run()
}

/// An APPEND of unknown outcome stays a candidate to the end of the search
/// (it may take effect at any time, or never), and a history with many of them
/// is hard. But when its value is a *token* (one comma, at its end: the
/// nemesis appends `client.n,`) and a GET returned it, it did take effect,
/// once, before that GET returned: it gets that return as its deadline, with
/// an answer that fits any length ([`Ret::Happened`]).
///
/// Sound only if the token in the GET can come from that APPEND alone: every
/// SET's value is comma-free, every APPEND's comma-free or a token, each token
/// is appended once, and no
/// token ends with another (so a comma-free value before a token cannot pass
/// for a longer token). Otherwise nothing is pinned.
fn pin_seen_appends(ops: &mut [Rec]) {
    let is_token = |v: &str| v.ends_with(',') && v.matches(',').count() == 1;
    let mut tokens: HashMap<&str, usize> = HashMap::new();
    for r in ops.iter() {
        match &r.op {
            // A SET of a token would be a second writer of it.
            Op::Set(v) if v.contains(',') => return,
            Op::Append(v) if !is_token(v) && v.contains(',') => return,
            Op::Append(v) if is_token(v) => *tokens.entry(v).or_default() += 1,
            _ => {}
        }
    }
    let suffix_of_another = |t: &str| (1..t.len()).any(|i| t.is_char_boundary(i) && tokens.contains_key(&t[i..]));
    if tokens.values().any(|&n| n > 1) || tokens.keys().any(|t| suffix_of_another(t)) {
        return;
    }
    // Each token a GET returned: the earliest return of such a GET.
    let mut seen: HashMap<String, u64> = HashMap::new();
    for r in ops.iter() {
        if let (Op::Get, Some((t, Ret::Value(Some(x))))) = (&r.op, &r.ret) {
            for piece in x.split_inclusive(',').filter(|p| p.ends_with(',')) {
                let at = seen.entry(piece.to_string()).or_insert(*t);
                *at = (*at).min(*t);
            }
        }
    }
    for r in ops.iter_mut() {
        if let (Op::Append(v), None) = (&r.op, &r.ret) {
            if let Some(&t) = seen.get(v.as_str()) {
                r.ret = Some((t.max(r.invoke), Ret::Happened));
            }
        }
    }
}

/// An operation of the history, with its index in the caller's slice.
struct Rec {
    orig: usize,
    client: usize,
    op: Op,
    invoke: u64,
    ret: Option<(u64, Ret)>,
}

/// Effect of an operation on the model state.
enum Next {
    Same,
    To(String),
}

/// Parse an integer the way Redis does for INCR: canonical decimal i64 only
/// (no "+", no leading zeros, no "-0", no spaces).
fn redis_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let canonical = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    if !canonical || (digits.starts_with('0') && (digits.len() > 1 || s.starts_with('-'))) {
        return None;
    }
    s.parse().ok()
}

/// The Redis string model: apply `op` to `state` and check the answer, if there is one.
/// `None`: the operation cannot take effect here (with that answer).
fn step(op: &Op, state: Option<&str>, ret: Option<&Ret>) -> Option<Next> {
    match (op, ret) {
        (Op::Set(v), None | Some(Ret::Ok)) => Some(Next::To(v.clone())),
        (Op::Get, None) => Some(Next::Same),
        (Op::Get, Some(Ret::Value(v))) => (v.as_deref() == state).then_some(Next::Same),
        (Op::Incr, None | Some(Ret::Int(_))) => {
            let n = redis_int(state.filter(|s| !s.is_empty()).unwrap_or("0"))?.checked_add(1)?;
            (ret.is_none() || ret == Some(&Ret::Int(n))).then(|| Next::To(n.to_string()))
        }
        (Op::Append(v), None | Some(Ret::Len(_) | Ret::Happened)) => {
            let s = format!("{}{v}", state.unwrap_or(""));
            let fits = match ret {
                Some(Ret::Len(l)) => *l == s.len() as i64,
                _ => true,
            };
            fits.then_some(Next::To(s))
        }
        _ => None,
    }
}

/// Could appending digits make `s` an integer (so that INCR applies)?
fn may_int(s: &str) -> bool {
    s.strip_prefix('-').unwrap_or(s).bytes().all(|b| b.is_ascii_digit())
}

/// Could APPENDs and INCRs (no SET) turn `from` into `x`? Only says no when certain: from an
/// integer b >= 0 they reach only integers >= b and strings starting with a digit; from a
/// string that can never become an integer, only its extensions.
fn may_become(from: Option<&str>, x: &str) -> bool {
    let Some(f) = from else { return true };
    match redis_int(f) {
        _ if f == x => true,
        None if !may_int(f) => x.starts_with(f),
        Some(b) if b >= 0 => redis_int(x).map_or(x.starts_with(|c: char| c.is_ascii_digit()), |y| y >= b),
        _ => true,
    }
}

const NIL: usize = usize::MAX;

/// Doubly linked list of entries; node `head` is a sentinel before the first entry.
struct List {
    next: Vec<usize>,
    prev: Vec<usize>,
    head: usize,
}

impl List {
    fn unlink(&mut self, e: usize) {
        let (p, n) = (self.prev[e], self.next[e]);
        self.next[p] = n;
        if n != NIL {
            self.prev[n] = p;
        }
    }
    /// Undo `unlink(e)`; entries must be put back in the reverse order of removal.
    fn relink(&mut self, e: usize) {
        let (p, n) = (self.prev[e], self.next[e]);
        self.next[p] = e;
        if n != NIL {
            self.prev[n] = e;
        }
    }
}

/// The linearized operations: one bitset for answered and one for unknown operations (indexed
/// by `Search::slot`), and a hash of the answered set (XOR of per-operation random keys).
struct Linearized {
    known: Vec<u64>,
    unknown: Vec<u64>,
    hash: u64,
}

/// What one configuration looks like ahead. `known`: the answered candidates (except SETs);
/// `appends`/`incrs`: the available unknown APPENDs and the number of unknown INCRs; `later`:
/// answered non-SET operations invoked a little later; `sets`: SETs invoked by then;
/// `covered`: the time up to which `later` and `sets` are complete.
struct Window {
    known: Vec<usize>,
    appends: Vec<usize>,
    incrs: usize,
    later: Vec<usize>,
    sets: Vec<usize>,
    covered: u64,
}

/// A linearized operation on the stack, with what is needed to undo it.
struct Frame {
    op: usize,
    phase: u8,
    old_state: Option<Option<String>>,
    old_id: u32,
    old_after_unknown: bool,
}

struct Search {
    ops: Vec<Rec>,
    initial: Option<String>,
    max_configs: usize,
    /// Per entry: its operation and whether it is a return entry.
    entry_op: Vec<usize>,
    entry_ret: Vec<bool>,
    /// Per operation: its call and return entries (NIL return if the outcome is unknown), its
    /// bit in `Linearized`, the previous interchangeable unknown operation (or NIL), its key
    /// for the hash.
    call: Vec<usize>,
    ret: Vec<usize>,
    slot: Vec<usize>,
    prev_same: Vec<usize>,
    zobrist: Vec<u64>,
}

impl Search {
    fn new(ops: Vec<Rec>, initial: Option<String>, max_configs: usize) -> Search {
        let n = ops.len();
        // Sort entries by time; at equal times calls come first (counted as overlapping).
        let mut entries: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * n);
        for (i, r) in ops.iter().enumerate() {
            entries.push((r.invoke, false, i));
            entries.extend(r.ret.as_ref().map(|x| (x.0, true, i)));
        }
        entries.sort_unstable();
        let (mut call, mut ret) = (vec![NIL; n], vec![NIL; n]);
        for (e, &(_, is_ret, i)) in entries.iter().enumerate() {
            *(if is_ret { &mut ret[i] } else { &mut call[i] }) = e;
        }
        let reads: Vec<&str> = (ops.iter())
            .filter_map(|r| if let Some((_, Ret::Value(Some(x)))) = &r.ret { Some(x.as_str()) } else { None })
            .collect();
        let blind =
            |v: &str| v.bytes().any(|b| !b.is_ascii_digit() && b != b'-') && !reads.iter().any(|x| x.contains(v));
        let (mut slot, mut counts, mut prev_same) = (vec![0; n], [0, 0], vec![NIL; n]);
        let mut last: HashMap<(u8, usize, &str), usize> = HashMap::new();
        for (i, r) in ops.iter().enumerate() {
            let known = r.ret.is_some() as usize;
            (slot[i], counts[known]) = (counts[known], counts[known] + 1);
            let key = match &r.op {
                _ if known == 1 => continue,
                Op::Set(v) if blind(v) => (0, v.len(), ""),
                Op::Append(v) if blind(v) => (1, v.len(), ""),
                Op::Set(v) => (2, 0, v.as_str()),
                Op::Append(v) => (3, 0, v.as_str()),
                _ => (4, 0, ""), // INCR (GET was dropped)
            };
            prev_same[i] = last.insert(key, i).unwrap_or(NIL);
        }
        let mut seed = 0u64;
        let zobrist = (0..n)
            .map(|_| {
                seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15); // splitmix64
                let z = (seed ^ (seed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            })
            .collect();
        let (entry_op, entry_ret) = (entries.iter().map(|x| x.2).collect(), entries.iter().map(|x| x.1).collect());
        Search { ops, initial, max_configs, entry_op, entry_ret, call, ret, slot, prev_same, zobrist }
    }

    fn known(&self, i: usize) -> bool {
        self.ops[i].ret.is_some()
    }

    fn ret_time(&self, i: usize) -> u64 {
        self.ops[i].ret.as_ref().map_or(u64::MAX, |x| x.0)
    }

    /// The full list: entries 0..m in time order, then the head sentinel.
    fn list(&self) -> List {
        let m = self.entry_op.len();
        let mut next: Vec<usize> = (1..=m).map(|e| if e < m { e } else { NIL }).collect();
        next.push(if m > 0 { 0 } else { NIL });
        List { next, prev: (0..=m).map(|e| e.checked_sub(1).unwrap_or(m)).collect(), head: m }
    }

    fn lift(&self, list: &mut List, i: usize) {
        list.unlink(self.call[i]);
        if self.ret[i] != NIL {
            list.unlink(self.ret[i]);
        }
    }

    /// Add operation `i` to the linearized set, or remove it.
    fn flip(&self, lin: &mut Linearized, i: usize) {
        let bits = if self.known(i) { &mut lin.known } else { &mut lin.unknown };
        bits[self.slot[i] / 64] ^= 1 << (self.slot[i] % 64);
        if self.known(i) {
            lin.hash ^= self.zobrist[i];
        }
    }

    fn run(&self) -> Result<(), String> {
        let mut list = self.list();
        let known_total = self.ops.iter().filter(|r| r.ret.is_some()).count();
        let mut known_left = known_total;
        let (kw, uw) = (known_total.div_ceil(64), (self.ops.len() - known_total).div_ceil(64));
        let mut lin = Linearized { known: vec![0; kw], unknown: vec![0; uw], hash: 0 };
        // Model states are interned: the cache holds a small id per distinct string.
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut intern = |s: Option<&str>| {
            let Some(s) = s else { return u32::MAX };
            if let Some(&id) = ids.get(s) {
                return id;
            }
            let id = ids.len() as u32;
            ids.insert(s.to_string(), id);
            id
        };
        let mut state = self.initial.clone();
        let mut state_id = intern(state.as_deref());
        // Is the last linearized operation an unknown one?
        let mut after_unknown = false;
        // Explored configurations: (hash of answered set, state, after_unknown) -> one array each:
        // (number of leading all-ones words of the answered set << 32 | number of words after
        // them), those words, then the words of the unknown set.
        let mut cache: HashMap<_, Vec<Box<[u64]>>> = HashMap::new();
        let mut configs = 0;
        let mut stack: Vec<Frame> = Vec::new();
        let mut window: Option<Window> = None;
        // Longest prefix seen (counting answered operations); `best[..low]` equals the stack's.
        let (mut best, mut best_known, mut low) = (Vec::<usize>::new(), 0, 0);

        // Cursor over the candidates. Phase 2 looks for a GET that can go now, phase 0 visits
        // the answered operations, phase 1 the unknown ones.
        let (mut cur, mut phase) = (list.next[list.head], 2u8);
        loop {
            if known_left == 0 {
                return Ok(());
            }
            if cur == NIL || self.entry_ret[cur] {
                if phase != 1 {
                    (cur, phase) = (list.next[list.head], if phase == 2 { 0 } else { 1 });
                    continue;
                }
                // Nothing more to try in this configuration: backtrack.
                let Some(f) = stack.pop() else { return Err(self.explain(&best, configs, false)) };
                if self.ret[f.op] != NIL {
                    list.relink(self.ret[f.op]);
                }
                list.relink(self.call[f.op]);
                self.flip(&mut lin, f.op);
                if let Some(old) = f.old_state {
                    state = old;
                }
                (state_id, after_unknown) = (f.old_id, f.old_after_unknown);
                known_left += self.known(f.op) as usize;
                window = None;
                low = low.min(stack.len());
                // After a forced GET there is nothing else to try.
                (cur, phase) = if f.phase == 2 { (NIL, 1) } else { (list.next[self.call[f.op]], f.phase) };
                continue;
            }
            let i = self.entry_op[cur];
            cur = list.next[cur];
            let (r, p) = (&self.ops[i], self.prev_same[i]);
            if self.known(i) == (phase == 1)
                || (phase == 2 && r.op != Op::Get)
                || (after_unknown && matches!(r.op, Op::Set(_)))
                || (p != NIL && lin.unknown[self.slot[p] / 64] & (1 << (self.slot[p] % 64)) == 0)
            {
                continue;
            }
            let Some(next) = step(&r.op, state.as_deref(), r.ret.as_ref().map(|x| &x.1)) else { continue };
            let new_state = match &next {
                Next::Same => state.as_deref(),
                Next::To(s) => Some(s.as_str()),
            };
            if phase == 1 && !self.viable(window.get_or_insert_with(|| self.window(&list)), i, new_state) {
                continue;
            }
            let new_id = intern(new_state);
            self.flip(&mut lin, i);
            let lead = lin.known.iter().take_while(|&&w| w == u64::MAX).count();
            let (k, u) = (trim(&lin.known[lead..]), trim(&lin.unknown));
            let head = ((lead as u64) << 32) | k.len() as u64;
            let seen = cache.entry((lin.hash, new_id, phase == 1)).or_insert_with(|| Vec::with_capacity(1));
            // Skip it if an explored configuration had the same answered operations and state
            // and a subset of its unknown operations.
            let subset = |u2: &[u64]| u2.len() <= u.len() && u2.iter().zip(u).all(|(a, b)| a & !b == 0);
            if seen.iter().any(|c| c[0] == head && c[1..=k.len()] == *k && subset(&c[k.len() + 1..])) {
                self.flip(&mut lin, i);
                if phase == 2 {
                    (cur, phase) = (NIL, 1);
                }
                continue;
            }
            seen.push([&[head], k, u].concat().into());
            configs += 1;
            if configs > self.max_configs {
                return Err(self.explain(&best, configs, true));
            }
            // A new configuration: linearize operation i.
            self.lift(&mut list, i);
            let old_state = match next {
                Next::Same => None,
                Next::To(s) => Some(state.replace(s)),
            };
            stack.push(Frame { op: i, phase, old_state, old_id: state_id, old_after_unknown: after_unknown });
            (state_id, after_unknown) = (new_id, phase == 1);
            known_left -= self.known(i) as usize;
            if known_total - known_left > best_known {
                best_known = known_total - known_left;
                best.truncate(low);
                best.extend(stack[low..].iter().map(|f| f.op));
                low = stack.len();
            }
            (cur, phase) = (list.next[list.head], 2);
            // Cut the branch at once if an answered operation can no longer be linearized.
            if self.dead(window.insert(self.window(&list)), state.as_deref()).is_some() {
                (cur, phase) = (NIL, 1);
            }
        }
    }

    /// Summarize the current configuration (see `Window`).
    fn window(&self, list: &List) -> Window {
        let mut w = Window {
            known: Vec::new(),
            appends: Vec::new(),
            incrs: 0,
            later: Vec::new(),
            sets: Vec::new(),
            covered: u64::MAX,
        };
        let mut e = list.next[list.head];
        while e != NIL && !self.entry_ret[e] {
            let j = self.entry_op[e];
            match (&self.ops[j].op, self.known(j)) {
                (Op::Set(_), _) => w.sets.push(j),
                (_, true) => w.known.push(j),
                (Op::Append(_), false) => w.appends.push(j),
                (_, false) => w.incrs += 1,
            }
            e = list.next[e];
        }
        // Look ahead past the return of every candidate and of the first answered GET.
        let mut until = w.known.iter().map(|&k| self.ret_time(k)).max().unwrap_or(0);
        let mut saw_get = w.known.iter().any(|&k| self.ops[k].op == Op::Get);
        for _ in 0..256 {
            if e == NIL {
                w.covered = u64::MAX;
                return w;
            }
            let j = self.entry_op[e];
            let time = if self.entry_ret[e] { self.ret_time(j) } else { self.ops[j].invoke };
            if saw_get && time > until {
                w.covered = until;
                return w;
            }
            w.covered = time.saturating_sub(1);
            if !self.entry_ret[e] && matches!(self.ops[j].op, Op::Set(_)) {
                w.sets.push(j);
            } else if !self.entry_ret[e] && self.known(j) {
                w.later.push(j);
                if !saw_get && self.ops[j].op == Op::Get {
                    (saw_get, until) = (true, until.max(self.ret_time(j)));
                }
            }
            e = list.next[e];
        }
        w
    }

    /// An answered operation (among the candidates and those invoked a little later) that can
    /// never be linearized from here: it must go before its own return, so only SETs invoked
    /// by then can help it reach the state its answer needs; GET and INCR need an exact state.
    fn dead(&self, w: &Window, state: Option<&str>) -> Option<usize> {
        w.known.iter().chain(&w.later).copied().find(|&k| {
            let Some((t, ret)) = &self.ops[k].ret else { return false };
            let sets = || w.sets.iter().filter(|&&j| self.ops[j].invoke <= *t).map(|&j| &self.ops[j].op);
            let need = match (&self.ops[k].op, ret) {
                _ if *t > w.covered => return false,
                (Op::Get, Ret::Value(None)) => return state.is_some(),
                (Op::Get, Ret::Value(Some(x))) => x.clone(),
                (Op::Incr, Ret::Int(1)) if state.is_none_or(str::is_empty) => return false,
                (Op::Incr, Ret::Int(n)) => n.checked_sub(1).map_or(String::new(), |p| p.to_string()),
                (Op::Append(v), Ret::Len(l)) => {
                    // Without a SET the length only grows, except by INCR on a negative number.
                    let (len, want) = (state.map_or(0, str::len) as i64, l.saturating_sub(v.len() as i64));
                    return len > want
                        && !state.is_some_and(|s| s.starts_with('-'))
                        && !sets().any(|op| matches!(op, Op::Set(v) if v.len() as i64 <= want));
                }
                _ => return false,
            };
            !may_become(state, &need) && !sets().any(|op| matches!(op, Op::Set(v) if may_become(Some(v), &need)))
        })
    }

    /// Unknown operation `i` would leave the model in `state`. Could some answered non-SET
    /// candidate still go next, possibly after more of the available unknown APPENDs/INCRs?
    /// Only says no when that is certain.
    fn viable(&self, w: &Window, i: usize, state: Option<&str>) -> bool {
        let appends: Vec<&str> = (w.appends.iter().filter(|&&j| j != i))
            .map(|&j| if let Op::Append(v) = &self.ops[j].op { v.as_str() } else { "" })
            .collect();
        let incrs = w.incrs - matches!(self.ops[i].op, Op::Incr) as usize;
        let reach = |x: &str| {
            state == Some(x)
                || (!appends.is_empty() && x.starts_with(state.unwrap_or("")))
                || (incrs > 0 && state.is_none_or(may_int))
        };
        w.known.iter().any(|&k| match (&self.ops[k].op, self.ops[k].ret.as_ref().map(|x| &x.1)) {
            (Op::Get, Some(Ret::Value(None))) => state.is_none(),
            (Op::Get, Some(Ret::Value(Some(x)))) => reach(x),
            (Op::Incr, Some(Ret::Int(n))) => {
                (*n == 1 && state.is_none_or(str::is_empty)) || n.checked_sub(1).is_some_and(|p| reach(&p.to_string()))
            }
            (Op::Append(v), Some(Ret::Len(l))) => {
                // The length just before it; each INCR changes the length by at most one.
                let (len, want) = (state.map_or(0, str::len) as i64, l.saturating_sub(v.len() as i64));
                let (grow, incrs) = (appends.iter().map(|a| a.len() as i64).sum::<i64>(), incrs as i64);
                let slack = if state.is_none_or(may_int) { incrs } else { 0 };
                len - slack <= want && want <= len + grow + slack
            }
            // Appending fits any state.
            (Op::Append(_), Some(Ret::Happened)) => true,
            _ => false,
        })
    }

    /// The failure report: the longest linearizable prefix and what could not follow it.
    fn explain(&self, best: &[usize], configs: usize, gave_up: bool) -> String {
        let (mut list, mut done, mut state) = (self.list(), vec![false; self.ops.len()], self.initial.clone());
        for &i in best {
            let r = &self.ops[i];
            if let Some(Next::To(s)) = step(&r.op, state.as_deref(), r.ret.as_ref().map(|x| &x.1)) {
                state = Some(s);
            }
            done[i] = true;
            self.lift(&mut list, i);
        }
        let known = |i: &&usize| self.known(**i);
        let (known_done, shown) = (best.iter().filter(known).count(), best.len().min(12));
        let mut out = if gave_up {
            format!("gave up after {configs} configurations (the limit) without finding a linearization. ")
                + "Probably not linearizable, but many operations of unknown outcome can also make it too hard.\n"
        } else {
            format!("not linearizable (all {configs} reachable configurations explored).\n")
        };
        let _ = writeln!(
            out,
            "at most {known_done} of {} answered operations could be linearized (initial state {}); \
             longest linearizable prefix, last {shown} of {}:",
            self.ops.iter().filter(|r| r.ret.is_some()).count(),
            show(self.initial.as_deref()),
            best.len()
        );
        for &i in &best[best.len() - shown..] {
            let _ = writeln!(out, "  {}", describe(&self.ops[i]));
        }
        let _ = writeln!(out, "state after it: {}", show(state.as_deref()));
        if let Some(k) = self.dead(&self.window(&list), state.as_deref()) {
            let _ = writeln!(out, "after it, this one can never be linearized:\n  {}", describe(&self.ops[k]));
            return out;
        }
        // The earliest return among the rest: nothing invoked after it can come before it,
        // so one of the operations invoked by then had to go next.
        let Some(t) = (0..self.ops.len()).filter(|&i| !done[i]).map(|i| self.ret_time(i)).min() else { return out };
        let stuck: Vec<usize> = (0..self.ops.len()).filter(|&i| !done[i] && self.ops[i].invoke <= t).collect();
        let _ =
            writeln!(out, "none of these could be linearized next (invoked by {t}, when the first of them returned):");
        for &i in stuck.iter().filter(known).take(20) {
            let _ = writeln!(out, "  {}", describe(&self.ops[i]));
        }
        let unknown = stuck.len() - stuck.iter().filter(known).count();
        if unknown > 0 {
            let _ = writeln!(out, "  (and {unknown} operations with unknown outcome, which did not help)");
        }
        out
    }
}

/// The words of a bitset up to its last non-zero one.
fn trim(bits: &[u64]) -> &[u64] {
    &bits[..bits.iter().rposition(|&w| w != 0).map_or(0, |x| x + 1)]
}

fn show(s: Option<&str>) -> String {
    match s {
        None | Some("") => "nil".to_string(),
        Some(s) if s.chars().count() <= 96 => format!("{s:?}"),
        // Both ends: an appended value differs at its end.
        Some(s) => {
            let n = s.chars().count();
            let head: String = s.chars().take(24).collect();
            let tail: String = s.chars().skip(n - 64).collect();
            format!("{head:?}...{tail:?} ({} bytes)", s.len())
        }
    }
}

fn describe(r: &Rec) -> String {
    let op = match &r.op {
        Op::Set(v) if v.is_empty() => "DEL".to_string(),
        Op::Set(v) => format!("SET {}", show(Some(v))),
        Op::Get => "GET".to_string(),
        Op::Incr => "INCR".to_string(),
        Op::Append(v) => format!("APPEND {}", show(Some(v))),
        Op::Del => "DEL".to_string(),
    };
    let (who, inv) = (format!("#{} client {}: {op} ->", r.orig, r.client), r.invoke);
    match &r.ret {
        None => format!("{who} ? (outcome unknown) [invoke {inv}]"),
        Some((t, ret)) => {
            let ret = match ret {
                Ret::Ok => "OK".to_string(),
                Ret::Value(v) => show(v.as_deref()),
                Ret::Int(n) | Ret::Len(n) => n.to_string(),
                Ret::Happened => "? (outcome unknown, but a GET returned its value by then)".to_string(),
            };
            format!("{who} {ret} [invoke {inv}, return {t}]")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(client: usize, op: Op, invoke: u64, ret: Option<(u64, Ret)>) -> Event {
        Event { client, op, invoke, ret }
    }
    fn set(c: usize, v: &str, a: u64, b: u64) -> Event {
        ev(c, Op::Set(v.into()), a, Some((b, Ret::Ok)))
    }
    fn get(c: usize, v: Option<&str>, a: u64, b: u64) -> Event {
        ev(c, Op::Get, a, Some((b, Ret::Value(v.map(String::from)))))
    }
    fn incr(c: usize, n: i64, a: u64, b: u64) -> Event {
        ev(c, Op::Incr, a, Some((b, Ret::Int(n))))
    }
    fn append(c: usize, v: &str, len: i64, a: u64, b: u64) -> Event {
        ev(c, Op::Append(v.into()), a, Some((b, Ret::Len(len))))
    }
    fn lost(c: usize, op: Op, a: u64) -> Event {
        ev(c, op, a, None)
    }
    fn ok(h: &[Event]) {
        if let Err(e) = check(h, None) {
            panic!("expected linearizable, got:\n{e}");
        }
    }
    fn bad(h: &[Event]) -> String {
        let e = check(h, None).expect_err("expected a violation");
        assert!(e.starts_with("not linearizable"), "{e}");
        e
    }

    #[test]
    fn sequential_histories_are_accepted() {
        ok(&[]);
        ok(&[get(0, None, 0, 1), set(0, "a", 2, 3), get(1, Some("a"), 4, 5), set(1, "41", 6, 7), incr(0, 42, 8, 9)]);
        ok(&[incr(0, 1, 0, 1), incr(0, 2, 2, 3), append(0, "b", 2, 4, 5), get(0, Some("2b"), 6, 7)]);
        assert!(check(&[get(0, Some("5"), 0, 1), incr(0, 6, 2, 3)], Some("5".into())).is_ok());
        assert!(check(&[get(0, Some("x"), 0, 1), incr(0, 1, 2, 3)], Some("x".into())).is_err());
    }

    #[test]
    fn deletes_reset_the_key() {
        let del = |c, a, b| ev(c, Op::Del, a, Some((b, Ret::Ok)));
        ok(&[set(0, "a", 0, 1), del(1, 2, 3), get(0, None, 4, 5), incr(0, 1, 6, 7), append(1, "x", 2, 8, 9)]);
        ok(&[set(0, "a", 0, 1), del(1, 2, 10), get(0, Some("a"), 3, 4), get(0, None, 11, 12)]);
        // A deleted value that comes back, a delete that did not happen.
        bad(&[set(0, "a", 0, 1), del(1, 2, 3), get(0, Some("a"), 4, 5)]);
        bad(&[set(0, "a", 0, 1), del(1, 2, 3), append(0, "b", 2, 4, 5)]);
        bad(&[incr(0, 1, 0, 1), del(1, 2, 3), incr(0, 2, 4, 5)]);
        // An unknown delete may land late or never, but not be undone.
        ok(&[set(0, "a", 0, 1), lost(1, Op::Del, 2), get(0, Some("a"), 5, 6), get(0, None, 7, 8)]);
        bad(&[set(0, "a", 0, 1), lost(1, Op::Del, 2), get(0, None, 5, 6), get(0, Some("a"), 7, 8)]);
        // An empty written value cannot be told from nil: refused.
        assert!(check(&[set(0, "", 0, 1)], None).is_err_and(|e| e.starts_with("malformed")));
    }

    #[test]
    fn overlapping_histories_with_several_valid_orders_are_accepted() {
        for seen in ["a", "b"] {
            ok(&[set(0, "a", 0, 10), set(1, "b", 1, 11), get(2, Some(seen), 12, 13)]);
        }
        for seen in [None, Some("a")] {
            ok(&[set(0, "a", 0, 10), get(1, seen, 2, 8), get(1, Some("a"), 11, 12)]);
        }
        ok(&[incr(0, 2, 0, 10), incr(1, 1, 1, 11), incr(2, 3, 2, 12), get(0, Some("3"), 13, 14)]);
        ok(&[append(0, "x", 2, 0, 10), append(1, "y", 1, 1, 11), get(2, Some("y"), 2, 5), get(2, Some("yx"), 12, 13)]);
    }

    #[test]
    fn unknown_outcomes_may_or_may_not_take_effect() {
        let lost_set = || lost(1, Op::Set("b".into()), 2);
        ok(&[set(0, "a", 0, 1), lost_set(), get(0, Some("a"), 5, 6), get(0, Some("b"), 7, 8)]); // late
        ok(&[set(0, "a", 0, 1), lost_set(), get(0, Some("a"), 50, 60)]); // never
        ok(&[incr(0, 1, 0, 1), lost(1, Op::Incr, 2), get(0, Some("2"), 10, 11), incr(0, 3, 12, 13)]);
        ok(&[incr(0, 1, 0, 1), lost(1, Op::Incr, 2), get(0, Some("1"), 10, 11), incr(0, 2, 12, 13)]);
        ok(&[lost(0, Op::Incr, 0), lost(1, Op::Incr, 0), get(2, Some("1"), 1, 2), get(2, Some("2"), 3, 4)]);
        let (x, y) = (lost(0, Op::Append("x".into()), 0), lost(1, Op::Append("y".into()), 1));
        ok(&[x.clone(), y.clone(), lost(2, Op::Get, 2), get(2, Some("yx"), 5, 6)]);
        // But not before it was sent, and not twice.
        bad(&[get(0, Some("b"), 0, 1), lost_set()]);
        bad(&[lost_set(), get(0, Some("b"), 3, 4), set(0, "c", 5, 6), get(0, Some("b"), 7, 8)]);
        bad(&[lost(1, Op::Incr, 0), get(0, Some("1"), 1, 2), get(0, Some("2"), 3, 4)]);
        bad(&[x, y, get(2, Some("yxy"), 5, 6)]);
    }

    #[test]
    fn an_unknown_append_a_read_saw_happened_once_before_that_read() {
        let tok = |c: usize, v: &str, a| lost(c, Op::Append(v.into()), a);
        ok(&[tok(0, "0.1,", 0), tok(1, "1.1,", 1), get(2, Some("1.1,0.1,"), 5, 6), append(2, "2.1,", 12, 7, 8)]);
        // Seen, then (its GET over) still missing, or there twice.
        bad(&[tok(0, "0.1,", 0), get(2, Some("0.1,"), 5, 6), get(2, None, 7, 8)]);
        bad(&[tok(0, "0.1,", 0), get(2, Some("0.1,0.1,"), 5, 6)]);
        bad(&[tok(0, "0.1,", 0), tok(1, "1.1,", 1), get(2, Some("0.1,"), 5, 6), get(2, Some("1.1,"), 7, 8)]);
        // A later APPEND's length counts it.
        bad(&[tok(0, "0.1,", 0), get(2, Some("0.1,"), 1, 2), append(1, "1.1,", 4, 3, 4)]);
        ok(&[tok(0, "0.1,", 0), get(2, Some("0.1,"), 1, 2), append(1, "1.1,", 8, 3, 4)]);
        // A delete of unknown outcome in between: the token is gone again.
        ok(&[tok(0, "0.1,", 0), get(2, Some("0.1,"), 5, 6), lost(1, Op::Del, 7), get(2, None, 9, 10)]);
        // A token a SET wrote as well: the read may have seen the SET's.
        ok(&[set(0, "0.1,", 0, 1), tok(1, "0.1,", 2), get(2, Some("0.1,"), 3, 4), get(2, Some("0.1,"), 5, 6)]);
        // Where a token could be read without its APPEND (a comma-free value
        // ends just before a shorter token), nothing is pinned: this is fine.
        ok(&[
            set(0, "1", 0, 1),
            append(0, "1.1,", 5, 2, 3),
            tok(1, "11.1,", 4),
            get(2, Some("11.1,"), 5, 6),
            get(2, Some("11.1,"), 7, 8),
        ]);
    }

    #[test]
    fn stale_read_is_rejected() {
        let e = bad(&[set(0, "a", 0, 1), set(1, "b", 2, 3), get(2, Some("a"), 4, 5)]);
        assert!(e.contains("#2 client 2: GET -> \"a\" [invoke 4, return 5]"), "{e}");
    }

    #[test]
    fn lost_update_is_rejected() {
        bad(&[incr(0, 1, 0, 10), incr(1, 2, 1, 11), get(2, Some("1"), 12, 13)]);
        bad(&[incr(0, 1, 0, 10), incr(1, 1, 1, 11)]);
    }

    #[test]
    fn duplicated_write_is_rejected() {
        bad(&[incr(0, 1, 0, 1), get(1, Some("2"), 2, 3)]);
        bad(&[lost(2, Op::Append("1".into()), 0), incr(0, 1, 0, 1), get(1, Some("2"), 2, 3)]);
    }

    #[test]
    fn append_seen_out_of_order_is_rejected() {
        bad(&[append(0, "a", 1, 0, 1), append(1, "b", 2, 2, 3), get(2, Some("ba"), 4, 5)]);
        bad(&[append(0, "a", 1, 0, 1), append(1, "b", 1, 2, 3)]);
    }

    #[test]
    fn nil_read_after_set_is_rejected() {
        bad(&[set(0, "a", 0, 1), get(1, None, 2, 3)]);
        bad(&[set(0, "a", 0, 1), lost(1, Op::Append("b".into()), 2), get(1, None, 3, 4)]);
    }

    #[test]
    fn incr_needs_a_canonical_integer() {
        for v in ["x", "01", "+1", "-0", " 1", "9223372036854775807"] {
            bad(&[set(0, v, 0, 1), incr(0, 1, 2, 3)]);
        }
        ok(&[set(0, "-5", 0, 1), incr(0, -4, 2, 3)]);
        // SET of an empty value: the model keeps "" for nil, so such a history is refused.
        assert!(check(&[set(0, "", 0, 1), incr(0, 1, 2, 3)], None).unwrap_err().contains("malformed"));
        assert!(check(&[ev(0, Op::Get, 0, Some((1, Ret::Ok)))], None).unwrap_err().contains("malformed"));
    }

    /// xorshift64
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A Redis string register, written independently of `step`. None = error reply.
    fn apply(op: &Op, state: &mut Option<String>) -> Option<Ret> {
        match op {
            Op::Set(v) => *state = Some(v.clone()),
            Op::Del => *state = None,
            Op::Get => return Some(Ret::Value(state.clone())),
            Op::Incr => {
                let cur = state.as_deref().unwrap_or("0");
                let n = cur.parse::<i64>().ok().filter(|n| n.to_string() == cur)?.checked_add(1)?;
                *state = Some(n.to_string());
                return Some(Ret::Int(n));
            }
            Op::Append(v) => {
                let s = state.get_or_insert_with(String::new);
                s.push_str(v);
                return Some(Ret::Len(s.len() as i64));
            }
        }
        Some(Ret::Ok)
    }

    /// Run `clients` clients against a real register. Each operation takes effect at one
    /// instant between its invoke and its answer, so the history is linearizable. With
    /// `unknown_pct` percent chance the answer is lost, and the operation takes effect at once,
    /// later, or never. Operations that get an error reply are left out (and not counted).
    fn generate(seed: u64, n_ops: usize, clients: usize, unknown_pct: u64, initial: Option<String>) -> Vec<Event> {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut state, mut hist, mut delayed) = (initial, Vec::<Option<Event>>::new(), Vec::<Op>::new());
        // Per client: the pending operation, and its answer once it took effect.
        let mut busy: Vec<Option<(usize, Option<Ret>)>> = vec![None; clients];
        let (mut issued, mut t) = (0, 0u64);
        while issued < n_ops || busy.iter().any(Option::is_some) {
            t += 10;
            if !delayed.is_empty() && rng.below(8) == 0 {
                apply(&delayed.swap_remove(rng.below(delayed.len() as u64) as usize), &mut state);
            }
            let c = rng.below(clients as u64) as usize;
            busy[c] = match busy[c].take() {
                None if issued < n_ops => {
                    issued += 1;
                    let op = match rng.below(10) {
                        0..=2 => Op::Get,
                        3 => Op::Set(rng.below(50).to_string()),
                        4 if rng.below(3) == 0 => Op::Del,
                        4 => Op::Set(format!("s{issued}.")),
                        5..=7 => Op::Incr,
                        8 => Op::Append(rng.below(10).to_string()),
                        // A token, as the nemesis appends (see `pin_seen_appends`).
                        _ => Op::Append(format!("{c}.{issued},")),
                    };
                    hist.push(Some(ev(c, op, t, None)));
                    Some((hist.len() - 1, None))
                }
                None => None,
                Some((k, None)) => {
                    let op = hist[k].as_ref().unwrap().op.clone();
                    if rng.below(100) < unknown_pct {
                        match rng.below(3) {
                            0 => drop(apply(&op, &mut state)),
                            1 => {}
                            _ => delayed.push(op),
                        }
                        None
                    } else if let Some(r) = apply(&op, &mut state) {
                        Some((k, Some(r)))
                    } else {
                        (hist[k], issued) = (None, issued - 1);
                        None
                    }
                }
                Some((k, Some(r))) => {
                    hist[k].as_mut().unwrap().ret = Some((t, r));
                    None
                }
            };
        }
        hist.into_iter().flatten().collect()
    }

    #[test]
    fn random_valid_histories_are_accepted_and_corrupted_reads_rejected() {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        let (mut reads, mut futures) = (0, 0);
        for seed in 0..400 {
            let (n, clients) = (5 + rng.below(40) as usize, 1 + rng.below(5) as usize);
            let initial = if seed % 3 == 0 { Some("7".to_string()) } else { None };
            let h = generate(seed, n, clients, 10, initial.clone());
            if let Err(e) = check(&h, initial.clone()) {
                panic!("seed {seed}: valid history rejected:\n{e}\n{h:#?}");
            }
            let gets: Vec<usize> = (0..h.len()).filter(|&i| h[i].op == Op::Get && h[i].ret.is_some()).collect();
            if gets.is_empty() {
                continue;
            }
            reads += 1;
            let g = gets[rng.below(gets.len() as u64) as usize];
            let t = h[g].ret.as_ref().unwrap().0;
            // A value nobody ever wrote ('#' occurs in no written value)...
            let mut m = h.clone();
            m[g].ret = Some((t, Ret::Value(Some("#never".into()))));
            let rejected = |m: &[Event]| check(m, initial.clone()).is_err_and(|e| e.starts_with("not linearizable"));
            assert!(rejected(&m), "seed {seed}: impossible read accepted");
            // ... and one first written after the read returned ("s<n>." values are unique, and
            // APPEND or INCR cannot produce them).
            let future = h.iter().find_map(|e| match &e.op {
                Op::Set(v) if v.ends_with('.') && e.invoke > t => Some(v.clone()),
                _ => None,
            });
            if let Some(v) = future {
                m[g].ret = Some((t, Ret::Value(Some(v))));
                assert!(rejected(&m), "seed {seed}: read from the future accepted");
                futures += 1;
            }
        }
        assert!(reads > 300 && futures > 100, "{reads} {futures}");
    }

    #[test]
    fn large_history_is_checked() {
        let h = generate(42, 5000, 8, 2, None);
        let unknown = h.iter().filter(|e| e.ret.is_none()).count();
        let start = std::time::Instant::now();
        let result = check(&h, None);
        eprintln!("{} operations ({unknown} unknown), 8 clients: checked in {:?}", h.len(), start.elapsed());
        if let Err(e) = result {
            panic!("valid history rejected:\n{e}");
        }
    }
}
