//! The reasoning family's full-text source: titles and contents of `reasoning_entries` (notes,
//! trace, cards), fed by the triggers of its migrations into `reasoning_entries_fts_queue`.

use crate::store::Source;
use crate::store::semantic::EmbedSource;

/// Reasoning entries: title and content, searched by what users type (so
/// `search_tokenizer = "code"` applies).
pub static SEARCH_SOURCE: Source = Source {
    name: "reasoning",
    table: "reasoning_entries",
    queue: "reasoning_entries_fts_queue",
    columns: &["title", "content"],
    fts: "reasoning_fts",
    tokenizer: "porter unicode61 remove_diacritics 2",
    code_aware: true,
    inherits_single_watermark: false,
};

/// What semantic search embeds of the same rows (the title before each passage of the text).
pub static EMBED_SOURCE: EmbedSource = EmbedSource {
    fts: &SEARCH_SOURCE,
    key: "seq",
    workspace: "workspace",
    title: Some("title"),
    body: "content",
};
