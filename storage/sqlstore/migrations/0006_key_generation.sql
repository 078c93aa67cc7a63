-- The key generation: one number that every revocation raises in its own
-- transaction (RevokeKey, DeleteAccount). A node may reuse a key lookup
-- while the generation it reads with the account's balance, which it
-- reads on every request anyway, has not moved: a revoked key is refused
-- on its very next request on every node, at no extra round trip.
CREATE TABLE key_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
);
INSERT INTO key_generation (id, generation) VALUES (1, 0);
