//! History and as-of reads from the log.

use crate::support::*;
use chrono::Duration;
use strata_core::*;

on_both_engines! {
    fn as_of_reads_fold_the_log_to_a_past_time_or_sequence(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        f.tick(60);
        f.store
            .transact(|tx| tx.update_content(m.id, concept("tea", &[("likes", "oolong")]), Expected::Any, &user()))
            .unwrap();
        f.tick(60);
        f.store.transact(|tx| tx.tag(m.id, "drinks", &user())).unwrap();

        let at = |secs: i64| f.store.get_as_of(m.id, AsOf::Time(t0() + Duration::seconds(secs)));
        assert_eq!(at(0).unwrap().content, concept("tea", &[("likes", "green")]));
        assert_eq!(at(59).unwrap().version, 1);
        assert_eq!(at(60).unwrap().content, concept("tea", &[("likes", "oolong")]));
        assert!(at(60).unwrap().tags.is_empty());
        assert_eq!(at(3600).unwrap(), f.store.get(m.id).unwrap(), "as of now is the live state");
        let err = at(-1).unwrap_err();
        assert!(err.to_string().contains("did not exist yet"), "{err}");

        let hist = f.store.history(m.id).unwrap();
        assert_eq!(hist.iter().map(|e| e.stream_version).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(f.store.get_as_of(m.id, AsOf::Seq(hist[1].seq)).unwrap().version, 2);
    }
}

on_both_engines! {
    /// Regression: a clock that steps back (a corrected system clock, or STRATA_NOW) made an
    /// as-of read apply a later event before an earlier one's successor.
    fn as_of_a_time_stops_at_the_first_later_event_even_if_the_clock_stepped_back(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        f.tick(100);
        f.store
            .transact(|tx| tx.update_content(m.id, concept("tea", &[("likes", "black")]), Expected::Any, &user()))
            .unwrap();
        f.tick(-50); // the clock is corrected backwards
        f.store
            .transact(|tx| tx.update_content(m.id, concept("tea", &[("likes", "white")]), Expected::Any, &user()))
            .unwrap();
        let at = |secs: i64| f.store.get_as_of(m.id, AsOf::Time(t0() + Duration::seconds(secs))).unwrap();
        assert_eq!(at(60).content, concept("tea", &[("likes", "green")]), "the v3 event at +50 s comes after v2 at +100 s");
        assert_eq!(at(100).content, concept("tea", &[("likes", "white")]), "by +100 s all three had happened");
    }
}
