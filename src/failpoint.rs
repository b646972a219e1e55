//! Test hooks, all in one place: crash points, injected delays, a clock
//! offset. They exist only in builds with the `failpoints` cargo feature
//! (`make test` builds the server with it); without it (`make run`, a release
//! build, a package) every function here is an empty inline no-op and the
//! `NEOKV.FAILPOINT` command does not exist.
//!
//! A point is armed by name with an action:
//!
//! | action | effect where the point is reached |
//! |---|---|
//! | `crash` | the process ends at once, as under kill -9 (`_exit(70)`: no destructor, no flush) |
//! | `sleep(MS)` | the caller waits MS milliseconds (on a reactor: without blocking it) |
//! | `N` (a number) | a value point reads N |
//! | `off` | disarmed |
//!
//! Armed at start by the environment, `NEOKV_FAILPOINTS="name=action;name=action"`,
//! or at run time by `NEOKV.FAILPOINT name action`.
//!
//! | point | reached | actions |
//! |---|---|---|
//! | `apply` | before a region applies a write command (the next one after arming) | `crash` |
//! | `apply-delay` | before a region applies a batch of entries | `sleep(MS)` |
//! | `cross-cut` | a cross-region write's copy is about to be proposed in a participant other than the first (which by then holds its copy) | `crash` (after 300 ms, so the first copy is in its log) |
//! | `cross-applied` | a cross-region write's batch is written, nothing flushed | `crash` |
//! | `snapshot-ingest` | a received snapshot's files are ingested, its applied state not yet written | `crash` |
//! | `snapshot-persisted` | a snapshot made the applied state durable (flushed), before its record and the purge | `crash` |
//! | `log-purged` | right after a segment log purge | `crash` |
//! | `slow-reads` | each element read of a keyed reader that misses its cache (so reads span writes) | `N` microseconds |
//! | `active-expiry-off` | each pass of a region leader's active expiry, which then reaps nothing | `1` |
//! | `clock-offset` | this node's wall clock (`types::now_ms`), as if it ran N ms ahead (negative: behind) | `N` |
//!
//! One point belongs to an object rather than the process (unit tests run
//! many of them side by side): a [`Countdown`] field, armed through the object.
//!
//! | object point | reached | arm |
//! |---|---|---|
//! | `SegLog::fail_syncs` | each fdatasync of that segment log, which fails while the count lasts | `fail_syncs.arm(N)` |
//!
//! Depends on nothing else in the crate.

/// True in builds that have failpoints (tests check it before relying on one).
pub const ENABLED: bool = cfg!(feature = "failpoints");

#[cfg(feature = "failpoints")]
mod armed {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{OnceLock, RwLock};

    /// Set once any point is armed: the points cost one load until then.
    static ANY: AtomicBool = AtomicBool::new(false);

    fn points() -> &'static RwLock<HashMap<String, String>> {
        static POINTS: OnceLock<RwLock<HashMap<String, String>>> = OnceLock::new();
        POINTS.get_or_init(|| {
            let mut m = HashMap::new();
            for part in std::env::var("NEOKV_FAILPOINTS").unwrap_or_default().split(';') {
                if let Some((name, action)) = part.split_once('=') {
                    m.insert(name.trim().to_string(), action.trim().to_string());
                }
            }
            ANY.store(!m.is_empty(), Ordering::Release);
            RwLock::new(m)
        })
    }

    pub fn get(name: &str) -> Option<String> {
        let p = points();
        if !ANY.load(Ordering::Acquire) {
            return None;
        }
        p.read().ok()?.get(name).cloned()
    }

    pub fn set(name: &str, action: &str) {
        let mut p = points().write().unwrap_or_else(|e| e.into_inner());
        if action == "off" {
            p.remove(name);
        } else {
            p.insert(name.to_string(), action.to_string());
        }
        ANY.store(!p.is_empty(), Ordering::Release);
    }
}

/// The action armed at `name`, if any.
#[inline]
pub fn action(name: &str) -> Option<String> {
    #[cfg(feature = "failpoints")]
    {
        armed::get(name)
    }
    #[cfg(not(feature = "failpoints"))]
    {
        let _ = name;
        None
    }
}

/// Arm `name` with `action` (`off` disarms); an error for an action this
/// module does not know. Without the feature: an error.
pub fn arm(name: &str, action: &str) -> Result<(), String> {
    let known = action == "crash" || action == "off" || sleep_ms(action).is_some() || action.parse::<i64>().is_ok();
    if !known {
        return Err(format!("unknown failpoint action '{action}' (crash, sleep(MS), a number, off)"));
    }
    #[cfg(feature = "failpoints")]
    {
        armed::set(name, action);
        Ok(())
    }
    #[cfg(not(feature = "failpoints"))]
    {
        let _ = name;
        Err("this build has no failpoints".into())
    }
}

fn sleep_ms(action: &str) -> Option<u64> {
    action.strip_prefix("sleep(")?.strip_suffix(')')?.parse().ok()
}

/// A crash point: if `name` is armed with `crash`, end the process here as
/// kill -9 would.
#[inline]
pub fn crash(name: &str) {
    if action(name).as_deref() == Some("crash") {
        eprintln!("failpoint {name}: exiting here");
        // SAFETY: _exit ends the process at once; nothing runs after it.
        unsafe { libc::_exit(70) };
    }
}

/// True if `name` is armed with `crash` (for points that must do something
/// first, such as waiting for another copy to land).
#[inline]
pub fn armed_to_crash(name: &str) -> bool {
    action(name).as_deref() == Some("crash")
}

/// A delay point: if `name` is armed with `sleep(MS)`, wait that long without
/// blocking the reactor.
pub async fn delay(name: &str) {
    if let Some(ms) = action(name).as_deref().and_then(sleep_ms) {
        glommio::timer::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// A value point: the number `name` is armed with.
#[inline]
pub fn value(name: &str) -> Option<i64> {
    action(name)?.parse().ok()
}

/// A per-object point: the next N times it is reached, [`Countdown::fire`]
/// says so. Without the feature it holds nothing and never fires.
#[derive(Default)]
pub struct Countdown {
    #[cfg(feature = "failpoints")]
    left: std::cell::Cell<u32>,
}

impl Countdown {
    /// Fire the next `n` times.
    pub fn arm(&self, n: u32) {
        #[cfg(feature = "failpoints")]
        self.left.set(n);
        #[cfg(not(feature = "failpoints"))]
        let _ = n;
    }

    /// True (and one fewer left) while armed.
    #[inline]
    pub fn fire(&self) -> bool {
        #[cfg(feature = "failpoints")]
        {
            let n = self.left.get();
            self.left.set(n.saturating_sub(1));
            n > 0
        }
        #[cfg(not(feature = "failpoints"))]
        {
            false
        }
    }

    /// How many firings are left.
    pub fn left(&self) -> u32 {
        #[cfg(feature = "failpoints")]
        {
            self.left.get()
        }
        #[cfg(not(feature = "failpoints"))]
        {
            0
        }
    }
}

#[cfg(all(test, feature = "failpoints"))]
mod tests {
    use super::*;

    #[test]
    fn points_arm_and_disarm() {
        assert_eq!(value("test-point"), None);
        arm("test-point", "42").unwrap();
        assert_eq!(value("test-point"), Some(42));
        arm("test-point", "off").unwrap();
        assert_eq!(value("test-point"), None);
        assert!(arm("test-point", "explode").is_err());
    }
}
