//! The on-device models as a person sees them (`strata models`, Settings → On-device models):
//! each pinned model with its size, whether it is on this computer, its licence and who made
//! it, and which one answers and which extracts.

use serde::Serialize;
use strata_tokens::chat_models::{self, ChatModelPin, ModelState};

use crate::settings::Settings;

/// One on-device model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OnDeviceModelView {
    /// Its short name (what `--model` and Settings take).
    pub name: String,
    /// Its name for people.
    pub title: String,
    /// Its file's name (without `.gguf`: how an answer names the model that wrote it).
    pub file: String,
    /// The file's size, bytes (under 4 GiB for every pinned model).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub bytes: u64,
    /// `ready`, `missing`, `fetching` (under way, or stopped and resumable) or `damaged`.
    pub state: String,
    /// Its licence (SPDX).
    pub licence: String,
    /// Who made it, and where the licence text is.
    pub attribution: String,
    /// Where the pinned sha256 comes from.
    pub reference: String,
    /// The sha256 the file is checked against.
    pub sha256: String,
    /// The model run when none is chosen.
    pub is_default: bool,
    /// It answers in chats (chosen, or the default when none is).
    pub answers: bool,
    /// It extracts facts (chosen, or the chat's model when none is).
    pub extracts: bool,
}

/// The embedding model's credit, shown beside the chat models'.
pub const EMBEDDER_CREDIT: &str = "Embeddings: all-MiniLM-L6-v2 by the sentence-transformers team (Nils Reimers et al.), \
     from Microsoft's MiniLM · Apache-2.0";

/// The text of a licence the models ship under (SPDX name), as LICENSES/ holds it.
pub fn licence_text(spdx: &str) -> Option<&'static str> {
    match spdx {
        "Apache-2.0" => Some(include_str!("../../../LICENSES/Apache-2.0.txt")),
        _ => None,
    }
}

/// Where a model stands, as a word.
pub fn state_word(s: ModelState) -> &'static str {
    match s {
        ModelState::Ready => "ready",
        ModelState::Missing => "missing",
        ModelState::Fetching => "fetching",
        ModelState::Damaged => "damaged",
    }
}

/// The pinned model that answers under `settings` (`STRATA_CHAT_MODEL` when none is chosen).
pub fn chat_choice(settings: &Settings) -> &'static ChatModelPin {
    chosen(settings.on_device.chat.as_deref())
}

/// The pinned model that extracts under `settings`.
pub fn extraction_choice(settings: &Settings) -> &'static ChatModelPin {
    match settings.on_device.extraction.as_deref() {
        Some(name) => chosen(Some(name)),
        None => chat_choice(settings),
    }
}

/// A choice saved before a model was renamed or unpinned reads as the default.
fn chosen(name: Option<&str>) -> &'static ChatModelPin {
    chat_models::chosen_chat_model(name).unwrap_or_else(|_| chat_models::default_chat_model())
}

/// Every pinned model, as it stands in `models_dir`, with `settings`' choices marked.
pub fn on_device_models(settings: &Settings, models_dir: &std::path::Path) -> Vec<OnDeviceModelView> {
    let (answers, extracts) = (chat_choice(settings).name.as_str(), extraction_choice(settings).name.as_str());
    let default = chat_models::default_chat_model().name.as_str();
    chat_models::chat_models()
        .iter()
        .map(|m| OnDeviceModelView {
            name: m.name.clone(),
            title: m.title.clone(),
            file: m.file.trim_end_matches(".gguf").to_string(),
            bytes: m.bytes,
            state: state_word(m.state_in(models_dir)).into(),
            licence: m.licence.clone(),
            attribution: m.attribution.clone(),
            reference: m.reference.clone(),
            sha256: m.sha256.clone(),
            is_default: m.name == default,
            answers: m.name == answers,
            extracts: m.name == extracts,
        })
        .collect()
}

/// `settings` with `name` chosen to answer (or, with `extraction`, to extract); `default` (or
/// an empty name) clears the choice. An unknown name is an error that lists the names.
pub fn choose(settings: &Settings, name: &str, extraction: bool) -> crate::ApiResult<Settings> {
    let name = name.trim();
    let value = if name.is_empty() || name.eq_ignore_ascii_case("default") {
        None
    } else {
        Some(chat_models::chat_model(name)?.name.clone())
    };
    let mut s = settings.clone();
    if extraction {
        s.on_device.extraction = value;
    } else {
        s.on_device.chat = value;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_marked_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let s = choose(&Settings::default(), "qwen2.5-coder-1.5b", false).unwrap();
        let s = choose(&s, "SmolLM2-135M", true).unwrap();
        assert_eq!(s.on_device.chat.as_deref(), Some("qwen2.5-coder-1.5b"));
        let views = on_device_models(&s, dir.path());
        let answers: Vec<&str> = views.iter().filter(|v| v.answers).map(|v| v.name.as_str()).collect();
        let extracts: Vec<&str> = views.iter().filter(|v| v.extracts).map(|v| v.name.as_str()).collect();
        assert_eq!((answers, extracts), (vec!["qwen2.5-coder-1.5b"], vec!["smollm2-135m"]));
        assert!(views.iter().all(|v| v.state == "missing" && v.licence == "Apache-2.0"));
        assert_eq!(views.iter().filter(|v| v.is_default).count(), 1);
        for v in &views {
            let text = licence_text(&v.licence).unwrap_or_else(|| panic!("{} ships no {} text", v.name, v.licence));
            assert!(text.contains("Apache License") && text.contains("Version 2.0"));
        }
        let cleared = choose(&s, "default", false).unwrap();
        assert_eq!(cleared.on_device.chat, None);
        let err = choose(&s, "llama-70b", false).unwrap_err().to_string();
        assert!(err.contains("no on-device model is called 'llama-70b'"), "{err}");
    }
}
