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
