//! The BERT encoder (all-MiniLM-L6-v2's architecture) for x86-64 CPUs with AMX, in plain Rust
//! over vectors: the path that stored memories and queries take where [`crate::amx`] is
//! available (elsewhere, and on every other architecture, [`crate::bert`] runs the same model
//! on candle's tensors; `MiniLm` chooses in one place).
//!
//! - **No padding.** The texts of a call are laid end to end, one row per real token: the
//!   products (all but a few percent of the work) run over every token and nothing else.
//!   Padding to the longest text of a sorted sub-batch cost ~28% more rows on LoCoMo's turns.
//! - **Attention per text**, over its own tokens (no mask needed): per head, scores against a
//!   transposed copy of the keys, softmax, then the weighted values.
//! - **Fused element-wise steps**: the residual add with layer norm, GELU, mean pooling and the
//!   final normalization, on rows that are still in cache; compiled for AVX-512 (every CPU
//!   with AMX has it) from the plain loops of [`crate::elementwise`].
//!
//! Numerically it is the model sentence-transformers runs: products at f32 accuracy
//! ([`crate::amx`]), softmax and norms in f32 (tests check the reference's similarities to
//! 1e-3 and agreement with the candle path).

use candle_transformers::models::bert::Config;

use crate::amx::{Packed, Rows};
use crate::checkpoint::{self, Checkpoint, Dense};
use crate::elementwise::{add_norm, gelu_erf, norm, softmax};

/// Values per attention head: this path is written for MiniLM's 384 = 12 × 32 (other shapes
/// take [`crate::bert`]).
const HD: usize = 32;

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

struct Layer {
    /// Query, key and value in one product: each row's output is `q | k | v`.
    qkv: Packed,
    attention_out: Packed,
    attention_norm: Norm,
    intermediate: Packed,
    output: Packed,
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

/// Packs a dense layer for AMX; None when its shape does not fill whole tiles.
fn packed(d: &Dense) -> candle_core::Result<Option<Packed>> {
    let (k, n) = d.weight.dims2()?;
    Ok(Packed::new(&d.weight.flatten_all()?.to_vec1()?, k, n, d.bias.to_vec1()?))
}

impl Encoder {
    /// Packs the weights when this CPU has AMX (and AVX-512) and the model's shapes fit whole
    /// tiles; None otherwise (the caller keeps [`crate::bert`]).
    pub(crate) fn new(w: &Checkpoint, c: &Config) -> candle_core::Result<Option<Encoder>> {
        if !crate::amx::available() || !avx512() || c.hidden_size != HD * c.num_attention_heads {
            return Ok(None);
        }
        let mut layers = Vec::with_capacity(w.layers.len());
        for l in &w.layers {
            let products = (packed(&l.qkv)?, packed(&l.attention_out)?, packed(&l.intermediate)?, packed(&l.output)?);
            let (Some(qkv), Some(attention_out), Some(intermediate), Some(output)) = products else {
                return Ok(None); // shapes that do not fill whole tiles
            };
            layers.push(Layer {
                qkv,
                attention_out,
                attention_norm: Norm::new(&l.attention_norm)?,
                intermediate,
                output,
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

    /// The pooled, L2-normalized vector of each text (its token ids, at most the model's
    /// positions long), each product split over `threads` (1 or 2).
    pub(crate) fn embed(&self, texts: &[&[u32]], threads: usize) -> Vec<Vec<f32>> {
        // SAFETY: `new` returned this encoder only where AVX-512 (F, BW, VL), AVX2 and FMA are
        // available, which is all that `embed_avx512` is compiled to use.
        #[allow(unsafe_code)]
        unsafe {
            self.embed_avx512(texts, threads)
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    fn embed_avx512(&self, texts: &[&[u32]], threads: usize) -> Vec<Vec<f32>> {
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
        let mut scratch = Scratch::default();
        for l in &self.layers {
            let qkv = l.qkv.matmul_rows(&Rows::split(&x, rows, h), threads);
            let ctx = self.attention(&qkv, texts, &mut scratch);
            let mut a = l.attention_out.matmul_rows(&Rows::split(&ctx, rows, h), threads);
            for (dst, res) in a.chunks_exact_mut(h).zip(x.chunks_exact(h)) {
                add_norm(dst, res, &l.attention_norm.weight, &l.attention_norm.bias, l.attention_norm.eps);
            }
            let mut i = l.intermediate.matmul_rows(&Rows::split(&a, rows, h), threads);
            gelu_erf(&mut i);
            let inner = i.len() / rows.max(1);
            x = l.output.matmul_rows(&Rows::split(&i, rows, inner), threads);
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
    /// rows (rows × hidden). Queries go four at a time, keys sixteen at a time (a text's keys
    /// are padded with zeros to a multiple of 16, outside the softmax), so that the loops
    /// compile to whole AVX-512 registers with independent accumulators.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    fn attention(&self, qkv: &[f32], texts: &[&[u32]], s: &mut Scratch) -> Vec<f32> {
        const Q: usize = 4;
        const K: usize = 16;
        let (h, heads) = (self.hidden, self.heads);
        let scale = 1.0 / (HD as f32).sqrt();
        let rows: usize = texts.iter().map(|t| t.len()).sum();
        let mut ctx = vec![0f32; rows * h];
        let mut start = 0;
        for ids in texts {
            let len = ids.len();
            let lp = len.next_multiple_of(K);
            let at = |i: usize, part: usize, head: usize| -> &[f32; HD] {
                qkv[(start + i) * 3 * h + part * h + head * HD..][..HD].try_into().expect("HD values")
            };
            s.keys.clear();
            s.keys.resize(HD * lp, 0.0);
            s.scores.resize(Q * lp, 0.0);
            for head in 0..heads {
                // Keys transposed (HD × lp), so that a query's scores are a sum of rows.
                for j in 0..len {
                    for (d, kv) in at(j, 1, head).iter().enumerate() {
                        s.keys[d * lp + j] = *kv;
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
                        let block = simd::scores(&q, &s.keys[c..], lp);
                        for (r, b) in block.iter().enumerate() {
                            s.scores[r * lp + c..][..K].copy_from_slice(b);
                        }
                    }
                    for r in 0..n {
                        softmax(&mut s.scores[r * lp..r * lp + len]);
                    }
                    let o = simd::weighted(&s.scores, lp, len, |j| at(j, 2, head));
                    for (r, o) in o.iter().enumerate().take(n) {
                        ctx[(start + i0 + r) * h + head * HD..][..HD].copy_from_slice(o);
                    }
                }
            }
            start += len;
        }
        ctx
    }
}

/// The two inner loops of attention in AVX-512 registers (the compiler, left to itself,
/// vectorized them across the four queries with gathers, 2.3× slower than scalar code).
mod simd {
    use super::HD;
    use std::arch::x86_64::{
        __m512, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
    };

    /// Sixteen f32 from the start of `v` (which must hold them).
    #[inline]
    #[target_feature(enable = "avx512f")]
    #[allow(unsafe_code)]
    fn load(v: &[f32]) -> __m512 {
        let v = &v[..16];
        // SAFETY: `v` holds 16 f32 (the slice above checks it); the load is unaligned.
        unsafe { _mm512_loadu_ps(v.as_ptr()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    #[allow(unsafe_code)]
    fn store(v: __m512) -> [f32; 16] {
        let mut out = [0f32; 16];
        // SAFETY: `out` holds 16 f32; the store is unaligned.
        unsafe { _mm512_storeu_ps(out.as_mut_ptr(), v) };
        out
    }

    /// Scores of four queries against sixteen keys: `keys` holds, for each of the HD
    /// dimensions, the keys' values from offset 0, one dimension every `stride` values.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn scores(q: &[[f32; HD]; 4], keys: &[f32], stride: usize) -> [[f32; 16]; 4] {
        let mut acc = [_mm512_setzero_ps(); 4];
        for d in 0..HD {
            let k = load(&keys[d * stride..]);
            for (a, q) in acc.iter_mut().zip(q) {
                *a = _mm512_fmadd_ps(_mm512_set1_ps(q[d]), k, *a);
            }
        }
        acc.map(|a| store(a))
    }

    /// For four rows of `probs` (one every `stride` values), the sum over keys `j < len` of
    /// `probs[r][j] · value(j)`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn weighted<'a>(
        probs: &[f32],
        stride: usize,
        len: usize,
        value: impl Fn(usize) -> &'a [f32; HD],
    ) -> [[f32; HD]; 4] {
        let mut acc = [[_mm512_setzero_ps(); 2]; 4];
        for j in 0..len {
            let v = value(j);
            let (v0, v1) = (load(&v[..]), load(&v[16..]));
            for (r, a) in acc.iter_mut().enumerate() {
                let p = _mm512_set1_ps(probs[r * stride + j]);
                a[0] = _mm512_fmadd_ps(p, v0, a[0]);
                a[1] = _mm512_fmadd_ps(p, v1, a[1]);
            }
        }
        acc.map(|[a, b]| {
            let mut out = [0f32; HD];
            out[..16].copy_from_slice(&store(a));
            out[16..].copy_from_slice(&store(b));
            out
        })
    }
}

/// Buffers reused across a call's attention steps.
#[derive(Default)]
struct Scratch {
    keys: Vec<f32>,
    scores: Vec<f32>,
}

/// Whether the element-wise code of [`Encoder::embed`] may use AVX-512 and FMA here.
fn avx512() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
}
