//! `tokens_estimate`: how many tokens a text costs a model, by the counter the config names
//! (`tokenizer`).
//!
//! The default counts words (`split_whitespace`) and adds 30%: well under a microsecond for a
//! 2 KB capsule, and close to real counts for English prose, further off for code and other
//! languages. `cl100k_base` and `o200k_base` count real tokens with OpenAI's vocabularies
//! (compiled into the daemon), at 100-300 µs per 2 KB capsule, with 24-47 MB of tables loaded
//! once (see docs/perf.md). A changed setting applies to texts written after it;
//! stored estimates are not recounted.

use serde::Deserialize;

/// The token counter (`tokenizer` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Tokenizer {
    /// ceil(words × 1.3).
    #[default]
    #[serde(rename = "words")]
    Words,
    /// GPT-4 and GPT-3.5's vocabulary.
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
    /// GPT-4o's and later models' vocabulary.
    #[serde(rename = "o200k_base")]
    O200kBase,
}

impl Tokenizer {
    /// The config value naming this counter.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Words => "words",
            Tokenizer::Cl100kBase => "cl100k_base",
            Tokenizer::O200kBase => "o200k_base",
        }
    }

    /// The tokens of `text`. Special-token markup such as `<|endoftext|>` counts as the
    /// ordinary text it is.
    pub fn count(self, text: &str) -> i64 {
        match self {
            Tokenizer::Words => tokens_estimate(text),
            Tokenizer::Cl100kBase => {
                tiktoken_rs::cl100k_base_singleton().count_ordinary(text) as i64
            }
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton().count_ordinary(text) as i64,
        }
    }

    /// Whether a count costs enough to be taken before a writer job (see [`Counted`]).
    pub fn is_costly(self) -> bool {
        !matches!(self, Tokenizer::Words)
    }

    /// The tokens of `text`: `pre`'s count when it was taken on this very text, else a count
    /// now.
    pub fn count_with(self, text: &str, pre: Option<&Counted>) -> i64 {
        match pre {
            Some(p) if p.text == text => p.tokens,
            _ => self.count(text),
        }
    }

    /// Loads the vocabulary now, so that the first write does not wait for it.
    pub fn warm_up(self) {
        self.count("warm up");
    }
}

/// A count taken before a writer job on the text the job expects to write. The writer holds
/// every other write while a job runs, so where a job derives its text from the database (an
/// append, a clone) a real counter's 100-300 µs are spent first, on a read connection; the job
/// uses the count if the text it writes is that text, and counts again if the capsule changed
/// in between.
#[derive(Debug)]
pub struct Counted {
    text: String,
    tokens: i64,
}

impl Counted {
    pub fn new(tokenizer: Tokenizer, text: String) -> Counted {
        let tokens = tokenizer.count(&text);
        Counted { text, tokens }
    }
}

/// Token estimate: ceil(words × 1.3), words being what `str::split_whitespace` yields.
pub fn tokens_estimate(text: &str) -> i64 {
    (word_count(text) as f64 * 1.3).ceil() as i64
}

/// `text.split_whitespace().count()`. Most capsules are ASCII, and for those counting the
/// starts of words (a non-space byte after a space byte, or first) over the bytes gives the
/// same count without decoding characters. The counts are kept in byte counters summed 255
/// pairs at a time so that the loop compiles to vector instructions: 0.35-0.55 µs for a 2 KB
/// capsule, against 4-6 µs for a byte-at-a-time loop and more for `split_whitespace` (this
/// runs on every store).
fn word_count(text: &str) -> usize {
    if !text.is_ascii() {
        return text.split_whitespace().count();
    }
    // The ASCII characters `char::is_whitespace` accepts: space, and \t \n VT FF \r (9 to 13).
    // Unlike `u8::is_ascii_whitespace`, it includes the vertical tab.
    let space = |b: u8| (b == b' ') | (b.wrapping_sub(b'\t') < 5);
    let bytes = text.as_bytes();
    let first = usize::from(bytes.first().is_some_and(|&b| !space(b)));
    let next = bytes.get(1..).unwrap_or_default();
    // Chunk k of `next` is chunk k of `bytes` shifted by one: each pair is a byte and the one
    // after it (the last byte, which has none, is left out by the zips).
    first
        + bytes
            .chunks(255)
            .zip(next.chunks(255))
            .map(|(prev, cur)| {
                let starts = prev
                    .iter()
                    .zip(cur)
                    .fold(0u8, |n, (&p, &c)| n + u8::from(space(p) & !space(c)));
                usize::from(starts)
            })
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::{Counted, Tokenizer, tokens_estimate, word_count};

    /// A count taken in advance is used only for the text it was taken on.
    #[test]
    fn a_count_taken_before_is_used_only_for_its_own_text() {
        let t = Tokenizer::Cl100kBase;
        let pre = Counted {
            text: "tiktoken is great!".into(),
            tokens: 1_000,
        };
        assert_eq!(t.count_with("tiktoken is great!", Some(&pre)), 1_000);
        assert_eq!(t.count_with("tiktoken is great?", Some(&pre)), 6);
        assert_eq!(t.count_with("tiktoken is great!", None), 6);
        assert_eq!(Counted::new(t, "tiktoken is great!".into()).tokens, 6);
    }

    /// Token ids published with the vocabularies (OpenAI's token-counting examples).
    #[test]
    fn real_counts_match_the_published_ones() {
        let cl = tiktoken_rs::cl100k_base_singleton();
        let o = tiktoken_rs::o200k_base_singleton();
        assert_eq!(
            cl.encode_ordinary("tiktoken is great!"),
            [83, 1609, 5963, 374, 2294, 0]
        );
        assert_eq!(
            cl.encode_ordinary("antidisestablishmentarianism"),
            [519, 85342, 34500, 479, 8997, 2191]
        );
        assert_eq!(
            o.encode_ordinary("antidisestablishmentarianism"),
            [493, 129901, 376, 160388, 21203, 2367]
        );
        assert_eq!(
            cl.encode_ordinary("2 + 2 = 4"),
            [17, 489, 220, 17, 284, 220, 19]
        );
        assert_eq!(
            o.encode_ordinary("2 + 2 = 4"),
            [17, 659, 220, 17, 314, 220, 19]
        );
        assert_eq!(Tokenizer::Cl100kBase.count("お誕生日おめでとう"), 9);
        assert_eq!(Tokenizer::O200kBase.count("お誕生日おめでとう"), 8);
        assert_eq!(Tokenizer::Cl100kBase.count("tiktoken is great!"), 6);
        assert_eq!(Tokenizer::Cl100kBase.count(""), 0);
        // Code costs more tokens than words suggest.
        let code = "fn verify(token: &str) -> Result<Claims, AuthError> { decode(token) }";
        assert_eq!(Tokenizer::Words.count(code), 12);
        assert!(Tokenizer::Cl100kBase.count(code) > 12);
        // Markup is counted as text, never refused.
        assert!(Tokenizer::O200kBase.count("<|endoftext|>") > 1);
    }

    #[test]
    fn names_round_trip_through_the_config() {
        for t in [
            Tokenizer::Words,
            Tokenizer::Cl100kBase,
            Tokenizer::O200kBase,
        ] {
            let parsed: Tokenizer = serde_json::from_str(&format!("\"{}\"", t.name())).unwrap();
            assert_eq!(parsed, t);
        }
        assert!(serde_json::from_str::<Tokenizer>("\"gpt2\"").is_err());
    }

    #[test]
    fn words_and_tokens() {
        assert_eq!(tokens_estimate("one two three"), 4);
        for text in [
            "",
            " ",
            "one",
            "  one  two\tthree\nfour\r\nfive\x0bsix\x0cseven ",
            "a\u{a0}b",
            "a\u{3000}b c\u{2028}d",
            "café au lait",
            "\u{85}x",
            "x\x1fy",
        ] {
            assert_eq!(
                word_count(text),
                text.split_whitespace().count(),
                "{text:?}"
            );
        }
        // Texts of every length across the 255-byte chunks, words cut by the chunk edges.
        let mut x = 0x2545_f491_u32;
        let mut text = String::new();
        for _ in 0..1200 {
            assert_eq!(
                word_count(&text),
                text.split_whitespace().count(),
                "{text:?}"
            );
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            text.push([b'a', b'b', b' ', b'\t', 0x0b, b'\n', b'-'][(x % 7) as usize] as char);
        }
        assert_eq!(tokens_estimate(""), 0);
    }
}
