-- 0003 (PostgreSQL): the people a server over this store lets in, as on SQLite (0010): each by
-- a token of their own, of which only the SHA-256 is kept; a revoked person keeps their row.

CREATE TABLE people (
    name              TEXT    PRIMARY KEY,
    token_sha256      TEXT    UNIQUE,
    per_minute        BIGINT  NOT NULL CHECK (per_minute > 0),
    max_request_bytes BIGINT  NOT NULL CHECK (max_request_bytes > 0),
    created_at        BIGINT  NOT NULL,
    revoked_at        BIGINT
);
