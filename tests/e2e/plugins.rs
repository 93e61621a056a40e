//! Settings → Plugins: the registry by kind, an embedder at an endpoint added and checked (one
//! that cannot be reached said so), search switched to it with the store re-embedded, and back
//! to the on-device one with nothing embedded again; a chat model at an OpenAI-compatible
//! address added and offered by the chat's picker. The endpoint is
//! `scripts/embeddings_replay.py`, answering as Ollama's and OpenAI's APIs do.

use std::process::{Child, Command};
use std::time::Duration;

use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

struct Replay(Child);

impl Drop for Replay {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn replay() -> (Replay, u16) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/embeddings_replay.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("python3").arg(script).args(["--port", &port.to_string()]).spawn().unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "the replay did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    (Replay(child), port)
}

fn add_plugin(s: &Session, name: &str, url: &str) {
    s.type_into(&s.find("#plugin-name"), name);
    s.clear(&s.find("#plugin-url"));
    s.type_into(&s.find("#plugin-url"), url);
    s.type_into(&s.find("#plugin-model"), "nomic-embed-text");
    // As a person would: the button once the form shows what was typed.
    s.wait_for("the form filled", |s| {
        let ready = s.execute(
            "const b = document.getElementById('plugin-add'); \
             return !b.disabled && document.getElementById('plugin-name').value === arguments[0]",
            serde_json::json!([name]),
        );
        (ready == serde_json::json!(true)).then_some(())
    });
    // WebKit's driver scrolls a button only to the window's bottom edge, where its click is lost.
    s.execute("document.getElementById('plugin-add').scrollIntoView({block: 'center'})", serde_json::json!([]));
    s.click(&s.find("#plugin-add"));
}

fn said(s: &Session, starting: &str) -> String {
    s.wait_up_to(Duration::from_secs(60), starting, |s| {
        s.all("#plugins-said").first().map(|e| s.text(e)).filter(|t| t.starts_with(starting))
    })
}

#[test]
fn an_embedder_is_used_for_search_and_switched_back_and_a_chat_model_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (_replay, port) = replay();
    let config = dir.path().join("mcp.json");
    let driver = Driver::start_with(&db, &[("STRATA_MCP_CONFIG", config.to_str().unwrap())], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    s.click(&s.find("#nav-settings"));
    let embedders = s
        .wait_for("the embedders", |s| s.all("#plugins-embedder").first().map(|e| s.text(e)).filter(|t| !t.is_empty()));
    assert!(embedders.starts_with("on-device in use") && embedders.contains("Ready"), "{embedders}");
    let tools = s.text(&s.find("#plugins-tool"));
    assert!(tools.contains("recall") && tools.contains("query_dataset"), "{tools}");

    add_plugin(&s, "nomic", &format!("http://127.0.0.1:{port}"));
    assert_eq!(said(&s, "Added nomic"), "Added nomic: it works.");
    let row = s.text(&s.find("#plugin-embedder-nomic"));
    assert!(row.contains("Ready") && row.contains("ollama:nomic-embed-text (48 dimensions)"), "{row}");

    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    add_plugin(&s, "down", &format!("http://127.0.0.1:{down}"));
    let broken = said(&s, "Added down");
    assert!(
        broken.starts_with(&format!(
            "Added down, but it does not work yet: down: ollama at http://127.0.0.1:{down} cannot be reached"
        )),
        "{broken}"
    );
    let row = s.wait_for("down's row", |s| {
        s.all("#plugin-embedder-down").first().map(|e| s.text(e)).filter(|t| t.contains("Not working"))
    });
    assert!(row.contains("cannot be reached") && !row.contains("Use for search"), "{row}");

    s.click(&s.find("#plugin-embedder-nomic button"));
    let used = said(&s, "Search by meaning now uses nomic");
    assert!(used.contains(" memories embedded in "), "{used}");
    let vectors = s.wait_for("the vectors kept", |s| {
        s.all("#plugin-vectors").first().map(|e| s.text(e)).filter(|t| t.contains("ollama:nomic-embed-text"))
    });
    assert!(vectors.contains("ollama:nomic-embed-text") && vectors.contains("(searched now)"), "{vectors}");
    let row = s.text(&s.find("#plugin-embedder-nomic"));
    assert!(row.starts_with("nomic in use"), "{row}");
    s.execute("document.getElementById('plugins').scrollIntoView()", serde_json::json!([]));
    screenshot(&s, "settings-plugins");

    s.click(&s.find("#plugin-embedder-on-device button"));
    assert_eq!(
        said(&s, "Search by meaning now uses on-device"),
        "Search by meaning now uses on-device (every memory already had its vector)."
    );

    // A chat model at an OpenAI-compatible address: the chat's picker offers it.
    s.execute("document.getElementById('plugin-form').scrollIntoView({block: 'center'})", serde_json::json!([]));
    s.click(&s.find("#plugin-kind option[value=chat-model]"));
    s.click(&s.find("#plugin-provider option[value=openai-compatible]"));
    add_plugin(&s, "studio", &format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(said(&s, "Added studio"), "Added studio: it works.");
    s.click(&s.find("#nav-chat"));
    let offered = s.wait_for("the chat's models", |s| {
        s.all("#chat-provider").first().map(|e| s.text(e)).filter(|t| t.contains("studio"))
    });
    assert!(offered.contains("studio (yours: nomic-embed-text)"), "{offered}");
    s.end();
}
