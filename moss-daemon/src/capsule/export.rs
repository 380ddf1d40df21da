//! `capsule_export`: the selected capsules written to a JSONL file (the format is described in
//! [`super::transfer`]).
//!
//! Export streams rows from one read transaction (a consistent snapshot, constant memory) into
//! a temporary file in the target directory (0600), fsyncs it and renames it over the target: a
//! failure or cancellation removes the temporary file and leaves an existing target intact.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use moss_client::capsule::{Capsule, ExportRequest, ExportResponse};
use serde::Serialize;
use serde_json::json;

use super::Capsules;
use super::query::{FULL_COLS, capsule_from_row};
use super::transfer::SCHEMA_VERSION;
use crate::cancel::{self, Cancel};
use crate::error::{Error, Result};
use crate::names;
use crate::paths::{CheckedPath, io_error};
use crate::progress::Progress;
use crate::sql_filter::Filter;
use crate::store::engine::{Db, Engine};
use crate::store::now;

#[derive(Serialize)]
struct Header {
    #[serde(rename = "_moss_export")]
    moss_export: bool,
    schema_version: &'static str,
    exported_at: i64,
}

/// One line of an export, fields in the order of the `capsules` columns (`tags` as an array,
/// no `seq`).
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
    /// The plan or task it was handed off for; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<String>,
    /// The capsule's evidence, content included; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<serde_json::Value>,
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
            task: c.task,
            evidence: None,
        }
    }
}

impl Capsules {
    /// `capsule_export`: writes the selected capsules to a JSONL file. Dropping the future (the
    /// client went away) cancels it and leaves no file behind.
    pub async fn export(&self, req: ExportRequest, progress: Progress) -> Result<ExportResponse> {
        cancel::on_drop(|cancel| self.export_until(req, cancel, progress)).await
    }

    /// `capsule_export`, stopped when `cancel` fires.
    async fn export_until(
        &self,
        req: ExportRequest,
        cancel: Cancel,
        progress: Progress,
    ) -> Result<ExportResponse> {
        let workspace = match req.workspace.as_deref().filter(|w| !w.trim().is_empty()) {
            Some(w) => Some(names::workspace(Some(w))?),
            None => None,
        };
        let mut selection = Filter::default();
        if let Some(ws) = &workspace {
            selection.add("workspace_norm = ?", ws.norm.clone());
        }
        if !req.include_deleted.unwrap_or(false) {
            selection.raw("deleted_at IS NULL");
        }
        let rules = self.paths.clone();
        self.store
            .readers
            .run_db(move |db| {
                let exported_at = now();
                let target = match req.path.as_deref() {
                    Some(p) => rules.check(p, true)?,
                    None => rules
                        .default_export(workspace.as_ref().map(|w| w.norm.as_str()), exported_at)?,
                };
                write_export(db, &target, &selection, exported_at, &cancel, &progress)
            })
            .await
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

/// The temporary file's name: `.<target>.<ulid>.tmp`, the target's name cut (on a character
/// boundary) so that the whole stays within the 255 bytes a file name may have: a target name
/// near that limit is valid, and its temporary name must be too.
fn temp_name(target: &str) -> String {
    const NAME_MAX: usize = 255;
    // "." + "." + 26 characters of ULID + ".tmp"
    let room = NAME_MAX - (2 + 26 + 4);
    let mut end = target.len().min(room);
    while !target.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.{}.tmp", &target[..end], ulid::Ulid::generate())
}

/// A read transaction (one snapshot for several statements), rolled back when dropped.
struct Snapshot<'c>(Db<'c>);

impl<'c> Snapshot<'c> {
    fn begin(db: Db<'c>) -> Result<Snapshot<'c>> {
        db.batch(match db.engine() {
            Engine::Sqlite => "BEGIN DEFERRED",
            // Each statement of a READ COMMITTED transaction sees its own snapshot.
            Engine::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        })?;
        Ok(Snapshot(db))
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let _ = self.0.batch("ROLLBACK");
    }
}

fn write_export(
    db: Db<'_>,
    target: &CheckedPath,
    selection: &Filter,
    exported_at: i64,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<ExportResponse> {
    let final_path = target.path();
    let tmp = TempFile {
        path: target.dir.join(temp_name(&target.name.to_string_lossy())),
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

    let filter = selection.sql();
    let args = selection.bind();
    // One snapshot for the count and the rows; the transaction only reads.
    let tx = Snapshot::begin(db)?;
    let total: i64 = db.query_one(
        &format!("SELECT count(*) FROM capsules {filter}"),
        &args,
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
    // (PostgreSQL takes no index hint; its planner walks the primary key for the order.)
    let sql = match db.engine() {
        Engine::Sqlite => format!(
            "SELECT {FULL_COLS}, \
           (SELECT evidence_json FROM capsule_evidence WHERE capsule_id = capsules.id) \
         FROM capsules INDEXED BY sqlite_autoindex_capsules_1 {filter} ORDER BY id"
        ),
        Engine::Postgres => format!(
            "SELECT {FULL_COLS}, \
               (SELECT evidence_json FROM capsule_evidence WHERE capsule_id = capsules.id) \
             FROM capsules {filter} ORDER BY id"
        ),
    };
    let mut count: i64 = 0;
    // The evidence column comes right after FULL_COLS.
    let evidence_at = FULL_COLS.split(',').count();
    // A failure that is not the database's, which stops the rows.
    let mut failed: Option<Error> = None;
    db.query_each(&sql, &args, |row| {
        let written = (|| -> Result<()> {
            cancel.check("export")?;
            let mut record = ExportRecord::from(capsule_from_row(row, true)?);
            record.evidence = row
                .get::<Option<String>>(evidence_at)?
                .and_then(|j| serde_json::from_str(&j).ok());
            serde_json::to_writer(&mut out, &record)
                .map_err(|e| Error::internal("encoding an export record", e))?;
            out.write_all(b"\n").map_err(write_err)?;
            Ok(())
        })();
        match written {
            Ok(()) => {
                count += 1;
                progress.set(count as u64);
                Ok(true)
            }
            Err(e) => {
                failed = Some(e);
                Ok(false)
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn temporary_names_fit_in_a_file_name() {
        for target in [
            "a.jsonl".to_string(),
            "x".repeat(249) + ".jsonl",
            "é".repeat(124) + ".jsonl",
        ] {
            let name = super::temp_name(&target);
            assert!(name.len() <= 255, "{} bytes for {target}", name.len());
            assert!(name.starts_with('.') && name.ends_with(".tmp"), "{name}");
        }
        assert!(super::temp_name("a.jsonl").starts_with(".a.jsonl."));
    }

    use moss_client::ErrorCode;

    use super::*;
    use crate::capsule::transfer::fixtures::{cancelled, capsules_with};

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
            .export_until(req.clone(), cancelled(), Progress::none())
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
            .export_until(req, Cancel::never(), Progress::tracked())
            .await
            .unwrap();
        assert_eq!(r.count, 3);
        assert_eq!(names_in(&exports), ["keep.jsonl"]);
        drop(caps);
        drop(threads);
    }
}
