//! The on-device model as the chat, the proxy and the MCP server use it: loaded on its first
//! answer, with the trained adapters in use — one merged into the weights, or several applied
//! unmerged and chosen per question ([`crate::Chooser`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use strata_core::{ChatError, ChatErrorKind, ChatModel, ChosenAdapter, Embedder, Result, Role};

use super::{AdapterInUse, LocalChat, chat_file, model_error, name_of};
use crate::adapter::Adapter;
use crate::choose::{CHOOSE_AT, Choice, Chooser};
use crate::llama::Llama;

/// The trained adapters in use (in the order they were put in use), and the store's embedder,
/// which chooses among them per question.
#[derive(Clone, Default)]
pub struct InUse {
    /// The adapters.
    pub adapters: Vec<AdapterInUse>,
    /// The store's embedder (none yet: the newest adapter answers every question until
    /// [`LazyLocalChat::use_embedder`] gives one).
    pub embedder: Option<Arc<dyn Embedder>>,
}

/// The on-device model, loaded on its first answer (once; every caller shares it). Starting
/// a server or a chat does not wait for the weights.
pub struct LazyLocalChat {
    file: PathBuf,
    /// A LoRA adapter folder (PEFT files) merged in at load: the adapter in use, when one is
    /// and nothing chooses.
    adapter: Option<PathBuf>,
    /// Several adapters in use, one chosen per question.
    choice: Option<Choosing>,
    name: String,
    model: OnceLock<std::result::Result<LocalChat, String>>,
}

/// Adapters chosen per question.
struct Choosing {
    adapters: Vec<AdapterInUse>,
    /// The store's embedder, once there is one ([`LazyLocalChat::use_embedder`]).
    embedder: Mutex<Option<Arc<dyn Embedder>>>,
    /// The adapters' keys embedded by it (again when the embedder changes).
    chooser: Mutex<Option<Arc<Chooser>>>,
    /// The adapter applied now (its index), and those loaded so far. Held while a question is
    /// answered: another question's adapter waits for it.
    applied: Mutex<(Option<usize>, HashMap<usize, Adapter>)>,
}

impl LazyLocalChat {
    /// The default model ([`super::chat_pin`] of none), not loaded yet; a missing file is
    /// reported now.
    pub fn new() -> Result<LazyLocalChat> {
        LazyLocalChat::named(None)
    }

    /// The model called `name` ([`super::chat_pin`]), not loaded yet; a missing file is
    /// reported now.
    pub fn named(name: Option<&str>) -> Result<LazyLocalChat> {
        let file = chat_file(name)?;
        let name = name_of(&file);
        Ok(LazyLocalChat { file, adapter: None, choice: None, name, model: OnceLock::new() })
    }

    /// The model to chat with: `chosen` (a pinned name; none: the default), or, with trained
    /// adapters in use, the model they were trained on. Each question chooses the adapter whose
    /// trained questions it is closest to (by the store's embedder), or none; the answer names
    /// it ([`strata_core::ChatResponse::adapter`]). Adapters without trained questions (none
    /// can choose them) are not chosen among: the newest is merged in at load and answers
    /// everything, and the model's name shows it: `model+adapter`.
    pub fn for_chat(chosen: Option<&str>, in_use: Option<InUse>) -> Result<LazyLocalChat> {
        let InUse { adapters, embedder } = in_use.unwrap_or_default();
        let Some(newest) = adapters.last() else { return LazyLocalChat::named(chosen) };
        let mut chat = LazyLocalChat::named(Some(&newest.base_model))?;
        if adapters.iter().any(|a| !a.keys.is_empty()) {
            chat.choice = Some(Choosing {
                adapters,
                embedder: Mutex::new(embedder),
                chooser: Mutex::new(None),
                applied: Mutex::new((None, HashMap::new())),
            });
        } else {
            chat.name = format!("{}+{}", chat.name, newest.id);
            chat.adapter = Some(newest.dir.clone());
        }
        Ok(chat)
    }

    /// The store's embedder, which chooses the adapter for each question from now on (a
    /// window's embedder loads after its model is named, and can be switched).
    pub fn use_embedder(&self, embedder: Option<Arc<dyn Embedder>>) {
        if let Some(c) = &self.choice {
            *lock(&c.embedder) = embedder;
        }
    }

    /// The adapters it chooses among (none when it merges one or has none).
    pub fn choosing_among(&self) -> Vec<&str> {
        self.choice.iter().flat_map(|c| c.adapters.iter().map(|a| a.id.as_str())).collect()
    }

    fn load(&self) -> Result<LocalChat> {
        let Some(dir) = &self.adapter else {
            return LocalChat::load(&self.file);
        };
        let shape = Llama::read_shape(&self.file).map_err(|e| model_error(&self.file, e))?;
        let adapter = Adapter::load(dir, &shape)?;
        let mut chat = LocalChat::load_with(&self.file, Some(&adapter))?;
        chat.name.clone_from(&self.name);
        Ok(chat)
    }

    /// Whether the weights are loaded.
    pub fn is_loaded(&self) -> bool {
        self.model.get().is_some_and(|m| m.is_ok())
    }
}

fn server(e: impl std::fmt::Display) -> ChatError {
    ChatError::new(ChatErrorKind::Server, e.to_string())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Choosing {
    /// The chooser for the embedder in use (its keys embedded on first use); none while there
    /// is no embedder.
    fn chooser(&self) -> Result<Option<Arc<Chooser>>> {
        let Some(embedder) = lock(&self.embedder).clone() else { return Ok(None) };
        let mut kept = lock(&self.chooser);
        if let Some(c) = kept.as_ref().filter(|c| c.model_id() == embedder.model_id()) {
            return Ok(Some(c.clone()));
        }
        let fresh = Arc::new(Chooser::new(embedder, &self.adapters, CHOOSE_AT)?);
        *kept = Some(fresh.clone());
        Ok(Some(fresh))
    }

    /// Answers `request` with the adapter its question chooses (or none) applied to `m`.
    fn chat(
        &self,
        m: &LocalChat,
        request: &strata_core::ChatRequest,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> std::result::Result<strata_core::ChatResponse, ChatError> {
        let last_user = || request.messages.iter().rev().find(|m| m.role == Role::User).map(|m| m.content.as_str());
        let question = request.question.as_deref().or_else(last_user).unwrap_or_default();
        let choice = match self.chooser().map_err(server)? {
            Some(chooser) => chooser.choose(question).map_err(server)?,
            // No embedder yet: the newest adapter answers, as a lone adapter always did.
            None => Some(Choice { index: self.adapters.len() - 1, score: 0.0 }),
        };
        let mut applied = lock(&self.applied);
        let wanted = choice.map(|c| c.index);
        if applied.0 != wanted {
            if let Some(i) = wanted
                && !applied.1.contains_key(&i)
            {
                let adapter = Adapter::load(&self.adapters[i].dir, &m.shape()).map_err(server)?;
                applied.1.insert(i, adapter);
            }
            m.set_adapter(wanted.and_then(|i| applied.1.get(&i))).map_err(server)?;
            applied.0 = wanted;
        }
        let mut response = m.chat(request, on_text, cancel)?;
        response.adapter = choice.map(|c| ChosenAdapter { id: self.adapters[c.index].id.clone(), score: c.score });
        Ok(response)
    }
}

impl ChatModel for LazyLocalChat {
    fn provider(&self) -> &str {
        "on-device"
    }

    fn model(&self) -> &str {
        &self.name
    }

    fn memories_before_message(&self) -> bool {
        true
    }

    fn prompt_budget(&self) -> Option<usize> {
        Some(super::PROMPT_BUDGET)
    }

    fn chat(
        &self,
        request: &strata_core::ChatRequest,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> std::result::Result<strata_core::ChatResponse, ChatError> {
        let m = match self.model.get_or_init(|| self.load().map_err(|e| e.to_string())) {
            Ok(m) => m,
            Err(e) => return Err(ChatError::new(ChatErrorKind::Server, e.clone())),
        };
        match &self.choice {
            Some(c) => c.chat(m, request, on_text, cancel),
            None => m.chat(request, on_text, cancel),
        }
    }
}
