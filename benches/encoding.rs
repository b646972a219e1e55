//! Key and score encodings.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neokv::cluster::key_slot;
use neokv::storage::keys::{decode_score, encode_score, meta_key, zset_score_key};

fn keys(c: &mut Criterion) {
    let names: Vec<Vec<u8>> = (0..1000).map(|i| format!("user:{i:08}:profile").into_bytes()).collect();
    let mut g = c.benchmark_group("encoding");
    g.throughput(Throughput::Elements(names.len() as u64));
    g.bench_function("key_slot", |b| b.iter(|| names.iter().map(|k| key_slot(k) as u64).sum::<u64>()));
    g.bench_function("meta_key", |b| b.iter(|| names.iter().map(|k| meta_key(key_slot(k), k).len()).sum::<usize>()));
    let scores: Vec<f64> = (0..1000).map(|i| (i as f64 - 500.0) * 1.37).collect();
    g.bench_function("score_roundtrip", |b| {
        b.iter(|| scores.iter().map(|&s| decode_score(encode_score(black_box(s)))).sum::<f64>())
    });
    g.bench_function("zset_score_key", |b| {
        b.iter(|| scores.iter().map(|&s| zset_score_key(7, b"leaderboard", 42, s, b"member").len()).sum::<usize>())
    });
    g.finish();
}

criterion_group!(benches, keys);
criterion_main!(benches);
