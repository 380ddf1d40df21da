//! Markdown sections of a capsule: a header and the body up to the next header of the same or
//! a higher level (so subsections belong to their section). `capsule_append` matches a header's
//! text exactly, case-insensitively, without synonyms; the `sections` filter of
//! `capsule_compose` finds and matches sections the way the lint does ([`lint_sections`],
//! [`names`]), so a capsule that satisfies the lint with `Next steps:` gives its section to
//! `sections: ["Next actions"]`.

use super::lint;

/// One section of a capsule's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The header line as written, e.g. `## Design Reviews`.
    pub line: String,
    /// The header's text, e.g. `Design Reviews`.
    pub title: String,
    /// The header's level: 2 for `##`.
    pub level: usize,
    /// Byte offset of the header line.
    pub start: usize,
    /// Byte offset of the body (just past the header line).
    pub body_start: usize,
    /// Byte offset just past the section's own text, before its first subsection.
    pub own_end: usize,
    /// Byte offset just past the body, subsections included.
    pub end: usize,
}

impl Section {
    pub fn body<'a>(&self, text: &'a str) -> &'a str {
        &text[self.body_start..self.end]
    }

    /// The text under the header up to the next header of any level.
    pub fn own_body<'a>(&self, text: &'a str) -> &'a str {
        &text[self.body_start..self.own_end]
    }

    pub fn whole<'a>(&self, text: &'a str) -> &'a str {
        &text[self.start..self.end]
    }
}

/// Every section of `text`, in order.
pub fn sections(text: &str) -> Vec<Section> {
    let headers = lint::headers(text);
    headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let end = headers[i + 1..]
                .iter()
                .find(|next| next.level <= h.level)
                .map(|next| next.start)
                .unwrap_or(text.len());
            Section {
                line: h.line.clone(),
                title: h.text.clone(),
                level: h.level,
                start: h.start,
                body_start: h.body_start,
                own_end: headers.get(i + 1).map(|n| n.start).unwrap_or(text.len()),
                end,
            }
        })
        .collect()
}

/// The sections of `text` at its section level: the shallowest level with two headers or more
/// (so a `# Title` above the `##` sections is not one section holding everything), else the
/// shallowest there is. What compose's pivot groups by and diff compares.
pub fn top_level(text: &str) -> Vec<Section> {
    let all = sections(text);
    let level = (1..=6)
        .find(|l| all.iter().filter(|s| s.level == *l).count() >= 2)
        .or_else(|| all.iter().map(|s| s.level).min())
        .unwrap_or(2);
    all.into_iter().filter(|s| s.level == level).collect()
}

/// Every section of `text` the way the lint finds sections: the markdown sections, and a
/// section for each colon line naming a required section (`Next steps: …`), running from that
/// line to the next header or such line. Its `title` is the label before the colon and its body
/// starts after the colon. What compose's `sections` filter selects from.
pub fn lint_sections(text: &str) -> Vec<Section> {
    let mut all = sections(text);
    let colons = lint::colon_sections(text);
    let starts: Vec<usize> = all
        .iter()
        .map(|s| s.start)
        .chain(colons.iter().map(|c| c.0))
        .collect();
    for (start, label_end, title) in colons {
        let end = starts
            .iter()
            .copied()
            .filter(|s| *s > start)
            .min()
            .unwrap_or(text.len());
        let body_start = label_end + text[label_end..end].len()
            - text[label_end..end].trim_start_matches([' ', '\t']).len();
        all.push(Section {
            line: text[start..end]
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
            title,
            level: 7,
            start,
            body_start,
            own_end: end,
            end,
        });
    }
    all.sort_by_key(|s| s.start);
    all
}

/// Whether a section is the one `wanted` names as the lint counts sections: the same label
/// once normalized, or a synonym of the same required section (`Next steps` for `Next
/// actions`). `#`s before `wanted` are ignored.
pub fn names(section: &Section, wanted: &str) -> bool {
    lint::same_section(&section.title, wanted_name(wanted))
}

/// A wanted section's name without surrounding spaces and leading `#`s.
pub fn wanted_name(wanted: &str) -> &str {
    wanted.trim().trim_start_matches('#').trim()
}

/// Exact, case-insensitive header match (surrounding spaces and `#`s ignored).
pub fn matches(section: &Section, wanted: &str) -> bool {
    let wanted = wanted.trim().trim_start_matches('#').trim();
    section.title.to_lowercase() == wanted.to_lowercase()
}

/// Bodies that only hold a placeholder, and so are replaced rather than appended to.
const PLACEHOLDERS: &[&str] = &[
    "(pending)",
    "pending",
    "pending.",
    "tbd",
    "tbd.",
    "(tbd)",
    "n/a",
    "(n/a)",
    "na",
    "-",
    "--",
    "—",
    "–",
    "none",
    "none.",
    "none yet",
    "(none)",
    "none so far",
    "nothing yet",
    "(empty)",
    "empty",
    "todo",
    "(todo)",
    "...",
    "…",
    "?",
];

/// Whether a section body holds nothing but a placeholder (list bullets and emphasis ignored).
pub fn is_placeholder(body: &str) -> bool {
    let t = body.trim();
    let t = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .unwrap_or(t)
        .trim()
        .trim_matches(|c| c == '*' || c == '_')
        .trim()
        .to_lowercase();
    PLACEHOLDERS.contains(&t.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# Title\n\n## Status\nTBD\n\n## Design Reviews\n- one\n### Detail\nx\n\
                        ## Next\n```\n## not a header\n```\nend";

    #[test]
    fn sections_run_to_the_next_header_of_their_level() {
        let s = sections(TEXT);
        let titles: Vec<_> = s.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(
            titles,
            ["Title", "Status", "Design Reviews", "Detail", "Next"]
        );
        assert_eq!(s[1].body(TEXT), "TBD\n\n");
        assert_eq!(s[2].body(TEXT), "- one\n### Detail\nx\n");
        assert_eq!(s[4].body(TEXT), "```\n## not a header\n```\nend");
        assert_eq!(s[0].end, TEXT.len(), "the level-1 title holds everything");
    }

    #[test]
    fn matching_is_exact_and_case_insensitive() {
        let s = sections(TEXT);
        assert!(matches(&s[2], "design reviews"));
        assert!(matches(&s[2], "## Design Reviews "));
        assert!(!matches(&s[2], "Design"));
        assert!(!matches(&s[1], "Current status"), "no synonyms");
    }

    #[test]
    fn placeholders() {
        for p in ["(pending)", "TBD", " N/A ", "-", "none", "- TBD", "_none_"] {
            assert!(is_placeholder(p), "{p:?}");
        }
        for p in ["done", "- shipped", "none of the above", "", "\n\n"] {
            assert!(!is_placeholder(p), "{p:?}");
        }
    }
}
