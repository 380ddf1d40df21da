//! Writing memories: the upsert by identity, split so that what costs CPU (hashing, JSON
//! encoding, the handle) runs on the request's task ([`NewMemory::prepare`],
//! [`Written::handle`]) and the writer job only executes statements ([`write`]); and deleting
//! memories with their context rows.

use moss_client::memory::*;
use sha2::{Digest, Sha256};

use super::{MEMORY_COLUMNS, NewMemory, basename, memory_from_row, norm_context};
use crate::db_params;
use crate::error::Result;
use crate::json_field::parse_json;
use crate::store::engine::Db;
use crate::store::{WriteCtx, now};
use crate::tags;

impl NewMemory {
    /// The identity an upsert matches: content, contexts (as a set) and slot; the first 16
    /// bytes of their SHA-256.
    pub(super) fn identity(&self) -> Vec<u8> {
        let mut ctx = self.norm_contexts.clone();
        ctx.sort();
        let mut h = Sha256::new();
        h.update(self.content.trim().as_bytes());
        h.update([0]);
        for c in &ctx {
            h.update(c.as_bytes());
            h.update([0]);
        }
        h.update([1]);
        h.update(self.slot.as_deref().unwrap_or("").as_bytes());
        h.finalize()[..16].to_vec()
    }
}

/// What writing a [`NewMemory`] costs besides SQL: its identity (a hash), its JSON encodings,
/// the text its contexts are indexed by, its `memory_contexts` keys and a fresh id. Computed
/// on the request's task before the job is queued, so the writer, which every write waits
/// for, only executes statements.
#[derive(Debug, Clone)]
pub struct Prepared {
    identity: Vec<u8>,
    /// The id a new memory gets (an update keeps the stored one).
    id: String,
    tags_json: Option<String>,
    contexts_json: String,
    contexts_text: String,
    /// Each `memory_contexts` row's context and basename (see [`context_keys`]).
    keys: Vec<(String, String)>,
    /// The key an upsert looks the identity up under: the smallest context.
    first_key: String,
}

impl NewMemory {
    /// Everything a write of this memory computes outside SQL.
    pub fn prepare(&self) -> Prepared {
        let keys: Vec<(String, String)> = context_keys(&self.norm_contexts)
            .into_iter()
            .map(|c| (c.to_string(), basename(c).to_string()))
            .collect();
        let first_key = keys
            .iter()
            .map(|(c, _)| c)
            .min()
            .cloned()
            .unwrap_or_default();
        Prepared {
            identity: self.identity(),
            id: ulid::Ulid::generate().to_string(),
            tags_json: tags::to_json(self.tags.as_deref()),
            contexts_json: serde_json::to_string(&self.contexts).expect("strings serialize"),
            contexts_text: self.contexts.join(" "),
            keys,
            first_key,
        }
    }
}

/// A write as the writer reports it: no more than the SQL gave.
#[derive(Debug, Clone)]
pub struct Written {
    pub rid: i64,
    pub id: String,
    pub created: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// What an update changed.
    pub changed: Vec<String>,
    /// An updated memory's stored contexts (JSON): the identity matched them normalized, so
    /// they may be written differently from the request's.
    pub stored_contexts_json: Option<String>,
}

impl Written {
    /// The handle of the memory written as `m`.
    pub fn handle(&self, m: NewMemory) -> MemoryHandle {
        let contexts = match &self.stored_contexts_json {
            Some(j) => serde_json::from_str(j).unwrap_or_default(),
            None => m.contexts,
        };
        MemoryHandle {
            id: self.id.clone(),
            workspace: m.workspace,
            content_chars: m.content.chars().count() as i64,
            contexts,
            weight: m.weight,
            slot: m.slot,
            persist: m.session.is_empty(),
            session: (!m.session.is_empty()).then_some(m.session),
            tags: m.tags.unwrap_or_default(),
            source: m.source,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// The `memory_contexts` rows of a memory: one per normalized context, or one under the empty
/// context when it has none. The row under the smallest of them is where an upsert looks for
/// the memory's identity, so the identity needs no index of its own.
fn context_keys(norm_contexts: &[String]) -> Vec<&str> {
    if norm_contexts.is_empty() {
        vec![""]
    } else {
        norm_contexts.iter().map(String::as_str).collect()
    }
}

/// Writes a memory, or updates the one with the same identity. Returns it, whether it was
/// created, and what an update changed.
pub fn upsert(ctx: &WriteCtx, m: &NewMemory) -> Result<(Memory, bool, Vec<String>)> {
    let w = write(ctx, m, &m.prepare())?;
    if !w.created {
        return Ok((load_rid(ctx.db(), w.rid)?, false, w.changed));
    }
    let memory = Memory {
        id: w.id,
        workspace: m.workspace.clone(),
        content: m.content.clone(),
        contexts: m.contexts.clone(),
        weight: m.weight,
        slot: m.slot.clone(),
        persist: m.session.is_empty(),
        session: (!m.session.is_empty()).then(|| m.session.clone()),
        tags: m.tags.clone().unwrap_or_default(),
        metadata: parse_json(m.metadata_json.clone()),
        source: m.source.clone(),
        created_at: w.created_at,
        updated_at: w.updated_at,
        recalled_at: None,
    };
    Ok((memory, true, Vec::new()))
}

/// The statements of an upsert of `m`, prepared as `p` (see [`Prepared`]): the writer's part.
///
/// The identity is found with one seek into `memory_contexts`, under the key the insert writes
/// anyway: the page it reads is the page a new memory dirties.
pub fn write(ctx: &WriteCtx, m: &NewMemory, p: &Prepared) -> Result<Written> {
    let now = now();
    let seq = ctx.next_seq();
    let db = ctx.db();
    let existing: Option<i64> = db.query_opt(
        "SELECT rid FROM memory_contexts
             WHERE workspace = ?1 AND context = ?2 AND session = ?3 AND identity = ?4",
        db_params![
            &m.workspace,
            &p.first_key,
            &m.session,
            p.identity.as_slice()
        ],
        |r| r.get(0),
    )?;
    let Some(rid) = existing else {
        let rid: i64 = db.query_one(
            "INSERT INTO memories(id, workspace, session, identity, content, contexts_json,
               contexts_text, context_count, slot, weight, tags_json, metadata_json, source, seq,
               created_at, updated_at, source_root, from_handler)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, ?16, ?17)
             RETURNING rid",
            db_params![
                &p.id,
                &m.workspace,
                &m.session,
                p.identity.as_slice(),
                &m.content,
                &p.contexts_json,
                &p.contexts_text,
                m.contexts.len() as i64,
                m.slot.as_ref(),
                m.weight,
                p.tags_json.as_ref(),
                m.metadata_json.as_ref(),
                m.source.as_ref(),
                seq,
                now,
                &m.source_root,
                m.from_handler
            ],
            |r| r.get(0),
        )?;
        for (c, base) in &p.keys {
            db.execute(
                "INSERT INTO memory_contexts(workspace, context, session, identity, rid, basename)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                db_params![
                    &m.workspace,
                    c,
                    &m.session,
                    p.identity.as_slice(),
                    rid,
                    base
                ],
            )?;
        }
        return Ok(Written {
            rid,
            id: p.id.clone(),
            created: true,
            created_at: now,
            updated_at: now,
            changed: Vec::new(),
            stored_contexts_json: None,
        });
    };
    type Row = (
        String,
        String,
        i64,
        f64,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let (id, contexts_json, created_at, weight, old_tags, old_meta, old_source): Row = db
        .query_one(
            "SELECT id, contexts_json, created_at, weight, tags_json, metadata_json, source
             FROM memories WHERE rid = ?1",
            db_params![rid],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )?;
    let mut changed = Vec::new();
    if weight != m.weight {
        changed.push("weight".to_string());
    }
    if old_tags != p.tags_json {
        changed.push("tags".to_string());
    }
    if old_meta != m.metadata_json {
        changed.push("metadata".to_string());
    }
    if old_source != m.source {
        changed.push("source".to_string());
    }
    db.execute(
        "UPDATE memories SET weight = ?2, tags_json = ?3, metadata_json = ?4, source = ?5,
           seq = ?6, updated_at = ?7, source_root = ?8, from_handler = ?9 WHERE rid = ?1",
        db_params![
            rid,
            m.weight,
            p.tags_json.as_ref(),
            m.metadata_json.as_ref(),
            m.source.as_ref(),
            seq,
            now,
            &m.source_root,
            m.from_handler
        ],
    )?;
    Ok(Written {
        rid,
        id,
        created: false,
        created_at,
        updated_at: now,
        changed,
        stored_contexts_json: Some(contexts_json),
    })
}

fn load_rid(db: Db<'_>, rid: i64) -> Result<Memory> {
    Ok(db.query_one(
        &format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.rid = ?1"),
        db_params![rid],
        memory_from_row,
    )?)
}

/// Removes memories by rid, with their `memory_contexts` rows (found by key, not scanned).
pub(super) fn delete_rids(db: Db<'_>, rids: &[i64]) -> Result<()> {
    for &rid in rids {
        type Row = (String, String, Vec<u8>, String);
        let row: Option<Row> = db.query_opt(
            "DELETE FROM memories WHERE rid = ?1
                 RETURNING workspace, session, identity, contexts_json",
            db_params![rid],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        let Some((ws, session, identity, contexts_json)) = row else {
            continue;
        };
        let contexts: Vec<String> = serde_json::from_str(&contexts_json).unwrap_or_default();
        let norm: Vec<String> = contexts.iter().map(|c| norm_context(c)).collect();
        for c in context_keys(&norm) {
            db.execute(
                "DELETE FROM memory_contexts
                 WHERE workspace = ?1 AND context = ?2 AND session = ?3 AND identity = ?4",
                db_params![&ws, c, &session, identity.as_slice()],
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::Config;
    use crate::memory::{Memories, check};

    /// The handle `memory_store` builds outside the writer is the stored memory's, for a new
    /// memory and for an update whose contexts are written differently from the stored ones.
    #[tokio::test]
    async fn a_stored_handle_is_the_stored_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _threads) = crate::schema::open_default(&dir.path().join("moss.db")).unwrap();
        let mem = Memories::new(
            store.clone(),
            Arc::new(Config::default()),
            dir.path().into(),
        );
        let req = |contexts: &[&str], weight: f64, tags: Option<Vec<String>>| MemoryStoreRequest {
            content: "Use tabs in Makefiles".into(),
            context: Some(Contexts::Many(
                contexts.iter().map(|c| c.to_string()).collect(),
            )),
            weight: Some(weight),
            tags,
            slot: Some("style".into()),
            workspace: Some("w".into()),
            ..Default::default()
        };
        let stored = |id: String| {
            let store = store.clone();
            async move {
                store
                    .readers
                    .run_db(move |db| {
                        Ok(db.query_one(
                            &format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1"),
                            db_params![&id],
                            memory_from_row,
                        )?)
                    })
                    .await
                    .unwrap()
            }
        };
        let first = mem
            .store(req(
                &["src/Makefile", "build/"],
                1.0,
                Some(vec!["make".into()]),
            ))
            .await
            .unwrap();
        assert!(first.created);
        let row = stored(first.memory.id.clone()).await;
        assert_eq!(first.memory, MemoryHandle::from(&row));
        // The same identity, its contexts cased and ordered differently: an update.
        let second = mem
            .store(req(&["BUILD", "./src/makefile"], 2.5, None))
            .await
            .unwrap();
        assert!(!second.created);
        assert_eq!(second.updated, ["weight", "tags"]);
        let row = stored(second.memory.id.clone()).await;
        assert_eq!(second.memory, MemoryHandle::from(&row));
        assert_eq!(second.memory.contexts, ["src/Makefile", "build/"]);
        assert_eq!(second.memory.created_at, first.memory.created_at);
    }

    #[tokio::test]
    async fn an_upsert_finds_its_identity_and_a_delete_leaves_no_context_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _threads) = crate::schema::open_default(&dir.path().join("moss.db")).unwrap();
        let req = |content: &str, context: Option<Vec<&str>>, session: Option<&str>| {
            let r = MemoryStoreRequest {
                content: content.into(),
                context: context.map(|v| Contexts::Many(v.into_iter().map(String::from).collect())),
                persist: session.map(|_| false),
                session: session.map(String::from),
                workspace: Some("w".into()),
                ..Default::default()
            };
            check(&r, 1000, None).unwrap()
        };
        let cases = [
            req("two files", Some(vec!["src/B.py", "./src/a.py"]), None),
            req("no context", None, None),
            req("no context", None, Some("s1")),
            req("two files", Some(vec!["src/a.py"]), None),
        ];
        let (rids, again) = store
            .writer
            .run(move |ctx| {
                let mut rids = Vec::new();
                for m in &cases {
                    let (mem, created, _) = upsert(ctx, m)?;
                    assert!(created, "{mem:?}");
                    rids.push(ctx.db().query_one(
                        "SELECT rid FROM memories WHERE id = ?1",
                        db_params![&mem.id],
                        |r| r.get::<i64>(0),
                    )?);
                }
                // The same identity, its contexts in another order: an update.
                let mut same = cases[0].clone();
                same.norm_contexts.reverse();
                same.weight = 2.0;
                let (_, created, changed) = upsert(ctx, &same)?;
                let mut none = cases[1].clone();
                none.weight = 3.0;
                let (_, created_none, _) = upsert(ctx, &none)?;
                Ok((rids, (created, changed, created_none)))
            })
            .await
            .unwrap();
        assert_eq!(again, (false, vec!["weight".to_string()], false));
        let count = |store: &crate::store::Store| {
            let store = store.clone();
            async move {
                store
                    .readers
                    .run_db(|db| {
                        Ok(db.query_one(
                            "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM memory_contexts)",
                            &[],
                            |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?)),
                        )?)
                    })
                    .await
                    .unwrap()
            }
        };
        assert_eq!(count(&store).await, (4, 5));
        store
            .writer
            .run(move |ctx| delete_rids(ctx.db(), &rids))
            .await
            .unwrap();
        assert_eq!(count(&store).await, (0, 0));
    }
}
