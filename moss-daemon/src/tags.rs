//! Tags, the same in every memory: how a request's tags are cleaned and bounded, how they are
//! stored (a JSON array in a `tags_json` column, NULL for none), and how a read selects the
//! rows carrying one tag.

use crate::bounds::check_len;
use crate::error::{Error, Result};
use crate::sql_filter::{Filter, given};
use crate::store::engine::Engine;

/// Most tags on one item.
pub const MAX_TAGS: usize = 50;
/// Longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 100;

/// Tags: trimmed, empties dropped, duplicates removed in order; none left means no tags.
pub fn clean(value: Option<&[String]>) -> Result<Option<Vec<String>>> {
    let Some(values) = value else {
        return Ok(None);
    };
    if values.len() > MAX_TAGS {
        return Err(Error::invalid_field(
            "tags",
            format!(
                "tags has {} entries; at most {MAX_TAGS} are allowed",
                values.len()
            ),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    for (i, t) in values.iter().enumerate() {
        let t = t.trim();
        if t.is_empty() || out.iter().any(|o| o == t) {
            continue;
        }
        check_len(&format!("tags[{i}]"), t, MAX_TAG_CHARS)?;
        out.push(t.to_string());
    }
    Ok((!out.is_empty()).then_some(out))
}

/// The stored form of cleaned tags: a JSON array, or `None` (NULL) for no tags.
pub fn to_json(tags: Option<&[String]>) -> Option<String> {
    tags.map(|t| serde_json::to_string(t).expect("a list of strings serializes"))
}

/// Narrows `f` to the rows whose `tags_json` column (qualified as the query needs, e.g.
/// `c.tags_json`) holds `tag`, trimmed, and returns that tag. An absent or blank tag adds no
/// term: it does not narrow the selection. SQLite's form: see [`filter_on`].
pub fn filter<'t>(f: &mut Filter, tags_json: &str, tag: Option<&'t str>) -> Option<&'t str> {
    filter_on(Engine::Sqlite, f, tags_json, tag)
}

/// [`filter`] in `engine`'s dialect: SQLite reads the array with `json_each`, PostgreSQL
/// with `jsonb_array_elements_text`.
pub fn filter_on<'t>(
    engine: Engine,
    f: &mut Filter,
    tags_json: &str,
    tag: Option<&'t str>,
) -> Option<&'t str> {
    let tag = given(tag)?;
    let term = match engine {
        Engine::Sqlite => {
            format!("EXISTS (SELECT 1 FROM json_each({tags_json}) WHERE json_each.value = ?)")
        }
        Engine::Postgres => format!(
            "EXISTS (SELECT 1 FROM jsonb_array_elements_text({tags_json}::jsonb) AS t(value) \
             WHERE t.value = ?)"
        ),
    };
    f.add(&term, tag.to_string());
    Some(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_cleaned() {
        let t = vec![" a".to_string(), "a".into(), "".into(), "b".into()];
        assert_eq!(clean(Some(&t)).unwrap(), Some(vec!["a".into(), "b".into()]));
        assert_eq!(clean(Some(&[])).unwrap(), None);
        assert_eq!(to_json(Some(&t[2..])), Some(r#"["","b"]"#.into()));
        assert_eq!(to_json(None), None);
    }

    #[test]
    fn the_filter_matches_one_trimmed_tag() {
        let mut f = Filter::default();
        assert_eq!(filter(&mut f, "c.tags_json", Some("  ")), None);
        assert_eq!(filter(&mut f, "c.tags_json", None), None);
        assert!(f.is_empty());
        assert_eq!(
            filter(&mut f, "c.tags_json", Some(" stale ")),
            Some("stale")
        );
        assert_eq!(
            f.sql(),
            "WHERE EXISTS (SELECT 1 FROM json_each(c.tags_json) WHERE json_each.value = ?1)"
        );
        assert_eq!(
            f.params(),
            [crate::store::engine::Value::Text("stale".into())]
        );
        let mut f = Filter::default();
        filter_on(Engine::Postgres, &mut f, "c.tags_json", Some("stale"));
        assert_eq!(
            f.sql(),
            "WHERE EXISTS (SELECT 1 FROM jsonb_array_elements_text(c.tags_json::jsonb) AS t(value) \
             WHERE t.value = ?1)"
        );
    }
}
