-- The request log, which every charge writes a row of, in fewer
-- B-trees: on SQLite a table whose primary key is not an integer is a
-- B-tree keyed by rowid beside the index of its key, and each index is
-- one more B-tree to insert into and, at every commit, pages of it to
-- write to the log.
--
-- The sweep finds old rows by id, which starts with the receipt time
-- (see PruneRequestLog): the index on at served nothing else.
DROP INDEX request_log_at;

-- On SQLite the table is rebuilt WITHOUT ROWID, stored in the B-tree of
-- its primary key alone, its rows copied over unchanged in the
-- migration's one transaction (see 0007): a row goes into 2 B-trees
-- instead of 4. The ids grow with time, so rows are appended at the end
-- of that B-tree, as they were to the rowid table. PostgreSQL keeps the
-- table: there every table is a heap beside its indexes.
--
-- The ledger and the usage records keep their shape: every index of
-- theirs serves a query, and rebuilt WITHOUT ROWID they wrote no fewer
-- pages a commit. Keyed by account, their wide rows go into the middle
-- of the B-tree, whose pages split more often; keyed by id, each entry
-- of their other indexes carries the id instead of a rowid.
/*only sqlite*/
CREATE TABLE request_log_0014 (
    id                TEXT PRIMARY KEY,
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
) WITHOUT ROWID;

INSERT INTO request_log_0014 (id, account_id, key_id, at, request_id, charge_id, end_user, route, method,
    path, model_asked, model_served, upstream, stream, status, error_code, prompt_tokens,
    completion_tokens, cost_cents, estimated, tool_calls, latency_us, first_byte_us)
SELECT id, account_id, key_id, at, request_id, charge_id, end_user, route, method,
    path, model_asked, model_served, upstream, stream, status, error_code, prompt_tokens,
    completion_tokens, cost_cents, estimated, tool_calls, latency_us, first_byte_us
FROM request_log;

DROP TABLE request_log;

ALTER TABLE request_log_0014 RENAME TO request_log;

-- An account's pages, newest first.
CREATE INDEX request_log_account_id ON request_log (account_id, id);
/*end only*/
