//! Agents kept in the store with their history, their runs step by step, and forgetting both.

use crate::support::*;
use strata_core::Error;
use strata_core::agent_runs::{NewStep, RunOutcome, STEP_TEXT_LIMIT, StepKind};
use strata_core::agents::{AgentSpec, SharedAccess};

fn planner() -> AgentSpec {
    AgentSpec {
        description: "Plans trips".into(),
        instructions: "Plan the person's trips from what you remember of them.".into(),
        tools: vec!["recall".into(), "remember".into()],
        handoffs: vec!["Booker".into()],
        ..AgentSpec::default()
    }
}

fn step(agent: &str, kind: StepKind, name: &str, result: &str) -> NewStep {
    NewStep {
        agent: agent.into(),
        kind: Some(kind),
        name: name.into(),
        arguments: r#"{"query": "trips"}"#.into(),
        result: result.into(),
        prompt_tokens: 100,
        completion_tokens: 10,
        ms: 5,
        ..NewStep::default()
    }
}

on_both_engines! {
fn an_agent_is_kept_with_every_version_it_had(f: &mut Fixture) {
    let a = f.store.define_agent("alex", " Travel Planner ", planner()).unwrap();
    assert_eq!((a.name.as_str(), a.version, a.spec.shared), ("Travel Planner", 1, SharedAccess::Write));
    f.tick(60);
    let mut changed = planner();
    changed.instructions = "Plan trips; prefer trains.".into();
    let b = f.store.change_agent("alex", "travel planner", changed.clone(), Some(1)).unwrap();
    assert_eq!((b.version, b.spec.instructions.as_str()), (2, "Plan trips; prefer trains."));
    assert_eq!(b.updated_at - b.created_at, chrono::Duration::seconds(60));
    // A change made from an old version is refused: someone changed it meanwhile.
    let stale = f.store.change_agent("alex", "Travel Planner", planner(), Some(1)).unwrap_err();
    assert!(matches!(stale, Error::Conflict { .. }), "{stale:?}");
    // The same definition again is no new version.
    assert_eq!(f.store.change_agent("alex", "Travel Planner", changed, None).unwrap().version, 2);
    let history = f.store.agent_history("alex", "Travel Planner").unwrap();
    let seen: Vec<(u64, &str)> = history.iter().map(|v| (v.version, v.change.as_str())).collect();
    assert_eq!(seen, vec![(1, "created"), (2, "changed")]);
    assert_eq!(history[0].spec, planner());
    // Names are the person's own, whatever their case or spacing.
    let twice = f.store.define_agent("alex", "travel_planner", planner()).unwrap_err().to_string();
    assert!(twice.contains("an agent named 'travel_planner' (or spelled alike) exists"), "{twice}");
    f.store.define_agent("bo", "Travel Planner", AgentSpec::default()).unwrap();
    assert_eq!(f.store.agents("alex").unwrap().len(), 1);
    assert_eq!(f.store.agents("bo").unwrap()[0].spec, AgentSpec::default());
    let unknown = f.store.agent("alex", "Nobody").unwrap_err();
    assert!(matches!(unknown, Error::NotFound(_)) && unknown.to_string().contains("no agent is named 'Nobody'"));
}

fn a_run_is_recorded_step_by_step_and_forgotten_with_its_agents(f: &mut Fixture) {
    f.store.define_agent("alex", "Planner", planner()).unwrap();
    f.store.define_agent("alex", "Booker", AgentSpec::default()).unwrap();
    let run = f.store.start_agent_run("alex", "Planner", "Book me a trip to Porto").unwrap();
    assert!(run.starts_with("run_"), "{run}");
    let long = "x".repeat(STEP_TEXT_LIMIT * 2);
    assert_eq!(f.store.add_agent_step(&run, &step("Planner", StepKind::Tool, "recall", &long)).unwrap(), 1);
    assert_eq!(f.store.add_agent_step(&run, &step("Planner", StepKind::Handoff, "Booker", "{}")).unwrap(), 2);
    assert_eq!(f.store.add_agent_step(&run, &step("Booker", StepKind::Reply, "model", "Booked.")).unwrap(), 3);
    let (r, steps) = f.store.agent_run("alex", &run).unwrap();
    assert_eq!((r.outcome, r.ended_at, r.prompt_tokens, r.completion_tokens), (None, None, 300, 30));
    assert!(steps[0].step.result.ends_with("… [cut at 4096 of 8192 bytes]"));
    assert_eq!(steps.iter().map(|s| s.step.agent.as_str()).collect::<Vec<_>>(), ["Planner", "Planner", "Booker"]);
    f.store.end_agent_run(&run, RunOutcome::Answered, "Booked.", "Booker").unwrap();
    let listed = f.store.agent_runs("alex", Some("planner"), 10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].outcome, listed[0].last_agent.as_deref()), (Some(RunOutcome::Answered), Some("Booker")));
    assert!(f.store.agent_runs("bo", None, 10).unwrap().is_empty(), "another person's runs are not listed");
    assert!(matches!(f.store.agent_run("bo", &run).unwrap_err(), Error::NotFound(_)));
    let other = f.store.start_agent_run("alex", "Planner", "What do I like?").unwrap();
    // Counted in analytics: by outcome (one not ended), by agent, and per day.
    let m = f.store.agent_metrics("alex", &strata_core::analytics::Range::default()).unwrap();
    assert_eq!(m.runs, 2);
    assert_eq!(m.outcomes.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(), [("answered", 1), ("running", 1)]);
    let planner = &m.by_agent[0];
    assert_eq!(
        (planner.agent.as_str(), planner.runs, planner.answered, planner.steps, planner.tool_calls, planner.handoffs),
        ("Planner", 2, 1, 3, 1, 1)
    );
    assert_eq!(planner.tokens, 330);
    assert_eq!((m.series.len(), m.series[0].runs, m.series[0].answered), (1, 2, 1));
    assert_eq!(f.store.agent_metrics("bo", &Default::default()).unwrap().runs, 0, "another person's runs are not counted");
    f.store.forget_agent_run("alex", &other).unwrap();
    assert!(matches!(f.store.agent_run("alex", &other).unwrap_err(), Error::NotFound(_)));
    // Forgetting the agent a task was handed to erases the run it acted in.
    let gone = f.store.forget_agent("alex", "booker").unwrap();
    assert_eq!((gone.versions, gone.runs), (1, 1));
    assert!(f.store.agent_runs("alex", None, 10).unwrap().is_empty());
    assert_eq!(f.count_rows("SELECT count(*) FROM agent_steps"), 0);
    assert_eq!(f.store.agents("alex").unwrap().iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["Planner"]);
    let e = f.store.add_agent_step(&run, &step("Planner", StepKind::Reply, "model", "")).unwrap_err();
    assert!(matches!(e, Error::NotFound(_)), "{e:?}");
}
}

/// On SQLite, a forgotten agent's instructions and its runs' results leave every byte of the
/// database's files.
#[test]
fn a_forgotten_agent_leaves_no_byte_in_the_sqlite_files() {
    let mut f = Fixture::new();
    let secret = "wombatsaffron";
    let spec = AgentSpec { instructions: format!("The door code is {secret}."), ..AgentSpec::default() };
    f.store.define_agent("alex", "Keeper", spec.clone()).unwrap();
    f.store.change_agent("alex", "Keeper", AgentSpec { description: "keeps".into(), ..spec }, None).unwrap();
    let run = f.store.start_agent_run("alex", "Keeper", "What is the code?").unwrap();
    f.store.add_agent_step(&run, &step("Keeper", StepKind::Tool, "recall", &format!("code {secret}"))).unwrap();
    f.store.forget_agent("alex", "Keeper").unwrap();
    let path = f.path();
    drop(f.store);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", path.display())) {
            assert!(!String::from_utf8_lossy(&bytes).contains(secret), "{secret} is still in strata.db{suffix}");
        }
    }
}

/// On PostgreSQL, no row version of the agents' tables holds a forgotten agent's words once
/// forget has vacuumed.
#[cfg(feature = "postgres")]
#[test]
fn a_forgotten_agent_leaves_no_row_version_on_postgres() {
    let mut f = Fixture::postgres();
    let secret = "quokkamarmalade";
    let spec = AgentSpec { instructions: format!("The door code is {secret}."), ..AgentSpec::default() };
    f.store.define_agent("alex", "Keeper", spec).unwrap();
    let run = f.store.start_agent_run("alex", "Keeper", &format!("Is it {secret}?")).unwrap();
    f.store.add_agent_step(&run, &step("Keeper", StepKind::Reply, "model", secret)).unwrap();
    let mut c = crate::server::connect(f.url.as_ref().unwrap());
    c.batch_execute("CREATE EXTENSION IF NOT EXISTS pageinspect").unwrap();
    let tables = ["agents", "agent_versions", "agent_runs", "agent_steps"];
    let holding = |c: &mut strata_core::postgres::driver::Client| -> Vec<&str> {
        let needle = secret.as_bytes();
        tables
            .into_iter()
            .filter(|t| {
                crate::postgres::row_versions(c, t).iter().any(|d| d.windows(needle.len()).any(|w| w == needle))
            })
            .collect()
    };
    assert_eq!(holding(&mut c), tables.to_vec());
    f.store.forget_agent("alex", "Keeper").unwrap();
    assert!(holding(&mut c).is_empty());
}

/// A backup keeps every person's agents with their versions (format version 2), and a restore
/// holds them to the rules the commands keep; a backup without agents stays version 1.
#[test]
fn a_backup_keeps_the_agents_with_their_history() {
    let mut f = Fixture::new();
    let mut plain = Vec::new();
    f.store.export_backup(&mut plain).unwrap();
    assert!(String::from_utf8_lossy(&plain).starts_with("{\"format\":\"strata-backup\",\"version\":1,"));
    f.store.define_agent("alex", "Planner", planner()).unwrap();
    f.tick(5);
    let changed = AgentSpec { instructions: "Be briefer.".into(), ..planner() };
    f.store.change_agent("alex", "Planner", changed, Some(1)).unwrap();
    f.store.define_agent("bo", "Booker", AgentSpec::default()).unwrap();
    let run = f.store.start_agent_run("alex", "Planner", "Plan").unwrap();
    let mut backup = Vec::new();
    f.store.export_backup(&mut backup).unwrap();
    let text = String::from_utf8(backup.clone()).unwrap();
    assert!(text.starts_with("{\"format\":\"strata-backup\",\"version\":2,\"events\":0,\"agents\":2,"), "{text}");

    let mut g = Fixture::new();
    g.store.import_backup("backup.jsonl", &mut &backup[..]).unwrap();
    assert_eq!(g.store.agents("alex").unwrap(), f.store.agents("alex").unwrap());
    assert_eq!(g.store.agents("bo").unwrap(), f.store.agents("bo").unwrap());
    assert_eq!(g.store.agent_history("alex", "Planner").unwrap(), f.store.agent_history("alex", "Planner").unwrap());
    assert_eq!(g.store.agent("alex", "Planner").unwrap().version, 2);
    assert!(g.store.agent_runs("alex", None, 10).unwrap().is_empty(), "runs are derived records: {run} stays behind");

    // Refused with its line, and nothing imported.
    let lines: Vec<&str> = text.lines().collect();
    let with = |i: usize, new: &str| {
        let mut l = lines.clone();
        l[i] = new;
        l.join("\n")
    };
    let cases = [
        (
            with(1, &lines[1].replace("\"version\":2,\"at\"", "\"version\":3,\"at\"")),
            "backup.jsonl:2: field `agent.versions`",
        ),
        (
            with(1, &lines[1].replace("\"name\":\"Planner\"", "\"name\":\"<Planner>\"")),
            "backup.jsonl:2: field `agent.name`",
        ),
        (with(2, lines[1]), "backup.jsonl:3: field `agent.name`: 'Planner' appears twice"),
        (lines[..2].join("\n"), "backup.jsonl:1: field `agents`: the header promises 2 agents but the file has 1"),
        (format!("{}\n{}", text.trim_end(), lines[1]), "backup.jsonl:4: more lines than the header promises"),
    ];
    for (bad, want) in cases {
        let mut h = Fixture::new();
        let err = h.store.import_backup("backup.jsonl", &mut bad.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}\n   wanted: {want}");
        assert!(h.store.agents("alex").unwrap().is_empty() && h.store.agents("bo").unwrap().is_empty());
    }
}
