//! The theme: dark on request, in every control's colours, and kept when the app opens again.

use serde_json::{Value, json};

use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

/// The computed background and text colours of the first element matching each selector.
const COLOURS: &str = "return arguments[0].map(css => { const e = document.querySelector(css); \
                       if (!e) return null; const c = getComputedStyle(e); return [c.backgroundColor, c.color]; });";

/// Relative luminance (0 black … 1 white) of a CSS `rgb(r, g, b)` or `rgba(…)` colour.
fn luminance(css: &str) -> f64 {
    let parts: Vec<f64> = css
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    assert!(parts.len() >= 3, "not a colour: {css}");
    (0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]) / 255.0
}

/// Asserts that the page, the search box, the type and tier filters and a memory's row are
/// dark, their words light.
fn assert_dark(s: &Session) {
    let places = ["body", "#search", "#filter-type", "#filter-tier", "#filter-origin", ".list li"];
    let colours = s.execute(COLOURS, json!([places]));
    for (place, c) in places.iter().zip(colours.as_array().expect("a list of colours")) {
        let c: Vec<&str> =
            c.as_array().unwrap_or_else(|| panic!("{place} is missing")).iter().filter_map(Value::as_str).collect();
        let (background, text) = (c[0], c[1]);
        // A row has no background of its own: the page's shows through.
        if background != "rgba(0, 0, 0, 0)" {
            assert!(luminance(background) < 0.2, "{place}: background {background} is not dark");
        }
        assert!(luminance(text) > 0.7, "{place}: text {text} is not light");
    }
}

#[test]
fn the_dark_theme_reaches_every_control_and_is_kept_on_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    // The webview keeps its local storage (where the theme lives) under XDG_DATA_HOME: a
    // folder of this test's own, so that the theme chosen here reaches no other test.
    let data = dir.path().join("webview-data");
    let driver = Driver::start_with(&db, &[("XDG_DATA_HOME", data.to_str().unwrap())], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.wait_for("the list", |s| Some(s.texts(".list li .title")).filter(|t| t.len() == 8));
    assert_eq!(s.text(&s.find("#theme")), "Dark theme");
    let page = s.execute(COLOURS, json!([["body"]]));
    assert!(luminance(page[0][0].as_str().unwrap()) > 0.8, "the light theme first: {page}");

    s.click(&s.find("#theme"));
    s.wait_for("the dark theme", |s| (s.text(&s.find("#theme")) == "Light theme").then_some(()));
    assert_dark(&s);
    screenshot(&s, "dark-theme");
    s.end();

    // The app again, as after closing it: still dark.
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.wait_for("the list", |s| Some(s.texts(".list li .title")).filter(|t| t.len() == 8));
    assert_eq!(s.text(&s.find("#theme")), "Light theme");
    assert_dark(&s);
    s.end();
}
