//! `remember`: read-through caching with one loader call per key at a time
//! (singleflight), as the spec's cache layer does.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

/// One load: the stored text it produced, or why it failed.
type Flight = Arc<OnceCell<Result<String, String>>>;

/// The loads in flight in one client: a waiter shares the first caller's
/// result (the stored text, or why it failed).
#[derive(Default)]
pub struct Flights {
    inflight: Mutex<HashMap<String, Flight>>,
}

impl std::fmt::Debug for Flights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flights").field("inflight", &self.inflight.lock().map(|m| m.len()).unwrap_or(0)).finish()
    }
}

impl Flights {
    /// Run `load` for `key` unless a load of it is already under way, in which
    /// case wait for that one's result. If the running load is dropped (its
    /// caller cancelled), a waiting caller's `load` takes over.
    pub async fn run<F>(&self, key: &str, load: F) -> Result<String, String>
    where
        F: Future<Output = Result<String, String>>,
    {
        let cell = {
            let mut m = self.inflight.lock().expect("flights lock");
            m.entry(key.to_string()).or_default().clone()
        };
        let out = cell.get_or_init(|| load).await.clone();
        let mut m = self.inflight.lock().expect("flights lock");
        if m.get(key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            m.remove(key);
        }
        out
    }
}
