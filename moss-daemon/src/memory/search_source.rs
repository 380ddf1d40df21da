//! The memory family's full-text source: content, contexts and slot of `memories`, fed by the
//! triggers of its migrations into `memories_fts_queue`.

use crate::store::Source;
use crate::store::semantic::EmbedSource;

/// Memories: content, contexts and slot. They stay on the default word rules whatever
/// `search_tokenizer` says: recall splits its query at punctuation into terms and matches paths
/// through contexts instead.
pub static SEARCH_SOURCE: Source = Source {
    name: "memories",
    table: "memories",
    queue: "memories_fts_queue",
    columns: &["content", "contexts_text", "slot"],
    fts: "memories_fts",
    tokenizer: "porter unicode61 remove_diacritics 2",
    code_aware: false,
    inherits_single_watermark: false,
};

/// What semantic search embeds of the same rows (the title before each passage of the text).
pub static EMBED_SOURCE: EmbedSource = EmbedSource {
    fts: &SEARCH_SOURCE,
    key: "rid",
    workspace: "workspace",
    title: None,
    body: "content",
};
