//! OpenAI's byte-pair encodings through `tiktoken-rs` (rank files compiled into the crate:
//! nothing is downloaded).

use strata_core::{Error, Result};
use tiktoken_rs::CoreBPE;

use crate::{Token, TokenManager};

/// The encodings OpenAI's models use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// gpt-4o, gpt-4.1, the o-series, gpt-5.
    O200kBase,
    /// gpt-4, gpt-3.5, the embedding models.
    Cl100kBase,
}

impl Encoding {
    /// Its name, as OpenAI writes it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

/// A tokenizer for one of OpenAI's encodings (loaded once per process, shared).
#[derive(Clone, Copy)]
pub struct OpenAiTokens {
    encoding: Encoding,
    bpe: &'static CoreBPE,
}

impl std::fmt::Debug for OpenAiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiTokens").field("encoding", &self.encoding).finish()
    }
}

impl OpenAiTokens {
    /// The tokenizer of `encoding`.
    pub fn new(encoding: Encoding) -> OpenAiTokens {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        OpenAiTokens { encoding, bpe }
    }
}

impl TokenManager for OpenAiTokens {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn tokenize(&self, text: &str) -> Result<Vec<Token>> {
        let ids = self.bpe.encode_ordinary(text);
        let mut at = 0;
        Ok(ids
            .iter()
            .zip(self.bpe._decode_native_and_split(ids.clone()))
            .map(|(id, bytes)| {
                let start = at;
                at += bytes.len();
                Token { id: *id, start, end: at }
            })
            .collect())
    }

    fn detokenize(&self, ids: &[u32]) -> Result<String> {
        self.bpe.decode(ids).map_err(|e| Error::invalid(format!("{}: these ids are not text: {e}", self.name())))
    }

    /// A long text is counted in parts on every core, cut where both encodings start a new
    /// piece anyway ([`cut_points`]): the parts' counts add up to the whole's.
    fn count(&self, text: &str) -> Result<usize> {
        if text.len() < PARALLEL_FROM {
            return Ok(self.bpe.encode_ordinary(text).len());
        }
        static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let threads = *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if threads < 2 {
            return Ok(self.bpe.encode_ordinary(text).len());
        }
        let cuts = cut_points(text, threads);
        let bpe = self.bpe;
        Ok(std::thread::scope(|s| {
            let parts: Vec<_> =
                cuts.windows(2).map(|w| s.spawn(move || bpe.encode_ordinary(&text[w[0]..w[1]]).len())).collect();
            parts.into_iter().map(|h| h.join().expect("counting does not panic")).sum()
        }))
    }
}

/// Texts from this long are counted on all cores.
const PARALLEL_FROM: usize = 64 * 1024;

/// Offsets that cut `text` into about `parts` parts (first 0, last the length), each cut right
/// after a newline that an ASCII letter follows. Both encodings' patterns end a piece at such
/// a newline (no pattern continues past a newline into a letter) and start the next at the
/// letter, so counting the parts gives the whole's count.
pub(crate) fn cut_points(text: &str, parts: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts = vec![0];
    for k in 1..parts {
        let from = (text.len() * k / parts).max(*cuts.last().unwrap_or(&0));
        let found =
            bytes[from..].windows(2).position(|w| w[0] == b'\n' && w[1].is_ascii_alphabetic()).map(|i| from + i + 1);
        match found {
            Some(at) if at > *cuts.last().unwrap_or(&0) => cuts.push(at),
            _ => break,
        }
    }
    cuts.push(text.len());
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_after_a_newline_before_a_letter() {
        let text = "one two\n three\nfour five\n\n6 seven\neight".repeat(50);
        let cuts = cut_points(&text, 4);
        assert_eq!((cuts.len(), cuts[0], *cuts.last().unwrap()), (5, 0, text.len()));
        for &c in &cuts[1..cuts.len() - 1] {
            assert_eq!(&text[c - 1..c], "\n");
            assert!(text.as_bytes()[c].is_ascii_alphabetic());
        }
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(cut_points("no newline at all", 4), vec![0, 17]);
    }
}
