//! The version log of capsules: earlier revisions kept per capsule (`capsule_versions`), the
//! list each capsule row keeps of them (`versions_json`), the sweep of dropped ones, and the
//! packing of their texts.

use rusqlite::{Connection, params};

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
pub(crate) fn save_version(conn: &Connection, id: &str, keep: u32) -> rusqlite::Result<Kept> {
    if keep == 0 {
        return Ok(Kept(None));
    }
    let (text, evidence, list) = conn
        .prepare_cached(
            "SELECT c.capsule_text, e.evidence_json, c.versions_json FROM capsules c
             LEFT JOIN capsule_evidence e ON e.capsule_id = c.id WHERE c.id = ?1",
        )?
        .query_row([id], |r| {
            Ok((
                pack_text(r.get_ref(0)?.as_str()?),
                r.get_ref(1)?.as_str_or_null()?.map(pack_text),
                version_list(r.get_ref(2)?.as_str_or_null()?),
            ))
        })?;
    conn.prepare_cached(
        "INSERT INTO capsule_versions(capsule_id, revision, title, capsule_text,
           capsule_chars, tokens_estimate, tags_json, source, run_id, phase, role,
           based_on_json, updated_at, evidence_json)
         SELECT id, revision, title, ?2, capsule_chars, tokens_estimate, tags_json,
           source, run_id, phase, role, based_on_json, updated_at, ?3
         FROM capsules WHERE id = ?1",
    )?
    .execute(params![id, text, evidence])?;
    let vid = conn.last_insert_rowid();
    let kept = list.len().min(keep as usize - 1);
    if kept < list.len() {
        let mut queue = conn
            .prepare_cached("INSERT INTO capsule_versions_dead(vid, capsule_id) VALUES (?1, ?2)")?;
        for old in &list[kept..] {
            queue.execute(params![old, id])?;
        }
        // The queue's keys start again at 1 once it is emptied: the last one is its length.
        if conn.last_insert_rowid() >= SWEEP_EVERY {
            sweep_versions(conn)?;
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
    pub(crate) fn into_value(self) -> rusqlite::types::Value {
        self.0
            .map_or(rusqlite::types::Value::Null, rusqlite::types::Value::Text)
    }
}

/// How many dropped versions wait in `capsule_versions_dead` before they are deleted.
const SWEEP_EVERY: i64 = 256;

/// Deletes the versions queued in `capsule_versions_dead`, each only if it is still the
/// capsule's that dropped it (a damaged list never takes another capsule's version), and
/// empties the queue.
pub(crate) fn sweep_versions(conn: &Connection) -> rusqlite::Result<usize> {
    let n = conn
        .prepare_cached(
            "DELETE FROM capsule_versions WHERE vid IN (
               SELECT d.vid FROM capsule_versions_dead d JOIN capsule_versions v
                 ON v.vid = d.vid AND v.capsule_id = d.capsule_id)",
        )?
        .execute([])?;
    conn.prepare_cached("DELETE FROM capsule_versions_dead")?
        .execute([])?;
    Ok(n)
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

/// A version's text from its column `col` (`what` names it in errors): TEXT as written before
/// texts were packed, or a BLOB from [`pack_text`]. A BLOB that does not unpack is an error
/// naming the column, never a wrong text.
pub(crate) fn unpack_text(
    v: rusqlite::types::ValueRef<'_>,
    col: usize,
    what: &str,
) -> rusqlite::Result<String> {
    use rusqlite::types::{FromSqlError, ValueRef};
    let bad = |why: String| {
        rusqlite::Error::FromSqlConversionFailure(
            col,
            rusqlite::types::Type::Blob,
            format!("a packed capsule_versions.{what}: {why}").into(),
        )
    };
    match v {
        ValueRef::Text(t) => String::from_utf8(t.to_vec()).map_err(|e| bad(e.to_string())),
        ValueRef::Blob([PACKED_LZ4, block @ ..]) => {
            // LZ4 expands a block at most about 255 times: a larger length prefix is damage,
            // refused before it is allocated.
            let claimed = block
                .get(..4)
                .map_or(0, |p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize);
            if claimed > block.len().saturating_mul(255) + 64 {
                return Err(bad(format!(
                    "claims {claimed} bytes from a block of {}",
                    block.len()
                )));
            }
            let bytes = lz4_flex::block::decompress_size_prepended(block)
                .map_err(|e| bad(e.to_string()))?;
            String::from_utf8(bytes).map_err(|e| bad(e.to_string()))
        }
        ValueRef::Blob(_) => Err(bad("an unknown packing".into())),
        other => Err(rusqlite::Error::FromSqlConversionFailure(
            col,
            other.data_type(),
            Box::new(FromSqlError::InvalidType),
        )),
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::types::ValueRef;

    use super::{SWEEP_EVERY, pack_text, save_version, sweep_versions, unpack_text};

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
        let unpack = |v| unpack_text(v, 2, "capsule_text");
        assert_eq!(unpack(ValueRef::Blob(&packed)).unwrap(), text);
        let empty = pack_text("");
        assert_eq!(unpack(ValueRef::Blob(&empty)).unwrap(), "");
        // Versions written before texts were packed are TEXT.
        assert_eq!(unpack(ValueRef::Text(b"as it was")).unwrap(), "as it was");
    }

    /// `(revision, text)` of each version kept of capsule `id`, newest first, from its list;
    /// and how many version rows the log holds for it.
    fn kept(conn: &rusqlite::Connection, id: &str) -> (Vec<(i64, String)>, i64) {
        let listed = conn
            .prepare(
                "SELECT v.revision, v.capsule_text FROM capsules c, json_each(c.versions_json) j
                 JOIN capsule_versions v ON v.vid = j.value WHERE c.id = ?1 ORDER BY j.key",
            )
            .unwrap()
            .query_map([id], |r| {
                Ok((r.get(0)?, unpack_text(r.get_ref(1)?, 1, "capsule_text")?))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
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
            let list = save_version(conn, id, keep).unwrap().into_value();
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
        assert_eq!(sweep_versions(&conn).unwrap(), 4);
        assert_eq!(queued(&conn), 0);
        assert_eq!(kept(&conn, "a"), (vec![rev(5), rev(4), rev(3)], 3));
        assert_eq!(kept(&conn, "b").1, 3);
        // Keeping fewer drops every version beyond the new count at the next change.
        change(&conn, "a", 1);
        assert_eq!(kept(&conn, "a").0, vec![rev(6)]);
        sweep_versions(&conn).unwrap();
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
        sweep_versions(&conn).unwrap();
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
        let unpack = |v| unpack_text(v, 12, "evidence_json");
        let mut packed = pack_text(&"abc ".repeat(100));
        packed.truncate(packed.len() - 3);
        let e = unpack(ValueRef::Blob(&packed)).unwrap_err().to_string();
        assert!(e.contains("a packed capsule_versions.evidence_json"), "{e}");
        let e = unpack(ValueRef::Blob(&[9, 1, 2])).unwrap_err().to_string();
        assert!(e.contains("unknown packing"), "{e}");
        assert!(unpack(ValueRef::Integer(3)).is_err());
        // A length prefix no LZ4 block of that size can produce is refused before allocating.
        let e = unpack(ValueRef::Blob(&[1, 0xff, 0xff, 0xff, 0xf0, 0, 0]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("claims"), "{e}");
    }
}
