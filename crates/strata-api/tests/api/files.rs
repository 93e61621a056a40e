//! Answers drawing on the person's files: passages of the chosen datasets go into the prompt
//! beside memories, each labelled with its file and place; the passages an answer cites are
//! marked; the context report says what came from which dataset; an on-device answer a passage
//! bears out is presented; another person's datasets and unknown names are refused.

use std::sync::atomic::AtomicBool;

use strata_api::{AskParams, ContextParams, ErrorCode};
use strata_core::datasets::{Chunk, DatasetKind, NewDataset, Place};

use super::ask::{Scripted, answer};
use super::{Db, fact};

pub(crate) fn lease() -> NewDataset {
    let passage = |text: &str, page: u32, line: u32| Chunk {
        text: text.into(),
        place: Place { page: Some(page), heading: None, lines: (line, line + 1), row: None },
    };
    NewDataset {
        name: "lease".into(),
        source: "lease.pdf".into(),
        format: "pdf".into(),
        digest: "l1".into(),
        kind: DatasetKind::Document,
        columns: vec![],
        rows: vec![],
        sections: vec![],
        chunks: vec![
            passage("The agreement starts on 1 February 2026 and runs for two years.", 1, 4),
            passage("The monthly rent is 950 euros, paid on the first day of each month.", 2, 7),
            passage("Either party may end the agreement with 60 days of written notice.", 3, 2),
        ],
        notes: vec![],
    }
}

fn ask(
    engine: &mut strata_api::Engine,
    model: &Scripted,
    q: &str,
    datasets: &[&str],
) -> Result<strata_api::AskView, strata_api::ApiError> {
    let datasets = datasets.iter().map(|d| d.to_string()).collect();
    let params = AskParams { question: q.into(), record: false, datasets, ..Default::default() };
    engine.ask(params, model, &mut |_| {}, &AtomicBool::new(false))
}

#[test]
fn an_answer_draws_on_chosen_files_beside_memories_and_cites_them() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.add(fact("landlord", "the rent goes to Mrs Okafor by bank transfer")).unwrap();
    engine.load_dataset(&lease()).unwrap();
    let model = Scripted::new(vec![answer("The rent is 950 euros a month.", "stop")]);
    let v = ask(&mut engine, &model, "How much is the monthly rent?", &["lease"]).unwrap();

    // The prompt holds the memory and the passages, each passage labelled with file and place.
    let sent = model.sent.lock().unwrap()[0].clone();
    let prompt: String = sent.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
    assert!(prompt.contains("Mrs Okafor"), "{prompt}");
    assert!(prompt.contains("From the user's files (cite them by label):"), "{prompt}");
    assert!(prompt.contains("cite its label"), "the system prompt asks for citations: {prompt}");
    let rent = v.files.iter().find(|f| f.text.contains("950 euros")).expect("the rent's passage went in");
    assert_eq!((rent.source.as_str(), rent.place.as_str()), ("lease.pdf", "page 2, lines 7–8"));
    assert!(prompt.contains(&format!("[{}] (lease.pdf, page 2, lines 7–8) The monthly rent", rent.label)), "{prompt}");
    // The answer cites no label: nothing is marked cited. The report says what came from which
    // dataset.
    assert!(v.files.iter().all(|f| !f.cited), "{:?}", v.files);
    let report = &v.context.report;
    assert!(report.passages.iter().all(|p| p.dataset == "lease"));
    assert_eq!(report.passages.iter().filter(|p| p.label.is_some()).count(), v.files.len());
    assert!(report.sections[&strata_context::Section::Files].tokens > 0);

    // Without the dataset chosen, no passage goes in.
    let model = Scripted::new(vec![answer("I don't know.", "stop")]);
    let v = ask(&mut engine, &model, "How much is the monthly rent?", &[]).unwrap();
    assert!(v.files.is_empty() && v.context.report.passages.is_empty());
    let sent = model.sent.lock().unwrap()[0].clone();
    assert!(!sent.iter().any(|m| m.content.contains("950 euros")));
}

#[test]
fn the_passage_an_answer_cites_is_marked_by_its_label() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.load_dataset(&lease()).unwrap();
    // Ask once to learn the labels, then answer citing the notice passage's.
    let probe = Scripted::new(vec![answer("…", "stop")]);
    let v = ask(&mut engine, &probe, "How much notice ends the agreement?", &["lease"]).unwrap();
    let notice = v.files.iter().find(|f| f.text.contains("60 days")).unwrap().label;
    let model = Scripted::new(vec![answer(&format!("Sixty days of written notice [{notice}]."), "stop")]);
    let v = ask(&mut engine, &model, "How much notice ends the agreement?", &["lease"]).unwrap();
    let cited: Vec<&str> = v.files.iter().filter(|f| f.cited).map(|f| f.place.as_str()).collect();
    assert_eq!(cited, vec!["page 3, lines 2–3"]);
}

#[test]
fn an_on_device_answer_a_passage_bears_out_is_presented_with_it() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.load_dataset(&lease()).unwrap();
    let model = Scripted {
        provider: "on-device",
        ..Scripted::new(vec![answer("The rent is 950 euros.", "stop"), answer("The rent is 700 euros.", "stop")])
    };
    let v = ask(&mut engine, &model, "How much is the monthly rent?", &["lease"]).unwrap();
    assert_eq!(v.answer, "The rent is 950 euros.");
    let cited: Vec<&str> = v.files.iter().filter(|f| f.cited).map(|f| f.source.as_str()).collect();
    assert_eq!(cited, vec!["lease.pdf"], "the passage that bears it out: {:?}", v.files);
    assert_eq!(v.source, None, "no memory is its source");
    let v = ask(&mut engine, &model, "How much is the monthly rent?", &["lease"]).unwrap();
    assert_eq!(v.answer, strata_api::answer_check::WITHHELD_WITH_FILES);
}

#[test]
fn unknown_and_other_people_s_datasets_are_refused() {
    let db = Db::new();
    let mut ana = db.engine("ana", None);
    ana.load_dataset(&lease()).unwrap();
    let mut bo = db.engine("bo", None);
    let model = Scripted::new(vec![]);
    for (engine, name) in [(&mut ana, "leases"), (&mut bo, "lease")] {
        let err = ask(engine, &model, "How much is the rent?", &[name]).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound, "{name}");
        assert!(err.message.contains(name), "{}", err.message);
    }
    assert!(model.sent.lock().unwrap().is_empty(), "nothing was sent");
    // A search naming another person's dataset, or none there is, is refused the same way.
    for (engine, name) in [(&ana, "leases"), (&bo, "lease")] {
        let err = engine.search_datasets(&[name.to_string()], "rent", 5).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::NotFound, format!("no dataset named {name}").as_str())
        );
    }
    // The context alone draws on them too (what MCP's build_context and `strata context` use).
    let params = ContextParams {
        model: "gpt-4o".into(),
        message: "How much is the rent?".into(),
        datasets: vec!["lease".into()],
        ..Default::default()
    };
    let c = ana.build_context(params).unwrap();
    assert!(c.report.passages.iter().any(|p| p.label.is_some() && p.place == "page 2, lines 7–8"));
}
