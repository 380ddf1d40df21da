//! The capsule linter (seed 000 §3.2): size and required sections, without an LLM.
//!
//! A section is present when one of its synonyms appears, case-insensitively, as a markdown
//! header (`## Next steps`), as a colon line (`Next steps: ...`), or as a key of a JSON object
//! capsule. Headers and colon lines inside fenced code blocks do not count.

/// The six required sections: canonical name first, then every synonym that satisfies it.
pub const REQUIRED_SECTIONS: [(&str, &[&str]); 6] = [
    ("Objective", &["objective", "goal", "purpose"]),
    (
        "Current status",
        &["current status", "status", "state", "where we are"],
    ),
    (
        "Decisions",
        &[
            "decisions",
            "decisions / constraints",
            "decisions/constraints",
            "constraints",
            "choices",
        ],
    ),
    (
        "Next actions",
        &[
            "next actions",
            "next steps",
            "action items",
            "todo",
            "tasks",
        ],
    ),
    (
        "Key locations",
        &["key locations", "locations", "files", "paths", "references"],
    ),
    (
        "Open questions",
        &[
            "open questions",
            "open questions / risks",
            "open questions/risks",
            "questions",
            "risks",
            "unknowns",
        ],
    ),
];

/// A markdown ATX header outside code fences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// 1 to 6.
    pub level: usize,
    /// The header text without the `#` marks, trimmed.
    pub text: String,
    /// The line as written, e.g. `## Design Reviews`.
    pub line: String,
    /// Byte offset of the start of the header line.
    pub start: usize,
    /// Byte offset just past the header line (and its newline).
    pub body_start: usize,
}

/// Every line of `text` outside fenced code blocks, with its byte offset and the offset past it.
pub fn lines_outside_fences(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let indent = line.len() - line.trim_start_matches(' ').len();
        let trimmed = line.trim_start_matches(' ');
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        if indent <= 3
            && let Some(c) = marker
        {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= 3 {
                match fence {
                    None => {
                        fence = Some((c, run));
                        continue;
                    }
                    Some((fc, flen))
                        if fc == c && run >= flen && trimmed[run..].trim().is_empty() =>
                    {
                        fence = None;
                        continue;
                    }
                    _ => {}
                }
            }
        }
        if fence.is_none() {
            out.push((start, offset, line));
        }
    }
    out
}

/// Parses an ATX header line (`## Text`, up to three spaces of indent, optional closing #s).
pub fn parse_header(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let text = after.trim();
    let text = text.trim_end_matches('#').trim_end();
    Some((level, text))
}

/// The markdown headers of `text`, outside code fences.
pub fn headers(text: &str) -> Vec<Header> {
    lines_outside_fences(text)
        .into_iter()
        .filter_map(|(start, end, line)| {
            parse_header(line).map(|(level, t)| Header {
                level,
                text: t.to_string(),
                line: line.trim().to_string(),
                start,
                body_start: end,
            })
        })
        .collect()
}

/// Normalizes a label for synonym matching: case, emphasis marks, `_`/`-` as spaces, spacing
/// around `/`, a trailing colon, and a trailing parenthetical.
fn label(s: &str) -> String {
    let s = s
        .trim()
        .trim_matches(|c| c == '*' || c == '_' || c == '`')
        .trim();
    let s = s.strip_suffix(':').unwrap_or(s).trim();
    let s = match (s.ends_with(')'), s.rfind(" (")) {
        (true, Some(i)) if i > 0 => &s[..i],
        _ => s,
    };
    let s = s.to_lowercase().replace(['_', '-'], " ");
    let s = s.replace('/', " / ");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The synonyms of each required section, normalized once.
fn normalized_synonyms() -> &'static [Vec<String>; 6] {
    static SYNONYMS: std::sync::OnceLock<[Vec<String>; 6]> = std::sync::OnceLock::new();
    SYNONYMS
        .get_or_init(|| REQUIRED_SECTIONS.map(|(_, syns)| syns.iter().map(|s| label(s)).collect()))
}

#[cfg(test)]
fn is_synonym(candidate: &str, synonyms: &[&str]) -> bool {
    let c = label(candidate);
    synonyms.iter().any(|s| label(s) == c)
}

/// Labels that could name a section: headers, the part before `:` on colon lines, JSON keys.
fn candidate_labels(text: &str) -> Vec<String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text)
    {
        return map.keys().cloned().collect();
    }
    let mut labels = Vec::new();
    for (_, _, line) in lines_outside_fences(text) {
        if let Some((_, t)) = parse_header(line) {
            labels.push(t.to_string());
            continue;
        }
        let l = line.trim_start();
        let l = l.trim_start_matches(['*', '_']);
        if let Some((before, _)) = l.split_once(':')
            && !before.is_empty()
            && before.len() <= 40
        {
            labels.push(before.to_string());
        }
    }
    labels
}

/// The canonical names of the required sections `text` lacks, in the order of the contract.
pub fn missing_sections(text: &str) -> Vec<&'static str> {
    let labels: Vec<String> = candidate_labels(text).iter().map(|l| label(l)).collect();
    REQUIRED_SECTIONS
        .iter()
        .zip(normalized_synonyms())
        .filter(|(_, synonyms)| !labels.iter().any(|l| synonyms.contains(l)))
        .map(|((canonical, _), _)| *canonical)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL_MD: &str = "## Objective\nx\n## Current status\nx\n## Decisions\nx\n\
                           ## Next actions\nx\n## Key locations\nx\n## Open questions\nx\n";

    #[test]
    fn markdown_headers_satisfy_the_lint() {
        assert!(missing_sections(FULL_MD).is_empty());
    }

    #[test]
    fn colon_lines_and_synonyms_count_case_insensitively() {
        let text = "GOAL: ship\nwhere we are: half\nDecisions / constraints: none\n\
                    next steps: more\nFiles: src/\nrisks: some\n";
        assert!(
            missing_sections(text).is_empty(),
            "{:?}",
            missing_sections(text)
        );
    }

    #[test]
    fn json_keys_count() {
        let text = r#"{"objective":"a","status":"b","decisions":[],"next_actions":[],
                       "key_locations":[],"open_questions":[]}"#;
        assert!(
            missing_sections(text).is_empty(),
            "{:?}",
            missing_sections(text)
        );
    }

    #[test]
    fn missing_sections_are_named_canonically_in_order() {
        let text = "## Objective\nx\n## Status\nx\n## Next steps\nx\n## Questions\nx\n";
        assert_eq!(missing_sections(text), vec!["Decisions", "Key locations"]);
    }

    #[test]
    fn headers_inside_code_fences_do_not_count() {
        let text = "## Objective\nx\n## Current status\nx\n## Decisions\nx\n\
                    ## Next actions\nx\n```md\n## Key locations\nKey locations: a\n```\n\
                    ~~~\n## Open questions\n~~~\n";
        assert_eq!(
            missing_sections(text),
            vec!["Key locations", "Open questions"]
        );
    }

    #[test]
    fn header_variants_are_recognised() {
        assert_eq!(parse_header("### Next steps ###"), Some((3, "Next steps")));
        assert_eq!(parse_header("#NoSpace"), None);
        assert_eq!(parse_header("    ## indented code"), None);
        assert!(is_synonym(
            "**Decisions/Constraints:**",
            REQUIRED_SECTIONS[2].1
        ));
        assert!(is_synonym("Next actions (ordered)", REQUIRED_SECTIONS[3].1));
    }

    #[test]
    fn headers_report_offsets() {
        let h = headers("intro\n## A\nbody\n## B\n");
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].text, "A");
        assert_eq!(h[0].start, 6);
        assert_eq!(h[0].body_start, 11);
        assert_eq!(h[1].line, "## B");
    }
}
