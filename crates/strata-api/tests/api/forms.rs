//! The desktop's forms, applied through the engine.

use strata_api::ErrorCode;

use crate::{Db, fact};

#[test]
fn an_edit_form_changes_fields_and_tags_and_refuses_a_new_key() {
    use strata_api::forms::{ContentForm, EditForm};
    let db = Db::new();
    let mut e = db.engine("u", None);
    let m = e.add(fact("pixel", "ginger")).unwrap();
    let form = |key: &str, facts: Vec<(&str, &str)>, tags: Vec<&str>| EditForm {
        content: ContentForm::Semantic {
            key: key.into(),
            facts: facts.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        },
        tags: tags.into_iter().map(String::from).collect(),
        importance: None,
        expected_version: None,
    };
    let edited = e
        .edit(&strata_api::Target::new(&m.id), form("pixel", vec![("colour", "tabby"), ("age", "3")], vec!["pets"]))
        .unwrap();
    let strata_core::Content::Semantic(c) = &edited.content else { panic!() };
    assert_eq!(c.facts.len(), 2, "the old fact went, two new ones came: {:?}", c.facts);
    assert_eq!(edited.tags, ["pets"]);
    let history = e.history(&strata_api::Target::new(&m.id)).unwrap();
    assert_eq!(history.len(), 3, "created, content updated, tagged");
    // Nothing changed: nothing written.
    e.edit(&strata_api::Target::new(&m.id), form("pixel", vec![("colour", "tabby"), ("age", "3")], vec!["pets"]))
        .unwrap();
    assert_eq!(e.history(&strata_api::Target::new(&m.id)).unwrap().len(), 3);
    let err = e.edit(&strata_api::Target::new(&m.id), form("rex", vec![("a", "b")], vec![])).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

/// A list, a yes/no and a group keep their shape through the edit form, which shows them as
/// words ("a, b", "yes", JSON for a group): saving unchanged writes nothing, a changed list is
/// split at its commas, and a yes/no that is neither is refused.
#[test]
fn an_edit_keeps_lists_yes_no_and_groups_as_they_were() {
    use strata_api::AddRequest;
    use strata_api::forms::{ContentForm, EditForm};
    use strata_core::{Concept, Content, FactValue};
    let db = Db::new();
    let mut e = db.engine("u", None);
    let facts = serde_json::json!({
        "achievements": ["Napoleonic Code", "Military conquests"],
        "emperor": true,
        "born": {"year": 1769, "place": "Corsica"},
        "name": "Napoleon"
    });
    let content = Content::Semantic(Concept { key: "napoleon".into(), facts: serde_json::from_value(facts).unwrap() });
    let m = e.add(AddRequest::new(content)).unwrap();
    let target = strata_api::Target::new(&m.id);
    let form = |achievements: &str, emperor: &str| EditForm {
        content: ContentForm::Semantic {
            key: "napoleon".into(),
            facts: [
                ("achievements", achievements),
                ("emperor", emperor),
                ("born", r#"{"place":"Corsica","year":1769}"#),
                ("name", "Napoleon"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        },
        tags: vec![],
        importance: None,
        expected_version: None,
    };
    let before = e.history(&target).unwrap().len();
    e.edit(&target, form("Napoleonic Code, Military conquests", "yes")).unwrap();
    assert_eq!(e.history(&target).unwrap().len(), before, "shown as words, saved unchanged: nothing written");

    let edited = e.edit(&target, form("Napoleonic Code, Military conquests, Legion of Honour", "no")).unwrap();
    let Content::Semantic(c) = &edited.content else { panic!() };
    assert_eq!(
        c.facts["achievements"],
        serde_json::from_value::<FactValue>(serde_json::json!([
            "Napoleonic Code",
            "Military conquests",
            "Legion of Honour"
        ]))
        .unwrap()
    );
    assert_eq!(c.facts["emperor"], FactValue::Bool(false));
    assert!(matches!(c.facts["born"], FactValue::Group(_)), "{:?}", c.facts["born"]);

    let err = e.edit(&target, form("x", "maybe")).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("yes or no"), "{}", err.message);
}

/// The history says what each edit changed, in words; a past version is compared with now and
/// restored as new events (the history keeps every step), tags and importance included.
#[test]
fn history_shows_differences_and_a_past_version_can_be_restored() {
    use strata_api::{Target, UpdateRequest};
    use strata_core::{Content, FactValue};
    let db = Db::new();
    let mut e = db.engine("u", None);
    let m = e.add(fact("user_preferences", "oolong tea")).unwrap();
    let t = Target::new(&m.id);
    let created = e.history(&t).unwrap()[0].seq;
    let set = |name: &str, v: &str| UpdateRequest {
        set_facts: vec![(name.into(), FactValue::Text(v.into()))],
        importance: Some(0.9),
        ..Default::default()
    };
    e.update(&t, set("v", "green tea")).unwrap();
    e.update(
        &t,
        UpdateRequest {
            set_facts: vec![("favourite_drink".into(), FactValue::Text("coffee".into()))],
            ..Default::default()
        },
    )
    .unwrap();
    e.tag(&t, &["drinks".to_string()]).unwrap();
    let summaries: Vec<String> = e.history(&t).unwrap().into_iter().map(|h| h.summary).collect();
    assert_eq!(summaries[0], "created: user preferences: v: oolong tea", "{summaries:?}");
    assert!(summaries.contains(&"changed v: “oolong tea” → “green tea”".to_string()), "{summaries:?}");
    assert!(summaries.contains(&"changed added favourite drink: “coffee”".to_string()), "{summaries:?}");

    let cmp = e.compare(&t, created).unwrap();
    assert_eq!(
        cmp.changes,
        vec![
            "v: “oolong tea” → “green tea”".to_string(),
            "added favourite drink: “coffee”".to_string(),
            "importance: 0.5 → 0.9".to_string(),
            "tagged “drinks”".to_string()
        ]
    );
    let events = e.history(&t).unwrap().len();
    let restored = e.restore(&t, created).unwrap();
    let Content::Semantic(c) = &restored.content else { panic!() };
    assert_eq!(c.facts.len(), 1);
    assert_eq!(c.facts["v"], FactValue::Text("oolong tea".into()));
    assert_eq!((restored.importance, restored.tags.len()), (0.5, 0));
    assert!(e.history(&t).unwrap().len() > events, "restored by new events; the old ones stay");
    assert!(e.compare(&t, created).unwrap().changes.is_empty(), "reads as it did then");
    // Restoring what it already is writes nothing; an unknown event is a clear error.
    let n = e.history(&t).unwrap().len();
    e.restore(&t, created).unwrap();
    assert_eq!(e.history(&t).unwrap().len(), n);
    assert!(e.compare(&Target::new("nope"), created).is_err());
}

/// Many memories at once: tagged, moved, forgotten — each all or none.
#[test]
fn a_selection_is_tagged_moved_and_forgotten_at_once() {
    use strata_api::Target;
    use strata_core::{Filter, Tier};
    let db = Db::new();
    let mut e = db.engine("u", None);
    let ids: Vec<String> = (0..5).map(|i| e.add(fact(&format!("k{i}"), "v")).unwrap().id).collect();
    let chosen: Vec<Target> = ids[..3].iter().map(Target::new).collect();
    assert_eq!(e.tag_many(&chosen, "trip").unwrap(), 3);
    assert_eq!(e.count(Filter { tags: vec!["trip".into()], ..Default::default() }).unwrap(), 3);
    assert_eq!(e.set_tier_many(&chosen, Tier::Long, "moved in a test").unwrap(), 3);
    assert_eq!(e.count(Filter { tiers: vec![Tier::Long], ..Default::default() }).unwrap(), 3);

    // One unknown id: nothing is done to the others.
    let mut with_bad = chosen.clone();
    with_bad.push(Target::new("no_such_memory"));
    assert_eq!(e.tag_many(&with_bad, "other").unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(e.count(Filter { tags: vec!["other".into()], ..Default::default() }).unwrap(), 0);
    assert_eq!(e.forget_many(&with_bad).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(e.count(Filter::default()).unwrap(), 5);
    assert_eq!(e.forget_many(&[]).unwrap_err().code, ErrorCode::InvalidInput);

    let report = e.forget_many(&chosen).unwrap();
    assert_eq!(report.ids.len(), 3);
    assert!(report.redacted_events >= 9, "created, tagged, moved each: {report:?}");
    assert_eq!(e.count(Filter::default()).unwrap(), 2);
    assert!(e.get(&chosen[0], None).is_err(), "forgotten");
}
