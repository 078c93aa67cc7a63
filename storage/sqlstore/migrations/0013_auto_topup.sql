-- Automatic top-ups with a payment method saved at Stripe. One row per
-- account that ever set one; the row is also the attempt's state, so
-- that a conditional UPDATE of it lets one claimer, in any process,
-- start the account's one attempt in flight.
CREATE TABLE auto_topups (
    account_id        TEXT PRIMARY KEY REFERENCES accounts (id),
    enabled           BIGINT NOT NULL DEFAULT 0,   -- 1: on; off by default
    threshold_cents   BIGINT NOT NULL DEFAULT 0,   -- top up when the balance is below
    amount_cents      BIGINT NOT NULL DEFAULT 0,   -- what one attempt adds
    customer_id       TEXT NOT NULL DEFAULT '',    -- Stripe Customer, created once
    payment_method_id TEXT NOT NULL DEFAULT '',    -- saved for off-session payments
    attempts          BIGINT NOT NULL DEFAULT 0,   -- attempts started; keys end in the number
    in_flight         TEXT NOT NULL DEFAULT '',    -- idempotency key of the attempt in flight; '' none
    in_flight_since   BIGINT NOT NULL DEFAULT 0,
    payment_id        TEXT NOT NULL DEFAULT '',    -- PaymentIntent of the attempt in flight
    failures          BIGINT NOT NULL DEFAULT 0,   -- consecutive failed attempts
    last_error        TEXT NOT NULL DEFAULT '',
    next_attempt_at   BIGINT NOT NULL DEFAULT 0,   -- no attempt before (after a failure)
    updated_at        BIGINT NOT NULL
);
CREATE INDEX auto_topups_enabled ON auto_topups (enabled, in_flight);

-- 'auto_topup_failed' alerts: why, and how many attempts in a row failed.
ALTER TABLE alert_deliveries ADD COLUMN detail TEXT NOT NULL DEFAULT '';
ALTER TABLE alert_deliveries ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
