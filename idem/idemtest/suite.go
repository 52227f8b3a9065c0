package idemtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

// Suite runs agentidem's fault suite (runtime.Run) on agents that charge an
// order through a Store on the backend open returns, and checks its
// verdicts: the harness's crash_restart leaves a key as a dead holder does
// (runtime.Crashed), and a key Setup does not reset makes the suite say it
// tested nothing. Each agent gets keys of its own, so open may return one
// shared database.
func Suite(t *testing.T, open func(t *testing.T) idem.Backend) {
	t.Helper()
	t.Run("CrashRestart", func(t *testing.T) { suiteCrash(t, open(t)) })
	t.Run("StaleKeys", func(t *testing.T) { suiteStale(t, open(t)) })
}

var (
	opCharge      = &runtime.Op{Name: "charge", Kind: runtime.KindWrite}
	opChargeKeyed = &runtime.Op{Name: "chargeKeyed", Kind: runtime.KindWrite}
)

// ledger is a payment service's charges, by order: the sink a naive charge
// writes and a recovery looks at. nonce names the world's keys: a Setup
// that resets the idem store gives a new one.
type ledger struct {
	mu      sync.Mutex
	charges map[string]int
	nonce   atomic.Int64
	prefix  string
}

func newLedger(t *testing.T) *ledger {
	return &ledger{charges: map[string]int{}, prefix: NewKey(t)}
}

func (l *ledger) key(order string) string {
	return idem.Key("charge", l.prefix, l.nonce.Load(), order)
}

func (l *ledger) reset(freshKeys bool) {
	l.mu.Lock()
	l.charges = map[string]int{}
	l.mu.Unlock()
	if freshKeys {
		l.nonce.Add(1)
	}
}

func (l *ledger) count(order string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.charges[order]
}

// charge is the naive effect: one more charge on every call.
func (l *ledger) charge(order string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.charges[order]++
	return l.charges[order]
}

// chargeTraced is what agentidem-gen writes around the naive charge.
func (l *ledger) chargeTraced(ctx context.Context, order string) (n int, err error) {
	call, _ := runtime.Begin(ctx, opCharge, []any{order}, []any{order}, nil)
	if err := call.Start(); err != nil {
		return 0, err
	}
	defer call.Recover(&err)
	n = l.charge(order)
	if ferr := call.Finish(nil, n); ferr != nil {
		return 0, ferr
	}
	return n, nil
}

// chargeKeyedTraced is the traced tool whose body is idem.Do around the
// naive charge: a replay marks the call replayed.
func (l *ledger) chargeKeyedTraced(ctx context.Context, s *idem.Store, order string) (n int, err error) {
	call, cctx := runtime.Begin(ctx, opChargeKeyed, []any{order}, []any{order}, nil)
	if err := call.Start(); err != nil {
		return 0, err
	}
	defer call.Recover(&err)
	n, _, err = idem.Do(cctx, s, l.key(order), 500, func(context.Context) (int, error) { return l.charge(order), nil })
	if ferr := call.Finish(err, n); ferr != nil {
		return 0, ferr
	}
	return n, err
}

// verdict is what a suite said: safe (no error finding: Report.Safe, whose
// verdict is INCONCLUSIVE when a scenario is), the scenario kinds with
// findings of severity error (and their codes), the inconclusive
// scenarios, and the fault scenarios whose fault fired.
type verdict struct {
	safe         bool
	errs         map[string][]string
	inconclusive []string
	fired, run   int
	notes        []string
}

func verdictOf(rep *runtime.Report) verdict {
	v := verdict{safe: rep.Safe, errs: map[string][]string{}}
	for _, res := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if res.Inconclusive {
			v.inconclusive = append(v.inconclusive, res.Scenario)
		}
		if res.Fault != nil {
			v.run++
			if res.FaultFired {
				v.fired++
			}
		}
		if res.Trace != nil {
			v.notes = append(v.notes, res.Trace.Notes...)
		}
		for _, f := range res.Findings {
			if f.Severity == runtime.SeverityError {
				v.errs[res.Kind] = append(v.errs[res.Kind], f.Code)
			}
		}
	}
	return v
}

func (v verdict) String() string {
	return fmt.Sprintf("safe %v, errors %v, inconclusive %v, %d of %d faults fired", v.safe, v.errs, v.inconclusive, v.fired, v.run)
}

// unsafeKinds returns the scenario kinds with errors, sorted, and fails t
// on an error other than code.
func (v verdict) unsafeKinds(t *testing.T, code string) []string {
	t.Helper()
	var kinds []string
	for kind, codes := range v.errs {
		for _, c := range codes {
			if c != code {
				t.Errorf("%s: findings %v, want %s only", kind, codes, code)
			}
		}
		kinds = append(kinds, kind)
	}
	slices.Sort(kinds)
	return kinds
}

func run(t *testing.T, agent func(context.Context) error, opts ...runtime.Option) verdict {
	t.Helper()
	rep, err := runtime.Run(context.Background(), t.Name(), agent, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return verdictOf(rep)
}

// suiteCrash: an agent charges ORD-1 through Do around the traced naive
// charge (a red team's, rtM P4, on PostgreSQL). The suite's crash cancels
// the delivery and returns an error from the charge, or ends fn's
// goroutine at its next traced call; Do released the key on either, the
// restart claimed it afresh and charged again, where a real crash leaves
// the key pending and the restart recovers it (WithRecover): a duplicate
// reported of the toolkit's own fix. Now: with WithRecover the agent is
// SAFE; without it the restart takes the key over and runs fn again, the
// duplicate a real crash makes once the lease ran out; an agent that
// retries its own lost acknowledgement charges twice either way, since an
// error releases the key (both true).
func suiteCrash(t *testing.T, b idem.Backend) {
	for _, c := range []struct {
		name        string
		withRecover bool
		retries     int  // calls again after an error of its own
		receipt     bool // fn also sends a receipt, not looking at the charge's error
		wantUnsafe  []string
	}{
		{"RecoverOnce", true, 0, false, nil},
		{"NoRecoverOnce", false, 0, false, []string{runtime.ScenarioCrashRestart}},
		{"RecoverRetry", true, 1, false, []string{runtime.ScenarioLostAck}},
		{"NoRecoverRetry", false, 1, false, []string{runtime.ScenarioCrashRestart, runtime.ScenarioLostAck}},
		// A crash at the charge ends fn's goroutine at the receipt's
		// call (runtime.Goexit), through Do's deferred give-back.
		{"RecoverOnceGoexit", true, 0, true, nil},
		{"NoRecoverOnceGoexit", false, 0, true, []string{runtime.ScenarioCrashRestart}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			s := idem.New(b)
			var opts []idem.Option
			if c.withRecover {
				opts = append(opts, idem.WithRecover(idem.RecoverJSON(func(ctx context.Context, key string) (int, bool, error) {
					n := l.count("ORD-1")
					return n, n > 0, nil
				})))
			}
			agent := func(ctx context.Context) error {
				var err error
				for range c.retries + 1 {
					if _, _, err = idem.Do(ctx, s, l.key("ORD-1"), 500, func(ctx context.Context) (int, error) {
						n, err := l.chargeTraced(ctx, "ORD-1")
						if c.receipt {
							_, err = l.chargeTraced(ctx, "receipt ORD-1")
						}
						return n, err
					}, opts...); err == nil {
						return nil
					}
				}
				return err
			}
			v := run(t, agent,
				runtime.Setup(func(context.Context) error { l.reset(true); return nil }),
				runtime.State(func() any { return l.count("ORD-1") }))
			if len(v.inconclusive) > 0 || v.fired != v.run {
				t.Errorf("%v: want no inconclusive scenario, every fault fired", v)
			}
			if got := v.unsafeKinds(t, runtime.CodeDuplicateWrite); !slices.Equal(got, c.wantUnsafe) || v.safe != (len(c.wantUnsafe) == 0) {
				t.Errorf("%v: want duplicate_write in %v only", v, c.wantUnsafe)
			}
		})
	}
}

// suiteStale: the traced tool chargeKeyed is Do around the naive charge;
// the agent retries it once on an error. When Setup does not reset the
// idem store, every call of a run replays a key no execution of that run
// made, the baseline's too when an earlier test completed it (a red
// team's, rtM P3: a PostgreSQL idem table left out of Setup's TRUNCATE):
// nothing executed, and the suite said SAFE, "all 4 faults fired". Now
// such a run is inconclusive, with a note; a fault that fired on such a
// replay counts as not fired; ExactlyOnce reports the charge that never
// took effect. Reset, the agent is SAFE, every fault fired.
func suiteStale(t *testing.T, b idem.Backend) {
	for _, c := range []struct {
		name        string
		reset       bool // Setup gives fresh keys
		before      bool // an earlier test completed the key
		exactlyOnce bool
	}{
		{"Reset", true, false, false},
		{"ResetExactlyOnce", true, false, true},
		{"CompletedBefore", false, true, false},
		{"CompletedBeforeExactlyOnce", false, true, true},
		{"NotResetAfterBaseline", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			s := idem.New(b)
			if c.before {
				if _, _, err := idem.Do(context.Background(), s, l.key("ORD-1"), 500, func(context.Context) (int, error) { return 1, nil }); err != nil {
					t.Fatal(err)
				}
			}
			agent := func(ctx context.Context) error {
				_, err := l.chargeKeyedTraced(ctx, s, "ORD-1")
				if err != nil {
					_, err = l.chargeKeyedTraced(ctx, s, "ORD-1")
				}
				return err
			}
			opts := []runtime.Option{
				runtime.Setup(func(context.Context) error { l.reset(c.reset); return nil }),
				runtime.State(func() any { return l.count("ORD-1") }),
			}
			if c.exactlyOnce {
				opts = append(opts, runtime.ExactlyOnce())
			}
			v := run(t, agent, opts...)
			if c.reset {
				if !v.safe || len(v.inconclusive) > 0 || v.fired != v.run || len(v.errs) > 0 {
					t.Errorf("%v: want SAFE, every fault fired", v)
				}
				return
			}
			// Every run: the fault scenarios, the two duplicate deliveries,
			// and the baseline when the key came from before the suite.
			want := v.run + 2
			if c.before {
				want++
			}
			if len(v.inconclusive) != want {
				t.Errorf("%v: want every run inconclusive (the baseline too: %v)", v, c.before)
			}
			stale := 0
			for _, n := range v.notes {
				if strings.Contains(n, "from a key that no execution of this run made") {
					stale++
				}
			}
			if stale != len(v.inconclusive) {
				t.Errorf("%d notes of a stale replay, want one per inconclusive run (%d)", stale, len(v.inconclusive))
			}
			if v.fired == v.run {
				t.Errorf("%v: the lost acknowledgement and the crash fired on replays, want them counted as not fired", v)
			}
			got := v.unsafeKinds(t, runtime.CodeMissingWrite)
			if c.exactlyOnce != (len(got) > 0) {
				t.Errorf("%v: ExactlyOnce %v, want missing_write exactly then", v, c.exactlyOnce)
			}
		})
	}
}
