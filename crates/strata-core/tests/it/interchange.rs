//! Seed-002 documents and JSON Lines backups: round trips and bad input.

use crate::support::*;
use strata_core::interchange::duplicates::{ImportSummary, OnDuplicate};
use strata_core::interchange::seed::ImportCounts;
use strata_core::*;

const SEED: &str = include_str!("../fixtures/seed-002.json");

fn import(f: &mut Fixture, text: &str) -> Result<strata_core::interchange::seed::ImportCounts> {
    let template = NewMemory { source: Source::app("import"), ..Default::default() };
    f.store.import_seed("seed.json", text, &template, &user())
}

fn export(f: &Fixture) -> String {
    let mut out = Vec::new();
    f.store.export_seed("default", None, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

on_both_engines! {
    fn the_seed_document_round_trips_exactly(f: &mut Fixture) {
        let counts = import(f, SEED).unwrap();
        assert_eq!((counts.semantic, counts.episodic, counts.procedural), (2, 2, 2));
        assert_eq!(export(f), SEED, "export(import(seed)) must be the seed itself");

        // And the other way: import(export(store)) gives the same memories.
        let mut g = Fixture::new();
        import(&mut g, &export(f)).unwrap();
        let strip = |s: Snapshot| s.memories.into_iter().map(|m| (m.content, m.scope, m.tier)).collect::<Vec<_>>();
        assert_eq!(strip(g.store.snapshot().unwrap()), strip(f.store.snapshot().unwrap()));

        let ep = f.store.list(&Filter { kinds: vec![MemoryKind::Episodic], ..Default::default() }, 10, None).unwrap();
        assert_eq!(ep.items[0].scope.session_id.as_deref(), Some("abc123"));
        assert_eq!(strata_core::time::format_time(ep.items[1].occurred_at()), "2023-07-15T14:32:45Z");
    }
}

#[test]
fn a_malformed_seed_names_the_line_and_field_and_imports_nothing() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"semantic": {"a": {"x": "1"}},
  "episodic": [{"timestamp": "2023-07-15T14:32:45", "query": 5}]}"#,
            "seed.json:2: field `episodic[0].query`: this should be text in quotes, not a number (5)",
        ),
        (r#"{"semantic": {"a": {"x": null}}}"#, "seed.json:1: field `semantic.a.x`: null is not a fact value"),
        (
            "{\n\"procedural\": {\"p\": {\"steps\": [], \"context\": \"c\"}}}",
            "seed.json:2: field `procedural.p`: procedure 'p' needs non-empty steps",
        ),
        (
            "{\"semantic\": {}, \n\"episodic\": [{\"timestamp\": \"last tuesday\", \"query\": \"q\", \"response\": \"r\"}]}",
            "seed.json:2: field `episodic[0].timestamp`",
        ),
        (
            "{\"semantics\": {}}",
            "seed.json:1: field `semantics`: unknown field `semantics`, expected one of `semantic`, `episodic`, `procedural`",
        ),
        ("{\"semantic\": {\"a\": {\"x\": \"1\"}}", "seed.json:1: the file ends in the middle of an entry"),
    ];
    for (text, want) in cases {
        let mut f = Fixture::new();
        f.add(concept("existing", &[("x", "1")]));
        match import(&mut f, text) {
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with(want), "{msg}\n   wanted: {want}");
                assert!(msg.ends_with("nothing was imported"), "{msg}");
            }
            Ok(_) => panic!("{text} should have failed"),
        }
        assert_eq!(f.store.stats().unwrap().memories, 1, "{text}: partial import");
    }
}

/// Each kind of mistake in a file is said in plain words, with its line (not the parser's
/// "EOF while parsing a value").
#[test]
fn a_broken_file_is_explained_in_plain_words_with_its_line() {
    let cases = [
        ("{\"semantic\": {\n\"a\": {\"x\": \"1\"", "seed.json:2: the file ends in the middle of an entry"),
        ("{\"semantic\": {}}\n}", "seed.json:2: there is more after the end of the document"),
        ("{\"semantic\": {\"a\": {\"x\": \"1\",}}}", "seed.json:1: there is a comma before a closing } or ]"),
        ("{\"semantic\": {\"a\": {\"x\": }}}", "seed.json:1: something is missing here (a value"),
        ("{\"semantic\": {\"a\": {\"x\": nul}}}", "seed.json:1: a word here is not in quotes"),
        ("{\"semantic\": {\"a\": {\"x\": yes}}}", "seed.json:1: something is missing here (a value"),
        ("{\"semantic\" {}}", "seed.json:1: a colon (:) is missing between a name and its value"),
        ("{\"semantic\": {\"a\": {\"x\": \"1\" \"y\": \"2\"}}}", "seed.json:1: a comma or a closing } is missing"),
        ("{\"procedural\": {\"p\": {\"steps\": [\"a\" \"b\"]}}}", "seed.json:1: a comma or a closing ] is missing"),
        ("{semantic: {}}", "seed.json:1: a name must be in double quotes"),
        (
            "{\"semantic\": {\"a\": {\"x\": \"C:\\data\"}}}",
            "seed.json:1: a backslash starts an escape JSON does not know",
        ),
        ("{\"semantic\": {\"a\": {\"x\": \"\\uDFFF\"}}}", "seed.json:1: a \\u escape names no character"),
        (
            "{\"semantic\": {\"a\": {\"x\": \"\\u12\"}}}",
            "seed.json:1: a backslash starts an escape JSON does not know (write \\\\ for a backslash; \\u needs four",
        ),
        (
            "{\"semantic\": {\"a\": {\"x\": \"two\nlines\"}}}",
            "seed.json:2: a line break or control character is inside quotes",
        ),
        ("{\"semantic\": {\"a\": {\"x\": 1e999}}}", "seed.json:1: a number is too large"),
        ("{\"semantic\": {\"a\": {\"x\": -}}}", "seed.json:1: a number is written wrongly"),
        (
            "{\"semantic\": {\n\"napoleon\": [\"born 1769\"]}}",
            "seed.json:2: field `semantic.napoleon`: this should be a group of name: value pairs { … }, not a list",
        ),
        (
            "{\"procedural\": {\"p\": {\"steps\": \"a\"}}}",
            "seed.json:1: field `procedural.p.steps`: this should be a list [ … ], not text (\"a\")",
        ),
        (
            "{\"episodic\": {}}",
            "seed.json:1: field `episodic`: this should be a list [ … ], not a group of name: value pairs",
        ),
        (
            "{\"episodic\": [{\"timestamp\": true}]}",
            "seed.json:1: field `episodic[0].timestamp`: this should be text in quotes, not true",
        ),
        (
            "{\"semantic\": {\"a\": {\"x\": \"1\"}, \"a\": {}}}",
            "seed.json:1: field `semantic.a`: this key appears twice",
        ),
    ];
    for (text, want) in cases {
        let mut f = Fixture::new();
        let err = import(&mut f, text).expect_err(text).to_string();
        assert!(err.starts_with(want), "{text}\n{err}\n   wanted: {want}");
        assert!(!err.contains("EOF") && !err.contains("invalid type") && !err.contains("expected"), "{err}");
        assert_eq!(f.store.stats().unwrap().memories, 0);
    }
}

/// Regression: a repeated key kept the last value, and data after the document was ignored.
#[test]
fn a_repeated_key_or_trailing_data_is_refused_with_its_line() {
    let cases = [
        (
            "{\"semantic\": {\"a\": {\"x\": \"1\"},\n \"a\": {\"y\": \"2\"}}}",
            "seed.json:2: field `semantic.a`: this key appears twice",
        ),
        ("{\"semantic\": {\"a\": {\"x\": \"1\", \"x\": \"2\"}}}", "seed.json:1: field `semantic.a.x`: this key"),
        ("{\"semantic\": {}, \"semantic\": {\"b\": {\"x\": \"1\"}}}", "seed.json:1: field `semantic`: this key"),
        (
            "{\"semantic\": {\"a\": {\"x\": \"1\"}}}\n{\"semantic\": {}}",
            "seed.json:2: there is more after the end of the document",
        ),
        ("{\"semantic\": {\"a\": {\"x\": \"1\"}}}\n\njunk", "seed.json:3: there is more after the end of the document"),
        ("{\"semantic\": {\"a\": {\"x\": \"1\"}}}\0\0\0", "seed.json:1: there is more after the end of the document"),
    ];
    for (text, want) in cases {
        let mut f = Fixture::new();
        let err = import(&mut f, text).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}\n   wanted: {want}");
        assert_eq!(f.store.stats().unwrap().memories, 0, "{text}: partial import");
    }
}

/// Regression: an episode refused when created (its session id too long) named line 1 and no
/// field.
#[test]
fn an_episode_refused_when_created_names_its_line_and_field() {
    let mut f = Fixture::new();
    let session = "s".repeat(300);
    let text = format!(
        "{{\"episodic\": [\n{{\"timestamp\": \"2023-07-15T14:32:45\", \"query\": \"q\"}},\n\
         {{\"timestamp\": \"2023-07-16T09:00:00\", \"query\": \"q\", \"metadata\": {{\"session_id\": \"{session}\"}}}}]}}"
    );
    let err = import(&mut f, &text).unwrap_err().to_string();
    assert!(err.starts_with("seed.json:3: field `episodic[1]`: a session id 'sss"), "{err}");
    assert_eq!(f.store.stats().unwrap().memories, 0);
}

/// Regression: an error quoted a 10 MB key whole.
#[test]
fn an_error_quotes_only_an_excerpt_of_a_huge_value() {
    let huge = "k".repeat(10 << 20);
    let texts = [
        format!("{{\"semantic\": {{\"{huge}\": {{\"x\": \"1\"}}}}}}"),
        format!("{{\"{huge}\": {{}}}}"),
        format!("{{\"episodic\": [{{\"timestamp\": \"{huge}\", \"query\": \"q\"}}]}}"),
    ];
    for text in texts {
        let mut f = Fixture::new();
        let err = import(&mut f, &text).unwrap_err().to_string();
        assert!(err.len() < 500 && err.contains("kkk… (10485760 bytes)"), "{} bytes: {}", err.len(), &err[..200]);
    }
    let err = f_create_tag(&huge);
    assert!(err.len() < 200 && err.contains("… (10485760 bytes)"), "{}", &err[..200.min(err.len())]);
}

fn f_create_tag(tag: &str) -> String {
    let mut f = Fixture::new();
    let new = NewMemory { tags: vec![tag.to_string()], ..Default::default() };
    f.store.create(concept("a", &[("x", "1")]), new, &user()).unwrap_err().to_string()
}

/// Regression: bytes that are not UTF-8 were refused without a line.
#[test]
fn text_that_is_not_utf8_is_refused_with_its_line() {
    let bytes = b"{\"semantic\":\n {\"a\": {\"x\": \"caf\xe9\"}}}";
    let err = interchange::json::read_text("seed.json", &mut &bytes[..]).unwrap_err().to_string();
    assert!(err.starts_with("seed.json:2: byte 18 of the line is not UTF-8"), "{err}");
    // A byte-order mark is not part of the text.
    let text = interchange::json::read_text("seed.json", &mut &b"\xef\xbb\xbf{}"[..]).unwrap();
    assert_eq!(text, "{}");
}

#[test]
fn importing_a_key_that_exists_fails_whole() {
    let mut f = Fixture::new();
    f.add(concept("theory_of_relativity", &[("year", "1905")]));
    let err = import(&mut f, SEED).unwrap_err();
    assert!(matches!(err, Error::AlreadyStored { line: 11, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "\u{201c}theory_of_relativity\u{201d} is already in your memories (line 11 of seed.json); nothing was imported"
    );
    assert_eq!(f.store.stats().unwrap().memories, 1);
}

fn import_choosing(f: &mut Fixture, text: &str, choice: OnDuplicate) -> Result<ImportSummary> {
    let template = NewMemory { source: Source::app("import"), ..Default::default() };
    f.store.import_seed_with("seed.json", text, &template, &user(), choice, &mut interchange::no_tick)
}

fn counts(semantic: u64, episodic: u64, procedural: u64) -> ImportCounts {
    ImportCounts { semantic, episodic, procedural }
}

on_both_engines! {
    fn importing_a_document_twice_skips_or_merges_what_is_stored(f: &mut Fixture) {
        import(f, SEED).unwrap();
        let before = f.store.stats().unwrap().events;

        // Skip: nothing written, everything counted as skipped.
        let s = import_choosing(f, SEED, OnDuplicate::Skip).unwrap();
        assert_eq!((s.added, s.skipped, s.merged), (counts(0, 0, 0), counts(2, 2, 2), counts(0, 0, 0)));
        assert_eq!(s.to_string(), "0 added, 6 skipped (already there)");
        assert_eq!(f.store.stats().unwrap().events, before, "a skip writes nothing");

        // Merge of the same file: all unchanged, nothing written.
        let s = import_choosing(f, SEED, OnDuplicate::Merge).unwrap();
        assert_eq!((s.added, s.unchanged), (counts(0, 0, 0), counts(2, 2, 2)));
        assert_eq!(f.store.stats().unwrap().events, before, "an unchanged merge writes nothing");

        // Merge of a changed file: a new fact and a changed one, a new concept, new steps.
        let changed = r#"{"semantic": {
      "napoleon_bonaparte": {"birth": "1769, Ajaccio", "height": "1.69 m"},
      "marie_curie": {"field": "physics"}},
     "procedural": {"evaluate_scientific_theory": {"steps": ["1. Read it"]}}}"#;
        let s = import_choosing(f, changed, OnDuplicate::Merge).unwrap();
        assert_eq!((s.added, s.merged, s.unchanged), (counts(1, 0, 0), counts(1, 0, 1), counts(0, 0, 0)));
        assert_eq!(s.to_string(), "1 added, 2 merged");
        let napoleon = &f.store.find_by_key("default", None, Some(MemoryKind::Semantic), "napoleon_bonaparte").unwrap()[0];
        let Content::Semantic(c) = &napoleon.content else { panic!() };
        let facts: Vec<_> = c.facts.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        assert_eq!(facts.len(), 4, "{facts:?}");
        assert_eq!(c.facts["birth"], FactValue::Text("1769, Ajaccio".into()));
        assert_eq!(c.facts["death"], FactValue::Text("1821, Saint Helena".into()), "a fact the file lacks is kept");
        assert_eq!(napoleon.version, 2, "one content update, with history");
        let proc =
            &f.store.find_by_key("default", None, Some(MemoryKind::Procedural), "evaluate_scientific_theory").unwrap();
        let Content::Procedural(p) = &proc[0].content else { panic!() };
        assert_eq!(p.steps, vec!["1. Read it".to_string()]);

        // Stop (the default) still refuses the first one, naming its line.
        let err = import_choosing(f, changed, OnDuplicate::Stop).unwrap_err().to_string();
        assert!(
            err.starts_with("\u{201c}napoleon_bonaparte\u{201d} is already in your memories (line 2 of seed.json)"),
            "{err}"
        );
    }
}

on_both_engines! {
    fn an_identical_episode_is_a_duplicate_and_a_different_one_is_not(f: &mut Fixture) {
        let doc = |text: &str, session: &str| {
            format!(
                r#"{{"episodic": [{{"timestamp": "2023-07-15T14:32:45", "speaker": "user", "text": "{text}", "metadata": {{"session_id": "{session}"}}}}]}}"#
            )
        };
        import(f, &doc("hello", "s1")).unwrap();
        let err = import(f, &doc("hello", "s1")).unwrap_err().to_string();
        assert_eq!(
            err,
            "the episode of 2023-07-15 14:32:45 is already in your memories (line 1 of seed.json); nothing was imported"
        );
        for choice in [OnDuplicate::Skip, OnDuplicate::Merge] {
            let s = import_choosing(f, &doc("hello", "s1"), choice).unwrap();
            assert_eq!(s.added.total(), 0, "{choice}");
            assert_eq!(s.skipped.episodic + s.unchanged.episodic, 1, "{choice}");
        }
        // Other words, or another session, make another episode.
        assert_eq!(import(f, &doc("hello!", "s1")).unwrap().episodic, 1);
        assert_eq!(import(f, &doc("hello", "s2")).unwrap().episodic, 1);
        assert_eq!(f.store.stats().unwrap().memories, 3);
    }
}

#[test]
fn a_merge_that_fails_midway_imports_and_changes_nothing() {
    let mut f = Fixture::new();
    import(&mut f, SEED).unwrap();
    let before = export(&f);
    // A new memory, a merged one, a merged procedure, then one whose tag only creating it
    // refuses (too long).
    let long = "t".repeat(300);
    let text = format!(
        r#"{{"semantic": {{"new_one": {{"x": "1"}}, "napoleon_bonaparte": {{"birth": "elsewhere"}}}},
 "procedural": {{"analyze_historical_figure": {{"steps": ["new"]}}, "p": {{"steps": ["s"]}}}},
 "strata": {{"procedural": {{"p": {{"tags": ["{long}"]}}}}}}}}"#
    );
    let err = import_choosing(&mut f, &text, OnDuplicate::Merge).unwrap_err().to_string();
    assert!(err.starts_with("seed.json:2: field `procedural.p`: "), "{err}");
    // Stopped midway by the person: the same.
    let mut n = 0;
    let template = NewMemory::default();
    let stopped = f.store.import_seed_with("seed.json", SEED, &template, &user(), OnDuplicate::Merge, &mut |_, _| {
        n += 1;
        if n > 3 { Err(Error::Cancelled("stopped".into())) } else { Ok(()) }
    });
    assert!(matches!(stopped, Err(Error::Cancelled(_))));
    assert_eq!(export(&f), before, "all or nothing");
}

on_both_engines! {
    fn tags_tiers_pins_and_importance_survive_an_export_and_import(f: &mut Fixture) {
        import(f, SEED).unwrap();
        let all = f.store.snapshot().unwrap().memories;
        f.store
            .transact(|tx| {
                for (i, m) in all.iter().enumerate() {
                    tx.tag(m.id, &format!("tag-{i}"), &user())?;
                    if i % 2 == 0 {
                        tx.pin(m.id, &user())?;
                        tx.set_tier(m.id, Tier::Long, "test", &user())?;
                    }
                    if i % 3 == 0 {
                        tx.set_importance(m.id, Importance::new(0.9)?, &user())?;
                    }
                }
                Ok(())
            })
            .unwrap();
        let text = export(f);
        assert!(text.contains("\"strata\": {"), "{text}");
        let mut g = Fixture::new();
        assert_eq!(import(&mut g, &text).unwrap().total(), 6);
        let keep = |s: Snapshot| {
            let mut v: Vec<_> =
                s.memories.into_iter().map(|m| (m.content, m.tags, m.tier, m.pinned, m.importance)).collect();
            v.sort_by_key(|m| format!("{:?}", m.0));
            v
        };
        assert_eq!(keep(g.store.snapshot().unwrap()), keep(f.store.snapshot().unwrap()));
        assert_eq!(export(&g), text, "and it exports as the same document");
        // Extras naming a memory the document lacks are refused with their line.
        let orphan = "{\"semantic\": {\"a\": {\"x\": \"1\"}},\n \"strata\": {\"semantic\": {\"b\": {\"pinned\": true}}}}";
        let err = import(&mut Fixture::new(), orphan).unwrap_err().to_string();
        assert!(err.starts_with("seed.json:2: field `strata.semantic.b`"), "{err}");
    }
}

#[test]
fn a_backup_restores_into_an_empty_database_with_an_identical_state() {
    let mut f = Fixture::new();
    import(&mut f, SEED).unwrap();
    let page = f.store.list(&Filter::default(), 10, None).unwrap();
    let (a, b) = (page.items[0].id, page.items[1].id);
    f.tick(3);
    f.store
        .transact(|tx| {
            tx.tag(a, "favourite", &user())?;
            tx.set_tier(a, Tier::Long, "test", &user())?;
            tx.link(a, b, "mentions", &user())
        })
        .unwrap();
    f.store.note_access([a, b]).unwrap();
    f.store.flush_accesses().unwrap();
    f.store.forget(b, &user()).unwrap();

    let mut backup = Vec::new();
    let n = f.store.export_backup(&mut backup).unwrap();
    assert_eq!(n, f.store.event_count().unwrap());

    let mut g = Fixture::new();
    let (events, memories) = g.store.import_backup("backup.jsonl", &mut &backup[..]).unwrap();
    assert_eq!((events, memories), (n, 5));
    assert_eq!(g.store.snapshot().unwrap(), f.store.snapshot().unwrap());
    assert_eq!(g.store.history(a).unwrap(), f.store.history(a).unwrap());
    let mut again = Vec::new();
    g.store.export_backup(&mut again).unwrap();
    let body = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap().lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&again), body(&backup), "re-exported events are identical");

    // Not into a database that has events.
    let err = f.store.import_backup("backup.jsonl", &mut &backup[..]).unwrap_err().to_string();
    assert!(err.contains("only be restored into an empty database"), "{err}");
}

/// `line` with its event id replaced by the one in `other`.
fn event_id_of(line: &str, other: &str) -> String {
    let id = |l: &str| serde_json::from_str::<serde_json::Value>(l).unwrap()["event_id"].as_str().unwrap().to_string();
    line.replace(&id(line), &id(other))
}

/// The backup of a store holding [`SEED`], as text.
fn seed_backup() -> String {
    let mut f = Fixture::new();
    import(&mut f, SEED).unwrap();
    let mut backup = Vec::new();
    f.store.export_backup(&mut backup).unwrap();
    String::from_utf8(backup).unwrap()
}

/// `text` with its line `i` (0-based) replaced by `new`.
fn replace_line(text: &str, i: usize, new: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[i] = new;
    lines.join("\n")
}

/// Each backup is refused with an error that starts with its `want`, and imports nothing.
fn assert_backups_refused<const N: usize>(cases: [(String, &str); N]) {
    for (text, want) in cases {
        let mut g = Fixture::new();
        let err = g.store.import_backup("backup.jsonl", &mut text.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}\n   wanted: {want}");
        assert_eq!(g.store.event_count().unwrap(), 0);
    }
}

#[test]
fn a_damaged_backup_names_the_line_and_imports_nothing() {
    let text = seed_backup();
    let lines: Vec<&str> = text.lines().collect();
    let with_line = |i: usize, new: &str| replace_line(&text, i, new);
    let cases = [
        (
            with_line(3, &lines[3].replace("\"stream_version\":1", "\"stream_version\":2")),
            "backup.jsonl:4: field `stream_version`",
        ),
        (with_line(1, &lines[1].replace("\"birth\"", "\"birth\":null,\"x\"")), "backup.jsonl:2: field `payload`"),
        (with_line(5, "{\"seq\": 5"), "backup.jsonl:6: the file ends in the middle of an entry"),
        (
            with_line(0, "{\"format\":\"zip\",\"version\":1,\"events\":6,\"exported_at\":\"x\"}"),
            "backup.jsonl:1: field `format`: not a Strata backup",
        ),
        (lines[..4].join("\n"), "backup.jsonl:1: field `events`: the header promises 6 events but the file has 3"),
        (
            with_line(4, &lines[4].replace("\"actor\":\"user\"", "\"actor\":\"alien\"")),
            "backup.jsonl:5: field `meta.actor`",
        ),
        (with_line(3, &event_id_of(lines[3], lines[2])), "backup.jsonl:4: field `event_id`: "),
        (
            with_line(3, &lines[3].replace("\"seq\":3", "\"seq\":9")),
            "backup.jsonl:4: field `seq`: expected 3 after 2, found 9",
        ),
    ];
    assert_backups_refused(cases);
}

/// Regression: data after a backup line's JSON, or a key twice in it, was let through.
#[test]
fn a_backup_line_with_trailing_data_or_a_repeated_key_is_refused() {
    let text = seed_backup();
    let lines: Vec<&str> = text.lines().collect();
    let with_line = |i: usize, new: &str| replace_line(&text, i, new);
    let cases = [
        (with_line(2, &format!("{} {{}}", lines[2])), "backup.jsonl:3: there is more after the end of the document"),
        (with_line(2, &format!("{}\0\0", lines[2])), "backup.jsonl:3: there is more after the end of the document"),
        (
            with_line(2, &lines[2].replace("\"seq\":2,", "\"seq\":2,\"seq\":2,")),
            "backup.jsonl:3: field `seq`: this key",
        ),
        (
            with_line(1, &lines[1].replace("\"birth\":", "\"birth\":1,\"birth\":")),
            "backup.jsonl:2: field `payload.content.facts.birth`: this key",
        ),
        (with_line(0, &format!("{}x", lines[0])), "backup.jsonl:1: there is more after the end of the document"),
        (format!("{text}\n\0\0\0"), "backup.jsonl:9: something is missing here (a value"),
        (
            with_line(3, &lines[3].replace("\"type\":\"", "\"type\":\"\u{0}")),
            "backup.jsonl:4: a line break or control character is inside quotes",
        ),
    ];
    assert_backups_refused(cases);
    let mut bytes = text.clone().into_bytes();
    let at = text.find("Corsica").unwrap();
    bytes[at] = 0xff;
    let err = Fixture::new().store.import_backup("backup.jsonl", &mut &bytes[..]).unwrap_err().to_string();
    assert!(err.starts_with("backup.jsonl:2: byte "), "{err}");
}

/// A hand-written backup: one line per (memory, type, payload, redacted), with sequence
/// numbers, stream versions, ids and times filled in.
fn backup_of(events: &[(MemoryId, &str, serde_json::Value, bool)]) -> String {
    let mut out = format!(
        "{{\"format\":\"strata-backup\",\"version\":1,\"events\":{},\"exported_at\":\"2026-01-31T12:00:00Z\"}}\n",
        events.len()
    );
    let mut versions = std::collections::HashMap::new();
    for (i, (id, ty, payload, redacted)) in events.iter().enumerate() {
        let version = versions.entry(*id).or_insert(0);
        *version += 1;
        let mut line = serde_json::json!({
            "seq": i + 1,
            "event_id": format!("ev{i}"),
            "stream_id": id.to_string(),
            "stream_version": *version,
            "type": ty,
            "schema_version": 1,
            "payload": if *redacted { serde_json::json!({}) } else { payload.clone() },
            "meta": {"actor": "user"},
            "recorded_at": "2026-01-31T12:00:00Z",
        });
        if *redacted {
            line["redacted_at"] = "2026-01-31T12:00:01Z".into();
        }
        out.push_str(&format!("{line}\n"));
    }
    out
}

fn created(key: &str, facts: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "content": {"type": "semantic", "key": key, "facts": facts},
        "scope": {"user_id": "default"},
        "importance": 0.5,
        "tier": "medium",
        "source": {"app": "test"},
    })
}

/// Regression: a backup restored links to memories that do not exist, `forgotten` events for
/// memories never created, and other states every command refuses.
#[test]
fn a_backup_is_held_to_the_rules_of_the_commands() {
    use serde_json::json;
    let (a, b, c) = (MemoryId::from_parts(1, 1), MemoryId::from_parts(1, 2), MemoryId::from_parts(1, 3));
    let make =
        |id: MemoryId, key: &str, redacted: bool| (id, "semantic_created", created(key, json!({"x": "1"})), redacted);
    let link = |from: MemoryId, to: MemoryId, relation: &str| {
        (from, "linked", json!({"target": to.to_string(), "relation": relation}), false)
    };
    let forgotten = |id: MemoryId| (id, "forgotten", json!({"redacted_events": 1}), false);
    let tier = |id: MemoryId, from: &str, reason: &str| {
        (id, "tier_changed", json!({"from": from, "to": "long", "reason": reason}), false)
    };

    // What the commands can write restores.
    let good = backup_of(&[
        make(a, "a", false),
        make(b, "b", false),
        link(a, b, "mentions"),
        tier(a, "medium", "test"),
        make(c, "c", true),
        forgotten(c),
    ]);
    let mut f = Fixture::new();
    assert_eq!(f.store.import_backup("backup.jsonl", &mut good.as_bytes()).unwrap(), (6, 2));

    let long = "r".repeat(65);
    let big = "x".repeat(1 << 20);
    let cases = [
        (vec![make(a, "a", false), link(a, b, "mentions")], "backup.jsonl:3: field `payload`: no memory"),
        (vec![make(a, "a", false), forgotten(b)], "backup.jsonl:3: field `type`: a memory's first event"),
        (
            vec![make(a, "a", false), link(a, a, "mentions")],
            "backup.jsonl:3: field `payload`: a memory cannot link to itself",
        ),
        (
            vec![make(a, "a", false), make(b, "b", false), link(a, b, &long)],
            "backup.jsonl:4: field `payload`: a link's relation",
        ),
        (
            vec![make(a, "a", false), make(b, "b", false), link(a, b, " mentions")],
            "backup.jsonl:4: field `payload`: a link's relation must not start",
        ),
        (
            vec![make(a, "a", false), tier(a, "medium", "")],
            "backup.jsonl:3: field `payload`: a tier change's reason must not be empty",
        ),
        (vec![make(a, "a", false), tier(a, "short", "x")], "backup.jsonl:3: field `payload`: a tier change from short"),
        (
            vec![(a, "semantic_created", created("a", json!({})), false)],
            "backup.jsonl:2: field `payload`: concept 'a' has no facts",
        ),
        (
            vec![(a, "semantic_created", created("a", json!({"x": big})), false)],
            "backup.jsonl:2: field `payload`: this memory's content is 1025 KiB",
        ),
        (
            vec![make(a, "a", false), (a, "tagged", json!({"tag": ""}), false)],
            "backup.jsonl:3: field `payload`: a tag must not be empty",
        ),
        (
            vec![make(a, "a", true), forgotten(a), (a, "tagged", json!({"tag": "t"}), false)],
            "backup.jsonl:4: field `type`: memory",
        ),
        (
            vec![make(a, "a", true), forgotten(a), make(a, "a", false)],
            "backup.jsonl:4: field `type`: a memory's first event",
        ),
        (
            vec![make(a, "a", false), make(b, "b", true), forgotten(b), link(a, b, "r")],
            "backup.jsonl:5: field `payload`: memory",
        ),
        (vec![make(a, "a", false), forgotten(a)], "backup.jsonl:3: field `redacted_at`: memory"),
        (vec![make(a, "a", false), make(b, "b", true)], "backup.jsonl:3: field `redacted_at`: memory"),
        (
            vec![make(a, "a", true), (a, "tagged", json!({"tag": "t"}), false), forgotten(a)],
            "backup.jsonl:3: field `redacted_at`",
        ),
    ];
    for (events, want) in cases {
        let text = backup_of(&events);
        let mut g = Fixture::new();
        let err = g.store.import_backup("backup.jsonl", &mut text.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}\n   wanted: {want}");
        assert!(err.len() < 500, "{err}");
        assert_eq!(g.store.event_count().unwrap(), 0);
    }
}
