//! LoRA adapters for the on-device chat model, in the layout Hugging Face PEFT uses for a
//! Llama model (`adapter_model.safetensors` + `adapter_config.json`), so an adapter trained
//! here loads in PEFT too and one trained there loads here.
//!
//! PEFT stores `lora_A` as `(rank, in)` and `lora_B` as `(out, rank)` under
//! `base_model.model.model.layers.{i}.{self_attn|mlp}.{q_proj…}`. The GGUF file stores the q and k
//! projections with their rows permuted for interleaved rotary embeddings: [`Adapter`] holds
//! PEFT's (Hugging Face) row order and [`Adapter::delta`] gives a `lora_B` in the GGUF order.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use serde::{Deserialize, Serialize};
use strata_core::{Error, Result};

/// The adapter's weights file.
pub const WEIGHTS_FILE: &str = "adapter_model.safetensors";
/// The adapter's configuration file.
pub const CONFIG_FILE: &str = "adapter_config.json";

/// A projection of a Llama block that may carry an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Attention query.
    #[serde(rename = "q_proj")]
    Q,
    /// Attention key.
    #[serde(rename = "k_proj")]
    K,
    /// Attention value.
    #[serde(rename = "v_proj")]
    V,
    /// Attention output.
    #[serde(rename = "o_proj")]
    O,
    /// MLP gate.
    #[serde(rename = "gate_proj")]
    Gate,
    /// MLP up.
    #[serde(rename = "up_proj")]
    Up,
    /// MLP down.
    #[serde(rename = "down_proj")]
    Down,
}

impl Target {
    /// Every target, in the block's order.
    pub const ALL: [Target; 7] = [Target::Q, Target::K, Target::V, Target::O, Target::Gate, Target::Up, Target::Down];

    /// PEFT's module name (`q_proj`…).
    pub fn module(self) -> &'static str {
        match self {
            Target::Q => "q_proj",
            Target::K => "k_proj",
            Target::V => "v_proj",
            Target::O => "o_proj",
            Target::Gate => "gate_proj",
            Target::Up => "up_proj",
            Target::Down => "down_proj",
        }
    }

    /// The block part holding it (`self_attn` or `mlp`).
    pub fn part(self) -> &'static str {
        match self {
            Target::Q | Target::K | Target::V | Target::O => "self_attn",
            Target::Gate | Target::Up | Target::Down => "mlp",
        }
    }

    /// Parses PEFT's module name or its short form (`q`, `mlp` is not a target).
    pub fn parse(s: &str) -> Result<Target> {
        let s = s.trim();
        Target::ALL.into_iter().find(|t| t.module() == s || t.module().trim_end_matches("_proj") == s).ok_or_else(
            || {
                Error::invalid(format!(
                    "'{s}' is not a projection; use q, k, v, o, gate, up or down (or their _proj names)"
                ))
            },
        )
    }

    /// `(in, out)` of this projection for a model shape.
    pub fn dims(self, s: &crate::Shape) -> (usize, usize) {
        let kv = s.kv_heads * (s.hidden / s.heads);
        match self {
            Target::Q | Target::O => (s.hidden, s.hidden),
            Target::K | Target::V => (s.hidden, kv),
            Target::Gate | Target::Up => (s.hidden, s.mlp),
            Target::Down => (s.mlp, s.hidden),
        }
    }
}

/// An adapter's hyperparameters, written as PEFT's `adapter_config.json` (with its fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoraConfig {
    /// `peft_type`: always `LORA`.
    pub peft_type: String,
    /// `task_type`: `CAUSAL_LM`.
    pub task_type: String,
    /// The base model's name.
    pub base_model_name_or_path: String,
    /// The rank of A and B.
    pub r: usize,
    /// The scale numerator: the update is `alpha / r · B A`.
    pub lora_alpha: f64,
    /// Dropout on the adapter's input while training.
    pub lora_dropout: f64,
    /// The projections adapted.
    pub target_modules: Vec<Target>,
    /// `bias`: `none`.
    pub bias: String,
    /// `fan_in_fan_out`: false for Llama's linear layers.
    pub fan_in_fan_out: bool,
    /// `inference_mode`.
    pub inference_mode: bool,
    /// `use_rslora`: false (the scale is alpha / r).
    #[serde(default)]
    pub use_rslora: bool,
}

impl LoraConfig {
    /// A configuration for `base` with these hyperparameters.
    pub fn new(base: &str, r: usize, alpha: f64, dropout: f64, targets: Vec<Target>) -> Result<LoraConfig> {
        if r == 0 || r > 256 {
            return Err(Error::invalid(format!("a LoRA rank of {r} makes no sense; use 1 to 256 (8 is usual)")));
        }
        if !(0.0..1.0).contains(&dropout) {
            return Err(Error::invalid(format!("a dropout of {dropout} makes no sense; use 0 to below 1")));
        }
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(Error::invalid("the LoRA alpha must be a positive number"));
        }
        if targets.is_empty() {
            return Err(Error::invalid("an adapter needs at least one target projection"));
        }
        let mut targets = targets;
        targets.sort();
        targets.dedup();
        Ok(LoraConfig {
            peft_type: "LORA".into(),
            task_type: "CAUSAL_LM".into(),
            base_model_name_or_path: base.into(),
            r,
            lora_alpha: alpha,
            lora_dropout: dropout,
            target_modules: targets,
            bias: "none".into(),
            fan_in_fan_out: false,
            inference_mode: true,
            use_rslora: false,
        })
    }

    /// `alpha / r`.
    pub fn scale(&self) -> f64 {
        self.lora_alpha / self.r as f64
    }
}

/// A LoRA adapter: per layer, per target, `A (r, in)` and `B (out, r)` in PEFT's row order.
#[derive(Debug, Clone)]
pub struct Adapter {
    /// Its hyperparameters.
    pub config: LoraConfig,
    /// Per block: the adapted projections.
    pub layers: Vec<BTreeMap<Target, (Tensor, Tensor)>>,
}

/// PEFT's tensor name for one of A or B.
pub fn tensor_name(layer: usize, target: Target, which: char) -> String {
    format!("base_model.model.model.layers.{layer}.{}.{}.lora_{which}.weight", target.part(), target.module())
}

/// Rows of a q or k projection from GGUF's interleaved order to Hugging Face's halves.
/// `t` is `(heads·head_dim, …)`.
pub fn rows_gguf_to_hf(t: &Tensor, heads: usize) -> candle_core::Result<Tensor> {
    let (out, rest) = t.dims2()?;
    let d = out / heads;
    t.reshape((heads, d / 2, 2, rest))?.transpose(1, 2)?.reshape((out, rest))
}

/// The inverse of [`rows_gguf_to_hf`].
pub fn rows_hf_to_gguf(t: &Tensor, heads: usize) -> candle_core::Result<Tensor> {
    let (out, rest) = t.dims2()?;
    let d = out / heads;
    t.reshape((heads, 2, d / 2, rest))?.transpose(1, 2)?.reshape((out, rest))
}

fn bad(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::Model(format!("the adapter in {}: {e}", dir.display()))
}

impl Adapter {
    /// Writes the adapter into `dir` (created if needed), each file whole
    /// ([`strata_core::files::write_whole`]): a crash never leaves half a file.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let mut tensors = HashMap::new();
        for (i, layer) in self.layers.iter().enumerate() {
            for (t, (a, b)) in layer {
                tensors.insert(tensor_name(i, *t, 'A'), a.to_dtype(DType::F32).map_err(|e| bad(dir, e))?);
                tensors.insert(tensor_name(i, *t, 'B'), b.to_dtype(DType::F32).map_err(|e| bad(dir, e))?);
            }
        }
        let weights = safetensors::serialize(&tensors, None).map_err(|e| bad(dir, e))?;
        strata_core::files::write_bytes(&dir.join(WEIGHTS_FILE), &weights)?;
        let config = serde_json::to_vec_pretty(&self.config).map_err(|e| bad(dir, e))?;
        strata_core::files::write_bytes(&dir.join(CONFIG_FILE), &config)?;
        Ok(())
    }

    /// Reads an adapter from `dir` and checks it against the model's shape: every target of
    /// every layer present with the right dimensions.
    pub fn load(dir: &Path, shape: &crate::Shape) -> Result<Adapter> {
        let text = std::fs::read_to_string(dir.join(CONFIG_FILE))
            .map_err(|e| Error::io(format!("cannot read the adapter's {CONFIG_FILE} in {}", dir.display()), e))?;
        let config: LoraConfig = serde_json::from_str(&text).map_err(|e| bad(dir, format!("{CONFIG_FILE}: {e}")))?;
        if config.peft_type != "LORA" || config.use_rslora || config.fan_in_fan_out {
            return Err(bad(dir, "only plain LoRA adapters (no rsLoRA, no fan-in-fan-out) are supported"));
        }
        let mut tensors = candle_core::safetensors::load(dir.join(WEIGHTS_FILE), &Device::Cpu)
            .map_err(|e| bad(dir, format!("{WEIGHTS_FILE}: {e}")))?;
        let mut layers = Vec::with_capacity(shape.layers);
        for i in 0..shape.layers {
            let mut layer = BTreeMap::new();
            for &t in &config.target_modules {
                let (input, output) = t.dims(shape);
                let mut take = |which: char, want: (usize, usize)| -> Result<Tensor> {
                    let name = tensor_name(i, t, which);
                    let x = tensors.remove(&name).ok_or_else(|| bad(dir, format!("it has no {name}")))?;
                    let x = x.to_dtype(DType::F32).map_err(|e| bad(dir, e))?;
                    if x.dims() != [want.0, want.1] {
                        return Err(bad(
                            dir,
                            format!("{name} is {:?}, the model needs [{}, {}]", x.dims(), want.0, want.1),
                        ));
                    }
                    Ok(x)
                };
                let a = take('A', (config.r, input))?;
                let b = take('B', (output, config.r))?;
                layer.insert(t, (a, b));
            }
            layers.push(layer);
        }
        if let Some(extra) = tensors.keys().next() {
            return Err(bad(dir, format!("it holds {extra}, which this model does not have")));
        }
        Ok(Adapter { config, layers })
    }

    /// The weight update of one projection, `scale · B A` as `(A (r, in), scale · B (out, r))`
    /// with B's rows in the GGUF file's order; `None` where the projection is not adapted.
    pub fn delta(&self, layer: usize, target: Target, shape: &crate::Shape) -> Result<Option<(Tensor, Tensor)>> {
        let Some((a, b)) = self.layers.get(layer).and_then(|l| l.get(&target)) else {
            return Ok(None);
        };
        let fail = |e: candle_core::Error| Error::Model(format!("the adapter: {e}"));
        // Llama files store q and k's rows permuted for interleaved rotation; Qwen2's are as
        // trained, like the adapter's.
        let b = match (target, shape.rope) {
            (Target::Q, crate::Rope::Interleaved) => rows_hf_to_gguf(b, shape.heads).map_err(fail)?,
            (Target::K, crate::Rope::Interleaved) => rows_hf_to_gguf(b, shape.kv_heads).map_err(fail)?,
            _ => b.clone(),
        };
        Ok(Some((a.clone(), (b * self.config.scale()).map_err(fail)?)))
    }

    /// The adapter's size on disk, near enough: its f32 parameters.
    pub fn parameters(&self) -> usize {
        self.layers.iter().flat_map(|l| l.values()).map(|(a, b)| a.elem_count() + b.elem_count()).sum()
    }
}
