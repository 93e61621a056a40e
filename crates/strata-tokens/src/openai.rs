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

    fn count(&self, text: &str) -> Result<usize> {
        Ok(self.bpe.encode_ordinary(text).len())
    }
}
