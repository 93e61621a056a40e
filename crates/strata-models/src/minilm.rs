//! all-MiniLM-L6-v2 (BERT, 384 dimensions) with candle: tokenize, run the encoder, mean-pool
//! over the attention mask, L2-normalize — what sentence-transformers does for this model.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use strata_core::{Embedder, Error, Result};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Longest input in tokens; longer texts are cut (the model was trained on ≤ 256).
const MAX_TOKENS: usize = 256;

/// The on-device sentence embedder.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dim: usize,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").field("dim", &self.dim).finish_non_exhaustive()
    }
}

fn missing(dir: &Path, what: &str) -> Error {
    Error::Model(format!(
        "the embedding model is not in {} ({what}); run `scripts/setup` (or `make setup`) to fetch it, \
         or set STRATA_MODELS to a folder holding {}/model.safetensors, tokenizer.json and config.json. \
         Keyword search works without it",
        dir.display(),
        crate::EMBEDDER_DIR
    ))
}

fn model_err(context: &str) -> impl Fn(candle_core::Error) -> Error + '_ {
    move |e| Error::Model(format!("{context}: {e}"))
}

impl MiniLm {
    /// Loads the model from `dir` (holding model.safetensors, tokenizer.json, config.json).
    pub fn load(dir: &Path) -> Result<MiniLm> {
        let file = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if p.is_file() { Ok(p) } else { Err(missing(dir, &format!("no {name}"))) }
        };
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(file("config.json")?).map_err(|e| missing(dir, &e.to_string()))?,
        )
        .map_err(|e| Error::Model(format!("{}: config.json is not a BERT config: {e}", dir.display())))?;
        let mut tokenizer = Tokenizer::from_file(file("tokenizer.json")?)
            .map_err(|e| Error::Model(format!("{}: tokenizer.json cannot be read: {e}", dir.display())))?;
        // The shipped tokenizer pads and truncates to 128: pad to the longest in each batch.
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| Error::Model(format!("tokenizer truncation: {e}")))?;
        let device = Device::Cpu;
        let weights = candle_core::safetensors::load(file("model.safetensors")?, &device)
            .map_err(|e| Error::Model(format!("{}: model.safetensors cannot be read: {e}", dir.display())))?;
        let vb = VarBuilder::from_tensors(weights, DType::F32, &device);
        let model = BertModel::load(vb, &config).map_err(model_err("the model's weights do not fit BERT"))?;
        Ok(MiniLm { model, tokenizer, device, dim: config.hidden_size })
    }

    /// Loads from the models directory ([`crate::models_dir`]).
    pub fn load_default() -> Result<MiniLm> {
        MiniLm::load(&crate::models_dir().join(crate::EMBEDDER_DIR))
    }

    fn forward(&self, texts: &[&str]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| candle_core::Error::Msg(format!("tokenizer: {e}")))?;
        let rows = encodings.len();
        let cols = encodings.first().map_or(0, |e| e.get_ids().len());
        let ids: Vec<u32> = encodings.iter().flat_map(|e| e.get_ids().to_vec()).collect();
        let mask: Vec<u32> = encodings.iter().flat_map(|e| e.get_attention_mask().to_vec()).collect();
        let ids = Tensor::from_vec(ids, (rows, cols), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, cols), &self.device)?;
        let type_ids = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (rows, cols, dim)
        // Mean over real tokens only.
        let mask_f = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, cols, 1)
        let summed = hidden.broadcast_mul(&mask_f)?.sum(1)?; // (rows, dim)
        let counts = mask_f.sum(1)?.clamp(1e-9, f64::MAX)?; // (rows, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        "all-MiniLM-L6-v2"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.forward(texts).map_err(|e| Error::Model(format!("embedding failed: {e}")))
    }
}
