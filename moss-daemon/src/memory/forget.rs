//! `memory_forget`: removes exactly what it reports, by id or ids (in the workspace named), or by
//! a strong query match, a slot or an exact context, at most [`FORGET_MAX`] at once and more than
//! [`FORGET_UNCONFIRMED_MAX`] only with `confirm`.

use moss_client::memory::*;
use serde_json::json;

use super::search_source::SEARCH_SOURCE;
use super::{
    FORGET_MAX, FORGET_UNCONFIRMED_MAX, GLOBAL, MEMORY_COLUMNS, Memories, Memory, delete_rids,
    memory_from_row_at, norm_context, rank, session, slot, workspace,
};
use crate::db_params;
use crate::error::{Error, Result};
use crate::store::now;

impl Memories {
    /// `memory_forget`.
    pub async fn forget(&self, req: MemoryForgetRequest) -> Result<MemoryForgetResponse> {
        let dry_run = req.dry_run.unwrap_or(false);
        let confirm = req.confirm.unwrap_or(false);
        let ws = workspace(req.workspace.as_deref())?;
        let session = session(req.session.as_deref())?.unwrap_or_default();
        let by_id: Option<Vec<String>> = match (&req.id, &req.ids) {
            (Some(id), None) => Some(vec![id.clone()]),
            (None, Some(ids)) => Some(ids.clone()),
            (Some(id), Some(ids)) => Some(
                std::iter::once(id.clone())
                    .chain(ids.iter().cloned())
                    .collect(),
            ),
            (None, None) => None,
        };
        let selectors = [
            req.query.is_some(),
            req.slot.is_some(),
            req.context.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if by_id.is_some() && selectors > 0 || selectors > 1 {
            return Err(Error::invalid_field(
                "query",
                "give one of id/ids, query, slot or context",
            ));
        }
        if by_id.is_none() && selectors == 0 {
            return Err(Error::invalid_field(
                "id",
                "memory_forget needs id, ids, query, slot or context",
            ));
        }
        if let Some(ids) = &by_id
            && (ids.is_empty() || ids.len() > FORGET_MAX)
        {
            return Err(Error::invalid_field(
                "ids",
                format!("ids must hold 1 to {FORGET_MAX} ids"),
            ));
        }
        let half_life = self.config.memory.recency_half_life_days;
        let matcher = match (&req.query, &req.slot, &req.context) {
            (Some(q), _, _) => {
                let recall = MemoryRecallRequest {
                    query: Some(q.clone()),
                    workspace: Some(ws.clone()),
                    include_global: Some(ws == GLOBAL),
                    session: (!session.is_empty()).then(|| session.clone()),
                    ..Default::default()
                };
                let mut query = rank::Query::from_recall(&recall, half_life)?;
                query.limit = FORGET_MAX + 1;
                if query.terms.is_empty() && query.phrase_contexts.is_empty() {
                    return Err(Error::invalid_field(
                        "query",
                        format!(
                            "query {q:?} has no searchable words; forget by id, slot or context instead"
                        ),
                    ));
                }
                query.min_relevance = rank::FORGET_MIN_RELEVANCE;
                query.min_score = 0.0;
                Some(query)
            }
            _ => None,
        };
        let slot = slot(req.slot.as_deref())?;
        let context = req.context.as_deref().map(norm_context);
        let by_id_given = by_id.is_some();
        if matcher.is_some() {
            self.store.await_index(&SEARCH_SOURCE).await;
        }
        let rows: Vec<(i64, Memory)> = self
            .store
            .readers
            .run_db(move |db| {
                let rows: Vec<(i64, Memory)> = if let Some(ids) = &by_id {
                    // Only in the named workspace: another one's memory, or a global one
                    // when `global` is not named, is not found.
                    let mut out = Vec::new();
                    for id in ids {
                        let found = db.query_opt(
                            &format!(
                                "SELECT m.rid, {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1
                                   AND m.workspace = ?3 AND (m.session = '' OR m.session = ?2)"
                            ),
                            db_params![id, &session, &ws],
                            |r| Ok((r.get(0)?, memory_from_row_at(r, 1)?)),
                        )?;
                        match found {
                            Some(f) => out.push(f),
                            None => {
                                let elsewhere: Option<String> = db.query_opt(
                                    "SELECT workspace FROM memories WHERE id = ?1
                                           AND (session = '' OR session = ?2)",
                                    db_params![id, &session],
                                    |r| r.get(0),
                                )?;
                                let hint = match elsewhere {
                                    Some(w) => format!(
                                        "; it is in workspace {w:?}: name that workspace to forget it"
                                    ),
                                    None => String::new(),
                                };
                                return Err(Error::not_found(format!(
                                    "no memory {id:?} in workspace {ws:?}{hint}"
                                ))
                                .with_details(json!({ "field": "id", "id": id, "workspace": ws })));
                            }
                        }
                    }
                    out
                } else if let Some(q) = &matcher {
                    rank::matching(db, q, now())?
                } else if let Some(slot) = &slot {
                    db.query_map(
                        &format!(
                            "SELECT m.rid, {MEMORY_COLUMNS} FROM memories m WHERE m.workspace = ?1
                           AND m.slot = ?2 AND (m.session = '' OR m.session = ?3) LIMIT ?4"
                        ),
                        db_params![&ws, slot, &session, FORGET_MAX as i64 + 1],
                        |r| Ok((r.get(0)?, memory_from_row_at(r, 1)?)),
                    )?
                } else {
                    let c = context.clone().unwrap_or_default();
                    db.query_map(
                        &format!(
                            "SELECT m.rid, {MEMORY_COLUMNS} FROM memory_contexts c
                           JOIN memories m ON m.rid = c.rid
                         WHERE c.workspace = ?1 AND c.context = ?2 AND (m.session = '' OR m.session = ?3) LIMIT ?4"
                        ),
                        db_params![&ws, &c, &session, FORGET_MAX as i64 + 1],
                        |r| Ok((r.get(0)?, memory_from_row_at(r, 1)?)),
                    )?
                };
                Ok(rows)
            })
            .await?;
        if !by_id_given && rows.len() > FORGET_UNCONFIRMED_MAX && !confirm && !dry_run {
            return Err(Error::invalid_field(
                "confirm",
                format!(
                    "this forget matches {} memories, more than {FORGET_UNCONFIRMED_MAX}: check them with dry_run:true, then repeat with confirm:true",
                    if rows.len() > FORGET_MAX { format!("over {FORGET_MAX}") } else { rows.len().to_string() }
                ),
            )
            .with_details(json!({
                "field": "confirm",
                "matched": rows.len(),
                "max_unconfirmed": FORGET_UNCONFIRMED_MAX,
                "sample": rows.iter().take(5).map(|(_, m)| &m.content).collect::<Vec<_>>(),
            })));
        }
        if rows.len() > FORGET_MAX {
            return Err(Error::invalid_field(
                "confirm",
                format!("one forget removes at most {FORGET_MAX} memories; narrow it down"),
            ));
        }
        if !dry_run && !rows.is_empty() {
            let rids: Vec<i64> = rows.iter().map(|(r, _)| *r).collect();
            self.store
                .writer
                .run(move |ctx| delete_rids(ctx.db(), &rids))
                .await?;
        }
        let removed: Vec<Forgotten> = rows
            .into_iter()
            .map(|(_, m)| Forgotten {
                id: m.id,
                content: m.content,
                contexts: m.contexts,
                slot: m.slot,
            })
            .collect();
        Ok(MemoryForgetResponse {
            count: removed.len() as i64,
            removed,
            dry_run,
        })
    }
}
