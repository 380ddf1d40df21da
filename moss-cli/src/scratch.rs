//! A daemon of its own for `moss bench`: `mossd` on a free loopback port with a fresh home in
//! a `bench-*` directory inside `$MOSS_HOME` (the same disk as the user's store, with a copy of
//! its `config.json` but for where the store is), stopped and deleted afterwards, so a benchmark
//! never writes into the user's store.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use moss_client::Client;

use crate::connect;
use crate::mossd;

/// How long the scratch daemon may take to announce its address, and to stop.
const TIMEOUT: Duration = Duration::from_secs(30);

pub struct ScratchDaemon {
    pub client: Client,
    /// `None` once stopped.
    child: Option<Child>,
    /// Deleted when stopped, or dropped.
    dir: Option<tempfile::TempDir>,
}

impl ScratchDaemon {
    /// Starts `mossd --addr 127.0.0.1:0` on a fresh home and waits for its address. Its store
    /// is a SQLite file in that home, or `database` when given: never the store the user's
    /// config names.
    pub async fn start(database: Option<&str>) -> anyhow::Result<ScratchDaemon> {
        let home = connect::require_home()?;
        mossd::ensure_home(&home)?;
        let dir = tempfile::Builder::new()
            .prefix("bench-")
            .tempdir_in(&home)
            .with_context(|| format!("cannot create a scratch home in {}", home.display()))?;
        let config = home.join("config.json");
        let mut copied = match std::fs::read_to_string(&config) {
            Ok(text) => serde_json::from_str::<serde_json::Value>(&text)
                .with_context(|| format!("{} is not valid JSON", config.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", config.display())),
        };
        if let Some(obj) = copied.as_object_mut() {
            // The user's store is not the benchmark's.
            obj.remove("database");
            obj.remove("database_read");
            if let Some(url) = database {
                obj.insert("database".into(), url.into());
            }
        }
        std::fs::write(dir.path().join("config.json"), copied.to_string()).with_context(|| {
            format!(
                "cannot write the scratch home's config in {}",
                dir.path().display()
            )
        })?;
        let mossd = mossd::find_mossd()?;
        let log_path = dir.path().join("mossd.log");
        let log = File::create(&log_path)?;
        let mut child = Command::new(&mossd)
            .args(["--addr", "127.0.0.1:0"])
            .env("MOSS_HOME", dir.path())
            .env_remove("MOSS_ADDR")
            // Only the copied config applies, as for a daemon moss starts on demand.
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot run {}", mossd.display()))?;
        let stdout = child.stdout.take().context("mossd's stdout")?;
        // The first line names the address; the rest (if any) is drained so mossd never blocks.
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next().and_then(Result::ok));
            lines.for_each(drop);
        });
        let first = tokio::time::timeout(TIMEOUT, rx)
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        let Some(addr) = first
            .as_deref()
            .and_then(|l| l.strip_prefix("listening on http://"))
        else {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "the benchmark's own daemon ({}) did not start: {}",
                mossd.display(),
                std::fs::read_to_string(&log_path)
                    .unwrap_or_default()
                    .trim()
            );
        };
        let client = Client::new(addr, read_token(dir.path())?)?;
        Ok(ScratchDaemon {
            client,
            child: Some(child),
            dir: Some(dir),
        })
    }

    /// Where it keeps its store.
    pub fn home(&self) -> Option<&Path> {
        self.dir.as_ref().map(tempfile::TempDir::path)
    }

    /// Shuts the daemon down gracefully, waits for it, and deletes its home.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        let asked = self.client.shutdown().await;
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let exited = tokio::task::spawn_blocking(move || {
            let deadline = std::time::Instant::now() + TIMEOUT;
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => return true,
                    Ok(None) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        return false;
                    }
                }
            }
        })
        .await?;
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_path_buf();
            dir.close()
                .with_context(|| format!("cannot delete the scratch home {}", path.display()))?;
        }
        asked?;
        if !exited {
            bail!("the benchmark's own daemon did not stop within {TIMEOUT:?} and was killed");
        }
        Ok(())
    }
}

impl Drop for ScratchDaemon {
    /// On an error or a panic before [`ScratchDaemon::stop`]: no daemon outlives the bench.
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut()
            && let Ok(None) = child.try_wait()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The scratch daemon's token (none when its config turns auth off).
fn read_token(home: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(home.join("token")) {
        Ok(t) => Ok(Some(t.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).context("cannot read the scratch daemon's token"),
    }
}
