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
	txTransferOp = &runtime.Op{Name: "transfer", Kind: runtime.KindWrite, Params: []string{"msg"}}
	txMoveOp     = &runtime.Op{Name: "moveBalances", Kind: runtime.KindWrite, Params: []string{"msg"}}
)

const nestedSchema = `DROP TABLE IF EXISTS accounts; DROP TABLE IF EXISTS deposits;
CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE deposits (msg_id TEXT NOT NULL, amt INTEGER NOT NULL, msg_key TEXT UNIQUE);
INSERT INTO accounts VALUES ('acct-1', 100), ('acct-2', 0);`

// How transfer (below) goes wrong, if it does.
type nestedBug int

const (
	nestedCorrect      nestedBug = iota
	nestedCommitFailed           // commits what the failed helper left, and keeps no key
	nestedHelperTwice            // calls its helper again in the same transaction
)

// transfer is a traced tool that holds a transaction of its own and calls
// a traced helper, moveBalances, inside it, before it commits: the
// helper's writes are seen by no one until the commit, in transfer's
// window. The correct tool keeps one deposit per message and rolls back
// when its helper fails.
func transfer(db *sql.DB, bug nestedBug) func(ctx context.Context, msg string) error {
	return func(ctx context.Context, msg string) error {
		return tracedCall(ctx, txTransferOp, msg, func(ctx context.Context) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			// The correct tool keys its deposit by the message (a NULL
			// key, as the buggy ones give, is never a conflict).
			var key any
			if bug == nestedCorrect {
				key = msg
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO deposits (msg_id, amt, msg_key) VALUES (?, 25, ?) ON CONFLICT (msg_key) DO NOTHING`, msg, key)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return tx.Commit() // deposited before
			}
			move := func() error {
				return tracedCall(ctx, txMoveOp, msg, func(ctx context.Context) error {
					if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance - 25 WHERE id = 'acct-1'`); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 25 WHERE id = 'acct-2'`)
					return err
				})
			}
			err = move()
			switch {
			case err != nil && bug == nestedHelperTwice:
				err = move()
			case err != nil && bug == nestedCommitFailed:
				tx.Commit()
				return err
			}
			if err != nil {
				return err
			}
			return tx.Commit()
		})
	}
}

// TestAHelperInsideItsCallersTransaction: a fault on the helper fails the
// transfer, whose transaction rolls back, and the agent's retry moves the
// balances once: the helper ran twice, its own windows saw nothing, and
// the world holds one transfer, as the baseline's does. Counted by its
// executions it was a duplicate_write in every run (red team rW #5). The
// transfer that commits the failed attempt and the one that calls its
// helper again in the same transaction move the balances twice, and are
// caught. (Their crash_restart moves them once: the crash cancels the
// delivery's context, which rolls back a transaction begun with it.)
func TestAHelperInsideItsCallersTransaction(t *testing.T) {
	for _, c := range []struct {
		name string
		bug  nestedBug
	}{{"correct", nestedCorrect}, {"commit the failed attempt", nestedCommitFailed}, {"helper twice in one transaction", nestedHelperTwice}} {
		t.Run(c.name, func(t *testing.T) {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "bank.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			do := transfer(db, c.bug)
			rep := testkit.Run(t, func(ctx context.Context) error {
				if err := do(ctx, "msg-1"); err != nil && ctx.Err() == nil {
					return do(ctx, "msg-1")
				}
				return nil
			}, testkit.NoSummary(),
				testkit.Setup(func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, nestedSchema)
					return err
				}),
				testkit.State(func() any {
					var a1, a2, n int
					db.QueryRow(`SELECT balance FROM accounts WHERE id = 'acct-1'`).Scan(&a1)
					db.QueryRow(`SELECT balance FROM accounts WHERE id = 'acct-2'`).Scan(&a2)
					db.QueryRow(`SELECT count(*) FROM deposits`).Scan(&n)
					return map[string]int{"acct-1": a1, "acct-2": a2, "deposits": n}
				}))
			got := map[string]string{}
			notes := map[string]string{}
			for _, res := range rep.Results {
				for _, f := range res.Findings {
					got[res.Scenario] += f.Code + " "
				}
				notes[res.Scenario] = strings.Join(res.Trace.Notes, "\n")
			}
			for _, sc := range []string{"lost_acknowledgement/moveBalances#1", "crash_restart/moveBalances#1"} {
				dup := strings.Contains(got[sc], runtime.CodeDuplicateWrite)
				switch {
				case c.bug == nestedCorrect && dup:
					t.Errorf("%s: the failed attempt rolled back and the retry moved the balances once, yet: %s", sc, got[sc])
				case c.bug == nestedCorrect && !strings.Contains(notes[sc], "made inside another traced call whose window held its effect"):
					t.Errorf("%s: no note says the helper was judged by its caller's window: %q", sc, notes[sc])
				case c.bug != nestedCorrect && sc == "lost_acknowledgement/moveBalances#1" && !dup:
					t.Errorf("%s: the balances moved twice, and no duplicate_write: %q", sc, got[sc])
				}
			}
			if c.bug == nestedCorrect {
				for sc, codes := range got {
					if strings.Contains(codes, runtime.CodeDuplicateWrite) {
						t.Errorf("%s: a false duplicate_write: %s", sc, codes)
					}
				}
				if rep.UnsafeCount > 0 {
					t.Errorf("the correct transfer is unsafe: %v", fmt.Sprint(got))
				}
			}
		})
	}
}
