//! `ChatTools` over a chat model: what a provider and the on-device model are sent after a
//! handoff (the on-device model reads the task without the handoff's call and result).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use serde_json::json;
use strata_agents::{ChatTools, ToolCall, ToolModel, Turn};
use strata_core::{ChatError, ChatModel, ChatRequest, ChatResponse, Role};

/// A chat model that records each request and answers "ok".
struct Recorder {
    provider: &'static str,
    sent: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Recorder {
    fn provider(&self) -> &str {
        self.provider
    }

    fn model(&self) -> &str {
        "recorder"
    }

    fn chat(&self, r: &ChatRequest, _: &mut dyn FnMut(&str), _: &AtomicBool) -> Result<ChatResponse, ChatError> {
        self.sent.lock().unwrap().push(r.clone());
        Ok(ChatResponse { content: "ok".into(), ..ChatResponse::default() })
    }
}

/// The conversation a specialist sees after Triage handed it the task, and after its recall.
fn handed_over(recalled: bool) -> Vec<Turn> {
    let mut t = vec![
        Turn::User("When is Elsa's swimming lesson?".into()),
        Turn::Assistant {
            agent: "Triage".into(),
            text: String::new(),
            calls: vec![ToolCall { id: "c1".into(), name: "transfer_to_family".into(), arguments: json!({}) }],
        },
        Turn::ToolResult {
            call_id: "c1".into(),
            name: "transfer_to_family".into(),
            content: r#"{"assistant":"Family"}"#.into(),
            failed: false,
        },
    ];
    if recalled {
        t.push(Turn::Assistant {
            agent: "Family".into(),
            text: String::new(),
            calls: vec![ToolCall { id: "c2".into(), name: "recall".into(), arguments: json!({"query": "swimming"}) }],
        });
        t.push(Turn::ToolResult {
            call_id: "c2".into(),
            name: "recall".into(),
            content: "Elsa: swimming: Saturday".into(),
            failed: false,
        });
    }
    t
}

fn roles(r: &ChatRequest) -> Vec<Role> {
    r.messages.iter().map(|m| m.role).collect()
}

#[test]
fn the_on_device_model_reads_the_task_without_the_handoff_and_a_provider_reads_it_all() {
    let recall = strata_core::ToolSpec {
        name: "recall".into(),
        description: "look up".into(),
        parameters: json!({"type": "object"}),
    };
    let never = AtomicBool::new(false);
    let on_device = Arc::new(Recorder { provider: "on-device", sent: Mutex::default() });
    let tools = ChatTools(on_device.clone());
    tools.reply("You are Family.", &handed_over(false), std::slice::from_ref(&recall), &never).unwrap();
    tools.reply("You are Family.", &handed_over(true), std::slice::from_ref(&recall), &never).unwrap();
    let sent = on_device.sent.lock().unwrap();
    // Just handed over: the task alone, and a call required.
    assert_eq!(roles(&sent[0]), [Role::System, Role::User]);
    assert!(sent[0].tool_required && sent[0].tools.len() == 1);
    // After its recall: the task, its own call and result; no tools offered (it answers).
    assert_eq!(roles(&sent[1]), [Role::System, Role::User, Role::Assistant, Role::Tool]);
    assert!(!sent[1].tool_required && sent[1].tools.is_empty());

    let provider = Arc::new(Recorder { provider: "openai", sent: Mutex::default() });
    ChatTools(provider.clone()).reply("You are Family.", &handed_over(true), &[recall], &never).unwrap();
    let sent = provider.sent.lock().unwrap();
    assert_eq!(
        roles(&sent[0]),
        [Role::System, Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::Tool],
        "a provider reads the whole conversation, handoff included"
    );
    assert!(!sent[0].tool_required && sent[0].tools.len() == 1);
}
