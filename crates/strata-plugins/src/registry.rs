//! The registry's entries: Strata's own parts, listed from the tables that define them (the
//! pinned models, the catalogue, the dataset formats, the agents' tools), and the person's
//! (plugins in the settings, MCP servers in `mcp.json`), each with what a listing can tell
//! without calling anything.

use std::path::PathBuf;

use strata_api::Settings;
use strata_api::plugins::PluginKind;
use strata_mcp_client::McpConfig;
use strata_tokens::chat_models::{self, ModelState};

use crate::{MISSING, PluginView, UNCHECKED};

/// Where the registry reads what there is.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The person's settings (their plugins, the embedder in use).
    pub settings: Settings,
    /// The person's MCP servers.
    pub mcp: McpConfig,
    /// Where the on-device models are.
    pub models_dir: PathBuf,
    /// The storage engine the open store runs on (`sqlite` or `postgres`).
    pub storage_in_use: String,
}

impl Sources {
    /// The person's: their settings and MCP servers files, the models folder; `storage` is
    /// the engine of the store they opened.
    pub fn for_person(storage: &str) -> strata_api::ApiResult<Sources> {
        let mcp_path = McpConfig::path().map_err(strata_api::ApiError::from)?;
        Ok(Sources {
            settings: Settings::load()?,
            mcp: McpConfig::load_from(&mcp_path).map_err(strata_api::ApiError::from)?,
            models_dir: strata_tokens::models_dir(),
            storage_in_use: storage.to_string(),
        })
    }
}

/// The on-device embedder's name in the registry.
pub const ON_DEVICE_EMBEDDER: &str = "on-device";

/// Every entry, by kind, Strata's own first within each.
pub fn list(sources: &Sources) -> Vec<PluginView> {
    let mut all = Vec::new();
    all.extend(storage(sources));
    all.extend(token_managers(sources));
    all.extend(embedders(sources));
    all.extend(chat_models(sources));
    all.extend(dataset_loaders(sources));
    all.extend(tools(sources));
    all
}

const BUILT_IN: &str = "built in";

fn storage(s: &Sources) -> Vec<PluginView> {
    let mut sqlite =
        PluginView::new(PluginKind::Storage, "sqlite", BUILT_IN, "one file on this computer (the default)");
    let mut postgres = PluginView::new(
        PluginKind::Storage,
        "postgres",
        BUILT_IN,
        "a PostgreSQL database with pgvector, for a team: --db postgres://… or Settings → Team database",
    );
    sqlite.in_use = s.storage_in_use == "sqlite";
    postgres.in_use = s.storage_in_use == "postgres";
    vec![sqlite, postgres]
}

fn token_managers(s: &Sources) -> Vec<PluginView> {
    let mut out = vec![
        PluginView::new(
            PluginKind::TokenManager,
            "o200k_base",
            BUILT_IN,
            "OpenAI's encoding of gpt-4o, gpt-4.1, o-series",
        ),
        PluginView::new(PluginKind::TokenManager, "cl100k_base", BUILT_IN, "OpenAI's encoding of gpt-4 and gpt-3.5"),
        PluginView::new(
            PluginKind::TokenManager,
            "anthropic",
            BUILT_IN,
            "Claude's tokens, estimated (no local tokenizer)",
        ),
    ];
    for m in chat_models::chat_models() {
        let v = PluginView::new(PluginKind::TokenManager, &m.name, BUILT_IN, format!("the vocabulary of {}", m.file));
        out.push(match m.state_in(&s.models_dir) {
            ModelState::Ready => v,
            _ => v.with_state(
                MISSING,
                format!(
                    "its model is not on this computer (Settings → On-device models, or `strata models fetch {}`)",
                    m.name
                ),
            ),
        });
    }
    for p in s.settings.plugins.iter().filter(|p| p.kind() == PluginKind::TokenManager) {
        let file = p.file.as_deref().unwrap_or_default();
        let v = added(PluginView::new(
            PluginKind::TokenManager,
            &p.name,
            &p.source(),
            format!("counts for {}", p.models.as_deref().unwrap_or_default()),
        ));
        out.push(if std::path::Path::new(file).is_file() {
            v.with_state(UNCHECKED, "")
        } else {
            v.with_state(MISSING, format!("{file} is not there"))
        });
    }
    out
}

fn embedders(s: &Sources) -> Vec<PluginView> {
    let chosen = s.settings.embedder.name.as_deref();
    let mut on_device = PluginView::new(
        PluginKind::Embedder,
        ON_DEVICE_EMBEDDER,
        BUILT_IN,
        "all-MiniLM-L6-v2, 384 dimensions, on this computer",
    );
    on_device.in_use = chosen.is_none();
    if !s.models_dir.join(strata_tokens::EMBEDDER_DIR).join("model.safetensors").is_file() {
        on_device =
            on_device.with_state(MISSING, "the embedding model is not on this computer: `make setup` fetches it");
    }
    let mut out = vec![on_device];
    for p in s.settings.plugins.iter().filter(|p| p.kind() == PluginKind::Embedder) {
        let mut v = added(PluginView::new(PluginKind::Embedder, &p.name, &p.source(), switching(s, &p.name)));
        v.in_use = chosen == Some(p.name.as_str());
        out.push(v.with_state(UNCHECKED, ""));
    }
    out
}

fn switching(s: &Sources, name: &str) -> String {
    if s.settings.embedder.switching_to.as_deref() == Some(name) {
        "the store is being re-embedded with it".into()
    } else {
        String::new()
    }
}

fn chat_models(s: &Sources) -> Vec<PluginView> {
    let mut out = Vec::new();
    for m in chat_models::chat_models() {
        let v = PluginView::new(PluginKind::ChatModel, &m.name, BUILT_IN, format!("{} on this computer", m.title));
        out.push(match m.state_in(&s.models_dir) {
            ModelState::Ready => v,
            _ => v.with_state(
                MISSING,
                format!("not on this computer (Settings → On-device models, or `strata models fetch {}`)", m.name),
            ),
        });
    }
    for (provider, title) in [("openai", "OpenAI"), ("anthropic", "Anthropic")] {
        let v = PluginView::new(PluginKind::ChatModel, provider, BUILT_IN, format!("{title}'s models, with your key"));
        out.push(match strata_providers::keys::find(provider).0 {
            Some(_) => v,
            None => v.with_state(MISSING, format!("no key yet (Settings → Providers, or `strata key set {provider}`)")),
        });
    }
    let ollama = PluginView::new(PluginKind::ChatModel, "ollama", BUILT_IN, "models Ollama serves on this computer");
    out.push(ollama.with_state(UNCHECKED, ""));
    for p in s.settings.plugins.iter().filter(|p| p.kind() == PluginKind::ChatModel) {
        out.push(added(PluginView::new(PluginKind::ChatModel, &p.name, &p.source(), "")).with_state(UNCHECKED, ""));
    }
    out
}

fn dataset_loaders(s: &Sources) -> Vec<PluginView> {
    let mut out: Vec<PluginView> = strata_datasets::Format::ALL
        .iter()
        .map(|f| {
            PluginView::new(
                PluginKind::DatasetLoader,
                f.name(),
                BUILT_IN,
                format!("reads {}", f.extensions().join(", ")),
            )
        })
        .collect();
    for (name, server) in &s.mcp.servers {
        let v = PluginView::new(
            PluginKind::DatasetLoader,
            name,
            &format!("MCP server ({})", server.shown()),
            "its text resources, loaded as datasets: `strata datasets mcp NAME`",
        );
        out.push(added(v).with_state(UNCHECKED, ""));
    }
    out
}

fn tools(s: &Sources) -> Vec<PluginView> {
    let mut out: Vec<PluginView> = strata_agents::tools::MEMORY_TOOLS
        .iter()
        .map(|t| PluginView::new(PluginKind::Tool, t, BUILT_IN, "an agent's memory, within its scope"))
        .chain(
            strata_agents::datasets::DATASET_TOOLS
                .iter()
                .map(|t| PluginView::new(PluginKind::Tool, t, BUILT_IN, "the store's datasets, read only")),
        )
        .collect();
    for (name, server) in &s.mcp.servers {
        let v = PluginView::new(PluginKind::Tool, name, &format!("MCP server ({})", server.shown()), "its tools");
        out.push(added(v).with_state(UNCHECKED, ""));
    }
    out
}

fn added(mut v: PluginView) -> PluginView {
    v.added = true;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_strata_s_own_entries_and_the_person_s_follow() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = Settings::default();
        settings.plugins.push(strata_api::plugins::PersonPlugin {
            name: "nomic".into(),
            kind: Some(PluginKind::Embedder),
            provider: Some("ollama".into()),
            url: Some("http://127.0.0.1:11434".into()),
            model: Some("nomic-embed-text".into()),
            ..Default::default()
        });
        let sources =
            Sources { settings, models_dir: dir.path().into(), storage_in_use: "sqlite".into(), ..Default::default() };
        let all = list(&sources);
        for kind in PluginKind::ALL {
            assert!(all.iter().any(|p| p.kind == kind && !p.added), "no built-in {kind:?}");
        }
        let on_device = all.iter().find(|p| p.name == ON_DEVICE_EMBEDDER).unwrap();
        assert!(on_device.in_use && on_device.state == MISSING, "{on_device:?}");
        assert!(on_device.why.contains("make setup"));
        let nomic = all.iter().find(|p| p.name == "nomic").unwrap();
        assert!(nomic.added && !nomic.in_use && nomic.state == UNCHECKED);
        assert_eq!(nomic.source, "ollama at http://127.0.0.1:11434 (model nomic-embed-text)");
        assert!(all.iter().any(|p| p.kind == PluginKind::Storage && p.name == "sqlite" && p.in_use));
        assert!(all.iter().any(|p| p.kind == PluginKind::DatasetLoader && p.name == "pdf"));
    }
}
