//! `strata migrate FROM TO`: a store copied between engines (strata-api's `migrate`), with its
//! progress on stderr, then the target's vectors embedded again.

use std::io::IsTerminal;

use anyhow::Result;
use strata_api::{Engine, EngineOptions};

use crate::render::Out;

/// `strata migrate FROM TO`: the copy with its progress on stderr, then the target's vectors.
pub fn run(from: &std::path::Path, to: &std::path::Path, opts: EngineOptions, out: &Out) -> Result<()> {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let show = !out.json && std::io::stderr().is_terminal();
    let moved = strata_api::migrate::migrate(
        from,
        to,
        &mut |done, total| {
            if show {
                note_part!("\rCopying: {done} of {total} events");
            }
        },
        &cancel,
    )?;
    if show {
        note!();
    }
    let mut engine = Engine::open(to, opts)?;
    engine.use_embedder(crate::plugins::embedder()?, false)?;
    let embedded = crate::commands::embed_with_progress(&mut engine, out)?;
    out.migrated(&moved, embedded.done)
}
