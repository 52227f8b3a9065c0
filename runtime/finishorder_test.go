package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two creates of one turn on different entities (an invoice for acme, one
// for globex) commute: which lands first is no matter, and the
// exploration does not vary their starts. But the agent sees their
// answers in the order they finish: one that calls the invoice of the
// first answer its primary one ends otherwise when they finish the other
// way round. With their finishes always in class order, no schedule ran
// them so and the agent passed; the reverse schedule now finishes them
// the other way round, and order_variant_outcome is reported. An agent
// that picks acme's invoice whatever the order passes.
func TestAnswersOfCommutingCallsComeBackInEitherOrder(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"customer"}}
	for _, byCompletion := range []bool{true, false} {
		t.Run(fmt.Sprintf("primary by completion=%v", byCompletion), func(t *testing.T) {
			var (
				mu       sync.Mutex
				next     int
				invoices map[string]string
				primary  string
			)
			newInvoice := func(ctx context.Context, customer string) (id string, err error) {
				args := []any{customer}
				c, _ := Begin(ctx, create, args, args, args)
				if err := c.Start(); err != nil {
					return "", err
				}
				defer c.Recover(&err)
				mu.Lock()
				next++
				id = fmt.Sprintf("INV-%d", next)
				invoices[id] = customer
				mu.Unlock()
				return id, c.Finish(nil, id)
			}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, customer := range []string{"acme", "globex"} {
					wg.Go(func() {
						_, err := newInvoice(ctx, customer)
						errs[i] = err
						mu.Lock()
						if primary == "" && (byCompletion || customer == "acme") {
							primary = customer
						}
						mu.Unlock()
					})
				}
				wg.Wait()
				return errs[0]
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { next, invoices, primary = 0, map[string]string{}, ""; return nil }),
				Outcome(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"invoices": len(invoices), "primary": primary}
				}))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded)
			assert.Equal(t, byCompletion, rep.Has(CodeOrderVariantOutcome), "%v", codes(rep))
			assert.False(t, rep.Has(CodeConcurrentWritesEntity), "%v", codes(rep))
		})
	}
}

// The reverse order of a round keeps the starts of different classes in
// class order and finishes them the other way round; within a class,
// both are reversed.
func TestReversedFinishesClassesTheOtherWayRound(t *testing.T) {
	two := roundShape{labels: []string{"a", "b"}, classes: [][]int{{0}, {1}}}
	assert.Equal(t, []Step{{Call: 0}, {Call: 1}, {Call: 1, Finish: true}, {Call: 0, Finish: true}}, two.reversed())
	mixed := roundShape{labels: []string{"a", "b", "c"}, classes: [][]int{{0, 1}, {2}}}
	assert.Equal(t, []Step{{Call: 1}, {Call: 2}, {Call: 0}, {Call: 2, Finish: true}, {Call: 1, Finish: true}, {Call: 0, Finish: true}}, mixed.reversed())
	one := roundShape{labels: []string{"a", "b"}, classes: [][]int{{0, 1}}}
	assert.Equal(t, []Step{{Call: 1}, {Call: 0}, {Call: 1, Finish: true}, {Call: 0, Finish: true}}, one.reversed())
}

// The moment a string begins with, to the end of its zone.
func TestMomentLen(t *testing.T) {
	for s, rest := range map[string]string{
		"2026-05-01T10:00:00Z":                                       "",
		"2026-05-01T10:00:00.123456789Z opened A":                    " opened A",
		"2026-05-01T10:00:00+02:00 opened A":                         " opened A",
		"2026-05-01 10:00:00.5 +0000 UTC opened A":                   " opened A",
		"2026-05-01 10:00:00.5 +0000 UTC m=+0.001234 opened A":       " opened A",
		"2026-05-01 10:00:00 opened A":                               " opened A",
		"2026-05-01T10:00:00,25Z":                                    "",
		"2026-05-01 10:00:00.999999999 -0700 MST m=-1.5":             "",
		"2026-05-01 10:00:00 +0000 UTC Opened by acme, not the zone": " Opened by acme, not the zone",
	} {
		assert.Equal(t, rest, s[momentLen(s):], s)
	}
}

// Two schedules of commuting creates run at other moments: a log whose
// lines begin with the moment the sink stamped is the same outcome, as
// long as its lines say the same in the same order. Lines written in the
// order the answers came back still differ.
func TestMomentsTheSinkStampsAreNoOrderVariantOutcome(t *testing.T) {
	open := &Op{Name: "open_invoice", Kind: KindWrite, Params: []string{"customer"}}
	for _, byCompletion := range []bool{false, true} {
		t.Run(fmt.Sprintf("logged by completion=%v", byCompletion), func(t *testing.T) {
			var (
				mu  sync.Mutex
				log []string
			)
			stamp := func(what string) {
				mu.Lock()
				log = append(log, time.Now().UTC().Format(time.RFC3339Nano)+" "+what)
				mu.Unlock()
			}
			openInvoice := func(ctx context.Context, customer string) (err error) {
				args := []any{customer}
				c, _ := Begin(ctx, open, args, args, args)
				if err := c.Start(); err != nil {
					return err
				}
				defer c.Recover(&err)
				if !byCompletion {
					stamp("opened " + customer)
				}
				return c.Finish(nil)
			}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				for _, customer := range []string{"acme", "globex"} {
					wg.Go(func() {
						if openInvoice(ctx, customer) == nil && byCompletion {
							stamp("answered " + customer)
						}
					})
				}
				wg.Wait()
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { log = nil; return nil }),
				Outcome(func() any {
					mu.Lock()
					defer mu.Unlock()
					return slices.Clone(log)
				}))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded)
			assert.Equal(t, byCompletion, rep.Has(CodeOrderVariantOutcome), "%v", codes(rep))
		})
	}
}
