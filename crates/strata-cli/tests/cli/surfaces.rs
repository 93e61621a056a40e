//! Issue 37's classes through the real binary: nothing written lands on the store, output to
//! a terminal obeys nothing it prints, errors quote excerpts, files are read with a bound,
//! numbers are kept exactly, settings are read as strictly as they must be, and grouping
//! passes neither collide nor write on a dry run.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::{Env, test_settings};

/// `bash -c SCRIPT` with `$STRATA` the binary and `$STRATA_DB` the env's database.
fn shell(e: &Env, script: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("STRATA", env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_DB", e.db())
        .env("STRATA_SETTINGS", test_settings())
        .env("OUT", e.dir.path().join("out.json"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn nothing_strata_writes_lands_on_the_store_and_pipes_work() {
    let e = Env::new();
    e.ok(&["demo"]);
    let before = e.json(&["stats"]);
    let db = e.db();
    let dir = e.dir.path();
    std::fs::hard_link(&db, dir.join("hard.db")).unwrap();
    std::os::unix::fs::symlink(&db, dir.join("link.json")).unwrap();
    let name = |suffix: &str| format!("{}{suffix}", db.display());
    let spellings = [
        name(""),
        name("-wal"),
        name("-shm"),
        name("-journal"),
        dir.join("./sub/../strata.db").display().to_string(),
        dir.join("hard.db").display().to_string(),
        dir.join("link.json").display().to_string(),
    ];
    std::fs::create_dir(dir.join("sub")).unwrap();
    for out in &spellings {
        let err = e.err(&["export", "-o", out]);
        assert!(
            err.contains("would destroy the memories in it") && err.contains("Nothing was written"),
            "{out}: {err}"
        );
    }
    // Another Strata database, not open: still a database, never written over.
    let other = dir.join("other.db");
    e.ok(&["--db", other.to_str().unwrap(), "stats"]);
    let err = e.err(&["export", "-o", other.to_str().unwrap()]);
    assert!(err.contains("is a database (SQLite)"), "{err}");
    assert_eq!(e.json(&["stats"]), before, "the store is as it was");

    // Pipes, as the docs say: /dev/stdout into a pipe, and a shell's >(…).
    let piped = shell(&e, r#""$STRATA" export -o /dev/stdout | wc -c"#);
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let bytes: u64 = String::from_utf8_lossy(&piped.stdout).trim().parse().unwrap();
    let file = dir.join("whole.json");
    e.ok(&["export", "-o", file.to_str().unwrap()]);
    let whole = std::fs::metadata(&file).unwrap().len();
    assert_eq!(bytes, whole, "the export through the pipe, and nothing else");
    let substituted = shell(&e, r#""$STRATA" export -o >(cat > "$OUT"); wait $!"#);
    assert!(substituted.status.success(), "{}", String::from_utf8_lossy(&substituted.stderr));
    let exported = std::fs::read_to_string(dir.join("out.json")).unwrap();
    assert!(exported.contains("Napoleon"), "{}", &exported[..80.min(exported.len())]);
}

#[test]
fn text_reaching_a_terminal_obeys_nothing_and_json_stays_exact() {
    let e = Env::new();
    let hostile = "Clear\x1b[2Jscreen \x1b]0;pwned\x07 title \x1b[8mhidden\x1b[0m over\rwrite \u{9b}31m";
    e.ok(&["add", "semantic", "hostile", "--fact", &format!("text={hostile}")]);
    e.ok(&["add", "episodic", "--speaker", "Ana", "--text", hostile]);
    e.ok(&["update", "hostile", "--fact", &format!("text={hostile} again")]);
    for args in [&["list"][..], &["get", "hostile"], &["search", "title"], &["history", "hostile"]] {
        let out = e.ok(args);
        let obeyed: Vec<char> = out.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect();
        assert!(obeyed.is_empty(), "strata {args:?} printed {obeyed:?}: {out}");
        assert!(out.contains("␛[2J") || out.contains("␛]0;"), "strata {args:?} shows what is there: {out}");
    }
    let json = e.json(&["get", "hostile"]);
    assert_eq!(json["facts"]["text"], format!("{hostile} again"), "JSON keeps the text exactly");
    let raw = e.ok(&["get", "hostile", "--json"]);
    assert!(!raw.contains('\x1b') && !raw.contains('\u{9b}'), "escaped, not raw: {raw}");

    // An error echoing a 100 KB key quotes an excerpt.
    let key = "k".repeat(100_000);
    let err = e.err(&["get", &key]);
    assert!(err.len() < 400 && err.contains("(100000 bytes)"), "{} bytes: {}", err.len(), &err[..200.min(err.len())]);
}

#[test]
fn files_are_read_with_a_bound_and_numbers_are_kept_exactly() {
    let e = Env::new();
    let started = std::time::Instant::now();
    let err = e.err(&["train", "run", "--dataset", "/dev/zero"]);
    assert!(err.contains("/dev/zero is larger than 64 MiB (a training set is at most that)"), "{err}");
    assert!(started.elapsed().as_secs() < 60, "refused in {:?}", started.elapsed());
    let err = e.err(&["import", "/dev/zero"]);
    assert!(err.contains("larger than"), "{err}");

    let digits = "123456789012345678901234567890";
    e.ok(&["add", "semantic", "big", "--fact", &format!("n={digits}")]);
    assert_eq!(e.json(&["get", "big"])["facts"]["n"], digits, "kept as text, every digit");
    let err = e.err(&["add", "semantic", "bigger", "--fact", &format!("n=[{digits}]")]);
    assert!(err.contains("too large to keep exactly") && err.contains("in quotes"), "{err}");
    // Digits a double would round, or a number written another way, are kept as written.
    e.ok(&[
        "add",
        "semantic",
        "fine",
        "--fact",
        "pi=0.12345678901234567890123",
        "--fact",
        "price=3.50",
        "--fact",
        "n=42",
    ]);
    let facts = &e.json(&["get", "fine"])["facts"];
    assert_eq!(
        (&facts["pi"], &facts["price"], &facts["n"]),
        (&"0.12345678901234567890123".into(), &"3.50".into(), &42.into())
    );
}

#[test]
fn help_usage_errors_and_odd_arguments_are_safe_and_short() {
    let e = Env::new();
    let help = crate::strata().arg("--help").env("STRATA_USER", "u\x1b]0;TITLE\x07\x1b[2J").output().unwrap();
    let shown = String::from_utf8_lossy(&help.stdout);
    assert!(help.status.success() && shown.contains("Usage"), "{shown}");
    assert!(!shown.contains('\x1b') && !shown.contains('\x07') && !shown.contains("TITLE"), "{shown}");
    let huge = "9".repeat(100_000);
    let r = e.run(&["list", "--limit", &huge]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.len() < 1_200, "{} bytes of usage error", r.stderr.len());
    // An argument that is not UTF-8 is an error, never a panic.
    use std::os::unix::ffi::OsStrExt;
    let odd = crate::strata()
        .args([std::ffi::OsStr::new("get"), std::ffi::OsStr::from_bytes(b"\x9b31m")])
        .env("STRATA_DB", e.db())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&odd.stderr);
    assert!(!odd.status.success() && !said.contains("panicked"), "{said}");
}

/// Runs `strata ARGS` on `e`'s database with the settings file `settings`.
fn with_settings(e: &Env, settings: &Path, args: &[&str]) -> std::process::Output {
    crate::strata().args(args).env("STRATA_DB", e.db()).env("STRATA_SETTINGS", settings).output().unwrap()
}

#[test]
fn a_settings_file_with_a_byte_order_mark_is_read_and_a_broken_one_keeps_no_records() {
    let e = Env::new();
    e.ok(&["add", "semantic", "tea", "--fact", "likes=oolong"]);
    let settings = e.dir.path().join("settings.json");
    std::fs::write(&settings, "\u{FEFF}{\"usage\": {\"keep\": false}, \"extraction\": {\"after_exchanges\": false}}")
        .unwrap();
    assert!(with_settings(&e, &settings, &["search", "oolong"]).status.success());
    std::fs::write(&settings, "{\"usage\": {\"keep\": tr").unwrap();
    let broken = with_settings(&e, &settings, &["search", "oolong"]);
    assert!(broken.status.success());
    let said = String::from_utf8_lossy(&broken.stderr);
    assert!(said.contains("no usage records are kept"), "it says so: {said}");
    let r = e.json(&["analytics", "recalls"]);
    assert_eq!(r["recalls"], 0, "neither search was recorded: {r}");
}

#[test]
fn two_grouping_passes_at_once_never_both_write_and_a_dry_run_writes_nothing() {
    let e = Env::new();
    crate::concepts::say_all(&e);
    // Nothing embedded yet: a dry run embeds nothing and writes nothing.
    e.ok(&["stats"]);
    let before = std::fs::read(e.db()).unwrap();
    e.json(&["concepts", "rebuild", "--dry-run"]);
    assert!(std::fs::read(e.db()).unwrap() == before, "a dry run changed the database file");
    for _ in 0..2 {
        let start = |e: &Env| {
            crate::strata()
                .args(["concepts", "rebuild", "--json"])
                .env("STRATA_DB", e.db())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (start(&e), start(&e));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        for run in [&a, &b] {
            let said = String::from_utf8_lossy(&run.stderr);
            assert!(run.status.success() || said.contains("another grouping pass"), "{said}");
        }
        let concepts = e.json(&["concepts"]);
        let concepts = concepts.as_array().unwrap();
        assert!(concepts.iter().all(|c| !c["key"].as_str().unwrap().ends_with("_2")), "{concepts:?}");
        let mut members: Vec<&str> =
            concepts.iter().flat_map(|c| c["members"].as_array().unwrap()).map(|m| m.as_str().unwrap()).collect();
        let all = members.len();
        members.sort_unstable();
        members.dedup();
        assert_eq!(members.len(), all, "a member in two concepts: {concepts:?}");
    }
}
