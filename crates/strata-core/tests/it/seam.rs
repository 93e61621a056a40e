//! The storage seam holds: SQL and each driver live in their engine (`strata-core`'s
//! `src/sqlite/` with rusqlite, `src/postgres/` with the postgres crate) and nowhere else in
//! the product. Tests and benchmarks may still open a file
//! with rusqlite as another process would (to damage it or read its bytes).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every hand-written source file of the product: each crate's `src/` and the desktop app's.
fn product_sources() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs = vec![root.join("src-tauri")];
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        dirs.push(krate.unwrap().path().join("src"));
    }
    let mut files = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        rust_files(dir, &mut files);
    }
    files
}

/// Whether `text` names the crate `driver` (`driver::…` not preceded by a path or a word:
/// `crate::postgres::` is our module, not the crate).
fn names_crate(text: &str, driver: &str) -> bool {
    text.match_indices(&format!("{driver}::")).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        !before.is_some_and(|c| c == ':' || c == '_' || c.is_alphanumeric())
    })
}

/// The product's files outside `engine` that name the crate `driver`.
fn named_outside(engine: &str, driver: &str) -> Vec<String> {
    let root = workspace();
    let engine = root.join(engine);
    let files = product_sources();
    assert!(files.len() > 100, "the product's sources were found: {}", files.len());
    assert!(files.iter().any(|f| f.starts_with(&engine)), "the engine's files are among them");
    files
        .iter()
        .filter(|f| !f.starts_with(&engine))
        .filter(|f| names_crate(&std::fs::read_to_string(f).unwrap(), driver))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect()
}

#[test]
fn rusqlite_is_used_only_inside_the_sqlite_engine() {
    let outside = named_outside("crates/strata-core/src/sqlite", "rusqlite");
    assert!(outside.is_empty(), "rusqlite named outside crates/strata-core/src/sqlite: {outside:?}");
}

#[test]
fn the_postgres_driver_is_used_only_inside_the_postgres_engine() {
    let outside = named_outside("crates/strata-core/src/postgres", "postgres");
    assert!(outside.is_empty(), "the postgres crate named outside crates/strata-core/src/postgres: {outside:?}");
}

#[test]
fn only_the_core_depends_on_rusqlite() {
    let root = workspace();
    let mut manifests = vec![root.join("Cargo.toml")];
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        manifests.push(krate.unwrap().path().join("Cargo.toml"));
    }
    manifests.push(root.join("src-tauri/Cargo.toml"));
    let mut depending = Vec::new();
    for manifest in manifests.iter().filter(|m| m.exists()) {
        let text = std::fs::read_to_string(manifest).unwrap();
        // Only [dependencies] count: a test may read a file as another process would.
        let deps = text.split("\n[").filter(|section| section.starts_with("dependencies]"));
        if deps.into_iter().any(|section| section.contains("\nrusqlite")) {
            depending.push(manifest.strip_prefix(&root).unwrap().display().to_string());
        }
    }
    assert_eq!(depending, vec!["crates/strata-core/Cargo.toml".to_string()]);
}

/// Code per architecture (`asm!`, target features, `cfg(target_arch)`) lives only in
/// strata-core and strata-models: the crates `scripts/aarch64` builds for aarch64 and tests
/// under qemu. Anywhere else it would go unbuilt on the other architecture until a person
/// built it there.
#[test]
fn code_per_architecture_lives_only_where_aarch64_is_built_and_tested() {
    let root = workspace();
    let tested = [root.join("crates/strata-core/src"), root.join("crates/strata-models/src")];
    let marks = ["target_arch", "target_feature", "asm!", "_feature_detected!"];
    let files = product_sources();
    let with_it = |f: &&PathBuf| {
        let text = std::fs::read_to_string(f).unwrap();
        marks.iter().any(|m| text.contains(m))
    };
    assert!(
        files.iter().filter(with_it).any(|f| tested.iter().any(|t| f.starts_with(t))),
        "the kernels' own files are found"
    );
    let outside: Vec<String> = files
        .iter()
        .filter(with_it)
        .filter(|f| !tested.iter().any(|t| f.starts_with(t)))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        outside.is_empty(),
        "code per architecture outside strata-core and strata-models (add its crate to scripts/aarch64): {outside:?}"
    );
}
