package sqlite_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem/sqlite"
)

// TestMigrateWhileAnotherProcessMigrates: Migrate is documented as safe to
// run concurrently from several processes, and New takes any handle of the
// driver, not only Open's (whose transactions are BEGIN IMMEDIATE). On a
// handle with the driver's default, deferred, transactions, Migrate used to
// SELECT whether a version was applied and then apply it in the same
// transaction: when another process applied it in between, the read
// snapshot was stale and the first write failed with SQLITE_BUSY, so
// Migrate failed (agentidem-vet flagged that check-then-insert at
// sqlite.go; SQLite's serializable transactions and the version's primary
// key kept it from applying twice, but not from failing). The claim is now
// an INSERT ... ON CONFLICT DO NOTHING, the transaction's first statement:
// it waits for the other writer and then finds the version taken. The hook
// runs the other process's whole Migrate right after a check on
// idem_schema_migrations returns, which is the losing interleaving, made
// every time; the fixed code runs no such check, and the other Migrate
// runs after it.
func TestMigrateWhileAnotherProcessMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.db")
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	var once sync.Once
	var otherErr error
	hooked := false
	db := hookedDB(t, "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", func(query string) {
		if strings.Contains(query, "FROM idem_schema_migrations") {
			once.Do(func() { hooked, otherErr = true, other.Migrate(ctx) })
		}
	})
	if err := sqlite.New(db).Migrate(ctx); err != nil {
		t.Fatalf("Migrate while another process migrated (between its check and its write: %v): %v", hooked, err)
	}
	if otherErr != nil {
		t.Fatalf("the other process's Migrate: %v", otherErr)
	}
	if err := other.Migrate(ctx); err != nil {
		t.Fatalf("the other process's Migrate after: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM idem_schema_migrations`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("recorded migrations = %d, %v; want 1", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM idem_keys`).Scan(&n); err != nil {
		t.Fatalf("the migration's table: %v", err)
	}
}

// hookedDB opens dsn with the "sqlite" driver through a connector that
// calls after(query) when the rows of a query are closed (by then its
// transaction has read the database).
func hookedDB(tb testing.TB, dsn string, after func(query string)) *sql.DB {
	tb.Helper()
	plain, err := sql.Open("sqlite", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	drv := plain.Driver()
	plain.Close()
	db := sql.OpenDB(hookConnector{drv: drv, dsn: dsn, after: after})
	tb.Cleanup(func() { db.Close() })
	return db
}

type hookConnector struct {
	drv   driver.Driver
	dsn   string
	after func(string)
}

func (c hookConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return hookConn{Conn: conn, after: c.after}, nil
}

func (c hookConnector) Driver() driver.Driver { return c.drv }

// hookConn passes everything to the driver's connection; the driver's
// connection implements these interfaces (database/sql would otherwise
// fall back to Prepare and Begin).
type hookConn struct {
	driver.Conn
	after func(string)
}

func (c hookConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c hookConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c hookConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return hookRows{Rows: rows, close: func() { c.after(query) }}, nil
}

type hookRows struct {
	driver.Rows
	close func()
}

func (r hookRows) Close() error {
	err := r.Rows.Close()
	r.close()
	return err
}
