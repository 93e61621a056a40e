//! `strata plugins`: the registry listed and checked, the person's plugins added and removed,
//! and the embedder recall uses chosen (the store re-embedded first, resumable).

use std::io::IsTerminal;

use anyhow::{Result, bail};
use strata_api::plugins::{PersonPlugin, PluginKind};
use strata_api::{Engine, Settings};
use strata_plugins::{BROKEN, PluginView, Sources};

use crate::args::{PluginKindArg, PluginsCommand};
use crate::render::Out;

pub fn run(engine: &mut Engine, command: Option<PluginsCommand>, out: &Out) -> Result<()> {
    let sources = Sources::for_person(engine.storage_engine())?;
    match command.unwrap_or(PluginsCommand::List { kind: None }) {
        PluginsCommand::List { kind } => {
            let all: Vec<PluginView> =
                strata_plugins::list(&sources).into_iter().filter(|p| kind.is_none_or(|k| p.kind == of(k))).collect();
            show(&all, out)
        }
        PluginsCommand::Check { name } => {
            let all = strata_plugins::list(&sources);
            let chosen: Vec<&PluginView> = all.iter().filter(|p| name.as_ref().is_none_or(|n| p.name == *n)).collect();
            if chosen.is_empty() {
                bail!("no plugin is called {}: `strata plugins list` shows them", name.unwrap_or_default());
            }
            let checked: Vec<PluginView> = chosen.into_iter().map(|p| strata_plugins::check(p, &sources)).collect();
            show(&checked, out)?;
            match checked.iter().find(|p| p.state == BROKEN) {
                Some(p) if name.is_some() => bail!("{} is broken: {}", p.name, p.why),
                _ => Ok(()),
            }
        }
        PluginsCommand::Add { name, kind, provider, url, model, key_env, file, models } => {
            let file = file.map(|f| std::path::absolute(&f).unwrap_or(f).display().to_string());
            let plugin = PersonPlugin { name, kind: Some(of(kind)), provider, url, model, key_env, file, models };
            let settings = sources.settings.with_plugin(plugin.clone())?;
            settings.save()?;
            let sources = Sources { settings, ..sources };
            let view = strata_plugins::list(&sources).into_iter().find(|p| p.added && p.name == plugin.name);
            let Some(view) = view else { bail!("{} was added but is not listed", plugin.name) };
            let checked = strata_plugins::check(&view, &sources);
            if checked.state == BROKEN {
                note!("{} does not work yet: {}", plugin.name, checked.why);
            }
            out.done(&format!("Added {} ({}): {}.", plugin.name, plugin.kind().as_str(), checked.state))
        }
        PluginsCommand::Remove { name } => {
            let kept = sources.settings.without_plugin(&name)?;
            // The vectors it made go with it (derived data of a model no longer kept).
            let dropped = match strata_plugins::open::vectors_of(&sources.settings, &name) {
                Some(model) => engine.drop_vectors(&model)?,
                None => 0,
            };
            kept.save()?;
            match dropped {
                0 => out.done(&format!("Removed {name}.")),
                n => out.done(&format!("Removed {name} and the vectors it made of {n} memories.")),
            }
        }
        PluginsCommand::Use { name } => use_embedder(engine, &name, out),
    }
}

fn of(k: PluginKindArg) -> PluginKind {
    match k {
        PluginKindArg::Storage => PluginKind::Storage,
        PluginKindArg::TokenManager => PluginKind::TokenManager,
        PluginKindArg::Embedder => PluginKind::Embedder,
        PluginKindArg::ChatModel => PluginKind::ChatModel,
        PluginKindArg::DatasetLoader => PluginKind::DatasetLoader,
        PluginKindArg::Tool => PluginKind::Tool,
    }
}

fn show(all: &[PluginView], out: &Out) -> Result<()> {
    if out.json {
        say!("{}", serde_json::to_string_pretty(all)?);
        return Ok(());
    }
    let mut first = true;
    for kind in PluginKind::ALL {
        let of_kind: Vec<&PluginView> = all.iter().filter(|p| p.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        if !std::mem::take(&mut first) {
            say!();
        }
        say!("{}", kind.heading());
        let mut t = crate::render::table(&["name", "from", "state", "about"]);
        for p in of_kind {
            let name = if p.in_use { format!("{} (in use)", p.name) } else { p.name.clone() };
            let about = if p.why.is_empty() { p.detail.clone() } else { p.why.clone() };
            t.add_row([name, p.source.clone(), p.state.clone(), about]);
        }
        crate::render::print_table(&t)?;
    }
    Ok(())
}

/// Re-embeds the store with `name`'s embedder, then makes it the one recall uses (an
/// interrupted switch resumes when run again).
fn use_embedder(engine: &mut Engine, name: &str, out: &Out) -> Result<()> {
    let show = !out.json && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let done = strata_plugins::switch::use_embedder(engine, name, &cancel, &mut |p| {
        if show && p.total > 0 {
            note_part!("\rEmbedding with {name}: {} of {} ({:.0} s)", p.done, p.total, started.elapsed().as_secs_f64());
        }
    })?;
    if show && done.progress.total > 0 {
        note!();
    }
    out.done(&done.said(name))
}

/// The embedder recall uses, as the registry opens it (the on-device model, or the person's
/// endpoint chosen with `strata plugins use`).
pub(crate) fn embedder() -> Result<std::sync::Arc<dyn strata_core::Embedder>> {
    Ok(strata_plugins::open::embedder(&Settings::load()?, None)?)
}
