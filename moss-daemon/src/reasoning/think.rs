//! Think cards: explicit reasoning artifacts an agent writes, each a trace entry (chronology) and
//! a typed graph node with `supports` / `blocks` edges (structure), committed together.

use std::collections::HashMap;

use moss_client::ErrorCode;
use moss_client::reasoning::*;
use serde_json::{Map, Value, json};

use super::docs::{NewEntry, insert_entry};
use super::graph;
use super::refs::{self, Naming};
use super::{Reasoning, limit, suggest};
use crate::budget::Fit;
use crate::budget::blank_budget;
use crate::error::{Error, Result};
use crate::read::Read;

/// The card types, in the order a line of reasoning usually takes.
pub const SUPPORTED_TYPES: [&str; 8] = [
    "frame",
    "hypothesis",
    "question",
    "test",
    "evidence",
    "decision",
    "note",
    "update",
];

/// Statuses that settle a card (nothing more is asked of it).
const SETTLED: [&str; 6] = [
    "closed",
    "done",
    "resolved",
    "rejected",
    "confirmed",
    "refuted",
];

fn unknown_type(ws: &str, given: &str) -> Error {
    suggest(
        Error::invalid_field(
            "type",
            format!(
                "unknown card type {given:?}; supported types: {}",
                SUPPORTED_TYPES.join(", ")
            ),
        )
        .with_details(
            json!({ "field": "type", "type": given, "supported_types": SUPPORTED_TYPES }),
        ),
        "branchmind_think_template",
        json!({ "workspace": ws, "type": "hypothesis" }),
    )
}

/// A card's template: every field an agent fills in.
pub fn template(card_type: &str) -> Value {
    let (title, text, status) = match card_type {
        "frame" => (
            "What are we trying to do?",
            "Goal, constraints and what done looks like.",
            "open",
        ),
        "hypothesis" => (
            "What might be true?",
            "The claim, and what would show it wrong.",
            "open",
        ),
        "question" => (
            "What do we need to know?",
            "The question and why it matters.",
            "open",
        ),
        "test" => (
            "How will we check?",
            "The command or experiment, and the expected result.",
            "open",
        ),
        "evidence" => (
            "What did we observe?",
            "The observation, with where it came from.",
            "open",
        ),
        "decision" => (
            "What did we decide?",
            "The choice, the alternatives and why.",
            "closed",
        ),
        "update" => ("What changed?", "The change and its consequence.", "closed"),
        _ => ("Note", "Anything worth keeping.", "open"),
    };
    json!({
        "id": format!("{card_type}-1"),
        "type": card_type,
        "title": title,
        "text": text,
        "status": status,
        "tags": [],
        "meta": {}
    })
}

fn dsl(card: &Value) -> String {
    let mut out = String::new();
    for k in ["id", "type", "title", "text", "status"] {
        if let Some(v) = card.get(k).and_then(Value::as_str) {
            out.push_str(&format!("{k}: {v}\n"));
        }
    }
    out.push_str("tags: \n");
    out
}

impl Fit for ThinkTemplateResponse {
    fn units(&self) -> usize {
        0
    }
    fn keep(&mut self, _: usize) {}
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Fit for ThinkContextResponse {
    fn units(&self) -> usize {
        self.cards.len()
    }
    fn keep(&mut self, n: usize) {
        self.cards.truncate(n);
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.cards
            .first_mut()
            .is_some_and(|n| graph::cut_node(n, chars))
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated || self.truncated;
        self.budget = budget;
    }
}

/// A card in its normal form.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    pub node: GraphNode,
    pub supports: Vec<String>,
    pub blocks: Vec<String>,
}

impl Card {
    /// What the trace entry records, and what a repeated call is compared with.
    pub fn payload(&self) -> Value {
        json!({
            "card": {
                "id": self.node.id,
                "type": self.node.node_type,
                "title": self.node.title,
                "text": self.node.text,
                "status": self.node.status,
                "tags": self.node.tags,
                "meta": self.node.meta,
            },
            "supports": self.supports,
            "blocks": self.blocks,
        })
    }
}

/// Reads `key: value` lines; a line without a key continues the previous value.
fn parse_dsl(text: &str) -> Result<Map<String, Value>> {
    let mut map = Map::new();
    let mut last: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let key_value = line.split_once(':').filter(|(k, _)| {
            let k = k.trim();
            !k.is_empty()
                && k.len() <= 64
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        match key_value {
            Some((k, v)) => {
                let k = k.trim().to_lowercase();
                map.insert(k.clone(), Value::String(v.trim().to_string()));
                last = Some(k);
            }
            None if line.trim().is_empty() => {}
            None => match &last {
                Some(k) => {
                    if let Some(Value::String(s)) = map.get_mut(k) {
                        s.push('\n');
                        s.push_str(line.trim_end());
                    }
                }
                None => {
                    return Err(Error::invalid_field(
                        "card",
                        format!("card line {} is not `key: value`: {line:?}", i + 1),
                    ));
                }
            },
        }
    }
    Ok(map)
}

fn string_list(field: &str, v: Option<&Value>) -> Result<Vec<String>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(s
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::invalid_field(field, format!("{field} must be strings")))
            })
            .collect(),
        Some(_) => Err(Error::invalid_field(
            field,
            format!("{field} must be a list of strings"),
        )),
    }
}

/// Normalizes a card given as an object, a JSON string or `key: value` lines.
pub fn normalize(
    ws: &str,
    card: &Value,
    supports: Option<&[String]>,
    blocks: Option<&[String]>,
) -> Result<Card> {
    let map = match card {
        Value::Object(m) => m.clone(),
        Value::String(s) if s.trim_start().starts_with('{') => {
            match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(m)) => m,
                _ => {
                    return Err(Error::invalid_field(
                        "card",
                        "card is a string starting with `{` but not a JSON object",
                    ));
                }
            }
        }
        Value::String(s) => parse_dsl(s)?,
        _ => {
            return Err(Error::invalid_field(
                "card",
                "card must be a JSON object, a JSON object string, or `key: value` lines",
            ));
        }
    };
    let mut meta = Map::new();
    let (mut id, mut ty, mut title, mut text, mut status, mut tags) =
        (None, None, None, None, None, None);
    let mut extra_supports = Vec::new();
    let mut extra_blocks = Vec::new();
    for (k, v) in map {
        let s = || v.as_str().map(str::to_string);
        match k.as_str() {
            "id" | "card_id" => id = s(),
            "type" => ty = s(),
            "title" => title = s(),
            "text" => text = s(),
            "status" => status = s(),
            "tags" => tags = Some(string_list("card.tags", Some(&v))?),
            "supports" => extra_supports = string_list("card.supports", Some(&v))?,
            "blocks" => extra_blocks = string_list("card.blocks", Some(&v))?,
            "meta" => match v {
                Value::Object(m) => meta.extend(m),
                Value::Null => {}
                other => {
                    meta.insert("meta".into(), other);
                }
            },
            _ => {
                meta.insert(k, v);
            }
        }
    }
    let id = graph::user_key("card.id", id.as_deref().unwrap_or(""))?;
    let ty = ty.unwrap_or_default().trim().to_lowercase();
    if ty.is_empty() {
        return Err(Error::invalid_field(
            "card.type",
            format!(
                "card.type is required: one of {}",
                SUPPORTED_TYPES.join(", ")
            ),
        ));
    }
    if !SUPPORTED_TYPES.contains(&ty.as_str()) {
        return Err(unknown_type(ws, &ty));
    }
    let title = crate::bounds::optional_text(
        "card.title",
        title.as_deref(),
        crate::bounds::MAX_TITLE_CHARS,
    )?;
    let text =
        crate::bounds::optional_text("card.text", text.as_deref(), super::MAX_CONTENT_CHARS)?;
    if title.is_none() && text.is_none() {
        return Err(Error::invalid_field(
            "card.title",
            "a card needs a title or a text",
        ));
    }
    let mut node = graph::node(id, ty);
    node.title = title;
    node.text = text;
    node.status =
        Some(graph::key("card.status", status.as_deref().unwrap_or("open"))?.to_lowercase());
    node.tags = graph::tags("card.tags", tags.as_deref())?;
    let meta = Value::Object(meta);
    super::object_json("card.meta", Some(&meta))?;
    node.meta = (!meta.as_object().is_some_and(Map::is_empty)).then_some(meta);
    let ids = |field: &str, a: Option<&[String]>, b: Vec<String>| -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for (i, s) in a.unwrap_or_default().iter().chain(&b).enumerate() {
            let k = graph::key(&format!("{field}[{i}]"), s)?;
            if !out.contains(&k) {
                out.push(k);
            }
        }
        Ok(out)
    };
    Ok(Card {
        supports: ids("supports", supports, extra_supports)?,
        blocks: ids("blocks", blocks, extra_blocks)?,
        node,
    })
}

/// Which rule asks for the next card, over the live cards of a graph (oldest first within a
/// rule, rules in order).
pub fn next_card(nodes: &HashMap<String, GraphNode>, edges: &[GraphEdge]) -> Option<NextCard> {
    let mut cards: Vec<&GraphNode> = nodes
        .values()
        .filter(|n| !n.deleted && SUPPORTED_TYPES.contains(&n.node_type.as_str()))
        .collect();
    cards.sort_by_key(|n| n.last_seq);
    let open = |n: &GraphNode| !n.status.as_deref().is_some_and(|s| SETTLED.contains(&s));
    // Cards of `types` pointing at `id` with `supports`.
    let supported_by = |id: &str, types: &[&str]| {
        edges.iter().any(|e| {
            !e.deleted
                && e.to == id
                && e.rel == "supports"
                && nodes
                    .get(&e.from)
                    .is_some_and(|n| !n.deleted && types.contains(&n.node_type.as_str()))
        })
    };
    let count = |t: &str| cards.iter().filter(|n| n.node_type == t).count();
    let make = |rule: &str, reason: String, about: Option<&GraphNode>, ty: &str| {
        let mut card = template(ty);
        card["id"] = json!(format!("{ty}-{}", count(ty) + 1));
        if let Some(a) = about {
            card["title"] = json!(format!(
                "{} — {}",
                card["title"].as_str().unwrap_or(""),
                a.title.as_deref().unwrap_or(&a.id)
            ));
        }
        NextCard {
            rule: rule.into(),
            reason,
            about: about.map(|a| a.id.clone()),
            card,
            supports: about.map(|a| vec![a.id.clone()]).unwrap_or_default(),
        }
    };
    if count("frame") == 0 {
        return Some(make(
            "frame_missing",
            "No frame card: state the goal and constraints first.".into(),
            None,
            "frame",
        ));
    }
    if let Some(q) = cards.iter().find(|n| {
        n.node_type == "question" && open(n) && !supported_by(&n.id, &["evidence", "decision"])
    }) {
        return Some(make(
            "question_unanswered",
            format!(
                "Question {:?} is open and no evidence supports an answer.",
                q.id
            ),
            Some(q),
            "evidence",
        ));
    }
    if let Some(h) = cards
        .iter()
        .find(|n| n.node_type == "hypothesis" && open(n) && !supported_by(&n.id, &["test"]))
    {
        return Some(make(
            "hypothesis_untested",
            format!("Hypothesis {:?} is open and no test checks it.", h.id),
            Some(h),
            "test",
        ));
    }
    if let Some(t) = cards
        .iter()
        .find(|n| n.node_type == "test" && open(n) && !supported_by(&n.id, &["evidence"]))
    {
        return Some(make(
            "test_without_evidence",
            format!("Test {:?} has no evidence of its result.", t.id),
            Some(t),
            "evidence",
        ));
    }
    let decided = count("decision") > 0;
    if !decided && let Some(e) = cards.iter().rev().find(|n| n.node_type == "evidence") {
        return Some(make(
            "evidence_undecided",
            format!("Evidence {:?} is in and nothing is decided yet.", e.id),
            Some(e),
            "decision",
        ));
    }
    None
}

impl Reasoning {
    /// `branchmind_think_template`.
    pub async fn think_template(&self, req: ThinkTemplateRequest) -> Result<ThinkTemplateResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let ty = req.card_type.trim().to_lowercase();
        if !SUPPORTED_TYPES.contains(&ty.as_str()) {
            return Err(unknown_type(read.ws(), &req.card_type));
        }
        let template = template(&ty);
        read.fit(ThinkTemplateResponse {
            dsl: dsl(&template),
            card_type: ty,
            supported_types: SUPPORTED_TYPES.iter().map(|s| s.to_string()).collect(),
            template,
            truncated: false,
            budget: blank_budget(),
        })
    }

    /// `branchmind_think_card`: the trace entry and the graph node and edges, in one
    /// transaction; the same card again writes nothing.
    pub async fn think_card(&self, req: ThinkCardRequest) -> Result<ThinkCardResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let card = normalize(
            &ws,
            &req.card,
            req.supports.as_deref(),
            req.blocks.as_deref(),
        )?;
        self.store
            .writer
            .run(move |ctx| {
                let naming = Naming { tool: "branchmind_think_card", fields: &[("trace_doc", "trace"), ("graph_doc", "graph")] };
                let db = ctx.db();
                let trace = refs::address(db, &ws, req.target.as_deref(), req.branch.as_deref(), req.trace_doc.as_deref(), |r| &r.trace_doc, &naming)?;
                let graph_at = refs::address(db, &ws, req.target.as_deref(), req.branch.as_deref(), req.graph_doc.as_deref(), |r| &r.graph_doc, &naming)?;
                let sources = refs::sources(db, &ws, "branch", &trace.branch)?;
                let payload = card.payload();
                let key = format!("card:{}", card.node.id);
                let (entry, inserted) = insert_entry(
                    ctx,
                    &ws,
                    NewEntry {
                        branch: &trace.branch,
                        doc: &trace.doc,
                        kind: "note",
                        title: card.node.title.clone(),
                        format: Some("card".into()),
                        meta_json: Some(json!({ "card_id": card.node.id, "card_type": card.node.node_type }).to_string()),
                        content: Some(card.node.text.clone().or_else(|| card.node.title.clone()).unwrap_or_default()),
                        source_event_id: Some(key),
                        event_type: Some("think_card".into()),
                        payload_json: Some(payload.to_string()),
                        ..NewEntry::default()
                    },
                )?;
                let mut resp = ThinkCardResponse {
                    branch: trace.branch.clone(),
                    trace_doc: trace.doc.clone(),
                    graph_doc: graph_at.doc.clone(),
                    card_id: card.node.id.clone(),
                    inserted,
                    graph_applied: CardApplied::default(),
                    last_seq: None,
                };
                if !inserted {
                    if entry.payload.as_ref() != Some(&payload) {
                        return Err(Error::new(
                            ErrorCode::Conflict,
                            format!(
                                "card {:?} was already written with different content; give the new card another id, or write an `update` card that supports it",
                                card.node.id
                            ),
                        )
                        .with_details(json!({ "field": "card.id", "card_id": card.node.id, "existing": entry.payload, "given": payload })));
                    }
                    return Ok(resp);
                }
                resp.last_seq = Some(entry.seq);
                if let Some(n) = graph::upsert_node_if_changed(ctx, &ws, &sources, &graph_at.branch, &graph_at.doc, &card.node)? {
                    resp.graph_applied.nodes_upserted += 1;
                    resp.last_seq = Some(n.last_seq);
                }
                for (rel, list) in [("supports", &card.supports), ("blocks", &card.blocks)] {
                    for (i, to) in list.iter().enumerate() {
                        // Checked here, inside the transaction: a bad edge rolls back the
                        // trace entry and the node with it.
                        let to = graph::user_key(&format!("{rel}[{i}]"), to)?;
                        let e = graph::edge(card.node.id.clone(), rel.into(), to, None);
                        if let Some(e) = graph::upsert_edge_if_changed(ctx, &ws, &sources, &graph_at.branch, &graph_at.doc, &e)? {
                            resp.graph_applied.edges_upserted += 1;
                            resp.last_seq = Some(e.last_seq);
                        }
                    }
                }
                Ok(resp)
            })
            .await
    }

    /// `branchmind_think_context`: the newest cards and counts by type.
    pub async fn think_context(&self, req: ThinkContextRequest) -> Result<ThinkContextResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let limit = limit("limit_cards", req.limit_cards, 30, 200)?;
        read.run_db(&self.store, move |db, ws| {
            let (at, sources) = Reasoning::graph_address(
                db,
                &ws,
                &req,
                &Naming::graph_doc("branchmind_think_context"),
            )?;
            let nodes = graph::all_nodes(db, &ws, &sources, &at.doc)?;
            let by_type = graph::count_by_type(&nodes, &SUPPORTED_TYPES);
            let mut cards: Vec<GraphNode> = nodes
                .into_values()
                .filter(|n| !n.deleted && SUPPORTED_TYPES.contains(&n.node_type.as_str()))
                .collect();
            cards.sort_by_key(|x| std::cmp::Reverse(x.last_seq));
            let total = cards.len() as i64;
            cards.truncate(limit as usize);
            Ok(ThinkContextResponse {
                branch: at.branch,
                graph_doc: at.doc,
                stats: CardStats {
                    cards: total,
                    by_type,
                },
                truncated: false,
                cards,
                budget: blank_budget(),
            })
        })
        .await
    }

    /// `branchmind_think_next`.
    pub async fn think_next(&self, req: ThinkNextRequest) -> Result<ThinkNextResponse> {
        let ws = refs::workspace(&req.workspace)?;
        self.store
            .readers
            .run_db(move |db| {
                let (at, sources) = Reasoning::graph_address(
                    db,
                    &ws,
                    &req,
                    &Naming::graph_doc("branchmind_think_next"),
                )?;
                let nodes = graph::all_nodes(db, &ws, &sources, &at.doc)?;
                let edges: Vec<GraphEdge> = graph::all_edges(db, &ws, &sources, &at.doc)?
                    .into_values()
                    .collect();
                let by_type = graph::count_by_type(&nodes, &SUPPORTED_TYPES);
                Ok(ThinkNextResponse {
                    branch: at.branch,
                    graph_doc: at.doc,
                    next: next_card(&nodes, &edges),
                    stats: CardStats {
                        cards: by_type.values().sum(),
                        by_type,
                    },
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_normalize_from_objects_json_strings_and_dsl() {
        let a = normalize(
            "w",
            &json!({"id": "h1", "type": "hypothesis", "title": "T", "extra": 1}),
            None,
            None,
        )
        .unwrap();
        let b = normalize(
            "w",
            &json!("{\"card_id\":\"h1\",\"type\":\"Hypothesis\",\"title\":\"T\",\"extra\":1}"),
            None,
            None,
        )
        .unwrap();
        let c = normalize(
            "w",
            &json!("id: h1\ntype: hypothesis\ntitle: T\nextra: 1"),
            None,
            None,
        )
        .unwrap();
        assert_eq!(a.node, b.node);
        assert_eq!(a.node.status.as_deref(), Some("open"));
        assert_eq!(a.node.meta, Some(json!({"extra": 1})));
        assert_eq!(
            c.node.meta,
            Some(json!({"extra": "1"})),
            "DSL values are strings"
        );
        let d = normalize(
            "w",
            &json!("id: q1\ntype: question\ntext: line one\n  line two\ntags: A, b"),
            None,
            None,
        )
        .unwrap();
        assert_eq!(d.node.text.as_deref(), Some("line one\n  line two"));
        assert_eq!(d.node.tags, vec!["a", "b"]);
    }

    #[test]
    fn bad_cards_are_typed_errors() {
        let e = normalize(
            "w",
            &json!({"id": "x", "type": "idea", "title": "t"}),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(e.0.details["supported_types"][0], "frame");
        assert!(e.0.details["suggested_call"]["tool"].is_string());
        assert!(normalize("w", &json!({"id": "x", "type": "note"}), None, None).is_err());
        assert!(normalize("w", &json!({"type": "note", "title": "t"}), None, None).is_err());
        assert!(normalize("w", &json!("just words"), None, None).is_err());
    }

    #[test]
    fn the_next_card_follows_the_rules_in_order() {
        let mk = |id: &str, ty: &str, seq: i64| {
            let mut n = graph::node(id.into(), ty.into());
            n.title = Some(id.into());
            n.status = Some("open".into());
            n.last_seq = seq;
            (id.to_string(), n)
        };
        let mut nodes: HashMap<String, GraphNode> = HashMap::new();
        assert_eq!(next_card(&nodes, &[]).unwrap().rule, "frame_missing");
        nodes.extend([mk("f", "frame", 1), mk("h", "hypothesis", 2)]);
        let next = next_card(&nodes, &[]).unwrap();
        assert_eq!(
            (next.rule.as_str(), next.about.as_deref()),
            ("hypothesis_untested", Some("h"))
        );
        assert_eq!(next.card["id"], "test-1");
        nodes.extend([mk("t", "test", 3)]);
        let edges = vec![graph::edge("t".into(), "supports".into(), "h".into(), None)];
        assert_eq!(
            next_card(&nodes, &edges).unwrap().rule,
            "test_without_evidence"
        );
    }
}
