//! Linearizability checker for the history of one Redis string key.
//!
//! The algorithm is Wing & Gong's search as improved by Lowe (WGL). Each operation has a *call*
//! entry at its invoke time and a *return* entry at its return time. All entries go into one
//! doubly linked list, sorted by time. Any operation whose call comes before the first return
//! still in the list may be linearized next, if the model (a Redis string register) gives the
//! answer the client saw. Linearizing an operation lifts its entries out of the list and pushes
//! it on a stack. When nothing can go next, the search backtracks: it pops the stack, puts the
//! entries back and tries the next candidate. A cache of explored configurations (set of
//! linearized operations plus model state) keeps any configuration from being searched twice.
//! The search is a loop, not recursion.
//!
//! "Unknown" outcome: `Event::ret == None` means the client never learned what happened
//! (timeout, lost connection, ...). The operation may take effect at any moment after its
//! invoke, or never. Its return time is +infinity, so it has no return entry. The search
//! succeeds as soon as every operation *with* an answer is linearized. Unknown GETs are dropped.
//!
//! Four sound reductions keep unknown operations from blowing up the search:
//! * Operations with an answer are tried before unknown ones. This only changes the order.
//! * Identical unknown operations (same command, same argument) are used in invoke order.
//! * A SET never directly follows an unknown operation: dropping that unknown operation gives
//!   the same result. So, after an unknown operation, a non-SET candidate with an answer has to
//!   come next, possibly after more unknown ones. If none of them could still succeed, that
//!   branch is pruned.
//! * The cache keeps each configuration's unknown operations apart. A configuration is skipped
//!   if an explored one had the same answered operations and state and a subset of its
//!   unknown ones: that one had every option this one has.

use std::collections::HashMap;
use std::fmt::Write as _;

/// One client operation on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Set(String),
    Get,
    Incr,
    Append(String),
}

/// What it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ret {
    Ok,                    // SET
    Value(Option<String>), // GET: nil or the string
    Int(i64),              // INCR: the new value
    Len(i64),              // APPEND: the new length
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

/// Check one key's history against a Redis string register that starts as `initial`
/// (None = key absent). Ok(()) if some linearization exists; Err with a human-readable
/// explanation (the longest linearizable prefix found and the operation(s) that could not
/// be placed, with their times) otherwise.
pub fn check(history: &[Event], initial: Option<String>) -> Result<(), String> {
    let mut ops: Vec<Rec> = (history.iter().enumerate())
        .filter(|(_, e)| !(e.op == Op::Get && e.ret.is_none()))
        .map(|(i, e)| {
            // A return stamped before its own invoke would break the ordering: clamp it.
            let ret = e.ret.clone().map(|(t, r)| (t.max(e.invoke), r));
            Rec { orig: i, client: e.client, op: e.op.clone(), invoke: e.invoke, ret }
        })
        .collect();
    ops.sort_by_key(|r| (r.invoke, r.orig));
    for r in &ops {
        match (&r.op, r.ret.as_ref().map(|x| &x.1)) {
            (_, None) | (Op::Set(_), Some(Ret::Ok)) | (Op::Get, Some(Ret::Value(_))) => {}
            (Op::Incr, Some(Ret::Int(_))) | (Op::Append(_), Some(Ret::Len(_))) => {}
            _ => return Err(format!("malformed history: answer of the wrong kind: {}", describe(r))),
        }
    }
    Search::new(ops, initial).run()
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
            let n = redis_int(state.unwrap_or("0"))?.checked_add(1)?;
            (ret.is_none() || ret == Some(&Ret::Int(n))).then(|| Next::To(n.to_string()))
        }
        (Op::Append(v), None | Some(Ret::Len(_))) => {
            let s = format!("{}{v}", state.unwrap_or(""));
            (ret.is_none() || ret == Some(&Ret::Len(s.len() as i64))).then_some(Next::To(s))
        }
        _ => None,
    }
}

/// Upper bound on the configurations one check explores (about 100 bytes of memory each).
/// A history that needs more is reported as an error rather than searched forever.
pub const MAX_CONFIGS: usize = 2_000_000;

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

/// The candidates of one configuration, used to prune after unknown operations: the answered
/// non-SET operations that may go next, the available unknown APPENDs and how many unknown INCRs.
struct Window {
    known: Vec<usize>,
    appends: Vec<usize>,
    incrs: usize,
    sets: Vec<usize>,
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
    /// Per entry: its operation and whether it is a return entry.
    entry_op: Vec<usize>,
    entry_ret: Vec<bool>,
    /// Per operation: its call and return entries (NIL return if the outcome is unknown), its
    /// bit in `Linearized`, the previous identical unknown operation (or NIL), its hash key.
    call: Vec<usize>,
    ret: Vec<usize>,
    slot: Vec<usize>,
    prev_same: Vec<usize>,
    zobrist: Vec<u64>,
}

impl Search {
    fn new(ops: Vec<Rec>, initial: Option<String>) -> Search {
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
        let (mut slot, mut counts, mut prev_same) = (vec![0; n], [0, 0], vec![NIL; n]);
        let mut last: HashMap<(u8, &str), usize> = HashMap::new();
        for (i, r) in ops.iter().enumerate() {
            let known = r.ret.is_some() as usize;
            (slot[i], counts[known]) = (counts[known], counts[known] + 1);
            let key = match &r.op {
                Op::Set(v) => (0, v.as_str()),
                Op::Get => (1, ""),
                Op::Incr => (2, ""),
                Op::Append(v) => (3, v.as_str()),
            };
            if known == 0 {
                prev_same[i] = last.insert(key, i).unwrap_or(NIL);
            }
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
        Search { ops, initial, entry_op, entry_ret, call, ret, slot, prev_same, zobrist }
    }

    fn known(&self, i: usize) -> bool {
        self.ops[i].ret.is_some()
    }

    /// Add operation `i` to the linearized set, or remove it.
    fn flip(&self, lin: &mut Linearized, i: usize) {
        let bits = if self.known(i) { &mut lin.known } else { &mut lin.unknown };
        bits[self.slot[i] / 64] ^= 1 << (self.slot[i] % 64);
        if self.known(i) {
            lin.hash ^= self.zobrist[i];
        }
    }

    fn is_set(&self, lin: &Linearized, i: usize) -> bool {
        let bits = if self.known(i) { &lin.known } else { &lin.unknown };
        bits[self.slot[i] / 64] & (1 << (self.slot[i] % 64)) != 0
    }

    fn run(self) -> Result<(), String> {
        let m = self.entry_op.len();
        let mut next: Vec<usize> = (1..=m).map(|e| if e < m { e } else { NIL }).collect();
        next.push(if m > 0 { 0 } else { NIL });
        let prev = (0..=m).map(|e| e.checked_sub(1).unwrap_or(m)).collect();
        let mut list = List { next, prev, head: m };

        let known_total = self.ops.iter().filter(|r| r.ret.is_some()).count();
        let mut known_left = known_total;
        let (kw, uw) = (known_total.div_ceil(64), (self.ops.len() - known_total).div_ceil(64));
        let mut lin = Linearized { known: vec![0; kw], unknown: vec![0; uw], hash: 0 };
        // Model states are interned: the cache holds a small id per distinct string.
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut intern = |s: Option<&str>| {
            let Some(s) = s else { return u32::MAX };
            let fresh = ids.len() as u32;
            *ids.entry(s.to_string()).or_insert(fresh)
        };
        let mut state = self.initial.clone();
        let mut state_id = intern(state.as_deref());
        // Is the last linearized operation an unknown one?
        let mut after_unknown = false;
        // Explored configurations: (hash of answered set, state, after_unknown) -> for each, one
        // array: (number of leading all-ones words of the answered set << 32 | number of words
        // after them), those words, then the words of the unknown set.
        let mut cache: HashMap<(u64, u32, bool), Vec<Box<[u64]>>> = HashMap::new();
        let mut configs = 0usize;
        let mut stack: Vec<Frame> = Vec::new();
        let mut window: Option<Window> = None;
        // Longest prefix seen (counting answered operations); `best[..low]` equals the stack's.
        let (mut best, mut best_known, mut low) = (Vec::<usize>::new(), 0, 0);

        // Cursor over the candidates. Phase 2 looks for a GET that can go now, phase 0 visits
        // the answered operations, phase 1 the unknown ones.
        let (mut cur, mut phase) = (list.next[list.head], 2u8);
        loop {
            if known_left == 0 {
                if std::env::var("SHOWCFG").is_ok() {
                    eprintln!("ok after {configs} configs");
                }
                return Ok(());
            }
            if cur == NIL || self.entry_ret[cur] {
                if phase != 1 {
                    (cur, phase) = (list.next[list.head], if phase == 2 { 0 } else { 1 });
                    continue;
                }
                // Nothing more to try in this configuration: backtrack.
                let Some(f) = stack.pop() else { return Err(self.explain(&best, known_total, configs, false)) };
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
                (cur, phase) = if f.phase == 2 { (NIL, 1) } else { (list.next[self.call[f.op]], f.phase) };
                continue;
            }
            let i = self.entry_op[cur];
            cur = list.next[cur];
            let r = &self.ops[i];
            let p = self.prev_same[i];
            if self.known(i) == (phase == 1)
                || (phase == 2 && r.op != Op::Get)
                || (after_unknown && matches!(r.op, Op::Set(_)))
                || (p != NIL && !self.is_set(&lin, p))
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
            if std::env::var("DIAG").is_ok() && configs % 200_000 == 0 {
                eprintln!("configs {configs} best {best_known}/{known_total} depth {} low {low}", stack.len());
                let mut st = self.initial.clone();
                let d = stack.len();
                for (n, f) in stack.iter().enumerate() {
                    let r = &self.ops[f.op];
                    if let Some(Next::To(x)) = step(&r.op, st.as_deref(), r.ret.as_ref().map(|x| &x.1)) { st = Some(x); }
                    if n + 25 >= d || (n >= low.saturating_sub(5) && n < low + 5) { eprintln!("   {n} {} {} state {:?}", if self.known(f.op) {" "} else {"U"}, describe(r), st); }
                }
            }
            if configs > MAX_CONFIGS {
                return Err(self.explain(&best, known_total, configs, true));
            }
            // A new configuration: linearize operation i.
            list.unlink(self.call[i]);
            if self.ret[i] != NIL {
                list.unlink(self.ret[i]);
            }
            let old_state = match next {
                Next::Same => None,
                Next::To(s) => Some(std::mem::replace(&mut state, Some(s))),
            };
            stack.push(Frame { op: i, phase, old_state, old_id: state_id, old_after_unknown: after_unknown });
            (state_id, after_unknown) = (new_id, phase == 1);
            known_left -= self.known(i) as usize;
            window = None;
            if known_total - known_left > best_known {
                best_known = known_total - known_left;
                best.truncate(low);
                best.extend(stack[low..].iter().map(|f| f.op));
                low = stack.len();
            }
            (cur, phase) = (list.next[list.head], 2);
            // Prune at once if some pending answered operation can no longer be linearized.
            if !self.alive(window.insert(self.window(&list)), state.as_deref()) {
                (cur, phase) = (NIL, 1);
            }
        }
    }

    /// Summarize the candidates of the current configuration (calls before the first return).
    fn window(&self, list: &List) -> Window {
        let mut w = Window { known: Vec::new(), appends: Vec::new(), incrs: 0, sets: Vec::new() };
        let mut e = list.next[list.head];
        while e != NIL && !self.entry_ret[e] {
            let j = self.entry_op[e];
            match (&self.ops[j].op, self.known(j)) {
                (Op::Set(_), _) => w.sets.push(j),
                (_, true) => w.known.push(j),
                (Op::Append(_), false) => w.appends.push(j),
                (Op::Incr, false) => w.incrs += 1,
                _ => {}
            }
            e = list.next[e];
        }
        // SETs invoked later, but before some candidate's return, might still go before it.
        let last = w.known.iter().filter_map(|&k| self.ops[k].ret.as_ref().map(|x| x.0)).max().unwrap_or(0);
        while e != NIL && self.ops[self.entry_op[e]].invoke <= last {
            if !self.entry_ret[e] && matches!(self.ops[self.entry_op[e]].op, Op::Set(_)) {
                w.sets.push(self.entry_op[e]);
            }
            e = list.next[e];
        }
        w
    }

    /// Can every answered candidate still be linearized some day? Each one must go before its
    /// own return, so only SETs invoked by then can help it; GET and INCR need an exact state.
    fn alive(&self, w: &Window, state: Option<&str>) -> bool {
        w.known.iter().all(|&k| {
            let Some((t, ret)) = &self.ops[k].ret else { return true };
            let need = match (&self.ops[k].op, ret) {
                (Op::Get, Ret::Value(None)) => return state.is_none(),
                (Op::Get, Ret::Value(Some(x))) => x.clone(),
                (Op::Incr, Ret::Int(1)) if state.is_none() => return true,
                (Op::Incr, Ret::Int(n)) => (n - 1).to_string(),
                _ => return true,
            };
            let set_helps = |&j: &usize| match &self.ops[j].op {
                Op::Set(v) => self.ops[j].invoke <= *t && may_become(Some(v), &need),
                _ => false,
            };
            may_become(state, &need) || w.sets.iter().any(set_helps)
        })
    }

    /// Unknown operation `i` would leave the model in `state`. Could some answered non-SET
    /// candidate still succeed, possibly after more of the available unknown APPENDs/INCRs?
    /// It only says no when that is certain.
    fn viable(&self, w: &Window, i: usize, state: Option<&str>) -> bool {
        let appends: Vec<&str> = (w.appends.iter().filter(|&&j| j != i))
            .map(|&j| if let Op::Append(v) = &self.ops[j].op { v.as_str() } else { "" })
            .collect();
        let incrs = w.incrs - matches!(self.ops[i].op, Op::Incr) as usize;
        let (mut used, mut budget) = (vec![false; appends.len()], 10_000);
        let mut reach = |x: &str| back(x, state, &appends, &mut used, incrs, &mut budget);
        w.known.iter().any(|&k| match (&self.ops[k].op, self.ops[k].ret.as_ref().map(|x| &x.1)) {
            (Op::Get, Some(Ret::Value(None))) => state.is_none(),
            (Op::Get, Some(Ret::Value(Some(x)))) => reach(x),
            (Op::Incr, Some(Ret::Int(n))) => {
                (*n == 1 && state.is_none()) || n.checked_sub(1).is_some_and(|p| reach(&p.to_string()))
            }
            (Op::Append(v), Some(Ret::Len(l))) => {
                // The length before this APPEND. Each INCR changes the length by at most one.
                let (len, want) = (state.map_or(0, str::len) as i64, l - v.len() as i64);
                let grow = appends.iter().map(|a| a.len() as i64).sum::<i64>();
                let may_int = state.is_none_or(may_int);
                if incrs > 0 && may_int {
                    len - (incrs as i64) <= want && want <= len + grow + incrs as i64
                } else if want < len || want > len + grow || want - len > 4096 {
                    len <= want && want <= len + grow
                } else {
                    // Subset sum: can some of the pending APPENDs add exactly `want - len` bytes?
                    let mut sums = vec![false; (want - len) as usize + 1];
                    sums[0] = true;
                    for a in &appends {
                        for t in (a.len()..sums.len()).rev() {
                            sums[t] |= sums[t - a.len()];
                        }
                    }
                    sums[(want - len) as usize]
                }
            }
            _ => false,
        })
    }

    /// The failure report: the longest linearizable prefix and what could not follow it.
    fn explain(&self, best: &[usize], known_total: usize, configs: usize, gave_up: bool) -> String {
        let mut done = vec![false; self.ops.len()];
        let mut state = self.initial.clone();
        for &i in best {
            done[i] = true;
            let r = &self.ops[i];
            if let Some(Next::To(s)) = step(&r.op, state.as_deref(), r.ret.as_ref().map(|x| &x.1)) {
                state = Some(s);
            }
        }
        let known_done = best.iter().filter(|&&i| self.known(i)).count();
        let shown = best.len().min(12);
        let mut out = if gave_up {
            format!(
                "gave up after {configs} configurations (MAX_CONFIGS) without finding a linearization: \
                 probably not linearizable, but many operations of unknown outcome can also make it too hard.\n"
            )
        } else {
            format!("not linearizable (all {configs} reachable configurations explored).\n")
        };
        let _ = writeln!(
            out,
            "at most {known_done} of {known_total} answered operations could be linearized (initial state {}).\n\
             longest linearizable prefix has {} operations; the last {shown}:",
            show(self.initial.as_deref()),
            best.len()
        );
        for &i in &best[best.len() - shown..] {
            let _ = writeln!(out, "  {}", describe(&self.ops[i]));
        }
        let _ = writeln!(out, "state after it: {}", show(state.as_deref()));
        // The earliest return among the rest: nothing invoked after it can come before it,
        // so one of the operations invoked by then had to go next.
        let rest = |i: &usize| !done[*i];
        let Some(t) = (0..self.ops.len()).filter(rest).filter_map(|i| self.ops[i].ret.as_ref().map(|x| x.0)).min()
        else {
            return out;
        };
        let stuck: Vec<usize> = (0..self.ops.len()).filter(rest).filter(|&i| self.ops[i].invoke <= t).collect();
        let _ =
            writeln!(out, "none of these could be linearized next (invoked by {t}, when the first of them returned):");
        for &i in stuck.iter().filter(|&&i| self.known(i)).take(20) {
            let _ = writeln!(out, "  {}", describe(&self.ops[i]));
        }
        let unknown = stuck.iter().filter(|&&i| !self.known(i)).count();
        if unknown > 0 {
            let _ = writeln!(out, "  (and {unknown} operations with unknown outcome, which did not help)");
        }
        out
    }
}

/// Can `from` become exactly `x` through some of the unused `appends` (each at most once) and at
/// most `incrs` INCRs? Searches backwards from `x`, undoing the last step: strip an appended
/// suffix, or undo an INCR. Recursion depth is bounded by the number of pending operations.
/// Out of budget, it answers yes, which is always safe.
fn back(x: &str, from: Option<&str>, appends: &[&str], used: &mut [bool], incrs: usize, budget: &mut u32) -> bool {
    if from == Some(x) || *budget == 0 {
        return true;
    }
    *budget -= 1;
    for j in 0..appends.len() {
        if !used[j] && x.ends_with(appends[j]) {
            let before = &x[..x.len() - appends[j].len()];
            if before.is_empty() && from.is_none() {
                return true;
            }
            used[j] = true;
            let found = back(before, from, appends, used, incrs, budget);
            used[j] = false;
            if found {
                return true;
            }
        }
    }
    incrs > 0
        && redis_int(x).is_some_and(|z| {
            (z == 1 && from.is_none())
                || z.checked_sub(1).is_some_and(|y| back(&y.to_string(), from, appends, used, incrs - 1, budget))
        })
}

/// Could APPENDs and INCRs (no SET) turn `from` into `x`? Generous: only says no when certain.
/// From an integer b >= 0 they only reach integers >= b and strings starting with a digit;
/// from a string that appending cannot make an integer, only its extensions.
fn may_become(from: Option<&str>, x: &str) -> bool {
    let Some(f) = from else { return true };
    match redis_int(f) {
        _ if f == x => true,
        None if !may_int(f) => x.starts_with(f),
        Some(b) if b >= 0 => redis_int(x).map_or(x.starts_with(|c: char| c.is_ascii_digit()), |y| y >= b),
        _ => true,
    }
}

/// Could appending make `s` an integer (so INCR applies)? None counts as "0".
fn may_int(s: &str) -> bool {
    s.strip_prefix('-').unwrap_or(s).bytes().all(|b| b.is_ascii_digit())
}

/// The words of a bitset up to its last non-zero one.
fn trim(bits: &[u64]) -> &[u64] {
    &bits[..bits.iter().rposition(|&w| w != 0).map_or(0, |x| x + 1)]
}

fn show(s: Option<&str>) -> String {
    match s {
        None => "nil".to_string(),
        Some(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Some(s) => format!("{:?}...({} bytes)", s.chars().take(40).collect::<String>(), s.len()),
    }
}

fn describe(r: &Rec) -> String {
    let op = match &r.op {
        Op::Set(v) => format!("SET {}", show(Some(v))),
        Op::Get => "GET".to_string(),
        Op::Incr => "INCR".to_string(),
        Op::Append(v) => format!("APPEND {}", show(Some(v))),
    };
    let (who, inv) = (format!("#{} client {}: {op} ->", r.orig, r.client), r.invoke);
    match &r.ret {
        None => format!("{who} ? (outcome unknown) [invoke {inv}]"),
        Some((t, ret)) => {
            let ret = match ret {
                Ret::Ok => "OK".to_string(),
                Ret::Value(v) => show(v.as_deref()),
                Ret::Int(n) | Ret::Len(n) => n.to_string(),
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
        check(h, None).expect_err("expected a violation")
    }

    #[test]
    fn sequential_histories_are_accepted() {
        ok(&[]);
        ok(&[
            get(0, None, 0, 1),
            set(0, "a", 2, 3),
            get(1, Some("a"), 4, 5),
            set(1, "41", 6, 7),
            incr(0, 42, 8, 9),
            append(1, "x", 3, 10, 11),
            get(0, Some("42x"), 12, 13),
        ]);
        ok(&[incr(0, 1, 0, 1), incr(0, 2, 2, 3), append(0, "b", 2, 4, 5), get(0, Some("2b"), 6, 7)]);
        assert!(check(&[get(0, Some("init"), 0, 1), incr(0, 6, 2, 3)], Some("init".into())).is_err());
        assert!(check(&[get(0, Some("5"), 0, 1), incr(0, 6, 2, 3)], Some("5".into())).is_ok());
    }

    #[test]
    fn overlapping_histories_with_several_valid_orders_are_accepted() {
        // Two overlapping SETs: a later GET may see either one.
        for seen in ["a", "b"] {
            ok(&[set(0, "a", 0, 10), set(1, "b", 1, 11), get(2, Some(seen), 12, 13)]);
        }
        // A GET overlapping a SET may see the old or the new value.
        for seen in [None, Some("a")] {
            ok(&[set(0, "a", 0, 10), get(1, seen, 2, 8), get(1, Some("a"), 11, 12)]);
        }
        // Concurrent INCRs and APPENDs must take effect in the order their answers imply.
        ok(&[incr(0, 2, 0, 10), incr(1, 1, 1, 11), incr(2, 3, 2, 12), get(0, Some("3"), 13, 14)]);
        ok(&[append(0, "x", 2, 0, 10), append(1, "y", 1, 1, 11), get(2, Some("y"), 2, 5), get(2, Some("yx"), 12, 13)]);
    }

    #[test]
    fn unknown_outcomes_may_or_may_not_take_effect() {
        // Unknown SET took effect (late) / did not.
        ok(&[set(0, "a", 0, 1), lost(1, Op::Set("b".into()), 2), get(0, Some("a"), 5, 6), get(0, Some("b"), 7, 8)]);
        ok(&[set(0, "a", 0, 1), lost(1, Op::Set("b".into()), 2), get(0, Some("a"), 50, 60)]);
        // Unknown INCR took effect / did not.
        ok(&[incr(0, 1, 0, 1), lost(1, Op::Incr, 2), get(0, Some("2"), 10, 11), incr(0, 3, 12, 13)]);
        ok(&[incr(0, 1, 0, 1), lost(1, Op::Incr, 2), get(0, Some("1"), 10, 11), incr(0, 2, 12, 13)]);
        // Unknown APPENDs took effect in either order, and an unknown GET is ignored.
        ok(&[
            lost(0, Op::Append("x".into()), 0),
            lost(1, Op::Append("y".into()), 1),
            lost(2, Op::Get, 2),
            get(2, Some("yx"), 5, 6),
        ]);
        // But an unknown write cannot act before it was sent, nor twice.
        bad(&[get(0, Some("b"), 0, 1), lost(1, Op::Set("b".into()), 2)]);
        bad(&[lost(1, Op::Set("b".into()), 0), get(0, Some("b"), 1, 2), set(0, "c", 3, 4), get(0, Some("b"), 5, 6)]);
        bad(&[lost(1, Op::Incr, 0), get(0, Some("1"), 1, 2), get(0, Some("2"), 3, 4)]);
        // Two identical unknown INCRs may both apply.
        ok(&[lost(1, Op::Incr, 0), lost(2, Op::Incr, 0), get(0, Some("1"), 1, 2), get(0, Some("2"), 3, 4)]);
    }

    #[test]
    fn stale_read_is_rejected() {
        let e = bad(&[set(0, "a", 0, 1), set(1, "b", 2, 3), get(2, Some("a"), 4, 5)]);
        assert!(e.contains("GET -> \"a\" [invoke 4, return 5]"), "{e}");
    }

    #[test]
    fn lost_update_is_rejected() {
        bad(&[incr(0, 1, 0, 10), incr(1, 2, 1, 11), get(2, Some("1"), 12, 13)]);
        bad(&[incr(0, 1, 0, 10), incr(1, 1, 1, 11)]);
    }

    #[test]
    fn duplicated_write_is_rejected() {
        bad(&[incr(0, 1, 0, 1), get(1, Some("2"), 2, 3)]);
        // Even with unrelated unknown ops around.
        bad(&[lost(2, Op::Append("1".into()), 0), incr(0, 1, 0, 1), get(1, Some("2"), 2, 3)]);
    }

    #[test]
    fn append_out_of_order_is_rejected() {
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
        for v in ["x", "", "01", "+1", "-0", " 1", "9223372036854775807"] {
            bad(&[set(0, v, 0, 1), incr(0, 1, 2, 3)]);
        }
        ok(&[set(0, "-5", 0, 1), incr(0, -4, 2, 3)]);
        assert!(check(&[get(0, None, 0, 1)], Some("x".into())).is_err());
        assert!(check(&[get(0, None, 0, 1)], None).is_ok());
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

    enum Phase {
        Idle,
        Sent(usize),
        Answered(usize, Ret),
    }

    /// Run `clients` clients against a real register. Each operation takes effect at one
    /// instant between its invoke and its answer, so the history is linearizable. With
    /// `unknown_pct` percent chance an answer is lost; that operation then takes effect at
    /// once, later, or never. Operations that get an error reply are left out.
    fn generate(seed: u64, n_ops: usize, clients: usize, unknown_pct: u64, initial: Option<String>) -> Vec<Event> {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut state = initial;
        let mut hist: Vec<Option<Event>> = Vec::new();
        let mut phase: Vec<Phase> = (0..clients).map(|_| Phase::Idle).collect();
        let mut delayed: Vec<Op> = Vec::new();
        let (mut issued, mut t) = (0, 0u64);
        while issued < n_ops || phase.iter().any(|p| !matches!(p, Phase::Idle)) {
            t += 10;
            if !delayed.is_empty() && rng.below(8) == 0 {
                let op = delayed.swap_remove(rng.below(delayed.len() as u64) as usize);
                apply(&op, &mut state);
            }
            let c = rng.below(clients as u64) as usize;
            phase[c] = match std::mem::replace(&mut phase[c], Phase::Idle) {
                Phase::Idle if issued < n_ops => {
                    issued += 1;
                    let op = match rng.below(10) {
                        0..=2 => Op::Get,
                        3 => Op::Set(rng.below(50).to_string()),
                        4 => Op::Set(format!("s{issued}.")),
                        5..=7 => Op::Incr,
                        8 => Op::Append(if std::env::var("NODIGIT").is_ok() { format!("b{issued}") } else { rng.below(10).to_string() }),
                        _ => Op::Append(format!("a{issued}")),
                    };
                    hist.push(Some(ev(c, op, t, None)));
                    Phase::Sent(hist.len() - 1)
                }
                Phase::Idle => Phase::Idle,
                Phase::Sent(k) => {
                    let op = hist[k].as_ref().unwrap().op.clone();
                    if rng.below(100) < unknown_pct {
                        match rng.below(3) {
                            0 => drop(apply(&op, &mut state)),
                            1 => {}
                            _ => delayed.push(op),
                        }
                        Phase::Idle
                    } else if let Some(r) = apply(&op, &mut state) {
                        Phase::Answered(k, r)
                    } else {
                        hist[k] = None;
                        issued -= 1;
                        Phase::Idle
                    }
                }
                Phase::Answered(k, r) => {
                    hist[k].as_mut().unwrap().ret = Some((t, r));
                    Phase::Idle
                }
            };
        }
        hist.into_iter().flatten().collect()
    }

    #[test]
    fn random_valid_histories_are_accepted_and_corrupted_reads_rejected() {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        let (mut rejected_future, mut reads) = (0, 0);
        for seed in 0..400 {
            let n = 5 + rng.below(40) as usize;
            let clients = 1 + rng.below(5) as usize;
            let initial = if seed % 3 == 0 { Some("7".to_string()) } else { None };
            let h = generate(seed, n, clients, 10, initial.clone());
            if let Err(e) = check(&h, initial.clone()) {
                panic!("seed {seed}: valid history rejected:\n{e}\n{h:#?}");
            }
            if std::env::var("ONLYOK").is_ok() { continue; }
            let gets: Vec<usize> = (0..h.len()).filter(|&i| h[i].op == Op::Get && h[i].ret.is_some()).collect();
            if gets.is_empty() {
                continue;
            }
            reads += 1;
            let g = gets[rng.below(gets.len() as u64) as usize];
            let ret_time = h[g].ret.as_ref().unwrap().0;
            // A value nobody ever wrote ('#' never occurs in written values).
            let mut m = h.clone();
            m[g].ret = Some((ret_time, Ret::Value(Some("#never".into()))));
            assert!(check(&m, initial.clone()).is_err(), "seed {seed}: impossible read accepted");
            // A value first written only after the read returned ("s<n>." values are unique
            // and cannot be produced by APPEND or INCR).
            let future = h.iter().find_map(|e| match &e.op {
                Op::Set(v) if v.ends_with('.') && e.invoke > ret_time => Some(v.clone()),
                _ => None,
            });
            if let Some(v) = future {
                m[g].ret = Some((ret_time, Ret::Value(Some(v))));
                assert!(check(&m, initial.clone()).is_err(), "seed {seed}: read from the future accepted");
                rejected_future += 1;
            }
        }
        assert!(reads > 300 && rejected_future > 100, "{reads} {rejected_future}");
    }

    #[test]
    fn large_history_is_checked() {
        let h = generate(42, 5000, 8, 2, None);
        eprintln!("{} {}", h.len(), h.iter().filter(|e| e.ret.is_none()).count());
        let start = std::time::Instant::now();
        let r = check(&h, None);
        eprintln!("large history: {} events checked in {:?}", h.len(), start.elapsed());
        if let Err(e) = r {
            panic!("valid 5000-op history rejected:\n{e}");
        }
    }
    #[test]
    #[ignore]
    fn stress() {
        let args: Vec<u64> = std::env::var("STRESS").unwrap().split(',').map(|x| x.parse().unwrap()).collect();
        let (seeds, n, clients, unk) = (args[0], args[1] as usize, args[2] as usize, args[3]);
        let mut worst = std::time::Duration::ZERO;
        let mut worst_bad = std::time::Duration::ZERO;
        for seed in std::env::var("FROM").map(|x| x.parse().unwrap()).unwrap_or(0)..seeds {
            let h = generate(seed + 1000, n, clients, unk, None);
            let s = std::time::Instant::now();
            if let Err(e) = check(&h, None) {
                eprintln!("seed {seed} VALID REJECTED: {}", e.lines().next().unwrap()); continue;
            }
            worst = worst.max(s.elapsed());
            eprintln!("seed {seed} valid took {:?}", s.elapsed());
            let gets: Vec<usize> = (0..h.len()).filter(|&i| h[i].op == Op::Get && h[i].ret.is_some()).collect();
            let mut m = h.clone();
            let g = gets[gets.len() * (seed as usize % 7 + 1) / 8];
            let rt = m[g].ret.as_ref().unwrap().0;
            m[g].ret = Some((rt, Ret::Value(Some("#never".into()))));
            let s = std::time::Instant::now();
            let e = check(&m, None).unwrap_err();
            worst_bad = worst_bad.max(s.elapsed());
            eprintln!("seed {seed} bad took {:?}: {}", s.elapsed(), e.lines().next().unwrap());
            if seed == 0 {
                eprintln!("{e}");
            }
        }
        eprintln!("worst ok {worst:?} worst bad {worst_bad:?}");
    }
}
