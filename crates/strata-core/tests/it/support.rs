//! Shared fixtures: a temp-dir store on a manual clock, and sample contents.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use strata_core::*;

pub const T0: &str = "2026-01-31T12:00:00Z";

pub fn t0() -> DateTime<Utc> {
    strata_core::time::parse_time(T0).unwrap()
}

/// A store in a fresh temp dir, on a manual clock at [`T0`].
pub struct Fixture {
    pub dir: tempfile::TempDir,
    /// The PostgreSQL database's URL, when the store is on one.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub url: Option<String>,
    pub clock: Arc<ManualClock>,
    pub store: Store,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(t0()));
        let store = Store::open_with_clock(dir.path().join("strata.db"), clock.clone()).unwrap();
        Fixture { dir, url: None, clock, store }
    }

    /// A store on a fresh database of the test PostgreSQL server, on a manual clock at [`T0`].
    #[cfg(feature = "postgres")]
    pub fn postgres() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(t0()));
        let url = crate::server::fresh_database();
        let store = Store::open_postgres(&url, clock.clone()).unwrap();
        Fixture { dir, url: Some(url), clock, store }
    }

    /// The answer of `sql` (one count) read by a connection of the test's own, on whichever
    /// engine the store is.
    pub fn count_rows(&self, sql: &str) -> i64 {
        #[cfg(feature = "postgres")]
        if let Some(url) = &self.url {
            return crate::server::connect(url).query_one(sql, &[]).unwrap().get(0);
        }
        let c = rusqlite::Connection::open(self.path()).unwrap();
        c.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("strata.db")
    }

    pub fn tick(&self, secs: i64) {
        self.clock.advance(Duration::seconds(secs));
    }

    pub fn add(&mut self, content: Content) -> Memory {
        self.store.create(content, NewMemory::default(), &user()).unwrap()
    }
}

/// Forms a concept keyed `concept/<name>` over `members`, its summary (and sentences) `said`,
/// as compaction writes one: created, then linked to each member.
pub fn form_concept(
    tx: &mut StoreTx<'_>,
    name: &str,
    members: &[MemoryId],
    said: Vec<concepts::Sentence>,
    new: NewMemory,
    meta: &EventMeta,
) -> Result<MemoryId> {
    let now = tx.now();
    let terms = vec![name.to_string()];
    let body = concepts::ConceptBody {
        name: concepts::name_of(&terms),
        terms,
        summary: said.clone(),
        said,
        first: now,
        last: now,
        written_by: None,
    };
    let c = tx.create(body.content(&format!("{}{name}", concepts::KEY_PREFIX)), new, meta)?;
    for m in members {
        tx.link(c.id, *m, concepts::GROUPS, meta)?;
    }
    Ok(c.id)
}

/// A checksum of a shipped migration's text (FNV-1a), for the tests that pin them.
pub fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

pub fn user() -> EventMeta {
    EventMeta::actor(Actor::User)
}

pub fn concept(key: &str, facts: &[(&str, &str)]) -> Content {
    Content::Semantic(Concept {
        key: key.into(),
        facts: facts.iter().map(|(k, v)| (k.to_string(), FactValue::Text(v.to_string()))).collect(),
    })
}

pub fn utterance(speaker: &str, text: &str, at: DateTime<Utc>) -> Content {
    Content::Episodic(Episode {
        occurred_at: at,
        body: EpisodeBody::Utterance { speaker: speaker.into(), text: text.into() },
        concepts: vec![],
        extra: Default::default(),
    })
}

pub fn procedure(name: &str, steps: &[&str]) -> Content {
    Content::Procedural(Procedure {
        name: name.into(),
        steps: steps.iter().map(|s| s.to_string()).collect(),
        context: None,
    })
}

pub use strata_core::vectors::HashEmbedder;

/// Tests of the store's behaviour, each run on both engines: `fn name(f: &mut Fixture) {…}`
/// becomes `name::sqlite` and `name::postgres` (a fresh SQLite file, a fresh PostgreSQL
/// database), one body for both.
macro_rules! on_both_engines {
    ($($(#[$meta:meta])* fn $name:ident($f:ident: &mut Fixture) $body:block)*) => {$(
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn body($f: &mut crate::support::Fixture) $body
            #[test]
            fn sqlite() {
                body(&mut crate::support::Fixture::new())
            }
            #[cfg(feature = "postgres")]
            #[test]
            fn postgres() {
                body(&mut crate::support::Fixture::postgres())
            }
        }
    )*};
}
pub(crate) use on_both_engines;
