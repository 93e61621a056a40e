//! `strata bench …`: each benchmark run with its options and its report printed.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use strata_api::Ranking;
use strata_bench::locomo;
use strata_core::{HybridOptions, TimeUse};

use crate::args::BenchCommand;
use crate::render::Out;

/// Runs one benchmark and prints its report.
pub(crate) fn run_bench(bench: BenchCommand, out: &Out) -> Result<()> {
    match bench {
        BenchCommand::Locomo { data, configs: only, postgres } => locomo_bench(&data, &only, postgres, out),
        BenchCommand::Mcp { data, size, python } => {
            let strata = std::env::current_exe()?;
            out.mcp_bench(&strata_bench::mcpbench::run(&data, size, python, &strata, &mut |s| note!("{s}"))?)
        }
        BenchCommand::Recall { data, sizes, postgres: None, .. } => {
            let work = tempfile::tempdir()?;
            let model = Arc::new(strata_models::MiniLm::load_default()?);
            out.scale_bench(&strata_bench::scalebench::run(&data, work.path(), model, &sizes)?)
        }
        BenchCommand::Recall { data, sizes, postgres: Some(url), ef_search, reuse } => {
            let model = Arc::new(strata_models::MiniLm::load_default()?);
            let report = strata_bench::pgscale::run(&data, &url, model, &sizes, &ef_search, reuse)?;
            say!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        BenchCommand::Tokens { data, reference, ranks } => {
            let (turns, _) = locomo::texts(&data)?;
            let texts: Vec<&str> = turns.iter().map(String::as_str).collect();
            let ours = strata_bench::tokenbench::measure(&texts)?;
            let theirs = match reference {
                Some(python) => {
                    let ranks = ranks
                        .or_else(strata_bench::tokenbench::default_ranks_dir)
                        .context("cannot find tiktoken-rs's .tiktoken files in the cargo registry; pass --ranks DIR")?;
                    let script =
                        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/tokens_reference.py");
                    Some(strata_bench::tokenbench::reference(&python, &script, &ranks, &texts)?)
                }
                None => None,
            };
            out.token_bench(&strata_bench::tokenbench::report(&texts, ours, theirs))
        }
        BenchCommand::Chat { tokens, adapter, unmerged, model } => {
            use strata_bench::chatbench::{AdapterUse, ChatSetup};
            let how = if unmerged { AdapterUse::Unmerged } else { AdapterUse::Merged };
            let setup = ChatSetup {
                model: Some(strata_models::chat_file_or_path(model.as_deref())?),
                adapter: adapter.map(|a| (a, how)),
            };
            out.chat_bench(&strata_bench::chatbench::run(tokens, &setup)?)
        }
        BenchCommand::Agents { tasks, model, out: file } => agents_bench(tasks, model, file, out),
        BenchCommand::Answers {
            budget,
            data,
            max_tokens,
            system,
            layout,
            model,
            limit,
            fill,
            turns,
            out: file,
            adapter,
        } => answers_bench(
            AnswersArgs { budget, data, max_tokens, system, layout, model, limit, fill, turns, file, adapter },
            out,
        ),
        BenchCommand::Compaction { data, sizes, writer, conversations } => {
            compaction_bench(&data, sizes, writer, conversations, out)
        }
        BenchCommand::Analytics { data, sizes, keep } => {
            let embedder = Arc::new(strata_models::MiniLm::load_default()?);
            let work = tempfile::tempdir()?;
            let dir = match &keep {
                Some(dir) => {
                    std::fs::create_dir_all(dir)?;
                    dir.as_path()
                }
                None => work.path(),
            };
            out.analytics_bench(&strata_bench::analyticsbench::run(&data, dir, embedder, &sizes)?)
        }
        BenchCommand::Training { data, size, model } => training_bench(&data, size, model.as_deref(), out),
        BenchCommand::Adapters { model, curator: Some(facts), .. } => {
            let chat = crate::train::chat(model.as_deref())?;
            let work = tempfile::tempdir()?;
            let config = strata_train::TrainConfig::default();
            let report = strata_bench::adaptersbench::curator(work.path(), &chat, facts, &config)?;
            say!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        BenchCommand::Adapters { topics, model, choose_only, .. } => {
            let embedder: Arc<dyn strata_core::Embedder> = Arc::new(strata_models::MiniLm::load_default()?);
            let chat = match choose_only {
                true => None,
                false => Some(crate::train::chat(model.as_deref())?),
            };
            let work = tempfile::tempdir()?;
            let config = strata_train::TrainConfig::default();
            let report = strata_bench::adaptersbench::run(work.path(), embedder, chat.as_ref(), topics, &config)?;
            say!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        BenchCommand::Datasets { csv, pdf, chatgpt, search_rows, postgres } => {
            let embedder = Arc::new(strata_models::MiniLm::load_default()?);
            let work = tempfile::tempdir()?;
            let inputs = strata_bench::datasetbench::Inputs {
                csv: csv.as_deref(),
                pdf: pdf.as_deref(),
                chatgpt: chatgpt.as_deref(),
                search_rows,
                postgres: postgres.as_deref(),
            };
            out.datasets_bench(&strata_bench::datasetbench::run(work.path(), embedder, &inputs)?)
        }
        BenchCommand::Extract { data: Some(data), sessions, reference_facts: true, .. } => {
            reference_facts_bench(&data, sessions, out)
        }
        BenchCommand::Extract { data, sessions, updates, cases, samples, adapter, provider, .. } => {
            extract_bench(ExtractArgs { data, sessions, updates, cases, samples, adapter, provider }, out)
        }
        BenchCommand::ExtractAdapter { data, out: dir, rank, lr, epochs, batch } => {
            use strata_bench::extracttrain;
            // One example at a time, gradients summed over `batch`: extraction's prompts are
            // long, and a micro-batch of four of them took more than 24 GB.
            let config = bench_train_config(rank, lr, epochs, (1, batch), extracttrain::MAX_TOKENS)?;
            let chat = strata_models::LocalChat::load_trained()?;
            let work = tempfile::tempdir()?;
            let data = data.unwrap_or_else(extracttrain::data_file);
            let show = !out.json && std::io::stderr().is_terminal();
            let report = extracttrain::run(&data, work.path(), &chat, &config, &dir, &mut |s| {
                if show {
                    note!("{s}");
                }
            })?;
            out.extraction_training(&report)
        }
        BenchCommand::AnswerAdapter { data, out: dir, budget, rank, lr, epochs, batch } => {
            answer_adapter_bench(data, dir, budget, (rank, lr, epochs, batch), out)
        }
        BenchCommand::Embed { data, sentences, reference, onnx, sentence_transformers } => {
            embed_bench(&data, sentences, reference, onnx, sentence_transformers, out)
        }
    }
}

/// The chat model `provider` names (`on-device` loads the local model, with `adapter` when
/// one is active).
/// The settings of a benchmark's adapter training: alpha twice the rank, no replay, the batch as
/// (examples per micro-batch, micro-batches per optimizer step), checked.
fn bench_train_config(
    rank: usize,
    lr: f64,
    epochs: usize,
    (batch, accumulate): (usize, usize),
    max_tokens: usize,
) -> Result<strata_train::TrainConfig> {
    let config = strata_train::TrainConfig {
        rank,
        alpha: 2.0 * rank as f64,
        lr,
        epochs,
        batch,
        accumulate,
        replay: 0,
        max_tokens,
        ..strata_train::TrainConfig::default()
    };
    config.check()?;
    Ok(config)
}

/// `strata bench locomo`: each retrieval configuration on LoCoMo.
fn locomo_bench(data: &std::path::Path, only: &[String], postgres: Option<String>, out: &Out) -> Result<()> {
    let work = tempfile::tempdir()?;
    let stores = match postgres {
        Some(url) => locomo::Store::Postgres(url),
        None => locomo::Store::Files(work.path().to_path_buf()),
    };
    let model = Arc::new(strata_models::MiniLm::load_default()?);
    let hybrid =
        |options: HybridOptions| -> Box<locomo::Retriever<'_>> { Box::new(locomo::ranked(Ranking::Hybrid(options))) };
    let mut configs: Vec<(&str, Box<locomo::Retriever<'_>>)> = vec![
        ("bm25", Box::new(locomo::ranked(Ranking::Keyword))),
        ("vector", Box::new(locomo::ranked(Ranking::Meaning))),
        ("hybrid_rrf", hybrid(HybridOptions::rrf())),
        ("hybrid", hybrid(HybridOptions::hybrid())),
        ("hybrid_time_filter", hybrid(HybridOptions { time: TimeUse::Filter, ..HybridOptions::hybrid() })),
        ("hybrid_no_time", hybrid(HybridOptions { time: TimeUse::Ignore, ..HybridOptions::hybrid() })),
        ("hybrid_rerank", hybrid(HybridOptions::hybrid_rerank())),
    ];
    let known: Vec<&str> = configs.iter().map(|(n, _)| *n).collect();
    if let Some(bad) = only.iter().find(|n| !known.contains(&n.as_str())) {
        bail!("unknown configuration '{bad}' (expected one of {})", known.join(", "));
    }
    configs.retain(|(n, _)| only.is_empty() || *n == "hybrid_rerank" || only.iter().any(|o| o == n));
    let mut candidates = locomo::candidates(HybridOptions::hybrid_rerank());
    let report = locomo::run(data, &stores, Some(model.clone()), &mut configs, "hybrid_rerank", Some(&mut candidates))?;
    out.locomo(&report)
}

/// `strata bench answers`'s options.
struct AnswersArgs {
    budget: Vec<String>,
    data: Option<PathBuf>,
    max_tokens: u32,
    system: Option<String>,
    layout: String,
    model: Option<String>,
    limit: Option<usize>,
    fill: Option<usize>,
    turns: Option<PathBuf>,
    file: Option<PathBuf>,
    adapter: Option<PathBuf>,
}

/// `strata bench answers`: the on-device model's answers over memories, judged.
fn answers_bench(a: AnswersArgs, out: &Out) -> Result<()> {
    let AnswersArgs { budget, data, max_tokens, system, layout, model, limit, fill, turns, file, adapter } = a;
    use strata_bench::answerbench;
    let budgets = budget
        .iter()
        .map(|b| match b.trim() {
            "default" => Ok(None),
            n => n.parse::<usize>().map(Some).with_context(|| format!("not a budget: '{n}'")),
        })
        .collect::<Result<Vec<_>>>()?;
    let layout: answerbench::Layout = layout.parse().map_err(anyhow::Error::msg)?;
    let file_of_model = strata_models::chat_file_or_path(model.as_deref())?;
    let chat = match &adapter {
        Some(dir) => {
            let shape = strata_models::LocalChat::load(&file_of_model)?.shape();
            let adapter = strata_models::Adapter::load(dir, &shape)?;
            strata_models::LocalChat::load_with(&file_of_model, Some(&adapter))?
        }
        None => strata_models::LocalChat::load(&file_of_model)?,
    };
    let embedder = Arc::new(strata_models::MiniLm::load_default()?);
    let work = tempfile::tempdir()?;
    let filler = match (fill, &turns) {
        (Some(n), Some(file)) => Some((strata_bench::locomo::texts(file)?.0, n)),
        _ => None,
    };
    let opts = answerbench::Options { budgets, max_tokens, system, layout, limit, filler };
    let data = data.unwrap_or_else(answerbench::data_dir);
    let show = !out.json && std::io::stderr().is_terminal();
    let report = answerbench::run(&data, work.path(), embedder, &chat, &opts, &mut |s| {
        if show {
            note!("{s}");
        }
    })?;
    if let Some(file) = file {
        let json = serde_json::to_vec_pretty(&report)?;
        strata_core::files::write_bytes(&file, &json)?;
    }
    out.answer_bench(&report)
}

/// `strata bench compaction`: grouping into concepts, its quality and its cost at scale.
fn compaction_bench(
    data: &std::path::Path,
    sizes: Vec<usize>,
    writer: Option<String>,
    conversations: Option<usize>,
    out: &Out,
) -> Result<()> {
    let embedder = Arc::new(strata_models::MiniLm::load_default()?);
    let work = tempfile::tempdir()?;
    let show = !out.json && std::io::stderr().is_terminal();
    let writer = match writer {
        Some(name) => Some(strata_models::LocalChat::load(&strata_models::chat_file_or_path(Some(&name))?)?),
        None => None,
    };
    let writing = strata_bench::compactbench::Writing {
        writer: writer.as_ref().map(|w| w as &dyn strata_core::chat::ChatModel),
        conversations,
    };
    let mut report = strata_bench::compactbench::run(data, work.path(), embedder.clone(), writing, &mut |s| {
        if show {
            note!("{s}");
        }
    })?;
    for size in sizes {
        let scale = strata_bench::compactbench::scale(data, work.path(), embedder.clone(), size)?;
        if show {
            note!("{size} memories compacted in {:.1} s", scale.full_seconds);
        }
        report.scale.push(scale);
    }
    out.compaction_bench(&report)
}

/// `strata bench training`: training beside search in a store of `size` memories.
fn training_bench(data: &std::path::Path, size: usize, model: Option<&str>, out: &Out) -> Result<()> {
    let embedder = Arc::new(strata_models::MiniLm::load_default()?);
    let work = tempfile::tempdir()?;
    let r = strata_bench::trainbench::run(data, work.path(), embedder, size, model)?;
    if out.json {
        say!("{}", serde_json::to_string(&r)?);
    } else {
        say!(
            "{} facts trained into {} and evaluated in {:.0} s (the set {:.0} s, training {:.0} s, saving and \
             evaluating {:.0} s) in a store of {} memories; gate {} (held-out recall {:.0}%, without the \
             adapter {:.0}%, the fact in the prompt {:.0}%).\nSearch p50 / p95: alone {:.1} / {:.1} ms ({} searches), while \
             training {:.1} / {:.1} ms ({} searches).",
            r.facts,
            r.model,
            r.run_seconds,
            r.set_seconds,
            r.train_seconds,
            r.evaluation_seconds,
            r.memories,
            if r.passed { "passed" } else { "failed" },
            r.recall_with_adapter * 100.0,
            r.recall_without * 100.0,
            r.recall_with_retrieval * 100.0,
            r.search_alone.p50_ms,
            r.search_alone.p95_ms,
            r.searches_alone,
            r.search_while_training.p50_ms,
            r.search_while_training.p95_ms,
            r.searches_while_training
        );
    }
    Ok(())
}

/// `strata bench embed`: the embedder against its references.
fn embed_bench(
    data: &std::path::Path,
    sentences: usize,
    reference: Option<PathBuf>,
    onnx: Vec<PathBuf>,
    sentence_transformers: bool,
    out: &Out,
) -> Result<()> {
    let (turns, questions) = locomo::texts(data)?;
    let texts: Vec<&str> = turns.iter().take(sentences).map(String::as_str).collect();
    let queries: Vec<&str> = questions.iter().take(200).map(String::as_str).collect();
    let words = texts.iter().map(|t| t.split_whitespace().count()).sum::<usize>();
    let started = std::time::Instant::now();
    let model = strata_models::MiniLm::load_default()?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let ours = format!("Strata MiniLm ({}), loaded in {load_ms:.0} ms", model.engine());
    let mut runs = vec![strata_bench::embedbench::measure(&model, &ours, &texts, &queries)?];
    if let Some(python) = reference {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/embed_reference.py");
        let dir = strata_models::models_dir().join(strata_models::EMBEDDER_DIR);
        let vectors = strata_bench::embedbench::vectors(&model, &texts)?;
        // sentence-transformers unless only ONNX files were asked for, then each file.
        let engines = (onnx.is_empty() || sentence_transformers).then_some(None);
        for file in engines.into_iter().chain(onnx.iter().map(|f| Some(f.as_path()))) {
            runs.push(strata_bench::embedbench::reference(&python, &script, &dir, file, &texts, &queries, &vectors)?);
        }
    }
    out.embed_bench(&strata_bench::embedbench::EmbedReport {
        sentences: texts.len(),
        mean_words: (words as f64 / texts.len().max(1) as f64 * 10.0).round() / 10.0,
        queries: queries.len(),
        runs,
    })
}

/// `strata bench extract`'s options.
struct ExtractArgs {
    data: Option<PathBuf>,
    sessions: usize,
    updates: Option<String>,
    cases: Option<usize>,
    samples: Option<PathBuf>,
    adapter: Option<PathBuf>,
    provider: crate::args::ProviderArgs,
}

/// `strata bench extract`: extraction's quality and cost on LoCoMo and the update set.
fn extract_bench(b: ExtractArgs, out: &Out) -> Result<()> {
    use crate::commands::open_chat;
    let ExtractArgs { data, sessions, updates, cases, samples, adapter, provider } = b;
    use strata_bench::extractbench;
    // Adapters are trained on the model strata-train trains, and run on it.
    let adapter = adapter.map(|dir| {
        let id = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let base_model = strata_models::TRAINED_MODEL.into();
        let adapters = vec![strata_models::AdapterInUse { dir, id, base_model, keys: vec![] }];
        strata_models::InUse { adapters, embedder: None }
    });
    let model = open_chat(provider, adapter)?;
    let work = tempfile::tempdir()?;
    let show = !out.json && std::io::stderr().is_terminal();
    let mut progress = |s: &str| {
        if show {
            note!("{s}");
        }
    };
    let mut report = extractbench::ExtractBenchReport {
        model: format!("{}/{}", model.provider(), model.model()),
        ..Default::default()
    };
    if let Some(data) = data {
        let embedder = Arc::new(strata_models::MiniLm::load_default()?);
        report.locomo = Some(extractbench::run_locomo(
            &data,
            sessions,
            work.path(),
            model.as_ref(),
            embedder,
            samples.as_deref(),
            &mut progress,
        )?);
    }
    if updates.as_deref() != Some("none") {
        let file = updates.map(PathBuf::from).unwrap_or_else(extractbench::updates_file);
        let mut all = extractbench::read_updates(&file)?;
        all.truncate(cases.unwrap_or(usize::MAX));
        report.updates = Some(extractbench::run_updates(&all, work.path(), model.as_ref(), &mut progress)?);
    }
    out.extraction_bench(&report)
}

/// `strata bench extract --reference-facts`: LoCoMo's own observations as the facts.
fn reference_facts_bench(data: &std::path::Path, sessions: usize, out: &Out) -> Result<()> {
    let embedder = Arc::new(strata_models::MiniLm::load_default()?);
    let work = tempfile::tempdir()?;
    let show = !out.json && std::io::stderr().is_terminal();
    let reference = strata_bench::extractbench::run_reference(data, sessions, work.path(), embedder, &mut |s| {
        if show {
            note!("{s}");
        }
    })?;
    let report = strata_bench::extractbench::ExtractBenchReport {
        model: "LoCoMo's observations".into(),
        reference: Some(reference),
        ..Default::default()
    };
    out.extraction_bench(&report)
}

/// `strata bench answer-adapter`: an adapter trained to answer from memories, and its report.
fn answer_adapter_bench(
    data: Option<PathBuf>,
    dir: PathBuf,
    budget: Option<usize>,
    train: (usize, f64, usize, usize),
    out: &Out,
) -> Result<()> {
    let (rank, lr, epochs, batch) = train;
    use strata_bench::answertrain;
    let config = bench_train_config(rank, lr, epochs, (batch, 1), answertrain::MAX_TOKENS)?;
    let chat = strata_models::LocalChat::load_trained()?;
    let embedder = Arc::new(strata_models::MiniLm::load_default()?);
    let work = tempfile::tempdir()?;
    let data = data.unwrap_or_else(answertrain::data_dir);
    let show = !out.json && std::io::stderr().is_terminal();
    let report = answertrain::run(&data, work.path(), embedder, &chat, budget, &config, &dir, &mut |s| {
        if show {
            note!("{s}");
        }
    })?;
    out.answer_training(&report)
}

/// `strata bench agents`.
fn agents_bench(tasks: Option<PathBuf>, model: Option<String>, file: Option<PathBuf>, out: &Out) -> Result<()> {
    use strata_bench::{agentbench, answerbench};
    let spec = strata_api::agents::AgentSpec { model, ..Default::default() };
    let agent = strata_api::agents::Agent {
        name: "bench".into(),
        user_id: String::new(),
        spec,
        version: 1,
        created_at: chrono::Utc::now(),
        updated_at: chrono::Utc::now(),
    };
    let model = crate::agents::model_for(&agent).map_err(anyhow::Error::msg)?;
    let embedder = Arc::new(strata_models::MiniLm::load_default()?);
    let work = tempfile::tempdir()?;
    let tasks = tasks.unwrap_or_else(|| answerbench::data_dir().join("../agents/tasks.json"));
    let memories = answerbench::data_dir().join("memories.json");
    let show = !out.json;
    let report = agentbench::run(&tasks, &memories, work.path(), embedder, model, &mut |t| {
        if show {
            let how = if t.success { "ok".to_string() } else { t.missed.join("; ") };
            note!("{} {} ({} model calls, {} s): {how}", t.id, t.kind, t.model_calls, t.seconds);
        }
    })?;
    if let Some(file) = file {
        strata_core::files::write_bytes(&file, &serde_json::to_vec_pretty(&report)?)?;
    }
    if out.json {
        say!("{}", crate::terminal::json(&report)?);
        return Ok(());
    }
    say!("{}", report.model);
    for (kind, (rate, calls)) in &report.by_kind {
        say!("{kind}: {rate:.2} of tasks, {calls:.1} model calls on average");
    }
    Ok(())
}
