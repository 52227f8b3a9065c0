package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ticketBroker is the channel-only shape of a JetStream publisher whose
// consumer Setup starts (red team rtU #5): the agent's traced open_ticket
// hands a message to the broker, a goroutine of Setup's, and waits for its
// acknowledgement; the broker stores the message (dropping one whose id it
// has stored already, as the stream's duplicate window does), hands it to
// the consumer, a second goroutine of Setup's, and acknowledges once the
// consumer has taken it up, so the consumer's traced create_ticket, made
// with context.Background(), runs while the agent still waits for its
// acknowledgement (an embedded nats-server at GOMAXPROCS=1 does the same
// by the scheduler's choice). keyed publishes under the ticket's logical
// id (the correct agent); unkeyed, under a fresh id each attempt, so the
// broker stores a retry again and the consumer opens a second ticket.
type ticketBroker struct {
	keyed   bool
	publish chan brokerMsg
	queue   chan string
	taken   chan struct{}
	pending atomic.Int64
	fresh   atomic.Int64
	done    sync.WaitGroup

	mu      sync.Mutex
	seen    map[string]bool
	tickets []string
}

type brokerMsg struct {
	id, conv string
	ack      chan error
}

var (
	opOpenTicket   = &Op{Name: "open_ticket", Kind: KindWrite, Params: []string{"conv"}}
	opCreateTicket = &Op{Name: "create_ticket", Kind: KindWrite, Params: []string{"conv"}}
)

func (b *ticketBroker) start() {
	b.mu.Lock()
	b.seen, b.tickets = map[string]bool{}, nil
	b.mu.Unlock()
	b.publish, b.queue, b.taken = make(chan brokerMsg), make(chan string, 16), make(chan struct{}, 16)
	b.done.Add(2)
	go func() { // the broker
		defer b.done.Done()
		defer close(b.queue)
		for m := range b.publish {
			if b.seen[m.id] {
				m.ack <- nil // a duplicate: acknowledged, not stored
				continue
			}
			b.seen[m.id] = true
			b.pending.Add(1)
			b.queue <- m.conv
			select {
			case <-b.taken:
			case <-time.After(200 * time.Millisecond):
			}
			m.ack <- nil
		}
	}()
	go func() { // the consumer, whose own client calls the traced tool
		defer b.done.Done()
		for conv := range b.queue {
			for {
				err := traced(context.Background(), opCreateTicket, []any{conv}, []any{conv}, func(context.Context) error {
					select {
					case b.taken <- struct{}{}:
					default:
					}
					b.mu.Lock()
					defer b.mu.Unlock()
					b.tickets = append(b.tickets, conv)
					return nil
				})
				if err == nil {
					break // acknowledged; an error is redelivered
				}
				time.Sleep(time.Millisecond)
			}
			b.pending.Add(-1)
		}
	}()
}

func (b *ticketBroker) stop() { close(b.publish); b.done.Wait() }

func (b *ticketBroker) snapshot() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tickets)
}

// agent opens the ticket, and again when the attempt failed (the retry a
// publish whose acknowledgement was lost gets).
func (b *ticketBroker) agent(ctx context.Context) error {
	open := func() error {
		return traced(ctx, opOpenTicket, []any{"conv-42"}, []any{"conv-42"}, func(ctx context.Context) error {
			id := "ticket-conv-42"
			if !b.keyed {
				id = fmt.Sprintf("msg-%d", b.fresh.Add(1))
			}
			m := brokerMsg{id, "conv-42", make(chan error, 1)}
			select {
			case b.publish <- m:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case err := <-m.ack:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}
	var err error
	for range 3 {
		if err = open(); err == nil {
			return nil
		}
	}
	return err
}

func runTicketBroker(t *testing.T, keyed bool) *Report {
	t.Helper()
	b := &ticketBroker{keyed: keyed}
	rep, err := Run(context.Background(), t.Name(), b.agent,
		Setup(func(context.Context) error { b.start(); return nil }),
		Teardown(func(context.Context) error { b.stop(); return nil }),
		State(b.snapshot),
		Settle(func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			for b.pending.Load() != 0 {
				select {
				case <-ctx.Done():
					return errors.New("the consumer still had messages pending")
				case <-time.After(time.Millisecond):
				}
			}
			return nil
		}))
	require.NoError(t, err)
	return rep
}

// A consumer's traced call made while the agent waits, inside its traced
// publish, for the broker's acknowledgement is the world's work: before,
// the waiting publish made it "the agent's, told by its goroutine", so
// faults were planned on the consumer's call, the concurrent delivery
// could not place it (refused, later unattributed), and the correct
// publisher was UNSAFE or INCONCLUSIVE on every run at GOMAXPROCS=1. Now
// it runs untraced, State judges the tickets, the correct publisher is
// SAFE and the one with a fresh message id per attempt UNSAFE.
func TestConsumerCallWhilePublishWaitsIsTheWorlds(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		name := map[bool]string{false: "fresh id", true: "keyed"}[keyed]
		t.Run(name, func(t *testing.T) {
			rep := runTicketBroker(t, keyed)
			require.True(t, rep.BaselineSucceeded, rep.BaselineFailure)
			var msgs []string
			for _, f := range rep.Findings {
				msgs = append(msgs, fmt.Sprintf("%s %s %s", f.Severity, f.Code, f.Message))
			}
			all := strings.Join(msgs, "\n")
			assert.Equal(t, keyed, rep.Safe, all)
			assert.Equal(t, !keyed, rep.UnsafeCount > 0, "unsafe %d\n%s", rep.UnsafeCount, all)
			assert.Zero(t, rep.InconclusiveCount, "no scenario may be inconclusive\n%s", all)
			for _, res := range append([]*Result{rep.Baseline}, rep.Results...) {
				assert.NotEqual(t, "create_ticket", res.OperationName, "a fault planned on the consumer's call: %s", res.Scenario)
				assert.Empty(t, res.Trace.Calls("create_ticket"), "%s traced the consumer's call as the agent's", res.Scenario)
				assert.Empty(t, res.Trace.Refused, res.Scenario)
				assert.Empty(t, res.Trace.Unattributed, res.Scenario)
			}
			for _, f := range rep.Findings {
				assert.NotContains(t, f.Message, "pass the agent's ctx", all)
				if !keyed && f.Severity == SeverityError {
					assert.Equal(t, CodeDuplicateWrite, f.Code, f.Message)
				}
			}
		})
	}
}
