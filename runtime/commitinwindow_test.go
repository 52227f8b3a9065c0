package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// A database with transactions, in the shape of the red team's
// SERIALIZABLE check-then-insert (rtM P7, idem/postgres rtm/pg
// TestSerialOrder): an insert takes its id from a sequence at once, as
// BIGSERIAL does, and lands at the commit, which no traced call makes; a
// commit that finds the order committed meanwhile fails (40001) and the
// agent retries the transaction. Two deliveries at once: the earlier one's
// insert returns and its delivery commits while the other's insert is
// still in flight, so the commit lands inside the window of both inserts,
// which under load happened 2 runs in 86. Here the later insert waits for
// that commit (hold), so it happens on every run.
type txShop struct {
	mu        sync.Mutex
	rows      []txRow
	next      int
	inflight  int
	absent    int           // transactions that read the order absent and have not inserted
	committed chan struct{} // closed at the first commit
	hold      bool          // the second insert in flight waits for a commit
	// dedup: the commit checks the order (the correct agent); without
	// it, both transactions commit their row (the buggy one).
	dedup bool
}

type txRow struct {
	ID    int    `json:"id"`
	Order string `json:"order_id"`
	Cents int    `json:"cents"`
}

type shopTx struct {
	pending []txRow
	absent  bool // it read the order absent and has not inserted (txShop.absent)
}

// release takes tx out of txShop.absent. s.mu is held.
func (s *txShop) release(tx *shopTx) {
	if tx.absent {
		tx.absent = false
		s.absent--
	}
}

var (
	findOrderOp   = &Op{Name: "findOrder", Kind: KindRead, Params: []string{"order"}}
	insertOrderOp = &Op{Name: "insertOrder", Kind: KindWrite, Params: []string{"order", "cents"}}
	errSerialize  = errors.New("could not serialize access (40001)")
)

func (s *txShop) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]txRow{}, s.rows...)
}

func (s *txShop) find(ctx context.Context, tx *shopTx, order string) (found bool, err error) {
	err = traced(ctx, findOrderOp, []any{order}, []any{order}, func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range append(s.rows, tx.pending...) {
			found = found || r.Order == order
		}
		if !found && !tx.absent {
			tx.absent = true
			s.absent++
		}
		return nil
	})
	return found, err
}

func (s *txShop) insert(ctx context.Context, tx *shopTx, order string, cents int) error {
	return traced(ctx, insertOrderOp, []any{order, cents}, []any{order}, func(context.Context) error {
		s.mu.Lock()
		s.inflight++
		s.release(tx)
		// The first of two transactions that both read the order
		// absent holds its insert until the other's transaction
		// committed: the later insert, which took the next id, lands
		// inside the window of both, as the red team's did.
		var wait chan struct{}
		if s.hold && s.inflight == 1 && s.absent > 0 {
			wait = s.committed
		}
		s.next++
		tx.pending = append(tx.pending, txRow{ID: s.next, Order: order, Cents: cents})
		s.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-time.After(2 * time.Second):
			}
		}
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
		return nil
	})
}

func (s *txShop) commit(tx *shopTx) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dedup {
		for _, p := range tx.pending {
			for _, r := range s.rows {
				if r.Order == p.Order {
					return errSerialize
				}
			}
		}
	}
	s.rows = append(s.rows, tx.pending...)
	select {
	case <-s.committed:
	default:
		close(s.committed)
	}
	return nil
}

func (s *txShop) placeOrder(ctx context.Context) error {
	var last error
	for range 10 {
		tx := &shopTx{}
		err := func() error {
			defer func() { s.mu.Lock(); s.release(tx); s.mu.Unlock() }()
			found, err := s.find(ctx, tx, "ORD-7")
			if err != nil || found {
				return err
			}
			if err := s.insert(ctx, tx, "ORD-7", 700); err != nil {
				return err
			}
			return s.commit(tx)
		}()
		if err == nil {
			return nil
		}
		last = err
	}
	return last
}

func runTxShop(t *testing.T, dedup bool) *Report {
	t.Helper()
	var s *txShop
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return s.placeOrder(ctx) },
		Setup(func(context.Context) error {
			s = &txShop{committed: make(chan struct{}), hold: true, dedup: dedup}
			return nil
		}),
		State(func() any { return s.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestACommitLandingInsideTheOverlappedInsertsIsNoSecondEffect(t *testing.T) {
	// Correct: the later transaction fails to commit and its retry finds
	// the order. The run ends with one order, as the baseline did.
	rep := runTxShop(t, true)
	if got := findings(rep, ScenarioDuplicateConcurrent); len(got) != 0 {
		t.Fatalf("the commit of one delivery landed in the window of both inserts, and one order stayed: %v", findingMessages(rep, ScenarioDuplicateConcurrent))
	}
	// The bad timing happened: the window of the overlapped inserts
	// holds the commit.
	o := opByID(t, rep, ScenarioDuplicateConcurrent, "2:insertOrder#2")
	if !o.Overlapped {
		t.Fatalf("the inserts did not overlap: %+v", o)
	}
	if before, after := o.stateWindow(); before == after {
		t.Fatalf("the commit did not land in the inserts' window (%s): the test no longer forces the timing", before)
	}
	if !rep.Safe {
		t.Fatalf("correct agent: %v", findingMessages(rep, ""))
	}
	// Buggy: no check at commit, both orders stay; still caught.
	buggy := runTxShop(t, false)
	if got := findings(buggy, ScenarioDuplicateConcurrent); len(got) != 1 || got[0] != "duplicate_write insertOrder" {
		t.Fatalf("two orders committed: %v", findingMessages(buggy, ScenarioDuplicateConcurrent))
	}
}

func findingMessages(rep *Report, scenario string) []string {
	var out []string
	for _, f := range rep.Findings {
		if scenario == "" || f.Scenario == scenario {
			out = append(out, f.Code+": "+f.Message)
		}
	}
	return out
}
