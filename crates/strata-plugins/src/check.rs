//! Whether an entry works now, tried for real: an embedder embeds, an endpoint lists the model,
//! a tokenizer file counts, an MCP server starts and lists its tools. A failure is the entry
//! said `broken` with why, never an error of the listing.

use strata_api::plugins::PluginKind;
use strata_mcp_client::Connection;

use crate::registry::{ON_DEVICE_EMBEDDER, Sources};
use crate::{BROKEN, MISSING, PluginView, READY};

/// `entry` tried: ready (with what was found in `detail`), or broken with why.
pub fn check(entry: &PluginView, sources: &Sources) -> PluginView {
    if entry.state == MISSING {
        return entry.clone(); // nothing to try: its why says what to do
    }
    let mut out = entry.clone();
    let tried = match entry.kind {
        PluginKind::Embedder => embedder(entry, sources),
        PluginKind::ChatModel => chat_model(entry, sources),
        PluginKind::TokenManager if entry.added => token_manager(entry, sources),
        PluginKind::Tool | PluginKind::DatasetLoader if entry.added => mcp_server(entry, sources),
        _ => Ok(None),
    };
    match tried {
        Ok(detail) => {
            out.state = READY.into();
            out.why.clear();
            if let Some(d) = detail {
                out.detail = d;
            }
        }
        Err(why) => {
            out.state = BROKEN.into();
            out.why = why;
        }
    }
    out
}

type Tried = Result<Option<String>, String>;

fn embedder(entry: &PluginView, sources: &Sources) -> Tried {
    let e = crate::open::embedder(&sources.settings, Some(&entry.name)).map_err(|e| e.to_string())?;
    let v = e.embed(&["a check"]).map_err(|e| e.to_string())?;
    let dim = v.first().map_or(0, Vec::len);
    if entry.name == ON_DEVICE_EMBEDDER {
        return Ok(None);
    }
    Ok(Some(format!("{} ({dim} dimensions)", e.model_id())))
}

fn chat_model(entry: &PluginView, sources: &Sources) -> Tried {
    if let Some(p) = sources.settings.plugin(&entry.name).filter(|_| entry.added) {
        let (provider, url, model) = crate::open::endpoint(p);
        strata_providers::served::check_serves(provider, url, model, crate::open::key(p)).map_err(|e| e.message)?;
        return Ok(Some(format!("{model} is served")));
    }
    if entry.name == "ollama" {
        let url = std::env::var("OLLAMA_HOST").ok().filter(|u| !u.trim().is_empty());
        let url = url.unwrap_or_else(|| "http://127.0.0.1:11434".into());
        let url = if url.contains("://") { url } else { format!("http://{url}") };
        let served = strata_providers::served::models_served("ollama", &url, None)
            .map_err(|e| format!("{} (is Ollama running? https://ollama.com)", e.message))?;
        return Ok(Some(format!("serves {} models at {url}", served.len())));
    }
    Ok(None)
}

fn token_manager(entry: &PluginView, sources: &Sources) -> Tried {
    let p = sources.settings.plugin(&entry.name).ok_or("it is no longer in the settings")?;
    let file = p.file.as_deref().unwrap_or_default();
    let tokens = strata_tokens::from_file(&p.name, std::path::Path::new(file)).map_err(|e| e.to_string())?;
    let n = tokens.count("How many tokens is this sentence?").map_err(|e| e.to_string())?;
    if n == 0 {
        return Err(format!("{file} counts no tokens in a sentence"));
    }
    Ok(Some(format!("counts for {} ({n} tokens in a test sentence)", p.models.as_deref().unwrap_or_default())))
}

fn mcp_server(entry: &PluginView, sources: &Sources) -> Tried {
    let server = sources.mcp.servers.get(&entry.name).ok_or("it is no longer in mcp.json")?;
    let c = Connection::start(&entry.name, server).map_err(|e| e.to_string())?;
    Ok(Some(match entry.kind {
        PluginKind::Tool => format!("{} tools: {}", c.tools.len(), names(c.tools.iter().map(|t| t.name.as_str()))),
        _ => {
            let all = c.resources().map_err(|e| e.to_string())?;
            let text: Vec<&str> =
                all.iter().filter(|r| crate::mcp_datasets::is_text(r)).map(|r| r.name.as_str()).collect();
            format!("{} resources to load as datasets: {}", text.len(), names(text.into_iter()))
        }
    }))
}

fn names<'a>(all: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<&str> = all.collect();
    if v.len() > 6 { format!("{}…", v[..6].join(", ")) } else { v.join(", ") }
}
