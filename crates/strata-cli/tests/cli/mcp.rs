//! `strata mcp` driven by the official MCP Python SDK (installed by scripts/setup) as a real
//! client, over stdio and streamable HTTP; the reference memory server's tool shapes checked
//! against ours.

use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::{Env, python, spawn_server};

fn client() -> String {
    crate::in_crate("tests/fixtures/mcp_client.py")
}
const REFERENCE: &str = include_str!("../fixtures/server-memory-tools.json");

fn run_client(args: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(client())
        .args(args)
        .env("STRATA_SETTINGS", crate::test_settings())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// `strata mcp --http` on a free port; returns the server and its URL.
fn http_server(e: &Env, extra: &[&str]) -> (crate::Server, String) {
    let mut args = vec!["mcp", "--http", "127.0.0.1:0", "--token", "local-secret"];
    args.extend_from_slice(extra);
    spawn_server(e, &args, "MCP server")
}

/// A tool's refusal, in the shape every tool failure has: `isError` with
/// `{"error": {code, message}}`; returns the message.
fn refused(v: &Value, code: &str) -> String {
    assert_eq!(v["is_error"], true, "{v}");
    assert_eq!(v["value"]["error"]["code"], code, "{v}");
    v["value"]["error"]["message"].as_str().unwrap().to_string()
}

/// What every transport must do: the tools, resources, prompts and error cases.
fn check_scenario(v: &Value) {
    assert_eq!(v["server"], "strata");
    for tool in ["remember", "recall", "get", "update", "tag", "forget", "list", "build_context"] {
        assert!(v["tools"].as_array().unwrap().iter().any(|t| t == tool), "{tool} missing: {}", v["tools"]);
        assert_eq!(v["schemas"][tool]["type"], "object", "{tool} has an object schema");
    }
    let fact = &v["remember_fact"]["memory"];
    assert_eq!((fact["type"].as_str(), fact["key"].as_str()), (Some("semantic"), Some("pixel")));
    assert_eq!(fact["source"]["app"], "mcp:test-client", "the write records its client");
    assert!(fact["scope"]["agent_id"].is_null(), "shared by default: {fact}");
    assert_eq!(v["remember_procedure"]["memory"]["scope"]["agent_id"], "test-client", "private on request");
    assert_eq!(v["remember_episode"]["memory"]["body"]["text"], "We adopted Pixel from the shelter in Porto");

    let results = v["recall"]["value"]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    let adopted = results.iter().find(|r| r["memory"]["type"] == "episodic").expect("the adoption is recalled");
    assert!(adopted["why"]["score"].as_f64().unwrap() > 0.0 && adopted["why"].get("similarity").is_some());
    assert_eq!(v["get"]["value"]["facts"]["colour"], "ginger");
    assert_eq!(v["update"]["value"]["facts"]["age"], 3);
    assert_eq!(v["tag"]["value"]["tags"], serde_json::json!(["family"]));
    let (first, second) = (&v["list"]["first"], &v["list"]["second"]);
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert_eq!(second["items"].as_array().unwrap().len(), 1, "three memories, pages of two");
    assert!(second.get("next_cursor").is_none_or(Value::is_null));
    let context = &v["build_context"]["value"];
    assert!(context["messages"][0]["content"].as_str().unwrap().contains("pixel"), "{context}");
    assert!(context["report"]["used"].as_u64().unwrap() <= 300);

    assert_eq!(v["get_missing"]["error"], true);
    assert_eq!(v["get_missing"]["value"]["error"]["code"], "not_found");
    assert!(refused(&v["bad_arguments"], "invalid_input").contains("needs `key`"));
    // Arguments that do not deserialize (rmcp's errors) are refused in the same shape as ours.
    assert!(refused(&v["wrong_type"], "invalid_input").contains("expected a string"));
    assert!(refused(&v["limit_not_a_number"], "invalid_input").contains(r#"invalid type: string "ten""#));
    assert!(refused(&v["unknown_field"], "invalid_input").contains("unknown field `limt`"));
    assert!(refused(&v["forget_unconfirmed"], "invalid_input").contains("confirm: true"));
    assert!(v["unknown_tool"]["message"].as_str().unwrap().contains("tool not found"), "{}", v["unknown_tool"]);

    assert_eq!(
        v["resources"].as_array().unwrap().iter().filter(|r| r.as_str().unwrap().starts_with("strata://")).count(),
        5
    );
    // Curation and the registry, read only: nothing flagged or trained in this scenario.
    assert_eq!(v["candidates"]["candidates"], serde_json::json!([]), "{}", v["candidates"]);
    assert_eq!(v["candidates"]["flagged"], 0);
    assert_eq!(v["adapters"], serde_json::json!([]));
    // Analytics as a resource: the memory held, the recall and the prompt this scenario ran.
    let analytics = &v["analytics"];
    assert_eq!(analytics["memory"]["memories"], 3, "{analytics}");
    assert!(analytics["recalls"]["searches"].as_u64().unwrap() >= 1, "{analytics}");
    assert_eq!(analytics["utilization"]["prompts"], 1, "{analytics}");
    assert!(analytics["utilization"]["by_model"]["gpt-4o"]["prompts"] == 1, "{analytics}");
    assert_eq!(v["templates"], serde_json::json!(["strata://concept/{key}", "strata://memory/{id}"]));
    assert_eq!(v["stats"]["memories"], 3);
    assert_eq!(v["concept"]["key"], "pixel");
    assert_eq!(v["memory_by_id"], fact["id"]);
    assert_eq!(v["procedures"]["items"][0]["name"], "feed pixel");
    assert!(v["missing_resource"]["message"].as_str().unwrap().contains("nobody"));
    assert_eq!(v["prompts"], serde_json::json!(["recall_then_answer", "remember_conversation"]));
    let prompt = v["prompt_text"].as_str().unwrap();
    assert!(prompt.contains("shelter in Porto") && prompt.ends_with("Question: Where is Pixel from?"), "{prompt}");
    assert!(v["bad_prompt"]["message"].as_str().unwrap().contains("question"));

    assert_eq!(v["forget"]["value"]["id"], fact["id"]);
    let after = v["recall_after_forget"]["results"].as_array().unwrap();
    assert!(after.iter().all(|r| r["memory"]["id"] != fact["id"]), "forgotten, gone from recall");

    // A conversation handed over is kept turn by turn; these settings read no facts from it.
    let handed = &v["remember_conversation"]["value"];
    assert_eq!(handed["session_id"], "trip-planning");
    assert_eq!(handed["episodes"].as_array().map(Vec::len), Some(2));
    assert!(handed["extraction"].as_str().unwrap().starts_with("off"), "{handed}");
    assert_eq!(v["proposed_facts"]["value"]["proposals"], serde_json::json!([]));
    assert!(refused(&v["review_unknown"], "not_found").contains("no proposal"));
    assert!(refused(&v["conversation_empty"], "invalid_input").contains("turns"));
    // A document edited by lines (seed 004's edit_memory): the replaced line keeps its old value.
    assert_eq!(v["edit_memory"]["value"]["content"], "- Tomas visits Porto in May");
    let read = &v["read_memory"]["value"];
    assert_eq!(read["content"], "- Tomas visits Porto in June");
    assert_eq!(read["facts"][0]["history"][0]["fact"], "Tomas visits Porto in May");
}

#[test]
fn the_official_mcp_client_over_stdio_uses_every_tool_resource_and_prompt() {
    let e = Env::new();
    let db = e.db();
    let v = run_client(&["stdio", env!("CARGO_BIN_EXE_strata"), db.to_str().unwrap(), "--graph-tools"]);
    check_scenario(&v);
    assert!(v["oversized"]["message"].as_str().unwrap().contains("at most 1048576"), "{}", v["oversized"]);

    // The graph tools, as the reference server shapes their results.
    let g = &v["graph"];
    assert_eq!(g["created"]["entities"].as_array().unwrap().len(), 2);
    assert_eq!(g["relations"]["relations"][0]["relationType"], "works_at");
    assert_eq!(g["added"]["results"][0]["addedObservations"], serde_json::json!(["Graduated in 2019"]));
    assert_eq!(g["search"]["entities"][0]["name"], "John_Smith");
    assert_eq!(g["search"]["relations"].as_array().unwrap().len(), 1, "its relation comes along");
    assert_eq!(g["open"]["entities"][0]["name"], "Anthropic");
    assert_eq!(g["deleted_obs"], serde_json::json!({"success": true, "message": "Observations deleted successfully"}));
    assert_eq!(g["deleted_rel"]["success"], true);
    assert_eq!(g["deleted"]["message"], "Entities deleted successfully");
    let names: Vec<&str> =
        g["graph"]["entities"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"John_Smith") && !names.contains(&"Anthropic"), "{names:?}");
    let john = g["graph"]["entities"].as_array().unwrap().iter().find(|e| e["name"] == "John_Smith").unwrap();
    assert_eq!(john["observations"], serde_json::json!(["Speaks fluent Spanish"]));
    assert_eq!(g["resource"]["entities"], g["graph"]["entities"], "the graph resource is the graph");
    assert_eq!(g["missing_entity"][0], true, "a missing entity is a tool error");

    // Our graph tools take exactly the reference server's arguments.
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    let tools = reference["tools"].as_object().unwrap();
    assert_eq!(tools.len(), 9);
    for (name, theirs) in tools {
        let ours = &v["schemas"][name];
        assert!(ours.is_object(), "{name} is not offered");
        assert_eq!(
            shape(ours, ours),
            shape(&theirs["inputSchema"], &theirs["inputSchema"]),
            "{name}'s arguments differ"
        );
        // And our results carry what their output schema requires.
        let result_key = match name.as_str() {
            "create_entities" => "created",
            "create_relations" => "relations",
            "add_observations" => "added",
            "search_nodes" => "search",
            "open_nodes" => "open",
            "delete_observations" => "deleted_obs",
            "delete_relations" => "deleted_rel",
            "delete_entities" => "deleted",
            _ => "graph",
        };
        for key in theirs["outputSchema"]["required"].as_array().unwrap() {
            assert!(g[result_key].get(key.as_str().unwrap()).is_some(), "{name}'s result lacks {key}");
        }
    }
    // Without --graph-tools they are not offered.
    let plain = e.json(&["stats"]);
    assert!(plain["memories"].as_u64().unwrap() >= 3);
}

#[test]
fn concepts_are_resources_an_mcp_client_lists_reads_and_expands() {
    let e = Env::new();
    crate::concepts::say_all(&e);
    e.ok(&["add", "semantic", "pixel", "--fact", "colour=ginger"]);
    e.json(&["concepts", "rebuild"]);
    let concepts = e.json(&["concepts"]);
    let largest = &concepts[0];
    let key = largest["key"].as_str().unwrap();
    let v = run_client(&["concepts", env!("CARGO_BIN_EXE_strata"), e.db().to_str().unwrap()]);

    // Listed, the largest first, with a name a person reads.
    let listed = v["listed"].as_array().unwrap();
    assert_eq!(listed.len(), concepts.as_array().unwrap().len(), "{v}");
    assert_eq!(listed[0]["uri"], format!("strata://concept/{key}"));
    assert_eq!(listed[0]["title"], largest["name"]);
    let members = largest["members"].as_array().unwrap().len();
    assert!(listed[0]["description"].as_str().unwrap().starts_with(&format!("A concept: {members} related")));
    // Read by its key and by the slug alone: the concept with its summary and members.
    assert_eq!(v["by_key"]["key"], key);
    assert_eq!(v["by_key"]["members"], largest["members"]);
    assert_eq!(v["by_slug"], v["by_key"]);
    // A plain key still reads the semantic memory under it, as it did before concepts.
    assert_eq!(v["semantic"]["facts"]["colour"], "ginger");
    assert!(v["missing"]["message"].as_str().unwrap().contains("no concept 'concept/nothing_here'"), "{v}");

    // Expanded: the members in full, earliest first, two of them as asked.
    let expanded = &v["expanded"]["value"];
    assert_eq!(v["expanded"]["error"], false, "{v}");
    assert_eq!(expanded["concept"]["key"], key);
    assert_eq!(expanded["total"], members);
    assert_eq!(expanded["truncated"], members > 2);
    let texts: Vec<&str> =
        expanded["members"].as_array().unwrap().iter().map(|m| m["body"]["text"].as_str().unwrap()).collect();
    assert_eq!(texts.len(), 2);
    let order: Vec<usize> =
        texts.iter().map(|t| crate::concepts::said().iter().position(|s| s == t).unwrap()).collect();
    assert!(order[0] < order[1], "earliest first: {texts:?}");
    assert!(refused(&v["expand_missing"], "not_found").contains("no concept 'nothing_here'"));
    assert!(refused(&v["expand_not_a_concept"], "invalid_input").contains("not a concept"));
}

/// A JSON Schema reduced to its shape: types, properties and required names, with `$ref`s
/// resolved and descriptions, titles and formats dropped.
fn shape(s: &Value, root: &Value) -> Value {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return shape(&root["$defs"][name], root);
    }
    match s {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                match k.as_str() {
                    "description" | "title" | "$schema" | "$defs" | "additionalProperties" | "format" | "minimum" => {}
                    "required" => {
                        let mut names: Vec<&str> = v.as_array().unwrap().iter().filter_map(Value::as_str).collect();
                        names.sort();
                        out.insert(k.clone(), serde_json::json!(names));
                    }
                    _ => {
                        out.insert(k.clone(), shape(v, root));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| shape(i, root)).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_official_mcp_client_over_http_needs_the_token_and_a_loopback_origin() {
    let e = Env::new();
    let (mut server, url) = http_server(&e, &[]);
    let v = run_client(&["http", &url, "local-secret"]);
    let _ = server.kill();
    let _ = server.wait();
    check_scenario(&v);
    assert!(!v["tools"].as_array().unwrap().iter().any(|t| t == "read_graph"), "graph tools only when asked");
    assert_eq!((v["no_token"].as_u64(), v["wrong_token"].as_u64()), (Some(401), Some(401)));
    assert_eq!(v["foreign_origin"], 403, "a page from another origin is refused");
    assert_eq!(v["oversized_status"], 413, "a body over 1 MiB is refused");
}

#[test]
fn two_clients_writing_at_once_lose_nothing_and_keep_their_private_notes() {
    let e = Env::new();
    let (mut server, url) = http_server(&e, &[]);
    let writers: Vec<Child> = ["alpha", "beta"]
        .iter()
        .map(|name| {
            Command::new(python())
                .args([&client(), "writer", &url, "local-secret", name, "60"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (v["written"].as_u64(), v["secret_written"].as_bool()),
            (Some(60), Some(true)),
            "every call succeeded"
        );
    }
    // Each client sees the shared notes of both, and its own private note only.
    let peek = run_client(&["peek", &url, "local-secret", "alpha"]);
    assert_eq!(peek["seen"], 121, "{peek}");
    assert_eq!(peek["secrets"], serde_json::json!(["alpha secret"]));
    let _ = server.kill();
    let _ = server.wait();
    let stats = e.json(&["stats"]);
    assert_eq!(stats["memories"], 122, "{stats}");
    let list = e.json(&["list", "--limit", "200"]);
    assert_eq!(list["items"].as_array().unwrap().len(), 122, "the user sees every client's, private ones included");
    let sources: std::collections::BTreeSet<&str> =
        list["items"].as_array().unwrap().iter().map(|m| m["source"]["app"].as_str().unwrap()).collect();
    assert_eq!(sources, ["mcp:alpha", "mcp:beta"].into_iter().collect(), "each write records its client");
}

#[test]
fn a_reference_memory_json_imports_and_exports() {
    let e = Env::new();
    let file = &crate::in_crate("../strata-api/tests/fixtures/memory.json");
    let imported = e.json(&["import", file]);
    assert_eq!(imported["format"], "graph");
    assert_eq!(imported["imported"], 5, "three entities and two relations");
    let out = e.dir.path().join("out.json");
    e.json(&["export", "--format", "graph", "-o", out.to_str().unwrap()]);
    let lines: Vec<Value> =
        std::fs::read_to_string(&out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["name"], "John_Smith");
    assert_eq!(lines[4]["type"], "relation");
}

const AUTH: &str = "Authorization: Bearer local-secret";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The port of a server's URL.
fn port_of(url: &str) -> u16 {
    url.trim_end_matches("/mcp").rsplit(':').next().unwrap().parse().unwrap()
}

/// A raw HTTP POST of `body` to /mcp on 127.0.0.1:`port` — always loopback — naming `host`
/// as its Host (as a client elsewhere would); returns the status and the body.
fn post(port: u16, host: &str, headers: &[&str], body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for h in headers {
        request += &format!("{h}\r\n");
    }
    request += "\r\n";
    request += body;
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status =
        response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{response}"));
    (status, response.split_once("\r\n\r\n").map_or("", |(_, body)| body).to_string())
}

#[test]
fn allow_remote_serves_requests_naming_the_servers_address_or_an_allowed_name() {
    let e = Env::new();
    let args =
        ["mcp", "--http", "0.0.0.0:0", "--allow-remote", "--allow-host", "Memory.Home.Arpa", "--token", "local-secret"];
    let (mut server, url) = spawn_server(&e, &args, "MCP server");
    let port = port_of(&url);
    let (address, name) = (format!("192.0.2.7:{port}"), format!("memory.home.arpa:{port}"));
    let statuses = [
        post(port, &address, &[AUTH], INITIALIZE).0,
        post(port, &name, &[AUTH], INITIALIZE).0,
        post(port, &address, &[], INITIALIZE).0,
        post(port, &address, &["Authorization: Bearer wrong"], INITIALIZE).0,
        post(port, &format!("evil.example:{port}"), &[AUTH], INITIALIZE).0,
        post(port, &address, &[AUTH, "Origin: http://192.0.2.7:8000"], INITIALIZE).0,
        post(port, &address, &[AUTH, "Origin: http://localhost:8000"], INITIALIZE).0,
    ];
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        statuses,
        [200, 200, 401, 401, 403, 403, 200],
        "address, name, no token, wrong token, other name, pages"
    );

    // Without --allow-remote the same requests are refused; localhost is served.
    let (mut server, url) = http_server(&e, &[]);
    let port = port_of(&url);
    let statuses = [
        post(port, &format!("192.0.2.7:{port}"), &[AUTH], INITIALIZE).0,
        post(port, &format!("memory.home.arpa:{port}"), &[AUTH], INITIALIZE).0,
        post(port, &format!("localhost:{port}"), &[AUTH], INITIALIZE).0,
    ];
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(statuses, [403, 403, 200]);

    // An allowed name is allowed whatever the address bound (403 on loopback before): a
    // loopback server behind a tunnel or a proxy is reached by its name.
    let args = ["mcp", "--http", "127.0.0.1:0", "--allow-remote", "--allow-host", "memory.home.arpa"];
    let (mut server, url) = spawn_server(&e, &[&args[..], &["--token", "local-secret"]].concat(), "MCP server");
    let port = port_of(&url);
    let statuses = [
        post(port, &format!("memory.home.arpa:{port}"), &[AUTH], INITIALIZE).0,
        post(port, &format!("evil.example:{port}"), &[AUTH], INITIALIZE).0,
        post(port, &format!("192.0.2.7:{port}"), &[AUTH], INITIALIZE).0,
    ];
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(statuses, [200, 403, 403], "the name, another name, an address");

    let r = e.run(&["mcp", "--http", "127.0.0.1:0", "--allow-host", "memory.home.arpa"]);
    assert!(r.code == 2 && r.stderr.contains("--allow-remote"), "--allow-host needs --allow-remote: {}", r.stderr);
    let r = e.run(&["mcp", "--http", "0.0.0.0:0", "--allow-remote", "--allow-host", "memory:8765"]);
    assert!(r.code == 2 && r.stderr.contains("not a host name"), "{}", r.stderr);
}

#[test]
fn malformed_json_rpc_over_http_gets_the_json_rpc_error() {
    let e = Env::new();
    let (mut server, url) = http_server(&e, &[]);
    let port = port_of(&url);
    let host = format!("127.0.0.1:{port}");
    let cases = [
        ("this is not json", -32700),
        (r#"{"jsonrpc":"2.0","id":1,"#, -32700),
        (r#"{"hello":"world"}"#, -32600),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
    ];
    let answers: Vec<(u16, String)> = cases.iter().map(|(body, _)| post(port, &host, &[AUTH], body)).collect();
    let _ = server.kill();
    let _ = server.wait();
    for ((body, code), (status, answer)) in cases.iter().zip(answers) {
        assert_eq!(status, 400, "{body}: {answer}");
        let answer: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{body}: {e}: {answer}"));
        assert_eq!(answer["jsonrpc"], "2.0", "{body}: {answer}");
        assert_eq!(answer["error"]["code"], *code, "{body}: {answer}");
    }
}

/// `strata mcp` over stdio, sent the handshake and then `lines` as they are; the messages it
/// writes until it has answered every id in `ids`.
fn over_stdio(e: &Env, lines: &[&str], ids: &[u64]) -> Vec<Value> {
    use std::io::{BufRead, Write};
    let mut server = crate::strata()
        .arg("mcp")
        .env("STRATA_DB", e.db())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let output = std::io::BufReader::new(server.stdout.take().unwrap());
    std::thread::spawn(move || output.lines().map_while(Result::ok).try_for_each(|l| tx.send(l)));
    let handshake = [INITIALIZE, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#];
    for line in handshake.iter().chain(lines) {
        writeln!(input, "{line}").unwrap();
    }
    let mut seen = vec![];
    while !ids.iter().all(|id| seen.iter().any(|m: &Value| m["id"] == *id)) {
        let line =
            rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap_or_else(|_| panic!("no answer: {seen:?}"));
        seen.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    drop(input);
    let _ = server.kill();
    let _ = server.wait();
    seen
}

#[test]
fn malformed_messages_over_stdio_get_json_rpc_errors_and_non_object_arguments_invalid_params() {
    let e = Env::new();
    let answers = over_stdio(
        &e,
        &[
            "this is not json",
            r#"{"hello":"world"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":"everything"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":["x"]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
        ],
        &[0, 1, 2, 3, 4],
    );
    let unanswerable: Vec<&Value> =
        answers.iter().filter(|m| m.get("id").is_none()).map(|m| &m["error"]["code"]).collect();
    assert_eq!(unanswerable, [-32700, -32600], "{answers:?}");
    let answer = |id: u64| answers.iter().find(|m| m["id"] == id).unwrap();
    for id in [1, 2] {
        assert_eq!(answer(id)["error"]["code"], -32602, "{}", answer(id));
        assert!(answer(id)["error"]["message"].as_str().unwrap().contains("`arguments` must be an object"));
    }
    assert_eq!(answer(3)["error"]["code"], -32601, "a method we do not serve is still not found");
    assert_eq!(answer(4)["result"], serde_json::json!({}), "and the session goes on");
}

#[test]
fn an_mcp_client_lists_queries_and_searches_datasets() {
    let e = Env::new();
    let data = |f: &str| format!("{}/../strata-datasets/tests/data/{f}", env!("CARGO_MANIFEST_DIR"));
    e.ok(&["datasets", "load", &data("expenses.csv"), &data("contract.pdf")]);
    let v = run_client(&["datasets", env!("CARGO_BIN_EXE_strata"), e.db().to_str().unwrap()]);
    assert_eq!(v["tools"], serde_json::json!(["list_datasets", "query_dataset", "search_datasets"]));
    let names: Vec<&str> =
        v["listed"]["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["contract", "expenses"]);
    let answer = &v["query"]["value"];
    assert_eq!(v["query"]["error"], false, "{v}");
    assert_eq!(answer["columns"], serde_json::json!(["category", "n"]));
    assert_eq!(answer["rows"].as_array().unwrap().len(), 2);
    assert_eq!(answer["cut_off"], true, "six categories, two rows asked for");
    assert!(refused(&v["write"], "invalid_input").contains("begins with DELETE"));
    assert!(refused(&v["outside"], "invalid_input").contains("it reads memories, which is not this dataset"));
    let first = &v["search"]["value"]["results"][0];
    assert_eq!((first["dataset"].as_str(), first["page"].as_u64()), (Some("contract"), Some(3)), "{v}");
    assert!(first["text"].as_str().unwrap().contains("60 days"), "{first}");
    assert_eq!(first["file"], "contract.pdf");
    // A resource per dataset, with its first rows.
    let resources = v["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 2, "{v}");
    let expenses = resources.iter().find(|r| r["uri"] == "strata://dataset/expenses").unwrap();
    assert_eq!(expenses["title"], "expenses (expenses.csv)");
    assert!(
        expenses["description"]
            .as_str()
            .unwrap()
            .starts_with("A table from expenses.csv: 48 rows; columns date, category")
    );
    let resource = &v["resource"];
    assert_eq!(
        (resource["rows"].as_u64(), resource["first"].as_array().map(Vec::len)),
        (Some(48), Some(20)),
        "{resource}"
    );
    assert_eq!(resource["first"][1][1], "rent");
    assert!(v["missing_resource"]["message"].as_str().unwrap().contains("no dataset named nothing"), "{v}");
    // A prompt built with a dataset's passages, each labelled with its file and place.
    let context = &v["context"];
    let prompt: String = context["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    assert!(prompt.contains("(contract.pdf, page 2, lines 1–4)") && prompt.contains("1,900 euros"), "{prompt}");
    let passages = context["report"]["passages"].as_array().unwrap();
    assert!(passages.iter().all(|p| p["dataset"] == "contract") && passages[0]["label"].is_u64(), "{context}");
    assert!(refused(&v["context_unknown"], "not_found").contains("no dataset named contracts"));
}
