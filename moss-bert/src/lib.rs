//! A BERT sentence encoder, as sentence-transformers models store it (`config.json` and
//! `model.safetensors` in the Hugging Face layout), run on the CPU over plain `f32` buffers.
//!
//! The texts of one run are not padded to a common length: their tokens are laid end to end,
//! the dense layers run over all of them at once and attention runs within each text. The dense
//! layers are most of the work. Over many tokens (an indexer's step) they are `gemm`'s matrix
//! products; over a few (a question) they are dot products of each weight row, read in place,
//! with the tokens held in cache: a product would first copy the whole weight matrix into its
//! own layout, which for a question of ten tokens costs more than the arithmetic.
//!
//! The dense layers' weights are kept as 16-bit floats, and each is widened as it is read. A
//! question's embedding reads every weight once: at 32 bits, all-MiniLM-L6-v2's are 42 MB,
//! more than the last cache of the machine measured (32 MB), at 16 bits 21 MB, and a question
//! took 5.8-6.4 ms instead of 7.5-8 (the daemon's `examples/embed_speed.rs query`). Vectors
//! differ from those of 32-bit weights by less than 1e-4 in each component (a cosine above
//! 0.99999 between the two), far below what changes an order.

use half::f16;
use half::slice::HalfFloatSliceExt;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

/// Tokens up to which a dense layer is computed as dot products of its weight rows rather than
/// as a matrix product.
const FEW_TOKENS: usize = 32;

/// Texts up to this many tokens attend by plain loops; longer ones by matrix products.
const SHORT_TEXT: usize = 32;

/// The fields of `config.json` the encoder reads.
#[derive(Debug, Deserialize)]
pub struct Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_positions")]
    pub max_position_embeddings: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    #[serde(default = "default_position_kind")]
    pub position_embedding_type: String,
    #[serde(default)]
    pub model_type: Option<String>,
}

fn default_eps() -> f64 {
    1e-12
}
fn default_positions() -> usize {
    512
}
fn default_act() -> String {
    "gelu".into()
}
fn default_position_kind() -> String {
    "absolute".into()
}

#[derive(Debug, Clone, Copy)]
enum Activation {
    /// GELU with the error function, as BERT was trained.
    Gelu,
    /// GELU's tanh approximation.
    GeluTanh,
}

/// `y = x·Wᵀ + b`, with `W` as stored: `out` rows of `inp` weights.
struct Dense {
    w: Vec<f16>,
    b: Vec<f32>,
    out: usize,
    inp: usize,
}

struct Norm {
    gain: Vec<f32>,
    bias: Vec<f32>,
}

struct Layer {
    /// Query, key and value in one: `3 × hidden` output rows.
    qkv: Dense,
    attn_out: Dense,
    attn_norm: Norm,
    up: Dense,
    down: Dense,
    out_norm: Norm,
}

/// A loaded encoder.
pub struct Bert {
    words: Vec<f32>,
    vocab: usize,
    positions: Vec<f32>,
    max_positions: usize,
    /// The embedding of token type 0, which every token of a sentence has.
    token_type: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    eps: f32,
    act: Activation,
}

/// The tensors of `model.safetensors`, found with or without the model's name in front.
struct Weights<'a> {
    st: SafeTensors<'a>,
    prefix: String,
}

impl Weights<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let t = self
            .st
            .tensor(&full)
            .map_err(|_| format!("model.safetensors has no tensor {full}"))?;
        if t.shape() != shape {
            return Err(format!(
                "tensor {full} has shape {:?}, config.json implies {shape:?}",
                t.shape()
            ));
        }
        let bytes = t.data();
        let two = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]);
        Ok(match t.dtype() {
            Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|b| f16::from_bits(two(b)).to_f32())
                .collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| half::bf16::from_bits(two(b)).to_f32())
                .collect(),
            other => return Err(format!("tensor {full} is {other:?}, not a float type")),
        })
    }

    fn dense(&self, name: &str, out: usize, inp: usize) -> Result<Dense, String> {
        Ok(Dense {
            w: self
                .get(&format!("{name}.weight"), &[out, inp])?
                .into_iter()
                .map(f16::from_f32)
                .collect(),
            b: self.get(&format!("{name}.bias"), &[out])?,
            out,
            inp,
        })
    }

    fn norm(&self, name: &str, n: usize) -> Result<Norm, String> {
        Ok(Norm {
            gain: self.get(&format!("{name}.weight"), &[n])?,
            bias: self.get(&format!("{name}.bias"), &[n])?,
        })
    }
}

impl Bert {
    /// The encoder `config` describes, with its weights from the bytes of `model.safetensors`.
    pub fn load(config: &Config, safetensors: &[u8]) -> Result<Bert, String> {
        let act = match config.hidden_act.as_str() {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_approximate" => Activation::GeluTanh,
            other => {
                return Err(format!(
                    "config.json: hidden_act {other:?} is not supported (gelu, gelu_new, \
                     gelu_pytorch_tanh)"
                ));
            }
        };
        if config.position_embedding_type != "absolute" {
            return Err(format!(
                "config.json: position_embedding_type {:?} is not supported (absolute)",
                config.position_embedding_type
            ));
        }
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(format!(
                "config.json: hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            ));
        }
        let st = SafeTensors::deserialize(safetensors).map_err(|e| e.to_string())?;
        let mut prefixes = vec![String::new(), "bert.".to_string()];
        if let Some(t) = &config.model_type {
            prefixes.push(format!("{t}."));
        }
        let prefix = prefixes
            .into_iter()
            .find(|p| {
                st.tensor(&format!("{p}embeddings.word_embeddings.weight"))
                    .is_ok()
            })
            .ok_or("model.safetensors has no tensor embeddings.word_embeddings.weight")?;
        let w = Weights { st, prefix };
        let vocab =
            w.st.tensor(&format!("{}embeddings.word_embeddings.weight", w.prefix))
                .map(|t| t.shape().first().copied().unwrap_or(0))
                .map_err(|e| e.to_string())?;
        let words = w.get("embeddings.word_embeddings.weight", &[vocab, hidden])?;
        let max_positions = config.max_position_embeddings;
        let positions = w.get(
            "embeddings.position_embeddings.weight",
            &[max_positions, hidden],
        )?;
        let types =
            w.st.tensor(&format!(
                "{}embeddings.token_type_embeddings.weight",
                w.prefix
            ))
            .map(|t| t.shape().first().copied().unwrap_or(0))
            .map_err(|_| "model.safetensors has no tensor embeddings.token_type_embeddings")?;
        let mut token_type = w.get("embeddings.token_type_embeddings.weight", &[types, hidden])?;
        token_type.truncate(hidden);
        let embed_norm = w.norm("embeddings.LayerNorm", hidden)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let at = |s: &str| format!("encoder.layer.{i}.{s}");
            let (q, k, v) = (
                w.dense(&at("attention.self.query"), hidden, hidden)?,
                w.dense(&at("attention.self.key"), hidden, hidden)?,
                w.dense(&at("attention.self.value"), hidden, hidden)?,
            );
            let qkv = Dense {
                w: [q.w, k.w, v.w].concat(),
                b: [q.b, k.b, v.b].concat(),
                out: 3 * hidden,
                inp: hidden,
            };
            layers.push(Layer {
                qkv,
                attn_out: w.dense(&at("attention.output.dense"), hidden, hidden)?,
                attn_norm: w.norm(&at("attention.output.LayerNorm"), hidden)?,
                up: w.dense(&at("intermediate.dense"), config.intermediate_size, hidden)?,
                down: w.dense(&at("output.dense"), hidden, config.intermediate_size)?,
                out_norm: w.norm(&at("output.LayerNorm"), hidden)?,
            });
        }
        Ok(Bert {
            words,
            vocab,
            positions,
            max_positions,
            token_type,
            embed_norm,
            layers,
            hidden,
            heads,
            eps: config.layer_norm_eps as f32,
            act,
        })
    }

    /// The vectors' length.
    pub fn dims(&self) -> usize {
        self.hidden
    }

    /// One vector per token sequence: the mean of its last layer's outputs, scaled to unit
    /// length. Sequences longer than the model's positions are cut to them.
    pub fn embed(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        let h = self.hidden;
        let spans: Vec<(usize, usize)> = texts
            .iter()
            .scan(0, |at, t| {
                let n = t.len().min(self.max_positions);
                let span = (*at, n);
                *at += n;
                Some(span)
            })
            .collect();
        let tokens: usize = spans.iter().map(|s| s.1).sum();
        let mut x = Vec::with_capacity(tokens * h);
        for (t, &(_, n)) in texts.iter().zip(&spans) {
            for (pos, &id) in t[..n].iter().enumerate() {
                let id = id as usize;
                if id >= self.vocab {
                    return Err(format!(
                        "token {id} is outside the model's vocabulary of {}",
                        self.vocab
                    ));
                }
                let word = &self.words[id * h..(id + 1) * h];
                let place = &self.positions[pos * h..(pos + 1) * h];
                x.extend(
                    word.iter()
                        .zip(place)
                        .zip(&self.token_type)
                        .map(|((a, b), c)| a + b + c),
                );
            }
        }
        self.embed_norm.apply(&mut x, h, self.eps);
        for layer in &self.layers {
            x = self.layer(layer, x, tokens, &spans);
        }
        Ok(spans
            .iter()
            .map(|&(at, n)| {
                let mut mean = vec![0f32; h];
                for row in x[at * h..(at + n) * h].chunks_exact(h) {
                    for (m, v) in mean.iter_mut().zip(row) {
                        *m += v;
                    }
                }
                let count = n.max(1) as f32;
                mean.iter_mut().for_each(|m| *m /= count);
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect())
    }

    fn layer(&self, l: &Layer, x: Vec<f32>, tokens: usize, spans: &[(usize, usize)]) -> Vec<f32> {
        let h = self.hidden;
        let qkv = l.qkv.apply(&x, tokens);
        let context = self.attention(&qkv, tokens, spans);
        let mut attended = l.attn_out.apply(&context, tokens);
        attended.iter_mut().zip(&x).for_each(|(a, b)| *a += b);
        l.attn_norm.apply(&mut attended, h, self.eps);
        let mut up = l.up.apply(&attended, tokens);
        match self.act {
            Activation::Gelu => up
                .iter_mut()
                .for_each(|v| *v = 0.5 * *v * (1.0 + erf(*v / std::f32::consts::SQRT_2))),
            Activation::GeluTanh => up.iter_mut().for_each(|v| {
                let c = (2.0 / std::f32::consts::PI).sqrt();
                *v = 0.5 * *v * (1.0 + (c * (*v + 0.044715 * *v * *v * *v)).tanh());
            }),
        }
        let mut out = l.down.apply(&up, tokens);
        out.iter_mut().zip(&attended).for_each(|(a, b)| *a += b);
        l.out_norm.apply(&mut out, h, self.eps);
        out
    }

    /// Each head's attention within each text: `tokens × hidden` context vectors.
    fn attention(&self, qkv: &[f32], tokens: usize, spans: &[(usize, usize)]) -> Vec<f32> {
        use rayon::prelude::*;
        let h = self.hidden;
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let jobs: Vec<(usize, usize, usize)> = spans
            .iter()
            .filter(|s| s.1 > 0)
            .flat_map(|&(at, n)| (0..self.heads).map(move |head| (at, n, head)))
            .collect();
        let one = |&(at, n, head): &(usize, usize, usize)| -> Vec<f32> {
            head_attention(qkv, h, at, n, head * d, d, scale)
        };
        let long = spans.iter().any(|s| s.1 > SHORT_TEXT);
        let parts: Vec<Vec<f32>> = if long && rayon::current_num_threads() > 1 {
            jobs.par_iter().map(one).collect()
        } else {
            jobs.iter().map(one).collect()
        };
        let mut context = vec![0f32; tokens * h];
        for (&(at, _, head), part) in jobs.iter().zip(parts) {
            for (i, row) in part.chunks_exact(d).enumerate() {
                let to = (at + i) * h + head * d;
                context[to..to + d].copy_from_slice(row);
            }
        }
        context
    }
}

/// The error function, within 1.5e-7 of it (Abramowitz and Stegun, 7.1.26): about half the
/// time of the library's, and the activation takes it for every value of the widest layer.
fn erf(x: f32) -> f32 {
    let a = f64::from(x.abs());
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = (1.0 - poly * (-a * a).exp()) as f32;
    if x < 0.0 { -y } else { y }
}

/// One head's attention over the `n` tokens from `at`: `n × d` context values. `qkv` holds each
/// token's query, key and value (`3 × h` values a token); the head's part of each starts `col`
/// values in.
fn head_attention(
    qkv: &[f32],
    h: usize,
    at: usize,
    n: usize,
    col: usize,
    d: usize,
    scale: f32,
) -> Vec<f32> {
    let stride = 3 * h;
    let mut scores = vec![0f32; n * n];
    let mut out = vec![0f32; n * d];
    if n <= SHORT_TEXT {
        for i in 0..n {
            let q = &qkv[(at + i) * stride + col..][..d];
            for j in 0..n {
                let k = &qkv[(at + j) * stride + h + col..][..d];
                scores[i * n + j] = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
            }
        }
    } else {
        // scores = scale · Q·Kᵀ: the head's queries and keys are `d` columns of the tokens' rows.
        product(
            Mat::new(&mut scores, 0, n, n, n),
            Mat::new(qkv, at * stride + col, n, d, stride),
            Mat::new(qkv, at * stride + h + col, n, d, stride).transposed(),
            scale,
            false,
            gemm::Parallelism::None,
        );
    }
    for row in scores.chunks_exact_mut(n) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum += *v;
        }
        row.iter_mut().for_each(|v| *v /= sum);
    }
    if n <= SHORT_TEXT {
        for i in 0..n {
            let o = &mut out[i * d..(i + 1) * d];
            for j in 0..n {
                let p = scores[i * n + j];
                let v = &qkv[(at + j) * stride + 2 * h + col..][..d];
                o.iter_mut().zip(v).for_each(|(o, v)| *o += p * v);
            }
        }
    } else {
        // out = P·V.
        product(
            Mat::new(&mut out, 0, n, d, d),
            Mat::new(&scores, 0, n, n, n),
            Mat::new(qkv, at * stride + 2 * h + col, n, d, stride),
            1.0,
            false,
            gemm::Parallelism::None,
        );
    }
    out
}

impl Norm {
    /// Normalizes each row of `n` values of `x` in place.
    fn apply(&self, x: &mut [f32], n: usize, eps: f32) {
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gain).zip(&self.bias) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

impl Dense {
    /// The layer over `tokens` rows of `x`.
    fn apply(&self, x: &[f32], tokens: usize) -> Vec<f32> {
        let mut y = Vec::with_capacity(tokens * self.out);
        for _ in 0..tokens {
            y.extend_from_slice(&self.b);
        }
        if tokens <= FEW_TOKENS && weight_rows_fit() {
            self.add_by_rows(x, tokens, &mut y);
        } else {
            let threads = rayon::current_num_threads();
            let parallelism = if threads > 1 {
                gemm::Parallelism::Rayon(threads)
            } else {
                gemm::Parallelism::None
            };
            // y += x·Wᵀ, the weights widened once for all the tokens and read as their
            // transpose.
            WIDE.with_borrow_mut(|wide| {
                wide.resize(self.w.len(), 0.0);
                self.w.convert_to_f32_slice(wide);
                product(
                    Mat::new(&mut y, 0, tokens, self.out, self.out),
                    Mat::new(x, 0, tokens, self.inp, self.inp),
                    Mat::new(wide.as_slice(), 0, self.out, self.inp, self.inp).transposed(),
                    1.0,
                    true,
                    parallelism,
                );
            });
        }
        y
    }

    /// Adds `x·Wᵀ` to `y` a weight row at a time, each row read once for every token, on the
    /// calling thread: a question's embedding usually runs beside its search by words, which
    /// has the other core, and several questions at once each have a thread of their own.
    fn add_by_rows(&self, x: &[f32], tokens: usize, y: &mut [f32]) {
        let mut by_row = vec![0f32; self.out * tokens];
        weight_rows(&self.w, self.inp, x, tokens, &mut by_row);
        for (t, row) in y.chunks_exact_mut(self.out).enumerate() {
            for (o, v) in row.iter_mut().enumerate() {
                *v += by_row[o * tokens + t];
            }
        }
    }
}

/// A matrix inside a slice: element (r, c) at `at + r·row + c·col`.
struct Mat<S> {
    data: S,
    at: usize,
    rows: usize,
    cols: usize,
    row: usize,
    col: usize,
}

impl<S: AsRef<[f32]>> Mat<S> {
    /// `rows × cols` row-major from `at`, rows `row` values apart.
    fn new(data: S, at: usize, rows: usize, cols: usize, row: usize) -> Mat<S> {
        Mat {
            data,
            at,
            rows,
            cols,
            row,
            col: 1,
        }
    }

    fn transposed(self) -> Mat<S> {
        Mat {
            rows: self.cols,
            cols: self.rows,
            row: self.col,
            col: self.row,
            ..self
        }
    }

    /// Whether every element lies inside the slice.
    fn fits(&self) -> bool {
        let len = self.data.as_ref().len();
        self.rows == 0
            || self.cols == 0
            || self.at + (self.rows - 1) * self.row + (self.cols - 1) * self.col < len
    }
}

/// `dst = (accumulate ? dst : 0) + scale · a·b`, by `gemm`.
///
/// # Panics
///
/// When the shapes do not match or a matrix does not lie inside its slice.
#[allow(unsafe_code)]
fn product(
    dst: Mat<&mut Vec<f32>>,
    a: Mat<&[f32]>,
    b: Mat<&[f32]>,
    scale: f32,
    accumulate: bool,
    parallelism: gemm::Parallelism,
) {
    assert!(
        a.rows == dst.rows && b.cols == dst.cols && a.cols == b.rows,
        "shapes"
    );
    assert!(
        Mat::new(dst.data.as_slice(), dst.at, dst.rows, dst.cols, dst.row).fits()
            && a.fits()
            && b.fits(),
        "a matrix outside its slice"
    );
    let (m, n, k) = (dst.rows, dst.cols, a.cols);
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the three matrices lie inside their slices (checked above), `dst` is borrowed
    // mutably and apart from `a` and `b`, and the shapes agree.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.data.as_mut_ptr().add(dst.at),
            dst.col as isize,
            dst.row as isize,
            accumulate,
            a.data.as_ptr().add(a.at),
            a.col as isize,
            a.row as isize,
            b.data.as_ptr().add(b.at),
            b.col as isize,
            b.row as isize,
            if accumulate { 1.0 } else { 0.0 },
            scale,
            false,
            false,
            false,
            parallelism,
        );
    }
}

thread_local! {
    /// A dense layer's weights widened to 32 bits for a matrix product, kept between layers.
    static WIDE: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether the processor has the instructions [`weight_rows`] is compiled for.
fn weight_rows_fit() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `out[o·tokens + t]` = the dot product of weight row `o` (of `inp` values) with token `t` of
/// `x`, with AVX2's fused multiply-adds and F16C's widening. Only called when
/// [`weight_rows_fit`].
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn weight_rows(w: &[f16], inp: usize, x: &[f32], tokens: usize, out: &mut [f32]) {
    assert!(weight_rows_fit(), "weight_rows needs AVX2, FMA and F16C");
    assert!(inp > 0 && tokens * inp <= x.len() && w.len() / inp * tokens <= out.len());
    // SAFETY: the processor has AVX2, FMA and F16C (asserted above).
    unsafe { weight_rows_avx2(w, inp, x, tokens, out) }
}

#[cfg(not(target_arch = "x86_64"))]
fn weight_rows(_: &[f16], _: usize, _: &[f32], _: usize, _: &mut [f32]) {
    unreachable!("weight_rows is only called where weight_rows_fit")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn weight_rows_avx2(w: &[f16], inp: usize, x: &[f32], tokens: usize, out: &mut [f32]) {
    let rows = w.len() / inp;
    let token = |t: usize| &x[t * inp..(t + 1) * inp];
    let weights = |o: usize| &w[o * inp..(o + 1) * inp];
    // Two weight rows by up to four tokens at a time.
    let mut o = 0;
    while o < rows {
        let pair = o + 1 < rows;
        let mut t = 0;
        while t < tokens {
            let n = (tokens - t).min(4);
            macro_rules! block {
                ($w:literal, $t:literal) => {{
                    let ws: [&[f16]; $w] = std::array::from_fn(|i| weights(o + i));
                    let xs: [&[f32]; $t] = std::array::from_fn(|i| token(t + i));
                    let got = dots_avx2::<$w, $t>(ws, xs);
                    for (i, row) in got.iter().enumerate() {
                        let at = (o + i) * tokens + t;
                        out[at..at + $t].copy_from_slice(row);
                    }
                }};
            }
            match (pair, n) {
                (true, 4) => block!(2, 4),
                (true, 3) => block!(2, 3),
                (true, 2) => block!(2, 2),
                (true, _) => block!(2, 1),
                (false, 4) => block!(1, 4),
                (false, 3) => block!(1, 3),
                (false, 2) => block!(1, 2),
                (false, _) => block!(1, 1),
            }
            t += n;
        }
        o += if pair { 2 } else { 1 };
    }
}

/// The dot products of `W` weight rows with `T` token rows, all as long: each weight and token
/// value is read once for the whole block, eight lanes a register, `W × T` independent sums so
/// that consecutive multiply-adds do not wait on each other. (`_mm_loadu_si128` reads
/// unaligned, and an `f16` is two bytes, so eight are one 128-bit load.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
#[allow(unsafe_code)]
fn dots_avx2<const W: usize, const T: usize>(w: [&[f16]; W], x: [&[f32]; T]) -> [[f32; T]; W] {
    use std::arch::x86_64::{
        __m128i, __m256, _mm_loadu_si128, _mm256_cvtph_ps, _mm256_fmadd_ps, _mm256_loadu_ps,
        _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let n = w[0].len();
    assert!(
        w.iter().all(|w| w.len() == n) && x.iter().all(|x| x.len() == n),
        "rows of one length"
    );
    let whole = n / 8 * 8;
    let mut acc: [[__m256; T]; W] = [[_mm256_setzero_ps(); T]; W];
    let mut i = 0;
    while i < whole {
        // SAFETY: `i + 8 <= whole <= n`, and every row holds `n` values.
        unsafe {
            let ws: [__m256; W] = std::array::from_fn(|r| {
                _mm256_cvtph_ps(_mm_loadu_si128(w[r].as_ptr().add(i).cast::<__m128i>()))
            });
            for t in 0..T {
                let xv = _mm256_loadu_ps(x[t].as_ptr().add(i));
                for r in 0..W {
                    acc[r][t] = _mm256_fmadd_ps(ws[r], xv, acc[r][t]);
                }
            }
        }
        i += 8;
    }
    let mut out = [[0f32; T]; W];
    for r in 0..W {
        for t in 0..T {
            let mut lanes = [0f32; 8];
            // SAFETY: `lanes` holds the eight values stored.
            unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc[r][t]) };
            let mut s: f32 = lanes.iter().sum();
            for j in whole..n {
                s = w[r][j].to_f32().mul_add(x[t][j], s);
            }
            out[r][t] = s;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    fn dense(out: usize, inp: usize) -> Dense {
        Dense {
            w: values(out * inp, 1)
                .into_iter()
                .map(f16::from_f32)
                .collect(),
            b: values(out, 2),
            out,
            inp,
        }
    }

    /// `x·Wᵀ + b` in 64 bits, a multiply at a time.
    fn reference(d: &Dense, x: &[f32], tokens: usize) -> Vec<f32> {
        let mut y = Vec::new();
        for t in 0..tokens {
            for o in 0..d.out {
                let mut s = d.b[o] as f64;
                for i in 0..d.inp {
                    s += d.w[o * d.inp + i].to_f64() * x[t * d.inp + i] as f64;
                }
                y.push(s as f32);
            }
        }
        y
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= 1e-3 * (1.0 + y.abs()))
    }

    #[test]
    fn a_dense_layer_is_the_same_by_rows_and_by_matrix_product() {
        // Widths that leave a tail after the vector lanes, an odd number of rows, and token
        // counts on both sides of FEW_TOKENS and of the blocks of four.
        for (out, inp) in [(7, 13), (33, 70), (64, 384)] {
            let d = dense(out, inp);
            for tokens in [1, 2, 3, 4, 5, 9, FEW_TOKENS, FEW_TOKENS + 1, 70] {
                let x = values(tokens * inp, tokens as u64);
                let want = reference(&d, &x, tokens);
                assert!(
                    close(&d.apply(&x, tokens), &want),
                    "{out}x{inp}, {tokens} tokens"
                );
                if weight_rows_fit() {
                    let mut y: Vec<f32> = (0..tokens).flat_map(|_| d.b.clone()).collect();
                    d.add_by_rows(&x, tokens, &mut y);
                    assert!(close(&y, &want), "by rows: {out}x{inp}, {tokens} tokens");
                }
            }
        }
    }

    #[test]
    fn erf_is_within_its_bound_of_the_library_s() {
        for i in -4000..=4000 {
            let x = i as f32 / 1000.0;
            let (got, want) = (erf(x), libm::erf(f64::from(x)));
            assert!(
                (f64::from(got) - want).abs() < 3e-7,
                "erf({x}) = {got}, not {want}"
            );
        }
    }

    #[test]
    fn attention_is_the_same_by_loops_and_by_matrix_products() {
        let (h, d) = (24, 8);
        for n in [1, 5, SHORT_TEXT, SHORT_TEXT + 1, 50] {
            let at = 3;
            let qkv = values((at + n + 2) * 3 * h, n as u64);
            let scale = 1.0 / (d as f32).sqrt();
            let got = head_attention(&qkv, h, at, n, 2 * d, d, scale);
            // Softmax of the scaled scores, then the weighted values, in 64 bits.
            let s = 3 * h;
            for i in 0..n {
                let scores: Vec<f64> = (0..n)
                    .map(|j| {
                        (0..d)
                            .map(|c| {
                                qkv[(at + i) * s + 2 * d + c] as f64
                                    * qkv[(at + j) * s + h + 2 * d + c] as f64
                            })
                            .sum::<f64>()
                            * scale as f64
                    })
                    .collect();
                let max = scores.iter().copied().fold(f64::MIN, f64::max);
                let e: Vec<f64> = scores.iter().map(|v| (v - max).exp()).collect();
                let sum: f64 = e.iter().sum();
                for c in 0..d {
                    let want: f64 = (0..n)
                        .map(|j| e[j] / sum * qkv[(at + j) * s + 2 * h + 2 * d + c] as f64)
                        .sum();
                    let g = got[i * d + c] as f64;
                    assert!(
                        (g - want).abs() < 1e-4,
                        "n {n}, token {i}, value {c}: {g} vs {want}"
                    );
                }
            }
        }
    }
}
