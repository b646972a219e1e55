//! Writes to several regions at once (the rows flagged `FANOUT`: FLUSHALL,
//! FLUSHDB, FUNCTION LOAD / DELETE / FLUSH / RESTORE): which regions they go
//! to, and the one reply that tells the truth about all of them.
//!
//! Standalone they go to every region of the node (with several regions
//! FLUSHALL and FLUSHDB are one cross-region write instead, atomic across
//! them: `keyspace::flush`). In cluster mode they go to the regions this node
//! leads when the command arrives, as a Redis Cluster node flushes, or loads
//! a library for, the slots it serves, and as cluster clients send them: to
//! every master (redis-py's `target_nodes='primaries'`). Each region applies
//! its part as an entry of its own log, so the command is atomic per region,
//! not across regions.
//!
//! The reply ([`reply`]): what every part answered, when they all answered
//! alike (OK; the same error, such as a library that exists); `TRYAGAIN` when
//! every part was refused before its log (leadership moved: nothing happened,
//! safe to send again); otherwise an "outcome unknown" error that names the
//! regions that took it and those that did not.

use crate::protocol::Reply;
use crate::raft::outcome::{Unknown, WriteError, WriteResult};
use crate::shard::Shared;

/// The regions a fan-out write from this node goes to (see the module doc).
pub fn regions(shared: &Shared) -> Vec<u32> {
    let router = shared.router();
    let all = router.regions().iter().map(|r| r.id);
    match shared.nodes.as_deref() {
        None => all.collect(),
        Some(nodes) => all.filter(|&r| nodes.leader(r) == Some(nodes.me)).collect(),
    }
}

/// The reply to a command a node leading no region refuses: it would flush (or
/// load) nothing, and an OK would say it had.
pub fn leads_nothing(name: &str) -> Reply {
    Reply::error(format!(
        "ERR this node leads no slots: {} applies to the slots of the node it is sent to (send it to every master)",
        display(name)
    ))
}

/// A row name as a client wrote it: `function|load` is FUNCTION LOAD.
fn display(name: &str) -> String {
    name.replace('|', " ").to_ascii_uppercase()
}

/// The one reply to the command `name` whose part in each region answered as
/// `parts` say (see the module doc).
pub fn reply(name: &str, parts: Vec<(u32, WriteResult)>) -> Reply {
    let Some((_, first)) = parts.first() else { return leads_nothing(name) };
    if parts.iter().all(|(_, r)| r == first) && !matches!(first, Err(WriteError::NotLeader(_))) {
        return first.clone().unwrap_or_else(|e| e.reply());
    }
    if parts.iter().all(|(_, r)| r.as_ref().is_err_and(WriteError::not_applied)) {
        return Reply::error(format!(
            "TRYAGAIN {} was not applied: leadership of this node's slots is moving or its log cannot be written; send it again",
            display(name)
        ));
    }
    let took: Vec<String> =
        parts.iter().filter(|(_, r)| r.as_ref().is_ok_and(|r| !r.is_error())).map(|(id, _)| id.to_string()).collect();
    let failed: Vec<String> = parts
        .iter()
        .filter_map(|(id, r)| {
            let e = match r {
                Err(WriteError::NotLeader(_)) => "not led here any more".into(),
                Err(e) => e.to_string(),
                Ok(r) => r.error_text()?.into_owned(),
            };
            Some(format!("region {id}: {e}"))
        })
        .collect();
    let partial = format!(
        "{} took effect in {} of the {} regions it went to ({}); {}",
        display(name),
        took.len(),
        parts.len(),
        if took.is_empty() { "none".to_string() } else { format!("regions {}", took.join(", ")) },
        failed.join("; ")
    );
    WriteError::OutcomeUnknown(Unknown::Partial(partial)).reply()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_leader() -> WriteResult {
        Err(WriteError::NotLeader(Some(2)))
    }

    #[test]
    fn alike_parts_answer_as_one() {
        assert_eq!(reply("flushall", vec![(0, Ok(Reply::Ok)), (3, Ok(Reply::Ok))]), Reply::Ok);
        let exists = Reply::error("ERR Library 'l' already exists");
        assert_eq!(reply("function|load", vec![(1, Ok(exists.clone())), (4, Ok(exists.clone()))]), exists);
    }

    #[test]
    fn parts_refused_before_the_log_ask_to_send_again() {
        let r = reply("flushall", vec![(0, not_leader()), (3, not_leader())]);
        assert!(r.error_text().unwrap().starts_with("TRYAGAIN FLUSHALL was not applied"), "{r:?}");
        let full = Err(WriteError::DiskFull(crate::raft::outcome::Unwritable::new("the Raft log", "No space")));
        let r = reply("flushall", vec![(0, not_leader()), (3, full)]);
        assert!(r.error_text().unwrap().starts_with("TRYAGAIN FLUSHALL was not applied"), "{r:?}");
    }

    #[test]
    fn a_part_that_failed_makes_the_outcome_unknown_and_says_which() {
        let unknown = Err(WriteError::OutcomeUnknown(Unknown::Stopped));
        let r = reply("flushdb", vec![(0, Ok(Reply::Ok)), (3, not_leader()), (6, unknown)]);
        let e = r.error_text().unwrap().into_owned();
        assert!(e.starts_with("ERR write outcome unknown"), "{e}");
        assert!(e.contains("FLUSHDB took effect in 1 of the 3 regions it went to (regions 0)"), "{e}");
        assert!(
            e.contains("region 3: not led here any more") && e.contains("region 6: ERR write outcome unknown"),
            "{e}"
        );
        let r = reply(
            "function|load",
            vec![(0, Ok(Reply::bulk_str("l"))), (3, Ok(Reply::error("ERR Library 'l' already exists")))],
        );
        assert!(r.error_text().unwrap().contains("FUNCTION LOAD took effect in 1 of the 2"), "{r:?}");
    }

    #[test]
    fn a_node_leading_nothing_says_so() {
        let r = reply("flushall", Vec::new());
        assert!(r.error_text().unwrap().contains("leads no slots"), "{r:?}");
    }
}
