// Package postgres is the idem backend on PostgreSQL, through
// github.com/jackc/pgx/v5: for agents that run as several processes or
// machines and must agree on which of them performs a piece of work.
//
// Each key is a row under a PRIMARY KEY (the unique constraint that makes a
// claim atomic). A claim is an INSERT ... ON CONFLICT DO NOTHING; when the
// row exists, it is read with SELECT ... FOR UPDATE and, when its holder's
// lease has run out (the holder died), taken over in the same transaction.
// Leases are measured on the database's clock, so the hosts' clocks need
// not agree. Replays are a plain read.
//
// A call that finds the key held waits for it: a trigger NOTIFYs channel
// idem_keys when a holder completes or releases a key, and the Backend
// LISTENs on one connection of its own (outside the pool), so a waiter
// wakes a round trip after the holder finishes instead of at its next poll
// (idem.WithPollInterval, 50ms by default). Waiters keep polling, for
// holders that die and for the time no listening connection is up. The
// listening goroutine starts on the first wait set up (every idem.Do sets
// one up), through runtime.GoInfrastructure: a suite whose first call
// starts it takes it for the process's, not for a loop of the agent's.
//
//	b, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"))
//	if err != nil { ... }
//	defer b.Close()
//	if err := b.Migrate(ctx); err != nil { ... }
//	store := idem.New(b)
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Backend is an idem.Backend on a PostgreSQL database.
type Backend struct {
	pool   *pgxpool.Pool
	owned  bool
	listen listener // LISTEN/NOTIFY for Watch
}

var _ idem.Backend = (*Backend)(nil)

// Open connects to the database at dsn (a URL or key=value string, as pgx
// parses it; pool_max_conns and the other pgxpool settings apply). Call
// Migrate before the first use; Close when done.
func Open(ctx context.Context, dsn string) (*Backend, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("idem/postgres: open: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("idem/postgres: open: %w", err)
	}
	return &Backend{pool: pool, owned: true}, nil
}

// New returns a Backend on a pool the caller manages; Close does not close
// it.
func New(pool *pgxpool.Pool) *Backend { return &Backend{pool: pool} }

// Pool returns the connection pool.
func (b *Backend) Pool() *pgxpool.Pool { return b.pool }

// Close stops the connection that Watch listens on, and closes the pool if
// Open opened it.
func (b *Backend) Close() {
	b.listen.close()
	if b.owned {
		b.pool.Close()
	}
}

// migrateLock is the advisory lock that serializes Migrate across
// processes.
const migrateLock = 0x6964656d // "idem"

// Migrate applies the embedded schema migrations that the database lacks,
// each once, in order, recorded in the table idem_schema_migrations. A
// transaction-scoped advisory lock makes it safe to run from several
// processes at once.
func (b *Backend) Migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("idem/postgres: migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(strings.TrimPrefix(name, "migrations/"), ".sql")
		if err := b.apply(ctx, name, version); err != nil {
			return fmt.Errorf("idem/postgres: migrate %s: %w", version, err)
		}
	}
	return nil
}

func (b *Backend) apply(ctx context.Context, name, version string) error {
	body, err := migrations.ReadFile(name)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS idem_schema_migrations (
			version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM idem_schema_migrations WHERE version = $1)`, version).Scan(&done); err != nil || done {
			return err
		}
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO idem_schema_migrations (version) VALUES ($1)`, version)
		return err
	})
}

const (
	statePending = 1
	stateDone    = 2
)

type row struct {
	params string
	state  int16
	live   bool // lease (pending) or retention (done) not yet over
	result []byte
	failed bool
}

func (r row) record() idem.Record {
	st := idem.Pending
	if r.state == stateDone {
		st = idem.Done
	}
	return idem.Record{State: st, Params: r.params, Result: r.result, Failed: r.failed}
}

const insertPending = `INSERT INTO idem_keys (idem_key, params, state, token, until_at)
	VALUES ($1, $2, 1, $3, now() + $4 * interval '1 millisecond') ON CONFLICT (idem_key) DO NOTHING`

const selectRow = `SELECT params, state, until_at > now(), result, failed FROM idem_keys WHERE idem_key = $1`

func scanRow(r pgx.Row) (row, bool, error) {
	var x row
	err := r.Scan(&x.params, &x.state, &x.live, &x.result, &x.failed)
	if errors.Is(err, pgx.ErrNoRows) {
		return x, false, nil
	}
	return x, err == nil, hint(err)
}

// hint points at Migrate when the table is missing.
func hint(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return fmt.Errorf("%w (run Migrate first)", err)
	}
	return err
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// Claim implements idem.Backend.
func (b *Backend) Claim(ctx context.Context, key string, c idem.Claim) (idem.Record, error) {
	// Fast path: a live record is answered by a read, without a transaction.
	if r, ok, err := scanRow(b.pool.QueryRow(ctx, selectRow, key)); err != nil {
		return idem.Record{}, err
	} else if ok && r.live {
		return r.record(), nil
	} else if !ok {
		// A fresh key: one autocommit INSERT claims it, without the round
		// trips of a transaction.
		tag, err := b.pool.Exec(ctx, insertPending, key, c.Params, c.Token, millis(c.Lease))
		if err != nil {
			return idem.Record{}, hint(err)
		}
		if tag.RowsAffected() == 1 {
			return idem.Record{State: idem.Pending, Params: c.Params, Owned: true}, nil
		}
	}
	for {
		rec, retry, err := b.claimTx(ctx, key, c)
		if err != nil || !retry {
			return rec, hint(err)
		}
	}
}

// claimTx runs one claim transaction; retry reports that the row vanished
// between the INSERT and the SELECT (its holder released it).
func (b *Backend) claimTx(ctx context.Context, key string, c idem.Claim) (rec idem.Record, retry bool, err error) {
	err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, insertPending, key, c.Params, c.Token, millis(c.Lease))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			rec = idem.Record{State: idem.Pending, Params: c.Params, Owned: true}
			return nil
		}
		r, ok, err := scanRow(tx.QueryRow(ctx, selectRow+` FOR UPDATE`, key))
		if err != nil {
			return err
		}
		if !ok {
			retry = true
			return nil
		}
		switch {
		case r.state == stateDone && !r.live: // expired: the key is free
			tag, err = tx.Exec(ctx, `UPDATE idem_keys SET params = $2, state = 1, token = $3,
				until_at = now() + $4 * interval '1 millisecond', result = NULL, failed = false, created_at = now(), updated_at = now()
				WHERE idem_key = $1`, key, c.Params, c.Token, millis(c.Lease))
			rec = idem.Record{State: idem.Pending, Params: c.Params, Owned: true}
		case r.state == statePending && !r.live && r.params == c.Params: // holder died
			tag, err = tx.Exec(ctx, `UPDATE idem_keys SET token = $2, until_at = now() + $3 * interval '1 millisecond', updated_at = now()
				WHERE idem_key = $1`, key, c.Token, millis(c.Lease))
			rec = idem.Record{State: idem.Pending, Params: c.Params, Owned: true, Abandoned: true}
		default:
			rec = r.record()
			return nil
		}
		if err == nil && tag.RowsAffected() != 1 {
			err = errors.New("takeover of a locked row matched no row")
		}
		return err
	})
	return rec, retry, err
}

// Extend implements idem.Backend.
func (b *Backend) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	return held(b.pool.Exec(ctx, `UPDATE idem_keys SET until_at = now() + $3 * interval '1 millisecond', updated_at = now()
		WHERE idem_key = $1 AND state = 1 AND token = $2`, key, token, millis(lease)))
}

// Complete implements idem.Backend.
func (b *Backend) Complete(ctx context.Context, key, token string, out idem.Outcome, ttl time.Duration) error {
	result := out.Result
	if result == nil {
		result = []byte{}
	}
	return held(b.pool.Exec(ctx, `UPDATE idem_keys SET state = 2, token = NULL, until_at = now() + $3 * interval '1 millisecond',
		result = $4, failed = $5, updated_at = now() WHERE idem_key = $1 AND state = 1 AND token = $2`,
		key, token, millis(ttl), result, out.Failed))
}

func held(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return hint(err)
	}
	if tag.RowsAffected() == 0 {
		return idem.ErrLeaseLost
	}
	return nil
}

// Release implements idem.Backend.
func (b *Backend) Release(ctx context.Context, key, token string) error {
	_, err := b.pool.Exec(ctx, `DELETE FROM idem_keys WHERE idem_key = $1 AND state = 1 AND token = $2`, key, token)
	return hint(err)
}

// Purge implements idem.Backend.
func (b *Backend) Purge(ctx context.Context) (int64, error) {
	tag, err := b.pool.Exec(ctx, `DELETE FROM idem_keys WHERE state = 2 AND until_at <= now()`)
	if err != nil {
		return 0, hint(err)
	}
	return tag.RowsAffected(), nil
}
