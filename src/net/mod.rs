//! Node-to-node transport (cluster mode): length-prefixed `PeerFrame`s
//! (`proto/peer.proto`) over TCP.
//!
//! Owns: the frame format, and the sending side of links ([`link`]): each core
//! keeps at most one connection per peer and class of traffic (Raft appends and
//! votes, heartbeats, snapshots), shared by all of its regions, so heartbeats
//! never queue behind a big append or a snapshot, and a pair of nodes holds a
//! bounded number of connections (cores × 3 each way). The receiving side (the
//! cluster port's listener, which hands each request to its region's core) is
//! in `server::peers`.
//!
//! Depends on `pb` and `cluster` only: frames are bytes here, RPCs in `raft`.

pub mod link;

use std::io;

use futures_lite::{AsyncRead, AsyncReadExt};
use prost::Message;

use crate::pb;

/// The largest frame a node accepts (a snapshot chunk or an append is far smaller).
pub const MAX_FRAME: usize = 64 << 20;

/// Kinds of traffic, each on its own connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Appends with entries, votes, leadership transfers, read indexes.
    Raft,
    /// Appends without entries (openraft's heartbeat client).
    Heartbeat,
    /// Snapshot chunks.
    Snapshot,
}

/// Append `frame`, length-prefixed, to `out`.
pub fn encode(frame: &pb::PeerFrame, out: &mut Vec<u8>) {
    let len = frame.encoded_len();
    out.reserve(4 + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    // Encoding into a Vec cannot run out of room.
    let _ = frame.encode(out);
}

/// The largest frame a node reads before the other side said who it is (a
/// hello is a few dozen bytes).
pub const MAX_HELLO: usize = 64 << 10;

/// Read one frame of at most `max` bytes; `buf` is reused between calls. The
/// buffer grows with the bytes that actually arrive, never by what a length
/// prefix announces: a peer that announces 64 MB and sends nothing costs
/// nothing.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<pb::PeerFrame> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let len = u32::from_be_bytes(len) as usize;
    if len > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("peer frame of {len} bytes")));
    }
    buf.clear();
    const STEP: usize = 256 << 10;
    while buf.len() < len {
        let at = buf.len();
        buf.resize(len.min(at + STEP), 0);
        r.read_exact(&mut buf[at..]).await?;
    }
    // A buffer grown by one big frame goes back once it is done.
    let frame = pb::PeerFrame::decode(&buf[..])
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("peer frame: {e}")));
    if buf.capacity() > 4 * STEP {
        *buf = Vec::new();
    }
    frame
}

/// Write the frames queued on `queue` to `tx`, as many as are ready (up to
/// 1 MB) in one write, until the queue closes or a write fails. Both ends of a
/// link use it: the sending side for requests, the cluster port for responses.
pub async fn write_frames<W: futures_lite::AsyncWrite + Unpin>(
    tx: &mut W,
    queue: &mut futures_channel::mpsc::UnboundedReceiver<Vec<u8>>,
) {
    use futures_lite::AsyncWriteExt;
    use futures_util::StreamExt;
    while let Some(mut bytes) = queue.next().await {
        while bytes.len() < 1 << 20 {
            match queue.try_recv() {
                Ok(more) => bytes.extend_from_slice(&more),
                _ => break,
            }
        }
        if tx.write_all(&bytes).await.is_err() {
            break;
        }
    }
}

/// `fut`, or `None` once `d` has passed.
pub async fn within<T>(d: std::time::Duration, fut: impl std::future::Future<Output = T>) -> Option<T> {
    futures_lite::future::or(async { Some(fut.await) }, async {
        glommio::timer::sleep(d).await;
        None
    })
    .await
}

/// The frame that says why a request was not served.
pub fn error_body(kind: u32, message: impl Into<String>) -> pb::peer_frame::Body {
    pb::peer_frame::Body::Error(pb::PeerError { kind, message: message.into() })
}

/// `PeerError::kind`: try later or elsewhere (region not here yet, node stopping).
pub const UNREACHABLE: u32 = 1;
/// `PeerError::kind`: the remote failed to serve it.
pub const FAILED: u32 = 2;
/// `PeerError::kind`: this node does not lead the region; the message is the
/// leader's id (0: none known).
pub const NOT_LEADER: u32 = 3;
/// `PeerError::kind`: refused for good (do not retry).
pub const REFUSED: u32 = 4;

/// Nodes of different clusters never talk: hellos carry this.
pub const CLUSTER_NAME: &str = "neokv";
