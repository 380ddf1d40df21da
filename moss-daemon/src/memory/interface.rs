//! What the memory family offers the rest of the daemon (the cross-family reads), and the only
//! path by which they reach it.

use crate::db_params;
use crate::error::Result;
use crate::store::engine::search::{headline, matches, rank};
use crate::store::engine::{Db, DbError, Engine, Row};

/// The memory index, which a search waits on to read its own writes.
pub use super::search_source::{EMBED_SOURCE, SEARCH_SOURCE};

/// [`search_hits`]'s statement on PostgreSQL: the same reads, against the table's words.
static SEARCH_HITS_PG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "WITH hits AS MATERIALIZED (
           SELECT m.rid AS rid, {rank} AS rank
           FROM memories AS m
           WHERE {matches_m} AND (CAST(?2 AS TEXT) IS NULL OR m.workspace = ?2)
             AND m.session = ''
             AND m.rid >= coalesce((
               SELECT nm.rid FROM memories AS nm
               WHERE {matches_nm} AND (CAST(?2 AS TEXT) IS NULL OR nm.workspace = ?2)
                 AND nm.session = ''
               ORDER BY nm.rid DESC LIMIT 1 OFFSET ?4), 0)
           ORDER BY rank, m.seq DESC LIMIT ?3)
         SELECT m.id, m.workspace, m.content, m.slot, {snippet}
         FROM hits JOIN memories AS m ON m.rid = hits.rid
         ORDER BY hits.rank, m.seq DESC",
        rank = rank("m", 1, &[1.0, 2.0, 1.0]),
        matches_m = matches("m", 1),
        matches_nm = matches("nm", 1),
        snippet = headline("m.content", 1),
    )
});

/// Persistent memories matching the FTS5 `query` in workspace `ws` (every workspace if
/// `None`), best first, at most `limit`, ranked among the newest
/// [`crate::search_text::RANKED_MATCHES`].
pub fn search_hits(
    db: Db<'_>,
    query: &str,
    ws: Option<&str>,
    limit: i64,
) -> Result<Vec<crate::search_text::FamilyHit>> {
    use crate::search_text::{FamilyHit, RANKED_MATCHES as newest, SNIPPET_CHARS};
    use crate::search_text::{query_error, render_snippet};
    let sqlite = "WITH hits AS MATERIALIZED (
           SELECT f.rowid AS rid, bm25(memories_fts, 1.0, 2.0, 1.0) AS rank
           FROM fts.memories_fts AS f CROSS JOIN memories AS m ON m.rid = f.rowid
           WHERE f.memories_fts MATCH ?1 AND (?2 IS NULL OR m.workspace = ?2)
             AND m.session = ''
             AND f.rowid >= coalesce((
               SELECT nf.rowid FROM fts.memories_fts AS nf
               CROSS JOIN memories AS nm ON nm.rid = nf.rowid
               WHERE nf.memories_fts MATCH ?1 AND (?2 IS NULL OR nm.workspace = ?2)
                 AND nm.session = ''
               ORDER BY nf.rowid DESC LIMIT 1 OFFSET ?4), 0)
           ORDER BY rank, m.seq DESC LIMIT ?3)
         SELECT m.id, m.workspace, m.content, m.slot,
           (SELECT snippet(memories_fts, 0, char(57344), char(57345), '…', 64)
            FROM fts.memories_fts WHERE memories_fts MATCH ?1 AND rowid = hits.rid)
         FROM hits CROSS JOIN memories AS m ON m.rid = hits.rid
         ORDER BY hits.rank, m.seq DESC";
    let sql = match db.engine() {
        Engine::Sqlite => sqlite,
        Engine::Postgres => SEARCH_HITS_PG.as_str(),
    };
    let bound = crate::search_text::engine_query(db.engine(), query)?;
    db.query_map(sql, db_params![&bound, ws, limit, newest - 1], |r| {
        let id: String = r.get(0)?;
        let workspace: String = r.get(1)?;
        let content: String = r.get(2)?;
        let slot: Option<String> = r.get(3)?;
        let raw: Option<String> = r.get(4)?;
        let raw = raw.filter(|s| s.contains(crate::search_text::OPEN));
        let snippet = match raw {
            Some(raw) => render_snippet(&raw, SNIPPET_CHARS),
            None => render_snippet(&content, SNIPPET_CHARS),
        };
        let title: String = content.chars().take(80).collect();
        let open = match &slot {
            Some(slot) => serde_json::json!({"workspace": workspace, "slot": slot}),
            None => serde_json::json!({"workspace": workspace, "query": title}),
        };
        Ok(FamilyHit {
            id,
            kind: "memory".into(),
            title,
            snippet,
            open: ("memory_recall", open),
            workspace,
            explain: None,
        })
    })
    .map_err(|e| query_error(e, query))
}

/// The persistent memories of workspace `ws` written last, newest first, at most `limit`.
pub fn recent(
    db: Db<'_>,
    ws: &str,
    limit: i64,
) -> Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let rows = db.query_map(
        "SELECT id, content, slot, updated_at * 1000 FROM memories
         WHERE workspace = ?1 AND session = '' ORDER BY seq DESC LIMIT ?2",
        db_params![ws, limit],
        |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<String>(1)?,
                r.get::<Option<String>>(2)?,
                r.get::<i64>(3)?,
            ))
        },
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for (id, content, slot, at) in rows {
        out.push((at, memory_item(ws, id, content, slot, at)));
    }
    Ok(out)
}

/// A memory as a context item.
pub fn memory_item(
    ws: &str,
    id: String,
    content: String,
    slot: Option<String>,
    at: i64,
) -> moss_client::moss::ContextItem {
    let title: String = content.chars().take(80).collect();
    let arguments = match &slot {
        Some(slot) => serde_json::json!({"workspace": ws, "slot": slot}),
        None => serde_json::json!({"workspace": ws, "query": title}),
    };
    moss_client::moss::ContextItem {
        kind: "memory".into(),
        id,
        title,
        text: Some(content),
        updated_at: crate::time::rfc3339_ms(at),
        open: moss_client::moss::Open {
            tool: "memory_recall".into(),
            arguments,
        },
    }
}

/// How many memories of workspace `ws` carry `context` (a task id, a path) among their
/// contexts, case-insensitively.
pub fn count_with_context(db: Db<'_>, ws: &str, context: &str) -> Result<i64> {
    Ok(db.query_one(
        // Contexts are kept lowercased, so this is one range of the primary key.
        "SELECT COUNT(DISTINCT rid) FROM memory_contexts
             WHERE workspace = ?1 AND context = lower(?2)",
        db_params![ws, context],
        |r| r.get(0),
    )?)
}

/// The persistent memories `near` names (found by meaning, best first), as cross-family hits.
pub fn near_hits(
    db: Db<'_>,
    near: &[crate::store::semantic::Near],
) -> Result<Vec<(crate::search_text::FamilyHit, crate::store::semantic::Near)>> {
    use crate::search_text::{FamilyHit, SNIPPET_CHARS, render_snippet};
    let mut out = Vec::with_capacity(near.len());
    for n in near {
        let hit = db.query_opt(
            "SELECT id, workspace, content, slot FROM memories WHERE rid = ?1 AND session = ''",
            db_params![n.doc],
            |r| {
                let id: String = r.get(0)?;
                let workspace: String = r.get(1)?;
                let content: String = r.get(2)?;
                let slot: Option<String> = r.get(3)?;
                let title: String = content.chars().take(80).collect();
                let open = match &slot {
                    Some(slot) => serde_json::json!({"workspace": workspace, "slot": slot}),
                    None => serde_json::json!({"workspace": workspace, "query": title}),
                };
                Ok(FamilyHit {
                    id,
                    kind: "memory".into(),
                    snippet: render_snippet(&content, SNIPPET_CHARS),
                    title,
                    open: ("memory_recall", open),
                    workspace,
                    explain: None,
                })
            },
        )?;
        out.extend(hit.map(|h| (h, *n)));
    }
    Ok(out)
}

/// A context with at most this many persistent memories is listed by reading all of them and
/// sorting; a larger one by walking the workspace's newest memories, where it is then common.
const SMALL_CONTEXT: i64 = 2000;
/// Counts of a context's memories stop here (shown as "more than"): one range of the context
/// key, which holds the session too.
pub const COUNT_CAP: i64 = 1000;
/// Counts of a slot's memories stop here: the slot index has no session, so each one counted
/// is a row read.
pub const SLOT_COUNT_CAP: i64 = 100;
/// The most names one page of contexts or slots skips over (names that only session memories
/// use), so a page's reads stay bounded.
const NAME_SEEKS: i64 = 400;

/// A page of memories, newest written first, and the cursor of the next (older) page.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPage {
    pub items: Vec<moss_client::memory::Memory>,
    /// Pass as `cursor` for the next page: memories written before it.
    pub next_cursor: Option<i64>,
}

/// How many persistent memories a context or slot has, up to a cap.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    pub name: String,
    pub count: i64,
    /// More than `count` (which is then the cap).
    pub more: bool,
}

/// A slot, how many persistent memories occupy it, and the one that holds it: the heaviest,
/// the newest stored on a tie (the first a recall of the slot alone lists before recency
/// counts).
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    pub slot: Counted,
    pub holder: moss_client::memory::Memory,
}

/// A page of names (contexts, slots) in order, and the name the next page starts after.
#[derive(Debug, Clone, PartialEq)]
pub struct NamePage<T> {
    pub items: Vec<T>,
    pub next_after: Option<String>,
}

/// The newest persistent memories of workspace ?1 below sequence ?2, at most ?3 (one range of
/// `memories_recent`).
const LIST_ALL: &str = "FROM memories m
     WHERE m.workspace = ?1 AND m.session = '' AND m.seq < ?2
     ORDER BY m.seq DESC LIMIT ?3";
/// The same, of a small context ?2 (below ?3, at most ?4): its rows read whole and sorted.
const LIST_SMALL_CONTEXT: &str = "FROM memory_contexts c CROSS JOIN memories m ON m.rid = c.rid
     WHERE c.workspace = ?1 AND c.context = ?2 AND c.session = '' AND m.seq < ?3
     ORDER BY m.seq DESC LIMIT ?4";
/// The same, of a large context: the newest memories, each checked with one seek.
const LIST_LARGE_CONTEXT: &str = "FROM memories m INDEXED BY memories_recent
     WHERE m.workspace = ?1 AND m.session = '' AND m.seq < ?3
       AND EXISTS (SELECT 1 FROM memory_contexts c WHERE c.workspace = ?1
         AND c.context = ?2 AND c.session = '' AND c.identity = m.identity)
     ORDER BY m.seq DESC LIMIT ?4";
/// A context's persistent memories, counted up to ?3.
const COUNT_CONTEXT: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM memory_contexts
       WHERE workspace = ?1 AND context = ?2 AND session = '' LIMIT ?3)";
/// The first context after ?2.
const NEXT_CONTEXT: &str =
    "SELECT context FROM memory_contexts WHERE workspace = ?1 AND context > ?2
     ORDER BY context LIMIT 1";
/// The first slot after ?2.
const NEXT_SLOT: &str = "SELECT slot FROM memories INDEXED BY memories_slot
     WHERE workspace = ?1 AND slot > ?2 ORDER BY slot LIMIT 1";
/// A slot's persistent memories, counted up to ?3.
const COUNT_SLOT: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM memories INDEXED BY memories_slot
       WHERE workspace = ?1 AND slot = ?2 AND session = '' LIMIT ?3)";
/// A slot's holder. The slot index ends in the row id: heaviest, then the newest stored, in
/// index order.
const SLOT_HOLDER: &str = "FROM memories m INDEXED BY memories_slot
     WHERE m.workspace = ?1 AND m.slot = ?2 AND m.session = ''
     ORDER BY m.weight DESC, m.rid DESC LIMIT 1";

/// The statements above on PostgreSQL: no index hints (its planner picks the index), a join
/// without SQLite's `CROSS` (which only fixes the order there), a named subquery.
const LIST_SMALL_CONTEXT_PG: &str = "FROM memory_contexts c JOIN memories m ON m.rid = c.rid
     WHERE c.workspace = ?1 AND c.context = ?2 AND c.session = '' AND m.seq < ?3
     ORDER BY m.seq DESC LIMIT ?4";
const LIST_LARGE_CONTEXT_PG: &str = "FROM memories m
     WHERE m.workspace = ?1 AND m.session = '' AND m.seq < ?3
       AND EXISTS (SELECT 1 FROM memory_contexts c WHERE c.workspace = ?1
         AND c.context = ?2 AND c.session = '' AND c.identity = m.identity)
     ORDER BY m.seq DESC LIMIT ?4";
const COUNT_CONTEXT_PG: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM memory_contexts
       WHERE workspace = ?1 AND context = ?2 AND session = '' LIMIT ?3) AS counted";
const NEXT_SLOT_PG: &str = "SELECT slot FROM memories
     WHERE workspace = ?1 AND slot > ?2 ORDER BY slot LIMIT 1";
const COUNT_SLOT_PG: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM memories
       WHERE workspace = ?1 AND slot = ?2 AND session = '' LIMIT ?3) AS counted";
const SLOT_HOLDER_PG: &str = "FROM memories m
     WHERE m.workspace = ?1 AND m.slot = ?2 AND m.session = ''
     ORDER BY m.weight DESC, m.rid DESC LIMIT 1";

/// `sqlite` on SQLite, `postgres` on PostgreSQL.
fn on(db: Db<'_>, sqlite: &'static str, postgres: &'static str) -> &'static str {
    match db.engine() {
        Engine::Sqlite => sqlite,
        Engine::Postgres => postgres,
    }
}

fn capped(n: i64, cap: i64) -> (i64, bool) {
    (n.min(cap), n > cap)
}

/// The persistent memories of workspace `ws`, newest written first, below sequence `cursor`,
/// at most `limit`; with `context`, only those carrying it (normalized, as stored). Every
/// read is bounded: a small context is read whole (`SMALL_CONTEXT` rows at most), a large
/// one found along the workspace's newest memories, where it is common.
pub fn list(
    db: Db<'_>,
    ws: &str,
    context: Option<&str>,
    cursor: Option<i64>,
    limit: i64,
) -> Result<MemoryPage> {
    use super::{MEMORY_COLUMNS, memory_from_row};
    let upper = cursor.unwrap_or(i64::MAX);
    fn row(r: &Row<'_>) -> Result<(moss_client::memory::Memory, i64), DbError> {
        Ok((memory_from_row(r)?, r.get::<i64>(13)?))
    }
    let rows: Vec<(moss_client::memory::Memory, i64)> = match context {
        None => db.query_map(
            &format!("SELECT {MEMORY_COLUMNS}, m.seq {LIST_ALL}"),
            db_params![ws, upper, limit + 1],
            row,
        )?,
        Some(raw) => {
            let count_context = on(db, COUNT_CONTEXT, COUNT_CONTEXT_PG);
            let c = super::norm_context(raw);
            if c.is_empty() {
                return Err(crate::error::Error::invalid_field(
                    "context",
                    "context must name a context (a path, a topic, a task id), got an empty one",
                ));
            }
            let n: i64 =
                db.query_one(count_context, db_params![ws, &c, SMALL_CONTEXT + 1], |r| {
                    r.get(0)
                })?;
            let tail = if n <= SMALL_CONTEXT {
                on(db, LIST_SMALL_CONTEXT, LIST_SMALL_CONTEXT_PG)
            } else {
                on(db, LIST_LARGE_CONTEXT, LIST_LARGE_CONTEXT_PG)
            };
            let sql = format!("SELECT {MEMORY_COLUMNS}, m.seq {tail}");
            db.query_map(&sql, db_params![ws, &c, upper, limit + 1], row)?
        }
    };
    let more = rows.len() as i64 > limit;
    let mut items = Vec::with_capacity(rows.len());
    let mut last = None;
    for (m, seq) in rows.into_iter().take(limit as usize) {
        items.push(m);
        last = Some(seq);
    }
    Ok(MemoryPage {
        items,
        next_cursor: if more { last } else { None },
    })
}

/// The contexts of workspace `ws`'s persistent memories in order, after `after`, at most
/// `limit`, each with its count (up to [`COUNT_CAP`]). One index seek per context: no read
/// grows with the workspace. Memories without a context are not listed.
pub fn contexts(
    db: Db<'_>,
    ws: &str,
    after: Option<&str>,
    limit: i64,
) -> Result<NamePage<Counted>> {
    let mut at = after.unwrap_or("").to_string();
    let mut items = Vec::new();
    for _ in 0..NAME_SEEKS {
        let Some(c) = db.query_opt(NEXT_CONTEXT, db_params![ws, &at], |r| r.get::<String>(0))?
        else {
            return Ok(NamePage {
                items,
                next_after: None,
            });
        };
        if items.len() as i64 == limit {
            return Ok(NamePage {
                items,
                next_after: Some(at),
            });
        }
        let n: i64 = db.query_one(
            on(db, COUNT_CONTEXT, COUNT_CONTEXT_PG),
            db_params![ws, &c, COUNT_CAP + 1],
            |r| r.get(0),
        )?;
        if n > 0 {
            let (count, more) = capped(n, COUNT_CAP);
            items.push(Counted {
                name: c.clone(),
                count,
                more,
            });
        }
        at = c;
    }
    Ok(NamePage {
        items,
        next_after: Some(at),
    })
}

/// The slots of workspace `ws`'s persistent memories in order, after `after`, at most `limit`,
/// each with its count (up to [`SLOT_COUNT_CAP`]) and its holder. A few index seeks per slot.
pub fn slots(db: Db<'_>, ws: &str, after: Option<&str>, limit: i64) -> Result<NamePage<Slot>> {
    use super::{MEMORY_COLUMNS, memory_from_row};
    let holder = format!(
        "SELECT {MEMORY_COLUMNS} {}",
        on(db, SLOT_HOLDER, SLOT_HOLDER_PG)
    );
    let (next_slot, count_slot) = (
        on(db, NEXT_SLOT, NEXT_SLOT_PG),
        on(db, COUNT_SLOT, COUNT_SLOT_PG),
    );
    let mut at = after.unwrap_or("").to_string();
    let mut items = Vec::new();
    for _ in 0..NAME_SEEKS {
        let Some(s) = db.query_opt(next_slot, db_params![ws, &at], |r| r.get::<String>(0))? else {
            return Ok(NamePage {
                items,
                next_after: None,
            });
        };
        if items.len() as i64 == limit {
            return Ok(NamePage {
                items,
                next_after: Some(at),
            });
        }
        if let Some(m) = db.query_opt(&holder, db_params![ws, &s], memory_from_row)? {
            let n: i64 = db.query_one(count_slot, db_params![ws, &s, SLOT_COUNT_CAP + 1], |r| {
                r.get(0)
            })?;
            let (count, more) = capped(n, SLOT_COUNT_CAP);
            items.push(Slot {
                slot: Counted {
                    name: s.clone(),
                    count,
                    more,
                },
                holder: m,
            });
        }
        at = s;
    }
    Ok(NamePage {
        items,
        next_after: Some(at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, params};

    /// A database with every family's tables.
    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::store::migrations::migrate(&mut conn, crate::schema::MIGRATIONS).unwrap();
        conn
    }

    /// A persistent memory (or a session's) with `contexts` and `slot`, written at `seq`.
    fn put(conn: &Connection, seq: i64, contexts: &[&str], slot: Option<&str>, weight: f64) {
        put_in(conn, seq, contexts, slot, weight, "");
    }

    fn put_in(
        conn: &Connection,
        seq: i64,
        contexts: &[&str],
        slot: Option<&str>,
        weight: f64,
        session: &str,
    ) {
        let identity = seq.to_be_bytes().to_vec();
        conn.execute(
            "INSERT INTO memories(id, workspace, session, identity, content, contexts_json,
               contexts_text, context_count, slot, weight, seq, created_at, updated_at)
             VALUES (?1, 'w', ?2, ?3, ?4, ?5, '', ?6, ?7, ?8, ?9, ?9, ?9)",
            params![
                format!("mem_{seq}"),
                session,
                identity,
                format!("memory {seq}"),
                serde_json::to_string(contexts).unwrap(),
                contexts.len() as i64,
                slot,
                weight,
                seq
            ],
        )
        .unwrap();
        let rid = conn.last_insert_rowid();
        let keys: Vec<&str> = if contexts.is_empty() {
            vec![""]
        } else {
            contexts.to_vec()
        };
        for c in keys {
            conn.execute(
                "INSERT INTO memory_contexts(workspace, context, session, identity, rid, basename)
                 VALUES ('w', ?1, ?2, ?3, ?4, ?1)",
                params![c, session, identity, rid],
            )
            .unwrap();
        }
    }

    fn ids(p: &MemoryPage) -> Vec<String> {
        p.items.iter().map(|m| m.id.clone()).collect()
    }

    /// Walks every page of a context; returns the ids in order.
    fn walk(conn: &Connection, context: Option<&str>, limit: i64) -> Vec<String> {
        let (mut out, mut cursor) = (Vec::new(), None);
        loop {
            let p = list(Db::Sqlite(conn), "w", context, cursor, limit).unwrap();
            assert!(p.items.len() as i64 <= limit);
            out.extend(ids(&p));
            match p.next_cursor {
                Some(c) => cursor = Some(c),
                None => return out,
            }
        }
    }

    #[test]
    fn a_context_lists_its_memories_newest_first_small_or_large() {
        let conn = db();
        // Every third memory carries "big" (more than SMALL_CONTEXT of them), one in 500 "rare";
        // session memories are never listed.
        let n = SMALL_CONTEXT * 3 + 30;
        for seq in 1..=n {
            let mut c = vec!["topic"];
            if seq % 3 == 0 {
                c.push("big");
            }
            if seq % 500 == 0 {
                c.push("rare");
            }
            put(&conn, seq, &c, None, 1.0);
        }
        put_in(&conn, n + 1, &["rare"], None, 1.0, "s1");
        let want = |m: i64| -> Vec<String> {
            (1..=n)
                .rev()
                .filter(|s| s % m == 0)
                .map(|s| format!("mem_{s}"))
                .collect()
        };
        assert_eq!(walk(&conn, Some("RARE"), 5), want(500));
        let big = walk(&conn, Some("big"), 700);
        assert_eq!(big.len() as i64, n / 3);
        assert_eq!(big, want(3));
        let first = list(Db::Sqlite(&conn), "w", None, None, 3).unwrap();
        assert_eq!(ids(&first), want(1)[..3]);
        let e = list(Db::Sqlite(&conn), "w", Some(" / "), None, 3).unwrap_err();
        assert_eq!(e.0.details["field"], "context");
    }

    #[test]
    fn contexts_and_slots_page_by_name_with_capped_counts_and_holders() {
        let conn = db();
        for seq in 1..=(COUNT_CAP + 5) {
            put(&conn, seq, &["a.rs"], None, 1.0);
        }
        let s = COUNT_CAP + 5;
        put(&conn, s + 1, &["b.rs"], Some("rules"), 1.0);
        put(&conn, s + 2, &["c.rs"], Some("rules"), 3.0);
        put(&conn, s + 3, &["d.rs"], Some("rules"), 3.0);
        put(&conn, s + 4, &[], Some("style"), 1.0);
        for seq in (s + 10)..(s + 12 + SLOT_COUNT_CAP) {
            put(&conn, seq, &["z.rs"], Some("zz"), 1.0);
        }
        // Only a session's: neither its context nor its slot is listed.
        put_in(&conn, s + 5, &["e.rs"], Some("temp"), 9.0, "s1");
        put_in(&conn, s + 6, &["d.rs"], Some("rules"), 9.0, "s1");

        let p = contexts(Db::Sqlite(&conn), "w", None, 2).unwrap();
        let got: Vec<(&str, i64, bool)> = p
            .items
            .iter()
            .map(|c| (c.name.as_str(), c.count, c.more))
            .collect();
        assert_eq!(got, [("a.rs", COUNT_CAP, true), ("b.rs", 1, false)]);
        let p = contexts(Db::Sqlite(&conn), "w", p.next_after.as_deref(), 2).unwrap();
        let names: Vec<&str> = p.items.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["c.rs", "d.rs"]);
        let p = contexts(Db::Sqlite(&conn), "w", p.next_after.as_deref(), 2).unwrap();
        let names: Vec<&str> = p.items.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["z.rs"]);
        assert!(p.next_after.is_none(), "{p:?}");

        let p = slots(Db::Sqlite(&conn), "w", None, 1).unwrap();
        assert_eq!(p.items.len(), 1);
        let rules = &p.items[0];
        assert_eq!((rules.slot.name.as_str(), rules.slot.count), ("rules", 3));
        // The heaviest holds it; of two as heavy, the newest stored.
        assert_eq!(rules.holder.id, format!("mem_{}", s + 3));
        let p = slots(Db::Sqlite(&conn), "w", p.next_after.as_deref(), 1).unwrap();
        assert_eq!(p.items[0].slot.name, "style");
        let p = slots(Db::Sqlite(&conn), "w", p.next_after.as_deref(), 1).unwrap();
        let zz = &p.items[0].slot;
        assert_eq!(
            (zz.name.as_str(), zz.count, zz.more),
            ("zz", SLOT_COUNT_CAP, true)
        );
        // The session's slot was passed over; nothing is left.
        assert_eq!((p.items.len(), p.next_after.as_deref()), (1, None));
    }

    /// The search, the lists of a context and the slots run on PostgreSQL.
    #[test]
    fn the_reads_run_on_postgres() {
        let Some((_scratch, pg)) = crate::schema::postgres_scratch() else {
            return;
        };
        let db = Db::Postgres(&pg);
        for (seq, content, context, slot, session) in [
            (
                1,
                "Deploys go through the staging cluster",
                "ops",
                Some("deploy"),
                "",
            ),
            (
                2,
                "The staging cluster deploys nightly",
                "ops",
                Some("deploy"),
                "",
            ),
            (3, "Tabs, not spaces", "style", None, ""),
            (4, "staging is down today", "ops", None, "s1"),
        ] {
            let identity = [seq as u8];
            let (id, contexts_json) = (format!("mem_{seq}"), format!("[\"{context}\"]"));
            let rid: i64 = db
                .query_one(
                    "INSERT INTO memories(id, workspace, session, identity, content,
                       contexts_json, contexts_text, context_count, slot, weight, seq,
                       created_at, updated_at)
                     VALUES (?1, 'w', ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?9, ?9) RETURNING rid",
                    crate::db_params![
                        &id,
                        session,
                        &identity[..],
                        content,
                        &contexts_json,
                        context,
                        slot,
                        f64::from(seq),
                        seq
                    ],
                    |r| r.get(0),
                )
                .unwrap();
            db.execute(
                "INSERT INTO memory_contexts(workspace, context, session, identity, rid, basename)
                 VALUES ('w', ?1, ?2, ?3, ?4, ?1)",
                crate::db_params![context, session, &identity[..], rid],
            )
            .unwrap();
        }
        let hits = search_hits(db, "staging", Some("w"), 10).unwrap();
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids.len(), 2, "not the session's: {ids:?}");
        assert!(hits[0].snippet.contains("<b>staging</b>"), "{hits:?}");
        assert!(search_hits(db, "staging", None, 10).unwrap().len() == 2);
        let page = list(db, "w", Some("ops"), None, 1).unwrap();
        assert_eq!(ids_of(&page), ["mem_2"]);
        let page = list(db, "w", Some("ops"), page.next_cursor, 5).unwrap();
        assert_eq!(ids_of(&page), ["mem_1"]);
        let c = contexts(db, "w", None, 10).unwrap();
        let names: Vec<(&str, i64)> = c.items.iter().map(|c| (c.name.as_str(), c.count)).collect();
        assert_eq!(names, [("ops", 2), ("style", 1)]);
        let slots = slots(db, "w", None, 10).unwrap();
        assert_eq!(slots.items.len(), 1);
        assert_eq!(
            (slots.items[0].slot.count, slots.items[0].holder.id.as_str()),
            (2, "mem_2")
        );
    }

    fn ids_of(p: &MemoryPage) -> Vec<&str> {
        p.items.iter().map(|m| m.id.as_str()).collect()
    }

    /// No read of a page scans a table: each is an index range or seek.
    #[test]
    fn every_read_of_a_page_uses_an_index() {
        let conn = db();
        // A small context is sorted whole: at most SMALL_CONTEXT rows.
        let plans = [
            (format!("SELECT m.seq {LIST_ALL}"), false),
            (format!("SELECT m.seq {LIST_SMALL_CONTEXT}"), true),
            (format!("SELECT m.seq {LIST_LARGE_CONTEXT}"), false),
            (COUNT_CONTEXT.to_string(), false),
            (NEXT_CONTEXT.to_string(), false),
            (NEXT_SLOT.to_string(), false),
            (COUNT_SLOT.to_string(), false),
            (format!("SELECT m.id {SLOT_HOLDER}"), false),
        ];
        for (sql, sorts) in plans {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let nulls = vec![rusqlite::types::Null; stmt.parameter_count()];
            let plan: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let plan = plan.join("; ");
            assert!(
                (sorts || !plan.contains("TEMP B-TREE"))
                    && plan
                        .split("; ")
                        .filter(|s| s.starts_with("SCAN"))
                        .all(|s| s.contains("INDEX") || s.starts_with("SCAN (subquery")),
                "{sql}: {plan}"
            );
        }
    }
}
