package postgres_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// Tables whose sequence numbers rows in a column not named id, as
// PostgreSQL schemas usually name them: an invoice's number, a tag's
// tag_id primary key. A transaction rolled back and retried, and an
// insert that met its conflict (ON CONFLICT DO NOTHING), use up a number:
// the run's rows are numbered past the baseline's. Both agents below were
// UNSAFE on every run, where the same tables with the column named id were
// SAFE (red team, /tmp/rtM P2 TestInvoiceRolledBack, P5 TestTagsTagID).

const ncSchema = `
CREATE TABLE IF NOT EXISTS agentidem_nc_invoices (order_id TEXT NOT NULL UNIQUE, number BIGSERIAL, cents INT NOT NULL);
CREATE TABLE IF NOT EXISTS agentidem_nc_plain_invoices (order_id TEXT NOT NULL, number BIGSERIAL, cents INT NOT NULL);
CREATE TABLE IF NOT EXISTS agentidem_nc_tags (tag_id BIGSERIAL PRIMARY KEY, post TEXT NOT NULL, tag TEXT NOT NULL, UNIQUE (post, tag));
CREATE TABLE IF NOT EXISTS agentidem_nc_plain_tags (tag_id BIGSERIAL PRIMARY KEY, post TEXT NOT NULL, tag TEXT NOT NULL);
`

func ncDB(t *testing.T) *sql.DB {
	t.Helper()
	db := seqDB(t)
	if _, err := db.Exec(ncSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

func ncOptions(db *sql.DB) []testkit.Option {
	tables := map[string]string{
		"agentidem_nc_invoices":       "number",
		"agentidem_nc_plain_invoices": "number",
		"agentidem_nc_tags":           "tag_id",
		"agentidem_nc_plain_tags":     "tag_id",
	}
	return []testkit.Option{
		testkit.Setup(func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, `TRUNCATE agentidem_nc_invoices, agentidem_nc_plain_invoices, agentidem_nc_tags, agentidem_nc_plain_tags RESTART IDENTITY`)
			return err
		}),
		testkit.State(func() any {
			out := map[string]any{}
			for tab, col := range tables {
				var j sql.NullString
				if err := db.QueryRow(`SELECT jsonb_agg(to_jsonb(t) ORDER BY ` + col + `) FROM ` + tab + ` t`).Scan(&j); err != nil {
					return err.Error()
				}
				out[tab] = json("[]")
				if j.Valid {
					out[tab] = json(j.String)
				}
			}
			return out
		}),
		testkit.NoSummary(),
	}
}

var (
	createInvoice = &runtime.Op{Name: "createInvoice", Kind: runtime.KindWrite, Params: []string{"order", "cents"}}
	addTag        = &runtime.Op{Name: "addTag", Kind: runtime.KindWrite, Params: []string{"post", "tag"}}
)

// invoiceAgent creates ORD-1's invoice in a transaction, after looking it
// up; any error rolls the attempt back and it is tried again. The buggy
// one commits the failed attempt, in a table with no unique order.
func invoiceAgent(db *sql.DB, buggy bool) func(ctx context.Context) error {
	table := "agentidem_nc_invoices"
	if buggy {
		table = "agentidem_nc_plain_invoices"
	}
	return func(ctx context.Context) error {
		return retry(ctx, func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			var exists bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE order_id = $1)`, "ORD-1").Scan(&exists); err != nil || exists {
				return err
			}
			cerr := call(ctx, createInvoice, []any{"ORD-1", 500}, 1, func(ctx context.Context) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (order_id, cents) VALUES ($1, $2)`, "ORD-1", 500)
				return err
			})
			if cerr != nil && !buggy {
				return cerr
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			return cerr
		})
	}
}

// tagAgent adds two tags to one post in one turn, in parallel, each
// retried: ON CONFLICT DO NOTHING, or (buggy) a plain insert.
func tagAgent(db *sql.DB, buggy bool) func(ctx context.Context) error {
	q := `INSERT INTO agentidem_nc_tags (post, tag) VALUES ($1, $2) ON CONFLICT (post, tag) DO NOTHING`
	if buggy {
		q = `INSERT INTO agentidem_nc_plain_tags (post, tag) VALUES ($1, $2)`
	}
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, tag := range []string{"go", "sql"} {
			wg.Go(func() {
				errs[i] = retry(ctx, func() error {
					return callOn(ctx, addTag, []any{"post-1", tag}, func(ctx context.Context) error {
						_, err := db.ExecContext(ctx, q, "post-1", tag)
						return err
					})
				})
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// callOn is call for a write whose identity is all its arguments, on the
// entity its first names (a tag of a post: two tags of one post are two
// writes of one entity, explored in both orders).
func callOn(ctx context.Context, op *runtime.Op, args []any, fn func(ctx context.Context) error) (err error) {
	if !runtime.Enabled() {
		return fn(ctx)
	}
	c, cctx := runtime.Begin(ctx, op, args, args, args[:1])
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = fn(cctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

func TestRowsNumberedInAColumnNotNamedID(t *testing.T) {
	db := ncDB(t)
	for _, c := range []struct {
		name  string
		agent func(*sql.DB, bool) func(context.Context) error
	}{{"invoice number, rolled back", invoiceAgent}, {"tag_id, parallel inserts", tagAgent}} {
		for _, buggy := range []bool{false, true} {
			rep := testkit.Run(t, c.agent(db, buggy), ncOptions(db)...)
			if !rep.BaselineSucceeded {
				t.Fatalf("%s: baseline failed: %s", c.name, rep.BaselineFailure)
			}
			dup := codes(rep)[runtime.CodeDuplicateWrite]
			if dup != buggy || rep.Safe == buggy {
				t.Errorf("%s, buggy=%v: duplicate_write %v, safe %v; findings: %v", c.name, buggy, dup, rep.Safe, rep.Findings)
			}
			if !buggy && codes(rep)[runtime.CodeConcurrentWritesEntity] {
				t.Errorf("%s: two inserts that commute are concurrent writes: %v", c.name, rep.Findings)
			}
		}
	}
}
