package testkit_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// payoutDesk takes payout requests and queues each as a job, with the
// request's context, for a worker that Setup starts: the worker pays out
// about a millisecond later, through a traced tool of its own, and lowers
// the count of jobs in flight, which the agent's Settle waits for.
type payoutDesk struct {
	keyed  bool // transfer pays a payout id once
	noted  bool // the request also writes a line of its own, at once
	mu     sync.Mutex
	ledger []string
	paid   map[string]bool
	queued int
	jobs   chan payoutJob
	done   chan struct{}
}

type payoutJob struct {
	ctx context.Context
	id  string
}

var (
	requestPayoutOp = &runtime.Op{Name: "request_payout", Kind: runtime.KindWrite, Params: []string{"id"}}
	transferOp      = &runtime.Op{Name: "transfer", Kind: runtime.KindWrite, Params: []string{"id"}}
)

func newPayoutDesk(keyed, noted bool) *payoutDesk {
	d := &payoutDesk{keyed: keyed, noted: noted, paid: map[string]bool{}, jobs: make(chan payoutJob, 8), done: make(chan struct{})}
	go d.work()
	return d
}

func (d *payoutDesk) work() {
	defer close(d.done)
	for j := range d.jobs {
		time.Sleep(time.Millisecond)
		tracedCall(j.ctx, transferOp, []any{j.id}, []any{j.id}, nil, func(context.Context) error {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.keyed && d.paid[j.id] {
				return nil // already paid
			}
			d.paid[j.id] = true
			d.ledger = append(d.ledger, "paid "+j.id)
			return nil
		})
		d.mu.Lock()
		d.queued--
		d.mu.Unlock()
	}
}

func (d *payoutDesk) stop(context.Context) error { close(d.jobs); <-d.done; return nil }

func (d *payoutDesk) request(ctx context.Context, id string) error {
	return tracedCall(ctx, requestPayoutOp, []any{id}, []any{id}, nil, func(ctx context.Context) error {
		d.mu.Lock()
		d.queued++
		if d.noted {
			d.ledger = append(d.ledger, "requested "+id)
		}
		d.mu.Unlock()
		d.jobs <- payoutJob{context.WithoutCancel(ctx), id}
		return nil
	})
}

func (d *payoutDesk) state() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := slices.Clone(d.ledger)
	slices.Sort(l)
	return l
}

func (d *payoutDesk) idle(context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queued == 0, nil
}

// The agent requests a payout, retrying on error; a worker of Setup's
// carries it out with the request's context, through a traced transfer
// that pays a payout id once. The transfer a redelivered request queued
// repeats the first: judge.before ran the agent's Settle on the worker's
// goroutine, and the Settle waited for the worker's count of jobs, which
// it lowers only after the transfer returns, to its bound (2 s here); the
// repeat was then judged by counting executions: a false duplicate_write
// of request_payout in every redelivery scenario, on every run (red team).
// A call made inside another, with its context, settles nothing: its
// window is its outer call's, which does.
//
// Where the crash ends the request's invocation before the worker pays
// (crash_restart/request_payout#1), the worker's transfer is stopped, and
// the restart's request pays the payout the first never did: judged by
// whether the run ended as one delivery left it, not as a second payout.
// A desk that pays every transfer, or whose request writes a line of its
// own that the restart writes again, is caught.
func TestWorkerCallInsideARequestDoesNotSettleItself(t *testing.T) {
	run := func(keyed, noted bool) *runtime.Report {
		var d *payoutDesk
		return testkit.Run(t, func(ctx context.Context) error {
			var err error
			for range 3 {
				if err = d.request(ctx, "po-1"); err == nil {
					return nil
				}
			}
			return err
		}, testkit.NoSummary(),
			testkit.Setup(func(context.Context) error { d = newPayoutDesk(keyed, noted); return nil }),
			testkit.Teardown(func(ctx context.Context) error { return d.stop(ctx) }),
			testkit.State(func() any { return d.state() }),
			testkit.SettleUntil(func(ctx context.Context) (bool, error) { return d.idle(ctx) }, 2*time.Second))
	}
	for _, c := range []struct {
		name         string
		keyed, noted bool
		want         []string // scenarios with a duplicate_write, "" none
	}{
		{"a transfer paid once", true, false, nil},
		{"every transfer paid", false, false, []string{"lost_acknowledgement/request_payout#1 " + runtime.CodeDuplicateWrite}},
		{"a request's own line written again", true, true, []string{"crash_restart/request_payout#1 " + runtime.CodeDuplicateWrite}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := run(c.keyed, c.noted)
			got := codesIn(rep, runtime.CodeDuplicateWrite)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("no %s; got:\n%s", w, got)
				}
			}
			if c.want == nil && got != "" {
				t.Errorf("a payout paid once by a keyed transfer:\n%s", got)
			}
			for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
				for _, o := range r.Trace.Ops {
					if strings.Contains(o.StateError, "did not go quiet") {
						t.Errorf("%s: %s: %s", r.Scenario, o.ID, o.StateError)
					}
				}
				for _, f := range r.Findings {
					if strings.Contains(f.Message, "did not go quiet") {
						t.Errorf("%s: the Settle timed out: %s", r.Scenario, f.Message)
					}
				}
			}
			if t.Failed() {
				t.Log(verdictOf(rep))
			}
		})
	}
}
