//! Matrix products on Intel AMX tiles with f32 accuracy ("bf16×3").
//!
//! AMX multiplies 16×32 bf16 tiles into 16×16 f32 accumulators, many times faster than
//! AVX-512 f32 arithmetic — but bf16 keeps 8 bits of mantissa, too few for embeddings that
//! must agree with the reference to 1e-3. So each f32 is split into two bf16s, `hi = bf16(x)`
//! and `lo = bf16(x − hi)` (together 16 bits of mantissa), and a product is the sum of three
//! tile products, `hi·hi + hi·lo + lo·hi` (the fourth, `lo·lo`, is below f32's rounding),
//! accumulated in f32. Products agree with f64 ones to ~1e-5 (tested).
//!
//! What bounds the speed is loading tiles, not multiplying them: on the Xeon of
//! docs/benchmarks.md a 1 KiB tile load costs about three tile products, even from L1. So the
//! kernel loads each of the eight tiles of a 32 × 32 output over 32 values of k once (x's
//! `hi` and `lo` for two row tiles, W's `lo` and `hi` for two column tiles) and makes the
//! twelve products from them: 8 loads per 12 products, where three plain 2 × 2 steps take 12.
//!
//! x86-64 only (`lib.rs` declares the module so). Used when the CPU has AMX-TILE and AMX-BF16
//! and Linux grants the process the tile state (`arch_prctl(ARCH_REQ_XCOMP_PERM)`);
//! `STRATA_AMX=0` turns it off. Elsewhere the embedder keeps its reference encoder.

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

#[cfg(target_os = "linux")]
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

/// Other systems grant the tile state differently (Windows on request, macOS not at all):
/// untried, so off.
#[cfg(not(target_os = "linux"))]
fn detect() -> bool {
    false
}

/// f32 → bf16, rounded to nearest even; branch-free so that loops of it vectorize (finite
/// inputs: activations and weights of a model; a NaN stays a NaN or becomes an infinity).
#[inline(always)]
fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

#[inline(always)]
fn f32_of(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Splits `x` into `hi + lo`, both bf16.
#[inline(always)]
fn split(x: f32) -> (u16, u16) {
    let hi = bf16(x);
    (hi, bf16(x - f32_of(hi)))
}

/// A weight matrix `W (k, n)` (so that `y = x · W`) as bf16 tiles: per block of 16 columns and
/// 32 rows of W, the tile of its low halves, then the tile of its high halves, in AMX's
/// pair-interleaved layout (row r of a tile holds `W[2r][c], W[2r+1][c]` for its 16 columns c).
pub(crate) struct Packed {
    k: usize,
    n: usize,
    tiles: Vec<u16>,
    /// Added to every row of the product.
    bias: Vec<f32>,
}

/// u16 values in one tile (16 rows of 32).
const TILE: usize = T * KT;

impl Packed {
    /// Packs `w`, row-major `(k, n)`, and its `bias` (n). None when the shape does not fit
    /// whole tiles (k a multiple of 32, n of 32).
    pub(crate) fn new(w: &[f32], k: usize, n: usize, bias: Vec<f32>) -> Option<Packed> {
        if !k.is_multiple_of(KT) || !n.is_multiple_of(2 * T) || w.len() != k * n || bias.len() != n {
            return None;
        }
        let kj = k / KT;
        let mut tiles = vec![0u16; 2 * k * n];
        for b in 0..n / T {
            for j in 0..kj {
                let lo = (b * kj + j) * 2 * TILE;
                for r in 0..T {
                    for c in 0..T {
                        for p in 0..2 {
                            let (h, l) = split(w[(j * KT + 2 * r + p) * n + b * T + c]);
                            let at = r * KT + c * 2 + p;
                            tiles[lo + at] = l;
                            tiles[lo + TILE + at] = h;
                        }
                    }
                }
            }
        }
        Some(Packed { k, n, tiles, bias })
    }

    /// Values per input row (W's rows).
    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// `x · W + bias` for the rows of `a` ([`Rows`]), row-major `(m, n)`, split over `threads`
    /// (1 or 2). Only call when [`available`] said yes.
    pub(crate) fn matmul_rows(&self, a: &Rows, threads: usize) -> Vec<f32> {
        assert_eq!(a.k, self.k, "rows of {} values for a product over {}", a.k, self.k);
        let n = self.n;
        let mp = a.blocks * a.r * T;
        // The bias first: the kernel accumulates onto what is there.
        let mut out = Vec::with_capacity(mp * n);
        for _ in 0..mp {
            out.extend_from_slice(&self.bias);
        }
        let pairs = n / (2 * T);
        let dst = Out(out.as_mut_ptr());
        if threads >= 2 && a.blocks >= 2 {
            // By rows: each thread its own row blocks.
            let half = a.blocks / 2;
            rayon::join(
                || kernel(self, a, 0..half, 0..pairs, &dst),
                || kernel(self, a, half..a.blocks, 0..pairs, &dst),
            );
        } else if threads >= 2 && pairs >= 2 {
            // One row block (a query): by columns.
            let half = pairs / 2;
            rayon::join(|| kernel(self, a, 0..1, 0..half, &dst), || kernel(self, a, 0..1, half..pairs, &dst));
        } else {
            kernel(self, a, 0..a.blocks, 0..pairs, &dst);
        }
        out.truncate(a.m * n);
        out
    }
}

/// Rows of x split into bf16 halves and laid out as whole AMX tiles: row blocks of `r` tiles of
/// 16 rows (r = 2, or 1 for at most 16 rows); within a block, for each 32 values along k, the
/// `r` tiles of high halves, then the `r` tiles of low halves (the order the kernel loads them).
pub(crate) struct Rows {
    m: usize,
    k: usize,
    r: usize,
    blocks: usize,
    tiles: Vec<u16>,
}

impl Rows {
    /// Splits `x`, row-major `(m, k)` with k a multiple of 32. Inlined, so that a caller
    /// compiled for AVX-512 splits with it.
    #[inline(always)]
    pub(crate) fn split(x: &[f32], m: usize, k: usize) -> Rows {
        let mut rows = Rows::new(m, k);
        for (i, row) in x.chunks_exact(k).enumerate() {
            rows.set_row(i, row);
        }
        rows
    }

    /// `m` rows of `k` values, all zero.
    #[inline(always)]
    fn new(m: usize, k: usize) -> Rows {
        assert!(k.is_multiple_of(KT), "rows of {k} values do not fill whole tiles");
        let r = if m <= T { 1 } else { 2 };
        let blocks = m.div_ceil(r * T).max(1);
        Rows { m, k, r, blocks, tiles: vec![0u16; blocks * r * T * 2 * k] }
    }

    /// Writes row `i`.
    #[inline(always)]
    fn set_row(&mut self, i: usize, row: &[f32]) {
        let (kj, r) = (self.k / KT, self.r);
        let (block, tile, line) = (i / (r * T), (i / T) % r, i % T);
        for (j, values) in row.chunks_exact(KT).enumerate() {
            let hi = (((block * kj + j) * 2 * r + tile) * T + line) * KT;
            // The low halves' row lies r tiles after the high halves' row.
            let (head, tail) = self.tiles.split_at_mut(hi + r * TILE);
            for ((h, l), v) in head[hi..hi + KT].iter_mut().zip(&mut tail[..KT]).zip(values) {
                (*h, *l) = split(*v);
            }
        }
    }
}

/// The output of a product, shared by the threads that write disjoint tiles of it.
struct Out(*mut f32);
// SAFETY: the threads given an `Out` write disjoint row blocks or disjoint columns (see
// `Packed::matmul_rows`), and the buffer outlives them (`rayon::join` returns first).
#[allow(unsafe_code)]
unsafe impl Sync for Out {}

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

/// Adds `x · W` for row blocks `blocks` and column pairs `pairs` to `out` (row-major, all n
/// columns, holding the bias). Accumulators are 2 × 2 tiles (1 × 2 for a one-tile block) kept
/// over all of k; x's chunk of rows stays in L2 while every column pair passes over it.
#[allow(unsafe_code)]
fn kernel(p: &Packed, a: &Rows, blocks: std::ops::Range<usize>, pairs: std::ops::Range<usize>, out: &Out) {
    let (k, n, r) = (a.k, p.n, a.r);
    let kj = k / KT;
    let cfg = Config::new();
    let c_stride = n * 4;
    let chunk = (CHUNK_BYTES / (4 * k * r * T)).max(1);
    assert!(
        blocks.end <= a.blocks
            && a.tiles.len() == a.blocks * r * T * 2 * k
            && p.tiles.len() == 2 * k * n
            && pairs.end <= n / (2 * T)
            && (r == 1 || r == 2)
    );
    // SAFETY: `available()` was true (the callers check), so the CPU has AMX and the kernel
    // granted this process the tile state. Tile loads read 16 rows of 64 bytes, 64 bytes apart:
    // whole tiles of `a.tiles` (block < a.blocks, j < k/32, 2r tiles each) and of `p.tiles`
    // (column block < n/16, j < k/32, 2 tiles each), inside both (asserted above). Accumulator
    // loads and stores touch 16 rows × 16 f32 at rows < a.blocks·r·16 and columns < n: inside
    // `out`, which holds that many rows of n (`matmul_rows`), and only this call's tiles.
    unsafe {
        std::arch::asm!("ldtilecfg [{0}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
        let mut c0 = blocks.start;
        while c0 < blocks.end {
            let c1 = (c0 + chunk).min(blocks.end);
            for pair in pairs.clone() {
                let w0 = p.tiles.as_ptr().add(2 * pair * kj * 2 * TILE);
                let w1 = w0.add(kj * 2 * TILE);
                for block in c0..c1 {
                    let c = out.0.add(block * r * T * n + 2 * pair * T);
                    let x = a.tiles.as_ptr().add(block * kj * 2 * r * TILE);
                    if r == 2 {
                        two_by_two(x, w0, w1, kj, c, n, c_stride);
                    } else {
                        one_by_two(x, w0, w1, kj, c, c_stride);
                    }
                }
            }
            c0 = c1;
        }
        std::arch::asm!("tilerelease", options(nostack, nomem));
    }
}

/// 32 rows × 32 columns over `kj` blocks of 32 values: per block, x's tiles at `x` (hi 0, hi 1,
/// lo 0, lo 1) and the columns' at `w0` and `w1` (lo, hi), accumulated onto `c` (row stride
/// `c_stride` bytes, n f32 per row). Loads are placed as soon as the tile they replace has had
/// its last use, so that they overlap the products.
#[allow(unsafe_code)]
#[inline(always)]
unsafe fn two_by_two(x: *const u16, w0: *const u16, w1: *const u16, kj: usize, c: *mut f32, n: usize, c_stride: usize) {
    // SAFETY: the caller (`kernel`) checked the bounds of every tile read and written here.
    unsafe {
        std::arch::asm!(
            "tileloadd tmm0, [{c00} + {cs}*1]",
            "tileloadd tmm1, [{c01} + {cs}*1]",
            "tileloadd tmm2, [{c10} + {cs}*1]",
            "tileloadd tmm3, [{c11} + {cs}*1]",
            c00 = in(reg) c,
            c01 = in(reg) c.add(T),
            c10 = in(reg) c.add(T * n),
            c11 = in(reg) c.add(T * n + T),
            cs = in(reg) c_stride,
            options(nostack, readonly),
        );
        for j in 0..kj {
            let (x, w0, w1) = (x.add(j * 4 * TILE), w0.add(j * 2 * TILE), w1.add(j * 2 * TILE));
            std::arch::asm!(
                // x hi · W lo
                "tileloadd tmm4, [{xh0} + {s}*1]",
                "tileloadd tmm6, [{wl0} + {s}*1]",
                "tileloadd tmm5, [{xh1} + {s}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tileloadd tmm7, [{wl1} + {s}*1]",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                // x hi · W hi
                "tileloadd tmm6, [{wh0} + {s}*1]",
                "tdpbf16ps tmm3, tmm5, tmm7",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tileloadd tmm7, [{wh1} + {s}*1]",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm3, tmm5, tmm7",
                // x lo · W hi
                "tileloadd tmm4, [{xl0} + {s}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tileloadd tmm5, [{xl1} + {s}*1]",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                xh0 = in(reg) x,
                xh1 = in(reg) x.add(TILE),
                xl0 = in(reg) x.add(2 * TILE),
                xl1 = in(reg) x.add(3 * TILE),
                wl0 = in(reg) w0,
                wh0 = in(reg) w0.add(TILE),
                wl1 = in(reg) w1,
                wh1 = in(reg) w1.add(TILE),
                s = in(reg) KT * 2,
                options(nostack, readonly),
            );
        }
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

/// 16 rows × 32 columns: as [`two_by_two`] for a block of one row tile (hi, lo per 32 values).
#[allow(unsafe_code)]
#[inline(always)]
unsafe fn one_by_two(x: *const u16, w0: *const u16, w1: *const u16, kj: usize, c: *mut f32, c_stride: usize) {
    // SAFETY: the caller (`kernel`) checked the bounds of every tile read and written here.
    unsafe {
        std::arch::asm!(
            "tileloadd tmm0, [{c0} + {cs}*1]",
            "tileloadd tmm1, [{c1} + {cs}*1]",
            c0 = in(reg) c,
            c1 = in(reg) c.add(T),
            cs = in(reg) c_stride,
            options(nostack, readonly),
        );
        for j in 0..kj {
            let (x, w0, w1) = (x.add(j * 2 * TILE), w0.add(j * 2 * TILE), w1.add(j * 2 * TILE));
            std::arch::asm!(
                "tileloadd tmm4, [{xh} + {s}*1]",
                "tileloadd tmm6, [{wl0} + {s}*1]",
                "tileloadd tmm7, [{wl1} + {s}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tileloadd tmm6, [{wh0} + {s}*1]",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tileloadd tmm7, [{wh1} + {s}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tileloadd tmm5, [{xl} + {s}*1]",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm0, tmm5, tmm6",
                "tdpbf16ps tmm1, tmm5, tmm7",
                xh = in(reg) x,
                xl = in(reg) x.add(TILE),
                wl0 = in(reg) w0,
                wh0 = in(reg) w0.add(TILE),
                wl1 = in(reg) w1,
                wh1 = in(reg) w1.add(TILE),
                s = in(reg) KT * 2,
                options(nostack, readonly),
            );
        }
        std::arch::asm!(
            "tilestored [{c0} + {cs}*1], tmm0",
            "tilestored [{c1} + {cs}*1], tmm1",
            c0 = in(reg) c,
            c1 = in(reg) c.add(T),
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
                let got = p.matmul_rows(&Rows::split(&x[..rows * k], rows, k), threads);
                assert_eq!(got.len(), rows * n);
                let worst = got.iter().zip(expect).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
                assert!(worst < 2e-5, "{rows} rows, threads {threads}: worst difference {worst}");
            }
        }
    }
}
