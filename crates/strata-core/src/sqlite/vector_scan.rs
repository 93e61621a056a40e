//! A compact in-memory copy of one user's vectors for a long-lived store (the app, a server):
//! one byte per dimension (int8 with a scale per vector, 384 bytes for MiniLM instead of
//! 1,536), scanned in Rust. sqlite-vec's scan costs ~0.3 µs per stored vector whatever its
//! size (~30 ms at 100,000); this one ~40 ns. The scan proposes candidates; their exact cosine
//! similarity, from `memory_vectors`, decides.
//!
//! The copy is made on a store's second vector search (a one-off command keeps using
//! sqlite-vec) and is dropped when `vector_version` in `settings` moves: every transaction that
//! adds, replaces or deletes vectors bumps it, in this process or another.

use rusqlite::{Connection, OptionalExtension};

use crate::error::Result;

/// Bumps the vectors' version (inside the transaction that changed them).
pub(crate) fn bump_version(conn: &Connection) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO settings (key, value) VALUES ('vector_version', '1') \
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
    )?
    .execute([])?;
    Ok(())
}

/// The vectors' current version.
pub(crate) fn version(conn: &Connection) -> Result<i64> {
    let v: Option<String> = conn
        .prepare_cached("SELECT value FROM settings WHERE key = 'vector_version'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// One user's vectors of one model, quantized.
#[derive(Debug)]
pub(crate) struct UserVectors {
    pub(crate) model: String,
    pub(crate) user: String,
    pub(crate) version: i64,
    dim: usize,
    rids: Vec<i64>,
    scales: Vec<f32>,
    codes: Vec<i8>,
}

/// Appends `v` as int8 codes (symmetric, scaled by its largest magnitude); returns the scale.
pub fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inv = 1.0 / scale;
    // Round half away from zero without a libm call: add ±0.5, then truncate.
    out.extend(v.iter().map(|x| (x * inv + 0.5f32.copysign(*x)).clamp(-127.0, 127.0) as i8));
    scale
}

/// The integer dot product of two int8 vectors of the same length (AVX2 where the CPU has it).
pub fn dot(a: &[i8], b: &[i8]) -> i32 {
    dot_fn()(a, b)
}

/// The best dot product for this CPU, chosen once by the caller for a loop of many: the one
/// switch for this kernel — AVX2 on x86-64 CPUs that have it, else the portable loop (the same
/// code on every target, vectorized by the compiler).
pub fn dot_fn() -> fn(&[i8], &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return dot_avx2_checked;
    }
    dot_portable
}

/// Only returned by [`dot_fn`] after AVX2 was detected.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn dot_avx2_checked(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: this function is only handed out by `dot_fn`, which checked for AVX2.
    unsafe { dot_avx2(a, b) }
}

/// 16 products per instruction: sign-extend to 16 bits, multiply-add pairs into 32 bits.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_loadu_si128, _mm256_add_epi32, _mm256_cvtepi8_epi16, _mm256_madd_epi16,
        _mm256_setzero_si256, _mm256_storeu_si256,
    };
    let n = a.len().min(b.len());
    let whole = n / 16 * 16;
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 16 <= n, so both 16-byte loads are inside the slices (unaligned loads).
        let (va, vb) = unsafe {
            (
                _mm256_cvtepi8_epi16(_mm_loadu_si128(a.as_ptr().add(i).cast::<__m128i>())),
                _mm256_cvtepi8_epi16(_mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>())),
            )
        };
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vb));
        i += 16;
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes, the size of one 256-bit store.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), acc) };
    lanes.iter().sum::<i32>() + dot_portable(&a[whole..n], &b[whole..n])
}

fn dot_portable(a: &[i8], b: &[i8]) -> i32 {
    // Widening multiply-add in lanes of 16.
    a.chunks_exact(16)
        .zip(b.chunks_exact(16))
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| i32::from(*p) * i32::from(*q)).sum::<i32>())
        .sum::<i32>()
        + a.chunks_exact(16)
            .remainder()
            .iter()
            .zip(b.chunks_exact(16).remainder())
            .map(|(p, q)| i32::from(*p) * i32::from(*q))
            .sum::<i32>()
}

impl UserVectors {
    /// Reads `user`'s vectors of `model` from `memory_vectors`.
    pub(crate) fn load(conn: &Connection, model: &str, user: &str, dim: usize) -> Result<UserVectors> {
        let sql = "SELECT m.rid, v.vector FROM memory_vectors v JOIN memories m ON m.id = v.memory_id \
                   WHERE v.model = ?1 AND m.user_id = ?2";
        UserVectors::read(conn, sql, model, user, dim)
    }

    /// Reads the (rid, vector) rows `sql` selects, given `model` and `key` as its two
    /// parameters; `key` names the copy (a user, or a user's chosen datasets).
    pub(crate) fn read(conn: &Connection, sql: &str, model: &str, key: &str, dim: usize) -> Result<UserVectors> {
        let version = version(conn)?;
        let mut stmt = conn.prepare(sql)?;
        let mut rows = stmt.query(rusqlite::params![model, key])?;
        let mut out = UserVectors::empty(model, key, version, dim);
        let mut v = Vec::with_capacity(dim);
        while let Some(r) = rows.next()? {
            let blob: Vec<u8> = r.get(1)?;
            if blob.len() != dim * 4 {
                continue;
            }
            crate::sqlite::vector_index::from_blob(&blob, &mut v);
            out.push(r.get(0)?, &v);
        }
        Ok(out)
    }

    /// A copy holding no vector yet, named `key`, of the vectors at `version`.
    pub(crate) fn empty(model: &str, key: &str, version: i64, dim: usize) -> UserVectors {
        UserVectors {
            model: model.to_string(),
            user: key.to_string(),
            version,
            dim,
            rids: Vec::new(),
            scales: Vec::new(),
            codes: Vec::new(),
        }
    }

    /// Adds `rid`'s vector (one of another length is left out).
    pub(crate) fn push(&mut self, rid: i64, v: &[f32]) {
        if v.len() == self.dim {
            self.rids.push(rid);
            self.scales.push(quantize(v, &mut self.codes));
        }
    }

    /// Vectors held.
    pub(crate) fn len(&self) -> usize {
        self.rids.len()
    }

    /// The `n` rids whose vectors are nearest to `q` (approximately), best first.
    pub(crate) fn nearest(&self, q: &[f32], n: usize) -> Vec<i64> {
        if q.len() != self.dim || self.rids.is_empty() {
            return Vec::new();
        }
        let mut qc = Vec::with_capacity(self.dim);
        quantize(q, &mut qc);
        let dot = dot_fn();
        let mut scored: Vec<(f32, i64)> = self
            .codes
            .chunks_exact(self.dim)
            .zip(&self.scales)
            .zip(&self.rids)
            .map(|((c, s), rid)| (dot(c, &qc) as f32 * s, *rid))
            .collect();
        let n = n.min(scored.len());
        if n == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(n - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(n);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, rid)| rid).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_dot_products_rank_like_float_ones() {
        let a = [0.6f32, -0.8, 0.0, 0.0];
        let mut codes = Vec::new();
        let s = quantize(&a, &mut codes);
        assert_eq!(codes, vec![95, -127, 0, 0]);
        let mut halves = Vec::new();
        quantize(&[1.0, 0.5 / 127.0, -0.5 / 127.0, 1.5 / 127.0], &mut halves);
        assert_eq!(halves, vec![127, 1, -1, 2], "half rounds away from zero");
        assert!((codes[1] as f32 * s + 0.8).abs() < 1e-6);
        let long: Vec<i8> = (0..37).map(|i| (i % 7) as i8 - 3).collect();
        let expect: i32 = long.iter().map(|x| i32::from(*x) * i32::from(*x)).sum();
        assert_eq!(dot(&long, &long), expect, "the remainder after the lanes counts");
        assert_eq!(dot_portable(&long, &long), expect);
        let other: Vec<i8> = (0..37i32).map(|i| (i * 37 % 255 - 127) as i8).collect();
        let want: i32 = long.iter().zip(&other).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
        assert_eq!(dot(&long, &other), want, "the SIMD path agrees with the plain one");
    }
}
