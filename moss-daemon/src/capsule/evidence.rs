//! Evidence kept with a capsule: snippets, transcript refs, links. It lives beside the capsule's
//! row (`capsule_evidence`), so a change that leaves it alone never rewrites it, and it is not
//! counted in the capsule's size. `capsule_fetch` lists it, with content only on request.

use crate::error::{Error, Result};
use crate::store::engine::{Db, DbError, Engine};
use moss_client::capsule::{Evidence, EvidenceItem};

/// Most evidence items one capsule keeps.
pub const MAX_ITEMS: usize = 20;
/// Longest `type`, in characters.
pub const MAX_TYPE_CHARS: usize = 32;
/// Longest `ref`, in characters.
pub const MAX_REF_CHARS: usize = 500;
/// Longest `content`, in characters.
pub const MAX_CONTENT_CHARS: usize = 4_000;

/// The stored form of `items`, checked: `None` for none (absent or `[]`). Every bound names the
/// item and field that broke it.
pub(crate) fn to_json(items: Option<&[Evidence]>) -> Result<Option<String>> {
    let Some(items) = items.filter(|i| !i.is_empty()) else {
        return Ok(None);
    };
    if items.len() > MAX_ITEMS {
        return Err(Error::invalid_field(
            "evidence",
            format!(
                "evidence holds {} items; at most {MAX_ITEMS} are allowed (keep the strongest, \
                 or point to a file with a ref)",
                items.len()
            ),
        ));
    }
    let mut clean = Vec::with_capacity(items.len());
    for (i, e) in items.iter().enumerate() {
        let kind = e.kind.trim();
        let reference = e.reference.trim();
        check(
            i,
            "type",
            kind,
            MAX_TYPE_CHARS,
            "e.g. \"snippet\" or \"transcript\"",
        )?;
        check(
            i,
            "ref",
            reference,
            MAX_REF_CHARS,
            "e.g. \"src/auth.ts:42-50\"",
        )?;
        if kind.chars().any(char::is_control) {
            return Err(Error::invalid_field(
                &format!("evidence[{i}].type"),
                format!("evidence[{i}].type holds a control character"),
            ));
        }
        let content = e.content.as_deref().filter(|c| !c.is_empty());
        if let Some(c) = content {
            let chars = c.chars().count();
            if chars > MAX_CONTENT_CHARS {
                return Err(Error::invalid_field(
                    &format!("evidence[{i}].content"),
                    format!(
                        "evidence[{i}].content is {chars} characters; at most \
                         {MAX_CONTENT_CHARS} are allowed (keep the relevant lines and give \
                         the rest by ref)"
                    ),
                ));
            }
        }
        clean.push(Evidence {
            kind: kind.to_string(),
            reference: reference.to_string(),
            content: content.map(str::to_string),
        });
    }
    Ok(Some(
        serde_json::to_string(&clean).expect("evidence serializes"),
    ))
}

fn check(i: usize, field: &str, value: &str, max: usize, example: &str) -> Result<()> {
    let chars = value.chars().count();
    if chars == 0 || chars > max {
        return Err(Error::invalid_field(
            &format!("evidence[{i}].{field}"),
            format!(
                "evidence[{i}].{field} must be 1 to {max} characters ({example}); it is {chars}"
            ),
        ));
    }
    Ok(())
}

/// Sets capsule `id`'s evidence to `json` (from [`to_json`]); `None` removes it.
pub(crate) fn write(db: Db<'_>, id: &str, json: Option<&str>) -> std::result::Result<(), DbError> {
    match json {
        Some(j) => db.execute(
            match db.engine() {
                Engine::Sqlite => {
                    "INSERT OR REPLACE INTO capsule_evidence(capsule_id, evidence_json) \
                     VALUES (?1, ?2)"
                }
                Engine::Postgres => {
                    "INSERT INTO capsule_evidence(capsule_id, evidence_json) VALUES (?1, ?2)
                     ON CONFLICT (capsule_id) DO UPDATE SET evidence_json = excluded.evidence_json"
                }
            },
            crate::db_params![id, j],
        )?,
        None => db.execute(
            "DELETE FROM capsule_evidence WHERE capsule_id = ?1",
            crate::db_params![id],
        )?,
    };
    Ok(())
}

/// Capsule `id`'s evidence as stored, if it has any.
pub(crate) fn stored(db: Db<'_>, id: &str) -> std::result::Result<Option<String>, DbError> {
    db.query_opt(
        "SELECT evidence_json FROM capsule_evidence WHERE capsule_id = ?1",
        crate::db_params![id],
        |r| r.get(0),
    )
}

/// The items of a stored list, content only when `expand`. A list that does not parse (it
/// never should) reads as none rather than failing the fetch.
pub(crate) fn items(json: Option<&str>, expand: bool) -> Option<Vec<EvidenceItem>> {
    let stored: Vec<Evidence> = serde_json::from_str(json?).ok()?;
    let items: Vec<EvidenceItem> = stored
        .into_iter()
        .map(|e| EvidenceItem {
            chars: e.content.as_deref().map_or(0, |c| c.chars().count() as i64),
            content: if expand { e.content } else { None },
            kind: e.kind,
            reference: e.reference,
        })
        .collect();
    (!items.is_empty()).then_some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &str, reference: &str, content: Option<&str>) -> Evidence {
        Evidence {
            kind: kind.into(),
            reference: reference.into(),
            content: content.map(Into::into),
        }
    }

    fn field_of(e: Error) -> String {
        e.0.details["field"].as_str().unwrap().to_string()
    }

    #[test]
    fn bounds_name_the_item_and_field() {
        let ok = vec![ev("snippet", "src/a.rs:1-9", Some("fn a() {}"))];
        assert!(to_json(Some(&ok)).unwrap().is_some());
        assert_eq!(to_json(Some(&[])).unwrap(), None);
        assert_eq!(to_json(None).unwrap(), None);

        let many = vec![ev("log", "r", None); MAX_ITEMS + 1];
        assert_eq!(field_of(to_json(Some(&many)).unwrap_err()), "evidence");
        let exactly = vec![ev("log", "r", None); MAX_ITEMS];
        assert!(to_json(Some(&exactly)).is_ok());

        let long_ref = "r".repeat(MAX_REF_CHARS + 1);
        let e = to_json(Some(&[ok[0].clone(), ev("link", &long_ref, None)])).unwrap_err();
        assert_eq!(field_of(e), "evidence[1].ref");
        assert!(to_json(Some(&[ev("link", &"r".repeat(MAX_REF_CHARS), None)])).is_ok());

        let e = to_json(Some(&[ev(" ", "x", None)])).unwrap_err();
        assert_eq!(field_of(e), "evidence[0].type");
        let e = to_json(Some(&[ev(&"t".repeat(MAX_TYPE_CHARS + 1), "x", None)])).unwrap_err();
        assert_eq!(field_of(e), "evidence[0].type");

        // Characters, not bytes: 4,000 two-byte characters pass, one more does not.
        let at = "é".repeat(MAX_CONTENT_CHARS);
        assert!(to_json(Some(&[ev("snippet", "x", Some(&at))])).is_ok());
        let over = format!("{at}é");
        let e = to_json(Some(&[ev("snippet", "x", Some(&over))])).unwrap_err();
        assert!(e.0.message.contains("4001 characters"), "{}", e.0.message);
        assert_eq!(field_of(e), "evidence[0].content");
    }

    #[test]
    fn items_carry_content_only_when_expanded() {
        let json = to_json(Some(&[
            ev(" snippet ", " src/a.rs:3 ", Some("let x = 1;")),
            ev("transcript", "run-7#42", Some("")),
        ]))
        .unwrap();
        let folded = items(json.as_deref(), false).unwrap();
        assert_eq!(folded[0].kind, "snippet");
        assert_eq!(folded[0].reference, "src/a.rs:3");
        assert_eq!(folded[0].chars, 10);
        assert_eq!(folded[0].content, None);
        assert_eq!(folded[1].chars, 0);
        let expanded = items(json.as_deref(), true).unwrap();
        assert_eq!(expanded[0].content.as_deref(), Some("let x = 1;"));
        assert_eq!(expanded[1].content, None);
        assert_eq!(items(None, true), None);
    }
}
