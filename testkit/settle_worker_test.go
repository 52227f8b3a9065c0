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
	deskShape
	mu      sync.Mutex
	ledger  []string
	paid    map[string]bool
	queued  int
	pending int // bookings on their way (async)
	jobs    chan payoutJob
	done    chan struct{}
}

// deskShape says how a payoutDesk works.
type deskShape struct {
	keyed bool // transfer pays a payout id once
	noted bool // the request also writes a line of its own, at once
	spawn bool // the request starts a goroutine for the job instead of queueing it
	// async: the bank books a transfer 2 ms after the call returned, on a
	// goroutine of its own; the Settle waits for the booking too.
	async bool
}

type payoutJob struct {
	ctx context.Context
	id  string
}

var (
	requestPayoutOp = &runtime.Op{Name: "request_payout", Kind: runtime.KindWrite, Params: []string{"id"}}
	transferOp      = &runtime.Op{Name: "transfer", Kind: runtime.KindWrite, Params: []string{"id"}}
)

func newPayoutDesk(shape deskShape) *payoutDesk {
	d := &payoutDesk{deskShape: shape, paid: map[string]bool{}, jobs: make(chan payoutJob, 8), done: make(chan struct{})}
	go d.work()
	return d
}

func (d *payoutDesk) work() {
	defer close(d.done)
	for j := range d.jobs {
		d.pay(j)
	}
}

// pay carries out job j, and then counts it done: not in a defer.
func (d *payoutDesk) pay(j payoutJob) {
	time.Sleep(time.Millisecond)
	tracedCall(j.ctx, transferOp, []any{j.id}, []any{j.id}, nil, func(context.Context) error {
		if d.async {
			d.mu.Lock()
			d.pending++
			d.mu.Unlock()
			go func() {
				time.Sleep(2 * time.Millisecond)
				d.book(j.id)
			}()
			return nil
		}
		d.book(j.id)
		return nil
	})
	d.mu.Lock()
	d.queued--
	d.mu.Unlock()
}

// book pays out id, once if the desk is keyed.
func (d *payoutDesk) book(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.async {
		d.pending--
	}
	if d.keyed && d.paid[id] {
		return // already paid
	}
	d.paid[id] = true
	d.ledger = append(d.ledger, "paid "+id)
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
		j := payoutJob{context.WithoutCancel(ctx), id}
		if d.spawn {
			go func() {
				time.Sleep(20 * time.Millisecond) // well after the request returned
				d.pay(j)
			}()
			return nil
		}
		d.jobs <- j
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
	return d.queued == 0 && d.pending == 0, nil
}

// runPayouts runs the suite of an agent that requests payout po-1 from a
// payoutDesk, retrying on error, with State and a SettleUntil that waits,
// up to within, for the desk's jobs to be done.
func runPayouts(t *testing.T, shape deskShape, within time.Duration) *runtime.Report {
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
		testkit.Setup(func(context.Context) error { d = newPayoutDesk(shape); return nil }),
		testkit.Teardown(func(ctx context.Context) error { return d.stop(ctx) }),
		testkit.State(func() any { return d.state() }),
		testkit.SettleUntil(func(ctx context.Context) (bool, error) { return d.idle(ctx) }, within))
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
		return runPayouts(t, deskShape{keyed: keyed, noted: noted}, 2*time.Second)
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

// The worker's transfer returns before the bank books it: the booking
// lands 2 ms later, on a goroutine of the bank's, and the agent's Settle
// waits for it. The transfer made inside a repeated request settles
// nothing of its own (above), so its own window closed before the booking
// landed and showed no change, as did the first transfer's: every
// execution was counted, a false duplicate_write of a keyed transfer on
// every run (red team, TestT3NestedAsyncKeyed). Such a repeat is judged by
// the settled window of the call it was made inside, which held it whole:
// nothing changed there, so nothing the transfer did was a second
// effect. A bank that books every transfer changes that window, and is
// caught, on every run.
func TestAsyncEffectOfACallMadeInsideIsJudgedByItsOuterWindow(t *testing.T) {
	for _, c := range []struct {
		name  string
		keyed bool
		want  string // a scenario with a duplicate_write, "" none
	}{
		{"a transfer booked once", true, ""},
		{"every transfer booked", false, "lost_acknowledgement/request_payout#1 " + runtime.CodeDuplicateWrite},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 3 {
				rep := runPayouts(t, deskShape{keyed: c.keyed, async: true}, 2*time.Second)
				got := codesIn(rep, runtime.CodeDuplicateWrite)
				switch {
				case c.want == "" && got != "":
					t.Fatalf("a keyed transfer booked later was counted:\n%s", got)
				case c.want != "" && !strings.Contains(got, c.want):
					t.Fatalf("no %s; got:\n%s", c.want, got)
				}
				if c.want != "" {
					continue
				}
				for _, r := range rep.Results {
					for _, o := range r.Trace.Ops {
						if o.Name == "transfer" && o.Repeat == runtime.RepeatDuplicate {
							t.Fatalf("%s: %s judged a duplicate by %s", r.Scenario, o.ID, o.JudgedBy)
						}
					}
				}
			}
		})
	}
}

// The request starts a goroutine of its own for the job, which counts the
// job done after its transfer, not in a defer. In
// crash_restart/request_payout#1 the crash ends that goroutine at its
// transfer (runtime.Goexit), and the count stays up, as a real crash,
// which ends the process, would not leave it: the restart's repeat waited
// for a Settle that could never see the world quiet, and was then counted,
// a false duplicate_write (red team). It is unjudged, and says why; the
// scenario is inconclusive. A desk that pays every transfer is still
// caught elsewhere, and a request whose own line the restart writes again
// is caught there: the Settle's windows are still taken, and show it.
func TestSettleThatACrashKeptBusyJudgesNothing(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		rep := runPayouts(t, deskShape{keyed: keyed, spawn: true}, 200*time.Millisecond)
		got := codesIn(rep, runtime.CodeDuplicateWrite)
		crashed := "crash_restart/request_payout#1"
		if strings.Contains(got, crashed+" ") {
			t.Errorf("keyed %v: a repeat whose Settle the crash kept busy was counted:\n%s", keyed, got)
		}
		for _, r := range rep.Results {
			if r.Scenario != crashed {
				continue
			}
			if !r.Inconclusive || !strings.Contains(strings.Join(r.Trace.Notes, "\n"), "was not judged: the world did not go quiet") {
				t.Errorf("keyed %v: %s inconclusive %v, notes:\n%s", keyed, crashed, r.Inconclusive, strings.Join(r.Trace.Notes, "\n"))
			}
		}
		if !keyed && !strings.Contains(got, "lost_acknowledgement/request_payout#1 "+runtime.CodeDuplicateWrite) {
			t.Errorf("a desk that pays every transfer: no duplicate_write in lost_acknowledgement; got:\n%s", got)
		}
	}
	// A request that also writes a line of its own writes it again on the
	// restart: its window holds that line, which no call made inside it
	// wrote, and it is a duplicate whatever the Settle (red team: this
	// was INCONCLUSIVE for a while).
	rep := runPayouts(t, deskShape{keyed: true, noted: true, spawn: true}, 200*time.Millisecond)
	if got := codesIn(rep, runtime.CodeDuplicateWrite); !strings.Contains(got, "crash_restart/request_payout#1 "+runtime.CodeDuplicateWrite) {
		t.Errorf("a request's own line written again after the crash: no duplicate_write in crash_restart/request_payout#1; got:\n%s", got)
	}
}
