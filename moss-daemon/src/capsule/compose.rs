//! `capsule_compose`: several capsules assembled into one bundle, markdown or
//! json, optionally cut down to some sections and optionally stored as a capsule itself.

use moss_client::ErrorCode;
use moss_client::capsule::{
    Capsule, CapsuleRef, ComposeFormat, ComposeItem, ComposePart, ComposeParts, ComposePivot,
    ComposeRequest, ComposeResponse, StoreRequest,
};
use serde_json::json;

use super::fields::Address;
use super::{Capsules, FETCH_MANY_MAX, Narrow, Wanted, narrow, not_found, query, sections};
use crate::cancel::{self, Cancel};
use crate::error::{Error, Result};
use crate::sql_filter::{Filter, given};
use crate::store::engine::{Db, Engine};

/// A compose item, resolved: one capsule, or a filter expanding to many.
enum Item {
    Ref(Address),
    Filter(Filter),
}

/// Classifies `items[i]`: a ref has `id` or `name`; a filter has any of workspace, run_id,
/// phase, role, tag and neither; both is ambiguous, neither is empty.
fn item(i: usize, it: &ComposeItem, engine: Engine) -> Result<Item> {
    let is_ref = given(it.id.as_deref()).is_some() || given(it.name.as_deref()).is_some();
    let run_given = it.run_id.as_ref().is_some_and(|r| !r.to_vec().is_empty());
    let filter_fields: Vec<&str> = [
        ("run_id", run_given),
        ("phase", given(it.phase.as_deref()).is_some()),
        ("role", given(it.role.as_deref()).is_some()),
        ("tag", given(it.tag.as_deref()).is_some()),
        ("task", given(it.task.as_deref()).is_some()),
    ]
    .into_iter()
    .filter_map(|(n, g)| g.then_some(n))
    .collect();
    let at = |mut e: Error| {
        e.0.message = format!("items[{i}]: {}", e.0.message);
        e
    };
    if is_ref {
        if !filter_fields.is_empty() {
            return Err(Error::invalid_field(
                &format!("items[{i}]"),
                format!(
                    "items[{i}] is ambiguous: it names a capsule (id/name) and has filter fields \
                     ({}); give a ref or a filter, not both",
                    filter_fields.join(", ")
                ),
            ));
        }
        return Address::resolve(
            it.id.as_deref(),
            it.workspace.as_deref(),
            it.name.as_deref(),
        )
        .map(Item::Ref)
        .map_err(at);
    }
    let ws = given(it.workspace.as_deref());
    if filter_fields.is_empty() && ws.is_none() {
        return Err(Error::invalid_field(
            &format!("items[{i}]"),
            format!(
                "items[{i}] is empty: give a ref ({{\"id\"}} or {{\"workspace\",\"name\"}}) or a \
                 filter (any of workspace, run_id, phase, role, tag, task)"
            ),
        ));
    }
    let mut f = Filter::default();
    f.raw("deleted_at IS NULL");
    narrow(
        &mut f,
        &Narrow {
            workspace: ws,
            tag: it.tag.as_deref(),
            run_id: it.run_id.as_ref(),
            phase: it.phase.as_deref(),
            role: it.role.as_deref(),
            task: it.task.as_deref(),
            ..Default::default()
        },
        engine,
    )
    .map_err(at)?;
    Ok(Item::Filter(f))
}

/// How many capsules `f` selects.
fn count(db: Db<'_>, f: &Filter) -> Result<i64> {
    Ok(db.query_one(
        &format!("SELECT count(*) FROM capsules {}", f.sql()),
        &f.bind(),
        |r| r.get(0),
    )?)
}

/// The capsules `f` selects, with their text, oldest first.
fn expand(db: Db<'_>, f: &Filter) -> Result<Vec<Capsule>> {
    Ok(db.query_map(
        &format!(
            "SELECT {} FROM capsules {} ORDER BY created_at, seq",
            query::FULL_COLS,
            f.sql()
        ),
        &f.bind(),
        |r| query::capsule_from_row(r, true),
    )?)
}

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
                "items must hold 1 to {FETCH_MANY_MAX} refs or filters, got {}",
                req.items.len()
            ))
            .with_details(
                json!({ "max_items": FETCH_MANY_MAX, "actual_items": req.items.len() }),
            ));
        }
        let pivot = req.pivot;
        let attribution = req.include_attribution.unwrap_or(false);
        if format == ComposeFormat::Json && (pivot.is_some() || attribution) {
            return Err(Error::invalid_field(
                if pivot.is_some() {
                    "pivot"
                } else {
                    "include_attribution"
                },
                "pivot and include_attribution shape a markdown bundle; format \"json\" already \
                 carries each part's id, name and display_name. Use format \"markdown\"",
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
        // Classify every item first: a malformed one fails before any read.
        let engine = self.store.engine();
        let items = req
            .items
            .iter()
            .enumerate()
            .map(|(i, it)| item(i, it, engine))
            .collect::<Result<Vec<_>>>()?;
        let capsules: Vec<Capsule> = self
            .store
            .readers
            .run_db(move |db| {
                // Expanded, the items must stay within the limit: counted before any is read.
                let mut expanded = 0i64;
                for it in &items {
                    cancel.check("compose")?;
                    expanded += match it {
                        Item::Ref(_) => 1,
                        Item::Filter(f) => count(db, f)?,
                    };
                }
                if expanded > FETCH_MANY_MAX as i64 {
                    return Err(Error::invalid(format!(
                        "the items expand to {expanded} capsules; at most {FETCH_MANY_MAX} can be \
                         composed. Narrow the filters (phase, role, tag) or split the compose"
                    ))
                    .with_details(json!({
                        "max_items": FETCH_MANY_MAX,
                        "expanded_count": expanded,
                    })));
                }
                let mut out = Vec::with_capacity(expanded as usize);
                for (i, it) in items.iter().enumerate() {
                    cancel.check("compose")?;
                    let addr = match it {
                        Item::Filter(f) => {
                            out.extend(expand(db, f)?);
                            continue;
                        }
                        Item::Ref(addr) => addr,
                    };
                    let c = query::find(db, addr, false, true)
                        .and_then(|c| c.ok_or_else(|| not_found(db, addr, Wanted::ReadActive)))
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
        let roles: Vec<Option<String>> = capsules.iter().map(|c| c.role.clone()).collect();
        let ids: Vec<String> = capsules.iter().map(|c| c.id.clone()).collect();

        let parts: Vec<ComposePart> = capsules
            .into_iter()
            .map(|c| {
                let full = c.capsule_text.unwrap_or_default();
                let text = match &wanted {
                    // Pivoted, every capsule's whole text is regrouped below.
                    Some(w) if pivot.is_none() => only_sections(&full, w),
                    _ => full,
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
        let bundle = match (format, pivot) {
            (ComposeFormat::Json, _) => serde_json::to_string(&ComposeParts { parts })
                .map_err(|e| Error::internal("serializing the json bundle", e))?,
            (ComposeFormat::Markdown, Some(ComposePivot::Section)) => {
                by_section(&parts, &roles, wanted.as_deref(), attribution)
            }
            (ComposeFormat::Markdown, None) if attribution => markdown_attributed(&parts, &roles),
            (ComposeFormat::Markdown, None) => markdown(&parts),
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
                    task: None,
                    mode: s.mode,
                    allow_thin: Some(
                        s.allow_thin.unwrap_or(false) || wanted.is_some() || pivot.is_some(),
                    ),
                    // The bundle's lineage: the capsules it was composed of, when they fit.
                    based_on: (ids.len() <= super::MAX_BASED_ON)
                        .then(|| ids.iter().map(|id| CapsuleRef::by_id(id.clone())).collect()),
                    evidence: None,
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

/// `**<display_name>** (<role>):`, the role only when there is one.
fn attribution_line(display_name: &str, role: Option<&str>) -> String {
    match role {
        Some(r) => format!("**{display_name}** ({r}):"),
        None => format!("**{display_name}**:"),
    }
}

/// The markdown bundle with each capsule's block opened by its attribution line.
pub fn markdown_attributed(parts: &[ComposePart], roles: &[Option<String>]) -> String {
    parts
        .iter()
        .zip(roles)
        .map(|(p, role)| {
            format!(
                "## {}\n\n{}\n\n{}",
                p.display_name,
                attribution_line(&p.display_name, role.as_deref()),
                p.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n---\n\n")
}

/// The section-pivoted bundle: each section once, in encounter order (the first capsule's
/// order, then sections only later capsules have), restricted to `wanted` when given; under
/// it, each capsule's body of that section in item order, with an attribution line when
/// asked. A body that is empty or a placeholder is left out, unless no capsule has content for
/// the section.
pub fn by_section(
    parts: &[ComposePart],
    roles: &[Option<String>],
    wanted: Option<&[String]>,
    attribution: bool,
) -> String {
    // (key, title as first written, then per part its body): the key is the title's lower
    // case, or with `wanted`, the wanted name a section matched, so synonyms share a slot.
    let mut order: Vec<(String, String, Vec<Option<String>>)> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let found: Vec<(String, sections::Section)> = match wanted {
            None => sections::top_level(&p.text)
                .into_iter()
                .map(|s| (s.title.to_lowercase(), s))
                .collect(),
            // In the capsule's own order: the first capsule's order wins.
            Some(w) => sections::lint_sections(&p.text)
                .into_iter()
                .filter_map(|s| {
                    let w = w.iter().find(|w| sections::names(&s, w))?;
                    Some((sections::wanted_name(w).to_lowercase(), s))
                })
                .collect(),
        };
        for (key, s) in found {
            let body = s.body(&p.text).trim_matches('\n').trim_end().to_string();
            let slot = match order.iter().position(|(k, _, _)| *k == key) {
                Some(k) => k,
                None => {
                    order.push((key, s.title.clone(), vec![None; parts.len()]));
                    order.len() - 1
                }
            };
            if order[slot].2[i].is_none() {
                order[slot].2[i] = Some(body);
            }
        }
    }
    let mut out = Vec::new();
    for (_, title, bodies) in order {
        let has_content = |b: &str| !b.trim().is_empty() && !sections::is_placeholder(b);
        let any = bodies.iter().flatten().any(|b| has_content(b));
        let mut block = format!("## {title}");
        for (i, body) in bodies.iter().enumerate() {
            let Some(body) = body else { continue };
            if any && !has_content(body) {
                continue;
            }
            block.push_str("\n\n");
            if attribution {
                block.push_str(&attribution_line(
                    &parts[i].display_name,
                    roles[i].as_deref(),
                ));
                block.push('\n');
            }
            block.push_str(body);
        }
        out.push(block);
    }
    let mut text = out.join("\n\n");
    text.push('\n');
    text
}

/// The sections of `text` named in `wanted`, in the order `wanted` lists them, each with its
/// header line; sections the capsule lacks are skipped. Each section is taken exactly as
/// written, trailing line breaks included; a line break is added only where a section without
/// one (the text's last) is followed by another. So asking for every section in order gives
/// back a text that starts with a header unchanged.
pub fn only_sections(text: &str, wanted: &[String]) -> String {
    let all = sections::lint_sections(text);
    let mut out = String::new();
    for s in wanted
        .iter()
        .filter_map(|w| all.iter().find(|s| sections::names(s, w)))
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
    fn a_pivot_groups_by_section_in_encounter_order_with_attribution() {
        let parts = [
            part(
                "security",
                "## Objective\nsec\n## Decisions\n- parameterize\n## Open questions\n- admin?\n",
            ),
            part(
                "perf",
                "## Decisions\n- N+1\n- index\n## Open questions\nTBD\n## Extra\ne\n",
            ),
        ];
        let roles = [Some("security-reviewer".to_string()), None];
        let wanted = ["Open questions".to_string(), "decisions".to_string()];
        assert_eq!(
            by_section(&parts, &roles, Some(&wanted), true),
            "## Decisions\n\n**security** (security-reviewer):\n- parameterize\n\n**perf**:\n- N+1\n- index\n\n\
             ## Open questions\n\n**security** (security-reviewer):\n- admin?\n"
        );
        // Without a filter: every section, first capsule's order first; no attribution.
        assert_eq!(
            by_section(&parts, &roles, None, false),
            "## Objective\n\nsec\n\n## Decisions\n\n- parameterize\n\n- N+1\n- index\n\n\
             ## Open questions\n\n- admin?\n\n## Extra\n\ne\n"
        );
        // A section nobody filled is kept, with its placeholders.
        let empty = [
            part("a", "## Status\nTBD\n"),
            part("b", "## Status\n(pending)\n"),
        ];
        assert_eq!(
            by_section(&empty, &[None, None], None, false),
            "## Status\n\nTBD\n\n(pending)\n"
        );
        // A `# Title` above the sections is not a section of its own.
        let titled = [part("t", "# Handoff\n## A\na\n## B\nb\n")];
        assert_eq!(
            by_section(&titled, &[None], None, false),
            "## A\n\na\n\n## B\n\nb\n"
        );
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
