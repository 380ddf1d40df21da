//! `moss backup` and `moss restore-backup`: a snapshot of the whole store, and putting one back;
//! `moss migrate`: a copy of the whole store in another database.

use anyhow::{Context, bail};
use moss_client::daemon::{BackupRequest, BackupResponse, MigrateRequest, MigrateResponse};

use crate::output::{self, Format};
use crate::{autostart, mossd, stop};

/// One key/value row per field.
impl output::Render for BackupResponse {}

/// The key/value rows, then the tables copied.
impl output::Render for MigrateResponse {}

/// `moss migrate --to TARGET`: `POST /migrate`.
pub async fn migrate(addr: &str, to: String, format: Format) -> anyhow::Result<()> {
    let client = autostart::ensure_running(addr).await?;
    let done = client.migrate(&MigrateRequest { to }).await?;
    output::print(&done, format)
}

/// `moss backup [PATH]`: `POST /backup`.
pub async fn backup(addr: &str, path: Option<String>, format: Format) -> anyhow::Result<()> {
    let client = autostart::ensure_running(addr).await?;
    let done = client.backup(&BackupRequest { path }).await?;
    output::print(&done, format)
}

/// `moss restore-backup PATH`: stops the daemon, then has `mossd --restore-backup` check the
/// file, keep the current store aside and swap the backup in. The next command (or `moss daemon
/// start`) starts the daemon on the restored store.
pub async fn restore(addr: &str, path: &str) -> anyhow::Result<()> {
    let path = std::path::absolute(path).with_context(|| format!("cannot resolve {path}"))?;
    if !path.is_file() {
        bail!(
            "{} does not exist; give the file `moss backup` wrote (its \"path\")",
            path.display()
        );
    }
    stop::stop(addr, true).await?;
    let mossd = mossd::find_mossd()?;
    let out = std::process::Command::new(&mossd)
        .arg("--restore-backup")
        .arg(&path)
        .output()
        .with_context(|| format!("cannot run {}", mossd.display()))?;
    if !out.status.success() {
        bail!(
            "{}",
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .trim_start_matches("mossd: ")
        );
    }
    println!("{}", String::from_utf8_lossy(&out.stdout).trim());
    eprintln!(
        "the daemon starts on the restored store with the next command (or `moss daemon start`)"
    );
    Ok(())
}
