//! A training run from a set to a registered (and, when asked, evaluated) adapter, recorded as
//! it goes (`strata_core::runs`): what `strata train run|demo` and the app's Train button do.
//! A run of the same set and settings as one that was stopped or interrupted resumes it from
//! its checkpoint. The process carrying a run out holds a lock on its set's checkpoint folder
//! (`running.lock`), which the system lets go of when the process ends however it ends: a run
//! said running whose lock nobody holds was interrupted, which [`interrupted`] tells at once
//! (the record's heartbeat, two minutes, is the fallback where locks cannot be taken).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use strata_api::{ApiError, ApiResult, Engine, ErrorCode};
use strata_core::runs::{NewRun, RunStage, RunStatus, Step, TrainingRun};
use strata_core::{AdapterRecord, NewAdapter};
use strata_models::{Adapter, LocalChat};

use crate::{Dataset, Gate, Progress, Report, TrainConfig, Trained};

/// What a run reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A training step done.
    Step(&'a Progress),
    /// Evaluation: `done` of `total` answers given.
    Evaluating {
        /// Answers given.
        done: usize,
        /// In all.
        total: usize,
    },
}

/// What a run made.
#[derive(Debug)]
pub struct Outcome {
    /// The run's record.
    pub run: TrainingRun,
    /// The adapter, registered.
    pub adapter: AdapterRecord,
    /// Training's figures.
    pub trained: Trained,
    /// The evaluation, when the run had a gate.
    pub report: Option<Report>,
}

/// Adapters, training sets and checkpoints live beside the database (`strata.adapters/`).
pub fn root(db: &Path) -> PathBuf {
    strata_core::adapters::adapters_root(db)
}

/// The approved candidates, as memories.
pub fn approved(engine: &Engine) -> ApiResult<Vec<strata_core::Memory>> {
    approved_in(engine, None)
}

/// The approved candidates of one concept (its key, id or name; none: all), for an adapter of
/// that topic to use beside others.
pub fn approved_in(engine: &Engine, concept: Option<&str>) -> ApiResult<Vec<strata_core::Memory>> {
    let query = strata_api::curation::CandidateQuery {
        status: Some("approved".into()),
        concept: concept.map(str::to_string),
        ..Default::default()
    };
    let approved = engine.training_candidates(&query)?.candidates;
    approved.iter().map(|c| engine.memory(&strata_api::Target::new(c.memory.id.as_str()))).collect()
}

/// The people's edits of `memories`' examples (those still for the memory as it is).
pub fn edits_of(engine: &Engine, memories: &[strata_core::Memory]) -> ApiResult<BTreeMap<String, Vec<crate::Example>>> {
    let mut out = BTreeMap::new();
    for (id, examples) in engine.example_edits()? {
        if memories.iter().any(|m| m.id.to_string() == id) {
            let examples = serde_json::from_value(examples)
                .map_err(|e| ApiError::invalid(format!("the edited examples of {id} cannot be read: {e}")))?;
            out.insert(id, examples);
        }
    }
    Ok(out)
}

/// The training set of the approved candidates, with the people's edits of their examples.
pub fn approved_set(engine: &Engine, chat: &LocalChat, config: &TrainConfig) -> ApiResult<Dataset> {
    approved_set_in(engine, chat, config, None)
}

/// [`approved_set`] of one concept's approved candidates ([`approved_in`]).
pub fn approved_set_in(
    engine: &Engine,
    chat: &LocalChat,
    config: &TrainConfig,
    concept: Option<&str>,
) -> ApiResult<Dataset> {
    let memories = approved_in(engine, concept)?;
    if memories.is_empty() {
        return Err(ApiError::invalid(match concept {
            Some(c) => format!("no approved candidate belongs to the concept {c}: approve some of its memories first"),
            None => "no candidate is approved: approve the memories to train first".into(),
        }));
    }
    let edits = edits_of(engine, &memories)?;
    Ok(crate::dataset_edited(chat, &memories, &edits, config)?)
}

/// Refuses a set with problems that block training, naming them.
pub fn refuse_blocking(set: &Dataset) -> ApiResult<()> {
    let blocking = set.blocking();
    if blocking.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = blocking.iter().map(|p| p.describe()).collect();
    Err(ApiError::invalid(format!("the training set has problems to fix first: {}", lines.join("; "))))
}

/// Writes `set` beside the database as `datasets/<hash>.jsonl` (where forget finds it).
pub fn write_set(engine: &Engine, db: &Path, set: &Dataset) -> ApiResult<PathBuf> {
    let dir = root(db).join("datasets");
    std::fs::create_dir_all(&dir).map_err(|e| strata_core::Error::io(format!("cannot create {}", dir.display()), e))?;
    let file = dir.join(format!("{}.jsonl", &set.hash()[..16]));
    write_set_to(engine, &file, set)?;
    Ok(file)
}

/// Writes `set` to `file`, then checks that no memory it quotes was forgotten while it was
/// built; if one was, the file is deleted and the error says so. (Forget deletes the sets
/// beside the database that name a memory: a set written before the check is found by a
/// forget after it, and one forgotten before it is caught here — forgetting wins either way.)
pub fn write_set_to(engine: &Engine, file: &Path, set: &Dataset) -> ApiResult<()> {
    let sources = set.sources();
    still_live(engine, &sources)?;
    set.write(file)?;
    if let Err(e) = still_live(engine, &sources) {
        // The file written (a link's target, not the link), which quotes what was forgotten.
        let written = strata_core::files::resolve(file)?;
        if std::fs::metadata(&written).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&written);
        }
        return Err(e);
    }
    Ok(())
}

/// Fails when a memory of `sources` was forgotten, saying the work was not kept (a source the
/// store never held, as the shipped example facts, is no one's memory to forget).
fn still_live(engine: &Engine, sources: &[String]) -> ApiResult<()> {
    for id in sources {
        match engine.memory(&strata_api::Target::new(id.as_str())) {
            Ok(_) => {}
            Err(e) if e.code == ErrorCode::NotFound => {}
            Err(e) if e.code == ErrorCode::Forgotten => {
                return Err(ApiError::new(
                    ErrorCode::Forgotten,
                    format!(
                        "memory {id} was forgotten while the training set was made from it; nothing of it was kept"
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum())
        .unwrap_or(0)
}

/// The checkpoint folder of runs on the set with `hash`.
fn checkpoints(db: &Path, hash: &str) -> PathBuf {
    root(db).join("checkpoints").join(&hash[..16.min(hash.len())])
}

/// The lock held while a run on the set with `hash` is carried out.
fn lock_file(db: &Path, hash: &str) -> PathBuf {
    checkpoints(db, hash).join("running.lock")
}

/// Takes the lock of runs on the set with `hash` for this process (let go of when the file is
/// dropped or the process ends); refused while another window or process trains that set. Where
/// the file system takes no locks the run goes on without one (the heartbeat tells then).
fn hold(db: &Path, hash: &str) -> ApiResult<std::fs::File> {
    let path = lock_file(db, hash);
    let io = |e| strata_core::Error::io(format!("cannot lock {}", path.display()), e);
    std::fs::create_dir_all(checkpoints(db, hash)).map_err(io)?;
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)?;
    // A few tries: [`interrupted`] takes it for an instant to look.
    for _ in 0..10 {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::warn!("{}; the run goes on without it", io(e));
                return Ok(file);
            }
        }
    }
    Err(ApiError::invalid(
        "this training set is being trained in another window or process; wait for it or stop it there",
    ))
}

/// Whether `run` says it is running but no process carries it out (its lock is free, or its
/// record has not moved for two minutes): Strata closed or was killed during it.
pub fn interrupted(db: &Path, run: &TrainingRun, now: chrono::DateTime<chrono::Utc>) -> bool {
    if run.status != RunStatus::Running {
        return false;
    }
    if run.interrupted(now) {
        return true;
    }
    let Ok(file) = std::fs::File::open(lock_file(db, &run.dataset_hash)) else {
        return false; // no lock to judge by (an older run): the heartbeat decides
    };
    // Taken here: nobody held it (let go of again when `file` is dropped).
    file.try_lock_shared().is_ok()
}

/// The run to carry on: one of the same set and settings that did not finish.
fn unfinished(engine: &Engine, hash: &str, settings: &serde_json::Value) -> ApiResult<Option<TrainingRun>> {
    // A run recorded before runs named their model trained the model adapters were then
    // trained on: the same settings without a base are the same run for that model.
    let legacy = {
        let mut s = settings.clone();
        let base = s.as_object_mut().and_then(|o| o.remove("base"));
        let then = strata_models::training_pin(None).file.trim_end_matches(".gguf").to_string();
        (base.as_ref().and_then(|b| b.as_str()) == Some(then.as_str())).then_some(s)
    };
    Ok(engine.training_runs(50)?.into_iter().find(|r| {
        r.status != RunStatus::Finished
            && r.dataset_hash == hash
            && (&r.settings == settings || legacy.as_ref() == Some(&r.settings))
    }))
}

/// What to train: the set, the settings, and the gate to evaluate against (none: not
/// evaluated).
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The training set.
    pub set: &'a Dataset,
    /// The settings.
    pub config: &'a TrainConfig,
    /// The gate.
    pub gate: Option<Gate>,
}

/// Trains an adapter as `plan` says, registers it, and evaluates it when it has a gate —
/// recorded as a run, reported through `on`, stopped by `cancel` (with a checkpoint: the same
/// set and settings resume it).
pub fn run(
    engine: &mut Engine,
    db: &Path,
    chat: &LocalChat,
    plan: Plan<'_>,
    on: &mut dyn FnMut(Event<'_>),
    cancel: &AtomicBool,
) -> ApiResult<Outcome> {
    let Plan { set, config, gate } = plan;
    refuse_blocking(set)?;
    config.check()?;
    // The run records the model it trains, so that it is resumed on that model.
    let recorded = TrainConfig { base: Some(chat.name().to_string()), ..config.clone() };
    let settings = serde_json::to_value(&recorded).map_err(|e| ApiError::invalid(e.to_string()))?;
    let hash = set.hash();
    let file = write_set(engine, db, set)?;
    let gate_json = gate.map(|g| serde_json::to_value(g).unwrap_or_default());
    let _held = hold(db, &hash)?;
    let run = match unfinished(engine, &hash, &settings)? {
        Some(r) => engine.resume_training_run(&r.id)?,
        None => engine.start_training_run(NewRun {
            user_id: String::new(),
            settings,
            gate: gate_json,
            dataset: file.display().to_string(),
            dataset_hash: hash.clone(),
            sources: set.sources(),
        })?,
    };
    // Trained with the settings recorded (its checkpoints name the model too).
    let plan = Plan { config: &recorded, ..plan };
    let result = carry_out(engine, db, chat, plan, &run, on, cancel);
    let (status, message) = match &result {
        Ok(_) => (RunStatus::Finished, None),
        Err(e) if e.code == ErrorCode::Cancelled => (RunStatus::Cancelled, Some(e.message.clone())),
        Err(e) => (RunStatus::Failed, Some(e.message.clone())),
    };
    engine.end_training_run(&run.id, status, message.as_deref())?;
    let (adapter, trained, report) = result?;
    Ok(Outcome { run: engine.training_run(&run.id)?, adapter, trained, report })
}

/// [`run`]'s work between its record's start and end.
fn carry_out(
    engine: &mut Engine,
    db: &Path,
    chat: &LocalChat,
    plan: Plan<'_>,
    run: &TrainingRun,
    on: &mut dyn FnMut(Event<'_>),
    cancel: &AtomicBool,
) -> ApiResult<(AdapterRecord, Trained, Option<Report>)> {
    let Plan { set, config, gate } = plan;
    let examples = crate::tokenize(chat, set)?;
    // The adapter is for the model given: its own file is trained.
    let model = chat.file().to_path_buf();
    let hash = set.hash();
    let training = crate::train::Run {
        model: &model,
        base_name: chat.name(),
        examples: &examples,
        pad: 0,
        config,
        checkpoints: checkpoints(db, &hash),
    };
    let mut failed_write = None;
    let trained = training.train(
        &mut |p| {
            let step = Step {
                step: p.step as u64,
                steps: p.steps as u64,
                loss: f64::from(p.loss),
                tokens_per_s: p.tokens_per_s,
                eta_s: p.eta_s,
            };
            if let Err(e) = engine.training_step(&run.id, step) {
                failed_write.get_or_insert(e);
            }
            on(Event::Step(p));
        },
        cancel,
    )?;
    if let Some(e) = failed_write {
        tracing::warn!("a training step was not recorded: {e}");
    }
    let id = engine.new_adapter_id();
    let dir = root(db).join(&id);
    trained.adapter.save(&dir)?;
    set.write(&dir.join("training-set.jsonl"))?;
    let registered = engine.register_adapter(NewAdapter {
        id: id.clone(),
        base_model: chat.name().to_string(),
        base_hash: crate::file_hash(&model)?,
        dataset_hash: hash,
        sources: set.sources(),
        hyperparameters: serde_json::to_value(config).map_err(|e| ApiError::invalid(e.to_string()))?,
        path: dir.clone(),
        bytes: dir_bytes(&dir),
        trained: serde_json::json!({
            "steps": trained.losses.len(),
            "seconds": trained.seconds,
            "tokens": trained.tokens,
            "final_loss": trained.losses.last(),
            "resumed_from": trained.resumed_from,
            "run": run.id,
        }),
    });
    let record = match registered {
        Ok(r) => r,
        Err(e) => {
            // Not registered (a memory it learned from was forgotten meanwhile): its files go.
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    engine.training_adapter(&run.id, &id)?;
    let Some(gate) = gate else { return Ok((record, trained, None)) };
    engine.training_stage(&run.id, RunStage::Evaluating, 0, 0)?;
    let report = report_for(chat, &record, gate, &mut |done, total| {
        if let Err(e) = engine.training_stage(&run.id, RunStage::Evaluating, done as u64, total as u64) {
            tracing::warn!("evaluation's progress was not recorded: {e}");
        }
        on(Event::Evaluating { done, total });
    })?;
    let record = record_report(engine, &id, &report)?;
    Ok((record, trained, Some(report)))
}

/// Evaluates adapter `id` on its training set's held-out questions against `gate`, and
/// stores the report with it. `on_question(done, total)` follows the answers.
pub fn evaluate(
    engine: &mut Engine,
    chat: &LocalChat,
    id: &str,
    gate: Gate,
    on_question: &mut dyn FnMut(usize, usize),
) -> ApiResult<Report> {
    let record = engine.adapter(id)?;
    let report = report_for(chat, &record, gate, on_question)?;
    record_report(engine, id, &report)?;
    Ok(report)
}

/// The evaluation of `record` (nothing is stored).
fn report_for(
    chat: &LocalChat,
    record: &AdapterRecord,
    gate: Gate,
    on_question: &mut dyn FnMut(usize, usize),
) -> ApiResult<Report> {
    let adapter = Adapter::load(&record.path, &chat.shape())?;
    let set = Dataset::read(&record.path.join("training-set.jsonl"))?;
    let heldout: Vec<_> = set.heldout().collect();
    if heldout.is_empty() {
        return Err(ApiError::invalid(format!(
            "adapter {}'s training set has no held-out questions to evaluate it with",
            record.id
        )));
    }
    Ok(crate::eval::evaluate(chat, &adapter, &heldout, gate, on_question)?)
}

/// Stores `report` with adapter `id`.
fn record_report(engine: &mut Engine, id: &str, report: &Report) -> ApiResult<AdapterRecord> {
    let metrics = serde_json::to_value(report).map_err(|e| ApiError::invalid(e.to_string()))?;
    engine.record_evaluation(id, &metrics, report.passed)
}

/// Checks adapter `id` against the memories as they are now: its held-out questions asked
/// again with it, each judged against the fact's current value (a fact edited since training
/// is answered the old way, and counts as wrong), the facts whose memory is gone left out and
/// counted. The check is recorded with the adapter.
pub fn check_in_use(
    engine: &mut Engine,
    chat: &LocalChat,
    id: &str,
    on_question: &mut dyn FnMut(usize, usize),
) -> ApiResult<strata_core::AdapterCheck> {
    let record = engine.adapter(id)?;
    let adapter = Adapter::load(&record.path, &chat.shape())?;
    let set = Dataset::read(&record.path.join("training-set.jsonl"))?;
    let mut now = Vec::new();
    for source in &record.sources {
        match engine.memory(&strata_api::Target::new(source.as_str())) {
            Ok(m) if m.expired_at.is_none() => now.push(m),
            Ok(_) => {}
            Err(e) if matches!(e.code, ErrorCode::NotFound | ErrorCode::Forgotten) => {}
            Err(e) => return Err(e),
        }
    }
    let current = Dataset::from_memories(&now, &|_| Ok(0), usize::MAX)?;
    let key = |f: &crate::data::FactRef| (crate::data::normalise(&f.subject), crate::data::normalise(&f.attribute));
    let values: std::collections::HashMap<_, String> =
        current.examples.iter().filter_map(|e| e.fact.as_ref()).map(|f| (key(f), f.value.clone())).collect();
    let (mut asked, mut expected) = (Vec::new(), Vec::new());
    let (mut changed, mut gone) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for e in set.heldout() {
        let Some(fact) = e.fact.as_ref() else { continue };
        match values.get(&key(fact)) {
            Some(v) => {
                if v != &fact.value {
                    changed.insert(key(fact));
                }
                asked.push(e.question.as_str());
                expected.push(v.clone());
            }
            None => {
                gone.insert(key(fact));
            }
        }
    }
    let answers = crate::eval::answers_with(chat, &adapter, &asked, on_question)?;
    let right = answers.iter().zip(&expected).filter(|(a, x)| crate::eval::correct(a, x)).count();
    let check = strata_core::AdapterCheck {
        at: engine.now(),
        recall: if asked.is_empty() { 0.0 } else { right as f64 / asked.len() as f64 },
        questions: asked.len() as u64,
        changed: changed.len() as u64,
        gone: gone.len() as u64,
    };
    engine.record_adapter_check(id, &check)?;
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(hash: &str, updated_at: chrono::DateTime<chrono::Utc>) -> TrainingRun {
        TrainingRun {
            id: "run_1".into(),
            started_at: updated_at,
            updated_at,
            status: RunStatus::Running,
            stage: RunStage::Training,
            settings: serde_json::json!({}),
            gate: None,
            dataset: "set.jsonl".into(),
            dataset_hash: hash.into(),
            sources: Vec::new(),
            step: 3,
            steps: 10,
            losses: vec![1.0, 0.8, 0.6],
            tokens_per_s: None,
            eta_s: None,
            checked: 0,
            to_check: 0,
            adapter_id: None,
            message: None,
        }
    }

    #[test]
    fn a_run_is_interrupted_once_no_process_holds_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("strata.db");
        let hash = "ab".repeat(32);
        let now = chrono::Utc::now();
        let run = running(&hash, now);
        assert!(!interrupted(&db, &run, now), "no lock file yet: the heartbeat decides, and it is fresh");

        let held = hold(&db, &hash).unwrap();
        assert!(!interrupted(&db, &run, now), "carried out by this process");
        let err = hold(&db, &hash).unwrap_err();
        assert!(err.message.contains("being trained in another window or process"), "{}", err.message);
        drop(held); // what the system does when the process ends
        assert!(interrupted(&db, &run, now), "nobody carries it out");
        assert!(hold(&db, &hash).is_ok(), "and it can be taken up again");

        let stale = running(&hash, now - chrono::Duration::minutes(5));
        let _held = hold(&db, &hash).unwrap();
        assert!(interrupted(&db, &stale, now), "silent for five minutes: interrupted whatever the lock says");
        let finished = TrainingRun { status: RunStatus::Finished, ..running(&hash, now) };
        assert!(!interrupted(&db, &finished, now));
    }
}
