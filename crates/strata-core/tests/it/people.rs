//! The people a server lets in: tokens kept as their SHA-256 only, revoked at once, limits
//! checked; on both engines.

use strata_core::people::{Limits, token_sha256};

use crate::support::on_both_engines;

on_both_engines! {
    fn a_person_gets_a_token_the_store_keeps_only_as_its_hash(f: &mut Fixture) {
        let limits = Limits { per_minute: 30, max_request_bytes: 4096 };
        let token = f.store.add_person(" Ana ", limits).unwrap();
        assert_eq!(token.len(), 64, "32 random bytes as hex");

        let ana = f.store.person_with_token(&token).unwrap().expect("the token is Ana's");
        assert_eq!((ana.name.as_str(), ana.limits, ana.revoked_at), ("ana", limits, None));
        let held = |sql: String| f.count_rows(&sql);
        assert_eq!(held(format!("SELECT count(*) FROM people WHERE token_sha256 = '{}'", token_sha256(&token))), 1);
        assert_eq!(held(format!("SELECT count(*) FROM people WHERE token_sha256 = '{token}' OR name = '{token}'")), 0);
        // The hash is not a token, and nor is a near miss.
        assert_eq!(f.store.person_with_token(&token_sha256(&token)).unwrap(), None);
        assert_eq!(f.store.person_with_token(&token[..63]).unwrap(), None);
    }

    fn a_second_token_needs_a_revoke_and_a_revoked_token_is_nobodys(f: &mut Fixture) {
        let first = f.store.add_person("ben", Limits::default()).unwrap();
        let again = f.store.add_person("Ben", Limits::default()).unwrap_err().to_string();
        assert!(again.contains("ben already has a token: revoke it first"), "{again}");
        assert!(f.store.person_with_token(&first).unwrap().is_some(), "a refused add changes nothing");

        f.tick(60);
        f.store.revoke_person("ben").unwrap();
        assert_eq!(f.store.person_with_token(&first).unwrap(), None);
        let listed = f.store.people().unwrap();
        assert_eq!(listed.len(), 1, "a revoked person stays listed");
        assert!(listed[0].revoked_at.is_some());
        let twice = f.store.revoke_person("ben").unwrap_err().to_string();
        assert!(twice.contains("nobody named 'ben' has a token to revoke"), "{twice}");

        let second = f.store.add_person("ben", Limits { per_minute: 5, ..Limits::default() }).unwrap();
        assert_ne!(first, second);
        assert_eq!(f.store.person_with_token(&first).unwrap(), None, "the old token stays dead");
        let ben = f.store.person_with_token(&second).unwrap().unwrap();
        assert_eq!((ben.limits.per_minute, ben.revoked_at), (5, None));
    }

    fn bad_names_and_limits_are_refused_and_write_nothing(f: &mut Fixture) {
        assert!(f.store.add_person("ana smith", Limits::default()).unwrap_err().to_string().contains("is not a person's name"));
        let huge = Limits { max_request_bytes: 2 << 20, ..Limits::default() };
        assert!(f.store.add_person("ana", huge).unwrap_err().to_string().contains("1 MiB"));
        assert!(f.store.revoke_person("nobody").unwrap_err().to_string().contains("nobody named 'nobody'"));
        assert_eq!(f.store.people().unwrap(), vec![]);
        assert_eq!(f.count_rows("SELECT count(*) FROM people"), 0);
    }
}

/// On PostgreSQL a person's allowance is the store's, shared by every connection (every
/// server): three requests a minute, taken through two stores, then a wait.
#[cfg(feature = "postgres")]
#[test]
fn a_persons_rate_is_shared_by_every_server_over_postgres() {
    let f = crate::support::Fixture::postgres();
    let other = strata_core::Store::open_postgres(f.url.as_ref().unwrap(), f.clock.clone()).unwrap();
    let taken: Vec<_> = [&f.store, &other, &f.store]
        .iter()
        .map(|s| s.take_request("carol", 3).unwrap().expect("the store keeps allowances"))
        .collect();
    assert_eq!(taken, [Ok(()), Ok(()), Ok(())]);
    let wait = other.take_request("carol", 3).unwrap().unwrap().unwrap_err();
    assert!((1..=20).contains(&wait), "one request comes back every 20 s: {wait}");
    assert_eq!(f.store.take_request("dan", 3).unwrap(), Some(Ok(())), "each person has their own");
}

#[test]
fn a_sqlite_store_leaves_rates_to_each_server() {
    let f = crate::support::Fixture::new();
    assert_eq!(f.store.take_request("carol", 3).unwrap(), None);
}
