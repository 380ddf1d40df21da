//! What the tasks family offers other families, and the only path by which they reach it: the
//! reasoning family (see `reasoning::interface`) reads plans and tasks only through these
//! functions, never through the `task_*` tables.

pub use super::event_id;
pub use super::load_item;
pub use super::search_source::{EMBED_SOURCE, SEARCH_SOURCE};

use crate::db_params;
use crate::error::Result;
use crate::store::engine::search::{matches, rank};
use crate::store::engine::{Db, Engine};

/// A task's steps in tree order (depth first), each with its positional path (`s:0.s:1`); the
/// tree's depth shows in the path.
pub fn steps(db: Db<'_>, ws: &str, task: &str) -> Result<Vec<moss_client::tasks::Step>> {
    Ok(super::items::load_steps(db, ws, task)?
        .into_iter()
        .map(|r| r.step)
        .collect())
}

/// Whether the plan or task `id` exists in workspace `ws`.
pub fn exists(db: Db<'_>, ws: &str, id: &str) -> Result<bool> {
    Ok(db
        .query_opt(
            "SELECT 1 FROM task_items WHERE workspace = ?1 AND id = ?2",
            db_params![ws, id],
            |r| r.get::<i64>(0),
        )?
        .is_some())
}

/// The sequence number and time (ms) of the workspace's last task event, if any.
pub fn last_event(db: Db<'_>, ws: &str) -> Result<Option<(i64, i64)>> {
    Ok(db.query_opt(
        "SELECT seq, ts_ms FROM task_events WHERE workspace = ?1 ORDER BY seq DESC LIMIT 1",
        db_params![ws],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// [`search_hits`]'s candidates on PostgreSQL, against the words `task_texts` carries.
static SEARCH_PG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT t.workspace, t.item, t.step
         FROM task_texts AS t
         WHERE {t} AND (CAST(?2 AS TEXT) IS NULL OR t.workspace = ?2)
           AND t.doc >= coalesce((
             SELECT nt.doc FROM task_texts AS nt
             WHERE {nt} AND (CAST(?2 AS TEXT) IS NULL OR nt.workspace = ?2)
             ORDER BY nt.doc DESC LIMIT 1 OFFSET ?4), 0)
         ORDER BY {rank}, t.doc DESC LIMIT ?3",
        t = matches("t", 1),
        nt = matches("nt", 1),
        rank = rank("t", 1, &[2.0, 1.0]),
    )
});

/// Plans, tasks and steps whose title or description holds words of `words` (whole words
/// and their suffixes, case-insensitive: `tab` matches "Tabs"; every one of them when
/// `every_word`), in workspace `ws` (every workspace if `None`): the most words matched first, titles counting double, then the
/// newest; at most `limit`. Candidates come from the family's full-text index ([`SEARCH_SOURCE`],
/// titles weighing double; best first, at most [`CANDIDATES`], ranked among the newest
/// [`crate::search_text::RANKED_MATCHES`] matches), and are scored on their text.
pub fn search_hits(
    db: Db<'_>,
    words: &[String],
    ws: Option<&str>,
    limit: i64,
    every_word: bool,
) -> Result<Vec<crate::search_text::FamilyHit>> {
    use crate::search_text::{FamilyHit, SNIPPET_CHARS, mark_words};
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let matches = |text: &str| -> i64 {
        let lower = text.to_lowercase();
        let tokens: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|t| !t.is_empty())
            .collect();
        words
            .iter()
            .filter(|w| tokens.iter().any(|t| t.starts_with(w.as_str())))
            .count() as i64
    };
    // Any word (or every word), each as a quoted prefix: no FTS5 operator can come from the
    // words.
    let expr = words
        .iter()
        .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(if every_word { " AND " } else { " OR " });
    // How many of the words a title and description hold between them.
    let held = |title: &str, description: &str| -> usize {
        let lower = format!("{title} {description}").to_lowercase();
        let tokens: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|t| !t.is_empty())
            .collect();
        words
            .iter()
            .filter(|w| tokens.iter().any(|t| t.starts_with(w.as_str())))
            .count()
    };
    let newest = crate::search_text::RANKED_MATCHES;
    let sqlite = "SELECT t.workspace, t.item, t.step
         FROM fts.tasks_fts AS f CROSS JOIN task_texts AS t ON t.doc = f.rowid
         WHERE f.tasks_fts MATCH ?1 AND (?2 IS NULL OR t.workspace = ?2)
           AND f.rowid >= coalesce((
             SELECT nf.rowid FROM fts.tasks_fts AS nf
             CROSS JOIN task_texts AS nt ON nt.doc = nf.rowid
             WHERE nf.tasks_fts MATCH ?1 AND (?2 IS NULL OR nt.workspace = ?2)
             ORDER BY nf.rowid DESC LIMIT 1 OFFSET ?4), 0)
         ORDER BY bm25(tasks_fts, 2.0, 1.0), f.rowid DESC LIMIT ?3";
    let sql = match db.engine() {
        Engine::Sqlite => sqlite,
        Engine::Postgres => SEARCH_PG.as_str(),
    };
    let bound = crate::search_text::engine_query(db.engine(), &expr)?;
    let found: Vec<(String, String, String)> =
        db.query_map(sql, db_params![&bound, ws, CANDIDATES, newest - 1], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    let mut hits: Vec<(i64, i64, FamilyHit)> = Vec::new();
    for (workspace, id, step_id) in found {
        let open = (
            "tasks_radar",
            serde_json::json!({"workspace": workspace, "task": id}),
        );
        if step_id.is_empty() {
            let Some((kind, title, description, at)) = db.query_opt(
                "SELECT kind, title, COALESCE(description, ''), updated_at_ms FROM task_items
         WHERE workspace = ?1 AND id = ?2",
                db_params![&workspace, &id],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<String>(1)?,
                        r.get::<String>(2)?,
                        r.get::<i64>(3)?,
                    ))
                },
            )?
            else {
                continue;
            };
            let score = 2 * matches(&title) + matches(&description);
            if score == 0 || (every_word && held(&title, &description) < words.len()) {
                continue;
            }
            let text = if matches(&description) > matches(&title) {
                &description
            } else {
                &title
            };
            hits.push((
                score,
                at,
                FamilyHit {
                    snippet: mark_words(text, words, SNIPPET_CHARS),
                    open,
                    workspace,
                    id,
                    kind,
                    title,
                    explain: None,
                },
            ));
        } else {
            let Some((title, at)) = db.query_opt(
                "SELECT s.title, i.updated_at_ms
         FROM task_steps AS s JOIN task_items AS i ON i.workspace = s.workspace AND i.id = s.task
         WHERE s.workspace = ?1 AND s.task = ?2 AND s.step_id = ?3",
                db_params![&workspace, &id, &step_id],
                |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
            )?
            else {
                continue;
            };
            let score = 2 * matches(&title);
            if score == 0 || (every_word && held(&title, "") < words.len()) {
                continue;
            }
            hits.push((
                score,
                at,
                FamilyHit {
                    snippet: mark_words(&title, words, SNIPPET_CHARS),
                    open,
                    id: format!("{id}/{step_id}"),
                    kind: "step".into(),
                    title,
                    workspace,
                    explain: None,
                },
            ));
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    hits.truncate(limit.max(0) as usize);
    Ok(hits.into_iter().map(|(_, _, h)| h).collect())
}

/// The plans, tasks and steps of `near` (the embedding index's documents, best first) that
/// still exist, as hits, each with its match: a plan's or task's snippet is the passage of its
/// description that matched (its title when that is all it has), a step's its title.
pub fn near_hits(
    db: Db<'_>,
    near: &[crate::store::semantic::Near],
) -> Result<Vec<(crate::search_text::FamilyHit, crate::store::semantic::Near)>> {
    use crate::search_text::{FamilyHit, SNIPPET_CHARS, render_snippet};
    let mut out = Vec::with_capacity(near.len());
    for n in near {
        let hit = db.query_opt(
            "SELECT t.workspace, t.item, t.step, t.title, t.body, i.kind
         FROM task_texts AS t JOIN task_items AS i ON i.workspace = t.workspace AND i.id = t.item
         WHERE t.doc = ?1",
            db_params![n.doc],
            |r| {
                let workspace: String = r.get(0)?;
                let item: String = r.get(1)?;
                let step: String = r.get(2)?;
                let title: String = r.get(3)?;
                let body: String = r.get(4)?;
                let kind: String = r.get(5)?;
                let passage = crate::store::semantic::passage(&body, n.chunk);
                let text = if passage.is_empty() { &title } else { &passage };
                let (id, kind) = if step.is_empty() {
                    (item.clone(), kind)
                } else {
                    (format!("{item}/{step}"), "step".to_string())
                };
                Ok(FamilyHit {
                    snippet: render_snippet(text, SNIPPET_CHARS),
                    open: (
                        "tasks_radar",
                        serde_json::json!({"workspace": workspace, "task": item}),
                    ),
                    id,
                    kind,
                    title,
                    workspace,
                    explain: None,
                })
            },
        )?;
        out.extend(hit.map(|h| (h, *n)));
    }
    Ok(out)
}

/// The most plans, tasks and steps one search scores (the index's best first).
pub const CANDIDATES: i64 = 500;

/// The workspace's focused plan or task, if any.
pub fn focus(db: Db<'_>, ws: &str) -> Result<Option<String>> {
    Ok(db.query_opt(
        "SELECT task FROM task_focus WHERE workspace = ?1",
        db_params![ws],
        |r| r.get(0),
    )?)
}

/// The plans and tasks of workspace `ws` changed last, newest first, at most `limit`; only
/// the open ones (a step left, or no steps) when `open_only`.
pub fn recent(
    db: Db<'_>,
    ws: &str,
    limit: i64,
    open_only: bool,
) -> Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let mut out = Vec::new();
    // Read as they come: the read stops once `limit` are kept.
    db.query_each(
        "SELECT i.id, i.kind, i.title, i.updated_at_ms,
           (SELECT COUNT(*) FROM task_steps s WHERE s.workspace = i.workspace AND s.task = i.id),
           (SELECT COUNT(*) FROM task_steps s
            WHERE s.workspace = i.workspace AND s.task = i.id AND s.done = 1)
         FROM task_items AS i WHERE i.workspace = ?1 ORDER BY i.seq DESC LIMIT ?2",
        db_params![ws, limit * 4],
        |r| {
            let id = r.get::<String>(0)?;
            let kind = r.get::<String>(1)?;
            let title = r.get::<String>(2)?;
            let at = r.get::<i64>(3)?;
            let total = r.get::<i64>(4)?;
            let done = r.get::<i64>(5)?;
            if open_only && total > 0 && done == total {
                return Ok(true);
            }
            out.push((
                at,
                moss_client::moss::ContextItem {
                    kind,
                    title,
                    text: Some(format!("{done}/{total} steps done")),
                    updated_at: crate::time::rfc3339_ms(at),
                    open: moss_client::moss::Open {
                        tool: "tasks_radar".into(),
                        arguments: serde_json::json!({ "workspace": ws, "task": id }),
                    },
                    id,
                },
            ));
            Ok((out.len() as i64) < limit)
        },
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search (titles first, words as prefixes) and the newest items run on PostgreSQL.
    #[test]
    fn the_search_and_the_newest_items_run_on_postgres() {
        let Some((_scratch, pg)) = crate::schema::postgres_scratch() else {
            return;
        };
        let db = Db::Postgres(&pg);
        db.batch(
            "INSERT INTO task_items(workspace, id, kind, title, description, revision, seq,
               created_at_ms, updated_at_ms)
             VALUES ('w', 'TASK-001', 'task', 'Rotate the refresh_token', 'before expiry', 1, 1, 1, 1),
               ('w', 'TASK-002', 'task', 'Cache warmup', 'rotate logs too', 1, 2, 2, 2),
               ('v', 'TASK-001', 'task', 'Rotate keys', NULL, 1, 3, 3, 3);
             INSERT INTO task_steps(workspace, task, step_id, ordinal, title, criteria_json,
               tests_json, blockers_json, done)
             VALUES ('w', 'TASK-002', 's1', 0, 'Rotation script', '[]', '[]', '[]', 1);",
        )
        .unwrap();
        let hits = search_hits(db, &["rotat".to_string()], Some("w"), 10, false).unwrap();
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids.len(), 3, "{ids:?}");
        assert!(
            ids.contains(&"TASK-001") && ids.contains(&"TASK-002/s1"),
            "{ids:?}"
        );
        assert_eq!(ids[2], "TASK-002", "a title match counts double");
        let words = ["rotate".to_string(), "refresh_token".to_string()];
        let every = search_hits(db, &words, None, 10, true).unwrap();
        assert_eq!(every.len(), 1, "{every:?}");
        let recent = recent(db, "w", 10, true).unwrap();
        let ids: Vec<&str> = recent.iter().map(|(_, i)| i.id.as_str()).collect();
        assert_eq!(ids, ["TASK-001"], "TASK-002's one step is done");
    }
}
