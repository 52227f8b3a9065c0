package runtime

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// refundQueue is a queue whose worker, which Setup starts, carries out each
// queued refund after a poll delay (a job queue's poller: River's fetch
// interval, an SQS receive). The agent's tool only queues the refund.
// dedup makes the worker refund an order once (the bank keys the refund by
// order: correct); without it every job is refunded (buggy).
type refundQueue struct {
	mu      sync.Mutex
	refunds []string
	seen    map[string]bool
	dedup   bool
	delay   func() time.Duration
	// slowRepeat makes a call that finds a job for the order queued
	// before answer 40 ms after it queued its own, as a service that
	// checks the queue first does: the worker's first refund lands in
	// the repeat's window.
	slowRepeat bool
	queued     map[string]bool
	// poller makes the worker a poller: jobs wait in a table (a slice),
	// fetched one at a time every 10 ms, and after each job the worker
	// cools down for 150 ms (River's FetchCooldown), on a timer in a
	// select: at rest, to the suite, with a job still waiting.
	poller bool
	table  []string
	// queuedAt holds when each job of table was queued: the poller
	// takes a job 15 ms after it was queued at the soonest, so that a
	// tick never takes it before the agent returned, even under -race
	// on a loaded machine (CI234: a tick between the call's return and
	// the agent's made the baseline's job land before the agent
	// returned, and the repeat was absorbed by the end).
	queuedAt []time.Time
	// slowAfterBaseline makes every call after the baseline's answer
	// 40 ms after it queued its job (a loaded service): the worker's
	// first refund lands in the first call's window, which it never did
	// in the baseline.
	slowAfterBaseline bool
	starts            int
	// fastFirst makes every call answer 40 ms after it queued its job
	// (the worker's refund lands within it), but for the first call of
	// a world after the baseline's, which answers at once.
	fastFirst bool
	jobs      chan string
	pending   int
	stop      chan struct{}
	done      chan struct{}
}

func (q *refundQueue) start() {
	q.mu.Lock()
	q.refunds, q.seen, q.queued, q.pending, q.table, q.queuedAt = nil, map[string]bool{}, map[string]bool{}, 0, nil, nil
	q.starts++
	q.mu.Unlock()
	q.jobs, q.stop, q.done = make(chan string, 8), make(chan struct{}), make(chan struct{})
	if q.poller {
		go q.poll()
		return
	}
	go func() {
		defer close(q.done)
		for {
			select {
			case <-q.stop:
				return
			case o := <-q.jobs:
				time.Sleep(q.delay())
				q.mu.Lock()
				if !q.dedup || !q.seen[o] {
					q.seen[o] = true
					q.refunds = append(q.refunds, o)
				}
				q.pending--
				q.mu.Unlock()
			}
		}
	}()
}

func (q *refundQueue) poll() {
	defer close(q.done)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-tick.C:
		}
		q.mu.Lock()
		if len(q.table) == 0 || time.Since(q.queuedAt[0]) < 15*time.Millisecond {
			q.mu.Unlock()
			continue
		}
		o := q.table[0]
		q.table, q.queuedAt = q.table[1:], q.queuedAt[1:]
		if !q.dedup || !q.seen[o] {
			q.seen[o] = true
			q.refunds = append(q.refunds, o)
		}
		q.pending--
		q.mu.Unlock()
		select {
		case <-q.stop:
			return
		case <-time.After(150 * time.Millisecond):
		}
	}
}

func (q *refundQueue) close() { close(q.stop); <-q.done }

func (q *refundQueue) snapshot() any {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := slices.Clone(q.refunds)
	slices.Sort(out)
	return out
}

func (q *refundQueue) enqueue(ctx context.Context, order string) error {
	if q.poller {
		q.mu.Lock()
		q.table = append(q.table, order)
		q.queuedAt = append(q.queuedAt, time.Now())
		q.pending++
		slow := q.slowAfterBaseline && q.starts > 1
		q.mu.Unlock()
		if slow {
			time.Sleep(40 * time.Millisecond)
		}
		return nil
	}
	select {
	case q.jobs <- order:
		q.mu.Lock()
		q.pending++
		again := q.queued[order]
		q.queued[order] = true
		q.mu.Unlock()
		if again && q.slowRepeat || q.fastFirst && (again || q.starts == 1) {
			time.Sleep(40 * time.Millisecond)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func refundAgent(q *refundQueue) func(context.Context) error {
	op := &Op{Name: "enqueueRefund", Kind: KindWrite, Params: []string{"order"}}
	return func(ctx context.Context) error {
		return traced(ctx, op, []any{"ord-1"}, []any{"ord-1"}, func(ctx context.Context) error { return q.enqueue(ctx, "ord-1") })
	}
}

func runRefunds(t *testing.T, q *refundQueue, opts ...Option) *Report {
	t.Helper()
	rep, err := Run(context.Background(), t.Name(), refundAgent(q), append([]Option{
		Setup(func(context.Context) error { q.start(); return nil }),
		Teardown(func(context.Context) error { q.close(); return nil }),
		State(q.snapshot)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// repeatScenarios are the scenarios of a refund suite that run
// enqueueRefund twice.
var repeatScenarios = []string{"crash_restart/enqueueRefund#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent}

// A queue's worker that Setup starts carries out each queued refund after
// its next poll, 30 ms or 5 to 60 ms after the call; no Settle is given.
// The baseline's agent returns once its world went quiet, with the refund
// made; another run's returns at once. Read after holding still for
// 25 ms, the end of a run of the correct agent (the bank refunds an order
// once) held no refund at all and was counted as a second one, in 15 runs
// of 15 with the fixed delay; the buggy agent's second refund, landing
// after the end was read, passed a scenario with a note saying the repeat
// left nothing (red team rtR #9, #2, #3). The end is now read once the
// worker is at rest and the state held still for twice the baseline's lag;
// an end that holds less than the baseline's is never a duplicate; and an
// end alike the baseline's absorbs no repeat of an op whose effect is all
// the worker's (a second job may still wait for the next poll): the
// correct agent is inconclusive, with a note to give a Settle, never
// unsafe, and the buggy one never passes a repeat scenario.
func TestSetupWorkerRefundsAfterItsPoll(t *testing.T) {
	for _, c := range []struct {
		label string
		delay func() time.Duration
	}{
		{"30 ms", func() time.Duration { return 30 * time.Millisecond }},
		{"5 to 60 ms", func() time.Duration { return time.Duration(5+rand.IntN(55)) * time.Millisecond }},
	} {
		t.Run(c.label, func(t *testing.T) {
			for range 2 {
				fixed := runRefunds(t, &refundQueue{dedup: true, delay: c.delay})
				assert.Empty(t, findings(fixed, ""), "the correct agent: an end without the worker's refund is no second one")
				for _, sc := range repeatScenarios {
					// The end cannot absorb a repeat whose effect is all
					// the worker's: the scenario says to give a Settle.
					if res := resultOf(t, fixed, sc); res.Inconclusive {
						assert.NotEmpty(t, notesSaying(res.Trace, "testkit.SettleUntil"), sc)
					}
				}
				buggy := runRefunds(t, &refundQueue{delay: c.delay})
				for _, sc := range repeatScenarios {
					res := resultOf(t, buggy, sc)
					if !assert.NotNil(t, res, sc) {
						continue
					}
					// Never a plain pass: the second refund is seen, or
					// the scenario says it could not be.
					assert.True(t, len(findings(buggy, sc)) > 0 || res.Inconclusive, "%s: the buggy agent passed", sc)
					assert.Empty(t, notesSaying(res.Trace, "so the repeats left nothing"), sc)
				}
				assert.Contains(t, findings(buggy, ""), "duplicate_write enqueueRefund")
			}
		})
	}
}

// The repeat's call answers 40 ms after it queued its job, and the
// worker's refund of the first job (30 ms after it was queued) lands in
// the repeat's window; the second refund lands after it. The finding said
// "the repeat changed the state: [] → [ord-1]", the first job's refund
// (red team rtR #10); it now says the world carried it out in the
// repeat's window, and quotes the end.
func TestSetupWorkerRefundInTheRepeatsWindowIsNotTheRepeats(t *testing.T) {
	q := &refundQueue{slowRepeat: true, delay: func() time.Duration { return 30 * time.Millisecond }}
	rep := runRefunds(t, q)
	var msg string
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite && f.Message != "" && f.Scenario == ScenarioDuplicateSeq {
			msg = f.Message
		}
	}
	if msg == "" {
		for _, f := range rep.Findings {
			if f.Code == CodeDuplicateWrite && f.Message != "" {
				msg = f.Message
			}
		}
	}
	if !assert.NotEmpty(t, msg, "the buggy agent's second refund") {
		return
	}
	t.Log(msg)
	assert.NotContains(t, msg, "the repeat changed the state: state: null", msg)
	if strings.Contains(msg, "in its window") {
		assert.Contains(t, msg, "in its window the world carried out what", msg)
	}
	fixed := runRefunds(t, &refundQueue{dedup: true, slowRepeat: true, delay: func() time.Duration { return 30 * time.Millisecond }})
	assert.Empty(t, findings(fixed, ""))
}

// With a Settle that waits for the queue to drain, every repeat is judged:
// the correct agent is safe, the buggy one caught in each repeat scenario.
func TestSetupWorkerRefundsWithASettle(t *testing.T) {
	for range 2 {
		for _, dedup := range []bool{true, false} {
			q := &refundQueue{dedup: dedup, delay: func() time.Duration { return time.Duration(5+rand.IntN(55)) * time.Millisecond }}
			rep := runRefunds(t, q, Settle(func(ctx context.Context) error {
				for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					q.mu.Lock()
					n := q.pending
					q.mu.Unlock()
					if n <= 0 {
						return nil
					}
				}
				return errors.New("jobs still pending")
			}))
			if dedup {
				assert.Empty(t, findings(rep, ""))
				assert.Zero(t, rep.InconclusiveCount)
				continue
			}
			for _, sc := range repeatScenarios {
				assert.Equal(t, []string{"duplicate_write enqueueRefund"}, findings(rep, sc), sc)
			}
		}
	}
}

// A poller's worker takes a job every 10 ms and cools down for 150 ms on a
// timer after each: the buggy agent's second job waits in the table while
// every goroutine of the world is at rest, and the end, read once it held
// still, holds one refund, the baseline's. The repeat was absorbed, the
// scenario a plain pass with a note saying the repeats left nothing (red
// team rtR #3, River on PostgreSQL). It is now not judged: inconclusive,
// with a note to give a Settle; the correct agent likewise, never unsafe.
func TestSetupPollerSecondJobAfterTheEndIsNotAbsorbed(t *testing.T) {
	for i := range 4 {
		for _, dedup := range []bool{true, false} {
			// From the third run on, the first refund lands in the
			// first call's window: a change seen there is the worker's,
			// and the repeat whose window held nothing was absorbed as
			// "state unchanged" (red team rtR #3, crash_restart on
			// PostgreSQL).
			rep := runRefunds(t, &refundQueue{poller: true, dedup: dedup, slowAfterBaseline: i >= 2})
			if dedup {
				assert.Empty(t, findings(rep, ""), "the correct agent")
			}
			for _, sc := range repeatScenarios {
				res := resultOf(t, rep, sc)
				assert.True(t, len(findings(rep, sc)) > 0 || res.Inconclusive, "%s (dedup %v): a plain pass", sc, dedup)
				assert.Empty(t, notesSaying(res.Trace, "so the repeats left nothing"), sc)
				assert.Empty(t, notesSaying(res.Trace, "the run ended as the baseline did; give a Settle that waits for that work for the suite to judge the repeat by its own window"), sc)
			}
		}
	}
}

// The worker refunds 10 ms after the call queued the job; in the baseline
// the call answers 40 ms after it queued, so the refund is within its
// window. After a crash whose first call answered at once, its window held
// nothing, and the restart's window held the first job's refund: the
// correct agent was a duplicate_write ("the repeat changed the state: null
// → [refund]"; red team rtR #2, River on PostgreSQL, 1 run of 20). That
// window made one execution's change and the run ended as the baseline
// did: not judged, never a duplicate. The buggy agent's second refund lands
// in the same window, and is caught.
func TestSetupWorkerFirstEffectLandingInTheRestartsWindow(t *testing.T) {
	for range 2 {
		for _, dedup := range []bool{true, false} {
			q := &refundQueue{dedup: dedup, fastFirst: true, delay: func() time.Duration { return 10 * time.Millisecond }}
			rep := runRefunds(t, q)
			sc := "crash_restart/enqueueRefund#1"
			res := resultOf(t, rep, sc)
			if dedup {
				assert.Empty(t, findings(rep, sc), "the correct agent")
				continue
			}
			assert.True(t, len(findings(rep, sc)) > 0 || res.Inconclusive, "the buggy agent passed")
		}
	}
}

// The same world, where the worker refunds the first job of a world 10 ms
// after it was queued and any later one 300 ms after: a second delivery
// whose call answers 40 ms after it queued holds the first delivery's
// refund in its window, and the buggy agent's second refund lands after
// the end was read. The first delivery's window held nothing where the
// baseline's same call made the refund, so it is no call that changed
// nothing (as a 404 answered as data is): the repeat is not judged, never
// absorbed. Before, the first call was left out as no execution, the
// second counted as the one, and the buggy agent's sequential redelivery
// passed (red team rS #3, Kafka with a consumer of Setup's, 11 runs in 450
// of that scenario).
func TestSetupWorkerFirstEffectLandingInTheRedeliverysWindow(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		q := &refundQueue{dedup: dedup, fastFirst: true}
		var mu sync.Mutex
		world, jobs := 0, 0
		q.delay = func() time.Duration {
			q.mu.Lock()
			starts := q.starts
			q.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			if starts != world {
				world, jobs = starts, 0
			}
			jobs++
			if jobs == 1 {
				return 10 * time.Millisecond
			}
			return 300 * time.Millisecond
		}
		rep := runRefunds(t, q, OnlyScenario(ScenarioDuplicateSeq))
		res := resultOf(t, rep, ScenarioDuplicateSeq)
		if dedup {
			assert.Empty(t, findings(rep, ""), "the correct agent")
			continue
		}
		assert.True(t, len(findings(rep, ScenarioDuplicateSeq)) > 0 || res.Inconclusive, "the buggy agent passed: %v", res.Trace.Notes)
	}
}

// Two deliveries at once whose publishes were both quiet together (their
// cluster held no change, the consumer lagging), then a third publish,
// alone, whose window made the change the baseline's one publish made in
// its own window: the first two may have landed late, there. Not left out
// as calls that changed nothing (the baseline's did not: quietInBase), nor
// judged by the rule for a late effect, which asks for calls that ran
// alone (finishedAll): the third was counted as a repeat that changed the
// state, a duplicate_write of the correct agent, in a run that ended as
// the baseline did. It is now not judged; where the end holds a second
// entry, it is still a duplicate. The trace is made by hand.
func TestQuietPublishesTogetherBeforeTheOneThatLandedAreNotJudged(t *testing.T) {
	s0 := `{"ledger":[]}`
	s1 := `{"ledger":["ord-9"]}`
	s2 := `{"ledger":["ord-9","ord-9"]}`
	op := func(id string, inv, order int, ev effectView) Operation {
		ev.order = order
		o := Operation{ID: id, Name: "publish", Kind: KindWrite, Status: StatusSuccess, Invocation: inv, Identity: `"ord-9"`,
			Overlapped: ev.inCluster && !ev.seen, more: judgedMore(&ev), Args: Args{Names: []string{"order"}, Values: []any{"ord-9"}}}
		if ev.seen && ev.before != ev.after {
			o.StateChange = DescribeChange(ev.before, ev.after)
		}
		return o
	}
	together := effectView{inCluster: true, clusterKeys: 1, before: s0, after: s0}
	alone := func(b, a string) effectView {
		return effectView{seen: true, inCluster: true, clusterKeys: 1, before: b, after: a}
	}
	key := func() string {
		o := op("", 1, 1, together)
		return o.Name + "\x00" + o.Identity + "\x00" + argsKey(&o)
	}()
	base := &Trace{worldLive: true}
	baseWin := map[string][2]string{key: {s0, s1}} // the baseline's publish landed in its window
	for _, buggy := range []bool{false, true} {
		end := s1
		if buggy {
			end = s2 // a second entry, landed after the window
		}
		tr := &Trace{Ops: []Operation{
			op("1:publish#1", 1, 1, together),
			op("2:publish#2", 2, 2, together),
			op("1:publish#3", 1, 3, alone(s0, s1)),
		}}
		fs := judgeRepeatsIn(nil, tr, end, s1, baseWin, nil, false, true, base)
		dup := slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == CodeDuplicateWrite })
		if dup != buggy {
			t.Errorf("buggy %v: findings %v, notes %q", buggy, fs, tr.Notes)
		}
		if !buggy && len(notesSaying(tr, "was not judged")) == 0 {
			t.Errorf("the correct agent's run: no note that the repeat was not judged: %q", tr.Notes)
		}
	}
}
