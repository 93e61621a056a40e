//! The one place that opens the embedder and a chat model a person chose: by its name in the
//! registry (Strata's own, or one of their plugins).

use std::sync::Arc;

use strata_api::plugins::{PersonPlugin, PluginKind};
use strata_api::{ApiError, ApiResult, Settings};
use strata_core::{ChatError, ChatModel, Embedder};
use strata_providers::{EndpointEmbedder, ProviderConfig};

pub use crate::registry::ON_DEVICE_EMBEDDER;

/// The embedder called `name` (none: the one in use under `settings`): the on-device model,
/// or one of the person's endpoints (called once to learn its vectors' size).
pub fn embedder(settings: &Settings, name: Option<&str>) -> ApiResult<Arc<dyn Embedder>> {
    let name = name.or(settings.embedder.name.as_deref()).unwrap_or(ON_DEVICE_EMBEDDER);
    if name.eq_ignore_ascii_case(ON_DEVICE_EMBEDDER) {
        return Ok(Arc::new(strata_core::RecentQueries::new(Arc::new(strata_models::MiniLm::load_default()?))));
    }
    let plugin = settings
        .plugin(name)
        .filter(|p| p.kind() == PluginKind::Embedder)
        .ok_or_else(|| ApiError::invalid(format!("no embedder is called {name}: `strata plugins list` shows them")))?;
    Ok(Arc::new(strata_core::RecentQueries::new(Arc::new(endpoint_embedder(plugin)?))))
}

/// A person's embedder at its endpoint.
pub fn endpoint_embedder(p: &PersonPlugin) -> ApiResult<EndpointEmbedder> {
    let (provider, url, model) = endpoint(p);
    EndpointEmbedder::open(provider, url, model, key(p)).map_err(|e| named(p, e))
}

/// The model id whose vectors go with the person's embedder `name` when it is removed: none
/// when it is no embedder of theirs, or another of theirs makes the same vectors.
pub fn vectors_of(settings: &Settings, name: &str) -> Option<String> {
    let p = settings.plugin(name).filter(|p| p.kind() == PluginKind::Embedder)?;
    let id = |p: &PersonPlugin| {
        let (provider, _, model) = endpoint(p);
        strata_providers::embedder::model_id(provider, model)
    };
    let mine = id(p);
    let shared = settings.plugins.iter().any(|o| o.name != p.name && o.kind() == PluginKind::Embedder && id(o) == mine);
    (!shared).then_some(mine)
}

/// The chat model a person chose by `provider` (`on-device`, a provider Strata serves, or the
/// name of one of their chat-model plugins), `model` (none: the on-device one chosen in
/// Settings, or the provider's usual) and `base_url`; the trained adapters `in_use` apply
/// on-device only.
pub fn chat_model(
    settings: &Settings,
    provider: &str,
    model: Option<String>,
    base_url: Option<String>,
    in_use: Option<strata_models::InUse>,
) -> Result<Box<dyn ChatModel>, ChatError> {
    if matches!(provider, "on-device" | "local") {
        // --model, else the one chosen in Settings, else STRATA_CHAT_MODEL, else the default.
        let chosen = model.or_else(|| settings.on_device.chat.clone());
        let local = strata_models::LazyLocalChat::for_chat(chosen.as_deref(), in_use)
            .map_err(|e| ChatError::new(strata_core::ChatErrorKind::ModelNotFound, e.to_string()))?;
        return Ok(Box::new(local));
    }
    let config = match settings.plugin(provider).filter(|p| p.kind() == PluginKind::ChatModel) {
        Some(p) => {
            let (provider, url, model) = endpoint(p);
            ProviderConfig { provider: provider.into(), model: model.into(), base_url: Some(url.into()), key: key(p) }
        }
        None => {
            let usual = match provider {
                "openai" => "gpt-4o-mini",
                "anthropic" => "claude-sonnet-4-5",
                "ollama" => "llama3.2",
                _ => "",
            };
            let model = model.unwrap_or_else(|| usual.to_string());
            ProviderConfig { provider: provider.into(), model, base_url, key: None }
        }
    };
    strata_providers::open(&config)
}

/// Its provider, address and model (checked present when it was added).
pub(crate) fn endpoint(p: &PersonPlugin) -> (&str, &str, &str) {
    (
        p.provider.as_deref().unwrap_or_default().trim(),
        p.url.as_deref().unwrap_or_default().trim(),
        p.model.as_deref().unwrap_or_default().trim(),
    )
}

/// Its key, from the environment variable it names.
pub(crate) fn key(p: &PersonPlugin) -> Option<String> {
    p.key_env.as_deref().and_then(|v| std::env::var(v).ok()).map(|k| k.trim().to_string()).filter(|k| !k.is_empty())
}

fn named(p: &PersonPlugin, e: ChatError) -> ApiError {
    ApiError::new(strata_api::ErrorCode::Model, format!("{}: {}", p.name, e.message))
}
