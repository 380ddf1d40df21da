//! The sentence-embedding model: a BERT encoder in the Hugging Face layout (`config.json`,
//! `tokenizer.json`, `model.safetensors`), run on the CPU, mean-pooled over the tokens and
//! normalized to unit length, so a dot product of two vectors is their cosine similarity.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use moss_bert::{Bert, Config as BertConfig};
use tokenizers::{Tokenizer, TruncationParams};

/// Tokens a passage is cut to (the model's positions go to 512; its training used 256).
pub const MAX_TOKENS: usize = 256;

/// Tokens the model is run on at once: about ten short memories, or one passage of a capsule,
/// whose activations stay in the processor's caches (`examples/embed_speed.rs`).
pub const GROUP_TOKENS: usize = 256;

/// A loaded model.
pub struct Model {
    bert: Bert,
    tokenizer: Tokenizer,
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
        // Texts are run unpadded (see `embed`).
        tokenizer.with_padding(None);
        let bert = Bert::load(&config, &weights).map_err(|e| {
            unusable(
                dir,
                format!("model.safetensors does not fit config.json: {e}"),
            )
        })?;
        Ok(Model {
            dims: bert.dims(),
            bert,
            tokenizer,
            identity,
            dir: dir.to_path_buf(),
        })
    }

    /// One unit vector per text, in order.
    ///
    /// The texts are tokenized together and run through the model in groups of consecutive
    /// texts holding at most `GROUP_TOKENS` tokens, unpadded (each text attends only to its own
    /// tokens): a group's activations stay small enough for the processor's caches, and a
    /// text's vector does not depend on the texts it is embedded with.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // One text (a question) is tokenized on the calling thread: a batch is shared out to
        // rayon's pool, whose threads a single text would only wake.
        let enc = match texts {
            [one] => self.tokenizer.encode(*one, true).map(|e| vec![e]),
            _ => self.tokenizer.encode_batch(texts.to_vec(), true),
        }
        .map_err(|e| format!("tokenizing: {e}"))?;
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        while start < enc.len() {
            let mut end = start + 1;
            let mut tokens = enc[start].len();
            while end < enc.len() && tokens + enc[end].len() <= GROUP_TOKENS {
                tokens += enc[end].len();
                end += 1;
            }
            let ids: Vec<&[u32]> = enc[start..end].iter().map(|e| e.get_ids()).collect();
            out.extend(
                self.bert
                    .embed(&ids)
                    .map_err(|e| format!("running the embedding model: {e}"))?,
            );
            start = end;
        }
        Ok(out)
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

    /// Vectors made of `testdata/reference_vectors.json`'s texts by another implementation of
    /// the same encoder (candle's BERT, texts padded and masked), with the test model.
    #[test]
    fn vectors_match_the_reference_implementation() {
        let Some(model) = model() else { return };
        #[derive(serde::Deserialize)]
        struct Reference {
            identity: String,
            texts: Vec<String>,
            vectors: Vec<Vec<f32>>,
        }
        let r: Reference =
            serde_json::from_str(include_str!("testdata/reference_vectors.json")).unwrap();
        assert_eq!(
            model.identity, r.identity,
            "the reference vectors were made with another model: MOSS_TEST_MODEL_DIR must hold \
             the test model (tests/fixtures/model.sh)"
        );
        let texts: Vec<&str> = r.texts.iter().map(String::as_str).collect();
        // Together, and each alone (a question is embedded alone).
        let together = model.embed(&texts).unwrap();
        for (i, (text, want)) in texts.iter().zip(&r.vectors).enumerate() {
            let alone = model.embed(&[text]).unwrap().remove(0);
            for got in [&together[i], &alone] {
                assert_eq!(got.len(), want.len());
                let c = cosine(got, want);
                let diff = got
                    .iter()
                    .zip(want)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max);
                assert!(
                    c > 0.99999 && diff < 1e-3,
                    "{text:?}: cosine {c} to the reference, largest difference {diff}"
                );
            }
        }
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
