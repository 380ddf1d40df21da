//! Stopping the daemon: ask it to shut down, then wait until its port is closed and its
//! process gone.

use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::json;

use crate::connect;
use crate::probe::{Probe, Unavailable, probe};

/// How long `stop` waits for the daemon to exit: its drain cap (10 s) plus the writer's last
/// commit and closing the database.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Stops the daemon at `addr` (if one answers) and waits until it has exited. Returns what
/// `moss daemon stop` prints.
pub async fn stop(addr: &str, say: bool) -> anyhow::Result<serde_json::Value> {
    let client = connect::client(addr)?;
    match probe(&client).await {
        Probe::Up(_) => {}
        Probe::Down => {
            if say {
                eprintln!("no Moss daemon answers at {addr}; nothing to stop");
            }
            return Ok(json!({"address": addr, "stopped": false, "was_running": false}));
        }
        Probe::Other(why) => bail!("cannot tell what answers at {addr}: {why}"),
    }
    let began = Instant::now();
    let answer = client.shutdown().await?;
    let pid = answer.pid;
    let deadline = began + STOP_TIMEOUT;
    loop {
        let port_closed = matches!(probe(&client).await, Probe::Down);
        if port_closed && !pid_alive(pid) {
            break;
        }
        if Instant::now() >= deadline {
            return Err(Unavailable(format!(
                "the daemon at {addr} (pid {pid}) was asked to shut down but is still {} after \
                 {STOP_TIMEOUT:?}; see its log ($MOSS_HOME/mossd.log, or `journalctl --user -u \
                 moss` for the service), or end it with `kill {pid}`",
                if port_closed { "running" } else { "answering" }
            ))
            .into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seconds = began.elapsed().as_secs_f64();
    if say {
        eprintln!("stopped the Moss daemon at {addr} (pid {pid}) in {seconds:.2}s");
    }
    Ok(json!({
        "address": addr,
        "stopped": true,
        "was_running": true,
        "pid": pid,
        "seconds": (seconds * 1000.0).round() / 1000.0,
    }))
}

/// Whether process `pid` still runs (a zombie counts as gone: it has released everything).
fn pid_alive(pid: u32) -> bool {
    let proc_dir = std::path::Path::new("/proc");
    if proc_dir.join("self").exists() {
        return match std::fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")) {
            // The state follows the parenthesised command name.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z')),
            Err(_) => false,
        };
    }
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_an_exited_child_is_not() {
        assert!(pid_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!pid_alive(pid));
    }
}
