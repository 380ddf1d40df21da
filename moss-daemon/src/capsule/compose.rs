//! `capsule_compose`: several capsules assembled into one bundle, markdown or
//! json, optionally cut down to some sections and optionally stored as a capsule itself.

use moss_client::ErrorCode;
use moss_client::capsule::{
    Capsule, ComposeFormat, ComposePart, ComposeParts, ComposeRequest, ComposeResponse,
    StoreRequest,
};
use serde_json::json;

use super::fields::Address;
use super::{Capsules, FETCH_MANY_MAX, Wanted, not_found, query, sections};
use crate::cancel::{self, Cancel};
use crate::error::{Error, Result};

impl Capsules {
    /// `capsule_compose`.
    pub async fn compose(&self, req: ComposeRequest) -> Result<ComposeResponse> {
        cancel::on_drop(|cancel| self.compose_with(req, cancel)).await
    }

    /// `capsule_compose`, stopping at the next item once `cancel` fires.
    async fn compose_with(&self, req: ComposeRequest, cancel: Cancel) -> Result<ComposeResponse> {
        let format = req.format.unwrap_or_default();
        if req.items.is_empty() || req.items.len() > FETCH_MANY_MAX {
            return Err(Error::invalid(format!(
                "items must hold 1 to {FETCH_MANY_MAX} refs, got {}",
                req.items.len()
            ))
            .with_details(
                json!({ "max_items": FETCH_MANY_MAX, "actual_items": req.items.len() }),
            ));
        }
        if let Some(store_as) = &req.store_as {
            if format == ComposeFormat::Json {
                return Err(Error::invalid(
                    "format \"json\" cannot be combined with store_as: a stored capsule needs \
                     the section headers of the markdown format. Drop store_as or use markdown",
                ));
            }
            if store_as.name.trim().is_empty() {
                return Err(Error::invalid(
                    "store_as.name is required: the name to store the bundle under",
                ));
            }
        }
        let wanted: Option<Vec<String>> = match &req.sections {
            None => None,
            Some(list) => {
                let cleaned: Vec<String> = list
                    .iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if cleaned.is_empty() {
                    return Err(Error::invalid(
                        "sections is empty; list header names such as [\"Decisions\"], or omit \
                         it to keep whole capsules",
                    ));
                }
                Some(cleaned)
            }
        };
        // Resolve every address first: a malformed ref fails before any read.
        let addrs = req
            .items
            .iter()
            .enumerate()
            .map(|(i, r)| {
                Address::resolve(r.id.as_deref(), r.workspace.as_deref(), r.name.as_deref())
                    .map_err(|mut e| {
                        e.0.message = format!("items[{i}]: {}", e.0.message);
                        e
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let capsules: Vec<Capsule> = self
            .store
            .readers
            .run(move |conn| {
                let mut out = Vec::with_capacity(addrs.len());
                for (i, addr) in addrs.iter().enumerate() {
                    cancel.check("compose")?;
                    let c = query::find(conn, addr, false, true)
                        .and_then(|c| c.ok_or_else(|| not_found(conn, addr, Wanted::ReadActive)))
                        .map_err(|e| {
                            if e.code() == ErrorCode::NotFound {
                                Error::not_found(format!(
                                "items[{i}]: {}; nothing was composed (compose is all-or-nothing)",
                                e.0.message
                            ))
                            .with_details(json!({ "index": i, "ref": addr.describe() }))
                            } else {
                                e
                            }
                        })?;
                    out.push(c);
                }
                Ok(out)
            })
            .await?;

        let parts: Vec<ComposePart> = capsules
            .into_iter()
            .map(|c| {
                let full = c.capsule_text.unwrap_or_default();
                let text = match &wanted {
                    None => full,
                    Some(w) => only_sections(&full, w),
                };
                ComposePart {
                    display_name: c
                        .title
                        .clone()
                        .or_else(|| c.name.clone())
                        .unwrap_or_else(|| c.id.clone()),
                    chars: text.chars().count() as i64,
                    text,
                    id: c.id,
                    workspace: c.workspace,
                    name: c.name,
                }
            })
            .collect();
        let parts_count = parts.len() as i64;
        let max = self.config.capsule_max_chars as i64;
        let too_large = |chars: i64| {
            Error::new(
                ErrorCode::ComposeTooLarge,
                format!(
                    "the bundle would be {chars} characters; the limit is {max} \
                     (capsule_max_chars). Compose fewer capsules, or keep only some sections \
                     with `sections`"
                ),
            )
            .with_details(json!({ "max_chars": max, "actual_chars": chars }))
        };
        // Both formats answer the bundle as text, and the size limit applies to that text.
        let bundle = match format {
            ComposeFormat::Json => serde_json::to_string(&ComposeParts { parts })
                .map_err(|e| Error::internal("serializing the json bundle", e))?,
            ComposeFormat::Markdown => markdown(&parts),
        };
        let chars = bundle.chars().count() as i64;
        if chars > max {
            return Err(too_large(chars));
        }
        let stored = match req.store_as {
            None => None,
            Some(s) => Some(
                self.store(StoreRequest {
                    capsule_text: bundle.clone(),
                    workspace: s.workspace,
                    name: Some(s.name),
                    title: s.title,
                    tags: s.tags,
                    source: s.source,
                    run_id: s.run_id,
                    phase: s.phase,
                    role: s.role,
                    mode: s.mode,
                    allow_thin: Some(s.allow_thin.unwrap_or(false) || wanted.is_some()),
                })
                .await?,
            ),
        };
        Ok(ComposeResponse {
            bundle_text: bundle,
            bundle_chars: chars,
            parts_count,
            stored,
        })
    }
}

/// The markdown bundle: `## <display_name>\n\n<text>` per part, parts separated by
/// `\n\n---\n\n`. Each text is embedded exactly as stored, trailing line breaks included.
pub fn markdown(parts: &[ComposePart]) -> String {
    parts
        .iter()
        .map(|p| format!("## {}\n\n{}", p.display_name, p.text))
        .collect::<Vec<_>>()
        .join("\n\n---\n\n")
}

/// The sections of `text` named in `wanted`, in the order `wanted` lists them, each with its
/// header line; sections the capsule lacks are skipped. Each section is taken exactly as
/// written, trailing line breaks included; a line break is added only where a section without
/// one (the text's last) is followed by another. So asking for every section in order gives
/// back a text that starts with a header unchanged.
pub fn only_sections(text: &str, wanted: &[String]) -> String {
    let all = sections::sections(text);
    let mut out = String::new();
    for s in wanted
        .iter()
        .filter_map(|w| all.iter().find(|s| sections::matches(s, w)))
    {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(s.whole(text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_kept_in_the_order_asked() {
        let text = "## Objective\no\n## Decisions\nd\n## Open questions\nq\n";
        assert_eq!(
            only_sections(
                text,
                &["open questions".into(), "Decisions".into(), "X".into()]
            ),
            "## Open questions\nq\n## Decisions\nd\n"
        );
    }

    #[test]
    fn sections_keep_their_text_exactly() {
        let all: Vec<String> = ["Objective", "Decisions", "Open questions"]
            .map(String::from)
            .to_vec();
        // Every section in order is the whole text, with or without its last line break and
        // with blank lines between sections.
        for text in [
            "## Objective\no\n## Decisions\nd\n## Open questions\nq\n",
            "## Objective\no\n\n## Decisions\n- d\n\n## Open questions\nq",
            "## Objective\no\n## Decisions\nd\n## Open questions\nq\n\n",
        ] {
            assert_eq!(only_sections(text, &all), text);
        }
        // The last section without a line break, moved first, gets one before the next.
        assert_eq!(
            only_sections(
                "## Objective\no\n## Decisions\nd",
                &all[..2].iter().rev().cloned().collect::<Vec<_>>()
            ),
            "## Decisions\nd\n## Objective\no\n"
        );
        assert_eq!(
            only_sections("## Objective\no\n", &["Decisions".into()]),
            ""
        );
    }

    fn part(name: &str, text: &str) -> ComposePart {
        ComposePart {
            id: name.into(),
            workspace: "w".into(),
            name: Some(name.into()),
            display_name: name.into(),
            text: text.into(),
            chars: text.chars().count() as i64,
        }
    }

    #[test]
    fn markdown_embeds_each_text_exactly() {
        assert_eq!(
            markdown(&[part("a", "one\n"), part("b", "two\n\n"), part("c", "three")]),
            "## a\n\none\n\n\n---\n\n## b\n\ntwo\n\n\n\n---\n\n## c\n\nthree"
        );
        assert_eq!(markdown(&[part("a", "one\n")]), "## a\n\none\n");
    }
}
