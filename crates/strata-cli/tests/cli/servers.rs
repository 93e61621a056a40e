//! The servers and clients the CLI tests run: `strata serve` / `strata mcp --http` as child
//! processes (killed when a test ends, however it ends), and the Python with the official
//! client SDKs.

use std::path::PathBuf;
use std::process::Stdio;

use crate::Env;

/// A server process that is killed when dropped: a test that fails midway leaves none behind.
pub(crate) struct Server(pub(crate) std::process::Child);

impl std::ops::Deref for Server {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `strata ARGS` on `e`'s database and waits for the line of stderr that contains
/// `banner` and the server's `http://` address; returns the server and that address. The rest
/// of its stderr is drained so it never blocks on a full pipe.
pub(crate) fn spawn_server(e: &Env, args: &[&str], banner: &str) -> (Server, String) {
    spawn_server_with(e, args, banner, &[])
}

/// [`spawn_server`] with these environment variables set.
pub(crate) fn spawn_server_with(e: &Env, args: &[&str], banner: &str, env: &[(&str, &str)]) -> (Server, String) {
    use std::io::BufRead;
    let mut server = Server(
        crate::strata()
            .args(args)
            .env("STRATA_DB", e.db())
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains(banner) {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server stopped: {line}");
    }
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap().to_string();
    std::thread::spawn(move || for _ in stderr.lines() {});
    (server, url)
}

/// The Python with the official client SDKs (set up by scripts/setup).
pub(crate) fn python() -> PathBuf {
    let python = std::env::var_os("STRATA_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"));
        cache.join("strata/pyenv/bin/python")
    });
    assert!(python.exists(), "{} is missing: run scripts/setup", python.display());
    python
}

/// One of `scripts/`' loopback servers (`agents_replay.py`, `embeddings_replay.py`) started on a
/// free port with `args`, once it listens: the server (stopped when dropped) and its port.
pub(crate) fn loopback_script(script: &str, args: &[&str]) -> (Server, u16) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Server(
        std::process::Command::new(python())
            .arg(root.join("scripts").join(script))
            .args(args)
            .args(["--port", &port.to_string()])
            .spawn()
            .unwrap(),
    );
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{script} did not listen");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (server, port)
}
