//! The client in cluster mode, against a three-node NeoKV cluster and a
//! three-master Redis Cluster: calls across slots, a pipeline and `remember`
//! within one, locks; on NeoKV, a lock that stays held while the leader of
//! its slot is killed.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use neokv_client::{DefaultRedisClient, LockManager, RedisClient, RedisClientExt, RedisConfig};

fn cluster_client(nodes: &[common::Server]) -> Arc<DefaultRedisClient> {
    Arc::new(
        DefaultRedisClient::new(RedisConfig {
            cluster_nodes: nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect(),
            key_prefix: Some("neton".into()),
            timeout: Duration::from_secs(5),
            ..Default::default()
        })
        .unwrap(),
    )
}

async fn across_a_cluster(nodes: &[common::Server]) {
    let r = cluster_client(nodes);
    for i in 0..50 {
        r.set(&format!("k{i}"), &i, None).await.unwrap();
    }
    for i in 0..50 {
        assert_eq!(r.get::<i64>(&format!("k{i}")).await.unwrap(), Some(i));
    }
    let replies = r
        .pipeline(|p| {
            p.incr("{cart}:n").incr("{cart}:n").sadd("{cart}:items", "tea");
        })
        .await
        .unwrap();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[1].as_ref().unwrap(), &redis::Value::Int(2));
    let v: String =
        r.remember("cached", Duration::from_secs(60), || async { Ok::<_, String>("x".into()) }).await.unwrap();
    assert_eq!(v, "x");
    assert_eq!(r.get_value("cached").await.unwrap().as_deref(), Some("x"));
    // Locks: exclusive, and the fencing counter shares each lock key's slot
    // (the acquire script touches both).
    let locks = LockManager::new(r.clone());
    let ms = Duration::from_millis;
    // Lock keys whose slots every node owns: the client must route each call
    // to its slot's owner (any other node answers MOVED).
    let mut keys = Vec::new();
    let mut owners = std::collections::BTreeSet::new();
    for i in 0..500 {
        let key = format!("order:{i}");
        if let Some(owner) = common::leader_of_slot(nodes, common::slot_of(&format!("neton:lock:{key}"))) {
            if owners.insert(owner) || keys.len() < 10 {
                keys.push(key);
            }
        }
    }
    assert_eq!(owners.len(), 3, "no lock keys found for every node");
    for key in &keys {
        let l = locks.try_lock(key, ms(5000), ms(0), ms(10)).await.unwrap().expect("free");
        assert!(locks.try_lock(key, ms(5000), ms(0), ms(10)).await.unwrap().is_none());
        let fence: i64 = redis::from_redis_value(
            &r.command(redis::cmd("GET").arg(format!("{{neton:lock:{key}}}:fence"))).await.unwrap(),
        )
        .unwrap();
        assert_eq!(fence as u64, l.fencing_token());
        assert!(l.release().await.unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_pipelines_remember_and_locks_across_a_neokv_cluster() {
    across_a_cluster(&common::neokv_cluster()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_pipelines_remember_and_locks_across_a_redis_cluster() {
    across_a_cluster(&common::redis_cluster()).await;
}

/// A lock acquired through the cluster is committed by a majority: with the
/// leader of its slot killed (kill -9), the new leader still has it, so
/// nobody else acquires it within its TTL, and its holder can still release it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_holds_across_a_leader_kill() {
    let mut nodes = common::neokv_cluster();
    let r = cluster_client(&nodes);
    let locks = LockManager::new(r.clone());
    let ms = Duration::from_millis;
    let held = locks.try_lock("order:1", Duration::from_secs(60), ms(0), ms(10)).await.unwrap().expect("free");
    let slot = common::slot_of("neton:lock:order:1");
    let leader = common::leader_of_slot(&nodes, slot).expect("a leader of the lock's slot");
    eprintln!(
        "lock order:1 (slot {slot}) held with fencing token {}; killing node {}",
        held.fencing_token(),
        leader + 1
    );
    nodes[leader].kill();
    let killed = Instant::now();
    // Until another node answers for the slot, calls may fail; once it does,
    // the lock must still be held.
    let mut refused = 0;
    while killed.elapsed() < Duration::from_secs(20) && refused < 3 {
        match locks.try_lock("order:1", Duration::from_secs(60), ms(0), ms(10)).await {
            Ok(Some(l)) => panic!("acquired again after the leader's death (fencing token {})", l.fencing_token()),
            Ok(None) => refused += 1,
            Err(e) => eprintln!("during the failover: {e}"),
        }
        tokio::time::sleep(ms(100)).await;
    }
    assert_eq!(refused, 3, "no node answered for the lock's slot within 20 s of the kill");
    eprintln!("still held {:?} after the kill", killed.elapsed());
    let released = loop {
        match held.release().await {
            Ok(b) => break b,
            Err(e) => assert!(killed.elapsed() < Duration::from_secs(30), "release failed: {e}"),
        }
    };
    assert!(released, "the holder's lock was gone after the failover");
    let next = locks.try_lock("order:1", Duration::from_secs(5), ms(0), ms(10)).await.unwrap().expect("released");
    assert!(next.fencing_token() > held.fencing_token());
}
