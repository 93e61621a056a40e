//! Chat models over the network, behind the core's [`ChatModel`]: OpenAI's Chat Completions,
//! Anthropic's Messages, Ollama, and any OpenAI-compatible server (a LiteLLM proxy, vLLM,
//! LM Studio, llama.cpp's server). Blocking calls (`reqwest` on its own `tokio` runtime) with
//! timeouts, retries on 429 and 5xx, and errors a person can act on; keys come from the
//! environment or the OS keychain ([`keys`]) and never appear in an error.
#![deny(missing_docs)]

pub mod anthropic;
pub mod embedder;
pub mod http;
pub mod keys;
pub mod ollama;
pub mod openai;
pub mod served;

pub use anthropic::Anthropic;
pub use embedder::EndpointEmbedder;
pub use http::Endpoint;
pub use ollama::Ollama;
pub use openai::OpenAi;
use strata_core::{ChatError, ChatErrorKind, ChatModel};

/// The providers this crate serves.
pub const PROVIDERS: [&str; 4] = ["openai", "anthropic", "ollama", "openai-compatible"];

/// Which model, where.
#[derive(Debug, Clone, Default)]
pub struct ProviderConfig {
    /// One of [`PROVIDERS`].
    pub provider: String,
    /// The model's name at that provider.
    pub model: String,
    /// Another address than the provider's usual one (required for `openai-compatible`).
    pub base_url: Option<String>,
    /// The key; when absent, the provider's environment variable is read.
    pub key: Option<String>,
}

/// The environment variables a provider's key and address are read from.
pub fn env_names(provider: &str) -> (Option<&'static str>, Option<&'static str>) {
    match provider {
        "openai" => (Some("OPENAI_API_KEY"), Some("OPENAI_BASE_URL")),
        "anthropic" => (Some("ANTHROPIC_API_KEY"), Some("ANTHROPIC_BASE_URL")),
        "ollama" => (None, Some("OLLAMA_HOST")),
        "openai-compatible" => (Some("OPENAI_COMPATIBLE_API_KEY"), Some("OPENAI_COMPATIBLE_BASE_URL")),
        _ => (None, None),
    }
}

/// The model `config` names, ready to chat: a missing key from the environment or the OS
/// keychain ([`keys::find`]), a missing address from the environment.
pub fn open(config: &ProviderConfig) -> Result<Box<dyn ChatModel>, ChatError> {
    let mut config = config.clone();
    if config.key.is_none() && env_names(&config.provider).0.is_some() {
        config.key = keys::find(&config.provider).0;
    }
    open_with(&config, &|name| std::env::var(name).ok())
}

/// [`open`], reading variables through `var`.
pub fn open_with(
    config: &ProviderConfig,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ChatError> {
    let env = |name: Option<&str>| name.and_then(var).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let p = config.provider.as_str();
    let (key_var, url_var) = env_names(p);
    let key = config.key.clone().or_else(|| env(key_var));
    let base = config.base_url.clone().or_else(|| env(url_var));
    let need_key = |key: Option<String>| {
        key.ok_or_else(|| {
            ChatError::new(
                ChatErrorKind::BadKey,
                format!("no key for {p}: set {} or store one with `strata key set {p}`", key_var.unwrap_or("its key")),
            )
        })
    };
    if !PROVIDERS.contains(&p) {
        return Err(ChatError::new(
            ChatErrorKind::BadRequest,
            format!("unknown provider '{p}' (expected on-device, {})", PROVIDERS.join(", ")),
        ));
    }
    if config.model.trim().is_empty() {
        return Err(ChatError::new(ChatErrorKind::ModelNotFound, format!("no model named for {p}")));
    }
    Ok(match p {
        "openai" => {
            let endpoint =
                Endpoint::new(base.unwrap_or_else(|| "https://api.openai.com/v1".into()), Some(need_key(key)?));
            Box::new(OpenAi::new(p, &config.model, endpoint)?)
        }
        "openai-compatible" => {
            let base = base.ok_or_else(|| {
                ChatError::new(
                    ChatErrorKind::BadRequest,
                    "an OpenAI-compatible server needs its address (e.g. http://127.0.0.1:4000/v1 for LiteLLM)",
                )
            })?;
            Box::new(OpenAi::new(p, &config.model, Endpoint::new(base, key))?)
        }
        "anthropic" => {
            let endpoint =
                Endpoint::new(base.unwrap_or_else(|| "https://api.anthropic.com".into()), Some(need_key(key)?));
            Box::new(Anthropic::new(&config.model, endpoint)?)
        }
        "ollama" => {
            let mut base = base.unwrap_or_else(|| "http://127.0.0.1:11434".into());
            if !base.contains("://") {
                base = format!("http://{base}");
            }
            Box::new(Ollama::new(&config.model, Endpoint::new(base, None))?)
        }
        other => unreachable!("'{other}' was checked against PROVIDERS above"),
    })
}
