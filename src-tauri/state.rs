//! What the app holds: the engine over the user's database, behind a mutex, with the
//! on-device embedder attached in the background once it has loaded (the window opens without
//! waiting for it; until then recall ranks by keywords).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use strata_api::{ApiError, ApiResult, Engine, EngineOptions, ErrorCode};

/// The app's state.
pub struct AppState {
    engine: Arc<Mutex<Engine>>,
    /// The on-device chat model: its weights load on the first answer. Replaced (unloaded)
    /// when another adapter becomes active.
    chat: std::sync::RwLock<Option<Arc<strata_models::LazyLocalChat>>>,
    /// The on-device model's second instance, for extraction ([`AppState::extraction_model`]).
    extractor: std::sync::OnceLock<Option<Arc<strata_models::LazyLocalChat>>>,
    /// The on-device model training uses (its tokenizer for the sets, its answers to check
    /// an adapter): an instance of its own, loaded on first use, so the chat is never touched.
    trainer: Trainer,
    /// The MCP server over HTTP, when switched on in Settings.
    pub mcp: tokio::sync::Mutex<Option<McpServer>>,
    /// Where the database is.
    pub db_path: PathBuf,
    /// The long jobs running, by the id the window gave them: their stop flags.
    pub jobs: Arc<Mutex<std::collections::HashMap<String, Arc<std::sync::atomic::AtomicBool>>>>,
}

/// The on-device model training uses, loaded on first use and kept.
#[derive(Clone, Default)]
pub struct Trainer(Arc<Mutex<Option<Arc<strata_models::LocalChat>>>>);

impl Trainer {
    /// The model, loaded now if it is not yet (seconds: call it off the async runtime).
    pub fn model(&self) -> ApiResult<Arc<strata_models::LocalChat>> {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let model = Arc::new(strata_models::LocalChat::load_default().map_err(|e| {
            ApiError::new(ErrorCode::Model, format!("the on-device model is needed to train: {e} (run `make setup`)"))
        })?);
        *slot = Some(model.clone());
        Ok(model)
    }
}

/// A running MCP server: where it listens and the token clients send.
pub struct McpServer {
    pub running: strata_mcp::http::Running,
    pub token: String,
}

impl AppState {
    /// Opens the database at `STRATA_DB`, or in the user's data folder.
    pub fn open() -> ApiResult<AppState> {
        let path = database_path()?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot create {}: {e}", dir.display())))?;
        }
        let defaults = EngineOptions::default();
        let opts = EngineOptions {
            // Whose memories the window shows (as the CLI's --user): `STRATA_USER`, else the default.
            user_id: std::env::var("STRATA_USER").ok().filter(|u| !u.trim().is_empty()).unwrap_or(defaults.user_id),
            client: "desktop".into(),
            context: strata_api::ContextSettings::for_user(),
            recall_records_days: strata_api::settings::UsageSettings::records_days_saved(),
            ..Default::default()
        };
        let engine = Arc::new(Mutex::new(Engine::open(&path, opts)?));
        let path = path.clone();
        let background = engine.clone();
        std::thread::spawn(move || match strata_models::MiniLm::load_default() {
            Ok(model) => {
                let mut e = background.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(err) = e.use_embedder(Arc::new(model), true) {
                    tracing::warn!("the embedder could not start: {err}");
                }
            }
            Err(err) => tracing::warn!("no embedding model, recall ranks by keywords: {err}"),
        });
        // The active crystallized adapter, if any, is applied when the model loads.
        let adapter = engine.lock().unwrap_or_else(|p| p.into_inner()).active_adapter()?.map(|a| (a.path, a.id));
        let chat = match strata_models::LazyLocalChat::new() {
            Ok(c) => Some(Arc::new(c.with_adapter(adapter))),
            Err(err) => {
                tracing::warn!("no on-device chat model: {err}");
                None
            }
        };
        Ok(AppState {
            engine,
            chat: std::sync::RwLock::new(chat),
            extractor: std::sync::OnceLock::new(),
            trainer: Trainer::default(),
            mcp: tokio::sync::Mutex::new(None),
            db_path: path,
            jobs: Default::default(),
        })
    }

    /// The on-device model that extracts facts: an instance of its own (loaded on its first
    /// use), so extraction never holds up an answer, nor an answer extraction.
    pub fn extraction_model(&self) -> ApiResult<Arc<strata_models::LazyLocalChat>> {
        self.chat_model()?;
        let model = self.extractor.get_or_init(|| strata_models::LazyLocalChat::new().ok().map(Arc::new));
        model.clone().ok_or_else(|| ApiError::new(ErrorCode::Model, "the on-device chat model is missing"))
    }

    /// The on-device chat model, or why there is none.
    pub fn chat_model(&self) -> ApiResult<Arc<strata_models::LazyLocalChat>> {
        self.chat.read().unwrap_or_else(|p| p.into_inner()).clone().ok_or_else(|| {
            ApiError::new(ErrorCode::Model, "the on-device chat model is missing: run `make setup` to fetch it")
        })
    }

    /// The on-device model training uses (load it off the async runtime: [`Trainer::model`]).
    pub fn trainer(&self) -> Trainer {
        self.trainer.clone()
    }

    /// Makes the chat's on-device model one with `adapter` (its folder and id) merged in, or
    /// none: the next answer loads it. An answer under way finishes with the model it began with.
    pub fn use_adapter(&self, adapter: Option<(PathBuf, String)>) {
        let mut chat = self.chat.write().unwrap_or_else(|p| p.into_inner());
        if chat.is_some() {
            match strata_models::LazyLocalChat::new() {
                Ok(c) => *chat = Some(Arc::new(c.with_adapter(adapter))),
                Err(err) => tracing::warn!("the on-device chat model could not be replaced: {err}"),
            }
        }
    }

    /// An engine of its own for the MCP server (same database, embedder and worker).
    pub fn engine_for_mcp(&self) -> ApiResult<Engine> {
        let e = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        let opts = EngineOptions { client: "mcp".into(), ..e.options().clone() };
        e.for_caller(opts)
    }

    /// Checks the adapter in use again once a day (from a minute after the app opens, on an
    /// engine and a model of its own): the Training screen shows the checks over time and
    /// warns when they fall.
    pub fn schedule_adapter_checks(&self) {
        let trainer = self.trainer();
        let apart = {
            let e = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            e.for_caller(e.options().clone())
        };
        let Ok(mut engine) = apart else { return };
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(60));
            loop {
                if let Err(err) = crate::training::check_if_due(&mut engine, &trainer) {
                    tracing::warn!("the adapter in use could not be checked: {err}");
                }
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        });
    }

    /// Runs `f` off the async runtime on an engine of its own (same database, person,
    /// embedder and worker), so that a long job leaves the window's engine free.
    pub async fn run_apart<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let mut apart = {
            let e = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            e.for_caller(e.options().clone())?
        };
        tauri::async_runtime::spawn_blocking(move || f(&mut apart))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the job failed: {e}")))?
    }

    /// Runs `f` on the engine off the async runtime.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let engine = self.engine.clone();
        tauri::async_runtime::spawn_blocking(move || {
            let mut e = engine.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut e)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the command failed: {e}")))?
    }
}

fn database_path() -> ApiResult<PathBuf> {
    if let Some(p) = std::env::var_os("STRATA_DB").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let dirs = directories::ProjectDirs::from("", "", "strata")
        .ok_or_else(|| ApiError::new(ErrorCode::Io, "cannot find your user data folder; set STRATA_DB"))?;
    Ok(dirs.data_dir().join("strata.db"))
}
