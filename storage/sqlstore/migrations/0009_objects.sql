-- What became of the object ids an account was handed: the stored file of
-- an object's current version while it lives, or that it was deleted or
-- folded into a document as the element renamed_to. An id without a row
-- lives if its counter handed it out (object_counters), so that a client
-- can neither use an id it was never given nor bring a retired one back.
CREATE TABLE objects (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    object_id  TEXT NOT NULL,
    state      TEXT NOT NULL, -- 'live', 'deleted' or 'renamed'
    renamed_to TEXT NOT NULL,
    file_id    TEXT NOT NULL,
    PRIMARY KEY (account_id, object_id)
);
