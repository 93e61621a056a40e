//! `strata concepts`: related memories grouped into concepts, and their summaries written by
//! a model.

use std::io::IsTerminal;

use anyhow::Result;
use strata_api::Engine;

use crate::args::ConceptsCommand;
use crate::render::Out;

/// `strata concepts …`: list, show, group again (with progress; nothing is written until the
/// pass has finished, so stopping it loses nothing), or have a model write the summaries.
pub(crate) fn concepts(engine: &mut Engine, action: Option<ConceptsCommand>, out: &Out) -> Result<()> {
    match action.unwrap_or(ConceptsCommand::List) {
        ConceptsCommand::List => out.concepts(&engine.concepts()?),
        ConceptsCommand::Show { concept } => out.concept(&engine.concept(&strata_api::Target::new(concept))?),
        ConceptsCommand::Rebuild { incremental, dry_run } => {
            // A dry run writes nothing, vectors included: it groups what is embedded already.
            if dry_run {
                let model = crate::plugins::embedder()?;
                engine.use_embedder(model, false)?;
            } else {
                crate::commands::load_embedder(engine, out)?;
            }
            let params = strata_api::CompactParams { full: !incremental, dry_run, ..Default::default() };
            let show = !out.json && std::io::stderr().is_terminal();
            let mut tick = |done: u64, total: u64| {
                if show && total > 0 {
                    note_part!("\rSummarizing concepts: {done} of {total}");
                }
                Ok(())
            };
            let report = engine.compact(&params, &mut tick, &std::sync::atomic::AtomicBool::new(false))?;
            if show {
                note!();
            }
            out.compacted(&report)
        }
        ConceptsCommand::Write { limit, provider } => {
            let model = crate::commands::open_chat(crate::extract::on_device_extractor(provider), None)?;
            let show = !out.json && std::io::stderr().is_terminal();
            let started = std::time::Instant::now();
            let mut tick = |done: u64, total: u64| {
                if show && total > 0 {
                    note_part!(
                        "\rWriting summaries: {done} of {total} concepts ({:.0} s)",
                        started.elapsed().as_secs_f64()
                    );
                }
                Ok(())
            };
            let params = strata_api::WriteParams { limit, ..Default::default() };
            let report =
                engine.write_summaries(model.as_ref(), &params, &mut tick, &std::sync::atomic::AtomicBool::new(false));
            if show {
                note!();
            }
            out.summaries_written(&report?)
        }
    }
}
