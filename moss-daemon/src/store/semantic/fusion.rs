//! Reciprocal rank fusion of a keyword ranking and a semantic ranking: a hit at rank `r`
//! (1-based) of a part gets `1 / (K + r)` from it, `K = 60`, and its fused value is the sum over
//! the parts that found it. Ties go to the better keyword rank, then to the order the semantic
//! part gave. Ranks, not scores, are fused: BM25 and cosine similarity are on scales that do
//! not compare, and a rank says only how an item stands within its own part.

use std::collections::HashMap;
use std::hash::Hash;

use moss_client::search::{HitExplain, KeywordPart, SemanticPart};

use super::Near;

/// The fusion constant: how slowly a part's contribution falls with rank.
pub const K: f64 = 60.0;

/// Hits a part contributes to a fused ranking, at most: fused pages reach this deep.
pub const DEPTH: usize = 100;

/// A fused hit: its key and its place in each part.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<T> {
    pub key: T,
    /// 1-based rank and 0..1 relevance in the keyword part.
    pub keyword: Option<(usize, f64)>,
    /// 1-based rank and the passage in the semantic part.
    pub semantic: Option<(usize, Near)>,
    pub fused: f64,
}

impl<T> Fused<T> {
    /// The fused value scaled to 0..1: 1 for a hit first in every part that ranked.
    pub fn score(&self, parts: usize) -> f64 {
        let best = parts as f64 / (K + 1.0);
        ((self.fused / best) * 10_000.0).round() / 10_000.0
    }

    pub fn explain(&self) -> HitExplain {
        HitExplain {
            keyword: self.keyword.map(|(rank, score)| KeywordPart {
                rank: rank as i64,
                // NaN stands for a part ranked without a relevance to show.
                score: (!score.is_nan()).then_some(score),
            }),
            semantic: self.semantic.map(|(rank, n)| SemanticPart {
                rank: rank as i64,
                similarity: (n.similarity as f64 * 10_000.0).round() / 10_000.0,
                chunk: n.chunk,
            }),
            fused: (self.fused * 1_000_000.0).round() / 1_000_000.0,
        }
    }
}

/// Fuses `keyword` (keys with their 0..1 relevance, best first) and `semantic` (keys with their
/// nearest passage, best first); each part is cut to [`DEPTH`] first.
pub fn fuse<T: Eq + Hash + Clone>(keyword: &[(T, f64)], semantic: &[(T, Near)]) -> Vec<Fused<T>> {
    let mut by_key: HashMap<T, usize> = HashMap::new();
    let mut out: Vec<Fused<T>> = Vec::new();
    for (i, (key, score)) in keyword.iter().take(DEPTH).enumerate() {
        by_key.insert(key.clone(), out.len());
        out.push(Fused {
            key: key.clone(),
            keyword: Some((i + 1, *score)),
            semantic: None,
            fused: 1.0 / (K + (i + 1) as f64),
        });
    }
    for (i, (key, near)) in semantic.iter().take(DEPTH).enumerate() {
        let add = 1.0 / (K + (i + 1) as f64);
        match by_key.get(key) {
            Some(&at) => {
                out[at].semantic = Some((i + 1, *near));
                out[at].fused += add;
            }
            None => {
                by_key.insert(key.clone(), out.len());
                out.push(Fused {
                    key: key.clone(),
                    keyword: None,
                    semantic: Some((i + 1, *near)),
                    fused: add,
                });
            }
        }
    }
    out.sort_by(|a, b| {
        b.fused
            .total_cmp(&a.fused)
            .then(rank(a.keyword.map(|k| k.0)).cmp(&rank(b.keyword.map(|k| k.0))))
            .then(rank(a.semantic.map(|s| s.0)).cmp(&rank(b.semantic.map(|s| s.0))))
    });
    out
}

fn rank(r: Option<usize>) -> usize {
    r.unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(doc: i64) -> Near {
        Near {
            doc,
            chunk: 0,
            similarity: 0.5,
        }
    }

    #[test]
    fn a_hit_both_parts_found_goes_first_and_scores_one() {
        let fused = fuse(
            &[("a", 0.9), ("b", 0.8)],
            &[("b", near(2)), ("c", near(3)), ("a", near(1))],
        );
        let keys: Vec<&str> = fused.iter().map(|f| f.key).collect();
        // b: 1/62 + 1/61; a: 1/61 + 1/63; c: 1/62.
        assert_eq!(keys, ["b", "a", "c"]);
        assert!(fused[0].score(2) < 1.0 && fused[0].score(2) > 0.98);
        let e = fused[2].explain();
        assert!(e.keyword.is_none());
        assert_eq!(e.semantic.unwrap().rank, 2);
        // One part alone: its first hit scores 1.
        let alone = fuse::<&str>(&[], &[("x", near(9))]);
        assert_eq!(alone[0].score(1), 1.0);
    }
}
