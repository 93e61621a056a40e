//! Issue 17's classes, through the real binary: paths that are not regular files, damaged and
//! read-only databases, a closed stderr, huge values, forgetting under a reader, and the memory
//! proxy's door (Host, Origin, content type, nonsense options, remote listening, a streaming
//! client that goes away).

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Env, Value, spawn_server};

/// Whether `needle` is anywhere in the bytes of `path`.
fn file_has(path: &Path, needle: &str) -> bool {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn export_writes_into_a_pipe_follows_a_link_and_refuses_a_folder() {
    let e = Env::new();
    e.ok(&["demo"]);
    let dir = e.dir.path();

    // A named pipe is written into, as `>` would, and stays a pipe.
    let fifo = dir.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let r = e.run(&["export", "--format", "backup", "-o", fifo.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let through = reader.join().unwrap();
    assert!(through.starts_with("{\"format\":\"strata-backup\""), "{}", &through[..80.min(through.len())]);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the pipe was replaced by a file");

    // A link is followed: the file it points to gets the export, the link stays a link, and
    // the file keeps its permissions.
    use std::os::unix::fs::PermissionsExt;
    let real = dir.join("real.json");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    e.ok(&["export", "-o", link.to_str().unwrap()]);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("Napoleon"));
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);

    // A folder is refused, and nothing is left beside it.
    let folder = dir.join("folder");
    std::fs::create_dir(&folder).unwrap();
    let err = e.err(&["export", "-o", folder.to_str().unwrap()]);
    assert!(err.contains("is a folder") && err.contains("nothing was written"), "{err}");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    let stray: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part"))
        .collect();
    assert!(stray.is_empty(), "temporary files left: {stray:?}");
}

#[test]
fn every_command_refuses_a_damaged_database_and_leaves_it_as_it_was() {
    let e = Env::new();
    e.ok(&["demo"]);
    for i in 0..300 {
        e.ok(&["add", "semantic", &format!("note-{i}"), "--fact", &format!("text=filler words number {i} ").repeat(8)]);
    }
    // Close cleanly (no WAL left), then damage a page header in the middle of the file.
    let db = e.db();
    e.ok(&["stats"]);
    let mut bytes = std::fs::read(&db).unwrap();
    let middle = bytes.len() / 8192 / 2 * 8192;
    bytes[middle..middle + 12].copy_from_slice(b"\x0d\xff\xff\xffgarbage!");
    std::fs::write(&db, &bytes).unwrap();
    for args in [
        vec!["list"],
        vec!["search", "Napoleon"],
        vec!["get", "napoleon"],
        vec!["export", "-o", "-"],
        vec!["add", "semantic", "new", "--fact", "a=b"],
        vec!["forget", "napoleon", "--yes"],
        vec!["stats"],
    ] {
        let err = e.err(&args);
        assert!(err.contains("is damaged") && err.contains("Restore your latest backup"), "{args:?}: {err}");
        assert_eq!(std::fs::read(&db).unwrap(), bytes, "{args:?} wrote into the damaged file");
    }
}

/// A copy of the binary that an unprivileged user can run (the build folder may be private).
fn reachable_binary(dir: &Path) -> std::path::PathBuf {
    let exe = dir.join("strata");
    std::fs::copy(env!("CARGO_BIN_EXE_strata"), &exe).unwrap();
    exe
}

/// Runs `strata ARGS` on `db` as a user without write permission where the test made things
/// read-only: as root (who may write anywhere) under an unprivileged uid with `setpriv`.
fn run_unprivileged(exe: &Path, db: &Path, args: &[&str]) -> (i32, String) {
    let root = running_as_root();
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let out = cmd.args(args).env("STRATA_DB", db).env("HOME", "/nonexistent").output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn running_as_root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

#[test]
fn a_read_only_database_or_folder_is_reported_as_such() {
    use std::os::unix::fs::PermissionsExt;
    let e = Env::new();
    let dir = e.dir.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("strata.db");
    e.run_with(&["demo"], &db, None);
    let exe = reachable_binary(e.dir.path());
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(e.dir.path(), 0o755);

    // The file is read-only (its folder is not).
    mode(&dir, 0o777);
    mode(&db, 0o444);
    let (code, err) = run_unprivileged(&exe, &db, &["list"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot be opened for writing: the file is read-only"), "{err}");
    assert!(!err.contains("not a Strata database"), "{err}");

    // The folder is read-only (SQLite could not create its journal beside the file).
    mode(&db, 0o666);
    mode(&dir, 0o555);
    let (code, err) = run_unprivileged(&exe, &db, &["list"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot be opened for writing: its folder") && err.contains("is read-only"), "{err}");
    mode(&dir, 0o755);
}

#[test]
fn a_closed_stderr_is_not_a_crash() {
    let e = Env::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = crate::strata()
        .args(["get", "nothing-here"])
        .env("STRATA_DB", e.db())
        .stdout(Stdio::null())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "an error with nowhere to print it still exits 1, not a panic (101)");
}

#[test]
fn a_memory_with_a_long_multi_line_value_shows_whole() {
    let e = Env::new();
    let value = format!("first line\n{}\nlast line", "x".repeat(100_000));
    e.json(&["add", "semantic", "long", "--fact", &format!("text={value}")]);
    let shown = e.ok(&["get", "long"]);
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines.iter().position(|l| l.trim_start().starts_with("text")).unwrap();
    assert!(lines[at].ends_with("  first line"), "{}", lines[at]);
    assert_eq!(lines[at + 1].trim(), "x".repeat(100_000));
    assert!(lines[at + 1].starts_with(' ') && lines[at + 2].trim() == "last line", "continuations are indented");
}

#[test]
fn an_unknown_provider_is_named_as_such() {
    let e = Env::new();
    let err = e.err(&["ask", "hello", "--provider", "bogus"]);
    assert!(err.contains("unknown provider 'bogus'"), "{err}");
}

/// Another process holds a read open while a memory is forgotten: the command says where the
/// text still is, and the scrub then completes by itself once that read ends — no further
/// command is run.
#[test]
fn forget_under_a_reader_says_where_the_text_is_and_finishes_by_itself() {
    let e = Env::new();
    e.ok(&["add", "semantic", "diary", "--fact", "entry=qzxmarmalade"]);
    e.ok(&["stats"]);
    let reader = rusqlite::Connection::open(e.db()).unwrap();
    reader.execute_batch("BEGIN; SELECT count(*) FROM events;").unwrap();
    let said = e.ok(&["forget", "diary", "--yes"]);
    assert!(said.contains("still in the database file and its write-ahead log"), "{said}");
    let wal = e.db().with_file_name("strata.db-wal");
    assert!(file_has(&e.db(), "qzxmarmalade") || file_has(&wal, "qzxmarmalade"), "the text is where it says");
    reader.execute_batch("COMMIT").unwrap();
    // The reader stays connected, only its read ended.
    let started = Instant::now();
    while file_has(&e.db(), "qzxmarmalade") || file_has(&wal, "qzxmarmalade") {
        assert!(started.elapsed() < Duration::from_secs(30), "the forgotten text is still in the files");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(reader);
}

/// A raw HTTP/1.1 request to `addr`; returns the status code and body.
fn http(addr: &str, head: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(s, "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://").trim_end_matches("/v1").to_string()
}

const QUESTION: &str = r#"{"model":"m","messages":[{"role":"user","content":"hello"}],"max_tokens":2}"#;

#[test]
fn the_proxy_answers_only_loopback_hosts_local_pages_and_json_bodies() {
    let e = Env::new();
    let (mut server, url) = spawn_server(&e, &["serve", "--port", "0"], "memory proxy");
    let addr = addr_of(&url);
    let post = |extra: &str, kind: &str, body: &str| {
        http(&addr, &format!("POST /v1/chat/completions HTTP/1.1\r\n{extra}Content-Type: {kind}"), body)
    };
    // A page's plain cross-site request (text/plain) is refused before it reaches the model.
    let (status, body) = post("Host: 127.0.0.1\r\n", "text/plain", QUESTION);
    assert_eq!(status, 415, "{body}");
    // DNS rebinding: the page's own name in Host.
    let (status, body) = post("Host: attacker.example:8088\r\n", "application/json", QUESTION);
    assert_eq!(status, 403, "{body}");
    let (status, _) = http(&addr, "GET /v1/models HTTP/1.1\r\nHost: attacker.example", "");
    assert_eq!(status, 403, "reading is refused too");
    // A foreign page, even addressed to loopback.
    let (status, body) = post("Host: localhost\r\nOrigin: https://attacker.example\r\n", "application/json", QUESTION);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("permission_error"), "OpenAI's error shape: {body}");
    // Nonsense options are refused, not ignored.
    for (bad, word) in [
        (r#""max_tokens":-1"#, "max_tokens"),
        (r#""max_tokens":0"#, "max_tokens"),
        (r#""max_completion_tokens":"lots""#, "max_completion_tokens"),
        (r#""n":2"#, "'n' must be 1"),
        (r#""stream":"yes""#, "stream"),
    ] {
        let req = format!(r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}}],{bad}}}"#);
        let (status, body) = post("Host: 127.0.0.1\r\n", "application/json", &req);
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains(word), "{bad}: {body}");
    }
    // A local page and a plain client are answered.
    let (status, body) =
        post("Host: localhost\r\nOrigin: http://localhost:5173\r\n", "application/json; charset=utf-8", QUESTION);
    assert_eq!(status, 200, "{body}");
    let _ = server.kill();
    let _ = server.wait();
    let episodes = e.json(&["list", "--type", "episodic"]);
    assert_eq!(episodes["items"].as_array().unwrap().len(), 1, "only the answered request was remembered");
}

#[test]
fn the_proxy_listens_beyond_loopback_only_when_allowed_and_then_with_a_token() {
    let e = Env::new();
    let err = e.err(&["serve", "--port", "0", "--host", "0.0.0.0"]);
    assert!(err.contains("not a loopback address") && err.contains("--allow-remote"), "{err}");

    let mut server = crate::strata()
        .args(["serve", "--port", "0", "--host", "0.0.0.0", "--allow-remote", "--allow-host", "strata.lan"])
        .env("STRATA_DB", e.db())
        .env_remove("STRATA_PROXY_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let (mut token, mut port) = (String::new(), String::new());
    let mut line = String::new();
    while port.is_empty() {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server stopped");
        if let Some(t) = line.split("Bearer ").nth(1) {
            token = t.trim().to_string();
        }
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            port = u.trim_end_matches("/v1").rsplit(':').next().unwrap().to_string();
        }
    }
    std::thread::spawn(move || for _ in stderr.lines() {});
    assert_eq!(token.len(), 64, "a token is made and printed: {token:?}");
    // Only over loopback here; the Host names what a remote client would use.
    let addr = format!("127.0.0.1:{port}");
    let models = |host: &str, auth: &str| http(&addr, &format!("GET /v1/models HTTP/1.1\r\nHost: {host}{auth}"), "").0;
    assert_eq!(models("strata.lan", ""), 401, "the token is required");
    assert_eq!(models("strata.lan", &format!("\r\nAuthorization: Bearer {token}")), 200);
    assert_eq!(models("other.lan", &format!("\r\nAuthorization: Bearer {token}")), 403, "unnamed hosts are refused");
    let _ = server.kill();
    let _ = server.wait();
}

/// An upstream model (an OpenAI-compatible server on loopback) that streams a token every
/// 20 ms for a minute when asked to "talk forever", and a short answer otherwise. It notes
/// how many pieces it got out before the reader went away.
fn endless_upstream() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let sent_before_hangup = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(usize::MAX));
    let note = sent_before_hangup.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let note = note.clone();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let (mut line, mut len) = (String::new(), 0usize);
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim() != "" {
                    if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                let forever = String::from_utf8_lossy(&body).contains("talk forever");
                let mut out = stream;
                let _ =
                    out.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
                let pieces = if forever { 3000 } else { 3 };
                for i in 0..pieces {
                    let chunk = format!(
                        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}\n\n"
                    );
                    if out.write_all(chunk.as_bytes()).and_then(|_| out.flush()).is_err() {
                        note.store(i, std::sync::atomic::Ordering::SeqCst);
                        return;
                    }
                    if forever {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                let _ = out.write_all(b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
            });
        }
    });
    (url, sent_before_hangup)
}

/// The official OpenAI client streams, reads a few chunks and closes the stream: the upstream
/// generation stops promptly (the proxy hangs up on it), the next request is answered at
/// once, and the answer nobody received is not remembered.
#[test]
fn a_streaming_client_that_goes_away_stops_the_answer_and_nothing_is_recorded() {
    let python = super::python();
    let (upstream, sent) = endless_upstream();
    let e = Env::new();
    let (mut server, url) = spawn_server(
        &e,
        &["serve", "--port", "0", "--provider", "openai-compatible", "--model", "m", "--base-url", &upstream],
        "memory proxy",
    );
    let script = super::in_crate("tests/fixtures/openai_disconnect.py");
    let out = Command::new(&python).args([script.as_str(), &url]).output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["read"], 3, "{v}");
    assert!(v["next_answer"].as_str().unwrap().contains("word0"), "{v}");
    let pieces = sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(pieces < 500, "the upstream was read for {pieces} pieces after the client left");
    assert!(v["next_seconds"].as_f64().unwrap() < 10.0, "the next request waited for the abandoned one: {v}");
    let episodes = e.json(&["list", "--type", "episodic"]);
    let items = episodes["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "only the received answer is remembered: {episodes}");
    assert!(!items[0]["body"]["query"].as_str().unwrap().contains("talk forever"));
}
