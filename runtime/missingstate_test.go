package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// A lock service (SET NX with an owner) and a report sink.
type nightly struct {
	mu    sync.Mutex
	locks map[string]string // name → owner
	sent  []string
}

func (n *nightly) snapshot() any {
	n.mu.Lock()
	defer n.mu.Unlock()
	return map[string]any{"locks": copyMap(n.locks), "sent": append([]string{}, n.sent...)}
}

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

var (
	acquireLockOp = &Op{Name: "acquire_lock", Kind: KindWrite, Params: []string{"name", "owner"}}
	lockOwnerOp   = &Op{Name: "lock_owner", Kind: KindRead, Params: []string{"name"}}
	sendReportOp  = &Op{Name: "send_report", Kind: KindWrite, Params: []string{"day"}}
)

// acquire takes the lock if it is free (SET NX), answering whether it did.
func (n *nightly) acquire(ctx context.Context, name, owner string) (got bool, err error) {
	err = traced(ctx, acquireLockOp, []any{name, owner}, []any{name}, func(context.Context) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		if _, taken := n.locks[name]; !taken {
			n.locks[name] = owner
			got = true
		}
		return nil
	})
	return got, err
}

func (n *nightly) owner(ctx context.Context, name string) (string, error) {
	c, _ := Begin(ctx, lockOwnerOp, []any{name}, nil, []any{name})
	if err := c.Start(); err != nil {
		return "", err
	}
	n.mu.Lock()
	v := n.locks[name]
	n.mu.Unlock()
	if err := c.Finish(nil, v); err != nil {
		return "", err
	}
	return v, nil
}

func (n *nightly) send(ctx context.Context, day string) error {
	return traced(ctx, sendReportOp, []any{day}, []any{day}, func(context.Context) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, d := range n.sent {
			if d == day {
				return nil // sent already: the sink skips it
			}
		}
		n.sent = append(n.sent, day)
		return nil
	})
}

// nightlyAgent takes the day's lock and sends the report if it got it,
// retrying each call once. checkOwner makes it look, when the lock is
// taken, whether it is its own (a retry after a lost answer): the fixed
// agent; without, it skips the report and returns nil (red team rtT #5).
func nightlyAgent(n *nightly, checkOwner bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		const owner = "worker-1"
		var got bool
		if err := retryOnce(ctx, func(ctx context.Context) (err error) {
			got, err = n.acquire(ctx, "nightly", owner)
			return err
		}); err != nil {
			return err
		}
		if !got && checkOwner {
			o, err := n.owner(ctx, "nightly")
			if err != nil {
				return err
			}
			got = o == owner
		}
		if !got {
			return nil // another worker has it
		}
		return retryOnce(ctx, func(ctx context.Context) error { return n.send(ctx, "2026-12-06") })
	}
}

func runNightly(t *testing.T, checkOwner bool, opts ...Option) *Report {
	t.Helper()
	var n *nightly
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return nightlyAgent(n, checkOwner)(ctx) },
		append([]Option{
			Setup(func(context.Context) error { n = &nightly{locks: map[string]string{}}; return nil }),
			State(func() any { return n.snapshot() }),
		}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// With State, an end that lacks the report the baseline sent, where the
// agent reported success, is a missing_write, without ExactlyOnce.
func TestLockRetrySkippingTheWorkIsAMissingWriteByState(t *testing.T) {
	rep := runNightly(t, false)
	got := findings(rep, "lost_acknowledgement/acquire_lock#1")
	if len(got) != 1 || got[0] != "missing_write send_report" {
		t.Fatalf("lost_acknowledgement/acquire_lock#1: %v, want missing_write send_report", got)
	}
	for _, f := range rep.Findings {
		if f.Code == CodeMissingWrite && !strings.Contains(f.Message, `sent: [] where one delivery leaves ["2026-12-06"]`) {
			t.Fatalf("the finding does not say what the end lacks: %s", f.Message)
		}
	}
	// ExactlyOnce keeps its own finding, once.
	eo := runNightly(t, false, ExactlyOnce())
	if got := findings(eo, "lost_acknowledgement/acquire_lock#1"); len(got) != 1 || got[0] != "missing_write send_report" {
		t.Fatalf("ExactlyOnce: %v", got)
	}
	// The fixed agent sees its own lock and sends the report.
	fixed := runNightly(t, true)
	if !fixed.Safe || fixed.InconclusiveCount != 0 {
		t.Fatalf("the agent that checks the lock's owner: %v", findings(fixed, ""))
	}
}

// Where a fault told the agent a write did not happen, giving up and
// returning nil may be what it is meant to do: a note, no finding.
func TestGivingUpAfterARefusedWriteIsANoteNotAMissingWrite(t *testing.T) {
	var n *nightly
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error {
		if err := n.send(ctx, "2026-12-06"); err != nil {
			if errors.Is(err, ErrInjected) {
				return nil // "the report service is down; try again tomorrow"
			}
			return err
		}
		return nil
	}, Setup(func(context.Context) error { n = &nightly{locks: map[string]string{}}; return nil }),
		State(func() any { return n.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(rep, "before_operation_failure/send_report#1"); len(got) != 0 {
		t.Fatalf("before_operation_failure: %v", got)
	}
}
