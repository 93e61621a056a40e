//! Live calls to the real vendors, run only when a real key is in the environment
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`; models overridable with `STRATA_LIVE_OPENAI_MODEL`,
//! `STRATA_LIVE_ANTHROPIC_MODEL`). Without a key each says it was skipped and checks nothing:
//! the loopback tests in `providers.rs` cover the same code offline.

#![allow(clippy::print_stderr)] // a skipped live test says so

use std::sync::atomic::AtomicBool;

use strata_core::{ChatModel, ChatRequest, Message};
use strata_providers::{Anthropic, Endpoint, ProviderConfig};

fn key(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|k| !k.trim().is_empty())
}

fn ask(model: &dyn ChatModel) -> strata_core::ChatResponse {
    let req = ChatRequest {
        messages: vec![Message::user("Reply with the single word: pong")],
        max_tokens: Some(16),
        temperature: Some(0.0),
        ..Default::default()
    };
    let mut streamed = String::new();
    let r = model.chat(&req, &mut |p| streamed.push_str(p), &AtomicBool::new(false)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(streamed, r.content);
    r
}

#[test]
fn live_openai() {
    let Some(_) = key("OPENAI_API_KEY") else {
        eprintln!("skipped: no OPENAI_API_KEY");
        return;
    };
    let model = std::env::var("STRATA_LIVE_OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let m = strata_providers::open(&ProviderConfig { provider: "openai".into(), model, ..Default::default() }).unwrap();
    let r = ask(m.as_ref());
    assert!(r.content.to_lowercase().contains("pong"), "{r:?}");
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0);
}

#[test]
fn live_anthropic() {
    let Some(k) = key("ANTHROPIC_API_KEY") else {
        eprintln!("skipped: no ANTHROPIC_API_KEY");
        return;
    };
    let model = std::env::var("STRATA_LIVE_ANTHROPIC_MODEL").unwrap_or_else(|_| "claude-sonnet-4-5".into());
    let m = Anthropic::new(&model, Endpoint::new("https://api.anthropic.com", Some(k))).unwrap();
    let r = ask(&m);
    assert!(r.content.to_lowercase().contains("pong"), "{r:?}");
    assert!(m.count_tokens(&[Message::user("Reply with the single word: pong")]).unwrap() > 5);
}
