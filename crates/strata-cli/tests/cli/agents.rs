//! `strata agents`: defining and changing agents, running them with OpenAI's tool-call stream
//! replayed from a loopback server and with the on-device model, reading and forgetting runs.

use super::*;
use crate::providers::loopback;

/// An OpenAI stream in which the model calls `name` with `arguments` (split over two chunks,
/// as the API sends them).
pub(crate) fn tool_stream(name: &str, arguments: &str) -> String {
    let (a, b) = arguments.split_at(arguments.len() / 2);
    let chunk = |delta: Value, finish: Value| {
        let c = serde_json::json!({"id": "chatcmpl-T1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null});
        format!("data: {c}\n\n")
    };
    let call = |args: &str, first: bool| {
        let mut f = serde_json::json!({"index": 0, "function": {"arguments": args}});
        if first {
            f["id"] = "call_T1".into();
            f["type"] = "function".into();
            f["function"]["name"] = name.into();
        }
        serde_json::json!({"tool_calls": [f]})
    };
    let usage = serde_json::json!({"id": "chatcmpl-T1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 90, "completion_tokens": 12}});
    [
        chunk(call("", true), Value::Null),
        chunk(call(a, false), Value::Null),
        chunk(call(b, false), Value::Null),
        chunk(serde_json::json!({}), "tool_calls".into()),
        format!("data: {usage}\n\ndata: [DONE]\n\n"),
    ]
    .concat()
}

/// An OpenAI stream that answers `text`.
pub(crate) fn text_stream(text: &str) -> String {
    let c = serde_json::json!({"id": "chatcmpl-T2", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 6}});
    format!("data: {c}\n\ndata: [DONE]\n\n")
}

/// The replayed OpenAI: Triage hands the task to Booker; Booker keeps the trip's date, then
/// answers. Which turn it is comes from the request, as a real model would read it.
fn replay(_: &str, body: &str) -> (u16, &'static str, String) {
    let sent: Value = serde_json::from_str(body).unwrap_or_default();
    let messages = sent["messages"].as_array().cloned().unwrap_or_default();
    let system = messages.first().and_then(|m| m["content"].as_str()).unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    let answer = if system.starts_with("You are Triage") {
        tool_stream("transfer_to_booker", "{}")
    } else if last["role"] == "tool" && last["content"].as_str().is_some_and(|c| c.contains("assistant")) {
        tool_stream("remember", r#"{"about": "Porto trip", "fact": "date", "value": "3 June", "shared": true}"#)
    } else {
        text_stream("Booked: the Porto trip is on 3 June.")
    };
    (200, "text/event-stream", answer)
}

/// A store with two agents thinking with OpenAI's gpt-4o-mini: Triage hands tasks to Booker,
/// who may remember and recall.
fn triage_and_booker() -> Env {
    let e = Env::new();
    let model = ["--model", "openai:gpt-4o-mini"];
    e.ok(&[
        &["agents", "add", "Triage", "--description", "Sends each task to the right agent"][..],
        &model,
        &["--handoff", "Booker"],
    ]
    .concat());
    e.ok(&[
        &["agents", "add", "Booker", "--description", "Books trips"][..],
        &model,
        &["--tool", "remember", "--tool", "recall"],
    ]
    .concat());
    e
}

#[test]
fn agents_hand_a_task_on_over_openais_tool_calls_and_the_run_is_recorded() {
    let e = triage_and_booker();
    let (url, seen) = loopback(replay);
    let out = crate::strata()
        .args(["agents", "run", "Triage", "Book", "my", "Porto", "trip", "for", "3", "June"])
        .env("STRATA_DB", e.db())
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", &url)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Booked: the Porto trip is on 3 June.");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines[0], "1. Triage thinks (openai:gpt-4o-mini)");
    assert_eq!(lines[1], "2. Triage hands the task to Booker");
    assert!(lines[3].starts_with("4. Booker calls remember {\"about\":\"Porto trip\""), "{stderr}");
    assert!(lines[4].starts_with("5. Booker says: Booked"), "{stderr}");
    assert!(lines[5].contains("(answered by Booker): strata agents runs run_"), "{stderr}");
    // What OpenAI was sent: the handoff tool, then Booker's tools and the conversation so far.
    let bodies: Vec<Value> = seen.lock().unwrap().iter().map(|(_, b)| serde_json::from_str(b).unwrap()).collect();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[0]["tools"][0]["function"]["name"], "transfer_to_booker");
    assert_eq!(bodies[1]["tools"].as_array().unwrap().len(), 2, "Booker's remember and recall");
    assert_eq!(bodies[1]["messages"][1]["content"], "Book my Porto trip for 3 June");
    assert_eq!(bodies[1]["messages"][2]["tool_calls"][0]["function"]["name"], "transfer_to_booker");
    assert_eq!(bodies[1]["messages"][3]["tool_call_id"], "call_T1");
    // The trip's date is shared, kept by Booker.
    let found = e.json(&["recall", "Porto trip date"]);
    assert!(found.to_string().contains("3 June"), "{found}");
    // The record.
    let runs = e.json(&["agents", "runs"]);
    let id = runs[0]["id"].as_str().unwrap().to_string();
    assert_eq!((runs[0]["outcome"].as_str(), runs[0]["last_agent"].as_str()), (Some("answered"), Some("Booker")));
    assert_eq!(runs[0]["prompt_tokens"], 90 + 90 + 120);
    let shown = e.ok(&["agents", "runs", &id]);
    assert!(shown.contains("gave Triage: Book my Porto trip for 3 June"), "{shown}");
    assert!(shown.contains("answered by Booker: Booked: the Porto trip is on 3 June."), "{shown}");
    // Counted in analytics: the task, its steps, its one tool call and handoff, its tokens
    // (read 300, written 30).
    let counted = e.ok(&["analytics", "agents"]);
    assert!(counted.starts_with("1 task: 1 answered."), "{counted}");
    let triage = counted.lines().find(|l| l.trim_start().starts_with("Triage")).unwrap();
    let cells: Vec<&str> = triage.split_whitespace().collect();
    assert_eq!(cells[..8], ["Triage", "1", "1", "5", "1", "0", "1", "330"], "{counted}");
    let m = e.json(&["analytics", "agents"]);
    assert_eq!((m["runs"].as_u64(), m["outcomes"]["answered"].as_u64()), (Some(1), Some(1)));
    assert_eq!(m["series"][0]["runs"], 1);
    // Forgetting Booker erases the run it acted in.
    e.ok(&["agents", "forget", "Booker", "--yes"]);
    assert_eq!(e.json(&["agents", "runs"]).as_array().unwrap().len(), 0);
    assert!(e.err(&["agents", "runs", &id]).contains("no run has the id"));
    assert!(e.ok(&["analytics", "agents"]).starts_with("No agent was given a task in this range"));
}

#[test]
fn agents_are_defined_changed_and_refused_in_words() {
    let e = Env::new();
    assert!(e.ok(&["agents"]).contains("No agents yet"));
    e.ok(&["agents", "add", "Helper", "--instructions", "Be brief.", "--tool", "recall"]);
    e.ok(&["agents", "edit", "Helper", "--tool", "recall", "--tool", "remember", "--shared", "read"]);
    let a = e.json(&["agents", "show", "helper"]);
    assert_eq!((a["version"].as_u64(), a["spec"]["shared"].as_str()), (Some(2), Some("read")));
    assert_eq!(a["spec"]["instructions"], "Be brief.", "what was not given is kept");
    let history = e.json(&["agents", "history", "Helper"]);
    assert_eq!(history.as_array().unwrap().len(), 2);
    assert!(e.ok(&["agents", "list"]).contains("Helper  on-device  recall, remember"));
    assert_eq!(
        e.err(&["agents", "add", "Other", "--tool", "shell"]),
        "error: there is no tool named shell: the tools are recall, remember, update, forget, list_datasets, \
         search_datasets, query_dataset, and your MCP servers' as SERVER__TOOL or SERVER__* (strata mcp-servers)"
    );
    assert!(e.err(&["agents", "add", "helper"]).contains("an agent named 'helper' (or spelled alike) exists"));
    assert!(e.err(&["agents", "run", "Nobody", "hello"]).contains("no agent is named 'Nobody'"));
    assert!(e.err(&["agents", "edit", "Helper", "--expect-version", "1", "--description", "x"]).contains("conflict"));
    assert!(e.err(&["agents", "forget", "Helper"]).contains("pass --yes"), "no terminal to ask in");
    assert_eq!(e.json(&["agents", "list"]).as_array().unwrap().len(), 1, "nothing was forgotten");
}

/// The on-device model as an agent's: held to a call on its first step, it calls one of the
/// agent's tools in its own format, and the run is recorded.
#[test]
fn an_agent_runs_on_the_on_device_model() {
    let e = Env::new();
    e.json(&["add", "semantic", "lia", "--fact", "birthday=12 May", "--fact", "relation=sister"]);
    e.ok(&[
        "agents",
        "add",
        "Helper",
        "--model",
        "qwen2.5-coder-0.5b",
        "--tool",
        "recall",
        "--instructions",
        "Look things up with recall, then answer.",
    ]);
    let r = e.run(&["agents", "run", "Helper", "When", "is", "Lia's", "birthday?", "--max-steps", "2"]);
    assert!(r.stderr.starts_with("1. Helper thinks (on-device:qwen2.5-coder-0.5b-instruct-q4_k_m)"), "{}", r.stderr);
    assert!(
        r.stderr.lines().nth(1).is_some_and(|l| l.starts_with("2. Helper calls recall {\"query\":")),
        "{}",
        r.stderr
    );
    let runs = e.json(&["agents", "runs", "--agent", "helper"]);
    assert_eq!(runs.as_array().unwrap().len(), 1);
    let outcome = runs[0]["outcome"].as_str().unwrap();
    assert!(["answered", "step_limit"].contains(&outcome), "{runs}");
    assert_eq!(r.code, if outcome == "answered" { 0 } else { 1 }, "{}", r.stderr);
    let run = e.json(&["agents", "runs", runs[0]["id"].as_str().unwrap()]);
    assert_eq!(run["steps"][1]["step"]["kind"], "tool");
    assert!(run["steps"][1]["step"]["result"].as_str().unwrap().contains("lia: birthday: 12 May"), "{run}");
}

/// Any OpenAI client talks to an agent as `model: "agent:<name>"` (the official SDK against
/// `strata serve`, the agents' own model OpenAI's, replayed): the answer whole and streamed,
/// the agents listed as models, an unknown agent a 404.
#[test]
fn the_memory_proxy_serves_agents_to_the_official_openai_client() {
    let python = crate::servers::python();
    let e = triage_and_booker();
    let (upstream, seen) = loopback(replay);
    let env = [("OPENAI_API_KEY", "sk-test-0000"), ("OPENAI_BASE_URL", upstream.as_str())];
    let args = ["serve", "--port", "0", "--token", "local-secret", "--model", "smollm2-135m"];
    let (_server, url) = crate::servers::spawn_server_with(&e, &args, "memory proxy", &env);
    let script = &in_crate("tests/fixtures/openai_agent_client.py");
    let task = "Book my Porto trip for 3 June";
    let out = Command::new(&python).args([script, &url, "local-secret", "Triage", task]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["models"], serde_json::json!(["SmolLM2-135M-Instruct.Q4_1", "agent:Booker", "agent:Triage"]));
    assert_eq!(
        (v["answer"].as_str(), v["model"].as_str()),
        (Some("Booked: the Porto trip is on 3 June."), Some("agent:Booker"))
    );
    assert_eq!(v["finish"], "stop");
    assert_eq!(v["usage"], serde_json::json!([300, 30]));
    assert_eq!(v["streamed"], v["answer"]);
    assert_eq!(v["stream_usage"], v["usage"]);
    assert_eq!(v["unknown"], 404);
    assert!(v["unknown_message"].as_str().unwrap().contains("no agent is named 'Nobody'"), "{v}");
    // A follow-up: the agents read the conversation so far before the new task.
    assert_eq!(v["follow_up"], "Booked: the Porto trip is on 3 June.");
    let last: Value = serde_json::from_str(&seen.lock().unwrap().last().unwrap().1).unwrap();
    let said: Vec<(&str, &str)> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .take(4)
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        &said[1..],
        [
            ("user", "Book my Porto trip for 3 June"),
            ("assistant", "Booked: the Porto trip is on 3 June."),
            ("user", "Which day was that again?")
        ]
    );
    let runs = e.json(&["agents", "runs"]);
    assert_eq!(runs.as_array().unwrap().len(), 3, "the requests ran and were recorded: {runs}");
}

/// The official MCP client gives an agent a task with `ask_agent` (over stdio; the agents'
/// model OpenAI's, replayed), lists the agents, and is told in words of one that does not exist.
#[test]
fn an_mcp_client_asks_an_agent() {
    let e = triage_and_booker();
    let (upstream, _) = loopback(replay);
    let out = Command::new(crate::servers::python())
        .args([
            &in_crate("tests/fixtures/mcp_client.py"),
            "agents",
            env!("CARGO_BIN_EXE_strata"),
            e.db().to_str().unwrap(),
        ])
        .env("STRATA_SETTINGS", crate::test_settings())
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", &upstream)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tools"], serde_json::json!(["ask_agent", "list_agents"]));
    assert_eq!(v["listed"]["agents"][1]["name"], "Triage");
    assert_eq!(v["listed"]["agents"][1]["handoffs"], serde_json::json!(["Booker"]));
    let asked = &v["asked"]["value"];
    assert_eq!(v["asked"]["error"], false, "{v}");
    assert_eq!(
        (asked["answer"].as_str(), asked["agent"].as_str()),
        (Some("Booked: the Porto trip is on 3 June."), Some("Booker"))
    );
    assert_eq!(asked["outcome"], "answered");
    assert!(v["unknown"]["value"]["error"]["message"].as_str().unwrap().contains("no agent is named 'Nobody'"), "{v}");
    let runs = e.json(&["agents", "runs"]);
    assert_eq!(runs[0]["id"], asked["run"]);
}

/// The agents' task set end to end with a provider's model: `scripts/agents_replay.py` streams
/// OpenAI's tool calls as the API does (the routing a capable model makes, recorded; answers
/// from the first memory recall returned), and every call goes through the product's loop.
#[test]
fn the_agents_task_set_runs_end_to_end_over_openais_tool_call_streams() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tasks = root.join("crates/strata-bench/data/agents/tasks.json");
    let (_replay, port) = crate::servers::loopback_script("agents_replay.py", &["--tasks", tasks.to_str().unwrap()]);
    let out = crate::strata()
        .args(["bench", "agents", "--model", "openai:gpt-4o-mini", "--json"])
        .env("OPENAI_API_KEY", "sk-test-0000")
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["model"], "openai:gpt-4o-mini");
    let tasks = r["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 30);
    assert!(tasks.iter().all(|t| t["outcome"] == "answered"), "{r}");
    // Every handoff carried out and answered from the right memory: one call to hand on, one to
    // look up or keep, one to answer.
    assert_eq!(r["by_kind"]["handoff"], serde_json::json!([1.0, 3.0]), "{r}");
    // Of the single-tool tasks, one is answered from the misleading memory recall ranks first
    // (the registration written in a stored question): 19 of 20.
    assert_eq!(r["by_kind"]["single_tool"], serde_json::json!([0.95, 2.0]), "{r}");
    let missed: Vec<&str> = tasks.iter().filter(|t| t["success"] == false).map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(missed, ["s06"]);
}
