//! A team's database chosen in Settings (a real PostgreSQL, the test server of strata-core's
//! tests): a wrong password is refused in words and changes nothing; the right one moves the
//! window to the team's memories, files the password in the OS keychain (never in the settings
//! file) and says where the memories are, its analytics included; and back to this computer's
//! file.

use std::path::Path;

use strata_api::{AddRequest, Engine, EngineOptions};

use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

#[path = "../../crates/strata-core/tests/it/server.rs"]
#[allow(dead_code)]
mod server;

fn where_(s: &Session) -> String {
    s.text(&s.find("#where"))
}

#[test]
fn the_window_moves_to_a_teams_database_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let url = server::fresh_database();
    {
        let mut team = Engine::open(Path::new(&url), EngineOptions::default()).unwrap();
        let standup = strata_core::Content::Semantic(strata_core::Concept {
            key: "standup".into(),
            facts: [("time".to_string(), strata_core::FactValue::Text("9:30 every weekday".into()))]
                .into_iter()
                .collect(),
        });
        team.add(AddRequest::new(standup)).unwrap();
    }
    let shown = url.replace(&format!(":{}@", server::PASSWORD), "@");
    let driver = Driver::start_with(&db, &[], true);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.wait_for("where the memories are", |s| (where_(s) == "On this computer").then_some(()));

    s.click(&s.find("#nav-settings"));
    let now = s.wait_for("the store's place", |s| {
        s.all("#store-now").first().map(|e| s.text(e)).filter(|t| t.starts_with("On "))
    });
    assert!(now.starts_with("On this computer: ") && now.ends_with("strata.db"), "{now}");
    s.type_into(&s.find("input[name=team-url]"), &shown);
    s.type_into(&s.find("input[name=team-password]"), "not-the-password");
    s.click(&s.find("#team-connect"));
    let refused = s.wait_for("the refusal", |s| s.all("#store-error").first().map(|e| s.text(e)));
    assert!(refused.contains("refused the login") && !refused.contains("not-the-password"), "{refused}");
    assert_eq!(where_(&s), "On this computer", "nothing changed");

    s.clear(&s.find("input[name=team-password]"));
    s.type_into(&s.find("input[name=team-password]"), server::PASSWORD);
    s.click(&s.find("#team-connect"));
    let notice = s.wait_for("the switch", |s| {
        if let Some(e) = s.all("#store-error").first().filter(|e| s.text(e) != refused) {
            panic!("the switch failed: {}", s.text(e));
        }
        s.all("#store-notice").first().map(|e| s.text(e))
    });
    assert_eq!(notice, "The window now shows your team's memories. The password is kept in your OS keychain.");
    assert_eq!(where_(&s), "Team memory");
    assert_eq!(s.text(&s.find("#store-now")), format!("On your team's database: {shown}"));
    screenshot(&s, "settings-team-database");
    let settings = std::fs::read_to_string(db.with_file_name("settings.json")).unwrap();
    assert!(settings.contains(&shown) && !settings.contains(server::PASSWORD), "{settings}");

    // The memories are the team's.
    s.click(&s.find("#nav-memories"));
    let titles = s.wait_for("the team's memories", |s| Some(s.texts(".list li .title")).filter(|t| !t.is_empty()));
    assert_eq!(titles, ["Standup: time 9:30 every weekday"], "{titles:?}");
    // Analytics reads the team's database too.
    s.click(&s.find("#nav-analytics"));
    let held = s.wait_for("the cards", |s| s.all("#card-memories").first().map(|e| s.text(e)));
    assert!(held.starts_with("1 memory0 expired"), "{held}");
    screenshot(&s, "analytics-team-database");

    // And back to this computer's file, with its own memories.
    s.click(&s.find("#nav-settings"));
    s.click(&s.find("#use-this-computer"));
    s.wait_for("the file again", |s| (where_(s) == "On this computer").then_some(()));
    let settings = std::fs::read_to_string(db.with_file_name("settings.json")).unwrap();
    assert!(!settings.contains(&shown), "the team's address is no longer chosen: {settings}");
    s.click(&s.find("#nav-memories"));
    let titles = s.wait_for("the file's memories", |s| Some(s.texts(".list li .title")).filter(|t| t.len() > 1));
    assert!(titles.iter().any(|t| t.contains("Napoleon")), "{titles:?}");
    s.end();
}
