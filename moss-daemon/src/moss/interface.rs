//! What the cross-family reads offer the families: their own reads with the hint an empty
//! workspace gets (`capsule_list`, `capsule_latest`, `tasks_context`, `memory_recall`).

pub use super::{capsule_latest, capsule_list, memory_recall, tasks_context};
