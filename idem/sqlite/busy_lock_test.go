package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	_ "modernc.org/sqlite"
)

var (
	transferOp = &runtime.Op{Name: "transfer", Kind: runtime.KindWrite, Params: []string{"id"}}
	auditOp    = &runtime.Op{Name: "audit", Kind: runtime.KindWrite, Params: []string{"id"}}
)

func tracedCall(ctx context.Context, op *runtime.Op, id string, fn func(context.Context) error) (err error) {
	if !runtime.Enabled() {
		return fn(ctx)
	}
	c, cctx := runtime.Begin(ctx, op, []any{id}, []any{id}, nil)
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

// transfer writes in a transaction and, inside it, calls the audit tool
// (traced) before it commits. Under concurrent delivery, delivery 1 holds
// the write lock at audit's gate while delivery 2 waits for it in
// SQLite's busy handler: delivery 2 cannot arrive until delivery 1 goes
// on, which the lockstep sees once the wait outlasted the sleeps of a busy
// handler (timedGrace), not after busy_timeout, when the write fails.
func TestDeliveryWaitingInBusyHandlerForALockHeldAtAGateGoesOn(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "bank.db")+"?_pragma=busy_timeout(3000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE moves (id TEXT); CREATE TABLE audit (id TEXT)`); err != nil {
		t.Fatal(err)
	}
	agent := func(ctx context.Context) error {
		return tracedCall(ctx, transferOp, "m1", func(ctx context.Context) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, `INSERT INTO moves VALUES ('m1')`); err != nil {
				return err
			}
			if err := tracedCall(ctx, auditOp, "m1", func(ctx context.Context) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO audit VALUES ('m1')`)
				return err
			}); err != nil {
				return err
			}
			return tx.Commit()
		})
	}
	rep, err := runtime.Run(context.Background(), t.Name(), agent,
		runtime.Setup(func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, `DELETE FROM moves; DELETE FROM audit`)
			return err
		}))
	if err != nil {
		t.Logf("run: %v", err)
	}
	for _, r := range rep.Results {
		if r.Scenario == runtime.ScenarioDuplicateConcurrent || strings.Contains(r.Error, "locked") {
			if strings.Contains(r.Error, "locked") {
				t.Errorf("%s: a delivery waited out busy_timeout for a lock held at a gate: %s (notes %q)", r.Scenario, r.Error, r.Trace.Notes)
			}
		}
	}
}
