package testkit_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// refundBank is the README's bank: it counts the refunds of each payment,
// so a refund retried after a lost answer is a second refund.
type refundBank struct {
	mu      sync.Mutex
	Refunds map[string]int
}

var refundOp = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"id"}}

func (b *refundBank) refund(ctx context.Context, id string) error {
	return tracedCall(ctx, refundOp, []any{id}, []any{id}, nil, func(context.Context) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.Refunds[id]++
		return nil
	})
}

func (b *refundBank) snapshot() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := map[string]int{}
	for k, v := range b.Refunds {
		m[k] = v
	}
	return m
}

// refundAgent is the README's agent: it refunds, and tries once more when
// the call fails. A lost acknowledgement refunds twice.
func refundAgent(b **refundBank) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := (*b).refund(ctx, "payment-123"); err != nil {
			return (*b).refund(ctx, "payment-123")
		}
		return nil
	}
}

// A State that fails in the baseline (it panics, or returns what JSON
// cannot encode) made every repeat "not judged", the suite INCONCLUSIVE,
// and `go test` print ok for the README's double-refund agent (red team
// rtO, /tmp/rtO/user/misuse TestStateFunc, TestStateChan,
// TestStatePanics). It is a configuration error now: the test fails
// before any verdict, with a message that names State, where its func
// is, and the value's type or the panic value and the line that panicked
// (one frame, not a stack). With a State that works, the same agent is
// UNSAFE.
func TestAStateThatFailsInTheBaselineFailsTheTest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state func(b **refundBank) func() any
		want  []string // in the test's error
	}{
		{"panics", func(**refundBank) func() any { return func() any { panic("boom in state") } },
			[]string{`testkit: State("brokenstate_test.go:`, "State panicked: boom in state (at brokenstate_test.go:", "failed in the baseline", "no scenario ran"}},
		{"nil map", func(**refundBank) func() any {
			return func() any { var m map[string]int; m["x"]++; return m }
		}, []string{"State panicked: assignment to entry in nil map (at brokenstate_test.go:"}},
		{"func", func(**refundBank) func() any { return func() any { return func() {} } },
			[]string{"State's value of type func() cannot be encoded: json: unsupported type: func()"}},
		{"chan", func(b **refundBank) func() any {
			return func() any { return map[string]any{"refunds": (*b).snapshot(), "c": make(chan int)} }
		}, []string{"State's value of type map[string]interface {} cannot be encoded: json: unsupported type: chan int"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b *refundBank
			ft := &fakeT{name: "TestRefund"}
			rep := testkit.TestAgent(ft, refundAgent(&b), testkit.NoSummary(),
				testkit.Setup(func(context.Context) error { b = &refundBank{Refunds: map[string]int{}}; return nil }),
				testkit.State(tc.state(&b)))
			if !ft.failed() {
				t.Fatalf("a State that fails in the baseline passed the test (safe %v, %d inconclusive)", rep.Safe, rep.InconclusiveCount)
			}
			joined := strings.Join(ft.errors, "\n")
			t.Log(joined)
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Errorf("the test's error does not say %q:\n%s", w, joined)
				}
			}
			for _, bad := range []string{"identity value", "Settle", "goroutine ", "\n\t"} {
				if strings.Contains(joined, bad) {
					t.Errorf("the test's error says %q:\n%s", bad, joined)
				}
			}
			if rep.Safe || len(rep.Results) != 0 {
				t.Errorf("safe %v, %d scenarios ran: want no verdict of safety and no scenario", rep.Safe, len(rep.Results))
			}
		})
	}
	t.Run("working State", func(t *testing.T) {
		var b *refundBank
		ft := &fakeT{name: "TestRefund"}
		rep := testkit.TestAgent(ft, refundAgent(&b), testkit.NoSummary(),
			testkit.Setup(func(context.Context) error { b = &refundBank{Refunds: map[string]int{}}; return nil }),
			testkit.State(func() any { return b.snapshot() }))
		if !ft.failed() || rep.Safe || !rep.Has(runtime.CodeDuplicateWrite) {
			t.Errorf("the double refund with a working State: failed %v, safe %v, duplicate_write %v; want UNSAFE",
				ft.failed(), rep.Safe, rep.Has(runtime.CodeDuplicateWrite))
		}
	})
}
