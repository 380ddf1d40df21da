//! The tasks family's full-text source: the titles and descriptions of plans and tasks and the
//! titles of steps, one row each in `task_texts`, fed by the triggers of its migrations into
//! `task_texts_fts_queue`.

use crate::store::Source;
use crate::store::semantic::EmbedSource;

/// Plans, tasks and steps: title and body (an item's description; empty for a step). Words
/// keep `_` (`refresh_token` is one word) whatever `search_tokenizer` says: the search matches
/// the query's words as prefixes of the title's and description's words.
pub static SEARCH_SOURCE: Source = Source {
    name: "tasks",
    table: "task_texts",
    queue: "task_texts_fts_queue",
    columns: &["title", "body"],
    fts: "tasks_fts",
    tokenizer: "porter unicode61 remove_diacritics 2 tokenchars '_'",
    code_aware: false,
    inherits_single_watermark: false,
};

/// What semantic search embeds of the same rows (the title before each passage of the body).
pub static EMBED_SOURCE: EmbedSource = EmbedSource {
    fts: &SEARCH_SOURCE,
    key: "doc",
    workspace: "workspace",
    title: Some("title"),
    body: "body",
};
