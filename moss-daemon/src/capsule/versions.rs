//! The version log of capsules: earlier revisions kept per capsule (`capsule_versions`), the
//! list each capsule row keeps of them (`versions_json`), the sweep of dropped ones, and the
//! packing of their texts.

use crate::store::engine::{Db, DbError, Engine, FromValue, Row, Value, ValueRef};

/// Keeps capsule `id` as it is now among its versions (before a change) and returns its new
/// list of versions, which the caller's write of the change puts in `versions_json`. `None`
/// (nothing kept, the list left as it is) when `keep` is 0. Soft deletes and restores keep no
/// version: they change no content.
///
/// The version is appended to the log (`capsule_versions` under a fresh `vid`, on the table's
/// last page) and put first in the list, newest first, at most `keep` long: the list is the
/// index, and no index by capsule is kept. The versions that fall off the list are queued in
/// `capsule_versions_dead` and deleted [`SWEEP_EVERY`] at a time, in vid order: versions
/// dropped together were mostly written together, so the sweep empties whole pages of the log
/// instead of rewriting each page at every commit that drops one of its rows.
pub(crate) fn save_version(db: Db<'_>, id: &str, keep: u32) -> Result<Kept, DbError> {
    if keep == 0 {
        return Ok(Kept(None));
    }
    let (text, evidence, list) = db.query_one(
        "SELECT c.capsule_text, e.evidence_json, c.versions_json FROM capsules c
         LEFT JOIN capsule_evidence e ON e.capsule_id = c.id WHERE c.id = ?1",
        crate::db_params![id],
        |r| {
            Ok((
                r.get::<Packed>(0)?.0,
                r.get::<Option<Packed>>(1)?.map(|p| p.0),
                r.get::<VersionList>(2)?.0,
            ))
        },
    )?;
    let vid: i64 = db.query_one(
        "INSERT INTO capsule_versions(capsule_id, revision, title, capsule_text,
           capsule_chars, tokens_estimate, tags_json, source, run_id, phase, role,
           based_on_json, updated_at, evidence_json)
         SELECT id, revision, title, ?2, capsule_chars, tokens_estimate, tags_json,
           source, run_id, phase, role, based_on_json, updated_at, ?3
         FROM capsules WHERE id = ?1
         RETURNING vid",
        crate::db_params![id, text.as_slice(), evidence.as_deref()],
        |r| r.get(0),
    )?;
    let kept = list.len().min(keep as usize - 1);
    if kept < list.len() {
        let mut last = 0;
        for old in &list[kept..] {
            last = db.query_one(
                "INSERT INTO capsule_versions_dead(vid, capsule_id) VALUES (?1, ?2) RETURNING n",
                crate::db_params![*old, id],
                |r| r.get::<i64>(0),
            )?;
        }
        // The queue's keys start again at 1 once it is emptied: the last one is its length.
        if last >= SWEEP_EVERY {
            sweep_versions(db)?;
        }
    }
    let mut new = Vec::with_capacity(kept + 1);
    new.push(vid);
    new.extend_from_slice(&list[..kept]);
    Ok(Kept(Some(
        serde_json::to_string(&new).expect("a list of integers serializes"),
    )))
}

/// A capsule's new list of kept versions from [`save_version`], for the statement that writes
/// the change to put in `versions_json`. A version left out of every list would never be read
/// nor swept: dropping this is a warning.
#[must_use = "write the list into versions_json with the change"]
pub(crate) struct Kept(pub(crate) Option<String>);

impl Kept {
    /// The list as JSON, `None` when nothing was kept (the stored list stays as it is).
    pub(crate) fn json(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The list as a value for `coalesce(?, versions_json)`.
    pub(crate) fn into_value(self) -> Value {
        self.0.map_or(Value::Null, Value::Text)
    }
}

/// How many dropped versions wait in `capsule_versions_dead` before they are deleted.
const SWEEP_EVERY: i64 = 256;

/// Deletes the versions queued in `capsule_versions_dead`, each only if it is still the
/// capsule's that dropped it (a damaged list never takes another capsule's version), and
/// empties the queue.
pub(crate) fn sweep_versions(db: Db<'_>) -> Result<usize, DbError> {
    let n = db.execute(
        "DELETE FROM capsule_versions WHERE vid IN (
           SELECT d.vid FROM capsule_versions_dead d JOIN capsule_versions v
             ON v.vid = d.vid AND v.capsule_id = d.capsule_id)",
        &[],
    )?;
    db.execute("DELETE FROM capsule_versions_dead", &[])?;
    if db.engine() == Engine::Postgres {
        // SQLite numbers a new key max(n) + 1, so an empty queue starts again at 1 (what
        // save_version counts on); PostgreSQL's identity goes on unless it is set back.
        db.query_one(
            "SELECT setval(pg_get_serial_sequence('capsule_versions_dead', 'n'), 1, false)",
            &[],
            |_| Ok(()),
        )?;
    }
    Ok(n as usize)
}

/// A current text (or evidence) packed for the version log as it is read, without copying it
/// first.
struct Packed(Vec<u8>);

impl FromValue for Packed {
    const WHAT: &'static str = "a text";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Text(t) => Some(Packed(pack_text(t))),
            _ => None,
        }
    }
}

/// A capsule's `versions_json` as read ([`version_list`]).
struct VersionList(Vec<i64>);

impl FromValue for VersionList {
    const WHAT: &'static str = "a text or NULL";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Null => Some(VersionList(version_list(None))),
            ValueRef::Text(t) => Some(VersionList(version_list(Some(t)))),
            _ => None,
        }
    }
}

/// A capsule's `versions_json`: the vids of its kept versions, newest first. A list that does
/// not parse reads as empty: its versions are then hidden, never another capsule's shown.
fn version_list(json: Option<&str>) -> Vec<i64> {
    json.and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default()
}

/// The first byte of a packed version text: an LZ4 block, its length prepended.
const PACKED_LZ4: u8 = 1;

/// A version's text as `capsule_versions` keeps it: a BLOB, `PACKED_LZ4` then the LZ4 block.
/// Versions are written on every change of a kept capsule and rarely read; packed, a 2 KB text
/// takes about half the bytes, so each change writes fewer pages (see docs/perf.md).
fn pack_text(text: &str) -> Vec<u8> {
    let block = lz4_flex::block::compress_prepend_size(text.as_bytes());
    let mut packed = Vec::with_capacity(block.len() + 1);
    packed.push(PACKED_LZ4);
    packed.extend_from_slice(&block);
    packed
}

/// A version's text column as stored, unpacked as it is read (see [`unpack_text`]).
struct Unpacked(std::result::Result<String, String>);

impl FromValue for Unpacked {
    const WHAT: &'static str = "a text or a packed blob";
    fn from_value(v: ValueRef<'_>) -> Option<Self> {
        match v {
            ValueRef::Text(_) | ValueRef::Blob(_) => Some(Unpacked(unpack(v))),
            _ => None,
        }
    }
}

/// A version's text from its column `col` of `r` (`what` names it in errors): TEXT as written
/// before texts were packed, or a BLOB from [`pack_text`]. A BLOB that does not unpack is an
/// error naming the column, never a wrong text. `None` for NULL.
pub(crate) fn unpack_text(
    r: &Row<'_>,
    col: usize,
    what: &str,
) -> std::result::Result<Option<String>, DbError> {
    match r.get::<Option<Unpacked>>(col)? {
        None => Ok(None),
        Some(Unpacked(Ok(text))) => Ok(Some(text)),
        Some(Unpacked(Err(why))) => Err(DbError::Decode {
            column: col,
            why: format!("a packed capsule_versions.{what}: {why}"),
        }),
    }
}

/// A stored version text, TEXT or packed BLOB, as a string; why not, when it is damaged.
fn unpack(v: ValueRef<'_>) -> std::result::Result<String, String> {
    match v {
        ValueRef::Text(t) => Ok(t.to_string()),
        ValueRef::Blob([PACKED_LZ4, block @ ..]) => {
            // LZ4 expands a block at most about 255 times: a larger length prefix is damage,
            // refused before it is allocated.
            let claimed = block
                .get(..4)
                .map_or(0, |p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize);
            if claimed > block.len().saturating_mul(255) + 64 {
                return Err(format!(
                    "claims {claimed} bytes from a block of {}",
                    block.len()
                ));
            }
            let bytes =
                lz4_flex::block::decompress_size_prepended(block).map_err(|e| e.to_string())?;
            String::from_utf8(bytes).map_err(|e| e.to_string())
        }
        ValueRef::Blob(_) => Err("an unknown packing".into()),
        other => Err(format!("{other:?} is no version text")),
    }
}

#[cfg(test)]
mod tests {
    use super::{SWEEP_EVERY, pack_text, save_version, sweep_versions, unpack, unpack_text};
    use crate::store::engine::{Db, DbError, Param, ValueRef};

    /// `v` read back through a statement as a version text column.
    fn unpack_read(v: Param<'_>, what: &str) -> Result<Option<String>, DbError> {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        Db::Sqlite(&conn).query_one("SELECT ?1", &[v], |r| unpack_text(r, 0, what))
    }

    #[test]
    fn version_texts_pack_and_unpack() {
        let text = "## Objective\nShip the parser.\n".repeat(60) + "é ✓ 🚀";
        let packed = pack_text(&text);
        assert!(
            packed.len() < text.len() / 4,
            "{} of {}",
            packed.len(),
            text.len()
        );
        assert_eq!(unpack(ValueRef::Blob(&packed)).unwrap(), text);
        let empty = pack_text("");
        assert_eq!(unpack(ValueRef::Blob(&empty)).unwrap(), "");
        // Versions written before texts were packed are TEXT.
        assert_eq!(unpack(ValueRef::Text("as it was")).unwrap(), "as it was");
        let read = |v| unpack_read(v, "capsule_text").unwrap();
        assert_eq!(read(Param::Blob(&packed)), Some(text));
        assert_eq!(read(Param::Text("as it was")).as_deref(), Some("as it was"));
        assert_eq!(read(Param::Null), None);
    }

    /// `(revision, text)` of each version kept of capsule `id`, newest first, from its list;
    /// and how many version rows the log holds for it.
    fn kept(conn: &rusqlite::Connection, id: &str) -> (Vec<(i64, String)>, i64) {
        let listed = Db::Sqlite(conn)
            .query_map(
                "SELECT v.revision, v.capsule_text FROM capsules c, json_each(c.versions_json) j
                 JOIN capsule_versions v ON v.vid = j.value WHERE c.id = ?1 ORDER BY j.key",
                &[Param::Text(id)],
                |r| Ok((r.get(0)?, unpack_text(r, 1, "capsule_text")?.unwrap())),
            )
            .unwrap();
        let rows = conn
            .query_row(
                "SELECT count(*) FROM capsule_versions WHERE capsule_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        (listed, rows)
    }

    #[test]
    fn versions_go_to_the_log_and_the_oldest_fall_off_it() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrations::migrate(&mut conn, crate::schema::MIGRATIONS).unwrap();
        for id in ["a", "b"] {
            conn.execute(
                "INSERT INTO capsules(id, workspace_raw, workspace_norm, name_raw, name_norm,
                   capsule_text, capsule_chars, tokens_estimate, created_at, updated_at, seq)
                 VALUES (?1, 'w', 'w', ?1, ?1, 'r1', 2, 1, 1, 1, 1)",
                [id],
            )
            .unwrap();
        }
        let change = |conn: &rusqlite::Connection, id: &str, keep: u32| {
            let list = save_version(Db::Sqlite(conn), id, keep)
                .unwrap()
                .into_value();
            conn.execute(
                "UPDATE capsules SET revision = revision + 1, capsule_text = 'r' || (revision + 1),
                   versions_json = coalesce(?2, versions_json) WHERE id = ?1",
                rusqlite::params![id, list],
            )
            .unwrap();
        };
        let queued = |conn: &rusqlite::Connection| -> i64 {
            conn.query_row("SELECT count(*) FROM capsule_versions_dead", [], |r| {
                r.get(0)
            })
            .unwrap()
        };
        for _ in 0..5 {
            change(&conn, "a", 3);
            change(&conn, "b", 3);
        }
        let rev = |r: i64| (r, format!("r{r}"));
        // Two versions of each fell off their list; they wait to be swept.
        assert_eq!(kept(&conn, "a"), (vec![rev(5), rev(4), rev(3)], 5));
        assert_eq!(kept(&conn, "b"), (vec![rev(5), rev(4), rev(3)], 5));
        assert_eq!(queued(&conn), 4);
        assert_eq!(sweep_versions(Db::Sqlite(&conn)).unwrap(), 4);
        assert_eq!(queued(&conn), 0);
        assert_eq!(kept(&conn, "a"), (vec![rev(5), rev(4), rev(3)], 3));
        assert_eq!(kept(&conn, "b").1, 3);
        // Keeping fewer drops every version beyond the new count at the next change.
        change(&conn, "a", 1);
        assert_eq!(kept(&conn, "a").0, vec![rev(6)]);
        sweep_versions(Db::Sqlite(&conn)).unwrap();
        assert_eq!(kept(&conn, "a"), (vec![rev(6)], 1));
        assert_eq!(kept(&conn, "b").1, 3, "b's versions are b's alone");
        // Keeping none saves nothing and leaves what is kept alone.
        change(&conn, "a", 0);
        assert_eq!(kept(&conn, "a"), (vec![rev(6)], 1));
        // A damaged list hides versions; it never deletes or shows another capsule's.
        conn.execute(
            "UPDATE capsules SET versions_json = (SELECT versions_json FROM capsules
               WHERE id = 'b') WHERE id = 'a'",
            [],
        )
        .unwrap();
        change(&conn, "a", 1);
        sweep_versions(Db::Sqlite(&conn)).unwrap();
        assert_eq!(
            kept(&conn, "b").1,
            3,
            "a's list naming b's versions took none"
        );
        assert_eq!(kept(&conn, "a").0, vec![rev(8)]);
        // The queue never holds more than a sweep's worth: the log stays bounded.
        for _ in 0..(3 * SWEEP_EVERY) {
            change(&conn, "b", 3);
            assert!(queued(&conn) < SWEEP_EVERY);
        }
        let (listed, rows) = kept(&conn, "b");
        assert_eq!(listed.len(), 3);
        assert!(rows < 3 + SWEEP_EVERY, "{rows}");
    }

    #[test]
    fn a_damaged_version_text_is_an_error_not_a_wrong_text() {
        let mut packed = pack_text(&"abc ".repeat(100));
        packed.truncate(packed.len() - 3);
        let e = unpack_read(Param::Blob(&packed), "evidence_json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a packed capsule_versions.evidence_json"), "{e}");
        let e = unpack(ValueRef::Blob(&[9, 1, 2])).unwrap_err();
        assert!(e.contains("unknown packing"), "{e}");
        assert!(unpack(ValueRef::Int(3)).is_err());
        assert!(unpack_read(Param::Int(3), "evidence_json").is_err());
        // A length prefix no LZ4 block of that size can produce is refused before allocating.
        let e = unpack(ValueRef::Blob(&[1, 0xff, 0xff, 0xff, 0xf0, 0, 0])).unwrap_err();
        assert!(e.contains("claims"), "{e}");
    }
}
