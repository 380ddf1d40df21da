//! The sentence-embedding model: a BERT encoder in the Hugging Face layout (`config.json`,
//! `tokenizer.json`, `model.safetensors`), run on the CPU, mean-pooled over the tokens and
//! normalized to unit length, so a dot product of two vectors is their cosine similarity.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Tokens a passage is cut to (the model's positions go to 512; its training used 256).
pub const MAX_TOKENS: usize = 256;

/// A loaded model.
pub struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
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
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
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
            device,
            dims: config.hidden_size,
            identity,
            dir: dir.to_path_buf(),
        })
    }

    /// One unit vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| format!("tokenizing: {e}"))?;
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = enc
                .iter()
                .map(|e| Tensor::new(e.get_ids(), &self.device))
                .collect::<candle_core::Result<Vec<_>>>()?;
            let mask = enc
                .iter()
                .map(|e| Tensor::new(e.get_attention_mask(), &self.device))
                .collect::<candle_core::Result<Vec<_>>>()?;
            let ids = Tensor::stack(&ids, 0)?;
            let mask = Tensor::stack(&mask, 0)?;
            let types = ids.zeros_like()?;
            let out = self.bert.forward(&ids, &types, Some(&mask))?;
            // Mean over the real tokens (padding masked out).
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = out.broadcast_mul(&m)?.sum(1)?;
            let mean = sum.broadcast_div(&m.sum(1)?)?;
            let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2()
        };
        run().map_err(|e| format!("running the embedding model: {e}"))
    }
}
