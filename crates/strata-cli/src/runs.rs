//! `strata train runs`, `resume` and `examples`: what the Training screen shows and does with
//! runs and a training set's examples, through the same front door (`strata_train::views`).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};
use strata_api::{Engine, Target};
use strata_train::pipeline::Event;
use strata_train::views::{self, ExampleForm, RunView};

use crate::render::Out;

/// A run in one line: id, how it stands, how far it came.
fn line(r: &RunView) -> String {
    let status = if r.interrupted { "interrupted (resume it)" } else { r.status.as_str() };
    let mut s = format!("{}  {}  {}  step {} of {}", r.id, r.started_at, status, r.step, r.steps);
    if let Some(loss) = r.losses.last() {
        s.push_str(&format!(", loss {loss:.3}"));
    }
    s.push_str(&format!(", {} memories", r.sources));
    if let Some(a) = &r.adapter_id {
        s.push_str(&format!(" → {a}"));
    }
    if let Some(m) = &r.message {
        s.push_str(&format!(" ({m})"));
    }
    s
}

/// `strata train runs`.
pub fn runs(engine: &Engine, db: &Path, limit: usize, out: &Out) -> Result<()> {
    let all = views::runs(engine, db, limit)?;
    if out.json {
        say!("{}", serde_json::to_string(&all)?);
    } else if all.is_empty() {
        say!("No training runs yet. Train with `strata train run` (or try `strata train demo`).");
    } else {
        for r in &all {
            say!("{}", line(r));
        }
    }
    Ok(())
}

/// `strata train resume RUN`.
pub fn resume(engine: &mut Engine, db: &Path, run: &str, out: &Out) -> Result<()> {
    // On the model the run trains.
    let chat = strata_models::LocalChat::load_for_training(views::run_base(engine, run)?.as_deref())?;
    let live = std::io::stderr().is_terminal() && !out.json;
    let r = views::resume(
        engine,
        db,
        &chat,
        run,
        &mut |event| match event {
            Event::Step(p) if live => note_part!("\r{p}   "),
            Event::Evaluating { done, total } if live => note_part!("\revaluating {done}/{total}   "),
            _ => {}
        },
        &AtomicBool::new(false),
    )?;
    if live {
        note!();
    }
    if out.json {
        say!("{}", serde_json::to_string(&r)?);
    } else {
        say!("{}", line(&r));
    }
    Ok(())
}

/// `strata train examples [MEMORY --set FILE | --reset]`.
pub fn examples(engine: &mut Engine, memory: Option<String>, set: Option<&Path>, reset: bool, out: &Out) -> Result<()> {
    let Some(memory) = memory else { return show(engine, out) };
    let id = engine.memory(&Target::new(memory.as_str()))?.id.to_string();
    if set.is_none() && !reset {
        bail!("say what to do with {memory}'s examples: --set FILE or --reset");
    }
    let forms = match set {
        Some(file) => {
            let text = strata_core::files::read_text(file, 4 << 20, "a file of training examples")?;
            let forms: Vec<ExampleForm> = serde_json::from_str(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not a list of examples ({e}); `strata train examples --json` prints them",
                    file.display()
                )
            })?;
            Some(forms)
        }
        None => None,
    };
    let n = forms.as_ref().map(Vec::len);
    views::save_examples(engine, &id, forms)?;
    match n {
        Some(n) => say!("Kept your {} for {memory}.", strata_api::health::words(n as u64, "example", "examples")),
        None => say!("{memory} is taught with the examples made from it again."),
    }
    Ok(())
}

fn show(engine: &Engine, out: &Out) -> Result<()> {
    let chat = crate::train::chat(None)?;
    let set = views::training_set(engine, &chat)?;
    if out.json {
        say!("{}", serde_json::to_string(&set)?);
        return Ok(());
    }
    if set.memories.is_empty() {
        say!("No memory is approved for training; `strata train candidates` lists them.");
        return Ok(());
    }
    say!("{} examples to train on, {} kept to check what was learned.", set.train, set.held_out);
    for m in &set.memories {
        let edited = if m.edited { " (edited by you)" } else { "" };
        let (title, _) = strata_core::search_text(&m.memory.content);
        say!("\n{title} ({}){edited}", m.memory.id);
        for x in &m.examples {
            let check = if x.held_out { "  [check]" } else { "" };
            say!("  Q: {}{check}\n  A: {}", x.question, x.answer);
        }
        for p in &m.problems {
            say!("  problem: {p}");
        }
    }
    for p in set.blocking.iter().chain(&set.other).filter(|p| !set.memories.iter().any(|m| m.problems.contains(p))) {
        say!("problem: {p}");
    }
    Ok(())
}
