//! End-to-end tests of the `strata` binary on real database files: what a user types, what
//! they see, and what scripts get with `--json`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use expect_test::expect;
use serde_json::Value;

mod analytics;
mod concepts;
mod extraction;
mod hardening;
mod mcp;
mod surfaces;
mod train;

/// The `strata` program, with settings of its own: extraction after exchanges off, so no test
/// starts a background `strata extract` (nor calls a loopback model once more) unless it asks
/// to (`extraction.rs` does).
fn strata() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_SETTINGS", test_settings());
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

/// Starts `strata ARGS` on `e`'s database and waits for the line of stderr that contains
/// `banner` and the server's `http://` address; returns the server and that address. The rest
/// of its stderr is drained so it never blocks on a full pipe.
fn spawn_server(e: &Env, args: &[&str], banner: &str) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut server = crate::strata()
        .args(args)
        .env("STRATA_DB", e.db())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains(banner) {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server stopped: {line}");
    }
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap().to_string();
    std::thread::spawn(move || for _ in stderr.lines() {});
    (server, url)
}

/// The Python with the official client SDKs (set up by scripts/setup).
fn python() -> PathBuf {
    let python = std::env::var_os("STRATA_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"));
        cache.join("strata/pyenv/bin/python")
    });
    assert!(python.exists(), "{} is missing: run scripts/setup", python.display());
    python
}

struct Env {
    dir: tempfile::TempDir,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("strata.db")
    }

    fn run_with(&self, args: &[&str], db: &Path, stdin: Option<&str>) -> Run {
        self.run_at(args, db, stdin, "2026-01-31T12:00:00Z")
    }

    fn run_at(&self, args: &[&str], db: &Path, stdin: Option<&str>, now: &str) -> Run {
        let mut child = crate::strata()
            .args(args)
            .env("STRATA_DB", db)
            .env("STRATA_NOW", now)
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

/// `strata bench locomo` runs on any file in the LoCoMo layout and reports the promised shape.
#[test]
fn locomo_bench_on_a_small_file_in_the_layout() {
    let e = Env::new();
    let data = &in_crate("tests/fixtures/locomo-tiny.json");
    let r = e.json(&["bench", "locomo", "--data", data]);
    assert_eq!(r["questions"], 3);
    assert_eq!(r["skipped"], 1, "the adversarial question names no turn");
    assert_eq!(r["evidence_repaired"], 2, "D1:02 and the ';'-joined pair");
    assert_eq!(r["default"], "hybrid_rerank");
    for config in ["bm25", "vector", "hybrid_rrf", "hybrid", "hybrid_rerank", "hybrid_time_filter", "hybrid_no_time"] {
        assert!(r["configs"][config]["recall_at"]["10"].is_number(), "{config} missing");
    }
    let bm25 = &r["configs"]["bm25"];
    for k in ["1", "5", "10", "20"] {
        assert!(bm25["recall_at"][k].is_number() && bm25["recall_at_excl_adversarial"][k].is_number());
    }
    // Every answer is findable in five turns by its words.
    assert_eq!(bm25["recall_at"]["5"], 1.0);
    assert_eq!(bm25["by_category"]["4"]["5"], 1.0);
    assert_eq!(bm25["by_category"]["1"]["20"], 1.0, "both turns of the multi-hop question");
    assert!(bm25["p95_ms"].as_f64().unwrap() >= bm25["p50_ms"].as_f64().unwrap());
    // The product's configuration finds every answer in five as well.
    assert_eq!(r["configs"]["hybrid_rerank"]["recall_at"]["5"], 1.0);
    // Within a token budget: a tiny conversation fits whole in 500 tokens.
    for b in ["500", "1000", "2000"] {
        assert_eq!(r["budget_recall"][b], 1.0, "{}", r["budget_recall"]);
        assert_eq!(r["budget_recall_by_order"]["value_per_token"][b], 1.0);
        assert!(r["budget_tokens_used"][b].as_f64().unwrap() <= b.parse::<f64>().unwrap());
    }
    let only = e.json(&["bench", "locomo", "--data", data, "--configs", "bm25"]);
    let names: Vec<&String> = only["configs"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["bm25", "hybrid_rerank"], "the default always runs");
    assert!(e.err(&["bench", "locomo", "--data", data, "--configs", "nope"]).contains("unknown configuration 'nope'"));
    assert!(!e.db().exists(), "benchmarks never touch the user's database");
    // Token counting speed on the same file: both encodings, counts that add up.
    let t = e.json(&["bench", "tokens", "--data", data]);
    for enc in ["o200k_base", "cl100k_base"] {
        let f = &t["runs"][0]["encodings"][enc];
        assert!(f["short_tokens"].as_u64().unwrap() > 20 && f["short_tokens_per_s"].as_f64().unwrap() > 0.0, "{t}");
        assert!(f["long_tokens"].as_u64().unwrap() >= f["short_tokens"].as_u64().unwrap() - 1);
    }
    let msg = e.err(&["bench", "locomo", "--data", "/nonexistent.json"]);
    assert!(msg.contains("cannot read /nonexistent.json"), "{msg}");
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

/// `strata bench recall` and `strata bench embed` run on any LoCoMo-layout file.
#[test]
fn recall_and_embedding_benchmarks_report_their_shape() {
    let e = Env::new();
    let data = &in_crate("tests/fixtures/locomo-tiny.json");
    let r = e.json(&["bench", "recall", "--data", data, "--sizes", "5,40"]);
    assert_eq!(r["questions"], 4);
    let sizes = r["sizes"].as_array().unwrap();
    assert_eq!(sizes.iter().map(|s| s["memories"].as_u64().unwrap()).collect::<Vec<_>>(), vec![5, 40]);
    for s in sizes {
        for config in ["bm25", "vector", "hybrid_rerank"] {
            let l = &s["latency"][config];
            assert!(l["p95_ms"].as_f64().unwrap() >= l["p50_ms"].as_f64().unwrap(), "{config}: {l}");
        }
    }
    let r = e.json(&["bench", "embed", "--data", data, "--sentences", "5"]);
    assert_eq!((r["sentences"].as_u64(), r["queries"].as_u64()), (Some(5), Some(4)));
    let ours = &r["runs"][0];
    assert!(ours["implementation"].as_str().unwrap().starts_with("Strata MiniLm ("), "{ours}");
    for b in ["1", "16", "64"] {
        assert!(ours["per_second"][b].as_f64().unwrap() > 0.0);
    }
    assert!(!e.db().exists(), "benchmarks never touch the user's database");
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

/// `strata bench chat` loads the on-device chat model and reports its speed.
#[test]
fn the_chat_benchmark_reports_its_shape() {
    let e = Env::new();
    let r = e.json(&["bench", "chat", "--tokens", "4"]);
    assert!(r["load_ms"].as_f64().unwrap() > 0.0 && r["peak_mib"].as_f64().unwrap() > 0.0, "{r}");
    for run in r["runs"].as_array().unwrap() {
        assert!(run["prompt_tokens"].as_u64().unwrap() > 10, "{r}");
        assert!(run["generated_tokens"].as_u64().unwrap() <= 4);
        assert!(run["prompt_tokens_per_s"].as_f64().unwrap() > 0.0);
    }
}

/// `strata bench answers` asks the shipped questions through `ask` with the on-device model,
/// one run per budget, every answer judged and written with `--out`; the user's database is
/// not touched.
#[test]
fn the_answer_benchmark_reports_its_shape() {
    let e = Env::new();
    let out = e.dir.path().join("answers.json");
    let o = out.to_str().unwrap();
    let r = e.json(&["bench", "answers", "--budget", "300,default", "--limit", "2", "--max-tokens", "4", "--out", o]);
    assert_eq!(r["questions"], 2, "{r}");
    let runs = r["runs"].as_array().unwrap();
    assert_eq!((runs[0]["budget"].as_u64(), runs[1]["budget"].as_u64()), (Some(300), None));
    for run in runs {
        assert_eq!(run["answers"].as_array().unwrap().len(), 2);
        let overall = run["scores"].as_array().unwrap().last().unwrap();
        assert_eq!((overall["category"].as_str(), overall["questions"].as_u64()), (Some("overall"), Some(2)));
        assert!(run["first_token"]["mean_ms"].as_f64().unwrap() > 0.0, "{run}");
    }
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, r);
    assert!(e.err(&["bench", "answers", "--budget", "lots"]).contains("not a budget"));
    assert!(!e.db().exists(), "benchmarks never touch the user's database");
}

/// A request a loopback server saw: its head (request line and headers) and body.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// A loopback HTTP server answering every request with `reply(head, body)` = (status,
/// content type, body): a remote vendor API replayed.
fn loopback(reply: fn(&str, &str) -> (u16, &'static str, String)) -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Default::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        use std::io::{BufRead, Read};
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let (mut line, mut head, mut len) = (String::new(), String::new(), 0usize);
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim() != "" {
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                line.clear();
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body = String::from_utf8_lossy(&body).to_string();
            let (status, kind, answer) = reply(&head, &body);
            log.lock().unwrap().push((head, body));
            let mut out = stream;
            let _ = out.write_all(
                format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                )
                .as_bytes(),
            );
        }
    });
    (url, seen)
}

/// With an Anthropic key configured, `strata context` for a Claude model has the provider
/// count the final prompt (here a loopback server in Anthropic's shape); the key shows nowhere.
#[test]
fn context_for_claude_with_a_key_is_counted_by_the_provider() {
    let (url, seen) = loopback(|_, _| (200, "application/json", r#"{"input_tokens":150}"#.into()));
    let e = Env::new();
    e.ok(&["demo"]);
    let key = "sk-ant-PLANTED-KEY-42";
    let out = crate::strata()
        .args(["--json", "context", "--model", "claude-sonnet-4-5", "--query", "Napoleon", "--budget", "300"])
        .env("STRATA_DB", e.db())
        .env("ANTHROPIC_API_KEY", key)
        .env("ANTHROPIC_BASE_URL", &url)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["report"]["exact_used"], 150);
    assert_eq!(v["report"]["exact_counter"], "anthropic");
    assert!(!stdout.contains("PLANTED") && !stderr.contains("PLANTED"));
    let seen = seen.lock().unwrap().clone();
    assert!(seen[0].0.contains("POST /v1/messages/count_tokens") && seen[0].0.contains(key), "{seen:?}");
}

const OPENAI_STREAM: &str = include_str!("../../../strata-providers/tests/fixtures/openai/stream_text.sse");
const OPENAI_401: &str = include_str!("../../../strata-providers/tests/fixtures/openai/error_401.json");

/// `strata ask` with OpenAI (a loopback server replaying its stream): the memory goes into the
/// prompt, the answer streams to stdout, the exchange is remembered with provider and model; a
/// refused key is a clear error that records nothing and shows no key.
#[test]
fn ask_recalls_streams_and_remembers_the_exchange() {
    let e = Env::new();
    e.json(&["add", "semantic", "pixel", "--fact", "species=cat", "--fact", "colour=grey tabby"]);
    let (url, seen) = loopback(|_, _| (200, "text/event-stream", OPENAI_STREAM.into()));
    let key = "sk-test-PLANTED-0042";
    let ask = |url: &str, json: bool| {
        let mut args = vec!["ask", "What is Pixel like?", "--provider", "openai", "--model", "gpt-4o-mini"];
        if json {
            args.insert(0, "--json");
        }
        crate::strata()
            .args(&args)
            .env("STRATA_DB", e.db())
            .env("OPENAI_API_KEY", key)
            .env("OPENAI_BASE_URL", url)
            .output()
            .unwrap()
    };
    let out = ask(&url, false);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Pixel is a grey tabby.");
    assert!(stderr.contains("openai gpt-4o-mini: 1 memories") && stderr.contains("remembered as"), "{stderr}");
    let (_, body) = seen.lock().unwrap()[0].clone();
    let sent: Value = serde_json::from_str(&body).unwrap();
    assert!(
        sent["messages"][1]["content"].as_str().unwrap().contains("pixel: species: cat; colour: grey tabby"),
        "{sent}"
    );
    assert_eq!(sent["messages"].as_array().unwrap().last().unwrap()["content"], "What is Pixel like?");
    let v: Value = serde_json::from_slice(&ask(&url, true).stdout).unwrap();
    assert_eq!(
        (v["answer"].as_str(), v["usage"]["prompt_tokens"].as_u64()),
        (Some("Pixel is a grey tabby."), Some(57))
    );
    assert_eq!(v["context"]["report"]["included"][0]["section"], "facts");
    assert_eq!(
        (v["recorded"]["source"]["provider"].as_str(), v["recorded"]["source"]["model"].as_str()),
        (Some("openai"), Some("gpt-4o-mini"))
    );
    let episodes = e.json(&["list", "--type", "episodic"]);
    let items = episodes["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "both exchanges remembered");
    assert_eq!(items[0]["body"]["response"], "Pixel is a grey tabby.");

    // The key is in no byte of the database, an export, a backup or the debug log.
    let logged = crate::strata()
        .args(["ask", "Anything else?", "--provider", "openai"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", key)
        .env("OPENAI_BASE_URL", &url)
        .env("STRATA_LOG", "trace")
        .output()
        .unwrap();
    assert!(logged.status.success());
    let mut haystacks = vec![
        logged.stdout,
        logged.stderr,
        e.ok(&["export"]).into_bytes(),
        e.ok(&["export", "--format", "backup"]).into_bytes(),
    ];
    for suffix in ["", "-wal"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", e.db().display())) {
            haystacks.push(bytes);
        }
    }
    for h in &haystacks {
        assert!(!h.windows(key.len()).any(|w| w == key.as_bytes()), "the key leaked");
        assert!(!h.windows(7).any(|w| w == b"PLANTED"), "part of the key leaked");
    }

    // A refused key: a clear error, nothing remembered, no key shown.
    let (bad, _) = loopback(|_, _| (401, "application/json", OPENAI_401.into()));
    let out = ask(&bad, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("check the key") && !stderr.contains("PLANTED") && !stderr.contains("sk-test"), "{stderr}");
    assert_eq!(e.json(&["list", "--type", "episodic"])["items"].as_array().unwrap().len(), 3);
}

const OLLAMA_STREAM: &str = include_str!("../../../strata-providers/tests/fixtures/ollama/chat_stream.ndjson");

/// `strata chat`: a conversation on standard input; `/provider` switches mid-conversation and
/// the second provider sees what the first was told; `/memories` shows what went in.
#[test]
fn chat_switches_providers_and_keeps_the_conversation() {
    let e = Env::new();
    e.json(&["add", "semantic", "pixel", "--fact", "species=cat"]);
    let (openai, _) = loopback(|_, _| (200, "text/event-stream", OPENAI_STREAM.into()));
    let (ollama, ollama_seen) = loopback(|_, _| (200, "application/x-ndjson", OLLAMA_STREAM.into()));
    let mut child = crate::strata()
        .args(["chat", "--provider", "openai", "--model", "gpt-4o-mini"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", &openai)
        .env("OLLAMA_HOST", &ollama)
        .env_remove("ANTHROPIC_API_KEY")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"What is Pixel like?\n/memories\n/provider anthropic\n/provider ollama llama3.2\nAnd what did you just say?\n/quit\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.matches("Pixel is a grey tabby.").count(), 2, "{stdout}");
    assert!(stdout.contains("SECTION") && stdout.contains("facts"), "/memories: {stdout}");
    assert!(stderr.contains("Now talking with ollama llama3.2"), "{stderr}");
    // A provider that cannot be opened is said, and the conversation goes on with the last one.
    assert!(
        stderr.contains("no key for anthropic") && stderr.contains("still talking with openai gpt-4o-mini"),
        "{stderr}"
    );
    let (_, body) = ollama_seen.lock().unwrap()[0].clone();
    let sent: Value = serde_json::from_str(&body).unwrap();
    let texts: Vec<&str> = sent["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    assert!(texts.contains(&"What is Pixel like?") && texts.contains(&"Pixel is a grey tabby."), "{texts:?}");
    assert_eq!(*texts.last().unwrap(), "And what did you just say?");
    let episodes = e.json(&["list", "--type", "episodic"]);
    let providers: Vec<&str> =
        episodes["items"].as_array().unwrap().iter().filter_map(|m| m["source"]["provider"].as_str()).collect();
    assert_eq!(providers, ["ollama", "openai"], "each exchange remembered with who answered");
    let sessions: Vec<&str> =
        episodes["items"].as_array().unwrap().iter().filter_map(|m| m["scope"]["session_id"].as_str()).collect();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0], sessions[1], "one conversation, one session");
}

/// `strata serve` driven by the official OpenAI Python SDK (installed by scripts/setup):
/// models, a completion, a streamed completion with usage, errors in OpenAI's shape, a
/// required token; every answered exchange is remembered.
#[test]
fn the_memory_proxy_serves_the_official_openai_client() {
    let python = python();
    let e = Env::new();
    e.json(&["add", "semantic", "ana", "--fact", "lives_in=Porto"]);
    let (mut server, url) = spawn_server(&e, &["serve", "--port", "0", "--token", "local-secret"], "memory proxy");
    let script = &in_crate("tests/fixtures/openai_client.py");
    let out = Command::new(&python).args([script, &url, "local-secret"]).output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["models"][0], "SmolLM2-135M-Instruct.Q4_1");
    assert!(!v["answer"].as_str().unwrap().is_empty(), "{v}");
    assert!(v["usage"][0].as_u64().unwrap() > 10 && v["usage"][1].as_u64().unwrap() <= 12, "{v}");
    assert!(!v["streamed"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["stream_usage"][1].as_u64().unwrap() <= 8, "{v}");
    assert_eq!((v["bad_request"].as_u64(), v["wrong_token"].as_u64()), (Some(400), Some(401)));
    assert_eq!(v["oversized"], 413, "a request over 1 MiB is refused");
    let episodes = e.json(&["list", "--type", "episodic"]);
    let items = episodes["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "both answered exchanges remembered: {episodes}");
    assert_eq!(items[1]["body"]["query"], "What is the capital of France?");
    assert_eq!(items[0]["source"]["provider"], "on-device");
}

const OPENAI_400_CONTEXT: &str = include_str!("../../../strata-providers/tests/fixtures/openai/error_400_context.json");

/// A provider that says the prompt is too long gets it again with a quarter less budget, once.
#[test]
fn ask_shrinks_the_prompt_once_when_the_provider_finds_it_too_long() {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let (url, seen) = loopback(|_, _| {
        if CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            (400, "application/json", OPENAI_400_CONTEXT.into())
        } else {
            (200, "text/event-stream", OPENAI_STREAM.into())
        }
    });
    let e = Env::new();
    e.ok(&["demo"]);
    let out = crate::strata()
        .args(["--json", "ask", "Tell me about Napoleon", "--provider", "openai", "--budget", "400"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", &url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["shrunk"], true);
    assert_eq!(v["answer"], "Pixel is a grey tabby.");
    let budget = v["context"]["report"]["budget"].as_u64().unwrap();
    assert!(budget < 400, "the second prompt had a smaller budget: {budget}");
    let bodies: Vec<String> = seen.lock().unwrap().iter().map(|(_, b)| b.clone()).collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[1].len() < bodies[0].len(), "the second prompt is shorter");
}

/// Provider keys in the OS keychain (a secret service in a D-Bus session of the test's own):
/// stored from standard input, used by `ask`, reported by where they are, removed; without a
/// keychain, a clear error.
#[test]
fn keys_live_in_the_os_keychain() {
    let (url, seen) = loopback(|_, _| (200, "text/event-stream", OPENAI_STREAM.into()));
    let e = Env::new();
    let bin = env!("CARGO_BIN_EXE_strata");
    let db = e.db();
    let script = format!(
        "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 && \
         echo sk-test-KEYCHAIN-77 | {bin} key set openai && \
         {bin} --json key status && \
         OPENAI_BASE_URL={url} STRATA_DB={db} {bin} ask 'hi' --provider openai --no-record >/dev/null && \
         {bin} key delete openai && {bin} --json key status",
        db = db.display()
    );
    let out = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", &script])
        .env_remove("OPENAI_API_KEY")
        // The keyring's files stay in the test's folder, never in the user's own keyring.
        .env("XDG_DATA_HOME", e.dir.path().join("keyring-data"))
        .output()
        .expect("dbus-run-session (scripts/setup installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Stored the openai key in the OS keychain."), "{stdout}");
    assert!(stdout.contains(r#""openai": {"#) && stdout.contains(r#""from": "keychain""#), "{stdout}");
    assert!(stdout.contains("Removed the openai key."), "{stdout}");
    assert!(!stdout.contains("KEYCHAIN-77"), "status never shows the key");
    let (head, _) = seen.lock().unwrap()[0].clone();
    assert!(
        head.to_lowercase().contains("authorization: bearer sk-test-keychain-77"),
        "the stored key was used: {head}"
    );
    // No keychain reachable: a clear error.
    let mut child = Command::new(bin)
        .args(["key", "set", "openai"])
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"sk-test-0000\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the OS keychain is not available") && !stderr.contains("sk-test"), "{stderr}");
}

const ANTHROPIC_STREAM: &str = include_str!("../../../strata-providers/tests/fixtures/anthropic/stream_text.sse");

/// `strata ask` with a Claude model: the provider counts the assembled prompt before it answers.
#[test]
fn ask_with_claude_has_the_prompt_counted_by_anthropic() {
    let (url, seen) = loopback(|head, _| {
        if head.starts_with("POST /v1/messages/count_tokens") {
            (200, "application/json", r#"{"input_tokens":150}"#.into())
        } else {
            (200, "text/event-stream", ANTHROPIC_STREAM.into())
        }
    });
    let e = Env::new();
    e.ok(&["demo"]);
    let out = crate::strata()
        .args(["--json", "ask", "Tell me about Napoleon", "--provider", "anthropic", "--model", "claude-sonnet-4-5"])
        .env("STRATA_DB", e.db())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0000")
        .env("ANTHROPIC_BASE_URL", &url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["answer"], "Pixel is a grey tabby.");
    assert_eq!(
        (v["context"]["report"]["exact_used"].as_u64(), v["context"]["report"]["exact"].as_bool()),
        (Some(150), Some(false))
    );
    let paths: Vec<String> =
        seen.lock().unwrap().iter().map(|(h, _)| h.lines().next().unwrap_or("").to_string()).collect();
    assert!(paths[0].contains("/v1/messages/count_tokens") && paths[1].contains("/v1/messages "), "{paths:?}");
}

/// A path below this crate's folder. The folder is read when the test runs (cargo sets
/// `CARGO_MANIFEST_DIR` for it), not baked in when it compiles: a build cache shared by
/// checkouts in different places otherwise hands one checkout another's paths.
fn in_crate(path: &str) -> String {
    format!("{}/{path}", std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
}
