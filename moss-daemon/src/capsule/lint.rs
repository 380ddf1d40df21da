//! The capsule linter: size and required sections, without an LLM.
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

/// Every line of `text` outside fenced code blocks, with its byte offset and the offset past it
/// (lazily: the linter stops at the last section it needs).
struct LinesOutsideFences<'a> {
    lines: std::str::SplitInclusive<'a, char>,
    offset: usize,
    /// The open fence's character and length.
    fence: Option<(char, usize)>,
}

fn lines_outside_fences(text: &str) -> LinesOutsideFences<'_> {
    LinesOutsideFences {
        lines: text.split_inclusive('\n'),
        offset: 0,
        fence: None,
    }
}

impl<'a> Iterator for LinesOutsideFences<'a> {
    /// (start, end, the line without its line break)
    type Item = (usize, usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        for raw in self.lines.by_ref() {
            let start = self.offset;
            self.offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            let indent = line.len() - line.trim_start_matches(' ').len();
            let trimmed = line.trim_start_matches(' ');
            let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
            if indent <= 3
                && let Some(c) = marker
            {
                let run = trimmed.chars().take_while(|x| *x == c).count();
                if run >= 3 {
                    match self.fence {
                        None => {
                            self.fence = Some((c, run));
                            continue;
                        }
                        Some((fc, flen))
                            if fc == c && run >= flen && trimmed[run..].trim().is_empty() =>
                        {
                            self.fence = None;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            if self.fence.is_none() {
                return Some((start, self.offset, line));
            }
        }
        None
    }
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

/// A label without emphasis marks, a trailing colon or a trailing parenthetical.
fn undecorated(s: &str) -> &str {
    let s = s
        .trim()
        .trim_matches(|c| c == '*' || c == '_' || c == '`')
        .trim();
    let s = s.strip_suffix(':').unwrap_or(s).trim();
    match (s.ends_with(')'), s.rfind(" (")) {
        (true, Some(i)) if i > 0 => &s[..i],
        _ => s,
    }
}

/// Normalizes a label for synonym matching: case, emphasis marks, `_`/`-` as spaces, spacing
/// around `/`, a trailing colon, and a trailing parenthetical. Words end up separated by one
/// space, and `/` stands between spaces as a word of its own. One pass, and one allocation for
/// ASCII.
fn label(s: &str) -> String {
    let s = undecorated(s);
    // Lowercased as a whole string, where a final sigma differs from a sigma inside a word.
    let lower;
    let s = if s.is_ascii() {
        s
    } else {
        lower = s.to_lowercase();
        &lower
    };
    let mut out = String::with_capacity(s.len() + 4);
    // A separator is due before the next word.
    let mut gap = false;
    for c in s.chars().map(|c| c.to_ascii_lowercase()) {
        if c == '_' || c == '-' || c.is_whitespace() {
            gap = true;
            continue;
        }
        if (gap || c == '/') && !out.is_empty() {
            out.push(' ');
        }
        out.push(c);
        gap = c == '/';
    }
    out
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

/// The label a line could name a section with: a header's text, or the 1 to 40 bytes before the
/// line's first `:`.
fn line_label(line: &str) -> Option<&str> {
    if let Some((_, t)) = parse_header(line) {
        return Some(t);
    }
    let l = line.trim_start().trim_start_matches(['*', '_']);
    // Only the first 41 bytes can hold a colon with at most 40 bytes before it (`:` is ASCII,
    // so it is always on a character boundary).
    let colon = l.as_bytes()[..l.len().min(41)]
        .iter()
        .position(|&b| b == b':')?;
    (colon > 0).then(|| &l[..colon])
}

/// The required section `candidate` names, as an index into [`REQUIRED_SECTIONS`].
fn required_section(candidate: &str) -> Option<usize> {
    let l = label(candidate);
    normalized_synonyms()
        .iter()
        .position(|names| names.contains(&l))
}

/// Whether two labels name the same section the way the lint counts them: equal once
/// normalized (case, emphasis, `_`/`-`, a trailing colon or parenthetical), or synonyms of one
/// required section (`Next steps` and `Next actions`).
pub fn same_section(a: &str, b: &str) -> bool {
    label(a) == label(b) || required_section(a).is_some_and(|i| required_section(b) == Some(i))
}

/// The colon lines outside code fences that name a required section (`Next steps: …`), as the
/// lint finds them: `(start, label_end, label)`, where `start` is the line's byte offset and
/// `label_end` the offset just past its colon.
pub fn colon_sections(text: &str) -> Vec<(usize, usize, String)> {
    lines_outside_fences(text)
        .filter(|(_, _, line)| parse_header(line).is_none())
        .filter_map(|(start, _, line)| {
            let l = line_label(line)?;
            required_section(l)?;
            // `l` is a slice of `line`, which starts at `start`; the colon follows `l`.
            let at = start + (l.as_ptr() as usize - line.as_ptr() as usize);
            Some((start, at + l.len() + 1, l.trim().to_string()))
        })
        .collect()
}

/// The canonical names of the required sections `text` lacks, in the order of the contract.
///
/// Labels come from headers, colon lines and, for a JSON object capsule, its keys. The scan
/// stops once every section is found: in most capsules the sections lead, and this runs on every
/// store.
pub fn missing_sections(text: &str) -> Vec<&'static str> {
    let synonyms = normalized_synonyms();
    let mut found = [false; REQUIRED_SECTIONS.len()];
    // Marks what `candidate` names; says whether every section is now found.
    let mut see = |candidate: &str| {
        let l = label(candidate);
        for (seen, names) in found.iter_mut().zip(synonyms) {
            *seen |= names.contains(&l);
        }
        found.iter().all(|f| *f)
    };
    if text.trim_start().starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text)
    {
        let _ = map.keys().any(|k| see(k));
    } else {
        let _ = lines_outside_fences(text)
            .filter_map(|(_, _, line)| line_label(line))
            .any(&mut see);
    }
    REQUIRED_SECTIONS
        .iter()
        .zip(found)
        .filter(|(_, seen)| !seen)
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
    fn a_colon_counts_only_with_1_to_40_bytes_before_it() {
        let forty = "a".repeat(40);
        assert_eq!(line_label(&format!("{forty}: x")), Some(forty.as_str()));
        assert_eq!(line_label(&format!("{forty}a: x")), None);
        assert_eq!(line_label(": x"), None);
        assert_eq!(line_label("  **Files**: src/"), Some("Files**"));
        assert_eq!(line_label("é: x"), Some("é"));
        assert_eq!(line_label(&format!("{}é: x", "a".repeat(39))), None);
        assert_eq!(line_label("no colon here"), None);
    }

    /// Sections anywhere in a long capsule are found, and the scan's early stop leaves the
    /// answer the same whatever follows the last section.
    #[test]
    fn sections_are_found_wherever_they_are() {
        let body = "word word word word word word word word word word\n".repeat(2_000);
        let late = format!("{body}{FULL_MD}");
        assert!(missing_sections(&late).is_empty());
        let early = format!("{FULL_MD}{body}```\nunclosed fence\n");
        assert!(missing_sections(&early).is_empty());
        let interleaved =
            format!("Objective: a\n{body}## Status\n{body}decisions: b\ntodo: c\n{body}");
        assert_eq!(
            missing_sections(&interleaved),
            vec!["Key locations", "Open questions"]
        );
        let json = r#"{"goal":1,"state":2,"choices":3,"tasks":4,"paths":5}"#;
        assert_eq!(missing_sections(json), vec!["Open questions"]);
    }

    /// The label as first written: lowercase, separators to spaces, spaced slashes, then words
    /// joined by single spaces.
    fn label_by_steps(s: &str) -> String {
        let s = undecorated(s).to_lowercase().replace(['_', '-'], " ");
        let s = s.replace('/', " / ");
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The one-pass label equals the step-by-step one on every string of up to five characters
    /// drawn from those that matter (and on a few longer ones).
    #[test]
    fn the_one_pass_label_matches_the_step_by_step_one() {
        const ALPHABET: [char; 12] = ['a', 'B', ' ', '\t', '_', '-', '/', '*', ':', '(', ')', 'É'];
        let mut checked = 0;
        let mut word = Vec::new();
        for len in 0..=5u32 {
            for n in 0..ALPHABET.len().pow(len) {
                word.clear();
                let mut k = n;
                for _ in 0..len {
                    word.push(ALPHABET[k % ALPHABET.len()]);
                    k /= ALPHABET.len();
                }
                let s: String = word.iter().collect();
                assert_eq!(label(&s), label_by_steps(&s), "{s:?}");
                checked += 1;
            }
        }
        assert!(checked > 250_000);
        for s in [
            "**Decisions/Constraints:**",
            "Next actions (ordered)",
            " Open  Questions / RISKS ",
            "key_locations",
            "a//b - c",
            "ΣΑΣ status",
        ] {
            assert_eq!(label(s), label_by_steps(s), "{s:?}");
        }
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
