//! `strata plugins`: the registry listed by kind, the person's plugins added, checked for real
//! (a broken one said broken with why) and removed, and the embedder recall uses switched to a
//! second one and back: the store re-embedded once, switching back embedding nothing. The
//! endpoints are `scripts/embeddings_replay.py`, answering as Ollama's and an OpenAI-compatible
//! server's embedding APIs do. An MCP server's resources (the npm reference `everything`
//! server's documents) load as datasets.

use super::*;

/// The loopback embedding server, and its port.
fn replay() -> (crate::Server, u16) {
    crate::servers::loopback_script("embeddings_replay.py", &[])
}

/// How many texts each API of the replay has embedded.
fn embedded(port: u16) -> (u64, u64) {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /count HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    let v: Value = serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    (v["ollama"].as_u64().unwrap(), v["openai"].as_u64().unwrap())
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn add_embedder(e: &Env, name: &str, provider: &str, url: &str, model: &str) -> Run {
    e.run(&["plugins", "add", name, "--kind", "embedder", "--provider", provider, "--url", url, "--model", model])
}

#[test]
fn the_registry_lists_every_kind_and_a_broken_plugin_says_why() {
    let e = Env::own_settings();
    let (_replay, port) = replay();
    let listed = e.ok(&["plugins"]);
    for heading in ["Storage engines", "Token counters", "Embedders", "Chat models", "Dataset loaders", "Tools"] {
        assert!(listed.contains(heading), "{heading} missing from:\n{listed}");
    }
    assert!(listed.contains("sqlite (in use)") && listed.contains("on-device (in use)"), "{listed}");
    assert!(listed.contains("recall") && listed.contains("query_dataset") && listed.contains("pdf"), "{listed}");

    let ok = add_embedder(&e, "nomic", "ollama", &format!("http://127.0.0.1:{port}"), "nomic-embed-text");
    assert_eq!((ok.code, ok.stdout.trim()), (0, "Added nomic (embedder): ready."), "{}", ok.stderr);
    let down = closed_port();
    let broken = add_embedder(&e, "down", "ollama", &format!("http://127.0.0.1:{down}"), "nomic-embed-text");
    assert_eq!(broken.stdout.trim(), "Added down (embedder): broken.");
    assert!(
        broken
            .stderr
            .contains(&format!("down does not work yet: down: ollama at http://127.0.0.1:{down} cannot be reached")),
        "{}",
        broken.stderr
    );
    let err = e.err(&["plugins", "check", "down"]);
    assert!(err.contains("down is broken") && err.contains("cannot be reached"), "{err}");
    let err = e.err(&["plugins", "add", "x", "--kind", "embedder", "--provider", "ollama", "--url", "http://h"]);
    assert!(err.contains("x: name the model the endpoint serves"), "{err}");

    // A chat model the endpoint serves, and one it does not.
    let v1 = format!("http://127.0.0.1:{port}/v1");
    let args = |name: &str, model: &str| {
        e.run(&[
            "plugins",
            "add",
            name,
            "--kind",
            "chat-model",
            "--provider",
            "openai-compatible",
            "--url",
            &v1,
            "--model",
            model,
        ])
    };
    assert_eq!(args("studio", "text-embedding-3-small").stdout.trim(), "Added studio (chat-model): ready.");
    let missing = args("ghost", "llama-9000");
    assert!(
        missing.stderr.contains("answers but does not serve llama-9000; it serves nomic-embed-text"),
        "{}",
        missing.stderr
    );

    // A token counter whose file is no tokenizer.
    let file = e.dir.path().join("tokenizer.json");
    std::fs::write(&file, "{\"not\": \"a tokenizer\"}").unwrap();
    let tok = e.run(&[
        "plugins",
        "add",
        "mine",
        "--kind",
        "token-manager",
        "--file",
        file.to_str().unwrap(),
        "--models",
        "mine*",
    ]);
    assert_eq!(tok.stdout.trim(), "Added mine (token-manager): broken.", "{}", tok.stderr);
    assert!(tok.stderr.contains("not a readable tokenizer.json"), "{}", tok.stderr);

    // Checked all at once: each said as it is.
    let checked = e.json(&["plugins", "check"]);
    let state = |name: &str| {
        let p = checked.as_array().unwrap().iter().find(|p| p["name"] == name && p["added"] == true).unwrap();
        (p["state"].as_str().unwrap().to_string(), p["detail"].as_str().unwrap().to_string())
    };
    assert_eq!(state("nomic"), ("ready".into(), "ollama:nomic-embed-text (48 dimensions)".into()));
    assert_eq!(state("down").0, "broken");
    assert_eq!(state("ghost").0, "broken");
    assert_eq!(state("mine").0, "broken");

    e.ok(&["plugins", "remove", "down"]);
    assert!(!e.ok(&["plugins", "list", "--kind", "embedder"]).contains("down"));
    assert!(e.err(&["plugins", "remove", "down"]).contains("no plugin of yours is called down"));
}

#[test]
fn a_second_embedder_re_embeds_the_store_and_switching_back_embeds_nothing() {
    let e = Env::own_settings();
    let (_replay, port) = replay();
    for (key, fact) in [
        ("violin", "text=the violin lesson moved to thursday evening"),
        ("harbour", "text=boats leave the harbour at dawn"),
        ("garden", "text=tomatoes and basil grow in the garden"),
    ] {
        e.ok(&["add", "semantic", key, "--fact", fact]);
    }
    add_embedder(&e, "nomic", "ollama", &format!("http://127.0.0.1:{port}"), "nomic-embed-text");
    add_embedder(&e, "small", "openai-compatible", &format!("http://127.0.0.1:{port}/v1"), "text-embedding-3-small");

    let used = e.ok(&["plugins", "use", "nomic"]);
    assert!(used.starts_with("Search by meaning now uses nomic (3 memories embedded in "), "{used}");
    let found = e.json(&["recall", "violin lesson"]);
    assert_eq!(found[0]["memory"]["key"], "violin", "{found}");
    assert!(found[0]["why"]["similarity"].as_f64().unwrap() > 0.5, "searched by meaning: {found}");

    let used = e.ok(&["plugins", "use", "small"]);
    assert!(used.starts_with("Search by meaning now uses small (3 memories embedded in "), "{used}");
    let found = e.json(&["recall", "boats at dawn"]);
    assert_eq!(found[0]["memory"]["key"], "harbour", "{found}");
    assert!(e.ok(&["plugins", "list", "--kind", "embedder"]).contains("small (in use)"));

    // Back to nomic: its vectors were kept. The endpoint is called once, to learn the size.
    let before = embedded(port);
    let used = e.ok(&["plugins", "use", "nomic"]);
    assert_eq!(used.trim(), "Search by meaning now uses nomic (every memory already had its vector).");
    let after = embedded(port);
    assert_eq!(after.0 - before.0, 1, "only nomic's size was asked: {before:?} → {after:?}");
    let found = e.json(&["recall", "tomatoes basil"]);
    assert_eq!(found[0]["memory"]["key"], "garden", "{found}");
    let err = e.err(&["plugins", "remove", "nomic"]);
    assert!(err.contains("nomic is the embedder in use: choose another embedder first"), "{err}");
    // Removed, an embedder takes the vectors it made along.
    assert_eq!(e.ok(&["plugins", "remove", "small"]).trim(), "Removed small and the vectors it made of 3 memories.");
}

#[test]
fn an_mcp_servers_text_resources_load_as_datasets() {
    let e = Env::own_settings();
    let server = crate::mcp_servers::npm_server("server-everything");
    e.ok(&["mcp-servers", "add", "everything", "--", "node", &server, "stdio"]);
    let offered = e.json(&["datasets", "mcp", "everything"]);
    let uris: Vec<&str> = offered.as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(uris.contains(&"demo://resource/static/document/architecture.md"), "{offered}");
    assert!(offered.as_array().unwrap().iter().all(|r| r["mime_type"] != "application/octet-stream"));

    let uri = "demo://resource/static/document/architecture.md";
    let loaded = e.ok(&["datasets", "load-mcp", "everything", uri, "--no-embed"]);
    assert!(loaded.starts_with(&format!("Loaded: architecture from {uri} from the MCP server everything")), "{loaded}");
    let found = e.ok(&["datasets", "search", "how transports are wired"]);
    assert!(found.contains("architecture"), "{found}");
    let err = e.err(&["datasets", "load-mcp", "everything", "demo://nothing"]);
    assert!(err.contains("everything offers no resource demo://nothing"), "{err}");
    let err = e.err(&["datasets", "load-mcp", "nobody"]);
    assert!(err.contains("no MCP server is named nobody"), "{err}");

    // In the registry, the server is a dataset loader (its resources) and a source of tools.
    let checked = e.json(&["plugins", "check", "everything"]);
    let loader = checked.as_array().unwrap().iter().find(|p| p["kind"] == "dataset-loader").unwrap();
    assert_eq!(loader["state"], "ready");
    assert!(loader["detail"].as_str().unwrap().starts_with("7 resources to load as datasets"), "{loader}");
    let tools = checked.as_array().unwrap().iter().find(|p| p["kind"] == "tool").unwrap();
    assert!(tools["detail"].as_str().unwrap().contains("echo"), "{tools}");
}
