//! Adapters as a front end shows them: the evaluation report with the gate's verdict in one
//! sentence, the checks in use and what the latest found wrong, the history in words.

use strata_api::{ApiResult, Engine};
use strata_core::{AdapterCheck, AdapterEvent, AdapterRecord};

use crate::Report;

/// One held-out question's answers, each judged.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AnswerRow {
    /// The question.
    pub question: String,
    /// What a right answer contains.
    pub expected: String,
    /// The model's answer with the adapter.
    pub with_adapter: String,
    /// Whether it was right.
    pub with_adapter_right: bool,
    /// The model's answer alone.
    pub without: String,
    /// Whether it was right.
    pub without_right: bool,
    /// The answer with the memories retrieved instead.
    pub with_retrieval: String,
    /// Whether it was right.
    pub with_retrieval_right: bool,
}

/// An adapter's evaluation.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReportView {
    /// Facts taught.
    pub facts: u32,
    /// Check questions asked.
    pub questions: u32,
    /// Share answered right with the adapter.
    pub recall_with_adapter: f64,
    /// … by the model alone.
    pub recall_without: f64,
    /// … with the memories retrieved.
    pub recall_with_retrieval: f64,
    /// General perplexity of the model alone.
    pub perplexity_base: f64,
    /// … with the adapter.
    pub perplexity_adapter: f64,
    /// The rise allowed.
    pub margin: f64,
    /// The least recall allowed.
    pub min_recall: f64,
    /// Whether it passed the gate.
    pub passed: bool,
    /// The gate's verdict in one sentence.
    pub verdict: String,
    /// Question by question.
    pub rows: Vec<AnswerRow>,
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The gate's verdict on `r`, in one sentence.
pub fn verdict(r: &Report) -> String {
    let change = r.perplexity_change();
    let text = if change >= 0.0 {
        format!("general text is {} harder for it (allowed: up to {})", pct(change), pct(r.margin))
    } else {
        format!("general text is {} easier for it", pct(-change))
    };
    if r.passed {
        format!(
            "Passed: it answers {} of the check questions (the model alone {}), and {text}.",
            pct(r.recall_with_adapter),
            pct(r.recall_without)
        )
    } else {
        format!("Not good enough to use: {}.", r.reasons.join("; "))
    }
}

/// A report as shown.
pub fn report_view(r: Report) -> ReportView {
    let judge = crate::eval::correct;
    ReportView {
        verdict: verdict(&r),
        facts: r.facts as u32,
        questions: r.questions as u32,
        recall_with_adapter: r.recall_with_adapter,
        recall_without: r.recall_without,
        recall_with_retrieval: r.recall_with_retrieval,
        perplexity_base: r.perplexity_base,
        perplexity_adapter: r.perplexity_adapter,
        margin: r.margin,
        min_recall: r.min_recall,
        passed: r.passed,
        rows: r
            .rows
            .into_iter()
            .map(|row| AnswerRow {
                with_adapter_right: judge(&row.with_adapter, &row.expected),
                without_right: judge(&row.without, &row.expected),
                with_retrieval_right: judge(&row.with_retrieval, &row.expected),
                question: row.question,
                expected: row.expected,
                with_adapter: row.with_adapter,
                without: row.without,
                with_retrieval: row.with_retrieval,
            })
            .collect(),
    }
}

/// An adapter in the registry.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AdapterView {
    /// Its id.
    pub id: String,
    /// When it was made.
    pub created_at: String,
    /// candidate, active, retired.
    pub status: String,
    /// Whether it passed its evaluation, once evaluated.
    pub passed: Option<bool>,
    /// The model it adapts.
    pub base_model: String,
    /// The memories it was trained from.
    pub sources: Vec<String>,
    /// Its training set's hash.
    pub dataset_hash: String,
    /// Size on disk.
    pub bytes: f64,
    /// LoRA rank.
    pub rank: Option<f64>,
    /// Passes over the set.
    pub epochs: Option<f64>,
    /// Learning rate.
    pub lr: Option<f64>,
    /// The projections adapted.
    pub targets: Vec<String>,
    /// Its evaluation.
    pub report: Option<ReportView>,
    /// Its checks in use, oldest first.
    pub checks: Vec<CheckView>,
    /// What the latest check found wrong, in words.
    pub warning: Option<String>,
    /// The model it adapts, as people know it (its pin's title).
    pub model_title: String,
    /// Its use by day while in use: answers it gave, marked helpful or wrong.
    pub days: Vec<DayView>,
    /// Answers it gave, in all.
    pub answered: u32,
}

/// An adapter's use on one day.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DayView {
    /// The day, `YYYY-MM-DD`.
    pub day: String,
    /// Answers it gave.
    pub answered: u32,
    /// Marked helpful.
    pub helpful: u32,
    /// Marked wrong.
    pub wrong: u32,
}

/// A check of an adapter in use.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckView {
    /// When.
    pub at: String,
    /// Share of its check questions answered with what the memories say now.
    pub recall: f64,
    /// Questions asked.
    pub questions: u32,
    /// Facts changed since it was taught.
    pub changed: u32,
    /// Facts forgotten or expired since.
    pub gone: u32,
}

fn check_view(c: &AdapterCheck) -> CheckView {
    CheckView {
        at: strata_core::time::format_time(c.at),
        recall: c.recall,
        questions: c.questions as u32,
        changed: c.changed as u32,
        gone: c.gone as u32,
    }
}

/// What the latest check says is wrong, if anything: facts changed or gone since training, or
/// recall fallen more than 10 points below what the evaluation found.
fn warning(checks: &[AdapterCheck], report: Option<&Report>) -> Option<String> {
    let last = checks.last()?;
    let n = |v: u64, one: &str, many: &str| strata_api::health::words(v, one, many);
    if last.changed > 0 || last.gone > 0 {
        let mut parts = Vec::new();
        if last.changed > 0 {
            parts.push(format!("{} changed", n(last.changed, "fact it learned has", "facts it learned have")));
        }
        if last.gone > 0 {
            parts.push(format!("{} forgotten", n(last.gone, "fact was", "facts were")));
        }
        return Some(format!(
            "Since it was taught, {}: it may still answer the old way. Teach the memories again and use the new adapter.",
            parts.join(" and ")
        ));
    }
    let then = report?.recall_with_adapter;
    (last.recall < then - 0.1).then(|| {
        format!(
            "It answers fewer check questions than when it was taught ({:.0}% now, {:.0}% then).",
            last.recall * 100.0,
            then * 100.0
        )
    })
}

/// An adapter as shown, with its checks.
pub fn adapter_view(a: AdapterRecord, checks: &[AdapterCheck]) -> AdapterView {
    let h = &a.hyperparameters;
    let report = a.metrics.clone().and_then(|m| serde_json::from_value::<Report>(m).ok());
    AdapterView {
        warning: warning(checks, report.as_ref()),
        checks: checks.iter().map(check_view).collect(),
        report: report.map(report_view),
        rank: h["rank"].as_f64(),
        epochs: h["epochs"].as_f64(),
        lr: h["lr"].as_f64(),
        targets: h["targets"]
            .as_array()
            .map(|t| t.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default(),
        id: a.id,
        created_at: strata_core::time::format_time(a.created_at),
        status: a.status.as_str().into(),
        passed: a.passed,
        model_title: strata_models::training_pin(Some(&a.base_model)).title.clone(),
        base_model: a.base_model,
        days: Vec::new(),
        answered: 0,
        sources: a.sources,
        dataset_hash: a.dataset_hash,
        bytes: a.bytes as f64,
    }
}

/// An adapter as shown, its checks read from `e`.
pub fn viewed(e: &Engine, a: AdapterRecord) -> ApiResult<AdapterView> {
    let checks = e.adapter_checks(&a.id)?;
    let days = e.adapter_days(&a.id)?;
    let mut view = adapter_view(a, &checks);
    view.answered = days.iter().map(|d| d.chosen as u32).sum();
    view.days = days
        .into_iter()
        .map(|d| DayView { day: d.day, answered: d.chosen as u32, helpful: d.helpful as u32, wrong: d.wrong as u32 })
        .collect();
    Ok(view)
}

/// One event in an adapter's history, in words.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AdapterEventView {
    /// When.
    pub at: String,
    /// trained, evaluated, activated, deactivated, rolled_back, retired.
    pub kind: String,
    /// What happened, in words.
    pub detail: String,
}

/// An adapter's event as shown.
pub fn event_view(e: AdapterEvent) -> AdapterEventView {
    let d = &e.detail;
    let detail = match e.kind.as_str() {
        "trained" => format!(
            "{} steps in {:.0} s, final loss {:.3}",
            d["steps"].as_u64().unwrap_or(0),
            d["seconds"].as_f64().unwrap_or(0.0),
            d["final_loss"].as_f64().unwrap_or(f64::NAN)
        ),
        "evaluated" if d["passed"] == true => "passed the evaluation".into(),
        "evaluated" => "did not pass the evaluation".into(),
        "activated" if d["forced"] == true => "used although it did not pass".into(),
        "activated" if d["alongside"] == true => "used beside the adapters already in use".into(),
        "activated" if d["by"] == "rollback" => "used again after a rollback".into(),
        "activated" if d["by"] == "schedule" => "used: the training schedule promoted it".into(),
        "deactivated" => format!("replaced by {}", d["replaced_by"].as_str().unwrap_or("another")),
        "rolled_back" => {
            // Older records name one adapter restored; newer ones a list, and why.
            let restored: Vec<&str> = match &d["restored"] {
                serde_json::Value::String(p) => vec![p.as_str()],
                serde_json::Value::Array(v) => v.iter().filter_map(|x| x.as_str()).collect(),
                _ => Vec::new(),
            };
            let why = d["why"].as_str().unwrap_or("rolled back by you");
            match restored.as_slice() {
                [] => why.to_string(),
                r => format!("{why}; {} used again", r.join(", ")),
            }
        }
        "retired" if d["memory"].is_string() => "retired: a memory it learned was forgotten".into(),
        "retired" => "retired by you".into(),
        _ => String::new(),
    };
    AdapterEventView { at: strata_core::time::format_time(e.at), kind: e.kind, detail }
}

/// The adapters in use as the on-device model applies them: each with the questions it was
/// trained on (from its training set), which a question must be close to for it to answer;
/// `embedder` (the store's) compares them. An adapter whose set cannot be read is left out,
/// with a warning: the others still answer.
pub fn in_use(
    e: &Engine,
    embedder: Option<std::sync::Arc<dyn strata_core::Embedder>>,
) -> ApiResult<strata_models::InUse> {
    let mut adapters = Vec::new();
    for a in e.adapters_in_use()? {
        let keys = match crate::Dataset::read(&a.path.join("training-set.jsonl")) {
            Ok(set) => trained_questions(&set),
            Err(err) => {
                tracing::warn!("adapter {} is left out: its training set cannot be read ({err})", a.id);
                continue;
            }
        };
        adapters.push(strata_models::AdapterInUse { dir: a.path, id: a.id, base_model: a.base_model, keys });
    }
    Ok(strata_models::InUse { adapters, embedder })
}

/// The questions of `set` trained on, about its facts and procedures (not the replayed ones).
pub fn trained_questions(set: &crate::Dataset) -> Vec<String> {
    let mut keys: Vec<String> = set
        .train()
        .filter(|x| x.kind != crate::Kind::Replay && !x.question.trim().is_empty())
        .map(|x| x.question.clone())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}
