//! `capsule_compose` (seed 001 §6.13): several capsules assembled into one bundle, markdown or
//! json, optionally cut down to some sections and optionally stored as a capsule itself.

use moss_client::{
    Capsule, ComposeFormat, ComposePart, ComposeRequest, ComposeResponse, ErrorCode, StoreRequest,
};
use serde_json::json;

use super::fields::Address;
use super::{Capsules, FETCH_MANY_MAX, Wanted, not_found, query, sections};
use crate::cancel::Cancel;
use crate::error::{Error, Result};

impl Capsules {
    /// `capsule_compose`.
    pub async fn compose(&self, req: ComposeRequest) -> Result<ComposeResponse> {
        let (cancel, guard) = Cancel::new();
        let result = self.compose_with(req, cancel).await;
        guard.disarm();
        result
    }

    /// `capsule_compose`, stopping at the next item once `cancel` fires.
    pub async fn compose_with(
        &self,
        req: ComposeRequest,
        cancel: Cancel,
    ) -> Result<ComposeResponse> {
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
        match format {
            ComposeFormat::Json => {
                let chars = parts.iter().map(|p| p.chars).sum();
                if chars > max {
                    return Err(too_large(chars));
                }
                Ok(ComposeResponse {
                    bundle_text: None,
                    parts: Some(parts),
                    bundle_chars: chars,
                    parts_count,
                    stored: None,
                })
            }
            ComposeFormat::Markdown => {
                let bundle = parts
                    .iter()
                    .map(|p| format!("## {}\n\n{}", p.display_name, p.text.trim_end()))
                    .collect::<Vec<_>>()
                    .join("\n\n---\n\n");
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
                    bundle_text: Some(bundle),
                    parts: None,
                    bundle_chars: chars,
                    parts_count,
                    stored,
                })
            }
        }
    }
}

/// The sections of `text` named in `wanted`, in the order `wanted` lists them, each with its
/// header line; sections the capsule lacks are skipped.
pub fn only_sections(text: &str, wanted: &[String]) -> String {
    let all = sections::sections(text);
    wanted
        .iter()
        .filter_map(|w| all.iter().find(|s| sections::matches(s, w)))
        .map(|s| s.whole(text).trim_end())
        .collect::<Vec<_>>()
        .join("\n\n")
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
            "## Open questions\nq\n\n## Decisions\nd"
        );
    }
}
