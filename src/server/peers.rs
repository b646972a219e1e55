//! The node-to-node listener (cluster mode): every core accepts on the cluster
//! port (SO_REUSEPORT). A link starts with the caller's hello, answered with
//! this node's; then each request frame is served by its region's owning core
//! (`Core::serve_peer`, over the channel mesh when that is another core) and
//! its response written back with the request's id, in whatever order they
//! finish.

use std::rc::Rc;
use std::time::Duration;

use futures_channel::mpsc;
use futures_lite::AsyncWriteExt;
use glommio::net::{TcpListener, TcpStream};

use crate::net::{encode, error_body, read_frame, within, CLUSTER_NAME, FAILED};
use crate::pb;
use crate::pb::peer_frame::Body;
use crate::shard::Core;

/// Requests of one link served at once (appends and votes of every region of
/// a core, heartbeats, snapshot chunks: far more than a healthy peer sends).
pub const MAX_IN_FLIGHT: u64 = 256;

pub async fn accept_loop(core: Rc<Core>, listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok(stream) => {
                glommio::spawn_local(serve_link(core.clone(), stream)).detach();
            }
            Err(_) if core.shared.stopping.load(std::sync::atomic::Ordering::SeqCst) => return,
            Err(e) => {
                eprintln!("cluster accept: {e}");
                glommio::timer::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

async fn serve_link(core: Rc<Core>, mut stream: TcpStream) {
    let Some(nodes) = core.shared.nodes.clone() else { return };
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    let hello = read_frame(&mut stream, &mut buf, crate::net::MAX_HELLO);
    let Some(Ok(first)) = within(Duration::from_secs(5), hello).await else { return };
    let mut answer = Vec::new();
    let mut h_id = 0;
    // Who the caller is: a node of this cluster (same name and layout), under
    // an incarnation this node accepts (`Nodes::admit`: not one that lost its
    // data or was removed, not another cluster's). Else the refusal says why,
    // so the refused node can tell its operator.
    let verdict = match first.body {
        Some(Body::Hello(h)) if h.cluster_name == CLUSTER_NAME && h.node_id != nodes.me => {
            if let Some(why) = nodes.layout_conflict(h.node_id, h.regions, h.replicas) {
                Err(why)
            } else {
                nodes.admit(h.node_id, h.incarnation, h.cluster_id, h.joining).map(|()| h)
            }
        }
        _ => Err("not a node of this cluster".to_string()),
    };
    let ok = match verdict {
        Ok(h) => {
            nodes.learn_client_addr(h.node_id, &h.client_addr);
            h_id = h.node_id;
            let (incarnation, cluster_id) = nodes.incarnation();
            let hello = pb::PeerHello {
                node_id: nodes.me,
                client_addr: nodes.client_addr(nodes.me).unwrap_or_default(),
                cluster_name: CLUSTER_NAME.into(),
                regions: nodes.initial_regions() as u32,
                replicas: if nodes.join { 0 } else { nodes.replicas() as u32 },
                incarnation,
                cluster_id,
                joining: nodes.join,
            };
            encode(&pb::PeerFrame { id: 0, region: 0, body: Some(Body::Hello(hello)) }, &mut answer);
            true
        }
        Err(why) => {
            encode(&pb::PeerFrame { id: 0, region: 0, body: Some(error_body(FAILED, why)) }, &mut answer);
            false
        }
    };
    if stream.write_all(&answer).await.is_err() || !ok {
        let _ = stream.close().await;
        return;
    }
    let (mut rx, mut tx) = futures_lite::io::split(stream);
    let (out, mut queue) = mpsc::unbounded::<Vec<u8>>();
    glommio::spawn_local(async move {
        crate::net::write_frames(&mut tx, &mut queue).await;
        let _ = tx.close().await;
    })
    .detach();
    let peer = h_id;
    // At most this many of the link's requests are served at once; the next
    // frame is read only once one is done (a peer cannot make this node hold
    // tasks and their frames without bound).
    let in_flight = Rc::new(glommio::sync::Semaphore::new(MAX_IN_FLIGHT));
    while let Ok(frame) = read_frame(&mut rx, &mut buf, crate::net::MAX_FRAME).await {
        nodes.heard_from(peer);
        let Some(body) = frame.body else { continue };
        let Ok(permit) = in_flight.acquire_static_permit(1).await else { break };
        let (core, out) = (core.clone(), out.clone());
        glommio::spawn_local(async move {
            let _permit = permit;
            let body = match body {
                // A node's report of the regions it leads: taken here, on
                // whichever core the link landed (`Nodes` is shared).
                Body::Leads(req) => crate::shard::reports::receive(&core, peer, req),
                body => core.serve_peer(frame.region, body).await,
            };
            let mut bytes = Vec::new();
            encode(&pb::PeerFrame { id: frame.id, region: frame.region, body: Some(body) }, &mut bytes);
            let _ = out.unbounded_send(bytes);
        })
        .detach();
    }
    out.close_channel();
}
