//! Where the daemon is and how to authenticate to it.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use moss_client::Client;

/// `$MOSS_HOME`, else `~/.moss`; made absolute against the current directory.
pub fn moss_home() -> Option<PathBuf> {
    let dir = if let Some(dir) = std::env::var_os("MOSS_HOME").filter(|v| !v.is_empty()) {
        PathBuf::from(dir)
    } else {
        PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".moss")
    };
    if dir.is_absolute() {
        return Some(dir);
    }
    Some(std::env::current_dir().ok()?.join(dir))
}

/// [`moss_home`], or an error that says how to set it.
pub fn require_home() -> anyhow::Result<PathBuf> {
    moss_home().context(
        "neither MOSS_HOME nor HOME is set; set MOSS_HOME to the directory Moss should use",
    )
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

/// A client for `addr`, with the token as it is on disk now.
pub fn client(addr: &str) -> anyhow::Result<Client> {
    Ok(Client::new(addr, token()?)?)
}

/// `http://host:port` for `host:port` or a URL (`MOSS_ADDR` may be either).
pub fn base_url(addr: &str) -> String {
    if addr.starts_with("http://") || addr.starts_with("https://") {
        addr.trim_end_matches('/').to_string()
    } else {
        format!("http://{addr}")
    }
}

/// The toolsets `moss mcp` and `moss mcp config` connect to unless `--toolsets` says otherwise:
/// the few tools an agent needs to start, and what to ask for to reach the rest.
pub const DEFAULT_TOOLSETS: &str = "core";

/// The daemon's MCP endpoint, narrowed to `toolsets` ([`DEFAULT_TOOLSETS`] when none is given).
pub fn mcp_url(addr: &str, toolsets: &[String]) -> String {
    let base = format!("{}/mcp", base_url(addr));
    let names: Vec<&str> = toolsets
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    if names.is_empty() {
        format!("{base}?toolsets={DEFAULT_TOOLSETS}")
    } else {
        format!("{base}?toolsets={}", names.join(","))
    }
}

/// The `IP:port` that `mossd --addr` takes, from `host:port` or `http://host:port`.
pub fn socket_addr(addr: &str) -> anyhow::Result<SocketAddr> {
    let bare = addr
        .strip_prefix("http://")
        .unwrap_or(addr)
        .trim_end_matches('/');
    if let Ok(a) = bare.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Some(port) = bare.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    bail!(
        "the daemon address {addr:?} is not IP:port; use e.g. 127.0.0.1:6677 (--addr or MOSS_ADDR)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(base_url("127.0.0.1:1"), "http://127.0.0.1:1");
        assert_eq!(base_url("http://127.0.0.1:1/"), "http://127.0.0.1:1");
        assert_eq!(
            socket_addr("http://127.0.0.1:7/").unwrap().to_string(),
            "127.0.0.1:7"
        );
        assert_eq!(
            socket_addr("localhost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        let e = socket_addr("example.com:1").unwrap_err().to_string();
        assert!(e.contains("127.0.0.1:6677"), "{e}");
    }
}
