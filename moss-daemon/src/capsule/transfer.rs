//! `capsule_export` and `capsule_import` (seed 001 §6.10, §6.11, §7.1; file format and import
//! modes from seed 000 §6.9, §6.10).
//!
//! The file is JSONL: a header line `{"_moss_export":true,"schema_version":"1.0",
//! "exported_at":…}`, then one capsule record per line, ordered by id, every field present, so
//! export → import → export gives the same bytes apart from `exported_at`.
//!
//! Export streams rows from one read transaction (a consistent snapshot, constant memory) into
//! a temporary file in the target directory (0600), fsyncs it and renames it over the target: a
//! failure or cancellation removes the temporary file and leaves an existing target intact.
//!
//! Import checks the whole file first, off the writer (size cap, per-line cap, JSON, field
//! bounds), so a bad file is refused before any write. Then one writer job reads it again and
//! applies every record in one savepoint: all of it commits, or none of it (collisions in mode
//! "error", an ambiguous record in mode "replace", cancellation). Normalized names, character
//! counts and token estimates are recomputed with the same rules as `capsule_store`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use moss_client::{
    Capsule, ErrorCode, ExportRequest, ExportResponse, ImportMode, ImportRecordError,
    ImportRequest, ImportResponse,
};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::paths::{CheckedPath, PathRules, open_for_import, sanitize_file_stem};
use super::query::{FULL_COLS, capsule_from_row};
use super::{Capsules, NewCapsule, Times, fields, insert_row};
use crate::cancel::Cancel;
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::store::{Store, now};

/// The header's `schema_version`; import accepts any `1.x`.
pub const SCHEMA_VERSION: &str = "1.0";
/// Skipped records listed in an import's `errors` at most (all are counted in `skipped`).
const MAX_LISTED_ERRORS: usize = 100;
/// Longest id accepted on import.
const MAX_ID_CHARS: usize = 200;

/// The longest line import reads: a record of `capsule_max_chars` characters, each escaped to
/// six bytes at worst (`\u0001`), plus room for the other fields; at least 1 MiB.
pub fn line_cap(capsule_max_chars: usize) -> usize {
    (capsule_max_chars.saturating_mul(6) + 64 * 1024).max(1024 * 1024)
}

#[derive(Serialize)]
struct Header {
    #[serde(rename = "_moss_export")]
    moss_export: bool,
    schema_version: &'static str,
    exported_at: i64,
}

/// One line of an export, fields in the seed's order.
#[derive(Serialize)]
struct ExportRecord {
    id: String,
    workspace_raw: String,
    workspace_norm: String,
    name_raw: Option<String>,
    name_norm: Option<String>,
    title: Option<String>,
    capsule_text: String,
    capsule_chars: i64,
    tokens_estimate: i64,
    tags: Vec<String>,
    source: Option<String>,
    run_id: Option<String>,
    phase: Option<String>,
    role: Option<String>,
    created_at: i64,
    updated_at: i64,
    deleted_at: Option<i64>,
}

impl From<Capsule> for ExportRecord {
    fn from(c: Capsule) -> Self {
        ExportRecord {
            id: c.id,
            workspace_raw: c.workspace,
            workspace_norm: c.workspace_norm,
            name_raw: c.name,
            name_norm: c.name_norm,
            title: c.title,
            capsule_text: c.capsule_text.unwrap_or_default(),
            capsule_chars: c.capsule_chars,
            tokens_estimate: c.tokens_estimate,
            tags: c.tags.unwrap_or_default(),
            source: c.source,
            run_id: c.run_id,
            phase: c.phase,
            role: c.role,
            created_at: c.created_at,
            updated_at: c.updated_at,
            deleted_at: c.deleted_at,
        }
    }
}

/// One line of an import file as read. `*_norm`, `capsule_chars` and `tokens_estimate` are
/// informational and ignored (unknown keys are ignored too).
#[derive(Deserialize)]
struct ImportLine {
    #[serde(rename = "_moss_export", default)]
    moss_export: Option<serde_json::Value>,
    #[serde(default)]
    schema_version: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    workspace_raw: Option<String>,
    #[serde(default)]
    name_raw: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    capsule_text: Option<String>,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    created_at: Option<i64>,
    #[serde(default)]
    updated_at: Option<i64>,
    #[serde(default)]
    deleted_at: Option<i64>,
}

/// A record ready to write.
struct Record {
    id: String,
    capsule: NewCapsule,
    times: Times,
}

/// What one line of an import file holds.
enum Line {
    Header,
    Blank,
    Record(Box<Record>),
    /// Lacks `id` or `workspace_raw`: skipped with this reason (seed 000 §6.10).
    Skipped(String),
}

impl Capsules {
    /// `capsule_export`: writes the selected capsules to a JSONL file.
    pub async fn export(
        &self,
        req: ExportRequest,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<ExportResponse> {
        let workspace = match req.workspace.as_deref().filter(|w| !w.trim().is_empty()) {
            Some(w) => Some(fields::workspace(Some(w))?),
            None => None,
        };
        let include_deleted = req.include_deleted.unwrap_or(false);
        let rules = self.paths.clone();
        self.store
            .readers
            .run(move |conn| {
                let exported_at = now();
                let target = match req.path.as_deref() {
                    Some(p) => rules.check(p, true)?,
                    None => default_export_path(
                        &rules,
                        workspace.as_ref().map(|w| w.norm.as_str()),
                        exported_at,
                    )?,
                };
                let selection = Selection {
                    workspace_norm: workspace.map(|w| w.norm),
                    include_deleted,
                };
                write_export(conn, &target, &selection, exported_at, &cancel, &progress)
            })
            .await
    }

    /// `capsule_import`: reads a JSONL file and applies it in one transaction.
    pub async fn import(
        &self,
        req: ImportRequest,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<ImportResponse> {
        let mode = req.mode.unwrap_or_default();
        let rules = self.paths.clone();
        let limits = Limits {
            max_bytes: self.config.max_import_bytes,
            line_cap: line_cap(self.config.capsule_max_chars),
        };
        let check_cancel = cancel.clone();
        let check_progress = progress.clone();
        let (path, file, records) = tokio::task::spawn_blocking(move || {
            let target = rules.check(&req.path, false)?;
            let mut file = open_for_import(&target)?;
            let size = file
                .metadata()
                .map_err(|e| Error::internal("reading the import file's size", e))?
                .len();
            if size > limits.max_bytes {
                return Err(file_too_large(&target.path(), limits.max_bytes, size));
            }
            check_progress.phase("checking", size);
            let t = now();
            let mut records = 0u64;
            read_lines(
                &mut file,
                &limits,
                &target.path(),
                &check_cancel,
                |_, line, read| {
                    if let Line::Record(_) = parse_line(line, t)? {
                        records += 1;
                    }
                    check_progress.set(read);
                    Ok(())
                },
            )?;
            Ok((target.path(), file, records))
        })
        .await
        .map_err(|e| Error::internal("checking the import file", e))??;

        let store = self.store.clone();
        self.store
            .writer
            .run(move |conn| {
                let mut file = file;
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| Error::internal("rewinding the import file", e))?;
                progress.phase("importing", records);
                let mut out = ImportResponse {
                    path: path.display().to_string(),
                    imported: 0,
                    replaced: 0,
                    renamed: 0,
                    skipped: 0,
                    errors: Vec::new(),
                };
                let t = now();
                let mut done = 0u64;
                read_lines(&mut file, &limits, &path, &cancel, |line_no, line, _| {
                    match parse_line(line, t)? {
                        Line::Header | Line::Blank => {}
                        Line::Skipped(message) => {
                            out.skipped += 1;
                            if out.errors.len() < MAX_LISTED_ERRORS {
                                out.errors.push(ImportRecordError {
                                    line: line_no,
                                    code: ErrorCode::InvalidRecord,
                                    message,
                                });
                            }
                        }
                        Line::Record(r) => {
                            apply(conn, &store, *r, mode, &mut out)?;
                            done += 1;
                            progress.set(done);
                        }
                    }
                    Ok(())
                })?;
                Ok(out)
            })
            .await
    }
}

/// What an export selects.
struct Selection {
    workspace_norm: Option<String>,
    include_deleted: bool,
}

#[derive(Clone, Copy)]
struct Limits {
    max_bytes: u64,
    line_cap: usize,
}

/// `$MOSS_HOME/exports/<workspace>-<UTC timestamp>.jsonl` (`all-…` without a workspace), with
/// `-1`, `-2`, … appended if that file exists, so a default export never replaces another.
fn default_export_path(
    rules: &PathRules,
    workspace_norm: Option<&str>,
    exported_at: i64,
) -> Result<CheckedPath> {
    let stem = sanitize_file_stem(workspace_norm.unwrap_or("all"));
    let stamp = chrono::DateTime::from_timestamp(exported_at, 0)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H%M%S");
    let mut n = 0;
    loop {
        let name = if n == 0 {
            format!("{stem}-{stamp}.jsonl")
        } else {
            format!("{stem}-{stamp}-{n}.jsonl")
        };
        let checked = rules.check(&name, true)?;
        if !checked.path().exists() {
            return Ok(checked);
        }
        n += 1;
    }
}

/// A temporary file next to the target; removed on drop unless renamed into place.
struct TempFile {
    path: PathBuf,
    persisted: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::internal(&format!("{what} {}", path.display()), e)
}

fn write_export(
    conn: &Connection,
    target: &CheckedPath,
    selection: &Selection,
    exported_at: i64,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<ExportResponse> {
    let final_path = target.path();
    let tmp = TempFile {
        path: target.dir.join(format!(
            ".{}.{}.tmp",
            target.name.to_string_lossy(),
            ulid::Ulid::generate()
        )),
        persisted: false,
    };
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp.path)
        .map_err(|e| io_error("creating", &tmp.path, e))?;
    let mut out = BufWriter::with_capacity(256 * 1024, file);

    let mut conds = Vec::new();
    let mut args: Vec<String> = Vec::new();
    if let Some(ws) = &selection.workspace_norm {
        conds.push("workspace_norm = ?1");
        args.push(ws.clone());
    }
    if !selection.include_deleted {
        conds.push("deleted_at IS NULL");
    }
    let filter = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    // One snapshot for the count and the rows; the transaction only reads.
    let tx = conn.unchecked_transaction()?;
    let total: i64 = tx.query_row(
        &format!("SELECT count(*) FROM capsules {filter}"),
        rusqlite::params_from_iter(args.iter()),
        |r| r.get(0),
    )?;
    progress.phase("exporting", total.max(0) as u64);

    let write_err = |e: std::io::Error| io_error("writing", &tmp.path, e);
    serde_json::to_writer(
        &mut out,
        &Header {
            moss_export: true,
            schema_version: SCHEMA_VERSION,
            exported_at,
        },
    )
    .map_err(|e| Error::internal("encoding the export header", e))?;
    out.write_all(b"\n").map_err(write_err)?;

    // The primary key's index gives id order without sorting: rows stream in constant memory.
    let sql = format!(
        "SELECT {FULL_COLS} FROM capsules INDEXED BY sqlite_autoindex_capsules_1 {filter} \
         ORDER BY id"
    );
    let mut stmt = tx.prepare(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
    let mut count: i64 = 0;
    while let Some(row) = rows.next()? {
        cancel.check("export")?;
        let record = ExportRecord::from(capsule_from_row(row)?);
        serde_json::to_writer(&mut out, &record)
            .map_err(|e| Error::internal("encoding an export record", e))?;
        out.write_all(b"\n").map_err(write_err)?;
        count += 1;
        progress.set(count as u64);
    }
    drop(rows);
    drop(stmt);
    drop(tx);
    cancel.check("export")?;

    let file = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    file.sync_all().map_err(write_err)?;
    let bytes = file.metadata().map_err(write_err)?.len();
    drop(file);
    // The target may have become a symlink since the checks; rename would replace the link, not
    // follow it, but the rule is to refuse.
    if std::fs::symlink_metadata(&final_path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::invalid(format!(
            "{} became a symlink during the export; symlinked files are refused",
            final_path.display()
        ))
        .with_details(json!({ "field": "path", "rule": "symlink_file" })));
    }
    let mut tmp = tmp;
    std::fs::rename(&tmp.path, &final_path)
        .map_err(|e| io_error("renaming into", &final_path, e))?;
    tmp.persisted = true;
    // Make the rename itself durable.
    File::open(&target.dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("syncing directory", &target.dir, e))?;
    Ok(ExportResponse {
        path: final_path.display().to_string(),
        count,
        exported_at,
        bytes,
    })
}

fn file_too_large(path: &Path, max: u64, actual: u64) -> Error {
    Error::new(
        ErrorCode::FileTooLarge,
        format!(
            "import file {} is {actual} bytes; the limit is {max} (max_import_bytes). Split the \
             file, or raise max_import_bytes in config.json",
            path.display()
        ),
    )
    .with_details(json!({ "max_bytes": max, "actual_bytes": actual }))
}

/// Calls `each(line_number, line, bytes_read_so_far)` for every line, enforcing the byte caps
/// and checking for cancellation before each line.
fn read_lines(
    file: &mut File,
    limits: &Limits,
    path: &Path,
    cancel: &Cancel,
    mut each: impl FnMut(u64, &[u8], u64) -> Result<()>,
) -> Result<()> {
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut buf = Vec::new();
    let mut read: u64 = 0;
    let mut line_no: u64 = 0;
    loop {
        cancel.check("import")?;
        buf.clear();
        let n = (&mut reader)
            .take(limits.line_cap as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_error("reading", path, e))?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        read += n as u64;
        if read > limits.max_bytes {
            // The file grew after its size was checked.
            return Err(file_too_large(path, limits.max_bytes, read));
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        } else if n > limits.line_cap {
            return Err(at_line(
                bad(
                    None,
                    format!(
                        "longer than {} bytes, more than any capsule of capsule_max_chars needs; \
                         the file is not a Moss export or is damaged",
                        limits.line_cap
                    ),
                ),
                line_no,
            ));
        }
        each(line_no, &buf, read).map_err(|e| at_line(e, line_no))?;
    }
}

/// `400 INVALID_RECORD` naming, when known, the field; [`at_line`] adds the line.
fn bad(field: Option<&str>, problem: impl std::fmt::Display) -> Error {
    let message = match field {
        Some(f) => format!("field `{f}`: {problem}"),
        None => problem.to_string(),
    };
    Error::new(ErrorCode::InvalidRecord, message).with_details(json!({ "field": field }))
}

/// Adds the line number to errors that do not carry one yet.
fn at_line(e: Error, line: u64) -> Error {
    if e.0.details.get("line").is_some() || e.code() == ErrorCode::Cancelled {
        return e;
    }
    let mut details = match e.0.details.clone() {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    details.insert("line".into(), json!(line));
    let mut message = format!("line {line}: {}", e.0.message);
    if e.code() == ErrorCode::InvalidRecord {
        message.push_str(". Nothing was imported; fix or remove the line and import again");
    }
    Error(moss_client::ErrorBody {
        message,
        details: serde_json::Value::Object(details),
        ..e.0
    })
}

fn parse_line(bytes: &[u8], t: i64) -> Result<Line> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Line::Blank);
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let raw: ImportLine = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let inner = match inner.find(" at line ") {
            Some(i) => inner[..i].to_string(),
            None => inner,
        };
        if path == "." || path.is_empty() {
            bad(None, format!("not a JSON object record ({inner})"))
        } else {
            bad(Some(&path), inner)
        }
    })?;
    if raw.moss_export.is_some() {
        if let Some(v) = &raw.schema_version
            && v.split('.').next() != Some("1")
        {
            return Err(bad(
                Some("schema_version"),
                format!(
                    "the header's schema_version {v:?} is not supported (this Moss reads 1.x); \
                     export again with this version of Moss"
                ),
            ));
        }
        return Ok(Line::Header);
    }
    let Some(id) = raw.id.as_deref().map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(Line::Skipped(
            "record has no `id`; every record needs `id` and `workspace_raw`".into(),
        ));
    };
    let Some(workspace_raw) = raw
        .workspace_raw
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    else {
        return Ok(Line::Skipped(format!(
            "record {id} has no `workspace_raw`; every record needs `id` and `workspace_raw`"
        )));
    };
    let field_err = |field: &'static str| move |e: Error| bad(Some(field), e.0.message);
    if id.chars().count() > MAX_ID_CHARS {
        return Err(bad(
            Some("id"),
            format!("longer than {MAX_ID_CHARS} characters"),
        ));
    }
    let workspace = fields::workspace(Some(workspace_raw)).map_err(field_err("workspace_raw"))?;
    let name = fields::name(raw.name_raw.as_deref()).map_err(field_err("name_raw"))?;
    let title = fields::title(raw.title.as_deref()).map_err(field_err("title"))?;
    let tags = fields::tags(raw.tags.as_deref()).map_err(field_err("tags"))?;
    let source = fields::handle("source", raw.source.as_deref()).map_err(field_err("source"))?;
    let run_id = fields::handle("run_id", raw.run_id.as_deref()).map_err(field_err("run_id"))?;
    let phase = fields::handle("phase", raw.phase.as_deref()).map_err(field_err("phase"))?;
    let role = fields::handle("role", raw.role.as_deref()).map_err(field_err("role"))?;
    let text = raw.capsule_text.unwrap_or_default();
    let created_at = raw.created_at.unwrap_or(t);
    Ok(Line::Record(Box::new(Record {
        id: id.to_string(),
        capsule: NewCapsule {
            workspace,
            name,
            title,
            chars: text.chars().count() as i64,
            tokens: fields::tokens_estimate(&text),
            text,
            tags_json: tags.map(|t| serde_json::to_string(&t).expect("tags serialize")),
            source,
            run_id,
            phase,
            role,
        },
        times: Times {
            created_at,
            updated_at: raw.updated_at.unwrap_or(created_at),
            deleted_at: raw.deleted_at,
        },
    })))
}

/// Writes one record according to `mode` (seed 000 §6.10 "Import collision semantics").
fn apply(
    conn: &Connection,
    store: &Store,
    r: Record,
    mode: ImportMode,
    out: &mut ImportResponse,
) -> Result<()> {
    let id_taken = conn
        .prepare_cached("SELECT 1 FROM capsules WHERE id = ?1")?
        .query_row([&r.id], |_| Ok(()))
        .optional()?
        .is_some();
    // Only an active record can collide by name: the unique handle excludes soft-deleted rows.
    let name_holder: Option<String> = match (&r.capsule.name, r.times.deleted_at) {
        (Some((_, norm)), None) => active_holder(conn, &r.capsule.workspace.norm, norm)?,
        _ => None,
    };
    let display_name = || {
        format!(
            "{}/{}",
            r.capsule.workspace.raw,
            r.capsule
                .name
                .as_ref()
                .map(|(raw, _)| raw.as_str())
                .unwrap_or("")
        )
    };
    match mode {
        ImportMode::Error => {
            if id_taken {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "a capsule with id {} already exists; nothing was imported. Use mode \
                         \"replace\" to overwrite existing capsules, or \"rename\" to import \
                         alongside them",
                        r.id
                    ),
                )
                .with_details(json!({ "id": r.id })));
            }
            if let Some(holder) = name_holder {
                return Err(Error::new(
                    ErrorCode::NameAlreadyExists,
                    format!(
                        "an active capsule named {} already exists (id {holder}); nothing was \
                         imported. Use mode \"replace\" to overwrite it, or \"rename\" to import \
                         under a suffixed name",
                        display_name()
                    ),
                )
                .with_details(json!({ "id": holder, "name": display_name() })));
            }
            insert_row(conn, &r.id, &r.capsule, &r.times, store.next_seq())?;
        }
        ImportMode::Replace => match (id_taken, name_holder) {
            (true, Some(holder)) if holder != r.id => {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "record {} is ambiguous: its id matches one capsule and its name {} \
                         matches another (id {holder}); nothing was imported. Delete one of \
                         them, or use mode \"rename\"",
                        r.id,
                        display_name()
                    ),
                )
                .with_details(json!({ "id": r.id, "name_holder": holder })));
            }
            (true, _) => {
                overwrite_row(conn, &r.id, &r.capsule, &r.times, store.next_seq())?;
                out.replaced += 1;
            }
            (false, Some(holder)) => {
                overwrite_row(conn, &holder, &r.capsule, &r.times, store.next_seq())?;
                out.replaced += 1;
            }
            (false, None) => insert_row(conn, &r.id, &r.capsule, &r.times, store.next_seq())?,
        },
        ImportMode::Rename => {
            let mut capsule = r.capsule;
            let mut renamed = false;
            let id = if id_taken {
                renamed = true;
                ulid::Ulid::generate().to_string()
            } else {
                r.id
            };
            if name_holder.is_some()
                && let Some((raw, _)) = &capsule.name
            {
                capsule.name = Some(free_name(conn, &capsule.workspace.norm, raw)?);
                renamed = true;
            }
            insert_row(conn, &id, &capsule, &r.times, store.next_seq())?;
            if renamed {
                out.renamed += 1;
            }
        }
    }
    out.imported += 1;
    Ok(())
}

fn active_holder(
    conn: &Connection,
    workspace_norm: &str,
    name_norm: &str,
) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM capsules WHERE workspace_norm = ?1 AND name_norm = ?2 \
             AND deleted_at IS NULL",
        )?
        .query_row([workspace_norm, name_norm], |r| r.get(0))
        .optional()?)
}

/// `name-1`, `name-2`, … : the first suffixed name no active capsule of the workspace holds.
fn free_name(conn: &Connection, workspace_norm: &str, raw: &str) -> Result<(String, String)> {
    for n in 1.. {
        let candidate = format!("{raw}-{n}");
        let norm = fields::normalize(&candidate);
        if active_holder(conn, workspace_norm, &norm)?.is_none() {
            return Ok((candidate, norm));
        }
    }
    unreachable!("some suffix is free")
}

/// Overwrites every column of capsule `id` with an imported record (the id stays).
fn overwrite_row(
    conn: &Connection,
    id: &str,
    c: &NewCapsule,
    times: &Times,
    seq: i64,
) -> Result<()> {
    let (name_raw, name_norm) = match &c.name {
        Some((r, n)) => (Some(r.as_str()), Some(n.as_str())),
        None => (None, None),
    };
    conn.prepare_cached(
        "UPDATE capsules SET workspace_raw = ?1, workspace_norm = ?2, name_raw = ?3,
           name_norm = ?4, title = ?5, capsule_text = ?6, capsule_chars = ?7,
           tokens_estimate = ?8, tags_json = ?9, source = ?10, run_id = ?11, phase = ?12,
           role = ?13, created_at = ?14, updated_at = ?15, deleted_at = ?16, seq = ?17
         WHERE id = ?18",
    )?
    .execute(params![
        c.workspace.raw,
        c.workspace.norm,
        name_raw,
        name_norm,
        c.title,
        c.text,
        c.chars,
        c.tokens,
        c.tags_json,
        c.source,
        c.run_id,
        c.phase,
        c.role,
        times.created_at,
        times.updated_at,
        times.deleted_at,
        seq,
        id
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: &str) -> Result<Line> {
        parse_line(line.as_bytes(), 100)
    }

    #[test]
    fn headers_blanks_and_incomplete_records_are_told_apart() {
        assert!(matches!(
            record(r#"{"_moss_export":true,"schema_version":"1.0","exported_at":5}"#).unwrap(),
            Line::Header
        ));
        assert!(matches!(record("   ").unwrap(), Line::Blank));
        assert!(matches!(
            record(r#"{"workspace_raw":"w"}"#).unwrap(),
            Line::Skipped(_)
        ));
        assert!(matches!(record(r#"{"id":"a"}"#).unwrap(), Line::Skipped(_)));
        let e = record(r#"{"_moss_export":true,"schema_version":"2.0"}"#)
            .err()
            .unwrap();
        assert_eq!(e.code(), ErrorCode::InvalidRecord);
    }

    #[test]
    fn derived_fields_are_recomputed_and_bad_fields_named() {
        let Line::Record(r) = record(
            r#"{"id":"A","workspace_raw":" My  WS ","workspace_norm":"stale","name_raw":"Auth",
                "name_norm":"x","capsule_text":"one two three","capsule_chars":999,
                "tokens_estimate":1,"tags":[],"created_at":7}"#,
        )
        .unwrap() else {
            panic!("a record")
        };
        assert_eq!(r.capsule.workspace.norm, "my ws");
        assert_eq!(r.capsule.name.as_ref().unwrap().1, "auth");
        assert_eq!((r.capsule.chars, r.capsule.tokens), (13, 4));
        assert_eq!(r.capsule.tags_json, None);
        assert_eq!((r.times.created_at, r.times.updated_at), (7, 7));
        let e = record(r#"{"id":"A","workspace_raw":"w","tags":"x"}"#)
            .err()
            .unwrap();
        assert_eq!(e.0.details["field"], "tags");
        let long = format!(
            r#"{{"id":"A","workspace_raw":"w","title":"{}"}}"#,
            "t".repeat(501)
        );
        let e = record(&long).err().unwrap();
        assert_eq!(e.code(), ErrorCode::InvalidRecord);
        assert_eq!(e.0.details["field"], "title");
        assert!(record("not json").is_err());
    }

    /// A store with `n` capsules in a temporary home, and the Capsules over it.
    async fn capsules_with(n: usize) -> (Capsules, crate::store::StoreThreads, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let home = crate::MossHome::at(dir.path());
        home.ensure_exports_dir().unwrap();
        let opts = crate::store::StoreOptions {
            durability: crate::config::Durability::Normal,
            read_pool_size: 1,
            read_pool_idle: 1,
        };
        let (store, threads) =
            crate::store::Store::open(&dir.path().join("moss.db"), &opts).unwrap();
        let caps = Capsules::new(
            store,
            std::sync::Arc::new(crate::config::Config::default()),
            &home,
        );
        for i in 0..n {
            caps.store(moss_client::StoreRequest {
                capsule_text: format!(
                    "## Objective\n{i}\n## Current status\nx\n## Decisions\nx\n\
                     ## Next actions\nx\n## Key locations\nx\n## Open questions\nx\n"
                ),
                ..Default::default()
            })
            .await
            .unwrap();
        }
        (caps, threads, dir)
    }

    fn cancelled() -> Cancel {
        let (cancel, guard) = Cancel::new();
        drop(guard);
        cancel
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[tokio::test]
    async fn a_cancelled_export_removes_its_temp_file_and_keeps_the_target() {
        let (caps, threads, dir) = capsules_with(3).await;
        let exports = dir.path().join("exports");
        std::fs::write(exports.join("keep.jsonl"), "old\n").unwrap();
        let req = ExportRequest {
            path: Some("keep.jsonl".into()),
            ..Default::default()
        };
        let e = caps
            .export(req.clone(), cancelled(), Progress::none())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
        assert_eq!(e.0.message, "export cancelled: the client went away");
        assert_eq!(
            std::fs::read_to_string(exports.join("keep.jsonl")).unwrap(),
            "old\n"
        );
        assert_eq!(
            names_in(&exports),
            ["keep.jsonl"],
            "no temporary file remains"
        );
        // Not cancelled, the same export replaces the file.
        let r = caps
            .export(req, Cancel::never(), Progress::tracked())
            .await
            .unwrap();
        assert_eq!(r.count, 3);
        assert_eq!(names_in(&exports), ["keep.jsonl"]);
        drop(caps);
        drop(threads);
    }

    #[tokio::test]
    async fn a_cancelled_import_writes_nothing() {
        let (caps, threads, dir) = capsules_with(4).await;
        caps.export(
            ExportRequest {
                path: Some("all.jsonl".into()),
                ..Default::default()
            },
            Cancel::never(),
            Progress::none(),
        )
        .await
        .unwrap();
        let req = ImportRequest {
            path: "all.jsonl".into(),
            mode: Some(ImportMode::Rename),
        };
        let e = caps
            .import(req.clone(), cancelled(), Progress::none())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
        assert_eq!(e.0.message, "import cancelled: the client went away");
        let progress = Progress::tracked();
        let r = caps
            .import(req, Cancel::never(), progress.clone())
            .await
            .unwrap();
        assert_eq!(
            (r.imported, r.renamed),
            (4, 4),
            "the cancelled run left nothing"
        );
        let p = progress.report().unwrap();
        assert_eq!((p.phase.as_str(), p.done, p.total), ("importing", 4, 4));
        drop(dir);
        drop(threads);
    }

    #[test]
    fn line_cap_covers_the_worst_escaped_capsule() {
        assert_eq!(line_cap(12_000), 1024 * 1024);
        assert!(line_cap(1_000_000) > 6_000_000);
    }
}
