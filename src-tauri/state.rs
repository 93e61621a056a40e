//! What the app holds: the engine over the user's database, behind a mutex, with the
//! on-device embedder attached in the background once it has loaded (the window opens without
//! waiting for it; until then recall ranks by keywords).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use strata_api::{ApiError, ApiResult, Engine, EngineOptions, ErrorCode, Settings};

/// The app's state.
pub struct AppState {
    engine: Arc<Mutex<Engine>>,
    /// The on-device models: the chat's and extraction's (each loads on its first use), and
    /// the adapter in use. Replaced (unloaded) when another model is chosen or fetched, or
    /// another adapter becomes active.
    on_device: std::sync::RwLock<OnDevice>,
    /// The on-device model training uses (its tokenizer for the sets, its answers to check
    /// an adapter): an instance of its own, loaded on first use, so the chat is never touched.
    trainer: Trainer,
    /// The MCP server over HTTP, when switched on in Settings.
    pub mcp: tokio::sync::Mutex<Option<McpServer>>,
    /// This computer's database file.
    pub db_path: PathBuf,
    /// Where the memories the window shows are kept (the file, or a team's database).
    location: Arc<Mutex<crate::store_choice::StoreView>>,
    /// The long jobs running, by the id the window gave them: their stop flags.
    pub jobs: crate::jobs::Jobs,
    /// The agents' tools waiting for the person's yes or no (the Agents screen).
    pub asks: crate::agents::Asks,
    /// The person's recent answers and searches: scheduled training yields when they come
    /// thick, and waits for the app to be idle.
    pub activity: Arc<strata_train::schedule::Activity>,
    /// What the training schedule and the daily check did that the window has not shown yet.
    pub notes: Mutex<Vec<String>>,
}

/// The on-device models the window uses, or why there is none.
struct OnDevice {
    in_use: Option<strata_models::InUse>,
    chat: Result<Arc<strata_models::LazyLocalChat>, String>,
    /// Built on extraction's first use: extraction never holds up an answer, nor an answer
    /// extraction (an instance of its own, even of the same model).
    extractor: Option<Result<Arc<strata_models::LazyLocalChat>, String>>,
}

impl OnDevice {
    /// The models `Settings` chooses, the chat's with the adapters `in_use` (which run on the
    /// model they were trained on).
    fn new(in_use: Option<strata_models::InUse>) -> OnDevice {
        let settings = Settings::load().unwrap_or_default();
        let chosen = settings.on_device.chat.clone();
        let chat = strata_models::LazyLocalChat::for_chat(chosen.as_deref(), in_use.clone())
            .map(Arc::new)
            .map_err(|e| e.to_string());
        if let Err(err) = &chat {
            tracing::warn!("no on-device chat model: {err}");
        }
        OnDevice { in_use, chat, extractor: None }
    }
}

/// The on-device model training uses, loaded on first use and kept.
#[derive(Clone, Default)]
pub struct Trainer(Arc<Mutex<Option<Arc<strata_models::LocalChat>>>>);

impl Trainer {
    /// The model that answers (chosen in Settings, else `STRATA_CHAT_MODEL`, else the default):
    /// new adapters are trained for it. Loaded now if it is not yet (seconds: call it off the
    /// async runtime).
    pub fn model(&self) -> ApiResult<Arc<strata_models::LocalChat>> {
        let chosen = strata_api::Settings::load().ok().and_then(|s| s.on_device.chat);
        self.load(strata_models::chat_file(chosen.as_deref()))
    }

    /// The model a record names as its base (a run's, an adapter's).
    pub fn model_for(&self, base: Option<&str>) -> ApiResult<Arc<strata_models::LocalChat>> {
        self.load(strata_models::chat_file(Some(strata_models::training_pin(base).name.as_str())))
    }

    /// The model in `file`, kept for the next call (another file replaces it).
    fn load(&self, file: strata_core::Result<std::path::PathBuf>) -> ApiResult<Arc<strata_models::LocalChat>> {
        let needed = |e: &dyn std::fmt::Display| {
            ApiError::new(ErrorCode::Model, format!("the on-device model is needed to train: {e} (run `make models`)"))
        };
        let file = file.map_err(|e| needed(&e))?;
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = slot.as_ref().filter(|m| m.file() == file) {
            return Ok(m.clone());
        }
        let model = Arc::new(strata_models::LocalChat::load(&file).map_err(|e| needed(&e))?);
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
        let (engine, location) = open_chosen(&path, opts)?;
        let engine = Arc::new(Mutex::new(engine));
        strata_api::flush_periodically(&engine);
        let path = path.clone();
        // The embedder chosen (Settings → Plugins), loaded in the background.
        crate::plugins::start_embedder(engine.clone());
        // The crystallized adapters in use, if any, apply when the model loads (adapters stay
        // with this computer's file); each question chooses one of them, or none.
        let adapter = match location.team {
            true => None,
            false => Some(strata_train::views::in_use(&engine.lock().unwrap_or_else(|p| p.into_inner()), None)?),
        };
        Ok(AppState {
            engine,
            on_device: std::sync::RwLock::new(OnDevice::new(adapter)),
            trainer: Trainer::default(),
            mcp: tokio::sync::Mutex::new(None),
            db_path: path,
            location: Arc::new(Mutex::new(location)),
            jobs: Default::default(),
            asks: Default::default(),
            activity: Default::default(),
            notes: Default::default(),
        })
    }

    /// Where the memories the window shows are kept.
    pub fn location(&self) -> crate::store_choice::StoreView {
        self.location.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Opens the store at `location` (a file's path or a `postgres://` URL) with the window's
    /// options and puts it in place of the window's (the embedder goes along), said by `view`.
    /// Off the async runtime: it connects, and closes the store it replaces. When it cannot be
    /// opened, nothing changes.
    pub async fn switch(&self, location: String, view: crate::store_choice::StoreView) -> ApiResult<()> {
        let (engine, said) = (self.engine.clone(), self.location.clone());
        let adapter = tauri::async_runtime::spawn_blocking(move || -> ApiResult<_> {
            let opts = engine.lock().unwrap_or_else(|p| p.into_inner()).options().clone();
            let mut fresh = Engine::open(std::path::Path::new(&location), opts)?;
            let embedder = engine.lock().unwrap_or_else(|p| p.into_inner()).embedder().cloned();
            if let Some(embedder) = embedder {
                fresh.use_embedder(embedder, true)?;
            }
            let adapter = if view.team { None } else { Some(strata_train::views::in_use(&fresh, None)?) };
            let old = std::mem::replace(&mut *engine.lock().unwrap_or_else(|p| p.into_inner()), fresh);
            drop(old);
            *said.lock().unwrap_or_else(|p| p.into_inner()) = view;
            Ok(adapter)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the store could not be switched: {e}")))??;
        self.use_adapters(adapter);
        Ok(())
    }

    /// The on-device model that extracts facts (Settings' choice, else the chat's model): an
    /// instance of its own, loaded on its first use.
    pub fn extraction_model(&self) -> ApiResult<Arc<strata_models::LazyLocalChat>> {
        let mut on = self.on_device.write().unwrap_or_else(|p| p.into_inner());
        let model = on.extractor.get_or_insert_with(|| {
            let settings = Settings::load().unwrap_or_default();
            let name = settings.on_device.extraction.or(settings.on_device.chat);
            strata_models::LazyLocalChat::named(name.as_deref()).map(Arc::new).map_err(|e| e.to_string())
        });
        model.clone().map_err(|e| ApiError::new(ErrorCode::Model, e))
    }

    /// The on-device chat model, or why there is none.
    pub async fn chat_model(&self) -> ApiResult<Arc<strata_models::LazyLocalChat>> {
        let chat = self.on_device.read().unwrap_or_else(|p| p.into_inner()).chat.clone();
        let chat = chat.map_err(|e| ApiError::new(ErrorCode::Model, e))?;
        // The store's embedder (loaded in the background, or switched since) chooses the
        // adapter for each question: asked of the engine before an answer takes it.
        if !chat.choosing_among().is_empty() {
            let embedder = self.run(|e| Ok(e.embedder().cloned())).await?;
            chat.use_embedder(embedder);
        }
        Ok(chat)
    }

    /// The on-device model training uses (load it off the async runtime: [`Trainer::model`]).
    pub fn trainer(&self) -> Trainer {
        self.trainer.clone()
    }

    /// Makes the chat's on-device model the one the adapters `in_use` were trained on, each
    /// question choosing one of them, or the chosen model with none: the next answer loads it.
    /// An answer under way finishes with the model it began with.
    pub fn use_adapters(&self, in_use: Option<strata_models::InUse>) {
        let mut on = self.on_device.write().unwrap_or_else(|p| p.into_inner());
        *on = OnDevice::new(in_use);
    }

    /// Makes the chat's model use the adapters in use as the store says now (after one was
    /// put in use or rolled back, by a person, the schedule or the daily check).
    pub async fn adapters_changed(&self) -> ApiResult<()> {
        if self.location().team {
            return Ok(());
        }
        let in_use = self.run(|e| strata_train::views::in_use(e, None)).await?;
        self.use_adapters(Some(in_use));
        Ok(())
    }

    /// Keeps a note for the window (it shows each once).
    pub fn note(&self, text: String) {
        self.notes.lock().unwrap_or_else(|p| p.into_inner()).push(text);
    }

    /// Builds the on-device models again after a choice in Settings or a fetch (the adapter in
    /// use is kept).
    pub fn reload_models(&self) {
        let mut on = self.on_device.write().unwrap_or_else(|p| p.into_inner());
        *on = OnDevice::new(on.in_use.take());
    }

    /// An engine of its own for the MCP server (same database, embedder and worker), opened
    /// off the async runtime (on PostgreSQL it connects).
    pub async fn engine_for_mcp(&self) -> ApiResult<Engine> {
        let engine = self.engine.clone();
        tauri::async_runtime::spawn_blocking(move || {
            let e = engine.lock().unwrap_or_else(|p| p.into_inner());
            let opts = EngineOptions { client: "mcp".into(), ..e.options().clone() };
            e.for_caller(opts)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the MCP server's engine failed: {e}")))?
    }

    /// An engine of its own over the window's database (same person, embedder and worker).
    pub fn engine_apart(&self) -> ApiResult<Engine> {
        let e = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        e.for_caller(e.options().clone())
    }

    /// Runs `f` off the async runtime on an engine of its own (same database, person,
    /// embedder and worker), so that a long job leaves the window's engine free.
    pub async fn run_apart<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let engine = self.engine.clone();
        // Opened off the async runtime too: on PostgreSQL it connects.
        tauri::async_runtime::spawn_blocking(move || {
            let mut apart = {
                let e = engine.lock().unwrap_or_else(|p| p.into_inner());
                e.for_caller(e.options().clone())?
            };
            f(&mut apart)
        })
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

/// The store Settings chose (a team's database) unless `STRATA_DB` names a file, else the file
/// at `path`; a team database that cannot be opened leaves the file open, saying why.
fn open_chosen(path: &std::path::Path, opts: EngineOptions) -> ApiResult<(Engine, crate::store_choice::StoreView)> {
    use crate::store_choice::{StoreView, connect_url};
    let file = |problem: Option<String>| -> ApiResult<_> {
        let view = StoreView { team: false, shown: path.display().to_string(), problem };
        Ok((Engine::open(path, opts.clone())?, view))
    };
    let team = Settings::load().unwrap_or_default().team_database;
    let Some(shown) = team.filter(|_| std::env::var_os("STRATA_DB").is_none()) else { return file(None) };
    match connect_url(&shown).and_then(|url| Engine::open(std::path::Path::new(&url), opts.clone())) {
        Ok(engine) => Ok((engine, StoreView { team: true, shown, problem: None })),
        Err(e) => file(Some(format!(
            "The team's database ({shown}) could not be opened: {}. This computer's file is open instead.",
            e.message
        ))),
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
