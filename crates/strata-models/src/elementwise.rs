//! Element-wise steps of the encoder on plain vectors, written so that their loops vectorize:
//! a branch-free erf and exp (libm's `erff` and `expf` were ~18% of embedding time as calls),
//! GELU in its exact (erf) form as BERT uses it, softmax, and layer norm with its residual.
//! All are `#[inline(always)]`, so that a caller compiled for AVX2 (`encoder.rs`) gets them
//! as AVX2 code. The chat model's one-token step (`llama.rs`) uses the same softmax.

/// `erf`, to ~1.2e-7 (the Chebyshev fit of Numerical Recipes' `erfcc`), written so that a loop
/// of it vectorizes: no branches, no libm call. Beyond |x| = 4, erf is ±1 to f32's precision.
#[allow(clippy::excessive_precision)] // the published coefficients, as published
#[inline(always)]
fn erf<const F: bool>(x: f32) -> f32 {
    let a = x.abs();
    let z = if a > 4.0 { 4.0 } else { a };
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = horner::<F>(
        t,
        &[
            -1.265_512_2,
            1.000_023_7,
            0.374_091_96,
            0.096_784_18,
            -0.186_288_06,
            0.278_868_07,
            -1.135_203_98,
            1.488_515_87,
            -0.822_152_23,
            0.170_872_77,
        ],
    );
    let erfc = t * exp::<F>(-z * z + poly);
    (1.0 - erfc).copysign(x)
}

/// The polynomial `c[0] + c[1]·t + c[2]·t² + …` by Horner's rule, each step one fused
/// multiply-add where `F` says the target has it.
#[inline(always)]
fn horner<const F: bool>(t: f32, c: &[f32]) -> f32 {
    c.iter().rev().fold(0.0, |acc, c| fma::<F>(acc, t, *c))
}

/// `e^x` for x ≤ 88 (Cody–Waite reduction, a degree-6 polynomial: ~2e-7 relative),
/// branch-free so that loops of it vectorize. Below −87 it returns e^−87 (~1.6e-38): a softmax
/// over a long text has scores far below its maximum.
#[inline(always)]
fn exp<const F: bool>(x: f32) -> f32 {
    let x = x.max(-87.0);
    // Round to nearest by adding 1.5 · 2^23: the integer is then the low bits of the sum.
    const MAGIC: f32 = 12_582_912.0;
    let shifted = x * std::f32::consts::LOG2_E + MAGIC;
    let n = shifted - MAGIC;
    let bits = shifted.to_bits().wrapping_sub(MAGIC.to_bits()); // n as a two's-complement integer
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = horner::<F>(r, &[1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0]);
    p * f32::from_bits(bits.wrapping_add(127) << 23)
}

/// Whether `f32::mul_add` is one instruction on this target without asking (aarch64: always;
/// x86-64: only in code compiled for FMA, which passes `F = true` itself).
pub(crate) const FMA: bool = cfg!(target_arch = "aarch64");

/// `a · b + c`, fused where `F` says the target does that in one instruction (elsewhere
/// `mul_add` is a slow library call).
#[inline(always)]
pub(crate) fn fma<const F: bool>(a: f32, b: f32, c: f32) -> f32 {
    if F { a.mul_add(b, c) } else { a * b + c }
}

/// GELU with the exact (erf) form, in place.
#[inline(always)]
pub(crate) fn gelu_erf<const F: bool>(v: &mut [f32]) {
    for x in v {
        *x = 0.5 * *x * (1.0 + erf::<F>(*x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// Softmax in place: the maximum, the exponentials and their sum in separate loops, so that
/// each vectorizes (a sum carried through the exponential's loop kept it one value at a time).
#[inline(always)]
pub(crate) fn softmax<const F: bool>(v: &mut [f32]) {
    let max = lanes(v, f32::NEG_INFINITY, f32::max, f32::max);
    for x in v.iter_mut() {
        *x = exp::<F>(*x - max);
    }
    let inv = 1.0 / sum(v);
    for x in v {
        *x *= inv;
    }
}

/// Lanes of a reduction: how many values [`lanes`] carries side by side (two AVX2 registers,
/// four NEON ones).
const LANES: usize = 16;

/// `v` folded by `step` (a sum, a maximum, a sum of squares) over [`LANES`] independent lanes
/// that the compiler keeps in vector registers, which `merge` then combines: a plain fold is
/// one dependent chain, one value at a time.
#[inline(always)]
fn lanes(v: &[f32], init: f32, step: impl Fn(f32, f32) -> f32, merge: impl Fn(f32, f32) -> f32) -> f32 {
    let mut acc = [init; LANES];
    let chunks = v.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a = step(*a, *x);
        }
    }
    acc.into_iter().fold(tail.iter().fold(init, |a, x| step(a, *x)), merge)
}

/// The sum of `v`'s values.
#[inline(always)]
fn sum(v: &[f32]) -> f32 {
    lanes(v, 0.0, |a, x| a + x, |a, b| a + b)
}

/// `x ← norm(x + residual) · weight + bias` (layer norm over the whole slice, one row).
#[inline(always)]
pub(crate) fn add_norm(x: &mut [f32], residual: &[f32], weight: &[f32], bias: &[f32], eps: f32) {
    for (v, r) in x.iter_mut().zip(residual) {
        *v += r;
    }
    norm(x, weight, bias, eps);
}

/// `x ← (x − mean) / √(var + eps) · weight + bias`, one row.
#[inline(always)]
pub(crate) fn norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let n = x.len() as f32;
    let mean = sum(x) / n;
    for v in x.iter_mut() {
        *v -= mean;
    }
    let var = lanes(x, 0.0, |a, x| a + x * x, |a, b| a + b) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, w), b) in x.iter_mut().zip(weight).zip(bias) {
        *v = *v * inv * w + b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_erf_and_exp_agree_with_libm() {
        let mut worst = (0f32, 0f32);
        for i in -6000..=6000 {
            let x = i as f32 / 1000.0;
            for (erf, exp) in
                [(erf::<false> as fn(f32) -> f32, exp::<false> as fn(f32) -> f32), (erf::<true>, exp::<true>)]
            {
                worst.0 = worst.0.max((erf(x) - libm_erf(x)).abs());
                let e = (x * 10.0).exp();
                worst.1 = worst.1.max((exp(x * 10.0) - e).abs() / e);
            }
        }
        for x in [-80.0f32, -20.0, 0.0, 1e-3, 30.0, 80.0] {
            assert!((exp::<false>(x) - x.exp()).abs() / x.exp() < 5e-7, "exp({x})");
            assert!((exp::<true>(x) - x.exp()).abs() / x.exp() < 5e-7, "fused exp({x})");
        }
        for x in [-87.5f32, -100.0, -1e4, -1e30] {
            assert!((0.0..2e-38).contains(&exp::<false>(x)), "exp({x}) = {}", exp::<false>(x));
            assert!((0.0..2e-38).contains(&exp::<true>(x)), "fused exp({x})");
        }
        assert!(worst.0 < 3e-7 && worst.1 < 5e-7, "{worst:?}");
    }

    #[test]
    fn softmax_and_norm_agree_with_plain_formulas() {
        let mut far = vec![0.0f32, -200.0, -5e3];
        softmax::<FMA>(&mut far);
        assert!((far[0] - 1.0).abs() < 1e-6 && far[1] < 1e-30 && far[2] < 1e-30, "{far:?}");
        let mut v = vec![1.0f32, 2.0, -3.0, 0.5];
        let e: Vec<f64> = v.iter().map(|x| f64::from(*x).exp()).collect();
        let total: f64 = e.iter().sum();
        softmax::<FMA>(&mut v);
        for (a, b) in v.iter().zip(&e) {
            assert!((f64::from(*a) - b / total).abs() < 1e-6);
        }
        let mut x = vec![1.0f32, 2.0, 3.0, 6.0];
        add_norm(&mut x, &[1.0; 4], &[2.0; 4], &[0.5; 4], 0.0);
        // x + 1 = 2, 3, 4, 7: mean 4, variance 3.5.
        for (got, raw) in x.iter().zip([2.0f32, 3.0, 4.0, 7.0]) {
            let want = (raw - 4.0) / 3.5f32.sqrt() * 2.0 + 0.5;
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }

    fn libm_erf(x: f32) -> f32 {
        // erf(x) from the f64 series / continued fraction is overkill here: use the identity
        // with the regularized gamma function via a high-order Taylor series for |x| < 3, 1 beyond.
        let x = f64::from(x);
        if x.abs() > 4.0 {
            return x.signum() as f32;
        }
        let mut sum = 0f64;
        let mut term = x;
        let mut k = 0f64;
        while term.abs() > 1e-17 || k < 5.0 {
            sum += term / (2.0 * k + 1.0);
            k += 1.0;
            term *= -x * x / k;
        }
        (sum * 2.0 / std::f64::consts::PI.sqrt()) as f32
    }
}
