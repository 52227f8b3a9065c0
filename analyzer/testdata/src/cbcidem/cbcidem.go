// Package cbcidem holds writes that use package idem for part of their
// work (red team rtM, L4): the write is idempotent at the sink only when
// its INSERTs are, each under the key or resolving conflicts.
package cbcidem

import (
	"context"
	"database/sql"

	"billing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/idempotency"
)

var (
	DB    *sql.DB
	Store *idem.Store
)

// openAndNotify inserts the ticket with a plain INSERT, then sends the
// notification once per key: the ticket is not under the key.
//
//agentidem:write identity=key
func openAndNotify(ctx context.Context, key string) error {
	if _, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1)`, key); err != nil {
		return err
	}
	return idem.Do(ctx, Store, idem.Key("notify", key), func(context.Context) error { return nil })
}

// openLogged computes a key for its log, and inserts with a plain INSERT.
//
//agentidem:write identity=key
func openLogged(ctx context.Context, key string) error {
	_ = idem.Key("ticket", key)
	_, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1)`, key)
	return err
}

// openKeyed inserts under the key.
//
//agentidem:write identity=key
func openKeyed(ctx context.Context, key string) error {
	return idem.Do(ctx, Store, idem.Key("ticket", key), func(ctx context.Context) error {
		_, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1)`, key)
		return err
	})
}

// openKeyedClosure inserts under the key, through a local closure.
//
//agentidem:write identity=key
func openKeyedClosure(ctx context.Context, key string) error {
	work := func(ctx context.Context) error {
		_, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1)`, key)
		return err
	}
	return idem.Do(ctx, Store, idem.Key("ticket", key), work)
}

// once is the application's helper around package idem.
func once(ctx context.Context, key string, fn func(context.Context) error) error {
	return idem.Do(ctx, Store, key, fn)
}

// openViaHelper inserts under the key, through the helper.
//
//agentidem:write identity=key
func openViaHelper(ctx context.Context, key string) error {
	return once(ctx, key, func(ctx context.Context) error {
		_, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1)`, key)
		return err
	})
}

// openByAPI calls a ticketing API under the key: no INSERT in sight.
//
//agentidem:write identity=key
func openByAPI(ctx context.Context, key string) error {
	return idem.Do(ctx, Store, key, func(context.Context) error { return nil })
}

// openIfAbsentAndNotify skips an existing ticket, and notifies once.
//
//agentidem:write identity=key
func openIfAbsentAndNotify(ctx context.Context, key string) error {
	if _, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, key); err != nil {
		return err
	}
	return idem.Do(ctx, Store, idem.Key("notify", key), func(context.Context) error { return nil })
}

// openLookalike goes through a package whose path begins like idem's.
//
//agentidem:write identity=key
func openLookalike(ctx context.Context, key string) error {
	return idempotency.Do(ctx, key, func(ctx context.Context) error {
		_, err := DB.ExecContext(ctx, `INSERT INTO tickets (key) VALUES ($1)`, key)
		return err
	})
}

func openAndNotifyTraced(ctx context.Context, key string) error { return openAndNotify(ctx, key) }
func openLoggedTraced(ctx context.Context, key string) error    { return openLogged(ctx, key) }
func openKeyedTraced(ctx context.Context, key string) error     { return openKeyed(ctx, key) }
func openViaHelperTraced(ctx context.Context, key string) error { return openViaHelper(ctx, key) }
func openByAPITraced(ctx context.Context, key string) error     { return openByAPI(ctx, key) }
func openLookalikeTraced(ctx context.Context, key string) error { return openLookalike(ctx, key) }
func openKeyedClosureTraced(ctx context.Context, key string) error {
	return openKeyedClosure(ctx, key)
}
func openIfAbsentAndNotifyTraced(ctx context.Context, key string) error {
	return openIfAbsentAndNotify(ctx, key)
}

func g1(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openAndNotifyTraced(ctx, key) // want `openAndNotify after LookupTicket on the same key races`
	}
	return nil
}

func g2(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openLoggedTraced(ctx, key) // want `openLogged after LookupTicket on the same key races`
	}
	return nil
}

func lookalike(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openLookalikeTraced(ctx, key) // want `openLookalike after LookupTicket on the same key races`
	}
	return nil
}

func keyed(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openKeyedTraced(ctx, key)
	}
	return nil
}

func keyedClosure(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openKeyedClosureTraced(ctx, key)
	}
	return nil
}

func viaHelper(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openViaHelperTraced(ctx, key)
	}
	return nil
}

func byAPI(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openByAPITraced(ctx, key)
	}
	return nil
}

func ifAbsentAndNotify(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openIfAbsentAndNotifyTraced(ctx, key)
	}
	return nil
}
