//! The chat model's weights: int8 codes in blocks of 32 with an f32 scale per block (Q8_0's
//! layout, its scales kept as f32 so that no block pays a half-precision conversion),
//! multiplied by the tokens' activations quantized the same way. Generating one token is bound
//! by reading the weights, so [`Q8::matvec`] reads each row once; reading a prompt is bound by
//! arithmetic, so [`Q8::matmul`] loads each block of a row once for four tokens, within chunks
//! of tokens that stay in cache. AVX2 integer products (runtime-detected; a portable loop
//! elsewhere), the rows split over the chat model's threads. Compared with candle's Q8_0 product it skips the per-call re-packing, the
//! half-precision scales and candle's thread pool (figures in docs/benchmarks.md).

use strata_core::vectors::quantize_i8;

/// Values per block.
const BLOCK: usize = 32;

/// A weight matrix `(out, in)` as int8 blocks.
pub(crate) struct Q8 {
    inputs: usize,
    outputs: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

/// One token's activations, quantized per block.
pub(crate) struct Q8Input {
    codes: Vec<i8>,
    scales: Vec<f32>,
}

/// Quantizes `v` (a multiple of 32 long) into `codes` and one scale per block of 32, as
/// ggml's Q8_0 does (scale = largest magnitude / 127, rounded to nearest) — core's int8
/// quantizer applied block by block.
fn quantize_blocks(v: &[f32], codes: &mut Vec<i8>, scales: &mut Vec<f32>) {
    for block in v.chunks_exact(BLOCK) {
        scales.push(quantize_i8(block, codes));
    }
}

impl Q8 {
    /// From row-major `(outputs, inputs)` f32 weights; None unless `inputs` is a multiple of 32.
    pub(crate) fn new(w: &[f32], outputs: usize, inputs: usize) -> Option<Q8> {
        if !inputs.is_multiple_of(BLOCK) || w.len() != outputs * inputs {
            return None;
        }
        let mut codes = Vec::with_capacity(w.len());
        let mut scales = Vec::with_capacity(w.len() / BLOCK);
        quantize_blocks(w, &mut codes, &mut scales);
        Some(Q8 { inputs, outputs, codes, scales })
    }

    /// An `(0, inputs)` matrix with room for `outputs` rows, filled by [`Q8::push_rows`]; None
    /// unless `inputs` is a multiple of 32.
    pub(crate) fn with_capacity(outputs: usize, inputs: usize) -> Option<Q8> {
        inputs.is_multiple_of(BLOCK).then(|| Q8 {
            inputs,
            outputs: 0,
            codes: Vec::with_capacity(outputs * inputs),
            scales: Vec::with_capacity(outputs * inputs / BLOCK),
        })
    }

    /// Appends whole rows, row-major f32 (a multiple of the input size long).
    pub(crate) fn push_rows(&mut self, w: &[f32]) {
        debug_assert!(w.len().is_multiple_of(self.inputs.max(1)));
        quantize_blocks(w, &mut self.codes, &mut self.scales);
        self.outputs += w.len() / self.inputs.max(1);
    }

    /// Output size.
    pub(crate) fn outputs(&self) -> usize {
        self.outputs
    }

    /// Row `r` back in f32 (a token's embedding); None past the last row.
    pub(crate) fn row(&self, r: usize) -> Option<Vec<f32>> {
        let blocks = self.inputs / BLOCK;
        let codes = self.codes.get(r * self.inputs..(r + 1) * self.inputs)?;
        let scales = &self.scales[r * blocks..(r + 1) * blocks];
        Some(
            codes.chunks_exact(BLOCK).zip(scales).flat_map(|(c, s)| c.iter().map(move |&v| f32::from(v) * s)).collect(),
        )
    }

    /// Quantizes one token's activations for [`Q8::matvec`].
    pub(crate) fn input(&self, x: &[f32]) -> Q8Input {
        let mut codes = Vec::with_capacity(x.len());
        let mut scales = Vec::with_capacity(x.len() / BLOCK);
        quantize_blocks(x, &mut codes, &mut scales);
        Q8Input { codes, scales }
    }

    /// Rows `rows` of `W · x` for one token, on this thread.
    pub(crate) fn rows(&self, x: &Q8Input, rows: std::ops::Range<usize>) -> Vec<f32> {
        let dot = dot_fn();
        let blocks = self.inputs / BLOCK;
        rows.map(|r| {
            dot(
                &self.codes[r * self.inputs..(r + 1) * self.inputs],
                &self.scales[r * blocks..(r + 1) * blocks],
                &x.codes,
                &x.scales,
            )
        })
        .collect()
    }

    /// `W · x` for one token, the rows split over the current rayon pool's threads.
    pub(crate) fn matvec(&self, x: &Q8Input) -> Vec<f32> {
        use rayon::prelude::*;
        let parts = self.parts(rayon::current_num_threads());
        if parts.len() < 2 {
            return self.rows(x, 0..self.outputs);
        }
        let pieces: Vec<Vec<f32>> = parts.into_par_iter().map(|r| self.rows(x, r)).collect();
        pieces.concat()
    }

    /// The rows split into `threads` contiguous ranges of nearly equal length, none shorter
    /// than 32 rows (a shorter share costs more to hand out than to compute).
    pub(crate) fn parts(&self, threads: usize) -> Vec<std::ops::Range<usize>> {
        split_rows(self.outputs, threads)
    }
}

/// `outputs` rows in at most `threads` contiguous ranges of nearly equal length, each at least
/// 32 rows long (one range for fewer than 64 rows).
pub(crate) fn split_rows(outputs: usize, threads: usize) -> Vec<std::ops::Range<usize>> {
    let n = threads.clamp(1, (outputs / 32).max(1));
    (0..n).map(|i| outputs * i / n..outputs * (i + 1) / n).collect()
}

/// Many tokens' activations (a prompt), quantized per block, row-major `(n, inputs)`.
pub(crate) struct Q8Batch {
    n: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

/// Tokens multiplied together by one pass of a weight row (they share its loads).
const GROUP: usize = 4;
/// Tokens whose activations stay in cache while the weight rows stream past them.
const TOKEN_CHUNK: usize = 64;

impl Q8 {
    /// Quantizes `x`, `n` tokens' activations row-major, for [`Q8::matmul`].
    pub(crate) fn batch(&self, x: &[f32]) -> Q8Batch {
        let n = x.len() / self.inputs.max(1);
        let mut codes = Vec::with_capacity(x.len());
        let mut scales = Vec::with_capacity(x.len() / BLOCK);
        quantize_blocks(x, &mut codes, &mut scales);
        Q8Batch { n, codes, scales }
    }

    /// `x · Wᵀ` for a prompt's tokens, `(n, outputs)` row-major, W's rows split over the
    /// current rayon pool's threads. Reading a prompt is bound by arithmetic: each weight row
    /// is loaded once per group of tokens, within chunks of tokens small enough to stay in
    /// cache.
    pub(crate) fn matmul(&self, x: &Q8Batch) -> Vec<f32> {
        use rayon::prelude::*;
        let parts = self.parts(rayon::current_num_threads());
        let pieces: Vec<Vec<f32>> = parts.par_iter().map(|r| self.block(x, r.clone())).collect();
        let mut out = Vec::with_capacity(x.n * self.outputs);
        for t in 0..x.n {
            for (r, piece) in parts.iter().zip(&pieces) {
                let width = r.len();
                out.extend_from_slice(&piece[t * width..(t + 1) * width]);
            }
        }
        out
    }

    /// Rows `rows` of `W · x` for every token, `(n, rows.len())` row-major.
    fn block(&self, x: &Q8Batch, rows: std::ops::Range<usize>) -> Vec<f32> {
        let (blocks, width) = (self.inputs / BLOCK, rows.len());
        let mut out = vec![0f32; x.n * width];
        let (dot, dot4) = (dot_fn(), dot4_fn());
        let token =
            |t: usize| (&x.codes[t * self.inputs..(t + 1) * self.inputs], &x.scales[t * blocks..(t + 1) * blocks]);
        for chunk in (0..x.n).step_by(TOKEN_CHUNK) {
            let end = (chunk + TOKEN_CHUNK).min(x.n);
            for (i, r) in rows.clone().enumerate() {
                let w = &self.codes[r * self.inputs..(r + 1) * self.inputs];
                let ws = &self.scales[r * blocks..(r + 1) * blocks];
                let mut t = chunk;
                while t + GROUP <= end {
                    let sums = dot4(w, ws, [token(t), token(t + 1), token(t + 2), token(t + 3)]);
                    for (j, s) in sums.into_iter().enumerate() {
                        out[(t + j) * width + i] = s;
                    }
                    t += GROUP;
                }
                for t in t..end {
                    let (xc, xs) = token(t);
                    out[t * width + i] = dot(w, ws, xc, xs);
                }
            }
        }
        out
    }
}

/// One weight row's dot products with four tokens.
type Dot4 = fn(&[i8], &[f32], [(&[i8], &[f32]); GROUP]) -> [f32; GROUP];

/// [`dot_fn`]'s switch for four tokens at a time.
fn dot4_fn() -> Dot4 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        return dot4_avx2_checked;
    }
    |w, ws, xs| xs.map(|(x, s)| dot_portable(w, ws, x, s))
}

/// A row's dot product with a token: Σ over blocks of `w_scale · x_scale · Σ w_code · x_code`.
type Dot = fn(&[i8], &[f32], &[i8], &[f32]) -> f32;

/// The one switch for this kernel: AVX2 on x86-64 CPUs that have it (with FMA), else the
/// portable loop, the same code on every target (the compiler vectorizes it: NEON on aarch64).
fn dot_fn() -> Dot {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        return dot_avx2_checked;
    }
    dot_portable
}

fn dot_portable(w: &[i8], ws: &[f32], x: &[i8], xs: &[f32]) -> f32 {
    w.chunks_exact(BLOCK)
        .zip(x.chunks_exact(BLOCK))
        .zip(ws.iter().zip(xs))
        .map(|((a, b), (sa, sb))| {
            let s: i32 = a.iter().zip(b).map(|(p, q)| i32::from(*p) * i32::from(*q)).sum();
            s as f32 * (sa * sb)
        })
        .sum()
}

/// Only handed out by [`dot_fn`] after AVX2 and FMA were detected.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn dot_avx2_checked(w: &[i8], ws: &[f32], x: &[i8], xs: &[f32]) -> f32 {
    // SAFETY: only returned by `dot_fn`, which checked for AVX2 and FMA.
    unsafe { dot_avx2(w, ws, x, xs) }
}

/// Per block: |w| as unsigned bytes times x with w's sign (`maddubs`, pairs into 16 bits —
/// at most 2 · 127 · 127, no saturation), pairs again into 32 bits, to f32, scaled, added.
/// Four blocks per step into four sums, so no addition waits for the one before.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(w: &[i8], ws: &[f32], x: &[i8], xs: &[f32]) -> f32 {
    use std::arch::x86_64::{
        __m256, __m256i, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm256_add_ps, _mm256_castps256_ps128,
        _mm256_cvtepi32_ps, _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_si256, _mm256_madd_epi16,
        _mm256_maddubs_epi16, _mm256_set1_epi16, _mm256_set1_ps, _mm256_setzero_ps, _mm256_sign_epi8,
    };
    let blocks = ws.len().min(xs.len()).min(w.len() / BLOCK).min(x.len() / BLOCK);
    let ones = _mm256_set1_epi16(1);
    let block = |b: usize, acc: __m256| -> __m256 {
        // SAFETY: callers pass b < blocks, so both 32-byte loads lie inside `w` and `x`
        // (unaligned loads).
        let (bw, bx) = unsafe {
            (
                _mm256_loadu_si256(w.as_ptr().add(b * BLOCK).cast::<__m256i>()),
                _mm256_loadu_si256(x.as_ptr().add(b * BLOCK).cast::<__m256i>()),
            )
        };
        let products =
            _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(bw, bw), _mm256_sign_epi8(bx, bw)), ones);
        _mm256_fmadd_ps(_mm256_set1_ps(ws[b] * xs[b]), _mm256_cvtepi32_ps(products), acc)
    };
    let mut acc = [_mm256_setzero_ps(); 4];
    let whole = blocks / 4 * 4;
    for b in (0..whole).step_by(4) {
        for (j, a) in acc.iter_mut().enumerate() {
            *a = block(b + j, *a);
        }
    }
    for b in whole..blocks {
        acc[0] = block(b, acc[0]);
    }
    let acc = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let sum = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    let sum = _mm_hadd_ps(sum, sum);
    _mm_cvtss_f32(_mm_hadd_ps(sum, sum))
}

/// Only handed out by [`dot4_fn`] after AVX2 and FMA were detected.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn dot4_avx2_checked(w: &[i8], ws: &[f32], xs: [(&[i8], &[f32]); GROUP]) -> [f32; GROUP] {
    // SAFETY: only returned by `dot4_fn`, which checked for AVX2 and FMA.
    unsafe { dot4_avx2(w, ws, xs) }
}

/// [`dot_avx2`] for four tokens: each block of the row is loaded, and its sign taken, once.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot4_avx2(w: &[i8], ws: &[f32], xs: [(&[i8], &[f32]); GROUP]) -> [f32; GROUP] {
    use std::arch::x86_64::{
        __m256i, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm256_castps256_ps128, _mm256_cvtepi32_ps,
        _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maddubs_epi16,
        _mm256_set1_epi16, _mm256_set1_ps, _mm256_setzero_ps, _mm256_sign_epi8,
    };
    let mut blocks = ws.len().min(w.len() / BLOCK);
    for (x, s) in &xs {
        blocks = blocks.min(s.len()).min(x.len() / BLOCK);
    }
    let ones = _mm256_set1_epi16(1);
    let mut acc = [_mm256_setzero_ps(); GROUP];
    let xp = xs.map(|(x, _)| x.as_ptr());
    let sp = xs.map(|(_, s)| s.as_ptr());
    for b in 0..blocks {
        // SAFETY: b < blocks, so every 32-byte load lies inside its slice (unaligned loads),
        // and every scale read inside its slice of scales.
        unsafe {
            let bw = _mm256_loadu_si256(w.as_ptr().add(b * BLOCK).cast::<__m256i>());
            let abs = _mm256_sign_epi8(bw, bw);
            let wsb = *ws.get_unchecked(b);
            for j in 0..GROUP {
                let bx = _mm256_loadu_si256(xp[j].add(b * BLOCK).cast::<__m256i>());
                let products = _mm256_madd_epi16(_mm256_maddubs_epi16(abs, _mm256_sign_epi8(bx, bw)), ones);
                acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(wsb * *sp[j].add(b)), _mm256_cvtepi32_ps(products), acc[j]);
            }
        }
    }
    acc.map(|a| {
        let sum = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        let sum = _mm_hadd_ps(sum, sum);
        _mm_cvtss_f32(_mm_hadd_ps(sum, sum))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next of a fixed sequence of values in [-1, 1) (a linear congruential generator).
    fn noise(seed: &mut u64) -> f32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
    }

    #[test]
    fn products_match_the_portable_loop_and_f32() {
        let (out, inp) = (70, 96);
        let mut seed = 3u64;
        let mut next = || noise(&mut seed);
        let w: Vec<f32> = (0..out * inp).map(|_| next()).collect();
        let x: Vec<f32> = (0..inp).map(|_| next()).collect();
        let q = Q8::new(&w, out, inp).expect("a multiple of 32");
        let xi = q.input(&x);
        let got = q.matvec(&xi);
        for (r, g) in got.iter().enumerate() {
            let row = &w[r * inp..(r + 1) * inp];
            let exact: f32 = row.iter().zip(&x).map(|(a, b)| a * b).sum();
            assert!((g - exact).abs() < 0.05, "row {r}: {g} vs {exact}");
            let blocks = inp / BLOCK;
            let portable = dot_portable(
                &q.codes[r * inp..(r + 1) * inp],
                &q.scales[r * blocks..(r + 1) * blocks],
                &xi.codes,
                &xi.scales,
            );
            assert!((g - portable).abs() < 1e-4, "row {r}: {g} vs {portable}");
        }
        assert!(Q8::new(&w[..out * 40], out, 40).is_none(), "40 is not whole blocks");
    }

    #[test]
    fn a_prompts_product_matches_token_by_token() {
        let (out, inp, n) = (70, 96, 71);
        let mut seed = 5u64;
        let mut next = || noise(&mut seed);
        let w: Vec<f32> = (0..out * inp).map(|_| next()).collect();
        let x: Vec<f32> = (0..n * inp).map(|_| next()).collect();
        let q = Q8::new(&w, out, inp).expect("a multiple of 32");
        let batch = q.batch(&x);
        let all = q.matmul(&batch);
        // The four-token kernel this CPU runs (AVX2 where detected) against the portable loop.
        let blocks = inp / BLOCK;
        let token = |t: usize| (&batch.codes[t * inp..(t + 1) * inp], &batch.scales[t * blocks..(t + 1) * blocks]);
        for r in 0..out {
            let (w, ws) = (&q.codes[r * inp..(r + 1) * inp], &q.scales[r * blocks..(r + 1) * blocks]);
            let four = dot4_fn()(w, ws, [token(0), token(1), token(2), token(3)]);
            for (t, got) in four.iter().enumerate() {
                let (xc, xs) = token(t);
                let portable = dot_portable(w, ws, xc, xs);
                assert!((got - portable).abs() < 1e-4, "row {r}, token {t}: {got} vs {portable}");
            }
        }
        assert_eq!(all.len(), n * out);
        for (t, row) in x.chunks_exact(inp).enumerate() {
            let one = q.matvec(&q.input(row));
            for (r, (a, b)) in all[t * out..(t + 1) * out].iter().zip(&one).enumerate() {
                assert!((a - b).abs() < 1e-4, "token {t}, row {r}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn the_rows_split_evenly_over_any_number_of_threads() {
        assert_eq!(split_rows(70, 2), vec![0..35, 35..70]);
        assert_eq!(split_rows(70, 8), vec![0..35, 35..70], "no share under 32 rows");
        assert_eq!(split_rows(40, 4), vec![0..40]);
        let five = split_rows(1000, 5);
        assert_eq!(five.len(), 5);
        assert_eq!(five.first().map(|r| r.start), Some(0));
        assert_eq!(five.last().map(|r| r.end), Some(1000));
        assert!(five.windows(2).all(|w| w[0].end == w[1].start && w[0].len().abs_diff(w[1].len()) <= 1));
    }

    #[test]
    fn products_are_the_same_on_one_thread_and_on_many() {
        let (out, inp, n) = (200, 64, 9);
        let mut seed = 7u64;
        let mut next = || noise(&mut seed);
        let w: Vec<f32> = (0..out * inp).map(|_| next()).collect();
        let x: Vec<f32> = (0..n * inp).map(|_| next()).collect();
        let q = Q8::new(&w, out, inp).expect("a multiple of 32");
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            pool.install(|| (q.matvec(&q.input(&x[..inp])), q.matmul(&q.batch(&x))))
        };
        let one = on(1);
        for threads in [2, 3, 5, 8] {
            assert_eq!(on(threads), one, "{threads} threads");
        }
    }

    #[test]
    fn rows_pushed_in_parts_are_the_matrix_made_at_once() {
        let (out, inp) = (50, 64);
        let w: Vec<f32> = (0..out * inp).map(|i| ((i * 37 % 101) as f32 - 50.0) / 17.0).collect();
        let whole = Q8::new(&w, out, inp).expect("whole blocks");
        let mut parts = Q8::with_capacity(out, inp).expect("whole blocks");
        for chunk in w.chunks(7 * inp) {
            parts.push_rows(chunk);
        }
        assert_eq!((parts.outputs, &parts.codes, &parts.scales), (whole.outputs, &whole.codes, &whole.scales));
        assert!(Q8::with_capacity(out, 40).is_none(), "40 is not whole blocks");
    }
}
