//! An order service whose `POST /orders/{id}/pay` runs under the distributed
//! lock of `order:{id}` (the spec's `@Lock`, §5.5): one payment of an order at
//! a time across every instance of the service; a request that finds the
//! order's lock held gets 409 Conflict at once, as the spec maps
//! `LockNotAcquired`.
//!
//! ```text
//! make run                                       # a NeoKV on 127.0.0.1:6379 (any Redis works too)
//! cargo run --release -p neokv-client --example pay -- --redis 127.0.0.1:6379 --listen 127.0.0.1:3000
//! curl -i -X POST 127.0.0.1:3000/orders/1/pay & curl -i -X POST 127.0.0.1:3000/orders/1/pay
//!   # one 200 "order 1 paid", one 409 "order 1 is being paid"
//! ```

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use neokv_client::{lock, DefaultRedisClient, LockError, LockManager, RedisClient};

mod common;
use common::arg;

/// The service's errors, and the HTTP status each maps to.
#[derive(Debug)]
enum AppError {
    /// The order's lock is held by another payment: 409.
    Busy(String),
    /// The store could not be asked: 500.
    Store(String),
}

impl From<LockError> for AppError {
    fn from(e: LockError) -> Self {
        match e {
            LockError::NotAcquired { key } => AppError::Busy(key),
            LockError::Redis(e) => AppError::Store(e.to_string()),
        }
    }
}

impl From<neokv_client::Error> for AppError {
    fn from(e: neokv_client::Error) -> Self {
        AppError::Store(e.to_string())
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match self {
            AppError::Busy(key) => {
                let order = key.trim_start_matches("order:");
                (StatusCode::CONFLICT, format!("order {order} is being paid\n")).into_response()
            }
            AppError::Store(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
        }
    }
}

struct Orders {
    redis: Arc<DefaultRedisClient>,
    locks: LockManager,
    /// How long the (pretend) payment provider takes.
    pay_time: Duration,
}

impl Orders {
    /// Pay an order once: under its lock, check it is unpaid, charge, mark it paid.
    #[lock(key = "order:{order_id}", ttl_ms = 15_000, wait_ms = 0, locks = self.locks)]
    async fn pay(&self, order_id: u64) -> Result<String, AppError> {
        let paid = format!("order:{order_id}:paid");
        if self.redis.exists(&paid).await? {
            return Ok(format!("order {order_id} already paid\n"));
        }
        tokio::time::sleep(self.pay_time).await; // the payment provider
        self.redis.set_value(&paid, "1", None).await?;
        let charges = self.redis.incr("charges").await?;
        Ok(format!("order {order_id} paid (charge {charges})\n"))
    }
}

async fn pay(State(orders): State<Arc<Orders>>, Path(id): Path<u64>) -> Result<String, AppError> {
    orders.pay(id).await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let redis = arg("--redis", "127.0.0.1:6379");
    let listen = arg("--listen", "127.0.0.1:3000");
    let pay_time = Duration::from_millis(arg("--pay-ms", "500").parse()?);
    let client = common::client("shop", 16)?;
    let orders = Arc::new(Orders { locks: LockManager::new(client.clone()), redis: client, pay_time });
    let app = Router::new().route("/orders/{id}/pay", post(pay)).with_state(orders);
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{} (store {redis})", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
