//! What answers at an address: a Moss daemon, nothing, or something else, and the error every
//! command gives when the daemon cannot be reached or started.

use std::time::Duration;

use moss_client::daemon::Health;
use moss_client::{Client, ClientError};

/// How long one `/health` probe may take before the address counts as not answering.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The daemon could not be reached or started; printed as `[UNAVAILABLE] …`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// What answers at an address.
#[derive(Debug)]
pub enum Probe {
    /// A Moss daemon.
    Up(Health),
    /// Nothing (connection refused).
    Down,
    /// Something that is not a healthy Moss daemon, or no answer in time.
    Other(String),
}

/// `GET /health` at `client`'s address, bounded by [`PROBE_TIMEOUT`].
pub async fn probe(client: &Client) -> Probe {
    match tokio::time::timeout(PROBE_TIMEOUT, client.health()).await {
        Ok(Ok(h)) if h.status == "ok" => Probe::Up(h),
        Ok(Ok(h)) => Probe::Other(format!("/health says {:?}", h.status)),
        Ok(Err(ClientError::Unreachable { .. })) => Probe::Down,
        Ok(Err(e)) => Probe::Other(e.to_string()),
        Err(_) => Probe::Other(format!("/health did not answer within {PROBE_TIMEOUT:?}")),
    }
}
