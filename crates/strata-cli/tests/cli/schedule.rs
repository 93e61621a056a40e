//! `strata train schedule`: the settings in words, a look that flags and waits for enough
//! approved facts, then one that trains on the real model, gates the adapter against retrieval
//! and asks the curator, who says yes; the record of every look, in words and JSON.

use crate::Env;

#[test]
fn a_scheduled_look_flags_waits_trains_gates_and_asks_and_every_step_is_recorded() {
    let e = Env::new();
    let add = |key: &str, facts: &[&str]| {
        let mut args = vec!["add", "semantic", key, "--importance", "0.9", "--tier", "long"];
        for f in facts {
            args.extend(["--fact", f]);
        }
        e.json(&args)["id"].as_str().unwrap().to_string()
    };
    let maya = add("maya_chen", &["dog's name=Biscuit", "home town=Porto"]);
    let tom = add("tom_okafor", &["cat's name=Pixel", "employer=Larkspur Labs"]);
    for _ in 0..3 {
        e.ok(&["recall", "Maya Chen dog home town"]);
        e.ok(&["recall", "Tom Okafor cat employer"]);
    }
    let later = "2026-03-01T12:00:00Z";
    let at = |args: &[&str]| {
        let r = e.run_at(args, &e.db(), None, later);
        assert_eq!(r.code, 0, "strata {args:?}: {}", r.stderr);
        r.stdout
    };

    assert!(at(&["train", "schedule"]).starts_with("Off: nothing is taught unless you press Teach."));
    let said = at(&["train", "schedule", "--when", "nightly", "--at", "02:30", "--min-facts", "5"]);
    assert_eq!(
        said.trim(),
        "Each night at 02:30, when at least 5 approved facts are new, it teaches them and asks you before using a new adapter."
    );
    assert!(e.err(&["train", "schedule", "--at", "half past two"]).contains("HH:MM"));
    assert!(e.err(&["train", "schedule", "--when", "weekly"]).contains("use off, nightly or idle"));

    // A look flags both; none is approved yet, then four of the five facts it needs.
    assert_eq!(at(&["train", "schedule", "--now"]).trim(), "Nothing taught: 0 new approved facts, fewer than 5.");
    at(&["train", "approve", &maya]);
    at(&["train", "approve", &tom]);
    assert_eq!(at(&["train", "schedule", "--now"]).trim(), "Nothing taught: 4 new approved facts, fewer than 5.");

    // Four are enough now: it trains on the real model (a short run keeps the suite quick) and
    // gates the adapter; with "ask", one better than retrieval waits for the curator.
    at(&["train", "schedule", "--min-facts", "4"]);
    let quick = ["--model", "smollm2-135m", "--epochs", "4", "--replay", "0", "--min-recall", "0", "--margin", "5"];
    let looked = at(&[&["train", "schedule", "--now"][..], &quick[..]].concat());
    let history: serde_json::Value = serde_json::from_str(&at(&["train", "schedule", "--json"])).unwrap();
    let entries = history["history"].as_array().unwrap();
    let kinds: Vec<&str> = entries.iter().rev().map(|x| x["kind"].as_str().unwrap()).collect();
    let trained = entries.iter().find(|x| x["kind"] == "trained").expect("it trained");
    let id = trained["adapter"].as_str().unwrap().to_string();
    let (recall, retrieval) =
        (trained_number(&trained["said"], "right with it"), trained_number(&trained["said"], "by looking them up"));
    assert!(trained["said"].as_str().unwrap().starts_with(&format!("Taught 4 facts to {id} in ")), "{trained}");
    if recall > retrieval {
        assert_eq!(looked.trim(), format!("Trained {id}: it did better and waits for your yes."));
        assert_eq!(kinds[kinds.len() - 3..], ["looked", "trained", "awaiting_approval"]);
        assert_eq!(history["awaiting"]["id"], id.as_str());
        let shown = at(&["train", "schedule"]);
        assert!(shown.contains(&format!("Adapter {id} waits for your yes")), "{shown}");
        assert!(at(&["train", "schedule", "--approve", &id]).contains("is in use"));
        assert_eq!(e.json(&["train", "list"])[0]["status"], "active");
        assert!(e.err(&["train", "schedule", "--approve", &id]).contains("not waiting for your approval"));
    } else {
        // Retrieval did as well: the adapter is kept out, and the record says why.
        assert!(looked.contains(&format!("Trained {id}, not used: retrieval alone answered as many")), "{looked}");
        assert_eq!(kinds[kinds.len() - 3..], ["looked", "trained", "kept"]);
    }
    let words = at(&["train", "schedule", "--history"]);
    assert!(
        words.contains("Looked: 2 newly flagged, 0 approved, 0 facts not yet taught (it teaches from 5)."),
        "{words}"
    );
    assert!(words.contains("Waited: 4 new approved facts, fewer than the 5 it needs."), "{words}");
    assert!(words.contains(&format!("Taught 4 facts to {id} in ")), "{words}");
}

/// A share the history's sentence says (`…: 75% right with it, 50% by looking them up…`).
fn trained_number(said: &serde_json::Value, after: &str) -> f64 {
    let s = said.as_str().unwrap();
    let end = s.find(after).unwrap();
    let start = s[..end].trim_end().rfind(' ').unwrap() + 1;
    s[start..end].trim().trim_end_matches('%').parse::<f64>().unwrap()
}
