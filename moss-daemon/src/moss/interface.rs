//! What the cross-family reads offer the families: their own reads with the hint an empty
//! workspace gets (`capsule_list`, `capsule_latest`).

pub use super::{capsule_latest, capsule_list};
