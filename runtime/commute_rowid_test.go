package runtime

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linesTable is SQLite's lines(id INTEGER PRIMARY KEY, order_id, sku,
// status, created_at DEFAULT CURRENT_TIMESTAMP, UNIQUE(order_id, sku)) as
// State reads it (SELECT * ORDER BY id).
type linesTable struct {
	mu      sync.Mutex
	rows    []map[string]any
	next    int
	stamped bool // created_at is set, to the moment the row was made
}

func (l *linesTable) reset() {
	l.mu.Lock()
	l.rows, l.next = nil, 0
	l.mu.Unlock()
}

// upsert inserts the line of (order, sku), or sets its status.
func (l *linesTable) upsert(order int, sku, status string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.rows {
		if r["order_id"] == order && r["sku"] == sku {
			r["status"] = status
			return
		}
	}
	l.next++
	r := map[string]any{"id": l.next, "order_id": order, "sku": sku, "qty": 2, "status": status}
	if l.stamped {
		r["created_at"] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	l.rows = append(l.rows, r)
}

// state is the order (row 1 of orders, made by Setup) and its lines.
func (l *linesTable) state() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]any, len(l.rows))
	for i, r := range l.rows {
		c := map[string]any{}
		for k, v := range r {
			c[k] = v
		}
		out[i] = c
	}
	return map[string]any{"orders": []any{map[string]any{"id": 1, "ref": "ext-1"}}, "lines": out}
}

// An agent adds three lines to one order in one model turn, the calls in
// parallel, each an upsert of its own line. Whatever the order they land
// in, the order has the same three lines; only the rowids the table gave
// them differ (apple is row 1 in one schedule, plum in another), and with
// created_at, the moments. The agent passed the order's number, 1, and a
// quantity of 2, numbers of lines by chance; each line refers to the
// order, row 1 in every schedule. The writes commute: no
// concurrent_writes_same_entity (every run of the red team's SQLite probe
// had one, the end states being compared byte for byte). Two calls that
// set one line's status to two values in parallel end as the one that
// landed last, and are caught.
func TestParallelUpsertsOfLinesNumberedByTheTableCommute(t *testing.T) {
	add := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order_id", "sku", "qty", "status"}}
	for _, c := range []struct {
		name     string
		stamped  bool
		calls    [][2]string // sku, status
		commutes bool
	}{
		{"three lines", false, [][2]string{{"apple", "new"}, {"pear", "new"}, {"plum", "new"}}, true},
		{"three lines with created_at", true, [][2]string{{"apple", "new"}, {"pear", "new"}, {"plum", "new"}}, true},
		{"one line set to two statuses", false, [][2]string{{"apple", "held"}, {"apple", "released"}}, false},
		{"two lines, one set to two statuses", false, [][2]string{{"pear", "new"}, {"apple", "held"}, {"apple", "released"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &linesTable{stamped: c.stamped}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, len(c.calls))
				for i, call := range c.calls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cl, _ := Begin(ctx, add, []any{1, call[0], 2, call[1]}, []any{1, call[0]}, []any{1})
						if errs[i] = cl.Start(); errs[i] != nil {
							return
						}
						l.upsert(1, call[0], call[1])
						errs[i] = cl.Finish(nil)
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						return err
					}
				}
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { l.reset(); return nil }),
				State(l.state), OnlyScenario(ScenarioInterleaving))
			require.NoError(t, err)
			var found []string
			commuteNoted := false
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Code == CodeConcurrentWritesEntity {
						found = append(found, r.Scenario+": "+f.Message)
					}
				}
				if r.Trace != nil {
					commuteNoted = commuteNoted || strings.Contains(strings.Join(r.Trace.Notes, "\n"), "they commute")
				}
			}
			require.NotEmpty(t, rep.Results, "no schedule ran")
			if c.commutes {
				assert.Empty(t, found, "upserts of distinct lines commute")
				assert.True(t, commuteNoted, "no note says the writes commute")
			} else {
				assert.NotEmpty(t, found, "two statuses of one line: the one to land last stays")
			}
		})
	}
}

// The same agent with an Outcome that lists the lines as the table gives
// them, ids and all (the red team's SQLite probe: SELECT id, order_id, sku,
// qty FROM lines ORDER BY id). The ids are the numbers the table gave in
// the order the lines landed; the State ends are one world, and the
// Outcome lists the same lines under those numbers: no
// order_variant_outcome, and the writes commute (before, both findings on
// every run, the Outcome being compared byte for byte). An Outcome that
// says which line is which by its number (apple's line id, the one to land
// first) and two statuses of one line still depend on the order.
func TestAnOutcomeListingLinesByTheirRowidsIsNoOrderVariance(t *testing.T) {
	add := &Op{Name: "add_line", Kind: KindWrite, Params: []string{"order_id", "sku", "qty", "status"}}
	for _, c := range []struct {
		name    string
		calls   [][2]string // sku, status
		apple   bool        // the Outcome names apple's line by its id too
		variant bool
	}{
		{"three lines", [][2]string{{"apple", "new"}, {"pear", "new"}, {"plum", "new"}}, false, false},
		{"three lines, apple's by its id", [][2]string{{"apple", "new"}, {"pear", "new"}, {"plum", "new"}}, true, true},
		{"two lines, one set to two statuses", [][2]string{{"pear", "new"}, {"apple", "held"}, {"apple", "released"}}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &linesTable{}
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, len(c.calls))
				for i, call := range c.calls {
					wg.Go(func() {
						cl, _ := Begin(ctx, add, []any{1, call[0], 2, call[1]}, []any{1, call[0]}, []any{1})
						if errs[i] = cl.Start(); errs[i] != nil {
							return
						}
						l.upsert(1, call[0], call[1])
						errs[i] = cl.Finish(nil)
					})
				}
				wg.Wait()
				return errors.Join(errs...)
			}
			outcome := func() any {
				lines := l.state().(map[string]any)["lines"]
				if !c.apple {
					return lines
				}
				l.mu.Lock()
				defer l.mu.Unlock()
				for _, r := range l.rows {
					if r["sku"] == "apple" {
						return map[string]any{"lines": lines, "apple": r["id"]}
					}
				}
				return lines
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error { l.reset(); return nil }),
				State(l.state), Outcome(outcome), OnlyScenario(ScenarioInterleaving))
			require.NoError(t, err)
			require.NotEmpty(t, rep.Results, "no schedule ran")
			var variant, concurrent []string
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					switch f.Code {
					case CodeOrderVariantOutcome:
						variant = append(variant, r.Scenario)
					case CodeConcurrentWritesEntity:
						concurrent = append(concurrent, r.Scenario)
					}
				}
			}
			if c.variant {
				assert.NotEmpty(t, variant, "the Outcome depends on the order")
				assert.NotEmpty(t, concurrent, "the writes do not commute")
				return
			}
			assert.Empty(t, variant, "the same lines under the numbers they landed in")
			assert.Empty(t, concurrent, "upserts of distinct lines commute")
		})
	}
}

// Two quotes asked for in parallel, the answers ranked as they came back:
// the Outcome lists them under "id", the rank (option 1 is the one the
// agent recommends). State, keyed by supplier, ends the same in every
// schedule; so no number the sink gave differs, and the ids are the
// agent's ranks, which the order decided: an order_variant_outcome (it
// passed as one world's rows under other numbers: red team, /tmp/rt26 o1).
func TestAnOutcomeRankingAnswersUnderIDIsOrderVariant(t *testing.T) {
	quote := &Op{Name: "request_quote", Kind: KindWrite, Params: []string{"supplier"}}
	var mu sync.Mutex
	var quotes map[string]int
	var ranked []any
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []string{"acme", "globex"} {
			wg.Go(func() {
				cl, _ := Begin(ctx, quote, []any{s}, []any{s}, []any{"rfq-1"})
				if errs[i] = cl.Start(); errs[i] != nil {
					return
				}
				mu.Lock()
				quotes[s] = 100 + 10*i
				ranked = append(ranked, map[string]any{"id": len(ranked) + 1, "supplier": s})
				mu.Unlock()
				errs[i] = cl.Finish(nil)
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			mu.Lock()
			quotes, ranked = map[string]int{}, nil
			mu.Unlock()
			return nil
		}),
		State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(quotes) }),
		Outcome(func() any { mu.Lock(); defer mu.Unlock(); return slices.Clone(ranked) }),
		OnlyScenario(ScenarioInterleaving))
	require.NoError(t, err)
	var variant []string
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			if f.Code == CodeOrderVariantOutcome {
				variant = append(variant, r.Scenario)
			}
		}
	}
	assert.NotEmpty(t, variant, "the ranks are the order's")
}
