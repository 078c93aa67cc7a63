-- The request log: one row per authenticated request, appended by the
-- ledger writer in batches and deleted after the configured retention.
-- Times are BIGINT microseconds since the Unix epoch, durations BIGINT
-- microseconds. The id starts with the receipt time in fixed-width hex,
-- so that it orders the rows by time and serves as the paging cursor.
CREATE TABLE request_log (
    id                TEXT /*bytewise*/ PRIMARY KEY,
    account_id        TEXT NOT NULL,
    key_id            TEXT NOT NULL,
    at                BIGINT NOT NULL,
    request_id        TEXT NOT NULL,
    charge_id         TEXT NOT NULL,
    end_user          TEXT NOT NULL,
    route             TEXT NOT NULL,
    method            TEXT NOT NULL,
    path              TEXT NOT NULL,
    model_asked       TEXT NOT NULL,
    model_served      TEXT NOT NULL,
    upstream          TEXT NOT NULL,
    stream            BOOLEAN NOT NULL,
    status            BIGINT NOT NULL,
    error_code        TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    cost_cents        BIGINT NOT NULL,
    estimated         BOOLEAN NOT NULL,
    tool_calls        BIGINT NOT NULL,
    latency_us        BIGINT NOT NULL,
    first_byte_us     BIGINT NOT NULL
);

-- An account's pages, newest first.
CREATE INDEX request_log_account_id ON request_log (account_id, id);
-- The retention sweep.
CREATE INDEX request_log_at ON request_log (at);
