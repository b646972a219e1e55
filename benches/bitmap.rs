//! SETBIT through the deterministic apply path, written to RocksDB (no
//! fsync), on a 1 KB value and on a 100 MB one: a chunked value rewrites the
//! one 1 KiB chunk the bit is in, so both cost about the same (issue 12's
//! "SETBIT on a 100 MB string costs the same as on a 1 KB one").

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use neokv::pb::{self, write_cmd::Op, WriteCmd};
use neokv::storage::{Storage, StorageOptions};
use neokv::types::write::apply_cmd;
use neokv::types::ApplyCtx;

fn apply(storage: &Storage, cmd: &WriteCmd) {
    let mut ctx = ApplyCtx::new(storage, 0, 16384);
    ctx.now_ms = 1;
    apply_cmd(&mut ctx, cmd).unwrap();
    storage.write(ctx.take_batch(), false).unwrap();
}

fn setbit(key: &'static [u8], offset: u64) -> WriteCmd {
    WriteCmd { op: Some(Op::Setbit(pb::Setbit { key: Bytes::from_static(key), offset, on: true })), db: 0, epoch: 0 }
}

fn setbit_by_value_size(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
    // 1 KB and 100 MB values (the big one made by its last bit: one chunk).
    apply(&storage, &setbit(b"small", 1000 * 8 - 1));
    apply(&storage, &setbit(b"big", 100_000_000 * 8 - 1));
    let mut g = c.benchmark_group("setbit");
    for (name, key, len) in [("value_1kb", &b"small"[..], 1000u64), ("value_100mb", &b"big"[..], 100_000_000)] {
        let key: &'static [u8] = key;
        let mut i = 0u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                // Bits spread over the whole value.
                i = (i + 7_919_993) % (len * 8);
                apply(&storage, &setbit(key, i));
            })
        });
    }
    g.finish();
}

criterion_group!(benches, setbit_by_value_size);
criterion_main!(benches);
