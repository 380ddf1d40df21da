//! `moss service install|uninstall`: the daemon as a systemd user service (Linux) or a
//! LaunchAgent (macOS), from the templates in `systemd/` and `launchd/` with `@MOSSD@`, `@ADDR@`
//! and `@MOSS_HOME@` filled in. Also tells autostart when a service manager runs the daemon for
//! an address and home, so that `moss` never starts a second one next to it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use moss_client::Client;
use moss_client::daemon::Health;

use crate::connect;
use crate::mossd::{ensure_home, find_mossd};
use crate::output::{out, outln};
use crate::probe::{Probe, Unavailable, probe};

const SYSTEMD_TEMPLATE: &str = include_str!("../../systemd/moss.service");
const LAUNCHD_TEMPLATE: &str = include_str!("../../launchd/dev.moss.mossd.plist");
const SYSTEMD_UNIT: &str = "moss.service";
const LAUNCHD_LABEL: &str = "dev.moss.mossd";
/// How long `moss` waits for a service-managed daemon that is starting.
const SERVICE_START_WAIT: Duration = Duration::from_secs(15);

#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Install the daemon as a user service (systemd on Linux, launchd on macOS) and start it.
    ///
    /// Writes ~/.config/systemd/user/moss.service (or ~/Library/LaunchAgents/dev.moss.mossd.plist)
    /// with the real mossd path, --addr and MOSS_HOME, then enables and starts it
    /// (`systemctl --user daemon-reload` + `enable --now`, or `launchctl bootstrap gui/UID`).
    /// A daemon that moss started itself on the same address is stopped first.
    ///
    /// Examples:
    ///   moss service install
    ///   moss service install --dry-run            # print the file, change nothing
    ///   moss service install --no-enable          # write the file only
    ///   MOSS_ADDR=127.0.0.1:7000 moss service install --manager systemd
    #[command(verbatim_doc_comment)]
    Install(InstallArgs),
    /// Stop and remove the user service.
    ///
    /// Examples:
    ///   moss service uninstall
    ///   moss service uninstall --no-disable       # remove the file only
    #[command(verbatim_doc_comment)]
    Uninstall(UninstallArgs),
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Write the file but do not enable or start the service.
    #[arg(long)]
    no_enable: bool,
    /// Print the file that would be written; write and run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Service manager (default: launchd on macOS, systemd elsewhere).
    #[arg(long, value_enum)]
    manager: Option<Manager>,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Remove the file without asking the service manager to stop and disable it.
    #[arg(long)]
    no_disable: bool,
    /// Service manager (default: launchd on macOS, systemd elsewhere).
    #[arg(long, value_enum)]
    manager: Option<Manager>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Manager {
    /// A systemd user unit.
    Systemd,
    /// A launchd LaunchAgent.
    Launchd,
}

impl Manager {
    pub fn current() -> Manager {
        if cfg!(target_os = "macos") {
            Manager::Launchd
        } else {
            Manager::Systemd
        }
    }

    /// Where the file goes for the current user.
    pub fn path(self) -> anyhow::Result<PathBuf> {
        let home = || -> anyhow::Result<PathBuf> {
            Ok(PathBuf::from(
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .context("HOME is not set; it says where the service file goes")?,
            ))
        };
        Ok(match self {
            Manager::Systemd => {
                let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
                    Some(dir) => PathBuf::from(dir),
                    None => home()?.join(".config"),
                };
                config.join("systemd/user").join(SYSTEMD_UNIT)
            }
            Manager::Launchd => home()?
                .join("Library/LaunchAgents")
                .join(format!("{LAUNCHD_LABEL}.plist")),
        })
    }

    fn template(self) -> &'static str {
        match self {
            Manager::Systemd => SYSTEMD_TEMPLATE,
            Manager::Launchd => LAUNCHD_TEMPLATE,
        }
    }

    /// The template with the placeholders filled in, each value escaped for the format.
    pub fn render(self, mossd: &Path, addr: &str, home: &Path) -> anyhow::Result<String> {
        let fill = |value: &str, what: &str| -> anyhow::Result<String> {
            match self {
                Manager::Systemd => systemd_value(value, what),
                Manager::Launchd => Ok(xml_escape(value)),
            }
        };
        let mossd = fill(&mossd.display().to_string(), "the mossd path")?;
        let addr = fill(addr, "the address")?;
        let home = fill(&home.display().to_string(), "MOSS_HOME")?;
        Ok(self
            .template()
            .replace("@MOSSD@", &mossd)
            .replace("@ADDR@", &addr)
            .replace("@MOSS_HOME@", &home))
    }
}

/// A value for a unit file: `%` escaped (systemd expands specifiers), and no characters that
/// would need quoting in `ExecStart=` and `ReadWritePaths=` alike.
fn systemd_value(value: &str, what: &str) -> anyhow::Result<String> {
    if let Some(c) = value
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || "\"'\\;".contains(*c))
    {
        bail!(
            "{what} {value:?} contains {c:?}, which a systemd unit cannot hold unquoted here; \
             use a path without it (e.g. set MOSS_HOME, or install mossd elsewhere)"
        );
    }
    Ok(value.replace('%', "%%"))
}

fn xml_escape(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A service file installed for this address and home.
#[derive(Debug)]
pub struct Installed {
    pub manager: Manager,
    pub path: PathBuf,
}

/// The service that runs the daemon for `addr` and `home`, if one is installed: its file exists
/// and names this address and home (a service for another address or home is not in the way).
pub fn managing(addr: &str, home: &Path) -> Option<Installed> {
    let manager = Manager::current();
    let path = manager.path().ok()?;
    let text = std::fs::read_to_string(&path).ok()?;
    let sock = connect::socket_addr(addr).ok()?.to_string();
    let home = home.display().to_string();
    let names_addr = text.contains(&sock);
    let names_home = match manager {
        Manager::Systemd => text.contains(&format!("MOSS_HOME={}", home.replace('%', "%%"))),
        Manager::Launchd => text.contains(&format!("<string>{}</string>", xml_escape(&home))),
    };
    (names_addr && names_home).then_some(Installed { manager, path })
}

impl Installed {
    /// Whether the service manager has the daemon running or starting.
    fn active(&self) -> Result<bool, String> {
        match self.manager {
            Manager::Systemd => {
                let out = Command::new("systemctl")
                    .args(["--user", "is-active", SYSTEMD_UNIT])
                    .output()
                    .map_err(|e| format!("cannot run systemctl: {e}"))?;
                let state = String::from_utf8_lossy(&out.stdout).trim().to_string();
                Ok(matches!(
                    state.as_str(),
                    "active" | "activating" | "reloading"
                ))
            }
            Manager::Launchd => {
                let uid = file_uid(&self.path).map_err(|e| e.to_string())?;
                let out = Command::new("launchctl")
                    .args(["print", &format!("gui/{uid}/{LAUNCHD_LABEL}")])
                    .output()
                    .map_err(|e| format!("cannot run launchctl: {e}"))?;
                Ok(out.status.success())
            }
        }
    }

    fn start_hint(&self) -> String {
        match self.manager {
            Manager::Systemd => format!(
                "start it with `systemctl --user start {SYSTEMD_UNIT}` (its log: `journalctl \
                 --user -u {SYSTEMD_UNIT}`)"
            ),
            Manager::Launchd => format!(
                "start it with `launchctl bootstrap gui/$(id -u) {}` (its log: the mossd.log in \
                 MOSS_HOME)",
                self.path.display()
            ),
        }
    }

    /// Asks the service manager to start the daemon (`moss daemon start|restart` while the
    /// service is installed); returns the command it ran.
    pub fn start(&self) -> anyhow::Result<String> {
        match self.manager {
            Manager::Systemd => run("systemctl", &["--user", "start", SYSTEMD_UNIT]),
            Manager::Launchd => {
                let uid = file_uid(&self.path)?;
                let target = format!("gui/{uid}/{LAUNCHD_LABEL}");
                if self.active() == Ok(true) {
                    run("launchctl", &["kickstart", &target])
                } else {
                    run(
                        "launchctl",
                        &[
                            "bootstrap",
                            &format!("gui/{uid}"),
                            &self.path.display().to_string(),
                        ],
                    )
                }
            }
        }
    }

    /// Waits for the service's daemon to answer, or explains how to start it; never spawns one.
    pub async fn wait_for_daemon(&self, addr: &str, client: &Client) -> anyhow::Result<Health> {
        let why = match self.active() {
            Ok(true) => {
                let deadline = Instant::now() + SERVICE_START_WAIT;
                loop {
                    if let Probe::Up(h) = probe(client).await {
                        return Ok(h);
                    }
                    if Instant::now() >= deadline {
                        break format!(
                            "is running but its daemon did not answer within \
                             {SERVICE_START_WAIT:?}"
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Ok(false) => "is not running".to_string(),
            Err(e) => format!("is in an unknown state ({e})"),
        };
        Err(Unavailable(format!(
            "no Moss daemon answers at {addr}; the user service installed at {} runs it, and it \
             {why}. So that two daemons never compete, moss does not start one next to it: {}, \
             or remove the service with `moss service uninstall`",
            self.path.display(),
            self.start_hint()
        ))
        .into())
    }
}

fn file_uid(path: &Path) -> anyhow::Result<u32> {
    Ok(std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .uid())
}

/// Runs a service-manager command; returns the line that says what was run.
fn run(program: &str, args: &[&str]) -> anyhow::Result<String> {
    let line = format!("{program} {}", args.join(" "));
    let out = Command::new(program).args(args).output().with_context(|| {
        format!(
            "cannot run `{line}`; is {program} installed? (use --no-enable to only write the file)"
        )
    })?;
    if !out.status.success() {
        bail!(
            "`{line}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(line)
}

pub async fn run_command(cmd: ServiceCommand, addr: &str) -> anyhow::Result<()> {
    match cmd {
        ServiceCommand::Install(a) => install(a, addr).await,
        ServiceCommand::Uninstall(a) => uninstall(a),
    }
}

async fn install(a: InstallArgs, addr: &str) -> anyhow::Result<()> {
    let manager = a.manager.unwrap_or_else(Manager::current);
    let mossd = find_mossd()?;
    let mossd = mossd.canonicalize().unwrap_or(mossd);
    let sock = connect::socket_addr(addr)?;
    if !sock.ip().is_loopback() {
        bail!(
            "the service would listen on {sock}, which is not a loopback address; install it \
             for e.g. 127.0.0.1:{} (--addr or MOSS_ADDR)",
            sock.port()
        );
    }
    let home = connect::require_home()?;
    let text = manager.render(&mossd, &sock.to_string(), &home)?;
    let path = manager.path()?;
    if a.dry_run {
        out!("{text}")?;
        eprintln!(
            "dry run: would write {} (mossd {}, --addr {sock}, MOSS_HOME {}); nothing written",
            path.display(),
            mossd.display(),
            home.display()
        );
        return Ok(());
    }
    // Whether the daemon answering now (if any) is this service's own, from an earlier install.
    let service_was_running = managing(addr, &home).is_some_and(|i| i.active() == Ok(true));
    // The unit makes the home its only writable path, so it must exist before the daemon runs.
    ensure_home(&home)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    outln!(
        "wrote {} (mossd {}, --addr {sock}, MOSS_HOME {})",
        path.display(),
        mossd.display(),
        home.display()
    )?;
    if a.no_enable {
        outln!(
            "not enabled (--no-enable); enable it with: {}",
            match manager {
                Manager::Systemd => format!(
                    "systemctl --user daemon-reload && systemctl --user enable --now {SYSTEMD_UNIT}"
                ),
                Manager::Launchd => format!("launchctl bootstrap gui/$(id -u) {}", path.display()),
            }
        )?;
        return Ok(());
    }
    // A daemon moss started itself would hold the port and the database.
    let client = connect::client(addr)?;
    if !service_was_running && let Probe::Up(_) = probe(&client).await {
        crate::stop::stop(addr, false).await?;
        outln!("stopped the daemon moss had started at {sock}, so the service can take over")?;
    }
    match manager {
        Manager::Systemd => {
            outln!("ran {}", run("systemctl", &["--user", "daemon-reload"])?)?;
            outln!(
                "ran {}",
                run("systemctl", &["--user", "enable", "--now", SYSTEMD_UNIT])?
            )?;
            if service_was_running {
                // `enable --now` leaves a running unit alone; the new file needs a restart.
                outln!(
                    "ran {}",
                    run("systemctl", &["--user", "restart", SYSTEMD_UNIT])?
                )?;
            }
        }
        Manager::Launchd => {
            let uid = file_uid(&path)?;
            let domain = format!("gui/{uid}");
            // Replacing an older definition: bootstrap refuses a label that is loaded.
            let _ = run(
                "launchctl",
                &["bootout", &format!("{domain}/{LAUNCHD_LABEL}")],
            );
            outln!(
                "ran {}",
                run(
                    "launchctl",
                    &["bootstrap", &domain, &path.display().to_string()]
                )?
            )?;
        }
    }
    let installed = Installed { manager, path };
    let h = installed.wait_for_daemon(addr, &client).await?;
    outln!(
        "the service's daemon (mossd {}) answers at {sock}",
        h.version
    )?;
    Ok(())
}

fn uninstall(a: UninstallArgs) -> anyhow::Result<()> {
    let manager = a.manager.unwrap_or_else(Manager::current);
    let path = manager.path()?;
    if !path.exists() {
        outln!("no service installed at {}; nothing to do", path.display())?;
        return Ok(());
    }
    if !a.no_disable {
        match manager {
            Manager::Systemd => outln!(
                "ran {}",
                run("systemctl", &["--user", "disable", "--now", SYSTEMD_UNIT])?
            )?,
            Manager::Launchd => {
                let uid = file_uid(&path)?;
                outln!(
                    "ran {}",
                    run(
                        "launchctl",
                        &["bootout", &format!("gui/{uid}/{LAUNCHD_LABEL}")]
                    )?
                )?;
            }
        }
    }
    std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    outln!("removed {}", path.display())?;
    if manager == Manager::Systemd && !a.no_disable {
        outln!("ran {}", run("systemctl", &["--user", "daemon-reload"])?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_with_every_placeholder_filled() {
        for m in [Manager::Systemd, Manager::Launchd] {
            let text = m
                .render(
                    Path::new("/opt/moss/bin/mossd"),
                    "127.0.0.1:7000",
                    Path::new("/home/u/.moss"),
                )
                .unwrap();
            assert!(
                !text.contains("@MOSSD@") && !text.contains("@ADDR@"),
                "{text}"
            );
            assert!(!text.contains("@MOSS_HOME@"), "{text}");
            assert!(text.contains("/opt/moss/bin/mossd"), "{text}");
            assert!(text.contains("127.0.0.1:7000"), "{text}");
            assert!(text.contains("/home/u/.moss"), "{text}");
        }
    }

    #[test]
    fn systemd_values_escape_specifiers_and_refuse_spaces() {
        assert_eq!(systemd_value("/a%b", "x").unwrap(), "/a%%b");
        let e = systemd_value("/my home/.moss", "MOSS_HOME")
            .unwrap_err()
            .to_string();
        assert!(e.contains("MOSS_HOME") && e.contains("' '"), "{e}");
        assert_eq!(xml_escape("/a&b<c>"), "/a&amp;b&lt;c&gt;");
    }
}
