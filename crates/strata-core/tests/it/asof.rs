//! History and as-of reads from the log.

use crate::support::*;
use chrono::Duration;
use strata_core::*;

#[test]
fn as_of_reads_fold_the_log_to_a_past_time_or_sequence() {
    let mut f = Fixture::new();
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
