//! The person's plugins, kept in the settings: embedders and chat models at an endpoint they run
//! (Ollama, any OpenAI-compatible server) and tokenizer files. Nothing here is code loaded into
//! Strata: an endpoint is called over HTTP, a tokenizer file is data. The registry that lists
//! them beside Strata's own parts, checks them and opens them is `strata-plugins`.

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};
use crate::settings::Settings;

/// What a plugin is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "kebab-case")]
pub enum PluginKind {
    /// Where memories are kept (SQLite, PostgreSQL).
    Storage,
    /// Counts and cuts text in a model's tokens.
    TokenManager,
    /// Turns text into vectors for search by meaning.
    Embedder,
    /// Answers, extracts, runs agents.
    ChatModel,
    /// Reads a kind of file (or an MCP server's resources) into a dataset.
    DatasetLoader,
    /// Something an agent may call.
    Tool,
}

impl PluginKind {
    /// Every kind, in the order lists show them.
    pub const ALL: [PluginKind; 6] = [
        PluginKind::Storage,
        PluginKind::TokenManager,
        PluginKind::Embedder,
        PluginKind::ChatModel,
        PluginKind::DatasetLoader,
        PluginKind::Tool,
    ];

    /// Its name as the CLI and files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Storage => "storage",
            PluginKind::TokenManager => "token-manager",
            PluginKind::Embedder => "embedder",
            PluginKind::ChatModel => "chat-model",
            PluginKind::DatasetLoader => "dataset-loader",
            PluginKind::Tool => "tool",
        }
    }

    /// Its name for people, plural (a list's heading).
    pub fn heading(self) -> &'static str {
        match self {
            PluginKind::Storage => "Storage engines",
            PluginKind::TokenManager => "Token counters",
            PluginKind::Embedder => "Embedders",
            PluginKind::ChatModel => "Chat models",
            PluginKind::DatasetLoader => "Dataset loaders",
            PluginKind::Tool => "Tools",
        }
    }
}

/// The endpoints a person's embedder or chat model may be served by.
pub const ENDPOINT_PROVIDERS: [&str; 2] = ["ollama", "openai-compatible"];

/// A plugin the person added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct PersonPlugin {
    /// Its name (unique among plugins; what `strata plugins use` and the pickers take).
    pub name: String,
    /// `embedder`, `chat-model` or `token-manager`.
    pub kind: Option<PluginKind>,
    /// For an endpoint: `ollama` or `openai-compatible`.
    pub provider: Option<String>,
    /// For an endpoint: its address (`http://127.0.0.1:11434`, `http://127.0.0.1:1234/v1`).
    pub url: Option<String>,
    /// For an endpoint: the model's name there.
    pub model: Option<String>,
    /// For an endpoint that wants a key: the environment variable holding it (never the key).
    pub key_env: Option<String>,
    /// For a token manager: a `tokenizer.json` or a `.gguf` model file.
    pub file: Option<String>,
    /// For a token manager: the model names it counts for (a name, or a prefix ending in `*`).
    pub models: Option<String>,
}

impl PersonPlugin {
    /// Its kind (a plugin without one is refused by [`PersonPlugin::check`]).
    pub fn kind(&self) -> PluginKind {
        self.kind.unwrap_or(PluginKind::Embedder)
    }

    /// Where it comes from, in words.
    pub fn source(&self) -> String {
        match (self.kind(), &self.file) {
            (PluginKind::TokenManager, Some(f)) => format!("file {f}"),
            _ => format!(
                "{} at {} (model {})",
                self.provider.as_deref().unwrap_or("?"),
                self.url.as_deref().unwrap_or("?"),
                self.model.as_deref().unwrap_or("?")
            ),
        }
    }

    /// Whether it counts tokens for `model` (its `models` pattern, case-insensitive).
    pub fn counts_for(&self, model: &str) -> bool {
        let Some(pattern) = self.models.as_deref().map(|p| p.trim().to_lowercase()) else { return false };
        let name = model.trim().to_lowercase();
        match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => !pattern.is_empty() && name == pattern,
        }
    }

    /// A plugin that can be used, or an error that says what is missing.
    pub fn check(&self) -> ApiResult<()> {
        check_name(&self.name)?;
        let given = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).is_some();
        let name = &self.name;
        match self.kind {
            Some(PluginKind::Embedder | PluginKind::ChatModel) => {
                let provider = self.provider.as_deref().unwrap_or_default();
                if !ENDPOINT_PROVIDERS.contains(&provider) {
                    return Err(ApiError::invalid(format!(
                        "{name}: an endpoint is served by {}, not '{provider}'",
                        ENDPOINT_PROVIDERS.join(" or ")
                    )));
                }
                let url = self.url.as_deref().unwrap_or_default().trim();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(ApiError::invalid(format!("{name}: its address starts with http:// or https://")));
                }
                if !given(&self.model) {
                    return Err(ApiError::invalid(format!("{name}: name the model the endpoint serves")));
                }
                if given(&self.file) {
                    return Err(ApiError::invalid(format!("{name}: an endpoint has no file")));
                }
            }
            Some(PluginKind::TokenManager) => {
                let file = self.file.as_deref().unwrap_or_default();
                if !(file.ends_with(".json") || file.ends_with(".gguf")) {
                    return Err(ApiError::invalid(format!(
                        "{name}: a token counter is a tokenizer.json or a .gguf model file"
                    )));
                }
                if !given(&self.models) {
                    return Err(ApiError::invalid(format!(
                        "{name}: say which models it counts for (a name, or a prefix ending in *)"
                    )));
                }
            }
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "{name}: a {} cannot be added here ({})",
                    other.as_str(),
                    match other {
                        PluginKind::Tool | PluginKind::DatasetLoader => "add an MCP server: `strata mcp-servers add`",
                        _ => "it is built in",
                    }
                )));
            }
            None => return Err(ApiError::invalid(format!("{name}: say what kind of plugin it is"))),
        }
        Ok(())
    }
}

/// A plugin's name: letters, digits, `-`, `_` and `.`, up to 64.
pub fn check_name(name: &str) -> ApiResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid(format!(
            "'{}' cannot name a plugin: use letters, digits, - _ and . (up to 64)",
            strata_core::error::excerpt(name)
        )))
    }
}

/// The embedder in use and the one being switched to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct EmbedderSettings {
    /// The embedder recall uses (a plugin's name; none: the on-device one).
    pub name: Option<String>,
    /// An embedder the store is being re-embedded with; it takes over when every memory has
    /// its vector (a stopped switch resumes from where it was).
    pub switching_to: Option<String>,
}

impl Settings {
    /// The person's plugin called `name`.
    pub fn plugin(&self, name: &str) -> Option<&PersonPlugin> {
        self.plugins.iter().find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// These settings with `plugin` added (checked; a name taken is refused).
    pub fn with_plugin(&self, plugin: PersonPlugin) -> ApiResult<Settings> {
        plugin.check()?;
        if self.plugin(&plugin.name).is_some() {
            return Err(ApiError::invalid(format!(
                "a plugin is already called {}: remove it first, or choose another name",
                plugin.name
            )));
        }
        let mut s = self.clone();
        s.plugins.push(plugin);
        Ok(s)
    }

    /// These settings without the plugin `name`; the embedder in use cannot be removed.
    pub fn without_plugin(&self, name: &str) -> ApiResult<Settings> {
        let found =
            self.plugin(name).ok_or_else(|| ApiError::invalid(format!("no plugin of yours is called {name}")))?;
        let found = found.name.clone();
        for (what, chosen) in [("in use", &self.embedder.name), ("being switched to", &self.embedder.switching_to)] {
            if chosen.as_deref() == Some(found.as_str()) {
                return Err(ApiError::invalid(format!(
                    "{found} is the embedder {what}: choose another embedder first"
                )));
            }
        }
        let mut s = self.clone();
        s.plugins.retain(|p| p.name != found);
        Ok(s)
    }

    /// The person's token counter for `model`, if one of their plugins counts for it.
    pub fn token_plugin_for(&self, model: &str) -> Option<&PersonPlugin> {
        self.plugins.iter().find(|p| p.kind() == PluginKind::TokenManager && p.counts_for(model))
    }

    /// The plugins checked, each name once.
    pub(crate) fn check_plugins(&self) -> ApiResult<()> {
        let mut seen = std::collections::HashSet::new();
        for p in &self.plugins {
            p.check()?;
            if !seen.insert(p.name.to_lowercase()) {
                return Err(ApiError::invalid(format!("two plugins are called {}", p.name)));
            }
        }
        for name in [&self.embedder.name, &self.embedder.switching_to].into_iter().flatten() {
            if self.plugin(name).is_none_or(|p| p.kind() != PluginKind::Embedder) {
                return Err(ApiError::invalid(format!("the embedder {name} is not one of your embedders")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ollama(name: &str) -> PersonPlugin {
        PersonPlugin {
            name: name.into(),
            kind: Some(PluginKind::Embedder),
            provider: Some("ollama".into()),
            url: Some("http://127.0.0.1:11434".into()),
            model: Some("nomic-embed-text".into()),
            ..PersonPlugin::default()
        }
    }

    #[test]
    fn plugins_are_checked_named_once_and_the_one_in_use_stays() {
        let s = Settings::default().with_plugin(ollama("nomic")).unwrap();
        let err = s.with_plugin(ollama("NOMIC")).unwrap_err().to_string();
        assert!(err.contains("already called NOMIC"), "{err}");
        let bad = PersonPlugin { provider: Some("mystery".into()), ..ollama("x") };
        assert!(s.with_plugin(bad).unwrap_err().to_string().contains("served by ollama or openai-compatible"));
        let no_model = PersonPlugin { model: None, ..ollama("y") };
        assert!(s.with_plugin(no_model).unwrap_err().to_string().contains("name the model"));
        let tool = PersonPlugin { kind: Some(PluginKind::Tool), ..ollama("z") };
        assert!(s.with_plugin(tool).unwrap_err().to_string().contains("strata mcp-servers add"));
        assert!(check_name("has space").is_err());

        let mut using = s.clone();
        using.embedder.name = Some("nomic".into());
        using.check().unwrap();
        assert!(using.without_plugin("nomic").unwrap_err().to_string().contains("choose another embedder first"));
        assert!(s.without_plugin("nomic").unwrap().plugins.is_empty());
        assert!(s.without_plugin("other").is_err());
        let mut dangling = Settings::default();
        dangling.embedder.name = Some("gone".into());
        assert!(dangling.check().unwrap_err().to_string().contains("not one of your embedders"));
    }

    #[test]
    fn a_token_counter_counts_for_the_models_it_names() {
        let t = PersonPlugin {
            name: "llama3".into(),
            kind: Some(PluginKind::TokenManager),
            file: Some("/tmp/llama3/tokenizer.json".into()),
            models: Some("llama3*".into()),
            ..PersonPlugin::default()
        };
        let s = Settings::default().with_plugin(t).unwrap();
        assert_eq!(s.token_plugin_for("Llama3.1-8B").map(|p| p.name.as_str()), Some("llama3"));
        assert!(s.token_plugin_for("gpt-4o").is_none());
        let unnamed = PersonPlugin { name: "t2".into(), models: None, ..s.plugins[0].clone() };
        assert!(s.with_plugin(unnamed).unwrap_err().to_string().contains("which models"));
    }
}
