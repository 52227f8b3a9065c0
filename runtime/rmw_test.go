package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// A ledger of balances, read and set whole: set_balance is a SET, so a
// repeat of it with equal arguments changes nothing, and its idempotent
// declaration is true.
type ledger struct {
	mu  sync.Mutex
	bal map[string]int
}

func (l *ledger) get(acct string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bal[acct]
}

func (l *ledger) set(acct string, v int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bal[acct] = v
}

func (l *ledger) snapshot() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[string]int, len(l.bal))
	for k, v := range l.bal {
		m[k] = v
	}
	return m
}

var (
	getBalanceOp = &Op{Name: "get_balance", Kind: KindRead, Params: []string{"account"}}
	setBalanceOp = &Op{Name: "set_balance", Kind: KindWrite, Params: []string{"account", "amount"}, Idempotent: true}
)

func getBalance(ctx context.Context, l *ledger, acct string) (int, error) {
	c, cctx := Begin(ctx, getBalanceOp, []any{acct}, nil, []any{acct})
	if err := c.Start(); err != nil {
		return 0, err
	}
	_ = cctx
	v := l.get(acct)
	if err := c.Finish(nil, v); err != nil {
		return 0, err
	}
	return v, nil
}

func setBalance(ctx context.Context, l *ledger, acct string, v int) error {
	return traced(ctx, setBalanceOp, []any{acct, v}, []any{acct}, func(context.Context) error {
		l.set(acct, v)
		return nil
	})
}

// retryOnce calls f again once if it failed, as agents retry a tool.
func retryOnce(ctx context.Context, f func(context.Context) error) error {
	if err := f(ctx); err == nil || ctx.Err() != nil {
		return err
	}
	return f(ctx)
}

func runLedger(t *testing.T, agent func(ctx context.Context, l *ledger) error) *Report {
	t.Helper()
	var l *ledger
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return agent(ctx, l) },
		Setup(func(context.Context) error { l = &ledger{bal: map[string]int{}}; return nil }),
		State(func() any { return l.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The agent credits a deposit by reading the balance and setting it to
// balance+250 through set_balance, truthfully declared idempotent. A
// retry of the SET alone sets what was set (absorbed), but a redelivery
// of the deposit reads the credited balance and sets 500, where one
// delivery leaves 250: the deposit credited twice (red team rtT #6, a
// Redis GET then SET, and a GORM read then upsert of stock).
func TestReadModifyWriteRedeliveredThroughIdempotentSetIsADuplicate(t *testing.T) {
	rep := runLedger(t, func(ctx context.Context, l *ledger) error {
		bal, err := getBalance(ctx, l, "acct-9")
		if err != nil {
			return err
		}
		return retryOnce(ctx, func(ctx context.Context) error { return setBalance(ctx, l, "acct-9", bal+250) })
	})
	if rep.Safe {
		t.Fatalf("a redelivered read-modify-write credits twice, yet the suite is safe: %v", findings(rep, ""))
	}
	for _, sc := range []string{"duplicate_delivery/sequential", "crash_restart/set_balance#1"} {
		got := findings(rep, sc)
		if len(got) != 1 || got[0] != "duplicate_write set_balance" {
			t.Fatalf("%s: %v, want one duplicate_write of set_balance", sc, got)
		}
	}
	for _, f := range rep.Findings {
		if f.Scenario == "duplicate_delivery/sequential" && (!strings.Contains(f.Message, "2:get_balance#2 read what 1:set_balance#1 had set") || strings.Contains(f.Message, "add what tells them apart") || strings.Contains(f.Message, "re-read before retrying")) {
			t.Fatalf("the finding must name the read that saw the first delivery's credit, and advise neither a re-read nor identity=: %s", f.Message)
		}
	}
	// A retry of the SET itself, with the value it was first given, is
	// absorbed: the lost acknowledgement is no finding.
	if got := findings(rep, "lost_acknowledgement/set_balance#1"); len(got) != 0 {
		t.Fatalf("lost_acknowledgement: %v", got)
	}
}

// The correct twins: an agent that sets the balance it was told (no read),
// and one that sets a status twice in one delivery, as its baseline does:
// a redelivery ends where one delivery does, and the second SET is an
// update.
func TestReadModifyWriteTwinsThatEndAsOneDeliveryAreSafe(t *testing.T) {
	abs := runLedger(t, func(ctx context.Context, l *ledger) error {
		if _, err := getBalance(ctx, l, "acct-9"); err != nil {
			return err
		}
		return retryOnce(ctx, func(ctx context.Context) error { return setBalance(ctx, l, "acct-9", 250) })
	})
	if !abs.Safe {
		t.Fatalf("an absolute SET after a read: %v", findings(abs, ""))
	}
	twice := runLedger(t, func(ctx context.Context, l *ledger) error {
		for _, v := range []int{100, 250} {
			if _, err := getBalance(ctx, l, "acct-9"); err != nil {
				return err
			}
			if err := retryOnce(ctx, func(ctx context.Context) error { return setBalance(ctx, l, "acct-9", v) }); err != nil {
				return err
			}
		}
		return nil
	})
	if !twice.Safe {
		t.Fatalf("two SETs in one delivery, as the baseline does: %v", findings(twice, ""))
	}
	o := opByID(t, twice, "duplicate_delivery/sequential", "2:set_balance#4")
	if o.Repeat != RepeatUpdate && o.Repeat != RepeatAbsorbed {
		t.Fatalf("the redelivery's second SET: repeat=%q", o.Repeat)
	}
}

// An agent that records a failure: it sets the order processing, and, when
// the charge after it fails, sets it failed and returns nil. Under
// before_operation_failure of the charge the run ends with "failed", a
// value its baseline never set, where one delivery leaves "paid": not a
// read-modify-write done again, and no finding.
func TestAStatusSetOnFailureIsNoReadModifyWrite(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	rep := runLedger(t, func(ctx context.Context, l *ledger) error {
		if err := setBalance(ctx, l, "o-1", 1); err != nil { // 1: processing
			return err
		}
		if err := traced(ctx, charge, []any{"o-1"}, []any{"o-1"}, func(context.Context) error { l.set("charged:o-1", 1); return nil }); err != nil {
			return setBalance(ctx, l, "o-1", 9) // 9: failed
		}
		return setBalance(ctx, l, "o-1", 2) // 2: paid
	})
	if got := findings(rep, "before_operation_failure/charge#1"); len(got) != 0 {
		t.Fatalf("before_operation_failure/charge#1: %v", got)
	}
	o := opByID(t, rep, "before_operation_failure/charge#1", "1:set_balance#2")
	if o.Repeat != RepeatUpdate {
		t.Fatalf("the status set on failure: repeat=%q, want update", o.Repeat)
	}
}

// Where the world changes the state by itself (a worker Setup started that
// stamps each balance it sees as audited), the end may not say what one
// delivery leaves: the redelivered read-modify-write is not taken for an
// update, and the scenario is inconclusive, its note naming the repeat.
func TestReadModifyWriteBesideAWorldWorkerIsInconclusive(t *testing.T) {
	var l *ledger
	var stop chan struct{}
	agent := func(ctx context.Context) error {
		bal, err := getBalance(ctx, l, "acct-9")
		if err != nil {
			return err
		}
		return retryOnce(ctx, func(ctx context.Context) error { return setBalance(ctx, l, "acct-9", bal+250) })
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			if stop != nil {
				close(stop)
			}
			l, stop = &ledger{bal: map[string]int{}}, make(chan struct{})
			go func(l *ledger, stop chan struct{}) { // the auditor: marks a balance it has seen
				for {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					if v := l.get("acct-9"); v != 0 && l.get("audited") != v {
						l.set("audited", v)
					}
				}
			}(l, stop)
			return nil
		}),
		State(func() any { return l.snapshot() }))
	if stop != nil {
		close(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Scenario != "duplicate_delivery/sequential" {
			continue
		}
		if r.Safe && !r.Inconclusive {
			t.Fatalf("duplicate_delivery/sequential: a plain pass; notes: %v", r.Trace.Notes)
		}
	}
}
