//! Rendering results: JSON for scripts, tables for people, and one-line errors. Colour (error
//! prefixes, warnings, table headers) only on a terminal, and never when `NO_COLOR` is set.

use std::io::IsTerminal;

use comfy_table::{
    Attribute, Cell, Color, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED,
};
use moss_client::{Capsule, ClientError, SearchHit};
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Pretty-printed JSON, exactly the daemon's answer.
    Json,
    /// Human-readable tables.
    Table,
}

/// Prints `value` in `format`.
pub fn print<T: Serialize>(value: &T, format: Format) -> anyhow::Result<()> {
    let json = serde_json::to_value(value)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&json)?),
        Format::Table => println!("{}", table(&json)),
    }
    Ok(())
}

const SUMMARY_COLUMNS: [&str; 7] = [
    "id",
    "workspace",
    "name",
    "title",
    "chars",
    "tokens",
    "updated",
];

fn summary_row(c: &Capsule) -> Vec<String> {
    vec![
        c.id.clone(),
        c.workspace.clone(),
        c.name.clone().unwrap_or_default(),
        c.title.clone().unwrap_or_default(),
        c.capsule_chars.to_string(),
        c.tokens_estimate.to_string(),
        match c.deleted_at {
            Some(_) => format!("{} (deleted)", c.updated_at),
            None => c.updated_at.to_string(),
        },
    ]
}

fn new_table() -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if colour(Stream::Stdout) {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t
}

/// Sets the header row, bold and coloured when stdout takes colour.
fn set_header<S: ToString>(t: &mut Table, columns: impl IntoIterator<Item = S>) {
    let styled = colour(Stream::Stdout);
    t.set_header(columns.into_iter().map(|c| {
        let cell = Cell::new(c.to_string());
        if styled {
            cell.add_attribute(Attribute::Bold).fg(Color::Cyan)
        } else {
            cell
        }
    }));
}

#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Whether to colour `stream`: a terminal, `NO_COLOR` unset or empty (no-color.org), and not
/// `TERM=dumb`.
pub fn colour(stream: Stream) -> bool {
    let tty = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// `line`'s leading `[CODE]` in bold red when stderr takes colour.
pub fn paint_error(line: &str) -> String {
    paint_prefix(line, "\x1b[1;31m", colour(Stream::Stderr))
}

fn paint_prefix(line: &str, sgr: &str, on: bool) -> String {
    match line.split_once("] ") {
        Some((code, rest)) if on && code.starts_with('[') => {
            format!("{sgr}{code}]\x1b[0m {rest}")
        }
        _ => line.to_string(),
    }
}

/// `warning: …` on stderr, the prefix in yellow when stderr takes colour.
pub fn warn(message: &str) {
    if colour(Stream::Stderr) {
        eprintln!("\x1b[1;33mwarning:\x1b[0m {message}");
    } else {
        eprintln!("warning: {message}");
    }
}

/// Lists of capsules become one row each; a single object becomes key/value rows, with a
/// capsule's text printed below the table.
fn table(json: &Value) -> String {
    if let Some(tools) = json.get("tools").and_then(Value::as_array) {
        let mut t = new_table();
        set_header(&mut t, ["tool", "enabled"]);
        for tool in tools {
            t.add_row(vec![
                tool["name"].as_str().unwrap_or("").to_string(),
                tool["enabled"].to_string(),
            ]);
        }
        return t.to_string();
    }
    let items = json.get("items").and_then(Value::as_array);
    if let Some(items) = items {
        let mut t = new_table();
        let hits = json.get("sort").and_then(Value::as_str) == Some("relevance");
        if hits {
            set_header(&mut t, ["id", "workspace", "name", "title", "snippet"]);
        } else {
            set_header(&mut t, SUMMARY_COLUMNS);
        }
        for item in items {
            if hits && let Ok(h) = serde_json::from_value::<SearchHit>(item.clone()) {
                t.add_row(vec![
                    h.id,
                    h.workspace,
                    h.name.unwrap_or_default(),
                    h.title.unwrap_or_default(),
                    plain_snippet(&h.snippet),
                ]);
            } else if let Ok(c) = serde_json::from_value::<Capsule>(item.clone()) {
                t.add_row(summary_row(&c));
            }
        }
        let mut out = t.to_string();
        if let Some(p) = json.get("pagination") {
            out.push_str(&format!(
                "\n{} of {} (offset {}){}",
                items.len(),
                p["total"],
                p["offset"],
                if p["has_more"] == Value::Bool(true) {
                    ", more with --offset"
                } else {
                    ""
                }
            ));
        }
        if let Some(errors) = json.get("errors").and_then(Value::as_array)
            && !errors.is_empty()
        {
            for e in errors {
                out.push_str(&format!(
                    "\n[{}] {}",
                    e["code"].as_str().unwrap_or(""),
                    e["message"].as_str().unwrap_or("")
                ));
            }
        }
        return out;
    }
    if let Some(bundle) = json.get("bundle_text").and_then(Value::as_str) {
        let mut out = bundle.to_string();
        if let Some(stored) = json.get("stored") {
            out.push_str(&format!(
                "\n\nstored as {}",
                stored["id"].as_str().unwrap_or("")
            ));
        }
        return out;
    }
    let object = json.get("item").unwrap_or(json);
    if object.is_null() {
        return "(none)".into();
    }
    let mut t = new_table();
    let mut text = None;
    if let Some(map) = object.as_object() {
        for (k, v) in map {
            if k == "capsule_text" {
                text = v.as_str().map(str::to_string);
                continue;
            }
            let shown = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            t.add_row(vec![k.clone(), shown]);
        }
    }
    match text {
        Some(text) => format!("{t}\n\n{text}"),
        None => t.to_string(),
    }
}

/// A search snippet for a terminal: highlights dropped, entities decoded.
fn plain_snippet(html: &str) -> String {
    html.replace("<b>", "")
        .replace("</b>", "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// `[CODE] message` for daemon errors; a hint for the common local failures.
pub fn error_line(e: &anyhow::Error) -> String {
    if let Some(ce) = e.downcast_ref::<ClientError>() {
        return match ce {
            ClientError::Api(body) => format!("[{}] {}", body.code, body.message),
            ClientError::Unreachable { addr, .. } => format!(
                "[UNAVAILABLE] no Moss daemon answers at {addr}; start one with `moss daemon \
                 start` (or set --addr / MOSS_ADDR to where it listens)"
            ),
            ClientError::InvalidAddress { .. } => format!("[INVALID_REQUEST] {ce}"),
            other => format!("[INTERNAL] {other}"),
        };
    }
    if let Some(u) = e.downcast_ref::<crate::autostart::Unavailable>() {
        return format!("[UNAVAILABLE] {u}");
    }
    format!("[INVALID_REQUEST] {e:#}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_code_prefix_is_painted_and_only_when_asked() {
        let line = "[NOT_FOUND] capsule [x] not found";
        assert_eq!(paint_prefix(line, "\x1b[31m", false), line);
        assert_eq!(
            paint_prefix(line, "\x1b[31m", true),
            "\x1b[31m[NOT_FOUND]\x1b[0m capsule [x] not found"
        );
        assert_eq!(paint_prefix("plain] text", "\x1b[31m", true), "plain] text");
    }
}
