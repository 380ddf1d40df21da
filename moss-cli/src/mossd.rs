//! Where the daemon comes from: the `mossd` binary `moss` starts, and the home it runs in.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::probe::Unavailable;

/// `mossd` next to this `moss` binary, else the first on `PATH`.
pub fn find_mossd() -> anyhow::Result<PathBuf> {
    if let Ok(exe) = std::env::current_exe() {
        let exe = exe.canonicalize().unwrap_or(exe);
        let beside = exe.with_file_name("mossd");
        if is_executable(&beside) {
            return Ok(beside);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("mossd");
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(Unavailable(
        "cannot find mossd: it is neither next to this moss binary nor on PATH. Install it \
         (`cargo install --path moss-daemon`) or add its directory to PATH"
            .into(),
    )
    .into())
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Creates `$MOSS_HOME` (0700) if needed.
pub fn ensure_home(home: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(home).with_context(|| format!("cannot create {}", home.display()))?;
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot set mode 700 on {}", home.display()))
}
