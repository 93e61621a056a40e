//! A llama-architecture decoder (SmolLM2) over the weights of a GGUF file: RMSNorm, rotary
//! embeddings (interleaved, as GGUF stores q and k), grouped-query attention with a key/value
//! cache, a SwiGLU MLP and tied output embeddings. The shipped Q4_1 weights are re-quantized
//! to Q8_0 at load: candle has only a scalar kernel for Q4_1, and a fast one for Q8_0.

use std::io::{Read, Seek};
use std::path::Path;

use candle_core::quantized::{GgmlDType, QMatMul, QTensor, gguf_file};
use candle_core::{DType, Device, IndexOp, Module, Tensor};

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
    /// Longest context.
    pub context: usize,
}

struct Layer {
    attn_norm: Tensor,
    q: QMatMul,
    k: QMatMul,
    v: QMatMul,
    o: QMatMul,
    ffn_norm: Tensor,
    gate: QMatMul,
    up: QMatMul,
    down: QMatMul,
    cache: Option<(Tensor, Tensor)>,
}

/// The model, with its key/value cache (one conversation at a time).
pub struct Llama {
    shape: Shape,
    embeddings: Tensor,
    layers: Vec<Layer>,
    norm: Tensor,
    output: QMatMul,
    cos: Tensor,
    sin: Tensor,
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

/// A weight as a fast matrix product: Q8_0 (re-quantized from whatever the file holds unless
/// it already is Q8_0).
fn q8(t: QTensor, device: &Device) -> candle_core::Result<QMatMul> {
    let t = if t.dtype() == GgmlDType::Q8_0 { t } else { QTensor::quantize(&t.dequantize(device)?, GgmlDType::Q8_0)? };
    QMatMul::from_qtensor(t)
}

impl Llama {
    /// Loads the model in `file`.
    pub fn load(file: &Path) -> candle_core::Result<Llama> {
        let mut f = std::fs::File::open(file)?;
        let ct = gguf_file::Content::read(&mut f).map_err(|e| e.with_path(file))?;
        Llama::from_gguf(&ct, &mut f)
    }

    fn from_gguf<R: Read + Seek>(ct: &gguf_file::Content, r: &mut R) -> candle_core::Result<Llama> {
        let device = Device::Cpu;
        let arch =
            ct.metadata.get("general.architecture").and_then(|v| v.to_string().ok()).cloned().unwrap_or_default();
        if arch != "llama" {
            return Err(candle_core::Error::Msg(format!("a '{arch}' model; only llama models run on this device")));
        }
        let shape = Shape {
            layers: meta_u(ct, "llama.block_count")?,
            hidden: meta_u(ct, "llama.embedding_length")?,
            heads: meta_u(ct, "llama.attention.head_count")?,
            kv_heads: meta_u(ct, "llama.attention.head_count_kv")?,
            eps: meta_f(ct, "llama.attention.layer_norm_rms_epsilon", 1e-5) as f64,
            rope_base: meta_f(ct, "llama.rope.freq_base", 10_000.0),
            context: meta_u(ct, "llama.context_length").unwrap_or(2048).min(8192),
        };
        let mut tensor = |name: &str| ct.tensor(r, name, &device);
        let embedding_q = tensor("token_embd.weight")?;
        let embeddings = embedding_q.dequantize(&device)?;
        let output = match tensor("output.weight") {
            Ok(t) => q8(t, &device)?,
            Err(_) => q8(embedding_q, &device)?, // tied
        };
        let norm = tensor("output_norm.weight")?.dequantize(&device)?;
        let mut layers = Vec::with_capacity(shape.layers);
        for i in 0..shape.layers {
            let mut w = |n: &str| tensor(&format!("blk.{i}.{n}.weight"));
            layers.push(Layer {
                attn_norm: w("attn_norm")?.dequantize(&device)?,
                q: q8(w("attn_q")?, &device)?,
                k: q8(w("attn_k")?, &device)?,
                v: q8(w("attn_v")?, &device)?,
                o: q8(w("attn_output")?, &device)?,
                ffn_norm: w("ffn_norm")?.dequantize(&device)?,
                gate: q8(w("ffn_gate")?, &device)?,
                up: q8(w("ffn_up")?, &device)?,
                down: q8(w("ffn_down")?, &device)?,
                cache: None,
            });
        }
        let head_dim = shape.hidden / shape.heads;
        let theta: Vec<f32> =
            (0..head_dim).step_by(2).map(|i| 1.0 / shape.rope_base.powf(i as f32 / head_dim as f32)).collect();
        let theta = Tensor::new(theta.as_slice(), &device)?;
        let positions = Tensor::arange(0, shape.context as u32, &device)?.to_dtype(DType::F32)?;
        let angles = positions.reshape((shape.context, 1))?.matmul(&theta.reshape((1, head_dim / 2))?)?;
        Ok(Llama { shape, embeddings, layers, norm, output, cos: angles.cos()?, sin: angles.sin()? })
    }

    /// The model's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Forgets the conversation held in the cache.
    pub fn reset(&mut self) {
        for l in &mut self.layers {
            l.cache = None;
        }
    }

    /// Runs `ids` (the next tokens, at position `pos` of the conversation) and returns the
    /// logits of the last one.
    pub fn forward(&mut self, ids: &[u32], pos: usize) -> candle_core::Result<Tensor> {
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
        let ids_t = Tensor::new(ids, &device)?;
        let mut x = self.embeddings.index_select(&ids_t, 0)?.unsqueeze(0)?; // (1, n, hidden)
        let cos = self.cos.narrow(0, pos, n)?;
        let sin = self.sin.narrow(0, pos, n)?;
        let mask = if n > 1 {
            let m: Vec<f32> = (0..n)
                .flat_map(|i| (0..pos + n).map(move |j| if j > pos + i { f32::NEG_INFINITY } else { 0.0 }))
                .collect();
            Some(Tensor::from_vec(m, (n, pos + n), &device)?)
        } else {
            None
        };
        for l in &mut self.layers {
            let h = candle_nn::ops::rms_norm(&x, &l.attn_norm, s.eps as f32)?;
            let q = l.q.forward(&h)?.reshape((1, n, s.heads, head_dim))?.transpose(1, 2)?.contiguous()?;
            let k = l.k.forward(&h)?.reshape((1, n, s.kv_heads, head_dim))?.transpose(1, 2)?.contiguous()?;
            let v = l.v.forward(&h)?.reshape((1, n, s.kv_heads, head_dim))?.transpose(1, 2)?.contiguous()?;
            let q = candle_nn::rotary_emb::rope_i(&q, &cos, &sin)?;
            let k = candle_nn::rotary_emb::rope_i(&k, &cos, &sin)?;
            let (k, v) = match (&l.cache, pos) {
                (Some((kc, vc)), p) if p > 0 => (Tensor::cat(&[kc, &k], 2)?, Tensor::cat(&[vc, &v], 2)?),
                _ => (k, v),
            };
            l.cache = Some((k.clone(), v.clone()));
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
            let y = att.matmul(&v.squeeze(0)?.contiguous()?)?; // (kv, group*n, head_dim)
            let y = y.reshape((1, s.heads, n, head_dim))?.transpose(1, 2)?.reshape((1, n, s.hidden))?;
            x = (x + l.o.forward(&y)?)?;
            let h = candle_nn::ops::rms_norm(&x, &l.ffn_norm, s.eps as f32)?;
            let g = candle_nn::ops::silu(&l.gate.forward(&h)?)?;
            x = (x + l.down.forward(&(g * l.up.forward(&h)?)?)?)?;
        }
        let last = x.i((.., n - 1..n, ..))?;
        let last = candle_nn::ops::rms_norm(&last, &self.norm, s.eps as f32)?;
        self.output.forward(&last)?.flatten_all()
    }
}
