//! One apply batch of N SETs: build the WriteBatch through the deterministic
//! apply path and write it to RocksDB (no fsync), as the state machine does.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neokv::pb::{self, write_cmd::Op, WriteCmd};
use neokv::storage::{Storage, StorageOptions};
use neokv::types::write::apply_cmd;
use neokv::types::ApplyCtx;

fn apply_sets(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
    let mut g = c.benchmark_group("apply_batch");
    for n in [16usize, 256] {
        g.throughput(Throughput::Elements(n as u64));
        let mut round = 0u64;
        g.bench_function(format!("set_x{n}_value256"), |b| {
            b.iter_batched(
                || {
                    round += 1;
                    (0..n)
                        .map(|i| WriteCmd {
                            op: Some(Op::Set(pb::Set {
                                key: Bytes::from(format!("key:{}:{}", round % 1000, i)),
                                value: Bytes::from(vec![b'v'; 256]),
                                ..Default::default()
                            })),
                            db: 0,
                            epoch: 0,
                        })
                        .collect::<Vec<_>>()
                },
                |cmds| {
                    let mut ctx = ApplyCtx::new(&storage, 0, 16384);
                    ctx.now_ms = 1;
                    for c in &cmds {
                        apply_cmd(&mut ctx, c).unwrap();
                    }
                    storage.write(ctx.take_batch(), false).unwrap();
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, apply_sets);
criterion_main!(benches);
