-- Controls an operator or account owner sets on a key. Every column's
-- zero is "no control", so keys created before this version keep working
-- as they did.
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;                          -- NULL: never expires
ALTER TABLE api_keys ADD COLUMN models TEXT NOT NULL DEFAULT '';            -- space-separated allow-list; '' any model
ALTER TABLE api_keys ADD COLUMN cidrs TEXT NOT NULL DEFAULT '';             -- space-separated CIDR allow-list; '' any address
ALTER TABLE api_keys ADD COLUMN spend_limit_cents BIGINT NOT NULL DEFAULT 0; -- 0: no limit
ALTER TABLE api_keys ADD COLUMN spend_period TEXT NOT NULL DEFAULT '';      -- 'day' or 'month' (UTC) with a limit
ALTER TABLE api_keys ADD COLUMN rate_per_minute BIGINT NOT NULL DEFAULT 0;  -- 0: the profile's rate
ALTER TABLE api_keys ADD COLUMN stream_limit BIGINT NOT NULL DEFAULT 0;     -- 0: the profile's limit
-- Written by the transaction that commits the key's charges, once per
-- key and batch, never per request.
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;                        -- NULL: never charged
ALTER TABLE api_keys ADD COLUMN period_start BIGINT NOT NULL DEFAULT 0;     -- start of the period period_spend_cents counts
ALTER TABLE api_keys ADD COLUMN period_spend_cents BIGINT NOT NULL DEFAULT 0;
