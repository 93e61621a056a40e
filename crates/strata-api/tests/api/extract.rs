//! Extraction with a scripted model (deterministic): add, update with history, no-op,
//! contradiction, idempotence, a malformed reply, review, and forgetting a source.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use strata_api::{AddRequest, Engine, ErrorCode, ExtractParams, ExtractReport, Review, Target};
use strata_core::interchange::no_tick;
use strata_core::{
    ChatError, ChatModel, ChatRequest, ChatResponse, Content, Episode, EpisodeBody, Filter, MemoryKind, ToolCall, Usage,
};

use super::Db;

/// Answers from a script, keeping what it was asked.
pub(crate) struct Scripted {
    replies: Mutex<Vec<ChatResponse>>,
    asked: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    pub(crate) fn new(replies: Vec<ChatResponse>) -> Scripted {
        Scripted { replies: Mutex::new(replies), asked: Mutex::new(vec![]) }
    }
    fn calls(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
    pub(crate) fn left(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

impl ChatModel for Scripted {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model(&self) -> &str {
        "extractor"
    }
    fn chat(&self, r: &ChatRequest, _: &mut dyn FnMut(&str), _: &AtomicBool) -> Result<ChatResponse, ChatError> {
        self.asked.lock().unwrap().push(r.clone());
        let mut replies = self.replies.lock().unwrap();
        assert!(!replies.is_empty(), "the script ran out at call {}", self.asked.lock().unwrap().len());
        Ok(replies.remove(0))
    }
}

pub(crate) fn text(s: &str) -> ChatResponse {
    ChatResponse {
        content: s.into(),
        usage: Usage { prompt_tokens: 100, completion_tokens: 20 },
        finish: "stop".into(),
        ..Default::default()
    }
}

fn tool(name: &str, args: &str) -> ChatResponse {
    ChatResponse {
        tool_calls: vec![ToolCall { id: "c1".into(), name: name.into(), arguments: args.into() }],
        finish: "tool_calls".into(),
        ..Default::default()
    }
}

pub(crate) fn say(e: &mut Engine, session: &str, at: &str, speaker: &str, words: &str) -> String {
    let content = Content::Episodic(Episode {
        occurred_at: strata_core::time::parse_time(at).unwrap(),
        body: EpisodeBody::Utterance { speaker: speaker.into(), text: words.into() },
        concepts: vec![],
        extra: Default::default(),
    });
    e.add(AddRequest { session_id: Some(session.into()), ..AddRequest::new(content) }).unwrap().id
}

fn run(e: &mut Engine, model: &Scripted, review: Review) -> Result<ExtractReport, strata_api::ApiError> {
    e.extract(&ExtractParams { review, ..Default::default() }, model, &mut no_tick, &AtomicBool::new(false))
}

const ANA_LISBON: &str = r#"{"subjects": [{"name": "Ana", "description": "The user's sister.", "facts": [
    {"fact": "Ana lives in Lisbon", "topic": "home", "turns": [1]},
    {"fact": "Ana works as a nurse", "topic": "job", "turns": [2]}]}]}"#;

#[test]
fn facts_are_added_then_updated_with_their_history_and_a_repeat_changes_nothing() {
    let db = Db::new();
    let mut e = db.engine("me", None);
    let first = say(&mut e, "s1", "2023-05-06T10:00Z", "user", "My sister Ana lives in Lisbon.");
    say(&mut e, "s1", "2023-05-06T10:01Z", "user", "She works as a nurse there.");
    let model = Scripted::new(vec![text(ANA_LISBON)]);
    let report = run(&mut e, &model, Review::Apply).unwrap();
    assert_eq!((report.sessions, report.turns, report.calls), (1, 2, 1), "nothing known: no merge call");
    assert_eq!(report.decisions.iter().map(|d| d.action.as_str()).collect::<Vec<_>>(), ["add", "add"]);
    let doc = e.document("Ana").unwrap();
    assert_eq!(doc.description, "The user's sister.");
    assert_eq!(doc.content, "- Ana lives in Lisbon\n- Ana works as a nurse");
    assert_eq!(doc.facts[0].key, "ana/home");
    assert_eq!(doc.facts[0].sources, vec![first.clone()], "the turn it was said in");
    assert_eq!(doc.facts[0].stated.as_deref(), Some("2023-05-06"), "the conversation's date");

    // Running again reads nothing: every turn was read.
    let idle = Scripted::new(vec![]);
    let again = run(&mut e, &idle, Review::Apply).unwrap();
    assert_eq!((again.turns, again.decisions.len(), idle.calls()), (0, 0, 0));

    // A year later Ana moved: an update, and a repeat of her job is a no-op with a new source.
    db.clock.advance(chrono::Duration::days(365));
    let moved = say(&mut e, "s2", "2024-03-02T09:00Z", "user", "Ana moved to Porto last month. Still a nurse.");
    let model = Scripted::new(vec![
        text(
            r#"{"subjects": [{"name": "ana", "description": "", "facts": [
            {"fact": "Ana lives in Porto", "topic": "home", "turns": [1]},
            {"fact": "Ana works as a nurse", "topic": "job", "turns": [1]}]}]}"#,
        ),
        // Only the first fact reaches the merge call: the second is known word for word.
        text(
            r#"```json
{"decisions": [{"new": 1, "action": "update", "known": 1, "reason": "Ana moved"}]}
```"#,
        ),
    ]);
    let report = run(&mut e, &model, Review::Apply).unwrap();
    assert_eq!((report.calls, model.left()), (2, 0));
    let asked = model.asked.lock().unwrap().clone();
    let (extraction, merge) = (&asked[0], &asked[1]);
    assert!(extraction.messages[0].content.contains("- Ana: The user's sister."), "known subjects are listed");
    assert!(merge.messages[1].content.contains("K1. Ana lives in Lisbon"), "{}", merge.messages[1].content);
    assert!(merge.messages[1].content.contains("N1. Ana lives in Porto"));
    assert!(!merge.messages[1].content.contains("N2."), "a known fact is not asked about");
    let actions: Vec<_> = report.decisions.iter().map(|d| (d.action.as_str(), d.reason.as_str())).collect();
    assert_eq!(actions, [("update", "Ana moved"), ("noop", "already known in these words")]);
    assert_eq!(report.decisions[0].previous.as_deref(), Some("Ana lives in Lisbon"));

    let doc = e.document("ana").unwrap();
    assert_eq!(doc.content, "- Ana lives in Porto\n- Ana works as a nurse", "no contradiction left standing");
    let home = &doc.facts[0];
    assert_eq!(home.sources, vec![moved.clone()]);
    assert_eq!(home.history.len(), 2, "the old value is kept: {:?}", home.history);
    assert_eq!(home.history[0].fact, "Ana lives in Lisbon");
    assert_eq!(home.history[0].stated.as_deref(), Some("2023-05-06"));
    assert_eq!(home.history[0].valid_until.as_deref(), Some("2024-03-02"), "valid until the move was said");
    assert_eq!(doc.facts[1].sources.len(), 2, "the job was said twice");

    // Read as it was before the second conversation was recorded, the fact said Lisbon.
    let as_of = strata_core::AsOf::Time(strata_core::time::parse_time("2026-06-01T00:00Z").unwrap());
    let then = e.get(&Target::new(&home.id), Some(as_of)).unwrap();
    assert!(format!("{:?}", then.content).contains("Lisbon"));
    assert_eq!(e.decisions(100).unwrap().len(), 4, "every decision is recorded");
}

#[test]
fn a_remote_model_calls_the_tools_and_a_decision_names_a_known_fact() {
    let db = Db::new();
    let mut e = db.engine("me", None);
    say(&mut e, "s1", "2023-05-06T10:00Z", "user", "I'm vegetarian.");
    let model = Scripted::new(vec![tool(
        "extract_facts",
        r#"{"name": "user", "description": "The person speaking.", "facts": [{"fact": "The user is vegetarian", "topic": "diet", "turns": [1]}]}"#,
    )]);
    run(&mut e, &model, Review::Apply).unwrap();
    assert_eq!(model.asked.lock().unwrap()[0].tools[0].name, "extract_facts");
    say(&mut e, "s2", "2023-06-01T10:00Z", "user", "Actually I eat fish now, so pescatarian.");
    let model = Scripted::new(vec![
        tool(
            "extract_facts",
            r#"{"name": "me", "description": "", "facts": [{"fact": "The user is pescatarian", "topic": "diet", "turns": [1]}]}"#,
        ),
        tool("decide", r#"{"decisions": [{"new": 1, "action": "update", "known": 1, "reason": "a correction"}]}"#),
    ]);
    run(&mut e, &model, Review::Apply).unwrap();
    let doc = e.document("user").unwrap();
    assert_eq!(doc.name, "The user");
    assert_eq!(doc.content, "- The user is pescatarian");
}

#[test]
fn a_malformed_reply_is_asked_again_then_refused_with_nothing_half_applied() {
    let db = Db::new();
    let mut e = db.engine("me", None);
    say(&mut e, "s1", "2023-05-06T10:00Z", "user", "My dog is called Rex.");
    let before = e.count(Filter::default()).unwrap();
    let model = Scripted::new(vec![text(""), text(r#"{"subjects": [{"name": "Rex", "facts": "a dog"}]}"#)]);
    let err = run(&mut e, &model, Review::Apply).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadReply);
    assert!(err.message.contains("could not be read") && err.message.contains("asked twice"), "{}", err.message);
    assert_eq!(model.calls(), 2);
    assert_eq!(e.count(Filter::default()).unwrap(), before, "no fact was kept");
    // The turn stays unread: a better reply later reads it.
    let model = Scripted::new(vec![text(
        "Sure! Here you go: {\"subjects\": [{\"name\": \"Rex\", \"description\": \"The user's dog.\", \"facts\": [{\"fact\": \"Rex is the user's dog\", \"topic\": \"pet\", \"turns\": [1]}]}]}",
    )]);
    run(&mut e, &model, Review::Apply).unwrap();
    assert_eq!(e.document("rex").unwrap().facts.len(), 1);
    // A merge that decides nothing about a new fact is malformed too.
    say(&mut e, "s2", "2023-06-01T10:00Z", "user", "Rex is five.");
    let model = Scripted::new(vec![
        text(
            r#"{"subjects": [{"name": "Rex", "description": "", "facts": [{"fact": "Rex is five years old", "topic": "age", "turns": [1]}]}]}"#,
        ),
        text(r#"{"decisions": []}"#),
        text(r#"{"decisions": [{"new": 1, "action": "update", "known": null, "reason": "?"}]}"#),
    ]);
    let err = run(&mut e, &model, Review::Apply).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadReply);
    assert!(err.message.contains("names no known fact"), "{}", err.message);
    assert_eq!(e.document("rex").unwrap().facts.len(), 1);
}

#[test]
fn proposals_stay_out_of_recall_until_accepted_and_can_be_edited_or_rejected() {
    let db = Db::new();
    let mut e = db.engine("me", None);
    say(&mut e, "s1", "2023-05-06T10:00Z", "user", "My sister Ana lives in Lisbon and works as a nurse.");
    let model = Scripted::new(vec![text(ANA_LISBON)]);
    let report = run(&mut e, &model, Review::Propose).unwrap();
    assert!(report.decisions.iter().all(|d| d.status == "proposed"));
    let semantic = Filter { kinds: vec![MemoryKind::Semantic], ..Filter::default() };
    assert_eq!(e.count(semantic.clone()).unwrap(), 0, "nothing applied yet");
    assert!(e.recall("nurse", semantic.clone(), 5).unwrap().is_empty(), "a proposal is not recalled");
    let proposals = e.proposals().unwrap();
    assert_eq!(proposals.len(), 2);
    // The same turns are not proposed twice.
    assert_eq!(run(&mut e, &Scripted::new(vec![]), Review::Propose).unwrap().decisions.len(), 0);

    let accepted = e.accept(&[(proposals[0].id.clone(), Some("Ana lives in Lisbon, Portugal".into()))]).unwrap();
    assert_eq!(accepted[0].status, "applied");
    assert!(accepted[0].reason.ends_with("(edited by a person)"));
    e.reject(std::slice::from_ref(&proposals[1].id)).unwrap();
    assert_eq!(e.proposals().unwrap().len(), 0);
    assert_eq!(e.document("Ana").unwrap().content, "- Ana lives in Lisbon, Portugal");
    let found = e.recall("Lisbon", semantic, 5).unwrap();
    assert_eq!(found.len(), 1, "the fact, now that it is accepted");
    let again = e.accept(&[(proposals[1].id.clone(), None)]).unwrap_err();
    assert!(again.message.contains("already rejected"), "{}", again.message);
    let unknown = e.reject(&["01JUNKNOWN00000000000000000".into()]).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::NotFound);
    // Another user sees none of it.
    let mut other = db.engine("someone-else", None);
    assert_eq!(other.decisions(100).unwrap().len(), 0);
    assert!(other.accept(&[(proposals[0].id.clone(), None)]).is_err());
}

#[test]
fn forgetting_a_conversation_forgets_the_facts_that_rest_on_it_alone() {
    let db = Db::new();
    let mut e = db.engine("me", None);
    let lisbon = say(&mut e, "s1", "2023-05-06T10:00Z", "user", "My sister Ana lives in Lisbon.");
    let nurse = say(&mut e, "s1", "2023-05-06T10:01Z", "user", "She works as a nurse.");
    run(&mut e, &Scripted::new(vec![text(ANA_LISBON)]), Review::Apply).unwrap();
    let again = say(&mut e, "s2", "2023-07-01T10:00Z", "user", "Ana still works as a nurse.");
    run(
        &mut e,
        &Scripted::new(vec![text(
            r#"{"subjects": [{"name": "Ana", "description": "", "facts": [{"fact": "Ana works as a nurse", "topic": "job", "turns": [1]}]}]}"#,
        )]),
        Review::Apply,
    )
    .unwrap();
    // A proposal waiting for a person holds words of its conversation.
    let hot = say(&mut e, "s3", "2023-08-01T10:00Z", "user", "Lisbon is hot in August.");
    let proposes = Scripted::new(vec![text(
        r#"{"subjects": [{"name": "Lisbon", "description": "A city.", "facts": [{"fact": "Lisbon gets hot in August", "topic": "weather", "turns": [1]}]}]}"#,
    )]);
    run(&mut e, &proposes, Review::Propose).unwrap();
    assert_eq!(e.proposals().unwrap().len(), 1);
    let doc = e.document("ana").unwrap();
    let (home, job) = (doc.facts[0].id.clone(), doc.facts[1].id.clone());

    let report = e.forget(&Target::new(&lisbon)).unwrap();
    assert!(report.derived.contains(&home), "{report:?}");
    assert!(e.get(&Target::new(&home), None).is_err(), "the fact said only there is forgotten");
    let doc = e.document("ana").unwrap();
    assert_eq!(doc.content, "- Ana works as a nurse");
    // Said in two conversations: forgetting one keeps the fact, resting on the other.
    e.forget(&Target::new(&nurse)).unwrap();
    let doc = e.document("ana").unwrap();
    assert_eq!(doc.facts[0].id, job);
    assert_eq!(doc.facts[0].sources, vec![again.clone()]);
    e.forget(&Target::new(&again)).unwrap();
    assert!(e.get(&Target::new(&job), None).is_err());
    assert!(e.decisions(100).unwrap().iter().all(|d| !d.fact.contains("Ana")), "decisions keep no forgotten words");
    assert!(e.document("ana").is_err(), "the document went with the last conversation about Ana");
    e.forget(&Target::new(&hot)).unwrap();
    assert_eq!(e.proposals().unwrap().len(), 0, "the proposal went with its conversation");
    let path = db.dir.path().join("s.db");
    drop(e);
    let bytes = std::fs::read(&path).unwrap();
    for words in ["Ana lives in Lisbon", "Ana works as a nurse", "The user's sister", "gets hot in August"] {
        let found = bytes.windows(words.len()).any(|w| w == words.as_bytes());
        assert!(!found, "'{words}' is in no byte of the file");
    }
}

#[test]
fn a_document_is_edited_by_lines_each_line_a_fact_with_its_history() {
    use strata_api::extract::LineEdit;
    let db = Db::new();
    let mut e = db.engine("me", None);
    let edit =
        |content: &str, start: Option<usize>, end: Option<usize>| LineEdit { content: content.into(), start, end };
    let refused = e.edit_memory("Ana", &edit("Ana plays the cello", Some(0), None)).unwrap_err();
    assert_eq!(refused.code, ErrorCode::NotFound, "only an append starts a document");
    let doc = e
        .edit_memory("Ana", &edit("- Ana plays the cello\n- Ana lives in Porto\n- Ana has a cat", None, None))
        .unwrap();
    assert_eq!(doc.content, "- Ana plays the cello\n- Ana lives in Porto\n- Ana has a cat");
    assert_eq!(doc.facts[0].key, "ana/plays_cello");

    // Line 1 replaced: an update, the old value kept; lines 1..=2 replaced by one: the cat goes.
    let doc = e.edit_memory("ana", &edit("Ana lives in Lisbon", Some(1), Some(1))).unwrap();
    assert_eq!(
        doc.facts[1].history.iter().map(|v| v.fact.as_str()).collect::<Vec<_>>(),
        ["Ana lives in Porto", "Ana lives in Lisbon"]
    );
    let cat = doc.facts[2].id.clone();
    let doc = e.edit_memory("ana", &edit("Ana lives in Lisbon, Portugal", Some(1), None)).unwrap();
    assert_eq!(doc.content, "- Ana plays the cello\n- Ana lives in Lisbon, Portugal");
    let semantic = Filter { kinds: vec![MemoryKind::Semantic], ..Filter::default() };
    assert!(e.recall("cat", semantic, 5).unwrap().iter().all(|r| r.memory.id != cat), "a removed line is not recalled");
    assert!(e.get(&Target::new(&cat), None).is_ok(), "but kept, with its history");
    let bad = e.edit_memory("ana", &edit("x", Some(5), None)).unwrap_err();
    assert!(bad.message.contains("not in the document: the document has 2 lines"), "{}", bad.message);
    let edits = e.decisions(100).unwrap();
    assert!(edits.iter().all(|d| d.reason == "edited by test" && d.model == "person/test"), "{edits:?}");
}
