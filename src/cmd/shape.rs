//! How a write's natural result is shown to the client that sent it.
//!
//! Apply returns what an operation did (`types::write`): SET says `+OK` or nil,
//! a pop says `[key, [elements]]`. Several commands share one operation and show
//! its result differently (SETNX's `:1`, HMSET's `+OK`, LPOP without a count);
//! the handler names the [`Shape`] and dispatch applies it, so presentation never
//! enters the replicated log. Errors pass through every shape unchanged.

use crate::protocol::Reply;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The operation's natural result.
    Natural,
    /// SETNX, MSETNX, RENAMENX: `+OK` → `:1`, nil → `:0`.
    Flag,
    /// HMSET: whatever it did, `+OK`.
    Ok,
    /// LPOP / RPOP without count: the element, or nil.
    PopOne,
    /// LPOP / RPOP with count: the elements, or a null array.
    PopMany,
    /// BLPOP / BRPOP: `[key, element]`, or a null array.
    PopKeyed,
    /// ZPOPMIN / ZPOPMAX without count: `[member, score]` (flat), or an empty array.
    ZPopOne,
    /// ZPOPMIN / ZPOPMAX with count: member-score pairs (nested in RESP3), or an
    /// empty array.
    ZPopMany,
    /// BZPOPMIN / BZPOPMAX: `[key, member, score]`, or a null array.
    ZPopKeyed,
    /// A one-command transaction's reply (SORT run inside apply): the first
    /// of its replies.
    Only,
}

/// A pop's natural result `[key, [items]]` taken apart.
fn popped(r: Reply) -> Option<(Reply, Vec<Reply>)> {
    let Reply::Array(mut kv) = r else { return None };
    if kv.len() != 2 {
        return None;
    }
    let items = match kv.pop() {
        Some(Reply::Array(items)) => items,
        _ => return None,
    };
    kv.pop().map(|k| (k, items))
}

/// A sorted-set pop's item `[member, score]` taken apart.
fn pair(item: Reply) -> (Reply, Reply) {
    match item {
        Reply::Array(mut ms) if ms.len() == 2 => {
            let s = ms.pop().unwrap_or(Reply::Nil);
            let m = ms.pop().unwrap_or(Reply::Nil);
            (m, s)
        }
        other => (other, Reply::Nil),
    }
}

impl Shape {
    /// Show `r` (a natural result, or an error) as this shape.
    pub fn apply(self, r: Reply) -> Reply {
        if r.is_error() {
            return r;
        }
        match self {
            Shape::Natural => r,
            Shape::Flag => match r {
                Reply::Nil => Reply::Int(0),
                _ => Reply::Int(1),
            },
            Shape::Ok => Reply::Ok,
            Shape::Only => match r {
                Reply::Array(mut rs) if rs.len() == 1 => rs.pop().unwrap_or(Reply::Nil),
                other => other,
            },
            Shape::PopOne => match popped(r) {
                Some((_, items)) => items.into_iter().next().unwrap_or(Reply::Nil),
                None => Reply::Nil,
            },
            Shape::PopMany => match popped(r) {
                Some((_, items)) => Reply::Array(items),
                None => Reply::NilArray,
            },
            Shape::PopKeyed => match popped(r) {
                Some((k, items)) => Reply::Array(vec![k, items.into_iter().next().unwrap_or(Reply::Nil)]),
                None => Reply::NilArray,
            },
            Shape::ZPopOne => match popped(r) {
                Some((_, items)) => Reply::Array(
                    items
                        .into_iter()
                        .flat_map(|i| {
                            let (m, s) = pair(i);
                            [m, s]
                        })
                        .collect(),
                ),
                None => Reply::Array(Vec::new()),
            },
            Shape::ZPopMany => match popped(r) {
                Some((_, items)) => Reply::Pairs(items.into_iter().map(pair).collect()),
                None => Reply::Array(Vec::new()),
            },
            Shape::ZPopKeyed => match popped(r) {
                Some((k, items)) => match items.into_iter().next() {
                    Some(i) => {
                        let (m, s) = pair(i);
                        Reply::Array(vec![k, m, s])
                    }
                    None => Reply::NilArray,
                },
                None => Reply::NilArray,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Reply {
        Reply::bulk_str(s)
    }

    #[test]
    fn pops_take_the_shape_their_command_asks_for() {
        let list = Reply::Array(vec![b("k"), Reply::Array(vec![b("x"), b("y")])]);
        assert_eq!(Shape::PopOne.apply(list.clone()), b("x"));
        assert_eq!(Shape::PopMany.apply(list.clone()), Reply::Array(vec![b("x"), b("y")]));
        assert_eq!(Shape::PopKeyed.apply(list.clone()), Reply::Array(vec![b("k"), b("x")]));
        assert_eq!(Shape::Natural.apply(list.clone()), list);
        assert_eq!(Shape::PopOne.apply(Reply::NilArray), Reply::Nil);
        assert_eq!(Shape::PopMany.apply(Reply::NilArray), Reply::NilArray);
        let z = Reply::Array(vec![b("z"), Reply::Array(vec![Reply::Array(vec![b("m"), Reply::Double(1.5)])])]);
        assert_eq!(Shape::ZPopOne.apply(z.clone()), Reply::Array(vec![b("m"), Reply::Double(1.5)]));
        assert_eq!(Shape::ZPopMany.apply(z.clone()), Reply::Pairs(vec![(b("m"), Reply::Double(1.5))]));
        assert_eq!(Shape::ZPopKeyed.apply(z), Reply::Array(vec![b("z"), b("m"), Reply::Double(1.5)]));
        assert_eq!(Shape::ZPopOne.apply(Reply::NilArray), Reply::Array(Vec::new()));
        assert_eq!(Shape::ZPopKeyed.apply(Reply::NilArray), Reply::NilArray);
    }

    #[test]
    fn flags_and_errors() {
        assert_eq!(Shape::Flag.apply(Reply::Ok), Reply::Int(1));
        assert_eq!(Shape::Flag.apply(Reply::Nil), Reply::Int(0));
        assert_eq!(Shape::Ok.apply(Reply::Int(3)), Reply::Ok);
        let e = Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
        for s in [Shape::Flag, Shape::Ok, Shape::PopOne, Shape::ZPopMany] {
            assert_eq!(s.apply(e.clone()), e);
        }
    }
}
