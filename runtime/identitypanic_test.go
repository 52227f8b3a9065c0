package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type order struct{ ID string }

var opShip = &Op{Name: "ship", Kind: KindWrite, Params: []string{"o"}}

func ship(ctx context.Context, o *order) error {
	if o == nil {
		return errors.New("ship: no order")
	}
	return nil
}

// shipTraced has the shape agentidem-gen emits for identity=o.ID.
func shipTraced(ctx context.Context, o *order) (aiErr error) {
	if !Enabled() {
		return ship(ctx, o)
	}
	aiID, aiIDPanic := EvalIdentity(func() []any { return []any{o.ID} })
	aiCall, aiCtx := Begin(ctx, opShip, []any{o}, aiID, nil)
	aiCall.IdentityPanicked("identity=o.ID", aiIDPanic)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	aiErr = ship(aiCtx, o)
	if aiLost := aiCall.Finish(aiErr); aiLost != nil {
		return aiLost
	}
	return
}

// TestIdentityPanicked: an identity expression that panics (o.ID with a
// nil o) does not change what the agent sees, the tool's own error, and the
// suite reports identity_panicked naming the expression; two such calls are
// not a duplicate, since their identity is unknown (issue 12.7).
func TestIdentityPanicked(t *testing.T) {
	rep, err := Run(context.Background(), "ship", func(ctx context.Context) error {
		_ = shipTraced(ctx, &order{ID: "o1"})
		err := shipTraced(ctx, nil)
		if !errors.Is(err, ErrInjected) && (err == nil || err.Error() != "ship: no order") {
			t.Errorf("ship(nil) = %v, want the tool's own error", err)
		}
		return nil
	})
	require.NoError(t, err)
	base := rep.Baseline
	require.NotNil(t, base)
	ops := base.Trace.Ops
	require.Len(t, ops, 2)
	assert.Equal(t, `"o1"`, ops[0].Identity)
	assert.Empty(t, ops[0].IdentityPanic)
	assert.Equal(t, "", ops[1].Identity)
	assert.Equal(t, "", ops[1].Entity)
	require.Len(t, ops[1].IdentityPanic, 1)
	assert.Regexp(t, `^identity=o\.ID panicked: runtime error: invalid memory address or nil pointer dereference$`, ops[1].IdentityPanic[0])
	var found []Finding
	for _, f := range base.Findings {
		if f.Code == CodeIdentityPanicked {
			found = append(found, f)
		}
	}
	require.Len(t, found, 1, "%+v", base.Findings)
	assert.Equal(t, SeverityError, found[0].Severity)
	assert.Contains(t, found[0].Message, "ship: identity=o.ID panicked: runtime error")
	assert.Contains(t, found[0].Message, "make the expression safe for every argument")
}

// TestEvalIdentityValues: the helper returns the values when nothing panics.
func TestEvalIdentityValues(t *testing.T) {
	vals, p := EvalIdentity(func() []any { return []any{1, "a"} })
	assert.Nil(t, p)
	assert.Equal(t, []any{1, "a"}, vals)
}
