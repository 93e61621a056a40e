//! AdamW with a learning rate that warms up linearly then decays (cosine) to a tenth, and
//! gradient clipping by global norm. Its moments are plain tensors so a checkpoint holds them
//! (candle-nn's AdamW keeps them private).

use candle_core::backprop::GradStore;
use candle_core::{Tensor, Var};

/// AdamW's settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdamWConfig {
    /// Peak learning rate.
    pub lr: f64,
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Denominator guard.
    pub eps: f64,
    /// Decoupled weight decay.
    pub weight_decay: f64,
    /// Steps of linear warm-up.
    pub warmup: usize,
    /// Total optimizer steps (the decay ends there).
    pub total: usize,
    /// Largest global gradient norm (0: no clipping).
    pub clip: f64,
}

/// The optimizer and its state.
pub struct AdamW {
    config: AdamWConfig,
    vars: Vec<Var>,
    /// Moments per var.
    pub(crate) m: Vec<Tensor>,
    pub(crate) v: Vec<Tensor>,
    /// Optimizer steps taken.
    pub(crate) step: usize,
}

impl AdamW {
    /// A fresh optimizer over `vars`.
    pub fn new(vars: Vec<Var>, config: AdamWConfig) -> candle_core::Result<AdamW> {
        let m = vars.iter().map(|v| v.zeros_like()).collect::<candle_core::Result<Vec<_>>>()?;
        let v = m.clone();
        Ok(AdamW { config, vars, m, v, step: 0 })
    }

    /// The learning rate at optimizer step `step` (0-based).
    pub fn lr_at(&self, step: usize) -> f64 {
        let c = &self.config;
        if step < c.warmup {
            return c.lr * (step + 1) as f64 / c.warmup as f64;
        }
        let span = c.total.saturating_sub(c.warmup).max(1) as f64;
        let t = ((step - c.warmup) as f64 / span).min(1.0);
        let floor = c.lr * 0.1;
        floor + (c.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
    }

    /// One update from summed gradients `grads` divided by `accumulated` (micro-batches).
    /// Returns the gradient norm before clipping.
    pub fn step(&mut self, grads: &[Tensor], accumulated: usize) -> candle_core::Result<f64> {
        let scale = 1.0 / accumulated.max(1) as f64;
        let mut norm2 = 0.0;
        for g in grads {
            norm2 += g.sqr()?.sum_all()?.to_scalar::<f32>()? as f64;
        }
        let norm = norm2.sqrt() * scale;
        let clip = if self.config.clip > 0.0 && norm > self.config.clip { self.config.clip / norm } else { 1.0 };
        let c = self.config;
        let lr = self.lr_at(self.step);
        self.step += 1;
        let t = self.step as i32;
        let (bc1, bc2) = (1.0 - c.beta1.powi(t), 1.0 - c.beta2.powi(t));
        for (i, var) in self.vars.iter().enumerate() {
            let g = (&grads[i] * (scale * clip))?;
            self.m[i] = ((&self.m[i] * c.beta1)? + (&g * (1.0 - c.beta1))?)?;
            self.v[i] = ((&self.v[i] * c.beta2)? + (g.sqr()? * (1.0 - c.beta2))?)?;
            let update = ((&self.m[i] / bc1)? / ((&self.v[i] / bc2)?.sqrt()? + c.eps)?)?;
            let decayed = (var.as_tensor() * (1.0 - lr * c.weight_decay))?;
            var.set(&(decayed - (update * lr)?)?)?;
        }
        Ok(norm)
    }

    /// The vars' gradients from a backward pass (zeros where a var got none).
    pub fn gradients(&self, store: &GradStore) -> candle_core::Result<Vec<Tensor>> {
        self.vars
            .iter()
            .map(|v| match store.get(v.as_tensor()) {
                Some(g) => Ok(g.clone()),
                None => v.zeros_like(),
            })
            .collect()
    }
}
