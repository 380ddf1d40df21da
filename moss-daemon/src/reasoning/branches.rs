//! Branches and the workspace: `branchmind_init` and `_status`, creating and listing branches
//! (a branch records its base and the base's sequence at creation; nothing is copied), and the
//! checked-out branch a request that names no branch reads.

use moss_client::ErrorCode;
use moss_client::reasoning::*;
use serde_json::json;

use super::refs::{self, ALL, MAIN};
use super::{Reasoning, now_ms};
use crate::budget::Fit;
use crate::budget::blank_budget;
use crate::error::{Error, Result};
use crate::read::Read;

impl Fit for BranchListResponse {
    fn units(&self) -> usize {
        self.branches.len()
    }
    fn keep(&mut self, n: usize) {
        if n < self.branches.len() {
            self.branches.truncate(n);
            self.pagination.has_more = true;
            self.pagination.count = n as i64;
            // Branches page by creation sequence, which the list does not show; the last
            // kept one's is recorded when the page is read (see branch_list).
        }
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Reasoning {
    /// `branchmind_init`.
    pub async fn init(&self, req: InitRequest) -> Result<InitResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let storage_dir = self.storage_dir.clone();
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                db.execute(
                    "INSERT INTO reasoning_checkout(workspace, branch) VALUES (?1, ?2)
                     ON CONFLICT DO NOTHING",
                    crate::db_params![&ws, MAIN],
                )?;
                Ok(InitResponse {
                    checkout: refs::checkout(db, &ws)?,
                    workspace: ws,
                    storage_dir,
                    schema_version: crate::schema::version() as i64,
                })
            })
            .await
    }

    /// `branchmind_status`.
    pub async fn status(&self, req: ReasoningStatusRequest) -> Result<ReasoningStatus> {
        let ws = refs::workspace(&req.workspace)?;
        self.store
            .readers
            .run_db(move |db| {
                let branches: i64 = db.query_one(
                    "SELECT count(*) FROM reasoning_branches WHERE workspace = ?1 AND name != 'main'",
                    crate::db_params![&ws],
                    |r| r.get(0),
                )?;
                let last_event: Option<(i64, i64)> = db.query_opt(
                    "SELECT seq, ts_ms FROM task_events WHERE workspace = ?1 ORDER BY seq DESC LIMIT 1",
                    crate::db_params![&ws],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                let last_seq: Option<i64> = db.query_one(
                    "SELECT max(s) FROM (
                       SELECT max(seq) AS s FROM reasoning_entries WHERE workspace = ?1
                       UNION ALL SELECT max(seq) FROM graph_nodes WHERE workspace = ?1
                       UNION ALL SELECT max(seq) FROM graph_edges WHERE workspace = ?1) AS latest",
                    crate::db_params![&ws],
                    |r| r.get(0),
                )?;
                Ok(ReasoningStatus {
                    checkout: refs::checkout(db, &ws)?,
                    workspace: ws,
                    schema_version: crate::schema::version() as i64,
                    branches: branches + 1,
                    last_event_id: last_event.map(|(s, _)| crate::tasks::interface::event_id(s)),
                    last_event_ts: last_event.map(|(_, t)| t / 1000),
                    last_seq,
                })
            })
            .await
    }

    /// `branchmind_branch_create`.
    pub async fn branch_create(&self, req: BranchCreateRequest) -> Result<BranchCreateResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let name = refs::name("name", &req.name)?;
        if name.chars().any(char::is_whitespace) {
            return Err(Error::invalid_field(
                "name",
                "a branch name has no whitespace",
            ));
        }
        if refs::target_id("name", name.split_once('/').map_or("", |(_, t)| t)).is_ok()
            && (name.starts_with("task/") || name.starts_with("plan/"))
        {
            return Err(Error::invalid_field(
                "name",
                format!(
                    "{name:?} is a plan's or task's canonical branch; tasks_create makes those"
                ),
            ));
        }
        let from = req
            .from
            .as_deref()
            .map(|f| refs::name("from", f))
            .transpose()?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let from = match from {
                    Some(f) => f,
                    None => refs::checkout(db, &ws)?,
                };
                refs::sources(db, &ws, "from", &from)?;
                if refs::branch(db, &ws, &name)?.is_some() {
                    return Err(Error::new(
                        ErrorCode::Conflict,
                        format!("branch {name:?} already exists in workspace {ws:?}"),
                    )
                    .with_details(json!({ "field": "name", "branch": name })));
                }
                let seq = ctx.next_seq();
                let ts_ms = now_ms();
                db.execute(
                    "INSERT INTO reasoning_branches(workspace, name, base_branch, base_seq,
                       created_seq, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                    crate::db_params![&ws, &name, &from, seq, ts_ms],
                )?;
                Ok(BranchCreateResponse {
                    workspace: ws,
                    branch: BranchInfo {
                        name,
                        base_branch: Some(from),
                        base_seq: Some(seq),
                        created_at_ms: Some(ts_ms),
                        current: false,
                    },
                })
            })
            .await
    }

    /// `branchmind_branch_list`: newest first, `main` last.
    pub async fn branch_list(&self, req: BranchListRequest) -> Result<BranchListResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 50, 200)?;
        let ws = read.ws().to_string();
        let (mut resp, seqs) = self
            .store
            .readers
            .run_db(move |db| {
                let current = refs::checkout(db, &ws)?;
                let rows = db.query_map(
                    "SELECT name, base_branch, base_seq, created_at_ms, created_seq
                     FROM reasoning_branches WHERE workspace = ?1 AND created_seq < ?2
                     ORDER BY created_seq DESC LIMIT ?3",
                    crate::db_params![&ws, cursor.unwrap_or(ALL), limit + 1],
                    |r| {
                        Ok((
                            BranchInfo {
                                name: r.get(0)?,
                                base_branch: r.get(1)?,
                                base_seq: r.get(2)?,
                                created_at_ms: r.get(3)?,
                                current: false,
                            },
                            r.get::<i64>(4)?,
                        ))
                    },
                )?;
                let (mut branches, mut seqs): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
                let has_more = branches.len() as i64 > limit;
                branches.truncate(limit as usize);
                seqs.truncate(limit as usize);
                if !has_more && !branches.iter().any(|b| b.name == MAIN) {
                    branches.push(refs::branch(db, &ws, MAIN)?.expect("main always exists"));
                    seqs.push(0);
                }
                for b in &mut branches {
                    b.current = b.name == current;
                }
                let count = branches.len() as i64;
                Ok((
                    BranchListResponse {
                        workspace: ws,
                        branches,
                        pagination: SeqPagination {
                            cursor,
                            next_cursor: if has_more { seqs.last().copied() } else { None },
                            has_more,
                            limit,
                            count,
                        },
                        truncated: false,
                        budget: blank_budget(),
                    },
                    seqs,
                ))
            })
            .await?;
        let full = resp.branches.len();
        resp = read.fit(resp)?;
        if resp.branches.len() < full {
            resp.pagination.next_cursor = resp
                .branches
                .len()
                .checked_sub(1)
                .map(|i| seqs[i])
                .or(cursor);
        }
        Ok(resp)
    }

    /// `branchmind_checkout`.
    pub async fn checkout(&self, req: CheckoutRequest) -> Result<CheckoutResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let target = refs::name("ref", &req.reference)?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                refs::existing_branch(db, &ws, "ref", &target)?;
                let previous: Option<String> = db.query_opt(
                    "SELECT branch FROM reasoning_checkout WHERE workspace = ?1",
                    crate::db_params![&ws],
                    |r| r.get(0),
                )?;
                db.execute(
                    "INSERT INTO reasoning_checkout(workspace, branch) VALUES (?1, ?2)
                     ON CONFLICT(workspace) DO UPDATE SET branch = excluded.branch",
                    crate::db_params![&ws, &target],
                )?;
                Ok(CheckoutResponse {
                    workspace: ws,
                    previous: Some(previous.unwrap_or_else(|| MAIN.into())),
                    current: target,
                })
            })
            .await
    }
}
