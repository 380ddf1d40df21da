//! One source's vectors in memory, and the scan that searches them.
//!
//! Each passage's unit vector is kept as bytes (`i8`, scaled so its largest component is ±127)
//! with its scale: a quarter of the memory of `f32`, and the scan multiplies bytes. The
//! similarity of a query to a passage is the dot product of the two, rescaled: within about
//! 0.01 of the `f32` cosine, far finer than the gaps between ranks that matter.
//!
//! A search compares the query with every passage of the workspaces asked for, keeps each
//! item's best passage, and returns the best items above the similarity floor. Past
//! [`EXACT_UP_TO`] passages it first shortlists by the components' signs, a bit each, and
//! compares only the shortlist: at 100,000 memories the answer held 100% of the full
//! comparison's 10 nearest items and 99.9% of its 100 (`examples/vector_recall.rs`), in half
//! the time and an eighth of the bytes read.

use std::collections::HashMap;

/// A passage's vector as stored: bytes and the scale that turns them back into the unit vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub bytes: Vec<i8>,
}

impl Quantized {
    pub fn from_unit(v: &[f32]) -> Quantized {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        Quantized {
            scale,
            bytes: v.iter().map(|x| (x / scale).round() as i8).collect(),
        }
    }

    /// As stored in the vector file: the scale (4 bytes, little-endian), then the bytes.
    pub fn to_blob(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.bytes.len());
        out.extend_from_slice(&self.scale.to_le_bytes());
        out.extend(self.bytes.iter().map(|b| *b as u8));
        out
    }

    pub fn from_blob(blob: &[u8]) -> Option<Quantized> {
        let (head, rest) = blob.split_first_chunk::<4>()?;
        Some(Quantized {
            scale: f32::from_le_bytes(*head),
            bytes: rest.iter().map(|b| *b as i8).collect(),
        })
    }
}

#[inline(always)]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    // Written so the compiler vectorizes it: widening multiplies summed in i32 lanes. Inlined
    // into the scan, which is compiled for the processor's vector instructions (see `scan`).
    let mut acc = [0i32; 16];
    let (ca, ra) = a.as_chunks::<16>();
    let (cb, rb) = b.as_chunks::<16>();
    for (x, y) in ca.iter().zip(cb) {
        for i in 0..16 {
            acc[i] += x[i] as i32 * y[i] as i32;
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += *x as i32 * *y as i32;
    }
    sum
}

/// Rows one thread scans: a scan of more rows is shared between the threads of rayon's pool.
/// 32,768 passages of 384 bytes take about a millisecond.
const SCAN_PART: usize = 32_768;

/// Passages up to which a search compares every passage; past it, it shortlists by signs first
/// (see [`Vectors::nearest`]).
pub const EXACT_UP_TO: usize = 32_768;
/// Passages the shortlist keeps per item asked, and at least.
const SHORTLIST_PER_ITEM: usize = 20;
const SHORTLIST_MIN: usize = 2_000;

/// A vector's signs: bit `j % 64` of word `j / 64` is set when component `j` is positive.
fn signs(bytes: &[i8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks(64).map(|c| {
        c.iter()
            .enumerate()
            .fold(0u64, |w, (j, &b)| w | (u64::from(b > 0) << j))
    })
}

/// A passage found by a scan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    /// The item (its rowid in its table).
    pub doc: i64,
    /// Which of its passages matched best.
    pub chunk: i64,
    /// Cosine similarity to the query.
    pub similarity: f32,
}

/// One source's passages.
#[derive(Debug, Default)]
pub struct Vectors {
    dims: usize,
    /// Row `i` is `docs[i]`, `chunks[i]`, `spaces[i]`, `scales[i]`, `data[i*dims..]` and
    /// `signs[i*words..]`.
    docs: Vec<i64>,
    chunks: Vec<u16>,
    spaces: Vec<u32>,
    scales: Vec<f32>,
    data: Vec<i8>,
    /// Each row's signs, a bit a component (set when positive), `words` words a row: what a
    /// search over many passages shortlists by (see [`Vectors::nearest`]).
    signs: Vec<u64>,
    words: usize,
    /// Each item's rows.
    rows: HashMap<i64, Vec<u32>>,
    /// Workspace names, interned.
    space_ids: HashMap<String, u32>,
    /// Passages held (rows not freed).
    live: usize,
}

/// Rows freed by removals are marked with this document.
const FREE: i64 = i64::MIN;

impl Vectors {
    pub fn new(dims: usize) -> Vectors {
        Vectors {
            dims,
            words: dims.div_ceil(64),
            ..Default::default()
        }
    }

    /// Passages held (not counting freed rows).
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no passage is held.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Items held.
    pub fn items(&self) -> usize {
        self.rows.len()
    }

    /// Bytes the vectors take in memory.
    pub fn bytes(&self) -> usize {
        self.data.len() + self.signs.len() * 8 + self.docs.len() * (8 + 2 + 4 + 4)
    }

    fn space(&mut self, workspace: &str) -> u32 {
        let next = self.space_ids.len() as u32;
        *self.space_ids.entry(workspace.to_string()).or_insert(next)
    }

    /// Removes every passage of `doc`.
    pub fn remove(&mut self, doc: i64) {
        if let Some(rows) = self.rows.remove(&doc) {
            self.live -= rows.len();
            for r in rows {
                self.docs[r as usize] = FREE;
            }
        }
    }

    /// Adds a passage of `doc` (after [`Vectors::remove`] when it replaces the item's).
    pub fn add(&mut self, doc: i64, chunk: i64, workspace: &str, v: &Quantized) {
        if v.bytes.len() != self.dims {
            return;
        }
        let space = self.space(workspace);
        // Appended; freed rows go when they outnumber the live ones (see `compact`).
        let row = self.docs.len();
        self.docs.push(doc);
        self.chunks.push(chunk.clamp(0, u16::MAX as i64) as u16);
        self.spaces.push(space);
        self.scales.push(v.scale);
        self.data.extend_from_slice(&v.bytes);
        self.signs.extend(signs(&v.bytes));
        self.rows.entry(doc).or_default().push(row as u32);
        self.live += 1;
        if self.docs.len() > 1024 && self.docs.len() > 2 * self.len() {
            self.compact();
        }
    }

    /// Drops freed rows.
    fn compact(&mut self) {
        let dims = self.dims;
        let mut keep = 0;
        self.rows.clear();
        for i in 0..self.docs.len() {
            if self.docs[i] == FREE {
                continue;
            }
            self.docs[keep] = self.docs[i];
            self.chunks[keep] = self.chunks[i];
            self.spaces[keep] = self.spaces[i];
            self.scales[keep] = self.scales[i];
            self.data.copy_within(i * dims..(i + 1) * dims, keep * dims);
            let words = self.words;
            self.signs
                .copy_within(i * words..(i + 1) * words, keep * words);
            self.rows
                .entry(self.docs[keep])
                .or_default()
                .push(keep as u32);
            keep += 1;
        }
        self.docs.truncate(keep);
        self.chunks.truncate(keep);
        self.spaces.truncate(keep);
        self.scales.truncate(keep);
        self.data.truncate(keep * dims);
        self.signs.truncate(keep * self.words);
    }

    /// The passages of `spaces` (every workspace when `None`) at or above `floor`, as
    /// (similarity, row), among the `shortlist` whose signs differ least from the query's.
    fn shortlisted(
        &self,
        q: &Quantized,
        spaces: Option<&[u32]>,
        floor: f32,
        shortlist: usize,
    ) -> Vec<(f32, u32)> {
        let want: Vec<u64> = signs(&q.bytes).collect();
        let by_signs = fewest_differing_signs(self, &want, spaces, shortlist);
        let mut hits = Vec::with_capacity(by_signs.len());
        for (_, row) in by_signs {
            let i = row as usize;
            let sim = dot(&self.data[i * self.dims..(i + 1) * self.dims], &q.bytes) as f32
                * self.scales[i]
                * q.scale;
            if sim >= floor {
                hits.push((sim, row));
            }
        }
        hits
    }

    /// The passages among `rows` of `spaces` (every workspace when `None`) whose similarity to
    /// `q` is at least `floor`, as (similarity, row). Compiled for the vector instructions the
    /// processor has (AVX2 on most x86-64 machines), chosen when it runs: the build targets the
    /// baseline, whose byte products are several times slower.
    fn scan(
        &self,
        rows: std::ops::Range<usize>,
        q: &Quantized,
        spaces: Option<&[u32]>,
        floor: f32,
    ) -> Vec<(f32, u32)> {
        pulp::Arch::new().dispatch(
            #[inline(always)]
            || {
                let mut hits = Vec::new();
                for i in rows {
                    if self.docs[i] == FREE {
                        continue;
                    }
                    if let Some(s) = spaces
                        && !s.contains(&self.spaces[i])
                    {
                        continue;
                    }
                    let row = &self.data[i * self.dims..(i + 1) * self.dims];
                    let sim = dot(row, &q.bytes) as f32 * self.scales[i] * q.scale;
                    if sim >= floor {
                        hits.push((sim, i as u32));
                    }
                }
                hits
            },
        )
    }

    /// The `k` items nearest `query` (a unit vector) with a similarity of at least `floor`,
    /// among the passages of `workspaces` (every workspace when `None`), best first; ties go to
    /// the newer item (the higher rowid).
    ///
    /// Up to [`EXACT_UP_TO`] passages every passage is compared. Past it a search first
    /// shortlists the passages whose signs (a bit a component) differ least from the query's,
    /// `SHORTLIST_PER_ITEM` a item asked and at least `SHORTLIST_MIN`, and compares those: an
    /// eighth of the bytes read, and the shortlist holds nearly every passage the full
    /// comparison would find (`examples/vector_recall.rs` measures how many).
    pub fn nearest(
        &self,
        query: &[f32],
        workspaces: Option<&[String]>,
        k: usize,
        floor: f32,
    ) -> Vec<Near> {
        self.nearest_within(query, workspaces, k, floor, Some(EXACT_UP_TO))
    }

    /// [`Vectors::nearest`] comparing every passage, however many (what it approximates).
    pub fn nearest_exact(
        &self,
        query: &[f32],
        workspaces: Option<&[String]>,
        k: usize,
        floor: f32,
    ) -> Vec<Near> {
        self.nearest_within(query, workspaces, k, floor, None)
    }

    /// [`Vectors::nearest`], shortlisting by signs past `exact_above` passages (never when
    /// `None`).
    fn nearest_within(
        &self,
        query: &[f32],
        workspaces: Option<&[String]>,
        k: usize,
        floor: f32,
        exact_above: Option<usize>,
    ) -> Vec<Near> {
        if query.len() != self.dims || k == 0 {
            return Vec::new();
        }
        let spaces: Option<Vec<u32>> = workspaces.map(|names| {
            names
                .iter()
                .filter_map(|n| self.space_ids.get(n).copied())
                .collect()
        });
        if spaces.as_ref().is_some_and(Vec::is_empty) {
            return Vec::new();
        }
        let q = Quantized::from_unit(query);
        // Every passage at or above the floor, as (similarity, row).
        let rows = self.docs.len();
        let spaces = spaces.as_deref();
        let shortlist = (k * SHORTLIST_PER_ITEM).max(SHORTLIST_MIN);
        let mut hits: Vec<(f32, u32)> =
            if exact_above.is_some_and(|n| rows > n) && shortlist < rows / 4 {
                self.shortlisted(&q, spaces, floor, shortlist)
            } else if rows <= SCAN_PART {
                self.scan(0..rows, &q, spaces, floor)
            } else {
                use rayon::prelude::*;
                (0..rows.div_ceil(SCAN_PART))
                    .into_par_iter()
                    .map(|p| {
                        self.scan(
                            p * SCAN_PART..((p + 1) * SCAN_PART).min(rows),
                            &q,
                            spaces,
                            floor,
                        )
                    })
                    .flatten_iter()
                    .collect()
            };
        // Best first; ties go to the newer item, then to the item's earlier passage.
        let order = |a: &(f32, u32), b: &(f32, u32)| {
            b.0.total_cmp(&a.0)
                .then(self.docs[b.1 as usize].cmp(&self.docs[a.1 as usize]))
                .then(a.1.cmp(&b.1))
        };
        // An item's best passage comes first among its passages in that order, so the first
        // `k` items of any prefix of the order that holds `k` items are the answer: sort a
        // prefix only (a search wants a few items of many passages), widened until it holds
        // `k` items or every passage.
        let mut take = k.min(hits.len());
        loop {
            if take < hits.len() {
                hits.select_nth_unstable_by(take, order);
            }
            let prefix = &mut hits[..take];
            prefix.sort_unstable_by(order);
            let mut seen = std::collections::HashSet::with_capacity(take);
            let found: Vec<Near> = prefix
                .iter()
                .filter(|(_, row)| seen.insert(self.docs[*row as usize]))
                .take(k)
                .map(|&(similarity, row)| Near {
                    doc: self.docs[row as usize],
                    chunk: self.chunks[row as usize] as i64,
                    similarity,
                })
                .collect();
            if found.len() == k || take == hits.len() {
                return found;
            }
            take = (take * 2).min(hits.len());
        }
    }
}

/// (signs differing from `want`, row) for the `shortlist` live rows of `spaces` whose signs
/// differ least (more when rows tie at the last count kept), with the processor's population
/// count where it has one (chosen when it runs; the baseline counts bits by arithmetic,
/// several times slower). One pass over the signs counts each row's differing signs and the
/// rows at each count, which sets the largest count kept; a pass over the counts collects the
/// rows up to it.
fn fewest_differing_signs(
    v: &Vectors,
    want: &[u64],
    spaces: Option<&[u32]>,
    shortlist: usize,
) -> Vec<(u32, u32)> {
    #[inline(always)]
    fn passes(
        v: &Vectors,
        want: &[u64],
        spaces: Option<&[u32]>,
        shortlist: usize,
    ) -> Vec<(u32, u32)> {
        // Written without closures, which would be compiled apart from the caller's
        // instructions.
        let mut counts = vec![u32::MAX; v.docs.len()];
        let mut at_count = vec![0usize; v.words * 64 + 1];
        for (i, row) in v.signs.chunks_exact(v.words).enumerate() {
            if v.docs[i] == FREE {
                continue;
            }
            if let Some(s) = spaces
                && !s.contains(&v.spaces[i])
            {
                continue;
            }
            let mut d = 0;
            for (a, b) in row.iter().zip(want) {
                d += (a ^ b).count_ones();
            }
            counts[i] = d;
            at_count[d as usize] += 1;
        }
        let mut upto = 0;
        let mut kept = 0;
        for (d, n) in at_count.iter().enumerate() {
            upto = d as u32;
            kept += n;
            if kept >= shortlist {
                break;
            }
        }
        let mut out = Vec::with_capacity(kept);
        for (i, &d) in counts.iter().enumerate() {
            if d <= upto {
                out.push((d, i as u32));
            }
        }
        out
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        #[target_feature(enable = "popcnt")]
        fn with_popcnt(
            v: &Vectors,
            want: &[u64],
            spaces: Option<&[u32]>,
            shortlist: usize,
        ) -> Vec<(u32, u32)> {
            passes(v, want, spaces, shortlist)
        }
        #[allow(unsafe_code)]
        // SAFETY: the processor has the instruction (checked just above).
        return unsafe { with_popcnt(v, want, spaces, shortlist) };
    }
    passes(v, want, spaces, shortlist)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn quantized_similarity_is_close_to_the_cosine() {
        let a = unit(
            &(0..384)
                .map(|i| ((i * 7) % 13) as f32 - 6.0)
                .collect::<Vec<_>>(),
        );
        let b = unit(
            &(0..384)
                .map(|i| ((i * 5) % 11) as f32 - 5.0)
                .collect::<Vec<_>>(),
        );
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let qa = Quantized::from_unit(&a);
        let qb = Quantized::from_unit(&b);
        let approx = dot(&qa.bytes, &qb.bytes) as f32 * qa.scale * qb.scale;
        assert!((exact - approx).abs() < 0.01, "{exact} vs {approx}");
        assert_eq!(Quantized::from_blob(&qa.to_blob()), Some(qa));
    }

    #[test]
    fn nearest_keeps_each_items_best_passage_within_the_workspaces() {
        let mut v = Vectors::new(3);
        let x = Quantized::from_unit(&unit(&[1.0, 0.0, 0.0]));
        let y = Quantized::from_unit(&unit(&[0.0, 1.0, 0.0]));
        let xy = Quantized::from_unit(&unit(&[1.0, 1.0, 0.0]));
        v.add(1, 0, "a", &y);
        v.add(1, 1, "a", &x);
        v.add(2, 0, "a", &xy);
        v.add(3, 0, "b", &x);
        let q = unit(&[1.0, 0.0, 0.0]);
        let found = v.nearest(&q, Some(&["a".to_string()]), 10, 0.5);
        assert_eq!(
            found.iter().map(|n| (n.doc, n.chunk)).collect::<Vec<_>>(),
            [(1, 1), (2, 0)]
        );
        // Every workspace; the tie between 1 and 3 goes to the newer.
        let all = v.nearest(&q, None, 10, 0.5);
        assert_eq!(all.iter().map(|n| n.doc).collect::<Vec<_>>(), [3, 1, 2]);
        v.remove(1);
        let after = v.nearest(&q, None, 10, 0.5);
        assert_eq!(after.iter().map(|n| n.doc).collect::<Vec<_>>(), [3, 2]);
        assert_eq!(v.items(), 2);
    }

    /// Each item's best passage, best items first (ties to the newer item, then the item's
    /// earlier passage), the first `k`: what a scan must return, computed the plain way.
    fn reference(v: &Vectors, query: &[f32], k: usize, floor: f32) -> Vec<Near> {
        let q = Quantized::from_unit(query);
        let mut best: HashMap<i64, Near> = HashMap::new();
        for (i, doc) in v.docs.iter().enumerate() {
            if *doc == FREE {
                continue;
            }
            let row = &v.data[i * v.dims..(i + 1) * v.dims];
            let sim = dot(row, &q.bytes) as f32 * v.scales[i] * q.scale;
            if sim < floor {
                continue;
            }
            let near = Near {
                doc: *doc,
                chunk: v.chunks[i] as i64,
                similarity: sim,
            };
            let b = best.entry(*doc).or_insert(near);
            if sim > b.similarity {
                *b = near;
            }
        }
        let mut all: Vec<Near> = best.into_values().collect();
        all.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then(b.doc.cmp(&a.doc))
        });
        all.truncate(k);
        all
    }

    /// A deterministic generator (xorshift) of `u64`s from `seed`.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn the_scan_finds_what_ranking_every_item_finds() {
        let mut bits = xorshift(0x9E37_79B9_7F4A_7C15);
        // Few distinct values, so that similarities tie often.
        let mut next = move || (bits() % 7) as f32 - 3.0;
        let dims = 8;
        let mut v = Vectors::new(dims);
        for doc in 1..=300i64 {
            // Up to five passages an item; some items replaced, some removed.
            for chunk in 0..(doc % 5 + 1) {
                let x: Vec<f32> = (0..dims).map(|_| next()).collect();
                if x.iter().all(|c| *c == 0.0) {
                    continue;
                }
                v.add(doc, chunk, "a", &Quantized::from_unit(&unit(&x)));
            }
            if doc % 17 == 0 {
                v.remove(doc - 3);
            }
        }
        for _ in 0..40 {
            let q: Vec<f32> = (0..dims).map(|_| next()).collect();
            if q.iter().all(|c| *c == 0.0) {
                continue;
            }
            let q = unit(&q);
            for k in [1, 5, 60, 1000] {
                for floor in [-1.0, 0.2] {
                    assert_eq!(v.nearest(&q, None, k, floor), reference(&v, &q, k, floor));
                }
            }
        }
    }

    #[test]
    fn a_scan_shared_between_threads_finds_what_ranking_every_item_finds() {
        let mut bits = xorshift(0x2545_F491_4F6C_DD1D);
        let mut next = move || (bits() % 11) as f32 - 5.0;
        let dims = 8;
        let mut v = Vectors::new(dims);
        let mut doc = 0i64;
        // More rows than one thread scans, some freed, in two workspaces.
        while v.docs.len() < 3 * SCAN_PART + 100 {
            doc += 1;
            let x: Vec<f32> = (0..dims).map(|_| next() + 0.5).collect();
            let space = if doc % 3 == 0 { "b" } else { "a" };
            v.add(doc, doc % 2, space, &Quantized::from_unit(&unit(&x)));
            if doc % 101 == 0 {
                v.remove(doc - 50);
            }
        }
        let live = v.docs.iter().filter(|d| **d != FREE).count();
        assert_eq!(v.len(), live, "passages held, counted as they come and go");
        for _ in 0..5 {
            let q = unit(&(0..dims).map(|_| next() + 0.5).collect::<Vec<_>>());
            for k in [1, 100, 5000] {
                assert_eq!(v.nearest_exact(&q, None, k, 0.2), reference(&v, &q, k, 0.2));
            }
            let only_b: Vec<i64> = v
                .nearest_exact(&q, Some(&["b".to_string()]), 100, 0.2)
                .iter()
                .map(|n| n.doc)
                .collect();
            assert_eq!(only_b.len(), 100);
            assert!(only_b.iter().all(|d| d % 3 == 0), "{only_b:?}");
        }
    }

    #[test]
    fn a_search_over_many_passages_shortlists_by_signs_and_keeps_the_nearest() {
        let mut bits = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut next = move || (bits() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let dims = 96;
        let mut v = Vectors::new(dims);
        let mut stored = Vec::new();
        for doc in 1..=(EXACT_UP_TO as i64 + 8_000) {
            let x = unit(&(0..dims).map(|_| next()).collect::<Vec<_>>());
            let space = if doc % 4 == 0 { "b" } else { "a" };
            v.add(doc, 0, space, &Quantized::from_unit(&x));
            if doc % 97 == 0 {
                v.remove(doc - 10);
            }
            stored.push((doc, x));
        }
        assert!(v.len() > EXACT_UP_TO);
        for (doc, x) in stored.iter().step_by(4_001) {
            if !v.rows.contains_key(doc) {
                continue;
            }
            // A question near a stored passage: that passage is the nearest, shortlisted.
            let q = unit(&x.iter().map(|c| c + 0.05 * next()).collect::<Vec<_>>());
            let exact = v.nearest_exact(&q, None, 10, 0.0);
            let found = v.nearest(&q, None, 10, 0.0);
            assert_eq!(found[0].doc, *doc);
            assert_eq!(exact[0], found[0]);
            // What it finds is ranked as the full comparison ranks it.
            assert_eq!(found.len(), 10);
            let all = v.nearest_exact(&q, None, v.items(), 0.0);
            for n in &found {
                let e = all
                    .iter()
                    .find(|e| e.doc == n.doc)
                    .expect("found exactly too");
                assert_eq!(e.similarity, n.similarity);
            }
            assert!(found.windows(2).all(|w| w[0].similarity >= w[1].similarity));
            // Workspaces are kept to.
            let only_b = v.nearest(&q, Some(&["b".to_string()]), 10, 0.0);
            assert!(only_b.iter().all(|n| n.doc % 4 == 0), "{only_b:?}");
            // Asked for many, it compares every passage.
            let k = v.docs.len() / (4 * SHORTLIST_PER_ITEM) + 1;
            assert_eq!(
                v.nearest(&q, None, k, 0.0),
                v.nearest_exact(&q, None, k, 0.0)
            );
        }
    }
}
