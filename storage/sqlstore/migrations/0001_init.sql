-- Accounts, API keys and the balance ledger.
-- Times are BIGINT microseconds since the Unix epoch; money is BIGINT cents.

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    deleted_at    BIGINT,                    -- NULL while the account is live
    balance_cents BIGINT NOT NULL DEFAULT 0, -- balance_after_cents of the last ledger entry
    ledger_seq    BIGINT NOT NULL DEFAULT 0, -- seq of the last ledger entry
    key_seq       BIGINT NOT NULL DEFAULT 0  -- seq of the last key created
);

-- A name belongs to at most one live account; deleted accounts free it.
CREATE UNIQUE INDEX accounts_live_name ON accounts (name) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    seq        BIGINT NOT NULL,  -- creation order within the account
    hash       TEXT NOT NULL,    -- hex HMAC-SHA256 of the key
    hint       TEXT NOT NULL,
    label      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT,           -- NULL while the key is active
    UNIQUE (account_id, seq)
);

-- The lookup on every request.
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
-- The key-creation window.
CREATE INDEX api_keys_account_created ON api_keys (account_id, created_at);

CREATE TABLE ledger_entries (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts (id),
    seq                 BIGINT NOT NULL, -- 1, 2, 3, ... within the account
    amount_cents        BIGINT NOT NULL,
    balance_after_cents BIGINT NOT NULL,
    kind                TEXT NOT NULL,
    reference           TEXT NOT NULL,   -- idempotency key
    note                TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    UNIQUE (account_id, seq),
    UNIQUE (account_id, reference)
);
