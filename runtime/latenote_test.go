package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// An open that answers at once and opens the ticket in a goroutine of its
// own (a server that answers 202 Accepted), with State and no Settle: the
// snapshots around the calls do not see the ticket land, and the suite does
// not take a change after a call returned for that call's (an untraced
// worker of the world may have made it). It says what it saw: a repeat's
// scenario whose end differs from what the last write left is noted, so
// that "safe" there is not silent. A tool whose effect lands before it
// returns leaves no such note, nor does a suite given a Settle.
func TestStateChangedAfterTheLastWriteIsNoted(t *testing.T) {
	open := &Op{Name: "open", Kind: KindWrite, Params: []string{"subject"}}
	for _, c := range []struct {
		name   string
		async  bool
		settle bool
		want   bool
	}{
		{"accepted, no settle", true, false, true},
		{"synchronous", false, false, false},
		{"accepted, settle", true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			var pending sync.WaitGroup
			agent := func(ctx context.Context) error {
				// The server books once the agent has its answers: after
				// every call returned (a Settle waits for it while the
				// call's window is open, so it books at once then).
				answered := make(chan struct{})
				var err error
				for range 2 {
					err = traced(ctx, open, []any{"printer"}, []any{"printer"}, func(context.Context) error {
						apply := func() { w.do(func(m map[string]any) { m["printer"] = "open" }) }
						if !c.async {
							apply()
							return nil
						}
						pending.Add(1)
						go func() {
							defer pending.Done()
							if !c.settle {
								<-answered
							}
							apply()
						}()
						return nil
					})
					if err == nil {
						break
					}
				}
				close(answered)
				// The agent goes on (the model's next turn): the ticket
				// lands meanwhile, before the end of the run is read.
				time.Sleep(20 * time.Millisecond)
				return err
			}
			opts := []Option{OnlyScenario(ScenarioLostAck + "/open#1"), Teardown(func(context.Context) error { pending.Wait(); return nil })}
			if c.settle {
				opts = append(opts, Settle(func(context.Context) error { pending.Wait(); return nil }))
			}
			rep := runOn(t, w, nil, agent, opts...)
			if len(rep.Results) != 1 {
				t.Fatalf("%d results, want lost_acknowledgement/open#1", len(rep.Results))
			}
			notes := strings.Join(rep.Results[0].Trace.Notes, "\n")
			if got := strings.Contains(notes, "the state changed after the last traced write returned"); got != c.want {
				t.Fatalf("noted %v, want %v; notes:\n%s", got, c.want, notes)
			}
		})
	}
}
