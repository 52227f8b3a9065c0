package postgres_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/idem/idemtest"
	"github.com/agentidem/agentidem-go/idem/postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const dsnEnv = "AGENTIDEM_PG_DSN"

// dsn returns the test database, skipping locally and failing in CI when
// it is not set.
func dsn(tb testing.TB) string {
	tb.Helper()
	d := os.Getenv(dsnEnv)
	if d == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not set in CI: .ci/run must source .ci/postgres.sh", dsnEnv)
		}
		tb.Skipf("%s is not set: run `source .ci/postgres.sh` (as root, on Debian) to start a local PostgreSQL", dsnEnv)
	}
	return d
}

// open opens a migrated backend.
func open(tb testing.TB) *postgres.Backend {
	tb.Helper()
	b, err := postgres.Open(context.Background(), dsn(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(b.Close)
	if err := b.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestContract(t *testing.T) {
	shared := open(t)
	idemtest.Run(t, func(t *testing.T) idem.Backend { return shared })
}

func TestMigrateIsIdempotentAndRequired(t *testing.T) {
	ctx := context.Background()
	b, err := postgres.Open(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// A fresh schema, so the test sees the database before its first Migrate.
	schema := "idem_migrate_test_" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "_"))
	if _, err := b.Pool().Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Pool().Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sb := postgres.New(pool)
	_, err = sb.Claim(ctx, "k", idem.Claim{Token: "t", Params: "p", Lease: time.Second})
	if err == nil || !strings.Contains(err.Error(), "Migrate") {
		t.Fatalf("Claim before Migrate: %v; want an error that says to run Migrate", err)
	}
	for i := 0; i < 2; i++ {
		if err := sb.Migrate(ctx); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
	}
	var n int
	// Two migrations: the table, and the trigger that notifies waiters.
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM idem_schema_migrations`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("recorded migrations = %d, %v; want 2", n, err)
	}
	if rec, err := sb.Claim(ctx, "k", idem.Claim{Token: "t", Params: "p", Lease: time.Second}); err != nil || !rec.Owned {
		t.Fatalf("Claim after Migrate = %+v, %v", rec, err)
	}
}

// TestTwoPoolsOneDatabase runs the 64x50 load through two pools, as two
// processes would share the database.
func TestTwoPoolsOneDatabase(t *testing.T) {
	s1, s2 := idem.New(open(t), idem.WithPollInterval(2*time.Millisecond)), idem.New(open(t), idem.WithPollInterval(2*time.Millisecond))
	key := idemtest.NewKey(t)
	var turn atomic.Int64
	st := idemtest.Hammer(t, idemtest.Goroutines, idemtest.Attempts, idemtest.Work, func(ctx context.Context, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
		s := s1
		if turn.Add(1)%2 == 0 {
			s = s2
		}
		return s.Do(ctx, key, "p", fn)
	})
	t.Logf("idem.Do on PostgreSQL through two pools, %d goroutines x %d attempts on one key: %v", idemtest.Goroutines, idemtest.Attempts, st)
	idemtest.CheckExactlyOnce(t, st)
}

// naive is the check-then-insert that idem replaces, on the same database:
// SELECT the key, and when absent run the work and INSERT the result. The
// table has no unique constraint, as in the code this package fixes.
type naive struct{ pool *pgxpool.Pool }

func newNaive(tb testing.TB, pool *pgxpool.Pool) *naive {
	if _, err := pool.Exec(context.Background(), `CREATE TABLE IF NOT EXISTS naive_keys (k text NOT NULL, result bytea);
		CREATE INDEX IF NOT EXISTS naive_keys_k ON naive_keys (k)`); err != nil {
		tb.Fatal(err)
	}
	return &naive{pool: pool}
}

func (n *naive) do(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
	var r []byte
	err := n.pool.QueryRow(ctx, `SELECT result FROM naive_keys WHERE k = $1 LIMIT 1`, key).Scan(&r)
	if err == nil {
		return r, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, err
	}
	if r, err = fn(ctx); err != nil {
		return nil, false, err
	}
	//agentidem:ignore seeded bug: the control TestNaiveCheckThenInsertDuplicates must duplicate
	_, err = n.pool.Exec(ctx, `INSERT INTO naive_keys (k, result) VALUES ($1, $2)`, key, r)
	return r, false, err
}

func TestNaiveCheckThenInsertDuplicates(t *testing.T) {
	n := newNaive(t, open(t).Pool())
	key := idemtest.NewKey(t)
	st := idemtest.Hammer(t, idemtest.Goroutines, idemtest.Attempts, idemtest.Work, func(ctx context.Context, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
		return n.do(ctx, key, fn)
	})
	t.Logf("naive check-then-insert on PostgreSQL, %d goroutines x %d attempts on one key: %v", idemtest.Goroutines, idemtest.Attempts, st)
	if st.Executions < 2 {
		t.Fatalf("control did not duplicate (%v): the load is too weak to prove anything", st)
	}
}

// sink records effects in a table of the same database.
type sink struct{ pool *pgxpool.Pool }

func (s sink) Apply(ctx context.Context, key string, result []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO idem_test_effects (k, result) VALUES ($1, $2)`, key, result)
	return err
}

func (s sink) Find(ctx context.Context, key string) ([]byte, bool, error) {
	var r []byte
	err := s.pool.QueryRow(ctx, `SELECT result FROM idem_test_effects WHERE k = $1 ORDER BY id LIMIT 1`, key).Scan(&r)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return r, err == nil, err
}

func (s sink) Count(ctx context.Context, key string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM idem_test_effects WHERE k = $1`, key).Scan(&n)
	return n, err
}

func TestCrashRecovery(t *testing.T) {
	idemtest.CrashRecovery(t, idemtest.Crash{
		Test: "TestCrashRecovery",
		Open: func(t *testing.T) (idem.Backend, idemtest.Sink) {
			b := open(t)
			if _, err := b.Pool().Exec(context.Background(), `CREATE TABLE IF NOT EXISTS idem_test_effects (
				id bigserial PRIMARY KEY, k text NOT NULL, result bytea)`); err != nil {
				t.Fatal(err)
			}
			return b, sink{b.Pool()}
		},
	})
}

func BenchmarkPostgres(b *testing.B) {
	bk := open(b)
	s := idem.New(bk, idem.WithPollInterval(2*time.Millisecond))
	n := newNaive(b, bk.Pool())
	idemtest.Benchmarks(b, "",
		idemtest.Impl{Name: "idem", Do: func(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
			return s.Do(ctx, key, nil, fn)
		}},
		idemtest.Impl{Name: "naive", Do: n.do},
	)
}

// BenchmarkPostgresWait measures how soon a call waiting for a held key
// returns after the holder finishes, with the default poll interval:
// poll hides the backend's Watcher (polling alone, as before LISTEN/NOTIFY),
// notify uses it.
func BenchmarkPostgresWait(b *testing.B) {
	bk := open(b)
	stores := []struct {
		name string
		s    *idem.Store
	}{
		{"poll", idem.New(struct{ idem.Backend }{bk})},
		{"notify", idem.New(bk)},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			idemtest.WaitLatency(b, func(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
				return st.s.Do(ctx, key, nil, fn)
			})
		})
	}
}

// TestSuite: the fault suite's verdicts on agents that use a Store on
// PostgreSQL (idemtest.Suite: crash_restart and stale keys; a red team's
// rtM P3 and P4 were found here).
func TestSuite(t *testing.T) {
	shared := open(t)
	idemtest.Suite(t, func(t *testing.T) idem.Backend { return shared })
}
