// Package sqlite is the embedded idem backend: SQLite through the pure-Go
// driver modernc.org/sqlite, so a single binary keeps its idempotency keys
// in a file with no server and no cgo.
//
// The database runs in WAL mode with a busy timeout; a claim is an
// INSERT ... ON CONFLICT DO NOTHING on the key's primary key inside an
// immediate transaction, so two processes sharing the file can never both
// hold a key. Replays are plain reads and do not take the write lock.
//
//	b, err := sqlite.Open("agent.db")
//	if err != nil { ... }
//	defer b.Close()
//	if err := b.Migrate(ctx); err != nil { ... }
//	store := idem.New(b)
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/idem"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// Backend is an idem.Backend on a SQLite database.
type Backend struct {
	db    *sql.DB
	owned bool
	now   func() time.Time
	// wsem lets one write of this process at a time reach SQLite: its
	// writers queue here instead of in SQLite's sleeping busy handler, which
	// is left to arbitrate between processes.
	wsem chan struct{}
}

// lockWrite takes the process's write turn, or fails when ctx ends first.
func (b *Backend) lockWrite(ctx context.Context) (unlock func(), err error) {
	select {
	case b.wsem <- struct{}{}:
		return func() { <-b.wsem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var _ idem.Backend = (*Backend)(nil)

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	busy time.Duration
}

// BusyTimeout sets how long a write waits for another writer's lock before
// failing with SQLITE_BUSY (default 10s).
func BusyTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.busy = d })
}

// Open opens, creating it if needed, the SQLite database file at path, in
// WAL mode with a busy timeout and immediate write transactions. Call
// Migrate before the first use; Close when done.
//
// path is a file name, used as it is: "a?b.db" opens a file of that name
// (characters that mean something in a SQLite URI, ? # %, are escaped).
// ":memory:" opens a private in-memory database, shared by every use of the
// returned Backend (it holds one connection, so each pooled connection does
// not get a database of its own) and gone when it is closed.
func Open(path string, opts ...Option) (*Backend, error) {
	cfg := config{busy: 10 * time.Second}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if path == "" {
		return nil, errors.New(`opening sqlite database: empty path: give a file name, or ":memory:" for a database in memory`)
	}
	memory := path == ":memory:"
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busy.Milliseconds()))
	if !memory {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", dsn(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening sqlite database %s: %w", path, err)
	}
	if memory {
		// An in-memory database lives in its connection: one connection,
		// never recycled, is the database.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening sqlite database %s: %w", path, err)
	}
	b := New(db)
	b.owned = true
	return b, nil
}

// dsn is the SQLite URI of the file at path (without parameters): the path
// percent-encoded, so that no character of it is read as the start of a
// query (?) or fragment (#), or as an escape (%).
func dsn(path string) string {
	if path == ":memory:" {
		return "file::memory:"
	}
	if strings.HasPrefix(path, "//") {
		// file://x would name a host; on a POSIX path extra leading
		// slashes mean nothing.
		path = "/" + strings.TrimLeft(path, "/")
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// New returns a Backend on db, a database/sql handle of the modernc.org/sqlite
// driver that the caller opened and configured (WAL and a busy timeout are
// recommended; see Open). Close does not close db.
func New(db *sql.DB) *Backend {
	return &Backend{db: db, now: time.Now, wsem: make(chan struct{}, 1)}
}

// DB returns the database handle.
func (b *Backend) DB() *sql.DB { return b.db }

// Close closes the database if Open opened it.
func (b *Backend) Close() error {
	if b.owned {
		return b.db.Close()
	}
	return nil
}

// Migrate applies the embedded schema migrations that the database lacks,
// each once, in order, recorded in the table idem_schema_migrations. It is
// safe to run concurrently from several processes.
func (b *Backend) Migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("idem/sqlite: migrate: %w", err)
	}
	sort.Strings(names)
	if _, err := b.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS idem_schema_migrations (
		version TEXT NOT NULL PRIMARY KEY, applied_ms INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("idem/sqlite: migrate: %w", err)
	}
	for _, name := range names {
		version := strings.TrimSuffix(strings.TrimPrefix(name, "migrations/"), ".sql")
		if err := b.apply(ctx, name, version); err != nil {
			return fmt.Errorf("idem/sqlite: migrate %s: %w", version, err)
		}
	}
	return nil
}

func (b *Backend) apply(ctx context.Context, name, version string) error {
	body, err := migrations.ReadFile(name)
	if err != nil {
		return err
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The version is claimed by the transaction's first statement, a write,
	// not checked by a SELECT first: on a handle of New whose transactions
	// are deferred (not Open's BEGIN IMMEDIATE), a SELECT took a read
	// snapshot, and when another process applied the migration before this
	// one wrote, the write failed with SQLITE_BUSY_SNAPSHOT and so did
	// Migrate (TestMigrateWhileAnotherProcessMigrates; agentidem-vet's
	// check-then-insert finding). A first write waits for the other writer
	// (the busy timeout) and then finds the version taken; a migration that
	// fails rolls its claim back with it.
	res, err := tx.ExecContext(ctx, `INSERT INTO idem_schema_migrations (version, applied_ms) VALUES (?, ?) ON CONFLICT (version) DO NOTHING`, version, b.now().UnixMilli())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // applied already
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	return tx.Commit()
}

const (
	statePending = 1
	stateDone    = 2
)

type row struct {
	params string
	state  int
	until  int64
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

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readRow(ctx context.Context, q querier, key string) (row, bool, error) {
	var r row
	err := q.QueryRowContext(ctx, `SELECT params, state, until_ms, result, failed FROM idem_keys WHERE idem_key = ?`, key).
		Scan(&r.params, &r.state, &r.until, &r.result, &r.failed)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, hint(err)
}

// hint points at Migrate when the table is missing.
func hint(err error) error {
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return fmt.Errorf("%w (run Migrate first)", err)
	}
	return err
}

// Claim implements idem.Backend.
func (b *Backend) Claim(ctx context.Context, key string, c idem.Claim) (idem.Record, error) {
	// Fast path: a live record is answered by a read, without the write lock.
	now := b.now().UnixMilli()
	if r, ok, err := readRow(ctx, b.db, key); err != nil {
		return idem.Record{}, err
	} else if ok && r.until > now {
		return r.record(), nil
	}

	unlock, err := b.lockWrite(ctx)
	if err != nil {
		return idem.Record{}, err
	}
	defer unlock()
	tx, err := b.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE under Open's DSN
	if err != nil {
		return idem.Record{}, hint(err)
	}
	defer tx.Rollback()
	now = b.now().UnixMilli()
	until := now + c.Lease.Milliseconds()
	res, err := tx.ExecContext(ctx, `INSERT INTO idem_keys (idem_key, params, state, token, until_ms, created_ms, updated_ms)
		VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (idem_key) DO NOTHING`, key, c.Params, c.Token, until, now, now)
	if err != nil {
		return idem.Record{}, hint(err)
	}
	owned := idem.Record{State: idem.Pending, Params: c.Params, Owned: true}
	if n, _ := res.RowsAffected(); n == 1 {
		return owned, hint(tx.Commit())
	}
	r, ok, err := readRow(ctx, tx, key)
	if err != nil || !ok {
		// !ok cannot happen inside the immediate transaction; say so if it does.
		return idem.Record{}, errors.Join(err, errors.New("key vanished inside a transaction"))
	}
	switch {
	case r.state == stateDone && r.until <= now: // expired: the key is free
		res, err = tx.ExecContext(ctx, `UPDATE idem_keys SET params = ?, state = 1, token = ?, until_ms = ?, result = NULL, failed = 0, created_ms = ?, updated_ms = ?
			WHERE idem_key = ? AND state = 2 AND until_ms <= ?`, c.Params, c.Token, until, now, now, key, now)
	case r.state == statePending && r.until <= now && r.params == c.Params: // holder died
		res, err = tx.ExecContext(ctx, `UPDATE idem_keys SET token = ?, until_ms = ?, updated_ms = ?
			WHERE idem_key = ? AND state = 1 AND until_ms <= ? AND params = ?`, c.Token, until, now, key, now, c.Params)
		owned.Abandoned = true
	default:
		return r.record(), hint(tx.Commit())
	}
	if err != nil {
		return idem.Record{}, hint(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return idem.Record{}, errors.New("guarded takeover matched no row inside a transaction")
	}
	return owned, hint(tx.Commit())
}

// Extend implements idem.Backend.
func (b *Backend) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	unlock, err := b.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	now := b.now().UnixMilli()
	return b.held(b.db.ExecContext(ctx, `UPDATE idem_keys SET until_ms = ?, updated_ms = ? WHERE idem_key = ? AND state = 1 AND token = ?`,
		now+lease.Milliseconds(), now, key, token))
}

// Complete implements idem.Backend.
func (b *Backend) Complete(ctx context.Context, key, token string, out idem.Outcome, ttl time.Duration) error {
	unlock, err := b.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	now := b.now().UnixMilli()
	result := out.Result
	if result == nil {
		result = []byte{}
	}
	return b.held(b.db.ExecContext(ctx, `UPDATE idem_keys SET state = 2, token = NULL, until_ms = ?, result = ?, failed = ?, updated_ms = ?
		WHERE idem_key = ? AND state = 1 AND token = ?`, now+ttl.Milliseconds(), result, out.Failed, now, key, token))
}

func (b *Backend) held(res sql.Result, err error) error {
	if err != nil {
		return hint(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return idem.ErrLeaseLost
	}
	return nil
}

// Release implements idem.Backend.
func (b *Backend) Release(ctx context.Context, key, token string) error {
	unlock, err := b.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = b.db.ExecContext(ctx, `DELETE FROM idem_keys WHERE idem_key = ? AND state = 1 AND token = ?`, key, token)
	return hint(err)
}

// Purge implements idem.Backend.
func (b *Backend) Purge(ctx context.Context) (int64, error) {
	unlock, err := b.lockWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	res, err := b.db.ExecContext(ctx, `DELETE FROM idem_keys WHERE state = 2 AND until_ms <= ?`, b.now().UnixMilli())
	if err != nil {
		return 0, hint(err)
	}
	return res.RowsAffected()
}
