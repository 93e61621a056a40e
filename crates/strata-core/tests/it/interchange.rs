//! Seed-002 documents and JSON Lines backups: round trips and bad input.

use crate::support::*;
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

#[test]
fn the_seed_document_round_trips_exactly() {
    let mut f = Fixture::new();
    let counts = import(&mut f, SEED).unwrap();
    assert_eq!((counts.semantic, counts.episodic, counts.procedural), (2, 2, 2));
    assert_eq!(export(&f), SEED, "export(import(seed)) must be the seed itself");

    // And the other way: import(export(store)) gives the same memories.
    let mut g = Fixture::new();
    import(&mut g, &export(&f)).unwrap();
    let strip = |s: Snapshot| s.memories.into_iter().map(|m| (m.content, m.scope, m.tier)).collect::<Vec<_>>();
    assert_eq!(strip(g.store.snapshot().unwrap()), strip(f.store.snapshot().unwrap()));

    let ep = f.store.list(&Filter { kinds: vec![MemoryKind::Episodic], ..Default::default() }, 10, None).unwrap();
    assert_eq!(ep.items[0].scope.session_id.as_deref(), Some("abc123"));
    assert_eq!(strata_core::time::format_time(ep.items[1].occurred_at()), "2023-07-15T14:32:45Z");
}

#[test]
fn a_malformed_seed_names_the_line_and_field_and_imports_nothing() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"semantic": {"a": {"x": "1"}},
  "episodic": [{"timestamp": "2023-07-15T14:32:45", "query": 5}]}"#,
            "seed.json:2: field `episodic[0].query`: invalid type: integer `5`, expected a string",
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
        ("{\"semantic\": {\"a\": {\"x\": \"1\"}}", "seed.json:1: EOF while parsing"),
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

/// A JSON object with a repeated key keeps the last value (as JSON parsers do).
#[test]
fn a_repeated_key_in_one_document_keeps_the_last_value() {
    let mut f = Fixture::new();
    let c = import(&mut f, r#"{"semantic": {"a": {"x": "1"}, "a": {"y": "2"}}}"#).unwrap();
    assert_eq!(c.semantic, 1);
    let m = f.store.find_by_key("default", None, None, "a").unwrap().remove(0);
    assert_eq!(m.content, concept("a", &[("y", "2")]));
}

#[test]
fn importing_a_key_that_exists_fails_whole() {
    let mut f = Fixture::new();
    f.add(concept("theory_of_relativity", &[("year", "1905")]));
    let err = import(&mut f, SEED).unwrap_err().to_string();
    assert!(err.contains("'theory_of_relativity' already exists"), "{err}");
    assert_eq!(f.store.stats().unwrap().memories, 1);
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

#[test]
fn a_damaged_backup_names_the_line_and_imports_nothing() {
    let mut f = Fixture::new();
    import(&mut f, SEED).unwrap();
    let mut backup = Vec::new();
    f.store.export_backup(&mut backup).unwrap();
    let text = String::from_utf8(backup).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let with_line = |i: usize, new: &str| {
        let mut l = lines.clone();
        l[i] = new;
        l.join("\n")
    };
    let cases = [
        (
            with_line(3, &lines[3].replace("\"stream_version\":1", "\"stream_version\":2")),
            "backup.jsonl:4: field `stream_version`",
        ),
        (with_line(1, &lines[1].replace("\"birth\"", "\"birth\":null,\"x\"")), "backup.jsonl:2: field `payload`"),
        (with_line(5, "{\"seq\": 5"), "backup.jsonl:6: EOF while parsing"),
        (
            with_line(0, "{\"format\":\"zip\",\"version\":1,\"events\":6,\"exported_at\":\"x\"}"),
            "backup.jsonl:1: not a Strata backup",
        ),
        (lines[..4].join("\n"), "backup.jsonl:1: the header promises 6 events but the file has 3"),
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
    for (text, want) in cases {
        let mut g = Fixture::new();
        let err = g.store.import_backup("backup.jsonl", &mut text.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}\n   wanted: {want}");
        assert_eq!(g.store.event_count().unwrap(), 0);
    }
}
