//! `strata datasets`: files read by `strata-datasets`, kept and queried by the engine.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};
use strata_api::Engine;
use strata_core::datasets::SqlLimits;

use crate::args::DatasetsCommand;
use crate::render::Out;

/// `strata datasets …`
pub(crate) fn datasets(engine: &mut Engine, action: Option<DatasetsCommand>, out: &Out) -> Result<()> {
    match action.unwrap_or(DatasetsCommand::List) {
        DatasetsCommand::List => out.datasets(&engine.datasets()?),
        DatasetsCommand::Load { files, name, no_embed } => {
            if name.is_some() && files.len() > 1 {
                bail!("--name names one dataset: load one file with it");
            }
            // Every file is read before anything is kept: one that cannot be read loads nothing.
            let mut read = Vec::new();
            for file in &files {
                read.extend(strata_datasets::read_file(file, name.as_deref())?);
            }
            keep(engine, &read, no_embed, out)
        }
        DatasetsCommand::Mcp { server } => {
            let config = strata_mcp_client::McpConfig::load_from(&strata_mcp_client::McpConfig::path()?)?;
            let offered = strata_plugins::mcp_datasets::resources(&config, &server)?;
            if out.json {
                let v: Vec<serde_json::Value> = offered
                    .iter()
                    .map(|r| serde_json::json!({"uri": r.uri, "name": r.name, "mime_type": r.mime_type, "description": r.description}))
                    .collect();
                return out.json_value(&serde_json::Value::Array(v));
            }
            if offered.is_empty() {
                say!("{server} offers no text resources.");
                return Ok(());
            }
            let mut t = crate::render::table(&["address", "name", "type", "what it is"]);
            for r in offered {
                t.add_row([r.uri, r.name, r.mime_type.unwrap_or_default(), r.description]);
            }
            crate::render::print_table(&t)
        }
        DatasetsCommand::LoadMcp { server, uris, name, no_embed } => {
            let config = strata_mcp_client::McpConfig::load_from(&strata_mcp_client::McpConfig::path()?)?;
            let read = strata_plugins::mcp_datasets::read(&config, &server, &uris, name.as_deref())?;
            keep(engine, &read, no_embed, out)
        }
        DatasetsCommand::Show { name, from, limit } => {
            let d = engine.dataset(&name)?;
            let offset = from.saturating_sub(1);
            match d.kind {
                strata_core::datasets::DatasetKind::Table => {
                    let rows = engine.dataset_rows(&name, offset, limit)?;
                    out.dataset_table(&d, from, &rows)
                }
                strata_core::datasets::DatasetKind::Document => {
                    let passages = engine.dataset_passages(&name, offset, limit)?;
                    out.dataset_document(&d, from, &passages)
                }
            }
        }
        DatasetsCommand::Sql { name, sql, rows, seconds } => {
            if !(seconds > 0.0 && seconds <= 600.0) {
                bail!("--seconds is between 0 and 600");
            }
            let limits = SqlLimits { rows, time: std::time::Duration::from_secs_f64(seconds) };
            out.sql_answer(&engine.query_dataset(&name, &sql, limits)?)
        }
        DatasetsCommand::Search { query, only, limit } => {
            use_embedder(engine);
            out.dataset_hits(&engine.search_datasets(&only, &query, limit)?, &query)
        }
        DatasetsCommand::Ask { name, question, provider } => {
            let model = crate::commands::open_chat(provider, None)?;
            out.table_answer(&engine.ask_table(&name, &question, model.as_ref(), SqlLimits::default())?)
        }
        DatasetsCommand::Embed => embed(engine, out),
        DatasetsCommand::Export { name } => export(engine, &name),
        DatasetsCommand::Forget { name } => {
            if !engine.forget_dataset(&name)? {
                bail!("no dataset named {name}");
            }
            if out.json {
                return out.json_value(&serde_json::json!({ "forgotten": name }));
            }
            note!("Forgot {name}: everything it held, its words and its vectors are gone from the store.");
            Ok(())
        }
    }
}

/// Keeps the datasets read, then (unless `no_embed`) embeds their passages.
fn keep(engine: &mut Engine, read: &[strata_core::datasets::NewDataset], no_embed: bool, out: &Out) -> Result<()> {
    let mut loaded = Vec::new();
    for d in read {
        loaded.push(engine.load_dataset(d)?);
    }
    out.datasets_loaded(&loaded)?;
    if !no_embed {
        embed(engine, out)?;
    }
    Ok(())
}

/// The sentence embedder, if it is here (searching by keyword alone otherwise).
fn use_embedder(engine: &mut Engine) {
    match crate::plugins::embedder() {
        Ok(model) => {
            if let Err(e) = engine.use_embedder(model, false) {
                note!("{e}\nSearching by keywords only.");
            }
        }
        Err(e) => note!("{e}\nSearching by keywords only."),
    }
}

/// Embeds the passages waiting for a vector, with progress.
fn embed(engine: &mut Engine, out: &Out) -> Result<()> {
    use_embedder(engine);
    if engine.embedder().is_none() {
        return Ok(());
    }
    let show = !out.json && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let done = engine.embed_passages(&AtomicBool::new(false), &mut |done, total| {
        if show {
            note_part!("\rEmbedding passages: {done} of {total} ({:.0} s)", started.elapsed().as_secs_f64());
        }
    })?;
    if show && done.embedded > 0 {
        note!();
    }
    Ok(())
}

/// A table as CSV on standard output, a page of rows at a time.
fn export(engine: &Engine, name: &str) -> Result<()> {
    const PAGE: usize = 10_000;
    let d = engine.dataset(name)?;
    if d.kind != strata_core::datasets::DatasetKind::Table {
        bail!("{name} is a document: only tables are exported as CSV");
    }
    let mut w = csv::Writer::from_writer(crate::terminal::Stdout);
    w.write_record(d.columns.iter().map(|c| strata_core::datasets::csv_safe(&c.header).into_owned()))?;
    let mut offset = 0u64;
    loop {
        let rows = engine.dataset_rows(name, offset, PAGE)?;
        for row in &rows {
            w.write_record(row.iter().map(strata_datasets::csv_cell))?;
        }
        if rows.len() < PAGE {
            break;
        }
        offset += PAGE as u64;
    }
    w.flush()?;
    Ok(())
}
