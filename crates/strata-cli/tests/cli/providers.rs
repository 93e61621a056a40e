//! `ask`, `chat`, `context` and `serve` against model providers, replayed from loopback servers
//! (OpenAI, Anthropic, Ollama), and provider keys in the OS keychain.

use super::*;

/// A request a loopback server saw: its head (request line and headers) and body.
pub(crate) type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// A loopback HTTP server answering every request with `reply(head, body)` = (status,
/// content type, body): a remote vendor API replayed.
pub(crate) fn loopback(reply: fn(&str, &str) -> (u16, &'static str, String)) -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Default::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        use std::io::{BufRead, Read};
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let (mut line, mut head, mut len) = (String::new(), String::new(), 0usize);
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim() != "" {
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                line.clear();
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body = String::from_utf8_lossy(&body).to_string();
            let (status, kind, answer) = reply(&head, &body);
            log.lock().unwrap().push((head, body));
            let mut out = stream;
            let _ = out.write_all(
                format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                )
                .as_bytes(),
            );
        }
    });
    (url, seen)
}

/// With an Anthropic key configured, `strata context` for a Claude model has the provider
/// count the final prompt (here a loopback server in Anthropic's shape); the key shows nowhere.
#[test]
fn context_for_claude_with_a_key_is_counted_by_the_provider() {
    let (url, seen) = loopback(|_, _| (200, "application/json", r#"{"input_tokens":150}"#.into()));
    let e = Env::new();
    e.ok(&["demo"]);
    let key = "sk-ant-PLANTED-KEY-42";
    let out = crate::strata()
        .args(["--json", "context", "--model", "claude-sonnet-4-5", "--query", "Napoleon", "--budget", "300"])
        .env("STRATA_DB", e.db())
        .env("ANTHROPIC_API_KEY", key)
        .env("ANTHROPIC_BASE_URL", &url)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["report"]["exact_used"], 150);
    assert_eq!(v["report"]["exact_counter"], "anthropic");
    assert!(!stdout.contains("PLANTED") && !stderr.contains("PLANTED"));
    let seen = seen.lock().unwrap().clone();
    assert!(seen[0].0.contains("POST /v1/messages/count_tokens") && seen[0].0.contains(key), "{seen:?}");
}

const OPENAI_STREAM: &str = include_str!("../../../strata-providers/tests/fixtures/openai/stream_text.sse");
const OPENAI_401: &str = include_str!("../../../strata-providers/tests/fixtures/openai/error_401.json");

/// `strata ask` with OpenAI (a loopback server replaying its stream): the memory goes into the
/// prompt, the answer streams to stdout, the exchange is remembered with provider and model; a
/// refused key is a clear error that records nothing and shows no key.
#[test]
fn ask_recalls_streams_and_remembers_the_exchange() {
    let e = Env::new();
    e.json(&["add", "semantic", "pixel", "--fact", "species=cat", "--fact", "colour=grey tabby"]);
    let (url, seen) = loopback(|_, _| (200, "text/event-stream", OPENAI_STREAM.into()));
    let key = "sk-test-PLANTED-0042";
    let ask = |url: &str, json: bool| {
        let mut args = vec!["ask", "What is Pixel like?", "--provider", "openai", "--model", "gpt-4o-mini"];
        if json {
            args.insert(0, "--json");
        }
        crate::strata()
            .args(&args)
            .env("STRATA_DB", e.db())
            .env("OPENAI_API_KEY", key)
            .env("OPENAI_BASE_URL", url)
            .output()
            .unwrap()
    };
    let out = ask(&url, false);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Pixel is a grey tabby.");
    assert!(stderr.contains("openai gpt-4o-mini: 1 memories") && stderr.contains("remembered as"), "{stderr}");
    let (_, body) = seen.lock().unwrap()[0].clone();
    let sent: Value = serde_json::from_str(&body).unwrap();
    assert!(
        sent["messages"][1]["content"].as_str().unwrap().contains("pixel: species: cat; colour: grey tabby"),
        "{sent}"
    );
    assert_eq!(sent["messages"].as_array().unwrap().last().unwrap()["content"], "What is Pixel like?");
    let v: Value = serde_json::from_slice(&ask(&url, true).stdout).unwrap();
    assert_eq!(
        (v["answer"].as_str(), v["usage"]["prompt_tokens"].as_u64()),
        (Some("Pixel is a grey tabby."), Some(57))
    );
    assert_eq!(v["context"]["report"]["included"][0]["section"], "facts");
    assert_eq!(
        (v["recorded"]["source"]["provider"].as_str(), v["recorded"]["source"]["model"].as_str()),
        (Some("openai"), Some("gpt-4o-mini"))
    );
    let episodes = e.json(&["list", "--type", "episodic"]);
    let items = episodes["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "both exchanges remembered");
    assert_eq!(items[0]["body"]["response"], "Pixel is a grey tabby.");

    // The key is in no byte of the database, an export, a backup or the debug log.
    let logged = crate::strata()
        .args(["ask", "Anything else?", "--provider", "openai"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", key)
        .env("OPENAI_BASE_URL", &url)
        .env("STRATA_LOG", "trace")
        .output()
        .unwrap();
    assert!(logged.status.success());
    let mut haystacks = vec![
        logged.stdout,
        logged.stderr,
        e.ok(&["export"]).into_bytes(),
        e.ok(&["export", "--format", "backup"]).into_bytes(),
    ];
    for suffix in ["", "-wal"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", e.db().display())) {
            haystacks.push(bytes);
        }
    }
    for h in &haystacks {
        assert!(!h.windows(key.len()).any(|w| w == key.as_bytes()), "the key leaked");
        assert!(!h.windows(7).any(|w| w == b"PLANTED"), "part of the key leaked");
    }

    // A refused key: a clear error, nothing remembered, no key shown.
    let (bad, _) = loopback(|_, _| (401, "application/json", OPENAI_401.into()));
    let out = ask(&bad, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("check the key") && !stderr.contains("PLANTED") && !stderr.contains("sk-test"), "{stderr}");
    assert_eq!(e.json(&["list", "--type", "episodic"])["items"].as_array().unwrap().len(), 3);
}

const OLLAMA_STREAM: &str = include_str!("../../../strata-providers/tests/fixtures/ollama/chat_stream.ndjson");

/// `strata chat`: a conversation on standard input; `/provider` switches mid-conversation and
/// the second provider sees what the first was told; `/memories` shows what went in.
#[test]
fn chat_switches_providers_and_keeps_the_conversation() {
    let e = Env::new();
    e.json(&["add", "semantic", "pixel", "--fact", "species=cat"]);
    let (openai, _) = loopback(|_, _| (200, "text/event-stream", OPENAI_STREAM.into()));
    let (ollama, ollama_seen) = loopback(|_, _| (200, "application/x-ndjson", OLLAMA_STREAM.into()));
    let mut child = crate::strata()
        .args(["chat", "--provider", "openai", "--model", "gpt-4o-mini"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", &openai)
        .env("OLLAMA_HOST", &ollama)
        .env_remove("ANTHROPIC_API_KEY")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"What is Pixel like?\n/memories\n/provider anthropic\n/provider ollama llama3.2\nAnd what did you just say?\n/quit\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.matches("Pixel is a grey tabby.").count(), 2, "{stdout}");
    assert!(stdout.contains("SECTION") && stdout.contains("facts"), "/memories: {stdout}");
    assert!(stderr.contains("Now talking with ollama llama3.2"), "{stderr}");
    // A provider that cannot be opened is said, and the conversation goes on with the last one.
    assert!(
        stderr.contains("no key for anthropic") && stderr.contains("still talking with openai gpt-4o-mini"),
        "{stderr}"
    );
    let (_, body) = ollama_seen.lock().unwrap()[0].clone();
    let sent: Value = serde_json::from_str(&body).unwrap();
    let texts: Vec<&str> = sent["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    assert!(texts.contains(&"What is Pixel like?") && texts.contains(&"Pixel is a grey tabby."), "{texts:?}");
    assert_eq!(*texts.last().unwrap(), "And what did you just say?");
    let episodes = e.json(&["list", "--type", "episodic"]);
    let providers: Vec<&str> =
        episodes["items"].as_array().unwrap().iter().filter_map(|m| m["source"]["provider"].as_str()).collect();
    assert_eq!(providers, ["ollama", "openai"], "each exchange remembered with who answered");
    let sessions: Vec<&str> =
        episodes["items"].as_array().unwrap().iter().filter_map(|m| m["scope"]["session_id"].as_str()).collect();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0], sessions[1], "one conversation, one session");
}

/// `strata serve` driven by the official OpenAI Python SDK (installed by scripts/setup):
/// models, a completion, a streamed completion with usage, errors in OpenAI's shape, a
/// required token; every answered exchange is remembered.
#[test]
fn the_memory_proxy_serves_the_official_openai_client() {
    let python = python();
    let e = Env::new();
    e.json(&["add", "semantic", "ana", "--fact", "lives_in=Porto"]);
    // The smallest on-device model proves the point.
    let args = ["serve", "--port", "0", "--token", "local-secret", "--model", "smollm2-135m"];
    let (mut server, url) = spawn_server(&e, &args, "memory proxy");
    let script = &in_crate("tests/fixtures/openai_client.py");
    let out = Command::new(&python).args([script, &url, "local-secret"]).output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["models"][0], "SmolLM2-135M-Instruct.Q4_1");
    assert!(!v["answer"].as_str().unwrap().is_empty(), "{v}");
    assert!(v["usage"][0].as_u64().unwrap() > 10 && v["usage"][1].as_u64().unwrap() <= 12, "{v}");
    assert!(!v["streamed"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["stream_usage"][1].as_u64().unwrap() <= 8, "{v}");
    assert_eq!((v["bad_request"].as_u64(), v["wrong_token"].as_u64()), (Some(400), Some(401)));
    assert_eq!(v["oversized"], 413, "a request over 1 MiB is refused");
    let episodes = e.json(&["list", "--type", "episodic"]);
    let items = episodes["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "both answered exchanges remembered: {episodes}");
    assert_eq!(items[1]["body"]["query"], "What is the capital of France?");
    assert_eq!(items[0]["source"]["provider"], "on-device");
}

const OPENAI_400_CONTEXT: &str = include_str!("../../../strata-providers/tests/fixtures/openai/error_400_context.json");

/// A provider that says the prompt is too long gets it again with a quarter less budget, once.
#[test]
fn ask_shrinks_the_prompt_once_when_the_provider_finds_it_too_long() {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let (url, seen) = loopback(|_, _| {
        if CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            (400, "application/json", OPENAI_400_CONTEXT.into())
        } else {
            (200, "text/event-stream", OPENAI_STREAM.into())
        }
    });
    let e = Env::new();
    e.ok(&["demo"]);
    let out = crate::strata()
        .args(["--json", "ask", "Tell me about Napoleon", "--provider", "openai", "--budget", "400"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", &url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["shrunk"], true);
    assert_eq!(v["answer"], "Pixel is a grey tabby.");
    let budget = v["context"]["report"]["budget"].as_u64().unwrap();
    assert!(budget < 400, "the second prompt had a smaller budget: {budget}");
    let bodies: Vec<String> = seen.lock().unwrap().iter().map(|(_, b)| b.clone()).collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[1].len() < bodies[0].len(), "the second prompt is shorter");
}

/// Provider keys in the OS keychain (a secret service in a D-Bus session of the test's own):
/// stored from standard input, used by `ask`, reported by where they are, removed; without a
/// keychain, a clear error.
#[test]
fn keys_live_in_the_os_keychain() {
    let (url, seen) = loopback(|_, _| (200, "text/event-stream", OPENAI_STREAM.into()));
    let e = Env::new();
    let bin = env!("CARGO_BIN_EXE_strata");
    let db = e.db();
    let script = format!(
        "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 && \
         echo sk-test-KEYCHAIN-77 | {bin} key set openai && \
         {bin} --json key status && \
         OPENAI_BASE_URL={url} STRATA_DB={db} {bin} ask 'hi' --provider openai --no-record >/dev/null && \
         {bin} key delete openai && {bin} --json key status",
        db = db.display()
    );
    let out = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", &script])
        .env_remove("OPENAI_API_KEY")
        // The keyring's files stay in the test's folder, never in the user's own keyring.
        .env("XDG_DATA_HOME", e.dir.path().join("keyring-data"))
        .output()
        .expect("dbus-run-session (scripts/setup installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Stored the openai key in the OS keychain."), "{stdout}");
    assert!(stdout.contains(r#""openai": {"#) && stdout.contains(r#""from": "keychain""#), "{stdout}");
    assert!(stdout.contains("Removed the openai key."), "{stdout}");
    assert!(!stdout.contains("KEYCHAIN-77"), "status never shows the key");
    let (head, _) = seen.lock().unwrap()[0].clone();
    assert!(
        head.to_lowercase().contains("authorization: bearer sk-test-keychain-77"),
        "the stored key was used: {head}"
    );
    // No keychain reachable: a clear error.
    let mut child = Command::new(bin)
        .args(["key", "set", "openai"])
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"sk-test-0000\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the OS keychain is not available") && !stderr.contains("sk-test"), "{stderr}");
}

const ANTHROPIC_STREAM: &str = include_str!("../../../strata-providers/tests/fixtures/anthropic/stream_text.sse");

/// `strata ask` with a Claude model: the provider counts the assembled prompt before it answers.
#[test]
fn ask_with_claude_has_the_prompt_counted_by_anthropic() {
    let (url, seen) = loopback(|head, _| {
        if head.starts_with("POST /v1/messages/count_tokens") {
            (200, "application/json", r#"{"input_tokens":150}"#.into())
        } else {
            (200, "text/event-stream", ANTHROPIC_STREAM.into())
        }
    });
    let e = Env::new();
    e.ok(&["demo"]);
    let out = crate::strata()
        .args(["--json", "ask", "Tell me about Napoleon", "--provider", "anthropic", "--model", "claude-sonnet-4-5"])
        .env("STRATA_DB", e.db())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0000")
        .env("ANTHROPIC_BASE_URL", &url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["answer"], "Pixel is a grey tabby.");
    assert_eq!(
        (v["context"]["report"]["exact_used"].as_u64(), v["context"]["report"]["exact"].as_bool()),
        (Some(150), Some(false))
    );
    let paths: Vec<String> =
        seen.lock().unwrap().iter().map(|(h, _)| h.lines().next().unwrap_or("").to_string()).collect();
    assert!(paths[0].contains("/v1/messages/count_tokens") && paths[1].contains("/v1/messages "), "{paths:?}");
}
