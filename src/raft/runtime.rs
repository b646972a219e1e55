//! openraft's `AsyncRuntime` on glommio.
//!
//! Tasks are `spawn_local`ed on the current executor and `.detach()`ed: a glommio
//! `Task` is cancelled when its handle drops, and openraft drops many handles.
//! Timers exist only on an executor thread, so a Raft group must be created and
//! driven on the core that owns it. Channels and the mutex are openraft-rt-tokio's
//! wrappers over `tokio::sync`, which need no tokio runtime.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use glommio::timer::Timer;
use openraft_rt::{AsyncRuntime, OptionalSend};
use openraft_rt_tokio::{TokioMpsc, TokioMutex, TokioOneshot, TokioWatch};

/// The runtime marker type for `RaftTypeConfig::AsyncRuntime`.
#[derive(Debug, Default)]
pub struct GlommioRuntime;

/// A detached task was cancelled before it finished (its executor stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinError;

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task cancelled")
    }
}

/// Resolves to the task's output; the task runs whether or not this is polled or kept.
pub struct JoinHandle<T>(glommio::task::JoinHandle<T>);

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx).map(|o| o.ok_or(JoinError))
    }
}

/// A glommio timer that resolves to `()`.
pub struct Sleep(Timer);

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}

/// The deadline passed before the future completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elapsed;

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

/// `future` raced against a timer; the future is polled first.
pub struct Timeout<F> {
    future: Pin<Box<F>>,
    timer: Timer,
}

impl<R, F: Future<Output = R>> Future for Timeout<F> {
    type Output = Result<R, Elapsed>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(v) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match Pin::new(&mut self.timer).poll(cx) {
            Poll::Ready(_) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn until(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// An executor with little registered I/O memory: NeoKV does no DMA file I/O
/// through glommio, and the default (10 MiB) exceeds common memlock limits.
pub fn executor_builder(placement: glommio::Placement) -> glommio::LocalExecutorBuilder {
    glommio::LocalExecutorBuilder::new(placement).io_memory(256 << 10).ring_depth(512)
}

impl AsyncRuntime for GlommioRuntime {
    type JoinError = JoinError;
    type JoinHandle<T: OptionalSend + 'static> = JoinHandle<T>;
    type Sleep = Sleep;
    type Instant = Instant;
    type TimeoutError = Elapsed;
    type Timeout<R, T: Future<Output = R> + OptionalSend> = Timeout<T>;
    type ThreadLocalRng = rand::rngs::ThreadRng;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        JoinHandle(glommio::spawn_local(future).detach())
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        Sleep(Timer::new(duration))
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        Sleep(Timer::new(until(deadline)))
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(duration: Duration, future: F) -> Self::Timeout<R, F> {
        Timeout { future: Box::pin(future), timer: Timer::new(duration) }
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(deadline: Self::Instant, future: F) -> Self::Timeout<R, F> {
        Self::timeout(until(deadline), future)
    }

    fn is_panic(_join_error: &Self::JoinError) -> bool {
        false
    }

    fn thread_rng() -> Self::ThreadLocalRng {
        rand::rng()
    }

    type Mpsc = TokioMpsc;
    type Watch = TokioWatch;
    type Oneshot = TokioOneshot;
    type Mutex<T: OptionalSend + 'static> = TokioMutex<T>;

    fn new(_threads: usize) -> Self {
        GlommioRuntime
    }

    fn block_on<F, T>(&mut self, future: F) -> T
    where
        F: Future<Output = T>,
    {
        executor_builder(glommio::Placement::Unbound).make().expect("create glommio executor").run(future)
    }
}

#[cfg(test)]
mod tests {
    use super::GlommioRuntime;

    /// openraft-rt's conformance suite against the glommio adapter.
    #[test]
    fn openraft_rt_conformance_suite() {
        openraft_rt::testing::Suite::<GlommioRuntime>::test_all();
    }
}
