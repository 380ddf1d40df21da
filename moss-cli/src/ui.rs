//! `moss ui`: a one-time sign-in address of the web UI, printed and, with `--open`, opened in
//! the default browser.

use crate::autostart;
use crate::connect::base_url;
use crate::output::outln;

/// `moss ui [--open]`.
pub async fn run(addr: &str, open: bool) -> anyhow::Result<()> {
    let client = autostart::ensure_running(addr).await?;
    let code = client.ui_login_code().await?;
    let url = format!("{}{}", base_url(addr), code.path);
    outln!("{url}")?;
    eprintln!(
        "Open it in a browser within {} minutes; it works once and signs that browser in.",
        code.expires_in_seconds / 60
    );
    if open && let Err(e) = open_in_browser(&url) {
        eprintln!("Could not open a browser ({e}); open the address above yourself.");
    }
    Ok(())
}

/// Opens `url` with the platform's opener, without waiting for the browser.
fn open_in_browser(url: &str) -> std::io::Result<()> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}
