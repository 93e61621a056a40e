//! Who may reach a Strata server (the memory proxy, the MCP server over HTTP): bearer tokens
//! and the `Host` / `Origin` checks that keep web pages out. The rules, in one place:
//!
//! - A `Host` header must name a loopback host (`localhost`, `127.x.x.x`, `::1`) or one the
//!   server was told to accept: a page that rebinds its own domain to 127.0.0.1 sends its own
//!   name, and is refused.
//! - An `Origin` header, when a browser sends one, must be a loopback origin: no page from
//!   elsewhere may call the server, even one the server can be reached by.
//! - Tokens are compared in constant time.

use std::net::IpAddr;

/// A new bearer token: 32 random bytes, as hex.
pub fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `given` equals `expected`, in time that depends only on their lengths.
pub fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The host of a `Host` header value or of an origin's authority, without its port and
/// brackets, lowercased: `"[::1]:8080"` → `"::1"`, `"LocalHost:1"` → `"localhost"`.
pub fn host_of(authority: &str) -> String {
    let a = authority.trim();
    let host = if let Some(rest) = a.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else if a.matches(':').count() > 1 {
        a // a bare IPv6 address
    } else {
        a.split(':').next().unwrap_or_default()
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `host` (as [`host_of`] gives it) is this machine's loopback.
pub fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.ends_with(".localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `name` as a server can be told to accept it in `Host`: a DNS name (lowercased) or an IP
/// address in its usual form; anything else (a port, a scheme, a path) is refused, saying why.
pub fn host_name(name: &str) -> Result<String, String> {
    if let Ok(ip) = name.parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() <= 253 && name.split('.').all(label_ok) {
        return Ok(name.to_ascii_lowercase());
    }
    Err(format!("'{name}' is not a host name or IP address (give one without scheme or port, e.g. memory.home.arpa)"))
}

/// The hosts a server answers requests for (`Host`): loopback ones always; the names it was
/// given, whatever address it listens on (a loopback server behind a tunnel or a reverse proxy
/// is reached by one); and a server listening beyond loopback also its listening address (any
/// address, when it listens on all of them — a request naming an IP cannot come from a rebound
/// DNS name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hosts {
    remote: Option<IpAddr>,
    names: Vec<String>,
}

impl Hosts {
    /// Loopback hosts only.
    pub fn loopback() -> Hosts {
        Hosts::default()
    }

    /// A server listening on `listen` beyond loopback, reached by its address or by `names`
    /// (as [`host_name`] gives them).
    pub fn remote(listen: IpAddr, names: Vec<String>) -> Hosts {
        Hosts { remote: Some(listen), names: names.iter().map(|n| host_of(n)).collect() }
    }

    /// A server listening on a loopback address, reached also by `names` (as [`host_name`]
    /// gives them).
    pub fn named(names: Vec<String>) -> Hosts {
        Hosts { remote: None, names: names.iter().map(|n| host_of(n)).collect() }
    }

    /// Whether the server answers beyond loopback: it listens beyond it, or is reached by a
    /// name (through a tunnel or a proxy). Such a server always requires a token.
    pub fn is_remote(&self) -> bool {
        self.remote.is_some() || !self.names.is_empty()
    }

    /// Whether a request with this `Host` header may be answered.
    pub fn allows_host(&self, header: Option<&str>) -> bool {
        let Some(host) = header.map(host_of).filter(|h| !h.is_empty()) else {
            return false;
        };
        if is_loopback(&host) || self.names.contains(&host) {
            return true;
        }
        let Some(listen) = self.remote else { return false };
        host.parse::<IpAddr>().is_ok_and(|ip| listen.is_unspecified() || ip == listen)
    }
}

/// Whether a request with this `Origin` header may be answered: none (not a browser), or a
/// page served from this machine's loopback over http or https.
pub fn allows_origin(header: Option<&str>) -> bool {
    let Some(origin) = header else { return true };
    let Some((scheme, authority)) = origin.trim().split_once("://") else {
        return false; // "null" (a sandboxed page or a file) and anything malformed
    };
    matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && !authority.contains('/')
        && is_loopback(&host_of(authority))
}

/// Each person's request rate: a bucket of `per_minute` requests that refills evenly over the
/// minute, so a person may send a burst of their whole minute's allowance, then one request
/// every `60 / per_minute` seconds. Kept by each server process over a SQLite store; over
/// PostgreSQL the store keeps the same bucket, shared by every server (`Store::take_request`).
#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: std::sync::Mutex<std::collections::HashMap<String, (f64, std::time::Instant)>>,
}

impl RateLimiter {
    /// Takes one request from `who`'s allowance of `per_minute`: `Err(seconds)` to wait (at
    /// least 1) when none is left.
    pub fn take(&self, who: &str, per_minute: u32) -> Result<(), u64> {
        self.take_at(who, per_minute, std::time::Instant::now())
    }

    fn take_at(&self, who: &str, per_minute: u32, now: std::time::Instant) -> Result<(), u64> {
        let full = f64::from(per_minute.max(1));
        let per_second = full / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (left, since) = buckets.entry(who.to_string()).or_insert((full, now));
        *left = (*left + now.saturating_duration_since(*since).as_secs_f64() * per_second).min(full);
        *since = now;
        if *left >= 1.0 - 1e-9 {
            *left -= 1.0;
            return Ok(());
        }
        Err(((1.0 - *left) / per_second).ceil().max(1.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_without_port_brackets_or_case() {
        for (header, host) in [
            ("127.0.0.1:8088", "127.0.0.1"),
            ("[::1]:8088", "::1"),
            ("::1", "::1"),
            ("LocalHost", "localhost"),
            ("localhost.:80", "localhost"),
            ("Evil.Example:8088", "evil.example"),
        ] {
            assert_eq!(host_of(header), host, "{header}");
        }
    }

    #[test]
    fn only_loopback_hosts_and_named_ones_pass() {
        let local = Hosts::loopback();
        for ok in ["127.0.0.1:1", "127.8.9.1", "localhost:8088", "[::1]:9", "app.localhost"] {
            assert!(local.allows_host(Some(ok)), "{ok}");
        }
        for bad in ["evil.example", "192.168.1.4:8088", "127.0.0.1.evil.example", "", "[::ffff:8.8.8.8]"] {
            assert!(!local.allows_host(Some(bad)), "{bad}");
        }
        assert!(!local.allows_host(None), "HTTP/1.1 requires a Host");
        let named = Hosts::remote("192.168.1.4".parse().unwrap(), vec!["strata.lan".into()]);
        assert!(named.allows_host(Some("Strata.Lan:8088")) && named.allows_host(Some("192.168.1.4")));
        assert!(!named.allows_host(Some("evil.example")) && !named.allows_host(Some("10.0.0.9")));
        let any = Hosts::remote("0.0.0.0".parse().unwrap(), vec![]);
        assert!(any.allows_host(Some("10.0.0.9:8088")) && !any.allows_host(Some("evil.example")));
    }

    #[test]
    fn hosts_are_allowed_by_the_listening_address_and_names() {
        let check = |hosts: &Hosts, allowed: &[&str], refused: &[&str]| {
            for h in allowed {
                assert!(hosts.allows_host(Some(h)), "{h} should reach {hosts:?}");
            }
            for h in refused {
                assert!(!hosts.allows_host(Some(h)), "{h} should not reach {hosts:?}");
            }
        };
        let loopback = ["localhost", "LocalHost", "127.0.0.1", "127.0.0.2", "[::1]"];
        check(&Hosts::loopback(), &loopback, &["192.0.2.7", "strata.example"]);
        let any = |ip: &str| Hosts::remote(ip.parse().unwrap(), vec!["strata.example".into()]);
        check(&any("0.0.0.0"), &loopback, &["evil.example", "localhost.evil.example"]);
        check(&any("0.0.0.0"), &["192.0.2.7", "[2001:db8::7]", "strata.example", "STRATA.example:80"], &[]);
        check(&any("::"), &["192.0.2.7", "[2001:db8::7]:8765"], &[]);
        check(&any("192.0.2.7"), &["192.0.2.7", "strata.example", "localhost"], &["192.0.2.8", "evil.example"]);
        // A name is allowed whatever the address listened on (it answered 403 on 127.0.0.1).
        let tunnelled = Hosts::named(vec![host_name("Memory.Example").unwrap()]);
        check(&tunnelled, &["memory.example:8765", "localhost"], &["192.0.2.7", "evil.example"]);
        assert!(tunnelled.is_remote() && !Hosts::loopback().is_remote(), "a named server requires a token");
        let behind_nat = Hosts::remote("192.0.2.7".parse().unwrap(), vec![host_name("2001:DB8:0::5").unwrap()]);
        check(&behind_nat, &["[2001:db8::5]:8765"], &["[2001:db8::6]", "203.0.113.5"]);
    }

    #[test]
    fn a_person_gets_a_burst_of_their_minute_then_waits_for_the_refill() {
        let limiter = RateLimiter::default();
        let t0 = std::time::Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.take_at("ana", 3, t0), Ok(()));
        }
        // One request every 20 s comes back: the fourth waits for it.
        assert_eq!(limiter.take_at("ana", 3, t0), Err(20));
        assert_eq!(limiter.take_at("ana", 3, t0 + std::time::Duration::from_secs(15)), Err(5));
        assert_eq!(limiter.take_at("ana", 3, t0 + std::time::Duration::from_secs(20)), Ok(()));
        // Someone else's allowance is their own.
        assert_eq!(limiter.take_at("ben", 3, t0), Ok(()));
    }

    #[test]
    fn host_names_given_by_a_person_are_checked() {
        assert_eq!(host_name("Memory.Home.Arpa"), Ok("memory.home.arpa".into()));
        assert_eq!(host_name("::1"), Ok("::1".into()));
        for bad in ["memory:8765", "http://memory", "a/b", "-x.lan", "", "a..b", "my_host"] {
            assert!(host_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_loopback_origins_or_none_pass() {
        for ok in [None, Some("http://localhost:5173"), Some("http://127.0.0.1"), Some("https://[::1]:3000")] {
            assert!(allows_origin(ok), "{ok:?}");
        }
        for bad in ["null", "http://evil.example", "http://localhost.evil.example", "file://", "ftp://localhost", "x"] {
            assert!(!allows_origin(Some(bad)), "{bad}");
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd") && !same_secret(b"ab", b"abc") && !same_secret(b"", b"a"));
        let t = new_token();
        assert_eq!(t.len(), 64);
        assert_ne!(t, new_token());
    }
}
