-- 0007 (PostgreSQL): each person's request allowance, shared by every server over the store
-- (on SQLite, one process's buckets serve): what is left of it, and when it was last taken
-- from, by the database's clock (ms since the epoch).

CREATE TABLE rate_buckets (
    name   TEXT             PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at     BIGINT           NOT NULL
);
