//! Strata's on-device models. Today: the sentence embedder, all-MiniLM-L6-v2 run with candle
//! from a local model directory (fetched by `scripts/setup`; nothing loads from a hub).
#![deny(missing_docs)]

mod bert;
mod minilm;
mod paths;
mod process;

pub use minilm::MiniLm;
pub use paths::{EMBEDDER_DIR, models_dir};
pub use process::tune_process;
