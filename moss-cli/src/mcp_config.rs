//! `moss mcp` (the stdio bridge) and `moss mcp config <client>`: the exact configuration that
//! connects an MCP client to Moss, over HTTP with the bearer token or through the bridge.

use std::path::Path;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use crate::output::out;
use crate::{autostart, connect};

/// MCP over stdio, forwarded to the daemon; or `config` to print a client's configuration.
///
/// Without a subcommand, `moss mcp` is an MCP server on stdin/stdout for clients that only
/// spawn stdio servers: every JSON-RPC message is forwarded to the daemon's /mcp (starting
/// the daemon if needed, adding the bearer token).
///
/// Examples:
///   moss mcp                                   # run by the MCP client, not by hand
///   moss mcp --toolsets all                    # serve every tool, not only core
///   moss mcp config claude-code
///   moss mcp config cursor --stdio --toolsets capsule
#[derive(Debug, Args)]
#[command(verbatim_doc_comment, args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// Serve these toolsets (comma-separated, their union): a family, `core` (the tools to
    /// resume, find, remember and hand off) or `all`; default: core. `moss tools` shows which
    /// toolsets each tool is in.
    #[arg(long, value_delimiter = ',')]
    toolsets: Vec<String>,
    #[command(subcommand)]
    pub command: Option<McpCommand>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Print the configuration that connects an MCP client to Moss.
    ///
    /// By default the client talks HTTP to the daemon, with the bearer token from
    /// $MOSS_HOME/token written into the configuration (the daemon is started if needed, so
    /// that the token exists). With --stdio the client spawns `moss mcp` instead, which reads
    /// the token itself. The text goes to stdout; where to put it goes to stderr.
    ///
    /// Examples:
    ///   moss mcp config claude-code | sh           # runs `claude mcp add …`
    ///   moss mcp config codex >> ~/.codex/config.toml
    ///   moss mcp config cursor --stdio
    ///   moss mcp config claude-code --toolsets core,memory
    #[command(verbatim_doc_comment)]
    Config(ConfigArgs),
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The MCP client.
    client: McpClient,
    /// Have the client spawn the stdio bridge (`moss mcp`) instead of talking HTTP.
    #[arg(long)]
    stdio: bool,
    /// Connect the client to these toolsets (comma-separated, their union): a family, `core`
    /// (the tools to resume, find, remember and hand off) or `all`; default: core. `moss tools`
    /// shows which toolsets each tool is in.
    #[arg(long, value_delimiter = ',')]
    toolsets: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpClient {
    /// Claude Code: a `claude mcp add` command.
    ClaudeCode,
    /// OpenAI Codex: a table for ~/.codex/config.toml.
    Codex,
    /// Cursor: ~/.cursor/mcp.json.
    Cursor,
}

pub async fn run(args: McpArgs, addr: &str) -> anyhow::Result<()> {
    match args.command {
        None => crate::bridge::run(addr, &args.toolsets).await,
        Some(McpCommand::Config(c)) => {
            // HTTP needs the token, which the first start creates; toolsets are checked
            // against what the daemon serves.
            if !c.stdio || !c.toolsets.is_empty() {
                let client = autostart::ensure_running(addr).await?;
                check_toolsets(&client, &c.toolsets).await?;
            }
            let (text, hint) = if c.stdio {
                let moss = std::env::current_exe().context("cannot tell where moss is")?;
                let moss = moss.canonicalize().unwrap_or(moss);
                stdio_config(c.client, &moss, &bridge_env(addr), &c.toolsets)
            } else {
                let token = connect::token()?.context(
                    "the daemon runs but there is no token to put in the configuration: \
                     $MOSS_HOME/token is missing and MOSS_TOKEN is unset (is auth \"none\"? then \
                     leave the header out)",
                )?;
                http_config(c.client, &connect::mcp_url(addr, &c.toolsets), &token)
            };
            out!("{text}")?;
            eprintln!("{hint}");
            Ok(())
        }
    }
}

/// Refuses a toolset the daemon does not serve before it goes into a client's configuration,
/// naming the ones it does.
async fn check_toolsets(client: &moss_client::Client, toolsets: &[String]) -> anyhow::Result<()> {
    if toolsets.is_empty() {
        return Ok(());
    }
    let mut served: Vec<String> = Vec::new();
    for t in client
        .tools()
        .await?
        .tools
        .into_iter()
        .filter(|t| t.enabled)
    {
        for set in t.toolsets {
            if !served.contains(&set) {
                served.push(set);
            }
        }
    }
    for name in toolsets.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        if !served.iter().any(|s| s == name) {
            anyhow::bail!(
                "[INVALID_REQUEST] unknown toolset {name:?}; the daemon serves: {}",
                served.join(", ")
            );
        }
    }
    Ok(())
}

/// What the bridge needs from this environment to reach the same daemon: a non-default address
/// or home.
fn bridge_env(addr: &str) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if addr != moss_client::DEFAULT_ADDR {
        env.push(("MOSS_ADDR".to_string(), addr.to_string()));
    }
    if std::env::var_os("MOSS_HOME").is_some_and(|v| !v.is_empty())
        && let Some(home) = connect::moss_home()
    {
        env.push(("MOSS_HOME".to_string(), home.display().to_string()));
    }
    env
}

/// TOML basic strings take JSON's escapes.
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn http_config(client: McpClient, url: &str, token: &str) -> (String, String) {
    let header = format!("Authorization: Bearer {token}");
    match client {
        McpClient::ClaudeCode => (
            format!(
                "claude mcp add --transport http moss {} --header {}\n",
                autostart::shell_word(url),
                autostart::shell_word(&header)
            ),
            "# run that command (add `--scope user` for every project)".into(),
        ),
        McpClient::Codex => (
            format!(
                "[mcp_servers.moss]\nurl = {}\nhttp_headers = {{ \"Authorization\" = {} }}\n",
                toml_str(url),
                toml_str(&format!("Bearer {token}"))
            ),
            "# add that to ~/.codex/config.toml".into(),
        ),
        McpClient::Cursor => (
            pretty(json!({"mcpServers": {"moss": {
                "url": url,
                "headers": {"Authorization": format!("Bearer {token}")}
            }}})),
            "# merge that into ~/.cursor/mcp.json (or .cursor/mcp.json in a project)".into(),
        ),
    }
}

fn stdio_config(
    client: McpClient,
    moss: &Path,
    env: &[(String, String)],
    toolsets: &[String],
) -> (String, String) {
    let moss = moss.display().to_string();
    let mut args = vec!["mcp".to_string()];
    if !toolsets.is_empty() {
        args.push("--toolsets".into());
        args.push(toolsets.join(","));
    }
    match client {
        McpClient::ClaudeCode => {
            let env_flags: String = env
                .iter()
                .map(|(k, v)| format!(" --env {}", autostart::shell_word(&format!("{k}={v}"))))
                .collect();
            (
                format!(
                    "claude mcp add --transport stdio moss{env_flags} -- {} {}\n",
                    autostart::shell_word(&moss),
                    args.iter()
                        .map(|a| autostart::shell_word(a))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                "# run that command (add `--scope user` for every project)".into(),
            )
        }
        McpClient::Codex => {
            let mut text = format!(
                "[mcp_servers.moss]\ncommand = {}\nargs = [{}]\n",
                toml_str(&moss),
                args.iter()
                    .map(|a| toml_str(a))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if !env.is_empty() {
                let pairs: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", toml_str(v)))
                    .collect();
                text.push_str(&format!("env = {{ {} }}\n", pairs.join(", ")));
            }
            (text, "# add that to ~/.codex/config.toml".into())
        }
        McpClient::Cursor => {
            let mut server = json!({"command": moss, "args": args});
            if !env.is_empty() {
                server["env"] = env
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect::<serde_json::Map<_, _>>()
                    .into();
            }
            (
                pretty(json!({"mcpServers": {"moss": server}})),
                "# merge that into ~/.cursor/mcp.json (or .cursor/mcp.json in a project)".into(),
            )
        }
    }
}

fn pretty(v: serde_json::Value) -> String {
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_configs_carry_the_url_and_the_bearer_header() {
        let url = "http://127.0.0.1:6677/mcp";
        let (claude, _) = http_config(McpClient::ClaudeCode, url, "t0k");
        assert_eq!(
            claude,
            "claude mcp add --transport http moss http://127.0.0.1:6677/mcp \
             --header 'Authorization: Bearer t0k'\n"
        );
        let (codex, _) = http_config(McpClient::Codex, url, "t0k");
        assert!(
            codex.contains("url = \"http://127.0.0.1:6677/mcp\""),
            "{codex}"
        );
        assert!(
            codex.contains("http_headers = { \"Authorization\" = \"Bearer t0k\" }"),
            "{codex}"
        );
        let (cursor, _) = http_config(McpClient::Cursor, url, "t0k");
        let v: serde_json::Value = serde_json::from_str(&cursor).unwrap();
        assert_eq!(v["mcpServers"]["moss"]["url"], url);
        assert_eq!(
            v["mcpServers"]["moss"]["headers"]["Authorization"],
            "Bearer t0k"
        );
    }

    #[test]
    fn stdio_configs_spawn_the_bridge_with_the_environment_it_needs() {
        let env = vec![("MOSS_ADDR".to_string(), "127.0.0.1:7000".to_string())];
        let moss = Path::new("/opt/moss bin/moss");
        let (claude, _) = stdio_config(McpClient::ClaudeCode, moss, &env, &[]);
        assert_eq!(
            claude,
            "claude mcp add --transport stdio moss --env MOSS_ADDR=127.0.0.1:7000 -- \
             '/opt/moss bin/moss' mcp\n"
        );
        let (codex, _) = stdio_config(McpClient::Codex, moss, &env, &[]);
        assert_eq!(
            codex,
            "[mcp_servers.moss]\ncommand = \"/opt/moss bin/moss\"\nargs = [\"mcp\"]\n\
             env = { MOSS_ADDR = \"127.0.0.1:7000\" }\n"
        );
        let (cursor, _) = stdio_config(McpClient::Cursor, moss, &[], &[]);
        let v: serde_json::Value = serde_json::from_str(&cursor).unwrap();
        assert_eq!(
            v["mcpServers"]["moss"],
            json!({"command": "/opt/moss bin/moss", "args": ["mcp"]})
        );
    }

    #[test]
    fn toolsets_narrow_the_url_and_the_bridge() {
        assert_eq!(
            connect::mcp_url("127.0.0.1:6677", &[]),
            "http://127.0.0.1:6677/mcp?toolsets=core",
            "core unless --toolsets says otherwise"
        );
        assert_eq!(
            connect::mcp_url("127.0.0.1:6677", &["all".to_string()]),
            "http://127.0.0.1:6677/mcp?toolsets=all"
        );
        let toolsets = vec!["capsule".to_string(), "tasks".to_string()];
        assert_eq!(
            connect::mcp_url("127.0.0.1:6677", &toolsets),
            "http://127.0.0.1:6677/mcp?toolsets=capsule,tasks"
        );
        let moss = Path::new("/bin/moss");
        let (claude, _) = stdio_config(McpClient::ClaudeCode, moss, &[], &toolsets);
        assert_eq!(
            claude,
            "claude mcp add --transport stdio moss -- /bin/moss mcp --toolsets capsule,tasks\n"
        );
        let (codex, _) = stdio_config(McpClient::Codex, moss, &[], &toolsets);
        assert!(
            codex.contains("args = [\"mcp\", \"--toolsets\", \"capsule,tasks\"]"),
            "{codex}"
        );
        let (cursor, _) = stdio_config(McpClient::Cursor, moss, &[], &toolsets);
        let v: serde_json::Value = serde_json::from_str(&cursor).unwrap();
        assert_eq!(
            v["mcpServers"]["moss"]["args"],
            json!(["mcp", "--toolsets", "capsule,tasks"])
        );
    }
}
