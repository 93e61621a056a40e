//! End-to-end tests of the `strata` binary on real database files: what a user types, what
//! they see, and what scripts get with `--json`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use expect_test::expect;
use serde_json::Value;

mod agents;
mod analytics;
mod bench;
mod concepts;
mod datasets;
mod extraction;
mod hardening;
mod history;
mod mcp;
mod mcp_servers;
mod plugins;
mod postgres;
mod providers;
mod schedule;
mod servers;
mod surfaces;
mod team;
mod train;

use servers::{Server, python, spawn_server};

/// The `strata` program, with settings of its own: extraction after exchanges off, so no test
/// starts a background `strata extract` (nor calls a loopback model once more) unless it asks
/// to (`extraction.rs` does).
fn strata() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_SETTINGS", test_settings());
    // No MCP servers unless a test adds some (in its own folder: `Env::mcp_config`).
    cmd.env("STRATA_MCP_CONFIG", test_settings().with_file_name("mcp.json"));
    cmd
}

/// The settings file every `strata` a test starts reads (see [`strata`]).
fn test_settings() -> PathBuf {
    static SETTINGS: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = SETTINGS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("settings.json"), r#"{"extraction": {"after_exchanges": false}}"#).unwrap();
        dir
    });
    dir.path().join("settings.json")
}

struct Env {
    dir: tempfile::TempDir,
    /// The store, when not the file in `dir`: a fresh database of the test PostgreSQL server.
    store: Option<PathBuf>,
    /// A settings file of this environment's own, when a test changes settings (its plugins,
    /// the embedder in use) that other tests must not see.
    settings: Option<PathBuf>,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap(), store: None, settings: None }
    }

    /// An environment whose store is a fresh database of the test PostgreSQL server.
    fn postgres() -> Env {
        Env { store: Some(PathBuf::from(postgres::server::fresh_database())), ..Env::new() }
    }

    /// An environment with settings of its own (a copy of the tests' settings).
    fn own_settings() -> Env {
        let e = Env::new();
        let path = e.dir.path().join("settings.json");
        std::fs::copy(test_settings(), &path).unwrap();
        Env { settings: Some(path), ..e }
    }

    /// This environment's MCP servers file.
    fn mcp_config(&self) -> PathBuf {
        self.dir.path().join("mcp.json")
    }

    fn db(&self) -> PathBuf {
        self.store.clone().unwrap_or_else(|| self.dir.path().join("strata.db"))
    }

    fn run_with(&self, args: &[&str], db: &Path, stdin: Option<&str>) -> Run {
        self.run_at(args, db, stdin, "2026-01-31T12:00:00Z")
    }

    fn run_at(&self, args: &[&str], db: &Path, stdin: Option<&str>, now: &str) -> Run {
        let mut cmd = crate::strata();
        if let Some(settings) = &self.settings {
            cmd.env("STRATA_SETTINGS", settings);
        }
        let mut child = cmd
            .args(args)
            .env("STRATA_DB", db)
            .env("STRATA_NOW", now)
            .env("STRATA_MCP_CONFIG", self.mcp_config())
            .env_remove("STRATA_USER")
            .env_remove("RUST_BACKTRACE")
            .env_remove("STRATA_BUDGET_CAP")
            .env_remove("STRATA_CATALOGUE")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(s) = stdin {
            child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &self.db(), None)
    }

    /// Runs and expects success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let r = self.run(args);
        assert_eq!(r.code, 0, "strata {args:?} failed: {}", r.stderr);
        r.stdout
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// Runs and expects a clean failure; returns the one-line error.
    fn err(&self, args: &[&str]) -> String {
        self.err_with(args, &self.db(), None)
    }

    fn err_with(&self, args: &[&str], db: &Path, stdin: Option<&str>) -> String {
        let r = self.run_with(args, db, stdin);
        assert_eq!(r.code, 1, "strata {args:?} should fail; stdout: {}", r.stdout);
        assert!(!r.stderr.contains("panicked") && !r.stderr.contains("backtrace"), "{}", r.stderr);
        assert_eq!(r.stderr.trim_end().lines().count(), 1, "one line: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
        r.stderr.trim_end().to_string()
    }
}

/// Replaces ULIDs so snapshots do not depend on random bits.
fn redact_ids(s: &str) -> String {
    s.split_inclusive(|c: char| !c.is_ascii_alphanumeric())
        .map(|w| {
            let core = w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
            if core.len() == 26
                && core.starts_with('0')
                && core.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
            {
                w.replacen(core, "<ID>", 1)
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// `list` sorts by when memories happened or were last recalled, narrows to where they came
/// from, and reads dates in words; `--until` includes the day it names.
#[test]
fn list_sorts_filters_by_origin_and_reads_times_in_words() {
    let e = Env::new();
    e.ok(&["demo"]);
    e.ok(&["add", "semantic", "pixel", "--fact", "colour=grey"]);
    let keys = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["key"].as_str().or(m["name"].as_str()).unwrap_or("episode").to_string())
            .collect()
    };
    assert_eq!(keys(&e.json(&["list", "--from", "person"])), ["pixel"]);
    assert_eq!(e.json(&["list", "--from", "imported"])["items"].as_array().unwrap().len(), 8, "the examples");
    assert!(e.json(&["list", "--from", "conversation"])["items"].as_array().unwrap().is_empty());
    let by_time = e.json(&["list", "--order", "occurred", "--type", "episodic"]);
    let times: Vec<&str> =
        by_time["items"].as_array().unwrap().iter().map(|m| m["occurred_at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "latest first: {times:?}");
    let in_july = e.json(&["list", "--type", "episodic", "--since", "in July 2023", "--until", "in July 2023"]);
    assert_eq!(in_july["items"].as_array().unwrap().len(), 2, "the two Napoleon exchanges of 15 July 2023");
    let on_the_day = e.json(&["list", "--type", "episodic", "--since", "2023-07-15", "--until", "2023-07-15"]);
    assert_eq!(on_the_day["items"].as_array().unwrap().len(), 2, "--until includes its day");
    e.ok(&["recall", "Napoleon"]);
    let recalled = e.json(&["list", "--order", "recalled", "--limit", "1"]);
    assert!(recalled["items"][0]["access_count"].as_u64().unwrap_or(0) > 0, "{recalled}");
    let err = e.err_with(&["list", "--since", "soonish"], &e.db(), None);
    assert!(err.contains("not a time I understand") && err.contains("last Saturday"), "{err}");
}

#[test]
fn demo_then_list_shows_every_type_and_json_has_the_promised_fields() {
    let e = Env::new();
    assert!(e.ok(&["demo"]).starts_with("Added 3 semantic, 3 episodic and 2 procedural"));
    assert!(e.ok(&["demo"]).contains("already here"), "demo runs once");
    let page = e.json(&["list", "--limit", "100"]);
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 8);
    for m in items {
        for field in ["id", "type", "tier", "tags", "created_at"] {
            assert!(m.get(field).is_some(), "{field} missing in {m}");
        }
        match m["type"].as_str().unwrap() {
            "semantic" => assert!(m["key"].is_string() && m["facts"].is_object()),
            "episodic" => assert!(m["occurred_at"].is_string() && m["body"].is_object()),
            "procedural" => assert!(m["name"].is_string() && m["steps"].is_array()),
            other => panic!("unknown type {other}"),
        }
    }
}

#[test]
fn add_get_update_history_and_as_of() {
    let e = Env::new();
    let m = e.json(&["add", "semantic", "tea", "--fact", "likes=green", "--fact", "cups=3", "--tag", "drinks"]);
    assert_eq!(m["facts"], serde_json::json!({"likes": "green", "cups": 3}));
    assert_eq!(m["tier"], "medium");
    let id = m["id"].as_str().unwrap().to_string();
    e.json(&["add", "episodic", "--speaker", "Mel", "--text", "I ran a charity race", "--at", "2023-05-20T10:00Z"]);
    e.json(&[
        "add",
        "procedural",
        "brew",
        "--step",
        "boil water",
        "--step",
        "steep 3 minutes",
        "--context",
        "mornings",
    ]);

    let got = e.json(&["get", "tea"]);
    assert_eq!(got["id"].as_str(), Some(id.as_str()));
    e.ok(&["update", "tea", "--fact", "likes=oolong", "--unset-fact", "cups", "--importance", "0.9"]);
    e.ok(&["tag", &id, "favourite"]);
    let hist = e.json(&["history", "tea"]);
    let types: Vec<&str> = hist.as_array().unwrap().iter().map(|h| h["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["semantic_created", "accessed", "content_updated", "importance_changed", "tagged"]);
    let h = hist.as_array().unwrap();
    assert_eq!(h[2]["correlation_id"], h[3]["correlation_id"], "one update, one correlation id");
    assert_ne!(h[0]["correlation_id"], h[2]["correlation_id"]);
    let old = e.json(&["get", "tea", "--at-seq", "1"]);
    assert_eq!(old["facts"]["likes"], "green");
    let now = e.json(&["get", &id]);
    assert_eq!(now["facts"], serde_json::json!({"likes": "oolong"}));
    assert_eq!(now["tags"], serde_json::json!(["drinks", "favourite"]));
    assert_eq!(now["importance"], 0.9);

    let hits = e.json(&["search", "charity race"]);
    assert_eq!(hits[0]["memory"]["type"], "episodic");
    assert!(hits[0]["snippet"].as_str().unwrap().contains("**charity**"));
    let eps = e.json(&["list", "--type", "episodic", "--since", "2023-05-01", "--until", "2023-06-01"]);
    assert_eq!(eps["items"].as_array().unwrap().len(), 1);
}

#[test]
fn readable_output_snapshots() {
    let e = Env::new();
    e.ok(&[
        "add",
        "semantic",
        "napoleon_bonaparte",
        "--fact",
        "birth=1769, Corsica",
        "--fact",
        "achievements=[\"Napoleonic Code\"]",
    ]);
    e.ok(&["tag", "napoleon_bonaparte", "history"]);
    expect![[r#"
        id              <ID>
        type            semantic
        key             napoleon_bonaparte
          birth         1769, Corsica
          achievements  ["Napoleonic Code"]
        tier            medium
        tags            history
        importance      0.5
        scope           user default
        source          cli
        created         2026-01-31T12:00:00Z
        updated         2026-01-31T12:00:00Z
        version         2
        retrieved       0×
        pinned          no
        expired         -
    "#]]
    .assert_eq(&redact_ids(&e.ok(&["get", "napoleon_bonaparte"])));
    expect![[r#"
        SEQ  V  AT                    ACTOR       EVENT
        1    1  2026-01-31T12:00:00Z  user (cli)  created: napoleon bonaparte: birth: 1769, Corsica; achievements: Napoleonic Code
        2    2  2026-01-31T12:00:00Z  user (cli)  tagged 'history'
        3    3  2026-01-31T12:00:00Z  system      retrieved 1×
    "#]]
    .assert_eq(&e.ok(&["history", "napoleon_bonaparte"]));
}

#[test]
fn forget_confirms_and_really_forgets() {
    let e = Env::new();
    let m = e.json(&["add", "semantic", "diary", "--fact", "secret=quokkazanzibar"]);
    let id = m["id"].as_str().unwrap();
    let msg = e.err(&["forget", id]);
    assert!(msg.contains("pass --yes"), "{msg}");
    assert!(e.ok(&["forget", id, "--yes"]).contains("erased"));
    let msg = e.err(&["get", id]);
    assert!(msg.contains("was forgotten"), "{msg}");
    assert!(e.ok(&["search", "quokkazanzibar"]).contains("Nothing matches"));
    let bytes = std::fs::read(e.db()).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("quokkazanzibar"));
    assert!(
        !e.dir.path().join("strata.db-wal").exists() || {
            let wal = std::fs::read(e.dir.path().join("strata.db-wal")).unwrap();
            !String::from_utf8_lossy(&wal).contains("quokkazanzibar")
        }
    );
}

#[test]
fn importing_a_file_twice_stops_skips_or_merges() {
    let e = Env::new();
    let file = e.dir.path().join("notes.json");
    let name = file.to_str().unwrap();
    std::fs::write(&file, include_str!("../../../strata-core/tests/fixtures/seed-002.json")).unwrap();
    e.ok(&["import", name]);
    let err = e.err(&["import", name]);
    assert!(
        err.contains(&format!(
            "\u{201c}napoleon_bonaparte\u{201d} is already in your memories (line 3 of {name}); nothing was imported \
             (to import the rest, run again with --on-duplicate skip or merge)"
        )),
        "{err}"
    );
    let skipped = e.ok(&["import", name, "--on-duplicate", "skip"]);
    assert_eq!(skipped, format!("Imported {name}: 0 added, 6 skipped (already there).\n"));
    std::fs::write(&file, "{\"semantic\": {\"napoleon_bonaparte\": {\"height\": \"1.69 m\"}, \"new\": {\"x\": \"1\"}},\n \"procedural\": {\"evaluate_scientific_theory\": {\"steps\": [\"1. Identify the core principles\", \"2. Review the empirical evidence\", \"3. Examine predictions and confirmations\", \"4. Consider criticisms and limitations\", \"5. Assess historical and current relevance\"]}}}").unwrap();
    let merged = e.ok(&["import", name, "--on-duplicate", "merge"]);
    assert_eq!(merged, format!("Imported {name}: 1 added, 1 merged, 1 already there.\n"));
    let json = e.json(&["import", name, "--on-duplicate", "merge"]);
    assert_eq!(json["summary"]["unchanged"], serde_json::json!({"semantic": 2, "episodic": 0, "procedural": 1}));
}

#[test]
fn import_export_backup_and_replay() {
    let e = Env::new();
    let seed = e.dir.path().join("seed.json");
    std::fs::write(&seed, include_str!("../../../strata-core/tests/fixtures/seed-002.json")).unwrap();
    assert!(e.ok(&["import", seed.to_str().unwrap()]).contains(": 6 added."));
    let exported = e.ok(&["export"]);
    assert_eq!(exported, include_str!("../../../strata-core/tests/fixtures/seed-002.json"));

    let backup = e.dir.path().join("backup.jsonl");
    e.ok(&["export", "--format", "backup", "-o", backup.to_str().unwrap()]);
    let other = e.dir.path().join("restored.db");
    let r = e.run_with(&["import", backup.to_str().unwrap()], &other, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Restored the backup: 6 memories"), "{}", r.stdout);
    let a = e.json(&["list"]);
    let b: Value = serde_json::from_str(&e.run_with(&["list", "--json"], &other, None).stdout).unwrap();
    assert_eq!(a, b);
    let replay = e.json(&["replay"]);
    assert_eq!(replay["matched"], true);
    assert_eq!(replay["memories"], 6);

    let r = e.run_with(&["import", "-"], &other, Some("{\"semantic\": {\"k\": {\"v\": \"x\"}}}"));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn bad_input_is_one_clear_line_and_changes_nothing() {
    let e = Env::new();
    e.ok(&["demo"]);
    let before = e.json(&["stats"]);
    let bad = e.dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"semantic\": {\"a\": {\"x\": \"1\"}},\n \"episodic\": [{\"timestamp\": \"soon\", \"query\": \"q\"}]}",
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["import", bad.to_str().unwrap()], "bad.json:2: field `episodic[0].timestamp`"),
        (vec!["get", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], "no memory with id or key '01ARZ3NDEKTSV4RRFFQ69G5FAV'"),
        (vec!["get", "no_such_key"], "no memory with id or key 'no_such_key'"),
        (vec!["add", "semantic", "napoleon_bonaparte", "--fact", "a=b"], "already exists"),
        (vec!["add", "semantic", "x", "--fact", "a=b", "--importance", "2"], "importance must be between 0 and 1"),
        (vec!["add", "semantic", "x"], "give at least one --fact"),
        (
            vec!["update", "weekly_review", "--fact", "a=b"],
            "facts, text or query does not apply to a procedural memory",
        ),
        (vec!["update", "napoleon_bonaparte", "--fact", "a=b", "--expect-version", "9"], "conflict"),
        (vec!["get", "napoleon_bonaparte", "--as-of", "whenever"], "is not a time I understand"),
        (vec!["list", "--cursor", "zzz"], "not a cursor"),
        (vec!["import", "/nonexistent/file.json"], "cannot open /nonexistent/file.json"),
        (vec!["import", "--format", "backup", bad.to_str().unwrap()], "only be restored into an empty database"),
    ];
    for (args, want) in cases {
        let msg = e.err(&args);
        assert!(msg.contains(want), "strata {args:?}: {msg}\n   wanted: {want}");
    }
    assert_eq!(e.json(&["stats"])["memories"], before["memories"]);
}

/// Regression: data after a document was ignored (exit 0), a key given twice kept the last,
/// a 10 MB key was printed whole, and relations left out of a graph import were not listed.
#[test]
fn an_import_refuses_what_it_would_lose_and_lists_what_it_leaves_out() {
    let e = Env::new();
    let db = e.db();
    let cases = [
        (
            "{\"semantic\": {\"a\": {\"x\": \"1\"}}}\n{\"semantic\": {\"b\": {\"x\": \"1\"}}}",
            "<stdin>:2: there is more after the end of the document",
        ),
        (
            "{\"semantic\": {\"a\": {\"x\": \"1\"}, \"a\": {\"y\": \"2\"}}}",
            "<stdin>:1: field `semantic.a`: this key appears twice",
        ),
        ("{\"semantic\": {\"a\": {\"x\": \"1\"}}}\u{0}\u{0}", "<stdin>:1: there is more after the end of the document"),
    ];
    for (text, want) in cases {
        let msg = e.err_with(&["import", "-"], &db, Some(text));
        assert!(msg.starts_with(&format!("error: {want}")), "{msg}\n   wanted: {want}");
    }
    let huge = format!("{{\"semantic\": {{\"{}\": {{\"x\": \"1\"}}}}}}", "k".repeat(10 << 20));
    let msg = e.err_with(&["import", "-"], &db, Some(&huge));
    assert!(msg.len() < 300 && msg.contains("… (10485760 bytes)"), "{} bytes", msg.len());
    assert_eq!(e.json(&["stats"])["events"], 0, "nothing was imported");

    let graph = "{\"type\":\"entity\",\"name\":\"Ada\",\"entityType\":\"person\"}\n\
                 {\"type\":\"relation\",\"from\":\"Ada\",\"to\":\"Nowhere\",\"relationType\":\"knows\"}\n";
    let r = e.run_with(&["import", "-"], &db, Some(graph));
    assert_eq!(r.code, 0, "{}", r.stderr);
    expect![[r#"
        Imported the knowledge graph: 1 entities and relations created or extended.
        Skipped 1 relations whose ends are not both entities:
          Ada -[knows]-> Nowhere
    "#]]
    .assert_eq(&r.stdout);
}

#[test]
fn a_database_that_is_not_ours_is_refused_and_untouched() {
    let e = Env::new();
    let foreign = e.dir.path().join("photos.db");
    std::fs::write(&foreign, "SQLite format 3\0 but not really, just bytes ".repeat(100)).unwrap();
    let before = std::fs::read(&foreign).unwrap();
    let msg = e.err_with(&["list"], &foreign, None);
    assert!(msg.contains("is not a Strata database") && msg.contains("left untouched"), "{msg}");
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
}

/// On a terminal, forget asks; only "y" or "yes" forgets. Run under `script`, which gives the
/// command a pseudo-terminal, as a person at a shell would have.
#[test]
fn forget_on_a_terminal_asks_before_erasing() {
    let e = Env::new();
    let id = e.json(&["add", "semantic", "diary", "--fact", "entry=hello"])["id"].as_str().unwrap().to_string();
    let on_tty = |answer: &str| {
        let cmd = format!("'{}' forget {id}", env!("CARGO_BIN_EXE_strata"));
        let mut child = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("STRATA_DB", e.db())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("script(1) from util-linux");
        child.stdin.take().unwrap().write_all(answer.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = on_tty("n\n");
    assert!(said.contains("This cannot be undone. [y/N]") && said.contains("not forgotten"), "{said}");
    assert_eq!(e.json(&["get", &id])["facts"]["entry"], "hello");
    let said = on_tty("y\n");
    assert!(said.contains("its content was erased"), "{said}");
    assert!(e.err(&["get", &id]).contains("was forgotten"));
}

/// Regression: `strata list | head -1` must not panic when the reader closes the pipe.
#[test]
fn a_closed_pipe_is_not_a_panic() {
    let e = Env::new();
    // Far more output than a pipe buffers (64 KiB), so the writer meets the closed pipe.
    let concepts: serde_json::Map<String, Value> =
        (0..300).map(|i| (format!("k{i}"), serde_json::json!({"text": "word ".repeat(200)}))).collect();
    let doc = serde_json::json!({"semantic": concepts}).to_string();
    let r = e.run_with(&["import", "-"], &e.db(), Some(&doc));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bin = env!("CARGO_BIN_EXE_strata");
    for cmd in [format!("'{bin}' list --limit 1000 --json | head -c 10"), format!("'{bin}' export | head -c 10")] {
        let out = Command::new("bash").args(["-o", "pipefail", "-c", &cmd]).env("STRATA_DB", e.db()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{cmd}: {stderr}");
        assert!(out.status.success(), "{cmd}: {stderr}");
    }
}

#[test]
fn usage_errors_are_one_line_and_help_still_works() {
    let e = Env::new();
    let r = e.run(&["add", "semantic"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim_end().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("error: ") && r.stderr.contains("strata --help"), "{}", r.stderr);
    let r = e.run(&["--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Usage: strata"), "{}", r.stdout);
}

#[test]
fn db_flag_time_travel_and_types_for_shared_keys() {
    let e = Env::new();
    let db = e.dir.path().join("other.db");
    let db = db.to_str().unwrap();
    e.ok(&["--db", db, "add", "semantic", "brew", "--fact", "note=strong"]);
    e.ok(&["--db", db, "add", "procedural", "brew", "--step", "boil", "--step", "steep"]);
    assert!(e.json(&["list"])["items"].as_array().unwrap().is_empty(), "--db wins over STRATA_DB");
    let msg = e.err(&["--db", db, "tag", "brew", "x"]);
    assert!(msg.contains("several memories have the key 'brew'") && msg.contains("--type"), "{msg}");
    e.ok(&["--db", db, "tag", "brew", "--type", "procedural", "x"]);
    let p = e.json(&["--db", db, "get", "brew", "--type", "procedural"]);
    assert_eq!(p["tags"], serde_json::json!(["x"]));
    // --as-of at a time: STRATA_NOW is 12:00; the tag came later in the log but at the same
    // clock time, so ask by time before it and by sequence.
    let before = e.json(&["--db", db, "get", "brew", "--type", "procedural", "--as-of", "2026-01-31T12:00Z"]);
    assert_eq!(before["name"], "brew");
    let err = e.err(&["--db", db, "get", "brew", "--type", "semantic", "--as-of", "2026-01-31T11:59Z"]);
    assert!(err.contains("did not exist yet"), "{err}");
}

#[test]
fn pins_and_maintenance_move_tiers_and_expired_memories_hide() {
    let e = Env::new();
    for (i, importance) in ["0.9", "0.1"].iter().enumerate() {
        e.ok(&[
            "add",
            "episodic",
            "--speaker",
            "Mel",
            "--text",
            &format!("note {i}"),
            "--session",
            "s",
            "--importance",
            importance,
        ]);
    }
    let kept = e.json(&["add", "semantic", "sister", "--fact", "birthday=June"]);
    e.ok(&["pin", "sister"]);
    let later = |args: &[&str]| {
        let r = e.run_at(args, &e.db(), None, "2026-02-02T12:00:00Z");
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    let preview = later(&["maintain", "--dry-run"]);
    assert!(
        preview.contains("medium → long") && preview.contains("pinned") && preview.contains("nothing was changed"),
        "{preview}"
    );
    assert!(preview.contains("short → medium") && preview.contains("expire"), "{preview}");
    let moves: Value = serde_json::from_str(&later(&["maintain", "--json"])).unwrap();
    assert_eq!(moves.as_array().unwrap().len(), 3, "{moves}");
    assert!(later(&["maintain"]).contains("nothing to move"));
    assert_eq!(e.json(&["get", kept["id"].as_str().unwrap()])["tier"], "long");
    let visible = e.json(&["list", "--type", "episodic"]);
    assert_eq!(visible["items"].as_array().unwrap().len(), 1, "the unimportant note expired");
    let all = e.json(&["list", "--type", "episodic", "--expired"]);
    assert_eq!(all["items"].as_array().unwrap().len(), 2);
    let expired = all["items"].as_array().unwrap().iter().find(|m| m["expired_at"].is_string()).expect("one expired");
    assert_eq!(expired["body"]["text"], "note 1", "the unimportant one");
    assert!(e.ok(&["history", expired["id"].as_str().unwrap()]).contains("expired: left working memory"));
}

/// A failed `export -o` leaves neither a half file nor its temporary file behind.
#[test]
fn a_failed_export_leaves_no_files() {
    let e = Env::new();
    e.ok(&["demo"]);
    let target = e.dir.path().join("out");
    std::fs::create_dir(&target).unwrap(); // a directory cannot be replaced by the export
    let before: Vec<_> = std::fs::read_dir(e.dir.path()).unwrap().map(|d| d.unwrap().file_name()).collect();
    let msg = e.err(&["export", "-o", target.to_str().unwrap()]);
    assert!(msg.contains("is a folder, not a file"), "{msg}");
    let after: Vec<_> = std::fs::read_dir(e.dir.path()).unwrap().map(|d| d.unwrap().file_name()).collect();
    assert_eq!(before.len(), after.len(), "{after:?}");
    assert!(std::fs::read_dir(&target).unwrap().next().is_none());
}

/// `strata recall` embeds what is missing, fuses keywords and meaning, reads time words, and
/// shows why; `strata embed` is the resumable job on its own.
#[test]
fn recall_with_the_on_device_model_says_why() {
    let e = Env::new();
    for (text, at) in [
        ("I ran a charity race for mental health", "2025-05-20T10:00Z"),
        ("We adopted a puppy called Oscar", "2025-06-02T10:00Z"),
    ] {
        e.json(&["add", "episodic", "--speaker", "Mel", "--text", text, "--at", at]);
    }
    e.json(&["add", "semantic", "diet", "--fact", "avoids=shellfish"]);
    let job = e.json(&["embed"]);
    assert_eq!((job["done"].as_u64(), job["total"].as_u64()), (Some(3), Some(3)));
    assert_eq!(e.json(&["embed"])["total"], 0, "nothing left the second time");

    // Meaning alone: no word of the query is in the memory.
    let got = e.json(&["recall", "which dog did we get", "--limit", "3"]);
    assert!(got[0]["memory"]["body"]["text"].as_str().unwrap().contains("puppy"), "{got}");
    assert!(got[0]["why"]["similarity"].as_f64().unwrap() > 0.3);
    assert_eq!(got[0]["why"]["keyword_rank"], Value::Null);
    // A time phrase boosts what happened then.
    let got = e.json(&["recall", "what did Mel do in May 2025", "--limit", "3"]);
    assert_eq!(got[0]["why"]["time_phrase"], "in May 2025", "{got}");
    assert!(got[0]["memory"]["body"]["text"].as_str().unwrap().contains("charity"));
    // The table shows the breakdown.
    let table = e.ok(&["recall", "shellfish", "--why"]);
    assert!(table.contains("SIMILARITY") && table.contains("RECENCY") && table.contains("diet"), "{table}");
}

/// Without a usable model, recall says so once and ranks by keywords; `strata embed` fails
/// with the way to fetch the model.
#[test]
fn recall_without_a_model_falls_back_to_keywords() {
    let e = Env::new();
    e.json(&["add", "semantic", "diet", "--fact", "avoids=shellfish"]);
    let empty = tempfile::tempdir().unwrap();
    let out = crate::strata()
        .args(["--db", e.db().to_str().unwrap(), "--json", "recall", "shellfish"])
        .env("STRATA_MODELS", empty.path())
        .env("STRATA_NOW", "2026-01-31T12:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("scripts/setup") && stderr.contains("Ranking by keywords only"), "{stderr}");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got[0]["memory"]["key"], "diet");
    assert_eq!(got[0]["why"]["similarity"], Value::Null);
    let out = crate::strata()
        .args(["--db", e.db().to_str().unwrap(), "embed"])
        .env("STRATA_MODELS", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/setup"));
}

/// `strata tokens count|split` for a model in the catalogue, an unknown one, and a Claude model
/// (a calibrated estimate, said to be approximate).
#[test]
fn tokens_are_counted_and_split_for_a_model() {
    let run = |args: &[&str], stdin: &str| {
        let mut child = crate::strata()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, _) =
        run(&["--json", "tokens", "count", "--model", "gpt-4o"], "Hello, Strata! How many tokens is this?");
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["tokenizer"].as_str(), v["exact"].as_bool(), v["tokens"].as_u64()),
        (Some("o200k_base"), Some(true), Some(11))
    );
    let (_, out, err) = run(&["--json", "tokens", "count", "--model", "my-own-model"], "Hello");
    assert!(err.contains("not in the model catalogue"), "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["exact"], false);
    let (code, out, _) =
        run(&["--json", "tokens", "split", "--model", "gpt-4", "--max", "2"], "one two three four five six");
    assert_eq!(code, Some(0));
    let pieces: Vec<String> = serde_json::from_str(&out).unwrap();
    assert_eq!(pieces.concat(), "one two three four five six");
    assert!(pieces.len() >= 3);
    let (code, out, _) =
        run(&["tokens", "count", "--model", "claude-sonnet-4"], "Hello, Strata! How many tokens is this?");
    assert_eq!(code, Some(0));
    assert!(out.contains("approximate"), "{out}");
    let (_, out, _) =
        run(&["--json", "tokens", "count", "--model", "claude-sonnet-4"], "Hello, Strata! How many tokens is this?");
    let v: Value = serde_json::from_str(&out).unwrap();
    // cl100k counts 11 here; the estimate scales by 1.1 and rounds up.
    assert_eq!((v["exact"].as_bool(), v["tokens"].as_u64()), (Some(false), Some(13)));
}

/// `strata context`: the prompt for a message within a budget, its report, the conversation
/// from a file, the model's tokenizer, and clear errors.
#[test]
fn context_builds_a_budgeted_prompt_with_its_report() {
    let e = Env::new();
    e.ok(&["demo"]);
    let history = e.dir.path().join("history.json");
    std::fs::write(
        &history,
        r#"[{"role": "user", "content": "Let's talk about history."}, {"role": "assistant", "content": "Gladly."}]"#,
    )
    .unwrap();
    let h = history.to_str().unwrap();
    let v = e.json(&[
        "context",
        "--model",
        "gpt-4o",
        "--query",
        "What did Napoleon achieve?",
        "--budget",
        "300",
        "--system",
        "Be brief.",
        "--history",
        h,
    ]);
    let r = &v["report"];
    assert_eq!(
        (r["budget"].as_u64(), r["tokenizer"].as_str(), r["exact"].as_bool()),
        (Some(300), Some("o200k_base"), Some(true))
    );
    let used = r["used"].as_u64().unwrap();
    assert!(used <= 300 && used > 100, "{r}");
    let sections: u64 = r["sections"].as_object().unwrap().values().map(|s| s["tokens"].as_u64().unwrap()).sum();
    assert_eq!(sections, used);
    assert!(r["included"].as_array().unwrap().iter().any(|d| d["section"] == "facts"), "{r}");
    assert_eq!(r["history"]["included"], 2);
    let messages = v["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"], "Be brief.");
    assert!(messages[1]["content"].as_str().unwrap().contains("<memories>\nFacts:\n[1] napoleon_bonaparte"));
    assert_eq!(messages.last().unwrap()["content"], "What did Napoleon achieve?");

    // A tight budget drops memories and says so; the table shows the sections.
    let v = e.json(&["context", "--model", "gpt-4o", "--query", "What did Napoleon achieve?", "--budget", "120"]);
    assert!(v["report"]["used"].as_u64().unwrap() <= 120);
    assert!(v["report"]["dropped"].as_array().unwrap().iter().any(|d| d["reason"] == "over_budget"), "{v}");
    let text = e.ok(&["context", "--model", "claude-sonnet-4-5", "--query", "Napoleon", "--placement", "tool_result"]);
    assert!(text.contains("approximate") && text.contains("SECTION") && text.contains("recall_memories"), "{text}");

    assert!(e.err(&["context", "--model", "gpt-4o", "--query", "x", "--budget", "5"]).contains("cannot hold"));
    // Without --budget: the model's window less its answer, capped by the user's setting.
    let capped = crate::strata()
        .args(["--json", "context", "--model", "gpt-4o", "--query", "Napoleon"])
        .env("STRATA_DB", e.db())
        .env("STRATA_BUDGET_CAP", "700")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&capped.stdout).unwrap();
    assert_eq!(v["report"]["budget"], 700);
    assert_eq!(e.json(&["context", "--model", "gpt-4o", "--query", "Napoleon"])["report"]["budget"], 128_000 - 16_384);
    std::fs::write(&history, "not json").unwrap();
    assert!(
        e.err(&["context", "--model", "gpt-4o", "--query", "x", "--history", h]).contains("not a list of messages")
    );
    assert!(
        e.err(&["context", "--model", "gpt-4o", "--query", "x", "--placement", "top"]).contains("unknown placement")
    );
}

/// A path below this crate's folder. The folder is read when the test runs (cargo sets
/// `CARGO_MANIFEST_DIR` for it), not baked in when it compiles: a build cache shared by
/// checkouts in different places otherwise hands one checkout another's paths.
fn in_crate(path: &str) -> String {
    format!("{}/{path}", std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
}
