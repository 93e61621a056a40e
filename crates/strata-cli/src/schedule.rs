//! `strata train schedule`: the training schedule shown and changed, its record, a look now,
//! and a curator's answer to the adapter it trained that waits for approval.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};
use strata_api::schedule::{Promotion, ScheduleWhen};
use strata_api::{Engine, Settings};
use strata_train::schedule::{self, Look};
use strata_train::views;

use crate::args::ScheduleArgs;
use crate::render::Out;

/// Changes the settings the arguments name; whether any.
fn change(settings: &mut Settings, a: &ScheduleArgs) -> Result<bool> {
    let s = &mut settings.training.schedule;
    let before = s.clone();
    if let Some(w) = &a.when {
        s.when = match w.as_str() {
            "off" => ScheduleWhen::Off,
            "nightly" => ScheduleWhen::Nightly,
            "idle" => ScheduleWhen::Idle,
            other => bail!("'{other}' is not a schedule; use off, nightly or idle"),
        };
    }
    if let Some(at) = &a.at {
        s.at = at.trim().to_string();
    }
    if let Some(m) = a.idle_minutes {
        s.idle_minutes = m;
    }
    if let Some(n) = a.min_facts {
        s.min_new_facts = n;
    }
    if let Some(p) = &a.promote {
        s.promotion = match p.as_str() {
            "ask" => Promotion::Ask,
            "auto" | "automatic" => Promotion::Automatic,
            other => bail!("'{other}' is not a promotion policy; use ask or auto"),
        };
    }
    Ok(*s != before)
}

/// `strata train schedule`.
pub(crate) fn schedule(engine: &mut Engine, db: &Path, a: ScheduleArgs, out: &Out) -> Result<()> {
    let mut settings = Settings::load()?;
    let changed = change(&mut settings, &a)?;
    if changed {
        settings.check()?;
        settings.save()?;
        if !out.json {
            say!("{}", settings.training.schedule.said());
        }
    }
    if let Some(id) = a.approve.as_deref().or(a.decline.as_deref()) {
        let yes = a.approve.is_some();
        schedule::answer(engine, id, yes)?;
        match yes {
            true => say!("Adapter {id} is in use: the on-device model answers with it from its next load."),
            false => say!("Adapter {id} stays out of use (it is kept; `strata train activate {id}` uses it)."),
        }
        return Ok(());
    }
    if a.now {
        let chat = crate::train::chat(a.hyper.model.as_deref())?;
        let config = crate::train::config_of(&a.hyper)?;
        let look = Look {
            settings: &settings.training.schedule,
            criteria: &settings.training.criteria,
            db,
            chat: &chat,
            config: &config,
            gate: crate::train::gate_of(&a.gate),
            busy: &|| false,
            cancel: &AtomicBool::new(false),
        };
        let looked = schedule::look(engine, &look)?;
        say!("{}", looked.said());
    }
    let view = views::schedule_view(engine, settings.training.schedule.clone(), a.limit)?;
    if out.json {
        say!("{}", serde_json::to_string(&view)?);
        return Ok(());
    }
    if a.history {
        if view.history.is_empty() {
            say!("The schedule has done nothing yet.");
        }
        for e in &view.history {
            say!("{}  {}", e.at, e.said);
        }
    } else if !a.now && !changed {
        say!("{}", view.said);
    }
    if let Some(w) = &view.awaiting {
        say!(
            "Adapter {} waits for your yes ({}): strata train schedule --approve {} (or --decline).",
            w.id,
            w.report.as_ref().map_or_else(String::new, |r| r.verdict.clone()),
            w.id
        );
    }
    Ok(())
}
