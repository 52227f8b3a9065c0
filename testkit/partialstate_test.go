package testkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A State that leaves out what a write changes (here the charges of a
// payment service over HTTP, State showing nothing of them) sees no
// execution change the world: the naive agent's second charge still
// counts, and the finding names the likeliest cause first, that State
// leaves out what charge changes (red team rtV #22d: a State without the
// outbox, and a duplicate email whose message spoke of Settles and
// idempotent declarations only).
func TestUnseenDuplicateSaysStateMayLeaveItOut(t *testing.T) {
	w := &payWorld{}
	agent := func(ctx context.Context) error {
		var err error
		for range 3 {
			if _, err = w.client.ChargeTraced(ctx, "o-1", 500); err == nil {
				return nil
			}
		}
		return err
	}
	opts := append(w.options(false, false, false, false), testkit.State(func() any { return "the charges are not here" }))
	rep := testkit.Run(&fakeT{name: "TestCharge"}, agent, opts...)
	var msgs []string
	for _, f := range rep.Findings {
		if f.Code == runtime.CodeDuplicateWrite {
			msgs = append(msgs, f.Message)
		}
	}
	require.NotEmpty(t, msgs, "the naive agent's second charge counts: %v", rep.Findings)
	unseen := 0
	for _, m := range msgs {
		if strings.Contains(m, "State saw no execution change the world") {
			unseen++
			assert.Contains(t, m, "State saw no execution change the world: if State leaves out what charge changes (a table, an outbox, a service's record), add it, and see that the tool reaches the world State reads (a client made once, with sync.Once or in a package variable, keeps the world of the Setup that ran first);")
		}
	}
	assert.NotZero(t, unseen, "the findings say State saw no change: %q", msgs)
}
