//! `strata train flag|candidates|approve|reject|reopen|why`: the curation queue — which
//! memories are worth training, and a person's decisions on them.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use comfy_table::Table;
use strata_api::curation::{CandidateQuery, CandidateView, CandidatesView, FlagReport, Verdict};
use strata_api::{Engine, Settings};

use crate::args::{CandidateStatusArg, KindArg};
use crate::render::Out;

/// `strata train flag`.
pub fn flag(engine: &mut Engine, out: &Out) -> Result<()> {
    let criteria = Settings::load()?.training.criteria;
    let live = std::io::stderr().is_terminal() && !out.json;
    let report = engine.flag_candidates(
        &criteria,
        &mut |done, total| {
            if live {
                note_part!("\rlooking at {done}/{total}   ");
            }
            Ok(())
        },
        &AtomicBool::new(false),
    )?;
    if live {
        note!();
    }
    if out.json {
        say!("{}", serde_json::to_string(&report)?);
    } else {
        say!("{}", flag_words(&report));
    }
    Ok(())
}

/// One flagging pass in a sentence.
fn flag_words(r: &FlagReport) -> String {
    let n = |n: u32, one: &str, many: &str| strata_api::health::words(n.into(), one, many);
    format!(
        "Looked at {}: {} meet the criteria — {} new in the queue, {} already there, {} back after a change; \
         {} left the queue.",
        n(r.considered, "fact or procedure", "facts and procedures"),
        r.qualifying,
        r.flagged,
        r.kept,
        r.reopened,
        r.withdrawn
    )
}

/// `strata train candidates`.
pub fn list(
    engine: &Engine,
    status: Option<CandidateStatusArg>,
    kind: Option<KindArg>,
    tag: Option<String>,
    concept: Option<String>,
    sort: String,
    out: &Out,
) -> Result<()> {
    let query = CandidateQuery {
        status: status.map(|s| status_word(s).to_string()),
        kind: kind.map(|k| crate::requests::kind_of(k).as_str().to_string()),
        tag,
        concept,
        sort: Some(sort),
    };
    let view = engine.training_candidates(&query)?;
    if out.json {
        say!("{}", serde_json::to_string(&view)?);
        return Ok(());
    }
    say!("{}", counts_words(&view));
    if view.candidates.is_empty() {
        return Ok(());
    }
    let mut t = Table::new();
    t.set_header(["memory", "status", "score", "why"]);
    for c in &view.candidates {
        t.add_row([
            format!("{}\n{}", strata_api::dto::content_title(&c.memory.content), c.memory.id),
            decided_words(c),
            format!("{:.2}", c.score),
            c.reasons.join("\n"),
        ]);
    }
    say!("{t}");
    Ok(())
}

fn status_word(s: CandidateStatusArg) -> &'static str {
    match s {
        CandidateStatusArg::Flagged => "flagged",
        CandidateStatusArg::Approved => "approved",
        CandidateStatusArg::Rejected => "rejected",
    }
}

fn counts_words(v: &CandidatesView) -> String {
    let mut s = format!("{} waiting, {} approved, {} rejected.", v.flagged, v.approved, v.rejected);
    if v.changed > 0 {
        s.push_str(&format!(
            " {} changed since flagged: `strata train flag` looks at them again.",
            strata_api::health::words(v.changed.into(), "memory", "memories")
        ));
    } else if v.flagged + v.approved + v.rejected == 0 {
        s.push_str(" `strata train flag` fills the queue.");
    }
    s
}

fn decided_words(c: &CandidateView) -> String {
    match (&c.decided_by, &c.note) {
        (Some(by), Some(note)) => format!("{} by {by}\n“{note}”", c.status),
        (Some(by), None) => format!("{} by {by}", c.status),
        _ => c.status.clone(),
    }
}

/// `strata train approve|reject|reopen`.
pub fn decide(engine: &mut Engine, ids: &[String], verdict: Verdict, note: Option<&str>, out: &Out) -> Result<()> {
    let done = engine.decide_candidates(ids, verdict, note)?;
    if out.json {
        say!("{}", serde_json::to_string(&done)?);
        return Ok(());
    }
    let verb = match verdict {
        Verdict::Approve => "Approved",
        Verdict::Reject => "Rejected",
        Verdict::Reopen => "Back in the queue",
    };
    for c in &done {
        say!("{verb}: {} ({})", strata_api::dto::content_title(&c.memory.content), c.memory.id);
    }
    Ok(())
}

/// `strata train why`.
pub fn why(engine: &Engine, id: &str, out: &Out) -> Result<()> {
    let history = engine.candidate_history(id)?;
    if out.json {
        say!("{}", serde_json::to_string(&history)?);
        return Ok(());
    }
    if history.is_empty() {
        say!("{id} has never been a training candidate.");
    }
    for e in history {
        let by = if e.by == strata_core::curation::FLAGGING { String::new() } else { format!(" by {}", e.by) };
        let detail = if e.detail.is_empty() { String::new() } else { format!(": {}", e.detail) };
        say!("{}  {}{by}{detail}", e.at, e.kind);
    }
    Ok(())
}
