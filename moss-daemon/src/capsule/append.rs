//! `capsule_append`: add content under one markdown section of a capsule
//! without rewriting the rest. The read, the edit and the write are one writer job, so two
//! concurrent appends to the same capsule both land.

use moss_client::ErrorCode;
use moss_client::capsule::{AppendHit, AppendPosition, AppendRequest, AppendResponse};
use serde_json::json;

use super::fields::{self, Address};
use super::sections::{self, Section};
use super::{Capsules, Guard, query};
use crate::error::{Error, Result};
use crate::store::now;

/// Most sections one `capsule_append` writes.
pub const MAX_APPEND_SECTIONS: usize = 20;

/// One section's edit, checked.
#[derive(Debug, Clone)]
pub struct Edit {
    pub section: String,
    pub content: String,
}

/// The edits of a request: `section` + `content`, or `sections`, not both.
fn edits(req: &AppendRequest) -> Result<Vec<Edit>> {
    let raw: Vec<(String, String, String)> = match (&req.sections, &req.section, &req.content) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(Error::invalid_field(
                "sections",
                "give either section + content or sections, not both",
            ));
        }
        (Some(list), None, None) => {
            if list.is_empty() || list.len() > MAX_APPEND_SECTIONS {
                return Err(Error::invalid_field(
                    "sections",
                    format!(
                        "sections must hold 1 to {MAX_APPEND_SECTIONS} entries, got {}",
                        list.len()
                    ),
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        format!("sections[{i}]"),
                        s.section.clone(),
                        s.content.clone(),
                    )
                })
                .collect()
        }
        (None, Some(section), Some(content)) => {
            vec![(String::new(), section.clone(), content.clone())]
        }
        (None, None, _) => {
            return Err(Error::invalid_field(
                "section",
                "section is required: the header text as written, e.g. \"Status\" for \
                 `## Status` (or give sections: [{section, content}, …])",
            ));
        }
        (None, Some(_), None) => {
            return Err(Error::invalid_field(
                "content",
                "content is required: the markdown to append",
            ));
        }
    };
    raw.into_iter()
        .map(|(at, section, content)| {
            let field = |f: &str| {
                if at.is_empty() {
                    f.to_string()
                } else {
                    format!("{at}.{f}")
                }
            };
            let section = section.trim().to_string();
            if section.is_empty() {
                return Err(Error::invalid_field(
                    &field("section"),
                    format!(
                        "{} is empty; give the header text as written, e.g. \"Status\" for \
                         `## Status`",
                        field("section")
                    ),
                ));
            }
            if content.trim().is_empty() {
                return Err(Error::invalid_field(
                    &field("content"),
                    format!(
                        "{} is empty or only whitespace; give the markdown to append",
                        field("content")
                    ),
                ));
            }
            Ok(Edit { section, content })
        })
        .collect()
}

/// Applies `edits` to `text` in order, each on the text the previous one left: all or none.
/// `if_placeholder` refuses (409) a section that already has content.
pub fn apply(
    text: &str,
    edits: &[Edit],
    position: AppendPosition,
    if_placeholder: bool,
    describe: &str,
) -> Result<(String, Vec<AppendHit>)> {
    let mut text = text.to_string();
    let mut hits = Vec::with_capacity(edits.len());
    for e in edits {
        let all = sections::sections(&text);
        if all.is_empty() {
            return Err(Error::invalid(format!(
                "capsule {describe} has no markdown sections (is it a JSON capsule?); \
                 capsule_append needs `## Header` sections. Use capsule_update to rewrite it \
                 instead"
            )));
        }
        let Some(hit) = all.iter().find(|s| sections::matches(s, &e.section)) else {
            let available: Vec<&str> = all.iter().map(|s| s.title.as_str()).collect();
            return Err(Error::invalid(format!(
                "section {:?} not found in capsule {describe}; nothing was written. Available \
                 sections: {}",
                e.section,
                available
                    .iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .with_details(
                json!({ "field": "section", "section": e.section, "available": available }),
            ));
        };
        if if_placeholder && !sections::is_placeholder(hit.own_body(&text)) {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "section {:?} of capsule {describe} already has content, and if_placeholder \
                     is set; nothing was written",
                    hit.title
                ),
            )
            .with_details(json!({ "section": hit.title, "section_hit": hit.line })));
        }
        let (next, replaced) = splice(&text, hit, &e.content, position);
        hits.push(AppendHit {
            section_hit: hit.line.clone(),
            replaced,
        });
        text = next;
    }
    Ok((text, hits))
}

impl Capsules {
    /// `capsule_append`.
    pub async fn append(&self, req: AppendRequest) -> Result<AppendResponse> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let edits = edits(&req)?;
        let position = req.position.unwrap_or_default();
        let if_placeholder = req.if_placeholder.unwrap_or(false);
        let guard = Guard {
            if_updated_at: req.if_updated_at,
            if_revision: req.if_revision,
        };
        let max = self.config.capsule_max_chars;
        let keep = self.config.capsule_versions;
        let tokenizer = self.config.tokenizer;
        let ahead = edits.clone();
        let pre = self
            .count_ahead(&addr, move |text, addr| {
                Ok(apply(&text, &ahead, position, if_placeholder, &addr.describe())?.0)
            })
            .await;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let row = guard.row(db, &addr)?;
                let id = row.id;
                let (text, workspace, name): (String, String, Option<String>) = db
                    .query_opt(
                        "SELECT capsule_text, workspace_raw, name_raw FROM capsules WHERE id = ?1",
                        crate::db_params![&id],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )?
                    .ok_or_else(|| addr.not_found())?;
                let (new_text, hits) =
                    apply(&text, &edits, position, if_placeholder, &addr.describe())?;
                let chars = fields::check_size(&new_text, max).map_err(|e| {
                    Error::new(
                        ErrorCode::CapsuleTooLarge,
                        format!(
                            "appending would make the capsule {} characters; the limit is {max} \
                             (capsule_max_chars); nothing was written. Distill the section \
                             first with capsule_update",
                            e.0.details["actual_chars"]
                        ),
                    )
                    .with_details(e.0.details)
                })?;
                let t = now();
                let versions = super::save_version(db, &id, keep)?;
                db.execute(
                    "UPDATE capsules SET capsule_text = ?1, capsule_chars = ?2, tokens_estimate = ?3,
                       updated_at = ?4, seq = ?5, versions_json = coalesce(?7, versions_json),
                       revision = revision + 1 WHERE id = ?6",
                    crate::db_params![
                        &new_text,
                        chars as i64,
                        tokenizer.count_with(&new_text, pre.as_ref()),
                        t,
                        ctx.next_seq(),
                        &id,
                        versions.json()
                    ],
                )?;
                ctx.changed(&super::SEARCH_SOURCE);
                Ok(AppendResponse {
                    fetch_key: name
                        .as_deref()
                        .map(|n| query::fetch_key(&id, &workspace, Some(n))),
                    id,
                    section_hit: hits[0].section_hit.clone(),
                    replaced: hits[0].replaced,
                    sections: hits,
                    revision: row.revision + 1,
                    updated_at: t,
                })
            })
            .await
    }
}

/// The text with `content` placed in `section`: replacing the section's own text when that is
/// only a placeholder; else after the whole section (subsections included), or with
/// [`AppendPosition::Prepend`] right under its header, with a blank line between. A blank line
/// is kept before the next header.
pub fn splice(
    text: &str,
    section: &Section,
    content: &str,
    position: AppendPosition,
) -> (String, bool) {
    let replaced = sections::is_placeholder(section.own_body(text));
    if !replaced && position == AppendPosition::Prepend {
        let content = content.trim_matches('\n').trim_end();
        let head = &text[..section.body_start];
        let body = text[section.body_start..].trim_start_matches(['\n', ' ', '\t']);
        let mut out = String::with_capacity(text.len() + content.len() + 4);
        out.push_str(head);
        if !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(content);
        out.push('\n');
        if !body.is_empty() {
            out.push('\n');
            out.push_str(body);
        }
        return (out, false);
    }
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
        splice(text, s, content, AppendPosition::Append)
    }

    fn edit(section: &str, content: &str) -> Edit {
        Edit {
            section: section.into(),
            content: content.into(),
        }
    }

    #[test]
    fn prepend_puts_content_under_the_header() {
        let text = "## Status\nold\n\n## Next\nx\n";
        let (t, hits) = apply(
            text,
            &[edit("status", "new")],
            AppendPosition::Prepend,
            false,
            "c",
        )
        .unwrap();
        assert_eq!(t, "## Status\nnew\n\nold\n\n## Next\nx\n");
        assert!(!hits[0].replaced);
        // A placeholder is replaced whatever the position.
        let (t, hits) = apply(
            "## Status\nTBD\n## Next\nx",
            &[edit("Status", "first")],
            AppendPosition::Prepend,
            false,
            "c",
        )
        .unwrap();
        assert_eq!(t, "## Status\nfirst\n\n## Next\nx");
        assert!(hits[0].replaced);
        // A header at the very end.
        let (t, _) = apply(
            "## A\na\n## Log",
            &[edit("log", "l")],
            AppendPosition::Prepend,
            false,
            "c",
        )
        .unwrap();
        assert_eq!(t, "## A\na\n## Log\nl\n");
    }

    #[test]
    fn several_sections_apply_in_order_or_not_at_all() {
        let text = "## Status\n(pending)\n\n## Decisions\n- a\n";
        let (t, hits) = apply(
            text,
            &[
                edit("Status", "implementing"),
                edit("Decisions", "- b"),
                edit("status", "done"),
            ],
            AppendPosition::Append,
            false,
            "c",
        )
        .unwrap();
        assert_eq!(
            t,
            "## Status\nimplementing\n\ndone\n\n## Decisions\n- a\n\n- b\n"
        );
        assert_eq!(
            hits.iter().map(|h| h.replaced).collect::<Vec<_>>(),
            [true, false, false]
        );
        let err = apply(
            text,
            &[edit("Status", "x"), edit("Nope", "y")],
            AppendPosition::Append,
            false,
            "c",
        )
        .unwrap_err();
        assert_eq!(err.0.details["section"], "Nope");
        // if_placeholder: the placeholder is written; a section with content is a conflict.
        assert!(
            apply(
                text,
                &[edit("Status", "x")],
                AppendPosition::Append,
                true,
                "c"
            )
            .is_ok()
        );
        let err = apply(
            text,
            &[edit("Status", "x"), edit("Decisions", "y")],
            AppendPosition::Append,
            true,
            "c",
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict);
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
