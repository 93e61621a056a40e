//! A small W3C WebDriver client over HTTP (blocking), enough to drive the app through
//! `tauri-driver` and WebKitWebDriver: sessions, elements, keys, clicks, dialogs, screenshots.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A WebDriver session on one app window.
pub struct Session {
    http: reqwest::blocking::Client,
    base: String,
}

/// An element of the page.
#[derive(Clone)]
pub struct Element(String);

impl Session {
    /// Starts the app at `application` through the driver at `driver` (e.g. http://127.0.0.1:4444).
    pub fn start(driver: &str, application: &str) -> Session {
        let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        let caps = json!({"capabilities": {"alwaysMatch": {"tauri:options": {"application": application}}}});
        // tauri-driver listens before its WebKitWebDriver does: a first request may find the
        // connection dropped; it is tried again for a while.
        // Starting the app answers the request: on a loaded machine (the suite's other windows,
        // a large file being kept) that took over a minute once, so it is given three.
        let starting = reqwest::blocking::Client::builder().timeout(Duration::from_secs(180)).build().unwrap();
        let start = Instant::now();
        let v: Value = loop {
            match starting.post(format!("{driver}/session")).json(&caps).send().and_then(|r| r.json()) {
                Ok(v) => break v,
                Err(e) if !e.is_timeout() && start.elapsed() < Duration::from_secs(30) => {
                    std::thread::sleep(Duration::from_millis(500))
                }
                Err(e) => panic!("no WebDriver session: {e}"),
            }
        };
        let id = v["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {v}")).to_string();
        Session { http, base: format!("{driver}/session/{id}") }
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let v: Value = req.send().unwrap().json().unwrap();
        v["value"].clone()
    }

    fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body))
    }

    fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None)
    }

    /// The elements matching a CSS selector, now.
    pub fn all(&self, css: &str) -> Vec<Element> {
        let v = self.post("/elements", json!({"using": "css selector", "value": css}));
        v.as_array()
            .map(|a| a.iter().filter_map(|e| e[ELEMENT].as_str()).map(|s| Element(s.to_string())).collect())
            .unwrap_or_default()
    }

    /// Waits up to 10 s for `check` to hold, polling; panics with `what` otherwise.
    pub fn wait_for<T>(&self, what: &str, check: impl FnMut(&Session) -> Option<T>) -> T {
        self.wait_up_to(Duration::from_secs(10), what, check)
    }

    /// [`Session::wait_for`] with a limit of its own (a model answering takes longer).
    pub fn wait_up_to<T>(&self, limit: Duration, what: &str, mut check: impl FnMut(&Session) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = check(self) {
                return v;
            }
            assert!(start.elapsed() < limit, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The first element matching `css`, waiting for it to appear.
    pub fn find(&self, css: &str) -> Element {
        self.wait_for(css, |s| s.all(css).into_iter().next())
    }

    /// The text of every element matching `css`.
    pub fn texts(&self, css: &str) -> Vec<String> {
        self.all(css).iter().map(|e| self.text(e)).collect()
    }

    /// An element's text (its `textContent`: WebKitWebDriver under Xvfb reports elements in
    /// the rendered page as not displayed, so their "visible text" comes back empty).
    pub fn text(&self, e: &Element) -> String {
        self.get(&format!("/element/{}/property/textContent", e.0)).as_str().unwrap_or_default().to_string()
    }

    /// Clicks an element.
    pub fn click(&self, e: &Element) {
        self.post(&format!("/element/{}/click", e.0), json!({}));
    }

    /// Types into an element.
    pub fn type_into(&self, e: &Element, text: &str) {
        self.post(&format!("/element/{}/value", e.0), json!({"text": text}));
    }

    /// Empties an input the way a person does (select all, delete), so the page sees input
    /// events (WebDriver's own "clear" does not reach React's change handler).
    pub fn clear(&self, e: &Element) {
        self.type_into(e, "\u{E009}a\u{E000}\u{E003}");
    }

    /// Runs a script in the page (its `arguments` are `args`) and returns what it returns.
    pub fn execute(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args}))
    }

    /// Runs a script that calls its last argument with its result (the desktop benchmark's).
    #[allow(dead_code)]
    pub fn execute_async(&self, script: &str, args: Value) -> Value {
        self.post("/execute/async", json!({"script": script, "args": args}))
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.get("/screenshot");
        decode_base64(b64.as_str().unwrap_or_default())
    }

    /// Ends the session (the app closes).
    pub fn end(self) {
        let _ = self.http.delete(&self.base).send();
    }
}

fn decode_base64(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}
