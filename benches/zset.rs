//! Sorted sets: score encoding, ZRANGEBYSCORE of 10/100/1000 members and ZRANK in
//! a 1,000,000-member set (rank counters against the O(rank) walk the seeds use),
//! and one apply batch of ZADDs.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neokv::pb::{self, write_cmd::Op, WriteCmd};
use neokv::storage::keys::KeyType;
use neokv::storage::{Cf, Storage, StorageOptions};
use neokv::types::coll::find;
use neokv::types::write::apply_cmd;
use neokv::types::zset::{self as zt, Query, ScoreBound, ZRange};
use neokv::types::ApplyCtx;
use neokv::types::{Snap, Source};

const BIG: u64 = 1_000_000;

fn zadd(key: &str, pairs: impl Iterator<Item = (f64, String)>) -> WriteCmd {
    let mut op = pb::Zadd { key: Bytes::from(key.to_string()), ..Default::default() };
    for (s, m) in pairs {
        op.scores.push(s);
        op.members.push(Bytes::from(m));
    }
    WriteCmd { op: Some(Op::Zadd(op)), db: 0, epoch: 0 }
}

/// Apply `cmds` as the log entry `index`.
fn apply(storage: &Storage, index: u64, cmds: &[WriteCmd]) {
    let mut ctx = ApplyCtx::new(storage, 0, 16384);
    ctx.begin_entry(index, 1);
    for c in cmds {
        apply_cmd(&mut ctx, c).unwrap();
    }
    storage.write(ctx.take_batch(), false).unwrap();
}

/// "big": members m0..m999999, member i scored (i * 7919) % BIG (distinct integers).
fn load_big(storage: &Storage) {
    for chunk in 0..BIG / 10_000 {
        let cmds: Vec<WriteCmd> = (0..10)
            .map(|j| {
                let from = chunk * 10_000 + j * 1_000;
                zadd("big", (from..from + 1_000).map(|i| (((i * 7919) % BIG) as f64, format!("m{i}"))))
            })
            .collect();
        apply(storage, 10 + chunk, &cmds);
    }
    storage.compact_all().unwrap();
}

fn codec(c: &mut Criterion) {
    let mut g = c.benchmark_group("score_codec");
    let xs: Vec<f64> = (0..1024).map(|i| (i as f64 - 512.0) * 1.37e3).collect();
    g.throughput(Throughput::Elements(xs.len() as u64));
    g.bench_function("encode_x1024", |b| b.iter(|| xs.iter().map(|x| zt::enc(*x)[7] as u64).sum::<u64>()));
    let es: Vec<[u8; 8]> = xs.iter().map(|x| zt::enc(*x)).collect();
    g.bench_function("decode_x1024", |b| b.iter(|| es.iter().map(|e| zt::dec(e)).sum::<f64>()));
    g.finish();
}

fn big_set(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
    load_big(&storage);
    let snap = Snap::new(storage.view(), 1, 0);
    let found = find(&snap, b"big", KeyType::ZSet).unwrap().unwrap().unwrap();
    assert_eq!(found.coll.size, BIG);

    let mut g = c.benchmark_group("zrangebyscore_1m");
    for n in [10u64, 100, 1000] {
        g.throughput(Throughput::Elements(n));
        let mut at = 0u64;
        g.bench_function(format!("{n}_members"), |b| {
            b.iter(|| {
                at = (at + 104_729) % (BIG - n);
                let lo = ScoreBound { v: at as f64, excl: false };
                let hi = ScoreBound { v: (at + n - 1) as f64, excl: false };
                let q = Query { range: ZRange::Score(lo, hi), rev: false, offset: 0, count: -1 };
                let got = zt::collect(&snap, &found, &q).unwrap();
                assert_eq!(got.len() as u64, n);
            })
        });
    }
    g.finish();

    // ZRANK of members whose ranks are spread over the whole set.
    let mut g = c.benchmark_group("zrank_1m");
    let mut i = 0u64;
    g.bench_function("rank_counters", |b| {
        b.iter(|| {
            i = (i + 7_777) % BIG;
            let (r, _) = zt::rank(&snap, &found, format!("m{i}").as_bytes()).unwrap().unwrap();
            assert_eq!(r, (i * 7919) % BIG);
        })
    });
    g.sample_size(10);
    g.bench_function("walk_to_rank", |b| {
        b.iter(|| {
            i = (i + 7_777) % BIG;
            let m = format!("m{i}");
            let score = zt::score_of(&snap, &found, m.as_bytes()).unwrap().unwrap();
            let end = found.element(&[&zt::enc(score)[..], m.as_bytes()].concat());
            let mut r = 0u64;
            snap.scan(Cf::ZsetScore, &found.prefix, &end, false, |_, _| {
                r += 1;
                true
            })
            .unwrap();
            assert_eq!(r, (i * 7919) % BIG);
        })
    });
    g.finish();
}

fn zadd_batch(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
    let mut g = c.benchmark_group("apply_batch");
    let n = 256u64;
    g.throughput(Throughput::Elements(n));
    let mut round = 100u64;
    g.bench_function("zadd_x256_new_members", |b| {
        b.iter_batched(
            || {
                round += 1;
                let cmds: Vec<WriteCmd> = (0..n)
                    .map(|i| zadd("w", std::iter::once(((round * n + i) as f64, format!("m{round}:{i}")))))
                    .collect();
                (round, cmds)
            },
            |(index, cmds)| apply(&storage, index, &cmds),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, codec, big_set, zadd_batch);
criterion_main!(benches);
