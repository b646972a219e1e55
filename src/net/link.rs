//! The sending side of node-to-node links. A [`Link`] is this core's connection
//! to one peer for one [`Class`] of traffic: it connects on first use, says hello
//! (and learns the peer's client address from its answer), and multiplexes
//! requests of every region of the core over the connection, each waiting for
//! the response with its id. A broken connection fails every request waiting on
//! it; the next request connects again.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_channel::{mpsc, oneshot};
use futures_lite::AsyncWriteExt;
use glommio::net::TcpStream;

use super::{encode, read_frame, within, Class, FAILED};
use crate::cluster::nodes::Nodes;
use crate::pb;
use crate::pb::peer_frame::Body;

/// Why a request got no response.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    /// No connection to the peer (down, partitioned, or not that node).
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// Connected, but no response in time.
    #[error("no response within {0:?}")]
    Timeout(Duration),
    /// The peer answered that it could not serve the request.
    #[error("{1}")]
    Remote(u32, String),
}

/// This core's links, by peer and class.
pub struct Links {
    nodes: Arc<Nodes>,
    hello: pb::PeerHello,
    links: RefCell<HashMap<(u64, Class), Rc<Link>>>,
}

impl Links {
    pub fn new(nodes: Arc<Nodes>, hello: pb::PeerHello) -> Rc<Links> {
        Rc::new(Links { nodes, hello, links: RefCell::new(HashMap::new()) })
    }

    pub fn nodes(&self) -> &Arc<Nodes> {
        &self.nodes
    }

    pub fn link(&self, target: u64, class: Class) -> Rc<Link> {
        self.links
            .borrow_mut()
            .entry((target, class))
            .or_insert_with(|| {
                Rc::new(Link {
                    target,
                    nodes: self.nodes.clone(),
                    hello: self.hello.clone(),
                    conn: RefCell::new(None),
                    connecting: Cell::new(false),
                    warned: Cell::new(false),
                    waiting: RefCell::new(Vec::new()),
                })
            })
            .clone()
    }
}

pub struct Link {
    target: u64,
    nodes: Arc<Nodes>,
    hello: pb::PeerHello,
    conn: RefCell<Option<Rc<Conn>>>,
    /// A connect is under way; others wait for it on `waiting`.
    connecting: Cell<bool>,
    /// A refusal by the peer was logged.
    warned: Cell<bool>,
    waiting: RefCell<Vec<oneshot::Sender<()>>>,
}

/// While a connect is under way: its end (or its future dropped) lets the
/// next caller connect and wakes those waiting for it.
struct Connecting<'a>(&'a Link);

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        self.0.connecting.set(false);
        for w in self.0.waiting.borrow_mut().drain(..) {
            let _ = w.send(());
        }
    }
}

/// One live connection.
struct Conn {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: RefCell<HashMap<u64, oneshot::Sender<pb::PeerFrame>>>,
    next_id: Cell<u64>,
    closed: Cell<bool>,
}

impl Conn {
    fn close(&self) {
        self.closed.set(true);
        // Every request waiting here hears its sender drop.
        self.pending.borrow_mut().clear();
        self.out.close_channel();
    }
}

impl Link {
    /// Send `body` for `region` and wait at most `ttl` for the response body.
    pub async fn call(&self, region: u32, body: Body, ttl: Duration) -> Result<Body, CallError> {
        let deadline = Instant::now() + ttl;
        let conn = self.connected(ttl).await?;
        let id = conn.next_id.get();
        conn.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        conn.pending.borrow_mut().insert(id, tx);
        let mut bytes = Vec::new();
        encode(&pb::PeerFrame { id, region, body: Some(body) }, &mut bytes);
        if conn.out.unbounded_send(bytes).is_err() {
            conn.pending.borrow_mut().remove(&id);
            return Err(CallError::Unreachable("link closed".into()));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match within(left, rx).await {
            Some(Ok(frame)) => match frame.body {
                Some(Body::Error(e)) => Err(CallError::Remote(e.kind, e.message)),
                Some(b) => Ok(b),
                None => Err(CallError::Remote(FAILED, "empty response".into())),
            },
            Some(Err(_)) => Err(CallError::Unreachable("link closed".into())),
            None => {
                conn.pending.borrow_mut().remove(&id);
                Err(CallError::Timeout(ttl))
            }
        }
    }

    /// The live connection, connecting first if there is none.
    async fn connected(&self, ttl: Duration) -> Result<Rc<Conn>, CallError> {
        loop {
            if let Some(c) = self.conn.borrow().as_ref().filter(|c| !c.closed.get()) {
                return Ok(c.clone());
            }
            if !self.connecting.get() {
                break;
            }
            let (tx, rx) = oneshot::channel();
            self.waiting.borrow_mut().push(tx);
            if within(ttl, rx).await.is_none() {
                return Err(CallError::Timeout(ttl));
            }
        }
        self.connecting.set(true);
        // Cleared however the connect ends: callers time out (openraft drops a
        // heartbeat after its interval), and a flag left set by a dropped
        // connect would make every later call wait for it, for good.
        let connecting = Connecting(self);
        let r = self.connect(ttl.min(Duration::from_secs(2))).await;
        drop(connecting);
        let conn = r?;
        *self.conn.borrow_mut() = Some(conn.clone());
        Ok(conn)
    }

    async fn connect(&self, ttl: Duration) -> Result<Rc<Conn>, CallError> {
        let addr = self
            .nodes
            .cluster_addr(self.target)
            .ok_or_else(|| CallError::Unreachable(format!("no address for node {}", self.target)))?;
        let unreachable = |e: std::io::Error| CallError::Unreachable(format!("{addr}: {e}"));
        let mut stream = within(ttl, TcpStream::connect(addr.as_str()))
            .await
            .ok_or(CallError::Timeout(ttl))?
            .map_err(|e| CallError::Unreachable(format!("{addr}: {e}")))?;
        let _ = stream.set_nodelay(true);
        let mut hello = Vec::new();
        let (incarnation, cluster_id) = self.nodes.incarnation();
        let mine = pb::PeerHello { incarnation, cluster_id, ..self.hello.clone() };
        encode(&pb::PeerFrame { id: 0, region: 0, body: Some(Body::Hello(mine)) }, &mut hello);
        stream.write_all(&hello).await.map_err(unreachable)?;
        let mut buf = Vec::new();
        let answer = within(ttl, read_frame(&mut stream, &mut buf, super::MAX_HELLO))
            .await
            .ok_or(CallError::Timeout(ttl))?
            .map_err(unreachable)?;
        match answer.body {
            Some(Body::Hello(h)) => {
                if let Some(why) = self.nodes.layout_conflict(h.node_id, h.regions, h.replicas) {
                    return Err(CallError::Unreachable(format!("{why}: they cannot form one cluster")));
                }
                if h.node_id != self.target {
                    return Err(CallError::Unreachable(format!(
                        "{addr} is node {}, not node {}",
                        h.node_id, self.target
                    )));
                }
                self.nodes.admit(h.node_id, h.incarnation, h.cluster_id, h.joining).map_err(CallError::Unreachable)?;
                self.nodes.learn_client_addr(h.node_id, &h.client_addr);
            }
            Some(Body::Error(e)) => {
                // Refused (removed from the cluster, another layout): say so once.
                if !self.warned.replace(true) {
                    eprintln!("neokv: node {} at {addr} refuses this node: {}", self.target, e.message);
                }
                return Err(CallError::Unreachable(format!("{addr}: {}", e.message)));
            }
            _ => return Err(CallError::Unreachable(format!("{addr}: no hello"))),
        }
        let (rx, tx) = futures_lite::io::split(stream);
        let (out, queue) = mpsc::unbounded();
        let conn = Rc::new(Conn {
            out,
            pending: RefCell::new(HashMap::new()),
            next_id: Cell::new(1),
            closed: Cell::new(false),
        });
        glommio::spawn_local(write_loop(conn.clone(), tx, queue)).detach();
        glommio::spawn_local(read_loop(conn.clone(), rx, self.nodes.clone(), self.target)).detach();
        Ok(conn)
    }
}

/// Write queued frames, as many as are ready in one write.
async fn write_loop(
    conn: Rc<Conn>,
    mut tx: futures_lite::io::WriteHalf<TcpStream>,
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    super::write_frames(&mut tx, &mut queue).await;
    conn.close();
    let _ = tx.close().await;
}

/// Hand each response to the request waiting for it.
async fn read_loop(conn: Rc<Conn>, mut rx: futures_lite::io::ReadHalf<TcpStream>, nodes: Arc<Nodes>, peer: u64) {
    let mut buf = Vec::new();
    while let Ok(frame) = read_frame(&mut rx, &mut buf, super::MAX_FRAME).await {
        nodes.heard_from(peer);
        if let Some(tx) = conn.pending.borrow_mut().remove(&frame.id) {
            let _ = tx.send(frame);
        }
        if conn.closed.get() {
            break;
        }
    }
    conn.close();
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A call dropped while its connect waits for the peer's hello (openraft
    /// drops a heartbeat after its interval; a paused peer never answers) must
    /// not leave the link "connecting": the next call connects again. With the
    /// flag left set, every later call of that core to that peer and class
    /// waited for a connect that no longer existed, and timed out, for good.
    #[test]
    fn a_connect_dropped_midway_does_not_wedge_the_link() {
        // A peer that accepts and never says hello.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                held.push(s);
            }
        });
        let peers = BTreeMap::from([(1, "127.0.0.1:1".to_string()), (2, addr)]);
        let nodes = Arc::new(Nodes::new(1, "127.0.0.1:2".into(), peers, 1, false));
        crate::raft::runtime::executor_builder(glommio::Placement::Unbound).make().unwrap().run(async move {
            let links = Links::new(nodes, pb::PeerHello { node_id: 1, ..Default::default() });
            let link = links.link(2, Class::Heartbeat);
            let ttl = Duration::from_secs(5);
            let body = || Body::Hello(pb::PeerHello::default());
            // Dropped after 100 ms, in the middle of waiting for the hello.
            assert!(super::super::within(Duration::from_millis(100), link.call(0, body(), ttl)).await.is_none());
            // The next call connects again (and times out on the silent peer).
            let r = link.call(0, body(), Duration::from_millis(300)).await;
            assert!(matches!(r, Err(CallError::Timeout(_))), "{r:?}");
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        while accepted.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "the second call never connected");
    }
}
