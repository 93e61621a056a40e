//! Strata as a client of real MCP servers from npm (installed by `make setup` from the
//! repository's package.json): the reference filesystem server over stdio, the "everything"
//! server over streamable HTTP; servers that cannot start said in words; a call stopped.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use strata_mcp_client::{Connection, McpConfig, Server};

/// An npm package's entry point under the repository's node_modules (present after setup).
fn npm_server(package: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(path.is_file(), "{} is missing: run `make setup` (npm install)", path.display());
    path.display().to_string()
}

fn stdio(program: &str, args: &[&str]) -> Server {
    Server {
        command: Some(program.to_string()),
        args: args.iter().map(|a| a.to_string()).collect(),
        ..Server::default()
    }
}

#[test]
fn the_filesystem_server_over_stdio_lists_its_tools_reads_and_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "Lia's birthday is on 12 May.\n").unwrap();
    let server = stdio("node", &[&npm_server("server-filesystem"), root.to_str().unwrap()]);
    let conn = Connection::start("files", &server).unwrap();
    assert!(conn.server.starts_with("secure-filesystem-server "), "{}", conn.server);
    let names: Vec<&str> = conn.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"read_text_file") && names.contains(&"write_file"), "{names:?}");
    let read = conn.tools.iter().find(|t| t.name == "read_text_file").unwrap();
    assert!(read.read_only, "the server marks it read-only");
    assert_eq!(read.input_schema["properties"]["path"]["type"], "string");
    let never = AtomicBool::new(false);
    let file = root.join("notes.txt");
    let got = conn.call("read_text_file", &json!({"path": file}), Duration::from_secs(20), &never).unwrap();
    assert_eq!((got.text.as_str(), got.failed), ("Lia's birthday is on 12 May.\n", false));
    // Outside its folder: the server's own refusal, a failed result (not a broken connection).
    let outside =
        conn.call("read_text_file", &json!({"path": "/etc/passwd"}), Duration::from_secs(20), &never).unwrap();
    assert!(outside.failed && outside.text.contains("Access denied"), "{outside:?}");
    // Arguments that are not an object never reach the server.
    let bad = conn.call("read_text_file", &json!(["x"]), Duration::from_secs(20), &never).unwrap_err();
    assert!(bad.to_string().contains("a tool's arguments are an object"), "{bad}");
    // The connection still serves after both.
    let listed = conn.call("list_allowed_directories", &json!({}), Duration::from_secs(20), &never).unwrap();
    assert!(listed.text.contains(root.to_str().unwrap()), "{listed:?}");
}

#[test]
fn the_everything_server_over_streamable_http_echoes_and_a_long_call_is_stopped() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _server = Stopped(
        std::process::Command::new("node")
            .args([npm_server("server-everything").as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "the everything server did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    let server = Server {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: [("X-Strata-Test".to_string(), "yes".to_string())].into(),
        ..Server::default()
    };
    {
        let conn = Connection::start("everything", &server).unwrap();
        let never = AtomicBool::new(false);
        let echoed = conn.call("echo", &json!({"message": "hello"}), Duration::from_secs(20), &never).unwrap();
        assert_eq!((echoed.text.as_str(), echoed.failed), ("Echo: hello", false));
        // A call of ten seconds, stopped after half a second: said at once, and the
        // connection serves the next call.
        let stop = AtomicBool::new(false);
        let began = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(500));
                stop.store(true, Ordering::Relaxed);
            });
            let long = json!({"duration": 10, "steps": 2});
            let err = conn.call("trigger-long-running-operation", &long, Duration::from_secs(30), &stop).unwrap_err();
            assert!(err.to_string().contains("was stopped by you"), "{err}");
        });
        assert!(began.elapsed() < Duration::from_secs(3), "stopped in {:?}", began.elapsed());
        let again = conn.call("echo", &json!({"message": "still here"}), Duration::from_secs(20), &never).unwrap();
        assert_eq!(again.text, "Echo: still here");
        // A time limit is a result in words.
        let late = conn
            .call("trigger-long-running-operation", &json!({"duration": 5, "steps": 1}), Duration::from_secs(1), &never)
            .unwrap_err();
        assert!(late.to_string().contains("took longer than 1 seconds"), "{late}");
    }
}

/// A server process, stopped when the test ends (passed or not).
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn servers_that_cannot_serve_are_said_in_words() {
    let missing = Connection::start("ghost", &stdio("strata-no-such-program", &[])).err().unwrap().to_string();
    assert!(missing.starts_with("cannot start ghost (strata-no-such-program): "), "{missing}");
    let broken = stdio("sh", &["-c", "echo 'cannot open the database' >&2; exit 3"]);
    let said = Connection::start("broken", &broken).err().unwrap().to_string();
    assert!(said.starts_with("broken did not answer as an MCP server"), "{said}");
    assert!(said.contains("it said: cannot open the database"), "{said}");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let away = Server { url: Some(format!("http://127.0.0.1:{port}/mcp")), ..Server::default() };
    let said = Connection::start("away", &away).err().unwrap().to_string();
    assert!(said.starts_with("away did not answer as an MCP server"), "{said}");
    let sse = Server { url: Some("http://127.0.0.1:1/sse".into()), kind: Some("sse".into()), ..Server::default() };
    assert!(Connection::start("old", &sse).err().unwrap().to_string().contains("old SSE transport"));
    let unset = Server {
        url: Some("http://127.0.0.1:1/mcp".into()),
        headers: [("Authorization".to_string(), "Bearer ${env:STRATA_TEST_UNSET_KEY}".to_string())].into(),
        ..Server::default()
    };
    let said = Connection::start("keyed", &unset).err().unwrap().to_string();
    assert!(said.contains("the environment variable STRATA_TEST_UNSET_KEY is not set"), "{said}");
}

#[test]
fn claude_desktop_and_cursor_files_are_read_in_their_shape_and_policies_kept_in_strata() {
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &claude,
        r#"{"preferences": {"x": 1}, "mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ana"],
                           "env": {"APPDATA": "C:\\Users\\ana"}},
            "linear": {"url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${env:LINEAR}"}, "type": "http"}}}"#,
    )
    .unwrap();
    let theirs = McpConfig::read_foreign(&claude).unwrap();
    assert_eq!(theirs.servers["filesystem"].args.last().unwrap(), "/home/ana");
    assert!(theirs.servers["linear"].is_http());
    let path = dir.path().join("strata/mcp.json");
    let mut mine = McpConfig::load_from(&path).unwrap();
    mine.servers.insert("filesystem".into(), stdio("node", &["server.js"]));
    let (added, kept) = mine.merge(theirs);
    assert_eq!((added, kept), (vec!["linear".to_string()], vec!["filesystem".to_string()]));
    mine.servers.get_mut("linear").unwrap().tools.insert("create_issue".into(), strata_mcp_client::Policy::Never);
    mine.save_to(&path).unwrap();
    let back = McpConfig::load_from(&path).unwrap();
    assert_eq!(back, mine);
    assert_eq!(back.servers["linear"].policy("create_issue"), strata_mcp_client::Policy::Never);
    assert_eq!(
        back.servers["linear"].policy("search"),
        strata_mcp_client::Policy::Ask,
        "unnamed tools are asked about"
    );
    // The file keeps the shape other programs read.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"mcpServers\"") && text.contains("\"command\": \"node\""), "{text}");
    // A damaged file is named, and left as it is.
    std::fs::write(&path, "{\"mcpServers\": {").unwrap();
    let err = McpConfig::load_from(&path).unwrap_err().to_string();
    assert!(err.contains("mcp.json is damaged (line 1"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mcpServers\": {");
    // A file of neither shape says so.
    std::fs::write(&claude, "{\"servers_list\": []}").unwrap();
    assert!(McpConfig::read_foreign(&claude).unwrap_err().to_string().contains("has no mcpServers"));
}
