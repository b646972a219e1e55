//! `streamTrim`: which nodes and entries a trim removes, planned over the
//! node records from the head.

use std::borrow::Borrow;

use super::{Node, Sid};

/// A trimming strategy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Trim {
    /// `MAXLEN n`: keep at most n entries.
    MaxLen(u64),
    /// `MINID id`: drop entries below id.
    MinId(Sid),
}

/// What `streamTrim` does: drop the first `remove` nodes whole, then flag the
/// first `mark` live entries of the node after them deleted (0: none).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TrimPlan {
    /// Whole nodes removed from the head, with all their entries.
    pub remove: usize,
    /// Live entries marked deleted, from the first, in node number `remove`.
    pub mark: u64,
    /// Entries deleted in all (XTRIM's reply): the removed nodes' live entries
    /// plus `mark`.
    pub deleted: u64,
}

/// `streamTrim`: given the stream's length and its node records from the head
/// (pulled lazily, one at a time, until the plan is decided), with `approx` (`~`)
/// and `limit` (0 = none; see the module doc for the value Redis uses).
///
/// `count_below(node, minid)` is called at most once, for exact MINID trimming
/// inside a node: it must return how many live entries of that node have ids
/// below `minid` (they are the node's first live entries).
pub fn plan_trim<I, F>(length: u64, trim: &Trim, approx: bool, limit: u64, nodes: I, count_below: F) -> TrimPlan
where
    I: IntoIterator,
    I::Item: Borrow<Node>,
    F: FnOnce(&Node, Sid) -> u64,
{
    let mut plan = TrimPlan::default();
    let mut length = length;
    for node in nodes {
        let node = node.borrow();
        if let Trim::MaxLen(max) = *trim {
            if length <= max {
                break;
            }
        }
        let entries = node.live;
        if limit != 0 && plan.deleted + entries > limit {
            break;
        }
        let remove = match *trim {
            Trim::MaxLen(max) => length.saturating_sub(entries) >= max,
            Trim::MinId(min) => node.last < min,
        };
        if remove {
            plan.remove += 1;
            plan.deleted += entries;
            length = length.saturating_sub(entries);
            continue;
        }
        if !approx {
            plan.mark = match *trim {
                Trim::MaxLen(max) => length - max,
                Trim::MinId(min) => count_below(node, min),
            }
            .min(entries);
            plan.deleted += plan.mark;
        }
        break;
    }
    plan
}
