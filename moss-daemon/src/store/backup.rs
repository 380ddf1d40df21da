//! Backups of the whole store, and putting one back.
//!
//! A backup is SQLite's online backup of `moss.db` run on a connection of the read pool, in one
//! step: one read transaction copies every page, so the file is the store as of one commit,
//! every family alike. In WAL mode a reader never blocks the writer, so writes go on while it
//! copies (they land in the WAL; its checkpoint waits for the copy to end). `VACUUM INTO`
//! would also give one snapshot, but it rebuilds every table and may renumber the rowids that
//! link `moss.db` to the full-text index; the backup API copies pages as they are. The copy is
//! written to a temporary file (0600) next to the target, switched out of WAL mode so that it
//! is one self-contained file, fsynced and renamed over the target.
//!
//! `moss-fts.db`, the full-text index, is not in a backup: it is derived, and rebuilt from the
//! tables at the next start after a restore.
//!
//! A restore (`mossd --restore-backup PATH`, which `moss restore-backup` runs) takes the
//! database's lock, so no daemon serves it meanwhile; checks the file is a Moss database
//! (`PRAGMA integrity_check` is `ok`, its `user_version` is one this build knows, its tables are
//! there); folds the current store's WAL into it and keeps it aside as
//! `moss.db.before-restore-<timestamp>`; drops the full-text index; and copies the backup in
//! (0600, through a temporary file and a rename).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use moss_client::daemon::BackupResponse;
use rusqlite::{Connection, OpenFlags};
use serde_json::json;

use crate::error::{Error, Result};
use crate::paths::{CheckedPath, io_error};

/// The tables a Moss database has whatever its families hold.
const EXPECTED_TABLES: &[&str] = &[
    "capsules",
    "store_sequence",
    "reasoning_entries",
    "task_items",
];

/// Copies the store `conn` reads into `target` as one consistent snapshot. See the module doc.
pub fn backup(
    conn: &Connection,
    target: &CheckedPath,
    backed_up_at: i64,
) -> Result<BackupResponse> {
    let final_path = target.path();
    let tmp = Temp(target.dir.join(format!(
        ".{}.{}.tmp",
        target.name.to_string_lossy(),
        ulid::Ulid::generate()
    )));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp.0)
        .map_err(|e| io_error("creating", &tmp.0, e))?;
    let mut dest = Connection::open(&tmp.0)
        .map_err(|e| Error::internal(&format!("opening {}", tmp.0.display()), e))?;
    {
        let copy = rusqlite::backup::Backup::new(conn, &mut dest)?;
        // All pages in one step: one read transaction, so one snapshot, and no restart when
        // the writer commits meanwhile (which a stepwise copy from another connection does).
        copy.step(-1)?;
    }
    dest.pragma_update(None, "journal_mode", "DELETE")?;
    let (schema_version, sequence) = facts(&dest)?;
    dest.close()
        .map_err(|(_, e)| Error::internal("closing the backup", e))?;
    let file = File::open(&tmp.0).map_err(|e| io_error("opening", &tmp.0, e))?;
    file.sync_all()
        .map_err(|e| io_error("syncing", &tmp.0, e))?;
    let bytes = file
        .metadata()
        .map_err(|e| io_error("reading", &tmp.0, e))?
        .len();
    drop(file);
    if std::fs::symlink_metadata(&final_path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::invalid(format!(
            "{} became a symlink during the backup; symlinked files are refused",
            final_path.display()
        ))
        .with_details(json!({ "field": "path", "rule": "symlink_file" })));
    }
    std::fs::rename(&tmp.0, &final_path).map_err(|e| io_error("renaming into", &final_path, e))?;
    std::mem::forget(tmp);
    File::open(&target.dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("syncing directory", &target.dir, e))?;
    Ok(BackupResponse {
        restore: format!("moss restore-backup {}", final_path.display()),
        path: final_path.display().to_string(),
        bytes,
        schema_version,
        sequence,
        backed_up_at,
    })
}

/// A temporary file, removed on drop unless forgotten.
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let mut journal = self.0.clone().into_os_string();
        journal.push("-journal");
        let _ = std::fs::remove_file(journal);
    }
}

/// A database's schema version and sequence.
fn facts(conn: &Connection) -> Result<(u32, i64)> {
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let seq: i64 = conn
        .query_row("SELECT value FROM store_sequence WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap_or(0);
    Ok((version, seq))
}

/// Checks that `path` is a Moss database this build can open (schema version 1 to `latest`):
/// `(schema_version, sequence)`.
pub fn check_backup(path: &Path, latest: u32) -> Result<(u32, i64)> {
    let bad = |why: String| {
        Error::invalid(format!(
            "{} is not a Moss backup this build can restore: {why}",
            path.display()
        ))
        .with_details(json!({ "field": "path" }))
    };
    if !path.is_file() {
        return Err(bad("no such file".into()));
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| bad(e.to_string()))?;
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| bad(e.to_string()))?;
    if check != "ok" {
        return Err(bad(format!("integrity_check says {check:?}")));
    }
    let version: u32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| bad(e.to_string()))?;
    if version == 0 || version > latest {
        return Err(bad(format!(
            "its schema version is {version}; this build knows 1 to {latest}"
        )));
    }
    for table in EXPECTED_TABLES {
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .map_err(|e| bad(e.to_string()))?;
        if n == 0 {
            return Err(bad(format!("it has no {table} table")));
        }
    }
    facts(&conn).map_err(|e| bad(e.0.message))
}

/// What a restore did.
#[derive(Debug)]
pub struct Restored {
    /// Where the store that was replaced now is.
    pub kept_aside: PathBuf,
    pub schema_version: u32,
    pub sequence: i64,
}

/// Puts the backup at `backup` in place of the database at `db` (no daemon may serve it: the
/// caller holds its lock). See the module doc. `stamp` names the copy kept aside.
pub fn restore(db: &Path, backup: &Path, stamp: &str, latest: u32) -> Result<Restored> {
    let fts = super::fts::index_path(db);
    let (schema_version, sequence) = check_backup(backup, latest)?;
    let dir = db.parent().expect("the database is in a directory");
    // Never over an earlier one (a restore within the same second): `-1`, `-2`, … appended.
    let kept_aside = (0..)
        .map(|n| {
            let mut p = db.as_os_str().to_owned();
            p.push(format!(".before-restore-{stamp}"));
            if n > 0 {
                p.push(format!("-{n}"));
            }
            PathBuf::from(p)
        })
        .find(|p| !p.exists())
        .expect("some name is free");
    if db.exists() {
        // Fold the WAL in, so the file kept aside is the whole store on its own.
        let conn = Connection::open(db)
            .map_err(|e| Error::internal(&format!("opening {}", db.display()), e))?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        conn.pragma_update(None, "journal_mode", "DELETE")?;
        drop(conn);
        std::fs::rename(db, &kept_aside).map_err(|e| io_error("moving aside", db, e))?;
    }
    for suffix in ["-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut p = fts.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    let tmp = Temp(dir.join(format!(".moss.db.restore.{}.tmp", ulid::Ulid::generate())));
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp.0)
        .map_err(|e| io_error("creating", &tmp.0, e))?;
    let mut src = File::open(backup).map_err(|e| io_error("opening", backup, e))?;
    std::io::copy(&mut src, &mut out).map_err(|e| io_error("copying into", &tmp.0, e))?;
    out.sync_all().map_err(|e| io_error("syncing", &tmp.0, e))?;
    drop(out);
    std::fs::rename(&tmp.0, db).map_err(|e| io_error("renaming into", db, e))?;
    std::mem::forget(tmp);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("syncing directory", dir, e))?;
    Ok(Restored {
        kept_aside,
        schema_version,
        sequence,
    })
}

/// Puts the backup at `backup` in place of the SQLite store `db` (its lock file `lock` held
/// meanwhile, so never under a running daemon); see `crate::server::restore_home`, which finds
/// them in a home.
pub fn restore_into(
    db: &Path,
    lock_path: &Path,
    backup: &Path,
    latest: u32,
) -> anyhow::Result<String> {
    let backup = std::path::absolute(backup).unwrap_or_else(|_| backup.to_path_buf());
    let db = db.to_path_buf();
    let mut lock = crate::home::DbLock::acquire(lock_path)?;
    lock.describe_holder(&format!("restoring a backup, pid {}", std::process::id()))?;
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H%M%S").to_string();
    let r = restore(&db, &backup, &stamp, latest).map_err(|e| anyhow::anyhow!(e.0.message))?;
    Ok(format!(
        "restored {} into {} (schema version {}, sequence {}); the store it replaced is kept \
         as {}. The full-text index is rebuilt at the next start. To undo: moss \
         restore-backup {}",
        backup.display(),
        db.display(),
        r.schema_version,
        r.sequence,
        r.kept_aside.display(),
        r.kept_aside.display(),
    ))
}
