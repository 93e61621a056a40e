//! A BERT encoder (the architecture of all-MiniLM-L6-v2) written on candle tensors: the
//! reference, the same code on every target. Query, key and value are one matrix product and
//! weights are stored transposed once at load; numerically it is the model sentence-transformers
//! runs (tests check 1e-3). The fast encoder ([`crate::encoder`]) is tested against it and runs
//! the model wherever its shape fits.

use candle_core::{DType, Module, Tensor};
use serde::Deserialize;

use crate::checkpoint::{Checkpoint, Dense, Norm};

/// What Strata reads of a BERT checkpoint's `config.json` (Hugging Face's names; other keys are
/// ignored). Its own struct: candle-transformers, all of whose models were built for this one
/// struct, was the slowest crate of the aarch64 build (docs/decisions/0006-ci-within-its-time.md).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    /// The feed-forward activation: the encoders implement GELU only.
    #[serde(default = "gelu")]
    pub(crate) hidden_act: String,
    pub(crate) max_position_embeddings: usize,
    pub(crate) type_vocab_size: usize,
    pub(crate) layer_norm_eps: f64,
}

fn gelu() -> String {
    "gelu".to_owned()
}

/// A linear layer `x · W + b`: candle's f32 products, W transposed at load to (in, out).
struct Linear {
    weight: Tensor,
    bias: Tensor,
}

impl Linear {
    fn new(d: Dense) -> Linear {
        Linear { weight: d.weight, bias: d.bias }
    }

    /// `x` is (rows, in).
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.matmul(&self.weight)?.broadcast_add(&self.bias)
    }
}

struct LayerNorm(Norm);

impl LayerNorm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(x, &self.0.weight, &self.0.bias, self.0.eps)
    }
}

struct Layer {
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder: token ids in, one hidden vector per token out.
pub(crate) struct Bert {
    word: candle_nn::Embedding,
    position: Tensor,
    token_type: Tensor,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
}

impl Bert {
    pub(crate) fn new(w: Checkpoint, c: &Config) -> Bert {
        let layers = w
            .layers
            .into_iter()
            .map(|l| Layer {
                qkv: Linear::new(l.qkv),
                attention_out: Linear::new(l.attention_out),
                attention_norm: LayerNorm(l.attention_norm),
                intermediate: Linear::new(l.intermediate),
                output: Linear::new(l.output),
                output_norm: LayerNorm(l.output_norm),
            })
            .collect();
        Bert {
            word: candle_nn::Embedding::new(w.word, c.hidden_size),
            position: w.position,
            token_type: w.token_type,
            norm: LayerNorm(w.norm),
            layers,
            heads: c.num_attention_heads,
            hidden: c.hidden_size,
        }
    }

    /// `ids` and `mask` are (texts, tokens); returns (texts, tokens, hidden).
    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (b, s) = ids.dims2()?;
        let (h, heads) = (self.hidden, self.heads);
        let hd = h / heads;
        let x =
            self.word.forward(ids)?.broadcast_add(&self.position.narrow(0, 0, s)?)?.broadcast_add(&self.token_type)?;
        let mut x = self.norm.forward(&x)?.reshape((b * s, h))?;
        // Padding gets a large negative score before the softmax: (texts, 1, 1, tokens).
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?.reshape((b, 1, 1, s))?;
        let scale = 1.0 / (hd as f64).sqrt();
        for l in &self.layers {
            let qkv = l.qkv.forward(&x)?.reshape((b, s, 3, heads, hd))?;
            let part = |i: usize| qkv.narrow(2, i, 1)?.squeeze(2)?.transpose(1, 2)?.contiguous(); // (b, heads, s, hd)
            let (q, k, v) = (part(0)?, part(1)?, part(2)?);
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs.matmul(&v)?.transpose(1, 2)?.reshape((b * s, h))?;
            let a = l.attention_norm.forward(&(l.attention_out.forward(&ctx)? + &x)?)?;
            let i = l.intermediate.forward(&a)?.gelu_erf()?;
            x = l.output_norm.forward(&(l.output.forward(&i)? + &a)?)?;
        }
        x.reshape((b, s, h))
    }
}
