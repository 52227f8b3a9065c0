package runtime

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onceDesk is a ticket desk; a tool reaches it through a client made once
// per process, as many Go services make theirs (sync.Once), while Setup
// makes a fresh desk for every scenario.
type onceDesk struct {
	mu      sync.Mutex
	next    int
	tickets map[string]string
	keys    map[string]string
}

func (d *onceDesk) open(key, subject string, keyed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.keys[key]; ok && keyed {
		return
	}
	d.next++
	id := fmt.Sprintf("T-%d", d.next)
	d.tickets[id] = subject
	d.keys[key] = id
}

// A tool whose client holds the first Setup's desk changes that desk in
// every later scenario, while State reads the desk its Setup made: each
// call's window showed nothing, the repeats were absorbed, and the
// scenarios that repeat the write passed for the keyed agent and the
// unkeyed one alike, though their ends lacked the baseline's ticket (red
// team rS #3). They are now inconclusive, with a note naming the client
// made once. With the client made anew in Setup, the keyed agent passes
// and the unkeyed one fails. Where the two deliveries at once overlap,
// what they left together (nothing) was judged against what one
// execution left, as a toggle done twice would be: a duplicate_write of
// the keyed agent (under -race, most runs). The run saw nothing change
// and ended where it began: that scenario is inconclusive too. Each call
// carries a request id of its own: calls are matched with the baseline's
// by op and identity.
func TestWritesToAnotherWorldThanStateReadsAreUnjudged(t *testing.T) {
	create := &Op{Name: "create_ticket", Kind: KindWrite, Params: []string{"key", "subject", "request_id"}}
	repeats := []string{"lost_acknowledgement/create_ticket#1", "crash_restart/create_ticket#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent}
	calls := 0 // a request id made afresh for each call, an argument
	for _, bindOnce := range []bool{true, false} {
		for _, keyed := range []bool{true, false} {
			var mu sync.Mutex
			var current, client *onceDesk
			var once sync.Once
			agent := func(ctx context.Context) error {
				call := func() error {
					mu.Lock()
					calls++
					req := fmt.Sprintf("req-%d", calls)
					mu.Unlock()
					return traced(ctx, create, []any{"msg-77", "printer on fire", req}, []any{"msg-77"}, func(context.Context) error {
						once.Do(func() { mu.Lock(); client = current; mu.Unlock() })
						mu.Lock()
						d := client
						mu.Unlock()
						d.open("msg-77", "printer on fire", keyed)
						return nil
					})
				}
				if err := call(); err != nil {
					return call()
				}
				return nil
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					d := &onceDesk{tickets: map[string]string{}, keys: map[string]string{}}
					mu.Lock()
					current = d
					if !bindOnce {
						client = d
					}
					mu.Unlock()
					return nil
				}),
				State(func() any {
					mu.Lock()
					d := current
					mu.Unlock()
					d.mu.Lock()
					defer d.mu.Unlock()
					return maps.Clone(d.tickets)
				}))
			require.NoError(t, err)
			for _, sc := range repeats {
				res := resultOf(t, rep, sc)
				switch {
				case bindOnce:
					assert.True(t, res.Inconclusive, "%s (keyed %v): not unjudged", sc, keyed)
					assert.Empty(t, findings(rep, sc), sc)
					assert.NotEmpty(t, notesSaying(res.Trace, "a client, a connection or a cache made once (with sync.Once"), "%s: %q", sc, res.Trace.Notes)
				case keyed:
					assert.False(t, res.Inconclusive, sc)
					assert.Empty(t, findings(rep, sc), sc)
				default:
					assert.Equal(t, []string{"duplicate_write create_ticket"}, findings(rep, sc), sc)
				}
				if !bindOnce {
					assert.Empty(t, notesSaying(res.Trace, "made once"), sc)
				}
			}
		}
	}
}
