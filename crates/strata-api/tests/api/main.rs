//! The Engine as every front end uses it: scoping between users and agents, key lookup,
//! updates, and error codes.

use std::sync::Arc;

use strata_api::{AddRequest, Engine, EngineOptions, ErrorCode, Target, UpdateRequest};
use strata_core::{Actor, Concept, Content, FactValue, Filter, ManualClock};

mod analytics;
mod ask;
mod concepts;
mod curation;
mod embedding;
mod extract;
mod files;
mod forms;
mod graph;
mod health;
mod hostile_files;
mod in_flight;
mod jobs;

struct Db {
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
}

impl Db {
    fn new() -> Db {
        let clock = Arc::new(ManualClock::new(strata_core::time::parse_time("2026-01-31T12:00Z").unwrap()));
        Db { dir: tempfile::tempdir().unwrap(), clock }
    }

    fn engine(&self, user: &str, agent: Option<&str>) -> Engine {
        let opts = EngineOptions {
            user_id: user.into(),
            agent_id: agent.map(Into::into),
            client: "test".into(),
            actor: Actor::Agent,
            ..Default::default()
        };
        Engine::open_with_clock(&self.dir.path().join("s.db"), opts, self.clock.clone()).unwrap()
    }
}

fn fact(key: &str, value: &str) -> AddRequest {
    AddRequest {
        content: Content::Semantic(Concept {
            key: key.into(),
            facts: [("v".to_string(), FactValue::Text(value.into()))].into_iter().collect(),
        }),
        tags: vec![],
        importance: None,
        tier: None,
        session_id: None,
        private: false,
    }
}

fn value(e: &mut Engine, target: &str) -> Result<String, ErrorCode> {
    e.get(&Target::new(target), None).map_err(|err| err.code).map(|m| match m.content {
        Content::Semantic(c) => match &c.facts["v"] {
            FactValue::Text(t) => t.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    })
}

#[test]
fn users_never_see_each_others_memories() {
    let db = Db::new();
    let mut alice = db.engine("alice", None);
    let mut bob = db.engine("bob", None);
    let secret = alice.add(fact("diary", "alice's")).unwrap();
    bob.add(fact("diary", "bob's")).unwrap();

    assert_eq!(value(&mut alice, "diary"), Ok("alice's".into()));
    assert_eq!(value(&mut bob, "diary"), Ok("bob's".into()));
    // By id, every operation on another user's memory is "not found".
    let t = Target::new(&secret.id);
    assert_eq!(bob.get(&t, None).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(bob.history(&t).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(bob.tag(&t, &["x".into()]).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(
        bob.update(&t, UpdateRequest { importance: Some(1.0), ..Default::default() }).unwrap_err().code,
        ErrorCode::NotFound
    );
    assert_eq!(bob.forget(&t).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(bob.list(Filter::default(), 100, None).unwrap().items.len(), 1);
    assert!(bob.search("alice's", Filter::default(), 10, ("", "")).unwrap().is_empty());
    // Asking for another user in the filter does not widen the scope.
    let widened = Filter { user_id: Some("alice".into()), ..Default::default() };
    assert!(bob.list(widened, 100, None).unwrap().items.iter().all(|m| m.scope.user_id == "bob"));
    assert_eq!(value(&mut alice, &secret.id), Ok("alice's".into()), "alice's memory is untouched");
}

#[test]
fn agents_see_shared_memories_and_their_own_only() {
    let db = Db::new();
    let mut user = db.engine("u", None);
    let mut planner = db.engine("u", Some("planner"));
    let mut coder = db.engine("u", Some("coder"));
    user.add(fact("style", "shared")).unwrap();
    let private = planner.add(fact("style", "planner's own")).unwrap();
    coder.add(fact("editor", "helix")).unwrap();

    assert_eq!(value(&mut planner, "style"), Ok("planner's own".into()), "an agent's own key wins");
    assert_eq!(value(&mut coder, "style"), Ok("shared".into()), "then the shared one");
    assert_eq!(value(&mut planner, "editor"), Err(ErrorCode::NotFound));
    assert_eq!(value(&mut coder, &private.id), Err(ErrorCode::NotFound));
    let count = |e: &Engine| e.list(Filter::default(), 100, None).unwrap().items.len();
    assert_eq!((count(&user), count(&planner), count(&coder)), (3, 2, 2));
    assert_eq!(value(&mut user, &private.id), Ok("planner's own".into()), "the user sees every agent's");
}

#[test]
fn every_operation_records_its_client_and_groups_its_events() {
    let db = Db::new();
    let mut e = db.engine("u", None);
    let m = e.add(fact("tea", "green")).unwrap();
    let req = UpdateRequest {
        set_facts: vec![("v".into(), FactValue::Text("oolong".into()))],
        importance: Some(0.9),
        ..Default::default()
    };
    e.update(&Target::new(&m.id), req).unwrap();
    let h = e.history(&Target::new("tea")).unwrap();
    assert_eq!(h.len(), 3);
    assert!(h.iter().all(|ev| ev.client.as_deref() == Some("test") && ev.actor == "agent"));
    assert_eq!(h[1].correlation_id, h[2].correlation_id);
    assert_ne!(h[0].correlation_id, h[1].correlation_id);
    assert_eq!(e.get(&Target::new("tea"), None).unwrap().source.app, "test");
    let in_session = AddRequest { session_id: Some("s9".into()), ..fact("note", "x") };
    e.add(in_session).unwrap();
    assert_eq!(e.history(&Target::new("note")).unwrap()[0].session_id.as_deref(), Some("s9"));
}

/// A path below this crate's folder. The folder is read when the test runs (cargo sets
/// `CARGO_MANIFEST_DIR` for it), not baked in when it compiles: a build cache shared by
/// checkouts in different places otherwise hands one checkout another's paths.
fn in_crate(path: &str) -> std::path::PathBuf {
    std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
        .join(path)
}
