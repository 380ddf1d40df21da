//! Hears the commits of every daemon on a PostgreSQL database (`LISTEN`), and raises this
//! daemon's commit signals with them, so that a waiter here (`capsule_watch`, an indexer) wakes
//! for a change written through another daemon as for its own.
//!
//! Each batch's writer sends one notification inside its transaction (see
//! [`crate::store::writer::POSTGRES_CHANNEL`]): PostgreSQL delivers it at COMMIT, never for a
//! batch rolled back. A notification sent while the listener was disconnected is lost, so after
//! every (re)connection it raises every signal to the sequence's value: waiters look once more
//! and find whatever they missed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use postgres::Config;
use postgres::fallible_iterator::FallibleIterator;

use super::postgres::PgConn;
use super::{Db, DbError};
use crate::error::{Error, Result};
use crate::store::writer::{POSTGRES_CHANNEL, Signals, WriterConn};

/// How often the thread looks whether it should stop, while no notification comes.
const POLL: Duration = Duration::from_millis(200);
/// The longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The listener thread; stopped (and joined) with [`Listener::stop`] or on drop.
#[derive(Debug)]
pub struct Listener {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Listener {
    /// Connects (so that a wrong URL fails the start, not a thread later) and starts listening.
    pub fn spawn(config: &Config, signals: Arc<Signals>) -> Result<Listener> {
        let conn = PgConn::connect(config)
            .map_err(|e| Error::internal("connecting the commit listener", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("moss-listener".into())
            .spawn(move || run(conn, &signals, &flag))
            .map_err(|e| Error::internal("starting the commit listener", e))?;
        Ok(Listener {
            stop,
            handle: Some(handle),
        })
    }

    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.halt();
    }
}

fn run(conn: PgConn, signals: &Signals, stop: &AtomicBool) {
    let mut backoff = Duration::from_millis(50);
    let mut listening = false;
    let mut schema = String::new();
    while !stop.load(Ordering::Acquire) {
        if !listening {
            match subscribe(&conn, signals) {
                Ok(current) => {
                    schema = current;
                    listening = true;
                    backoff = Duration::from_millis(50);
                }
                Err(e) => {
                    tracing::warn!(
                        "the commit listener cannot reach PostgreSQL ({e}); retrying in {:?}",
                        backoff
                    );
                    sleep_unless_stopped(backoff, stop);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            }
        }
        let heard = {
            let mut client = conn.client();
            let mut notifications = client.notifications();
            let mut iter = notifications.timeout_iter(POLL);
            let mut heard = Ok(());
            loop {
                match iter.next() {
                    Ok(Some(n)) => announce(signals, &schema, n.payload()),
                    Ok(None) => break,
                    Err(e) => {
                        heard = Err(e);
                        break;
                    }
                }
            }
            heard
        };
        if let Err(e) = heard {
            tracing::warn!("the commit listener lost its connection ({e}); reconnecting");
            listening = false;
        }
    }
}

/// (Re)connects if needed, listens, then raises every signal to the sequence's value. Returns
/// the store's schema, which leads the payloads meant for it.
fn subscribe(conn: &PgConn, signals: &Signals) -> std::result::Result<String, DbError> {
    conn.reconnect_if_closed()?;
    let db = Db::Postgres(conn);
    db.batch(&format!("LISTEN {POSTGRES_CHANNEL}"))?;
    let schema: String = db.query_one("SELECT current_schema()::text", &[], |r| r.get(0))?;
    signals.announce_all(conn.load_sequence()?);
    Ok(schema)
}

/// Parses a payload ("public capsules memories 42": the store's schema, the sources a batch
/// changed, then its high mark); a payload of another schema's store is not for this one.
fn announce(signals: &Signals, schema: &str, payload: &str) {
    let mut words: Vec<&str> = payload.split_ascii_whitespace().collect();
    if words.first() != Some(&schema) {
        return;
    }
    words.remove(0);
    let Some(seq) = words.pop().and_then(|w| w.parse::<i64>().ok()) else {
        tracing::warn!("ignoring a commit notification that names no sequence: {payload:?}");
        return;
    };
    for name in words {
        signals.announce(name, seq);
    }
}

fn sleep_unless_stopped(total: Duration, stop: &AtomicBool) {
    let step = Duration::from_millis(50);
    let mut slept = Duration::ZERO;
    while slept < total && !stop.load(Ordering::Acquire) {
        std::thread::sleep(step);
        slept += step;
    }
}
