package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowPay is a payments service behind an httptest server whose first
// charge request of each world is held: it is booked when the test
// releases it (release), long after the attempt's deadline ran out, as a
// payments API under load books a request its client gave up on (red team
// rtQ #1: stripe-go, 40 ms per attempt, booked at 150 ms). It honours an
// Idempotency-Key: a request whose key was booked books nothing again, and
// the held request, released after its retry booked under its key, books
// nothing.
type slowPay struct {
	mu       sync.Mutex
	charges  []string // "order:amount", in the order booked
	keys     map[string]bool
	held     bool          // the first request was held
	released bool          // release was closed
	release  chan struct{} // closed to book the held request
	landed   chan struct{} // closed once the held request was handled
	srv      *httptest.Server
}

func newSlowPay() *slowPay {
	p := &slowPay{keys: map[string]bool{}, release: make(chan struct{}), landed: make(chan struct{})}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

func (p *slowPay) serve(w http.ResponseWriter, r *http.Request) {
	order, key := r.URL.Query().Get("order"), r.Header.Get("Idempotency-Key")
	p.mu.Lock()
	hold := !p.held
	p.held = true
	p.mu.Unlock()
	if hold {
		<-p.release
		defer close(p.landed)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if key == "" || !p.keys[key] {
		p.keys[key] = key != ""
		p.charges = append(p.charges, order+":500")
	}
	io.WriteString(w, "ok")
}

// letLand books the held request and waits until it was handled. A timer's
// call and a Setup's may come at once: release is closed under mu, once
// (a select on it, then a close, let both close it: a panic in CI).
func (p *slowPay) letLand() {
	p.mu.Lock()
	held := p.held
	if held && !p.released {
		p.released = true
		close(p.release)
	}
	p.mu.Unlock()
	if !held {
		return
	}
	<-p.landed
}

func (p *slowPay) snapshot() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return map[string]any{"charges": slices.Clone(p.charges)}
}

// lateCharge is an agent that charges ord-1 with a deadline of 200 ms per
// attempt and retries once at once on an error, keyed or not. land says
// when the held first request lands: before the agent returns (after the
// retry answered), or on a timer after it returned.
func lateCharge(p **slowPay, keyed bool, land func(*slowPay)) func(context.Context) error {
	op := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	charge := func(ctx context.Context, order string) error {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		return traced(ctx, op, []any{order}, []any{order}, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, (*p).srv.URL+"/charge?order="+order, nil)
			if err != nil {
				return err
			}
			if keyed {
				req.Header.Set("Idempotency-Key", "charge-"+order)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.Copy(io.Discard, resp.Body)
			return err
		})
	}
	return func(ctx context.Context) error {
		err := charge(ctx, "ord-1")
		if err != nil && !errors.Is(err, context.Canceled) {
			err = charge(ctx, "ord-1")
		}
		land(*p)
		if err != nil {
			return fmt.Errorf("charge ord-1: %w", err)
		}
		return nil
	}
}

func runLateCharge(t *testing.T, keyed bool, land func(*slowPay), opts ...Option) *Report {
	t.Helper()
	return runLateState(t, keyed, land, (*slowPay).snapshot, opts...)
}

// runLateState is runLateCharge with the service's state read by state.
func runLateState(t *testing.T, keyed bool, land func(*slowPay), state func(*slowPay) any, opts ...Option) *Report {
	t.Helper()
	var p *slowPay
	rep, err := Run(context.Background(), t.Name(), lateCharge(&p, keyed, land), append([]Option{
		Setup(func(context.Context) error {
			if p != nil {
				p.letLand() // a held request of the last world, never let land
				p.srv.Close()
			}
			p = newSlowPay()
			return nil
		}),
		State(func() any { return state(p) }),
	}, opts...)...)
	if p != nil {
		p.letLand()
		p.srv.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// landNow lets the held request land once the retry answered, before the
// agent returns: after the failed call returned, outside every traced call.
func landNow(p *slowPay) { p.letLand() }

// landLater lets it land 120 ms after the agent returned, on a timer: later
// than the baseline's end holds still for (endCalibrate), sooner than it
// waits after a call that failed for want of an answer (lateLandWait).
func landLater(p *slowPay) {
	time.AfterFunc(120*time.Millisecond, p.letLand)
}

// The first attempt's deadline runs out, the agent charges again without a
// key, and the first charge lands after its attempt returned: one delivery,
// two charges. The baseline itself shows it, and reads "ok" no more: a
// duplicate_write naming the failed call's late landing, on every run (red
// team rtQ #1 and #2: "baseline ok" in 6 runs of 6, and a verdict of
// INCONCLUSIVE, the test passing, in 3 of 6). A later scenario's repeat,
// making that change again, is not taken for the world's own (worldNote,
// "a worker that Setup started", with no worker).
func TestAFailedChargeThatLandsLateBesideItsRetryIsADuplicate(t *testing.T) {
	for _, tc := range []struct {
		name string
		land func(*slowPay)
	}{{"before the agent returned", landNow}, {"after the agent returned", landLater}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runLateCharge(t, false, tc.land)
			if rep.Safe {
				t.Fatalf("SAFE for an agent that charges twice on every delivery")
			}
			if got := findings(rep, ScenarioBaseline); !slices.Contains(got, CodeDuplicateWrite+" charge") {
				t.Fatalf("baseline findings %v, want duplicate_write charge: the baseline charged twice", got)
			}
			for _, f := range rep.Findings {
				if f.Scenario == ScenarioBaseline && f.Code == CodeDuplicateWrite && !strings.Contains(f.Message, "yet its effect landed after it returned") {
					t.Errorf("baseline finding %q does not say the failed call landed late", f.Message)
				}
			}
			for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
				for _, n := range r.Trace.Notes {
					if strings.Contains(n, "a worker that Setup started") {
						t.Errorf("%s: note %q: no worker, the agent's own charge landed late", r.Scenario, n)
					}
				}
				if r.Safe && !r.Failed {
					for i := range r.Trace.Ops {
						if o := &r.Trace.Ops[i]; o.Repeat == RepeatAbsorbed && o.Name == "charge" {
							t.Errorf("%s: safe, with %s absorbed, where the world ends with %v", r.Scenario, o.ID, r.Trace.end)
						}
					}
				}
			}
		})
	}
}

// The fixed agent: the same key on the retry, which the service books
// under it; the held request, landing later, books nothing. One charge:
// no duplicate_write anywhere, and the duplicate deliveries (no fault of
// their own that the failing first attempt keeps from firing) are SAFE.
func TestAKeyedRetryOfAChargeThatLandsLateIsNoDuplicate(t *testing.T) {
	for _, tc := range []struct {
		name string
		land func(*slowPay)
	}{{"before the agent returned", landNow}, {"after the agent returned", landLater}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runLateCharge(t, true, tc.land)
			if !rep.BaselineSucceeded {
				t.Fatalf("baseline failed: %s", rep.BaselineFailure)
			}
			if errs := rep.Errors(); len(errs) > 0 {
				t.Fatalf("error findings for the keyed agent, which charges once: %v", findings(rep, ""))
			}
			for _, r := range rep.Results {
				if strings.HasPrefix(r.Scenario, "duplicate_delivery/") && !r.Safe {
					t.Errorf("%s: not safe (inconclusive %v), notes %q", r.Scenario, r.Inconclusive, r.Trace.Notes)
				}
			}
			for _, name := range []string{"duplicate_delivery/sequential", "duplicate_delivery/concurrent"} {
				rep := runLateCharge(t, true, tc.land, OnlyScenario(name))
				if !rep.Safe || rep.InconclusiveCount > 0 {
					t.Errorf("%s: safe %v, %d inconclusive, findings %v", name, rep.Safe, rep.InconclusiveCount, findings(rep, ""))
				}
			}
		})
	}
}

// lateLandings judges a trace by itself: the failed call, its twin and the
// gap that holds the failed call's change, only where the gap began after
// the failed call returned and made the twin's change, whole.
func TestLateLandingsNeedTheTwinsWholeChangeAfterTheFailedCall(t *testing.T) {
	s0 := `{"charges":null}`
	s1 := `{"charges":["ord-1:500"]}`
	s2 := `{"charges":["ord-1:500","ord-1:500"]}`
	s2b := `{"charges":["ord-1:500","ord-2:500"]}`
	op := func(id string, order int, status Status, err, before, after string) Operation {
		o := Operation{ID: id, Name: "charge", Kind: KindWrite, Status: status, Error: err, Identity: `"ord-1"`,
			more: judgedMore(&effectView{order: order, inCluster: true, seen: true, before: before, after: after})}
		o.StateChange = DescribeChange(before, after)
		return o
	}
	trace := func(gaps [][2]string, at []int, ferr string) *Trace {
		return &Trace{Ops: []Operation{
			op("1:charge#1", 1, StatusFailed, ferr, s0, s0),
			op("1:charge#2", 2, StatusSuccess, "", s0, s1),
		}, gaps: gaps, rare: &traceRare{gapsAt: at}}
	}
	const timeout = `Post "http://127.0.0.1:1/charge": context deadline exceeded`
	for _, tc := range []struct {
		name string
		tr   *Trace
		want bool
	}{
		{"after both, the twin's change", trace([][2]string{{s1, s2}}, []int{3}, timeout), true},
		{"another change", trace([][2]string{{s1, s2b}}, []int{3}, timeout), false},
		{"begun before the failed call", trace([][2]string{{s1, s2}}, []int{1}, timeout), false},
		{"an answer, not a timeout", trace([][2]string{{s1, s2}}, []int{3}, "card declined"), false},
		{"gaps of unknown order", trace([][2]string{{s1, s2}}, nil, timeout), false},
	} {
		if got := len(lateLandings(tc.tr)) > 0; got != tc.want {
			t.Errorf("%s: late landing %v, want %v", tc.name, got, tc.want)
		}
	}
}

// balance is the service's state as a counter: what was booked, summed
// (an ADD of each charge), where snapshot lists the charges.
func (p *slowPay) balance() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return map[string]any{"balance": 500 * len(p.charges)}
}

// As TestAFailedChargeThatLandsLateBesideItsRetryIsADuplicate, with the
// service's state a balance: the retry takes it from 0 to 500 in its own
// call, and the first attempt, booked later, from 500 to 1000, not the
// retry's change "exactly". The unkeyed agent credits twice on every
// delivery, and its suite read SAFE (red team rtR #6: a DynamoDB ADD):
// now the runs where the late change showed are inconclusive, with a note
// naming the failed call. The keyed agent books once: no such note, SAFE.
func TestAFailedCreditThatLandsLateOnACounterIsNotSafe(t *testing.T) {
	run := func(t *testing.T, keyed bool) *Report {
		return runLateState(t, keyed, landNow, (*slowPay).balance)
	}
	const said = "may be 1:charge#1's effect landing late"
	noted := func(r *Result) bool {
		return slices.ContainsFunc(r.Trace.Notes, func(n string) bool { return strings.Contains(n, said) })
	}
	t.Run("unkeyed", func(t *testing.T) {
		rep := run(t, false)
		if rep.Safe {
			t.Fatalf("SAFE for an agent that credits twice on every delivery; baseline notes %q", rep.Baseline.Trace.Notes)
		}
		if !noted(rep.Baseline) || rep.Baseline.Safe {
			t.Fatalf("baseline safe %v, notes %q: want it inconclusive, saying %q", rep.Baseline.Safe, rep.Baseline.Trace.Notes, said)
		}
	})
	t.Run("keyed", func(t *testing.T) {
		rep := run(t, true)
		for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
			if noted(r) {
				t.Errorf("%s: noted a late landing where the service booked the charge once: %q", r.Scenario, r.Trace.Notes)
			}
		}
		if !rep.Safe || rep.InconclusiveCount > 0 {
			t.Errorf("keyed agent: safe %v, %d inconclusive, findings %v", rep.Safe, rep.InconclusiveCount, findings(rep, ""))
		}
	})
}
