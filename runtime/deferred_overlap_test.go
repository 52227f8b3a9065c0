package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bookings is a payments service with idempotency keys that books a charge
// some time after it accepted the request: a client that gives up first
// (its timeout is shorter) leaves the booking to land between its calls.
// A key in flight is answered 409, a key booked is replayed.
type bookings struct {
	mu      sync.Mutex
	charges int
	keys    map[string]bool // key -> booked
	work    time.Duration
	wg      sync.WaitGroup
}

func (b *bookings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	b.mu.Lock()
	booked, seen := b.keys[key]
	if !seen {
		b.keys[key] = false
	}
	b.mu.Unlock()
	switch {
	case seen && booked:
		w.WriteHeader(http.StatusOK) // the replay
		return
	case seen:
		http.Error(w, "in progress", http.StatusConflict)
		return
	}
	b.wg.Add(1)
	defer b.wg.Done()
	time.Sleep(b.work)
	b.mu.Lock()
	b.charges++
	b.keys[key] = true
	b.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (b *bookings) snapshot() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return map[string]any{"charges": b.charges}
}

// An agent retries a charge whose client times out before the service
// books it: the booking lands between its calls, and a later attempt with
// the same key is answered by the service's replay. No call of charge
// changes the state in its own window, here or in the baseline. When two
// deliveries run at once, their last attempts run side by side (in one
// cluster, whose snapshots are equal): they left one charge, as one
// delivery does, and the repeat is judged by the end state, not counted
// (it was, 14 runs of 15, when only a repeat that ran alone was). An agent
// that makes its key afresh for each delivery charges twice and is caught.
func TestOverlappedRepeatsAfterABookingLandedBetweenCallsAreJudgedByTheEnd(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	for _, c := range []struct {
		name           string
		keyPerDelivery bool
		wantDup        bool
	}{
		{"one key for the order", false, false},
		{"a key per delivery", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				svc *bookings
				srv *httptest.Server
			)
			client := &http.Client{Timeout: 5 * time.Millisecond}
			// Each delivery numbers its key with a counter: counting the
			// keys stored so far, two deliveries at once both counted none
			// on a loaded machine (CI), made the same key, charged once,
			// and the repeat was rightly absorbed.
			var deliveries atomic.Int64
			agent := func(ctx context.Context) error {
				key := "order-1"
				if c.keyPerDelivery {
					key = fmt.Sprintf("order-1/%d", deliveries.Add(1))
				}
				var err error
				// Enough attempts for the baseline to succeed on a loaded
				// machine: with 8, every attempt's 5 ms ran out there, the
				// replay's too (2 runs in 20 at load 20 under -race).
				for attempt := 0; attempt < 40; attempt++ {
					err = traced(ctx, charge, []any{"order-1"}, []any{"order-1"}, func(ctx context.Context) error {
						req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
						if err != nil {
							return err
						}
						req.Header.Set("Idempotency-Key", key)
						resp, err := client.Do(req)
						if err != nil {
							return err
						}
						resp.Body.Close()
						// The answer is read and handled while the other
						// delivery's call runs: the last attempts of two
						// deliveries overlap.
						time.Sleep(3 * time.Millisecond)
						if resp.StatusCode/100 != 2 {
							return errors.New(resp.Status)
						}
						return nil
					})
					if err == nil {
						return nil
					}
					select {
					case <-ctx.Done():
						return err
					case <-time.After(30 * time.Millisecond):
					}
				}
				return err
			}
			suite := func() (*Report, *Result) {
				rep, err := Run(context.Background(), t.Name(), agent,
					OnlyScenario(ScenarioDuplicateConcurrent),
					Setup(func(context.Context) error {
						deliveries.Store(0)
						svc = &bookings{keys: map[string]bool{}, work: 20 * time.Millisecond}
						srv = httptest.NewServer(svc)
						return nil
					}),
					Teardown(func(context.Context) error {
						srv.Close()
						svc.wg.Wait()
						return nil
					}),
					State(func() any { return svc.snapshot() }))
				require.NoError(t, err)
				require.True(t, rep.BaselineSucceeded, "baseline: %s", rep.BaselineFailure)
				require.Len(t, rep.Results, 1)
				return rep, rep.Results[0]
			}
			// The case needs the last attempts to overlap, which timing
			// decides: on a machine whose CPUs a parallel job held, they
			// did not, once (CI run 126), and in 1 of 20 tests of five
			// runs at load 20. The suite runs again then, up to ten
			// times; the verdict must be right in every run, where they
			// overlapped or not, and where the booking landed inside a
			// call's window or between calls (gapcarried.go: a missed
			// duplicate_write in 3 of 40 runs at load 20 before).
			check := func(rep *Report, res *Result) {
				t.Helper()
				dup := false
				for _, f := range res.Findings {
					dup = dup || f.Code == CodeDuplicateWrite
				}
				assert.Equal(t, c.wantDup, dup, "findings %v; ops %v", res.Findings, opsOf(res.Trace))
				assert.False(t, res.Inconclusive, "%s; notes %v", res.Error, res.Trace.Notes)
				if c.wantDup {
					return
				}
				assert.True(t, rep.Safe)
				// Which rule absorbed the repeat is timing's: the end
				// (no call of charge changed the state in its window,
				// and the note says so), or a window of one execution
				// in the baseline where the booking landed inside it.
				last := res.Trace.Ops[len(res.Trace.Ops)-1]
				if last.JudgedBy == JudgedByEndState {
					assert.Contains(t, strings.Join(res.Trace.Notes, "\n"), "charge changed the state in none of its calls")
				}
			}
			rep, res := suite()
			check(rep, res)
			for try := 1; try < 10 && !res.Trace.Ops[len(res.Trace.Ops)-1].Overlapped; try++ {
				rep, res = suite()
				check(rep, res)
			}
			last := res.Trace.Ops[len(res.Trace.Ops)-1]
			assert.True(t, last.Overlapped, "the last attempts overlapped: %v", opsOf(res.Trace))
		})
	}
}

// opsOf lists a trace's calls, for a failing assertion's message.
func opsOf(tr *Trace) []string {
	var out []string
	for _, o := range tr.Ops {
		out = append(out, fmt.Sprintf("%s %s overlapped=%v repeat=%s/%s err=%q", o.ID, o.Status, o.Overlapped, o.Repeat, o.JudgedBy, o.Error))
	}
	return out
}

// The rule of the test above at the level of one judgement: a repeat that
// overlapped other calls, of an op no execution of which changed the state
// in a window of its own, is judged by the end state only where its
// cluster's snapshots were taken, the baseline saw the state change outside
// its traced writes, both runs had their end state once the agent
// returned, and the run ended as the baseline did. The cluster may have
// changed the state (the booking landed while the last attempts ran): the
// end says whether a second effect stayed.
func TestDeferredEffectOfOverlappedRepeatJudgedByTheEndOnlyWhereItLandedByReturn(t *testing.T) {
	s0, s1, s2 := `{"charges":0}`, `{"charges":1}`, `{"charges":2}`
	args := Args{Names: []string{"order"}, Values: []any{"o-1"}}
	first := Operation{ID: "1:charge#1", Name: "charge", Kind: KindWrite, Status: StatusSuccess, Identity: `"o-1"`, Invocation: 1, Args: args,
		more: judgedMore(&effectView{order: 1, inCluster: true, seen: true, before: s0, after: s0})}
	base := &Trace{Ops: []Operation{first}, gaps: [][2]string{{s0, s1}}, end: s1, returned: s1}
	run := func(end, returned string, cluster effectView) (*Trace, []Finding) {
		a, b := first, first
		a.Overlapped, a.more = true, judgedMore(&cluster)
		b.ID, b.Invocation, b.Overlapped = "2:charge#2", 2, true
		cl := cluster
		cl.order = 2
		b.more = judgedMore(&cl)
		tr := &Trace{Ops: []Operation{a, b}, end: end, returned: returned}
		return tr, judgeRepeatsIn(nil, tr, end, base.end, windows(base), untracedIn(base, false), false, false, nil)
	}
	quiet := effectView{order: 1, inCluster: true, before: s1, after: s1}
	landing := effectView{order: 1, inCluster: true, before: s0, after: s1}
	for _, cluster := range []effectView{quiet, landing} {
		tr, fs := run(s1, s1, cluster)
		assert.Empty(t, fs)
		assert.Equal(t, RepeatAbsorbed, tr.Ops[1].Repeat)
		assert.Equal(t, JudgedByEndState, tr.Ops[1].JudgedBy)
		require.Len(t, tr.Notes, 1)
		assert.Contains(t, tr.Notes[0], "charge changed the state in none of its calls")
	}

	for _, c := range []struct {
		name          string
		end, returned string
		cluster       effectView
	}{
		{"the run ended otherwise", s2, s2, quiet},
		{"the cluster ran on to a second charge", s2, s2, landing},
		{"the cluster's snapshot failed", s1, s1, effectView{order: 1, inCluster: true, before: s1, after: s1, clErr: "State panicked"}},
		{"no cluster snapshots", s1, s1, effectView{order: 1}},
	} {
		tr, fs := run(c.end, c.returned, c.cluster)
		assert.Len(t, fs, 1, c.name)
		assert.Equal(t, RepeatDuplicate, tr.Ops[1].Repeat, c.name)
	}
	// The state changed after the agent returned and the end was read
	// before it held still: unjudged, not counted.
	tr, fs := run(s1, s0, quiet)
	assert.Empty(t, fs)
	assert.Empty(t, tr.Ops[1].Repeat)
	assert.True(t, tr.unsettled)
}

// queuedBookings is a payments service that answers 202 and books what it
// accepted on one processor, work after the previous booking: a second
// charge waits behind the first.
type queuedBookings struct {
	mu      sync.Mutex
	charges int
	keys    map[string]bool // key -> booked
	queue   chan string
	done    chan struct{}
	work    time.Duration
}

func newQueuedBookings(work time.Duration) *queuedBookings {
	q := &queuedBookings{keys: map[string]bool{}, queue: make(chan string, 16), done: make(chan struct{}), work: work}
	go func() {
		defer close(q.done)
		for key := range q.queue {
			time.Sleep(q.work)
			q.mu.Lock()
			q.charges++
			q.keys[key] = true
			q.mu.Unlock()
		}
	}()
	return q
}

// charge accepts a charge under key (the processor books it later).
func (q *queuedBookings) charge(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, seen := q.keys[key]; !seen {
		q.keys[key] = false
		q.queue <- key
	}
}

func (q *queuedBookings) paid() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.charges > 0
}

func (q *queuedBookings) close() { close(q.queue); <-q.done }

func (q *queuedBookings) snapshot() any {
	q.mu.Lock()
	defer q.mu.Unlock()
	return map[string]any{"charges": q.charges}
}

// An agent charges an order through a service that books it later, then
// polls until the order shows paid. With a key made afresh for each
// delivery, two deliveries charge twice, but the second booking waits
// behind the first and lands after both saw the order paid: the state
// when they returned was the baseline's. The end, read as soon as they
// returned, was too, and the repeat was judged by it and absorbed (no
// finding in any scenario). The end is read once the state held still
// (judge.finish): it holds both charges, and the repeat counts. One key
// for the order passes.
func TestABookingQueuedBehindAnotherIsInTheEndState(t *testing.T) {
	for _, c := range []struct {
		name           string
		keyPerDelivery bool
	}{{"one key for the order", false}, {"a key per delivery", true}} {
		t.Run(c.name, func(t *testing.T) { queuedBehind(t, c.keyPerDelivery, 15*time.Millisecond) })
	}
}

// As above on a loaded machine (a CI runner, go test -race beside other
// runs), whose goroutines wait tens of milliseconds for a CPU once woken:
// here the booking's worker 30 ms more (its work takes 45 ms), and each
// of the suite's polls of the end state as well (endSleep). The end, read
// once it held still for 25 ms on the wall's clock, was read after one
// poll, before the second booking landed, and the repeat was absorbed: a
// missed duplicate_write in every run (and in 3 runs of 50 of the test
// above, beside 3 busy loops on a machine other jobs loaded). The wait
// runs on the polls' clock (judge.finish): the booking is in the end.
func TestABookingQueuedBehindAnotherOnALoadedMachine(t *testing.T) {
	defer func(s func(time.Duration)) { endSleep = s }(endSleep)
	endSleep = func(d time.Duration) { time.Sleep(d + 30*time.Millisecond) }
	for _, c := range []struct {
		name           string
		keyPerDelivery bool
	}{{"one key for the order", false}, {"a key per delivery", true}} {
		t.Run(c.name, func(t *testing.T) { queuedBehind(t, c.keyPerDelivery, 45*time.Millisecond) })
	}
}

// queuedBehind runs the suite of the agent of the tests above, with one
// key for the order or a key per delivery and a booking that takes work,
// and checks its verdict.
func queuedBehind(t *testing.T, keyPerDelivery bool, work time.Duration) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	paid := &Op{Name: "order_paid", Kind: KindRead, Params: []string{"order"}}
	var svc *queuedBookings
	var deliveries atomic.Int32
	agent := func(ctx context.Context) error {
		key := "order-1"
		if keyPerDelivery {
			key = fmt.Sprintf("order-1/%d", deliveries.Add(1))
		}
		if err := traced(ctx, charge, []any{"order-1"}, []any{"order-1"}, func(context.Context) error {
			svc.charge(key)
			return nil
		}); err != nil {
			return err
		}
		for range 100 {
			done := false
			if err := traced(ctx, paid, []any{"order-1"}, []any{"order-1"}, func(context.Context) error {
				done = svc.paid()
				return nil
			}); err == nil && done {
				return nil
			}
			time.Sleep(2 * time.Millisecond)
		}
		return errors.New("order-1 not paid")
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			deliveries.Store(0)
			svc = newQueuedBookings(work)
			return nil
		}),
		Teardown(func(context.Context) error { svc.close(); return nil }),
		State(func() any { return svc.snapshot() }))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %s", rep.BaselineFailure)
	dup := map[string]bool{}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Code == CodeDuplicateWrite {
				dup[res.Scenario] = true
			}
		}
	}
	if keyPerDelivery {
		assert.True(t, dup[ScenarioDuplicateSeq], "duplicate_delivery/sequential: %v", codes(rep))
		assert.True(t, dup[ScenarioDuplicateConcurrent], "duplicate_delivery/concurrent: %v", codes(rep))
	} else {
		assert.Empty(t, dup, "%v", codes(rep))
		assert.True(t, rep.Safe, "%v", codes(rep))
	}
}

// The rule of gapcarried.go at the level of one judgement, as two
// deliveries with a key each left it on a loaded machine: both first
// attempts timed out and their bookings landed between calls (a gap of
// the state from no charge to two), and the last attempts, answered by
// the replay, changed nothing in their windows, overlapped or alone. In
// the baseline the one booking landed inside its call's window, so an
// effect of charge was seen there and the quiet repeat was absorbed: a
// plain pass. It counts now, by the end. One key for the order (the end
// is the baseline's) is absorbed as before, and so is a run where no call
// failed, or where nothing changed between calls.
func TestRepeatsWhoseEffectLandedBetweenCallsAreJudgedByTheEnd(t *testing.T) {
	s0, s1, s2 := `{"charges":0}`, `{"charges":1}`, `{"charges":2}`
	args := Args{Names: []string{"order"}, Values: []any{"o-1"}}
	op := func(id string, inv int, status Status, ov bool, v effectView) Operation {
		o := Operation{ID: id, Name: "charge", Kind: KindWrite, Status: status, Identity: `"o-1"`, Invocation: inv, Args: args, Overlapped: ov, more: judgedMore(&v)}
		if status == StatusFailed {
			o.Error = "context deadline exceeded"
		}
		return o
	}
	base := &Trace{Ops: []Operation{op("1:charge#1", 1, StatusSuccess, false, effectView{order: 1, seen: true, inCluster: true, before: s0, after: s1})}, end: s1, returned: s1}
	run := func(end string, failed bool, gaps [][2]string) (*Trace, []Finding) {
		var ops []Operation
		if failed {
			ops = append(ops,
				op("1:charge#1", 1, StatusFailed, true, effectView{order: 1, inCluster: true, before: s0, after: s0, clusterKeys: 1}),
				op("2:charge#2", 2, StatusFailed, true, effectView{order: 2, inCluster: true, before: s0, after: s0, clusterKeys: 1}))
		}
		ops = append(ops,
			op("2:charge#3", 2, StatusSuccess, true, effectView{order: 3, inCluster: true, before: end, after: end, clusterKeys: 1}),
			op("1:charge#4", 1, StatusSuccess, false, effectView{order: 4, seen: true, inCluster: true, before: end, after: end}))
		tr := &Trace{Ops: ops, end: end, returned: end, gaps: gaps}
		return tr, judgeRepeatsIn(nil, tr, end, base.end, windows(base), untracedIn(base, false), false, false, base)
	}
	tr, fs := run(s2, true, [][2]string{{s0, s2}})
	require.Len(t, fs, 1, "a key per delivery: %v", opsOf(tr))
	assert.Equal(t, CodeDuplicateWrite, fs[0].Code)
	assert.Contains(t, fs[0].Message, "calls of it failed by themselves")
	assert.Equal(t, RepeatDuplicate, tr.Ops[3].Repeat)
	assert.Equal(t, JudgedByEndState, tr.Ops[3].JudgedBy)

	for _, c := range []struct {
		name   string
		end    string
		failed bool
		gaps   [][2]string
	}{
		{"one key for the order", s1, true, [][2]string{{s0, s1}}},
		{"no call failed", s2, false, [][2]string{{s0, s2}}},
		{"nothing changed between calls", s2, true, nil},
	} {
		tr, fs := run(c.end, c.failed, c.gaps)
		assert.Empty(t, fs, c.name)
		assert.Equal(t, RepeatAbsorbed, tr.Ops[len(tr.Ops)-1].Repeat, "%s: %v", c.name, opsOf(tr))
	}

	// Both last attempts overlapped, in a cluster that changed nothing,
	// where the baseline's one execution changed the state in its window:
	// with one key the run ended as the baseline did, and the repeat is
	// absorbed by the end (it was a duplicate_write "where one execution
	// made charges: 0 → 1", 1 run in 20 at load 20); with a key per
	// delivery the end holds two charges and it counts.
	for _, c := range []struct {
		end     string
		wantDup bool
	}{{s1, false}, {s2, true}} {
		quiet := effectView{inCluster: true, before: c.end, after: c.end, clusterKeys: 1}
		a, b := quiet, quiet
		a.order, b.order = 3, 4
		tr := &Trace{Ops: []Operation{
			op("1:charge#1", 1, StatusFailed, true, effectView{order: 1, inCluster: true, before: s0, after: s0, clusterKeys: 1}),
			op("2:charge#2", 2, StatusFailed, true, effectView{order: 2, inCluster: true, before: s0, after: s0, clusterKeys: 1}),
			op("1:charge#3", 1, StatusSuccess, true, a),
			op("2:charge#4", 2, StatusSuccess, true, b),
		}, end: c.end, returned: c.end, gaps: [][2]string{{s0, c.end}}}
		fs := judgeRepeatsIn(nil, tr, c.end, base.end, windows(base), untracedIn(base, false), false, false, base)
		assert.Equal(t, c.wantDup, len(fs) == 1 && fs[0].Code == CodeDuplicateWrite, "end %s: %v %v", c.end, fs, opsOf(tr))
		if !c.wantDup {
			assert.Equal(t, RepeatAbsorbed, tr.Ops[3].Repeat, opsOf(tr))
			assert.Equal(t, JudgedByEndState, tr.Ops[3].JudgedBy, opsOf(tr))
		}
	}
}
