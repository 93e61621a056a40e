-- Crystallization: adapters trained from memories, and what happened to each.
CREATE TABLE adapters (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,            -- ms since the epoch
    base_model TEXT NOT NULL,               -- the base model's name
    base_hash TEXT NOT NULL,                -- SHA-256 of the base model file
    dataset_hash TEXT NOT NULL,             -- SHA-256 of the training set's JSON Lines
    sources TEXT NOT NULL,                  -- JSON array of the source memories' ids
    hyperparameters TEXT NOT NULL,          -- JSON
    metrics TEXT,                           -- JSON evaluation report, once evaluated
    passed INTEGER,                         -- whether it passed the gate, once evaluated
    status TEXT NOT NULL CHECK (status IN ('candidate', 'active', 'retired')),
    path TEXT NOT NULL,                     -- the folder holding its PEFT files
    bytes INTEGER NOT NULL
) STRICT;

-- At most one adapter is active.
CREATE UNIQUE INDEX adapters_one_active ON adapters (status) WHERE status = 'active';

CREATE TABLE adapter_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    adapter_id TEXT NOT NULL REFERENCES adapters (id),
    at INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('trained', 'evaluated', 'activated', 'deactivated', 'rolled_back', 'retired')),
    detail TEXT NOT NULL DEFAULT '{}'
) STRICT;

CREATE INDEX adapter_events_by_adapter ON adapter_events (adapter_id, seq);
