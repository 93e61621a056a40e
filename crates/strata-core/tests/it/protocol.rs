//! One conformance test for every implementation of the seed-003 memory protocol.

use strata_core::*;

use crate::support::*;

fn conformance(mut memory: impl MemoryProtocol, name: &str) {
    assert_eq!(memory.name(), name);
    let facts = [
        ("Paris is known for the Eiffel Tower and amazing cuisine.", "travel_guide"),
        ("Tokyo has the world's busiest railway station, Shinjuku Station.", "travel_facts"),
        ("The Tokyo subway map is famously dense.", "travel_facts"),
    ];
    for (text, source) in facts {
        memory.add(MemoryEntry::new(text, source)).unwrap();
    }
    assert!(memory.add(MemoryEntry::new("no source", " ")).is_err(), "an entry needs a source");

    let results =
        memory.query("What is the most important thing about Tokyo's railway?", QueryOptions::default()).unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].entry.content, facts[1].0, "the station answer first");
    assert_eq!(results[0].entry.source, "travel_facts");
    assert!(results[0].score > results[1].score && results[1].score > 0.0);
    assert_eq!(memory.query("Tokyo", QueryOptions { limit: 1 }).unwrap().len(), 1);
    assert!(memory.query("volcanoes of Iceland", QueryOptions::default()).unwrap().is_empty());

    memory.clear().unwrap();
    assert!(memory.query("Tokyo Paris", QueryOptions::default()).unwrap().is_empty());
    memory.close().unwrap();
}

#[test]
fn the_list_memory_conforms() {
    conformance(ListMemory::new("travel"), "travel");
}

#[test]
fn the_store_memory_conforms_and_clear_really_forgets() {
    let f = Fixture::new();
    let path = f.path();
    let scope = Scope { agent_id: Some("travel_agent".into()), ..Scope::default() };
    // Someone else's memory in the same file is not touched by this memory's clear().
    let mut other = Store::open(&path).unwrap();
    other.create(concept("keep", &[("x", "Tokyo")]), NewMemory::default(), &user()).unwrap();
    conformance(StoreMemory::new("travel", f.store, scope), "travel");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.stats().unwrap().memories, 1);
    assert_eq!(store.stats().unwrap().forgotten, 3);
    let bytes = std::fs::read(&path).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("Shinjuku"));
}

#[test]
fn the_store_memory_with_an_embedder_embeds_as_it_adds_and_recalls_nothing_unrelated() {
    let f = Fixture::new();
    let path = f.path();
    let e = HashEmbedder { id: "hash-256", dim: 256 };
    let mut memory = StoreMemory::new("travel", f.store, Scope::default()).with_embedder(std::sync::Arc::new(e));
    memory.add(MemoryEntry::new("Shinjuku Station is the busiest railway station", "travel_facts")).unwrap();
    memory.add(MemoryEntry::new("Paris is known for its cuisine", "travel_guide")).unwrap();
    assert_eq!(Store::open(&path).unwrap().pending_embeddings(&e).unwrap(), 0, "embedded on add");
    let got = memory.query("busiest railway", QueryOptions::default()).unwrap();
    assert_eq!(got[0].entry.source, "travel_facts");
    // Some similarity exists between any two texts; below the floor, nothing is recalled.
    assert!(memory.query("volcanoes Iceland", QueryOptions::default()).unwrap().is_empty());
}
