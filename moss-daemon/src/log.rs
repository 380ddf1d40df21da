//! Where the daemon's log goes: stderr, through a writer that never fails.
//!
//! A log write fails when the disk holding the log is full (autostart logs to
//! `$MOSS_HOME/mossd.log`, on the same disk as the database) or when stderr is closed or full.
//! `tracing-subscriber` reports a failed write with `eprintln!`, which panics when stderr itself
//! is what failed, and a panic there kills the thread that logged: the writer, the indexer, the
//! checkpointer, or `main` before it listens. So a line that cannot be written is dropped and
//! counted ([`dropped`], shown as `log_dropped` by `GET /status` and `moss daemon status`), and
//! logging resumes by itself once writes succeed again.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use tracing_subscriber::fmt::MakeWriter;

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Log lines dropped because they could not be written, since the process started.
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// Stderr, dropping and counting what it cannot write.
#[derive(Debug, Clone, Copy, Default)]
pub struct LossyStderr;

impl<'a> MakeWriter<'a> for LossyStderr {
    type Writer = LossyWriter<io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        LossyWriter(io::stderr())
    }
}

/// A writer whose writes always succeed: what the inner writer refuses is dropped and counted.
/// The fmt layer hands it one whole event per `write_all`, so one failure is one dropped line.
#[derive(Debug)]
pub struct LossyWriter<W>(pub W);

impl<W: Write> Write for LossyWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.0.write_all(buf).is_err() {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

/// Installs the daemon's subscriber: `filter` (e.g. `info,rmcp=warn`) on stderr, colours only
/// on a terminal, failed writes dropped and counted.
pub fn init(filter: tracing_subscriber::EnvFilter, ansi: bool) {
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(LossyStderr)
        .log_internal_errors(false)
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer with no room left, like a file on a full disk.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        }

        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        }
    }

    #[test]
    fn a_failed_write_is_dropped_and_counted_not_an_error() {
        let before = dropped();
        let mut w = LossyWriter(Full);
        w.write_all(b"line one\n").unwrap();
        writeln!(w, "line two").unwrap();
        w.flush().unwrap();
        assert!(dropped() >= before + 2, "both lines counted");
        let mut ok = LossyWriter(Vec::new());
        let at = dropped();
        ok.write_all(b"kept\n").unwrap();
        assert_eq!(ok.0, b"kept\n");
        assert!(dropped() >= at, "a good write drops nothing of its own");
    }
}
