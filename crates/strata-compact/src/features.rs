//! What memories share besides their meaning, joined to their vectors before they are grouped:
//! the session they were said in, the subject they are about, and when they happened. Each is a
//! few more dimensions, weighted, and the whole vector is made unit length again, so cosine and
//! Euclidean distance still order pairs alike and everything after (HDBSCAN, a group's centre,
//! an incremental pass's joins) works in the one space.

/// Dimensions standing for a session, and as many for a subject.
const NAME_DIMS: usize = 16;
/// The periods, in days, of the time dimensions: a week, two months, two years. Two moments a
/// day apart are close on all three; a month apart, on the longest only.
const PERIODS: [f64; 3] = [7.0, 60.0, 730.0];

/// How much each shared thing counts against meaning (whose vector has length 1): in the
/// session's dimensions, two memories of different sessions lie `session × √2` apart and two of
/// the same one at 0 (before the whole vector is made unit length again).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// The same session.
    pub session: f32,
    /// The same subject.
    pub subject: f32,
    /// Closeness in time.
    pub time: f32,
}

impl Weights {
    /// Meaning alone.
    pub const NONE: Weights = Weights { session: 0.0, subject: 0.0, time: 0.0 };
}

/// What one memory shares with others.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shared<'a> {
    /// Its session, if it has one.
    pub session: Option<&'a str>,
    /// The subject it is about, if one is known.
    pub subject: Option<&'a str>,
    /// When it happened, in days since 1970.
    pub days: f64,
}

/// `vector` (unit length) joined with what `shared` says, weighted by `w`, made unit length.
/// With all weights 0 it is `vector` itself.
pub fn joined(vector: &[f32], shared: &Shared<'_>, w: &Weights) -> Vec<f32> {
    let mut out = vector.to_vec();
    if *w == Weights::NONE {
        return out;
    }
    for (name, weight) in [(shared.session, w.session), (shared.subject, w.subject)] {
        // No session (or subject) is a part of zeros: as near to any as to none.
        let part = name.map_or([0.0; NAME_DIMS], direction);
        out.extend(part.iter().map(|x| x * weight));
    }
    let per = w.time / (PERIODS.len() as f32).sqrt();
    for p in PERIODS {
        let angle = std::f64::consts::TAU * shared.days / p;
        out.extend([angle.sin() as f32 * per, angle.cos() as f32 * per]);
    }
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
    out.iter_mut().for_each(|x| *x /= norm);
    out
}

/// A unit vector that stands for `name`: the same name, the same vector, on every machine
/// (FNV-1a, then xorshift); two names' vectors are nearly orthogonal.
fn direction(name: &str) -> [f32; NAME_DIMS] {
    let mut state =
        name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)) | 1;
    let mut v = [0f32; NAME_DIMS];
    for x in &mut v {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *x = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosine;

    #[test]
    fn what_memories_share_brings_them_closer_and_nothing_shared_changes_nothing() {
        let v = [0.6f32, 0.8, 0.0];
        let u = [0.0f32, 0.8, 0.6];
        let w = Weights { session: 0.5, subject: 0.5, time: 0.3 };
        let at = |session, subject, days| Shared { session, subject, days };
        let a = joined(&v, &at(Some("s1"), Some("ana"), 100.0), &w);
        let same = joined(&u, &at(Some("s1"), Some("ana"), 100.2), &w);
        let apart = joined(&u, &at(Some("s2"), Some("bo"), 140.0), &w);
        assert!((a.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5, "unit length");
        assert!(cosine(&a, &same) > cosine(&a, &apart) + 0.1);
        // Deterministic, and meaning alone when nothing is weighted.
        assert_eq!(a, joined(&v, &at(Some("s1"), Some("ana"), 100.0), &w));
        assert_eq!(joined(&v, &at(Some("s1"), None, 3.0), &Weights::NONE), v.to_vec());
        // Closer in time is closer.
        let time = Weights { time: 1.0, ..Weights::NONE };
        let day = joined(&v, &at(None, None, 101.0), &time);
        let month = joined(&v, &at(None, None, 130.0), &time);
        let now = joined(&v, &at(None, None, 100.0), &time);
        assert!(cosine(&now, &day) > cosine(&now, &month));
    }
}
