-- 0009: agents (issue 43). An agent's definition is configuration, not knowledge: kept here with
-- every version it had (its history), not as a memory that recall would find. Runs are derived
-- records, as recalls are: each step (a model's reply, a tool call, a handoff) with its
-- arguments and result truncated at 4 KiB, forgotten with the run or the agent.

CREATE TABLE agents (
    user_id    TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    spec       TEXT    NOT NULL,              -- JSON: description, instructions, model, tools, handoffs, shared access
    version    BIGINT NOT NULL CHECK (version > 0),
    created_at BIGINT NOT NULL,              -- ms since the epoch
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, name)
);

CREATE TABLE agent_versions (
    user_id TEXT    NOT NULL,
    name    TEXT    NOT NULL,
    version BIGINT NOT NULL,
    at      BIGINT NOT NULL,
    change  TEXT    NOT NULL CHECK (change IN ('created', 'changed')),
    spec    TEXT    NOT NULL,
    PRIMARY KEY (user_id, name, version)
);

CREATE TABLE agent_runs (
    id                TEXT    PRIMARY KEY,
    user_id           TEXT    NOT NULL,
    agent             TEXT    NOT NULL,       -- the agent the task was given to
    task              TEXT    NOT NULL,
    started_at        BIGINT NOT NULL,
    ended_at          BIGINT,
    outcome           TEXT    CHECK (outcome IN ('answered', 'step_limit', 'cancelled', 'failed')),
    answer            TEXT,                   -- the answer, or what stopped the run, in words
    last_agent        TEXT,                   -- who answered (after handoffs)
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX agent_runs_by_agent ON agent_runs (user_id, agent, started_at);

CREATE TABLE agent_steps (
    run_id            TEXT    NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    seq               BIGINT NOT NULL,
    agent             TEXT    NOT NULL,       -- the agent acting at this step
    kind              TEXT    NOT NULL CHECK (kind IN ('reply', 'tool', 'handoff')),
    name              TEXT    NOT NULL,       -- the tool's name, the next agent, or the model's
    arguments         TEXT    NOT NULL DEFAULT '',
    result            TEXT    NOT NULL DEFAULT '',
    failed            BIGINT  NOT NULL DEFAULT 0,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    ms                BIGINT NOT NULL DEFAULT 0,
    at                BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
