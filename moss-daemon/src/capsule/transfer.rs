//! What [`super::export`] and [`super::import`] share: the JSONL file format and its version.
//!
//! The file is JSONL: a header line `{"_moss_export":true,"schema_version":"1.0",
//! "exported_at":…}`, then one capsule record per line, ordered by id, every field present, so
//! export → import → export gives the same bytes apart from `exported_at`.

/// The header's `schema_version` export writes.
pub const SCHEMA_VERSION: &str = "1.0";

/// The major version of [`SCHEMA_VERSION`]: import reads any `schema_version` that has it.
pub const SCHEMA_MAJOR: &str = "1";

/// Whether import reads a file whose header has `schema_version`.
pub fn readable(schema_version: &str) -> bool {
    schema_version.split('.').next() == Some(SCHEMA_MAJOR)
}

/// Fixtures of the export and import tests.
#[cfg(test)]
pub(super) mod fixtures {
    use crate::cancel::Cancel;
    use crate::capsule::Capsules;

    /// A store with `n` capsules in a temporary home, and the Capsules over it.
    pub async fn capsules_with(
        n: usize,
    ) -> (Capsules, crate::store::StoreThreads, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let home = crate::MossHome::at(dir.path());
        home.ensure_exports_dir().unwrap();
        let (store, threads) = crate::schema::open_default(&dir.path().join("moss.db")).unwrap();
        let caps = Capsules::new(
            store,
            std::sync::Arc::new(crate::config::Config::default()),
            &home,
        );
        for i in 0..n {
            caps.store(moss_client::capsule::StoreRequest {
                capsule_text: format!(
                    "## Objective\n{i}\n## Current status\nx\n## Decisions\nx\n\
                     ## Next actions\nx\n## Key locations\nx\n## Open questions\nx\n"
                ),
                ..Default::default()
            })
            .await
            .unwrap();
        }
        (caps, threads, dir)
    }

    /// A token whose request has already gone away.
    pub fn cancelled() -> Cancel {
        let (cancel, guard) = Cancel::new();
        drop(guard);
        cancel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_reads_every_minor_version_of_its_major() {
        assert!(SCHEMA_VERSION.starts_with(&format!("{SCHEMA_MAJOR}.")));
        assert!(readable(SCHEMA_VERSION));
        assert!(readable("1.7"));
        assert!(!readable("2.0"));
        assert!(!readable("10.0"));
    }
}
