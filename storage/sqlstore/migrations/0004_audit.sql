-- The audit log of administrative actions (the admin API): who did what
-- to which account, when, from where, and how it ended. Rows are only
-- ever inserted.
--
-- Ids start with the time in fixed-width hex and are paged through in id
-- order, so they must compare bytewise (see 0002_files.sql).

CREATE TABLE audit_log (
    id        TEXT /*bytewise*/ PRIMARY KEY,  -- "aud_" + 16 hex of microseconds + random
    at        BIGINT NOT NULL,
    subject   TEXT NOT NULL,                 -- the token's sub claim
    role      TEXT NOT NULL,                 -- "operator" or "account"
    action    TEXT NOT NULL,                 -- "key.create", "topup", ...
    account   TEXT NOT NULL,                 -- account name acted on; '' for none
    target    TEXT NOT NULL,                 -- key or file id; '' for the account itself
    remote_ip TEXT NOT NULL,
    outcome   TEXT NOT NULL,                 -- 'ok' or the error code answered
    detail    TEXT NOT NULL
);

-- Newest first, overall and per account.
CREATE INDEX audit_log_account_id ON audit_log (account, id);
