//! End-to-end tests of the desktop app: the real app binary in the real WebKit webview,
//! driven over WebDriver (`tauri-driver` in front of WebKitGTK's `WebKitWebDriver`) under
//! Xvfb, on a database of its own. Each screen's screenshot is saved under the test's temp
//! folder, or into `STRATA_SCREENSHOTS` (e.g. `docs/screenshots`) when set.

mod agents;
mod analytics;
mod chat;
mod concepts;
mod datasets;
mod detail;
mod driver;
mod facts;
mod history;
mod jobs;
mod models;
mod plugins;
mod providers;
mod schedule;
mod team;
mod theme;
mod training;
mod webdriver;

use std::path::{Path, PathBuf};
use std::time::Duration;

use driver::Driver;

use strata_api::{Engine, EngineOptions, Target};
use webdriver::Session;

fn screenshot(s: &Session, name: &str) {
    let dir = std::env::var_os("STRATA_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    // What the DOM says is painted two frames later: WebKit captures the last painted frame
    // (a screenshot right after a wait showed the screen as it was before the change).
    s.execute_async(
        "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
        serde_json::json!([]),
    );
    let png = s.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// A database with the example memories.
fn seeded(dir: &Path) -> PathBuf {
    let db = dir.join("strata.db");
    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    e.demo().unwrap();
    db
}

/// An adapter registered as trained from `target` (its files a folder under `dir`): what
/// `strata train run` leaves, without the minutes of training, which forgetting does not need.
fn adapter_from(db: &Path, dir: &Path, target: &str) -> (String, PathBuf) {
    let mut e = Engine::open(db, EngineOptions::default()).unwrap();
    let source = e.memory(&Target::new(target)).unwrap().id.to_string();
    let id = e.new_adapter_id();
    let path = dir.join(&id);
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("adapter_model.safetensors"), b"weights").unwrap();
    e.register_adapter(strata_core::NewAdapter {
        id: id.clone(),
        base_model: "SmolLM2-135M-Instruct".into(),
        base_hash: "0".repeat(64),
        dataset_hash: "0".repeat(64),
        sources: vec![source],
        hyperparameters: serde_json::json!({}),
        path: path.clone(),
        bytes: 7,
        trained: serde_json::json!({}),
    })
    .unwrap();
    (id, path)
}

#[test]
fn search_open_and_forget_a_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (adapter, adapter_files) = adapter_from(&db, dir.path(), "napoleon_bonaparte");
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    // The newest memories, before any search.
    let rows = s.wait_for("the list", |s| {
        Some(s.texts(".list li .title")).filter(|t| t.len() == 8 && t.iter().all(|x| !x.is_empty()))
    });
    assert!(rows.iter().any(|t| t.starts_with("Napoleon bonaparte")), "{rows:?}");
    screenshot(&s, "memories");

    // Filters narrow the list.
    s.click(&s.find("#filter-type option[value=procedural]"));
    let procedures = s.wait_for("procedures only", |s| {
        let k = s.texts(".list li .kind");
        (k.len() == 2 && k.iter().all(|x| x == "Procedure")).then_some(k)
    });
    assert_eq!(procedures.len(), 2);
    s.click(&s.find("#filter-type option[value='']"));
    s.wait_for("every type again", |s| (s.all(".list li").len() == 8).then_some(()));

    // The dark theme: the filters in its colours (they were near-white on white), and the
    // choice kept for the next start.
    s.click(&s.find("#theme"));
    let look = s.execute(
        "const f = getComputedStyle(document.getElementById('filter-type')); \
         return [document.documentElement.dataset.theme, f.backgroundColor, f.color, localStorage.getItem('strata.theme')]",
        serde_json::json!([]),
    );
    assert_eq!(look, serde_json::json!(["dark", "rgb(28, 32, 39)", "rgb(230, 233, 239)", "dark"]));
    s.click(&s.find("#theme"));
    let light = s.execute("return localStorage.getItem('strata.theme')", serde_json::json!([]));
    assert_eq!(light, "light");

    // Search as you type.
    let search = s.find("#search");
    s.type_into(&search, "Napoleon Corsica");
    let found = s.wait_for("search results", |s| {
        let t = s.texts(".list li .title");
        (t.len() < 8 && !t.is_empty() && t.iter().all(|x| !x.is_empty())).then_some(t)
    });
    assert!(found[0].starts_with("Napoleon bonaparte"), "the concept ranks first: {found:?}");
    assert!(s.text(&s.find(".meta")).contains("found"));
    // Its recall is counted in the file within seconds, while the app runs: a kill keeps it,
    // and the Training criteria ("recalled at least N times") see it at once.
    let recalled = s.wait_up_to(Duration::from_secs(8), "the recall count on disk", |_| {
        let e = Engine::open(&db, EngineOptions::default()).unwrap();
        Some(e.memory(&Target::new("napoleon_bonaparte")).unwrap().access_count).filter(|n| *n > 0)
    });
    assert!(recalled >= 1);

    // A word half typed finds what it begins, and only that; the count says how many matched
    // and how many there are in all.
    let shown = |s: &Session| s.execute("return document.getElementById('meta').dataset.query", serde_json::json!([]));
    s.clear(&search);
    s.type_into(&search, "napo");
    let meta = s.wait_for("the prefix search", |s| (shown(s) == "napo").then(|| s.text(&s.find("#meta"))));
    let found = s.texts(".list li .title");
    assert!(!found.is_empty() && found.iter().all(|t| t.contains("Napoleon")), "{found:?}");
    assert_eq!(meta, format!("{} found · 8 memories in all", found.len()));
    s.clear(&search);
    s.type_into(&search, "Napoleon Corsica");
    s.wait_for("the search again", |s| (shown(s) == "Napoleon Corsica").then_some(()));
    // Settled (recorded as a recall) before the forget below, which erases it: on a busy
    // machine the second it takes to settle could otherwise end after the forget, recording
    // what the list shows then.
    std::thread::sleep(Duration::from_millis(1500));

    // Its details and history.
    s.click(&s.all(".list li")[0]);
    let detail = s.text(&s.find("#detail"));
    assert!(detail.contains("Corsica") && detail.contains("History"), "{detail}");
    // Keys and values in words, not code: a list reads as a list.
    assert_eq!(s.texts("#detail .facts th"), ["Birth", "Death", "Achievements"]);
    assert_eq!(s.text(&s.find("#from")), "Strata's examples", "where it came from, in words");
    assert!(detail.contains("Napoleonic Code, Military conquests") && !detail.contains('['), "{detail}");
    let why = s.text(&s.find("#why"));
    assert!(why.contains("keywords #1") && why.contains("recency"), "the last search's score breakdown: {why}");
    let before = s.wait_for("the history's events", |s| Some(s.all(".timeline li").len()).filter(|n| *n > 0));
    screenshot(&s, "memory-detail");

    // Pin it and move it to long-term: each change shows in its history.
    s.click(&s.find("#pinned"));
    s.wait_for("the pin in the history", |s| Some(s.texts(".timeline li")).filter(|h| h.len() == before + 1));
    s.click(&s.find("#tier option[value=long]"));
    let history =
        s.wait_for("the tier move in the history", |s| Some(s.texts(".timeline li")).filter(|h| h.len() == before + 2));
    assert!(history.last().unwrap().contains("long"), "{history:?}");
    // Another memory and back: the detail and the row show the new state, as the store has it.
    s.click(&s.all(".list li")[1]);
    s.wait_for("the other memory", |s| {
        (!s.text(&s.find("#detail h2")).starts_with("Napoleon bonaparte")).then_some(())
    });
    s.click(&s.all(".list li")[0]);
    s.wait_for("the pinned memory again", |s| {
        s.text(&s.find("#detail h2")).starts_with("Napoleon bonaparte").then_some(())
    });
    let state = s.execute(
        "return [document.getElementById('pinned').checked, document.getElementById('tier').value]",
        serde_json::json!([]),
    );
    assert_eq!(state, serde_json::json!([true, "long"]), "pinned and long-term, as saved");

    // Forget: the app's own confirmation says it is permanent; Keep it changes nothing.
    s.click(&s.find("#forget"));
    let question = s.text(&s.find("#forget-dialog"));
    assert!(question.starts_with("Forget “Napoleon bonaparte") && question.contains("cannot be undone"), "{question}");
    screenshot(&s, "forget");
    s.click(&s.find("#forget-cancel"));
    assert!(s.all("#forget-dialog").is_empty(), "kept: the dialog closes");
    assert!(s.text(&s.find("#detail h2")).starts_with("Napoleon bonaparte"), "kept: still there");
    s.click(&s.find("#forget"));
    s.click(&s.find("#forget-confirm"));
    // Afterwards it says what was erased.
    let said = s.wait_for("what was forgotten", |s| s.all("#forgotten").first().map(|e| s.text(e)));
    assert!(
        said.starts_with("Forgot “Napoleon bonaparte") && said.contains("erased from search, from its history ("),
        "{said}"
    );
    assert!(
        said.contains(
            "The on-device model no longer uses what it learned from it: 1 trained adapter was retired and deleted."
        ),
        "{said}"
    );
    s.wait_for("the memory to leave the results", |s| {
        (!s.texts(".list li .title").iter().any(|t| t.starts_with("Napoleon bonaparte"))).then_some(())
    });
    s.clear(&search);
    let rows = s.wait_for("the full list", |s| {
        Some(s.texts(".list li .title")).filter(|t| t.len() == 7 && t.iter().all(|x| !x.is_empty()))
    });
    assert!(!rows.iter().any(|t| t.starts_with("Napoleon bonaparte")));
    // A search the person settles on is a recall Analytics counts (forgetting Napoleon erased
    // the recalls that named him).
    s.type_into(&search, "weekly review");
    s.wait_for("the search", |s| (shown(s) == "weekly review").then_some(()));
    std::thread::sleep(Duration::from_millis(1500));
    s.click(&s.find("#nav-analytics"));
    let recalls = s.wait_for("the cards", |s| s.all("#card-recalls").first().map(|e| s.text(e)));
    assert!(recalls.starts_with("1 recall100% found something"), "{recalls}");
    s.end();
    drop(driver);

    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    let err = e.get(&Target::new("napoleon_bonaparte"), None).unwrap_err();
    assert_eq!(err.code, strata_api::ErrorCode::NotFound);
    assert_eq!(e.adapter(&adapter).unwrap().status, strata_core::AdapterStatus::Retired);
    assert!(!adapter_files.exists(), "the adapter's files are deleted");
}

/// A new store explains itself in plain words and loads examples with one click; a list among
/// them is edited as words ("a, b") and stays a list.
#[test]
fn an_empty_store_explains_itself_and_loads_examples() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    let first = s.text(&s.find("#first-steps"));
    for words in ["three kinds of things", "Facts", "Episodes", "Procedures", "short-term", "long-term", "pinned"] {
        assert!(first.contains(words), "{words}: {first}");
    }
    // The count arrives a moment after the list.
    let meta = s.wait_for("the count", |s| Some(s.text(&s.find("#meta"))).filter(|t| !t.is_empty()));
    assert_eq!(meta, "0 memories");
    screenshot(&s, "first-steps");
    s.click(&s.find("#load-examples"));
    let rows = s.wait_for("the examples", |s| Some(s.texts(".list li .kind")).filter(|k| k.len() == 8));
    assert!(rows.iter().all(|k| ["Fact", "Episode", "Procedure"].contains(&k.as_str())), "one vocabulary: {rows:?}");
    assert_eq!(s.text(&s.find("#meta")), "8 memories");
    assert!(s.all("#first-steps").is_empty());

    // The list of achievements is edited as words and saved unchanged: nothing is written.
    let napoleon = s.all(".list li").into_iter().find(|r| s.text(r).contains("Napoleon bonaparte")).unwrap();
    s.click(&napoleon);
    let events = s.wait_for("the history", |s| Some(s.all(".timeline li").len()).filter(|n| *n > 0));
    s.click(&s.find("#edit"));
    let values: Vec<String> = (0..3)
        .map(|i| {
            let v = s.execute(
                &format!("return document.querySelector('input[name=fact-value-{i}]').value"),
                serde_json::json!([]),
            );
            v.as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(values[2], "Napoleonic Code, Military conquests", "{values:?}");
    // The names read as on its page ("Achievements", not "achievements"), and are saved under
    // the keys they had (checked below).
    let names = s.execute(
        "return [...document.querySelectorAll('input[name^=fact-name-]')].map(e => e.value)",
        serde_json::json!([]),
    );
    assert_eq!(names, serde_json::json!(["Birth", "Death", "Achievements"]));
    assert!(s.text(&s.find("#new-memory")).contains("a list: separate items with commas"));
    s.type_into(&s.find("input[name=fact-value-2]"), ", Legion of Honour");
    s.click(&s.find("#save"));
    let detail =
        s.wait_for("the saved list", |s| Some(s.text(&s.find("#detail"))).filter(|t| t.contains("Legion of Honour")));
    assert!(
        detail.contains("Napoleonic Code, Military conquests, Legion of Honour") && !detail.contains('['),
        "{detail}"
    );
    // The history reloads after the save: one change more, once it has.
    let after =
        s.wait_for("the history with one change more", |s| Some(s.all(".timeline li").len()).filter(|n| *n > events));
    assert_eq!(after, events + 1, "one change");
    s.end();
    drop(driver);
    let e = Engine::open(&db, EngineOptions::default()).unwrap();
    let m = e.memory(&Target::new("napoleon_bonaparte")).unwrap();
    let strata_core::Content::Semantic(c) = &m.content else { panic!() };
    assert_eq!(
        serde_json::to_value(&c.facts["achievements"]).unwrap(),
        serde_json::json!(["Napoleonic Code", "Military conquests", "Legion of Honour"]),
        "still a list"
    );
}

/// Several memories chosen in the list are tagged, moved and forgotten at once.
#[test]
fn many_memories_are_tagged_moved_and_forgotten_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#filter-type option[value=episodic]"));
    s.wait_for("the episodes", |s| (s.all(".list li").len() == 3).then_some(()));
    for pick in s.all(".list li .pick") {
        s.click(&pick);
    }
    assert_eq!(s.text(&s.find("#selection strong")), "3 memories chosen");
    screenshot(&s, "selection");
    assert!(s.all("#detail").is_empty(), "ticking a row does not open it");

    s.type_into(&s.find("#selection-tag"), "travel");
    s.click(&s.find("#selection-add-tag"));
    let said = s.wait_for("the tags", |s| s.all("#forgotten").first().map(|e| s.text(e)));
    assert_eq!(said, "Tagged 3 memories “travel”.");
    assert!(s.all("#selection").is_empty(), "the choice is cleared after acting");

    for pick in s.all(".list li .pick").into_iter().take(2) {
        s.click(&pick);
    }
    s.click(&s.find("#selection-tier option[value=long]"));
    s.wait_for("the move", |s| {
        s.all("#forgotten").first().map(|e| s.text(e)).filter(|t| t == "Moved 2 memories to long-term.")
    });

    for pick in s.all(".list li .pick").into_iter().take(2) {
        s.click(&pick);
    }
    s.click(&s.find("#selection-forget"));
    assert_eq!(s.text(&s.find("#forget-title")), "Forget 2 memories?");
    s.click(&s.find("#forget-confirm"));
    let said = s
        .wait_for("the forget", |s| s.all("#forgotten").first().map(|e| s.text(e)).filter(|t| t.starts_with("Forgot")));
    assert!(said.starts_with("Forgot 2 memories: their words are erased from search"), "{said}");
    s.wait_for("one episode left", |s| (s.all(".list li").len() == 1).then_some(()));
    s.end();
    drop(driver);

    let e = Engine::open(&db, EngineOptions::default()).unwrap();
    let left = e
        .all_memories(strata_core::Filter { kinds: vec![strata_core::MemoryKind::Episodic], ..Default::default() })
        .unwrap();
    assert_eq!(left.len(), 1);
    assert!(left[0].tags.contains("travel"), "{:?}", left[0].tags);
}

#[test]
fn create_a_memory_of_each_type_through_the_forms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.find("#first-steps"); // a new database says what to do first

    // A fact, with a missing value first: a clear sentence, nothing written.
    s.click(&s.find("#new"));
    s.type_into(&s.find("input[name=key]"), "pixel");
    s.type_into(&s.find("input[name=fact-name-0]"), "colour");
    s.click(&s.find("#save"));
    let problem = s.text(&s.find("#new-memory .error"));
    assert!(
        problem.contains("does not make sense") || problem.contains("empty") || problem.contains("fact"),
        "{problem}"
    );
    s.type_into(&s.find("input[name=fact-value-0]"), "ginger");
    s.click(&s.find("#add-fact"));
    s.type_into(&s.find("input[name=fact-name-1]"), "age");
    s.type_into(&s.find("input[name=fact-value-1]"), "3");
    s.type_into(&s.find("input[name=tags]"), "pets");
    screenshot(&s, "new-memory");
    s.click(&s.find("#save"));
    let detail = s.wait_for("the new fact", |s| Some(s.text(&s.find("#detail"))).filter(|t| t.contains("ginger")));
    assert!(detail.contains("pets"), "{detail}");
    assert_eq!(s.text(&s.find("#importance")), "Normal (0.5)");
    assert_eq!(s.text(&s.find("#from")), "You, in this app");

    // Edit it: the change shows, and its history grows.
    s.wait_for("its history", |s| (s.all(".timeline li").len() == 1).then_some(()));
    s.click(&s.find("#edit"));
    // Editing keeps the type: its choice is not offered (choosing another led nowhere).
    let kinds = s.execute(
        "return getComputedStyle(document.querySelector('#new-memory .kinds')).display",
        serde_json::json!([]),
    );
    assert_eq!(kinds, "none", "the type choice is hidden while editing");
    let colour = s.find("input[name=fact-value-0]");
    s.clear(&colour);
    s.type_into(&colour, "tabby");
    // A fact can be removed, and importance is chosen in words.
    s.click(&s.find("button[name=remove-fact-1]"));
    s.click(&s.find("select[name=importance] option[value='0.75']"));
    s.click(&s.find("#save"));
    s.wait_for("the edited fact", |s| Some(s.text(&s.find("#detail"))).filter(|t| t.contains("tabby")));
    assert_eq!(s.texts("#detail .facts th"), ["Colour"], "the removed fact is gone");
    assert_eq!(s.text(&s.find("#importance")), "High (0.75)");
    // One event for the content, one for the importance.
    let history = s.wait_for("a longer history", |s| Some(s.texts(".timeline li")).filter(|h| h.len() == 3));
    assert!(history.iter().any(|h| h.contains("changed colour: “ginger” → “tabby”; removed age (3)")), "{history:?}");
    assert!(history.iter().any(|h| h.contains("importance") && h.contains("0.75")), "{history:?}");
    screenshot(&s, "memory-edited");

    // An episode.
    s.click(&s.find("#new"));
    s.click(&s.find("input[value=episodic]"));
    s.type_into(&s.find("input[name=speaker]"), "Ana");
    s.type_into(&s.find("textarea[name=text]"), "We adopted Pixel from the shelter in Porto");
    s.type_into(&s.find("input[name=when]"), "yesterday");
    s.click(&s.find("#save"));
    s.wait_for("the new episode", |s| Some(s.text(&s.find("#detail"))).filter(|t| t.contains("shelter in Porto")));
    // On screen it happened yesterday (dates as this computer writes them: en-US, UTC here).
    let when = s.execute(
        "return [...document.querySelectorAll('#detail .facts tr')]\
         .find(r => r.querySelector('th')?.textContent === 'When')?.querySelector('td')?.textContent",
        serde_json::json!([]),
    );
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).format("%-m/%-d/%Y,").to_string();
    assert!(when.as_str().is_some_and(|w| w.starts_with(&yesterday)), "{when} is not {yesterday}");

    // A procedure.
    s.click(&s.find("#new"));
    s.click(&s.find("input[value=procedural]"));
    s.type_into(&s.find("input[name=name]"), "feed pixel");
    // Enter between the steps, as a person types them (WebKitWebDriver drops a bare "\n").
    s.type_into(&s.find("textarea[name=steps]"), "half a pouch\u{E007}fresh water");
    s.type_into(&s.find("input[name=context]"), "after her afternoon nap");
    s.click(&s.find("#save"));
    let steps = s.wait_for("the new procedure's steps", |s| Some(s.texts("#steps li")).filter(|t| t.len() == 2));
    assert_eq!(steps, ["half a pouch", "fresh water"]);
    assert_eq!(s.text(&s.find("#applies")), "When it applies: after her afternoon nap");

    // All three are in the list, and search finds them.
    s.wait_for("three memories", |s| Some(()).filter(|_| s.all(".list li").len() == 3));
    s.type_into(&s.find("#search"), "shelter");
    let found = s.wait_for("the episode by search", |s| {
        let t = s.texts(".list li .title");
        (t.first().is_some_and(|x| x.contains("shelter"))).then_some(t)
    });
    assert!(found[0].starts_with("Ana:"), "{found:?}");
    s.end();
    drop(driver);

    let e = Engine::open(&db, EngineOptions::default()).unwrap();
    assert_eq!(e.stats().unwrap().memories, 3, "exactly the three saved; the refused form wrote nothing");
    let episode = e
        .all_memories(strata_core::Filter { kinds: vec![strata_core::MemoryKind::Episodic], ..Default::default() })
        .unwrap();
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).date_naive();
    assert_eq!(episode[0].occurred_at().date_naive(), yesterday, "'yesterday' as the episode's time");
}

/// The readable export (the memories document) keeps what a person set — tags, a tier, a pin —
/// and a store that imports the file has them again.
#[test]
fn the_readable_export_keeps_tags_tiers_and_pins() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let napoleon = Target::new("napoleon_bonaparte");
    {
        let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
        e.tag(&napoleon, &["history".into(), "france".into()]).unwrap();
        e.set_tier(&napoleon, strata_core::Tier::Long, "kept for good").unwrap();
        e.pin(&napoleon, true).unwrap();
    }
    // The file the Save dialog would return (a native dialog cannot be driven over WebDriver).
    let file = dir.path().join("memories.json");
    let driver = Driver::start_with(&db, &[("STRATA_SAVE_AS", file.to_str().unwrap())], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.wait_for("the list", |s| Some(s.texts(".list li .title")).filter(|t| t.len() == 8));
    s.click(&s.find(".export summary"));
    s.click(&s.find("#export-format option[value=seed]"));
    s.click(&s.find("#export"));
    let notice =
        s.wait_for("the export", |s| s.all("#notice").first().map(|e| s.text(e)).filter(|t| t.starts_with("Exported")));
    assert_eq!(notice, format!("Exported 8 memories to {}.", file.display()));
    s.end();
    drop(driver);

    // Readable: the memory's tags, tier and pin are in the file as words.
    let text = std::fs::read_to_string(&file).unwrap();
    let packed: String = text.split_whitespace().collect();
    for words in ["\"history\"", "\"france\"", "\"tier\":\"long\"", "\"pinned\":true"] {
        assert!(packed.contains(words), "{words} is not in the export:\n{text}");
    }
    // A new store that imports it has them again.
    let mut fresh = Engine::open(&dir.path().join("fresh.db"), EngineOptions::default()).unwrap();
    let mut input = std::io::BufReader::new(std::fs::File::open(&file).unwrap());
    fresh.import("memories.json", &mut input, None).unwrap();
    let m = fresh.memory(&napoleon).unwrap();
    assert!(m.tags.contains("france") && m.tags.contains("history"), "{:?}", m.tags);
    assert_eq!(m.tier, strata_core::Tier::Long);
    assert!(m.pinned);
    assert_eq!(fresh.stats().unwrap().memories, 8);
}

#[test]
fn import_a_seed_file_and_refuse_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    let bad = dir.path().join("broken.json");
    std::fs::write(&bad, "{\"semantic_memory\": {\"concepts\": {\"x\": [1, 2,").unwrap();
    // Read when the test runs, not baked in at compile time (a shared build cache can hold a
    // binary compiled in another checkout).
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    let seed = format!("{root}/crates/strata-core/tests/fixtures/seed-002.json");
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.find(".list .empty");

    s.type_into(&s.find("#import"), &seed);
    let notice = s.wait_for("the import", |s| Some(s.text(&s.find("#notice"))).filter(|t| t.starts_with("Imported")));
    assert!(notice.contains("seed-002.json"), "{notice}");
    let count = s.wait_for("the imported memories", |s| Some(s.all(".list li").len()).filter(|n| *n > 0));

    s.type_into(&s.find("#import"), bad.to_str().unwrap());
    let error = s.wait_for("the refusal", |s| s.all(".list .error").first().map(|e| s.text(e)));
    assert_eq!(
        error,
        "broken.json:1: the file ends in the middle of an entry (something is cut off, or a closing } or ] is missing); nothing was imported"
    );
    screenshot(&s, "bad-import");
    assert_eq!(s.all(".list li").len(), count, "the bad file changed nothing");

    // The same memories again, one of them changed: the window says which is already there
    // and imports again merging them, or skipping them.
    let notes = dir.path().join("notes.json");
    std::fs::write(
        &notes,
        "{\"semantic\": {\n  \"napoleon_bonaparte\": {\"height\": \"1.69 m\"},\n  \"theory_of_relativity\": {\"year\": \"1915\"},\n  \"ada_lovelace\": {\"born\": \"1815\"}}}",
    )
    .unwrap();
    let import_notes = |button: &str| {
        s.type_into(&s.find("#import"), notes.to_str().unwrap());
        let error = s.wait_for("the duplicate", |s| {
            s.all("#transfer-error").first().map(|e| s.text(e)).filter(|t| t.contains("already in your memories"))
        });
        assert!(
            error.starts_with("\u{201c}napoleon_bonaparte\u{201d} is already in your memories (line 2 of notes.json)"),
            "{error}"
        );
        screenshot(&s, "import-duplicate");
        s.click(&s.find(button));
        s.wait_for("the summary", |s| {
            s.all("#notice").first().map(|e| s.text(e)).filter(|t| t.starts_with("Imported notes.json"))
        })
    };
    assert_eq!(import_notes("#import-merge"), "Imported notes.json: 1 added, 1 merged, 1 already there.");
    screenshot(&s, "import-merged");
    assert_eq!(import_notes("#import-skip"), "Imported notes.json: 0 added, 3 skipped (already there).");
    s.end();
    drop(driver);

    let e = Engine::open(&db, EngineOptions::default()).unwrap();
    assert_eq!(e.stats().unwrap().memories as usize, count + 1);
    let napoleon = e.memory(&strata_api::Target::new("napoleon_bonaparte")).unwrap();
    assert!(serde_json::to_string(&napoleon.content).unwrap().contains("1.69 m"), "merged");
}

#[test]
fn chat_with_the_on_device_model_shows_the_memories_used_and_remembers() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-chat"));
    s.type_into(&s.find("#chat-input"), "What is my favourite drink?");
    s.click(&s.find("#chat-send"));
    // Until its first word (the model loads on the first question: a second or more), the
    // answer says it is thinking.
    let thinking = s.wait_for("the thinking state", |s| s.all(".turn .answer.thinking").first().map(|e| s.text(e)));
    assert_eq!(thinking, "Thinking…");
    let why = s.wait_up_to(Duration::from_secs(120), "the answer", |s| {
        if let Some(e) = s.all(".turn .error").first() {
            panic!("the chat failed: {}", s.text(e));
        }
        s.all(".turn .why").first().map(|e| s.text(e))
    });
    assert!(why.contains("User preferences"), "the preferences were put in the prompt: {why}");
    assert!(why.contains("remembered") && why.contains("tokens"), "{why}");
    let answer = s.text(&s.find(".turn .answer"));
    assert!(!answer.trim().is_empty(), "an answer streamed in");
    screenshot(&s, "chat");

    // The exchange is a memory now.
    s.click(&s.find("#nav-memories"));
    let rows = s.wait_for("the recorded exchange", |s| {
        let t = s.texts(".list li .title");
        t.iter().any(|x| x.contains("favourite drink")).then_some(t)
    });
    assert_eq!(rows.len(), 9, "{rows:?}");
    s.end();
}

#[test]
fn settings_switch_the_mcp_server_on_and_off() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-settings"));
    assert_eq!(s.text(&s.find("#database")), db.display().to_string());

    let port = s.find(".settings .port");
    s.clear(&port);
    s.type_into(&port, "0"); // any free port
    s.click(&s.find("#mcp-on"));
    let url = s.text(&s.find("#mcp-url"));
    // The token is masked until asked for, in the configuration too.
    let masked = s.text(&s.find("#mcp-token"));
    assert!(masked.starts_with("••••••••••••") && masked.chars().count() == 16, "{masked}");
    s.click(&s.find("#mcp-reveal"));
    let token = s.text(&s.find("#mcp-token"));
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    assert_eq!(token.len(), 64, "{token}");
    assert!(token.ends_with(&masked.chars().skip(12).collect::<String>()), "{masked} / {token}");
    assert!(s.text(&s.find("#mcp-config")).contains(&token), "shown, the configuration holds it");
    s.click(&s.find("#mcp-reveal"));
    assert!(!s.text(&s.find("#mcp-config")).contains(&token), "hidden again, in the configuration too");
    // Copy says what it did, while the token stays hidden.
    s.click(&s.find("#mcp-copy"));
    let said = s.wait_for("the copy's message", |s| s.all("#mcp-copied").first().map(|e| s.text(e)));
    assert_eq!(said, "Token copied.");
    assert!(s.text(&s.find("#mcp-token")).starts_with("••••"), "still hidden");
    screenshot(&s, "settings");

    let http = reqwest::blocking::Client::new();
    let hello = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}});
    let post = |auth: Option<&str>| {
        let mut r = http.post(&url).header("Accept", "application/json, text/event-stream").json(&hello);
        if let Some(t) = auth {
            r = r.bearer_auth(t);
        }
        r.send().map(|r| r.status().as_u16())
    };
    assert_eq!(post(None).unwrap(), 401, "no token, no memory");
    assert_eq!(post(Some(&token)).unwrap(), 200, "the token opens a session");

    s.click(&s.find("#mcp-on"));
    s.wait_for("the server to stop", |s| s.all("#mcp-url").is_empty().then_some(()));
    assert!(post(Some(&token)).is_err(), "switched off: nothing listens");
    s.end();
}
