//! Choosing the embedder recall uses: the store re-embedded with it
//! (`Engine::switch_embedder`), the choice recorded in the settings around it — `switching_to`
//! first, so that a switch the program dies in is resumed; cleared when the person cancels;
//! `name` once search has moved over. The CLI, the window and the window's start share it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use strata_api::embedding::EmbedProgress;
use strata_api::{ApiResult, Engine, ErrorCode, Settings};
use strata_core::Embedder;

use crate::registry::ON_DEVICE_EMBEDDER;

/// A switch done.
pub struct Switched {
    /// The embedder search now uses (the window's engine takes it too).
    pub embedder: Arc<dyn Embedder>,
    /// What was embedded.
    pub progress: EmbedProgress,
    /// Seconds it took.
    pub seconds: f64,
}

impl Switched {
    /// The switch in a sentence: `Search by meaning now uses NAME (…).`
    pub fn said(&self, name: &str) -> String {
        let how = match self.progress.total {
            0 => "every memory already had its vector".to_string(),
            1 => format!("1 memory embedded in {:.1} s", self.seconds),
            n => format!("{n} memories embedded in {:.1} s", self.seconds),
        };
        format!("Search by meaning now uses {name} ({how}).")
    }
}

/// Makes `name` (`on-device`, or one of the person's embedders) the embedder `engine`'s store
/// is searched with, recording the choice in the settings file.
pub fn use_embedder(
    engine: &mut Engine,
    name: &str,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(EmbedProgress),
) -> ApiResult<Switched> {
    let mut settings = Settings::load()?;
    let to = crate::open::embedder(&settings, Some(name))?;
    let chosen = if name.eq_ignore_ascii_case(ON_DEVICE_EMBEDDER) {
        None
    } else {
        settings.plugin(name).map(|p| p.name.clone())
    };
    settings.embedder.switching_to = chosen.clone();
    settings.save()?;
    let started = std::time::Instant::now();
    let done = match engine.switch_embedder(to.clone(), cancel, progress) {
        Ok(done) => done,
        Err(err) => {
            // Stopped by the person: not resumed at the next start (the vectors made are kept,
            // so choosing it again goes on from there). A switch the program died in is.
            if err.code == ErrorCode::Cancelled {
                settings.embedder.switching_to = None;
                settings.save()?;
            }
            return Err(err);
        }
    };
    settings.embedder.name = chosen;
    settings.embedder.switching_to = None;
    settings.save()?;
    Ok(Switched { embedder: to, progress: done, seconds: started.elapsed().as_secs_f64() })
}
