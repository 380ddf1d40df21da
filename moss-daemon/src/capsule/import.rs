//! `capsule_import`: a JSONL file written by export (the format is described in
//! [`super::transfer`]) applied in one transaction, with the collision modes and cancellation
//! when the client goes away.
//!
//! Import checks the whole file first, off the writer (size cap, per-line cap, JSON, field
//! bounds), so a bad file is refused before any write. Then one writer job reads it again and
//! applies every record in one savepoint: all of it commits, or none of it (collisions in mode
//! "error", an ambiguous record in mode "replace", cancellation). Normalized names, character
//! counts and token estimates are recomputed with the same rules as `capsule_store`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use moss_client::ErrorCode;
use moss_client::capsule::{ImportMode, ImportRecordError, ImportRequest, ImportResponse};
use serde::Deserialize;
use serde_json::json;

use super::transfer::{SCHEMA_MAJOR, readable};
use super::{Capsules, NewCapsule, RowWrite, Times, name_holder, query, write_row};
use crate::cancel::{self, Cancel};
use crate::error::{Error, Result};
use crate::paths::{io_error, open_for_import};
use crate::progress::Progress;
use crate::store::engine::Db;
use crate::store::{WriteCtx, now};
use crate::{bounds, names, tags};

/// Skipped records listed in an import's `errors` at most (all are counted in `skipped`).
const MAX_LISTED_ERRORS: usize = 100;
/// Longest id accepted on import.
const MAX_ID_CHARS: usize = 200;

/// The longest line import reads: a record of `capsule_max_chars` characters and the most
/// evidence a capsule keeps, each character escaped to six bytes at worst (`\u0001`), plus room
/// for the other fields; at least 1 MiB.
pub fn line_cap(capsule_max_chars: usize) -> usize {
    use super::evidence::{MAX_CONTENT_CHARS, MAX_ITEMS, MAX_REF_CHARS, MAX_TYPE_CHARS};
    let evidence = MAX_ITEMS * (MAX_CONTENT_CHARS + MAX_REF_CHARS + MAX_TYPE_CHARS + 64);
    (capsule_max_chars.saturating_add(evidence).saturating_mul(6) + 64 * 1024).max(1024 * 1024)
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
    #[serde(default)]
    task: Option<String>,
    #[serde(default)]
    evidence: Option<Vec<moss_client::capsule::Evidence>>,
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
    /// Lacks `id` or `workspace_raw`: skipped (the import goes on) and listed in `errors` with this
    /// reason.
    Skipped(String),
}

impl Capsules {
    /// `capsule_import`: reads a JSONL file and applies it in one transaction. Dropping the
    /// future (the client went away) cancels it, and nothing is written.
    pub async fn import(&self, req: ImportRequest, progress: Progress) -> Result<ImportResponse> {
        cancel::on_drop(|cancel| self.import_until(req, cancel, progress)).await
    }

    /// `capsule_import`, stopped when `cancel` fires.
    async fn import_until(
        &self,
        req: ImportRequest,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<ImportResponse> {
        let mode = req.mode.unwrap_or_default();
        let keep = self.config.capsule_versions;
        let rules = self.paths.clone();
        let tokenizer = self.config.tokenizer;
        let limits = Limits {
            max_bytes: self.config.max_import_bytes,
            line_cap: line_cap(self.config.capsule_max_chars),
        };
        let check_cancel = cancel.clone();
        let check_progress = progress.clone();
        let (path, file, records, tokens) = tokio::task::spawn_blocking(move || {
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
            let mut tokens: Vec<(i64, i64)> = Vec::new();
            read_lines(
                &mut file,
                &limits,
                &target.path(),
                &check_cancel,
                |_, line, read| {
                    // Token counts are taken here, off the writer, and kept (16 bytes a record):
                    // a real tokenizer costs 100-300 µs a record.
                    if let Line::Record(r) = parse_line(line, t, Some(tokenizer))? {
                        records += 1;
                        tokens.push((r.capsule.chars, r.capsule.tokens));
                    }
                    check_progress.set(read);
                    Ok(())
                },
            )?;
            Ok((target.path(), file, records, tokens))
        })
        .await
        .map_err(|e| Error::internal("checking the import file", e))??;

        self.store
            .writer
            .run(move |ctx| {
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
                    unlinked: 0,
                    errors: Vec::new(),
                };
                let t = now();
                let mut done = 0u64;
                read_lines(&mut file, &limits, &path, &cancel, |line_no, line, _| {
                    match parse_line(line, t, None)? {
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
                        Line::Record(mut r) => {
                            // Counted by the first pass; a record that is not the one counted
                            // there (the file changed since) is counted now.
                            r.capsule.tokens = match tokens.get(done as usize) {
                                Some(&(chars, n)) if chars == r.capsule.chars => n,
                                _ => tokenizer.count(&r.capsule.text),
                            };
                            apply(ctx, *r, mode, keep, &mut out)?;
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

#[derive(Clone, Copy)]
struct Limits {
    max_bytes: u64,
    line_cap: usize,
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

/// One line of an import file. A record's `tokens` is counted with `tokenizer`, or left at 0
/// for the caller to fill.
fn parse_line(bytes: &[u8], t: i64, tokenizer: Option<crate::tokens::Tokenizer>) -> Result<Line> {
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
            && !readable(v)
        {
            return Err(bad(
                Some("schema_version"),
                format!(
                    "the header's schema_version {v:?} is not supported (this Moss reads \
                     {SCHEMA_MAJOR}.x); export again with this version of Moss"
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
    let workspace = names::workspace(Some(workspace_raw)).map_err(field_err("workspace_raw"))?;
    let name = names::name(raw.name_raw.as_deref()).map_err(field_err("name_raw"))?;
    let title = bounds::title(raw.title.as_deref()).map_err(field_err("title"))?;
    let tags = tags::clean(raw.tags.as_deref()).map_err(field_err("tags"))?;
    let source = bounds::handle("source", raw.source.as_deref()).map_err(field_err("source"))?;
    let run_id = bounds::handle("run_id", raw.run_id.as_deref()).map_err(field_err("run_id"))?;
    let phase = bounds::handle("phase", raw.phase.as_deref()).map_err(field_err("phase"))?;
    let role = bounds::handle("role", raw.role.as_deref()).map_err(field_err("role"))?;
    let task = super::handoff::task_value(raw.task.as_deref()).map_err(field_err("task"))?;
    let evidence_json = super::evidence::to_json(raw.evidence.as_deref()).map_err(|e| {
        let field = e.0.details["field"]
            .as_str()
            .unwrap_or("evidence")
            .to_string();
        bad(Some(&field), e.0.message)
    })?;
    let text = raw.capsule_text.unwrap_or_default();
    let created_at = raw.created_at.unwrap_or(t);
    Ok(Line::Record(Box::new(Record {
        id: id.to_string(),
        capsule: NewCapsule {
            workspace,
            name,
            title,
            chars: text.chars().count() as i64,
            tokens: tokenizer.map_or(0, |k| k.count(&text)),
            text,
            tags_json: tags::to_json(tags.as_deref()),
            source,
            run_id,
            phase,
            role,
            task,
            based_on_json: None,
            evidence_json,
        },
        times: Times {
            created_at,
            updated_at: raw.updated_at.unwrap_or(created_at),
            deleted_at: raw.deleted_at,
        },
    })))
}

/// Writes one record according to `mode`, which decides what an id or active name already taken
/// does: `error` refuses, `replace` overwrites and keeps the id, `rename` imports alongside.
fn apply(
    ctx: &WriteCtx,
    r: Record,
    mode: ImportMode,
    keep: u32,
    out: &mut ImportResponse,
) -> Result<()> {
    let db = ctx.db();
    let id_taken = db
        .query_opt(
            "SELECT 1 FROM capsules WHERE id = ?1",
            crate::db_params![&r.id],
            |_| Ok(()),
        )?
        .is_some();
    // Only an active record can collide by name: the unique handle excludes soft-deleted rows.
    let name_taken_by: Option<String> = match r.times.deleted_at {
        None => name_holder(db, &r.capsule)?.map(|holder| holder.id),
        Some(_) => None,
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
    let (how, id, capsule) = match mode {
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
            if let Some(holder) = name_taken_by {
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
            (RowWrite::Insert, r.id, r.capsule)
        }
        ImportMode::Replace => match (id_taken, name_taken_by) {
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
                out.replaced += 1;
                (RowWrite::Overwrite, r.id, r.capsule)
            }
            (false, Some(holder)) => {
                out.replaced += 1;
                (RowWrite::Overwrite, holder, r.capsule)
            }
            (false, None) => (RowWrite::Insert, r.id, r.capsule),
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
            if name_taken_by.is_some()
                && let Some((raw, _)) = &capsule.name
            {
                capsule.name = Some(free_name(db, &capsule.workspace.norm, raw)?);
                renamed = true;
            }
            if renamed {
                out.renamed += 1;
            }
            (RowWrite::Insert, id, capsule)
        }
    };
    // A link to a plan or task the workspace does not hold is dropped, and counted.
    let mut capsule = capsule;
    if let Some(task) = &capsule.task
        && !crate::tasks::interface::exists(db, &capsule.workspace.norm, task)?
    {
        capsule.task = None;
        out.unlinked += 1;
    }
    // An error from here fails the whole import: its counts are never seen.
    let versions = match how {
        RowWrite::Overwrite => super::save_version(db, &id, keep)?,
        RowWrite::Insert | RowWrite::InsertIfFree => super::Kept(None),
    };
    write_row(
        db,
        how,
        &id,
        &capsule,
        &r.times,
        ctx.next_seq(),
        versions.json(),
    )?;
    out.imported += 1;
    Ok(())
}

/// `name-1`, `name-2`, … : the first suffixed name no active capsule of the workspace holds.
pub(crate) fn free_name(db: Db<'_>, workspace_norm: &str, raw: &str) -> Result<(String, String)> {
    for n in 1.. {
        let candidate = format!("{raw}-{n}");
        let norm = names::normalize(&candidate);
        if query::active_by_name(db, workspace_norm, &norm)?.is_none() {
            return Ok((candidate, norm));
        }
    }
    unreachable!("some suffix is free")
}

#[cfg(test)]
mod tests {
    use moss_client::capsule::ExportRequest;

    use super::*;
    use crate::capsule::transfer::fixtures::{cancelled, capsules_with};

    fn record(line: &str) -> Result<Line> {
        parse_line(line.as_bytes(), 100, Some(crate::tokens::Tokenizer::Words))
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

    #[tokio::test]
    async fn a_cancelled_import_writes_nothing() {
        let (caps, threads, dir) = capsules_with(4).await;
        caps.export(
            ExportRequest {
                path: Some("all.jsonl".into()),
                ..Default::default()
            },
            Progress::none(),
        )
        .await
        .unwrap();
        let req = ImportRequest {
            path: "all.jsonl".into(),
            mode: Some(ImportMode::Rename),
        };
        let e = caps
            .import_until(req.clone(), cancelled(), Progress::none())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
        assert_eq!(e.0.message, "import cancelled: the client went away");
        let progress = Progress::tracked();
        let r = caps
            .import_until(req, Cancel::never(), progress.clone())
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
