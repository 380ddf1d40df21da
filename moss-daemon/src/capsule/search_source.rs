//! The capsule family's full-text source: titles and texts of `capsules`, fed by the triggers
//! of its migrations into `capsules_fts_queue`. Its commit signal also wakes `capsule_watch`.

use crate::store::Source;
use crate::store::semantic::EmbedSource;

/// Capsules: title and text, searched by what users type (so `search_tokenizer = "code"`
/// applies). The only source of index files from before there were several, whose watermark
/// it takes over.
pub static SEARCH_SOURCE: Source = Source {
    name: "capsules",
    table: "capsules",
    queue: "capsules_fts_queue",
    columns: &["title", "capsule_text"],
    fts: "capsules_fts",
    tokenizer: "porter unicode61 remove_diacritics 2",
    code_aware: true,
    inherits_single_watermark: true,
};

/// What semantic search embeds of the same rows (the title before each passage of the text).
pub static EMBED_SOURCE: EmbedSource = EmbedSource {
    fts: &SEARCH_SOURCE,
    key: "rowid",
    workspace: "workspace_norm",
    title: Some("title"),
    body: "capsule_text",
};
