//! Chat with a provider chosen in the window (OpenAI, served by a loopback server replaying
//! its recorded stream), its key filed in the OS keychain from Settings: used for the call,
//! shown nowhere, kept out of the database and the settings file, and removable.

use std::io::{BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

const OPENAI_STREAM: &str = include_str!("../../crates/strata-providers/tests/fixtures/openai/stream_text.sse");
pub(crate) const KEY: &str = "sk-test-E2E-KEYCHAIN-4242";

/// A loopback OpenAI: every request gets the recorded stream; the requests (head and body)
/// are kept.
fn openai() -> (String, Arc<Mutex<Vec<String>>>) {
    openai_after(Duration::ZERO)
}

/// [`openai`], answering each request only after `delay` (a model that takes a while to start).
pub(crate) fn openai_after(delay: Duration) -> (String, Arc<Mutex<Vec<String>>>) {
    openai_replying(delay, |_| OPENAI_STREAM)
}

/// A loopback OpenAI answering each request (after `delay`) with the stream `reply` picks for
/// its body; the requests (head and body) are kept.
pub(crate) fn openai_replying(delay: Duration, reply: fn(&str) -> &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<String>>> = Default::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let (mut line, mut head, mut len) = (String::new(), String::new(), 0usize);
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim() != "" {
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                line.clear();
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let body = String::from_utf8_lossy(&body).to_string();
            let answer = reply(&body);
            head.push_str(&body);
            log.lock().unwrap().push(head);
            std::thread::sleep(delay);
            let mut out = stream;
            let _ = out.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                )
                .as_bytes(),
            );
        }
    });
    (url, seen)
}

fn key_status(s: &Session) -> String {
    s.text(&s.find("#provider-openai .key-status"))
}

#[test]
fn chat_with_a_provider_whose_key_is_in_the_os_keychain() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (url, seen) = openai();
    let driver = Driver::start_with(&db, &[("OPENAI_BASE_URL", &url)], true);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    // The key goes into the keychain from Settings.
    s.click(&s.find("#nav-settings"));
    assert_eq!(key_status(&s), "no key yet");
    s.type_into(&s.find("input[name=key-openai]"), KEY);
    s.click(&s.find("#provider-openai button[type=submit]"));
    s.wait_for("the key in the keychain", |s| (key_status(s) == "key in the OS keychain").then_some(()));
    assert_eq!(s.text(&s.find("#keys-notice")), "The OpenAI key is in the OS keychain.");
    assert!(s.all("input[name=key-openai]").iter().all(|e| s.text(e).is_empty()), "the field is emptied");

    // Chat picks OpenAI; the answer streams from the loopback server; the exchange is kept.
    s.click(&s.find("#nav-chat"));
    s.click(&s.find("#chat-provider option[value=openai]"));
    s.type_into(&s.find("#chat-model"), "gpt-4o-mini");
    s.type_into(&s.find("#chat-input"), "What colour is Pixel?");
    s.click(&s.find("#chat-send"));
    let why = s.wait_up_to(Duration::from_secs(60), "the answer", |s| {
        if let Some(e) = s.all(".turn .error").first() {
            panic!("the chat failed: {}", s.text(e));
        }
        s.all(".turn .why").first().map(|e| s.text(e))
    });
    assert_eq!(s.text(&s.find(".turn .answer")), "Pixel is a grey tabby.");
    assert!(why.contains("openai gpt-4o-mini") && why.contains("remembered"), "{why}");
    screenshot(&s, "chat-provider");
    let heads = seen.lock().unwrap().clone();
    assert_eq!(heads.len(), 1, "one call");
    assert!(heads[0].to_lowercase().contains(&format!("authorization: bearer {}", KEY.to_lowercase())), "{}", heads[0]);

    // The choice is remembered; the key is in neither the settings nor the database.
    let settings = s.wait_for("the choice saved", |_| {
        let text = std::fs::read_to_string(db.with_file_name("settings.json")).unwrap_or_default();
        (text.contains("\"openai\"") && text.contains("\"gpt-4o-mini\"")).then_some(text)
    });
    assert!(settings.contains("\"openai\"") && settings.contains("gpt-4o-mini"), "{settings}");
    for file in [db.clone(), db.with_file_name("settings.json"), db.with_extension("db-wal")] {
        if let Ok(bytes) = std::fs::read(&file) {
            assert!(!String::from_utf8_lossy(&bytes).contains(KEY), "the key leaked into {}", file.display());
        }
    }

    // Removed from the keychain: the next turn says what is missing, and nothing is called.
    s.click(&s.find("#nav-settings"));
    s.click(&s.find("#provider-openai .remove-key"));
    s.wait_for("the key gone", |s| (key_status(s) == "no key yet").then_some(()));
    s.click(&s.find("#nav-chat"));
    s.wait_for("the remembered choice, without a key", |s| {
        let chosen = s.execute(
            "const p = document.getElementById('chat-provider'); return p.options[p.selectedIndex].text",
            serde_json::json!([]),
        );
        (chosen == "openai (no key)").then_some(())
    });
    s.type_into(&s.find("#chat-input"), "And now?");
    s.click(&s.find("#chat-send"));
    let error = s.wait_for("the refusal", |s| s.all(".turn .error").first().map(|e| s.text(e)));
    assert!(error.contains("no key for openai"), "{error}");
    assert_eq!(seen.lock().unwrap().len(), 1, "nothing was sent without a key");
    s.end();
}

/// A loopback OpenAI that streams a word every 50 ms for a minute — an answer too long to wait
/// for. It notes how many words it got out before the caller hung up.
fn endless_openai() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = sent.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let (mut line, mut len) = (String::new(), 0usize);
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim() != "" {
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let mut out = stream;
            let _ = out.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
            for i in 0..1200 {
                let chunk = format!(
                    "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}\n\n"
                );
                if out.write_all(chunk.as_bytes()).and_then(|_| out.flush()).is_err() {
                    break;
                }
                count.store(i + 1, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    });
    (url, sent)
}

/// A long answer is stopped from the window: the words stop coming (the provider is hung up
/// on), the person is told, and the stopped exchange is not remembered.
#[test]
fn a_long_answer_can_be_stopped_and_is_not_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let before = strata_api::Engine::open(&db, strata_api::EngineOptions::default()).unwrap().stats().unwrap().memories;
    let (url, sent) = endless_openai();
    let driver = Driver::start_with(&db, &[("OPENAI_BASE_URL", &url), ("OPENAI_API_KEY", KEY)], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-chat"));
    s.click(&s.find("#chat-provider option[value=openai]"));
    s.type_into(&s.find("#chat-model"), "gpt-4o-mini");
    s.type_into(&s.find("#chat-input"), "Tell me everything about Napoleon.");
    s.click(&s.find("#chat-send"));
    s.wait_for("the answer to start", |s| s.text(&s.find(".turn .answer")).contains("word3").then_some(()));
    s.click(&s.find("#chat-stop"));
    let note = s.wait_for("the stop", |s| s.all(".turn .stopped").first().map(|e| s.text(e)));
    assert_eq!(note, "You stopped this answer, so it was not remembered.");
    let at_stop = sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(at_stop < 1200, "the whole answer was read");
    std::thread::sleep(Duration::from_millis(500));
    let later = sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(later <= at_stop + 2, "the provider was still read after Stop ({at_stop} → {later} words)");
    let answer = s.text(&s.find(".turn .answer"));
    assert!(answer.starts_with("word0 word1 word2 word3"), "what came before Stop stays on screen: {answer}");
    assert!(!s.text(&s.find(".turn .why")).contains("remembered"));
    assert!(s.all("#chat-send").len() == 1, "the window is ready for the next question");
    screenshot(&s, "chat-stopped");
    s.end();
    drop(driver);
    let after = strata_api::Engine::open(&db, strata_api::EngineOptions::default()).unwrap().stats().unwrap().memories;
    assert_eq!(after, before, "the stopped exchange was not remembered");
}
