//! The two ways a write can travel in a log entry, applied side by side: a
//! typed operation (`pb::WriteCmd`'s ops: apply runs the operation) and a
//! command line (`pb::Exec` of one command: apply parses it and runs the
//! command's handler, which then applies the same typed operation). The same
//! N writes both ways, through the apply path the state machine runs, and the
//! encoded size of each entry (printed once). README "One write vocabulary"
//! records the figures and the choice they support.

use std::sync::Arc;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neokv::pb::{self, write_cmd::Op, WriteCmd};
use neokv::storage::{Storage, StorageOptions};
use neokv::types::write::apply_cmd;
use neokv::types::ApplyCtx;
use prost::Message;

const N: usize = 256;

/// One write both ways: as its typed operation and as its command line.
struct Write {
    name: &'static str,
    typed: fn(u64, usize) -> Op,
    line: fn(u64, usize) -> Vec<Bytes>,
}

fn b(s: String) -> Bytes {
    Bytes::from(s)
}

fn writes() -> Vec<Write> {
    vec![
        Write {
            name: "set_value64",
            typed: |r, i| {
                Op::Set(pb::Set {
                    key: b(format!("k:{}:{i}", r % 64)),
                    value: Bytes::from(vec![b'v'; 64]),
                    ..Default::default()
                })
            },
            line: |r, i| vec![b("SET".into()), b(format!("k:{}:{i}", r % 64)), Bytes::from(vec![b'v'; 64])],
        },
        Write {
            name: "hset_3_fields",
            typed: |r, i| {
                Op::Hset(pb::Hset {
                    key: b(format!("h:{}:{i}", r % 64)),
                    fields: (0..3).map(|f| b(format!("f{f}"))).collect(),
                    values: (0..3).map(|f| b(format!("value-{f}"))).collect(),
                    ..Default::default()
                })
            },
            line: |r, i| {
                let mut l = vec![b("HSET".into()), b(format!("h:{}:{i}", r % 64))];
                for f in 0..3 {
                    l.push(b(format!("f{f}")));
                    l.push(b(format!("value-{f}")));
                }
                l
            },
        },
        Write {
            name: "incrby",
            typed: |r, i| Op::Incrby(pb::Incrby { key: b(format!("n:{}:{i}", r % 64)), delta: 3 }),
            line: |r, i| vec![b("INCRBY".into()), b(format!("n:{}:{i}", r % 64)), b("3".into())],
        },
    ]
}

fn as_line(args: Vec<Bytes>) -> Op {
    Op::Exec(pb::Exec { cmds: vec![pb::Argv { args }], resp: 2, ..Default::default() })
}

fn vocabulary(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
    let (outboxes, _inboxes) = neokv::shard::mesh(1);
    let shared = Arc::new(neokv::shard::Shared::new(
        storage.clone(),
        neokv::cluster::Router::standalone(1, 1),
        neokv::config::Config::default(),
        outboxes,
        None,
    ));
    let programs: Arc<dyn neokv::types::apply::Programs> =
        Arc::new(neokv::cmd::programs::Executor::new(&shared, neokv::cmd::table()));
    let mut g = c.benchmark_group("vocabulary");
    g.throughput(Throughput::Elements(N as u64));
    for w in writes() {
        let entry = |ops: Vec<Op>| pb::RaftBatch {
            now_ms: 1,
            cmds: ops.into_iter().map(|op| WriteCmd { op: Some(op), db: 0, epoch: 0 }).collect(),
            ..Default::default()
        };
        let typed = entry((0..N).map(|i| (w.typed)(0, i)).collect()).encoded_len();
        let line = entry((0..N).map(|i| as_line((w.line)(0, i))).collect()).encoded_len();
        eprintln!(
            "vocabulary/{}: an entry of {N} is {typed} bytes typed, {line} bytes as command lines ({:.2}x)",
            w.name,
            line as f64 / typed as f64
        );
        // Both ways do the same thing: the same reply (a one-command
        // transaction's is an array of one).
        for i in 0..2 {
            let mut ctx = ApplyCtx::new(&storage, 0, 16384).with_programs(programs.clone());
            ctx.begin_entry(1, 1);
            let typed = apply_cmd(&mut ctx, &WriteCmd { op: Some((w.typed)(u64::MAX, i)), db: 0, epoch: 0 }).unwrap();
            let line = apply_cmd(&mut ctx, &WriteCmd { op: Some(as_line((w.line)(u64::MAX - 1, i))), db: 0, epoch: 0 })
                .unwrap();
            storage.write(ctx.take_batch(), false).unwrap();
            assert!(!typed.is_error(), "{}: {typed:?}", w.name);
            assert_eq!(neokv::protocol::Reply::Array(vec![typed]), line, "{}", w.name);
        }
        for (how, make) in [("typed", false), ("line", true)] {
            let mut round = 0u64;
            let programs = programs.clone();
            let storage = storage.clone();
            g.bench_function(format!("{}/{how}", w.name), |bench| {
                bench.iter_batched(
                    || {
                        round += 1;
                        let cmds = (0..N)
                            .map(|i| {
                                let op = if make { as_line((w.line)(round, i)) } else { (w.typed)(round, i) };
                                WriteCmd { op: Some(op), db: 0, epoch: 0 }
                            })
                            .collect::<Vec<_>>();
                        (round, cmds)
                    },
                    |(index, cmds)| {
                        let mut ctx = ApplyCtx::new(&storage, 0, 16384).with_programs(programs.clone());
                        ctx.begin_entry(index, 1);
                        for c in &cmds {
                            apply_cmd(&mut ctx, c).unwrap();
                        }
                        storage.write(ctx.take_batch(), false).unwrap();
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, vocabulary);
criterion_main!(benches);
