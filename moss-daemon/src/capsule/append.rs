//! `capsule_append`: add content under one markdown section of a capsule
//! without rewriting the rest. The read, the edit and the write are one writer job, so two
//! concurrent appends to the same capsule both land.

use moss_client::ErrorCode;
use moss_client::capsule::{AppendRequest, AppendResponse};
use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::fields::{self, Address};
use super::sections::{self, Section};
use super::{Capsules, Wanted, not_found, query};
use crate::error::{Error, Result};
use crate::store::now;

impl Capsules {
    /// `capsule_append`.
    pub async fn append(&self, req: AppendRequest) -> Result<AppendResponse> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let section = req.section.trim().to_string();
        if section.is_empty() {
            return Err(Error::invalid(
                "section is empty; give the header text as written, e.g. \"Status\" for `## Status`",
            ));
        }
        if req.content.trim().is_empty() {
            return Err(Error::invalid(
                "content is empty or only whitespace; give the markdown to append",
            ));
        }
        let content = req.content;
        let max = self.config.capsule_max_chars;
        self.store
            .writer
            .run(move |conn| {
                let Some(query::ActiveRow { id, .. }) = query::active(conn, &addr)? else {
                    return Err(not_found(conn, &addr, Wanted::Change));
                };
                let (text, workspace, name): (String, String, Option<String>) = conn
                    .prepare_cached(
                        "SELECT capsule_text, workspace_raw, name_raw FROM capsules WHERE id = ?1",
                    )?
                    .query_row([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()?
                    .ok_or_else(|| addr.not_found())?;
                let all = sections::sections(&text);
                if all.is_empty() {
                    return Err(Error::invalid(format!(
                        "capsule {} has no markdown sections (is it a JSON capsule?); \
                         capsule_append needs `## Header` sections. Use capsule_update to \
                         rewrite it instead",
                        addr.describe()
                    )));
                }
                let Some(hit) = all.iter().find(|s| sections::matches(s, &section)) else {
                    let available: Vec<&str> = all.iter().map(|s| s.title.as_str()).collect();
                    return Err(Error::invalid(format!(
                        "section {section:?} not found in capsule {}; available sections: {}",
                        addr.describe(),
                        available
                            .iter()
                            .map(|s| format!("{s:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .with_details(json!({ "section": section, "available": available })));
                };
                let (new_text, replaced) = splice(&text, hit, &content);
                let chars = fields::check_size(&new_text, max).map_err(|e| {
                    Error::new(
                        ErrorCode::CapsuleTooLarge,
                        format!(
                            "appending would make the capsule {} characters; the limit is {max} \
                             (capsule_max_chars). Distill the section first with capsule_update",
                            e.0.details["actual_chars"]
                        ),
                    )
                    .with_details(e.0.details)
                })?;
                conn.prepare_cached(
                    "UPDATE capsules SET capsule_text = ?1, capsule_chars = ?2, tokens_estimate = ?3,
                       updated_at = ?4, seq = ?5 WHERE id = ?6",
                )?
                .execute(params![
                    new_text,
                    chars as i64,
                    fields::tokens_estimate(&new_text),
                    now(),
                    conn.next_seq(),
                    id
                ])?;
                Ok(AppendResponse {
                    fetch_key: name
                        .as_deref()
                        .map(|n| query::fetch_key(&id, &workspace, Some(n))),
                    id,
                    section_hit: hit.line.clone(),
                    replaced,
                })
            })
            .await
    }
}

/// The text with `content` placed in `section`: replacing the section's own text when that is
/// only a placeholder, else after the whole section (subsections included) with a blank line
/// between. A blank line is kept before the next header.
pub fn splice(text: &str, section: &Section, content: &str) -> (String, bool) {
    let replaced = sections::is_placeholder(section.own_body(text));
    let (keep_to, resume_at) = if replaced {
        (section.body_start, section.own_end)
    } else {
        (section.end, section.end)
    };
    let content = content.trim_matches('\n').trim_end();
    let mut out = String::with_capacity(text.len() + content.len() + 4);
    out.push_str(text[..keep_to].trim_end_matches(['\n', ' ', '\t']));
    out.push('\n');
    if !replaced
        && keep_to > section.body_start
        && !text[section.body_start..keep_to].trim().is_empty()
    {
        out.push('\n');
    }
    out.push_str(content);
    out.push('\n');
    let rest = &text[resume_at..];
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(rest);
    }
    (out, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(text: &str, section: &str, content: &str) -> (String, bool) {
        let all = sections::sections(text);
        let s = all.iter().find(|s| sections::matches(s, section)).unwrap();
        splice(text, s, content)
    }

    #[test]
    fn placeholders_are_replaced() {
        let (t, replaced) = append("## Status\n(pending)\n\n## Next\nx\n", "status", "done");
        assert!(replaced);
        assert_eq!(t, "## Status\ndone\n\n## Next\nx\n");
    }

    #[test]
    fn content_goes_after_the_body_with_a_blank_line() {
        let (t, replaced) = append("## Reviews\n- one\n\n## Next\nx\n", "Reviews", "- two\n");
        assert!(!replaced);
        assert_eq!(t, "## Reviews\n- one\n\n- two\n\n## Next\nx\n");
    }

    #[test]
    fn subsections_stay_in_place() {
        // The placeholder is the section's own text; the subsection is kept after it.
        let (t, replaced) = append("# Top\nTBD\n## Sub\ns\n", "top", "real");
        assert!(replaced);
        assert_eq!(t, "# Top\nreal\n\n## Sub\ns\n");
        // Otherwise content goes after the subsections, at the end of the section.
        let (t, replaced) = append("## A\na\n### Sub\ns\n## B\nb\n", "a", "more");
        assert!(!replaced);
        assert_eq!(t, "## A\na\n### Sub\ns\n\nmore\n\n## B\nb\n");
    }

    #[test]
    fn last_section_and_header_without_newline() {
        let (t, _) = append("## A\nx\n## Log", "log", "first");
        assert_eq!(t, "## A\nx\n## Log\nfirst\n");
        let (t, _) = append("## Log\nold", "log", "new");
        assert_eq!(t, "## Log\nold\n\nnew\n");
    }
}
