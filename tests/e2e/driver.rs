//! Xvfb and tauri-driver for the end-to-end tests and the desktop benchmark.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Xvfb and tauri-driver, stopped (gently: SIGTERM, so WebKitWebDriver goes too) on drop.
pub struct Driver {
    xvfb: Child,
    driver: Child,
    /// The WebDriver address.
    pub url: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Driver {
    /// On the database `db`, its settings file beside it.
    pub fn start(db: &Path) -> Driver {
        Driver::start_with(db, &[], false)
    }

    /// With more environment for the app, and with `keychain`, inside a D-Bus session of its
    /// own that holds an unlocked secret service (GNOME Keyring), so the app's keys go there.
    /// The settings file is kept beside the database.
    pub fn start_with(db: &Path, env: &[(&str, &str)], keychain: bool) -> Driver {
        // Xvfb picks a free display and writes its number on the descriptor we name.
        let mut xvfb = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1200x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is missing: run scripts/setup");
        let mut display = String::new();
        BufReader::new(xvfb.stdout.take().unwrap()).read_line(&mut display).unwrap();
        let display = format!(":{}", display.trim());
        let (port, native) = (free_port(), free_port());
        let driver_args = ["--port".to_string(), port.to_string(), "--native-port".to_string(), native.to_string()];
        let mut command = if keychain {
            let mut c = Command::new("dbus-run-session");
            c.args([
                "--",
                "sh",
                "-c",
                "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec \"$0\" \"$@\"",
            ]);
            c.arg(tauri_driver()).args(driver_args);
            c
        } else {
            let mut c = Command::new(tauri_driver());
            c.args(driver_args);
            c
        };
        if keychain {
            // The keyring's files go beside the test's database, never into the user's own
            // keyring, so a test that stops midway leaves no key behind for the next run.
            command.env("XDG_DATA_HOME", db.with_file_name("keyring-data"));
        }
        let settings = db.with_file_name("settings.json");
        // Unless the test wrote settings of its own, the chat does not read its conversations
        // for facts (which would call its model once more after each answer).
        if !settings.exists() {
            std::fs::write(&settings, r#"{"extraction": {"after_exchanges": false}}"#).unwrap();
        }
        command
            .env("DISPLAY", &display)
            .env("STRATA_DB", db)
            .env("STRATA_SETTINGS", settings)
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_COMPATIBLE_API_KEY")
            .envs(env.iter().copied())
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let driver = command.spawn().expect("tauri-driver is missing: run scripts/setup");
        let url = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(20), "tauri-driver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        Driver { xvfb, driver, url }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The driver's whole process group: tauri-driver, WebKitWebDriver, and with a
        // keychain the D-Bus session and its daemons.
        let _ = Command::new("kill").args(["-TERM", "--", &format!("-{}", self.driver.id())]).status();
        let _ = self.driver.wait();
        let _ = Command::new("kill").args(["-TERM", &self.xvfb.id().to_string()]).status();
        let _ = self.xvfb.wait();
    }
}

fn tauri_driver() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"));
    let installed = cargo_home.join("bin/tauri-driver");
    if installed.exists() { installed } else { PathBuf::from("tauri-driver") }
}
