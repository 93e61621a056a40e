//! Settings: where things are, the saved settings (tier thresholds, the chat model), provider
//! keys in the OS keychain, and the MCP server switched on and off.

use strata_api::settings::{FieldProblem, TierPreset, tier_problems};
use strata_api::{ApiError, ErrorCode, Settings};
use tauri::State;

use crate::state::AppState;

/// What Settings shows: where things are, what is saved, and the MCP server's state.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct SettingsView {
    /// The database file.
    database: String,
    /// The folder the on-device models are read from.
    models: String,
    /// Whether the embedding model is there.
    embedder_present: bool,
    /// The on-device chat models: whether each is here, its licence, which answers.
    on_device: Vec<strata_api::on_device::OnDeviceModelView>,
    /// The settings file.
    settings_file: String,
    /// What it holds.
    saved: Settings,
    /// The training schedule in a sentence.
    schedule_said: String,
    /// The MCP server, when running.
    mcp: Option<McpView>,
}

/// A running MCP server, for clients' configuration.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct McpView {
    /// The address clients connect to.
    url: String,
    /// The bearer token they send.
    token: String,
}

async fn settings_view(state: &AppState) -> Result<SettingsView, ApiError> {
    let models = strata_models::models_dir();
    let mcp = state.mcp.lock().await.as_ref().map(|m| McpView {
        url: format!("http://{}{}", m.running.addr, strata_mcp::http::PATH),
        token: m.token.clone(),
    });
    let saved = Settings::load()?;
    Ok(SettingsView {
        database: state.db_path.display().to_string(),
        embedder_present: models.join(strata_models::EMBEDDER_DIR).join("model.safetensors").exists(),
        on_device: crate::models::models_view()?,
        models: models.display().to_string(),
        settings_file: Settings::path()?.display().to_string(),
        saved: saved.clone(),
        schedule_said: saved.training.schedule.said(),
        mcp,
    })
}

/// Where things are, what is saved, and whether the MCP server runs.
#[tauri::command]
#[specta::specta]
pub(crate) async fn settings(state: State<'_, AppState>) -> Result<SettingsView, ApiError> {
    settings_view(&state).await
}

/// Checks and saves the settings (a bad value is refused and nothing changes).
#[tauri::command]
#[specta::specta]
pub(crate) async fn save_settings(state: State<'_, AppState>, saved: Settings) -> Result<SettingsView, ApiError> {
    let models_changed = Settings::load().map(|s| s.on_device) != Ok(saved.on_device.clone());
    saved.save()?;
    if models_changed {
        state.reload_models();
    }
    let days = saved.usage.records_days();
    state
        .run(move |e| {
            e.set_recall_records_days(days);
            Ok(())
        })
        .await?;
    settings_view(&state).await
}

/// What is wrong with each field of the tier rule in `saved` (empty: nothing).
#[tauri::command]
#[specta::specta]
pub(crate) async fn check_tiers(saved: Settings) -> Result<Vec<FieldProblem>, ApiError> {
    Ok(tier_problems(&saved.tiers))
}

/// The ready-made tier rules, the default first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn tier_presets() -> Result<Vec<TierPreset>, ApiError> {
    Ok(strata_api::settings::tier_presets())
}

/// Switches the MCP server (streamable HTTP on 127.0.0.1, a new token each start) on or off.
#[tauri::command]
#[specta::specta]
pub(crate) async fn set_mcp(state: State<'_, AppState>, on: bool, port: u16) -> Result<SettingsView, ApiError> {
    let mut mcp = state.mcp.lock().await;
    if let Some(old) = mcp.take() {
        let _ = old.running.stop().await;
    }
    if on {
        let server = strata_mcp::StrataMcp::new(state.engine_for_mcp().await?, strata_mcp::McpSettings::default());
        let token = strata_mcp::http::new_token();
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let running = strata_mcp::http::serve(server, addr, token.clone()).await.map_err(|e| {
            ApiError::new(strata_api::ErrorCode::Io, format!("cannot start the MCP server on {addr}: {e}"))
        })?;
        *mcp = Some(crate::state::McpServer { running, token });
    }
    drop(mcp);
    settings_view(&state).await
}

/// A model provider and where its key is (never the key itself).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct ProviderView {
    /// `openai`, `anthropic`, `ollama` or `openai-compatible`.
    name: String,
    /// Whether it needs a key at all (Ollama does not).
    needs_key: bool,
    /// `environment`, `keychain` or `missing`.
    key_from: String,
    /// The environment variable a key is read from first.
    key_variable: Option<String>,
    /// The environment variable its address is read from.
    address_variable: Option<String>,
    /// Model names the catalogue knows for it (others may be typed in).
    models: Vec<String>,
    /// One of the person's chat models (Settings → Plugins): its endpoint and model are its own.
    plugin: bool,
}

fn provider_views() -> Vec<ProviderView> {
    let catalogue = strata_api::context::catalogue(&strata_api::ContextSettings::for_user()).ok();
    let known = |p: &str| -> Vec<String> {
        let Some(c) = &catalogue else { return Vec::new() };
        let mut names: Vec<String> = c
            .entries()
            .iter()
            .filter(|m| m.provider == p || (p == "openai-compatible" && m.provider == "openai"))
            .map(|m| m.pattern.trim_end_matches('*').trim_end_matches(['-', '.']).to_string())
            .filter(|n| !n.is_empty())
            .collect();
        names.dedup();
        names
    };
    strata_providers::PROVIDERS
        .iter()
        .map(|p| {
            let (key_var, url_var) = strata_providers::env_names(p);
            let key_from = match key_var.map(|_| strata_providers::keys::find(p).1) {
                Some(strata_providers::keys::KeySource::Environment(_)) => "environment",
                Some(strata_providers::keys::KeySource::Keychain) => "keychain",
                _ => "missing",
            };
            ProviderView {
                name: p.to_string(),
                needs_key: *p != "ollama" && *p != "openai-compatible",
                key_from: key_from.into(),
                key_variable: key_var.map(Into::into),
                address_variable: url_var.map(Into::into),
                models: known(p),
                plugin: false,
            }
        })
        .chain(person_chat_models())
        .collect()
}

/// The person's chat models (the registry's plugins), as the chat's picker offers them.
fn person_chat_models() -> Vec<ProviderView> {
    let settings = strata_api::Settings::load().unwrap_or_default();
    settings
        .plugins
        .iter()
        .filter(|p| p.kind() == strata_api::plugins::PluginKind::ChatModel)
        .map(|p| ProviderView {
            name: p.name.clone(),
            needs_key: false,
            key_from: "missing".into(),
            key_variable: p.key_env.clone(),
            address_variable: None,
            models: p.model.iter().cloned().collect(),
            plugin: true,
        })
        .collect()
}

/// The providers and where their keys are.
#[tauri::command]
#[specta::specta]
pub(crate) async fn providers() -> Result<Vec<ProviderView>, ApiError> {
    tauri::async_runtime::spawn_blocking(provider_views)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot read the keychain: {e}")))
}

/// Files a provider's key in the OS keychain (`key` empty: removes it).
#[tauri::command]
#[specta::specta]
pub(crate) async fn set_key(provider: String, key: String) -> Result<Vec<ProviderView>, ApiError> {
    tauri::async_runtime::spawn_blocking(move || {
        if strata_providers::env_names(&provider).0.is_none() {
            return Err(ApiError::invalid(format!("{provider} takes no key")));
        }
        if key.trim().is_empty() {
            strata_providers::keys::forget(&provider)?;
        } else {
            strata_providers::keys::store(&provider, &key)?;
        }
        Ok(provider_views())
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot reach the keychain: {e}")))?
}
