//! An in-process harness for the command families: command lines run against
//! a temporary storage and an apply context, with no server, socket or Raft.
//! Each line runs as a transaction's command does inside apply
//! (`in_apply::run_in_apply`): the handler reads through the batch, its write
//! applies at once, and the batch is written to storage after the line, as
//! one log entry with its own index and time.
//!
//! ```ignore
//! let mut h = Harness::new();
//! assert_eq!(h.resp(&["SET", "k", "v"]), "+OK\r\n");
//! ```
//!
//! The files beside this one test each family through it, against replies
//! recorded from redis-server 7.0 (the integration tests in `tests/it/` compare
//! with a live redis-server through the front door).

mod admin;
mod bitmap;
mod cluster;
mod geo;
mod hash;
mod hll;
mod introspect;
mod keyspace;
mod list;
mod pubsub;
mod server;
mod set;
mod sort;
mod stream;
mod string;
mod txn;
mod zset;

use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use super::in_apply::run_in_apply;
use super::registry::table;
use super::session::Session;
use crate::cluster::Router;
use crate::config::Config;
use crate::protocol::Reply;
use crate::shard::{mesh, Shared};
use crate::storage::{Storage, StorageOptions};
use crate::types::coll::Rng;
use crate::types::ApplyCtx;

/// A temporary keyspace and the session its command lines run in.
pub struct Harness {
    _dir: tempfile::TempDir,
    storage: Storage,
    shared: Arc<Shared>,
    /// What apply runs in the command layer (streams, programs), as a server hands it.
    programs: Arc<dyn crate::types::apply::Programs>,
    session: Session,
    /// The log index of the next line.
    index: u64,
    /// The clock of the lines (the leader's, in a log entry); only `advance` moves it.
    now_ms: u64,
}

impl Harness {
    pub fn new() -> Harness {
        let dir = tempfile::tempdir().expect("temporary directory");
        let storage = Storage::open(dir.path(), &StorageOptions::default()).expect("storage");
        let shared =
            Arc::new(Shared::new(storage.clone(), Router::standalone(1, 1), Config::default(), mesh(1).0, None));
        let now_ms = 1_700_000_000_000;
        let programs = Arc::new(super::programs::Executor::new(&shared, table()));
        Harness { _dir: dir, storage, shared, programs, session: Session::detached(2, now_ms), index: 1, now_ms }
    }

    /// Run one command line; its reply.
    pub fn run(&mut self, line: &[&str]) -> Reply {
        let args = argv(line);
        let mut apply =
            ApplyCtx::new(&self.storage, 0, crate::cluster::SLOT_COUNT).with_programs(self.programs.clone());
        apply.begin_entry(self.index, self.now_ms);
        self.session.now_ms = self.now_ms;
        let mut rng = Rng::new(self.index);
        let r = run_in_apply(&self.shared, table(), &mut self.session, &mut apply, &mut rng, &args)
            .unwrap_or_else(|e| panic!("{line:?}: storage failed: {e}"));
        self.storage.write(apply.take_batch(), false).expect("write the batch");
        self.index += 1;
        r
    }

    /// Run one command line; its reply as RESP2 text.
    pub fn resp(&mut self, line: &[&str]) -> String {
        resp2(self.run(line))
    }

    /// One command line as a connection takes it: queued inside MULTI
    /// (`txn::queue`), run otherwise; its reply as RESP2 text.
    pub fn send(&mut self, line: &[&str]) -> String {
        let args = argv(line);
        if let Ok(spec) = table().resolve(&args) {
            if let Some(r) = super::txn::queue(&self.shared, &mut self.session, spec, &args) {
                return resp2(r);
            }
        }
        self.resp(line)
    }

    /// Run the lines in order, each expecting its RESP2 reply; every line
    /// that differs is reported.
    pub fn expect(&mut self, script: &[(&[&str], &str)]) {
        let mut wrong = String::new();
        for (line, want) in script {
            let got = self.resp(line);
            if got != *want {
                wrong += &format!("\n{line:?}\n   got: {got:?}\n  want: {want:?}");
            }
        }
        assert!(wrong.is_empty(), "replies differ from redis-server's:{wrong}");
    }

    /// The storage the lines write to.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// What apply runs in the command layer (scripts, streams), as a server hands it.
    pub fn programs(&self) -> &Arc<dyn crate::types::apply::Programs> {
        &self.programs
    }

    /// Move the clock (expiry is judged by it).
    pub fn advance(&mut self, ms: u64) {
        self.now_ms += ms;
    }
}

fn argv(line: &[&str]) -> Vec<Bytes> {
    line.iter().map(|a| Bytes::copy_from_slice(a.as_bytes())).collect()
}

fn resp2(r: Reply) -> String {
    let mut out = BytesMut::new();
    r.encode(2, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_key_expires_when_the_clock_passes_its_time() {
    let mut h = Harness::new();
    h.expect(&[(&["SET", "k", "v", "PX", "100"], "+OK\r\n"), (&["PTTL", "k"], ":100\r\n")]);
    h.advance(99);
    assert_eq!(h.resp(&["GET", "k"]), "$1\r\nv\r\n");
    h.advance(10);
    h.expect(&[(&["GET", "k"], "$-1\r\n"), (&["EXISTS", "k"], ":0\r\n")]);
}

#[test]
fn a_script_runs_its_commands_in_the_same_batch() {
    let mut h = Harness::new();
    h.expect(&[
        (&["EVAL", "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])", "1", "k", "v"], "$1\r\nv\r\n"),
        (&["GET", "k"], "$1\r\nv\r\n"),
        (
            &["EVAL", "return redis.call('INCR', KEYS[1])", "1", "k"],
            "-ERR value is not an integer or out of range script: 61636018f4e6b5817b89791bbed242f93fa089e3, on @user_script:1.\r\n",
        ),
    ]);
}
