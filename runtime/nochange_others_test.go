package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// creditDesk models red team rtY #3's ent agent: each delivery upserts the
// customer's name (an ON CONFLICT DO UPDATE that sets the name the row
// already has: no change, ever) and then refunds an order. The naive
// refund credits the customer again on a repeat (the upsert of the refund
// row hides the second insert); the keyed one credits only when the
// refund's row was absent. live starts a goroutine in Setup that waits on
// a channel for good (a database/sql pool's opener).
type creditDesk struct {
	naive bool
	live  bool
	// mail makes the upsert queue a mail of the change, which the agent's
	// client sends (into the state's mails) when flush is called: by the
	// agent, untraced, right after the upsert returns (flushBetween), or
	// by the refund's call, in its window.
	mail, flushBetween bool
	// ensure starts each world with no customer, which the agent creates
	// if absent first (ON CONFLICT DO NOTHING); rows makes State a list
	// of customer rows, as an ORM's query returns them: with one row, a
	// change anywhere in it is a change of the list.
	ensure, rows bool
	pending      int
	mails        []string

	mu        sync.Mutex
	customers map[string]map[string]any
	refunds   map[string]int
	stop      chan struct{}
	done      chan struct{}
}

func (d *creditDesk) start() {
	d.mu.Lock()
	d.customers = map[string]map[string]any{"ann@example.com": {"name": "Ann", "credits": 0}}
	if d.ensure {
		d.customers = map[string]map[string]any{}
	}
	d.refunds = map[string]int{}
	d.pending, d.mails = 0, []string{}
	d.mu.Unlock()
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	if d.live {
		go func() { defer close(d.done); <-d.stop }()
	} else {
		close(d.done)
	}
}

func (d *creditDesk) close() { close(d.stop); <-d.done }

func (d *creditDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	cs := map[string]any{}
	for k, c := range d.customers {
		cs[k] = map[string]any{"name": c["name"], "credits": c["credits"]}
	}
	rs := map[string]int{}
	for k, v := range d.refunds {
		rs[k] = v
	}
	if d.rows {
		var list []any
		for k, c := range d.customers {
			list = append(list, map[string]any{"email": k, "name": c["name"], "credits": c["credits"], "refunds": rs})
		}
		return list
	}
	return map[string]any{"customers": cs, "refunds": rs, "mails": append([]string{}, d.mails...)}
}

func (d *creditDesk) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for ; d.pending > 0; d.pending-- {
		d.mails = append(d.mails, "ann@example.com renamed")
	}
}

func (d *creditDesk) rename(email, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.customers[email]["name"] = name
	if d.mail {
		d.pending++
	}
}

func (d *creditDesk) refund(email, order string, cents int) {
	d.flush()
	d.mu.Lock()
	defer d.mu.Unlock()
	_, done := d.refunds[order]
	if d.naive || !done {
		d.customers[email]["credits"] = d.customers[email]["credits"].(int) + cents
	}
	d.refunds[order] = cents
}

func runCreditDesk(t *testing.T, d *creditDesk, opts ...Option) *Report {
	t.Helper()
	rename := &Op{Name: "rename_customer", Kind: KindWrite, Params: []string{"email", "name"}}
	refund := &Op{Name: "refund", Kind: KindWrite, Params: []string{"email", "order", "cents"}}
	ensure := &Op{Name: "ensure_customer", Kind: KindWrite, Params: []string{"email", "name"}}
	retry := func(f func() error) error {
		err := f()
		if err != nil && !errors.Is(err, context.Canceled) {
			err = f()
		}
		return err
	}
	agent := func(ctx context.Context) error {
		if d.ensure {
			if err := retry(func() error {
				return traced(ctx, ensure, []any{"ann@example.com", "Ann"}, []any{"ann@example.com"}, func(context.Context) error {
					d.mu.Lock()
					defer d.mu.Unlock()
					if d.customers["ann@example.com"] == nil {
						d.customers["ann@example.com"] = map[string]any{"name": "Ann", "credits": 0}
					}
					return nil
				})
			}); err != nil {
				return err
			}
		}
		if err := retry(func() error {
			return traced(ctx, rename, []any{"ann@example.com", "Ann"}, []any{"ann@example.com"}, func(context.Context) error {
				d.rename("ann@example.com", "Ann")
				return nil
			})
		}); err != nil {
			return err
		}
		if d.flushBetween {
			d.flush()
		}
		return retry(func() error {
			return traced(ctx, refund, []any{"ann@example.com", "ord-1", 500}, []any{"ord-1"}, func(context.Context) error {
				d.refund("ann@example.com", "ord-1", 500)
				return nil
			})
		})
	}
	rep, err := Run(context.Background(), t.Name(), agent, append([]Option{
		Setup(func(context.Context) error { d.start(); return nil }),
		Teardown(func(context.Context) error { d.close(); return nil }),
		State(d.snapshot)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A write that sets what is already there (the customer's name, upserted
// to the name the row has) changes nothing in any window, here or in the
// baseline, and its repeat is absorbed where the run ended as the
// baseline did. Beside a naive refund that credits again on a repeat, the
// run does not end so (the credits differ), and the upsert was a
// duplicate_write in every scenario that repeated the refund too, with
// "State saw no execution change the world", while the agent with the
// keyed refund was safe (red team rtY #3, ent on SQLite). The end's
// difference is the credits, which the refund's repeat changed in its own
// window, as its execution did in the baseline: it says nothing of the
// upsert, whose repeat is absorbed; only the refund is a duplicate.
func TestANoOpUpsertBesideAnotherOpsDuplicateIsAbsorbed(t *testing.T) {
	for _, c := range []struct {
		label        string
		live, ensure bool
	}{{"no goroutine", false, false}, {"a goroutine at rest", true, false}, {"rows created if absent", true, true}} {
		t.Run(c.label, func(t *testing.T) {
			rep := runCreditDesk(t, &creditDesk{naive: true, live: c.live, ensure: c.ensure, rows: c.ensure})
			for _, f := range findings(rep, "") {
				assert.Equal(t, "duplicate_write refund", f, "the upsert is no duplicate: %v", findings(rep, ""))
			}
			for _, sc := range []string{ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
				assert.Contains(t, findings(rep, sc), "duplicate_write refund", sc)
			}
			res := resultOf(t, rep, ScenarioDuplicateSeq)
			assert.NotEmpty(t, notesSaying(res.Trace, "only at places that a repeat of refund changed in its own window"), "%v", res.Trace.Notes)

			rep = runCreditDesk(t, &creditDesk{live: c.live, ensure: c.ensure, rows: c.ensure})
			assert.Empty(t, findings(rep, ""))
			assert.Zero(t, rep.InconclusiveCount)
		})
	}
}

// The upsert's repeat is still counted where its effect lands outside
// every traced write: a client that buffers a mail of each rename and
// sends it before the next call, untraced. The run ends with a second
// mail, beside the naive refund's second credit; the mail changed no
// window, and the end's difference there is no other op's.
func TestANoOpUpsertWhoseEffectLandsOutsideEveryWindowStillCounts(t *testing.T) {
	rep := runCreditDesk(t, &creditDesk{naive: true, mail: true, flushBetween: true}, OnlyScenario(ScenarioDuplicateSeq))
	assert.ElementsMatch(t, []string{"duplicate_write refund", "duplicate_write rename_customer"}, findings(rep, ScenarioDuplicateSeq))
	rep = runCreditDesk(t, &creditDesk{mail: true, flushBetween: true}, OnlyScenario(ScenarioDuplicateSeq))
	assert.Equal(t, []string{"duplicate_write rename_customer"}, findings(rep, ScenarioDuplicateSeq))
}

// Where the upsert's mail lands in the refund's window (the refund's
// call sends what the client buffered), the refund's repeat window holds
// the second mail, as its first window held the first in the baseline:
// the window's change is the refund's, as every repeat's window is its
// own, and the run is unsafe, the second mail in the finding, whichever
// refund the agent has. The upsert's repeat is absorbed beside it.
func TestANoOpUpsertWhoseMailLandsInAnotherRepeatsWindowIsStillUnsafe(t *testing.T) {
	for _, naive := range []bool{true, false} {
		rep := runCreditDesk(t, &creditDesk{naive: naive, mail: true}, OnlyScenario(ScenarioDuplicateSeq))
		assert.False(t, rep.Safe, "naive %v", naive)
		found := false
		for _, f := range rep.Findings {
			found = found || f.Code == CodeDuplicateWrite && strings.Contains(f.Message, "mails")
		}
		assert.True(t, found, "naive %v: the second mail is in a finding: %v", naive, rep.Findings)
	}
}

// A repeat absorbed beside other ops' repeats stays absorbed only where
// one of those repeats was counted: where each was absorbed or taken as
// an update, no finding names the end's difference, and the repeat is
// left unjudged, the scenario inconclusive.
func TestANoOpRepeatBesideUncountedRepeatsIsNotJudged(t *testing.T) {
	for _, c := range []struct {
		other    string
		absorbed bool
	}{{RepeatDuplicate, true}, {RepeatUpdate, false}, {RepeatAbsorbed, false}} {
		tr := &Trace{Ops: []Operation{
			{ID: "2:rename_customer#2", Name: "rename_customer", Identity: `"ann"`, Repeat: RepeatAbsorbed, JudgedBy: JudgedByState},
			{ID: "2:refund#2", Name: "refund", Identity: `"ord-1"`, Repeat: c.other, JudgedBy: JudgedByState},
		}}
		besideJudged(tr, []besideRepeat{{0, [][]string{{"ensure_customer", "refund"}}}})
		if c.absorbed {
			assert.Equal(t, RepeatAbsorbed, tr.Ops[0].Repeat, c.other)
			assert.False(t, tr.unsettled)
			assert.NotEmpty(t, notesSaying(tr, "was absorbed"), c.other)
		} else {
			assert.Empty(t, tr.Ops[0].Repeat, c.other)
			assert.True(t, tr.unsettled, c.other)
			assert.NotEmpty(t, notesSaying(tr, "none of them counted there"), c.other)
		}
	}
}
