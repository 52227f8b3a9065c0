package runtime

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An agent writes an order and its lines in one transaction of its own,
// unless it finds the order there already (and orders.ref is UNIQUE: of
// two deliveries at once, the second to commit is rolled back):
// create_order takes the order's number from a sequence (a BIGSERIAL, not
// given back on rollback) and returns it, and add_line writes a line
// under it, keyed by the order's number and the sku. The commit, at the
// end of an attempt, is untraced; an attempt that failed is rolled back
// and the agent tries again, so the retry's order is number 2 where the
// baseline's was 1, and its lines refer to order 2 (and the apple line,
// of a quantity of 3, may be line 3: a number passed by chance). The run
// ended as the
// baseline did, numbers aside: no duplicate_write, and no identity_unstable
// for the lines written again under the new number, which the sink gave
// (it was both, on every run of a red team's PostgreSQL probe). An agent
// that neither looks the order up nor has ref unique makes a second order
// when a delivery comes again, and is caught.
func TestOrderAndLinesNumberedPastARolledBackAttempt(t *testing.T) {
	create := &Op{Name: "create_order", Kind: KindWrite, Params: []string{"ref"}}
	addLine := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order_id", "sku", "qty"}}
	for _, blind := range []bool{false, true} {
		t.Run("blind "+strconv.FormatBool(blind), func(t *testing.T) {
			w := &kvWorld{}
			var orderSeq, lineSeq atomic.Int64
			agent := func(ctx context.Context) error {
				var err error
				for attempt := 0; attempt < 3; attempt++ {
					found := false // the order is looked up first: a delivery made again finds it
					w.do(func(m map[string]any) {
						for _, r := range m["orders"].([]any) {
							found = found || r.(map[string]any)["ref"] == "R-1"
						}
					})
					if found && !blind {
						return nil
					}
					var pending []func(m map[string]any)
					var id int64
					c, _ := Begin(ctx, create, []any{"R-1"}, []any{"R-1"}, nil)
					if err = c.Start(); err == nil {
						id = orderSeq.Add(1)
						pending = append(pending, func(m map[string]any) {
							appendRow(m, "orders", map[string]any{"id": id, "ref": "R-1"})
						})
						err = c.Finish(nil, id)
					}
					for _, l := range []struct {
						sku string
						qty int
					}{{"apple", 3}, {"pear", 1}} {
						if err != nil {
							break
						}
						err = traced(ctx, addLine, []any{id, l.sku, l.qty}, []any{id, l.sku}, func(context.Context) error {
							n := lineSeq.Add(1)
							pending = append(pending, func(m map[string]any) {
								appendRow(m, "lines", map[string]any{"id": n, "order_id": id, "sku": l.sku, "qty": l.qty})
							})
							return nil
						})
					}
					if err != nil {
						continue // rolled back: the numbers taken stay taken
					}
					conflict := false
					w.do(func(m map[string]any) { // the commit, untraced; orders.ref is UNIQUE
						for _, r := range m["orders"].([]any) {
							conflict = conflict || r.(map[string]any)["ref"] == "R-1"
						}
						if conflict && !blind {
							return // rolled back: another delivery committed R-1 first
						}
						conflict = false
						for _, p := range pending {
							p(m)
						}
					})
					if conflict {
						err = errors.New("duplicate key value violates unique constraint")
						continue
					}
					return nil
				}
				return err
			}
			rep := runOn(t, w, func(m map[string]any) {
				orderSeq.Store(0)
				lineSeq.Store(0)
				m["orders"], m["lines"] = []any{}, []any{}
			}, agent)
			var dups, unstable []string
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					switch f.Code {
					case CodeDuplicateWrite:
						dups = append(dups, r.Scenario+": "+f.Message)
					case CodeIdentityUnstable:
						unstable = append(unstable, r.Scenario+": "+f.Message)
					}
				}
			}
			if blind {
				assert.NotEmpty(t, dups, "a delivery made again makes a second order")
				return
			}
			assert.Empty(t, dups, "one order and its lines, under other numbers")
			assert.Empty(t, unstable, "the lines' key holds the number the sink gave the retry's order")
			assert.True(t, rep.Safe, "the report's verdict: %s", strings.Join(append(dups, unstable...), "\n"))
		})
	}
}

// appendRow appends row to the list at key of m.
func appendRow(m map[string]any, key string, row map[string]any) {
	rows, _ := m[key].([]any)
	m[key] = append(rows, row)
}

// The other side of the rule above: an agent that, when a payment's
// confirmation got no answer, starts over with a new payment intent and
// confirms that one. The first confirmation may have charged (it did,
// under lost_acknowledgement), so the new intent's id, although the sink
// gave it, is a fresh key for the same work: identity_unstable stands, as
// the intent made again had an effect of its own.
func TestConfirmingANewIntentAfterALostAnswerIsIdentityUnstable(t *testing.T) {
	createIntent := &Op{Name: "create_intent", Kind: KindWrite, Params: []string{"order"}}
	confirm := &Op{Name: "confirm", Kind: KindWrite, Params: []string{"intent_id", "amount"}}
	w := &kvWorld{}
	var seq atomic.Int64
	agent := func(ctx context.Context) error {
		var err error
		for range 2 {
			var id string
			c, _ := Begin(ctx, createIntent, []any{"o-1"}, []any{"o-1"}, nil)
			if err = c.Start(); err != nil {
				continue
			}
			id = "pi_" + strconv.FormatInt(seq.Add(1), 10)
			w.do(func(m map[string]any) { appendRow(m, "intents", map[string]any{"id": id, "order": "o-1"}) })
			if err = c.Finish(nil, id); err != nil {
				continue
			}
			err = traced(ctx, confirm, []any{id, 100}, []any{id}, func(context.Context) error {
				w.do(func(m map[string]any) { appendRow(m, "charges", map[string]any{"intent": id, "amount": 100}) })
				return nil
			})
			if err == nil {
				return nil
			}
		}
		return err
	}
	rep := runOn(t, w, func(m map[string]any) {
		seq.Store(0)
		m["intents"], m["charges"] = []any{}, []any{}
	}, agent, OnlyScenario(ScenarioLostAck+"/confirm#1"))
	var unstable bool
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			unstable = unstable || f.Code == CodeIdentityUnstable && f.Severity == SeverityError
		}
	}
	assert.True(t, unstable, "a new intent confirmed after a lost answer: %v", codes(rep))
	assert.False(t, rep.Safe)
}

// Of two deliveries at once, which one's create_order the sequence
// answered first is a race: where the first delivery's (1:create_order#1,
// the first execution) got number 2 and the second's (the repeat,
// absorbed) number 1, the first delivery's lines under 2 were an
// identity_unstable ("a new one made by its sink for the redelivery"),
// though the sink gave that number too: 3 runs in 90 of
// TestOrderAndLinesNumberedPastARolledBackAttempt under -race with three
// copies at once (CI218). The first execution's answer counts as the
// sink's where the other delivery's same call was absorbed; not where it
// was a duplicate (a second order made).
func TestKeyFromSinkEitherDeliveryAtOnce(t *testing.T) {
	for _, otherRepeat := range []string{RepeatAbsorbed, RepeatDuplicate} {
		tr := &Trace{Ops: []Operation{
			{ID: "1:create_order#1", Name: "create_order", Kind: KindWrite, Invocation: 1, Identity: `"R-1"`, Result: 2},
			{ID: "2:create_order#2", Name: "create_order", Kind: KindWrite, Invocation: 2, Identity: `"R-1"`, Result: 1, Repeat: otherRepeat},
			{ID: "2:add_line#2", Name: "add_line", Kind: KindWrite, Invocation: 2, Identity: `[1,"apple"]`},
			{ID: "1:add_line#1", Name: "add_line", Kind: KindWrite, Invocation: 1, Identity: `[2,"apple"]`},
		}}
		got := keyFromSink(tr, &tr.Ops[2], &tr.Ops[3], -1, 3)
		assert.Equal(t, otherRepeat == RepeatAbsorbed, got, "the other delivery's create_order %s", otherRepeat)
	}
}
