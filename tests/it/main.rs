//! Integration tests: every test starts the real `neokv-server` binary on a free
//! loopback port and talks to it through a real client or raw RESP bytes.

mod admin;
mod bitmap;
mod cluster;
mod cluster_safety;
mod common;
mod connections;
mod databases;
mod differential;
mod dump;
mod durability;
mod fuzz;
mod gc;
mod geo;
mod hash;
mod hll;
mod introspect;
mod keyspace;
mod linearizable;
mod list;
mod lossyfs;
mod nemesis;
mod power;
mod protocol;
mod pubsub;
mod random_picks;
mod regions;
mod script;
mod script_fuzz;
mod server;
mod set;
mod sort;
mod stream;
mod string;
mod txn;
mod zset;
