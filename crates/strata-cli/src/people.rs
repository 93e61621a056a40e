//! `strata people`: who the servers over this store (`strata serve`, `strata mcp --http`) let
//! in, each by a token of their own with their own limits; add (the token is shown once),
//! list, revoke.

use anyhow::Result;
use comfy_table::{Table, presets};
use strata_api::Engine;
use strata_api::people::{Limits, Person};

use crate::args::PeopleCommand;
use crate::render::Out;

/// `strata people …`.
pub(crate) fn people(engine: &mut Engine, action: Option<PeopleCommand>, out: &Out) -> Result<()> {
    match action.unwrap_or(PeopleCommand::List) {
        PeopleCommand::List => list(&engine.people()?, out),
        PeopleCommand::Add { name, per_minute, max_kib } => {
            let max_request_bytes = max_kib.saturating_mul(1024);
            let added = engine.add_person(&name, Limits { per_minute, max_request_bytes })?;
            if out.json {
                say!("{}", crate::terminal::json(&added)?);
                return Ok(());
            }
            let p = &added.person;
            say!("{}", added.token);
            note!(
                "Added {}: {} requests a minute, {} KiB a request. Give them the token above; it is not kept and cannot be shown again.",
                p.name,
                p.limits.per_minute,
                p.limits.max_request_bytes / 1024
            );
            note!(
                "They send it as  Authorization: Bearer TOKEN  to strata serve or strata mcp --http over this store."
            );
            Ok(())
        }
        PeopleCommand::Revoke { name } => {
            engine.revoke_person(&name)?;
            if out.json {
                say!("{}", serde_json::json!({"revoked": name.trim().to_lowercase()}));
            } else {
                note!("Revoked {}: every server over this store refuses their token from now on.", name.trim());
            }
            Ok(())
        }
    }
}

fn list(people: &[Person], out: &Out) -> Result<()> {
    if out.json {
        say!("{}", crate::terminal::json(people)?);
        return Ok(());
    }
    if people.is_empty() {
        say!("Nobody has a token of their own yet: strata people add NAME gives one.");
        return Ok(());
    }
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(["Name", "Requests a minute", "Request size", "Since", "Token"]);
    for p in people {
        let state = match p.revoked_at {
            Some(at) => format!("revoked {}", at.format("%Y-%m-%d %H:%M")),
            None => "active".into(),
        };
        t.add_row([
            p.name.clone(),
            p.limits.per_minute.to_string(),
            format!("{} KiB", p.limits.max_request_bytes / 1024),
            p.created_at.format("%Y-%m-%d %H:%M").to_string(),
            state,
        ]);
    }
    for line in t.to_string().lines() {
        say!("{}", line.trim_end());
    }
    Ok(())
}
