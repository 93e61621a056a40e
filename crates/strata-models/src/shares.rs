//! One generated token's matrix products shared among the chat model's threads
//! ([`crate::llama::Llama`]'s one-token step): each product's rows split into a share per
//! thread, helpers computing theirs as each input is ready, this thread taking over any share
//! no helper has claimed.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::q8::{Q8, Q8Input};

/// Waits a moment for the other thread: spins for ~the length of a small product, then yields
/// the core (another process may need it, and the thread being waited for may be the one
/// that is not running).
fn pause(waited: &mut u32) {
    *waited += 1;
    if *waited < 4096 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// One token's products shared between this thread and the helpers of [`Llama::step`]: product
/// `j`'s share `p` is computed by whoever claims it first — helper `p` when it is running, this
/// thread when the helper has not got there (another process holds that core), so a busy
/// machine costs the core, not a wait for it.
pub(crate) struct Shares<'a> {
    products: &'a [&'a Q8],
    /// Each product's rows, one range per share.
    parts: Vec<Vec<std::ops::Range<usize>>>,
    inputs: Vec<OnceLock<Q8Input>>,
    done: Vec<Vec<OnceLock<Vec<f32>>>>,
    claimed: Vec<Vec<AtomicBool>>,
    pub(crate) stop: AtomicBool,
}

impl<'a> Shares<'a> {
    pub(crate) fn new(products: &'a [&'a Q8], threads: usize) -> Shares<'a> {
        let parts: Vec<_> = products.iter().map(|q| q.parts(threads)).collect();
        Shares {
            products,
            inputs: products.iter().map(|_| OnceLock::new()).collect(),
            done: parts.iter().map(|p| p.iter().map(|_| OnceLock::new()).collect()).collect(),
            claimed: parts.iter().map(|p| p.iter().map(|_| AtomicBool::new(false)).collect()).collect(),
            parts,
            stop: AtomicBool::new(false),
        }
    }

    /// Helper `h`'s loop: its share of every product in order, until the step stops.
    pub(crate) fn help(&self, h: usize) {
        for (j, q) in self.products.iter().enumerate() {
            let Some(rows) = self.parts[j].get(h) else { continue };
            let mut waited = 0u32;
            let x = loop {
                if let Some(x) = self.inputs[j].get() {
                    break x;
                }
                if self.stop.load(Ordering::Acquire) {
                    return;
                }
                pause(&mut waited);
            };
            if !self.claimed[j][h].swap(true, Ordering::AcqRel) {
                let _ = self.done[j][h].set(q.rows(x, rows.clone()));
            }
        }
    }

    /// Product `j` of `x`: the first share here, then each other share taken from its helper or
    /// computed here where no helper has claimed it.
    pub(crate) fn product<T>(
        &self,
        j: usize,
        x: &[f32],
        helpers: &[std::thread::ScopedJoinHandle<T>],
    ) -> candle_core::Result<Vec<f32>> {
        let (q, parts) = (self.products[j], &self.parts[j]);
        if helpers.is_empty() || parts.len() < 2 {
            return Ok(q.rows(&q.input(x), 0..q.outputs()));
        }
        let input = self.inputs[j].get_or_init(|| q.input(x));
        let mut y = q.rows(input, parts[0].clone());
        for (p, rows) in parts.iter().enumerate().skip(1) {
            if !self.claimed[j][p].swap(true, Ordering::AcqRel) {
                y.extend(q.rows(input, rows.clone()));
                continue;
            }
            let mut waited = 0u32;
            loop {
                // Checked before and after: a helper may hand in its last share and end
                // between the two looks.
                let finished = helpers[p - 1].is_finished();
                if let Some(rest) = self.done[j][p].get() {
                    y.extend_from_slice(rest);
                    break;
                }
                if finished {
                    return Err(candle_core::Error::Msg("one of the model's helper threads stopped".into()));
                }
                pause(&mut waited);
            }
        }
        Ok(y)
    }
}
