//! Strata's on-device models, run with candle from a local model directory (fetched by
//! `scripts/setup`; nothing loads from a hub): the sentence embedder (all-MiniLM-L6-v2) and the
//! chat model (SmolLM2-135M-Instruct, GGUF).
#![deny(missing_docs)]

pub mod adapter;
// The AMX encoder: Intel AMX tiles and AVX-512, so x86-64 only. Every target has the
// reference encoder, `bert` (candle), which runs wherever this one does not.
#[cfg(target_arch = "x86_64")]
mod amx;
mod bert;
mod checkpoint;
#[cfg_attr(
    not(target_arch = "x86_64"),
    allow(dead_code, reason = "plain loops on every target; only the AMX encoder uses GELU and the layer norm")
)]
mod elementwise;
#[cfg(target_arch = "x86_64")]
mod encoder;
mod llama;
mod local_chat;
mod minilm;
mod process;
mod q8;

pub use adapter::{Adapter, LoraConfig, Target};
pub use llama::{Llama, Shape};
pub use local_chat::{DEFAULT_SYSTEM, Finish, Generation, LazyLocalChat, LocalChat, PROMPT_BUDGET, Sampling};
pub use minilm::MiniLm;
pub use process::tune_process;
pub use strata_tokens::{CHAT_DIR, CHAT_FILE, EMBEDDER_DIR, models_dir};
