//! A BERT encoder (the architecture of all-MiniLM-L6-v2) written on candle tensors, so that
//! Strata decides how the work is laid out: query, key and value are one matrix product, weights
//! are stored transposed once at load, and for short inputs (a search query) each product is
//! split in two halves run on two threads — a single query has too few rows to keep two cores
//! busy otherwise. Numerically it is the model sentence-transformers runs (tests check 1e-3).
//! Search queries may take the int8 path ([`quantized`]): ~35% faster, cosine ≥ 0.99 to the
//! exact vector for real questions (tested), LoCoMo recall unchanged. Where the CPU has AMX,
//! [`crate::encoder`] runs the model instead.

use candle_core::{DType, Module, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;
use strata_core::vectors::{dot_i8_fn, quantize_i8};

/// Inputs with at most this many rows (tokens × texts) split each product across threads.
const SPLIT_ROWS: usize = 64;

thread_local! {
    /// Whether this thread's forward passes use the int8 weights (the query path).
    static QUANTIZED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the int8 weights for short inputs on this thread.
pub(crate) fn quantized<T>(f: impl FnOnce() -> T) -> T {
    QUANTIZED.with(|q| q.set(true));
    let out = f();
    QUANTIZED.with(|q| q.set(false));
    out
}

/// A linear layer `x · W + b`: candle's f32 products, W transposed at load to (in, out); and an
/// int8 copy for the query path, made on the first query (loading stays fast for programs that
/// only store).
struct Linear {
    weight: Tensor,
    bias: Tensor,
    int8: std::sync::OnceLock<Int8>,
}

/// Weights as int8 with one scale per output, (out, in) row-major: a short input's product
/// runs as integer dot products (AVX2) over weight rows that stay in cache, half the outputs
/// on each of two threads. Activations are quantized per token.
struct Int8 {
    inputs: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    bias: Vec<f32>,
}

impl Int8 {
    fn new(w: &Tensor, b: &Tensor) -> candle_core::Result<Int8> {
        let rows: Vec<Vec<f32>> = w.to_vec2()?;
        let inputs = rows.first().map_or(0, Vec::len);
        let mut codes = Vec::with_capacity(rows.len() * inputs);
        let scales = rows.iter().map(|r| quantize_i8(r, &mut codes)).collect();
        Ok(Int8 { inputs, codes, scales, bias: b.to_vec1()? })
    }

    /// `x` is (rows, in); returns (rows, out).
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (rows, inputs) = x.dims2()?;
        let xv: Vec<f32> = x.flatten_all()?.to_vec1()?;
        let mut xq = Vec::with_capacity(rows * inputs);
        let sx: Vec<f32> = xv.chunks_exact(inputs).map(|r| quantize_i8(r, &mut xq)).collect();
        let outputs = self.scales.len();
        // Output-major, so that the two halves write disjoint slices.
        let mut out = vec![0f32; outputs * rows];
        let dot = dot_i8_fn();
        let fill = |first: usize, dst: &mut [f32]| {
            for (j, col) in dst.chunks_exact_mut(rows).enumerate() {
                let j = first + j;
                let w = &self.codes[j * self.inputs..(j + 1) * self.inputs];
                for (t, o) in col.iter_mut().enumerate() {
                    let d = dot(&xq[t * inputs..(t + 1) * inputs], w);
                    *o = d as f32 * sx[t] * self.scales[j] + self.bias[j];
                }
            }
        };
        let half = outputs / 2;
        let (a, b) = out.split_at_mut(half * rows);
        rayon::join(|| fill(0, a), || fill(half, b));
        Tensor::from_vec(out, (outputs, rows), x.device())?.t()?.contiguous()
    }
}

impl Linear {
    /// From PyTorch-layout (out, in) weights, possibly several stacked along `out`.
    fn new(weights: &[Tensor], biases: &[Tensor]) -> candle_core::Result<Linear> {
        let w = Tensor::cat(weights, 0)?; // (out, in)
        let b = Tensor::cat(biases, 0)?;
        let weight = w.t()?.contiguous()?; // (in, out)
        Ok(Linear { weight, bias: b.contiguous()?, int8: std::sync::OnceLock::new() })
    }

    fn load(vb: &VarBuilder, names: &[&str], in_dim: usize, out_dims: &[usize]) -> candle_core::Result<Linear> {
        let mut ws = Vec::new();
        let mut bs = Vec::new();
        for (name, out) in names.iter().zip(out_dims) {
            ws.push(vb.get((*out, in_dim), &format!("{name}.weight"))?);
            bs.push(vb.get(*out, &format!("{name}.bias"))?);
        }
        Linear::new(&ws, &bs)
    }

    /// `x` is (rows, in).
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        Linear::product(&self.weight, &self.bias, &self.int8, x)
    }

    fn product(
        weight: &Tensor,
        bias: &Tensor,
        int8: &std::sync::OnceLock<Int8>,
        x: &Tensor,
    ) -> candle_core::Result<Tensor> {
        if QUANTIZED.with(std::cell::Cell::get) && x.dim(0)? <= SPLIT_ROWS {
            if int8.get().is_none() {
                let _ = int8.set(Int8::new(&weight.t()?, bias)?);
            }
            if let Some(q) = int8.get() {
                return q.forward(x);
            }
        }
        if x.dim(0)? > SPLIT_ROWS || rayon::current_num_threads() < 2 {
            return x.matmul(weight)?.broadcast_add(bias);
        }
        // Each thread multiplies by one half of W's columns (a strided view, no copy).
        let out = weight.dim(1)?;
        let half = out / 2;
        let run = |start: usize, len: usize| {
            x.matmul(&weight.narrow(1, start, len)?)?.broadcast_add(&bias.narrow(0, start, len)?)
        };
        let (a, b) = rayon::join(|| run(0, half), || run(half, out - half));
        Tensor::cat(&[a?, b?], 1)
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    fn load(vb: &VarBuilder, name: &str, dim: usize, eps: f64) -> candle_core::Result<LayerNorm> {
        Ok(LayerNorm {
            weight: vb.get(dim, &format!("{name}.weight"))?,
            bias: vb.get(dim, &format!("{name}.bias"))?,
            eps: eps as f32,
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(x, &self.weight, &self.bias, self.eps)
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
    pub(crate) fn load(vb: VarBuilder, c: &Config) -> candle_core::Result<Bert> {
        // Some exports put everything under "bert.".
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") { vb } else { vb.pp("bert") };
        let h = c.hidden_size;
        let e = vb.pp("embeddings");
        let word = candle_nn::Embedding::new(e.get((c.vocab_size, h), "word_embeddings.weight")?, h);
        let position = e.get((c.max_position_embeddings, h), "position_embeddings.weight")?;
        let token_type = e.get((c.type_vocab_size, h), "token_type_embeddings.weight")?.narrow(0, 0, 1)?;
        let norm = LayerNorm::load(&e, "LayerNorm", h, c.layer_norm_eps)?;
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let s = a.pp("self");
            layers.push(Layer {
                qkv: Linear::load(&s, &["query", "key", "value"], h, &[h, h, h])?,
                attention_out: Linear::load(&a.pp("output"), &["dense"], h, &[h])?,
                attention_norm: LayerNorm::load(&a.pp("output"), "LayerNorm", h, c.layer_norm_eps)?,
                intermediate: Linear::load(&l.pp("intermediate"), &["dense"], h, &[c.intermediate_size])?,
                output: Linear::load(&l.pp("output"), &["dense"], c.intermediate_size, &[h])?,
                output_norm: LayerNorm::load(&l.pp("output"), "LayerNorm", h, c.layer_norm_eps)?,
            });
        }
        Ok(Bert { word, position, token_type, norm, layers, heads: c.num_attention_heads, hidden: h })
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
