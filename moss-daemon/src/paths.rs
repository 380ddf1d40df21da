//! Where export and import may touch the file system: the rules every memory's export and
//! import follow, so that a path refused for one is refused for all.
//!
//! - The file name ends in `.jsonl` (`.db` for a backup of the store).
//! - No `..` component anywhere.
//! - The file is directly inside an allowed directory: `$MOSS_HOME/exports/` or an
//!   `allowed_paths` entry, never in a subdirectory of one (no intermediate component to swap).
//!   A bare file name means `$MOSS_HOME/exports/<name>`; `~/` is the user's home directory.
//! - Neither the file nor its parent directory is a symlink; files are opened with `O_NOFOLLOW`.
//! - `allow_unsafe_paths` lifts the directory allow-list only: the extension, traversal and
//!   symlink rules still apply.
//!
//! Every refusal is `400 INVALID_REQUEST` with `details.rule` naming the rule and a message
//! saying how to fix the request.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use serde_json::json;

use crate::error::{Error, Result};

/// What a checked file holds, which sets the extension it must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// An export or import file: `.jsonl`.
    Jsonl,
    /// A backup of the whole store: `.db`.
    Backup,
}

/// The directories import/export may use, from the home and the config
/// ([`crate::config::Config::path_rules`]).
#[derive(Debug, Clone)]
pub struct PathRules {
    pub exports_dir: PathBuf,
    pub allowed_paths: Vec<PathBuf>,
    pub allow_unsafe_paths: bool,
}

/// A path that passed the rules: `dir` (an allowed directory, not a symlink) and `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedPath {
    pub dir: PathBuf,
    pub name: OsString,
}

impl CheckedPath {
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }
}

/// A file-system failure on `path` while `what` (e.g. "writing"): an internal error; the answer
/// names the step and the path, the log also has the cause.
/// The longest file name, in bytes (Linux, macOS).
const NAME_MAX: usize = 255;

pub fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::io(what, path, e)
}

fn refuse(rule: &str, path: &str, message: String) -> Error {
    Error::invalid(message).with_details(json!({ "field": "path", "rule": rule, "path": path }))
}

impl PathRules {
    /// Checks `given` against the rules. `create_exports_dir` creates `$MOSS_HOME/exports/`
    /// (0700) when the path lands there and it does not exist yet (export does; import need not).
    pub fn check(&self, given: &str, create_exports_dir: bool) -> Result<CheckedPath> {
        self.check_kind(given, create_exports_dir, FileKind::Jsonl)
    }

    /// [`PathRules::check`] for a file of `kind`: the same rules, with its extension.
    pub fn check_kind(
        &self,
        given: &str,
        create_exports_dir: bool,
        kind: FileKind,
    ) -> Result<CheckedPath> {
        let (ext, what) = match kind {
            FileKind::Jsonl => ("jsonl", "export files are JSONL"),
            FileKind::Backup => ("db", "backups are SQLite databases"),
        };
        if given.trim().is_empty() {
            return Err(refuse(
                "empty",
                given,
                "path is empty; give a file name such as backup.jsonl".into(),
            ));
        }
        if given.contains('\0') {
            return Err(refuse(
                "nul",
                given,
                "path contains a NUL byte; give a plain file name".into(),
            ));
        }
        let expanded = expand_home(given)?;
        if expanded.components().any(|c| c == Component::ParentDir) {
            return Err(refuse(
                "traversal",
                given,
                format!(
                    "path {given:?} contains `..` (directory traversal is refused); name the \
                     file directly, e.g. {}",
                    self.exports_dir.join("backup.jsonl").display()
                ),
            ));
        }
        let Some(name) = expanded.file_name().map(|n| n.to_os_string()) else {
            return Err(refuse(
                "file_name",
                given,
                format!(
                    "path {given:?} names no file; end it with a file name such as backup.jsonl"
                ),
            ));
        };
        if name.len() > NAME_MAX {
            return Err(refuse(
                "file_name",
                given,
                format!(
                    "the file name is {} bytes; file names have at most {NAME_MAX}. Use a \
                     shorter name",
                    name.len()
                ),
            ));
        }
        if Path::new(&name).extension().is_none_or(|e| e != ext) {
            return Err(refuse(
                "extension",
                given,
                format!(
                    "path {given:?} must end in .{ext} ({what}); rename it, e.g. {}.{ext}",
                    Path::new(&name)
                        .file_stem()
                        .unwrap_or(&name)
                        .to_string_lossy()
                ),
            ));
        }
        let dir = if expanded.is_absolute() {
            expanded
                .parent()
                .expect("an absolute path with a file name has a parent")
                .to_path_buf()
        } else if expanded.components().count() == 1 {
            self.exports_dir.clone()
        } else {
            return Err(refuse(
                "subdirectory",
                given,
                format!(
                    "relative path {given:?} has directory components; a relative path may \
                     only be a bare file name (it is placed in {}), otherwise give an absolute \
                     path directly inside an allowed directory",
                    self.exports_dir.display()
                ),
            ));
        };
        if create_exports_dir && dir == self.exports_dir && !dir.exists() {
            std::fs::create_dir_all(&dir)
                .and_then(|()| {
                    std::fs::set_permissions(
                        &dir,
                        std::os::unix::fs::PermissionsExt::from_mode(0o700),
                    )
                })
                .map_err(|e| io_error("creating", &dir, e))?;
        }
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(refuse(
                    "symlink_parent",
                    given,
                    format!(
                        "directory {} is a symlink; symlinked directories are refused even with \
                         allow_unsafe_paths. Use the real directory{}",
                        dir.display(),
                        std::fs::canonicalize(&dir)
                            .map(|c| format!(" ({})", c.display()))
                            .unwrap_or_default()
                    ),
                ));
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(refuse(
                    "not_a_directory",
                    given,
                    format!(
                        "{} is not a directory; give a path inside a directory",
                        dir.display()
                    ),
                ));
            }
            Err(_) => {
                return Err(refuse(
                    "missing_directory",
                    given,
                    format!(
                        "directory {} does not exist; create it first (and list it in \
                         allowed_paths) or use {}",
                        dir.display(),
                        self.exports_dir.display()
                    ),
                ));
            }
        }
        if !self.allow_unsafe_paths {
            self.check_allowed(&dir, given)?;
        }
        let checked = CheckedPath { dir, name };
        if let Ok(m) = std::fs::symlink_metadata(checked.path()) {
            if m.file_type().is_symlink() {
                return Err(refuse(
                    "symlink_file",
                    given,
                    format!(
                        "{} is a symlink; symlinked files are refused even with \
                         allow_unsafe_paths. Remove the link or use the file it points to",
                        checked.path().display()
                    ),
                ));
            }
            if !m.is_file() {
                return Err(refuse(
                    "not_a_file",
                    given,
                    format!(
                        "{} exists and is not a regular file; choose another file name",
                        checked.path().display()
                    ),
                ));
            }
        }
        Ok(checked)
    }

    /// `dir` must be the exports directory or an `allowed_paths` entry (compared after
    /// resolving each, so `/tmp` vs `/private/tmp` spellings agree).
    fn check_allowed(&self, dir: &Path, given: &str) -> Result<()> {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let dir_real = real(dir);
        let allowed: Vec<PathBuf> = std::iter::once(&self.exports_dir)
            .chain(&self.allowed_paths)
            .map(|p| real(p))
            .collect();
        if allowed.contains(&dir_real) {
            return Ok(());
        }
        if let Some(parent) = allowed.iter().find(|a| dir_real.starts_with(a)) {
            return Err(refuse(
                "subdirectory",
                given,
                format!(
                    "{} is a subdirectory of the allowed directory {}; files must be directly \
                     in an allowed directory. Move the file up, or add {} to allowed_paths",
                    dir.display(),
                    parent.display(),
                    dir.display()
                ),
            ));
        }
        Err(refuse(
            "allowed_paths",
            given,
            format!(
                "{} is not an allowed directory for import/export (allowed: {}). Use {}, add the \
                 directory to allowed_paths in config.json, or set allow_unsafe_paths: true",
                dir.display(),
                allowed
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                self.exports_dir.display()
            ),
        ))
    }

    /// Where an export goes when no path is given:
    /// `$MOSS_HOME/exports/<workspace>-<UTC timestamp>.jsonl` (`all-…` without a workspace), with
    /// `-1`, `-2`, … appended if that file exists, so a default export never replaces another.
    pub fn default_export(
        &self,
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
            let checked = self.check(&name, true)?;
            if !checked.path().exists() {
                return Ok(checked);
            }
            n += 1;
        }
    }
}

/// `~` and `~/…` are the user's home directory; `~user` is not supported.
fn expand_home(given: &str) -> Result<PathBuf> {
    let rest = match given.strip_prefix('~') {
        None => return Ok(PathBuf::from(given)),
        Some(rest) => rest,
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err(refuse(
            "home",
            given,
            format!("path {given:?}: `~user` is not supported; give an absolute path"),
        ));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            refuse(
                "home",
                given,
                "path starts with `~` but the daemon has no HOME; give an absolute path".into(),
            )
        })?;
    Ok(PathBuf::from(home).join(rest.trim_start_matches('/')))
}

/// Opens a checked file for reading without following a symlink in its last component, and
/// makes sure it is a regular file.
pub fn open_for_import(path: &CheckedPath) -> Result<File> {
    let p = path.path();
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&p)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::not_found(format!(
                "import file {} does not exist; check the path (a bare file name is looked up \
                 in the exports directory)",
                p.display()
            )),
            _ if e.raw_os_error() == Some(libc::ELOOP) => refuse(
                "symlink_file",
                &p.display().to_string(),
                format!(
                    "{} is a symlink; symlinked files are refused. Use the file it points to",
                    p.display()
                ),
            ),
            std::io::ErrorKind::PermissionDenied => Error::invalid(format!(
                "the daemon may not read {}; fix its permissions",
                p.display()
            )),
            _ => io_error("opening", &p, e),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| io_error("reading metadata of", &p, e))?;
    if !meta.is_file() {
        return Err(refuse(
            "not_a_file",
            &p.display().to_string(),
            format!(
                "{} is not a regular file; import reads JSONL files",
                p.display()
            ),
        ));
    }
    Ok(file)
}

/// A file name made from a workspace name for default export paths: ASCII letters, digits,
/// `-` and `_` kept; separators, dots, control and other characters become `_`; at most 64
/// characters; never empty, never `.` or `..`.
fn sanitize_file_stem(workspace: &str) -> String {
    let mut out: String = workspace
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let trimmed = out.trim_matches('_').to_string();
    if trimmed.is_empty() {
        out = "workspace".into();
    } else {
        out = trimmed;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(dir: &Path) -> PathRules {
        PathRules {
            exports_dir: dir.join("exports"),
            allowed_paths: vec![dir.join("extra")],
            allow_unsafe_paths: false,
        }
    }

    fn rule_of(e: Error) -> String {
        e.0.details["rule"].as_str().unwrap_or("").to_string()
    }

    #[test]
    fn bare_names_land_in_exports_and_absolute_paths_must_be_allowed() {
        let t = tempfile::tempdir().unwrap();
        let r = rules(t.path());
        std::fs::create_dir_all(t.path().join("extra/sub")).unwrap();
        std::fs::create_dir_all(t.path().join("other")).unwrap();
        let c = r.check("b.jsonl", true).unwrap();
        assert_eq!(c.path(), t.path().join("exports/b.jsonl"));
        let extra = t.path().join("extra/x.jsonl");
        assert_eq!(
            r.check(extra.to_str().unwrap(), false).unwrap().path(),
            extra
        );
        let sub = t.path().join("extra/sub/x.jsonl");
        assert_eq!(
            rule_of(r.check(sub.to_str().unwrap(), false).unwrap_err()),
            "subdirectory"
        );
        let other = t.path().join("other/x.jsonl");
        assert_eq!(
            rule_of(r.check(other.to_str().unwrap(), false).unwrap_err()),
            "allowed_paths"
        );
        let unsafe_rules = PathRules {
            allow_unsafe_paths: true,
            ..r.clone()
        };
        assert!(unsafe_rules.check(other.to_str().unwrap(), false).is_ok());
        assert_eq!(
            rule_of(r.check("a/b.jsonl", false).unwrap_err()),
            "subdirectory"
        );
    }

    #[test]
    fn extension_and_traversal_hold_even_when_unsafe() {
        let t = tempfile::tempdir().unwrap();
        let r = PathRules {
            allow_unsafe_paths: true,
            ..rules(t.path())
        };
        assert_eq!(rule_of(r.check("b.json", true).unwrap_err()), "extension");
        assert_eq!(rule_of(r.check("b.JSONL", true).unwrap_err()), "extension");
        let trav = format!("{}/exports/../exports/b.jsonl", t.path().display());
        assert_eq!(rule_of(r.check(&trav, true).unwrap_err()), "traversal");
        assert_eq!(
            rule_of(r.check("../b.jsonl", true).unwrap_err()),
            "traversal"
        );
        assert_eq!(rule_of(r.check("", true).unwrap_err()), "empty");
    }

    #[test]
    fn symlinks_are_refused_even_when_unsafe() {
        let t = tempfile::tempdir().unwrap();
        let r = PathRules {
            allow_unsafe_paths: true,
            ..rules(t.path())
        };
        std::fs::create_dir_all(t.path().join("real")).unwrap();
        std::fs::write(t.path().join("real/x.jsonl"), "").unwrap();
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
        std::os::unix::fs::symlink(t.path().join("real/x.jsonl"), t.path().join("real/l.jsonl"))
            .unwrap();
        let via_dir = t.path().join("link/x.jsonl");
        assert_eq!(
            rule_of(r.check(via_dir.to_str().unwrap(), false).unwrap_err()),
            "symlink_parent"
        );
        let link = t.path().join("real/l.jsonl");
        assert_eq!(
            rule_of(r.check(link.to_str().unwrap(), false).unwrap_err()),
            "symlink_file"
        );
        let c = CheckedPath {
            dir: t.path().join("real"),
            name: "l.jsonl".into(),
        };
        assert_eq!(rule_of(open_for_import(&c).unwrap_err()), "symlink_file");
    }

    #[test]
    fn workspace_names_cannot_escape_the_file_name() {
        assert_eq!(sanitize_file_stem("../../etc/passwd"), "etc_passwd");
        assert_eq!(sanitize_file_stem(".."), "workspace");
        assert_eq!(sanitize_file_stem("a/b\\c\n\u{7}d"), "a_b_c__d");
        assert_eq!(sanitize_file_stem("My Project"), "My_Project");
        assert_eq!(sanitize_file_stem(&"x".repeat(100)).len(), 64);
    }
}
