package runtime

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beatDesk is an order desk whose worker, started by Setup, books each
// job's order (once per order where dedup is set) and then lowers the
// count of pending jobs, which its Settle reads. A second goroutine of
// Setup's flips a phase in State every 20 ms, as a lease renewed or a
// poller's last-seen mark does: the world never holds still.
type beatDesk struct {
	dedup bool
	// period is the heartbeat's (20 ms where zero), latency the worker's
	// before it books (15 ms where zero).
	period, latency time.Duration
	// shape is State's: "" the orders and the phase; "jobs" a table of
	// jobs whose one running job's heartbeat_at is the phase, each order
	// a job row after it; "account" one account row, its balance charged
	// 10 an order beside its last_seen, the phase; "seed" the balance
	// alone, no heartbeat, and Setup books two fixture orders through the
	// worker, which lands them after it returned; "lines" each row as a
	// line ("order=o-1", "worker=w1 phase=a").
	shape string
	// retry has the agent book the order again when a call fails, up to
	// three times, as an agent's loop does.
	retry   bool
	mu      sync.Mutex
	pending int
	orders  []string
	phase   string
	jobs    chan string
	stop    func()
}

func (d *beatDesk) start() {
	d.mu.Lock()
	d.pending, d.orders, d.phase = 0, nil, "a"
	d.mu.Unlock()
	d.jobs = make(chan string, 4)
	done, beating, quit := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for id := range d.jobs {
			time.Sleep(cmp.Or(d.latency, 15*time.Millisecond)) // the queue's: a beat in most windows
			d.mu.Lock()
			if !d.dedup || !slices.Contains(d.orders, id) {
				d.orders = append(d.orders, id)
			}
			d.pending--
			d.mu.Unlock()
		}
	}()
	if d.shape == "seed" {
		d.mu.Lock()
		d.pending += 2
		d.mu.Unlock()
		d.jobs <- "seed-1"
		d.jobs <- "seed-2"
		close(beating)
		d.stop = func() { close(d.jobs); <-done }
		return
	}
	go func() {
		defer close(beating)
		t := time.NewTicker(cmp.Or(d.period, 20*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				d.mu.Lock()
				d.phase = map[string]string{"a": "b", "b": "a"}[d.phase]
				d.mu.Unlock()
			}
		}
	}()
	d.stop = func() { close(d.jobs); close(quit); <-done; <-beating }
}

func (d *beatDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	balance := 100 - 10*len(d.orders)
	switch d.shape {
	case "jobs":
		jobs := []any{map[string]any{"id": 1, "kind": "export", "state": "running", "heartbeat_at": d.phase}}
		for i, o := range d.orders {
			jobs = append(jobs, map[string]any{"id": i + 2, "kind": "order", "state": "done", "order": o})
		}
		return map[string]any{"jobs": jobs}
	case "account":
		return map[string]any{"accounts": []any{map[string]any{"id": "acme", "balance": balance, "last_seen": d.phase}}}
	case "seed":
		return map[string]any{"balance": balance}
	case "lines":
		orders := []any{}
		for _, o := range d.orders {
			orders = append(orders, "order="+o)
		}
		return map[string]any{"orders": orders, "workers": []any{"worker=w1 phase=" + d.phase}}
	}
	return map[string]any{"orders": slices.Clone(d.orders), "phase": d.phase}
}

func (d *beatDesk) settle(ctx context.Context) error { return noneLeft(ctx, &d.mu, &d.pending) }

// run runs the suite of an agent that books order o-1, with State and the
// Settle. Setup starts the desk's goroutines, or, where the test started
// them once before (started), only empties the desk, as a Setup does for
// a service the test runs for all its suites.
func (d *beatDesk) run(t *testing.T, started bool, opts ...Option) *Report {
	t.Helper()
	op := &Op{Name: "book_order", Kind: KindWrite, Params: []string{"order"}}
	book := func(ctx context.Context) error {
		return traced(ctx, op, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
			d.mu.Lock()
			d.pending++
			d.mu.Unlock()
			d.jobs <- "o-1"
			return nil
		})
	}
	agent := book
	if d.retry {
		agent = func(ctx context.Context) (err error) {
			for range 3 {
				if err = book(ctx); err == nil {
					return nil
				}
			}
			return err
		}
	}
	rep, err := Run(context.Background(), t.Name(), agent, append([]Option{
		Setup(func(context.Context) error {
			if started {
				d.mu.Lock()
				d.orders = nil
				d.mu.Unlock()
				return nil
			}
			d.start()
			return nil
		}),
		Teardown(func(context.Context) error {
			if !started {
				d.stop()
			}
			return nil
		}),
		State(d.snapshot), Settle(d.settle)}, opts...)...)
	require.NoError(t, err)
	return rep
}

// A heartbeat in State beside a Settle, the queue's latency (15 ms) holding
// most windows open across a beat. The baseline's end, read once after the
// Settle, learned no restless place, and the correct agent's repeats were
// a duplicate_write ("the repeat changed the state: phase: "a" → "b"") in
// 10 suites of 10 (in 7 of 20 with an 8 ms latency). The place is now
// learned before the baseline's agent runs and read as null in every
// state, and the baseline's trace says so; the buggy agent, whose desk
// books the order twice, is still caught.
func TestAHeartbeatInStateBesideASettle(t *testing.T) {
	for _, started := range []bool{false, true} {
		for range 2 {
			d := &beatDesk{dedup: true}
			if started {
				d.start()
			}
			rep := d.run(t, started)
			if started {
				d.stop()
			}
			for _, r := range rep.Results {
				assert.Empty(t, r.Findings, "the correct agent's %s (started before: %v): %q", r.Scenario, started, r.Trace.Notes)
				assert.False(t, r.Inconclusive, "the correct agent's %s (started before: %v): %q", r.Scenario, started, r.Trace.Notes)
			}
			if got := notesSaying(rep.Baseline.Trace, "State's phase changed by itself"); assert.Len(t, got, 1, "%q", rep.Baseline.Trace.Notes) {
				assert.Contains(t, got[0], "read as null in every state")
			}
			// A repeat the state found to change nothing says the
			// state it was judged by left the phase out (red team rV:
			// "state unchanged" read as if the whole state was seen).
			blind := 0
			for _, r := range rep.Results {
				absorbed := false
				for _, o := range r.Trace.Ops {
					absorbed = absorbed || o.Repeat == RepeatAbsorbed && (o.JudgedBy == JudgedByState || o.JudgedBy == JudgedByEndState)
				}
				notes := notesSaying(r.Trace, "by a state that leaves out phase")
				if !absorbed {
					assert.Empty(t, notes, "%s", r.Scenario)
					continue
				}
				if assert.Len(t, notes, 1, "%s: %q", r.Scenario, r.Trace.Notes) {
					blind++
					assert.Contains(t, notes[0], "a second effect there alone would not be seen")
				}
			}
			assert.NotZero(t, blind, "no repeat was judged by the state")
		}
		d := &beatDesk{}
		if started {
			d.start()
		}
		rep := d.run(t, started)
		if started {
			d.stop()
		}
		for _, sc := range []string{"crash_restart/book_order#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
			assert.NotEmpty(t, resultOf(t, rep, sc).Findings, "the buggy agent's %s (started before: %v)", sc, started)
		}
	}
}

// A heartbeat every 80 ms, the queue taking 40 ms: with a hold of 50 ms the
// look before the baseline's agent ended between two beats and learned
// nothing, and the correct agent was a duplicate_write in 15 runs of 15
// (red team rV). The hold is 100 ms, as for the baseline's end without a
// Settle.
func TestASlowHeartbeatBesideASettleIsLearned(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		rep := (&beatDesk{dedup: dedup, period: 80 * time.Millisecond, latency: 40 * time.Millisecond}).run(t, false)
		if !dedup {
			assert.NotEmpty(t, findings(rep, ScenarioDuplicateSeq), "the buggy agent")
			continue
		}
		assert.Len(t, notesSaying(rep.Baseline.Trace, "State's phase changed by itself"), 1, "%q", rep.Baseline.Trace.Notes)
		for _, r := range rep.Results {
			assert.Empty(t, r.Findings, "the correct agent's %s: %q", r.Scenario, r.Trace.Notes)
		}
	}
}

// What the look before the baseline's agent learns hides nothing the calls
// change (red team rV). Setup's own fixture orders, which its worker books
// after Setup returned, change the balance twice: the Settle runs first,
// and nothing is learned. A heartbeat in the one row of a table (a running
// job's heartbeat_at beside the jobs the agent adds; an account's
// last_seen beside the balance the agent charges) is learned as that field
// of that row, not as the whole table. Before, each of the three made the
// buggy agent's second order pass in every run; the correct agent is safe.
func TestTheLookForAHeartbeatHidesNothingTheCallsChange(t *testing.T) {
	for _, c := range []struct{ shape, learned string }{
		{"seed", ""},
		{"jobs", "jobs[id=1].heartbeat_at"},
		{"account", "accounts[id=\"acme\"].last_seen"},
	} {
		for _, dedup := range []bool{true, false} {
			rep := (&beatDesk{dedup: dedup, shape: c.shape}).run(t, false)
			notes := notesSaying(rep.Baseline.Trace, "changed by itself twice or more")
			if c.learned == "" {
				assert.Empty(t, notes, "%s", c.shape)
			} else if assert.Len(t, notes, 1, "%s: %q", c.shape, rep.Baseline.Trace.Notes) {
				assert.Contains(t, notes[0], "State's "+c.learned+" changed", c.shape)
			}
			if !dedup {
				for _, sc := range []string{"crash_restart/book_order#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
					assert.NotEmpty(t, resultOf(t, rep, sc).Findings, "the buggy agent's %s (%s)", sc, c.shape)
				}
				continue
			}
			for _, r := range rep.Results {
				assert.Empty(t, r.Findings, "the correct agent's %s (%s): %q", r.Scenario, c.shape, r.Trace.Notes)
			}
		}
	}
}

// The places the look learns, and the nulling, on the shapes red team rV
// found in real worlds: a lease row named by its name column (no id), a
// lock key that comes and goes, the only row of a list without a naming
// column. What holds the place (the list, the row, the other fields) is
// never learned, and only that field of that row is nulled.
func TestRestlessPlacesAreValuesInTheirRows(t *testing.T) {
	for _, c := range []struct {
		name, a, b, want, later, nulled string
	}{
		{"lease by name",
			`{"leases":[{"name":"relay","renewed_at":"t1"},{"name":"sweeper","renewed_at":"t1"}]}`,
			`{"leases":[{"name":"relay","renewed_at":"t2"},{"name":"sweeper","renewed_at":"t1"}]}`,
			`leases[name="relay"].renewed_at`,
			`{"leases":[{"name":"relay","renewed_at":"t9"},{"name":"sweeper","renewed_at":"t9"},{"name":"x","renewed_at":"t9"}]}`,
			`{"leases":[{"name":"relay","renewed_at":null},{"name":"sweeper","renewed_at":"t9"},{"name":"x","renewed_at":"t9"}]}`},
		{"a key that comes and goes",
			`{"locks":{}}`, `{"locks":{"sweeper":"w1"}}`,
			`locks.sweeper`, `{"locks":{}}`, `{"locks":{"sweeper":null}}`},
		{"the only row",
			`{"jobs":[{"kind":"export","beat":"t1"}]}`, `{"jobs":[{"kind":"export","beat":"t2"}]}`,
			`jobs[kind="export"].beat`,
			`{"jobs":[{"kind":"export","beat":"t9"},{"kind":"report","beat":null}]}`,
			`{"jobs":[{"kind":"export","beat":null},{"kind":"report","beat":null}]}`},
		{"a row formatted as a line (red team rW)",
			`{"heartbeat":["worker=w1 ticks=6"],"accounts":["id=acme balance=90"]}`,
			`{"heartbeat":["worker=w1 ticks=7"],"accounts":["id=acme balance=90"]}`,
			`heartbeat[the line "worker=w1 ticks="…]`,
			`{"heartbeat":["worker=w1 ticks=40","worker=w2 ticks=3"],"accounts":["id=acme balance=80"]}`,
			`{"heartbeat":["worker=w1 ticks=","worker=w2 ticks=3"],"accounts":["id=acme balance=80"]}`},
	} {
		a, err := decodeState(c.a)
		assert.NoError(t, err)
		b, err := decodeState(c.b)
		assert.NoError(t, err)
		var got [][]string
		restlessPlaces(nil, a, b, &got)
		if assert.Len(t, got, 1, c.name) {
			assert.Equal(t, c.want, restlessName(got[0]), c.name)
		}
		assert.JSONEq(t, c.nulled, nullRestless(c.later, got), c.name)
	}
	// Lists that are no rows, and whole objects, are never places; nor is
	// a line that shares nothing before a separator with the one it
	// became, nor a line added beside the others (a log).
	for _, c := range [][2]string{
		{`{"log":["b1"],"row":{"x":1}}`, `{"log":["b1","b2"],"row":null}`},
		{`{"n":["1"]}`, `{"n":["2"]}`},
		{`{"log":["beat 1"]}`, `{"log":["beat 1","beat 2"]}`},
	} {
		var got [][]string
		a, _ := decodeState(c[0])
		b, _ := decodeState(c[1])
		restlessPlaces(nil, a, b, &got)
		assert.Empty(t, got, "%s → %s", c[0], c[1])
	}
}

// A heartbeat slower than the look (one beat every 130 ms) in the one row
// of an account whose balance the calls charge, the queue taking 40 ms,
// the agent booking again when a call fails (the crashed delivery's next
// call, refused): the look learns nothing, the baseline, which the look
// makes the longest
// run, ends after the first beat, and the later runs end before it. The
// crash scenario's end then differed from the baseline's in last_seen
// alone, which that run never changed, and was taken for a second effect
// carried between calls (gapcarried.go): the correct agent was a
// duplicate_write in every run (red team rV's desk, 6 of 6). A value the
// run never changed is no effect of it; the buggy agent, whose second
// charge lowers the balance, is still caught.
func TestAHeartbeatSlowerThanTheLookIsNoSecondEffect(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		rep := (&beatDesk{dedup: dedup, shape: "account", retry: true, period: 130 * time.Millisecond, latency: 40 * time.Millisecond}).run(t, false)
		if !dedup {
			for _, sc := range []string{"crash_restart/book_order#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
				assert.NotEmpty(t, resultOf(t, rep, sc).Findings, "the buggy agent's %s", sc)
			}
			continue
		}
		for _, r := range rep.Results {
			assert.Empty(t, r.Findings, "the correct agent's %s: %q", r.Scenario, r.Trace.Notes)
		}
	}
}

// A State that formats each row as a line ("worker=w1 phase=a", as
// idem/sqlite's stock desk does): the heartbeat's line became another
// line, which the look did not learn (only values in objects were), and a
// correct agent beside it was a duplicate_write in 8 to 9 runs of 10 (red
// team rW's SQLite heartbeat table). The line is learned by how it begins
// and read as that beginning alone; the buggy agent's second order, a
// line of its own, is still caught.
func TestAHeartbeatInALineOfState(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		rep := (&beatDesk{dedup: dedup, shape: "lines"}).run(t, false)
		if !dedup {
			for _, sc := range []string{"crash_restart/book_order#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
				assert.NotEmpty(t, resultOf(t, rep, sc).Findings, "the buggy agent's %s", sc)
			}
			continue
		}
		assert.Len(t, notesSaying(rep.Baseline.Trace, `State's workers[the line "worker=w1 phase="…] changed by itself`), 1, "%q", rep.Baseline.Trace.Notes)
		for _, r := range rep.Results {
			assert.Empty(t, r.Findings, "the correct agent's %s: %q", r.Scenario, r.Trace.Notes)
		}
	}
}
