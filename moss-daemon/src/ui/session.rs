//! Who may see the pages: one-time login codes and the sessions they open.
//!
//! `moss ui` asks the daemon (with the bearer token, like every API call) for a login code and
//! prints `/ui/login?code=…`. Opening it trades the code, once and within five minutes, for a
//! session: a random id in an `HttpOnly`, `SameSite=Strict` cookie scoped to `/ui`, with a CSRF
//! token that every form sends back. Pages never see the bearer token. Sessions live in the
//! daemon's memory and end after twelve idle hours or a restart.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The cookie that carries a session id.
pub const COOKIE: &str = "moss_ui";
/// How long a login code may wait to be used.
pub const CODE_TTL: Duration = Duration::from_secs(300);
/// How long a session lasts without a request.
const SESSION_IDLE: Duration = Duration::from_secs(12 * 3600);
/// At most this many codes wait at once (the oldest goes first).
const MAX_CODES: usize = 16;
/// At most this many sessions at once (the idlest goes first).
const MAX_SESSIONS: usize = 64;

/// An open session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The token every form carries back.
    pub csrf: String,
    seen: Instant,
}

/// The login codes and sessions of the web UI.
#[derive(Debug, Default)]
pub struct Sessions {
    codes: Mutex<HashMap<String, Instant>>,
    sessions: Mutex<HashMap<String, Session>>,
}

/// 32 random bytes, as hex.
fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares two secrets in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

impl Sessions {
    /// A new login code, valid once within [`CODE_TTL`].
    pub fn new_code(&self) -> String {
        let code = random_hex();
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|_, at| at.elapsed() < CODE_TTL);
        if codes.len() >= MAX_CODES
            && let Some(oldest) = codes
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(c, _)| c.clone())
        {
            codes.remove(&oldest);
        }
        codes.insert(code.clone(), Instant::now());
        code
    }

    /// Trades a code for a new session id; `None` for a code unknown, used or expired.
    pub fn redeem(&self, code: &str) -> Option<String> {
        let issued = {
            let mut codes = self.codes.lock().unwrap();
            let key = codes.keys().find(|k| same(k, code)).cloned()?;
            codes.remove(&key)?
        };
        if issued.elapsed() >= CODE_TTL {
            return None;
        }
        let id = random_hex();
        let mut sessions = self.sessions.lock().unwrap();
        sessions.retain(|_, s| s.seen.elapsed() < SESSION_IDLE);
        if sessions.len() >= MAX_SESSIONS
            && let Some(idlest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.seen)
                .map(|(k, _)| k.clone())
        {
            sessions.remove(&idlest);
        }
        sessions.insert(
            id.clone(),
            Session {
                csrf: random_hex(),
                seen: Instant::now(),
            },
        );
        Some(id)
    }

    /// The session of `id`, if it is open (and now seen again).
    pub fn get(&self, id: &str) -> Option<Session> {
        let mut sessions = self.sessions.lock().unwrap();
        let key = sessions.keys().find(|k| same(k, id)).cloned()?;
        let s = sessions.get_mut(&key)?;
        if s.seen.elapsed() >= SESSION_IDLE {
            sessions.remove(&key);
            return None;
        }
        s.seen = Instant::now();
        Some(s.clone())
    }

    /// Whether `token` is the session's CSRF token.
    pub fn csrf_ok(session: &Session, token: &str) -> bool {
        same(&session.csrf, token)
    }
}

/// The session id in a `Cookie` header value.
pub fn cookie_id(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_opens_one_session_once() {
        let s = Sessions::default();
        let code = s.new_code();
        let id = s.redeem(&code).expect("a fresh code");
        assert!(s.redeem(&code).is_none(), "a code is used once");
        assert!(s.redeem("nope").is_none());
        let session = s.get(&id).expect("the session is open");
        assert!(Sessions::csrf_ok(&session, &session.csrf));
        assert!(!Sessions::csrf_ok(&session, "x"));
        assert!(s.get("other").is_none());
    }

    #[test]
    fn the_cookie_is_read_among_others() {
        assert_eq!(cookie_id("a=1; moss_ui=abc; b=2"), Some("abc"));
        assert_eq!(cookie_id("a=1"), None);
    }
}
