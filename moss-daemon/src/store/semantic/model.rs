//! The sentence-embedding model: a BERT encoder in the Hugging Face layout (`config.json`,
//! `tokenizer.json`, `model.safetensors`), run on the CPU, mean-pooled over the tokens and
//! normalized to unit length, so a dot product of two vectors is their cosine similarity.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

/// Tokens a passage is cut to (the model's positions go to 512; its training used 256).
pub const MAX_TOKENS: usize = 256;

/// Tokens, padding included, the model is run on at once: about five short memories, or one
/// passage of a capsule. Embedding 512 memory-like texts and 64 passages in groups of at most
/// this many tokens took half the CPU time of running each step's texts as one batch padded to
/// its longest (`examples/embed_speed.rs`).
pub const GROUP_TOKENS: usize = 256;

/// A loaded model.
pub struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
    /// The token padding is made of (masked out, so its value does not change a vector).
    pad_id: u32,
    device: Device,
    /// The vectors' length.
    pub dims: usize,
    /// What the vectors were made with: a digest of the three files. Vectors made by another
    /// model are not comparable, so the index records this and is rebuilt when it changes.
    pub identity: String,
    pub dir: PathBuf,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("dir", &self.dir)
            .field("dims", &self.dims)
            .field("identity", &self.identity)
            .finish()
    }
}

/// Why a model directory cannot be used, in words a user can act on.
fn unusable(dir: &Path, what: impl std::fmt::Display) -> String {
    format!(
        "the embedding model in {} cannot be used: {what}. embeddings.model_dir must name a \
         directory holding config.json, tokenizer.json and model.safetensors (a sentence-\
         transformers model such as all-MiniLM-L6-v2)",
        dir.display()
    )
}

impl Model {
    /// Loads the model in `dir`.
    pub fn load(dir: &Path) -> Result<Model, String> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| unusable(dir, format!("reading {name}: {e}")))
        };
        let config_bytes = read("config.json")?;
        let tokenizer_bytes = read("tokenizer.json")?;
        let weights = read("model.safetensors")?;
        let config: BertConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| unusable(dir, format!("config.json is not a BERT config: {e}")))?;
        let mut digest = Sha256::new();
        for part in [&config_bytes, &tokenizer_bytes, &weights] {
            digest.update((part.len() as u64).to_le_bytes());
            digest.update(part);
        }
        let identity: String = digest.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| unusable(dir, format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| unusable(dir, format!("tokenizer.json: {e}")))?;
        // Padding is added per group of similar length (see `embed`), with the tokenizer's own
        // padding token when it names one.
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(None);
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| unusable(dir, format!("model.safetensors: {e}")))?;
        let bert = BertModel::load(vb, &config).map_err(|e| {
            unusable(
                dir,
                format!("model.safetensors does not fit config.json: {e}"),
            )
        })?;
        Ok(Model {
            bert,
            tokenizer,
            pad_id,
            device,
            dims: config.hidden_size,
            identity,
            dir: dir.to_path_buf(),
        })
    }

    /// One unit vector per text, in order.
    ///
    /// The texts are tokenized together, ordered by their number of tokens and run through the
    /// model in groups of similar length, each padded only to its own longest text and holding
    /// at most `GROUP_TOKENS` tokens with the padding: a short memory is not padded to the
    /// length of a capsule's passage, and a group's activations stay small enough for the
    /// processor's caches. Padding is masked out, so a text's vector does not depend on the
    /// texts it is embedded with.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| format!("tokenizing: {e}"))?;
        let mut order: Vec<usize> = (0..enc.len()).collect();
        order.sort_by_key(|&i| enc[i].len());
        // Groups of consecutive texts in that order: each grows while its padded size (texts
        // times the longest) fits.
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && (end + 1 - start) * enc[order[end]].len() <= GROUP_TOKENS {
                end += 1;
            }
            groups.push(start..end);
            start = end;
        }
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for g in groups {
            let ids: Vec<&[u32]> = order[g.clone()].iter().map(|&i| enc[i].get_ids()).collect();
            let vectors = self
                .run(&ids)
                .map_err(|e| format!("running the embedding model: {e}"))?;
            for (&i, v) in order[g].iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Runs the model on token sequences, each padded to the longest, and mean-pools each.
    fn run(&self, group: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = group.iter().map(|g| g.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(group.len() * len);
        let mut mask = Vec::with_capacity(group.len() * len);
        for g in group {
            ids.extend_from_slice(g);
            ids.resize(ids.len() + len - g.len(), self.pad_id);
            mask.resize(mask.len() + g.len(), 1u32);
            mask.resize(mask.len() + len - g.len(), 0u32);
        }
        let ids = Tensor::from_vec(ids, (group.len(), len), &self.device)?;
        let mask = Tensor::from_vec(mask, (group.len(), len), &self.device)?;
        let types = ids.zeros_like()?;
        let out = self.bert.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens (padding masked out).
        let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let sum = out.broadcast_mul(&m)?.sum(1)?;
        let mean = sum.broadcast_div(&m.sum(1)?)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)?.to_vec2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model from `MOSS_TEST_MODEL_DIR`, or `None` (a skip) outside CI when it is unset.
    fn model() -> Option<Model> {
        match std::env::var_os("MOSS_TEST_MODEL_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => Some(Model::load(Path::new(&dir)).expect("the test model loads")),
            None if std::env::var_os("CI").is_some() => {
                panic!("MOSS_TEST_MODEL_DIR must name the embedding model under CI (see .ci/run)")
            }
            None => {
                eprintln!("MOSS_TEST_MODEL_DIR is unset: skipping a test that needs the model");
                None
            }
        }
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_text_embeds_to_the_same_vector_whatever_it_is_embedded_with() {
        let Some(model) = model() else { return };
        let short = "User prefers tabs.";
        let medium = "The nightly export job times out on large uploads, so we pinned the \
                      previous version until the vendor ships a patch.";
        let long = "## Decisions\n".to_string()
            + &"The api gateway rejects expired tokens and the fix is to raise the timeout. "
                .repeat(12);
        let alone: Vec<Vec<f32>> = [short, medium, long.as_str()]
            .iter()
            .map(|t| model.embed(&[t]).unwrap().remove(0))
            .collect();
        // In one call, in both orders, with texts of other lengths around them (so each is
        // padded, or grouped, differently).
        let mut batch: Vec<&str> = vec![long.as_str(), short, medium];
        for i in 0..20 {
            batch.push(if i % 2 == 0 { medium } else { short });
        }
        let together = model.embed(&batch).unwrap();
        assert_eq!(together.len(), batch.len());
        for (text, v) in batch.iter().zip(&together) {
            let i = [short, medium, long.as_str()]
                .iter()
                .position(|t| t == text)
                .unwrap();
            let c = cosine(v, &alone[i]);
            assert!(
                c > 0.999,
                "{text:?} embedded in a batch: cosine {c} to itself alone"
            );
            assert!((cosine(v, v) - 1.0).abs() < 1e-4, "a unit vector");
        }
        let reversed: Vec<&str> = batch.iter().rev().copied().collect();
        let back = model.embed(&reversed).unwrap();
        for (v, w) in together.iter().rev().zip(&back) {
            assert!(
                cosine(v, w) > 0.999,
                "the order of the texts changed a vector"
            );
        }
        // Different texts keep different vectors (the results are not shuffled).
        assert!(cosine(&alone[0], &alone[2]) < 0.9);
    }
}
