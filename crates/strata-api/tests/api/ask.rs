//! `Engine::ask` with a scripted chat model (the engine's logic, not a vendor's): where the
//! memories go for a model that reads them best before the question, the provider's own
//! count, one shrink on context-too-long, that only whole answers are remembered, and that an
//! on-device answer no memory bears out is not presented as the answer.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use strata_api::{AskParams, ErrorCode};
use strata_core::{
    ChatError, ChatErrorKind, ChatModel, ChatRequest, ChatResponse, Filter, MemoryKind, Message, Role, Usage,
};

use super::{Db, fact};

/// Answers from a script, remembering what it was sent.
pub(crate) struct Scripted {
    pub(crate) provider: &'static str,
    pub(crate) before_message: bool,
    pub(crate) budget: Option<usize>,
    pub(crate) count: Option<usize>,
    pub(crate) answers: Mutex<Vec<Result<ChatResponse, ChatError>>>,
    pub(crate) sent: Mutex<Vec<Vec<Message>>>,
}

impl Scripted {
    pub(crate) fn new(answers: Vec<Result<ChatResponse, ChatError>>) -> Scripted {
        Scripted {
            provider: "scripted",
            before_message: false,
            budget: None,
            count: None,
            answers: Mutex::new(answers),
            sent: Mutex::new(vec![]),
        }
    }
}

pub(crate) fn answer(text: &str, finish: &str) -> Result<ChatResponse, ChatError> {
    Ok(ChatResponse {
        content: text.into(),
        usage: Usage { prompt_tokens: 9, completion_tokens: 3 },
        finish: finish.into(),
        ..Default::default()
    })
}

impl ChatModel for Scripted {
    fn provider(&self) -> &str {
        self.provider
    }
    fn model(&self) -> &str {
        "gpt-4o-mini"
    }
    fn memories_before_message(&self) -> bool {
        self.before_message
    }
    fn prompt_budget(&self) -> Option<usize> {
        self.budget
    }
    fn count_prompt(&self, _: &[Message]) -> Option<Result<usize, ChatError>> {
        self.count.map(Ok)
    }
    fn chat(&self, r: &ChatRequest, on_text: &mut dyn FnMut(&str), _: &AtomicBool) -> Result<ChatResponse, ChatError> {
        self.sent.lock().unwrap().push(r.messages.clone());
        let next = self.answers.lock().unwrap().remove(0);
        if let Ok(a) = &next {
            on_text(&a.content);
        }
        next
    }
}

fn ask(
    engine: &mut strata_api::Engine,
    model: &Scripted,
    q: &str,
) -> Result<strata_api::AskView, strata_api::ApiError> {
    ask_in(engine, model, q, None)
}

fn ask_in(
    engine: &mut strata_api::Engine,
    model: &Scripted,
    q: &str,
    conversation: Option<&str>,
) -> Result<strata_api::AskView, strata_api::ApiError> {
    let session_id = conversation.map(String::from);
    let params = AskParams { question: q.into(), record: true, session_id, ..Default::default() };
    engine.ask(params, model, &mut |_| {}, &AtomicBool::new(false))
}

fn episodes(engine: &strata_api::Engine) -> usize {
    engine.list(Filter { kinds: vec![MemoryKind::Episodic], ..Default::default() }, 100, None).unwrap().items.len()
}

#[test]
fn memories_go_where_the_model_reads_them_and_its_count_is_used() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.add(fact("pixel", "a grey tabby cat")).unwrap();
    let after = Scripted::new(vec![answer("A tabby.", "stop")]);
    let v = ask(&mut engine, &after, "What is pixel?").unwrap();
    let sent = after.sent.lock().unwrap()[0].clone();
    assert_eq!((sent[0].role, sent[1].role), (Role::System, Role::System), "after the system prompt");
    assert!(sent[1].content.contains("pixel"));
    assert_eq!(v.context.report.exact_used, None, "a model without a count");

    let before = Scripted { before_message: true, count: Some(77), ..Scripted::new(vec![answer("A tabby.", "stop")]) };
    let v = ask(&mut engine, &before, "What is pixel?").unwrap();
    let sent = before.sent.lock().unwrap()[0].clone();
    let n = sent.len();
    assert_eq!((sent[n - 2].role, sent[n - 1].role), (Role::System, Role::User), "right before the question");
    assert!(sent[n - 2].content.contains("pixel"));
    assert_eq!((v.context.report.exact_used, v.context.report.exact_counter.as_deref()), (Some(77), Some("scripted")));
    let recorded = v.recorded.unwrap();
    assert_eq!(
        (recorded.source.provider.as_deref(), recorded.source.model.as_deref()),
        (Some("scripted"), Some("gpt-4o-mini"))
    );
}

#[test]
fn a_too_long_prompt_is_shrunk_once_and_only_whole_answers_are_remembered() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    for i in 0..30 {
        engine.add(fact(&format!("pixel_{i}"), &format!("pixel fact number {i} about the grey tabby cat"))).unwrap();
    }
    let too_long = || Err(ChatError::new(ChatErrorKind::ContextTooLong, "too long"));
    let model = Scripted::new(vec![too_long(), answer("Fine.", "stop")]);
    let v = ask(&mut engine, &model, "Tell me about pixel").unwrap();
    assert!(v.shrunk);
    let sent = model.sent.lock().unwrap().clone();
    let size = |m: &Vec<Message>| m.iter().map(|x| x.content.len()).sum::<usize>();
    assert!(size(&sent[1]) < size(&sent[0]), "the second prompt is smaller");
    assert_eq!(episodes(&engine), 1);

    // Too long twice: the error, nothing remembered.
    let model = Scripted::new(vec![too_long(), too_long()]);
    assert_eq!(ask(&mut engine, &model, "Tell me about pixel").unwrap_err().code, ErrorCode::ContextTooLong);
    // Cancelled, or empty: nothing remembered either.
    let model = Scripted::new(vec![answer("Half an ans", "cancelled"), answer("  ", "stop")]);
    assert!(ask(&mut engine, &model, "Tell me about pixel").unwrap().recorded.is_none());
    assert!(ask(&mut engine, &model, "Tell me about pixel").unwrap().recorded.is_none());
    assert_eq!(episodes(&engine), 1);
    assert_eq!(ask(&mut engine, &Scripted::new(vec![]), " ").unwrap_err().code, ErrorCode::InvalidInput);
}

/// The case end to end: a model invents a birthday; asked again, the prompt gives the
/// fact first and labels the old answer as the assistant's; marked wrong, the answer is no
/// longer recalled or sent, yet the conversation still shows it, marked.
#[test]
fn conversations_are_kept_and_a_wrong_answer_is_labelled_then_excluded() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.add(fact("grandma_rosa", "birthday 14 March")).unwrap();
    let model = Scripted::new(vec![
        answer("Her birthday is 3 May 1941.", "stop"),
        answer("14 March.", "stop"),
        answer("14 March.", "stop"),
    ]);
    let first = ask_in(&mut engine, &model, "When is grandma rosa's birthday?", Some("chat-1")).unwrap();
    let wrong_id = first.recorded.unwrap().id;

    let second = ask_in(&mut engine, &model, "grandma rosa birthday", Some("chat-2")).unwrap();
    let prompt: String = model.sent.lock().unwrap()[1].iter().map(|m| m.content.clone()).collect();
    let (fact_at, answer_at) = (prompt.find("14 March").unwrap(), prompt.find("3 May 1941").unwrap());
    assert!(fact_at < answer_at, "the fact comes first: {prompt}");
    assert!(prompt.contains("the assistant answered (it may be wrong): Her birthday is 3 May 1941."), "{prompt}");
    let recalled = engine.recall("grandma rosa birthday", Filter::default(), 5).unwrap();
    assert_eq!(recalled[0].memory.content.key(), Some("grandma_rosa"), "{recalled:?}");

    // The conversations, the one used last first, each read back from the store.
    let list = engine.conversations(10).unwrap();
    assert_eq!(list.iter().map(|c| (c.id.as_str(), c.turns)).collect::<Vec<_>>(), vec![("chat-2", 1), ("chat-1", 1)]);
    assert_eq!(list[1].title, "When is grandma rosa's birthday?");
    let turns = engine.conversation("chat-1").unwrap();
    let t = &turns[0];
    assert_eq!(
        (t.answer.as_str(), t.provider.as_deref(), t.model.as_deref(), t.wrong),
        ("Her birthday is 3 May 1941.", Some("scripted"), Some("gpt-4o-mini"), false)
    );

    // Marked wrong: kept and shown, no longer recalled or sent; the history says why.
    let marked = engine.mark_answer_wrong(&strata_api::Target::new(wrong_id.clone())).unwrap();
    assert!(marked.wrong);
    assert!(engine.conversation("chat-1").unwrap()[0].wrong);
    let recalled = engine.recall("grandma rosa birthday", Filter::default(), 5).unwrap();
    assert!(recalled.iter().all(|r| r.memory.id != wrong_id), "{recalled:?}");
    ask_in(&mut engine, &model, "grandma rosa birthday", Some("chat-2")).unwrap();
    let prompt: String = model.sent.lock().unwrap()[2].iter().map(|m| m.content.clone()).collect();
    assert!(!prompt.contains("3 May 1941"), "{prompt}");
    let history = engine.history(&strata_api::Target::new(wrong_id)).unwrap();
    assert!(history.iter().any(|e| serde_json::to_string(e).unwrap().contains("marked wrong")), "{history:?}");
    assert_eq!(second.answer, "14 March.");

    // Only an assistant's answer can be marked wrong; conversation ids are checked.
    let fact_id = engine.recall("grandma rosa", Filter::default(), 1).unwrap()[0].memory.id.clone();
    assert_eq!(engine.mark_answer_wrong(&strata_api::Target::new(fact_id)).unwrap_err().code, ErrorCode::InvalidInput);
    for bad in ["", "chat-", "session_1", "chat-a b", "chat-../x"] {
        assert_eq!(engine.conversation(bad).unwrap_err().code, ErrorCode::InvalidInput, "{bad}");
    }
}

/// A model's preferred budget is used when the caller names none, under the user's cap.
#[test]
fn a_model_s_preferred_budget_is_the_default() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.add(fact("pixel", "a grey tabby cat")).unwrap();
    let model =
        Scripted { budget: Some(300), ..Scripted::new(vec![answer("A cat.", "stop"), answer("A cat.", "stop")]) };
    assert_eq!(ask(&mut engine, &model, "What is pixel?").unwrap().context.report.budget, 300);
    let params = AskParams { question: "What is pixel?".into(), budget: Some(900), ..Default::default() };
    let v = engine.ask(params, &model, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    assert_eq!(v.context.report.budget, 900, "the caller's budget wins");
}

#[test]
fn what_an_answer_drew_on_and_what_people_said_of_it_are_recorded_and_forgotten_with_it() {
    use strata_core::analytics::{About, Range};
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    let cat = engine.add(fact("pixel", "a grey tabby cat sleeping on the radiator")).unwrap().id;
    let bike = engine.add(fact("pixel_bike", "a red bicycle called Rocket")).unwrap().id;
    let model = Scripted::new(vec![answer("Pixel is a grey tabby who likes the radiator.", "stop")]);
    let v = ask(&mut engine, &model, "What is pixel?").unwrap();
    let included: Vec<String> = v.context.report.included.iter().map(|d| d.id.to_string()).collect();
    assert!(included.contains(&cat) && included.contains(&bike), "both went in: {included:?}");
    let m = engine.recall_metrics(&Range::default()).unwrap();
    assert_eq!((m.answered, m.in_prompt, m.used), (1, 2, 1), "the answer drew on the cat only: {m:?}");
    let rows = engine.drill_recalls(&Range::default(), false, None, 10).unwrap();
    let used: Vec<(String, Option<bool>)> = rows[0].hits.iter().map(|h| (h.memory.id.clone(), h.used)).collect();
    assert!(used.contains(&(cat.clone(), Some(true))) && used.contains(&(bike.clone(), Some(false))), "{used:?}");

    // A person rates the answer and a memory; only an assistant's answer rates as an answer.
    let answer_id = v.recorded.unwrap().id;
    engine.rate(&strata_api::Target::new(answer_id.clone()), About::Answer, true).unwrap();
    engine.rate(&strata_api::Target::new(bike.clone()), About::Memory, false).unwrap();
    let err = engine.rate(&strata_api::Target::new(cat.clone()), About::Answer, true).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    let f = engine.recall_metrics(&Range::default()).unwrap().feedback;
    assert_eq!((f.answers_helpful, f.answers_unhelpful, f.memories_helpful, f.memories_unhelpful), (1, 0, 0, 1));

    // Forgetting the bicycle forgets what was said of it and the recall that found it.
    engine.forget(&strata_api::Target::new(bike)).unwrap();
    let m = engine.recall_metrics(&Range::default()).unwrap();
    assert_eq!((m.recalls, m.feedback.memories_unhelpful, m.feedback.answers_helpful), (0, 0, 1), "{m:?}");
    // Forgetting the answer forgets what was said of it.
    engine.forget(&strata_api::Target::new(answer_id)).unwrap();
    assert_eq!(engine.recall_metrics(&Range::default()).unwrap().feedback.answers_helpful, 0);
}

/// An on-device answer is checked against the memories its prompt quoted: borne out, it is the
/// answer (and that memory its source); invented, "I don't know" is presented and remembered,
/// the model's sentence kept apart. The memories are known before the model is called.
#[test]
fn an_on_device_answer_no_memory_bears_out_is_not_presented() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    let pixel = engine.add(fact("pixel", "a grey tabby cat born on 3 May 2019")).unwrap();
    engine.add(fact("oskar", "Oskar works at Kirkstall Academy")).unwrap();
    let model = Scripted {
        provider: "on-device",
        ..Scripted::new(vec![
            answer("Pixel was born on 3 May 2019.", "stop"),
            answer("Pixel weighs 5 kilograms.", "stop"),
        ])
    };
    let order = std::cell::RefCell::new(Vec::new());
    let params = AskParams { question: "When was Pixel born?".into(), record: true, ..Default::default() };
    let v = engine
        .ask_seeing(
            params,
            &model,
            &mut |_, c| order.borrow_mut().push(format!("prompt of {} memories", c.report.included.len())),
            &mut |t| order.borrow_mut().push(format!("text {t}")),
            &AtomicBool::new(false),
        )
        .unwrap();
    let order = order.into_inner();
    assert!(order[0].starts_with("prompt of ") && order[1].starts_with("text "), "{order:?}");
    assert_eq!((v.answer.as_str(), v.guess.as_deref()), ("Pixel was born on 3 May 2019.", None));
    assert_eq!(v.check.as_ref().map(|c| c.borne_out), Some(true));
    assert_eq!(v.source.as_deref(), Some(pixel.id.as_str()), "the memory that bears it out");

    let v = ask(&mut engine, &model, "How heavy is Pixel?").unwrap();
    assert_eq!(v.answer, strata_api::answer_check::WITHHELD);
    assert_eq!(v.guess.as_deref(), Some("Pixel weighs 5 kilograms."));
    assert_eq!(v.check.as_ref().map(|c| c.unsupported.clone()), Some(vec!["5".to_string()]));
    let recorded = v.recorded.expect("the exchange is remembered");
    let said = serde_json::to_string(&recorded).unwrap();
    assert!(said.contains("none of your memories says that") && !said.contains("5 kilograms"), "{said}");
}

/// A model's earlier answer never stands for what the person said: it is not "the closest
/// memory" beside a new answer, nor a "most recalled" memory.
#[test]
fn a_model_s_past_answer_is_never_the_closest_memory_nor_the_most_recalled() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    let pixel = engine.add(fact("pixel", "a cat")).unwrap();
    let model = Scripted::new(vec![
        answer("I am not sure when Napoleon was born.", "stop"),
        answer("Napoleon was born in 1769.", "stop"),
    ]);
    let first = ask(&mut engine, &model, "When was Napoleon born?").unwrap();
    let exchange = first.recorded.expect("remembered").id;
    let again = ask(&mut engine, &model, "When was Napoleon born?").unwrap();
    let included: Vec<String> = again.context.report.included.iter().map(|d| d.id.to_string()).collect();
    assert!(included.contains(&exchange), "the past exchange is in the prompt: {included:?}");
    assert_ne!(again.source.as_deref(), Some(exchange.as_str()), "the model's answer is not the closest memory");
    for _ in 0..3 {
        engine.recall("Napoleon cat", Filter::default(), 5).unwrap();
    }
    let top = engine.recall_metrics(&strata_core::analytics::Range::default()).unwrap().top;
    assert!(top.iter().any(|(id, _)| id == &pixel.id), "{top:?}");
    assert!(!top.iter().any(|(id, _)| id == &exchange), "{top:?}");
}
