//! Tokens: how many a text costs for a given model, and where to cut it. One trait,
//! [`TokenManager`] (seed 000's TokenManager), with backends for OpenAI's encodings
//! (`tiktoken-rs`, whose rank files ship inside the crate) and for any Hugging Face
//! `tokenizer.json`. Cutting always happens on a token boundary that is also a character
//! boundary, and a cut text never costs more than its limit.
#![deny(missing_docs)]

mod approx;
mod catalogue;
pub mod chat_models;
pub mod gguf;
mod hf;
mod messages;
mod openai;
mod paths;

pub use approx::{ANTHROPIC_FACTOR, ApproxTokens};
pub use catalogue::{Catalogue, Lookup, ModelInfo};
pub use hf::HfTokens;
pub use messages::{PER_MESSAGE, PER_TOOL_CALL, REPLY_PRIMING, count_message, count_messages};
pub use openai::{Encoding, OpenAiTokens};
pub use paths::{EMBEDDER_DIR, models_dir};
use strata_core::{Error, Result};

/// The tokenizer a catalogue entry names: OpenAI's encodings are built in; `hf:<folder>` is
/// read from `models_dir/<folder>/tokenizer.json`; `anthropic` is the calibrated local estimate
/// ([`ApproxTokens`], not exact); `gguf:<folder>/<file>` is a GGUF model file's own tokenizer.
pub fn for_model(info: &ModelInfo, models_dir: &std::path::Path) -> Result<Box<dyn TokenManager>> {
    match info.tokenizer.as_str() {
        "o200k_base" => Ok(Box::new(OpenAiTokens::new(Encoding::O200kBase))),
        "cl100k_base" => Ok(Box::new(OpenAiTokens::new(Encoding::Cl100kBase))),
        "anthropic" => Ok(Box::new(ApproxTokens::anthropic())),
        t => {
            if let Some(folder) = t.strip_prefix("hf:") {
                Ok(Box::new(HfTokens::load(folder, &models_dir.join(folder).join("tokenizer.json"))?))
            } else if let Some(file) = t.strip_prefix("gguf:") {
                Ok(Box::new(HfTokens::from_gguf(file, &models_dir.join(file))?))
            } else {
                Err(Error::Model(format!("the tokenizer '{t}' of '{}' cannot count locally yet", info.pattern)))
            }
        }
    }
}

/// The tokenizer in a file the person gave: a Hugging Face `tokenizer.json`, or a `.gguf`
/// model file's own vocabulary. `name` is what it is called.
pub fn from_file(name: &str, file: &std::path::Path) -> Result<Box<dyn TokenManager>> {
    let gguf = file.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"));
    Ok(if gguf { Box::new(HfTokens::from_gguf(name, file)?) } else { Box::new(HfTokens::load(name, file)?) })
}

/// One token of a text: its id and the bytes of the text it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// The tokenizer's id.
    pub id: u32,
    /// Where its text starts (byte offset).
    pub start: usize,
    /// Where its text ends (byte offset, exclusive).
    pub end: usize,
}

/// A model's tokenizer.
pub trait TokenManager: Send + Sync {
    /// The tokenizer's name (`o200k_base`, a model folder…).
    fn name(&self) -> &str;

    /// False for an estimate (shown as approximate wherever it is shown).
    fn is_exact(&self) -> bool {
        true
    }

    /// The tokens of `text`, with the byte spans they cover. Text that looks like a special
    /// token ("<|endoftext|>") is ordinary text here: memories are data, never control.
    fn tokenize(&self, text: &str) -> Result<Vec<Token>>;

    /// The text of some token ids.
    fn detokenize(&self, ids: &[u32]) -> Result<String>;

    /// How many tokens `text` costs.
    fn count(&self, text: &str) -> Result<usize> {
        Ok(self.tokenize(text)?.len())
    }

    /// Whether `text` costs at most `limit` tokens.
    fn is_within(&self, text: &str, limit: usize) -> Result<bool> {
        Ok(self.count(text)? <= limit)
    }

    /// The longest start of `text` that costs at most `limit` tokens, cut at a token and
    /// character boundary.
    fn truncate<'a>(&self, text: &'a str, limit: usize) -> Result<&'a str> {
        let tokens = self.tokenize(text)?;
        if tokens.len() <= limit {
            return Ok(text);
        }
        // Cut before the first token that does not fit; tokenizing the cut text again can
        // merge differently, so step back a token at a time until it fits.
        let mut cut = limit;
        loop {
            let mut end = tokens[cut].start.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let head = &text[..end];
            if cut == 0 || self.count(head)? <= limit {
                return Ok(head);
            }
            cut -= 1;
        }
    }

    /// `text` in consecutive pieces of at most `limit` tokens each (a single character that
    /// alone costs more than `limit` is a piece of its own). The pieces join back to `text`.
    fn split<'a>(&self, text: &'a str, limit: usize) -> Result<Vec<&'a str>> {
        if limit == 0 {
            return Err(Error::invalid("a split needs a limit of at least one token"));
        }
        let mut pieces = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut head = self.truncate(rest, limit)?;
            if head.is_empty() {
                let first = rest.chars().next().map_or(rest.len(), char::len_utf8);
                head = &rest[..first];
            }
            pieces.push(head);
            rest = &rest[head.len()..];
        }
        Ok(pieces)
    }
}
