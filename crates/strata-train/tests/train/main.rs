//! strata-train's tests, on the real on-device model (fetched by scripts/models).

mod data;
mod peft;
mod qwen;
mod run;
mod schedule;

use std::path::PathBuf;

/// The on-device model file; setup fetches it.
pub fn model() -> PathBuf {
    let f = strata_models::LocalChat::trained_file();
    assert!(f.exists(), "the on-device model is missing at {}: run scripts/models", f.display());
    f
}
