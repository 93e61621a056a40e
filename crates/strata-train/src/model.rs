//! The on-device model for training: the GGUF's weights dequantized to f32 and frozen, with
//! LoRA `A`/`B` pairs (candle `Var`s, the only trainable tensors) on the chosen projections.
//! The llama family's differences are data, as in `strata_models::Llama` (decision 0001):
//! Qwen2's biases on q, k and v, and its rotary embedding over halves of a head.
//!
//! Written out rather than taken from candle's llama because those modules take no adapters,
//! and with the differentiable (slow) forms of RMSNorm, softmax and rotary embeddings: the
//! fused kernels have no backward pass. A frozen projection is a custom op whose backward pass
//! returns only the input's gradient: candle would otherwise compute (and hold) a gradient for
//! every frozen weight too — 1.8× the memory and 1.5× the time.

use std::collections::BTreeMap;
use std::path::Path;

use candle_core::quantized::gguf_file;
use candle_core::{CpuStorage, CustomOp1, D, DType, Device, Layout, Tensor, Var};
use rand::{Rng, SeedableRng};
use strata_core::{Error, Result};
use strata_models::adapter::{Adapter, LoraConfig, Target, rows_gguf_to_hf};
use strata_models::{Llama, Rope, Shape};

pub(crate) fn fail(e: candle_core::Error) -> Error {
    Error::Model(format!("training: {e}"))
}

/// `x · Wᵀ` with `W` frozen: the backward pass gives the input's gradient only.
struct Frozen {
    /// `(out, in)` (its transpose is a strided view: no second copy of the weights).
    w: Tensor,
}

impl CustomOp1 for Frozen {
    fn name(&self) -> &'static str {
        "frozen-linear"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, candle_core::Shape)> {
        let CpuStorage::F32(data) = storage else {
            candle_core::bail!("frozen-linear takes f32");
        };
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("frozen-linear takes a contiguous input");
        };
        let dims = layout.shape().dims();
        let input = *dims.last().unwrap_or(&0);
        let rows = layout.shape().elem_count() / input.max(1);
        let x = Tensor::from_slice(&data[start..end], (rows, input), &Device::Cpu)?;
        let y = x.matmul(&self.w.t()?)?;
        let mut out = dims.to_vec();
        if let Some(last) = out.last_mut() {
            *last = self.w.dim(0)?;
        }
        Ok((CpuStorage::F32(y.flatten_all()?.to_vec1()?), out.into()))
    }

    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad: &Tensor) -> candle_core::Result<Option<Tensor>> {
        let out = self.w.dim(0)?;
        let g = grad.reshape(((), out))?.matmul(&self.w)?;
        Ok(Some(g.reshape(arg.shape())?))
    }
}

fn frozen(w: Tensor) -> candle_core::Result<Frozen> {
    Ok(Frozen { w: w.contiguous()? })
}

fn apply(f: &Frozen, x: &Tensor) -> candle_core::Result<Tensor> {
    // The op's Arc holds a clone of the weight (cheap: tensors are shared).
    x.contiguous()?.apply_op1(Frozen { w: f.w.clone() })
}

/// A LoRA pair on one projection: `A (r, in)` and `B (out, r)`, in the GGUF's row order.
struct Lora {
    a: Var,
    b: Var,
}

struct Block {
    attn_norm: Tensor,
    norm_ffn: Tensor,
    /// Frozen projections in [`Target::ALL`]'s order.
    proj: Vec<Frozen>,
    /// q, k and v's biases, where the model has them (Qwen2).
    qkv_bias: Option<[Tensor; 3]>,
    lora: BTreeMap<Target, Lora>,
}

/// The model being trained.
pub struct TrainModel {
    shape: Shape,
    embeddings: Tensor,
    output: Frozen,
    norm: Tensor,
    blocks: Vec<Block>,
    config: LoraConfig,
    cos: Tensor,
    sin: Tensor,
}

/// Per-step randomness (dropout), from the run's seed.
pub struct Noise {
    rng: rand::rngs::StdRng,
    p: f64,
}

impl Noise {
    /// Dropout with probability `p`, seeded.
    pub fn new(seed: u64, p: f64) -> Noise {
        Noise { rng: rand::rngs::StdRng::seed_from_u64(seed), p }
    }

    fn dropout(&mut self, x: &Tensor) -> candle_core::Result<Tensor> {
        if self.p <= 0.0 {
            return Ok(x.clone());
        }
        let keep = 1.0 / (1.0 - self.p);
        let mask: Vec<f32> =
            (0..x.elem_count()).map(|_| if self.rng.random::<f64>() < self.p { 0.0 } else { keep as f32 }).collect();
        x * Tensor::from_vec(mask, x.shape(), x.device())?
    }
}

/// One batch: token ids padded to the same length, and for each sequence the positions
/// whose next token is scored (the answer's) with those tokens.
pub struct Batch {
    /// `(batch, length)` ids.
    pub ids: Vec<Vec<u32>>,
    /// Per sequence: `(position, next token)` pairs to score.
    pub targets: Vec<Vec<(usize, u32)>>,
}

impl Batch {
    /// Tokens that are scored.
    pub fn scored(&self) -> usize {
        self.targets.iter().map(Vec::len).sum()
    }
}

impl TrainModel {
    /// Loads the model in `file` with fresh adapters (`A` random as PEFT initialises it, `B`
    /// zero, so training starts from the base model exactly).
    pub fn load(file: &Path, config: LoraConfig, seed: u64) -> Result<TrainModel> {
        let shape = Llama::read_shape(file).map_err(fail)?;
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut fresh = BTreeMap::new();
        let mut blocks_lora = Vec::with_capacity(shape.layers);
        for _ in 0..shape.layers {
            fresh.clear();
            for &t in &config.target_modules {
                let (input, output) = t.dims(&shape);
                // Kaiming-uniform with a = √5, as PEFT: bound 1/√in.
                let bound = 1.0 / (input as f64).sqrt();
                let a: Vec<f32> = (0..config.r * input).map(|_| rng.random_range(-bound..bound) as f32).collect();
                let a = Var::from_tensor(&Tensor::from_vec(a, (config.r, input), &Device::Cpu).map_err(fail)?)
                    .map_err(fail)?;
                let b = Var::zeros((output, config.r), DType::F32, &Device::Cpu).map_err(fail)?;
                fresh.insert(t, Lora { a, b });
            }
            blocks_lora.push(std::mem::take(&mut fresh));
        }
        TrainModel::with_lora(file, shape, config, blocks_lora)
    }

    fn with_lora(
        file: &Path,
        shape: Shape,
        config: LoraConfig,
        mut lora: Vec<BTreeMap<Target, Lora>>,
    ) -> Result<TrainModel> {
        let device = Device::Cpu;
        let mut f =
            std::fs::File::open(file).map_err(|e| Error::io(format!("cannot open the model {}", file.display()), e))?;
        let ct = gguf_file::Content::read(&mut f).map_err(|e| fail(e.with_path(file)))?;
        let mut get = |name: &str| -> Result<Tensor> {
            ct.tensor(&mut f, name, &device).and_then(|q| q.dequantize(&device)).map_err(fail)
        };
        let embeddings = get("token_embd.weight")?;
        let output = match get("output.weight") {
            Ok(t) => t,
            Err(_) => embeddings.clone(), // tied
        };
        let norm = get("output_norm.weight")?;
        let names = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"];
        let mut blocks = Vec::with_capacity(shape.layers);
        for (i, lora) in lora.drain(..).enumerate() {
            let proj = names
                .iter()
                .map(|n| get(&format!("blk.{i}.{n}.weight")).and_then(|w| frozen(w).map_err(fail)))
                .collect::<Result<Vec<_>>>()?;
            let mut bias = |n: &str| get(&format!("blk.{i}.attn_{n}.bias")).ok();
            let qkv_bias = match (bias("q"), bias("k"), bias("v")) {
                (Some(q), Some(k), Some(v)) => Some([q, k, v]),
                _ => None,
            };
            blocks.push(Block {
                attn_norm: get(&format!("blk.{i}.attn_norm.weight"))?,
                norm_ffn: get(&format!("blk.{i}.ffn_norm.weight"))?,
                proj,
                qkv_bias,
                lora,
            });
        }
        let head_dim = shape.hidden / shape.heads;
        let theta: Vec<f32> =
            (0..head_dim).step_by(2).map(|i| 1.0 / shape.rope_base.powf(i as f32 / head_dim as f32)).collect();
        let rope = || -> candle_core::Result<(Tensor, Tensor)> {
            let theta = Tensor::new(theta.as_slice(), &device)?;
            let positions = Tensor::arange(0, shape.context as u32, &device)?.to_dtype(DType::F32)?;
            let angles = positions.reshape((shape.context, 1))?.matmul(&theta.reshape((1, head_dim / 2))?)?;
            Ok((angles.cos()?, angles.sin()?))
        };
        let (cos, sin) = rope().map_err(fail)?;
        Ok(TrainModel { shape, embeddings, output: frozen(output).map_err(fail)?, norm, blocks, config, cos, sin })
    }

    /// The model's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The trainable tensors, in a fixed order (layer, then target, A then B).
    pub fn vars(&self) -> Vec<Var> {
        self.blocks.iter().flat_map(|b| b.lora.values()).flat_map(|l| [l.a.clone(), l.b.clone()]).collect()
    }

    /// Trainable parameters.
    pub fn trainable(&self) -> usize {
        self.vars().iter().map(|v| v.elem_count()).sum()
    }

    fn project(&self, block: &Block, t: Target, x: &Tensor, noise: &mut Noise) -> candle_core::Result<Tensor> {
        let idx = Target::ALL.iter().position(|&a| a == t).unwrap_or(0);
        let y = apply(&block.proj[idx], x)?;
        match block.lora.get(&t) {
            Some(l) => {
                let h = noise.dropout(x)?;
                let up = h.broadcast_matmul(&l.a.t()?)?.broadcast_matmul(&l.b.t()?)?;
                y + (up * self.config.scale())?
            }
            None => Ok(y),
        }
    }

    /// The mean cross-entropy of the batch's scored tokens (a scalar that backpropagates to
    /// the adapters).
    pub fn loss(&self, batch: &Batch, noise: &mut Noise) -> candle_core::Result<Tensor> {
        let s = self.shape;
        let (b, n) = (batch.ids.len(), batch.ids.first().map_or(0, Vec::len));
        let device = Device::Cpu;
        let flat: Vec<u32> = batch.ids.iter().flatten().copied().collect();
        let ids = Tensor::from_vec(flat, (b * n,), &device)?;
        let mut x = self.embeddings.index_select(&ids, 0)?.reshape((b, n, s.hidden))?;
        let hd = s.hidden / s.heads;
        let group = s.heads / s.kv_heads;
        let cos = self.cos.narrow(0, 0, n)?;
        let sin = self.sin.narrow(0, 0, n)?;
        let mask: Vec<f32> =
            (0..n).flat_map(|i| (0..n).map(move |j| if j > i { f32::NEG_INFINITY } else { 0.0 })).collect();
        let mask = Tensor::from_vec(mask, (n, n), &device)?;
        for block in &self.blocks {
            let h = candle_nn::ops::rms_norm_slow(&x, &block.attn_norm, s.eps as f32)?;
            let heads = |y: Tensor, count: usize| y.reshape((b, n, count, hd))?.transpose(1, 2)?.contiguous();
            let mut biased = |t: Target, i: usize| -> candle_core::Result<Tensor> {
                let y = self.project(block, t, &h, &mut *noise)?;
                match &block.qkv_bias {
                    Some(b) => y.broadcast_add(&b[i]),
                    None => Ok(y),
                }
            };
            let q = heads(biased(Target::Q, 0)?, s.heads)?;
            let k = heads(biased(Target::K, 1)?, s.kv_heads)?;
            let v = heads(biased(Target::V, 2)?, s.kv_heads)?;
            let rope = match s.rope {
                Rope::Interleaved => candle_nn::rotary_emb::rope_i_slow,
                Rope::Halves => candle_nn::rotary_emb::rope_slow,
            };
            let q = rope(&q, &cos, &sin)?;
            let k = rope(&k, &cos, &sin)?;
            let repeat = |t: Tensor| -> candle_core::Result<Tensor> {
                if group == 1 {
                    return Ok(t);
                }
                t.unsqueeze(2)?.expand((b, s.kv_heads, group, n, hd))?.reshape((b, s.heads, n, hd))
            };
            let (k, v) = (repeat(k)?, repeat(v)?);
            let att = (q.matmul(&k.t()?.contiguous()?)? / (hd as f64).sqrt())?.broadcast_add(&mask)?;
            let att = candle_nn::ops::softmax(&att, D::Minus1)?;
            let y = att.matmul(&v)?.transpose(1, 2)?.reshape((b, n, s.hidden))?;
            x = (x + self.project(block, Target::O, &y, noise)?)?;
            let h = candle_nn::ops::rms_norm_slow(&x, &block.norm_ffn, s.eps as f32)?;
            let g = self.project(block, Target::Gate, &h, noise)?.silu()?;
            let u = self.project(block, Target::Up, &h, noise)?;
            x = (x + self.project(block, Target::Down, &(g * u)?, noise)?)?;
        }
        // Only the scored positions reach the (large) output projection.
        let (mut rows, mut next) = (Vec::new(), Vec::new());
        for (i, t) in batch.targets.iter().enumerate() {
            for &(pos, id) in t {
                rows.push((i * n + pos) as u32);
                next.push(id);
            }
        }
        let count = rows.len();
        let rows = Tensor::from_vec(rows, (count,), &device)?;
        let x = x.reshape((b * n, s.hidden))?.index_select(&rows, 0)?;
        let x = candle_nn::ops::rms_norm_slow(&x, &self.norm, s.eps as f32)?;
        let logits = apply(&self.output, &x)?;
        candle_nn::loss::cross_entropy(&logits, &Tensor::from_vec(next, (count,), &device)?)
    }

    /// The adapter as trained, in PEFT's layout (llama's q and k rows back in Hugging Face's
    /// order).
    pub fn adapter(&self) -> Result<Adapter> {
        let s = self.shape;
        let layers = self
            .blocks
            .iter()
            .map(|block| {
                block
                    .lora
                    .iter()
                    .map(|(&t, l)| {
                        let a = l.a.as_tensor().copy()?;
                        let b = l.b.as_tensor().copy()?;
                        // Only llama's q and k rows are stored permuted (Qwen2's are not).
                        let b = match (t, s.rope) {
                            (Target::Q, Rope::Interleaved) => rows_gguf_to_hf(&b, s.heads)?,
                            (Target::K, Rope::Interleaved) => rows_gguf_to_hf(&b, s.kv_heads)?,
                            _ => b,
                        };
                        Ok((t, (a, b)))
                    })
                    .collect::<candle_core::Result<BTreeMap<_, _>>>()
            })
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(fail)?;
        Ok(Adapter { config: self.config.clone(), layers })
    }

    /// Sets the adapters' values (resuming from a checkpoint): tensors in [`TrainModel::vars`]'s
    /// order.
    pub fn set_vars(&self, values: &[Tensor]) -> Result<()> {
        let vars = self.vars();
        if vars.len() != values.len() {
            return Err(Error::invalid(format!(
                "the checkpoint holds {} tensors, this adapter has {}",
                values.len(),
                vars.len()
            )));
        }
        for (v, t) in vars.iter().zip(values) {
            if v.dims() != t.dims() {
                return Err(Error::invalid("the checkpoint's tensors do not fit this adapter (changed settings?)"));
            }
            v.set(t).map_err(fail)?;
        }
        Ok(())
    }
}
