-- State of the /v3 assistant: what it remembers about end users, the
-- counters behind object ids, and one usage record per request.

-- The facts remembered for an end user of an account, oldest first by seq.
-- memory_users holds the last seq handed out per end user: Remember bumps
-- it with an upsert, which also locks that one row, so concurrent writers
-- for the same end user take turns while other end users are not held up.
CREATE TABLE memory_users (
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    end_user_id TEXT NOT NULL,
    fact_seq    BIGINT NOT NULL,  -- seq of the last fact remembered
    PRIMARY KEY (account_id, end_user_id)
);

CREATE TABLE memory_facts (
    account_id  TEXT NOT NULL,
    end_user_id TEXT NOT NULL,
    seq         BIGINT NOT NULL,  -- higher is newer; gaps where facts were dropped
    fact        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (account_id, end_user_id, seq),
    FOREIGN KEY (account_id, end_user_id) REFERENCES memory_users (account_id, end_user_id)
);

-- The last number handed out per account and class of object id: 'obj'
-- for finals (obj<N>), 'el' for elements (el<N>). Rows only ever count up,
-- so a number is never handed out twice.
CREATE TABLE object_counters (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    class      TEXT NOT NULL,
    last       BIGINT NOT NULL,
    PRIMARY KEY (account_id, class)
);

-- What each request that reached the backend consumed and was charged.
-- The charge is the ledger entry of the same account with reference
-- 'req:' || request_id, written in the same transaction as the row.
CREATE TABLE usage_records (
    account_id        TEXT NOT NULL REFERENCES accounts (id),
    request_id        TEXT NOT NULL,
    key_id            TEXT NOT NULL,
    end_user          TEXT NOT NULL,   -- '' when the request named none
    session_id        TEXT NOT NULL,   -- '' when the request named none
    model             TEXT NOT NULL,
    stream            BOOLEAN NOT NULL,
    prompt_tokens     BIGINT NOT NULL, -- summed over the rounds of the tool loop
    completion_tokens BIGINT NOT NULL,
    answer_tokens     BIGINT NOT NULL, -- the visible answer's share of completion_tokens
    estimated         BOOLEAN NOT NULL, -- some round's counts were estimated
    rounds            BIGINT NOT NULL,
    tool_calls        BIGINT NOT NULL,
    outcome           TEXT NOT NULL,
    cost_cents        BIGINT NOT NULL,
    started_at        BIGINT NOT NULL,
    finished_at       BIGINT NOT NULL,
    recorded_at       BIGINT NOT NULL,
    PRIMARY KEY (account_id, request_id)
);

-- An account's usage, newest first.
CREATE INDEX usage_records_account_finished ON usage_records (account_id, finished_at);
