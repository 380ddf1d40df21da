//! The cross-family reads (`moss_*`): every workspace with what each family holds, one ranked
//! search over every family, and the resume call. They read each family only through what the
//! family exports for them (its `interface` module and its public operations).

pub mod context;
pub mod family;
pub mod search;

use std::collections::BTreeMap;

use moss_client::moss::*;

use crate::app::App;
use crate::error::Result;
use crate::time::rfc3339_ms;
use crate::{capsule::interface as capsules, memory::interface as memories};
use crate::{reasoning::interface as reasoning, tasks::interface as tasks};

/// `moss_workspaces`: every workspace any family holds something in, most recent first.
pub async fn workspaces(app: &App, _req: WorkspacesRequest) -> Result<WorkspacesResponse> {
    let counts = app
        .store
        .readers
        .run(|conn| {
            let mut by_ws: BTreeMap<String, (FamilyCounts, i64)> = BTreeMap::new();
            type Slot = fn(&mut FamilyCounts) -> &mut i64;
            type Rows = Vec<(String, i64, i64)>;
            let families: [(Rows, Slot); 4] = [
                (capsules::activity(conn)?, |c| &mut c.capsules),
                (reasoning::activity(conn)?, |c| &mut c.reasoning),
                (tasks::activity(conn)?, |c| &mut c.tasks),
                (memories::activity(conn)?, |c| &mut c.memories),
            ];
            for (rows, slot) in families {
                for (ws, count, last_ms) in rows {
                    let entry = by_ws.entry(ws).or_default();
                    *slot(&mut entry.0) += count;
                    entry.1 = entry.1.max(last_ms);
                }
            }
            Ok(by_ws)
        })
        .await?;
    let mut items: Vec<(i64, WorkspaceInfo)> = counts
        .into_iter()
        .map(|(workspace, (counts, last))| {
            let info = WorkspaceInfo {
                workspace,
                counts,
                last_activity: rfc3339_ms(last),
            };
            (last, info)
        })
        .collect();
    items.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.workspace.cmp(&b.1.workspace))
    });
    Ok(WorkspacesResponse {
        items: items.into_iter().map(|(_, i)| i).collect(),
    })
}
