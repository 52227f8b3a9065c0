-- One row per idempotency key. The primary key is the unique constraint that
-- makes a claim atomic.
CREATE TABLE idem_keys (
	idem_key   TEXT    NOT NULL PRIMARY KEY,
	params     TEXT    NOT NULL,
	state      INTEGER NOT NULL,           -- 1 pending, 2 done
	token      TEXT,                       -- holder of a pending key
	until_ms   INTEGER NOT NULL,           -- lease end (pending) or expiry (done), Unix ms
	result     BLOB,
	failed     INTEGER NOT NULL DEFAULT 0, -- 1: result is a stored permanent error
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL
);
CREATE INDEX idem_keys_expiry ON idem_keys (state, until_ms);
