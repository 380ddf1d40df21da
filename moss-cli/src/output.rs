//! Rendering results: JSON for scripts, tables for people, and one-line errors. Colour (error
//! prefixes, warnings, table headers) only on a terminal, and never when `NO_COLOR` is set.

use std::io::{IsTerminal, Write};

use comfy_table::{
    Attribute, Cell, Color, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED,
};
use moss_client::ClientError;
use moss_client::capsule::{
    Capsule, CapsulePage, ComposeResponse, FetchManyResponse, LatestResponse, SearchPage,
};
use moss_client::daemon::ToolList;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Pretty-printed JSON, exactly the daemon's answer.
    Json,
    /// Human-readable tables.
    Table,
}

/// Prints `value` in `format`: JSON exactly as the daemon answered, or the type's own table.
pub fn print<T: Render>(value: &T, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(value)?),
        Format::Table => outln!("{}", value.table()),
    }
}

/// Whoever read stdout closed it (`moss tools | head -3`): not a failure, the command stops
/// quietly. `println!` would panic there, so everything on stdout goes through [`write_stdout`].
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed by its reader")]
pub struct StdoutClosed;

/// Writes `args` (and a newline with `newline`) to stdout; a closed pipe is [`StdoutClosed`].
///
/// The Rust runtime ignores SIGPIPE, so a write to a closed pipe is an `EPIPE` error here,
/// never a signal; restoring the default signal would also kill `moss` on a socket the daemon
/// closed mid-write, and takes `unsafe`.
pub fn write_stdout(args: std::fmt::Arguments<'_>, newline: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush());
    written.map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => anyhow::Error::new(StdoutClosed),
        _ => anyhow::Error::new(e).context("cannot write to stdout"),
    })
}

/// `println!` that returns an error, [`StdoutClosed`] when the reader went away.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*), true)
    };
}
/// `print!` that returns an error, [`StdoutClosed`] when the reader went away.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*), false)
    };
}
pub(crate) use {out, outln};

/// How a response reads as a table. Each response type says it; the default is one
/// key/value row per field.
pub trait Render: Serialize {
    fn table(&self) -> String {
        key_values(&serde_json::to_value(self).unwrap_or(Value::Null))
    }
}

macro_rules! key_value_tables {
    ($($t:ty),* $(,)?) => { $(impl Render for $t {})* };
}

key_value_tables!(
    moss_client::capsule::CapsuleHandle,
    moss_client::capsule::DeleteResponse,
    moss_client::capsule::AppendResponse,
    moss_client::capsule::BulkDeleteResponse,
    moss_client::capsule::BulkUpdateResponse,
    moss_client::capsule::PurgeResponse,
    moss_client::capsule::WatchResponse,
    moss_client::capsule::StatsResponse,
    moss_client::capsule::RestoreResponse,
    moss_client::capsule::LineageResponse,
    moss_client::capsule::VersionsResponse,
    moss_client::capsule::DiffResponse,
    moss_client::capsule::ExportResponse,
    moss_client::capsule::ImportResponse,
    moss_client::daemon::DaemonStatus,
    moss_client::daemon::ShutdownResponse,
    Value,
);

impl Render for Capsule {
    /// Its fields, then its text below the table.
    fn table(&self) -> String {
        let mut fields = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(map) = fields.as_object_mut() {
            map.remove("capsule_text");
        }
        match &self.capsule_text {
            Some(text) => format!("{}\n\n{text}", key_values(&fields)),
            None => key_values(&fields),
        }
    }
}

impl Render for LatestResponse {
    fn table(&self) -> String {
        match (&self.item, &self.hint) {
            (Some(c), _) => c.table(),
            (None, Some(hint)) => format!("(none)\n{hint}"),
            (None, None) => "(none)".into(),
        }
    }
}

impl Render for CapsulePage {
    /// A row per capsule, then where the page stands.
    fn table(&self) -> String {
        let mut t = new_table();
        set_header(&mut t, SUMMARY_COLUMNS);
        for c in &self.items {
            t.add_row(summary_row(c));
        }
        let mut out = format!("{t}\n{}", page_footer(self.items.len(), &self.pagination));
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n{hint}"));
        }
        out
    }
}

impl Render for SearchPage {
    fn table(&self) -> String {
        let mut t = new_table();
        let explained = self.items.iter().any(|h| h.explain.is_some());
        let mut header = vec!["id", "workspace", "name", "title", "score"];
        if explained {
            header.push("ranks");
        }
        header.push("snippet");
        set_header(&mut t, header);
        for h in &self.items {
            let mut row = vec![
                h.id.clone(),
                h.workspace.clone(),
                h.name.clone().unwrap_or_default(),
                h.title.clone().unwrap_or_default(),
                format!("{:.3}", h.score),
            ];
            if explained {
                row.push(h.explain.as_ref().map(ranks).unwrap_or_default());
            }
            row.push(plain_snippet(&h.snippet));
            t.add_row(row);
        }
        format!(
            "{t}\n{}\nranked by {}",
            page_footer(self.items.len(), &self.pagination),
            self.mode
        )
    }
}

/// A hit's ranks in each part: `keyword 2 · semantic 1 (0.41)`.
fn ranks(e: &moss_client::search::HitExplain) -> String {
    let mut parts = Vec::new();
    if let Some(k) = &e.keyword {
        parts.push(format!("keyword {}", k.rank));
    }
    if let Some(s) = &e.semantic {
        parts.push(format!("semantic {} ({:.2})", s.rank, s.similarity));
    }
    parts.join(" · ")
}

impl Render for FetchManyResponse {
    /// A row per capsule found, then a line per ref that was not.
    fn table(&self) -> String {
        let mut t = new_table();
        set_header(&mut t, SUMMARY_COLUMNS);
        for c in &self.items {
            t.add_row(summary_row(c));
        }
        let mut out = t.to_string();
        for e in &self.errors {
            out.push_str(&format!("\n[{}] {}", e.code, e.message));
        }
        out
    }
}

impl Render for ComposeResponse {
    /// The bundle itself, as it would be pasted.
    fn table(&self) -> String {
        let mut out = self.bundle_text.clone();
        if let Some(stored) = &self.stored {
            out.push_str(&format!("\n\nstored as {}", stored.id));
        }
        out
    }
}

impl Render for moss_client::moss::WorkspacesResponse {
    fn table(&self) -> String {
        let mut t = new_table();
        set_header(
            &mut t,
            [
                "workspace",
                "capsules",
                "reasoning",
                "tasks",
                "memories",
                "last activity",
            ],
        );
        for w in &self.items {
            t.add_row(vec![
                w.workspace.clone(),
                w.counts.capsules.to_string(),
                w.counts.reasoning.to_string(),
                w.counts.tasks.to_string(),
                w.counts.memories.to_string(),
                w.last_activity.clone().unwrap_or_default(),
            ]);
        }
        t.to_string()
    }
}

impl Render for moss_client::moss::SearchResponse {
    fn table(&self) -> String {
        let mut t = new_table();
        let explained = self.items.iter().any(|h| h.explain.is_some());
        let mut header = vec!["score", "family", "kind", "id", "workspace", "title"];
        if explained {
            header.push("ranks");
        }
        header.push("snippet");
        set_header(&mut t, header);
        for h in &self.items {
            let mut row = vec![
                format!("{:.3}", h.score),
                h.family.clone(),
                h.kind.clone(),
                h.id.clone(),
                h.workspace.clone(),
                h.title.clone(),
            ];
            if explained {
                row.push(h.explain.as_ref().map(ranks).unwrap_or_default());
            }
            row.push(plain_snippet(&h.snippet));
            t.add_row(row);
        }
        let mut out = t.to_string();
        if let Some(next) = &self.pagination.next_cursor {
            out.push_str(&format!(
                "
more: --cursor {next}"
            ));
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!(
                "
{hint}"
            ));
        }
        out
    }
}

impl Render for moss_client::moss::ContextResponse {
    /// The radar, then a short table per section that holds something.
    fn table(&self) -> String {
        let mut out = format!("workspace {}", self.workspace);
        if let Some(task) = &self.task {
            out.push_str(&format!(", task {task}"));
        }
        if let Some(radar) = &self.radar {
            out.push('\n');
            out.push_str(&key_values(radar));
        }
        for (name, items) in [
            ("handoffs", &self.handoffs),
            ("open tasks", &self.open_tasks),
            ("questions", &self.questions),
            ("decisions", &self.decisions),
            ("notes", &self.notes),
            ("memories", &self.memories),
            ("changes", &self.changes),
        ] {
            if items.is_empty() {
                continue;
            }
            let mut t = new_table();
            set_header(&mut t, ["kind", "id", "title", "updated"]);
            for i in items {
                t.add_row(vec![
                    i.kind.clone(),
                    i.id.clone(),
                    i.title.clone(),
                    i.updated_at.clone().unwrap_or_default(),
                ]);
            }
            out.push_str(&format!("\n\n{name}\n{t}"));
        }
        if !self.dropped.is_empty() {
            out.push_str(&format!(
                "\n\ndropped to fit max_chars: {}",
                self.dropped.join(", ")
            ));
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n{hint}"));
        }
        out
    }
}

impl Render for ToolList {
    fn table(&self) -> String {
        let mut t = new_table();
        set_header(&mut t, ["family", "tool", "toolsets", "enabled"]);
        for tool in &self.tools {
            t.add_row(vec![
                tool.family.clone(),
                tool.name.clone(),
                tool.toolsets.join(","),
                tool.enabled.to_string(),
            ]);
        }
        t.to_string()
    }
}

/// Where a page stands: `20 of 143 (offset 0), more with --offset`, or `20 (offset 0, total
/// not counted)` when the search did not count its matches.
fn page_footer(shown: usize, p: &moss_client::capsule::Pagination) -> String {
    format!(
        "{shown} {}{}",
        match p.total {
            Some(t) => format!("of {t} (offset {})", p.offset),
            None => format!("(offset {}, total not counted)", p.offset),
        },
        if p.has_more {
            ", more with --offset"
        } else {
            ""
        }
    )
}

/// A JSON answer for people: an object's plain fields as key/value rows, then each of its lists
/// of objects as a table of its own under the field's name; nested objects as indented
/// `key: value` lines; times (see [`time_unit`]) in local ISO-8601. Never JSON in a cell.
fn key_values(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut t = new_table();
            let mut lists = Vec::new();
            for (k, v) in map {
                match v {
                    Value::Array(items)
                        if !items.is_empty() && items.iter().all(Value::is_object) =>
                    {
                        lists.push((k, items))
                    }
                    _ => {
                        t.add_row(vec![k.clone(), text(k, v)]);
                    }
                }
            }
            let mut out = if t.row_count() > 0 {
                t.to_string()
            } else {
                String::new()
            };
            for (k, items) in lists {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(&format!("{k} ({}):\n{}", items.len(), rows(items)));
            }
            out
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            rows(items)
        }
        other => text("", other),
    }
}

/// Most columns a list of objects gets as one table; wider items are shown one block each.
const MAX_COLUMNS: usize = 6;

/// Objects as the rows of one table (columns: their keys, in order of appearance), or, when
/// they have more than [`MAX_COLUMNS`] keys between them, as one key/value table each.
fn rows(items: &[Value]) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for item in items {
        for k in item.as_object().into_iter().flat_map(|m| m.keys()) {
            if !columns.contains(&k.as_str()) {
                columns.push(k);
            }
        }
    }
    if columns.len() > MAX_COLUMNS {
        return items
            .iter()
            .enumerate()
            .map(|(i, item)| format!("[{i}]\n{}", key_values(item)))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut t = new_table();
    set_header(&mut t, &columns);
    for item in items {
        t.add_row(
            columns
                .iter()
                .map(|c| item.get(*c).map_or_else(String::new, |v| text(c, v)))
                .collect::<Vec<_>>(),
        );
    }
    t.to_string()
}

/// A value as cell text: scalars as they read, times in local ISO-8601, a short list of
/// scalars on one line, longer lists one `- item` a line, objects as `key: value` lines with
/// what they nest indented under them.
fn text(key: &str, v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (time_unit(key), n.as_i64()) {
            (Some(unit), Some(t)) => local_time(t, unit).unwrap_or_else(|| n.to_string()),
            (_, Some(_)) => n.to_string(),
            // A fraction to four places (a score of 0.25697145802506405 reads 0.257); `--json`
            // keeps every digit.
            _ => match n.as_f64() {
                Some(f) => {
                    let t = format!("{f:.4}");
                    let t = t.trim_end_matches('0');
                    t.strip_suffix('.')
                        .map_or_else(|| t.to_string(), |i| format!("{i}.0"))
                }
                None => n.to_string(),
            },
        },
        Value::String(s) => match time_unit(key) {
            Some(_) => chrono::DateTime::parse_from_rfc3339(s).map_or_else(
                |_| s.clone(),
                |t| iso_local(&t.with_timezone(&chrono::Local), false),
            ),
            None => s.clone(),
        },
        Value::Array(items) => {
            let scalars = items.iter().all(|i| !i.is_array() && !i.is_object());
            let parts: Vec<String> = items.iter().map(|i| text(key, i)).collect();
            let short = parts.iter().all(|p| p.len() <= 40 && !p.contains('\n'));
            if scalars && short && parts.iter().map(String::len).sum::<usize>() <= 80 {
                parts.join(", ")
            } else {
                parts
                    .iter()
                    .map(|p| format!("- {}", indent(p, "  ").trim_start()))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let inner = text(k, v);
                // A count by phase or role keys "no phase" as "".
                let k = if k.is_empty() { "(none)" } else { k };
                let nested = matches!(v, Value::Object(m) if !m.is_empty())
                    || inner.contains('\n')
                    || (v.is_array() && inner.starts_with("- "));
                if nested {
                    format!("{k}:\n{}", indent(&inner, "  "))
                } else {
                    format!("{k}: {inner}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeUnit {
    Seconds,
    Millis,
}

/// Which fields hold times, by the wire's naming: `ts` and `*_at` are unix seconds, `ts_ms`,
/// `*_at_ms` and `*_ts_ms` milliseconds; `oldest` and `newest` (stats) RFC 3339 strings.
fn time_unit(key: &str) -> Option<TimeUnit> {
    if key == "ts_ms" || key.ends_with("_at_ms") || key.ends_with("_ts_ms") {
        Some(TimeUnit::Millis)
    } else if key == "ts" || key.ends_with("_at") || key == "oldest" || key == "newest" {
        Some(TimeUnit::Seconds)
    } else {
        None
    }
}

/// A unix time in the local time zone, ISO-8601 with its offset (`2026-01-23T14:30:22+01:00`);
/// milliseconds shown for a time in milliseconds.
fn local_time(t: i64, unit: TimeUnit) -> Option<String> {
    let utc = match unit {
        TimeUnit::Seconds => chrono::DateTime::from_timestamp(t, 0)?,
        TimeUnit::Millis => chrono::DateTime::from_timestamp_millis(t)?,
    };
    Some(iso_local(
        &utc.with_timezone(&chrono::Local),
        unit == TimeUnit::Millis,
    ))
}

fn iso_local(t: &chrono::DateTime<chrono::Local>, millis: bool) -> String {
    t.format(if millis {
        "%Y-%m-%dT%H:%M:%S%.3f%:z"
    } else {
        "%Y-%m-%dT%H:%M:%S%:z"
    })
    .to_string()
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
        {
            let updated = text("updated_at", &Value::from(c.updated_at));
            match c.deleted_at {
                Some(_) => format!("{updated} (deleted)"),
                None => updated,
            }
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

/// A search snippet for a table cell: highlights dropped, entities decoded, and its lines and
/// runs of spaces joined into one line (a passage of a capsule keeps its markdown's line breaks,
/// which would make one hit a row of twenty lines).
fn plain_snippet(html: &str) -> String {
    let text = html
        .replace("<b>", "")
        .replace("</b>", "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Ctrl-C stopped a command that cleans up after itself; printed as `[CANCELLED] …`.
#[derive(Debug, thiserror::Error)]
#[error("interrupted; {0}")]
pub struct Interrupted(pub &'static str);

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
    if let Some(u) = e.downcast_ref::<crate::probe::Unavailable>() {
        return format!("[UNAVAILABLE] {u}");
    }
    if let Some(i) = e.downcast_ref::<Interrupted>() {
        return format!("[CANCELLED] {i}");
    }
    format!("[INVALID_REQUEST] {e:#}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fraction in a cell reads to four places; whole numbers and times as before.
    #[test]
    fn a_fraction_reads_to_four_places() {
        assert_eq!(
            text("relevance", &serde_json::json!(0.25697145802506405)),
            "0.257"
        );
        assert_eq!(text("weight", &serde_json::json!(1.0)), "1.0");
        assert_eq!(text("score", &serde_json::json!(0.00004)), "0.0");
        assert_eq!(text("matched", &serde_json::json!(12)), "12");
        assert_eq!(text("similarity", &serde_json::json!(-0.12345)), "-0.1235");
    }

    /// A snippet is one line of a table: highlights and entities gone, line breaks joined.
    #[test]
    fn a_snippet_is_one_line_of_plain_text() {
        assert_eq!(
            plain_snippet(
                "# Auth\n\n## Decisions\nWe use <b>signed</b> &amp; short-lived\n  tokens."
            ),
            "# Auth ## Decisions We use signed & short-lived tokens."
        );
    }

    /// Each response type renders its own table: tools by family, an empty latest as
    /// `(none)`, a page with where it stands, a bundle as its text.
    #[test]
    fn each_response_type_renders_its_own_table() {
        let tools = ToolList {
            tools: vec![moss_client::daemon::ToolInfo {
                name: "capsule_store".into(),
                family: "capsule".into(),
                toolsets: vec!["capsule".into(), "core".into(), "all".into()],
                description: "Store a capsule".into(),
                enabled: true,
            }],
        };
        let t = tools.table();
        assert!(
            t.contains("family")
                && t.contains("capsule_store")
                && t.contains("capsule,core,all")
                && t.contains("true"),
            "{t}"
        );
        assert_eq!(
            LatestResponse {
                item: None,
                hint: None
            }
            .table(),
            "(none)"
        );
        let page = CapsulePage {
            items: Vec::new(),
            pagination: moss_client::capsule::Pagination {
                limit: 20,
                offset: 40,
                has_more: true,
                total: Some(143),
            },
            sort: "updated_at_desc".into(),
            hint: None,
        };
        assert!(
            page.table()
                .ends_with("0 of 143 (offset 40), more with --offset"),
            "{}",
            page.table()
        );
        let bundle = ComposeResponse {
            bundle_text: "## a\n\ntext\n".into(),
            bundle_chars: 11,
            parts_count: 1,
            stored: None,
        };
        assert_eq!(bundle.table(), "## a\n\ntext\n");
    }

    /// What `--format table` shows of one answer per family: nested objects as `key: value`
    /// lines, lists of objects as tables, times in local ISO-8601; no JSON, no unix seconds.
    #[test]
    fn answers_of_every_family_read_as_tables_without_json() {
        let answers = [
            // capsule: a fetch with lineage and evidence
            serde_json::json!({"id": "01J", "created_at": 1795580490, "updated_at": 1795580491,
                "fetch_key": {"moss_workspace": "p", "moss_capsule": "auth"},
                "based_on": [{"workspace": "p", "name": "research"}],
                "evidence": [{"type": "transcript", "ref": "run-7#12", "chars": 40}]}),
            // reasoning: show
            serde_json::json!({"branch": "task/TASK-001", "entries": [{"seq": 22, "kind": "event",
                "payload": {"step_id": "STEP-0001", "path": "s:0"}, "ts": 1795580490,
                "ts_ms": 1795580490776_i64}], "pagination": {"cursor": null, "has_more": true}}),
            // tasks: radar
            serde_json::json!({"radar": {"now": "Task TASK-001", "verify": ["Confirm the criteria of s:1 (STEP-0002): none defined yet", "Confirm the tests of s:1"], "blockers": []},
                "target": {"id": "TASK-001", "created_at_ms": 1795580490776_i64}}),
            // memory: recall
            serde_json::json!({"items": [{"id": "01K", "content": "Last edit broke tests",
                "contexts": ["auth.py", "tests/"], "weight": 0.8, "created_at": 1795580490,
                "explain": {"relevance": 0.9, "recency": 1.0}}], "matched": 1}),
            // capsule stats: counts keyed by phase, "" for none; RFC 3339 times
            serde_json::json!({"by_phase": {"": 2, "review": 1},
                "oldest": "2026-11-26T00:19:21Z"}),
        ];
        let seconds = local_time(1795580490, TimeUnit::Seconds).unwrap();
        let millis = local_time(1795580490776, TimeUnit::Millis).unwrap();
        assert_eq!(&millis[19..23], ".776", "{millis}");
        for answer in &answers {
            let t = answer.table();
            for json in ["{\"", "\":", "[{", "null"] {
                assert!(!t.contains(json), "{json} in\n{t}");
            }
            assert!(!t.contains("1795580490"), "unix time in\n{t}");
        }
        let [capsule, show, radar, recall, stats] = answers.map(|a| a.table());
        assert!(
            capsule.contains(&seconds) && capsule.contains("moss_capsule: auth"),
            "{capsule}"
        );
        assert!(
            capsule.contains("based_on (1)") && capsule.contains("run-7#12"),
            "{capsule}"
        );
        assert!(
            show.contains("step_id: STEP-0001") && show.contains(&millis),
            "{show}"
        );
        assert!(
            radar.contains("verify: ") && radar.contains("  - Confirm the tests of s:1"),
            "{radar}"
        );
        assert!(
            radar.contains("created_at_ms: ") && radar.contains(&millis),
            "{radar}"
        );
        assert!(
            recall.contains("auth.py, tests/") && recall.contains("relevance: 0.9"),
            "{recall}"
        );
        assert!(
            stats.contains("(none): 2") && !stats.contains("19:21Z"),
            "{stats}"
        );
    }

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
