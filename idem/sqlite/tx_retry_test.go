package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

var (
	insertPaymentOp = &runtime.Op{Name: "insertPayment", Kind: runtime.KindWrite, Params: []string{"order"}}
	markPaidOp      = &runtime.Op{Name: "markPaid", Kind: runtime.KindWrite, Params: []string{"order"}}
)

const txSchema = `DROP TABLE IF EXISTS payments; DROP TABLE IF EXISTS orders;
CREATE TABLE payments (id INTEGER PRIMARY KEY, order_id TEXT NOT NULL);
CREATE TABLE orders (id TEXT PRIMARY KEY, paid INTEGER NOT NULL);
INSERT INTO orders VALUES ('o-1', 0);`

// payOrder is the textbook database/sql pattern: each attempt is one
// transaction, the traced tools write through it, and an error rolls the
// attempt back before the next one starts from nothing. The writes are
// seen by no one (State reads through the *sql.DB) until the untraced
// Commit. The buggy agent commits what the failed attempt did before it
// tries again, so the retry pays a second time.
func payOrder(db *sql.DB, commitFailed bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var err error
		for attempt := 0; attempt < 2; attempt++ {
			var tx *sql.Tx
			if tx, err = db.BeginTx(ctx, nil); err != nil {
				return err
			}
			err = tracedCall(ctx, insertPaymentOp, "o-1", func(ctx context.Context) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO payments (order_id) VALUES (?)`, "o-1")
				return err
			})
			if err == nil {
				err = tracedCall(ctx, markPaidOp, "o-1", func(ctx context.Context) error {
					_, err := tx.ExecContext(ctx, `UPDATE orders SET paid = paid + 1 WHERE id = ?`, "o-1")
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
}

func txState(db *sql.DB) func() any {
	return func() any {
		var n, paid int
		db.QueryRow(`SELECT count(*) FROM payments`).Scan(&n)
		db.QueryRow(`SELECT paid FROM orders WHERE id = 'o-1'`).Scan(&paid)
		return map[string]int{"payments": n, "paid": paid}
	}
}

// TestTransactionRolledBackAndRetriedIsNoDuplicate: the writes of an
// attempt that was rolled back left nothing, and every scenario but the
// redeliveries ends as the baseline did: no duplicate_write there. The
// agent that commits the failed attempt pays twice and is caught, and so
// are the redeliveries of both (neither checks before it pays).
func TestTransactionRolledBackAndRetriedIsNoDuplicate(t *testing.T) {
	for _, c := range []struct {
		name         string
		commitFailed bool
	}{{"rollback", false}, {"commit the failed attempt", true}} {
		t.Run(c.name, func(t *testing.T) {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "pay.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			rep := testkit.Run(t, payOrder(db, c.commitFailed), testkit.NoSummary(),
				testkit.Setup(func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, txSchema)
					return err
				}),
				testkit.State(txState(db)))
			got := map[string][]string{}
			for _, res := range rep.Results {
				for _, f := range res.Findings {
					got[res.Scenario] = append(got[res.Scenario], f.Code)
				}
			}
			for _, res := range rep.Results {
				dup := strings.Contains(fmt.Sprint(got[res.Scenario]), runtime.CodeDuplicateWrite)
				redelivery := runtime.Family(res.Kind) == "duplicate_delivery"
				switch {
				case redelivery && !dup:
					t.Errorf("%s: the redelivery paid twice, and no duplicate_write: %v", res.Scenario, got[res.Scenario])
				case !redelivery && !c.commitFailed && dup:
					t.Errorf("%s: a false duplicate_write for a rolled-back attempt: %v", res.Scenario, res.Findings)
				}
			}
			if c.commitFailed {
				for _, sc := range []string{"lost_acknowledgement/markPaid#1", "before_operation_failure/markPaid#1"} {
					if !strings.Contains(fmt.Sprint(got[sc]), runtime.CodeDuplicateWrite) {
						t.Errorf("%s: the committed failed attempt paid, the retry paid again, and no duplicate_write: %v", sc, got[sc])
					}
				}
			}
		})
	}
}
