//! all-MiniLM-L6-v2 (BERT, 384 dimensions): tokenize, run the encoder, mean-pool over the
//! attention mask, L2-normalize — what sentence-transformers does for this model.
//!
//! Two encoders, chosen in one place, [`Model::fastest`]: the fast one ([`crate::encoder`]:
//! plain Rust, texts unpadded, products on gemm's kernels — or AMX tiles where a server CPU has
//! them), the same code on every target; and the reference ([`crate::bert`], candle's
//! tensors), which tests compare it with and which runs a model whose shape the fast one does
//! not take. Texts are sorted by length and the sub-batches spread over one worker per core,
//! each running its products single-threaded: splitting each small product across cores leaves
//! them idle in between (measured in docs/benchmarks.md). A single text (a query) splits its
//! products over every core instead.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;

use crate::bert::Bert;
use crate::bert::Config;
use crate::checkpoint::Checkpoint;
use crate::encoder::Encoder;
use strata_core::{Embedder, Error, Result};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

/// Longest input in tokens; longer texts are cut (the model was trained on ≤ 256).
const MAX_TOKENS: usize = 256;

/// A finished sub-batch: its index and its vectors.
type Done = (usize, Vec<Vec<f32>>);

/// Texts per forward pass: sorted by length, so each pass pads little.
const SUB_BATCH: usize = 16;

/// How a load picks its encoder from the checkpoint.
type Choose = fn(Checkpoint, &Config) -> candle_core::Result<Model>;

/// The encoder this CPU runs fastest.
enum Model {
    /// Plain Rust, texts unpadded ([`crate::encoder`]): every target.
    Fast(Encoder),
    /// candle's tensors, sub-batches padded to their longest text ([`crate::bert`]): the
    /// reference, on every target.
    Candle(Bert),
}

impl Model {
    /// The one switch between the encoders: the fast encoder wherever the model's shape fits
    /// it (its products on AMX where this CPU has AMX and `STRATA_AMX` is not `0`), else the
    /// reference.
    fn fastest(weights: Checkpoint, config: &Config) -> candle_core::Result<Model> {
        #[cfg(target_arch = "x86_64")]
        let amx = crate::amx::available();
        #[cfg(not(target_arch = "x86_64"))]
        let amx = false;
        if let Some(encoder) = Encoder::new(&weights, config, amx)? {
            return Ok(Model::Fast(encoder));
        }
        Model::reference(weights, config)
    }

    /// The reference encoder, the same code on every target.
    fn reference(weights: Checkpoint, config: &Config) -> candle_core::Result<Model> {
        Ok(Model::Candle(Bert::new(weights, config)))
    }
}

/// The on-device sentence embedder.
pub struct MiniLm {
    model: Model,
    tokenizer: Tokenizer,
    device: Device,
    dim: usize,
    /// One single-threaded pool per worker: candle's kernels run inside them serially.
    pools: Vec<rayon::ThreadPool>,
    /// A pool of all workers for a call too small to split into sub-batches (a query): the
    /// encoder splits each matrix product across it instead.
    wide: rayon::ThreadPool,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").field("dim", &self.dim).finish_non_exhaustive()
    }
}

fn missing(dir: &Path, what: &str) -> Error {
    Error::Model(format!(
        "the embedding model is not in {} ({what}); run `scripts/setup` (or `make setup`) to fetch it, \
         or set STRATA_MODELS to a folder holding {}/model.safetensors, tokenizer.json and config.json. \
         Keyword search works without it",
        dir.display(),
        crate::EMBEDDER_DIR
    ))
}

fn model_err(context: &str) -> impl Fn(candle_core::Error) -> Error + '_ {
    move |e| Error::Model(format!("{context}: {e}"))
}

impl MiniLm {
    /// Loads the model from `dir` (holding model.safetensors, tokenizer.json, config.json).
    pub fn load(dir: &Path) -> Result<MiniLm> {
        MiniLm::load_with(dir, Model::fastest)
    }

    /// As [`MiniLm::load`], the encoder chosen by `choose` ([`Model::fastest`] or
    /// [`Model::reference`]).
    fn load_with(dir: &Path, choose: Choose) -> Result<MiniLm> {
        let file = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if p.is_file() { Ok(p) } else { Err(missing(dir, &format!("no {name}"))) }
        };
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(file("config.json")?).map_err(|e| missing(dir, &e.to_string()))?,
        )
        .map_err(|e| Error::Model(format!("{}: config.json is not a BERT config: {e}", dir.display())))?;
        if config.hidden_act != "gelu" {
            return Err(Error::Model(format!(
                "{}: config.json asks for the {:?} activation; Strata's BERT encoder computes GELU only",
                dir.display(),
                config.hidden_act
            )));
        }
        let mut tokenizer = Tokenizer::from_file(file("tokenizer.json")?)
            .map_err(|e| Error::Model(format!("{}: tokenizer.json cannot be read: {e}", dir.display())))?;
        // Every id the tokenizer can produce must have an embedding row.
        let tokens = tokenizer.get_vocab_size(true);
        if tokens > config.vocab_size {
            return Err(Error::Model(format!(
                "{}: tokenizer.json has {tokens} tokens but the model has {} embeddings; the two files are \
                 from different models",
                dir.display(),
                config.vocab_size
            )));
        }
        // The shipped tokenizer pads and truncates to 128: no padding (the encoders pad, or not,
        // themselves), truncation at the model's limit (and within its positions).
        tokenizer.with_padding(None);
        let max_length = MAX_TOKENS.min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
            .map_err(|e| Error::Model(format!("tokenizer truncation: {e}")))?;
        let device = Device::Cpu;
        let weights = candle_core::safetensors::load(file("model.safetensors")?, &device)
            .map_err(|e| Error::Model(format!("{}: model.safetensors cannot be read: {e}", dir.display())))?;
        let vb = VarBuilder::from_tensors(weights, DType::F32, &device);
        let fit = model_err("the model's weights do not fit BERT");
        let weights = Checkpoint::read(&vb, &config).map_err(&fit)?;
        let model = choose(weights, &config).map_err(&fit)?;
        let workers = std::env::var("STRATA_EMBED_THREADS")
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let pools = (0..workers)
            .map(|i| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(move |_| format!("strata-embed-{i}"))
                    .build()
                    .map_err(|e| Error::Model(format!("cannot start the embedding threads: {e}")))
            })
            .collect::<Result<_>>()?;
        let wide = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("strata-embed-wide-{i}"))
            .build()
            .map_err(|e| Error::Model(format!("cannot start the embedding threads: {e}")))?;
        Ok(MiniLm { model, tokenizer, device, dim: config.hidden_size, pools, wide })
    }

    /// Which encoder runs the model on this CPU, in words (for benchmarks and logs).
    pub fn engine(&self) -> &'static str {
        match &self.model {
            Model::Fast(e) if e.on_amx() => "Strata encoder, AMX products",
            Model::Fast(_) => "Strata encoder",
            Model::Candle(_) => "candle",
        }
    }

    /// Loads from the models directory ([`crate::models_dir`]).
    pub fn load_default() -> Result<MiniLm> {
        MiniLm::load(&crate::models_dir().join(crate::EMBEDDER_DIR))
    }

    /// One forward pass over texts of similar length; each product split over this rayon
    /// pool's threads (one in a worker, all in `wide`).
    fn forward(&self, encodings: &[&Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let bert = match &self.model {
            Model::Fast(encoder) => {
                let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
                return Ok(encoder.embed(&ids, rayon::current_num_threads()));
            }
            Model::Candle(bert) => bert,
        };
        self.forward_padded(bert, encodings)
    }

    /// candle's forward pass, the texts padded to the longest.
    fn forward_padded(&self, bert: &Bert, encodings: &[&Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let rows = encodings.len();
        let cols = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0u32; rows * cols];
        let mut mask = vec![0u32; rows * cols];
        for (r, e) in encodings.iter().enumerate() {
            for (c, (id, m)) in e.get_ids().iter().zip(e.get_attention_mask()).enumerate() {
                ids[r * cols + c] = *id;
                mask[r * cols + c] = *m;
            }
        }
        let ids = Tensor::from_vec(ids, (rows, cols), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, cols), &self.device)?;
        let hidden = bert.forward(&ids, &mask)?; // (rows, cols, dim)
        // Mean over real tokens only.
        let mask_f = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, cols, 1)
        let summed = hidden.broadcast_mul(&mask_f)?.sum(1)?; // (rows, dim)
        let counts = mask_f.sum(1)?.clamp(1e-9, f64::MAX)?; // (rows, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }

    /// Tokenizes, sorts by length, runs the sub-batches on the workers, restores the order.
    fn embed_sorted(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings =
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| Error::Model(format!("tokenizer: {e}")))?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        // Sub-batches of at most SUB_BATCH, at least one per worker when there is enough.
        let size = order.len().div_ceil(self.pools.len()).clamp(1, SUB_BATCH);
        let chunks: Vec<&[usize]> = order.chunks(size).collect();
        let next = AtomicUsize::new(0);
        let run = |pool: &rayon::ThreadPool| -> Result<Vec<Done>> {
            let mut done = Vec::new();
            loop {
                let c = next.fetch_add(1, Ordering::Relaxed);
                let Some(chunk) = chunks.get(c) else { return Ok(done) };
                let batch: Vec<&Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
                let vectors = pool
                    .install(|| self.forward(&batch))
                    .map_err(|e| Error::Model(format!("embedding failed: {e}")))?;
                done.push((c, vectors));
            }
        };
        let workers = self.pools.len().min(chunks.len()).max(1);
        let results: Vec<Result<Vec<Done>>> = if chunks.len() == 1 {
            vec![run(&self.wide)]
        } else if workers == 1 {
            vec![run(&self.pools[0])]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = self.pools[..workers].iter().map(|p| s.spawn(|| run(p))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(Error::Model("an embedding thread panicked".into()))))
                    .collect()
            })
        };
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for r in results {
            for (c, vectors) in r? {
                for (&i, v) in chunks[c].iter().zip(vectors) {
                    out[i] = v;
                }
            }
        }
        Ok(out)
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        "all-MiniLM-L6-v2"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.embed_sorted(texts)
    }

    /// One text, its products split over the cores.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let encoding = self.tokenizer.encode(text, true).map_err(|e| Error::Model(format!("tokenizer: {e}")))?;
        let mut v = self
            .wide
            .install(|| self.forward(&[&encoding]))
            .map_err(|e| Error::Model(format!("embedding failed: {e}")))?;
        v.pop().ok_or_else(|| Error::Model("embedding returned nothing".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast encoder's vectors are the candle path's: same texts (lengths 10 to 256 tokens,
    /// mixed in one call so that unpadded neighbours must not leak into each other), same
    /// vectors to ~1e-5, for a batch, a single text and a query, on whatever products this CPU
    /// runs (gemm's kernels; AMX tiles where present).
    #[test]
    fn the_fast_encoder_agrees_with_the_candle_path() {
        let dir = crate::models_dir().join(crate::EMBEDDER_DIR);
        let fast = MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            matches!(fast.model, Model::Fast(_)),
            "MiniLM's shape fits the fast encoder, yet the switch chose {}",
            fast.engine()
        );
        let slow = MiniLm::load_with(&dir, Model::reference).expect("the candle path");
        assert!(matches!(slow.model, Model::Candle(_)));
        // Lengths ~10 to ~45 tokens (a text alone takes the few-rows products, a batch gemm's),
        // and, on its own (the candle path would pad its whole sub-batch to it), one past the
        // limit. Kept small: under qemu (CI's aarch64 run) a token costs ~1,000× its native time.
        let texts: Vec<String> = (0..16)
            .map(|i| {
                format!("Caroline said on day {i}: {}", "we went hiking by the lake and talked ".repeat(i * i % 8))
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (a, b) = (fast.embed(&refs).expect("fast"), slow.embed(&refs).expect("candle"));
        let past = "a text longer than the model's 256 tokens, cut there. ".repeat(40);
        let long = [past.as_str()];
        let cut =
            (fast.embed(&long).expect("fast, past the limit"), slow.embed(&long).expect("candle, past the limit"));
        let single = (fast.embed(&refs[7..8]).expect("fast, one text"), b[7].clone());
        let q = (fast.embed_query(refs[5]).expect("fast query"), b[5].clone());
        let pairs = a.iter().zip(&b).chain([(&cut.0[0], &cut.1[0]), (&single.0[0], &single.1), (&q.0, &q.1)]);
        for (x, y) in pairs {
            // A NaN anywhere makes `worst` NaN, which fails the comparison (f32::max would skip it).
            let worst =
                x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0f32, |w, d| if w.is_nan() || w >= d { w } else { d });
            assert!(worst < 1e-5, "{}: vectors differ by {worst}", fast.engine());
        }
    }
}
