//! The model catalogue: model name or pattern → provider, tokenizer, context window, maximum
//! output. Strata ships `models.toml`; a user's file of the same shape extends and overrides it.
//! An unknown model gets a conservative default and a message saying so — never a panic.

use std::path::Path;

use serde::Deserialize;
use strata_core::{Error, Result};

/// What Strata knows about a model.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// A model name, or a prefix ending in `*`.
    pub pattern: String,
    /// Who serves it (`openai`, `anthropic`, `ollama`, `on-device`…).
    pub provider: String,
    /// Its tokenizer (`o200k_base`, `cl100k_base`, `anthropic`, `hf:<folder>`).
    pub tokenizer: String,
    /// Tokens it reads, prompt and answer together.
    pub context_window: u32,
    /// Tokens it may answer with.
    pub max_output: u32,
}

/// A model looked up in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// What the catalogue says (or the conservative default).
    pub info: ModelInfo,
    /// Set when the model is not in the catalogue: what was assumed, in a sentence.
    pub unknown: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    model: Vec<ModelInfo>,
}

/// The catalogue: the user's entries first, then Strata's.
#[derive(Debug, Clone)]
pub struct Catalogue {
    entries: Vec<ModelInfo>,
}

/// What an unknown model is assumed to be: a small window, counted with a common encoding.
fn fallback(name: &str) -> ModelInfo {
    ModelInfo {
        pattern: name.to_string(),
        provider: "unknown".into(),
        tokenizer: "cl100k_base".into(),
        context_window: 8192,
        max_output: 1024,
    }
}

fn parse(name: &str, text: &str) -> Result<Vec<ModelInfo>> {
    let file: File = toml::from_str(text).map_err(|e| Error::invalid(format!("{name}: {e}")))?;
    for m in &file.model {
        if m.pattern.trim().is_empty() || m.pattern.trim_end_matches('*').contains('*') {
            return Err(Error::invalid(format!(
                "{name}: pattern '{}' must be a model name or a prefix ending in '*'",
                m.pattern
            )));
        }
        if m.context_window == 0 || m.max_output > m.context_window {
            return Err(Error::invalid(format!(
                "{name}: '{}' needs a context window at least as large as its maximum output",
                m.pattern
            )));
        }
    }
    Ok(file.model)
}

impl Catalogue {
    /// The catalogue Strata ships.
    pub fn builtin() -> Catalogue {
        let entries = parse("models.toml", include_str!("../models.toml")).expect("the shipped catalogue parses");
        Catalogue { entries }
    }

    /// Strata's catalogue extended by the user's file (its entries win).
    pub fn with_user_file(path: &Path) -> Result<Catalogue> {
        let text = strata_core::files::read_text(path, 16 << 20, "a model catalogue")?;
        let mut entries = parse(&path.display().to_string(), &text)?;
        entries.extend(Catalogue::builtin().entries);
        Ok(Catalogue { entries })
    }

    /// The first entry matching `model` (case-insensitive), or the conservative default.
    pub fn lookup(&self, model: &str) -> Lookup {
        let name = model.trim().to_lowercase();
        let found = self.entries.iter().find(|m| {
            let p = m.pattern.to_lowercase();
            match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == p,
            }
        });
        match found {
            Some(info) => Lookup { info: info.clone(), unknown: None },
            None => {
                let info = fallback(model.trim());
                let unknown = Some(format!(
                    "'{}' is not in the model catalogue: assuming a {}-token window, {} tokens of answer, \
                     counted with {} (add it to your models.toml to be exact)",
                    strata_core::error::excerpt(model.trim()),
                    info.context_window,
                    info.max_output,
                    info.tokenizer
                ));
                Lookup { info, unknown }
            }
        }
    }

    /// Every entry, the user's first.
    pub fn entries(&self) -> &[ModelInfo] {
        &self.entries
    }
}
