//! Long texts are embedded in passages, so that a match deep inside a capsule is found: one
//! vector for a whole capsule would average its sections' meanings away.
//!
//! A text is cut at its markdown headings into sections; consecutive sections are packed into
//! one passage while it stays under [`PASSAGE_CHARS`]; a section longer than that is cut at its
//! paragraphs, and a paragraph longer than that at the last space before the limit. An item
//! gets at most [`MAX_PASSAGES`] passages (the rest of a very long text is not embedded).

use std::ops::Range;

/// Characters a passage holds at most: about 200 tokens of English, under the model's 256.
pub const PASSAGE_CHARS: usize = 1000;
/// Passages an item is embedded in, at most.
pub const MAX_PASSAGES: usize = 12;

/// The byte ranges of `text`'s passages, in order (none for a blank text).
pub fn passages(text: &str) -> Vec<Range<usize>> {
    let mut units: Vec<Range<usize>> = Vec::new();
    for section in sections(text) {
        if section.len() <= PASSAGE_CHARS {
            units.push(section);
            continue;
        }
        for para in split_at(text, section, "\n\n") {
            if para.len() <= PASSAGE_CHARS {
                units.push(para);
            } else {
                units.extend(hard_split(text, para));
            }
        }
    }
    let mut out: Vec<Range<usize>> = Vec::new();
    for u in units {
        if text[u.clone()].trim().is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if u.end - last.start <= PASSAGE_CHARS => last.end = u.end,
            _ => out.push(u),
        }
        if out.len() > MAX_PASSAGES {
            break;
        }
    }
    out.truncate(MAX_PASSAGES);
    out
}

/// Sections: each starts at a line beginning with `#` (or at the text's start).
fn sections(text: &str) -> Vec<Range<usize>> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if at > 0 && line.starts_with('#') {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(text.len());
    starts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// `range` cut after each `sep`.
fn split_at(text: &str, range: Range<usize>, sep: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    let part = &text[range.clone()];
    let mut from = 0;
    while let Some(i) = part[from..].find(sep) {
        let end = range.start + from + i + sep.len();
        out.push(start..end);
        start = end;
        from += i + sep.len();
    }
    if start < range.end {
        out.push(start..range.end);
    }
    out
}

/// `range` in pieces of at most `PASSAGE_CHARS` bytes, each ending at a space where it can
/// (and always at a character boundary).
fn hard_split(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    while range.end - start > PASSAGE_CHARS {
        let mut end = start + PASSAGE_CHARS;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(space) = text[start..end]
            .rfind(' ')
            .filter(|s| *s > PASSAGE_CHARS / 2)
        {
            end = start + space + 1;
        }
        out.push(start..end);
        start = end;
    }
    out.push(start..range.end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_one_passage() {
        assert_eq!(passages("User prefers tabs"), vec![0..17]);
        assert!(passages("  \n ").is_empty());
    }

    #[test]
    fn sections_are_packed_and_long_ones_cut_within_the_bound() {
        let body = "word ".repeat(300);
        let text =
            format!("# Goal\nship it\n\n## Notes\n{body}\n\n## Decision\nwe picked tokens\n");
        let p = passages(&text);
        assert!(p.len() >= 3, "{p:?}");
        for r in &p {
            assert!(r.len() <= PASSAGE_CHARS, "{r:?}");
        }
        // Together they cover the text, in order, without overlap.
        assert_eq!(p.first().unwrap().start, 0);
        assert_eq!(p.last().unwrap().end, text.len());
        for w in p.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert!(text[p.last().unwrap().clone()].contains("we picked tokens"));
    }

    #[test]
    fn a_huge_text_keeps_at_most_the_first_passages() {
        let text = "é".repeat(20_000);
        let p = passages(&text);
        assert_eq!(p.len(), MAX_PASSAGES);
        for r in &p {
            assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        }
    }
}
