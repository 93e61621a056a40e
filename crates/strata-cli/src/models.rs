//! `strata models`: the on-device models — list them, fetch one (progress on stderr), choose
//! which answers and which extracts (saved in Settings).

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use strata_api::Settings;
use strata_api::on_device::{self, OnDeviceModelView};

use crate::args::ModelsCommand;
use crate::render::Out;

pub fn run(command: Option<ModelsCommand>, out: &Out) -> Result<()> {
    match command.unwrap_or(ModelsCommand::List) {
        ModelsCommand::List => list(&Settings::load()?, out),
        ModelsCommand::Fetch { name } => fetch(&name, out),
        ModelsCommand::Use { name, extraction } => {
            let settings = on_device::choose(&Settings::load()?, &name, extraction)?;
            settings.save()?;
            let pin =
                if extraction { on_device::extraction_choice(&settings) } else { on_device::chat_choice(&settings) };
            let job = if extraction { "extracts facts" } else { "answers" };
            let here = pin.state_in(&strata_models::models_dir()) == strata_models::ModelState::Ready;
            let hint =
                if here { String::new() } else { format!(" It is not here yet: `strata models fetch {}`.", pin.name) };
            out.done(&format!("{} now {job} on this computer.{hint}", pin.title))
        }
    }
}

fn list(settings: &Settings, out: &Out) -> Result<()> {
    let views = on_device::on_device_models(settings, &strata_models::models_dir());
    if out.json {
        say!("{}", serde_json::to_string_pretty(&views)?);
        return Ok(());
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(["NAME", "MODEL", "SIZE", "HERE", "USED FOR", "LICENCE"]);
    for v in &views {
        t.add_row(vec![
            v.name.clone(),
            v.title.clone(),
            format!("{:.0} MB", v.bytes as f64 / 1e6),
            state_words(v).into(),
            used_for(v),
            v.licence.clone(),
        ]);
    }
    say!("{t}");
    say!();
    for v in views.iter().filter(|v| v.answers || v.extracts) {
        say!("{}: {}", v.title, v.attribution);
    }
    Ok(())
}

fn state_words(v: &OnDeviceModelView) -> &'static str {
    match v.state.as_str() {
        "ready" => "yes",
        "fetching" => "being fetched (or stopped: fetch again)",
        "damaged" => "damaged: fetch again",
        _ => "no",
    }
}

fn used_for(v: &OnDeviceModelView) -> String {
    let mut jobs = Vec::new();
    if v.answers {
        jobs.push("answers");
    }
    if v.extracts {
        jobs.push("extracts facts");
    }
    if v.is_default {
        jobs.push("(default)");
    }
    jobs.join(", ")
}

fn fetch(name: &str, out: &Out) -> Result<()> {
    let pin = strata_models::chat_model(name)?;
    let dir = strata_models::models_dir();
    if pin.state_in(&dir) == strata_models::ModelState::Ready {
        return out.done(&format!("{} is already here ({}).", pin.title, pin.path_in(&dir).display()));
    }
    let show = std::io::stderr().is_terminal() && !out.json;
    let mut last = (None, u64::MAX);
    let path = strata_fetch::fetch(
        pin,
        &dir,
        &strata_fetch::Source::default(),
        &mut |p| {
            let percent = p.done * 100 / p.total.max(1);
            if last == (Some(p.stage), percent) {
                return;
            }
            last = (Some(p.stage), percent);
            let what = match p.stage {
                strata_fetch::Stage::Downloading => "downloading",
                strata_fetch::Stage::Joining => "joining and checking",
            };
            if show {
                note_part!("\r{} — {what}: {percent}% of {:.0} MB   ", pin.title, p.total as f64 / 1e6);
            } else if percent % 10 == 0 {
                note!("{} — {what}: {percent}%", pin.title);
            }
        },
        &AtomicBool::new(false),
    );
    if show {
        note!();
    }
    let path = path?;
    out.done(&format!("{} is ready ({}, sha256 checked).", pin.title, path.display()))
}
