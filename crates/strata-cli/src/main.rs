//! The `strata` binary: parse arguments, open the engine, run one command, print the result.
//! Errors are one line on stderr and a non-zero exit, never a panic or a backtrace.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `eprintln!` made safe for a terminal ([`terminal::to_stderr`]) that never panics: with
/// standard error closed (`2>&-`, or a pipe whose reader went away) the message is lost, not
/// the command.
macro_rules! note {
    () => {{
        crate::terminal::to_stderr("\n");
    }};
    ($($arg:tt)*) => {{
        crate::terminal::to_stderr(&format!("{}\n", format_args!($($arg)*)));
    }};
}

/// `println!` to [`terminal::Stdout`] (made safe for a terminal, quiet when the reader of a
/// pipe went away), returning I/O errors with `?` instead of panicking: every result goes out
/// through it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(crate::terminal::Stdout, $($arg)*)?
    }};
}

/// [`note!`] without the line break (progress lines that rewrite themselves with a leading
/// carriage return).
macro_rules! note_part {
    ($($arg:tt)*) => {{
        crate::terminal::to_stderr(&format!($($arg)*));
    }};
}

mod agent_runs;
mod agents;
mod args;
mod bench;
mod commands;
mod concepts;
mod curation;
mod datasets;
mod extract;
mod mcp_servers;
mod migrate;
mod models;
mod people;
mod plugins;
mod render;
mod requests;
mod runs;
mod schedule;
mod terminal;
mod train;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Training multiplies large matrices: candle's products get every core there (inference
    // keeps them at one, see tune_process). Set before any thread starts.
    if std::env::args_os().skip(1).any(|a| a == "train") {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).to_string();
        for var in ["RAYON_NUM_THREADS", "CANDLE_NUM_THREADS"] {
            if std::env::var_os(var).is_none() {
                // SAFETY: first thing in main, before any other thread exists.
                #[allow(unsafe_code)]
                unsafe {
                    std::env::set_var(var, &cores)
                };
            }
        }
    }
    strata_models::tune_process();
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version, as clap words them, made safe like every other output.
            use std::io::Write as _;
            let _ = write!(terminal::Stdout, "{}", e.render());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            note!("error: {} (see `strata --help`)", strata_core::error::bounded(&one_line(&e)));
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("STRATA_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(|| terminal::Stderr)
        .with_ansi(false)
        .without_time()
        .init();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Errors may quote what was typed or stored: each value cut to an excerpt.
            let chain: Vec<String> = e.chain().map(|c| strata_core::error::bounded(&c.to_string())).collect();
            note!("error: {}", chain.join(": "));
            ExitCode::from(1)
        }
    }
}

/// A clap error in one line, like every other error (`strata help` shows the full usage): its
/// first line, with what clap lists indented under it ("not provided:\n  --allow-remote").
fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid arguments").trim_start_matches("error: ");
    let listed: Vec<&str> = lines.take_while(|l| l.starts_with("  ")).map(str::trim).collect();
    [first].into_iter().chain(listed).collect::<Vec<_>>().join(" ")
}
