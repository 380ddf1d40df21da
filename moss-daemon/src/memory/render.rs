//! Templates: literal strings, slots, recalls and variables concatenated into one text. A part
//! that renders nothing is skipped (and named in `warnings`), so a template never shows an
//! empty section's filler.

use moss_client::memory::{
    MemoryRecallRequest, MemoryRenderRequest, MemoryRenderResponse, Recalled, Template,
    TemplatePart,
};

use super::Memories;
use crate::error::{Error, Result};

/// Memories a slot or recall part brings in.
const PART_LIMIT: i64 = 20;

/// Recalled memories as the bullet lines a template shows: `- content`, one per line.
pub fn bullets(items: &[Recalled]) -> String {
    items
        .iter()
        .map(|r| format!("- {}\n", r.memory.content.replace('\n', "\n  ")))
        .collect()
}

pub async fn render(m: &Memories, req: MemoryRenderRequest) -> Result<MemoryRenderResponse> {
    let max = match req.max_chars {
        None => m.config().output_max_chars,
        Some(v) if (1..=crate::budget::MAX_MAX_CHARS).contains(&v) => v as usize,
        Some(v) => {
            return Err(Error::invalid_field(
                "max_chars",
                format!(
                    "max_chars must be between 1 and {}, got {v}",
                    crate::budget::MAX_MAX_CHARS
                ),
            ));
        }
    };
    let parts: Vec<TemplatePart> = match req.template {
        Template::Parts(p) => p,
        Template::Named(name) => {
            let cfg = &m.config().memory;
            let found = if name == "default" {
                cfg.template.clone()
            } else {
                cfg.templates.get(&name).cloned()
            };
            found.ok_or_else(|| {
                let mut known: Vec<String> = cfg.templates.keys().cloned().collect();
                if cfg.template.is_some() {
                    known.insert(0, "default".into());
                }
                Error::invalid_field(
                    "template",
                    format!(
                        "no template {name:?} in the config's memory.templates (known: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
            })?
        }
    };
    if parts.len() > 200 {
        return Err(Error::invalid_field(
            "template",
            "a template has at most 200 parts",
        ));
    }
    let mut text = String::new();
    let mut warnings = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let piece = match part {
            TemplatePart::Text(s) => s.clone(),
            TemplatePart::Var { var } => match req.vars.as_ref().and_then(|v| v.get(var)) {
                Some(v) => v.clone(),
                None => {
                    warnings.push(format!("part {i}: no value for var {var:?}"));
                    String::new()
                }
            },
            TemplatePart::Slot { slot } => {
                let r = m
                    .recall(MemoryRecallRequest {
                        slot: Some(slot.clone()),
                        workspace: req.workspace.clone(),
                        session: req.session.clone(),
                        limit: Some(PART_LIMIT),
                        ..Default::default()
                    })
                    .await?;
                if r.items.is_empty() {
                    warnings.push(format!("part {i}: slot {slot:?} has no memories"));
                }
                bullets(&r.items)
            }
            TemplatePart::Recall { recall } => {
                let r = m
                    .recall(MemoryRecallRequest {
                        query: Some(recall.clone()),
                        workspace: req.workspace.clone(),
                        session: req.session.clone(),
                        limit: Some(PART_LIMIT),
                        ..Default::default()
                    })
                    .await?;
                if r.items.is_empty() {
                    warnings.push(format!(
                        "part {i}: recall {recall:?} found nothing{}",
                        r.reason.map(|x| format!(" ({x})")).unwrap_or_default()
                    ));
                }
                bullets(&r.items)
            }
        };
        text.push_str(&piece);
    }
    let chars = text.chars().count();
    let truncated = chars > max;
    if truncated {
        let at = text
            .char_indices()
            .nth(max.saturating_sub(1))
            .map_or(text.len(), |(i, _)| i);
        text.truncate(at);
        text.push('…');
    }
    Ok(MemoryRenderResponse {
        chars: text.chars().count() as i64,
        text,
        warnings,
        truncated,
    })
}
