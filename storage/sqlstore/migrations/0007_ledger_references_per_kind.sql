-- Each kind of ledger entry has references of its own: the idempotency
-- key of an entry is (account_id, kind, reference), no longer
-- (account_id, reference). A request's charge has reference
-- 'req:' || charge id and is found by kind and reference, so a top-up
-- (or refund, or adjustment) whose reference is spelt the same way is an
-- entry of its own and can never be taken for that charge.
--
-- Neither database can change a table's UNIQUE constraint in a way the
-- other also understands, so the table is rebuilt with the new key and
-- its rows copied over unchanged, in the migration's one transaction.
-- The copy takes as long as the ledger is large; while it runs, other
-- processes wait at their own migration step.

CREATE TABLE ledger_entries_per_kind (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts (id),
    seq                 BIGINT NOT NULL, -- 1, 2, 3, ... within the account
    amount_cents        BIGINT NOT NULL,
    balance_after_cents BIGINT NOT NULL,
    kind                TEXT NOT NULL,   -- 'topup', 'charge', 'refund' or 'adjustment'
    reference           TEXT NOT NULL,   -- idempotency key within the account and kind
    note                TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    UNIQUE (account_id, seq),
    UNIQUE (account_id, kind, reference)
);

INSERT INTO ledger_entries_per_kind
    (id, account_id, seq, amount_cents, balance_after_cents, kind, reference, note, created_at)
SELECT id, account_id, seq, amount_cents, balance_after_cents, kind, reference, note, created_at
FROM ledger_entries;

DROP TABLE ledger_entries;

ALTER TABLE ledger_entries_per_kind RENAME TO ledger_entries;
