//! `$MOSS_HOME` (default `~/.moss`): the directory that holds the database, the token, the lock
//! file, the config and the exports. The directory is 0700; the files in it 0600.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The locations under `$MOSS_HOME`.
#[derive(Debug, Clone)]
pub struct MossHome {
    pub dir: PathBuf,
}

impl MossHome {
    /// `$MOSS_HOME`, else `~/.moss`.
    pub fn from_env() -> anyhow::Result<MossHome> {
        if let Some(dir) = std::env::var_os("MOSS_HOME").filter(|v| !v.is_empty()) {
            return Ok(MossHome { dir: dir.into() });
        }
        let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).context(
            "neither MOSS_HOME nor HOME is set; set MOSS_HOME to the directory Moss should use",
        )?;
        Ok(MossHome {
            dir: PathBuf::from(home).join(".moss"),
        })
    }

    pub fn at(dir: impl Into<PathBuf>) -> MossHome {
        MossHome { dir: dir.into() }
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.join("moss.db")
    }

    pub fn token_path(&self) -> PathBuf {
        self.dir.join("token")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.dir.join("moss.db.lock")
    }

    /// Where exports go by default, and the one directory import/export may use unless the
    /// config allows others.
    pub fn exports_dir(&self) -> PathBuf {
        self.dir.join("exports")
    }

    /// Creates the exports directory (0700) if needed, and tightens its mode if it is looser.
    /// A symlink there is left alone: export and import refuse it with an explanation.
    pub fn ensure_exports_dir(&self) -> anyhow::Result<PathBuf> {
        let dir = self.exports_dir();
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(dir);
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        set_mode(&dir, 0o700)?;
        Ok(dir)
    }

    /// Creates the directory (0700) if needed, and tightens its mode if it is looser.
    pub fn ensure_dir(&self) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        set_mode(&self.dir, 0o700)
    }

    /// Reads the bearer token, generating it (0600) on first start.
    pub fn ensure_token(&self) -> anyhow::Result<String> {
        let path = self.token_path();
        match std::fs::read_to_string(&path) {
            Ok(t) if !t.trim().is_empty() => {
                set_mode(&path, 0o600)?;
                return Ok(t.trim().to_string());
            }
            Ok(_) => {
                std::fs::remove_file(&path).with_context(|| {
                    format!("cannot replace empty token file {}", path.display())
                })?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("no randomness for the token: {e}"))?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut file = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(f) => f,
            // Another process created it between our read and our create: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Ok(std::fs::read_to_string(&path)?.trim().to_string());
            }
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        };
        file.write_all(token.as_bytes())?;
        file.sync_all()?;
        Ok(token)
    }
}

/// An exclusive lock on the database, held for the daemon's lifetime. The file names the holder.
#[derive(Debug)]
pub struct DbLock {
    file: File,
}

impl DbLock {
    /// Takes the lock, or explains who holds it.
    pub fn acquire(path: &Path) -> anyhow::Result<DbLock> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot open lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another process".to_string()
                } else {
                    holder.to_string()
                };
                bail!(
                    "another Moss daemon already owns this database ({who}); lock file {}. \
                     Stop it first (`moss daemon stop`), or give this one its own MOSS_HOME.",
                    path.display()
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        Ok(DbLock { file })
    }

    /// Records who holds the lock, for the message a second daemon prints.
    pub fn describe_holder(&mut self, text: &str) -> anyhow::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(text.as_bytes())?;
        self.file.sync_data()?;
        Ok(())
    }
}

impl Drop for DbLock {
    fn drop(&mut self) {
        // Empty the file so a stale holder description never misleads; the lock itself is
        // released when the file closes.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// Sets a file's permission bits.
pub fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set mode {mode:o} on {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_generated_once_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let home = MossHome::at(dir.path().join("m"));
        home.ensure_dir().unwrap();
        let t1 = home.ensure_token().unwrap();
        let t2 = home.ensure_token().unwrap();
        assert_eq!(t1, t2);
        assert_eq!(t1.len(), 64);
        let mode = std::fs::metadata(home.token_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(&home.dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let exports = home.ensure_exports_dir().unwrap();
        let mode = std::fs::metadata(exports).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn second_lock_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("moss.db.lock");
        let mut first = DbLock::acquire(&path).unwrap();
        first
            .describe_holder("pid 42, listening on 127.0.0.1:1")
            .unwrap();
        let err = DbLock::acquire(&path).unwrap_err().to_string();
        assert!(err.contains("pid 42"), "{err}");
        drop(first);
        DbLock::acquire(&path).unwrap();
    }
}
