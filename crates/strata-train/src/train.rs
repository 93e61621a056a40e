//! A training run as a job: shuffled micro-batches, grouped by length, with gradient
//! accumulation, progress after
//! each optimizer step (step, loss, tokens/s, time left), cancellation between micro-batches,
//! and a checkpoint (adapters and optimizer moments) every few steps and on cancel, from which
//! a killed run resumes. The data order and the dropout noise derive from the seed and the
//! step, so a resumed run is the run that was interrupted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use candle_core::{Device, Tensor};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use strata_core::{Error, Result};
use strata_models::adapter::{Adapter, LoraConfig, Target};

use crate::model::{Batch, Noise, TrainModel, fail};
use crate::optim::{AdamW, AdamWConfig};

/// A run's hyperparameters (stored with the adapter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The on-device model the adapter is for (its file's stem, as adapters record their base);
    /// set by the run from the model it trains. None in runs recorded before: their model is
    /// [`strata_models::training_pin`]'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// LoRA rank.
    pub rank: usize,
    /// LoRA alpha (the update is scaled by alpha / rank).
    pub alpha: f64,
    /// Dropout on the adapters' input.
    pub dropout: f64,
    /// The adapted projections.
    pub targets: Vec<Target>,
    /// Peak learning rate.
    pub lr: f64,
    /// Passes over the training examples.
    pub epochs: usize,
    /// Examples per micro-batch.
    pub batch: usize,
    /// Micro-batches per optimizer step.
    pub accumulate: usize,
    /// Warm-up, as a share of the optimizer steps.
    pub warmup: f64,
    /// Largest gradient norm.
    pub clip: f64,
    /// AdamW's weight decay.
    pub weight_decay: f64,
    /// Seed of the adapters' start, the data order and the dropout.
    pub seed: u64,
    /// Longest example in tokens (longer ones are left out and reported).
    pub max_tokens: usize,
    /// General questions, answered by the base model itself, mixed into training (replay);
    /// above 0, general prose paragraphs too.
    pub replay: usize,
    /// Optimizer steps between checkpoints.
    pub checkpoint_every: usize,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            base: None,
            rank: 8,
            alpha: 16.0,
            dropout: 0.05,
            targets: vec![Target::Q, Target::K, Target::V, Target::O],
            lr: 1.5e-3,
            epochs: 3,
            batch: 8,
            accumulate: 1,
            warmup: 0.1,
            clip: 1.0,
            weight_decay: 0.0,
            seed: 7,
            max_tokens: 128,
            replay: 16,
            checkpoint_every: 10,
        }
    }
}

impl TrainConfig {
    /// The adapter's PEFT configuration.
    pub fn lora(&self, base: &str) -> Result<LoraConfig> {
        LoraConfig::new(base, self.rank, self.alpha, self.dropout, self.targets.clone())
    }

    /// Checks the settings make sense.
    pub fn check(&self) -> Result<()> {
        self.lora("check")?;
        if self.epochs == 0 || self.batch == 0 || self.accumulate == 0 {
            return Err(Error::invalid("epochs, batch and accumulation must each be at least 1"));
        }
        if !(self.lr.is_finite() && self.lr > 0.0 && self.lr < 1.0) {
            return Err(Error::invalid(format!("a learning rate of {} makes no sense; try 1e-4 to 5e-3", self.lr)));
        }
        if !(0.0..1.0).contains(&self.warmup) {
            return Err(Error::invalid("warm-up is a share of the steps, from 0 to below 1"));
        }
        if self.max_tokens < 16 || self.max_tokens > 2048 {
            return Err(Error::invalid("the longest example must be 16 to 2048 tokens"));
        }
        Ok(())
    }
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Progress {
    /// Optimizer steps done.
    pub step: usize,
    /// Optimizer steps in all.
    pub steps: usize,
    /// The last step's mean loss on the answer tokens.
    pub loss: f32,
    /// Training tokens (whole sequences) per second so far.
    pub tokens_per_s: f64,
    /// Estimated seconds left.
    pub eta_s: f64,
}

impl std::fmt::Display for Progress {
    /// One line: step, loss, speed and time left.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {}/{}  loss {:.3}  {:.0} tokens/s  {:.0} s left",
            self.step, self.steps, self.loss, self.tokens_per_s, self.eta_s
        )
    }
}

/// One tokenized example: its ids and where the answer starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokenized {
    /// Template ids of question and answer.
    pub ids: Vec<u32>,
    /// First id of the answer.
    pub start: usize,
}

/// What a finished run gives.
#[derive(Debug, Clone)]
pub struct Trained {
    /// The adapter.
    pub adapter: Adapter,
    /// Loss per optimizer step.
    pub losses: Vec<f32>,
    /// Sequence tokens processed (this run, after any resume).
    pub tokens: usize,
    /// Seconds spent (this run).
    pub seconds: f64,
    /// The step it resumed from (0: a fresh start).
    pub resumed_from: usize,
}

const STATE: &str = "checkpoint.safetensors";
const STATE_META: &str = "checkpoint.json";

#[derive(Serialize, Deserialize)]
struct CheckpointMeta {
    step: usize,
    micro: usize,
    config: TrainConfig,
    examples: usize,
    losses: Vec<f32>,
}

/// Micro-batches per group sorted by length (see [`schedule`]).
const GROUP: usize = 4;

/// Micro-batches of example indices, epoch by epoch, in the seed's order, grouped by length:
/// each run of [`GROUP`] micro-batches of the shuffled order is sorted by length before it is
/// cut, and its micro-batches are shuffled again, so long examples (replay answers, prose)
/// share micro-batches instead of padding short ones to their length. A micro-batch costs
/// about its rows times its longest example; on the example set this is a third fewer tokens.
fn schedule(lengths: &[usize], config: &TrainConfig) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for epoch in 0..config.epochs {
        let mut rng = rand::rngs::StdRng::seed_from_u64(config.seed.wrapping_add(1 + epoch as u64));
        let mut order: Vec<usize> = (0..lengths.len()).collect();
        order.shuffle(&mut rng);
        for group in order.chunks_mut(config.batch * GROUP) {
            group.sort_by_key(|&i| lengths[i]); // stable: equal lengths keep the shuffled order
            let mut batches: Vec<Vec<usize>> = group.chunks(config.batch).map(<[usize]>::to_vec).collect();
            batches.shuffle(&mut rng);
            out.extend(batches);
        }
    }
    out
}

fn batch_of(examples: &[Tokenized], which: &[usize], pad: u32) -> Batch {
    let len = which.iter().map(|&i| examples[i].ids.len()).max().unwrap_or(0);
    let mut ids = Vec::with_capacity(which.len());
    let mut targets = Vec::with_capacity(which.len());
    for &i in which {
        let e = &examples[i];
        let mut row = e.ids.clone();
        row.resize(len, pad);
        targets.push((e.start.max(1) - 1..e.ids.len() - 1).map(|p| (p, e.ids[p + 1])).collect());
        ids.push(row);
    }
    Batch { ids, targets }
}

/// The model file, the checkpoint folder, and what to train on.
pub struct Run<'a> {
    /// The GGUF base model.
    pub model: &'a Path,
    /// Its name (for the adapter's config).
    pub base_name: &'a str,
    /// The training examples, tokenized.
    pub examples: &'a [Tokenized],
    /// The id padding sequences.
    pub pad: u32,
    /// The hyperparameters.
    pub config: &'a TrainConfig,
    /// Where checkpoints go (resumed from when one is there for the same settings).
    pub checkpoints: PathBuf,
}

impl Run<'_> {
    /// Trains, calling `progress` after each optimizer step; `cancel` stops it between
    /// micro-batches with a checkpoint saved ([`Error::Cancelled`]).
    pub fn train(&self, progress: &mut dyn FnMut(&Progress), cancel: &AtomicBool) -> Result<Trained> {
        let c = self.config;
        c.check()?;
        if self.examples.is_empty() {
            return Err(Error::invalid("the training set has no examples to train on"));
        }
        let lora = c.lora(self.base_name)?;
        let model = TrainModel::load(self.model, lora, c.seed)?;
        let lengths: Vec<usize> = self.examples.iter().map(|e| e.ids.len()).collect();
        let plan = schedule(&lengths, c);
        let steps = plan.len().div_ceil(c.accumulate);
        let warmup = ((steps as f64) * c.warmup).ceil() as usize;
        let mut opt = AdamW::new(
            model.vars(),
            AdamWConfig {
                lr: c.lr,
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
                weight_decay: c.weight_decay,
                warmup: warmup.max(1),
                total: steps,
                clip: c.clip,
            },
        )
        .map_err(fail)?;
        let mut losses = Vec::new();
        let mut done_micro = 0;
        if let Some(meta) = self.resume(&model, &mut opt)? {
            done_micro = meta.micro;
            losses = meta.losses;
        }
        let resumed_from = opt.step;
        let started = Instant::now();
        let mut tokens = 0usize;
        let mut grads: Option<Vec<Tensor>> = None;
        let (mut loss_sum, mut in_step) = (0f32, 0usize);
        for (micro, which) in plan.iter().enumerate().skip(done_micro) {
            if cancel.load(Ordering::Relaxed) {
                self.save(&model, &opt, micro, &losses)?;
                return Err(Error::Cancelled("training stopped; run it again to resume from its checkpoint".into()));
            }
            let batch = batch_of(self.examples, which, self.pad);
            let mut noise = Noise::new(c.seed.wrapping_mul(1_000_003).wrapping_add(micro as u64), c.dropout);
            let loss = model.loss(&batch, &mut noise).map_err(fail)?;
            let store = loss.backward().map_err(fail)?;
            let g = opt.gradients(&store).map_err(fail)?;
            grads = Some(match grads.take() {
                None => g,
                Some(sum) => {
                    sum.iter().zip(&g).map(|(a, b)| a + b).collect::<candle_core::Result<_>>().map_err(fail)?
                }
            });
            loss_sum += loss.to_scalar::<f32>().map_err(fail)?;
            in_step += 1;
            tokens += batch.ids.iter().map(Vec::len).sum::<usize>();
            if in_step == c.accumulate || micro + 1 == plan.len() {
                let g = grads.take().unwrap_or_default();
                opt.step(&g, in_step).map_err(fail)?;
                let step_loss = loss_sum / in_step as f32;
                if !step_loss.is_finite() {
                    return Err(Error::Model(format!(
                        "training diverged at step {} (the loss is {step_loss}); lower the learning rate",
                        opt.step
                    )));
                }
                losses.push(step_loss);
                (loss_sum, in_step) = (0.0, 0);
                let secs = started.elapsed().as_secs_f64();
                let per_step = secs / (opt.step - resumed_from) as f64;
                progress(&Progress {
                    step: opt.step,
                    steps,
                    loss: step_loss,
                    tokens_per_s: tokens as f64 / secs.max(1e-9),
                    eta_s: per_step * (steps - opt.step) as f64,
                });
                if opt.step.is_multiple_of(c.checkpoint_every.max(1)) && opt.step < steps {
                    self.save(&model, &opt, micro + 1, &losses)?;
                }
            }
        }
        self.clear();
        Ok(Trained {
            adapter: model.adapter()?,
            losses,
            tokens,
            seconds: started.elapsed().as_secs_f64(),
            resumed_from,
        })
    }

    fn save(&self, model: &TrainModel, opt: &AdamW, micro: usize, losses: &[f32]) -> Result<()> {
        let dir = &self.checkpoints;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let mut t = HashMap::new();
        for (i, v) in model.vars().iter().enumerate() {
            t.insert(format!("var.{i}"), v.as_tensor().copy().map_err(fail)?);
            t.insert(format!("m.{i}"), opt.m[i].clone());
            t.insert(format!("v.{i}"), opt.v[i].clone());
        }
        t.insert("step".into(), Tensor::new(&[opt.step as u32], &Device::Cpu).map_err(fail)?);
        let tensors = safetensors::serialize(&t, None).map_err(|e| Error::Model(e.to_string()))?;
        let meta = CheckpointMeta {
            step: opt.step,
            micro,
            config: self.config.clone(),
            examples: self.examples.len(),
            losses: losses.to_vec(),
        };
        let text = serde_json::to_vec(&meta).map_err(|e| Error::Model(e.to_string()))?;
        // The tensors first: a crash between the two leaves the old metadata, which a resume
        // checks against the tensors' step below.
        strata_core::files::write_bytes(&dir.join(STATE), &tensors)?;
        strata_core::files::write_bytes(&dir.join(STATE_META), &text)?;
        tracing::info!(step = opt.step, dir = %dir.display(), "checkpoint saved");
        Ok(())
    }

    /// Loads a checkpoint made with the same settings and examples, if there is one.
    fn resume(&self, model: &TrainModel, opt: &mut AdamW) -> Result<Option<CheckpointMeta>> {
        let dir = &self.checkpoints;
        let Ok(text) = std::fs::read(dir.join(STATE_META)) else {
            return Ok(None);
        };
        let meta: CheckpointMeta = match serde_json::from_slice(&text) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "an unreadable checkpoint was ignored");
                return Ok(None);
            }
        };
        if !same_settings(&meta.config, self.config) || meta.examples != self.examples.len() {
            tracing::warn!("a checkpoint for other settings was ignored");
            return Ok(None);
        }
        let mut t = candle_core::safetensors::load(dir.join(STATE), &Device::Cpu).map_err(fail)?;
        let step = t.get("step").and_then(|s| s.to_vec1::<u32>().ok()).and_then(|s| s.first().copied());
        if step != Some(meta.step as u32) {
            tracing::warn!("a half-written checkpoint was ignored");
            return Ok(None);
        }
        let n = model.vars().len();
        let mut take = |name: String| {
            t.remove(&name).ok_or_else(|| Error::invalid(format!("the checkpoint in {} lacks {name}", dir.display())))
        };
        let vars = (0..n).map(|i| take(format!("var.{i}"))).collect::<Result<Vec<_>>>()?;
        let m = (0..n).map(|i| take(format!("m.{i}"))).collect::<Result<Vec<_>>>()?;
        let v = (0..n).map(|i| take(format!("v.{i}"))).collect::<Result<Vec<_>>>()?;
        model.set_vars(&vars)?;
        opt.m = m;
        opt.v = v;
        opt.step = meta.step;
        tracing::info!(step = meta.step, "resumed from a checkpoint");
        Ok(Some(meta))
    }

    fn clear(&self) {
        let _ = std::fs::remove_file(self.checkpoints.join(STATE));
        let _ = std::fs::remove_file(self.checkpoints.join(STATE_META));
    }
}

/// Whether a checkpoint's settings are `mine`. One saved before settings named their model
/// (no base) was made for the model adapters were trained on then.
fn same_settings(saved: &TrainConfig, mine: &TrainConfig) -> bool {
    if saved.base.is_none() {
        let then = strata_models::training_pin(None).file.trim_end_matches(".gguf");
        return mine.base.as_deref().is_none_or(|b| b == then) && *saved == TrainConfig { base: None, ..mine.clone() };
    }
    saved == mine
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_checkpoint_saved_before_settings_named_their_model_is_smollm2s() {
        let old = TrainConfig::default();
        let then = strata_models::training_pin(None).file.trim_end_matches(".gguf").to_string();
        let smol = TrainConfig { base: Some(then), ..old.clone() };
        let qwen = TrainConfig { base: Some("qwen2.5-coder-0.5b-instruct-q4_k_m".into()), ..old.clone() };
        assert!(same_settings(&old, &smol), "resumed on the model it was made for");
        assert!(!same_settings(&old, &qwen), "never on another model");
        assert!(same_settings(&qwen, &qwen) && !same_settings(&smol, &qwen));
        assert!(!same_settings(&old, &TrainConfig { epochs: 9, ..smol }), "other settings are another run");
    }

    use super::*;

    /// What a plan costs: each micro-batch's rows times its longest example.
    fn padded(plan: &[Vec<usize>], lengths: &[usize]) -> usize {
        plan.iter().map(|b| b.len() * b.iter().map(|&i| lengths[i]).max().unwrap_or(0)).sum()
    }

    #[test]
    fn the_schedule_takes_every_example_once_an_epoch_and_pads_less_grouped_by_length() {
        // The example set's shape: 120 short questions, 21 long replay examples.
        let lengths: Vec<usize> = (0..141).map(|i| if i % 7 == 3 { 80 + i % 11 } else { 36 + i % 9 }).collect();
        let config = TrainConfig { epochs: 3, ..TrainConfig::default() };
        let plan = schedule(&lengths, &config);
        assert_eq!(plan, schedule(&lengths, &config), "the seed decides the order");
        assert_eq!(plan.len(), 3 * 141usize.div_ceil(8));
        let mut seen: Vec<usize> = plan.iter().flatten().copied().collect();
        seen.sort_unstable();
        let expected: Vec<usize> = (0..141).flat_map(|i| [i; 3]).collect();
        assert_eq!(seen, expected);
        // Against the plain shuffle, cut in order.
        let plain: Vec<Vec<usize>> = (0..3u64)
            .flat_map(|epoch| {
                let mut order: Vec<usize> = (0..141).collect();
                order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(config.seed.wrapping_add(1 + epoch)));
                order.chunks(8).map(<[usize]>::to_vec).collect::<Vec<_>>()
            })
            .collect();
        let (grouped, plain) = (padded(&plan, &lengths), padded(&plain, &lengths));
        assert!(grouped * 10 < plain * 8, "{grouped} padded tokens grouped against {plain} plain");
    }
}
