package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var opReopen = &Op{Name: "reopen", Kind: KindWrite, Params: []string{"o"}, Idempotent: true}

// reopenTraced has the shape agentidem-gen emits for identity=o.ID on a
// tool that succeeds whatever it is given.
func reopenTraced(ctx context.Context, o *order) (aiErr error) {
	aiID, aiIDPanic := EvalIdentity(func() []any { return []any{o.ID} })
	aiCall, _ := Begin(ctx, opReopen, []any{o}, aiID, nil)
	aiCall.IdentityPanicked("identity=o.ID", aiIDPanic)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	if aiLost := aiCall.Finish(nil); aiLost != nil {
		return aiLost
	}
	return
}

// After identity_panicked in the baseline (identity=o.ID with a nil o),
// the crash's restart and both redeliveries executed the write again with
// no identity to judge the repeat by, and read "ok, nothing to note" (red
// team rtV #17). They are inconclusive now, each with a note naming the
// op and the expression; the twin whose identity works (the order given)
// has every scenario judged.
func TestARepeatOfAWriteWithAnUnknownIdentityIsInconclusive(t *testing.T) {
	for _, o := range []*order{nil, {ID: "o-42"}} {
		rep, err := Run(context.Background(), "reopen", func(ctx context.Context) error {
			return reopenTraced(ctx, o)
		})
		require.NoError(t, err)
		inconclusive := map[string]string{}
		for _, res := range rep.Results {
			if res.Inconclusive {
				inconclusive[res.Scenario] = strings.Join(res.Trace.Notes, "\n")
			}
		}
		if o != nil {
			assert.Empty(t, inconclusive, "the identity works: every scenario is judged")
			continue
		}
		for _, sc := range []string{"crash_restart/reopen#1", ScenarioDuplicateSeq, ScenarioDuplicateConcurrent} {
			require.Contains(t, inconclusive, sc)
			assert.Contains(t, inconclusive[sc], "reopen was executed 2 times here with an unknown identity (identity=o.ID panicked: runtime error: invalid memory address or nil pointer dereference), 1 in the baseline")
		}
		assert.Len(t, inconclusive, 3, "a scenario that did not repeat the write is judged as before: %v", inconclusive)
	}
}
