//! [`ReadView`]: any one of the sources of [`Source`] (a core's cached reads,
//! a snapshot, apply's batch), what a command handler reads through, so a
//! command's read is written once and runs on a connection's core or inside
//! apply alike.

use bytes::Bytes;

use super::apply::ApplyCtx;
use super::view::{Reader, Snap, Source};
use crate::storage::meta::Meta;
use crate::storage::{Cf, StorageError};

/// Any of the sources: what a command handler reads through.
pub enum ReadView<'a> {
    Cached(Reader<'a>),
    Snapshot(Snap<'a>),
    /// A snapshot someone else owns (a read-only script's, for all its calls).
    Shared(&'a Snap<'a>),
    Apply(&'a ApplyCtx),
}

macro_rules! each_view {
    ($self:expr, $v:ident => $e:expr) => {
        match $self {
            ReadView::Cached($v) => $e,
            ReadView::Snapshot($v) => $e,
            ReadView::Shared($v) => $e,
            ReadView::Apply($v) => $e,
        }
    };
}

impl Source for ReadView<'_> {
    fn now_ms(&self) -> u64 {
        each_view!(self, v => v.now_ms())
    }
    fn db(&self) -> u16 {
        each_view!(self, v => v.db())
    }
    fn meta(&self, key: &[u8]) -> Result<Option<Meta>, StorageError> {
        each_view!(self, v => v.meta(key))
    }
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>, StorageError> {
        each_view!(self, v => v.get(cf, key))
    }
    fn scan(
        &self,
        cf: Cf,
        from: &[u8],
        to: &[u8],
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        each_view!(self, v => v.scan(cf, from, to, reverse, f))
    }
}
