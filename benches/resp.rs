//! RESP decode throughput on typical pipelined SET/GET traffic, and reply encoding.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neokv::protocol::{Decoder, Reply};

fn pipeline(n: usize, value_len: usize) -> Vec<u8> {
    let value = "x".repeat(value_len);
    let mut v = Vec::new();
    for i in 0..n {
        let key = format!("key:{:012}", i);
        if i % 2 == 0 {
            v.extend_from_slice(
                format!("*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n${}\r\n{}\r\n", key.len(), key, value.len(), value).as_bytes(),
            );
        } else {
            v.extend_from_slice(format!("*2\r\n$3\r\nGET\r\n${}\r\n{}\r\n", key.len(), key).as_bytes());
        }
    }
    v
}

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("resp_decode");
    for value_len in [3usize, 256] {
        let wire = pipeline(1000, value_len);
        g.throughput(Throughput::Bytes(wire.len() as u64));
        let d = Decoder::default();
        g.bench_function(format!("set_get_pipeline_value{value_len}"), |b| {
            b.iter(|| {
                let mut buf = BytesMut::from(&wire[..]);
                let mut n = 0;
                while let Some(args) = d.decode(&mut buf).unwrap() {
                    n += args.len();
                }
                black_box(n)
            })
        });
    }
    g.finish();
}

fn encode(c: &mut Criterion) {
    let mut g = c.benchmark_group("resp_encode");
    let replies: Vec<Reply> =
        (0..1000).map(|i| if i % 2 == 0 { Reply::Ok } else { Reply::bulk("x".repeat(256)) }).collect();
    g.throughput(Throughput::Elements(replies.len() as u64));
    g.bench_function("ok_and_bulk256", |b| {
        let mut out = BytesMut::with_capacity(1 << 20);
        b.iter(|| {
            out.clear();
            for r in &replies {
                r.encode(2, &mut out);
            }
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, decode, encode);
criterion_main!(benches);
