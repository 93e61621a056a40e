//! A BERT encoder (the architecture of all-MiniLM-L6-v2) written on candle tensors, so that
//! Strata decides how the work is laid out: query, key and value are one matrix product, weights
//! are stored transposed once at load, and for short inputs (a search query) each product is
//! split in two halves run on two threads — a single query has too few rows to keep two cores
//! busy otherwise. Numerically it is the model sentence-transformers runs (tests check 1e-3).
//! Search queries may take the int8 path ([`quantized`]): ~35% faster, cosine ≥ 0.99 to the
//! exact vector for real questions (tested), LoCoMo recall unchanged. This is the reference
//! encoder, the same code on every target; on an x86-64 CPU with AMX, `encoder.rs` runs the
//! model instead.

use candle_core::{DType, Module, Tensor};
use candle_transformers::models::bert::Config;

use crate::checkpoint::{Checkpoint, Dense, Norm};
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
/// runs as integer dot products (`strata_core::vectors::dot_i8_fn`: AVX2 where present, a loop
/// the compiler vectorizes elsewhere) over weight rows that stay in cache, half the outputs on
/// each of two threads. Activations are quantized per token.
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
    fn new(d: Dense) -> Linear {
        Linear { weight: d.weight, bias: d.bias, int8: std::sync::OnceLock::new() }
    }

    /// `x` is (rows, in).
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        if QUANTIZED.with(std::cell::Cell::get) && x.dim(0)? <= SPLIT_ROWS {
            if self.int8.get().is_none() {
                let _ = self.int8.set(Int8::new(&self.weight.t()?, &self.bias)?);
            }
            if let Some(q) = self.int8.get() {
                return q.forward(x);
            }
        }
        if x.dim(0)? > SPLIT_ROWS || rayon::current_num_threads() < 2 {
            return x.matmul(&self.weight)?.broadcast_add(&self.bias);
        }
        // Each thread multiplies by one half of W's columns (a strided view, no copy).
        let out = self.weight.dim(1)?;
        let half = out / 2;
        let run = |start: usize, len: usize| {
            x.matmul(&self.weight.narrow(1, start, len)?)?.broadcast_add(&self.bias.narrow(0, start, len)?)
        };
        let (a, b) = rayon::join(|| run(0, half), || run(half, out - half));
        Tensor::cat(&[a?, b?], 1)
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
