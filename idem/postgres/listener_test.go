package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// The Backend's LISTEN connection (watch.go) is started by the first
// idem.Do, inside the baseline's first call, and reads for as long as the
// backend lives. It is the toolkit's, not the agent's: the suite neither
// waits a grace for it nor says it took a read for a loop's. Before, every
// suite that used the toolkit's own PostgreSQL fix (in this repository,
// where idem/postgres is no module of the cache but the user's code by its
// files) carried "goroutine N still waited for network I/O at
// watch.go:110 after 1s" in its baseline, and took 1.2 to 1.9 s where it
// takes 0.15 s without it (red team, /tmp/rtM P6 TestChargeKeyed).
func TestTheBackendsListenerIsNotTheAgents(t *testing.T) {
	db := seqDB(t)
	b := open(t) // its own: no listener yet
	store := idem.New(b)
	charge := &runtime.Op{Name: "chargeKeyed", Kind: runtime.KindWrite, Params: []string{"order", "cents"}}
	agent := func(ctx context.Context) error {
		c := func() error {
			return call(ctx, charge, []any{"ORD-1", 500}, 1, func(ctx context.Context) error {
				_, _, err := idem.Do(ctx, store, idem.Key("charge", "ORD-1"), 500, func(ctx context.Context) (int64, error) {
					var id int64
					err := db.QueryRowContext(ctx, `INSERT INTO agentidem_seq_payments (account, ref, amount) VALUES ('acct-1', 'ORD-1', 500) RETURNING id`).Scan(&id)
					return id, err
				})
				return err
			})
		}
		if err := c(); err != nil && ctx.Err() == nil {
			return c()
		}
		return nil
	}
	setup := testkit.Setup(func(ctx context.Context) error {
		_, err := db.ExecContext(ctx, `TRUNCATE agentidem_seq_accounts, agentidem_seq_payments, agentidem_seq_lines, agentidem_seq_plain_lines RESTART IDENTITY; TRUNCATE idem_keys`)
		return err
	})
	began := time.Now()
	rep := testkit.Run(t, agent, setup, seqState(db), testkit.NoSummary())
	t.Logf("suite took %s", time.Since(began))
	if !rep.Safe {
		t.Errorf("the keyed charge is not safe: %v", rep.Findings)
	}
	for _, res := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if res == nil || res.Trace == nil {
			continue
		}
		for _, n := range res.Trace.Notes {
			if strings.Contains(n, "network I/O") || strings.Contains(n, "watch.go") {
				t.Errorf("%s: %s", res.Scenario, n)
			}
		}
	}
}
