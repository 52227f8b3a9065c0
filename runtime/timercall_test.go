package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reminder that one agent sends from a time.AfterFunc callback, with
// context.Background(), fires while another agent's suite runs. The Go
// runtime records no creator for a timer's goroutine, so nothing tells
// whose it is: it was taken for the one invocation running, and the other
// agent, which sends the same reminder once, had it twice (a false
// duplicate_write in its baseline). Now the call is nobody's: the run it
// lands in is inconclusive and says why, and fails nothing.
func TestCallFromATimerIsNobodysWithoutTheAgentsContext(t *testing.T) {
	remind := &Op{Name: "remind", Kind: KindWrite, Params: []string{"id"}}
	send := func(ctx context.Context) error {
		return traced(ctx, remind, []any{"r-1"}, []any{"r-1"}, func(context.Context) error { return nil })
	}
	fired := make(chan struct{}, 64)
	// Each reminder fires once the other agent's suite has begun: a timer
	// that finds it not begun yet arms itself again. With one firing 15 ms
	// after it was armed, a CI machine under load ran the setter's suite
	// so slowly that every reminder fired before the other suite began,
	// and its baseline held no call of another's (CI253).
	var onceBegan atomic.Bool
	var remindLater func()
	remindLater = func() {
		if !onceBegan.Load() {
			time.AfterFunc(5*time.Millisecond, remindLater)
			return
		}
		_ = send(context.Background())
		fired <- struct{}{}
	}
	setter := func(ctx context.Context) error {
		time.AfterFunc(15*time.Millisecond, remindLater)
		return nil
	}
	_, err := Run(context.Background(), t.Name()+"/setter", setter)
	require.NoError(t, err)
	once := func(ctx context.Context) error {
		onceBegan.Store(true)
		time.Sleep(40 * time.Millisecond) // the setter's timers fire meanwhile
		return send(ctx)
	}
	rep, err := Run(context.Background(), t.Name()+"/once", once)
	require.NoError(t, err)
	require.NotEmpty(t, fired, "no timer fired")
	// The agent's own repeats (a redelivery sends the reminder again) are
	// its duplicates; the baseline delivers once.
	for _, f := range rep.Baseline.Findings {
		assert.NotEqual(t, SeverityError, f.Severity, "the other agent's reminder was taken for this one's: %s", f.Message)
	}
	assert.Len(t, rep.Baseline.Trace.Ops, 1, "the baseline's trace holds a call its agent did not make")
	assert.True(t, rep.Baseline.Inconclusive, "the run the timer's call landed in does not say it could not tell")
}
