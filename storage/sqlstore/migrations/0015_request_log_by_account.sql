-- The request log in the B-trees its reads need and no other: a table
-- its rows are appended to, and the index by account that pages them.
--
-- Keyed by id since 0014, the table on SQLite was an index B-tree: each
-- of its wide rows went in by key and the last page split into its
-- siblings every few rows, where a rowid table takes a row at its end
-- onto a page of its own. The sweep found old entries as a range of
-- ids, which needed that key. It now goes account by account through
-- (account_id, id), whose ids start with the receipt time as well (see
-- PruneRequestLog), so no B-tree keyed by id alone is left to write.
-- The index is unique: within an account an id is the paging cursor.
--
-- On SQLite the table is rebuilt as a rowid table, its rows copied in
-- id order in the migration's one transaction (see 0007). PostgreSQL
-- keeps its heap and drops the primary key's index.
/*only sqlite*/
CREATE TABLE request_log_0015 (
    id                TEXT /*bytewise*/ NOT NULL,
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

INSERT INTO request_log_0015 (id, account_id, key_id, at, request_id, charge_id, end_user, route, method,
    path, model_asked, model_served, upstream, stream, status, error_code, prompt_tokens,
    completion_tokens, cost_cents, estimated, tool_calls, latency_us, first_byte_us)
SELECT id, account_id, key_id, at, request_id, charge_id, end_user, route, method,
    path, model_asked, model_served, upstream, stream, status, error_code, prompt_tokens,
    completion_tokens, cost_cents, estimated, tool_calls, latency_us, first_byte_us
FROM request_log ORDER BY id;

DROP TABLE request_log;

ALTER TABLE request_log_0015 RENAME TO request_log;
/*end only*/
/*only postgres*/
DROP INDEX request_log_account_id;
/*end only*/

-- An account's pages, newest first, and the sweep.
CREATE UNIQUE INDEX request_log_account_id ON request_log (account_id, id);

/*only postgres*/
ALTER TABLE request_log DROP CONSTRAINT request_log_pkey;
/*end only*/
