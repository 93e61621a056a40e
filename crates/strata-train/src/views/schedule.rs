//! The training schedule as a front end shows it: its settings in words, the adapter waiting
//! for a curator's yes, and what it did, each entry in a sentence.

use strata_api::schedule::ScheduleSettings;
use strata_api::{ApiResult, Engine};
use strata_core::ScheduleEntry;

/// One thing the schedule did.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ScheduleEntryView {
    /// When.
    pub at: String,
    /// looked, waiting, paused, trained, kept, promoted, awaiting_approval, approved, declined,
    /// rolled_back, failed.
    pub kind: String,
    /// The adapter it is about.
    pub adapter: Option<String>,
    /// What happened, in a sentence.
    pub said: String,
}

/// The schedule: its settings, in words; the adapter waiting for approval; its record.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ScheduleView {
    /// The settings.
    pub settings: ScheduleSettings,
    /// The settings in a sentence.
    pub said: String,
    /// The adapter it trained that waits for a curator's yes.
    pub awaiting: Option<super::AdapterView>,
    /// What it did, newest first.
    pub history: Vec<ScheduleEntryView>,
}

/// The schedule as shown, with its last `limit` entries.
pub fn schedule_view(e: &Engine, settings: ScheduleSettings, limit: usize) -> ApiResult<ScheduleView> {
    let awaiting = match crate::schedule::awaiting(e)? {
        Some(id) => Some(super::viewed(e, e.adapter(&id)?)?),
        None => None,
    };
    let history = e.schedule_log(limit)?.into_iter().map(entry_view).collect();
    Ok(ScheduleView { said: settings.said(), settings, awaiting, history })
}

/// An entry as shown.
pub fn entry_view(e: ScheduleEntry) -> ScheduleEntryView {
    let d = &e.detail;
    let n = |k: &str| d[k].as_u64().unwrap_or(0);
    let pct = |k: &str| format!("{:.0}%", d[k].as_f64().unwrap_or(0.0) * 100.0);
    let id = e.adapter_id.clone().unwrap_or_default();
    let said = match e.kind.as_str() {
        "looked" => format!(
            "Looked: {} newly flagged, {} approved, {} facts not yet taught (it teaches from {}).",
            n("flagged"),
            n("approved"),
            n("new"),
            n("needed")
        ),
        "waiting" => format!("Waited: {} new approved facts, fewer than the {} it needs.", n("new"), n("needed")),
        "paused" => "Paused: you were using the app; it goes on from where it stopped next time.".into(),
        "trained" => format!(
            "Taught {} facts to {id} in {:.0} s: {} right with it, {} by looking them up, {} without.",
            n("facts"),
            d["seconds"].as_f64().unwrap_or(0.0),
            pct("recall"),
            pct("retrieval"),
            pct("without")
        ),
        "kept" => {
            let reasons: Vec<&str> =
                d["reasons"].as_array().map(|r| r.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
            format!("Did not use {id}: {}.", reasons.join("; "))
        }
        "promoted" => format!("Put {id} in use: it did better than what was in use and than looking facts up."),
        "awaiting_approval" => format!("{id} did better than what is in use: it waits for your yes."),
        "approved" => format!("You said yes: {id} is in use."),
        "declined" => format!("You said no: {id} was not put in use."),
        "rolled_back" => format!("Took {id} out of use: {}.", d["why"].as_str().unwrap_or("its check fell")),
        "failed" => format!("Could not finish: {}", d["why"].as_str().unwrap_or("an error")),
        other => other.replace('_', " "),
    };
    ScheduleEntryView { at: strata_core::time::format_time(e.at), kind: e.kind, adapter: e.adapter_id, said }
}
