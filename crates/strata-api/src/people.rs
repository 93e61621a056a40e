//! One memory for many people: the people a server over one store lets in, each by a token of
//! their own ([`strata_core::people`] keeps them), and the [`Gate`] both servers (the memory
//! proxy and the MCP server over HTTP) put before every request: who it is, whether they are
//! within their rate, and how large their request may be.
//!
//! A person's engine acts as an agent named after them: the memories they keep private are
//! theirs alone, and what they share is the team's (see [`Engine::for_person`]).

use std::sync::Mutex;

use serde::Serialize;
pub use strata_core::people::{Limits, MAX_PER_MINUTE, MAX_REQUEST_BYTES, Person};

use crate::engine::{Engine, EngineOptions};
use crate::error::ApiResult;

/// A person just let in, with the token they will use (shown this once).
#[derive(Debug, Clone, Serialize)]
pub struct NewPerson {
    /// Who.
    pub person: Person,
    /// Their bearer token. The store keeps only its SHA-256: it cannot be shown again.
    pub token: String,
}

impl Engine {
    /// Lets `name` into the servers over this store with `limits`; their token is in the
    /// answer, and nowhere else.
    pub fn add_person(&mut self, name: &str, limits: Limits) -> ApiResult<NewPerson> {
        let token = self.store().add_person(name, limits)?;
        let person = self.store_view().person_with_token(&token)?.ok_or_else(|| {
            crate::ApiError::new(crate::ErrorCode::Internal, "the person just added could not be read back")
        })?;
        Ok(NewPerson { person, token })
    }

    /// Takes `name`'s token away: every server over the store refuses it from the next request.
    pub fn revoke_person(&mut self, name: &str) -> ApiResult<()> {
        Ok(self.store().revoke_person(name)?)
    }

    /// Everyone let in, or once let in, by name.
    pub fn people(&self) -> ApiResult<Vec<Person>> {
        Ok(self.store_view().people()?)
    }

    /// Whose token `token` is, if anyone's (a revoked one is no one's).
    pub fn person_with_token(&self, token: &str) -> ApiResult<Option<Person>> {
        Ok(self.store_view().person_with_token(token)?)
    }

    /// Takes one request from `person`'s allowance in the store itself, shared by every server
    /// over it (`None`: the store keeps none, each server keeps its own).
    pub fn take_request(&self, person: &Person) -> ApiResult<Option<Result<(), u64>>> {
        Ok(self.store_view().take_request(&person.name, person.limits.per_minute)?)
    }

    /// An engine for `person` on a shared server (its own connection): they act as the agent
    /// named after them, so what they keep private only they see, and everything shared the
    /// whole team sees. `shared_writes`: whether their new memories are the team's unless they
    /// ask for a private one (the MCP server), or their own unless shared (the proxy's
    /// conversations).
    pub fn for_person(&self, person: &Person, server: &str, shared_writes: bool) -> ApiResult<Engine> {
        let opts = EngineOptions {
            agent_id: Some(person.name.clone()),
            client: format!("{server}:{}", person.name),
            actor: strata_core::Actor::User,
            shared_writes,
            ..self.options().clone()
        };
        self.for_caller(opts)
    }
}

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// The one who started the server (its own token, or none needed on loopback).
    Owner,
    /// Someone let in by `strata people add`.
    Person(Person),
}

impl Caller {
    /// The most bytes this caller's request body may hold.
    pub fn max_request_bytes(&self) -> usize {
        match self {
            Caller::Owner => MAX_REQUEST_BYTES as usize,
            Caller::Person(p) => p.limits.max_request_bytes as usize,
        }
    }

    /// The person's name, if it is one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Caller::Owner => None,
            Caller::Person(p) => Some(&p.name),
        }
    }
}

/// Why a request was turned away before it was served.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// No token, or one that is nobody's (or revoked).
    Unauthorized,
    /// Over the person's rate: try again after `retry_after` seconds.
    TooMany {
        /// Who.
        name: String,
        /// Their rate.
        per_minute: u32,
        /// Seconds until one more request is allowed.
        retry_after: u64,
    },
    /// The store could not be asked who the token is (it is unreachable, say).
    Unavailable(String),
}

impl Refusal {
    /// The HTTP status it is answered with: 401, 429 or 503.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Unauthorized => 401,
            Refusal::TooMany { .. } => 429,
            Refusal::Unavailable(_) => 503,
        }
    }

    /// Seconds to wait before trying again (`Retry-After`), for a person over their rate.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Refusal::TooMany { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }

    /// What the caller reads.
    pub fn message(&self) -> String {
        match self {
            Refusal::Unauthorized => {
                "a bearer token is required: Authorization: Bearer TOKEN (the server's own, or one from strata people add)".into()
            }
            Refusal::TooMany { name, per_minute, retry_after } => format!(
                "{name} may send {per_minute} requests a minute and has sent them: retry in {retry_after} s"
            ),
            Refusal::Unavailable(why) => format!("the server cannot check tokens right now: {why}"),
        }
    }
}

/// The door before every request of a shared server: the bearer token names the owner (the
/// server's own token; or, with no token needed on loopback, anyone not naming a person) or a
/// person, whose rate is then taken. Tokens are looked up in the store on every request, so a
/// revoked one is refused at once by every server over it.
pub struct Gate {
    lookups: Mutex<Engine>,
    token: Option<String>,
    limiter: strata_core::access::RateLimiter,
}

impl Gate {
    /// A gate over `engine`'s store (with a connection of its own), for a server whose own
    /// token is `token` (none: the owner needs none).
    pub fn new(engine: &Engine, token: Option<String>) -> ApiResult<Gate> {
        let lookups = engine.for_caller(engine.options().clone())?;
        crate::monitor::connections("open", 1);
        Ok(Gate { lookups: Mutex::new(lookups), token, limiter: Default::default() })
    }

    /// Whether the store answers, for a readiness check: `Err` says why not. Blocks.
    pub fn ready(&self) -> Result<(), String> {
        let engine = self.lookups.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        engine.store_view().ping().map_err(|e| crate::ApiError::from(e).message)
    }

    /// Takes one request from `p`'s allowance: the store's, shared by every server over it,
    /// where it keeps one (PostgreSQL), else this server's.
    fn take(&self, p: &Person) -> Result<Result<(), u64>, Refusal> {
        let engine = self.lookups.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match engine.take_request(p) {
            Ok(Some(taken)) => Ok(taken),
            Ok(None) => Ok(self.limiter.take(&p.name, p.limits.per_minute)),
            Err(e) => {
                crate::monitor::refused("store");
                Err(Refusal::Unavailable(e.message))
            }
        }
    }

    /// Who the request with `Authorization` header `authorization` is. Blocks: it reads the
    /// store (call it off the async runtime).
    pub fn admit(&self, authorization: Option<&str>) -> Result<Caller, Refusal> {
        let given = authorization.and_then(|v| v.strip_prefix("Bearer ")).map(str::trim).unwrap_or_default();
        if let Some(own) = &self.token
            && strata_core::access::same_secret(given.as_bytes(), own.as_bytes())
        {
            return Ok(Caller::Owner);
        }
        let person = if given.is_empty() {
            None
        } else {
            let engine = self.lookups.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match engine.person_with_token(given) {
                Ok(p) => p,
                Err(e) => {
                    crate::monitor::refused("store");
                    return Err(Refusal::Unavailable(e.message));
                }
            }
        };
        match person {
            Some(p) => match self.take(&p)? {
                Ok(()) => Ok(Caller::Person(p)),
                Err(retry_after) => {
                    Err(Refusal::TooMany { name: p.name, per_minute: p.limits.per_minute, retry_after })
                }
            },
            // Without a token of its own, the server lets anyone on loopback in as the owner
            // (OpenAI clients always send some key).
            None if self.token.is_none() => Ok(Caller::Owner),
            None => Err(Refusal::Unauthorized),
        }
        .inspect_err(|r| {
            crate::monitor::refused(match r {
                Refusal::Unauthorized => "token",
                Refusal::TooMany { .. } => "rate",
                Refusal::Unavailable(_) => "store",
            })
        })
    }
}
