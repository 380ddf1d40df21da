//! Documents: append-only entries, their views, diffs and merges. Branches and checkout are in
//! [`super::branches`].

use moss_client::reasoning::*;
use serde_json::Value;

use super::refs::{self, ALL, DocAddress, DocRef, Naming};
use super::{Reasoning, cursor, limit, now_ms, object_json, parse_json};
use crate::budget::blank_budget;
use crate::budget::{Fit, cut_text};
use crate::error::{Error, Result};
use crate::read::Read;
use crate::store::WriteCtx;
use crate::store::engine::{Db, DbError, Row};

/// The columns an [`Entry`] is read from, in [`entry_from_row`]'s order.
pub const ENTRY_COLUMNS: &str = "seq, ts_ms, branch, doc, kind, title, format, meta_json, \
    content, source_event_id, event_type, task_id, path, payload_json";

pub fn entry_from_row(r: &Row) -> std::result::Result<Entry, DbError> {
    let ts_ms: i64 = r.get(1)?;
    Ok(Entry {
        seq: r.get(0)?,
        ts: ts_ms / 1000,
        ts_ms,
        branch: r.get(2)?,
        doc: r.get(3)?,
        kind: r.get(4)?,
        title: r.get(5)?,
        format: r.get(6)?,
        meta: parse_json(r.get(7)?),
        content: r.get(8)?,
        source_event_id: r.get(9)?,
        event_type: r.get(10)?,
        task_id: r.get(11)?,
        path: r.get(12)?,
        payload: parse_json(r.get(13)?),
        content_truncated: false,
    })
}

/// An entry to write.
#[derive(Debug, Default)]
pub struct NewEntry<'a> {
    pub branch: &'a str,
    pub doc: &'a str,
    pub kind: &'a str,
    pub title: Option<String>,
    pub format: Option<String>,
    pub meta_json: Option<String>,
    pub content: Option<String>,
    pub source_event_id: Option<String>,
    pub event_type: Option<String>,
    pub task_id: Option<String>,
    pub path: Option<String>,
    pub payload_json: Option<String>,
}

/// Appends an entry; with a `source_event_id` already in `(branch, doc)`, returns that entry
/// and `false` instead.
pub fn insert_entry(ctx: &WriteCtx, ws: &str, e: NewEntry) -> Result<(Entry, bool)> {
    if let Some(id) = &e.source_event_id {
        let found = ctx.db().query_opt(
            &format!(
                "SELECT {ENTRY_COLUMNS} FROM reasoning_entries
                 WHERE workspace = ?1 AND branch = ?2 AND doc = ?3 AND source_event_id = ?4"
            ),
            crate::db_params![ws, e.branch, e.doc, id],
            entry_from_row,
        )?;
        if let Some(found) = found {
            return Ok((found, false));
        }
    }
    let seq = ctx.next_seq();
    let ts_ms = now_ms();
    ctx.db().execute(
        "INSERT INTO reasoning_entries(seq, workspace, branch, doc, ts_ms, kind, title, format,
           meta_json, content, source_event_id, event_type, task_id, path, payload_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        crate::db_params![
            seq,
            ws,
            e.branch,
            e.doc,
            ts_ms,
            e.kind,
            e.title.as_ref(),
            e.format.as_ref(),
            e.meta_json.as_ref(),
            e.content.as_ref(),
            e.source_event_id.as_ref(),
            e.event_type.as_ref(),
            e.task_id.as_ref(),
            e.path.as_ref(),
            e.payload_json.as_ref()
        ],
    )?;
    Ok((
        Entry {
            seq,
            ts: ts_ms / 1000,
            ts_ms,
            branch: e.branch.to_string(),
            doc: e.doc.to_string(),
            kind: e.kind.to_string(),
            title: e.title,
            format: e.format,
            meta: parse_json(e.meta_json),
            content: e.content,
            source_event_id: e.source_event_id,
            event_type: e.event_type,
            task_id: e.task_id,
            path: e.path,
            payload: parse_json(e.payload_json),
            content_truncated: false,
        },
        true,
    ))
}

/// One range of a branch's entries: `lo < seq <= hi`.
#[derive(Debug, Clone)]
pub struct Range {
    pub branch: String,
    pub lo: i64,
    pub hi: i64,
}

/// The ranges of a view: every source from the start up to its cutoff.
pub fn view(sources: &[(String, i64)]) -> Vec<Range> {
    sources
        .iter()
        .map(|(b, c)| Range {
            branch: b.clone(),
            lo: 0,
            hi: *c,
        })
        .collect()
}

/// The ranges of `to`'s view that `from`'s view does not hold.
pub fn difference(to: &[(String, i64)], from: &[(String, i64)]) -> Vec<Range> {
    to.iter()
        .filter_map(|(b, c)| {
            let lo = from.iter().find(|(fb, _)| fb == b).map_or(0, |(_, fc)| *fc);
            (lo < *c).then(|| Range {
                branch: b.clone(),
                lo,
                hi: *c,
            })
        })
        .collect()
}

/// The newest `limit` entries (+1 to tell whether there are more) of these ranges, below
/// `cursor`, newest first: one indexed range scan per range, merged.
pub fn read_ranges(
    db: Db<'_>,
    ws: &str,
    doc: Option<&str>,
    kind: Option<&str>,
    ranges: &[Range],
    cursor: Option<i64>,
    limit: i64,
) -> Result<Vec<Entry>> {
    let upper = cursor.map_or(ALL, |c| c - 1);
    let mut out: Vec<Entry> = Vec::new();
    let sql = match doc {
        Some(_) => format!(
            "SELECT {ENTRY_COLUMNS} FROM reasoning_entries
             WHERE workspace = ?1 AND branch = ?2 AND doc = ?3 AND seq > ?4 AND seq <= ?5
               AND (CAST(?6 AS TEXT) IS NULL OR kind = ?6)
             ORDER BY seq DESC LIMIT ?7"
        ),
        None => format!(
            "SELECT {ENTRY_COLUMNS} FROM reasoning_entries
             WHERE workspace = ?1 AND branch = ?2 AND CAST(?3 AS TEXT) IS NULL
               AND seq > ?4 AND seq <= ?5
               AND (CAST(?6 AS TEXT) IS NULL OR kind = ?6)
             ORDER BY seq DESC LIMIT ?7"
        ),
    };
    for r in ranges {
        let hi = r.hi.min(upper);
        if hi <= r.lo {
            continue;
        }
        out.extend(db.query_map(
            &sql,
            crate::db_params![ws, &r.branch, doc, r.lo, hi, kind, limit + 1],
            entry_from_row,
        )?);
    }
    out.sort_by_key(|x| std::cmp::Reverse(x.seq));
    out.truncate(limit as usize + 1);
    Ok(out)
}

/// Splits a `limit + 1` read, newest first, into a page and its pagination.
pub fn page_of<T>(
    mut items: Vec<T>,
    cursor: Option<i64>,
    limit: i64,
    seq: fn(&T) -> i64,
) -> (Vec<T>, SeqPagination) {
    let has_more = items.len() as i64 > limit;
    items.truncate(limit as usize);
    let pagination = SeqPagination {
        cursor,
        next_cursor: if has_more {
            items.last().map(seq)
        } else {
            None
        },
        has_more,
        limit,
        count: items.len() as i64,
    };
    (items, pagination)
}

/// Keeps the first `n` of a newest-first page, so the rest come on the next page.
pub fn keep_page<T>(items: &mut Vec<T>, p: &mut SeqPagination, n: usize, seq: fn(&T) -> i64) {
    if n < items.len() {
        items.truncate(n);
        p.has_more = true;
        p.count = n as i64;
        p.next_cursor = items.last().map(seq).or(p.cursor);
    }
}

fn cut_entry(e: &mut Entry, chars: usize) -> bool {
    let done = match e.content.as_mut() {
        Some(c) if !c.is_empty() => cut_text(c, chars),
        _ => match e.meta.take() {
            Some(_) => true,
            None => e.payload.take().is_some(),
        },
    };
    e.content_truncated |= done;
    done
}

macro_rules! entries_fit {
    ($ty:ty) => {
        impl Fit for $ty {
            fn units(&self) -> usize {
                self.entries.len()
            }
            fn keep(&mut self, n: usize) {
                keep_page(&mut self.entries, &mut self.pagination, n, |e| e.seq);
            }
            fn cut(&mut self, chars: usize) -> bool {
                self.entries
                    .first_mut()
                    .is_some_and(|e| cut_entry(e, chars))
            }
            fn set_budget(&mut self, budget: Budget) {
                self.truncated = budget.truncated;
                self.budget = budget;
            }
        }
    };
}
entries_fit!(ShowResponse);
entries_fit!(LogResponse);
entries_fit!(DiffResponse);

impl Fit for ReasoningExport {
    fn units(&self) -> usize {
        self.notes.entries.len() + self.trace.entries.len()
    }
    /// Keeps the `n` newest entries of notes and trace together.
    fn keep(&mut self, n: usize) {
        let mut seqs: Vec<i64> = self
            .notes
            .entries
            .iter()
            .chain(&self.trace.entries)
            .map(|e| e.seq)
            .collect();
        seqs.sort_unstable_by(|a, b| b.cmp(a));
        let floor = if n == 0 {
            i64::MAX
        } else {
            seqs.get(n - 1).copied().unwrap_or(i64::MIN)
        };
        for slice in [&mut self.notes, &mut self.trace] {
            let keep = slice.entries.iter().take_while(|e| e.seq >= floor).count();
            keep_page(&mut slice.entries, &mut slice.pagination, keep, |e| e.seq);
        }
    }
    fn cut(&mut self, chars: usize) -> bool {
        let notes = self.notes.entries.first().map_or(0, |e| e.seq);
        let trace = self.trace.entries.first().map_or(0, |e| e.seq);
        let slice = if notes >= trace {
            &mut self.notes
        } else {
            &mut self.trace
        };
        slice
            .entries
            .first_mut()
            .is_some_and(|e| cut_entry(e, chars))
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

/// How `branchmind_notes_commit` names its document.
const NOTES_COMMIT: Naming = Naming::notes("branchmind_notes_commit");
/// How `branchmind_commit` names its document.
const COMMIT: Naming = Naming::notes("branchmind_commit");

/// Checks a commit's content.
fn content(value: &str) -> Result<String> {
    if value.trim().is_empty() {
        return Err(Error::invalid_field("content", "content must not be empty"));
    }
    crate::bounds::check_len("content", value, super::MAX_CONTENT_CHARS)?;
    Ok(value.to_string())
}

/// An entry kind: 1-32 lowercase letters, digits, `_` or `-`.
fn kind(value: &str) -> Result<String> {
    let v = value.trim();
    if v.is_empty()
        || v.len() > 32
        || !v
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return Err(Error::invalid_field(
            "kind",
            format!("kind must be 1-32 lowercase letters, digits, `_` or `-`, got {value:?}"),
        ));
    }
    if v == "event" {
        return Err(Error::invalid_field(
            "kind",
            "kind \"event\" is reserved for task events, which tasks_* calls write",
        ));
    }
    Ok(v.to_string())
}

impl Reasoning {
    /// `branchmind_notes_commit`.
    pub async fn notes_commit(&self, req: NotesCommitRequest) -> Result<CommitResponse> {
        self.commit(CommitRequest {
            workspace: req.workspace,
            target: req.target,
            branch: req.branch,
            doc: req.doc,
            kind: "note".into(),
            content: req.content,
            title: req.title,
            format: req.format,
            meta: req.meta,
            source_event_id: None,
        })
        .await
    }

    /// `branchmind_commit`.
    pub async fn commit(&self, req: CommitRequest) -> Result<CommitResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let kind = kind(&req.kind)?;
        let content = content(&req.content)?;
        let title = crate::bounds::title(req.title.as_deref())?;
        let format = crate::bounds::handle("format", req.format.as_deref())?;
        let meta_json = object_json("meta", req.meta.as_ref())?;
        let source_event_id =
            crate::bounds::handle("source_event_id", req.source_event_id.as_deref())?;
        let naming = if kind == "note" {
            &NOTES_COMMIT
        } else {
            &COMMIT
        };
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let at = refs::address_of(db, &ws, &req, |r| &r.notes_doc, naming)?;
                refs::existing_branch(db, &ws, "branch", &at.branch)?;
                let (entry, inserted) = insert_entry(
                    ctx,
                    &ws,
                    NewEntry {
                        branch: &at.branch,
                        doc: &at.doc,
                        kind: &kind,
                        title,
                        format,
                        meta_json,
                        content: Some(content),
                        source_event_id,
                        ..NewEntry::default()
                    },
                )?;
                Ok(CommitResponse { entry, inserted })
            })
            .await
    }

    /// `branchmind_show`.
    pub async fn show(&self, req: ShowRequest) -> Result<ShowResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 20, 200)?;
        let pick: fn(&ReasoningRef) -> &str = match req.doc_kind.as_deref() {
            None | Some("notes") => |r| &r.notes_doc,
            Some("trace") => |r| &r.trace_doc,
            Some("graph") => |r| &r.graph_doc,
            Some(other) => {
                return Err(Error::invalid_field(
                    "doc_kind",
                    format!("doc_kind must be \"notes\" or \"trace\", got {other:?}"),
                ));
            }
        };
        read.run_db(&self.store, move |db, ws| {
            let at = refs::address_of(db, &ws, &req, pick, &Naming::notes("branchmind_show"))?;
            let sources = refs::sources(db, &ws, "branch", &at.branch)?;
            let rows = read_ranges(db, &ws, Some(&at.doc), None, &view(&sources), cursor, limit)?;
            let (entries, pagination) = page_of(rows, cursor, limit, |e| e.seq);
            Ok(ShowResponse {
                branch: at.branch,
                doc: at.doc,
                entries,
                pagination,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }

    /// `branchmind_log`: a branch's entries across its documents (its view), newest first.
    pub async fn log(&self, req: LogRequest) -> Result<LogResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 20, 200)?;
        let kind_filter = req.kind.clone();
        read.run_db(&self.store, move |db, ws| {
            let (branch, _) =
                refs::branch_of(db, &ws, req.target.as_deref(), req.branch.as_deref())?;
            let sources = refs::sources(db, &ws, "branch", &branch)?;
            let rows = read_ranges(
                db,
                &ws,
                None,
                kind_filter.as_deref(),
                &view(&sources),
                cursor,
                limit,
            )?;
            let (entries, pagination) = page_of(rows, cursor, limit, |e| e.seq);
            Ok(LogResponse {
                branch,
                entries,
                pagination,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }

    /// `branchmind_export`.
    pub async fn export(&self, req: ReasoningExportRequest) -> Result<ReasoningExport> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let notes_limit = limit("notes_limit", req.notes_limit, 20, 200)?;
        let trace_limit = limit("trace_limit", req.trace_limit, 20, 200)?;
        read.run_db(&self.store, move |db, ws| {
            let r = refs::resolve_target(db, &ws, &req.target)?;
            let (_, id) = refs::target_id("target", &req.target)?;
            let target = crate::tasks::interface::load_item(db, &ws, &id)?
                .map(|item| serde_json::to_value(item).expect("items serialize"))
                .unwrap_or(Value::Null);
            let sources = refs::sources(db, &ws, "target", &r.branch)?;
            let ranges = view(&sources);
            let slice = |doc: &str, lim: i64| -> Result<DocSlice> {
                let rows = read_ranges(db, &ws, Some(doc), None, &ranges, None, lim)?;
                let (entries, pagination) = page_of(rows, None, lim, |e| e.seq);
                Ok(DocSlice {
                    doc: doc.to_string(),
                    entries,
                    pagination,
                })
            };
            Ok(ReasoningExport {
                target,
                notes: slice(&r.notes_doc, notes_limit)?,
                trace: slice(&r.trace_doc, trace_limit)?,
                reasoning_ref: r,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }

    /// `branchmind_diff`.
    pub async fn diff(&self, req: DiffRequest) -> Result<DiffResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 20, 200)?;
        let from = refs::name("from", &req.from)?;
        let to = refs::name("to", &req.to)?;
        let doc = refs::name("doc", req.doc.as_deref().unwrap_or("notes"))?;
        read.run_db(&self.store, move |db, ws| {
            let from_sources = refs::sources(db, &ws, "from", &from)?;
            let to_sources = refs::sources(db, &ws, "to", &to)?;
            let ranges = difference(&to_sources, &from_sources);
            let rows = read_ranges(db, &ws, Some(&doc), None, &ranges, cursor, limit)?;
            let (entries, pagination) = page_of(rows, cursor, limit, |e| e.seq);
            Ok(DiffResponse {
                from,
                to,
                doc,
                entries,
                pagination,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }

    /// `branchmind_merge`: copies the notes of `from`'s view that `into`'s view lacks, each
    /// once (`source_event_id = merge:<branch>:<seq>`).
    pub async fn merge(&self, req: MergeRequest) -> Result<MergeResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let limit = limit("limit", req.limit, 200, 1000)?;
        let cursor = cursor(req.cursor)?;
        let from = refs::name("from", &req.from)?;
        let into = refs::name("into", &req.into)?;
        if from == into {
            return Err(Error::invalid_field(
                "into",
                "from and into are the same branch",
            ));
        }
        let doc = refs::name("doc", req.doc.as_deref().unwrap_or("notes"))?;
        let dry_run = req.dry_run.unwrap_or(false);
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let from_sources = refs::sources(db, &ws, "from", &from)?;
                let into_sources = refs::sources(db, &ws, "into", &into)?;
                let ranges = difference(&from_sources, &into_sources);
                let rows = read_ranges(db, &ws, Some(&doc), Some("note"), &ranges, cursor, limit)?;
                let (entries, pagination) = page_of(rows, cursor, limit, |e| e.seq);
                let (mut merged, mut skipped) = (0, 0);
                for e in entries.into_iter().rev() {
                    let key = format!("merge:{}:{}", e.branch, e.seq);
                    let exists: Option<i64> = db.query_opt(
                        "SELECT 1 FROM reasoning_entries WHERE workspace = ?1 AND branch = ?2
                               AND doc = ?3 AND source_event_id = ?4",
                        crate::db_params![&ws, &into, &doc, &key],
                        |r| r.get(0),
                    )?;
                    if exists.is_some() {
                        skipped += 1;
                        continue;
                    }
                    merged += 1;
                    if !dry_run {
                        insert_entry(
                            ctx,
                            &ws,
                            NewEntry {
                                branch: &into,
                                doc: &doc,
                                kind: "note",
                                title: e.title,
                                format: e.format,
                                meta_json: e.meta.map(|m| m.to_string()),
                                content: e.content,
                                source_event_id: Some(key),
                                ..NewEntry::default()
                            },
                        )?;
                    }
                }
                Ok(MergeResponse {
                    from,
                    into,
                    doc,
                    merged,
                    skipped,
                    dry_run,
                    pagination,
                })
            })
            .await
    }

    /// Resolves a graph or card address on a read connection.
    pub(crate) fn graph_address(
        db: Db<'_>,
        ws: &str,
        req: &impl DocRef,
        naming: &Naming,
    ) -> Result<(DocAddress, Vec<(String, i64)>)> {
        let at = refs::address_of(db, ws, req, |r| &r.graph_doc, naming)?;
        let sources = refs::sources(db, ws, "branch", &at.branch)?;
        Ok((at, sources))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_is_the_part_of_each_source_past_the_other_view() {
        let base = vec![("main".to_string(), ALL)];
        let derived = vec![("b".to_string(), ALL), ("main".to_string(), 10)];
        let d = difference(&base, &derived);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].branch.as_str(), d[0].lo, d[0].hi), ("main", 10, ALL));
        let d = difference(&derived, &base);
        assert_eq!(d.len(), 1, "main up to 10 is in both");
        assert_eq!((d[0].branch.as_str(), d[0].lo), ("b", 0));
    }
}
