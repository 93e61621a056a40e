//! Strata's on-device models, run with candle from a local model directory (fetched by
//! `scripts/setup`, `scripts/models` and `strata models fetch`; nothing loads from a hub): the sentence embedder
//! (all-MiniLM-L6-v2) and the chat models (`chat-models.toml`: Qwen2.5-Coder 0.5B and 1.5B,
//! SmolLM2-135M; GGUF).
#![deny(missing_docs)]

pub mod adapter;
// Matrix products on Intel AMX tiles (inline asm): x86-64 only, an optional accelerator of
// the encoder's products.
#[cfg(target_arch = "x86_64")]
mod amx;
mod bert;
mod checkpoint;
pub mod choose;
mod elementwise;
mod encoder;
mod grammar;
mod llama;
mod local_chat;
mod minilm;
mod process;
mod q8;
mod shares;

pub use adapter::{Adapter, LoraConfig, Target};
pub use choose::{CHOOSE_AT, Choice, Chooser};
pub use llama::{Llama, Rope, Shape};
pub use local_chat::{
    AdapterInUse, DEFAULT_SYSTEM, Finish, Generation, InUse, LazyLocalChat, LocalChat, PROMPT_BUDGET, Sampling,
    TRAINED_MODEL, ToolDef, ToolReply, ToolTurn, chat_file, chat_file_or_path, chat_pin, training_pin,
};
pub use minilm::MiniLm;
pub use process::tune_process;
pub use strata_tokens::chat_models::{ChatModelPin, ModelState, chat_model, chat_models, default_chat_model};
pub use strata_tokens::{EMBEDDER_DIR, models_dir};
