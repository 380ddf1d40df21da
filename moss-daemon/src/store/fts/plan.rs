//! A source's statements, and the index file's tables: the watermarks and one FTS5 table per
//! source.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{SearchTokenizer, Source};

/// FTS5's in-memory buffer of new postings (its `hashsize`, 1 MiB by default). FTS5 writes a
/// segment each time the buffer fills or a transaction ends, and merges segments level by
/// level: bigger segments leave fewer levels for each posting to be rewritten through. Indexing
/// 40,000 capsules of 2 KB on one thread took 97-107 µs each with this buffer and `PASS_SIZE`,
/// 110-135 µs with 500 per transaction and the default buffer; it costs at most this much more
/// memory while a pass runs (the buffer is per FTS5 table, and a pass writes one).
pub(super) const HASH_SIZE: i64 = 8 * 1024 * 1024;

/// The index file's watermarks, one per source. `layout` is the FTS5 table's arguments (columns
/// and tokenizer) it was built with: a descriptor that no longer matches is rebuilt.
pub(super) const STATE_SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS indexer_sources (
      source      TEXT PRIMARY KEY,
      applied_seq INTEGER NOT NULL,
      layout      TEXT NOT NULL
    );
";

/// The layout of the one FTS5 table of index files from before there were several sources.
pub(super) const SINGLE_SOURCE_LAYOUT: &str =
    "title, capsule_text, tokenize = 'unicode61 remove_diacritics 2'";

/// A source's statements, built once when the indexer starts.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) source: &'static Source,
    /// The FTS5 table's arguments: columns and tokenizer.
    pub(super) layout: String,
    /// Index file: create, empty, delete a row, insert a row.
    pub(super) create: String,
    pub(super) clear: String,
    pub(super) delete: String,
    pub(super) insert: String,
    /// `moss.db`: the queue's newest sequence; every row; the queue past a watermark with the
    /// current rows (`exists` false for a row deleted since).
    pub(super) queue_end: String,
    pub(super) read_all: String,
    pub(super) read_queue: String,
}

/// What `search_tokenizer = "code"` adds to a source's tokenizer: `_`, `/`, `-` and `.` are
/// word characters, so paths, snake_case names and ids such as `pr-123` are single words.
pub(super) const CODE_TOKENCHARS: &str = "tokenchars '_/-.'";

impl Plan {
    #[cfg(test)]
    pub(super) fn new(source: &'static Source) -> Plan {
        Plan::with(source, SearchTokenizer::Default)
    }

    /// The plan of `source` under the configured word rules. The tokenizer is part of the
    /// layout, so changing the setting rebuilds every code-aware source at the next start.
    pub(super) fn with(source: &'static Source, words: SearchTokenizer) -> Plan {
        let Source {
            table,
            queue,
            columns,
            fts,
            tokenizer,
            ..
        } = source;
        let tokenizer = match words {
            SearchTokenizer::Code if source.code_aware => format!("{tokenizer} {CODE_TOKENCHARS}"),
            _ => tokenizer.to_string(),
        };
        let cols = columns.join(", ");
        let layout = format!("{cols}, tokenize = '{}'", tokenizer.replace('\'', "''"));
        let marks: Vec<String> = (2..columns.len() + 2).map(|i| format!("?{i}")).collect();
        let current: Vec<String> = columns.iter().map(|c| format!("c.{c}")).collect();
        Plan {
            source,
            create: format!("CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5({layout})"),
            layout,
            clear: format!("DELETE FROM {fts}"),
            delete: format!("DELETE FROM {fts} WHERE rowid = ?1"),
            insert: format!(
                "INSERT INTO {fts}(rowid, {cols}) VALUES (?1, {})",
                marks.join(", ")
            ),
            queue_end: format!("SELECT coalesce(max(seq), 0) FROM {queue}"),
            read_all: format!("SELECT rowid, {cols} FROM {table}"),
            read_queue: format!(
                "SELECT q.seq, q.doc, c.rowid IS NOT NULL, {} FROM {queue} q
                 LEFT JOIN {table} c ON c.rowid = q.doc
                 WHERE q.seq > ?1 ORDER BY q.seq LIMIT ?2",
                current.join(", ")
            ),
        }
    }
}

/// Brings the index file's tables in line with `plans`, in one transaction: the state table,
/// the state of a file older than it, and each source's FTS5 table.
///
/// A source whose watermark is missing, whose table is missing, or whose table was built with
/// other columns or another tokenizer gets an empty table and no watermark: the indexer
/// rebuilds it. Tables of sources no longer served are left alone.
pub(super) fn prepare_index(fts: &mut Connection, plans: &[Plan]) -> rusqlite::Result<()> {
    let tx = fts.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(STATE_SCHEMA)?;
    if table_exists(&tx, "indexer_state")? {
        // A file from before there were several sources kept one watermark in
        // `indexer_state(id = 1)`, for the source that says it inherits it: it is carried
        // over with the layout that file was built with, and the check below keeps the index
        // if the source still has that layout, or rebuilds it.
        if let Some(heir) = plans.iter().find(|p| p.source.inherits_single_watermark) {
            tx.execute(
                "INSERT OR IGNORE INTO indexer_sources(source, applied_seq, layout)
                 SELECT ?1, applied_seq, ?2 FROM indexer_state WHERE id = 1",
                params![heir.source.name, SINGLE_SOURCE_LAYOUT],
            )?;
        }
        tx.execute_batch("DROP TABLE indexer_state")?;
    }
    for plan in plans {
        let layout: Option<String> = tx
            .query_row(
                "SELECT layout FROM indexer_sources WHERE source = ?1",
                [plan.source.name],
                |r| r.get(0),
            )
            .optional()?;
        let built =
            layout.as_deref() == Some(plan.layout.as_str()) && table_exists(&tx, plan.source.fts)?;
        if !built {
            if layout.is_some() {
                tracing::warn!(
                    "the full-text index of {} is missing or built differently; rebuilding it",
                    plan.source.name
                );
            }
            tx.execute_batch(&format!("DROP TABLE IF EXISTS {}", plan.source.fts))?;
            tx.execute(
                "DELETE FROM indexer_sources WHERE source = ?1",
                [plan.source.name],
            )?;
        }
        tx.execute_batch(&plan.create)?;
        tx.execute(
            &format!(
                "INSERT INTO {fts}({fts}, rank) VALUES('hashsize', ?1)",
                fts = plan.source.fts
            ),
            [HASH_SIZE],
        )?;
    }
    tx.commit()
}

pub(super) fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get(0),
    )
}

pub(super) fn applied_seq(fts: &Connection, source: &str) -> rusqlite::Result<Option<i64>> {
    fts.prepare_cached("SELECT applied_seq FROM indexer_sources WHERE source = ?1")?
        .query_row([source], |r| r.get(0))
        .optional()
}
