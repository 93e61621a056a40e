//! A decoder of the llama family over the weights of a GGUF file — SmolLM2 (`llama`) and
//! Qwen2.5 (`qwen2`), one forward with their differences as data ([`Shape::rope`], biases on q,
//! k and v where the file has them, the metadata's prefix): RMSNorm, rotary embeddings,
//! grouped-query attention with a key/value cache, a SwiGLU MLP and output embeddings (tied or
//! the file's own).
//!
//! Each projection is kept once, as int8 blocks ([`Q8`]), which both phases read: generating
//! one token at a time is bound by reading the weights, and reading a prompt multiplies a
//! group of tokens per pass of each row ([`Q8::matmul`]) — as fast here as the f32 products
//! this model kept before, at a quarter of the memory (docs/decisions/0003). q, k and v are
//! one product, as are the MLP's gate and up. Weights are converted on every core at load. A
//! prompt runs on candle tensors ([`Llama::hidden`]); one generated token runs on plain
//! vectors ([`Llama::step`]), each product's rows shared among the chat model's threads.

use std::path::Path;

use candle_core::quantized::{QStorage, QTensor, gguf_file};
use candle_core::{DType, Device, IndexOp, Tensor};

use crate::adapter::{Adapter, Target};
use crate::elementwise::{FMA, softmax};
use crate::q8::Q8;
use crate::shares::Shares;
use std::sync::atomic::Ordering;

/// The shape of the model, from the GGUF metadata.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Transformer blocks.
    pub layers: usize,
    /// Hidden size.
    pub hidden: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// RMSNorm epsilon.
    pub eps: f64,
    /// RoPE base frequency.
    pub rope_base: f32,
    /// The MLP's inner size.
    pub mlp: usize,
    /// Longest context.
    pub context: usize,
    /// How q and k are rotated.
    pub rope: Rope,
}

/// How the rotary embedding pairs a head's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rope {
    /// `(x[2i], x[2i+1])`: llama models, whose q and k rows GGUF stores permuted to this order.
    Interleaved,
    /// `(x[i], x[i + d/2])` (NEOX): Qwen2, stored in the original order.
    Halves,
}

/// A projection as int8 blocks ([`Q8`]); with an adapter applied unmerged, its `(in, R)` and
/// `(R, out)` factors.
struct Weight {
    q8: Q8,
    /// The `out` size of each stacked part.
    parts: Vec<usize>,
    lora: Option<(Tensor, Tensor)>,
}

/// One projection's adapter update: `A (r, in)` and `scale · B (out, r)`.
type Delta = Option<(Tensor, Tensor)>;

impl Weight {
    /// From `(out, in)` f32 parts stacked along `out`, each with its update merged in.
    fn new(parts: &[Tensor], deltas: &[Delta]) -> candle_core::Result<Weight> {
        let merged = parts
            .iter()
            .zip(deltas)
            .map(|(w, d)| match d {
                Some((a, b)) => w + b.matmul(a)?,
                None => Ok(w.clone()),
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        let w = Tensor::cat(&merged, 0)?;
        let sizes = parts.iter().map(|p| p.dim(0)).collect::<candle_core::Result<_>>()?;
        Ok(Weight { q8: q8_of(&w)?, parts: sizes, lora: None })
    }

    /// Applies the parts' updates unmerged (or none): the stacked A's and a block-diagonal B.
    fn set_lora(&mut self, deltas: &[Delta]) -> candle_core::Result<()> {
        let ranks: Vec<usize> = deltas.iter().map(|d| d.as_ref().map_or(0, |(a, _)| a.dim(0).unwrap_or(0))).collect();
        let total: usize = ranks.iter().sum();
        if total == 0 {
            self.lora = None;
            return Ok(());
        }
        let a: Vec<Tensor> = deltas.iter().flatten().map(|(a, _)| a.clone()).collect();
        let mut rows = Vec::with_capacity(deltas.len());
        let mut before = 0;
        for ((d, &rank), &out) in deltas.iter().zip(&ranks).zip(&self.parts) {
            let row = match d {
                Some((_, b)) => {
                    let left = Tensor::zeros((out, before), DType::F32, &Device::Cpu)?;
                    let right = Tensor::zeros((out, total - before - rank), DType::F32, &Device::Cpu)?;
                    Tensor::cat(&[&left, b, &right], 1)?
                }
                None => Tensor::zeros((out, total), DType::F32, &Device::Cpu)?,
            };
            rows.push(row);
            before += rank;
        }
        let a = Tensor::cat(&a, 0)?.t()?.contiguous()?;
        let b = Tensor::cat(&rows, 0)?.t()?.contiguous()?;
        self.lora = Some((a, b));
        Ok(())
    }

    /// `x` is (1, n, in).
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let y = q8_forward(&self.q8, x)?;
        match &self.lora {
            Some((a, b)) => y + x.broadcast_matmul(a)?.broadcast_matmul(b)?,
            None => Ok(y),
        }
    }
}

/// Int8 blocks of an `(out, in)` f32 matrix.
fn q8_of(w: &Tensor) -> candle_core::Result<Q8> {
    let (out, inp) = w.dims2()?;
    Q8::new(&w.flatten_all()?.to_vec1::<f32>()?, out, inp)
        .ok_or_else(|| candle_core::Error::Msg(format!("a {out}×{inp} weight is not in whole blocks of 32")))
}

/// Threads that convert the layers at load, at most.
const LOADERS: usize = 4;

/// Rows dequantized at a time by [`q8_of_quantized`]: 4,096 rows of 896 are 15 MB in f32.
const ROWS_AT_ONCE: usize = 4096;

/// Int8 blocks of a quantized `(out, in)` matrix from the file, dequantized [`ROWS_AT_ONCE`] rows
/// at a time: the vocabulary's embeddings (151,936 × 896 for Qwen2.5-0.5B) take 545 MB in f32,
/// which whole and copied once more made most of the peak of loading (docs/benchmarks.md).
fn q8_of_quantized(t: &QTensor) -> candle_core::Result<Q8> {
    let (out, inp) = t.shape().dims2()?;
    let dtype = t.dtype();
    if !inp.is_multiple_of(dtype.block_size()) {
        return q8_of(&t.dequantize(&Device::Cpu)?);
    }
    let row_bytes = inp / dtype.block_size() * dtype.type_size();
    let data = t.data()?;
    let mut q = Q8::with_capacity(out, inp)
        .ok_or_else(|| candle_core::Error::Msg(format!("a {out}×{inp} weight is not in whole blocks of 32")))?;
    for first in (0..out).step_by(ROWS_AT_ONCE) {
        let rows = ROWS_AT_ONCE.min(out - first);
        let bytes = data.get(first * row_bytes..(first + rows) * row_bytes).ok_or_else(|| {
            candle_core::Error::Msg(format!("a {out}×{inp} weight holds fewer bytes than its shape needs"))
        })?;
        let storage = QStorage::from_data(std::borrow::Cow::Borrowed(bytes), &Device::Cpu, dtype)?;
        let part = QTensor::new(storage, (rows, inp))?.dequantize(&Device::Cpu)?;
        q.push_rows(&part.flatten_all()?.to_vec1::<f32>()?);
    }
    Ok(q)
}

/// `x (1, n, in)` times an int8 matrix: `(1, n, out)` (one token by [`Q8::matvec`], many by
/// [`Q8::matmul`]).
fn q8_forward(q: &Q8, x: &Tensor) -> candle_core::Result<Tensor> {
    let n = x.dim(1)?;
    let xv = x.flatten_all()?.to_vec1::<f32>()?;
    let out = if n == 1 { q.matvec(&q.input(&xv)) } else { q.matmul(&q.batch(&xv)) };
    Tensor::from_vec(out, (1, n, q.outputs()), x.device())
}

/// A vector as a 1-D tensor.
fn vector(v: &[f32]) -> candle_core::Result<Tensor> {
    Tensor::from_slice(v, v.len(), &Device::Cpu)
}

/// `x / rms(x) · w`, as candle's `rms_norm`.
fn rms_norm(x: &[f32], w: &[f32], eps: f32) -> Vec<f32> {
    let mean = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    let r = 1.0 / (mean + eps).sqrt();
    x.iter().zip(w).map(|(v, w)| v * r * w).collect()
}

/// Rotates each head of `x` by the position's angles: interleaved pairs `(x[2i], x[2i+1])`
/// (as candle's `rope_i`) or halves `(x[i], x[i + d/2])` (as candle's `rope`).
fn rope(x: &mut [f32], cos: &[f32], sin: &[f32], kind: Rope) {
    let half = cos.len();
    for head in x.chunks_exact_mut(2 * half) {
        for i in 0..half {
            let (ia, ib) = match kind {
                Rope::Interleaved => (2 * i, 2 * i + 1),
                Rope::Halves => (i, i + half),
            };
            let (a, b, c, s) = (head[ia], head[ib], cos[i], sin[i]);
            head[ia] = a * c - b * s;
            head[ib] = a * s + b * c;
        }
    }
}

/// A dot product in eight lanes (so that it vectorizes; a plain sum must add in order).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for ((l, p), q) in lanes.iter_mut().zip(x).zip(y) {
            *l += p * q;
        }
    }
    let tail: f32 = a.chunks_exact(8).remainder().iter().zip(b.chunks_exact(8).remainder()).map(|(p, q)| p * q).sum();
    lanes.iter().sum::<f32>() + tail
}

/// The norms' weights the one-token step reads.
struct Norms<'a> {
    layers: &'a [Layer],
    last: &'a [f32],
}

/// The one-token step's arithmetic ([`Llama::step`]); `product` computes the next matrix
/// product in the order q·k·v, output, gate·up, down per layer, then the vocabulary.
fn token(
    s: Shape,
    pos: usize,
    mut x: Vec<f32>,
    norms: &Norms,
    caches: &mut [Cache],
    (cos_v, sin_v): (&[f32], &[f32]),
    product: &mut dyn FnMut(&[f32]) -> candle_core::Result<Vec<f32>>,
) -> candle_core::Result<Vec<f32>> {
    let d = s.hidden / s.heads;
    let (kv_dim, group, half) = (s.kv_heads * d, s.heads / s.kv_heads, d / 2);
    let eps = s.eps as f32;
    let scale = 1.0 / (d as f32).sqrt();
    let (cos, sin) = (&cos_v[pos * half..(pos + 1) * half], &sin_v[pos * half..(pos + 1) * half]);
    let mut scores = vec![0f32; pos + 1];
    for (l, cache) in norms.layers.iter().zip(caches.iter_mut()) {
        let mut qkv = product(&rms_norm(&x, &l.attn_norm, eps))?;
        if let Some(bias) = &l.qkv_bias {
            for (y, b) in qkv.iter_mut().zip(bias) {
                *y += b;
            }
        }
        let (q, kv) = qkv.split_at_mut(s.hidden);
        let (k, v) = kv.split_at_mut(kv_dim);
        rope(q, cos, sin, s.rope);
        rope(k, cos, sin, s.rope);
        cache.rewind(pos, kv_dim)?;
        cache.k.extend_from_slice(k);
        cache.v.extend_from_slice(v);
        let mut y = vec![0f32; s.hidden];
        for (head, (qh, yh)) in q.chunks_exact(d).zip(y.chunks_exact_mut(d)).enumerate() {
            let at = (head / group) * d;
            for (j, sc) in scores.iter_mut().enumerate() {
                let kj = &cache.k[j * kv_dim + at..j * kv_dim + at + d];
                *sc = dot(qh, kj) * scale;
            }
            softmax::<FMA>(&mut scores);
            for (j, p) in scores.iter().enumerate() {
                let vj = &cache.v[j * kv_dim + at..j * kv_dim + at + d];
                for (o, vv) in yh.iter_mut().zip(vj) {
                    *o += p * vv;
                }
            }
        }
        for (xi, o) in x.iter_mut().zip(product(&y)?) {
            *xi += o;
        }
        let gu = product(&rms_norm(&x, &l.ffn_norm, eps))?;
        let (g, u) = gu.split_at(gu.len() / 2);
        let a: Vec<f32> = g.iter().zip(u).map(|(g, u)| g / (1.0 + (-g).exp()) * u).collect();
        for (xi, o) in x.iter_mut().zip(product(&a)?) {
            *xi += o;
        }
    }
    product(&rms_norm(&x, norms.last, eps))
}

struct Layer {
    /// The norms' weights (plain vectors: the one-token step reads them as they are).
    attn_norm: Vec<f32>,
    /// q, k and v stacked.
    qkv: Weight,
    /// Their biases stacked, where the model has them (Qwen2).
    qkv_bias: Option<Vec<f32>>,
    o: Weight,
    ffn_norm: Vec<f32>,
    /// gate and up stacked.
    gate_up: Weight,
    down: Weight,
}

/// Keys and values of the positions so far, position-major `(t, kv_heads · head_dim)`: a new
/// token appends one row, no copy of the rest.
#[derive(Default)]
struct Cache {
    k: Vec<f32>,
    v: Vec<f32>,
}

impl Cache {
    /// Keeps the first `positions` (a conversation continued from there); an error if it holds
    /// fewer.
    fn rewind(&mut self, positions: usize, kv_dim: usize) -> candle_core::Result<()> {
        if self.k.len() < positions * kv_dim {
            return Err(candle_core::Error::Msg(format!(
                "the model was asked to continue at position {positions} but holds {}",
                self.k.len() / kv_dim.max(1)
            )));
        }
        self.k.truncate(positions * kv_dim);
        self.v.truncate(positions * kv_dim);
        Ok(())
    }
}

impl Layer {
    /// Whether no adapter is applied unmerged (the one-token step has no adapter products).
    fn plain(&self) -> bool {
        [&self.qkv, &self.o, &self.gate_up, &self.down].iter().all(|w| w.lora.is_none())
    }
}

/// A layer's tensors as the file holds them, and q, k and v's biases where it has them.
struct RawLayer(Vec<QTensor>, Option<[QTensor; 3]>);

impl RawLayer {
    const NAMES: [&str; 9] =
        ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"];

    /// `deltas` in [`Target::ALL`]'s order, merged into the weights.
    fn convert(self, deltas: &[Delta; 7]) -> candle_core::Result<Layer> {
        let d: Vec<Tensor> = self.0.iter().map(|t| t.dequantize(&Device::Cpu)).collect::<candle_core::Result<_>>()?;
        let qkv_bias = match &self.1 {
            Some(b) => {
                let parts: Vec<Vec<f32>> =
                    b.iter().map(|t| t.dequantize(&Device::Cpu)?.to_vec1()).collect::<candle_core::Result<_>>()?;
                Some(parts.concat())
            }
            None => None,
        };
        Ok(Layer {
            attn_norm: d[0].to_vec1()?,
            qkv: Weight::new(&d[1..4], &deltas[0..3])?,
            qkv_bias,
            o: Weight::new(&d[4..5], &deltas[3..4])?,
            ffn_norm: d[5].to_vec1()?,
            gate_up: Weight::new(&d[6..8], &deltas[4..6])?,
            down: Weight::new(&d[8..9], &deltas[6..7])?,
        })
    }
}

/// The model, with its key/value cache (one conversation at a time).
pub struct Llama {
    shape: Shape,
    /// The token embeddings, a row per token.
    embeddings: Q8,
    layers: Vec<Layer>,
    /// The final norm's weights.
    norm: Vec<f32>,
    /// The output embeddings where the file has its own (else the token embeddings').
    output: Option<Q8>,
    /// The rotary angles' cosines and sines, `(context, head_dim / 2)` row-major.
    cos: Vec<f32>,
    sin: Vec<f32>,
    /// Each layer's keys and values so far.
    caches: Vec<Cache>,
    /// The threads the one-token step splits its products over (`process::chat_threads`).
    threads: usize,
}

fn meta_u(ct: &gguf_file::Content, key: &str) -> candle_core::Result<usize> {
    ct.metadata
        .get(key)
        .ok_or_else(|| candle_core::Error::Msg(format!("no {key} in the model file")))?
        .to_u32()
        .map(|v| v as usize)
}

fn meta_f(ct: &gguf_file::Content, key: &str, default: f32) -> f32 {
    ct.metadata.get(key).and_then(|v| v.to_f32().ok()).unwrap_or(default)
}

fn shape_of(ct: &gguf_file::Content) -> candle_core::Result<Shape> {
    let arch = ct.metadata.get("general.architecture").and_then(|v| v.to_string().ok()).cloned().unwrap_or_default();
    let rope = match arch.as_str() {
        "llama" => Rope::Interleaved,
        "qwen2" => Rope::Halves,
        _ => {
            return Err(candle_core::Error::Msg(format!(
                "a '{arch}' model; llama (SmolLM2) and qwen2 (Qwen2.5) models run on this device"
            )));
        }
    };
    let key = |k: &str| format!("{arch}.{k}");
    Ok(Shape {
        layers: meta_u(ct, &key("block_count"))?,
        hidden: meta_u(ct, &key("embedding_length"))?,
        heads: meta_u(ct, &key("attention.head_count"))?,
        kv_heads: meta_u(ct, &key("attention.head_count_kv"))?,
        eps: meta_f(ct, &key("attention.layer_norm_rms_epsilon"), 1e-5) as f64,
        rope_base: meta_f(ct, &key("rope.freq_base"), 10_000.0),
        mlp: meta_u(ct, &key("feed_forward_length"))?,
        context: meta_u(ct, &key("context_length")).unwrap_or(2048).min(8192),
        rope,
    })
}

/// One layer's adapter updates in [`Target::ALL`]'s order.
fn deltas(adapter: Option<&Adapter>, layer: usize, shape: &Shape) -> candle_core::Result<[Delta; 7]> {
    let mut out: [Delta; 7] = Default::default();
    if let Some(a) = adapter {
        for (slot, t) in out.iter_mut().zip(Target::ALL) {
            *slot = a.delta(layer, t, shape).map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        }
    }
    Ok(out)
}

impl Llama {
    /// Loads the model in `file`.
    pub fn load(file: &Path) -> candle_core::Result<Llama> {
        Llama::load_merged(file, None)
    }

    /// Loads the model in `file` with `adapter` merged into its weights (no cost per token;
    /// changing the adapter means loading again).
    pub fn load_merged(file: &Path, adapter: Option<&Adapter>) -> candle_core::Result<Llama> {
        let mut f = std::fs::File::open(file)?;
        let ct = gguf_file::Content::read(&mut f).map_err(|e| e.with_path(file))?;
        Llama::from_gguf(file, &ct, adapter)
    }

    /// The model's shape as the file's metadata gives it, without loading the weights.
    pub fn read_shape(file: &Path) -> candle_core::Result<Shape> {
        let mut f = std::fs::File::open(file)?;
        let ct = gguf_file::Content::read(&mut f).map_err(|e| e.with_path(file))?;
        shape_of(&ct)
    }

    /// Applies `adapter` unmerged (two small products more per projection), or removes it:
    /// switching needs no reload. An adapter merged at load stays merged underneath.
    pub fn set_adapter(&mut self, adapter: Option<&Adapter>) -> candle_core::Result<()> {
        let shape = self.shape;
        for (i, l) in self.layers.iter_mut().enumerate() {
            let d = deltas(adapter, i, &shape)?;
            l.qkv.set_lora(&d[0..3])?;
            l.o.set_lora(&d[3..4])?;
            l.gate_up.set_lora(&d[4..6])?;
            l.down.set_lora(&d[6..7])?;
        }
        Ok(())
    }

    fn from_gguf(file: &Path, ct: &gguf_file::Content, adapter: Option<&Adapter>) -> candle_core::Result<Llama> {
        let device = Device::Cpu;
        let shape = shape_of(ct)?;
        let tensor = |r: &mut std::fs::File, name: &str| ct.tensor(r, name, &device);
        let read = |r: &mut std::fs::File, i: usize| -> candle_core::Result<RawLayer> {
            let names = RawLayer::NAMES.iter().map(|n| tensor(r, &format!("blk.{i}.{n}.weight")));
            let weights = names.collect::<candle_core::Result<_>>()?;
            let mut bias = |n: &str| tensor(r, &format!("blk.{i}.attn_{n}.bias")).ok();
            let biases = match (bias("q"), bias("k"), bias("v")) {
                (Some(q), Some(k), Some(v)) => Some([q, k, v]),
                _ => None,
            };
            Ok(RawLayer(weights, biases))
        };
        let deltas = (0..shape.layers).map(|i| deltas(adapter, i, &shape)).collect::<candle_core::Result<Vec<_>>>()?;
        // Up to four of the chat model's threads read and convert (dequantize, re-quantize,
        // transpose) a share of the layers, one at a time, from their own handles on the file:
        // only the layers in hand are held twice (about 120 MB each for Qwen2.5-0.5B, so 16
        // at once took the peak from 1.0 to 2.0 GB on a 16-core machine).
        let cores = crate::process::chat_threads().min(LOADERS);
        let per = shape.layers.div_ceil(cores).max(1);
        let (layers, embeddings, output) = std::thread::scope(|s| {
            let workers: Vec<_> = (0..shape.layers)
                .step_by(per)
                .map(|first| {
                    let (read, deltas) = (&read, &deltas);
                    s.spawn(move || -> candle_core::Result<Vec<Layer>> {
                        let mut r = std::fs::File::open(file)?;
                        (first..(first + per).min(shape.layers))
                            .map(|i| {
                                let layer = read(&mut r, i)?.convert(&deltas[i]);
                                crate::process::release_freed();
                                layer
                            })
                            .collect()
                    })
                })
                .collect();
            let mut r = std::fs::File::open(file)?;
            let embeddings = q8_of_quantized(&tensor(&mut r, "token_embd.weight")?)?;
            crate::process::release_freed();
            let output = match tensor(&mut r, "output.weight") {
                Ok(t) => Some(q8_of_quantized(&t)?),
                Err(_) => None, // tied to the embeddings
            };
            crate::process::release_freed();
            let mut layers = Vec::with_capacity(shape.layers);
            for w in workers {
                layers.extend(w.join().map_err(|_| candle_core::Error::Msg("a loader thread failed".into()))??);
            }
            candle_core::Result::Ok((layers, embeddings, output))
        })?;
        let norm = tensor(&mut std::fs::File::open(file)?, "output_norm.weight")?.dequantize(&device)?.to_vec1()?;
        let head_dim = shape.hidden / shape.heads;
        let theta: Vec<f32> =
            (0..head_dim).step_by(2).map(|i| 1.0 / shape.rope_base.powf(i as f32 / head_dim as f32)).collect();
        let theta = Tensor::new(theta.as_slice(), &device)?;
        let positions = Tensor::arange(0, shape.context as u32, &device)?.to_dtype(DType::F32)?;
        let angles = positions.reshape((shape.context, 1))?.matmul(&theta.reshape((1, head_dim / 2))?)?;
        let (cos, sin) = (angles.cos()?.flatten_all()?.to_vec1()?, angles.sin()?.flatten_all()?.to_vec1()?);
        Ok(Llama {
            shape,
            embeddings,
            caches: layers.iter().map(|_| Cache::default()).collect(),
            layers,
            threads: crate::process::chat_threads(),
            norm,
            output,
            cos,
            sin,
        })
    }

    /// Splits the one-token step's products over `threads` (at least 1) from now on; the
    /// default is [`process::chat_threads`](crate::process). For benchmarks and tests.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The model's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The output embeddings.
    fn output(&self) -> &Q8 {
        self.output.as_ref().unwrap_or(&self.embeddings)
    }

    /// Forgets the conversation held in the cache.
    pub fn reset(&mut self) {
        for c in &mut self.caches {
            *c = Cache::default();
        }
    }

    /// Runs `ids` (the next tokens, at position `pos` of the conversation) and returns the
    /// logits of the last one.
    pub fn forward(&mut self, ids: &[u32], pos: usize) -> candle_core::Result<Tensor> {
        if let ([id], true) = (ids, self.layers.iter().all(Layer::plain)) {
            let logits = self.step(*id, pos)?;
            let n = logits.len();
            return Tensor::from_vec(logits, n, &Device::Cpu);
        }
        self.forward_tensors(ids, pos)
    }

    /// [`Llama::forward`] on candle tensors whatever the input (the path a prompt takes; for
    /// one token it uses the same int8 products as the one-token step, which the tests compare).
    #[doc(hidden)]
    pub fn forward_tensors(&mut self, ids: &[u32], pos: usize) -> candle_core::Result<Tensor> {
        let x = self.hidden(ids, pos)?;
        let n = ids.len();
        let last = x.i((.., n - 1..n, ..))?;
        let last = candle_nn::ops::rms_norm(&last, &vector(&self.norm)?, self.shape.eps as f32)?;
        q8_forward(self.output(), &last)?.flatten_all()
    }

    /// Runs `ids` from the start of a conversation and returns the logits after every token,
    /// `(n, vocabulary)`.
    pub fn forward_all(&mut self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let x = self.hidden(ids, 0)?;
        let x = candle_nn::ops::rms_norm(&x, &vector(&self.norm)?, self.shape.eps as f32)?;
        q8_forward(self.output(), &x)?.squeeze(0)
    }

    /// One token at position `pos` → the logits: the same computation as [`Llama::hidden`] on
    /// plain vectors (no tensor bookkeeping per operation, which cost more than the products
    /// themselves at this model's size), the products on [`Q8`]. Each product's rows are split
    /// into one share per thread ([`Q8::parts`]); helper threads know the products' order, wait
    /// (spinning — a share takes microseconds, a sleeping thread longer to wake) for each input,
    /// claim their share unless this thread already did, and hand it back.
    fn step(&mut self, id: u32, pos: usize) -> candle_core::Result<Vec<f32>> {
        let s = self.shape;
        if pos + 1 > s.context {
            return Err(candle_core::Error::Msg(format!(
                "the conversation is longer than the model's {} tokens",
                s.context
            )));
        }
        let x = self.embedding(id)?;
        let products: Vec<&Q8> = self
            .layers
            .iter()
            .flat_map(|l| [&l.qkv.q8, &l.o.q8, &l.gate_up.q8, &l.down.q8])
            .chain([self.output.as_ref().unwrap_or(&self.embeddings)])
            .collect();
        let shares = &Shares::new(&products, self.threads);
        let (norms, caches) = (Norms { layers: &self.layers, last: &self.norm }, &mut self.caches);
        let (cos_v, sin_v) = (&self.cos, &self.sin);
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..self.threads).map(|h| scope.spawn(move || shares.help(h))).collect();
            let mut next = 0;
            let mut product = |x: &[f32]| -> candle_core::Result<Vec<f32>> {
                next += 1;
                shares.product(next - 1, x, &helpers)
            };
            let out = token(s, pos, x, &norms, caches, (cos_v, sin_v), &mut product);
            shares.stop.store(true, Ordering::Release);
            out
        })
    }

    /// Token `id`'s embedding.
    fn embedding(&self, id: u32) -> candle_core::Result<Vec<f32>> {
        self.embeddings
            .row(id as usize)
            .ok_or_else(|| candle_core::Error::Msg(format!("token {id} is outside the model's vocabulary")))
    }

    /// The last block's output for `ids` at position `pos`, `(1, n, hidden)`.
    fn hidden(&mut self, ids: &[u32], pos: usize) -> candle_core::Result<Tensor> {
        let n = ids.len();
        if pos + n > self.shape.context {
            return Err(candle_core::Error::Msg(format!(
                "the conversation is longer than the model's {} tokens",
                self.shape.context
            )));
        }
        let device = Device::Cpu;
        let s = self.shape;
        let head_dim = s.hidden / s.heads;
        let rows = ids.iter().map(|&id| self.embedding(id)).collect::<candle_core::Result<Vec<_>>>()?;
        let mut x = Tensor::from_vec(rows.concat(), (1, n, s.hidden), &device)?;
        let half = head_dim / 2;
        let cos = Tensor::from_slice(&self.cos[pos * half..(pos + n) * half], (n, half), &device)?;
        let sin = Tensor::from_slice(&self.sin[pos * half..(pos + n) * half], (n, half), &device)?;
        let mask = if n > 1 {
            let m: Vec<f32> = (0..n)
                .flat_map(|i| (0..pos + n).map(move |j| if j > pos + i { f32::NEG_INFINITY } else { 0.0 }))
                .collect();
            Some(Tensor::from_vec(m, (n, pos + n), &device)?)
        } else {
            None
        };
        for (l, cache) in self.layers.iter().zip(self.caches.iter_mut()) {
            let h = candle_nn::ops::rms_norm(&x, &vector(&l.attn_norm)?, s.eps as f32)?;
            let qkv = match &l.qkv_bias {
                Some(bias) => l.qkv.forward(&h)?.broadcast_add(&vector(bias)?)?,
                None => l.qkv.forward(&h)?,
            };
            let kv_dim = s.kv_heads * head_dim;
            // (1, n, heads·d) → (1, heads, n, d); for one token that is a reshape, no copy.
            let split = |start: usize, len: usize, heads: usize| {
                let part = qkv.narrow(2, start, len)?;
                if n == 1 {
                    part.reshape((1, heads, 1, head_dim))
                } else {
                    part.reshape((1, n, heads, head_dim))?.transpose(1, 2)?.contiguous()
                }
            };
            let q = split(0, s.hidden, s.heads)?;
            let k = split(s.hidden, kv_dim, s.kv_heads)?;
            let v = split(s.hidden + kv_dim, kv_dim, s.kv_heads)?;
            let rotate = match s.rope {
                Rope::Interleaved => candle_nn::rotary_emb::rope_i,
                Rope::Halves => candle_nn::rotary_emb::rope,
            };
            let (q, k) = (rotate(&q, &cos, &sin)?, rotate(&k, &cos, &sin)?);
            cache.rewind(pos, kv_dim)?;
            // Into the cache position-major, then all positions back as (1, kv_heads, t, d).
            let rows = |t: &Tensor| t.transpose(1, 2)?.flatten_all()?.to_vec1::<f32>();
            cache.k.extend(rows(&k)?);
            cache.v.extend(rows(&v)?);
            let all = |c: &[f32]| {
                Tensor::from_slice(c, (1, pos + n, s.kv_heads, head_dim), &device)?.transpose(1, 2)?.contiguous()
            };
            let (k, v) = (all(&cache.k)?, all(&cache.v)?);
            // Grouped-query attention: each key/value head serves heads / kv_heads query heads.
            let group = s.heads / s.kv_heads;
            let q = q.reshape((s.kv_heads, group * n, head_dim))?;
            let att = (q.matmul(&k.squeeze(0)?.t()?)? / (head_dim as f64).sqrt())?; // (kv, group*n, t)
            let att = match &mask {
                Some(m) => att.reshape((s.kv_heads, group, n, pos + n))?.broadcast_add(m)?.reshape((
                    s.kv_heads,
                    group * n,
                    pos + n,
                ))?,
                None => att,
            };
            let att = candle_nn::ops::softmax_last_dim(&att)?;
            let y = att.matmul(&v.squeeze(0)?)?; // (kv, group*n, head_dim)
            let y = if n == 1 {
                y.reshape((1, 1, s.hidden))?
            } else {
                y.reshape((1, s.heads, n, head_dim))?.transpose(1, 2)?.reshape((1, n, s.hidden))?
            };
            x = (x + l.o.forward(&y)?)?;
            let h = candle_nn::ops::rms_norm(&x, &vector(&l.ffn_norm)?, s.eps as f32)?;
            let gu = l.gate_up.forward(&h)?;
            let inner = gu.dim(2)? / 2;
            let g = candle_nn::ops::silu(&gu.narrow(2, 0, inner)?)?;
            x = (x + l.down.forward(&(g * gu.narrow(2, inner, inner)?)?)?)?;
        }
        Ok(x)
    }
}
