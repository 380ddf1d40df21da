//! Where the daemon is and how to authenticate to it.

use std::path::PathBuf;

use anyhow::Context;
use moss_client::Client;

/// `$MOSS_HOME`, else `~/.moss`.
pub fn moss_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MOSS_HOME").filter(|v| !v.is_empty()) {
        return Some(dir.into());
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".moss"))
}

/// The bearer token: `$MOSS_TOKEN`, else `$MOSS_HOME/token`. None if neither exists (the daemon
/// then answers 401 with the place to look).
pub fn token() -> anyhow::Result<Option<String>> {
    if let Ok(t) = std::env::var("MOSS_TOKEN")
        && !t.trim().is_empty()
    {
        return Ok(Some(t.trim().to_string()));
    }
    let Some(home) = moss_home() else {
        return Ok(None);
    };
    let path = home.join("token");
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(Some(t.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read the token at {}", path.display())),
    }
}

pub fn client(addr: &str) -> anyhow::Result<Client> {
    Ok(Client::new(addr, token()?)?)
}
