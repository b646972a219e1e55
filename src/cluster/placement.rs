//! Where regions live: the voters of each region of a fresh cluster
//! (`--replicas` of the nodes, spread evenly), the node that should lead a
//! region, and which nodes a membership change moves a region's replicas
//! between (CLUSTER ADDNODE, CLUSTER FORGET: `shard::members`).
//!
//! Pure functions of the node ids; no I/O.

use std::collections::BTreeMap;

/// The voters of each of `regions` regions of a fresh cluster of `nodes`
/// (ascending ids): `replicas` of them (at most every node), region `r` on
/// the nodes from position `r` on, wrapping, so each node holds
/// `regions * replicas / nodes` of them, give or take one. Each list ascending.
pub fn initial(regions: usize, nodes: &[u64], replicas: usize) -> Vec<Vec<u64>> {
    let n = nodes.len();
    let replicas = replicas.clamp(1, n.max(1));
    (0..regions)
        .map(|r| {
            let mut v: Vec<u64> = (0..replicas).map(|k| nodes[(r + k) % n]).collect();
            v.sort_unstable();
            v
        })
        .collect()
}

/// The voter of `region` that should lead it: the first at or after position
/// `region` of `all` (the cluster's nodes, ascending), wrapping. In a fresh
/// cluster that is the first node of the region's rotation ([`initial`]), so
/// every node leads its share; with every node a voter, node `region % n`.
pub fn preferred(region: u32, voters: &[u64], all: &[u64]) -> Option<u64> {
    if all.is_empty() {
        return voters.first().copied();
    }
    let n = all.len();
    (0..n).map(|k| all[(region as usize + k) % n]).find(|id| voters.contains(id)).or_else(|| voters.first().copied())
}

/// A region to move off `from` or onto `to`, as a membership change makes it:
/// add `add` (a learner, caught up, then a voter), then remove `remove`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub region: u32,
    pub add: u64,
    pub remove: u64,
}

/// The moves that give `new`, a node just added, its share of the replicas:
/// `replicas` per region over the nodes (`voters` of every region, and
/// `new` among `all`), taking one replica at a time from the node holding the
/// most, from a region `new` is not in yet. Regions with fewer voters than
/// `replicas` simply gain `new` (`remove` is `new` itself then: no removal).
pub fn share_for(new: u64, voters: &[Vec<u64>], all: &[u64], replicas: usize) -> Vec<Move> {
    let mut voters: Vec<Vec<u64>> = voters.to_vec();
    let mut held: BTreeMap<u64, usize> = all.iter().map(|&id| (id, 0)).collect();
    for v in &voters {
        for id in v {
            *held.entry(*id).or_default() += 1;
        }
    }
    let total: usize = voters.iter().map(|v| v.len().max(replicas)).sum();
    let share = total / held.len().max(1);
    let mut moves = Vec::new();
    // Regions short of voters first: they gain the new node outright.
    for (r, v) in voters.iter_mut().enumerate() {
        if v.len() < replicas && !v.contains(&new) {
            v.push(new);
            *held.entry(new).or_default() += 1;
            moves.push(Move { region: r as u32, add: new, remove: new });
        }
    }
    while held.get(&new).copied().unwrap_or(0) < share {
        // The busiest node, and a region of its that `new` is not in.
        let mut best: Option<(usize, u32, u64)> = None;
        for (r, v) in voters.iter().enumerate() {
            if v.contains(&new) {
                continue;
            }
            for &id in v {
                let h = held[&id];
                if best.is_none_or(|(bh, _, _)| h > bh) {
                    best = Some((h, r as u32, id));
                }
            }
        }
        let Some((h, region, from)) = best else { break };
        if h <= held[&new] + 1 {
            break;
        }
        let v = &mut voters[region as usize];
        v.retain(|&x| x != from);
        v.push(new);
        *held.get_mut(&from).unwrap_or(&mut 0) -= 1;
        *held.entry(new).or_default() += 1;
        moves.push(Move { region, add: new, remove: from });
    }
    moves
}

/// Where the replicas of `gone` go before it is removed: for each region it
/// is a voter of, the node among `all` (not `gone`, not already a voter)
/// holding the fewest replicas. A region with more than `replicas` voters
/// needs none (`add` is `gone` then: only the removal).
pub fn replace(gone: u64, voters: &[Vec<u64>], all: &[u64], replicas: usize) -> Vec<Move> {
    let mut held: BTreeMap<u64, usize> = all.iter().filter(|&&id| id != gone).map(|&id| (id, 0)).collect();
    for v in voters {
        for id in v.iter().filter(|&&id| id != gone) {
            if let Some(h) = held.get_mut(id) {
                *h += 1;
            }
        }
    }
    let mut moves = Vec::new();
    for (r, v) in voters.iter().enumerate() {
        if !v.contains(&gone) {
            continue;
        }
        if v.len() > replicas {
            moves.push(Move { region: r as u32, add: gone, remove: gone });
            continue;
        }
        let to = held.iter().filter(|(id, _)| !v.contains(id)).min_by_key(|(id, h)| (**h, **id)).map(|(id, _)| *id);
        match to {
            Some(to) => {
                *held.get_mut(&to).unwrap_or(&mut 0) += 1;
                moves.push(Move { region: r as u32, add: to, remove: gone });
            }
            // No node to take it: the removal alone (the region shrinks).
            None => moves.push(Move { region: r as u32, add: gone, remove: gone }),
        }
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(voters: &[Vec<u64>]) -> BTreeMap<u64, usize> {
        let mut c = BTreeMap::new();
        for v in voters {
            for id in v {
                *c.entry(*id).or_default() += 1;
            }
        }
        c
    }

    #[test]
    fn a_fresh_cluster_spreads_replicas_and_leaders_evenly() {
        for (n, replicas, regions) in [(3, 3, 12), (5, 3, 20), (6, 3, 24), (4, 3, 16), (5, 5, 20), (2, 3, 8)] {
            let all: Vec<u64> = (1..=n).collect();
            let v = initial(regions, &all, replicas);
            let want = replicas.min(n as usize);
            assert!(v.iter().all(|v| v.len() == want), "{v:?}");
            let held = count(&v);
            assert!(held.values().all(|&h| h == regions * want / n as usize), "{n} nodes: {held:?}");
            let mut led = BTreeMap::new();
            for (r, v) in v.iter().enumerate() {
                let l = preferred(r as u32, v, &all).unwrap();
                assert!(v.contains(&l));
                *led.entry(l).or_insert(0) += 1;
            }
            assert!(led.values().all(|&l| l == regions / n as usize), "{n} nodes lead {led:?}");
        }
        // Every node a voter: leaders as before placement, region r on node r % n.
        let all = [1, 2, 3];
        let v = initial(6, &all, 3);
        let led: Vec<u64> = (0..6).map(|r| preferred(r, &v[r as usize], &all).unwrap()).collect();
        assert_eq!(led, [1, 2, 3, 1, 2, 3]);
    }

    #[test]
    fn a_new_node_takes_its_share_and_a_leaving_one_is_replaced() {
        let all: Vec<u64> = (1..=3).collect();
        let mut v = initial(12, &all, 3);
        let moves = share_for(4, &v, &[1, 2, 3, 4], 3);
        assert_eq!(moves.len(), 9, "{moves:?}");
        for m in &moves {
            let r = &mut v[m.region as usize];
            assert!(!r.contains(&m.add) && r.contains(&m.remove));
            r.retain(|&x| x != m.remove);
            r.push(m.add);
            r.sort_unstable();
        }
        assert!(count(&v).values().all(|&h| h == 9), "{:?}", count(&v));
        assert!(v.iter().all(|r| r.len() == 3));
        // Node 1 leaves: each of its regions gains the one node not in it.
        let moves = replace(1, &v, &[1, 2, 3, 4], 3);
        assert_eq!(moves.len(), 9);
        for m in &moves {
            let r = &mut v[m.region as usize];
            assert!(!r.contains(&m.add) && m.remove == 1);
            r.retain(|&x| x != 1);
            r.push(m.add);
        }
        assert!(v.iter().all(|r| r.len() == 3 && !r.contains(&1)));
        assert!(count(&v).values().all(|&h| h == 12), "{:?}", count(&v));
        // Five nodes, one leaves: its 12 replicas spread over the other four.
        let all: Vec<u64> = (1..=5).collect();
        let v = initial(20, &all, 3);
        let moves = replace(3, &v, &all, 3);
        let mut gained = BTreeMap::new();
        for m in &moves {
            *gained.entry(m.add).or_insert(0) += 1;
        }
        assert_eq!(gained.values().sum::<usize>(), 12);
        assert!(gained.values().all(|&g| g == 3), "{gained:?}");
    }
}
