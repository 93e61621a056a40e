//! Semantic memory as the reference MCP memory server's knowledge graph.

use strata_api::ErrorCode;
use strata_api::graph::{Entity, Graph, ObservationAddition, ObservationDeletion, Relation};

use crate::{Db, fact};

fn entity(name: &str, ty: &str, obs: &[&str]) -> Entity {
    Entity { name: name.into(), entity_type: ty.into(), observations: obs.iter().map(|s| s.to_string()).collect() }
}

fn rel(from: &str, to: &str, ty: &str) -> Relation {
    Relation { from: from.into(), to: to.into(), relation_type: ty.into() }
}

fn names(g: &Graph) -> Vec<&str> {
    g.entities.iter().map(|e| e.name.as_str()).collect()
}

fn fixture() -> std::io::BufReader<std::fs::File> {
    std::io::BufReader::new(std::fs::File::open(crate::in_crate("tests/fixtures/memory.json")).unwrap())
}

#[test]
fn entities_relations_and_observations_round_trip() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    let made = e
        .graph_create_entities(&[
            entity("Ada", "person", &["writes code", "writes code"]),
            entity("Bletchley", "place", &[]),
        ])
        .unwrap();
    assert_eq!(made.len(), 2);
    assert_eq!(made[0].observations, ["writes code"], "duplicate observations are kept once");
    // Existing names are skipped, as the reference server does.
    assert!(e.graph_create_entities(&[entity("Ada", "robot", &[])]).unwrap().is_empty());

    assert_eq!(e.graph_create_relations(&[rel("Ada", "Bletchley", "works_at")]).unwrap().len(), 1);
    assert!(e.graph_create_relations(&[rel("Ada", "Bletchley", "works_at")]).unwrap().is_empty());

    let added = e
        .graph_add_observations(&[ObservationAddition {
            entity_name: "Ada".into(),
            contents: vec!["writes code".into(), "likes tea".into()],
        }])
        .unwrap();
    assert_eq!(added[0].added_observations, ["likes tea"]);

    let g = e.graph_read().unwrap();
    assert_eq!(names(&g), ["Ada", "Bletchley"]);
    assert_eq!(g.entities[0], entity("Ada", "person", &["writes code", "likes tea"]));
    assert_eq!(g.relations, [rel("Ada", "Bletchley", "works_at")]);

    // Search is a case-insensitive substring match over name, type and observations;
    // relations with either end among the matches come along.
    assert_eq!(names(&e.graph_search("TEA").unwrap()), ["Ada"]);
    assert_eq!(e.graph_search("TEA").unwrap().relations, [rel("Ada", "Bletchley", "works_at")]);
    assert_eq!(e.graph_search("place").unwrap().relations.len(), 1, "incoming relations too");
    assert_eq!(names(&e.graph_search("place").unwrap()), ["Bletchley"]);
    let both = e.graph_open(&["Bletchley".into(), "Ada".into(), "nobody".into()]).unwrap();
    assert_eq!(names(&both), ["Ada", "Bletchley"]);
    assert_eq!(both.relations.len(), 1);

    let removed = e
        .graph_delete_observations(&[ObservationDeletion {
            entity_name: "Ada".into(),
            observations: vec!["likes tea".into(), "never said".into()],
        }])
        .unwrap();
    assert_eq!(removed, 1);
    assert_eq!(e.graph_open(&["Ada".into()]).unwrap().entities[0].observations, ["writes code"]);

    assert_eq!(e.graph_delete_relations(&[rel("Ada", "Bletchley", "works_at")]).unwrap(), 1);
    assert!(e.graph_read().unwrap().relations.is_empty());
    // The log keeps the story: linked, then unlinked.
    let history = e.history(&strata_api::Target::new("Ada")).unwrap();
    let types: Vec<&str> = history.iter().map(|h| h.event_type.as_str()).collect();
    assert!(types.contains(&"linked") && types.contains(&"unlinked"), "{types:?}");
}

#[test]
fn deleting_an_entity_erases_it_and_the_relations_to_it() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    e.graph_import("memory.json", &mut fixture()).unwrap();
    assert_eq!(e.graph_read().unwrap().relations.len(), 2);

    assert_eq!(e.graph_delete_entities(&["Rex".into(), "ghost".into()]).unwrap(), ["Rex"]);
    let g = e.graph_read().unwrap();
    assert_eq!(names(&g), ["John_Smith", "Anthropic"]);
    assert_eq!(g.relations, [rel("John_Smith", "Anthropic", "works_at")]);
    assert!(e.graph_search("border collie").unwrap().entities.is_empty());
    drop(e);
    let bytes = std::fs::read(db.dir.path().join("s.db")).unwrap();
    let needle = b"border collie";
    assert!(!bytes.windows(needle.len()).any(|w| w == needle), "the forgotten observation is still in the file");
}

#[test]
fn memory_json_imports_in_one_transaction_and_merges() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    let first = e.graph_import("memory.json", &mut fixture()).unwrap();
    assert_eq!((first.entities_created, first.entities_merged, first.relations_created), (3, 0, 2));
    let again = e.graph_import("memory.json", &mut fixture()).unwrap();
    assert_eq!((again.entities_created, again.entities_merged, again.relations_created), (0, 0, 0));

    // Export writes the same lines back (entities oldest first, then relations).
    let mut out = Vec::new();
    assert_eq!(e.graph_export(&mut out).unwrap(), 5);
    let mut reimported = db.engine("v", None);
    reimported.graph_import("export", &mut out.as_slice()).unwrap();
    assert_eq!(reimported.graph_read().unwrap(), e.graph_read().unwrap());

    // A bad line names itself and nothing is written; nor is a relation to a missing entity.
    let bad = "{\"type\":\"entity\",\"name\":\"New\",\"entityType\":\"x\",\"observations\":[]}\n{\"type\":\"entity\",\"name\":3}\n";
    let err = e.graph_import("bad.json", &mut bad.as_bytes()).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadImport);
    assert!(
        err.message.starts_with("bad.json:2: field `name`: this should be text in quotes, not a number (3)"),
        "{}",
        err.message
    );
    assert!(e.graph_open(&["New".into()]).unwrap().entities.is_empty(), "a failed import wrote something");
    // The reference server keeps relations to entities that do not exist: listed, not linked.
    let dangling = "{\"type\":\"entity\",\"name\":\"New\",\"entityType\":\"x\"}\n{\"type\":\"relation\",\"from\":\"New\",\"to\":\"Nowhere\",\"relationType\":\"r\"}\n";
    let report = e.graph_import("dangling.json", &mut dangling.as_bytes()).unwrap();
    assert_eq!(report.entities_created, 1);
    assert_eq!(report.relations_skipped, [rel("New", "Nowhere", "r")]);
}

#[test]
fn a_batch_with_one_bad_item_writes_nothing() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    e.graph_create_entities(&[entity("A", "t", &[]), entity("B", "t", &[])]).unwrap();
    let err = e.graph_create_relations(&[rel("A", "B", "r"), rel("A", "Z", "r")]).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(e.graph_read().unwrap().relations.is_empty());
    let err = e.graph_create_entities(&[entity("C", "t", &[]), entity(" ", "t", &[])]).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert_eq!(names(&e.graph_read().unwrap()), ["A", "B"]);
    let err = e
        .graph_add_observations(&[ObservationAddition { entity_name: "Z".into(), contents: vec!["x".into()] }])
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[test]
fn other_concepts_read_as_entities_and_agents_keep_their_own() {
    let db = Db::new();
    let mut shared = db.engine("u", None);
    shared.add(fact("favourite_tea", "oolong")).unwrap();
    let g = shared.graph_read().unwrap();
    assert_eq!(g.entities, [entity("favourite_tea", "concept", &["v: oolong"])]);
    // Deleting the observation read from a fact removes that fact.
    shared
        .graph_delete_observations(&[ObservationDeletion {
            entity_name: "favourite_tea".into(),
            observations: vec!["v: oolong".into()],
        }])
        .unwrap();
    assert_eq!(shared.graph_read().unwrap().entities, [entity("favourite_tea", "concept", &[])]);

    db.clock.advance(chrono::Duration::seconds(1));
    let mut bot = db.engine("u", Some("bot"));
    bot.graph_create_entities(&[entity("Secret", "plan", &["bot only"])]).unwrap();
    assert_eq!(names(&bot.graph_read().unwrap()), ["favourite_tea", "Secret"]);
    assert_eq!(names(&shared.graph_read().unwrap()), ["favourite_tea", "Secret"], "the user sees every agent's");
    let other = db.engine("u", Some("other"));
    assert_eq!(names(&other.graph_read().unwrap()), ["favourite_tea"], "agents do not see each other's");
}

/// Regression: a line with a key twice kept the last, and an entity refused after parsing
/// named no line.
#[test]
fn a_bad_memory_json_line_names_its_line_and_field_and_writes_nothing() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    let good = "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"x\"}\n";
    let long = "n".repeat(300);
    let cases = [
        (
            format!("{good}{{\"type\":\"entity\",\"name\":\"B\",\"name\":\"C\",\"entityType\":\"x\"}}"),
            "m.json:2: field `name`: this key appears twice",
        ),
        (format!("{good}{{\"type\":\"entity\",\"entityType\":\"x\"}}"), "m.json:2: field `name`: missing"),
        (
            format!(
                "{good}{{\"type\":\"relation\",\"from\":\"A\",\"to\":\"A\",\"relationType\":\"r\",\"name\":\"A\"}}"
            ),
            "m.json:2: field `name`: a relation line has no `name`",
        ),
        (format!("{good}{{\"type\":\"node\"}}"), "m.json:2: field `type`: unknown variant `node`"),
        (format!("{good}{} {{}}", good.trim_end()), "m.json:2: there is more after the end of the document"),
        (
            format!("{good}\n\n{{\"type\":\"entity\",\"name\":\"{long}\",\"entityType\":\"x\"}}"),
            "m.json:4: entity 'nnn",
        ),
        (
            format!("{good}{{\"type\":\"relation\",\"from\":\"A\",\"to\":\"A\",\"relationType\":\"r\"}}"),
            "m.json:2: relation 'A' → 'A': a memory cannot link to itself",
        ),
        (
            format!("{{\"type\":\"relation\",\"from\":\"A\",\"to\":\"A\",\"relationType\":\"{long}\"}}\n{good}"),
            "m.json:1: relation 'A' → 'A': a link's relation",
        ),
        (
            format!(
                "{good}{{\"type\":\"entity\",\"name\":\"B\",\"entityType\":\"x\",\"observations\":[\"{}\"]}}",
                "o".repeat(1 << 20)
            ),
            "m.json:2: entity 'B': this memory's content is",
        ),
    ];
    for (text, want) in cases {
        let err = e.graph_import("m.json", &mut text.as_bytes()).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadImport, "{err}");
        assert!(err.message.starts_with(want), "{}\n   wanted: {want}", err.message);
        assert!(err.message.len() < 500, "{}", err.message.len());
        assert!(e.graph_read().unwrap().entities.is_empty(), "{want}: a failed import wrote something");
    }
    let mut bytes = good.as_bytes().to_vec();
    bytes.extend_from_slice(b"{\"type\":\"entity\",\"name\":\"\xff\",\"entityType\":\"x\"}\n");
    let err = e.graph_import("m.json", &mut bytes.as_slice()).unwrap_err();
    assert!(err.message.starts_with("m.json:2: byte 26 of the line is not UTF-8"), "{}", err.message);
}

/// Regression: the format was guessed from the first line's text, so an entity named
/// "strata-backup" was read as a backup, and a graph whose first line was damaged as a seed
/// document (whose error then pointed at line 2).
#[test]
fn the_format_is_detected_by_what_the_file_holds() {
    use strata_api::ImportFormat;
    let db = Db::new();
    let mut e = db.engine("u", None);
    let entity = |name: &str| format!("{{\"type\":\"entity\",\"name\":\"{name}\",\"entityType\":\"x\"}}\n");
    let graph = format!("{}{}", entity("strata-backup"), entity("B"));
    assert_eq!(e.import("m.json", &mut graph.as_bytes(), None).unwrap(), (ImportFormat::Graph, 2));
    let bom = format!("\u{FEFF}{}", entity("C"));
    assert_eq!(e.import("m.json", &mut bom.as_bytes(), None).unwrap(), (ImportFormat::Graph, 1));
    let seed = "{\"semantic\": {\"strata-backup\": {\"x\": \"1\"}}}";
    assert_eq!(db.engine("v", None).import("s.json", &mut seed.as_bytes(), None).unwrap(), (ImportFormat::Seed, 1));
    let damaged = format!("{{\"type\":\"entity\",\"name\":\n{}", entity("D"));
    let err = e.import("m.json", &mut damaged.as_bytes(), None).unwrap_err();
    assert!(err.message.starts_with("m.json:1: the file ends in the middle of an entry"), "{}", err.message);
    let unusual =
        format!("{{\"observations\":[],\"entityType\":\"x\",\"name\":\"E\",\"type\":\"entity\"}}\n{}", entity("F"));
    assert_eq!(e.import("m.json", &mut unusual.as_bytes(), None).unwrap(), (ImportFormat::Graph, 2));
}
