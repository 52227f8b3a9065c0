package runtime

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A helpdesk agent opens a ticket (keyed: the desk answers a repeat with
// the ticket it opened) and mails the customer through notify, whose tool
// answers at once and sends the mail from a goroutine of its own a moment
// later, as an SMTP send after the answer does. No Settle is given. In the
// baseline, which waits at each call's end for the world to go quiet, the
// mail landed after notify's window and before the agent returned. In a
// scenario that repeats notify (a retry after a lost answer, a
// redelivery), nothing waited: the end was read as the agent returned,
// before any mail landed, and a repeat that State saw change nothing was
// counted as a second effect. The mail service that keeps one mail per
// order was a duplicate_write in 3 of the 4 scenarios that repeat notify,
// on every run (red team rtY #10, go-sdk MCP over streamable HTTP). Now
// the end of such a run is read once it held still, and an end read
// before the late change the baseline showed had landed leaves the repeat
// unjudged: the correct agent is never unsafe, the one whose mail service
// sends every mail is.
func TestAMailSentAfterTheToolAnsweredIsJudgedByTheEnd(t *testing.T) {
	open := &Op{Name: "create_ticket", Kind: KindWrite, Params: []string{"order"}}
	notify := &Op{Name: "notify_customer", Kind: KindWrite, Params: []string{"order", "text"}}
	// desk is one world's helpdesk: a mail sent late lands in the world
	// its call ran in.
	type desk struct {
		mu      sync.Mutex
		tickets map[string]string
		mails   []string
	}
	for _, c := range []struct {
		name   string
		dedupe bool // the mail service keeps one mail per order
		// slow: past the baseline, the mail lands a second after the
		// tool answered, long after the end of any run held still.
		slow bool
	}{
		{"one mail per order", true, false},
		{"every mail sent", false, false},
		{"one mail per order, sent after the end", true, true},
		{"every mail sent, after the end", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				cur     atomic.Pointer[desk]
				worlds  atomic.Int32
				sending sync.WaitGroup
			)
			t.Cleanup(sending.Wait)
			call := func(ctx context.Context, op *Op, args []any, fn func()) error {
				var err error
				for range 3 { // the agent retries a call that failed
					if err = traced(ctx, op, args, args[:1], func(context.Context) error { fn(); return nil }); err == nil {
						return nil
					}
				}
				return err
			}
			agent := func(ctx context.Context) error {
				if err := call(ctx, open, []any{"ord-7"}, func() {
					d := cur.Load()
					d.mu.Lock()
					defer d.mu.Unlock()
					if _, ok := d.tickets["ord-7"]; !ok {
						d.tickets["ord-7"] = "T-1"
					}
				}); err != nil {
					return err
				}
				return call(ctx, notify, []any{"ord-7", "ticket T-1"}, func() {
					d, delay := cur.Load(), 5*time.Millisecond
					if c.slow && worlds.Load() > 1 {
						delay = time.Second
					}
					sending.Add(1)
					go func() { // the send, after the tool answered
						defer sending.Done()
						time.Sleep(delay)
						d.mu.Lock()
						defer d.mu.Unlock()
						if c.dedupe && slices.ContainsFunc(d.mails, func(m string) bool { return strings.HasPrefix(m, "ord-7: ") }) {
							return
						}
						d.mails = append(d.mails, "ord-7: ticket T-1")
					}()
				})
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				Setup(func(context.Context) error {
					worlds.Add(1)
					cur.Store(&desk{tickets: map[string]string{}})
					return nil
				}),
				State(func() any {
					d := cur.Load()
					d.mu.Lock()
					defer d.mu.Unlock()
					return map[string]any{"tickets": maps.Clone(d.tickets), "mails": slices.Clone(d.mails)}
				}))
			require.NoError(t, err)
			var dups, unread []string
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Code == CodeDuplicateWrite {
						dups = append(dups, r.Scenario)
						t.Logf("%s: %s", r.Scenario, f.Message)
					}
				}
				if r.Inconclusive {
					t.Logf("%s inconclusive: %q", r.Scenario, r.Trace.Notes)
					if strings.Contains(strings.Join(r.Trace.Notes, "\n"), "this run's end was read before that change landed in it") {
						unread = append(unread, r.Scenario)
					}
				}
			}
			switch {
			case c.slow:
				// No end shows the mails: neither twin is judged.
				assert.Empty(t, rep.Findings)
				assert.Subset(t, unread, []string{ScenarioLostAck + "/notify_customer#1", ScenarioCrashRestart + "/notify_customer#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent})
				assert.Contains(t, unread, ScenarioDuplicateSeq)
			case c.dedupe:
				assert.Empty(t, rep.Findings, "a repeat whose mail the service dropped")
			default:
				assert.NotEmpty(t, dups, "the second mail of a repeat")
				assert.False(t, rep.Safe)
			}
		})
	}
}
