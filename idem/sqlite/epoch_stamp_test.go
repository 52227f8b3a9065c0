package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// Agents whose State holds a moment stored as a number: created_ms from
// time.Now().UnixMilli(), SQLite's unixepoch(), seconds with a fraction.
// Compared across runs, the baseline's moment against the run's read as
// a change: a create-if-absent was a duplicate_write in
// duplicate_delivery/concurrent on every run (whole seconds: 7 runs in
// 200, where the two runs straddled a second), and a payment agent that
// rolls back and retries failed six scenarios (red team, /tmp/rtK section
// 1, idem/sqlite/rtk/stamp and txpay). What really happens twice beside
// such a stamp (an event logged twice, a balance doubled, a counter
// incremented twice) is still caught.

const stampSchema = `
DROP TABLE IF EXISTS subscribers; DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS accounts;
CREATE TABLE subscribers (email TEXT PRIMARY KEY, list TEXT NOT NULL, created NUMERIC NOT NULL);
CREATE TABLE events (id INTEGER PRIMARY KEY, email TEXT NOT NULL, kind TEXT NOT NULL, at_ms INTEGER NOT NULL);
CREATE TABLE accounts (id TEXT PRIMARY KEY, cents INTEGER NOT NULL, visits INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
INSERT INTO accounts VALUES ('a1', 1250, 41, 0);`

var (
	subscribeOp = &runtime.Op{Name: "subscribe", Kind: runtime.KindWrite, Params: []string{"email"}}
	logEventOp  = &runtime.Op{Name: "log_event", Kind: runtime.KindWrite, Params: []string{"email", "kind"}}
	doubleOp    = &runtime.Op{Name: "double_balance", Kind: runtime.KindWrite, Params: []string{"account"}}
	visitOp     = &runtime.Op{Name: "count_visit", Kind: runtime.KindWrite, Params: []string{"account"}}
)

// retried calls f up to three times while it fails, as an agent's tool
// loop does.
func retried(ctx context.Context, f func() error) error {
	var err error
	for range 3 {
		if err = f(); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// rowsState is a State of every row of tables, each row a list of its
// columns' values as the driver scanned them (INTEGER as int64, REAL as
// float64).
func rowsState(db *sql.DB, tables ...string) func() any {
	return func() any {
		out := map[string][][]any{}
		for _, table := range tables {
			rows, err := queryRows(db, `SELECT * FROM `+table+` ORDER BY 1`)
			if err != nil {
				return err.Error()
			}
			if len(rows) > 0 {
				out[table] = rows
			}
		}
		return out
	}
}

// queryRows runs q and returns its rows, each a list of its columns'
// values as the driver scanned them.
func queryRows(db *sql.DB, q string) ([][]any, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rows.Scan(ptrs...)
		out = append(out, vals)
	}
	return out, nil
}

// stampSuite runs agent against a fresh database of stampSchema, with
// State the rows of the tables.
func stampSuite(t *testing.T, agent func(context.Context, *sql.DB) error, tables ...string) *runtime.Report {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "s.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return testkit.Run(t, func(ctx context.Context) error { return agent(ctx, db) }, testkit.NoSummary(),
		testkit.Setup(func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, stampSchema)
			return err
		}),
		testkit.State(rowsState(db, tables...)))
}

// findings returns "scenario: code op" of every finding of rep, sorted.
func findings(rep *runtime.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Scenario+": "+f.Code+" "+strings.Join(f.Ops, ","))
	}
	sort.Strings(out)
	return out
}

// subscribe adds email to a list if absent, stamping the first
// subscription with the SQL expression stamp (bound to arg where it is a
// parameter).
func subscribe(ctx context.Context, db *sql.DB, stamp string, arg ...any) error {
	return tracedWrite(ctx, subscribeOp, []any{"ada@example.com"}, func(ctx context.Context) error {
		_, err := db.ExecContext(ctx, `INSERT INTO subscribers (email, list, created) VALUES ('ada@example.com', 'news', `+stamp+`) ON CONFLICT (email) DO NOTHING`, arg...)
		return err
	})
}

// A create-if-absent that stamps what it creates, in the units and
// clocks agents use, is safe: the first subscription is kept, and the
// run's moment against the baseline's is no change. Whole seconds
// flipped when the two runs straddled a second; here every execution
// stamps another second (the clock moved on by one between any two), so
// the case that flipped 7 runs in 200 is played on every run.
func TestACreateIfAbsentStampedWithANumberIsSafe(t *testing.T) {
	var tick atomic.Int64
	for _, c := range []struct {
		name  string
		stamp func(ctx context.Context, db *sql.DB) error
	}{
		{"UnixMilli", func(ctx context.Context, db *sql.DB) error {
			return subscribe(ctx, db, `?`, time.Now().UnixMilli())
		}},
		{"UnixNano", func(ctx context.Context, db *sql.DB) error {
			return subscribe(ctx, db, `?`, time.Now().UnixNano())
		}},
		{"unixepoch ms", func(ctx context.Context, db *sql.DB) error {
			return subscribe(ctx, db, `CAST(unixepoch('subsec')*1000 AS INTEGER)`)
		}},
		{"unixepoch", func(ctx context.Context, db *sql.DB) error {
			return subscribe(ctx, db, `unixepoch()`)
		}},
		{"unixepoch subsec", func(ctx context.Context, db *sql.DB) error {
			return subscribe(ctx, db, `unixepoch('subsec')`)
		}},
		{"seconds, another each time", func(ctx context.Context, db *sql.DB) error {
			return subscribe(ctx, db, `?`, time.Now().Unix()+tick.Add(1))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := stampSuite(t, func(ctx context.Context, db *sql.DB) error {
				return retried(ctx, func() error { return c.stamp(ctx, db) })
			}, "subscribers")
			if !rep.BaselineSucceeded {
				t.Fatalf("baseline failed: %v", findings(rep))
			}
			if f := findings(rep); len(f) != 0 {
				t.Errorf("a moment stored as a number read as a change: %v", f)
			}
		})
	}
}

// Beside such a stamp, what the repeat really does twice is caught, in
// every scenario that repeats it: an event logged twice (and it alone, not
// the subscription before it, which the red team saw reported first with
// the real duplicate "following from it"), a balance doubled from a value
// far from now, a counter incremented twice, each stamped in milliseconds.
func TestWhatARepeatDoesTwiceBesideANumberStampIsCaught(t *testing.T) {
	for _, c := range []struct {
		name   string
		agent  func(ctx context.Context, db *sql.DB) error
		tables []string
		op     string
	}{
		{"event logged twice", func(ctx context.Context, db *sql.DB) error {
			if err := retried(ctx, func() error { return subscribe(ctx, db, `?`, time.Now().UnixMilli()) }); err != nil {
				return err
			}
			return retried(ctx, func() error {
				return tracedWrite(ctx, logEventOp, []any{"ada@example.com", "welcome"}, func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, `INSERT INTO events (email, kind, at_ms) VALUES ('ada@example.com', 'welcome', ?)`, time.Now().UnixMilli())
					return err
				})
			})
		}, []string{"subscribers", "events"}, "log_event"},
		{"balance doubled", func(ctx context.Context, db *sql.DB) error {
			return retried(ctx, func() error {
				return tracedWrite(ctx, doubleOp, []any{"a1"}, func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, `UPDATE accounts SET cents = cents * 2, updated_ms = ? WHERE id = 'a1'`, time.Now().UnixMilli())
					return err
				})
			})
		}, []string{"accounts"}, "double_balance"},
		{"counter incremented", func(ctx context.Context, db *sql.DB) error {
			return retried(ctx, func() error {
				return tracedWrite(ctx, visitOp, []any{"a1"}, func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, `UPDATE accounts SET visits = visits + 1, updated_ms = CAST(unixepoch('subsec')*1000 AS INTEGER) WHERE id = 'a1'`)
					return err
				})
			})
		}, []string{"accounts"}, "count_visit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := stampSuite(t, c.agent, c.tables...)
			if !rep.BaselineSucceeded {
				t.Fatalf("baseline failed: %v", findings(rep))
			}
			f := findings(rep)
			for _, s := range []string{"lost_acknowledgement/" + c.op + "#1", "duplicate_delivery/sequential", "duplicate_delivery/concurrent"} {
				if !slices.Contains(f, s+": duplicate_write "+c.op) {
					t.Errorf("no duplicate_write of %s in %s: %v", c.op, s, f)
				}
			}
			for _, rep := range rep.Findings {
				if strings.Join(rep.Ops, ",") != c.op {
					t.Errorf("a finding on %v, which no repeat changed: %s: %s", rep.Ops, rep.Code, rep.Message)
				}
			}
		})
	}
}

var (
	stampIsPaidOp        = &runtime.Op{Name: "is_paid", Kind: runtime.KindRead, Params: []string{"order"}}
	stampInsertPaymentOp = &runtime.Op{Name: "insert_payment", Kind: runtime.KindWrite, Params: []string{"order"}}
	stampMarkPaidOp      = &runtime.Op{Name: "mark_paid", Kind: runtime.KindWrite, Params: []string{"order"}}
)

const payStampSchema = `DROP TABLE IF EXISTS payments; DROP TABLE IF EXISTS orders;
CREATE TABLE payments (id INTEGER PRIMARY KEY, order_id TEXT NOT NULL, cents INTEGER NOT NULL, paid_ms INTEGER NOT NULL);
CREATE TABLE orders (id TEXT PRIMARY KEY, paid INTEGER NOT NULL);
INSERT INTO orders VALUES ('o-1', 0);`

// payInTx pays order o-1 in one transaction per attempt: it checks the
// order, inserts a payment stamped in milliseconds, marks the order paid
// and commits; an error rolls the attempt back, unless commitFailed (the
// bug: it commits what the attempt did, then retries).
func payInTx(ctx context.Context, db *sql.DB, commitFailed bool) error {
	var err error
	for range 2 {
		var tx *sql.Tx
		if tx, err = db.BeginTx(ctx, nil); err != nil {
			return err
		}
		paid := false
		err = tracedWrite(ctx, stampIsPaidOp, []any{"o-1"}, func(ctx context.Context) error {
			var p int
			err := tx.QueryRowContext(ctx, `SELECT paid FROM orders WHERE id = 'o-1'`).Scan(&p)
			paid = p > 0
			return err
		})
		if err == nil && paid {
			return tx.Rollback()
		}
		if err == nil {
			err = tracedWrite(ctx, stampInsertPaymentOp, []any{"o-1"}, func(ctx context.Context) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO payments (order_id, cents, paid_ms) VALUES ('o-1', 1250, ?)`, time.Now().UnixMilli())
				return err
			})
		}
		if err == nil {
			err = tracedWrite(ctx, stampMarkPaidOp, []any{"o-1"}, func(ctx context.Context) error {
				_, err := tx.ExecContext(ctx, `UPDATE orders SET paid = 1 WHERE id = 'o-1'`)
				return err
			})
		}
		if err == nil {
			return tx.Commit()
		}
		if commitFailed {
			tx.Commit()
		} else {
			tx.Rollback()
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}

// A payment agent that rolls each attempt back and retries is safe with
// its payment's paid_ms in State, as it is without it; the buggy twin that
// commits a failed attempt has the same duplicate_write findings, in the
// same scenarios, with the stamp and without (red team: the correct agent
// failed six scenarios, the buggy one had two more in crash_restart).
func TestAPaymentStampedInMillisecondsIsJudgedAsWithoutTheStamp(t *testing.T) {
	run := func(t *testing.T, commitFailed, stamp bool) []string {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "p.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		cols := "id, order_id, cents"
		if stamp {
			cols += ", paid_ms"
		}
		rep := testkit.Run(t, func(ctx context.Context) error { return payInTx(ctx, db, commitFailed) }, testkit.NoSummary(),
			testkit.Setup(func(ctx context.Context) error {
				_, err := db.ExecContext(ctx, payStampSchema)
				return err
			}),
			testkit.State(func() any {
				out := map[string]any{}
				var paid int
				db.QueryRow(`SELECT paid FROM orders WHERE id = 'o-1'`).Scan(&paid)
				out["paid"] = paid
				rows, err := db.Query(`SELECT ` + cols + ` FROM payments ORDER BY id`)
				if err != nil {
					return err.Error()
				}
				defer rows.Close()
				var ps [][]any
				for rows.Next() {
					vals := make([]any, strings.Count(cols, ",")+1)
					ptrs := make([]any, len(vals))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					rows.Scan(ptrs...)
					ps = append(ps, vals)
				}
				out["payments"] = ps
				return out
			}))
		if !rep.BaselineSucceeded {
			t.Fatalf("baseline failed: %v", findings(rep))
		}
		return findings(rep)
	}
	t.Run("rolled back", func(t *testing.T) {
		if f := run(t, false, true); len(f) != 0 {
			t.Errorf("paid_ms read as a change: %v", f)
		}
	})
	t.Run("commit failed", func(t *testing.T) {
		with, without := run(t, true, true), run(t, true, false)
		if !slices.Contains(with, "lost_acknowledgement/insert_payment#1: duplicate_write insert_payment") {
			t.Errorf("the payment made twice was not caught: %v", with)
		}
		if !slices.Equal(with, without) {
			t.Errorf("with paid_ms %v, without %v", with, without)
		}
	})
}
