//! The filters capsule selections share (list, latest, inventory, search, bulk operations,
//! compose filter items, watch), turned into SQL in one place, and the run ids they take.

use moss_client::capsule::RunIds;

use super::handoff;
use crate::error::{Error, Result};
use crate::sql_filter::{Filter, given};
use crate::store::engine::Engine;
use crate::{bounds, names, tags};

/// Most run ids one filter takes.
pub const MAX_RUN_IDS: usize = 50;

/// The run ids of a filter, checked: at most [`MAX_RUN_IDS`].
pub(crate) fn run_ids(run_id: Option<&RunIds>) -> Result<Vec<String>> {
    let ids = run_id.map(RunIds::to_vec).unwrap_or_default();
    if ids.len() > MAX_RUN_IDS {
        return Err(Error::invalid_field(
            "run_id",
            format!(
                "run_id lists {} runs; at most {MAX_RUN_IDS} are allowed in one filter",
                ids.len()
            ),
        ));
    }
    Ok(ids)
}

/// A run id to store: a handle without commas (a comma separates run ids in filters).
pub(crate) fn run_id_value(value: Option<&str>) -> Result<Option<String>> {
    let v = bounds::handle("run_id", value)?;
    if v.as_deref().is_some_and(|v| v.contains(',')) {
        return Err(Error::invalid_field(
            "run_id",
            "a run id cannot contain a comma: commas separate run ids in filters",
        ));
    }
    Ok(v)
}

/// The capsule filters every selection shares: blank ones are no filter.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Narrow<'a> {
    pub(crate) workspace: Option<&'a str>,
    pub(crate) tag: Option<&'a str>,
    pub(crate) name_prefix: Option<&'a str>,
    pub(crate) run_id: Option<&'a RunIds>,
    pub(crate) phase: Option<&'a str>,
    pub(crate) role: Option<&'a str>,
    pub(crate) task: Option<&'a str>,
}

/// Narrows `f` (over `capsules`, unaliased) to the given filters, and says what they select
/// (`workspace="w", tag="t"`), for messages: the one place the filters of inventory, bulk
/// operations, compose filter items and watch are turned into SQL, for a store of `engine`.
pub(crate) fn narrow(f: &mut Filter, n: &Narrow, engine: Engine) -> Result<Vec<String>> {
    let mut described = Vec::new();
    if let Some(ws) = given(n.workspace) {
        f.add("workspace_norm = ?", names::normalize(ws));
        described.push(format!("workspace={ws:?}"));
    }
    if let Some(tag) = tags::filter_on(engine, f, "capsules.tags_json", n.tag) {
        described.push(format!("tag={tag:?}"));
    }
    if let Some(prefix) = given(n.name_prefix) {
        // Both placeholders bind the same parameter.
        f.add(
            "substr(name_norm, 1, length(?)) = ?",
            names::normalize(prefix),
        );
        described.push(format!("name_prefix={prefix:?}"));
    }
    described.extend(orchestration(f, n.run_id, n.phase, n.role)?);
    if let Some(task) = handoff::task_value(given(n.task))? {
        f.add("task = ?", task.clone());
        described.push(format!("task={task:?}"));
    }
    Ok(described)
}

/// Narrows `f` to the given runs, `phase` and `role` (a blank one is no filter), and says
/// what it selects (`run_id="r1"`), for messages.
pub(crate) fn orchestration(
    f: &mut Filter,
    run_id: Option<&RunIds>,
    phase: Option<&str>,
    role: Option<&str>,
) -> Result<Vec<String>> {
    let mut described = Vec::new();
    let runs = run_ids(run_id)?;
    f.any("run_id", &runs);
    match runs.as_slice() {
        [] => {}
        [one] => described.push(format!("run_id={one:?}")),
        many => described.push(format!("run_id in {many:?}")),
    }
    for (col, value) in [("phase", phase), ("role", role)] {
        if let Some(v) = given(value) {
            f.add(&format!("{col} = ?"), v.to_string());
            described.push(format!("{col}={v:?}"));
        }
    }
    Ok(described)
}
