-- 0010: the people a server over this store lets in, each by a token of their own. Only the
-- token's SHA-256 is kept (the token itself is shown once, when it is made); a revoked person
-- keeps their row, without a token, so that the list says who had access and until when.

CREATE TABLE people (
    name              TEXT    PRIMARY KEY,
    token_sha256      TEXT    UNIQUE,
    per_minute        INTEGER NOT NULL CHECK (per_minute > 0),
    max_request_bytes INTEGER NOT NULL CHECK (max_request_bytes > 0),
    created_at        INTEGER NOT NULL,
    revoked_at        INTEGER
) STRICT;
