package testkit_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// auditRows is the audit table, keyed by event id: a second insert of an
// event is absorbed (ON CONFLICT DO NOTHING).
type auditRows struct {
	mu   sync.Mutex
	rows []string
}

func (a *auditRows) insert(ids []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		if !slices.Contains(a.rows, id) {
			a.rows = append(a.rows, id)
		}
	}
}

func (a *auditRows) snapshot() any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(slices.Values(a.rows))
}

// auditBatcher buffers events and writes them to the table every 5 ms from
// a goroutine of its own, the way telemetry and audit writers do (red team
// rtR #11).
type auditBatcher struct {
	rows       *auditRows
	mu         sync.Mutex
	buf        []string
	pending    int // recorded, not yet in the table
	stop, done chan struct{}
}

func newAuditBatcher(rows *auditRows) *auditBatcher {
	b := &auditBatcher{rows: rows, stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *auditBatcher) loop() {
	defer close(b.done)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.flush()
		case <-b.stop:
			b.flush()
			return
		}
	}
}

func (b *auditBatcher) flush() {
	b.mu.Lock()
	batch := b.buf
	b.buf = nil
	b.mu.Unlock()
	b.rows.insert(batch)
	b.mu.Lock()
	b.pending -= len(batch)
	b.mu.Unlock()
}

func (b *auditBatcher) close() {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	<-b.done
}

var opRecordEvent = &runtime.Op{Name: "record_event", Kind: runtime.KindWrite, Params: []string{"event_id"}}

// record queues an event; it lands with the next flush.
func (b *auditBatcher) record(ctx context.Context, id string) (err error) {
	c, _ := runtime.Begin(ctx, opRecordEvent, []any{id}, []any{id}, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	b.mu.Lock()
	b.buf = append(b.buf, id)
	b.pending++
	b.mu.Unlock()
	return c.Finish(nil)
}

// auditSuite runs an agent that records an event through a batcher it
// makes per delivery, retrying once on an error; closes says whether it
// stops the batcher before it returns.
func auditSuite(t *testing.T, closes bool) *runtime.Report {
	t.Helper()
	var rows *auditRows
	var mu sync.Mutex
	var made []*auditBatcher
	t.Cleanup(func() {
		for _, b := range made {
			b.close()
		}
	})
	agent := func(ctx context.Context) error {
		b := newAuditBatcher(rows)
		mu.Lock()
		made = append(made, b)
		mu.Unlock()
		if closes {
			defer b.close()
		}
		if err := b.record(ctx, "ord-5/approved"); err != nil {
			return b.record(ctx, "ord-5/approved")
		}
		return nil
	}
	// The Settle waits until every event recorded is in the table.
	flushed := func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range made {
			b.mu.Lock()
			n := b.pending
			b.mu.Unlock()
			if n > 0 {
				return false, nil
			}
		}
		return true, nil
	}
	ft := &fakeT{name: t.Name()}
	rep := testkit.Run(ft, agent,
		testkit.Setup(func(context.Context) error { rows = &auditRows{}; return nil }),
		testkit.State(func() any { return rows.snapshot() }),
		testkit.SettleUntil(flushed, 2*time.Second))
	require.NotNil(t, rep)
	return rep
}

// An agent that leaves its own batching writer running (no deferred
// Close) writes after it returned, and keeps a goroutine per delivery:
// before, the report said nothing of it ("nothing to note"), as the
// goroutine_leak warning was only for goroutines that made tool calls.
// The baseline now warns, and the verdict is what it was; the agent that
// closes its writer gets no warning.
func TestAgentsLeftWriterIsWarnedOf(t *testing.T) {
	leaks := func(rep *runtime.Report) []runtime.Finding {
		var out []runtime.Finding
		for _, f := range rep.Findings {
			if f.Code == runtime.CodeGoroutineLeak {
				out = append(out, f)
			}
		}
		return out
	}
	t.Run("left", func(t *testing.T) {
		rep := auditSuite(t, false)
		assert.True(t, rep.Safe, "a keyed audit table absorbs the repeats")
		found := leaks(rep)
		require.Len(t, found, 1, "%v", rep.Findings)
		f := found[0]
		assert.Equal(t, runtime.SeverityWarning, f.Severity)
		assert.Equal(t, "baseline", f.Scenario)
		assert.Contains(t, f.Message, "a goroutine that the agent started (leftwriter_test.go:")
		assert.Contains(t, f.Message, "started at leftwriter_test.go:")
		assert.Contains(t, f.Message, "was still running when the baseline's run ended, and the state changed outside every traced write")
		assert.False(t, rep.Baseline.Inconclusive)
		assert.Zero(t, rep.InconclusiveCount)
	})
	t.Run("closed", func(t *testing.T) {
		rep := auditSuite(t, true)
		assert.True(t, rep.Safe)
		for _, f := range leaks(rep) {
			assert.Fail(t, "a writer the agent closed is no leak", f.Message)
		}
		for _, f := range rep.Findings {
			assert.False(t, strings.Contains(f.Message, "still running when the baseline's run ended"), f.Message)
		}
	})
}
