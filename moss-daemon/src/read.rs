//! The frame every budgeted read of reasoning and tasks shares: check the workspace, the output
//! caps and, for a read that pages, its `limit` and `cursor`, in that order (so a request with
//! several bad fields is refused for the same one whichever read it is); run the read on the
//! read pool; fit its answer to the caps ([`budget::fit`]).
//!
//! ```ignore
//! let read = Read::new(self.config.output_max_chars, &req)?;
//! let (limit, cursor) = read.page(req.limit, req.cursor, 20, 200)?;
//! read.run(&self.store, move |conn, ws| { /* the read */ }).await
//! ```
//!
//! [`limit`] and [`cursor`] check a page's arguments on their own, for reads that name them
//! otherwise.

use moss_client::reasoning::*;
use moss_client::tasks::*;

use crate::budget::{self, Caps, Fit};
use crate::error::{Error, Result};
use crate::store::Store;

/// A request read under output caps: its workspace and its `max_chars`, `max_bytes` and
/// `max_lines`.
pub trait Capped {
    fn workspace(&self) -> &str;
    fn caps(&self) -> (Option<i64>, Option<i64>, Option<i64>);
}

macro_rules! capped {
    ($($t:ty),* $(,)?) => {$(
        impl Capped for $t {
            fn workspace(&self) -> &str {
                &self.workspace
            }
            fn caps(&self) -> (Option<i64>, Option<i64>, Option<i64>) {
                (self.max_chars, self.max_bytes, self.max_lines)
            }
        }
    )*};
}

capped!(
    ShowRequest,
    LogRequest,
    ReasoningExportRequest,
    DiffRequest,
    BranchListRequest,
    GraphQueryRequest,
    GraphValidateRequest,
    GraphDiffRequest,
    GraphConflictsRequest,
    ReasoningSearchRequest,
    ThinkTemplateRequest,
    ThinkContextRequest,
    TasksContextRequest,
    TasksDeltaRequest,
    TasksRadarRequest,
);

/// A read whose workspace and caps are checked.
#[derive(Debug)]
pub struct Read {
    ws: String,
    caps: Caps,
}

impl Read {
    /// Checks the workspace (required), then the caps (`default_chars` when the request gives
    /// no `max_chars`).
    pub fn new(default_chars: usize, req: &impl Capped) -> Result<Read> {
        let ws = workspace(req.workspace())?;
        let (max_chars, max_bytes, max_lines) = req.caps();
        let caps = Caps::new(default_chars, max_chars, max_bytes, max_lines)?;
        Ok(Read { ws, caps })
    }

    /// The workspace, normalized.
    pub fn ws(&self) -> &str {
        &self.ws
    }

    /// A page's `limit` (`default`, within `1..=max`) and `cursor`.
    pub fn page(
        &self,
        limit_arg: Option<i64>,
        cursor_arg: Option<i64>,
        default: i64,
        max: i64,
    ) -> Result<(i64, Option<i64>)> {
        Ok((
            limit("limit", limit_arg, default, max)?,
            cursor(cursor_arg)?,
        ))
    }

    /// Fits an answer to the caps.
    pub fn fit<T: Fit>(&self, answer: T) -> Result<T> {
        budget::fit(answer, &self.caps)
    }

    /// Runs `f` on a read connection of either engine (with the workspace) and fits its answer
    /// to the caps.
    pub async fn run_db<T, F>(self, store: &Store, f: F) -> Result<T>
    where
        T: Fit + Send + 'static,
        F: FnOnce(crate::store::engine::Db<'_>, String) -> Result<T> + Send + 'static,
    {
        let Read { ws, caps } = self;
        let answer = store.readers.run_db(move |db| f(db, ws)).await?;
        budget::fit(answer, &caps)
    }
}

/// A workspace a request must name.
pub fn workspace(value: &str) -> Result<String> {
    if value.trim().is_empty() {
        return Err(Error::invalid_field(
            "workspace",
            "workspace is required: a stable identifier of the project, e.g. \"moss\"",
        ));
    }
    Ok(crate::names::workspace(Some(value))?.norm)
}

pub use crate::page::{cursor, limit};

#[cfg(test)]
mod tests {
    use super::*;

    fn field(e: Error) -> String {
        e.0.details["field"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Workspace, caps, limit, cursor: a request with several bad fields is refused for the
    /// first of them, whichever read it is.
    #[test]
    fn a_read_refuses_the_first_bad_field_in_a_fixed_order() {
        let mut req = ShowRequest {
            workspace: " ".into(),
            max_chars: Some(0),
            limit: Some(0),
            cursor: Some(0),
            ..Default::default()
        };
        assert_eq!(field(Read::new(1000, &req).unwrap_err()), "workspace");
        req.workspace = "W".into();
        assert_eq!(field(Read::new(1000, &req).unwrap_err()), "max_chars");
        req.max_chars = None;
        let read = Read::new(1000, &req).unwrap();
        assert_eq!(read.ws(), "w");
        assert_eq!(
            field(read.page(req.limit, req.cursor, 20, 200).unwrap_err()),
            "limit"
        );
        assert_eq!(
            field(read.page(None, req.cursor, 20, 200).unwrap_err()),
            "cursor"
        );
        assert_eq!(read.page(None, Some(7), 20, 200).unwrap(), (20, Some(7)));
    }
}
