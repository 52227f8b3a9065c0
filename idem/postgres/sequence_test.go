package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// Rows numbered by a BIGSERIAL, as an agent's tools write them through
// database/sql: the suite judges a repeat by the state, and a sequence
// hands out a number that a rolled back transaction, or an upsert that
// met its conflict, used up. The run then ends with the baseline's rows
// under other numbers: no second effect, and no finding. These agents
// were found UNSAFE (a false duplicate_write) on every run before the end
// state's comparison left such numbers out.

const seqSchema = `
CREATE TABLE IF NOT EXISTS agentidem_seq_accounts (id TEXT PRIMARY KEY, balance INT NOT NULL);
CREATE TABLE IF NOT EXISTS agentidem_seq_payments (id BIGSERIAL PRIMARY KEY, account TEXT NOT NULL, ref TEXT NOT NULL, amount INT NOT NULL);
CREATE TABLE IF NOT EXISTS agentidem_seq_lines (id BIGSERIAL PRIMARY KEY, order_id BIGINT NOT NULL, sku TEXT NOT NULL, qty INT NOT NULL, UNIQUE (order_id, sku));
CREATE TABLE IF NOT EXISTS agentidem_seq_plain_lines (id BIGSERIAL PRIMARY KEY, order_id BIGINT NOT NULL, sku TEXT NOT NULL, qty INT NOT NULL);
`

// seqDB opens the test database through database/sql, with the tables
// above made.
func seqDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(seqSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

// seqSetup empties the tables and starts their sequences again, before
// every scenario: each starts from one world.
func seqSetup(db *sql.DB) testkit.Option {
	return testkit.Setup(func(ctx context.Context) error {
		if _, err := db.ExecContext(ctx, `TRUNCATE agentidem_seq_accounts, agentidem_seq_payments, agentidem_seq_lines, agentidem_seq_plain_lines RESTART IDENTITY`); err != nil {
			return err
		}
		_, err := db.ExecContext(ctx, `INSERT INTO agentidem_seq_accounts VALUES ('acct-1', 1000)`)
		return err
	})
}

// seqState is the world: every row of the tables, with its id.
func seqState(db *sql.DB) testkit.Option {
	return testkit.State(func() any {
		out := map[string]any{}
		for _, tab := range []string{"agentidem_seq_accounts", "agentidem_seq_payments", "agentidem_seq_lines", "agentidem_seq_plain_lines"} {
			rows, err := db.Query(`SELECT to_jsonb(t) FROM ` + tab + ` t ORDER BY id`)
			if err != nil {
				return err.Error()
			}
			var all []json
			for rows.Next() {
				var j json
				if err := rows.Scan(&j); err != nil {
					rows.Close()
					return err.Error()
				}
				all = append(all, j)
			}
			rows.Close()
			out[tab] = all
		}
		return out
	})
}

// json is a row as PostgreSQL encodes it (to_jsonb), kept as text.
type json string

func (j json) MarshalJSON() ([]byte, error) { return []byte(j), nil }

func (j *json) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		*j = json(v)
	case string:
		*j = json(v)
	default:
		return fmt.Errorf("json: %T", src)
	}
	return nil
}

// querier is what the tools run their statements on: the agent's
// transaction, or the pool.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// call is what agentidem-gen writes around a tool (one result: an error).
func call(ctx context.Context, op *runtime.Op, args []any, identity int, fn func(ctx context.Context) error) (err error) {
	if !runtime.Enabled() {
		return fn(ctx)
	}
	c, cctx := runtime.Begin(ctx, op, args, args[:identity:identity], nil)
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

var (
	lockAccount    = &runtime.Op{Name: "lockAccount", Kind: runtime.KindRead, Params: []string{"account"}}
	findPayment    = &runtime.Op{Name: "findPayment", Kind: runtime.KindRead, Params: []string{"ref"}}
	insertPayment  = &runtime.Op{Name: "insertPayment", Kind: runtime.KindWrite, Params: []string{"ref", "account", "amount"}}
	debit          = &runtime.Op{Name: "debit", Kind: runtime.KindWrite, Params: []string{"account", "ref", "amount"}}
	upsertLine     = &runtime.Op{Name: "upsertLine", Kind: runtime.KindWrite, Params: []string{"orderID", "sku", "qty"}}
	insertLine     = &runtime.Op{Name: "insertLine", Kind: runtime.KindWrite, Params: []string{"orderID", "sku", "qty"}}
	errNotFinished = errors.New("attempts exhausted")
)

// retry calls f until it succeeds, up to 5 times, with a short pause.
func retry(ctx context.Context, f func() error) error {
	for range 5 {
		if err := f(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return errNotFinished
}

// payAgent pays pay-1 in one transaction: lock the account, look the
// payment up, insert it, debit; any error rolls the attempt back, and the
// agent tries again. The buggy one does not look the payment up: a
// delivery made again pays again.
func payAgent(db *sql.DB, lookup bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return retry(ctx, func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := attempt(ctx, tx, lookup); err != nil {
				return err
			}
			return tx.Commit()
		})
	}
}

func attempt(ctx context.Context, tx querier, lookup bool) error {
	err := call(ctx, lockAccount, []any{"acct-1"}, 1, func(ctx context.Context) error {
		var b int
		return tx.QueryRowContext(ctx, `SELECT balance FROM agentidem_seq_accounts WHERE id = $1 FOR UPDATE`, "acct-1").Scan(&b)
	})
	if err != nil {
		return err
	}
	if lookup {
		found := false
		err = call(ctx, findPayment, []any{"pay-1"}, 1, func(ctx context.Context) error {
			err := tx.QueryRowContext(ctx, `SELECT true FROM agentidem_seq_payments WHERE ref = $1`, "pay-1").Scan(&found)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		})
		if err != nil || found {
			return err
		}
	}
	err = call(ctx, insertPayment, []any{"pay-1", "acct-1", 100}, 1, func(ctx context.Context) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO agentidem_seq_payments (account, ref, amount) VALUES ($1, $2, $3)`, "acct-1", "pay-1", 100)
		return err
	})
	if err != nil {
		return err
	}
	return call(ctx, debit, []any{"acct-1", "pay-1", 100}, 2, func(ctx context.Context) error {
		_, err := tx.ExecContext(ctx, `UPDATE agentidem_seq_accounts SET balance = balance - $1 WHERE id = $2`, 100, "acct-1")
		return err
	})
}

// linesAgent writes two lines of order 1, two of each, retrying each
// tool: as an upsert on (order_id, sku), or (the buggy one) as a plain
// insert.
func linesAgent(db *sql.DB, upsert bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for _, sku := range []string{"apple", "pear"} {
			err := retry(ctx, func() error {
				if upsert {
					return call(ctx, upsertLine, []any{int64(1), sku, 2}, 2, func(ctx context.Context) error {
						_, err := db.ExecContext(ctx, `INSERT INTO agentidem_seq_lines (order_id, sku, qty) VALUES ($1, $2, $3) ON CONFLICT (order_id, sku) DO UPDATE SET qty = EXCLUDED.qty`, 1, sku, 2)
						return err
					})
				}
				return call(ctx, insertLine, []any{int64(1), sku, 2}, 2, func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, `INSERT INTO agentidem_seq_plain_lines (order_id, sku, qty) VALUES ($1, $2, $3)`, 1, sku, 2)
					return err
				})
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func codes(rep *runtime.Report) map[string]bool {
	out := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			out[f.Code] = true
		}
	}
	return out
}

// A payment in a transaction rolled back and retried takes the next
// number of the sequence (the run's payment is row 2, the baseline's row
// 1): judged by the end state, it is the baseline's payment, and the
// suite passes. An agent that does not look the payment up pays again
// when the delivery comes again, and is caught.
func TestPaymentNumberedPastARolledBackAttemptIsNoDuplicate(t *testing.T) {
	db := seqDB(t)
	for _, c := range []struct {
		name  string
		buggy bool
	}{{"looked up", false}, {"no lookup", true}} {
		t.Run(c.name, func(t *testing.T) {
			rep := testkit.Run(t, payAgent(db, !c.buggy), seqSetup(db), seqState(db), testkit.NoSummary())
			if !rep.BaselineSucceeded {
				t.Fatalf("baseline failed: %s", rep.BaselineFailure)
			}
			dup := codes(rep)[runtime.CodeDuplicateWrite]
			if dup != c.buggy {
				t.Errorf("duplicate_write = %v, want %v; findings: %v", dup, c.buggy, rep.Findings)
			}
			if !c.buggy && !rep.Safe {
				t.Errorf("a payment rolled back and retried is unsafe: %v", rep.Findings)
			}
		})
	}
}

// Two deliveries at once upsert one order's lines: an upsert that meets
// its conflict uses up a number of the sequence, so the run's pear line
// is row 3 where the baseline's is row 2, and the agent passed 1 (the
// order) and 2 (the quantity) to its calls, the numbers of the
// baseline's lines by chance. The run left the baseline's lines: no
// finding. Plain inserts leave each line twice and are caught.
func TestUpsertedLinesNumberedPastAConflictAreNoDuplicate(t *testing.T) {
	db := seqDB(t)
	for _, c := range []struct {
		name   string
		upsert bool
	}{{"upsert", true}, {"plain insert", false}} {
		t.Run(c.name, func(t *testing.T) {
			for range 3 { // whether the upserts meet their conflicts depends on the schedule
				rep := testkit.Run(t, linesAgent(db, c.upsert), seqSetup(db), seqState(db), testkit.NoSummary())
				if !rep.BaselineSucceeded {
					t.Fatalf("baseline failed: %s", rep.BaselineFailure)
				}
				dup := codes(rep)[runtime.CodeDuplicateWrite]
				if dup == c.upsert {
					t.Fatalf("duplicate_write = %v, want %v; findings: %v", dup, !c.upsert, rep.Findings)
				}
				if c.upsert && !rep.Safe {
					t.Fatalf("upserted lines are unsafe: %v", rep.Findings)
				}
			}
		})
	}
}
