//! Where model files live: `STRATA_MODELS`, else `strata/models` in the user cache folder.

use std::path::PathBuf;

/// The embedder's folder inside the models directory.
pub const EMBEDDER_DIR: &str = "all-minilm-l6-v2";

/// The models directory: `$STRATA_MODELS`, or the user cache folder's `strata/models`.
pub fn models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("STRATA_MODELS").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::BaseDirs::new()
        .map(|d| d.cache_dir().join("strata").join("models"))
        .unwrap_or_else(|| PathBuf::from(".strata-models"))
}
