package runtime

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// relayed is a call handed to the relay.
type relayed struct {
	ctx     context.Context
	op      *Op
	arrived func()
	reply   chan error
}

// relay stands for a transport whose goroutine is older than the scenario
// (go-sdk's connection reader on a session Setup connected once): it takes
// each call, works a while on it (decoding), and starts the goroutine that
// runs the tool, which says the call arrived.
func relay(in <-chan relayed) {
	for r := range in {
		for t0 := time.Now(); time.Since(t0) < 2*time.Millisecond; {
		}
		go func() {
			r.arrived()
			r.reply <- traced(r.ctx, r.op, []any{"INV-1"}, []any{"INV-1"}, func(context.Context) error { return nil })
		}()
	}
}

// turnThrough is an agent whose model turn asks for create_invoice and
// attach_invoice (which needs the invoice) in parallel, each call handed to
// the transport in and counted in transit until it arrives (Sending).
func turnThrough(in chan<- relayed) func(context.Context) error {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"invoice"}}
	attach := &Op{Name: "attach_invoice", Kind: KindWrite, Params: []string{"invoice"}, After: []string{"create_invoice"}}
	send := func(ctx context.Context, op *Op) error {
		arrived := Sending(ctx)
		defer arrived() // the wait for the answer ended
		r := relayed{ctx: ctx, op: op, arrived: arrived, reply: make(chan error, 1)}
		select {
		case in <- r:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case err := <-r.reply:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = send(ctx, create) })
		wg.Go(func() { errs[1] = send(ctx, attach) })
		wg.Wait()
		return errors.Join(errs...)
	}
}

// The two calls of one model turn travel through the relay: while one is
// on its way, carried by the relay's goroutine (older than the scenario,
// so not the scenario's), the agent's own goroutines only wait on
// channels. Unless the call counts as in transit (Sending), the scheduler
// took the agent for quiet then and played the calls that had reached
// their gates as a round without the other: which calls were in flight
// together was decided by the relay's timing, and the dependent pair was
// caught in some runs only. With Sending, the round holds both calls on
// every run, and so does the verdict.
func TestCallsInTransitJoinTheirRound(t *testing.T) {
	in := make(chan relayed)
	defer close(in)
	go relay(in) // before any scenario: the transport's own goroutine
	agent := turnThrough(in)
	verdicts := map[string]int{}
	for range 5 {
		rep, err := Run(context.Background(), t.Name(), agent, StallTimeout(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
			for _, f := range r.Findings {
				lines = append(lines, r.Scenario+" "+f.Code)
			}
			if r.Inconclusive {
				lines = append(lines, r.Scenario+" inconclusive")
			}
		}
		sort.Strings(lines)
		v := strings.Join(lines, "\n")
		verdicts[v]++
		if !strings.Contains(v, CodeDependentCallsConcurrent) {
			t.Errorf("the turn's dependent calls were not caught in flight together:\n%s", v)
		}
		for _, r := range rep.Results {
			if r.Scenario == ScenarioLostAck+"/create_invoice#1" {
				// The listed schedule's one round holds both calls.
				for _, o := range r.Trace.Ops {
					if o.Batch == 0 {
						t.Errorf("%s: %s#%d ran alone (ticks %d-%d): its round was played without it", r.Scenario, o.Name, o.Occurrence, o.StartTick, o.EndTick)
					}
				}
			}
		}
	}
	if len(verdicts) != 1 {
		for v, n := range verdicts {
			t.Logf("%d runs:\n%s", n, v)
		}
		t.Errorf("%d verdicts over 5 runs", len(verdicts))
	}
}

// serialRelay stands for a server that takes one call at a time: it runs
// each tool on its own goroutine, older than the scenario, and reads the
// next request only once the call it runs returned. A call parked at its
// gate there keeps the next one in transit until the round is played.
func serialRelay(in <-chan relayed) {
	for r := range in {
		r.arrived()
		r.reply <- traced(r.ctx, r.op, []any{"INV-1"}, []any{"INV-1"}, func(context.Context) error { return nil })
	}
}

// With a server that takes one call at a time, the second call of a turn
// cannot arrive before the first one's round is played: the scheduler
// waits transitGrace for it, then plays the round without it, on every
// run, and the trace's notes say so; it does not stall.
func TestCallsInTransitToASerialServerDoNotStall(t *testing.T) {
	defer func(g time.Duration) { transitGrace = g }(transitGrace)
	transitGrace = 20 * time.Millisecond
	in := make(chan relayed)
	defer close(in)
	go serialRelay(in)
	agent := turnThrough(in)
	rep, err := Run(context.Background(), t.Name(), agent, StallTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
		for _, f := range r.Findings {
			if f.Code == CodeStalled {
				t.Errorf("%s stalled: %s", r.Scenario, f.Message)
			}
		}
		for _, n := range r.Trace.Notes {
			noted = noted || strings.Contains(n, "did not reach it within")
		}
	}
	if !noted {
		t.Errorf("no trace says a call in transit was let go")
	}
}
