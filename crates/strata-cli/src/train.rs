//! `strata train …`: training sets from memories, training runs, the evaluation gate, and the
//! adapter registry (list, show, activate, rollback), plus the end-to-end demo.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use comfy_table::Table;
use strata_api::Engine;
use strata_api::curation::Verdict;
use strata_core::{AdapterRecord, Filter, Memory, MemoryKind};
use strata_models::LocalChat;
use strata_train::{Dataset, Gate, Report, TrainConfig, pipeline};

use crate::args::{GateArgs, TrainCommand, TrainHyper, TrainSelect};
use crate::render::Out;

pub(crate) fn config_of(h: &TrainHyper) -> Result<TrainConfig> {
    let targets = h.targets.iter().map(|t| strata_models::Target::parse(t)).collect::<strata_core::Result<Vec<_>>>()?;
    let c = TrainConfig {
        rank: h.rank,
        alpha: h.alpha,
        dropout: h.dropout,
        targets,
        lr: h.lr,
        epochs: h.epochs,
        batch: h.batch,
        accumulate: h.accumulate,
        seed: h.seed,
        replay: h.replay,
        ..TrainConfig::default()
    };
    c.check()?;
    Ok(c)
}

pub(crate) fn gate_of(g: &GateArgs) -> Gate {
    Gate { margin: g.margin, min_recall: g.min_recall }
}

/// The on-device model to train for: `--model`, else the one that answers (chosen in Settings
/// or `strata models use`, else `STRATA_CHAT_MODEL`, else the default).
pub(crate) fn chat(model: Option<&str>) -> Result<LocalChat> {
    let chosen = match model {
        Some(m) => Some(m.to_string()),
        None => strata_api::Settings::load()?.on_device.chat,
    };
    Ok(LocalChat::load(&strata_models::chat_file(chosen.as_deref())?)?)
}

/// The on-device model adapter `id` was trained for.
fn chat_of(engine: &Engine, id: &str) -> Result<LocalChat> {
    Ok(LocalChat::load_for_training(Some(&engine.adapter(id)?.base_model))?)
}

fn select(engine: &Engine, s: &TrainSelect) -> Result<Vec<Memory>> {
    if s.approved {
        let approved = pipeline::approved_in(engine, s.concept.as_deref())?;
        match (&s.concept, approved.is_empty()) {
            (Some(c), true) => bail!(
                "no approved candidate belongs to the concept {c}; `strata train candidates --concept` lists them"
            ),
            (None, true) => {
                bail!("no candidate is approved; `strata train candidates` lists them, `strata train approve` approves")
            }
            _ => return Ok(approved),
        }
    }
    if !s.ids.is_empty() {
        return s.ids.iter().map(|id| Ok(engine.memory(&strata_api::Target::new(id.as_str()))?)).collect();
    }
    let kinds: Vec<MemoryKind> = if s.kinds.is_empty() {
        vec![MemoryKind::Semantic, MemoryKind::Procedural]
    } else {
        s.kinds.iter().map(|k| crate::requests::kind_of(*k)).collect()
    };
    let filter = Filter { kinds, tags: s.tags.clone(), ..Default::default() };
    let memories = engine.all_memories(filter)?;
    if memories.is_empty() {
        bail!("no facts or procedures match; add some first (strata add fact …) or change the filters");
    }
    Ok(memories)
}

/// The training set of the selected memories (approved ones with the people's edits of their
/// examples).
fn set_for(engine: &Engine, chat: &LocalChat, s: &TrainSelect, config: &TrainConfig) -> Result<Dataset> {
    let memories = select(engine, s)?;
    let edits = if s.approved { pipeline::edits_of(engine, &memories)? } else { Default::default() };
    Ok(strata_train::dataset_edited(chat, &memories, &edits, config)?)
}

fn print_problems(set: &Dataset) {
    for p in &set.problems {
        note!("{}: {}", if p.blocks() { "problem" } else { "note" }, p.describe());
    }
}

/// Trains `set` as a recorded run (evaluated against `gate` when given), showing each step on
/// a terminal.
fn train_run(
    engine: &mut Engine,
    db: &Path,
    chat: &LocalChat,
    set: &Dataset,
    config: &TrainConfig,
    gate: Option<Gate>,
    out: &Out,
) -> Result<pipeline::Outcome> {
    let live = std::io::stderr().is_terminal() && !out.json;
    let outcome = pipeline::run(
        engine,
        db,
        chat,
        pipeline::Plan { set, config, gate },
        &mut |event| match event {
            pipeline::Event::Step(p) if live => note_part!("\r{p}   "),
            pipeline::Event::Step(p) => tracing::info!("{p}"),
            pipeline::Event::Evaluating { done, total } if live => note_part!("\revaluating {done}/{total}   "),
            pipeline::Event::Evaluating { .. } => {}
        },
        &AtomicBool::new(false),
    )?;
    if live {
        note!();
    }
    Ok(outcome)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn print_report(r: &Report) -> Result<()> {
    let mut t = Table::new();
    t.set_header(["", "with adapter", "without", "by retrieval"]);
    t.add_row([
        format!("held-out fact recall ({} questions, {} facts)", r.questions, r.facts),
        pct(r.recall_with_adapter),
        pct(r.recall_without),
        pct(r.recall_with_retrieval),
    ]);
    t.add_row([
        "general perplexity".to_string(),
        format!("{:.2} ({:+.1}%)", r.perplexity_adapter, r.perplexity_change() * 100.0),
        format!("{:.2}", r.perplexity_base),
        "—".into(),
    ]);
    say!("{t}");
    say!("{}", strata_train::views::verdict(r));
    Ok(())
}

fn print_record(a: &AdapterRecord) -> Result<()> {
    let passed = match a.passed {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "not evaluated",
    };
    say!(
        "{}  {}  {}  {} source memories  {:.1} MB  {}",
        a.id,
        a.status.as_str(),
        passed,
        a.sources.len(),
        a.bytes as f64 / 1e6,
        a.created_at.format("%Y-%m-%d %H:%M")
    );
    Ok(())
}

/// Runs one `strata train` command on the database at `db`.
pub fn run(engine: &mut Engine, db: &Path, command: TrainCommand, out: &Out) -> Result<()> {
    match command {
        TrainCommand::Dataset { select: s, out: file, hyper } => dataset(engine, db, &s, file, &hyper, out),
        TrainCommand::Run { select: s, dataset, hyper, eval } => train(engine, db, &s, dataset, &hyper, eval, out),
        TrainCommand::Eval { id, gate } => {
            let chat = chat_of(engine, &id)?;
            let live = std::io::stderr().is_terminal() && !out.json;
            let report = pipeline::evaluate(engine, &chat, &id, gate_of(&gate), &mut |done, total| {
                if live {
                    note_part!("\revaluating {done}/{total}   ");
                }
            })?;
            if live {
                note!();
            }
            if out.json {
                say!("{}", serde_json::to_string(&report)?);
            } else {
                print_report(&report)?;
            }
            Ok(())
        }
        TrainCommand::List => {
            let all = engine.adapters()?;
            if out.json {
                say!("{}", serde_json::to_string(&all)?);
            } else if all.is_empty() {
                say!("No adapters yet. Train one with `strata train run` (or try `strata train demo`).");
            } else {
                for a in &all {
                    print_record(a)?;
                }
            }
            Ok(())
        }
        TrainCommand::Show { id } => {
            // How it fares among the adapters in use is measured with the store's embedder.
            if !engine.adapters_in_use()?.is_empty() {
                crate::commands::load_embedder(engine, out)?;
            }
            show(engine, &id, out)
        }
        TrainCommand::Activate { id, force, alongside } => activate(engine, &id, force, alongside, out),
        TrainCommand::Rollback { id } => rollback(engine, id.as_deref(), out),
        TrainCommand::Demo { hyper, gate } => demo(engine, db, &hyper, &gate, out),
        TrainCommand::Runs { limit } => crate::runs::runs(engine, db, limit, out),
        TrainCommand::Resume { run } => crate::runs::resume(engine, db, &run, out),
        TrainCommand::Examples { memory, set, reset } => {
            crate::runs::examples(engine, memory, set.as_deref(), reset, out)
        }
        TrainCommand::Check { id } => check(engine, id, out),
        TrainCommand::Schedule(args) => crate::schedule::schedule(engine, db, args, out),
        TrainCommand::Retire { id } => {
            let a = engine.retire_adapter(&id)?;
            if out.json {
                say!("{}", serde_json::to_string(&a)?);
            } else {
                say!("Adapter {} is retired: it will not be used again.", a.id);
            }
            Ok(())
        }
        TrainCommand::Flag => crate::curation::flag(engine, out),
        TrainCommand::Candidates { status, kind, tag, concept, sort } => {
            crate::curation::list(engine, status, kind, tag, concept, sort, out)
        }
        TrainCommand::Approve { ids, note } => {
            crate::curation::decide(engine, &ids, Verdict::Approve, note.as_deref(), out)
        }
        TrainCommand::Reject { ids, note } => {
            crate::curation::decide(engine, &ids, Verdict::Reject, note.as_deref(), out)
        }
        TrainCommand::Reopen { ids } => crate::curation::decide(engine, &ids, Verdict::Reopen, None, out),
        TrainCommand::Why { id } => crate::curation::why(engine, &id, out),
    }
}

/// `strata train dataset`: the training set for the selected memories, written and summed up.
fn dataset(
    engine: &Engine,
    db: &Path,
    s: &TrainSelect,
    file: Option<PathBuf>,
    hyper: &TrainHyper,
    out: &Out,
) -> Result<()> {
    let config = config_of(hyper)?;
    let chat = chat(hyper.model.as_deref())?;
    let set = set_for(engine, &chat, s, &config)?;
    let file = match file {
        Some(f) => {
            pipeline::write_set_to(engine, &f, &set)?;
            f
        }
        None => pipeline::write_set(engine, db, &set)?,
    };
    print_problems(&set);
    let count = |k: strata_train::Kind| set.train().filter(|e| e.kind == k).count();
    if out.json {
        say!(
            "{}",
            serde_json::json!({
                "file": file, "hash": set.hash(), "facts": set.facts().len(),
                "train": set.train().count(), "heldout": set.heldout().count(),
                "replay": count(strata_train::Kind::Replay), "problems": set.problems,
            })
        );
    } else {
        say!(
            "{} examples to train on ({} facts, {} procedure examples, {} replay), {} held out for \
             evaluation, {} problems → {}",
            set.train().count(),
            set.facts().len(),
            count(strata_train::Kind::Procedure),
            count(strata_train::Kind::Replay),
            set.heldout().count(),
            set.problems.len(),
            file.display()
        );
    }
    Ok(())
}

/// `strata train run`: trains an adapter on the selected memories (or a set), registers it, and
/// evaluates it when asked.
fn train(
    engine: &mut Engine,
    db: &Path,
    s: &TrainSelect,
    dataset: Option<PathBuf>,
    hyper: &TrainHyper,
    eval: bool,
    out: &Out,
) -> Result<()> {
    let config = config_of(hyper)?;
    let chat = chat(hyper.model.as_deref())?;
    let set = match dataset {
        Some(f) => Dataset::read(&f)?,
        None => set_for(engine, &chat, s, &config)?,
    };
    print_problems(&set);
    let done = train_run(engine, db, &chat, &set, &config, eval.then(Gate::default), out)?;
    let (record, trained, report) = (done.adapter, done.trained, done.report);
    if out.json {
        say!(
            "{}",
            serde_json::json!({
                "adapter": record.id, "seconds": trained.seconds, "steps": trained.losses.len(),
                "final_loss": trained.losses.last(), "bytes": record.bytes, "report": report,
            })
        );
    } else {
        say!(
            "Trained adapter {} in {:.0} s ({} steps, final loss {:.3}); it is a candidate.",
            record.id,
            trained.seconds,
            trained.losses.len(),
            trained.losses.last().copied().unwrap_or(f32::NAN)
        );
        match report {
            Some(r) => print_report(&r)?,
            None => say!("Next: strata train eval {}", record.id),
        }
    }
    Ok(())
}

/// `strata train activate`: in use instead of the others, or beside them.
fn activate(engine: &mut Engine, id: &str, force: bool, alongside: bool, out: &Out) -> Result<()> {
    let a = match alongside {
        true => engine.use_adapter_alongside(id, force)?,
        false => engine.activate_adapter(id, force)?,
    };
    if out.json {
        say!("{}", serde_json::to_string(&a)?);
    } else if alongside {
        let n = engine.adapters_in_use()?.len();
        say!(
            "Adapter {} is in use beside the others ({n} in all): each question chooses the one it is about, or none.",
            a.id
        );
    } else {
        say!("Adapter {} is active: the on-device model uses it from its next load.", a.id);
    }
    Ok(())
}

/// `strata train rollback`.
fn rollback(engine: &mut Engine, id: Option<&str>, out: &Out) -> Result<()> {
    let back = engine.rollback_adapter(id, "rolled back by a person")?;
    let in_use = engine.adapters_in_use()?;
    if out.json {
        let ids = |v: &[strata_core::AdapterRecord]| v.iter().map(|a| a.id.clone()).collect::<Vec<_>>();
        say!("{}", serde_json::json!({ "restored": ids(&back), "in_use": ids(&in_use) }));
    } else {
        match (back.as_slice(), in_use.is_empty()) {
            ([], true) => say!("Rolled back: no adapter is active; the model answers on its own."),
            ([], false) => say!("Rolled back: {} adapters stay in use.", in_use.len()),
            (restored, _) => say!(
                "Rolled back: adapter {} is active again.",
                restored.iter().map(|a| a.id.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    Ok(())
}

/// `strata train check`.
fn check(engine: &mut Engine, id: Option<String>, out: &Out) -> Result<()> {
    let id = match id {
        Some(id) => id,
        None => match engine.adapters_in_use()?.as_slice() {
            [] => bail!("no adapter is active; name one to check"),
            [only] => only.id.clone(),
            several => bail!(
                "{} adapters are in use; name the one to check ({})",
                several.len(),
                several.iter().map(|a| a.id.as_str()).collect::<Vec<_>>().join(", ")
            ),
        },
    };
    let chat = chat_of(engine, &id)?;
    let live = std::io::stderr().is_terminal() && !out.json;
    let c = pipeline::check_in_use(engine, &chat, &id, &mut |done, total| {
        if live {
            note_part!("\rasking {done}/{total}   ");
        }
    })?;
    if live {
        note!();
    }
    if out.json {
        say!("{}", serde_json::to_string(&c)?);
        return Ok(());
    }
    say!("{id} answers {} of {} check questions right with what the memories say now.", pct(c.recall), c.questions);
    if c.changed + c.gone > 0 {
        say!(
            "Since it was trained, {} changed and {} forgotten: train the memories again.",
            strata_api::health::words(c.changed, "fact", "facts"),
            strata_api::health::words(c.gone, "fact was", "facts were")
        );
    }
    Ok(())
}

/// `strata train show`: one adapter, its files, settings, evaluation and history.
fn show(engine: &Engine, id: &str, out: &Out) -> Result<()> {
    let a = engine.adapter(id)?;
    let history = engine.adapter_history(id)?;
    if out.json {
        say!("{}", serde_json::json!({ "adapter": a, "history": history, "checks": engine.adapter_checks(id)? }));
        return Ok(());
    }
    print_record(&a)?;
    say!("base model {} (sha256 {}…)", a.base_model, &a.base_hash[..12.min(a.base_hash.len())]);
    say!("training set sha256 {}…, files in {}", &a.dataset_hash[..12.min(a.dataset_hash.len())], a.path.display());
    say!("settings {}", a.hyperparameters);
    if let Some(r) = a.metrics.clone().and_then(|m| serde_json::from_value::<Report>(m).ok()) {
        print_report(&r)?;
    }
    if let Some(s) = strata_train::views::selection(engine, id)? {
        say!("{}", s.said);
    }
    for e in history.into_iter().map(strata_train::views::event_view) {
        say!("  {}  {}  {}", e.at, e.kind, e.detail);
    }
    for c in engine.adapter_checks(id)? {
        say!(
            "  {}  checked  {} of {} right, {} changed, {} gone",
            c.at.format("%Y-%m-%d %H:%M:%S"),
            pct(c.recall),
            c.questions,
            c.changed,
            c.gone
        );
    }
    Ok(())
}

fn demo(engine: &mut Engine, db: &Path, hyper: &TrainHyper, gate: &GateArgs, out: &Out) -> Result<()> {
    let config = config_of(hyper)?;
    // A fresh scope, so the demo's facts are all that is trained.
    let scope = format!("train-demo-{}", engine.new_adapter_id().trim_start_matches("ad_"));
    let mut memories = Vec::new();
    {
        let mut demo_engine =
            Engine::open(db, strata_api::EngineOptions { user_id: scope.clone(), ..Default::default() })?;
        for content in strata_train::demo::contents() {
            let req = strata_api::AddRequest::new(content);
            let view = demo_engine.add(req)?;
            memories.push(demo_engine.memory(&strata_api::Target::new(view.id))?);
        }
    }
    let chat = chat(hyper.model.as_deref())?;
    let set = strata_train::dataset(&chat, &memories, &config)?;
    let done = train_run(engine, db, &chat, &set, &config, Some(gate_of(gate)), out)?;
    let (record, trained) = (done.adapter, done.trained);
    let report = done.report.context("the demo's run was evaluated")?;
    let peak = strata_train::peak_memory_mib();
    if out.json {
        say!(
            "{}",
            serde_json::json!({
                "facts": set.facts().len(),
                "recall_with_adapter": report.recall_with_adapter,
                "recall_without": report.recall_without,
                "recall_with_retrieval": report.recall_with_retrieval,
                "perplexity_base": report.perplexity_base,
                "perplexity_adapter": report.perplexity_adapter,
                "train_seconds": trained.seconds,
                "adapter_bytes": std::fs::metadata(record.path.join(strata_models::adapter::WEIGHTS_FILE))?.len(),
                "adapter": record.id,
                "scope": scope,
                "passed": report.passed,
                "steps": trained.losses.len(),
                "train_tokens_per_s": trained.tokens as f64 / trained.seconds.max(1e-9),
                "peak_memory_mib": peak,
            })
        );
    } else {
        say!(
            "Stored {} facts in scope {scope}, trained adapter {} on {} examples in {:.0} s ({:.0} tokens/s, \
             peak memory {:.0} MiB).",
            set.facts().len(),
            record.id,
            set.train().count(),
            trained.seconds,
            trained.tokens as f64 / trained.seconds.max(1e-9),
            peak
        );
        print_report(&report)?;
        say!("Activate it with: strata train activate {}", record.id);
    }
    Ok(())
}
