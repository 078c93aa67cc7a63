-- Alerts when a key's spend in its period nears its limit. The share is
-- an account setting; the period the alert fired in is kept on the key's
-- row, written by the transaction that commits the key's charges, so a
-- key alerts once per period whichever node charged it.
ALTER TABLE alert_settings ADD COLUMN key_spend_percent BIGINT;                 -- 1 to 100; NULL: no key spend alerts
ALTER TABLE api_keys ADD COLUMN spend_alert_period BIGINT NOT NULL DEFAULT 0;   -- period_start it fired in; 0: armed
ALTER TABLE alert_deliveries ADD COLUMN key_id TEXT NOT NULL DEFAULT '';        -- 'key_spend': the key
ALTER TABLE alert_deliveries ADD COLUMN spend_cents BIGINT NOT NULL DEFAULT 0;  -- its spend in the period
ALTER TABLE alert_deliveries ADD COLUMN limit_cents BIGINT NOT NULL DEFAULT 0;  -- its limit
ALTER TABLE alert_deliveries ADD COLUMN spend_period TEXT NOT NULL DEFAULT '';  -- 'day' or 'month'
