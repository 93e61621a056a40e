//! `Engine::ask` with a scripted chat model (the engine's logic, not a vendor's): where the
//! memories go for a model that reads them best before the question, the provider's own
//! count, one shrink on context-too-long, and that only whole answers are remembered.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use strata_api::{AskParams, ErrorCode};
use strata_core::{
    ChatError, ChatErrorKind, ChatModel, ChatRequest, ChatResponse, Filter, MemoryKind, Message, Role, Usage,
};

use super::{Db, fact};

/// Answers from a script, remembering what it was sent.
struct Scripted {
    before_message: bool,
    count: Option<usize>,
    answers: Mutex<Vec<Result<ChatResponse, ChatError>>>,
    sent: Mutex<Vec<Vec<Message>>>,
}

impl Scripted {
    fn new(answers: Vec<Result<ChatResponse, ChatError>>) -> Scripted {
        Scripted { before_message: false, count: None, answers: Mutex::new(answers), sent: Mutex::new(vec![]) }
    }
}

fn answer(text: &str, finish: &str) -> Result<ChatResponse, ChatError> {
    Ok(ChatResponse {
        content: text.into(),
        tool_calls: vec![],
        usage: Usage { prompt_tokens: 9, completion_tokens: 3 },
        finish: finish.into(),
    })
}

impl ChatModel for Scripted {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model(&self) -> &str {
        "gpt-4o-mini"
    }
    fn memories_before_message(&self) -> bool {
        self.before_message
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
    let params = AskParams { question: q.into(), record: true, ..Default::default() };
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
