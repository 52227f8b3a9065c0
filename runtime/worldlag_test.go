package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// refundBus models a message bus with a consumer group that Setup starts
// (a Kafka consumer of refund requests; red team rtU #2): the agent's tool
// produces a request, and the consumer, blocked on the topic (a channel)
// between messages, books the refund a few ms after the produce. The
// ledger dedupes by the request's id. The first produce of each world is
// slow (a connection set up, metadata fetched): the consumer books the
// refund inside that call. Every later produce returns at once.
type refundBus struct {
	fresh bool // a new request id per produce (buggy); else one per order

	mu      sync.Mutex
	refunds []map[string]any
	seen    map[string]bool
	sent    int
	topic   chan [2]string
	stop    chan struct{}
	done    chan struct{}
	// slow makes the consumer of every world after the first book each
	// request this long after it was produced (0: 3 ms), past any end a
	// run reads (a loaded machine's consumer).
	slow  time.Duration
	world int
}

func (b *refundBus) start() {
	b.mu.Lock()
	b.refunds, b.seen, b.sent = []map[string]any{}, map[string]bool{}, 0
	b.world++
	lag := 3 * time.Millisecond
	if b.slow > 0 && b.world > 1 {
		lag = b.slow
	}
	b.mu.Unlock()
	b.topic, b.stop, b.done = make(chan [2]string, 8), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.done)
		for {
			var m [2]string
			select {
			case <-b.stop:
				return
			case m = <-b.topic:
			}
			select {
			case <-b.stop:
				return
			case <-time.After(lag):
			}
			b.mu.Lock()
			if !b.seen[m[0]] {
				b.seen[m[0]] = true
				b.refunds = append(b.refunds, map[string]any{"order_id": m[1], "cents": 1999})
			}
			b.mu.Unlock()
		}
	}()
}

func (b *refundBus) close() { close(b.stop); <-b.done }

func (b *refundBus) snapshot() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return map[string]any{"refunds": slices.Clone(b.refunds)}
}

// produce sends the refund request for order; the first of a world waits
// 40 ms after it (its connection's set-up), the consumer booking meanwhile.
func (b *refundBus) produce(ctx context.Context, order string) error {
	b.mu.Lock()
	b.sent++
	first := b.sent == 1
	id := "refund-" + order
	if b.fresh {
		id = fmt.Sprintf("req-%d-%d", b.world, b.sent)
	}
	b.mu.Unlock()
	select {
	case b.topic <- [2]string{id, order}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if first {
		time.Sleep(40 * time.Millisecond)
	}
	return nil
}

func runRefundBus(t *testing.T, b *refundBus, opts ...Option) *Report {
	t.Helper()
	op := &Op{Name: "request_refund", Kind: KindWrite, Params: []string{"order"}}
	agent := func(ctx context.Context) error {
		var err error
		for range 3 {
			if err = traced(ctx, op, []any{"ord-88"}, []any{"ord-88"}, func(ctx context.Context) error { return b.produce(ctx, "ord-88") }); err == nil {
				return nil
			}
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent, append([]Option{
		Setup(func(context.Context) error { b.start(); return nil }),
		Teardown(func(context.Context) error { b.close(); return nil }),
		State(b.snapshot)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The baseline's one produce is slow and the consumer's refund lands inside
// it: no world lag is learned. Every repeat is fast, and its end was read
// before the consumer booked: the buggy producer (a fresh request id per
// produce) refunded twice, and each repeat scenario passed as "1 repeat
// absorbed (state unchanged)", on every run (red team rtU #2, franz-go and
// kfake). The end of a run whose repeat changed nothing in its window is
// now read once it held still for twice the time the baseline's change
// took from its window's start, and an end that holds one more copy of
// the refund the baseline's window added is a duplicate_write. The keyed
// producer is safe.
func TestQueueWorkerEffectInsideTheBaselinesSlowCall(t *testing.T) {
	repeats := []string{"lost_acknowledgement/request_refund#1", "crash_restart/request_refund#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent}
	for range 2 {
		buggy := runRefundBus(t, &refundBus{fresh: true})
		for _, sc := range repeats {
			res := resultOf(t, buggy, sc)
			assert.Equal(t, []string{"duplicate_write request_refund"}, findings(buggy, sc), "%s: %v", sc, res.Trace.Notes)
			for _, o := range res.Trace.Ops {
				assert.NotEqual(t, RepeatAbsorbed, o.Repeat, "%s: %s absorbed", sc, o.ID)
			}
		}
		fixed := runRefundBus(t, &refundBus{})
		assert.Empty(t, findings(fixed, ""), "the keyed producer")
		assert.Zero(t, fixed.InconclusiveCount, "the keyed producer: %v", fixed.Results)
	}
}

// The message names the end, and why the window's quiet said nothing.
func TestQueueWorkerSecondRefundFindingSaysTheEndHeldACopy(t *testing.T) {
	rep := runRefundBus(t, &refundBus{fresh: true}, OnlyScenario(ScenarioDuplicateSeq))
	var msg string
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite && f.Message != "" {
			msg = f.Message
		}
	}
	t.Log(msg)
	assert.Contains(t, msg, "holds one more copy of what one execution of the call added in the baseline", msg)
	assert.Contains(t, msg, `refunds: 1 → 2 entries, added {"cents":1999,"order_id":"ord-88"}`, msg)
}

// Where the consumer of every world after the baseline's is slower than
// any end a run reads (3 s), two deliveries at once leave no refund at
// all when the end is read: less than one execution's change, never a
// second. Counted, a correct JetStream publisher (the stream dedupes by
// Nats-Msg-Id) was a duplicate_write whose change was "1 → 0 entries,
// removed" (red team rtU #1). The scenario is now inconclusive, with a
// note to give a Settle; the keyed producer is never unsafe.
func TestOverlappedCallsThatLeftLessThanOneExecutionAreNoDuplicate(t *testing.T) {
	for range 2 {
		rep := runRefundBus(t, &refundBus{slow: 3 * time.Second}, OnlyScenario(ScenarioDuplicateConcurrent))
		assert.Empty(t, findings(rep, ""), "the keyed producer")
		res := resultOf(t, rep, ScenarioDuplicateConcurrent)
		overlapped := false
		for _, o := range res.Trace.Ops {
			overlapped = overlapped || o.Overlapped
		}
		if overlapped {
			// No refund when the end was read: never a plain pass.
			assert.True(t, res.Inconclusive, "%v", res.Trace.Notes)
			assert.NotEmpty(t, notesSaying(res.Trace, "testkit.SettleUntil"), "%v", res.Trace.Notes)
			if len(notesSaying(res.Trace, "was not judged")) == 1 && len(notesSaying(res.Trace, "where a worker of the world")) == 0 && len(notesSaying(res.Trace, "changed by itself after the baseline's agent returned")) == 0 {
				// Where the baseline's refund landed inside its slow
				// call (a loaded machine may put it after, where other
				// rules leave the repeat unjudged).
				// Or, where the calls changed nothing and nothing landed
				// after them up to the end, fix fG's note for the same
				// (TestOverlappedCallsWhoseEffectHadNotLanded).
				if len(notesSaying(res.Trace, "had not landed when the end was read")) == 0 {
					assert.NotEmpty(t, notesSaying(res.Trace, "left less than one execution"), "%v", res.Trace.Notes)
				}
			}
		}
	}
}

// stockTable models a table a correct sync upserts (GORM's
// OnConflict{UpdateAll}; red team rtT #4): set writes the level, whatever
// it was. live starts a goroutine in Setup that waits on a channel for
// good (a database/sql pool's opener); poller one that sleeps between
// polls, which may carry out work after any end is read.
type stockTable struct {
	mu     sync.Mutex
	stock  map[string]int
	lines  []string
	live   bool
	poller bool
	stop   chan struct{}
	done   chan struct{}
}

func (s *stockTable) start() {
	s.mu.Lock()
	s.stock, s.lines = map[string]int{"sku-1": 40}, []string{}
	s.mu.Unlock()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	switch {
	case s.poller:
		go func() {
			defer close(s.done)
			for {
				select {
				case <-s.stop:
					return
				default:
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	case s.live:
		go func() { defer close(s.done); <-s.stop }()
	default:
		close(s.done)
	}
}

func (s *stockTable) close() {
	close(s.stop)
	<-s.done
}

func (s *stockTable) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"inventory": s.stock, "lines": slices.Clone(s.lines)}
}

func runStock(t *testing.T, s *stockTable, level int, appendLine bool) *Report {
	t.Helper()
	op := &Op{Name: "set_stock", Kind: KindWrite, Params: []string{"sku", "qty"}}
	agent := func(ctx context.Context) error {
		var err error
		for range 3 {
			if err = traced(ctx, op, []any{"sku-1", level}, []any{"sku-1"}, func(context.Context) error {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.stock["sku-1"] = level
				if appendLine {
					s.lines = append(s.lines, fmt.Sprintf("sku-1 set to %d", level))
				}
				return nil
			}); err == nil {
				return nil
			}
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { s.start(); return nil }),
		Teardown(func(context.Context) error { s.close(); return nil }),
		State(s.snapshot))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A correct upsert that sets stock to the level it already has (40 over a
// seeded 40) changes nothing in any window, here or in the baseline, and
// the run ends as the baseline did. It was a duplicate_write in four
// scenarios of six, on every run, with "State saw no execution change the
// world", while the same agent setting 50 was safe (red team rtT #4, GORM
// on SQLite). Effects, not executions: it is safe now where nothing of the
// world was at work when the baseline's end was read (no goroutine Setup
// left running, or one blocked on a channel: a database/sql pool's), and
// inconclusive, with a note, where a goroutine of Setup's sleeps between
// polls and could land an effect later. An upsert that also appends a
// line per call is still caught.
func TestAnUpsertToTheLevelItHasIsNoDuplicate(t *testing.T) {
	for _, c := range []struct {
		label string
		table func() *stockTable
	}{
		{"no goroutine", func() *stockTable { return &stockTable{} }},
		{"a goroutine at rest", func() *stockTable { return &stockTable{live: true} }},
	} {
		t.Run(c.label, func(t *testing.T) {
			rep := runStock(t, c.table(), 40, false)
			assert.Empty(t, findings(rep, ""))
			assert.Zero(t, rep.InconclusiveCount)
			res := resultOf(t, rep, ScenarioDuplicateSeq)
			assert.NotEmpty(t, notesSaying(res.Trace, "a write that sets what is already there changes nothing"), "%v", res.Trace.Notes)
			rep = runStock(t, c.table(), 50, false)
			assert.Empty(t, findings(rep, ""))
			rep = runStock(t, c.table(), 40, true)
			assert.Contains(t, findings(rep, ScenarioDuplicateSeq), "duplicate_write set_stock")
		})
	}
	t.Run("a goroutine asleep", func(t *testing.T) {
		rep := runStock(t, &stockTable{poller: true}, 40, false)
		assert.Empty(t, findings(rep, ""))
		res := resultOf(t, rep, ScenarioDuplicateSeq)
		assert.True(t, res.Inconclusive, "%v", res.Trace.Notes)
		n := notesSaying(res.Trace, "was not judged: no execution of set_stock changed the state")
		if assert.NotEmpty(t, n, "%v", res.Trace.Notes) {
			assert.Contains(t, n[0], "was at work at worldlag_test.go")
		}
	})
}

// A call whose arguments the state does not hold (an alert mailed to m-1;
// the mails are not in State) may have an effect State cannot see: it
// still counts, with the finding that says no effect was seen, beside the
// upsert to the level the table holds, which is absorbed.
func TestAWriteStateCannotSeeStillCounts(t *testing.T) {
	s := &stockTable{live: true}
	set := &Op{Name: "set_stock", Kind: KindWrite, Params: []string{"sku", "qty"}}
	mail := &Op{Name: "mail", Kind: KindWrite, Params: []string{"to"}}
	var mu sync.Mutex
	sent := 0
	agent := func(ctx context.Context) error {
		if err := traced(ctx, set, []any{"sku-1", 40}, []any{"sku-1"}, func(context.Context) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.stock["sku-1"] = 40
			return nil
		}); err != nil {
			return err
		}
		return traced(ctx, mail, []any{"m-1"}, []any{"m-1"}, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			sent++
			return nil
		})
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { s.start(); return nil }),
		Teardown(func(context.Context) error { s.close(); return nil }),
		State(s.snapshot), OnlyScenario(ScenarioDuplicateSeq))
	if err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, []string{"duplicate_write mail"}, findings(rep, ScenarioDuplicateSeq))
}
