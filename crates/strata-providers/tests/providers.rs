//! Each vendor API served by a loopback server that replays recorded payloads (normal and
//! streamed answers, tool calls, 401 / 429 / 400 context-length / 404 / 5xx bodies as the
//! vendors document them): what Strata sends, what it makes of the answers, retries, timeouts,
//! cancellation, and that a key never shows in an error.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use strata_core::{ChatErrorKind, ChatModel, ChatRequest, Message, Role, ToolCall, ToolSpec};
use strata_providers::{Anthropic, Endpoint, Ollama, OpenAi, ProviderConfig};

const KEY: &str = "sk-test-PLANTED0123456789";

/// A recorded payload. The crate's folder is read when the test runs (cargo sets
/// `CARGO_MANIFEST_DIR`), not baked in when it compiles: a build cache shared by checkouts in
/// different places otherwise hands one checkout another's paths.
fn fixture(path: &str) -> String {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    std::fs::read_to_string(format!("{dir}/tests/fixtures/{path}")).unwrap()
}

/// One scripted reply.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Never answer (a hung upstream).
    hang: bool,
}

fn ok(content_type: &str, body: String) -> Reply {
    Reply { status: 200, headers: vec![("content-type", content_type.into())], body, hang: false }
}

fn error(status: u16, body: String) -> Reply {
    Reply { status, headers: vec![("content-type", "application/json".into())], body, hang: false }
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// Serves `replies` in order, one per request, on a fresh loopback port.
fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for reply in replies {
            let Ok((stream, _)) = listener.accept() else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or_default().to_string();
            let mut headers = Vec::new();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                let l = line.trim_end();
                if l.is_empty() {
                    break;
                }
                if let Some((k, v)) = l.split_once(':') {
                    headers.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
            let len = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body).unwrap();
            log.lock().unwrap().push(Seen {
                path,
                headers,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            if reply.hang {
                std::thread::sleep(Duration::from_secs(5));
                continue;
            }
            let mut out = stream;
            let mut head =
                format!("HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n", reply.status, reply.body.len());
            for (k, v) in &reply.headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(reply.body.as_bytes());
        }
    });
    Server { url, seen }
}

fn endpoint(url: &str) -> Endpoint {
    Endpoint { backoff: Duration::from_millis(10), ..Endpoint::new(url, Some(KEY.into())) }
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("Answer from memory."), Message::user("What is my cat like?")],
        max_tokens: Some(100),
        temperature: Some(0.0),
        ..Default::default()
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "recall".into(),
        description: "Recall memories".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}}),
    }]
}

fn run(
    model: &dyn ChatModel,
    req: &ChatRequest,
) -> (Result<strata_core::ChatResponse, strata_core::ChatError>, Vec<String>) {
    let mut pieces = Vec::new();
    let go = AtomicBool::new(false);
    let r = model.chat(req, &mut |p| pieces.push(p.to_string()), &go);
    (r, pieces)
}

#[test]
fn openai_streams_text_with_usage_and_sends_what_the_api_expects() {
    let s = serve(vec![ok("text/event-stream", fixture("openai/stream_text.sse"))]);
    let m = OpenAi::new("openai", "gpt-4o-mini", endpoint(&s.url)).unwrap();
    let (r, pieces) = run(&m, &request());
    let r = r.unwrap();
    assert_eq!(r.content, "Pixel is a grey tabby.");
    assert_eq!(pieces, ["Pixel", " is a grey", " tabby."]);
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens, r.finish.as_str()), (57, 6, "stop"));
    let seen = s.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/chat/completions");
    assert_eq!(seen.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(seen.body["model"], "gpt-4o-mini");
    assert_eq!(seen.body["stream"], true);
    assert_eq!(seen.body["stream_options"]["include_usage"], true);
    assert_eq!(seen.body["max_completion_tokens"], 100);
    assert_eq!(seen.body["messages"][0]["role"], "system");
    assert_eq!(seen.body["messages"][1]["content"], "What is my cat like?");
}

#[test]
fn openai_tool_calls_arrive_whole_and_tool_results_go_back() {
    let s = serve(vec![ok("text/event-stream", fixture("openai/stream_tool.sse"))]);
    let m = OpenAi::new("openai-compatible", "gpt-4o", endpoint(&s.url)).unwrap();
    let mut req = request();
    req.tools = tools();
    req.messages.push(Message {
        role: Role::Assistant,
        content: String::new(),
        tool_calls: vec![ToolCall { id: "call_1".into(), name: "recall".into(), arguments: "{}".into() }],
        tool_call_id: None,
    });
    req.messages.push(Message {
        role: Role::Tool,
        content: "none".into(),
        tool_calls: vec![],
        tool_call_id: Some("call_1".into()),
    });
    let r = run(&m, &req).0.unwrap();
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!((r.tool_calls[0].id.as_str(), r.tool_calls[0].name.as_str()), ("call_9pLbT1XqfC2Wm0", "recall"));
    assert_eq!(serde_json::from_str::<Value>(&r.tool_calls[0].arguments).unwrap()["query"], "cat");
    assert_eq!(r.finish, "tool_calls");
    let body = &s.seen.lock().unwrap()[0].body;
    assert_eq!(body["tools"][0]["function"]["name"], "recall");
    assert_eq!(body["max_tokens"], 100, "an OpenAI-compatible server gets max_tokens");
    assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["name"], "recall");
    assert_eq!(body["messages"][2]["content"], Value::Null);
    assert_eq!(body["messages"][3]["tool_call_id"], "call_1");
}

#[test]
fn openai_errors_are_typed_retried_when_transient_and_never_show_the_key() {
    // 429 twice (Retry-After: 0), then the answer: retried.
    let busy = Reply { headers: vec![("retry-after", "0".into())], ..error(429, fixture("openai/error_429.json")) };
    let s = serve(vec![busy.clone(), busy.clone(), ok("text/event-stream", fixture("openai/stream_text.sse"))]);
    let m = OpenAi::new("openai", "gpt-4o-mini", endpoint(&s.url)).unwrap();
    assert_eq!(run(&m, &request()).0.unwrap().content, "Pixel is a grey tabby.");
    assert_eq!(s.seen.lock().unwrap().len(), 3);

    let cases = [
        (vec![error(401, fixture("openai/error_401.json"))], ChatErrorKind::BadKey, "check the key"),
        (vec![busy.clone(), busy.clone(), busy], ChatErrorKind::RateLimited, "Rate limit reached"),
        (
            vec![error(400, fixture("openai/error_400_context.json"))],
            ChatErrorKind::ContextTooLong,
            "maximum context length",
        ),
        (vec![error(404, fixture("openai/error_404_model.json"))], ChatErrorKind::ModelNotFound, "does not exist"),
        (vec![error(500, fixture("openai/error_500.json")); 3], ChatErrorKind::Server, "server had an error"),
    ];
    for (replies, kind, says) in cases {
        let n = replies.len();
        let s = serve(replies);
        let m = OpenAi::new("openai", "gpt-4o-mini", endpoint(&s.url)).unwrap();
        let e = run(&m, &request()).0.unwrap_err();
        assert_eq!(e.kind, kind, "{e}");
        assert!(e.message.contains(says), "{e}");
        assert!(!e.message.contains("PLANTED") && !e.message.contains("sk-test"), "a key leaked: {e}");
        assert_eq!(s.seen.lock().unwrap().len(), n, "{kind}: attempts");
    }
}

#[test]
fn openai_embeddings_come_back_in_input_order() {
    let s = serve(vec![ok("application/json", fixture("openai/embeddings.json"))]);
    let m = OpenAi::new("openai", "text-embedding-3-small", endpoint(&s.url)).unwrap();
    let v = m.embed(&["a", "b"]).unwrap();
    assert_eq!(v[1], [0.25, -0.5, 0.125]);
    assert_eq!(s.seen.lock().unwrap()[0].path, "/embeddings");
}

#[test]
fn anthropic_streams_with_the_system_apart_tool_use_and_usage() {
    let s = serve(vec![
        ok("text/event-stream", fixture("anthropic/stream_text.sse")),
        ok("text/event-stream", fixture("anthropic/stream_tool.sse")),
        ok("application/json", fixture("anthropic/count_tokens.json")),
    ]);
    let m = Anthropic::new("claude-sonnet-4-5", endpoint(&s.url)).unwrap();
    let (r, pieces) = run(&m, &request());
    let r = r.unwrap();
    assert_eq!((r.content.as_str(), pieces.len()), ("Pixel is a grey tabby.", 2));
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens, r.finish.as_str()), (64, 9, "end_turn"));
    let mut req = request();
    req.tools = tools();
    req.messages.push(Message::user("And my dog?")); // two user turns in a row are merged
    let r = run(&m, &req).0.unwrap();
    assert_eq!(r.content, "Let me check your memories.");
    assert_eq!(r.tool_calls[0].name, "recall");
    assert_eq!(serde_json::from_str::<Value>(&r.tool_calls[0].arguments).unwrap()["query"], "cat");
    assert_eq!(r.finish, "tool_use");
    assert_eq!(m.count_tokens(&request().messages).unwrap(), 21);
    let seen = s.seen.lock().unwrap().clone();
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some(KEY));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].body["system"], "Answer from memory.");
    assert_eq!(seen[0].body["messages"][0]["role"], "user");
    assert_eq!(seen[0].body["max_tokens"], 100);
    assert_eq!(seen[1].body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(seen[1].body["messages"].as_array().unwrap().len(), 1, "consecutive user turns merged");
    assert_eq!(seen[1].body["messages"][0]["content"].as_array().unwrap().len(), 2);
    assert_eq!(seen[2].path, "/v1/messages/count_tokens");
}

#[test]
fn anthropic_errors_are_typed() {
    for (replies, kind) in [
        (vec![error(401, fixture("anthropic/error_401.json"))], ChatErrorKind::BadKey),
        (vec![error(400, fixture("anthropic/error_400_context.json"))], ChatErrorKind::ContextTooLong),
        (vec![error(429, fixture("anthropic/error_429.json")); 3], ChatErrorKind::RateLimited),
        (vec![error(529, fixture("anthropic/error_529.json")); 3], ChatErrorKind::Server),
    ] {
        let s = serve(replies);
        let m = Anthropic::new("claude-sonnet-4-5", endpoint(&s.url)).unwrap();
        let e = run(&m, &request()).0.unwrap_err();
        assert_eq!(e.kind, kind, "{e}");
        assert!(!e.message.contains("PLANTED"), "{e}");
    }
}

#[test]
fn ollama_streams_json_lines_embeds_and_names_a_missing_model() {
    let s = serve(vec![
        ok("application/x-ndjson", fixture("ollama/chat_stream.ndjson")),
        ok("application/json", fixture("ollama/embed.json")),
        error(404, fixture("ollama/error_404.json")),
    ]);
    let m = Ollama::new("llama3.2", endpoint(&s.url)).unwrap();
    let (r, pieces) = run(&m, &request());
    let r = r.unwrap();
    assert_eq!((r.content.as_str(), pieces.len()), ("Pixel is a grey tabby.", 3));
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens, r.finish.as_str()), (26, 7, "stop"));
    assert_eq!(m.embed(&["a", "b"]).unwrap().len(), 2);
    let e = run(&m, &request()).0.unwrap_err();
    assert_eq!(e.kind, ChatErrorKind::ModelNotFound);
    assert!(e.message.contains("try pulling it first"), "{e}");
    let seen = s.seen.lock().unwrap().clone();
    assert_eq!((seen[0].path.as_str(), &seen[0].body["options"]["num_predict"]), ("/api/chat", &Value::from(100)));
    assert_eq!(seen[1].path, "/api/embed");
}

#[test]
fn a_hung_or_absent_server_is_a_network_error_in_bounded_time() {
    let s = serve(vec![Reply { hang: true, ..ok("text/plain", String::new()) }]);
    let e = Endpoint { timeout: Duration::from_millis(300), ..endpoint(&s.url) };
    let m = OpenAi::new("openai", "gpt-4o-mini", e).unwrap();
    let started = Instant::now();
    let err = run(&m, &request()).0.unwrap_err();
    assert_eq!(err.kind, ChatErrorKind::Network);
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // Nothing listens on this port.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let m = OpenAi::new("openai", "gpt-4o-mini", endpoint(&format!("http://127.0.0.1:{port}"))).unwrap();
    let err = run(&m, &request()).0.unwrap_err();
    assert_eq!(err.kind, ChatErrorKind::Network);
    assert!(err.message.contains("cannot be reached") && !err.message.contains("PLANTED"), "{err}");
}

#[test]
fn cancelling_stops_the_stream_and_keeps_what_arrived() {
    let s = serve(vec![ok("text/event-stream", fixture("openai/stream_text.sse"))]);
    let m = OpenAi::new("openai", "gpt-4o-mini", endpoint(&s.url)).unwrap();
    let stop = AtomicBool::new(false);
    let r = m.chat(&request(), &mut |_| stop.store(true, Ordering::Relaxed), &stop).unwrap();
    assert_eq!((r.content.as_str(), r.finish.as_str()), ("Pixel", "cancelled"));
}

#[test]
fn opening_a_provider_checks_what_it_needs() {
    let open = |p: &str, key: Option<&str>, url: Option<&str>| {
        let config = ProviderConfig {
            provider: p.into(),
            model: "m".into(),
            base_url: url.map(str::to_string),
            key: key.map(str::to_string),
        };
        strata_providers::open_with(&config, &|_| None)
    };
    let e = open("openai", None, None).err().unwrap();
    assert_eq!(e.kind, ChatErrorKind::BadKey);
    assert!(e.message.contains("OPENAI_API_KEY"), "{e}");
    assert_eq!(open("anthropic", None, None).err().unwrap().kind, ChatErrorKind::BadKey);
    assert!(open("mystery", None, None).err().unwrap().message.contains("unknown provider 'mystery'"));
    assert!(open("openai-compatible", None, None).err().unwrap().message.contains("needs its address"));
    let m = open("ollama", None, None).unwrap();
    assert_eq!((m.provider(), m.model()), ("ollama", "m"));
    assert_eq!(open("openai", Some(KEY), None).unwrap().provider(), "openai");
}

/// With a key, a Claude prompt is counted by the provider: the assembler shrinks it until the
/// provider's count fits too.
#[test]
fn the_anthropic_count_keeps_an_assembled_prompt_within_budget() {
    use strata_context::{Candidate, ContextOptions, ContextRequest, assemble_with};
    use strata_core::{Content, Episode, EpisodeBody, Memory, MemoryId, Scope, Source};
    let at = chrono_free_time();
    let candidates: Vec<Candidate> = (0..40u64)
        .map(|i| {
            let content = Content::Episodic(Episode {
                occurred_at: at,
                body: EpisodeBody::Utterance {
                    speaker: "Ana".into(),
                    text: format!("memory number {i} about garden plans and tea"),
                },
                concepts: vec![],
                extra: Default::default(),
            });
            let m = Memory::new(
                MemoryId::from_parts(1_700_000_000_000 + i, i as u128),
                Scope::default(),
                content,
                Source::app("t"),
                at,
            );
            Candidate { memory: m, score: 1.0 - i as f64 / 100.0, why: None }
        })
        .collect();
    // The provider counts 120 more than the estimate the first time, then agrees it fits.
    let s = serve(vec![
        ok("application/json", r#"{"input_tokens":920}"#.into()),
        ok("application/json", r#"{"input_tokens":790}"#.into()),
    ]);
    let claude = Anthropic::new("claude-sonnet-4-5", endpoint(&s.url)).unwrap();
    let req =
        ContextRequest { message: "What about the garden?".into(), candidates, budget: 800, ..Default::default() };
    let tokens = strata_tokens::ApproxTokens::anthropic();
    let a = assemble_with(&tokens, req, &ContextOptions::default(), Some(&claude)).unwrap();
    assert_eq!(a.report.exact_used, Some(790));
    assert!(a.report.used <= 800 - 120, "the overshoot came off the budget: {}", a.report.used);
    assert_eq!(a.report.exact_counter.as_deref(), Some("anthropic"));
    let seen = s.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].path, "/v1/messages/count_tokens");
}

fn chrono_free_time() -> chrono::DateTime<chrono::Utc> {
    strata_core::time::parse_time("2024-05-01T10:00:00Z").unwrap()
}
