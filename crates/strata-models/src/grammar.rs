//! Grammar-constrained decoding for the on-device model: a JSON schema becomes a grammar
//! (llguidance), and at each step only the tokens that keep the answer inside it may be picked,
//! so the answer always parses. llguidance reads the vocabulary through toktrie; the GGUF's
//! byte-level BPE is handed to it here (`toktrie_hf_tokenizers` does the same for a tokenizer
//! file but pins an older `tokenizers` than ours, which would be a second copy in every build).

use std::collections::HashMap;
use std::sync::Arc;

use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use strata_core::{Error, Result};
use tokenizers::Tokenizer;
use toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};

/// The vocabulary as llguidance reads it.
struct Vocab {
    trie: TokTrie,
    text: Tokenizer,
}

impl TokenizerEnv for Vocab {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        let text = String::from_utf8_lossy(s);
        self.text.encode_fast(text.as_ref(), false).map(|e| e.get_ids().to_vec()).unwrap_or_default()
    }
}

/// GPT-2's byte-level alphabet, reversed: the character a BPE vocabulary writes for each byte.
fn byte_of_char() -> HashMap<char, u8> {
    let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut map = HashMap::new();
    let mut next = 256u32;
    for b in 0..=255u8 {
        let c = if printable(b) {
            char::from(b)
        } else {
            let c = char::from_u32(next).unwrap_or('\u{FFFD}');
            next += 1;
            c
        };
        map.insert(c, b);
    }
    map
}

/// Builds constrained decoders for one vocabulary.
pub struct Grammars {
    factory: ParserFactory,
}

impl Grammars {
    /// The decoders of a byte-level BPE vocabulary whose end of turn is `end` (the token that
    /// ends an answer that satisfies the grammar).
    pub fn new(text: &Tokenizer, end: u32) -> Result<Grammars> {
        let bytes = byte_of_char();
        let size = text.get_vocab_size(true);
        let mut words = vec![Vec::new(); size];
        let added: Vec<u32> = text.get_added_tokens_decoder().keys().copied().collect();
        for (id, word) in words.iter_mut().enumerate() {
            let Some(name) = text.id_to_token(id as u32) else { continue };
            *word = if added.contains(&(id as u32)) {
                // Special tokens are written as llguidance expects: a marker byte, then the name.
                let mut w = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                w.extend(name.as_bytes());
                w
            } else {
                name.chars().map(|c| bytes.get(&c).copied()).collect::<Option<Vec<u8>>>().unwrap_or_default()
            };
        }
        let mut info = TokRxInfo::new(size as u32, end);
        info.tok_end_of_turn = Some(end);
        let trie = TokTrie::from(&info, &words);
        let env: TokEnv = Arc::new(Vocab { trie, text: text.clone() });
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| Error::Model(format!("grammar: {e}")))?;
        factory.quiet();
        Ok(Grammars { factory })
    }

    /// A decoder held to `schema` (JSON Schema).
    pub fn for_schema(&self, schema: &serde_json::Value) -> Result<Constrained> {
        let grammar = TopLevelGrammar::from_json_schema(schema.clone());
        let parser = self.factory.create_parser(grammar).map_err(|e| Error::invalid(format!("the schema: {e}")))?;
        Ok(Constrained { matcher: Matcher::new(Ok(parser)) })
    }
}

impl Grammars {
    /// A decoder held to a grammar in llguidance's Lark syntax.
    pub fn for_lark(&self, lark: &str) -> Result<Constrained> {
        let grammar = TopLevelGrammar::from_lark(lark.to_string());
        let parser = self.factory.create_parser(grammar).map_err(|e| Error::Model(format!("grammar: {e}")))?;
        Ok(Constrained { matcher: Matcher::new(Ok(parser)) })
    }
}

/// One answer's decoder: which tokens may come next, and what came.
pub struct Constrained {
    matcher: Matcher,
}

impl Constrained {
    /// Masks `logits` to the tokens the grammar allows now.
    pub fn mask(&mut self, logits: &mut [f32]) -> Result<()> {
        let allowed = self.matcher.compute_mask_or_eos().map_err(|e| Error::Model(format!("grammar: {e}")))?;
        let size = allowed.len();
        for (i, l) in logits.iter_mut().enumerate() {
            if i >= size || !allowed.is_allowed(i as TokenId) {
                *l = f32::NEG_INFINITY;
            }
        }
        Ok(())
    }

    /// Records the token picked.
    pub fn consume(&mut self, token: u32) -> Result<()> {
        self.matcher.consume_token(token).map_err(|e| Error::Model(format!("grammar: {e}")))
    }

    /// Whether the answer is complete.
    pub fn done(&self) -> bool {
        self.matcher.is_stopped()
    }
}
