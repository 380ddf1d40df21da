//! Output budgets: hard caps on what a read answers.
//!
//! Every reasoning and tasks read takes `max_chars`, `max_bytes` and `max_lines` (the config's
//! `output_max_chars` when it gives no `max_chars`). The serialized answer never exceeds them:
//! [`fit`] drops the oldest items first (edges before nodes), then cuts the text of the one item
//! left, and says so with `truncated: true` and a `budget` object. A cap below the smallest
//! answer the read can give (its frame with no items, or, for a page a reader continues from,
//! its newest item with its text cut as far as it goes) is clamped: that smallest answer is
//! given, with `truncated: true` and `budget.warning` naming the cap and what it was clamped
//! to. Only a cap below 1 (or above [`MAX_MAX_CHARS`]) is `INVALID_REQUEST`.

use moss_client::reasoning::Budget;
use serde::Serialize;

use crate::error::{Error, Result};

/// The smallest configured `output_max_chars`: room for an answer's frame. A request may ask
/// for less; its answer is then clamped (see the module doc).
pub const MIN_MAX_CHARS: i64 = 256;
/// The largest.
pub const MAX_MAX_CHARS: i64 = 1_000_000;

/// The caps one read works under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub max_chars: i64,
    pub max_bytes: Option<i64>,
    pub max_lines: Option<i64>,
}

impl Caps {
    /// The caps of a request: its `max_chars` or `default`, its `max_bytes` and `max_lines`.
    pub fn new(
        default: usize,
        max_chars: Option<i64>,
        max_bytes: Option<i64>,
        max_lines: Option<i64>,
    ) -> Result<Caps> {
        let check = |field: &str, v: i64, min: i64| -> Result<i64> {
            if !(min..=MAX_MAX_CHARS).contains(&v) {
                return Err(Error::invalid_field(
                    field,
                    format!("{field} must be between {min} and {MAX_MAX_CHARS}, got {v}"),
                ));
            }
            Ok(v)
        };
        Ok(Caps {
            max_chars: match max_chars {
                Some(v) => check("max_chars", v, 1)?,
                None => default as i64,
            },
            max_bytes: max_bytes.map(|v| check("max_bytes", v, 1)).transpose()?,
            max_lines: max_lines.map(|v| check("max_lines", v, 1)).transpose()?,
        })
    }
}

/// An answer whose items can be dropped to fit a budget.
pub trait Fit: Serialize + Clone {
    /// Droppable units, in the order they go last to first: `keep(n)` keeps the first `n`.
    fn units(&self) -> usize;
    /// Keeps the first `n` units (the newest), fixing up pagination so the dropped ones come
    /// on the next page.
    fn keep(&mut self, n: usize);
    /// Cuts the text of the first unit by at least `chars` characters; false if it has none.
    fn cut(&mut self, _chars: usize) -> bool {
        false
    }
    /// Records the budget (and `truncated`).
    fn set_budget(&mut self, budget: Budget);
    /// Whether the units are a page a reader continues from: then an answer that cannot hold
    /// even one unit (cut) is an error naming the budget it needs, not an empty page a reader
    /// could never get past.
    fn paged(&self) -> bool {
        true
    }
}

/// What an answer measures.
#[derive(Debug, Clone, Copy)]
struct Size {
    chars: i64,
    bytes: i64,
    lines: i64,
}

fn measure<T: Serialize>(value: &T) -> Size {
    let s = serde_json::to_string(value).expect("answers serialize");
    let mut lines = 1;
    let mut escaped = false;
    for b in s.bytes() {
        if escaped {
            if b == b'n' {
                lines += 1;
            }
            escaped = false;
        } else if b == b'\\' {
            escaped = true;
        }
    }
    Size {
        chars: s.chars().count() as i64,
        bytes: s.len() as i64,
        lines,
    }
}

impl Caps {
    fn fits(&self, s: Size) -> bool {
        s.chars <= self.max_chars
            && self.max_bytes.is_none_or(|m| s.bytes <= m)
            && self.max_lines.is_none_or(|m| s.lines <= m)
    }

    /// The budget object with room for the largest values it can hold.
    fn placeholder(&self, truncated: bool) -> Budget {
        Budget {
            max_chars: self.max_chars,
            used_chars: self.max_chars,
            max_bytes: self.max_bytes,
            used_bytes: self.max_bytes,
            max_lines: self.max_lines,
            used_lines: self.max_lines,
            truncated,
            warning: None,
        }
    }

    fn budget(&self, s: Size, truncated: bool) -> Budget {
        Budget {
            max_chars: self.max_chars,
            used_chars: s.chars,
            max_bytes: self.max_bytes,
            used_bytes: self.max_bytes.map(|_| s.bytes),
            max_lines: self.max_lines,
            used_lines: self.max_lines.map(|_| s.lines),
            truncated,
            warning: None,
        }
    }

    /// The warning of an answer of size `s` clamped past these caps: each cap it exceeds.
    fn clamp_warning(&self, s: Size) -> String {
        let mut over = Vec::new();
        if s.chars > self.max_chars {
            over.push(format!("max_chars {} to {}", self.max_chars, s.chars));
        }
        if let Some(m) = self.max_bytes.filter(|m| s.bytes > *m) {
            over.push(format!("max_bytes {m} to {}", s.bytes));
        }
        if let Some(m) = self.max_lines.filter(|m| s.lines > *m) {
            over.push(format!("max_lines {m} to {}", s.lines));
        }
        format!(
            "clamped {}: the smallest answer this read can give",
            over.join(", ")
        )
    }

    /// How far over its caps `s` is, in characters (bytes count as characters here).
    fn excess(&self, s: Size) -> usize {
        let c = s.chars - self.max_chars;
        let b = self.max_bytes.map_or(0, |m| s.bytes - m);
        c.max(b).max(0) as usize
    }
}

/// Shrinks `answer` to fit `caps` and records its budget. See the module doc.
pub fn fit<T: Fit>(mut answer: T, caps: &Caps) -> Result<T> {
    answer.set_budget(caps.placeholder(false));
    let size = measure(&answer);
    if caps.fits(size) {
        return Ok(settle(answer, caps, size, false));
    }
    let trial = |n: usize| {
        let mut a = answer.clone();
        a.keep(n);
        a.set_budget(caps.placeholder(true));
        let s = measure(&a);
        (a, s)
    };
    // The largest n that fits: binary search, since keeping fewer never grows the answer.
    let (mut lo, mut hi) = (0usize, answer.units());
    let (empty, empty_size) = trial(0);
    if !caps.fits(empty_size) {
        let smallest = if answer.units() > 0 && answer.paged() {
            smallest_one(&trial)
        } else {
            empty
        };
        return Ok(clamped(smallest, caps));
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if caps.fits(trial(mid).1) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut best = if lo == 0 { empty } else { trial(lo).0 };
    if lo == 0 && answer.units() > 0 {
        // Not even the newest item fits whole: keep it with its text cut, so a reader paging
        // with this budget still moves forward.
        let (mut one, mut size) = trial(1);
        let mut fitted = false;
        for _ in 0..8 {
            if !one.cut(caps.excess(size) + 16) {
                break;
            }
            size = measure(&one);
            if caps.fits(size) {
                best = one;
                fitted = true;
                break;
            }
        }
        if !fitted && best.paged() {
            return Ok(clamped(smallest_one(&trial), caps));
        }
    }
    let size = measure(&best);
    Ok(settle(best, caps, size, true))
}

/// A page's newest item with its text cut as far as it goes: the smallest answer a reader
/// paging under any budget still moves forward with.
fn smallest_one<T: Fit>(trial: &impl Fn(usize) -> (T, Size)) -> T {
    let (mut one, mut size) = trial(1);
    for _ in 0..16 {
        let mut shorter = one.clone();
        if !shorter.cut(size.chars as usize) {
            break;
        }
        let now = measure(&shorter);
        if now.chars >= size.chars {
            break;
        }
        (one, size) = (shorter, now);
    }
    one
}

/// `answer`, over its caps, with its budget and a warning naming each cap it exceeds and its
/// size: the numbers can change the size, so a few passes settle them as in [`settle`].
fn clamped<T: Fit>(mut answer: T, caps: &Caps) -> T {
    let mut size = measure(&answer);
    for _ in 0..4 {
        let mut budget = caps.budget(size, true);
        budget.warning = Some(caps.clamp_warning(size));
        answer.set_budget(budget);
        let now = measure(&answer);
        if now.chars == size.chars && now.bytes == size.bytes && now.lines == size.lines {
            break;
        }
        size = now;
    }
    answer
}

/// Records the budget with the answer's exact size: the recorded numbers have at most the
/// placeholder's digits, so each pass can only shrink the answer, and a few passes settle it.
fn settle<T: Fit>(mut answer: T, caps: &Caps, mut size: Size, truncated: bool) -> T {
    for _ in 0..4 {
        answer.set_budget(caps.budget(size, truncated));
        let now = measure(&answer);
        if now.chars == size.chars && now.bytes == size.bytes && now.lines == size.lines {
            break;
        }
        size = now;
    }
    answer
}

/// Cuts `text` to at most `keep` characters on a character boundary, marking the cut.
pub fn cut_text(text: &mut String, by: usize) -> bool {
    let n = text.chars().count();
    if n == 0 {
        return false;
    }
    let keep = n.saturating_sub(by + 1);
    let at = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    text.truncate(at);
    text.push('…');
    true
}

/// A budget to fill in: [`fit`] replaces it.
pub fn blank_budget() -> Budget {
    Budget {
        max_chars: 0,
        used_chars: 0,
        max_bytes: None,
        used_bytes: None,
        max_lines: None,
        used_lines: None,
        truncated: false,
        warning: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Serialize)]
    struct Page {
        items: Vec<String>,
        truncated: bool,
        budget: Option<Budget>,
    }

    impl Fit for Page {
        fn units(&self) -> usize {
            self.items.len()
        }
        fn keep(&mut self, n: usize) {
            self.items.truncate(n);
        }
        fn cut(&mut self, chars: usize) -> bool {
            self.items.first_mut().is_some_and(|t| cut_text(t, chars))
        }
        fn set_budget(&mut self, budget: Budget) {
            self.truncated = budget.truncated;
            self.budget = Some(budget);
        }
    }

    fn page(items: &[&str]) -> Page {
        Page {
            items: items.iter().map(|s| s.to_string()).collect(),
            truncated: false,
            budget: None,
        }
    }

    #[test]
    fn the_cap_is_hard_and_older_items_go_first() {
        let items: Vec<String> = (0..100)
            .map(|i| format!("item {i} {}", "x".repeat(i)))
            .collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        for max in [256, 300, 1000, 4000, 100_000] {
            let caps = Caps::new(20_000, Some(max), None, None).unwrap();
            let out = fit(page(&refs), &caps).unwrap();
            let len = serde_json::to_string(&out).unwrap().chars().count() as i64;
            assert!(len <= max, "{len} > {max}");
            assert_eq!(out.budget.unwrap().used_chars, len);
            assert_eq!(out.truncated, out.items.len() < 100);
            assert_eq!(
                out.items[..],
                items[..out.items.len()],
                "newest kept, in order"
            );
        }
    }

    #[test]
    fn a_single_large_item_is_cut_not_dropped() {
        let big = "é".repeat(5000);
        let caps = Caps::new(20_000, Some(400), None, None).unwrap();
        let out = fit(page(&[&big]), &caps).unwrap();
        assert_eq!(out.items.len(), 1);
        assert!(out.items[0].ends_with('…'));
        assert!(serde_json::to_string(&out).unwrap().chars().count() <= 400);
        let caps = Caps::new(20_000, None, Some(400), None).unwrap();
        let out = fit(page(&[&big]), &caps).unwrap();
        assert!(serde_json::to_string(&out).unwrap().len() <= 400);
    }

    #[test]
    fn lines_count_newlines_in_strings() {
        let caps = Caps::new(20_000, None, None, Some(2)).unwrap();
        let out = fit(page(&["a\nb", "c\nd", "e\\nf"]), &caps).unwrap();
        assert_eq!(out.items, vec!["a\nb"]);
        assert_eq!(out.budget.unwrap().used_lines, Some(2));
    }

    #[test]
    fn a_cap_below_the_smallest_answer_is_clamped_to_it() {
        let big = "x".repeat(500);
        for max in [1, 20, 40] {
            let caps = Caps::new(20_000, Some(max), None, None).unwrap();
            // A page keeps its newest item, cut as far as it goes, so a reader moves on.
            let out = fit(page(&[&big, "older"]), &caps).unwrap();
            assert_eq!(out.items, vec!["…"]);
            let len = serde_json::to_string(&out).unwrap().chars().count() as i64;
            let b = out.budget.clone().unwrap();
            assert!(out.truncated && b.truncated);
            assert_eq!((b.max_chars, b.used_chars), (max, len));
            assert_eq!(
                b.warning.as_deref(),
                Some(
                    format!(
                        "clamped max_chars {max} to {len}: the smallest answer this read can give"
                    )
                    .as_str()
                )
            );
        }
        // An answer with nothing to drop is given whole.
        let caps = Caps::new(20_000, Some(5), Some(6), None).unwrap();
        let out = fit(page(&[]), &caps).unwrap();
        let w = out.budget.unwrap().warning.unwrap();
        assert!(
            w.contains("max_chars 5 to ") && w.contains("max_bytes 6 to "),
            "{w}"
        );
    }

    #[test]
    fn out_of_range_caps_name_their_field() {
        let e = Caps::new(20_000, Some(0), None, None).unwrap_err();
        assert_eq!(e.0.details["field"], "max_chars");
        let e = Caps::new(20_000, Some(MAX_MAX_CHARS + 1), None, None).unwrap_err();
        assert_eq!(e.0.details["field"], "max_chars");
        let e = Caps::new(20_000, None, None, Some(0)).unwrap_err();
        assert_eq!(e.0.details["field"], "max_lines");
    }
}
