-- Accounts an operator can disable, payments confirmed by a provider, and
-- balance alerts.

-- A disabled account keeps its balance, ledger and keys, but its keys are
-- refused; disabling raises the key generation, like a revocation.
ALTER TABLE accounts ADD COLUMN disabled_at BIGINT;  -- NULL while enabled

-- Alert thresholds live on the account row, which every ledger append
-- locks and reads anyway: the transaction that moves a balance across a
-- threshold is the one that queues the alert, once, on any node.
ALTER TABLE accounts ADD COLUMN last_topup_cents BIGINT NOT NULL DEFAULT 0;  -- amount of the latest top-up
ALTER TABLE accounts ADD COLUMN alert_below_cents BIGINT;                    -- NULL: no amount threshold
ALTER TABLE accounts ADD COLUMN alert_below_percent BIGINT;                  -- percent of last_topup_cents; NULL: none
ALTER TABLE accounts ADD COLUMN alert_fired_at BIGINT;                       -- set when the balance fell below, cleared when it rose again

-- Every event a payment provider delivered and the gateway took, once per
-- provider and event id: a redelivered event finds its row and changes
-- nothing.
CREATE TABLE payment_events (
    provider    TEXT NOT NULL,  -- 'stripe' or 'generic'
    event_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    account_id  TEXT NOT NULL,  -- '' when the event named no account of ours
    outcome     TEXT NOT NULL,  -- 'credited', 'debited', 'already_applied', 'ignored'
    received_at BIGINT NOT NULL,
    PRIMARY KEY (provider, event_id)
);

-- Which account a provider's payment credited, so that its refunds and
-- disputes debit the same account.
CREATE TABLE payments (
    provider     TEXT NOT NULL,
    payment_id   TEXT NOT NULL,  -- Stripe: the PaymentIntent id
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    amount_cents BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (provider, payment_id)
);

-- Where an account's alerts go.
CREATE TABLE alert_settings (
    account_id     TEXT PRIMARY KEY REFERENCES accounts (id),
    webhook_url    TEXT NOT NULL,  -- '' for none
    webhook_secret TEXT NOT NULL,  -- signs every delivery
    email          TEXT NOT NULL,  -- '' for none
    updated_at     BIGINT NOT NULL
);

-- The alerts to send and how each delivery went: queued in the ledger
-- transaction that crossed the threshold, sent by whichever node claims
-- the row first. Ids start with the time in fixed-width hex.
CREATE TABLE alert_deliveries (
    id              TEXT /*bytewise*/ PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    channel         TEXT NOT NULL,   -- 'webhook' or 'email'
    kind            TEXT NOT NULL,   -- 'balance_below'
    balance_cents   BIGINT NOT NULL, -- the balance that crossed
    threshold_cents BIGINT NOT NULL,
    status          TEXT NOT NULL,   -- 'pending', 'delivered', 'failed'
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_until     BIGINT NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (status, next_attempt_at);
CREATE INDEX alert_deliveries_account ON alert_deliveries (account_id, id);
