-- The backend that answered a request, when the gateway routes a model to
-- a pool of several: the pool's name for it (host:port by default). Empty
-- for records written before, and when no backend answered.
ALTER TABLE usage_records ADD COLUMN upstream TEXT NOT NULL DEFAULT '';
