package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
)

// freshHex is a random key of 32 hex digits, as uuid.NewString makes.
func freshHex() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// A payments fake: refunds keyed by an idempotency key (a repeat of a key
// is replayed), customers created by email, and a customer search that
// lags (its index is never updated during a run: Stripe's Search API
// shows a customer about a second after it was made).
type payments struct {
	mu        sync.Mutex
	refunds   []string
	keys      map[string]bool
	customers []string
	trials    []string
	subs      map[string]string
}

func (p *payments) snapshot() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	subs := map[string]string{}
	for k, v := range p.subs {
		subs[k] = v
	}
	return map[string]any{"refunds": append([]string{}, p.refunds...), "customers": append([]string{}, p.customers...), "trials": len(p.trials), "subs": subs}
}

var (
	refundKeyedOp    = &Op{Name: "refund_keyed", Kind: KindWrite, Params: []string{"charge", "amount", "key"}}
	searchCustomerOp = &Op{Name: "search_customer", Kind: KindRead, Params: []string{"email"}}
	createCustomerOp = &Op{Name: "create_customer", Kind: KindWrite, Params: []string{"email"}}
	startTrialOp     = &Op{Name: "start_trial", Kind: KindWrite, Params: []string{"email"}}
	subscribeOp      = &Op{Name: "subscribe", Kind: KindWrite, Params: []string{"account", "tier"}}
)

func (p *payments) refund(ctx context.Context, charge string, amount int, key string) error {
	return traced(ctx, refundKeyedOp, []any{charge, amount, key}, []any{charge, amount}, func(context.Context) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.keys[key] {
			p.keys[key] = true
			p.refunds = append(p.refunds, charge)
		}
		return nil
	})
}

func runPayments(t *testing.T, agent func(ctx context.Context, p *payments) error) *Report {
	t.Helper()
	var p *payments
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return agent(ctx, p) },
		Setup(func(context.Context) error {
			p = &payments{keys: map[string]bool{}, subs: map[string]string{}}
			return nil
		}),
		State(func() any { return p.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func messagesOf(rep *Report, code, scenario string) string {
	var out []string
	for _, f := range rep.Findings {
		if f.Code == code && f.Message != "" && (scenario == "" || f.Scenario == scenario) {
			out = append(out, f.Message)
		}
	}
	return strings.Join(out, "\n")
}

// A fresh idempotency key for each attempt (red team rtT #1): the refund
// is made twice, and the finding says the key is the bug, not that it
// belongs in identity=. The twin keys the refund by the charge: SAFE.
func TestFreshKeyPerAttemptIsNamedAsTheBug(t *testing.T) {
	buggy := runPayments(t, func(ctx context.Context, p *payments) error {
		return retryOnce(ctx, func(ctx context.Context) error { return p.refund(ctx, "ch_1", 500, freshHex()) })
	})
	msg := messagesOf(buggy, CodeDuplicateWrite, "")
	if !strings.Contains(msg, "key holds a random value made anew for each call") || strings.Contains(msg, "add what tells them apart") {
		t.Fatalf("the duplicate_write must say the key is made anew for each attempt, and not advise identity=: %s", msg)
	}
	fixed := runPayments(t, func(ctx context.Context, p *payments) error {
		return retryOnce(ctx, func(ctx context.Context) error { return p.refund(ctx, "ch_1", 500, "refund-ch_1-500") })
	})
	if !fixed.Safe {
		t.Fatalf("a key from the logical operation: %v", findings(fixed, ""))
	}
}

// An agent that re-reads before it creates again, through a search that
// does not show the customer just made (red team rtT #7): the advice is
// not "re-read before retrying", but that the read did not see the create.
// The twin's create skips an email that exists (keyed at the sink): SAFE.
func TestRereadThatMissedTheCreateIsSaid(t *testing.T) {
	agent := func(keyed bool) func(ctx context.Context, p *payments) error {
		return func(ctx context.Context, p *payments) error {
			return retryOnce(ctx, func(ctx context.Context) error {
				var found string
				c, _ := Begin(ctx, searchCustomerOp, []any{"a@example.com"}, nil, []any{"a@example.com"})
				if err := c.Start(); err != nil {
					return err
				}
				if err := c.Finish(nil, found); err != nil { // the index lags: it never shows a customer made in this run
					return err
				}
				if found != "" {
					return nil
				}
				return traced(ctx, createCustomerOp, []any{"a@example.com"}, []any{"a@example.com"}, func(context.Context) error {
					p.mu.Lock()
					defer p.mu.Unlock()
					if keyed {
						for _, c := range p.customers {
							if c == "a@example.com" {
								return nil
							}
						}
					}
					p.customers = append(p.customers, "a@example.com")
					return nil
				})
			})
		}
	}
	buggy := runPayments(t, agent(false))
	msg := messagesOf(buggy, CodeDuplicateWrite, "lost_acknowledgement/create_customer#1")
	if !strings.Contains(msg, "the agent did re-read before the repeat (1:search_customer#2, of the same entity), and the read answered what it answered before 1:create_customer#1 ran") || strings.Contains(msg, "or re-read before retrying") {
		t.Fatalf("the duplicate_write must say the re-read did not see the create: %s", msg)
	}
	// It says what is known: the read did not show what the write
	// changes (rtW #9a: a read of the order, which a refund does not
	// change, was called "a stale or eventually consistent read").
	if !strings.Contains(msg, "ran: it does not show what create_customer changes, or it is stale (a search index, a replica, a cache), so this re-read cannot guard the write") {
		t.Fatalf("the duplicate_write must say the read does not show what the write changes, or is stale: %s", msg)
	}
	if fixed := runPayments(t, agent(true)); !fixed.Safe {
		t.Fatalf("a create keyed at the sink: %v", findings(fixed, ""))
	}
}

// An identity the sink answered (red team rtT #8): start_trial makes a
// new trial and id for each delivery, and subscribe takes that id. The
// identity_unstable on subscribe names start_trial as the source, not a
// key the agent made. The twin's start_trial answers the email's trial.
// Likewise where subscribe's key is made of the id ("sub:" + id): the
// message said the agent made a key afresh for each delivery (red team
// rS #6).
func TestIdentityFromTheSinkNamesTheAnsweringCall(t *testing.T) {
	for _, composed := range []bool{false, true} {
		identityFromTheSink(t, composed)
	}
}

func identityFromTheSink(t *testing.T, composed bool) {
	agent := func(keyed bool) func(ctx context.Context, p *payments) error {
		return func(ctx context.Context, p *payments) error {
			var id string
			c, _ := Begin(ctx, startTrialOp, []any{"cy@example.com"}, []any{"cy@example.com"}, nil)
			if err := c.Start(); err != nil {
				return err
			}
			p.mu.Lock()
			if keyed && len(p.trials) > 0 {
				id = p.trials[0]
			} else {
				id = freshHex()
				p.trials = append(p.trials, id)
			}
			p.mu.Unlock()
			if err := c.Finish(nil, id); err != nil { // start_trial answers the trial's id
				return err
			}
			key := id
			if composed {
				key = "sub:" + id
			}
			return traced(ctx, subscribeOp, []any{id, "trial"}, []any{key}, func(context.Context) error {
				p.mu.Lock()
				defer p.mu.Unlock()
				p.subs[id] = "trial"
				return nil
			})
		}
	}
	buggy := runPayments(t, agent(false))
	msg := messagesOf(buggy, CodeIdentityUnstable, "")
	if !strings.Contains(msg, "the new identity is what 2:start_trial#2 answered, a repeat with an effect of its own") || strings.Contains(msg, "an id generated where the message is handled") {
		t.Fatalf("composed %v: the identity_unstable must name start_trial's answer as the new identity: %s", composed, msg)
	}
	if fixed := runPayments(t, agent(true)); !fixed.Safe {
		t.Fatalf("start_trial keyed by the email: %v", findings(fixed, ""))
	}
}
