//! The crystallization loop on a schedule (`training.schedule`): each look flags candidates,
//! and when enough approved facts are new (not in an adapter in use) it builds the set,
//! trains, evaluates against the adapters in use and against retrieval, and promotes only an
//! adapter better on the gate — at once, or once a curator says yes. Training yields to the
//! person: when the app is used heavily the run stops at its checkpoint, and the next look
//! resumes it. Every look is recorded (`schedule_log`): what it saw, what it trained, why it
//! promoted or not.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use strata_api::schedule::{Promotion, ScheduleSettings};
use strata_api::{ApiError, ApiResult, Engine, ErrorCode};
use strata_models::LocalChat;

use crate::{Gate, Report, TrainConfig, pipeline};

/// How a look ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Looked {
    /// Too few new approved facts: nothing trained.
    Waiting {
        /// Approved facts not in an adapter in use.
        new: usize,
        /// How many it waits for.
        needed: usize,
    },
    /// The person was busy: the run stopped at its checkpoint, to resume at the next look.
    Paused,
    /// Trained, and not promoted (why, in words).
    Kept {
        /// The adapter.
        adapter: String,
        /// Why not.
        reasons: Vec<String>,
    },
    /// Trained, better on the gate, and put in use.
    Promoted {
        /// The adapter.
        adapter: String,
    },
    /// Trained, better on the gate, and waiting for a curator's yes.
    AwaitingApproval {
        /// The adapter.
        adapter: String,
    },
}

impl Looked {
    /// How the look ended, in a sentence (the CLI's answer, the window's note).
    pub fn said(&self) -> String {
        match self {
            Looked::Waiting { new, needed } => {
                format!("Nothing taught: {new} new approved facts, fewer than {needed}.")
            }
            Looked::Paused => "Paused: the app was busy; the next look goes on from the checkpoint.".into(),
            Looked::Kept { adapter, reasons } => format!("Trained {adapter}, not used: {}.", reasons.join("; ")),
            Looked::Promoted { adapter } => format!("Trained {adapter} and put it in use: it did better."),
            Looked::AwaitingApproval { adapter } => {
                format!("Trained {adapter}: it did better and waits for your yes.")
            }
        }
    }
}

/// Recent uses of the app (answers, searches): training yields when they come thick.
#[derive(Debug)]
pub struct Activity {
    uses: Mutex<VecDeque<Instant>>,
    since: Instant,
}

impl Default for Activity {
    fn default() -> Self {
        Activity { uses: Mutex::new(VecDeque::new()), since: Instant::now() }
    }
}

/// Uses within [`BUSY_WINDOW`] that make the app busy.
pub const BUSY_USES: usize = 3;
/// The window [`BUSY_USES`] are counted in.
pub const BUSY_WINDOW: Duration = Duration::from_secs(60);

impl Activity {
    /// The person used the app now.
    pub fn used(&self) {
        let mut uses = self.uses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        uses.push_back(Instant::now());
        while uses.len() > 64 {
            uses.pop_front();
        }
    }

    /// Whether [`BUSY_USES`] uses came within the last [`BUSY_WINDOW`].
    pub fn busy(&self) -> bool {
        let uses = self.uses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        uses.iter().rev().take_while(|t| t.elapsed() < BUSY_WINDOW).count() >= BUSY_USES
    }

    /// How long since the last use (or since the app started).
    pub fn idle_for(&self) -> Duration {
        let uses = self.uses.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        uses.back().unwrap_or(&self.since).elapsed()
    }
}

/// What a look needs.
pub struct Look<'a> {
    /// The schedule.
    pub settings: &'a ScheduleSettings,
    /// What makes a memory a candidate.
    pub criteria: &'a strata_api::curation::CandidateCriteria,
    /// The database beside which adapters live.
    pub db: &'a Path,
    /// The model that answers: new adapters are trained for it.
    pub chat: &'a LocalChat,
    /// Training's settings.
    pub config: &'a TrainConfig,
    /// The gate.
    pub gate: Gate,
    /// Whether the person is using the app heavily now (checked each second while training).
    pub busy: &'a (dyn Fn() -> bool + Sync),
    /// Stops the look (the app closing).
    pub cancel: &'a AtomicBool,
}

/// One look (see the module's text). Errors are recorded as `failed` too.
pub fn look(engine: &mut Engine, l: &Look<'_>) -> ApiResult<Looked> {
    let result = look_inner(engine, l);
    if let Err(e) = &result {
        let _ = engine.log_schedule("failed", None, &json!({ "why": e.message }));
    }
    result
}

fn look_inner(engine: &mut Engine, l: &Look<'_>) -> ApiResult<Looked> {
    let flagged = engine.flag_candidates(l.criteria, &mut |_, _| Ok(()), l.cancel)?;
    let approved = pipeline::approved(engine)?;
    let taught: std::collections::HashSet<String> =
        engine.adapters_in_use()?.into_iter().flat_map(|a| a.sources).collect();
    // Facts, as training counts them: a concept's each, a procedure one.
    let facts = |m: &strata_core::Memory| match &m.content {
        strata_core::Content::Semantic(c) => c.facts.len(),
        _ => 1,
    };
    let new: usize = approved.iter().filter(|m| !taught.contains(&m.id.to_string())).map(facts).sum();
    let needed = l.settings.min_new_facts as usize;
    let seen = json!({ "flagged": flagged.flagged, "approved": approved.len(), "new": new, "needed": needed });
    engine.log_schedule("looked", None, &seen)?;
    if new < needed {
        engine.log_schedule("waiting", None, &seen)?;
        return Ok(Looked::Waiting { new, needed });
    }
    let set = pipeline::approved_set(engine, l.chat, l.config)?;
    let (stop, watching) = (AtomicBool::new(false), AtomicBool::new(true));
    let outcome = std::thread::scope(|s| {
        s.spawn(|| {
            while watching.load(Ordering::Relaxed) {
                if (l.busy)() || l.cancel.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        let plan = pipeline::Plan { set: &set, config: l.config, gate: Some(l.gate) };
        let outcome = pipeline::run(engine, l.db, l.chat, plan, &mut |_| {}, &stop);
        watching.store(false, Ordering::Relaxed);
        outcome
    });
    let outcome = match outcome {
        Err(e) if e.code == ErrorCode::Cancelled => {
            engine.log_schedule("paused", None, &json!({ "facts": set.facts().len() }))?;
            return Ok(Looked::Paused);
        }
        other => other?,
    };
    let id = outcome.adapter.id.clone();
    let report = outcome.report.ok_or_else(|| ApiError::invalid("the schedule's run was not evaluated"))?;
    let trained = json!({
        "facts": set.facts().len(),
        "seconds": outcome.trained.seconds,
        "recall": report.recall_with_adapter,
        "retrieval": report.recall_with_retrieval,
        "without": report.recall_without,
        "perplexity_change": report.perplexity_change(),
    });
    engine.log_schedule("trained", Some(&id), &trained)?;
    decide(engine, &id, &report, l.settings.promotion)
}

/// What becomes of adapter `id`, trained and evaluated (`report`): kept out of use when it is
/// not better (why, recorded), else put in use or left waiting for a curator, as `promotion`
/// says.
pub fn decide(engine: &mut Engine, id: &str, report: &Report, promotion: Promotion) -> ApiResult<Looked> {
    let id = id.to_string();
    let reasons = not_better(engine, &id, report)?;
    if !reasons.is_empty() {
        engine.log_schedule("kept", Some(&id), &json!({ "reasons": reasons }))?;
        return Ok(Looked::Kept { adapter: id, reasons });
    }
    match promotion {
        Promotion::Automatic => {
            engine.activate_adapter(&id, false)?;
            engine.log_schedule("promoted", Some(&id), &json!({ "by": "schedule" }))?;
            Ok(Looked::Promoted { adapter: id })
        }
        Promotion::Ask => {
            engine.log_schedule("awaiting_approval", Some(&id), &json!({}))?;
            Ok(Looked::AwaitingApproval { adapter: id })
        }
    }
}

/// Why adapter `id` (its report `report`) should not replace the adapters in use, if it
/// should not: it failed its gate, retrieval alone answers as many, or an adapter in use
/// answers more of its questions (its latest check, else its evaluation).
fn not_better(engine: &Engine, id: &str, report: &Report) -> ApiResult<Vec<String>> {
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let mut reasons = Vec::new();
    if !report.passed {
        reasons.extend(report.reasons.iter().cloned());
        if reasons.is_empty() {
            reasons.push("it did not pass its gate".into());
        }
    }
    if report.recall_with_adapter <= report.recall_with_retrieval {
        reasons.push(format!(
            "retrieval alone answered as many ({} by retrieval, {} with it)",
            pct(report.recall_with_retrieval),
            pct(report.recall_with_adapter)
        ));
    }
    for a in engine.adapters_in_use()?.into_iter().filter(|a| a.id != id) {
        let then = a.metrics.as_ref().and_then(|m| m["recall_with_adapter"].as_f64());
        let now = engine.adapter_checks(&a.id)?.last().map(|c| c.recall).or(then);
        if let Some(r) = now.filter(|&r| r > report.recall_with_adapter) {
            reasons.push(format!(
                "{} in use answers more ({} against {})",
                a.id,
                pct(r),
                pct(report.recall_with_adapter)
            ));
        }
    }
    Ok(reasons)
}

/// The adapter the schedule trained that waits for a curator's yes, if one does (the newest
/// such, still a candidate).
pub fn awaiting(engine: &Engine) -> ApiResult<Option<String>> {
    for entry in engine.schedule_log(200)? {
        match (entry.kind.as_str(), entry.adapter_id) {
            ("approved" | "declined" | "promoted", _) => return Ok(None),
            ("awaiting_approval", Some(id)) => {
                let still = engine.adapter(&id).map(|a| a.status == strata_core::AdapterStatus::Candidate);
                return Ok(still.unwrap_or(false).then_some(id));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// A curator's answer to the adapter waiting: yes puts it in use, no leaves it a candidate.
pub fn answer(engine: &mut Engine, id: &str, yes: bool) -> ApiResult<()> {
    if awaiting(engine)?.as_deref() != Some(id) {
        return Err(ApiError::invalid(format!("adapter {id} is not waiting for your approval")));
    }
    if yes {
        engine.activate_adapter(id, false)?;
    }
    engine.log_schedule(if yes { "approved" } else { "declined" }, Some(id), &json!({}))?;
    Ok(())
}

/// When the schedule last looked.
pub fn last_look(engine: &Engine) -> ApiResult<Option<chrono::DateTime<chrono::Utc>>> {
    Ok(engine.schedule_log(500)?.into_iter().find(|e| e.kind == "looked").map(|e| e.at))
}
