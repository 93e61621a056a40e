//! One function per subcommand: turn arguments into an engine call, hand the result to render.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use strata_api::{Engine, EngineOptions, ErrorCode, ImportOptions, Target, UpdateRequest};
use strata_core::time::parse_time;
use strata_core::{AsOf, Clock, HybridOptions, ManualClock, SystemClock};

use strata_api::health::{HealthParams, Optimization};

use crate::args::{
    AnalyticsWhat, BucketArg, Cli, Command, ContextArgs, FixArg, FormatArg, KeyCommand, OnDuplicateArg, OrderArg,
    ProviderArgs, RemoteArgs, TokensCommand, TurnArgs, UpdateArgs,
};
use crate::render::Out;
use crate::requests::{add_request, filter_of, format_of, kind_of, on_duplicate_of, parse_fact, target_of, tier_of};

/// The database used when neither --db nor STRATA_DB is given.
fn default_db() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "strata")
        .ok_or_else(|| anyhow!("cannot find your user data folder; pass --db PATH"))?;
    Ok(dirs.data_dir().join("strata.db"))
}

/// The system clock, or a fixed one when `STRATA_NOW` is set (reproducible scripts and tests).
fn clock() -> Result<Arc<dyn Clock>> {
    Ok(match std::env::var("STRATA_NOW") {
        Ok(now) => Arc::new(ManualClock::new(parse_time(&now).context("STRATA_NOW")?)),
        Err(_) => Arc::new(SystemClock),
    })
}

pub fn run(cli: Cli) -> Result<()> {
    let out = Out { json: cli.json, csv: false };
    let command = match cli.command {
        Command::Bench(bench) => return crate::bench::run_bench(bench, &out),
        Command::Tokens(tokens) => return run_tokens(tokens, &out),
        Command::Key(key) => return run_key(key, &out),
        Command::Models { action } => return crate::models::run(action, &out),
        Command::McpServers { action } => return crate::mcp_servers::run(action, &out),
        other => other,
    };
    let db = match cli.db.clone() {
        Some(p) => p,
        None => default_db()?,
    };
    let opts = EngineOptions {
        user_id: cli.user.clone(),
        agent_id: cli.agent.clone(),
        client: "cli".into(),
        shared_writes: false,
        actor: strata_core::Actor::User,
        recall: HybridOptions::default(),
        context: context_settings(),
        recall_records_days: strata_api::settings::UsageSettings::records_days_saved(),
    };
    if let Command::Migrate { from, to } = command {
        return crate::migrate::run(&from, &to, opts, &out);
    }
    if let Command::Scrub = command {
        let done = Engine::finish_scrub(&db)?;
        return if done { Ok(()) } else { bail!("another process kept reading {} for a whole day", db.display()) };
    }
    let clock = clock()?;
    let mut engine = Engine::open_with_clock(&db, opts, clock.clone())?;
    if let Command::Train(train) = command {
        return crate::train::run(&mut engine, &db, train, &out);
    }
    if let Command::Serve { port, host, provider, token, remote } = command {
        let listen = Listen { addr: std::net::SocketAddr::new(host, port), remote };
        return serve(engine, listen, provider, token, &out);
    }
    if let Command::Mcp { http, token, graph_tools, remote } = command {
        let settings = strata_mcp::McpSettings {
            agent: cli.agent.clone(),
            graph_tools,
            extractor: crate::extract::background_extractor(None)?,
            agents: Some(strata_agents::AgentModels(std::sync::Arc::new(crate::agents::model_for))),
            ..Default::default()
        };
        let listen = http.map(|addr| Listen { addr, remote });
        return mcp(engine, settings, listen, token);
    }
    let result = dispatch(&mut engine, command, &out, clock.as_ref());
    // Recording what was read is bookkeeping: it must not turn a read that worked into an error.
    if let Err(e) = engine.flush() {
        tracing::warn!("could not record memory accesses: {e}");
    }
    result
}

fn dispatch(engine: &mut Engine, command: Command, out: &Out, clock: &dyn Clock) -> Result<()> {
    match command {
        Command::Add(add) => {
            let req = add_request(add, clock)?;
            out.memory(&engine.add(req)?, "Added")
        }
        Command::Get { target, as_of, at_seq } => {
            let at = match (as_of, at_seq) {
                (Some(t), _) => Some(AsOf::Time(parse_time(&t)?)),
                (None, Some(s)) => Some(AsOf::Seq(s)),
                _ => None,
            };
            out.memory(&engine.get(&target_of(target), at)?, "")
        }
        Command::List { filter, order, limit, cursor } => {
            let order = match order {
                OrderArg::Added => strata_core::Order::Added,
                OrderArg::Occurred => strata_core::Order::Occurred,
                OrderArg::Recalled => strata_core::Order::Recalled,
            };
            out.page(&engine.list_by(filter_of(filter, engine.now())?, order, limit, cursor.as_deref())?)
        }
        Command::Search { query, filter, limit } => {
            // On a terminal the marks become bold once the text is made safe (crate::terminal).
            let marks = if out.json || !std::io::stdout().is_terminal() {
                ("**", "**")
            } else {
                (crate::terminal::MARK_START, crate::terminal::MARK_END)
            };
            out.hits(&engine.search(&query, filter_of(filter, engine.now())?, limit, marks)?, &query)
        }
        Command::Recall { query, filter, limit, why } => {
            load_embedder(engine, out)?;
            out.recalled(&engine.recall(&query, filter_of(filter, engine.now())?, limit)?, &query, why)
        }
        Command::Context(args) => context(engine, args, out),
        Command::Ask { question, provider, turn, no_record } => {
            load_embedder(engine, out)?;
            let chat = open_chat(provider.clone(), adapters_in_use(engine)?)?;
            let view = ask_turn(engine, chat.as_ref(), &turn, !no_record, None, question, vec![], out)?;
            out.asked(&view)?;
            match &view.recorded {
                Some(m) => crate::extract::extract_later(engine, &provider, &m.id),
                None => Ok(()),
            }
        }
        Command::Extract { session, dry_run, review, episodes, provider } => {
            crate::extract::extract(engine, session, episodes, dry_run, review, provider, out)
        }
        Command::Review { action } => crate::extract::review(engine, action, out),
        Command::Facts { subject } => crate::extract::facts(engine, subject, out),
        Command::Concepts { action } => crate::concepts::concepts(engine, action, out),
        Command::Datasets { action } => crate::datasets::datasets(engine, action, out),
        Command::People { action } => crate::people::people(engine, action, out),
        Command::Agents { action } => crate::agents::agents(engine, action, out),
        Command::Analytics { what, since, until, by, kind, client, tag, csv, fix, apply } => {
            let range = range_of(since, until, by, kind, client, tag);
            analytics(engine, what, range, fix.map(|f| (f, apply)), &Out { csv, ..*out })
        }
        Command::Chat { provider, turn } => chat(engine, provider, &turn, out, clock),
        Command::Embed => {
            engine.use_embedder(crate::plugins::embedder()?, false)?;
            let p = embed_with_progress(engine, out)?;
            out.embedded(&p)
        }
        Command::Update(u) => update(engine, u, out),
        Command::Tag { target, tags } => out.memory(&engine.tag(&target_of(target), &tags)?, "Tagged"),
        Command::Untag { target, tags } => out.memory(&engine.untag(&target_of(target), &tags)?, "Untagged"),
        Command::Tier { target, tier, reason } => {
            out.memory(&engine.set_tier(&target_of(target), tier_of(tier), &reason)?, "Moved")
        }
        Command::Link { target, to, relation } => {
            out.memory(&engine.link(&target_of(target), &Target::new(to), &relation)?, "Linked")
        }
        Command::Forget { target, yes } => forget(engine, target, yes, out),
        Command::Pin { target } => out.memory(&engine.pin(&target_of(target), true)?, "Pinned"),
        Command::Unpin { target } => out.memory(&engine.pin(&target_of(target), false)?, "Unpinned"),
        Command::Maintain { dry_run } => maintain(engine, dry_run, out),
        Command::History { target } => out.history(&engine.history(&target_of(target))?),
        Command::Replay => out.replay(&engine.replay()?),
        Command::Import { file, format, on_duplicate } => import(engine, file, format, on_duplicate, out),
        Command::Export { format, output } => export(engine, format, output, out),
        Command::Stats => out.stats(&engine.stats()?),
        Command::Plugins { action } => crate::plugins::run(engine, action, out),
        Command::Demo => {
            let counts = engine.demo()?;
            out.demo(&counts)
        }
        Command::Bench(_)
        | Command::Tokens(_)
        | Command::Key(_)
        | Command::Models { .. }
        | Command::McpServers { .. }
        | Command::Train(_)
        | Command::Serve { .. }
        | Command::Scrub
        | Command::Migrate { .. }
        | Command::Mcp { .. } => {
            unreachable!("these run before dispatch")
        }
    }
}

/// `strata maintain`: the tier rule applied (or previewed), then training flagged anew.
fn maintain(engine: &mut Engine, dry_run: bool, out: &Out) -> Result<()> {
    let moves = engine.maintain(&strata_api::Settings::load()?.tiers, !dry_run)?;
    if !dry_run {
        let f = engine.flag_after_maintenance()?;
        if f.flagged + f.withdrawn > 0 {
            note!(
                "Training candidates: {} new, {} no longer qualify (`strata train candidates`).",
                f.flagged,
                f.withdrawn
            );
        }
    }
    out.maintained(&moves, dry_run)
}

/// `strata import`: a file (or standard input) in one transaction.
fn import(
    engine: &mut Engine,
    file: std::path::PathBuf,
    format: Option<FormatArg>,
    on_duplicate: OnDuplicateArg,
    out: &Out,
) -> Result<()> {
    let stdin = file.as_os_str() == "-";
    let name = if stdin { "<stdin>".to_string() } else { file.display().to_string() };
    let mut input: Box<dyn BufRead> = if stdin {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(std::fs::File::open(&file).with_context(|| format!("cannot open {name}"))?))
    };
    let text = strata_core::interchange::json::read_text(&name, &mut input)?;
    // ChatGPT's, Claude's and mem0's exports, told by their shape (`--format` names Strata's own).
    if format.is_none() && strata_api::history::is_history(&text) {
        let report = engine.import_history(&name, &text)?;
        return out.history_imported(&name, &report);
    }
    let options = ImportOptions { format: format.map(format_of), on_duplicate: on_duplicate_of(on_duplicate) };
    let report = engine
        .import_report_with(&name, &mut text.as_bytes(), options, &mut strata_core::interchange::no_tick)
        .map_err(|e| match e.code {
            ErrorCode::DuplicateKey => {
                anyhow!("{e} (to import the rest, run again with --on-duplicate skip or merge)")
            }
            _ => e.into(),
        })?;
    out.imported(&name, &report)
}

/// `strata export`: into a file written whole, or to standard output.
fn export(engine: &Engine, format: FormatArg, output: Option<std::path::PathBuf>, out: &Out) -> Result<()> {
    let format = format_of(format);
    match output {
        Some(path) => {
            // Written whole (strata_core::files): a failed export leaves the old file or
            // none; a pipe or a terminal is written into, never replaced.
            let n = engine.export_to_file(format, &path, &mut strata_core::interchange::no_tick)?;
            out.exported(format, n, &path)
        }
        None => {
            // Data, exactly as exported, into a pipe or file; made safe on a terminal.
            let raw: Box<dyn std::io::Write> = if std::io::stdout().is_terminal() {
                Box::new(crate::terminal::Stdout)
            } else {
                Box::new(crate::terminal::RawStdout)
            };
            let mut stdout = std::io::LineWriter::new(raw);
            engine.export(format, &mut stdout)?;
            stdout.flush()?;
            Ok(())
        }
    }
}

/// `strata update`: the changes asked, in one event.
fn update(engine: &mut Engine, u: UpdateArgs, out: &Out) -> Result<()> {
    let target = target_of(u.target);
    let req = UpdateRequest {
        set_facts: u.facts.iter().map(|f| parse_fact(f)).collect::<Result<_>>()?,
        unset_facts: u.unset_facts,
        text: u.text,
        query: u.query,
        steps: (!u.steps.is_empty()).then_some(u.steps),
        context: u.context,
        importance: u.importance,
        expected_version: u.expect_version,
    };
    out.memory(&engine.update(&target, req)?, "Updated")
}

/// The range `strata analytics` reads, as its options give it.
fn range_of(
    since: Option<String>,
    until: Option<String>,
    by: BucketArg,
    kind: Option<crate::args::KindArg>,
    client: Option<String>,
    tag: Option<String>,
) -> strata_api::forms::RangeForm {
    strata_api::forms::RangeForm {
        since,
        until,
        bucket: Some(match by {
            BucketArg::Day => "day".into(),
            BucketArg::Week => "week".into(),
        }),
        kind: kind.map(|k| kind_of(k).to_string()),
        client,
        tag,
    }
}

/// `strata forget`: asks first unless `yes`; a scrub another process's read delays is finished
/// by a process of its own.
fn forget(engine: &mut Engine, target: crate::args::KeyArg, yes: bool, out: &Out) -> Result<()> {
    let target = target_of(target);
    if !yes {
        confirm_forget(engine, &target)?;
    }
    let report = engine.forget(&target)?;
    if !report.scrubbed {
        finish_scrub_later(engine)?;
    }
    out.forgotten(&report)
}

/// `strata chat`: a conversation read line by line from standard input. `/memories` shows what
/// the last answer was given, `/provider NAME [MODEL]` switches provider keeping the
/// conversation, `/quit` ends; a failed turn is said and the conversation goes on.
fn chat(engine: &mut Engine, provider: ProviderArgs, turn: &TurnArgs, out: &Out, clock: &dyn Clock) -> Result<()> {
    load_embedder(engine, out)?;
    let mut chat = open_chat(provider.clone(), adapters_in_use(engine)?)?;
    let mut extractor = provider;
    let session = Some(format!("chat-{}", clock.now().format("%Y%m%dT%H%M%S")));
    let mut history: Vec<strata_core::Message> = Vec::new();
    let mut last: Option<strata_api::AskView> = None;
    while let Some(line) = crate::terminal::read_line(&mut std::io::stdin().lock())? {
        let line = line.trim();
        match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            [] => continue,
            ["/quit" | "/exit"] => break,
            ["/memories"] => match &last {
                Some(v) => out.injected(&v.context.report)?,
                None => note!("Nothing asked yet."),
            },
            ["/provider", name, rest @ ..] => {
                let wanted = ProviderArgs {
                    provider: name.to_string(),
                    model: rest.first().map(|m| m.to_string()),
                    base_url: None,
                };
                // A provider that cannot be opened (no key…) leaves the conversation as it was.
                match adapters_in_use(engine).and_then(|a| open_chat(wanted.clone(), a)) {
                    Ok(c) => {
                        chat = c;
                        extractor = wanted;
                        note!("Now talking with {} {}.", chat.provider(), chat.model());
                    }
                    Err(e) => {
                        note!("error: {e:#}; still talking with {} {}.", chat.provider(), chat.model())
                    }
                }
            }
            [cmd, ..] if cmd.starts_with('/') => {
                note!("Unknown command {cmd}: /memories, /provider NAME [MODEL], /quit.")
            }
            _ => {
                let asked = ask_turn(
                    engine,
                    chat.as_ref(),
                    turn,
                    true,
                    session.clone(),
                    line.to_string(),
                    history.clone(),
                    out,
                );
                // A failed turn (a network error, a rate limit) is said and the conversation goes on.
                match asked {
                    Ok(view) => {
                        history.push(strata_core::Message::user(line));
                        history.push(strata_core::Message::assistant(view.answer.clone()));
                        out.asked(&view)?;
                        if let Some(m) = &view.recorded {
                            crate::extract::extract_later(engine, &extractor, &m.id)?;
                        }
                        last = Some(view);
                    }
                    Err(e) => note!("error: {e:#}"),
                }
            }
        }
    }
    Ok(())
}

/// `strata context`: the prompt a model would get for a message, with its report.
fn context(engine: &mut Engine, args: ContextArgs, out: &Out) -> Result<()> {
    let ContextArgs { model, query, budget, system, history, placement, compare, datasets, filter } = args;
    let history: Vec<strata_core::Message> = match history {
        Some(p) => {
            let text = strata_core::files::read_text(&p, 16 << 20, "a conversation's history")?;
            serde_json::from_str(&text).with_context(|| {
                format!("{}: not a list of messages ([{{\"role\": \"user\", \"content\": \"…\"}}, …])", p.display())
            })?
        }
        None => vec![],
    };
    let placement: strata_context::Placement = placement.parse()?;
    load_embedder(engine, out)?;
    let params = strata_api::ContextParams {
        model,
        message: query,
        system,
        history,
        history_summary: None,
        budget,
        filter: filter_of(filter, engine.now())?,
        placement: Some(placement),
        concepts: None,
        without_past_answers: false,
        datasets,
    };
    let counter = counting_model(engine, &params.model)?;
    if !compare {
        return out.context(&engine.build_context_with(params, counter.as_deref())?);
    }
    let raw = engine.build_context_with(
        strata_api::ContextParams { concepts: Some(false), ..params.clone() },
        counter.as_deref(),
    )?;
    let compacted =
        engine.build_context_with(strata_api::ContextParams { concepts: Some(true), ..params }, counter.as_deref())?;
    out.compared_contexts(&raw, &compacted)
}

/// Runs the embedding job, reporting progress on stderr when there is much to do.
pub(crate) fn embed_with_progress(engine: &mut Engine, out: &Out) -> Result<strata_api::embedding::EmbedProgress> {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let show = !out.json && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let p = engine.embed_all(&cancel, &mut |p| {
        if show && p.total > strata_api::embedding::BATCH as u64 {
            note_part!("\rEmbedding: {} of {} ({:.0} s)", p.done, p.total, started.elapsed().as_secs_f64());
        }
    })?;
    if show && p.total > strata_api::embedding::BATCH as u64 {
        note!();
    }
    Ok(p)
}

/// Where a server listens, and whom beyond loopback it lets in.
struct Listen {
    addr: std::net::SocketAddr,
    remote: RemoteArgs,
}

impl Listen {
    /// The hosts requests may name: loopback ones, the names given (with --allow-remote)
    /// whatever the address, and beyond loopback the address listened on.
    fn hosts(&self) -> Result<strata_core::access::Hosts> {
        if self.addr.ip().is_loopback() {
            return Ok(strata_core::access::Hosts::named(self.remote.allow_hosts.clone()));
        }
        if !self.remote.allow_remote {
            bail!(
                "{} is not a loopback address: other machines could reach your memory; pass --allow-remote if you mean it",
                self.addr
            );
        }
        Ok(strata_core::access::Hosts::remote(self.addr.ip(), self.remote.allow_hosts.clone()))
    }
}

/// The token given, or for a server reachable beyond loopback (where one is always required)
/// a new one, printed for the person to hand to their clients.
fn token_for(hosts: &strata_core::access::Hosts, given: Option<String>) -> Option<String> {
    let given = given.filter(|t| !t.trim().is_empty());
    if given.is_some() || !hosts.is_remote() {
        return given;
    }
    let new = strata_core::access::new_token();
    note!("Clients send the header  Authorization: Bearer {new}");
    Some(new)
}

/// Hands a scrub that another process's read delayed to a `strata scrub` process of its own,
/// which outlives this command and finishes as soon as that read ends.
fn finish_scrub_later(engine: &Engine) -> Result<()> {
    let db = engine.path().context("an in-memory database has no file to scrub")?.to_path_buf();
    let exe = std::env::current_exe().context("cannot find the strata program to finish the scrub")?;
    std::process::Command::new(exe)
        .arg("--db")
        .arg(&db)
        .arg("scrub")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("cannot start `strata scrub` to finish wiping the forgotten content")?;
    Ok(())
}

/// `strata serve`: the memory proxy, until Ctrl-C.
fn serve(mut engine: Engine, listen: Listen, provider: ProviderArgs, token: Option<String>, out: &Out) -> Result<()> {
    let hosts = listen.hosts()?;
    let access = strata_proxy::Access { token: token_for(&hosts, token), hosts };
    load_embedder(&mut engine, out)?;
    let chat: Arc<dyn strata_core::ChatModel> = Arc::from(open_chat(provider.clone(), adapters_in_use(&engine)?)?);
    let extractor = crate::extract::background_extractor(Some(provider))?;
    let (provider, model) = (chat.provider().to_string(), chat.model().to_string());
    // Opened before the runtime: the proxy's gate connects to the store with a blocking driver.
    let agents = strata_agents::AgentModels(Arc::new(crate::agents::model_for));
    let proxy = Arc::new(strata_proxy::Proxy::new(engine, chat, access)?.with_extractor(extractor).with_agents(agents));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen.addr)
            .await
            .with_context(|| format!("cannot listen on {}", listen.addr))?;
        let addr = listener.local_addr()?;
        note!("Strata's memory proxy: http://{addr}/v1 (answers from {provider} {model}). Ctrl-C stops it.");
        strata_proxy::serve(listener, proxy, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
        Ok(())
    })
}

/// `strata mcp`: the MCP server over stdio (until the client hangs up) or HTTP (until Ctrl-C).
/// Only the protocol goes to stdout; everything said to a person goes to stderr.
fn mcp(
    mut engine: Engine,
    settings: strata_mcp::McpSettings,
    listen: Option<Listen>,
    token: Option<String>,
) -> Result<()> {
    match crate::plugins::embedder() {
        // New and not yet embedded memories are embedded in the background.
        Ok(model) => engine.use_embedder(model, true)?,
        Err(e) => note!("{e}\nRanking by keywords only."),
    }
    let server = strata_mcp::StrataMcp::new(engine, settings);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async move {
        let Some(listen) = listen else {
            return Ok(strata_mcp::serve_stdio(server).await?);
        };
        let (addr, hosts) = (listen.addr, listen.hosts()?);
        // Over HTTP a token is always required, beyond loopback or not.
        let token = token.filter(|t| !t.trim().is_empty()).unwrap_or_else(strata_core::access::new_token);
        let running = strata_mcp::http::serve_for(server, addr, token.clone(), hosts)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        note!("Strata's MCP server: http://{}{} (Ctrl-C stops it)", running.addr, strata_mcp::http::PATH);
        note!("Clients send the header  Authorization: Bearer {token}");
        tokio::signal::ctrl_c().await?;
        running.stop().await?;
        Ok(())
    })
}

/// One memory-augmented turn with `chat`, the answer streamed to stdout unless `--json`.
#[allow(clippy::too_many_arguments)]
fn ask_turn(
    engine: &mut Engine,
    chat: &dyn strata_core::ChatModel,
    turn: &TurnArgs,
    record: bool,
    session_id: Option<String>,
    question: String,
    history: Vec<strata_core::Message>,
    out: &Out,
) -> Result<strata_api::AskView> {
    let params = strata_api::AskParams {
        question,
        system: turn.system.clone(),
        history,
        budget: turn.budget,
        max_tokens: turn.max_tokens,
        session_id,
        record,
        datasets: turn.datasets.clone(),
        ..Default::default()
    };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let stream = !out.json;
    Ok(engine.ask(
        params,
        chat,
        &mut |piece| {
            if stream {
                out.piece(piece)
            }
        },
        &cancel,
    )?)
}

/// The crystallized adapters in use, which the on-device model they were trained on applies:
/// each question chooses one of them, or none, by the store's embedder.
fn adapters_in_use(engine: &Engine) -> Result<Option<strata_models::InUse>> {
    Ok(Some(strata_train::views::in_use(engine, engine.embedder().cloned())?))
}

pub(crate) fn open_chat(
    args: ProviderArgs,
    in_use: Option<strata_models::InUse>,
) -> Result<Box<dyn strata_core::ChatModel>> {
    let ProviderArgs { provider, model, base_url } = args;
    // On-device, a provider Strata serves, or one of the person's chat models: the registry
    // opens each.
    Ok(strata_plugins::open::chat_model(&strata_api::Settings::load()?, &provider, model, base_url, in_use)?)
}

/// The model `strata context` assembles for, when its provider counts prompts exactly and a
/// key is at hand (Claude models): the provider's count then checks the assembled prompt.
fn counting_model(engine: &mut Engine, model: &str) -> Result<Option<Box<dyn strata_core::ChatModel>>> {
    let provider = engine.model_tokens(model)?.info.provider.clone();
    if provider != "anthropic" {
        return Ok(None);
    }
    let config = strata_providers::ProviderConfig { provider, model: model.to_string(), ..Default::default() };
    match strata_providers::open(&config) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind == strata_core::ChatErrorKind::BadKey => Ok(None), // no key: the estimate
        Err(e) => Err(e.into()),
    }
}

/// `strata analytics`: the metrics over the range the flags give; with `fix`, an
/// optimization previewed or (true) applied.
fn analytics(
    engine: &mut Engine,
    what: AnalyticsWhat,
    range: strata_api::forms::RangeForm,
    fix: Option<(FixArg, bool)>,
    out: &Out,
) -> Result<()> {
    let range = range.range(engine.now())?;
    let bucket = range.bucket;
    if matches!(what, AnalyticsWhat::Health) {
        // Without the model, health counts no missing vectors and cannot embed or group.
        match crate::plugins::embedder() {
            Ok(model) => engine.use_embedder(model, false)?,
            Err(e) => tracing::info!("no embedding model: {e}"),
        }
    }
    if let Some((fix, apply)) = fix {
        if !matches!(what, AnalyticsWhat::Health) {
            anyhow::bail!("--fix goes with `strata analytics health`");
        }
        let action = match fix {
            FixArg::MergeDuplicates => Optimization::MergeDuplicates,
            FixArg::ExpireStale => Optimization::ExpireStale,
            FixArg::EmbedMissing => Optimization::EmbedMissing,
            FixArg::Compact => Optimization::Compact,
            FixArg::Vacuum => Optimization::Vacuum,
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let view = engine.optimize(action, &HealthParams::default(), apply, &mut |_, _| Ok(()), &stop)?;
        return out.optimized(&view);
    }
    match what {
        AnalyticsWhat::Summary => out.memory_metrics(&engine.memory_metrics(&range)?, bucket),
        AnalyticsWhat::Recalls => {
            let m = engine.recall_metrics(&range)?;
            let titles: Vec<String> = m
                .top
                .iter()
                .map(|(id, _)| {
                    engine
                        .memory(&strata_api::Target::new(id.clone()))
                        .map_or_else(|_| id.clone(), |m| strata_api::dto::content_title(&m.content))
                })
                .collect();
            out.recall_metrics(&m, &titles, bucket)
        }
        AnalyticsWhat::Utilization => out.utilization_metrics(&engine.utilization_metrics(&range)?, bucket),
        AnalyticsWhat::Health => out.health(&engine.health(&HealthParams::default())?),
        AnalyticsWhat::Compaction => out.compaction_passes(&engine.compaction_passes(&range, 1000)?),
        AnalyticsWhat::Agents => out.agent_metrics(&engine.agent_metrics(&range)?),
        AnalyticsWhat::Clear => out.cleared_recalls(engine.clear_recall_records()?),
    }
}

/// Loads the on-device embedder and embeds what is pending; without the model, recall ranks
/// by keywords (and says so).
pub(crate) fn load_embedder(engine: &mut Engine, out: &Out) -> Result<()> {
    match crate::plugins::embedder() {
        Ok(model) => {
            engine.use_embedder(model, false)?;
            embed_with_progress(engine, out)?;
        }
        Err(e) => note!("{e}\nRanking by keywords only."),
    }
    Ok(())
}

/// Where the CLI finds the user's model catalogue and local tokenizers.
fn context_settings() -> strata_api::ContextSettings {
    strata_api::ContextSettings::for_user()
}

fn run_key(command: KeyCommand, out: &Out) -> Result<()> {
    use strata_providers::keys;
    let known = |p: &str| -> Result<()> {
        if strata_providers::env_names(p).0.is_none() {
            bail!("'{p}' takes no key (expected openai, anthropic or openai-compatible)");
        }
        Ok(())
    };
    match command {
        KeyCommand::Set { provider } => {
            known(&provider)?;
            let key = crate::terminal::read_line(&mut std::io::stdin().lock())?.unwrap_or_default();
            keys::store(&provider, key.trim())?;
            out.done(&format!("Stored the {provider} key in the OS keychain."))
        }
        KeyCommand::Delete { provider } => {
            known(&provider)?;
            let had = keys::forget(&provider)?;
            out.done(&if had {
                format!("Removed the {provider} key.")
            } else {
                format!("No {provider} key was stored.")
            })
        }
        KeyCommand::Status => {
            let rows: Vec<(String, keys::KeySource)> =
                ["openai", "anthropic", "openai-compatible"].iter().map(|p| (p.to_string(), keys::find(p).1)).collect();
            out.key_status(&rows)
        }
    }
}

fn run_tokens(command: TokensCommand, out: &Out) -> Result<()> {
    let (model, file, max) = match command {
        TokensCommand::Count { model, file } => (model, file, None),
        TokensCommand::Split { model, max, file } => (model, file, Some(max)),
    };
    let text = match &file {
        Some(p) => strata_core::files::read_text(p, 256 << 20, "a text to count")?,
        None => strata_core::interchange::json::read_text("<stdin>", &mut std::io::stdin())?,
    };
    let strata_api::context::ModelTokens { tokens, unknown, .. } =
        strata_api::context::tokenizer(&context_settings(), &model)?;
    if let Some(note) = &unknown {
        note!("{note}");
    }
    match max {
        None => {
            let exact = tokens.is_exact() && unknown.is_none();
            out.token_count(&model, tokens.name(), exact, tokens.count(&text)?)
        }
        Some(max) => out.token_pieces(&tokens.split(&text, max)?),
    }
}

fn confirm_forget(engine: &Engine, target: &Target) -> Result<()> {
    let m = engine.memory(target)?;
    let question = format!(
        "Forget {} ({})?\nIts content will be erased everywhere, including its history.",
        m.id,
        strata_api::dto::content_title(&m.content)
    );
    if !crate::terminal::confirm(&question)? {
        bail!("not forgotten");
    }
    Ok(())
}
