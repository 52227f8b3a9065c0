package testkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// ticketDesk opens one ticket per (customer, subject); a repeat changes
// nothing.
type ticketDesk struct {
	mu      sync.Mutex
	tickets []string
}

var openTicketOp = &runtime.Op{Name: "open_ticket", Kind: runtime.KindWrite, Params: []string{"customer", "subject", "body"}}

func (d *ticketDesk) open(ctx context.Context, customer, subject, body string) error {
	return tracedCall(ctx, openTicketOp, []any{customer, subject, body}, []any{customer, subject}, nil, func(context.Context) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, t := range d.tickets {
			if t == customer+"/"+subject {
				return nil
			}
		}
		d.tickets = append(d.tickets, customer+"/"+subject)
		return nil
	})
}

// toolRegistry dispatches the model's tool calls by name, as agents
// without a framework do: every call of a tool comes from its entry's
// line.
type toolRegistry map[string]func(context.Context, json.RawMessage) error

func newToolRegistry(d *ticketDesk) toolRegistry {
	return toolRegistry{"open_ticket": func(ctx context.Context, raw json.RawMessage) error {
		var a struct{ Customer, Subject, Body string }
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		return d.open(ctx, a.Customer, a.Subject, a.Body)
	}}
}

func (r toolRegistry) dispatch(ctx context.Context, name string, args map[string]string) error {
	raw, _ := json.Marshal(args)
	return r[name](ctx, raw)
}

// An agent that, when the ticket could not be opened, opens an escalation
// ticket instead (another subject, the same customer and text), through a
// tool registry: both calls come from the registry's line, so identity_unstable
// took the escalation for a retry with a fresh key, an error in four
// scenarios on every run (red-team). The agent reaches the registry from two
// places, which a retry does not: a warning now. A retry loop through the
// same registry with a key per attempt is still an error.
func TestEscalationThroughAToolRegistryIsNoRetry(t *testing.T) {
	const body = "the parcel arrived damaged"
	escalate := func(d *ticketDesk) func(context.Context) error {
		return func(ctx context.Context) error {
			r := newToolRegistry(d)
			err := r.dispatch(ctx, "open_ticket", map[string]string{"customer": "kim", "subject": "damaged parcel", "body": body})
			if err == nil {
				return nil
			}
			return errors.Join(err, r.dispatch(ctx, "open_ticket", map[string]string{"customer": "kim", "subject": "ESCALATION", "body": body}))
		}
	}
	var attempt atomic.Int32 // two deliveries at once share it
	freshKey := func(d *ticketDesk) func(context.Context) error {
		return func(ctx context.Context) error {
			r := newToolRegistry(d)
			var err error
			for range 3 {
				subject := fmt.Sprintf("damaged parcel (attempt %d)", attempt.Add(1))
				if err = r.dispatch(ctx, "open_ticket", map[string]string{"customer": "kim", "subject": subject, "body": body}); err == nil {
					return nil
				}
			}
			return err
		}
	}
	run := func(agent func(*ticketDesk) func(context.Context) error) *runtime.Report {
		d := &ticketDesk{}
		return testkit.Run(t, agent(d), testkit.NoSummary(),
			testkit.Setup(func(context.Context) error { d.mu.Lock(); d.tickets = nil; d.mu.Unlock(); return nil }),
			testkit.State(func() any { d.mu.Lock(); defer d.mu.Unlock(); return append([]string{}, d.tickets...) }))
	}

	rep := run(escalate)
	if v := verdictOf(rep); v != "" {
		t.Errorf("the escalating agent, through a registry:\n%s", v)
	}
	warned := false
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Code == runtime.CodeIdentityUnstable && strings.Contains(f.Message, "reached from different places") {
				warned = true
			}
		}
	}
	if !warned {
		t.Error("the escalation through a registry is not named as a possible retry (warning)")
	}
	if got := codesIn(run(freshKey), runtime.CodeIdentityUnstable); !strings.Contains(got, "lost_acknowledgement/open_ticket#1 "+runtime.CodeIdentityUnstable) {
		t.Errorf("a retry loop through the registry with a key per attempt: no identity_unstable error in lost_acknowledgement; got:\n%s", got)
	}
}

// twice calls f again when it fails, as agents' retry helpers do: the two
// attempts reach f's call from two lines of twice, as a dispatcher's
// entry is reached from two places.
func twice(f func() error) error {
	if err := f(); err != nil {
		return f()
	}
	return nil
}

// An agent that opens a ticket under a key made afresh for each attempt,
// retried through a two-line helper: the two attempts reach the tool's
// line from different places, which the suite cannot tell from other work
// (a warning). Its crash_restart scenario's restart opened a second ticket
// under yet another key, from the same line and path as the crashed
// delivery's first call: the redelivery error, as in
// duplicate_delivery/sequential, where crash_restart had only the warning
// about the crashed delivery's own retry (a red team's agent, the second
// ticket plain in State). The same agent keyed by the message passes.
func TestAFreshKeyPerDeliveryIsFoundAfterAWarnedRetry(t *testing.T) {
	var n atomic.Int32 // a key per attempt, as uuid.NewString() gives
	agent := func(fresh bool) func(d *ticketDesk) func(context.Context) error {
		return func(d *ticketDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				return twice(func() error {
					subject := "printer jam"
					if fresh {
						subject = fmt.Sprintf("printer jam/%d", n.Add(1))
					}
					return d.open(ctx, "kim", subject, "the printer is jammed")
				})
			}
		}
	}
	run := func(agent func(*ticketDesk) func(context.Context) error) *runtime.Report {
		d := &ticketDesk{}
		return testkit.Run(t, agent(d), testkit.NoSummary(),
			testkit.Setup(func(context.Context) error { d.mu.Lock(); d.tickets = nil; d.mu.Unlock(); return nil }),
			testkit.State(func() any { d.mu.Lock(); defer d.mu.Unlock(); return append([]string{}, d.tickets...) }))
	}
	rep := run(agent(true))
	got := codesIn(rep, runtime.CodeIdentityUnstable)
	for _, sc := range []string{"crash_restart/open_ticket#1", "duplicate_delivery/sequential"} {
		if !strings.Contains(got, sc+" "+runtime.CodeIdentityUnstable) {
			t.Errorf("a fresh key per delivery: no identity_unstable error in %s; got:\n%s", sc, got)
		}
	}
	// The error and the warning are two problems: the error's scenarios
	// were printed "as in" the warning's, whose text explains another thing.
	severities := map[runtime.Severity]bool{}
	for _, p := range rep.Problems {
		if p.Code == runtime.CodeIdentityUnstable {
			severities[p.Severity] = true
		}
	}
	if !severities[runtime.SeverityError] || !severities[runtime.SeverityWarning] {
		t.Errorf("identity_unstable problems by severity: %v, want an error and a warning apart", severities)
	}
	if v := verdictOf(run(agent(false))); v != "" {
		t.Errorf("the agent keyed by the message:\n%s", v)
	}
}
