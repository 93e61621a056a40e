//! The Agents screen as a person uses it: an empty screen says what agents are; an agent is
//! made through the form (OpenAI's tool calls replayed on loopback think for it); a task's
//! steps appear as they happen; a tool of the person's MCP server (the reference filesystem
//! server from npm) that asks first is asked about in the window, and runs once allowed; the
//! task is kept with its timeline; the agent is forgotten with its tasks. Settings → Your MCP
//! servers adds a server, sets its tools' policies and brings in Claude Desktop's.

use std::time::Duration;

use crate::providers::{KEY, openai_replying};
use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

/// OpenAI's stream of one call of `$name` with the arguments `$args` (JSON, escaped).
macro_rules! call {
    ($name:literal, $args:literal) => {
        concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"",
            $name,
            "\",\"arguments\":\"",
            $args,
            "\"}}]},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n"
        )
    };
}

/// OpenAI's stream of one answer.
macro_rules! answer {
    ($text:literal) => {
        concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"",
            $text,
            "\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        )
    };
}

/// The model: keeps the trip's date, then asks the server which folders it may read, then
/// answers.
fn reply(body: &str) -> &'static str {
    if body.contains("Which day was it again?") {
        answer!("The Porto trip is on 3 June.")
    } else if body.contains("Allowed directories") {
        answer!("Noted: the Porto trip is on 3 June, and I can read your trips folder.")
    } else if body.contains("kept as ") {
        call!("files__list_allowed_directories", "{}")
    } else {
        call!(
            "remember",
            "{\\\"about\\\": \\\"Porto trip\\\", \\\"fact\\\": \\\"date\\\", \\\"value\\\": \\\"3 June\\\"}"
        )
    }
}

/// The reference filesystem server's entry point (installed by `make setup`).
fn filesystem_server() -> String {
    let server =
        format!("{}/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", env!("CARGO_MANIFEST_DIR"));
    assert!(std::path::Path::new(&server).is_file(), "{server} is missing: run `make setup`");
    server
}

#[test]
fn an_agent_is_made_given_a_task_asks_before_a_tool_and_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let trips = dir.path().join("trips");
    std::fs::create_dir(&trips).unwrap();
    let server = filesystem_server();
    let config = dir.path().join("mcp.json");
    let servers = serde_json::json!({"mcpServers": {"files": {"command": "node", "args": [server, trips]}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let (url, seen) = openai_replying(Duration::ZERO, reply);
    let env =
        [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_API_KEY", KEY), ("STRATA_MCP_CONFIG", config.to_str().unwrap())];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    s.click(&s.find("#nav-agents"));
    let empty = s.text(&s.find("#agents-empty"));
    assert_eq!(empty, "No agents yet. Make one with New agent: a name, what it is for, and the tools it may use.");

    // The form: a name, what it is for, who thinks for it, and its tools (memory ones ticked).
    s.click(&s.find("#agent-new"));
    s.type_into(&s.find("#agent-name"), "Booker");
    s.type_into(&s.find("#agent-description"), "Books trips and remembers their dates");
    s.type_into(&s.find("#agent-model"), "openai:gpt-4o-mini");
    let tools = s.text(&s.find("#agent-form fieldset"));
    assert!(tools.contains("files__* Every tool of your MCP server files (as its policies allow)"), "{tools}");
    s.click(&s.find("#agent-tool-files__-"));
    s.click(&s.find("#agent-save"));
    let head = s.wait_for("the agent's page", |s| s.all(".agent-head").first().map(|e| s.text(e)));
    assert!(head.starts_with("Booker"), "{head}");
    assert!(head.contains("openai:gpt-4o-mini · recall, remember, files__*"), "{head}");
    assert_eq!(
        s.text(&s.find("#agent-runs, .agent-page .empty")),
        "No tasks yet. What you give Booker is kept here, step by step."
    );

    // A task: the steps show as they happen; the server's tool asks first, here.
    s.type_into(&s.find("#agent-task"), "Book my Porto trip for 3 June");
    s.click(&s.find("#agent-run"));
    let asked =
        s.wait_up_to(Duration::from_secs(60), "the question", |s| s.all("#agent-ask").first().map(|e| s.text(e)));
    assert!(
        asked.starts_with("Booker wants to use list_allowed_directories of your server files. Allow it?"),
        "{asked}"
    );
    let so_far = s.text(&s.find(".agent-run .timeline"));
    assert!(
        so_far.contains("Booker uses remember {\"about\":\"Porto trip\",\"fact\":\"date\",\"value\":\"3 June\"}"),
        "{so_far}"
    );
    screenshot(&s, "agents-ask");
    s.click(&s.find("#agent-ask-allow"));
    let answer = s.wait_up_to(Duration::from_secs(60), "the answer", |s| {
        s.all("#agent-chat .answered").first().map(|e| s.text(e))
    });
    assert_eq!(answer, "Booker: Noted: the Porto trip is on 3 June, and I can read your trips folder.");
    let steps = s.text(&s.find(".agent-run .timeline"));
    assert!(steps.contains("Booker uses files__list_allowed_directories → Allowed directories:"), "{steps}");
    assert!(steps.contains("Booker says: Noted: the Porto trip is on 3 June"), "{steps}");
    assert_eq!(seen.lock().unwrap().len(), 3, "three model calls");
    screenshot(&s, "agents");

    // The chat goes on: the next task is read after the first and its answer.
    s.type_into(&s.find("#agent-task"), "Which day was it again?");
    s.click(&s.find("#agent-run"));
    s.wait_up_to(Duration::from_secs(60), "the second answer", |s| s.all("#agent-chat li").get(1).map(|_| ()));
    assert_eq!(s.texts("#agent-chat .said"), ["Book my Porto trip for 3 June", "Which day was it again?"]);
    assert_eq!(
        s.texts("#agent-chat .answered"),
        [
            "Booker: Noted: the Porto trip is on 3 June, and I can read your trips folder.",
            "Booker: The Porto trip is on 3 June."
        ]
    );
    screenshot(&s, "agents-chat");
    let last = seen.lock().unwrap().last().unwrap().clone();
    let body = &last[last.find('{').unwrap()..];
    let sent: serde_json::Value = serde_json::from_str(body).unwrap();
    let roles: Vec<&str> = sent["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "the earlier exchange, then the new task");
    s.click(&s.find("#agent-new-chat"));
    assert!(s.all("#agent-chat").is_empty());

    // The tasks are kept; one opened shows its timeline.
    let kept = s.wait_for("the earlier tasks", |s| Some(s.texts("#agent-runs li button")).filter(|t| t.len() == 2));
    assert!(kept[0].starts_with("Which day was it again?"), "{kept:?}");
    assert!(kept[1].starts_with("Book my Porto trip for 3 June") && kept[1].contains("Answered"), "{kept:?}");
    s.click(&s.all("#agent-runs li button")[1]);
    let timeline = s.wait_for("the kept timeline", |s| s.all("#agent-runs .timeline").first().map(|e| s.text(e)));
    assert!(timeline.contains("Booker uses files__list_allowed_directories"), "{timeline}");

    // Counted in Analytics: the task, answered, with its two tool calls.
    s.click(&s.find("#nav-analytics"));
    let row = s.wait_up_to(Duration::from_secs(30), "the agents' table", |s| {
        Some(s.texts("#agents-table tbody tr:first-child td")).filter(|t| !t.is_empty())
    });
    assert_eq!(row, ["Booker", "2", "2", "2", "0", "0", "0"]);
    s.execute("document.getElementById('chart-agents').scrollIntoView()", serde_json::json!([]));
    screenshot(&s, "analytics-agents");

    // The fact it kept is a memory like any other, with the agent named.
    s.click(&s.find("#nav-memories"));
    s.type_into(&s.find("#search"), "Porto trip");
    let found = s.wait_for("the kept fact", |s| {
        let t = s.texts(".list li .title");
        t.iter().any(|x| x.contains("Porto trip")).then_some(t)
    });
    assert!(found.iter().any(|t| t.contains("Porto trip")), "{found:?}");

    // Forgotten, after a question: the agent and its task.
    s.click(&s.find("#nav-agents"));
    s.click(&s.find("#agent-Booker"));
    s.click(&s.find("#agent-forget"));
    let question = s.text(&s.find("#agent-forget-confirm"));
    assert!(question.starts_with("Forget Booker? Its definition, its earlier versions and every task"), "{question}");
    s.click(&s.find("#agent-forget-yes"));
    let said = s.wait_for("the forget", |s| s.all(".agents .notice").first().map(|e| s.text(e)));
    assert_eq!(said, "Forgot Booker, its earlier versions and 2 tasks it took part in.");
    s.wait_for("the empty list", |s| s.all("#agents-empty").first().map(|_| ()));
    s.end();
}

/// Settings → Your MCP servers: a server added by its command line, its tools listed with their
/// policies (one set to never, kept in `mcp.json`), Claude Desktop's servers brought in, one
/// removed.
#[test]
fn mcp_servers_are_added_in_settings_and_their_tools_given_a_policy() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let folder = dir.path().join("notes");
    std::fs::create_dir(&folder).unwrap();
    let server = filesystem_server();
    // Claude Desktop's settings, where this computer keeps them (its config folder).
    let config_home = dir.path().join("config");
    std::fs::create_dir_all(config_home.join("Claude")).unwrap();
    std::fs::write(
        config_home.join("Claude/claude_desktop_config.json"),
        r#"{"mcpServers": {"notion": {"url": "https://mcp.notion.com/mcp"}}}"#,
    )
    .unwrap();
    let config = dir.path().join("mcp.json");
    let env = [("STRATA_MCP_CONFIG", config.to_str().unwrap()), ("XDG_CONFIG_HOME", config_home.to_str().unwrap())];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    s.click(&s.find("#nav-settings"));
    assert_eq!(s.text(&s.find("#mcp-servers-empty")), "No servers yet.");
    s.type_into(&s.find("#mcp-server-name"), "files");
    s.type_into(&s.find("#mcp-server-reached"), &format!("node \"{server}\" \"{}\"", folder.display()));
    s.click(&s.find("#mcp-server-add"));
    let said = s.wait_for("the server added", |s| s.all("#mcp-servers-said").first().map(|e| s.text(e)));
    assert_eq!(said, "Added files. Its tools ask you each time an agent uses one, until you choose otherwise.");
    s.click(&s.find("#mcp-server-tools-files"));
    let tools =
        s.wait_up_to(Duration::from_secs(30), "its tools", |s| s.all("#mcp-tools-files").first().map(|e| s.text(e)));
    assert!(tools.contains("read_text_file (only reads)"), "{tools}");
    s.click(&s.find("select[aria-label='When an agent uses write_file'] option[value=never]"));
    s.wait_for("the policy kept", |s| {
        let _ = s;
        std::fs::read_to_string(&config).ok().filter(|t| t.contains("\"write_file\": \"never\""))
    });
    screenshot(&s, "settings-mcp-servers");

    s.click(&s.find("#mcp-servers-import"));
    let said = s.wait_for("the import", |s| {
        s.all("#mcp-servers-said").first().map(|e| s.text(e)).filter(|t| t.starts_with("From Claude Desktop"))
    });
    assert_eq!(said, "From Claude Desktop: added notion.");
    let names = s.texts(".mcp-server-list li .row b");
    assert_eq!(names, ["files", "notion"]);
    let kept = std::fs::read_to_string(&config).unwrap();
    assert!(kept.contains("\"notion\"") && kept.contains("\"command\": \"node\""), "{kept}");
    s.end();
}
