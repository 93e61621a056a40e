//! BERT's weights by role, read once from a Hugging Face checkpoint (its tensor names live
//! here only): both encoders, [`crate::bert`] and [`crate::encoder`], are built from this.

use candle_core::Tensor;
use candle_nn::VarBuilder;

use crate::bert::Config;

/// A linear layer as `x · W + b`: W (in, out), contiguous; b (out).
pub(crate) struct Dense {
    pub(crate) weight: Tensor,
    pub(crate) bias: Tensor,
}

impl Dense {
    /// From PyTorch-layout (out, in) weights under `names`, stacked along `out` when several
    /// (query, key and value become one product).
    fn read(vb: &VarBuilder, names: &[&str], in_dim: usize, out_dims: &[usize]) -> candle_core::Result<Dense> {
        let mut ws = Vec::new();
        let mut bs = Vec::new();
        for (name, out) in names.iter().zip(out_dims) {
            ws.push(vb.get((*out, in_dim), &format!("{name}.weight"))?);
            bs.push(vb.get(*out, &format!("{name}.bias"))?);
        }
        let weight = Tensor::cat(&ws, 0)?.t()?.contiguous()?;
        Ok(Dense { weight, bias: Tensor::cat(&bs, 0)?.contiguous()? })
    }
}

/// A layer norm's scale and shift (each `hidden` long) and its epsilon.
pub(crate) struct Norm {
    pub(crate) weight: Tensor,
    pub(crate) bias: Tensor,
    pub(crate) eps: f32,
}

impl Norm {
    fn read(vb: &VarBuilder, name: &str, dim: usize, eps: f64) -> candle_core::Result<Norm> {
        Ok(Norm {
            weight: vb.get(dim, &format!("{name}.weight"))?,
            bias: vb.get(dim, &format!("{name}.bias"))?,
            eps: eps as f32,
        })
    }
}

/// One transformer layer.
pub(crate) struct Layer {
    /// Query, key and value in one product: each row's output is `q | k | v`.
    pub(crate) qkv: Dense,
    pub(crate) attention_out: Dense,
    pub(crate) attention_norm: Norm,
    pub(crate) intermediate: Dense,
    pub(crate) output: Dense,
    pub(crate) output_norm: Norm,
}

/// The whole model.
pub(crate) struct Checkpoint {
    /// Word embeddings (vocabulary, hidden).
    pub(crate) word: Tensor,
    /// Position embeddings (positions, hidden).
    pub(crate) position: Tensor,
    /// The token-type embedding of type 0 (1, hidden): every text here is one segment.
    pub(crate) token_type: Tensor,
    pub(crate) norm: Norm,
    pub(crate) layers: Vec<Layer>,
}

impl Checkpoint {
    /// Reads every weight the encoders use, checking its shape against `c`.
    pub(crate) fn read(vb: &VarBuilder, c: &Config) -> candle_core::Result<Checkpoint> {
        // Some exports put everything under "bert.".
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") { vb.clone() } else { vb.pp("bert") };
        let (h, eps) = (c.hidden_size, c.layer_norm_eps);
        let e = vb.pp("embeddings");
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            layers.push(Layer {
                qkv: Dense::read(&a.pp("self"), &["query", "key", "value"], h, &[h, h, h])?,
                attention_out: Dense::read(&a.pp("output"), &["dense"], h, &[h])?,
                attention_norm: Norm::read(&a.pp("output"), "LayerNorm", h, eps)?,
                intermediate: Dense::read(&l.pp("intermediate"), &["dense"], h, &[c.intermediate_size])?,
                output: Dense::read(&l.pp("output"), &["dense"], c.intermediate_size, &[h])?,
                output_norm: Norm::read(&l.pp("output"), "LayerNorm", h, eps)?,
            });
        }
        Ok(Checkpoint {
            word: e.get((c.vocab_size, h), "word_embeddings.weight")?,
            position: e.get((c.max_position_embeddings, h), "position_embeddings.weight")?,
            token_type: e.get((c.type_vocab_size, h), "token_type_embeddings.weight")?.narrow(0, 0, 1)?,
            norm: Norm::read(&e, "LayerNorm", h, eps)?,
            layers,
        })
    }
}
