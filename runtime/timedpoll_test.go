package runtime

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// pullBroker models an in-process message broker with pull consumers (a
// JetStream consumer, red team rtU #4), with channels: Setup starts its
// goroutine, which answers a pull request with the next message, or, when
// none is left, holds the request until its expiry (a timer in a select,
// as nats-server's consumer does) and answers "no messages" then.
type pullBroker struct {
	expires time.Duration

	pulls chan chan string
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	refs  []string
}

var opPullRefund = &Op{Name: "refund", Kind: KindWrite, Params: []string{"order"}}

func (b *pullBroker) start(context.Context) error {
	b.mu.Lock()
	b.refs = nil
	b.mu.Unlock()
	b.pulls, b.stop, b.done = make(chan chan string), make(chan struct{}), make(chan struct{})
	queue := []string{"ord-17"}
	go func() {
		defer close(b.done)
		for {
			var reply chan string
			select {
			case reply = <-b.pulls:
			case <-b.stop:
				return
			}
			if len(queue) > 0 {
				reply <- queue[0]
				queue = queue[1:]
				continue
			}
			expiry := time.NewTimer(b.expires)
			select {
			case <-expiry.C:
				reply <- "" // no messages
			case <-b.stop:
				expiry.Stop()
				return
			}
		}
	}()
	return nil
}

func (b *pullBroker) close(context.Context) error { close(b.stop); <-b.done; return nil }

func (b *pullBroker) state() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.refs)
}

// worker is the consumer loop run as the invocation: pull, refund (a
// set: keyed by the order), pull again, and return when a pull brings
// nothing.
func (b *pullBroker) worker(ctx context.Context) error {
	for {
		reply := make(chan string, 1)
		select {
		case b.pulls <- reply:
		case <-ctx.Done():
			return ctx.Err()
		}
		var order string
		select {
		case order = <-reply:
		case <-ctx.Done():
			return ctx.Err()
		}
		if order == "" {
			return nil
		}
		err := traced(ctx, opPullRefund, []any{order}, []any{order}, func(context.Context) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			if !slices.Contains(b.refs, order) {
				b.refs = append(b.refs, order)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// A consumer loop whose last pull waits for the broker's expiry timer,
// longer than the stall bound: the baseline stalls (a hang must end in
// bounded time), but the message may not say that each goroutine waits
// for another and that a longer StallTimeout helps only if a goroutine
// outside the scenario ends the wait, nor add baseline_failed's "the
// agent failed without any fault": the broker's select has a timer,
// which its stack does not show, and a StallTimeout above the poll lets
// it end (red team rtU #4: nats.go's default 30 s Fetch against an
// in-process nats-server). With the bound above the poll, the same agent
// passes.
func TestTimedPollOfTheWorldStallSaysSo(t *testing.T) {
	b := &pullBroker{expires: 1500 * time.Millisecond}
	run := func(stall time.Duration, only ...string) *Report {
		opts := []Option{StallTimeout(stall), Setup(b.start), Teardown(b.close), State(b.state)}
		if len(only) > 0 {
			opts = append(opts, OnlyScenario(only[0]))
		}
		rep, err := Run(context.Background(), t.Name(), b.worker, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run(400 * time.Millisecond)
	if rep.BaselineSucceeded {
		t.Fatal("the baseline did not stall")
	}
	codes := resultCodes(rep.Baseline)
	if !slices.Equal(codes, []string{CodeStalled}) {
		t.Fatalf("baseline findings %v, want stalled only: %v", codes, rep.Baseline.Findings)
	}
	msg := rep.Baseline.Findings[0].Message
	for _, want := range []string{"waits in a select outside the agent's code, which may have a timer among their cases", "timedpoll_test.go:", "a StallTimeout longer than the client's poll, or a shorter poll, lets it end"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the stall message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "helps only if a goroutine outside the scenario") {
		t.Errorf("the stall message says a longer bound cannot help: %s", msg)
	}
	if rep := run(5*time.Second, ScenarioDuplicateSeq); !rep.Safe {
		t.Errorf("with the bound above the poll: safe %v, %v %v", rep.Safe, rep.Baseline.Findings, rep.Findings)
	}
}
