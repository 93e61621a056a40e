//! Any Hugging Face `tokenizer.json` (a local model folder; nothing is downloaded).

use std::path::Path;

use strata_core::{Error, Result};
use tokenizers::Tokenizer;

use crate::{Token, TokenManager};

/// A tokenizer read from a `tokenizer.json`.
pub struct HfTokens {
    name: String,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for HfTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokens").field("name", &self.name).finish_non_exhaustive()
    }
}

impl HfTokens {
    /// Reads `file`; `name` is how it is shown.
    pub fn load(name: impl Into<String>, file: &Path) -> Result<HfTokens> {
        let tokenizer = Tokenizer::from_file(file)
            .map_err(|e| Error::Model(format!("{}: not a readable tokenizer.json: {e}", file.display())))?;
        HfTokens::new(name, tokenizer)
    }

    /// The tokenizer of a GGUF model file (built from its metadata).
    pub fn from_gguf(name: impl Into<String>, file: &Path) -> Result<HfTokens> {
        HfTokens::new(name, crate::gguf::tokenizer(file)?)
    }

    /// Wraps `tokenizer` for counting: the whole text (no padding or truncation), and text
    /// that looks like a special token ("<|im_end|>") counted as the text it is.
    pub fn new(name: impl Into<String>, mut tokenizer: Tokenizer) -> Result<HfTokens> {
        let name = name.into();
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| Error::Model(format!("{name}: {e}")))?;
        tokenizer.set_encode_special_tokens(true);
        Ok(HfTokens { name, tokenizer })
    }
}

impl TokenManager for HfTokens {
    fn name(&self) -> &str {
        &self.name
    }

    fn tokenize(&self, text: &str) -> Result<Vec<Token>> {
        let enc = self.tokenizer.encode(text, false).map_err(|e| Error::Model(format!("{}: {e}", self.name)))?;
        Ok(enc
            .get_ids()
            .iter()
            .zip(enc.get_offsets())
            .map(|(id, (start, end))| Token { id: *id, start: *start, end: *end })
            .collect())
    }

    fn detokenize(&self, ids: &[u32]) -> Result<String> {
        self.tokenizer.decode(ids, false).map_err(|e| Error::Model(format!("{}: {e}", self.name)))
    }
}
