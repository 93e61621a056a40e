//! Matrix products on Intel AMX tiles with f32 accuracy ("bf16×3").
//!
//! AMX multiplies 16×32 bf16 tiles into 16×16 f32 accumulators, many times faster than
//! AVX-512 f32 arithmetic — but bf16 keeps 8 bits of mantissa, too few for embeddings that
//! must agree with the reference to 1e-3. So each f32 is split into two bf16s, `hi = bf16(x)`
//! and `lo = bf16(x − hi)` (together 16 bits of mantissa), and a product is the sum of three
//! tile products, `hi·hi + hi·lo + lo·hi` (the fourth, `lo·lo`, is below f32's rounding),
//! accumulated in f32. Products agree with f64 ones to ~1e-5 (tested).
//!
//! Used when the CPU has AMX-TILE and AMX-BF16 and Linux grants the process the tile state
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM)`); `STRATA_AMX=0` turns it off. Elsewhere the callers keep
//! their f32 products.

use std::sync::OnceLock;

/// Rows and f32 columns of an accumulator tile; a bf16 tile is 16 × 32.
const T: usize = 16;
/// bf16 values along K in one tile.
const KT: usize = 32;
/// Bytes of x (both halves) kept in cache while the weights pass over them.
const CHUNK_BYTES: usize = 1 << 20;

/// Whether AMX is usable in this process (checked, and asked for, once).
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| std::env::var("STRATA_AMX").map_or(true, |v| v != "0") && detect())
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[allow(unsafe_code)]
fn detect() -> bool {
    // CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE.
    let max = std::arch::x86_64::__cpuid(0).eax;
    if max < 7 {
        return false;
    }
    let edx = std::arch::x86_64::__cpuid_count(7, 0).edx;
    if edx & (1 << 22) == 0 || edx & (1 << 24) == 0 {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with these arguments only asks the kernel for permission to use the
    // AMX tile state; it touches no memory of ours.
    unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> bool {
    false
}

/// f32 → bf16, rounded to nearest even; branch-free so that loops of it vectorize (finite
/// inputs: activations and weights of a model; a NaN stays a NaN or becomes an infinity).
fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

fn f32_of(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Splits `x` into `hi + lo`, both bf16.
fn split(x: f32) -> (u16, u16) {
    let hi = bf16(x);
    (hi, bf16(x - f32_of(hi)))
}

/// A weight matrix `W (k, n)` (so that `y = x · W`) as one bf16 matrix of `3k` rows: for each
/// block of 32 rows of W, its high halves, its low halves and its high halves again, to meet
/// x's `hi, hi, lo` (so one product over `3k` is `hi·hi + hi·lo + lo·hi`). Stored in AMX's
/// pair-interleaved tiles: per block of 16 columns and 32 rows, a 16 × 32 tile whose row r
/// holds `W'[2r][c], W'[2r+1][c]` for the 16 columns c.
pub(crate) struct Packed {
    k: usize,
    n: usize,
    tiles: Vec<u16>,
    /// Added to every row of the product.
    bias: Vec<f32>,
}

/// Which half of x and of W each of the three parts of a 32-block takes.
const PARTS: [(bool, bool); 3] = [(true, true), (true, false), (false, true)]; // (x hi?, w hi?)

impl Packed {
    /// Packs `w`, row-major `(k, n)`, and its `bias` (n). None when the shape does not fit
    /// whole tiles (k a multiple of 32, n of 32).
    pub(crate) fn new(w: &[f32], k: usize, n: usize, bias: Vec<f32>) -> Option<Packed> {
        if !k.is_multiple_of(KT) || !n.is_multiple_of(2 * T) || w.len() != k * n || bias.len() != n {
            return None;
        }
        let (kb, nb) = (3 * k / KT, n / T);
        let mut tiles = vec![0u16; 3 * k * n];
        for b in 0..nb {
            for t in 0..kb {
                let tile = (b * kb + t) * T * KT;
                let w_hi = PARTS[t % 3].1;
                for r in 0..T {
                    for c in 0..T {
                        for p in 0..2 {
                            let (h, l) = split(w[((t / 3) * KT + 2 * r + p) * n + b * T + c]);
                            tiles[tile + r * KT + c * 2 + p] = if w_hi { h } else { l };
                        }
                    }
                }
            }
        }
        Some(Packed { k, n, tiles, bias })
    }

    /// Output columns.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// `x (m, k) · W + bias`, row-major `(m, n)`, split over `threads` (1 or 2).
    /// Only call when [`available`] said yes.
    pub(crate) fn matmul(&self, x: &[f32], m: usize, threads: usize) -> Vec<f32> {
        let (k, n) = (self.k, self.n);
        debug_assert_eq!(x.len(), m * k);
        // Rows in pairs of tiles (32) — one tile for an input of at most 16 rows (a query) —
        // x as `hi, hi, lo` per 32 values.
        let mp = if m <= T { T } else { m.div_ceil(2 * T) * 2 * T };
        let k3 = 3 * k;
        let mut a = vec![0u16; mp * k3];
        for (src, dst) in x.chunks_exact(k).zip(a.chunks_exact_mut(k3)) {
            for (block, out) in src.chunks_exact(KT).zip(dst.chunks_exact_mut(3 * KT)) {
                for (i, v) in block.iter().enumerate() {
                    let (h, l) = split(*v);
                    out[i] = h;
                    out[KT + i] = h;
                    out[2 * KT + i] = l;
                }
            }
        }
        let mut out = vec![0f32; mp * n];
        let (blocks, pairs) = (mp.div_ceil(2 * T), n / (2 * T));
        if threads >= 2 && blocks >= 2 {
            // By rows: each thread its own rows of x and of the output.
            let half = blocks / 2 * 2 * T;
            let (top, bottom) = out.split_at_mut(half * n);
            let (a_top, a_bottom) = a.split_at(half * k3);
            rayon::join(|| kernel(self, a_top, 0, pairs, top), || kernel(self, a_bottom, 0, pairs, bottom));
        } else if threads >= 2 && pairs >= 2 {
            // One pair of row blocks (a query): by columns, the left half into a buffer of its own.
            let half = pairs / 2;
            let mut left = vec![0f32; mp * n];
            rayon::join(|| kernel(self, &a, 0, half, &mut left), || kernel(self, &a, half, pairs - half, &mut out));
            for (o, v) in out.iter_mut().zip(&left) {
                *o += v;
            }
        } else {
            kernel(self, &a, 0, pairs, &mut out);
        }
        out.truncate(m * n);
        for row in out.chunks_exact_mut(n) {
            for (o, b) in row.iter_mut().zip(&self.bias) {
                *o += b;
            }
        }
        out
    }
}

/// The tile configuration: palette 1, eight tiles of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct Config([u8; 64]);

impl Config {
    fn new() -> Config {
        let mut c = [0u8; 64];
        c[0] = 1; // palette
        for t in 0..8 {
            c[16 + 2 * t] = 64; // bytes per row
            c[48 + t] = T as u8; // rows
        }
        Config(c)
    }
}

/// Column pairs `first .. first + count` of `x · W` for the rows of `a` (x as packed by
/// [`Packed::matmul`]: 16 rows, or a multiple of 32) into `out`, row-major with all n columns
/// (the other columns are left as they are). Four accumulators (2 × 2 tiles) so that each
/// loaded tile serves two products and no product waits for the one before; 1 × 2 for 16 rows.
#[allow(unsafe_code)]
fn kernel(p: &Packed, a: &[u16], first: usize, count: usize, out: &mut [f32]) {
    let (k3, n) = (3 * p.k, p.n);
    let mp = a.len() / k3;
    let kb = k3 / KT;
    let cfg = Config::new();
    let a_stride = k3 * 2; // bytes between rows of x
    let c_stride = n * 4;
    let b_stride = KT * 2; // a packed tile's rows are 64 bytes apart
    let row_pairs = mp.div_ceil(2 * T);
    let single = mp == T;
    // Rows in chunks whose x stays in L2 while every column pair passes over it; a pair's
    // packed weights then stay in cache across the chunk's rows.
    let chunk = (CHUNK_BYTES / (k3 * 2) / (2 * T)).max(1);
    assert!(out.len() >= mp * n && a.len() == mp * k3 && p.tiles.len() == k3 * n && first + count <= n / (2 * T));
    // SAFETY: `available()` was true (the callers check), so the CPU has AMX and the kernel
    // granted this process the tile state. Tile loads read 16 rows of 64 bytes: from `a` at
    // row r < mp, values kk .. kk + 32 with kk + 32 <= 3k (inside mp·3k values); from
    // `p.tiles` whole tiles below 3k·n (asserted above). Stores write 16 rows × 64 bytes at
    // row r < mp, columns col .. col + 16 <= n: inside `out` (at least mp·n values).
    unsafe {
        std::arch::asm!("ldtilecfg [{0}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
        for c0 in (0..row_pairs).step_by(chunk) {
            for pair in first..first + count {
                let (b0, b1) = (2 * pair, 2 * pair + 1);
                for rp in c0..(c0 + chunk).min(row_pairs) {
                    let r0 = rp * 2 * T;
                    if single {
                        one_row_block(p, a, kb, a_stride, b0, b1, out, c_stride);
                        continue;
                    }
                    std::arch::asm!(
                        "tilezero tmm0",
                        "tilezero tmm1",
                        "tilezero tmm2",
                        "tilezero tmm3",
                        options(nostack, nomem)
                    );
                    for t in 0..kb {
                        let a0 = r0 * k3 + t * KT;
                        std::arch::asm!(
                            "tileloadd tmm4, [{a0} + {as}*1]",
                            "tileloadd tmm5, [{a1} + {as}*1]",
                            "tileloadd tmm6, [{b0} + {bs}*1]",
                            "tileloadd tmm7, [{b1} + {bs}*1]",
                            "tdpbf16ps tmm0, tmm4, tmm6",
                            "tdpbf16ps tmm1, tmm4, tmm7",
                            "tdpbf16ps tmm2, tmm5, tmm6",
                            "tdpbf16ps tmm3, tmm5, tmm7",
                            a0 = in(reg) a.as_ptr().add(a0),
                            a1 = in(reg) a.as_ptr().add(a0 + T * k3),
                            as = in(reg) a_stride,
                            b0 = in(reg) p.tiles.as_ptr().add((b0 * kb + t) * T * KT),
                            b1 = in(reg) p.tiles.as_ptr().add((b1 * kb + t) * T * KT),
                            bs = in(reg) b_stride,
                            options(nostack, readonly),
                        );
                    }
                    let c = out.as_mut_ptr().add(r0 * n + b0 * T);
                    std::arch::asm!(
                        "tilestored [{c00} + {cs}*1], tmm0",
                        "tilestored [{c01} + {cs}*1], tmm1",
                        "tilestored [{c10} + {cs}*1], tmm2",
                        "tilestored [{c11} + {cs}*1], tmm3",
                        c00 = in(reg) c,
                        c01 = in(reg) c.add(T),
                        c10 = in(reg) c.add(T * n),
                        c11 = in(reg) c.add(T * n + T),
                        cs = in(reg) c_stride,
                        options(nostack),
                    );
                }
            }
        }
        std::arch::asm!("tilerelease", options(nostack, nomem));
    }
}

/// Columns blocks `b0` and `b1` for the 16 rows of `a` (tiles configured by [`kernel`]).
#[allow(unsafe_code, clippy::too_many_arguments)]
unsafe fn one_row_block(
    p: &Packed,
    a: &[u16],
    kb: usize,
    a_stride: usize,
    b0: usize,
    b1: usize,
    out: &mut [f32],
    c_stride: usize,
) {
    let b_stride = KT * 2;
    // SAFETY: as in `kernel`, whose checks cover these reads (16 rows of `a`, whole packed
    // tiles) and the two 16 × 16 stores at columns b0·16 and b1·16 of the first 16 rows.
    unsafe {
        std::arch::asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem));
        for t in 0..kb {
            std::arch::asm!(
                "tileloadd tmm4, [{a0} + {as}*1]",
                "tileloadd tmm6, [{b0} + {bs}*1]",
                "tileloadd tmm7, [{b1} + {bs}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                a0 = in(reg) a.as_ptr().add(t * KT),
                as = in(reg) a_stride,
                b0 = in(reg) p.tiles.as_ptr().add((b0 * kb + t) * T * KT),
                b1 = in(reg) p.tiles.as_ptr().add((b1 * kb + t) * T * KT),
                bs = in(reg) b_stride,
                options(nostack, readonly),
            );
        }
        std::arch::asm!(
            "tilestored [{c0} + {cs}*1], tmm0",
            "tilestored [{c1} + {cs}*1], tmm1",
            c0 = in(reg) out.as_mut_ptr().add(b0 * T),
            c1 = in(reg) out.as_mut_ptr().add(b1 * T),
            cs = in(reg) c_stride,
            options(nostack),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(x: &[f32], w: &[f32], bias: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f64;
                for t in 0..k {
                    s += f64::from(x[i * k + t]) * f64::from(w[t * n + j]);
                }
                out[i * n + j] = s as f32 + bias[j];
            }
        }
        out
    }

    #[test]
    fn splits_into_two_bf16_halves() {
        for x in [1.0f32, -0.3, 1e-3, 123.456, 0.0] {
            let (h, l) = split(x);
            assert!((f32_of(h) + f32_of(l) - x).abs() <= x.abs() * 1e-5, "{x}");
        }
        assert_eq!(bf16(1.0), 0x3f80);
    }

    #[test]
    fn products_match_f32_to_about_1e_5() {
        if !available() {
            return; // nothing to compare on a CPU without AMX; the f32 path is used there
        }
        let (m, k, n) = (37, 64, 96);
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        let x: Vec<f32> = (0..m * k).map(|_| next()).collect();
        let w: Vec<f32> = (0..k * n).map(|_| next() * 0.1).collect();
        let bias: Vec<f32> = (0..n).map(|_| next()).collect();
        let p = Packed::new(&w, k, n, bias.clone()).expect("whole tiles");
        let expect = reference(&x, &w, &bias, m, k, n);
        for rows in [m, 9] {
            let expect = &expect[..rows * n];
            for threads in [1, 2] {
                let got = p.matmul(&x[..rows * k], rows, threads);
                assert_eq!(got.len(), rows * n);
                let worst = got.iter().zip(expect).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
                assert!(worst < 2e-5, "{rows} rows, threads {threads}: worst difference {worst}");
            }
        }
    }
}
