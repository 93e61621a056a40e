//! `strata extract`, `strata review`, `strata facts`, and the background extraction that
//! `strata ask` and `strata chat` start after an exchange.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use strata_api::{Engine, ExtractParams, Review, Settings};

use crate::args::{ProviderArgs, ReviewArg, ReviewCommand};
use crate::render::Out;

/// `strata extract`: one run over the unread turns, with progress on a terminal.
pub fn extract(
    engine: &mut Engine,
    session_id: Option<String>,
    episodes: Vec<String>,
    dry_run: bool,
    review: Option<ReviewArg>,
    provider: ProviderArgs,
    out: &Out,
) -> Result<()> {
    if !episodes.is_empty() {
        // The form `extract_later` starts after an answer: it must not slow the next one.
        lowest_priority();
    }
    let model = crate::commands::open_chat(on_device_extractor(provider), None)?;
    let review = match review {
        Some(ReviewArg::Apply) => Review::Apply,
        Some(ReviewArg::Propose) => Review::Propose,
        None => Settings::load()?.extraction.review_for(model.as_ref()),
    };
    let show = !out.json && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let params = ExtractParams { session_id, episodes, dry_run, review };
    let report = engine.extract(
        &params,
        model.as_ref(),
        &mut |done, total| {
            if show && total > 0 {
                note_part!(
                    "\rReading conversations: {done} of {total} parts ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
            Ok(())
        },
        &AtomicBool::new(false),
    );
    if show {
        note!();
    }
    out.extracted(&report?)
}

/// `strata review …`
pub fn review(engine: &mut Engine, action: Option<ReviewCommand>, out: &Out) -> Result<()> {
    let waiting = || -> Result<Vec<String>> { Ok(engine.proposals()?.into_iter().map(|d| d.id).collect()) };
    match action {
        None => out.proposals(&engine.proposals()?),
        Some(ReviewCommand::Accept { ids, all, wording }) => {
            let ids = if all { waiting()? } else { ids };
            if wording.is_some() && ids.len() != 1 {
                bail!("--as rewords one proposal: name exactly one");
            }
            if ids.is_empty() {
                bail!("name the proposals to accept (`strata review` lists them), or --all");
            }
            let items: Vec<(String, Option<String>)> = ids.into_iter().map(|id| (id, wording.clone())).collect();
            out.settled(&engine.accept(&items)?, "Accepted")
        }
        Some(ReviewCommand::Reject { ids, all }) => {
            let ids = if all { waiting()? } else { ids };
            if ids.is_empty() {
                bail!("name the proposals to reject (`strata review` lists them), or --all");
            }
            out.settled(&engine.reject(&ids)?, "Rejected")
        }
    }
}

/// `strata facts [SUBJECT]`
pub fn facts(engine: &Engine, subject: Option<String>, out: &Out) -> Result<()> {
    match subject {
        Some(s) => out.document(&engine.document(&s)?),
        None => out.documents(&engine.documents()?),
    }
}

/// Runs this process at the lowest CPU priority. Beside a running extraction at normal
/// priority the on-device model's first token came 27% later on 2 cores; at the lowest, 4%
/// (docs/benchmarks.md, "Extraction"). Elsewhere than on Unix, priority stays as it is.
fn lowest_priority() {
    #[cfg(unix)]
    {
        // SAFETY: setpriority reads no memory of ours; it changes this process's priority.
        #[allow(unsafe_code)]
        let failed = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) } != 0;
        if failed {
            tracing::debug!("could not lower extraction's priority: {}", std::io::Error::last_os_error());
        }
    }
}

/// After an exchange of `strata ask` or `strata chat` (recorded as `episode`): when the
/// settings say so, a `strata extract` process of its own reads it with the same model, so the
/// answer never waits for extraction.
pub fn extract_later(engine: &Engine, provider: &ProviderArgs, episode: &str) -> Result<()> {
    // A settings file that cannot be read is read the strictest way: no extraction.
    match Settings::load() {
        Ok(s) if s.extraction.after_exchanges => {}
        Ok(_) => return Ok(()),
        Err(e) => {
            note!("{e}; facts are not extracted from conversations until it is mended");
            return Ok(());
        }
    }
    let db = engine.path().context("an in-memory database has no file to extract into")?.to_path_buf();
    let exe = std::env::current_exe().context("cannot find the strata program to extract facts")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--db").arg(&db).args(["extract", "--episode", episode, "--provider", &provider.provider]);
    if let Some(m) = &provider.model {
        cmd.args(["--model", m]);
    }
    if let Some(u) = &provider.base_url {
        cmd.args(["--base-url", u]);
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("cannot start `strata extract` in the background")?;
    Ok(())
}

/// The extractor of `strata mcp` (the settings' chat model, the on-device one when none was
/// chosen) and `strata serve` (its own `provider`, in an instance of its own), or none when the settings turn extraction off or that model cannot
/// be opened (said on stderr; conversations are then kept as episodes only).
pub fn background_extractor(provider: Option<ProviderArgs>) -> Result<Option<strata_api::Extractor>> {
    let settings = Settings::load()?;
    if !settings.extraction.after_exchanges {
        return Ok(None);
    }
    let provider = provider.unwrap_or_else(|| match settings.chat {
        Some(c) => {
            ProviderArgs { provider: c.provider, model: Some(c.model).filter(|m| !m.is_empty()), base_url: c.base_url }
        }
        None => ProviderArgs { provider: "on-device".into(), model: None, base_url: None },
    });
    match crate::commands::open_chat(on_device_extractor(provider), None) {
        Ok(model) => {
            let review = settings.extraction.review_for(model.as_ref());
            Ok(Some(strata_api::Extractor { model: std::sync::Arc::from(model), review }))
        }
        Err(e) => {
            note!("Facts will not be extracted from conversations: {e:#}");
            Ok(None)
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    #[test]
    fn the_background_form_runs_at_the_lowest_priority() {
        super::lowest_priority();
        // SAFETY: getpriority reads no memory of ours.
        #[allow(unsafe_code)]
        let now = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(now, 19);
    }
}

/// On-device, with no model named: the one chosen to extract facts (Settings), if any.
pub(crate) fn on_device_extractor(mut provider: ProviderArgs) -> ProviderArgs {
    if matches!(provider.provider.as_str(), "on-device" | "local") && provider.model.is_none() {
        provider.model = Settings::load().ok().and_then(|s| s.on_device.extraction);
    }
    provider
}
