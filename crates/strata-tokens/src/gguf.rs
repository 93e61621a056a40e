//! The tokenizer of a GGUF model file (the on-device chat model ships as one, without a
//! `tokenizer.json`): its byte-level BPE vocabulary, merges and special tokens read from the
//! file's metadata and built with `tokenizers`. Only the metadata is read, not the weights.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::Path;

use strata_core::{Error, Result};
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

/// Qwen2's pre-tokenizer pattern (its `tokenizer.json`, and llama.cpp's "qwen2" pre-tokenizer):
/// contractions, letters with at most one leading non-letter, single digits, punctuation runs,
/// line breaks, spaces.
const QWEN2_SPLIT: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A metadata value of a GGUF file (the kinds a tokenizer needs; others are skipped).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any integer.
    Int(i64),
    /// Any float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Text(String),
    /// An array.
    Array(Vec<Value>),
}

impl Value {
    fn as_text(&self) -> Option<&str> {
        if let Value::Text(s) = self { Some(s) } else { None }
    }
}

struct Reader<R: Read> {
    r: R,
    file: String,
}

impl<R: Read> Reader<R> {
    fn bad(&self, what: impl std::fmt::Display) -> Error {
        Error::Model(format!("{}: not a readable GGUF model file ({what})", self.file))
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.r.read_exact(&mut b).map_err(|e| self.bad(e))?;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }

    fn string(&mut self) -> Result<String> {
        let len = self.u64()?;
        if len > 1 << 24 {
            return Err(self.bad(format!("a string of {len} bytes")));
        }
        let mut b = vec![0u8; len as usize];
        self.r.read_exact(&mut b).map_err(|e| self.bad(e))?;
        String::from_utf8(b).map_err(|e| self.bad(e))
    }

    fn value(&mut self, kind: u32) -> Result<Value> {
        Ok(match kind {
            0 => Value::Int(self.bytes::<1>()?[0] as i64),
            1 => Value::Int(self.bytes::<1>()?[0] as i8 as i64),
            2 => Value::Int(u16::from_le_bytes(self.bytes()?) as i64),
            3 => Value::Int(i16::from_le_bytes(self.bytes()?) as i64),
            4 => Value::Int(self.u32()? as i64),
            5 => Value::Int(i32::from_le_bytes(self.bytes()?) as i64),
            6 => Value::Float(f32::from_le_bytes(self.bytes()?) as f64),
            7 => Value::Bool(self.bytes::<1>()?[0] != 0),
            8 => Value::Text(self.string()?),
            9 => {
                let inner = self.u32()?;
                let len = self.u64()?;
                if len > 1 << 24 {
                    return Err(self.bad(format!("an array of {len} values")));
                }
                Value::Array((0..len).map(|_| self.value(inner)).collect::<Result<_>>()?)
            }
            10 => Value::Int(self.u64()? as i64),
            11 => Value::Int(i64::from_le_bytes(self.bytes()?)),
            12 => Value::Float(f64::from_le_bytes(self.bytes()?)),
            k => return Err(self.bad(format!("unknown value type {k}"))),
        })
    }
}

/// The metadata of the GGUF file at `path`.
pub fn metadata(path: &Path) -> Result<HashMap<String, Value>> {
    let file = std::fs::File::open(path)
        .map_err(|source| Error::Io { context: format!("cannot open the model file {}", path.display()), source })?;
    let mut r = Reader { r: BufReader::new(file), file: path.display().to_string() };
    if &r.bytes::<4>()? != b"GGUF" {
        return Err(r.bad("no GGUF magic"));
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(r.bad(format!("version {version}; versions 2 and 3 are read")));
    }
    let _tensors = r.u64()?;
    let count = r.u64()?;
    let mut out = HashMap::new();
    for _ in 0..count {
        let key = r.string()?;
        let kind = r.u32()?;
        out.insert(key, r.value(kind)?);
    }
    Ok(out)
}

/// The BPE tokenizer the metadata describes (`tokenizer.ggml.model` = "gpt2": byte-level BPE;
/// digits split one by one first, as SmolLM2's "smollm" pre-tokenizer does; Qwen2's "qwen2"
/// NFC and split pattern), with the control tokens as special tokens.
pub fn tokenizer(path: &Path) -> Result<Tokenizer> {
    let meta = metadata(path)?;
    let bad = |what: &str| Error::Model(format!("{}: {what}", path.display()));
    let get = |k: &str| meta.get(k).ok_or_else(|| bad(&format!("no {k} in its metadata")));
    let model = get("tokenizer.ggml.model")?.as_text().unwrap_or_default();
    if model != "gpt2" {
        return Err(bad(&format!("its tokenizer is '{model}'; byte-level BPE ('gpt2') is supported")));
    }
    let texts = |k: &str| -> Result<Vec<String>> {
        match get(k)? {
            Value::Array(v) => v.iter().map(|x| x.as_text().map(str::to_string).ok_or_else(|| bad(k))).collect(),
            _ => Err(bad(&format!("{k} is not a list"))),
        }
    };
    let tokens = texts("tokenizer.ggml.tokens")?;
    let merges: Vec<(String, String)> = texts("tokenizer.ggml.merges")?
        .into_iter()
        .map(|m| {
            m.split_once(' ').map(|(a, b)| (a.to_string(), b.to_string())).ok_or_else(|| bad("a merge without a space"))
        })
        .collect::<Result<_>>()?;
    let vocab: tokenizers::models::bpe::Vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| bad(&format!("its vocabulary does not make a tokenizer: {e}")))?;
    let mut tokenizer = Tokenizer::new(bpe);
    let pre = meta.get("tokenizer.ggml.pre").and_then(Value::as_text).unwrap_or("default");
    let byte_level = PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true));
    let pre_tokenizer = match pre {
        "smollm" => PreTokenizerWrapper::Sequence(Sequence::new(vec![
            PreTokenizerWrapper::Digits(Digits::new(true)),
            byte_level,
        ])),
        "qwen2" => {
            tokenizer.with_normalizer(Some(NFC)).map_err(|e| bad(&format!("Qwen2's normalizer: {e}")))?;
            let split = Split::new(SplitPattern::Regex(QWEN2_SPLIT.into()), SplitDelimiterBehavior::Isolated, false)
                .map_err(|e| bad(&format!("Qwen2's pre-tokenizer: {e}")))?;
            PreTokenizerWrapper::Sequence(Sequence::new(vec![
                PreTokenizerWrapper::Split(split),
                PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, false, false)),
            ]))
        }
        _ => byte_level,
    };
    tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    // Control tokens (type 3) are special: <|im_start|>, <|im_end|>, <|endoftext|>…; tokens a
    // person's text may hold whole (type 4, Qwen's <tool_call>) are added, not special.
    let typed = |kind: i64| -> Vec<&String> {
        match meta.get("tokenizer.ggml.token_type") {
            Some(Value::Array(types)) => {
                types.iter().zip(&tokens).filter(|(t, _)| **t == Value::Int(kind)).map(|(_, tok)| tok).collect()
            }
            _ => Vec::new(),
        }
    };
    let special: Vec<AddedToken> = typed(3).into_iter().map(|t| AddedToken::from(t.clone(), true)).collect();
    tokenizer.add_special_tokens(special).map_err(|e| bad(&format!("special tokens: {e}")))?;
    let user: Vec<AddedToken> = typed(4).into_iter().map(|t| AddedToken::from(t.clone(), false)).collect();
    tokenizer.add_tokens(user).map_err(|e| bad(&format!("added tokens: {e}")))?;
    Ok(tokenizer)
}

/// The ids of the tokens a GGUF file marks unused (type 5: Qwen's `[PAD…]` fillers), which a
/// model must never be let to write.
pub fn unused_ids(path: &Path) -> Result<Vec<u32>> {
    let meta = metadata(path)?;
    Ok(match meta.get("tokenizer.ggml.token_type") {
        Some(Value::Array(types)) => {
            types.iter().enumerate().filter(|(_, t)| **t == Value::Int(5)).map(|(i, _)| i as u32).collect()
        }
        _ => Vec::new(),
    })
}
