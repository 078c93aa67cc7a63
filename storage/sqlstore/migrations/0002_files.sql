-- Metadata of the Files API; the bytes live in the blob store, under a key
-- made from the id.
--
-- A row is written pending (committed_at NULL) before an upload's bytes
-- are, with expires_at at the end of the upload lease, and committed once
-- the bytes are stored and the quota admitted them. A committed file is
-- served while expires_at is in the future; deleting it sets expires_at to
-- the present. Either way the row stays until the janitor has removed the
-- blob, so a crash never leaves bytes that no row names.
--
-- Ids start with the creation time and are paged through in id order, so
-- they must compare bytewise: the marker after TEXT becomes COLLATE "C" on
-- PostgreSQL (see migrate.go), while SQLite compares bytewise by default.

CREATE TABLE files (
    id           TEXT /*bytewise*/ PRIMARY KEY,  -- "file-" + 8 base62 of time + 16 random
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    filename     TEXT NOT NULL,                 -- sanitized; never a path
    purpose      TEXT NOT NULL,
    bytes        BIGINT NOT NULL,
    mime         TEXT NOT NULL,                 -- judged from the content
    sha256       TEXT NOT NULL,                 -- lower-case hex
    source       TEXT NOT NULL,                 -- 'upload' or 'generated'
    flagged      BOOLEAN NOT NULL,              -- stored without a malware verdict
    created_at   BIGINT NOT NULL,
    committed_at BIGINT,                        -- NULL while the upload is pending
    expires_at   BIGINT NOT NULL                -- end of service, or of the upload lease
);

-- Listing an account's files by id in either order, with or without a
-- purpose. Pending rows are never listed.
CREATE INDEX files_account_id ON files (account_id, id) WHERE committed_at IS NOT NULL;
CREATE INDEX files_account_purpose_id ON files (account_id, purpose, id) WHERE committed_at IS NOT NULL;

-- Usage and the quota check at commit: the account's unexpired files and
-- their sizes, read from the index alone.
CREATE INDEX files_account_expires ON files (account_id, expires_at, bytes) WHERE committed_at IS NOT NULL;

-- The janitor: rows whose time is up, pending or committed, oldest first.
CREATE INDEX files_expires ON files (expires_at, id);
