-- One row per idempotency key. The primary key is the unique constraint that
-- makes a claim atomic.
CREATE TABLE idem_keys (
	idem_key   text        NOT NULL PRIMARY KEY,
	params     text        NOT NULL,
	state      smallint    NOT NULL CHECK (state IN (1, 2)), -- 1 pending, 2 done
	token      text,                                         -- holder of a pending key
	until_at   timestamptz NOT NULL,                         -- lease end (pending) or expiry (done)
	result     bytea,
	failed     boolean     NOT NULL DEFAULT false,           -- result is a stored permanent error
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idem_keys_expiry ON idem_keys (state, until_at);
