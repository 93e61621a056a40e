//! The BERT encoder (all-MiniLM-L6-v2's architecture) in plain Rust over vectors: the path
//! that stored memories and queries take on every target. [`crate::bert`] runs the same model
//! on candle's tensors as the reference; `MiniLm` chooses in one place.
//!
//! - **No padding.** The texts of a call are laid end to end, one row per real token: the
//!   products (most of the work) run over every token and nothing else. Padding to the longest
//!   text of a sorted sub-batch cost ~28% more rows on LoCoMo's turns.
//! - **Attention per text**, over its own tokens (no mask needed): per head, scores against a
//!   transposed copy of the keys, softmax, then the weighted values — loops over fixed-size
//!   arrays that the compiler turns into whole vector registers. Given two threads (a single
//!   text or query), each takes half the heads.
//! - **Element-wise steps** ([`crate::elementwise`]) vectorized, reductions included: the
//!   residual add with layer norm, softmax, mean pooling and the final normalization on rows
//!   still in cache; GELU inside the intermediate product, on each block as it is finished.
//! - **Products** by [`Product`]: up to [`FEW_ROWS`] rows (a query, a text on its own), our
//!   [`few_rows`]; more, gemm's kernels (AVX2 or AVX-512 on x86-64, NEON on aarch64, chosen by
//!   gemm at run time); or, as an optional accelerator on x86-64 server CPUs with AMX,
//!   [`crate::amx`]'s tiles (`STRATA_AMX=0` turns them off).
//!
//! The code is the same on every target. On x86-64 it is compiled twice, for the baseline and
//! for AVX2 with FMA (every x86-64 laptop of the last ten years), and the second runs where the
//! CPU has them; on aarch64 NEON is the baseline.
//!
//! Numerically it is the model sentence-transformers runs: products at f32 accuracy, softmax
//! and norms in f32 (tests check the reference's similarities to 1e-3 and agreement with the
//! candle path to 1e-5).

use std::ops::Range;

#[cfg(target_arch = "x86_64")]
use crate::amx::{Packed, Rows};
use crate::bert::Config;
use crate::checkpoint::{self, Checkpoint, Dense};
use crate::elementwise::{FMA, add_norm, fma, gelu_erf, norm, softmax};

/// Values per attention head: this path is written for MiniLM's 384 = 12 × 32 (other shapes
/// take [`crate::bert`]).
const HD: usize = 32;
/// Values of a head that attention's weighted sum takes in one pass.
const HALF: usize = HD / 2;
/// Queries scored together in attention.
const Q: usize = 4;
/// Keys scored together in attention (a text's keys are padded with zeros to a multiple).
const K: usize = 16;
/// Products over at most this many rows (a query, a short text) run on [`few_rows`], which
/// reads each weight once; longer ones on gemm, whose blocking pays off there.
const FEW_ROWS: usize = 64;
/// Output columns [`few_rows`] computes together: one panel of W, kept in L1 over all rows.
const NC: usize = 16;
/// Rows [`few_rows`] computes together (6 × 16 accumulators fill AVX2's registers).
const MR: usize = 6;

/// A layer norm's scale and shift.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn new(n: &checkpoint::Norm) -> candle_core::Result<Norm> {
        Ok(Norm { weight: n.weight.to_vec1()?, bias: n.bias.to_vec1()?, eps: n.eps })
    }
}

/// What a product does to its outputs before handing them back.
#[derive(Clone, Copy)]
enum Then {
    Keep,
    /// GELU (the intermediate layer's activation), on each block while it is in registers.
    Gelu,
}

/// A dense layer's product, `x · W + b`.
enum Product {
    /// Plain Rust for a few rows, gemm's f32 kernels for more: W row-major (k, n), and packed
    /// by panels of [`NC`] columns (each panel's k × NC values contiguous) when n is a multiple.
    Plain { w: Vec<f32>, panels: Vec<f32>, bias: Vec<f32>, k: usize, n: usize },
    /// AMX tiles (x86-64 CPUs that have them).
    #[cfg(target_arch = "x86_64")]
    Amx(Packed),
}

impl Product {
    /// The layer's product on AMX where `amx` is true and its shape fills whole tiles, else on
    /// gemm's kernels.
    fn new(d: &Dense, amx: bool) -> candle_core::Result<Product> {
        let (k, n) = d.weight.dims2()?;
        let (w, bias) = (d.weight.flatten_all()?.to_vec1()?, d.bias.to_vec1()?);
        #[cfg(target_arch = "x86_64")]
        if amx && let Some(p) = Packed::new(&w, k, n, bias.clone()) {
            return Ok(Product::Amx(p));
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = amx;
        Ok(Product::plain(w, bias, k, n))
    }

    /// W (k × n, row-major) and its bias for gemm and [`few_rows`].
    fn plain(w: Vec<f32>, bias: Vec<f32>, k: usize, n: usize) -> Product {
        let mut panels = Vec::new();
        if n.is_multiple_of(NC) {
            panels.reserve(k * n);
            for p in 0..n / NC {
                for row in w.chunks_exact(n) {
                    panels.extend_from_slice(&row[p * NC..][..NC]);
                }
            }
        }
        Product::Plain { w, panels, bias, k, n }
    }

    /// `x` (rows × k, row-major) times W plus the bias, then `then`: rows × n, split over
    /// `threads`. `F`: whether the caller is compiled for fused multiply-add.
    #[inline(always)]
    fn apply<const F: bool>(&self, x: &[f32], rows: usize, threads: usize, then: Then) -> Vec<f32> {
        let mut out = match self {
            Product::Plain { w, panels, bias, k, n } => {
                let (k, n) = (*k, *n);
                assert_eq!(x.len(), rows * k, "rows of {} values for a product over {k}", x.len() / rows.max(1));
                if rows <= FEW_ROWS && !panels.is_empty() {
                    return few_rows(x, rows, panels, bias, k, n, threads, then);
                }
                let mut out = Vec::with_capacity(rows * n);
                for _ in 0..rows {
                    out.extend_from_slice(bias);
                }
                let parallelism = if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None };
                // SAFETY: `out` is rows × n, `x` rows × k and `w` k × n, all row-major (strides
                // as given) and checked above or built so; none overlaps another.
                #[allow(unsafe_code)]
                unsafe {
                    gemm::gemm(
                        rows,
                        n,
                        k,
                        out.as_mut_ptr(),
                        1,
                        n as isize,
                        true,
                        x.as_ptr(),
                        1,
                        k as isize,
                        w.as_ptr(),
                        1,
                        n as isize,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        parallelism,
                    );
                }
                out
            }
            #[cfg(target_arch = "x86_64")]
            Product::Amx(p) => p.matmul_rows(&Rows::split(x, rows, p.k()), threads.min(2)),
        };
        if let Then::Gelu = then {
            if threads < 2 {
                gelu_erf::<F>(&mut out);
            } else {
                let half = out.len() / 2;
                let (a, b) = out.split_at_mut(half);
                rayon::join(|| gelu(a), || gelu(b));
            }
        }
        out
    }

    /// Whether it runs on AMX tiles.
    fn on_amx(&self) -> bool {
        match self {
            Product::Plain { .. } => false,
            #[cfg(target_arch = "x86_64")]
            Product::Amx(_) => true,
        }
    }
}

struct Layer {
    /// Query, key and value in one product: each row's output is `q | k | v`.
    qkv: Product,
    attention_out: Product,
    attention_norm: Norm,
    intermediate: Product,
    output: Product,
    output_norm: Norm,
}

/// The encoder: token ids of several texts in, one pooled, normalized vector per text out.
pub(crate) struct Encoder {
    /// Word, position and token-type embeddings, row-major (rows × hidden); type 0 only.
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
}

impl Encoder {
    /// The encoder for this checkpoint, its products on AMX where `amx` is true (and the
    /// shapes fit), else gemm; None where the model's heads are not [`HD`] wide (the caller
    /// keeps [`crate::bert`]).
    pub(crate) fn new(w: &Checkpoint, c: &Config, amx: bool) -> candle_core::Result<Option<Encoder>> {
        if c.hidden_size != HD * c.num_attention_heads {
            return Ok(None);
        }
        let mut layers = Vec::with_capacity(w.layers.len());
        for l in &w.layers {
            layers.push(Layer {
                qkv: Product::new(&l.qkv, amx)?,
                attention_out: Product::new(&l.attention_out, amx)?,
                attention_norm: Norm::new(&l.attention_norm)?,
                intermediate: Product::new(&l.intermediate, amx)?,
                output: Product::new(&l.output, amx)?,
                output_norm: Norm::new(&l.output_norm)?,
            });
        }
        Ok(Some(Encoder {
            word: w.word.flatten_all()?.to_vec1()?,
            position: w.position.flatten_all()?.to_vec1()?,
            token_type: w.token_type.flatten_all()?.to_vec1()?,
            norm: Norm::new(&w.norm)?,
            layers,
            heads: c.num_attention_heads,
            hidden: c.hidden_size,
        }))
    }

    /// Whether any product runs on AMX tiles.
    pub(crate) fn on_amx(&self) -> bool {
        self.layers.iter().any(|l| l.qkv.on_amx())
    }

    /// The pooled, L2-normalized vector of each text (its token ids, at most the model's
    /// positions long), each product split over `threads`.
    pub(crate) fn embed(&self, texts: &[&[u32]], threads: usize) -> Vec<Vec<f32>> {
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: this CPU has AVX2 and FMA (checked just above), all that `embed_avx2`
            // is compiled to use.
            #[allow(unsafe_code)]
            return unsafe { self.embed_avx2(texts, threads) };
        }
        self.embed_with::<FMA>(texts, threads)
    }

    /// [`Encoder::embed_with`] compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn embed_avx2(&self, texts: &[&[u32]], threads: usize) -> Vec<Vec<f32>> {
        self.embed_with::<true>(texts, threads)
    }

    /// [`Encoder::embed`]'s work; `F`: whether it is compiled for fused multiply-add.
    #[inline(always)]
    fn embed_with<const F: bool>(&self, texts: &[&[u32]], threads: usize) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let rows: usize = texts.iter().map(|t| t.len()).sum();
        let mut x = vec![0f32; rows * h];
        let mut row = 0;
        for ids in texts {
            for (i, id) in ids.iter().enumerate() {
                let dst = &mut x[row * h..(row + 1) * h];
                let w = &self.word[*id as usize * h..][..h];
                let p = &self.position[i * h..][..h];
                for (((d, w), p), t) in dst.iter_mut().zip(w).zip(p).zip(&self.token_type) {
                    *d = w + p + t;
                }
                norm(dst, &self.norm.weight, &self.norm.bias, self.norm.eps);
                row += 1;
            }
        }
        for l in &self.layers {
            let qkv = l.qkv.apply::<F>(&x, rows, threads, Then::Keep);
            let ctx = self.attention(&qkv, texts, threads);
            let mut a = l.attention_out.apply::<F>(&ctx, rows, threads, Then::Keep);
            for (dst, res) in a.chunks_exact_mut(h).zip(x.chunks_exact(h)) {
                add_norm(dst, res, &l.attention_norm.weight, &l.attention_norm.bias, l.attention_norm.eps);
            }
            let i = l.intermediate.apply::<F>(&a, rows, threads, Then::Gelu);
            x = l.output.apply::<F>(&i, rows, threads, Then::Keep);
            for (dst, res) in x.chunks_exact_mut(h).zip(a.chunks_exact(h)) {
                add_norm(dst, res, &l.output_norm.weight, &l.output_norm.bias, l.output_norm.eps);
            }
        }
        // Mean over each text's tokens, then unit length.
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        for ids in texts {
            let mut v = vec![0f32; h];
            for r in x[start * h..(start + ids.len()) * h].chunks_exact(h) {
                for (s, x) in v.iter_mut().zip(r) {
                    *s += x;
                }
            }
            start += ids.len();
            let count = ids.len().max(1) as f32;
            let length = v.iter().map(|s| (s / count) * (s / count)).sum::<f32>().sqrt().max(1e-12);
            for s in &mut v {
                *s = *s / count / length;
            }
            out.push(v);
        }
        out
    }

    /// Self-attention of each text over its own rows of `qkv` (rows × 3·hidden): the context
    /// rows (rows × hidden). With more than one thread, each takes half the heads.
    fn attention(&self, qkv: &[f32], texts: &[&[u32]], threads: usize) -> Vec<f32> {
        let (h, heads) = (self.hidden, self.heads);
        if threads < 2 || heads < 2 {
            return heads_of(qkv, texts, h, 0..heads);
        }
        let half = heads / 2;
        let (a, b) = rayon::join(|| heads_of(qkv, texts, h, 0..half), || heads_of(qkv, texts, h, half..heads));
        let (wa, wb) = (half * HD, (heads - half) * HD);
        let mut ctx = Vec::with_capacity(a.len() + b.len());
        for (a, b) in a.chunks_exact(wa).zip(b.chunks_exact(wb)) {
            ctx.extend_from_slice(a);
            ctx.extend_from_slice(b);
        }
        ctx
    }
}

/// [`attention_body`] for the heads in `range`, compiled for AVX2 and FMA where the CPU has
/// them.
fn heads_of(qkv: &[f32], texts: &[&[u32]], h: usize, range: Range<usize>) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: this CPU has AVX2 and FMA (checked just above), all that `heads_avx2` is
        // compiled to use.
        #[allow(unsafe_code)]
        return unsafe { heads_avx2(qkv, texts, h, range) };
    }
    attention_body::<FMA>(qkv, texts, h, range)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn heads_avx2(qkv: &[f32], texts: &[&[u32]], h: usize, range: Range<usize>) -> Vec<f32> {
    attention_body::<true>(qkv, texts, h, range)
}

/// Self-attention of each text over its own rows of `qkv` (rows × 3·`h`), for the heads in
/// `range`: rows × (heads × [`HD`]), those heads' share of the context rows. Queries go [`Q`]
/// at a time and keys [`K`] at a time, so that the inner loops are whole vector registers
/// with independent accumulators.
#[inline(always)]
fn attention_body<const F: bool>(qkv: &[f32], texts: &[&[u32]], h: usize, range: Range<usize>) -> Vec<f32> {
    let scale = 1.0 / (HD as f32).sqrt();
    let rows: usize = texts.iter().map(|t| t.len()).sum();
    let width = range.len() * HD;
    let mut ctx = vec![0f32; rows * width];
    let (mut keys, mut scores) = (Vec::new(), Vec::new());
    let mut start = 0;
    for ids in texts {
        let len = ids.len();
        let lp = len.next_multiple_of(K);
        let at = |i: usize, part: usize, head: usize| -> &[f32; HD] {
            qkv[(start + i) * 3 * h + part * h + head * HD..][..HD].try_into().expect("HD values")
        };
        keys.clear();
        keys.resize(HD * lp, 0.0);
        scores.resize(Q * lp, 0.0);
        for (slot, head) in range.clone().enumerate() {
            // Keys transposed (HD × lp), so that a query's scores are a sum of rows.
            for j in 0..len {
                for (d, kv) in at(j, 1, head).iter().enumerate() {
                    keys[d * lp + j] = *kv;
                }
            }
            for i0 in (0..len).step_by(Q) {
                let n = (len - i0).min(Q);
                let mut q = [[0f32; HD]; Q];
                for (r, q) in q.iter_mut().enumerate().take(n) {
                    for (qd, v) in q.iter_mut().zip(at(i0 + r, 0, head)) {
                        *qd = v * scale;
                    }
                }
                for c in (0..lp).step_by(K) {
                    let block = scores_of::<F>(&q, &keys[c..], lp);
                    for (r, b) in block.iter().enumerate() {
                        scores[r * lp + c..][..K].copy_from_slice(b);
                    }
                }
                for r in 0..n {
                    softmax::<F>(&mut scores[r * lp..r * lp + len]);
                }
                for half in 0..HD / HALF {
                    let o = weighted::<F>(&scores, lp, len, |j| {
                        at(j, 2, head)[half * HALF..][..HALF].try_into().expect("HALF values")
                    });
                    for (r, o) in o.iter().enumerate().take(n) {
                        ctx[(start + i0 + r) * width + slot * HD + half * HALF..][..HALF].copy_from_slice(o);
                    }
                }
            }
        }
        start += len;
    }
    ctx
}

/// Scores of [`Q`] queries against [`K`] keys: `keys` holds, for each of the HD dimensions,
/// the keys' values from offset 0, one dimension every `stride` values.
#[inline(always)]
fn scores_of<const F: bool>(q: &[[f32; HD]; Q], keys: &[f32], stride: usize) -> [[f32; K]; Q] {
    let mut acc = [[0f32; K]; Q];
    for d in 0..HD {
        let k: &[f32; K] = keys[d * stride..][..K].try_into().expect("K keys");
        for (a, q) in acc.iter_mut().zip(q) {
            let qd = q[d];
            for (a, k) in a.iter_mut().zip(k) {
                *a = fma::<F>(qd, *k, *a);
            }
        }
    }
    acc
}

/// For [`Q`] rows of `probs` (one every `stride` values), the sum over keys `j < len` of
/// `probs[r][j] · value(j)`, over [`HALF`] of a head's values (all [`HD`] of them as Q rows of
/// accumulators would not fit AVX2's sixteen registers).
#[inline(always)]
fn weighted<'a, const F: bool>(
    probs: &[f32],
    stride: usize,
    len: usize,
    value: impl Fn(usize) -> &'a [f32; HALF],
) -> [[f32; HALF]; Q] {
    let mut acc = [[0f32; HALF]; Q];
    for j in 0..len {
        let v = value(j);
        for (r, a) in acc.iter_mut().enumerate() {
            let p = probs[r * stride + j];
            for (a, v) in a.iter_mut().zip(v) {
                *a = fma::<F>(p, *v, *a);
            }
        }
    }
    acc
}

/// `x · W + b`, then `then`, for a few rows (at most [`FEW_ROWS`]), W packed by panels (n a
/// multiple of [`NC`]; panel p holds columns p·NC.. for every row of W, contiguous):
/// weight-stationary, so that each panel of W is read from memory once and reused for every
/// row from cache (gemm, made for many rows, streams W once per six rows here). Split by
/// panels over two threads when `threads` > 1.
#[allow(clippy::too_many_arguments)] // a product's operands, its shape and its threads
fn few_rows(
    x: &[f32],
    rows: usize,
    w: &[f32],
    bias: &[f32],
    k: usize,
    n: usize,
    threads: usize,
    then: Then,
) -> Vec<f32> {
    let panels = n / NC;
    if threads < 2 || panels < 2 {
        return panel_rows(x, rows, w, bias, k, 0..panels, then);
    }
    let half = panels / 2;
    let (a, b) = rayon::join(
        || panel_rows(x, rows, w, bias, k, 0..half, then),
        || panel_rows(x, rows, w, bias, k, half..panels, then),
    );
    let (wa, wb) = (half * NC, (panels - half) * NC);
    let mut out = Vec::with_capacity(rows * n);
    for r in 0..rows {
        out.extend_from_slice(&a[r * wa..][..wa]);
        out.extend_from_slice(&b[r * wb..][..wb]);
    }
    out
}

/// [`panel_body`] for the panels in `range`, compiled for AVX2 and FMA where the CPU has them.
fn panel_rows(x: &[f32], rows: usize, w: &[f32], bias: &[f32], k: usize, range: Range<usize>, then: Then) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: this CPU has AVX2 and FMA (checked just above), all that `panel_avx2` is
        // compiled to use.
        #[allow(unsafe_code)]
        return unsafe { panel_avx2(x, rows, w, bias, k, range, then) };
    }
    panel_body::<FMA>(x, rows, w, bias, k, range, then)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn panel_avx2(x: &[f32], rows: usize, w: &[f32], bias: &[f32], k: usize, range: Range<usize>, then: Then) -> Vec<f32> {
    panel_body::<true>(x, rows, w, bias, k, range, then)
}

/// The rows × (panels in `range` × [`NC`]) block of `x · W + b`, row-major: per panel, [`MR`]
/// rows at a time, each value of the panel loaded once per row group. The rows of x are first
/// laid out by group, k-major ([`by_groups`]), so that the inner loop reads two straight runs
/// and checks no bounds.
#[inline(always)]
fn panel_body<const F: bool>(
    x: &[f32],
    rows: usize,
    w: &[f32],
    bias: &[f32],
    k: usize,
    range: Range<usize>,
    then: Then,
) -> Vec<f32> {
    let width = range.len() * NC;
    let mut out = vec![0f32; rows * width];
    let groups = by_groups(x, rows, k);
    let first = range.start;
    for p in range {
        let col = (p - first) * NC;
        let b: &[f32; NC] = bias[p * NC..][..NC].try_into().expect("NC biases");
        let panel = &w[p * k * NC..][..k * NC];
        for (g, xg) in groups.chunks_exact(k * MR).enumerate() {
            let mut acc = [*b; MR];
            for (wk, xk) in panel.chunks_exact(NC).zip(xg.chunks_exact(MR)) {
                for (a, xv) in acc.iter_mut().zip(xk) {
                    for (a, wv) in a.iter_mut().zip(wk) {
                        *a = fma::<F>(*xv, *wv, *a);
                    }
                }
            }
            if let Then::Gelu = then {
                for a in &mut acc {
                    gelu_erf::<F>(a);
                }
            }
            let r0 = g * MR;
            for (r, a) in acc.iter().enumerate().take(rows - r0) {
                out[(r0 + r) * width + col..][..NC].copy_from_slice(a);
            }
        }
    }
    out
}

/// `x` (rows × k) as groups of [`MR`] rows, each k-major (value kk of the group's rows side by
/// side); a last, short group repeats its last row, whose results are not kept.
#[inline(always)]
fn by_groups(x: &[f32], rows: usize, k: usize) -> Vec<f32> {
    let groups = rows.div_ceil(MR);
    let mut out = vec![0f32; groups * k * MR];
    for (g, dst) in out.chunks_exact_mut(k * MR).enumerate() {
        for r in 0..MR {
            let row = &x[(g * MR + r).min(rows - 1) * k..][..k];
            for (d, v) in dst.chunks_exact_mut(MR).zip(row) {
                d[r] = *v;
            }
        }
    }
    out
}

/// [`gelu_erf`] in place, compiled for AVX2 and FMA where the CPU has them (a thread's own
/// entry point: the caller's target features do not pass into a closure).
fn gelu(v: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: this CPU has AVX2 and FMA (checked just above), all that `gelu_avx2` is
        // compiled to use.
        #[allow(unsafe_code)]
        return unsafe { gelu_avx2(v) };
    }
    gelu_erf::<FMA>(v);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gelu_avx2(v: &mut [f32]) {
    gelu_erf::<true>(v);
}

/// Whether this CPU has AVX2 and FMA (checked once).
#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2.get_or_init(|| std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma"))
}
