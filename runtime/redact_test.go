package runtime_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const account = "4111222233334444"

type receipt struct {
	Account string
	Digits  int64
	Note    string
}

var opPay = &runtime.Op{Name: "pay", Kind: runtime.KindWrite, Params: []string{"acct", "cents"}, RedactIdentity: true}

// pay echoes the account in its result and in its error, as real APIs do.
func pay(ctx context.Context, acct string, cents int) (receipt, error) {
	if cents > 100 {
		return receipt{}, fmt.Errorf("account %s declined for %d cents", acct, cents)
	}
	return receipt{Account: acct, Digits: 4111222233334444, Note: "paid from " + acct}, nil
}

// payTraced has the shape agentidem-gen emits for
// //agentidem:write identity=acct redact=acct.
func payTraced(ctx context.Context, acct string, cents int) (aiR0 receipt, aiErr error) {
	if !runtime.Enabled() {
		return pay(ctx, acct, cents)
	}
	aiCall, aiCtx := runtime.Begin(ctx, opPay, []any{runtime.Redacted, cents}, []any{acct}, nil)
	aiCall.Redact(acct)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	aiV0, aiErr := pay(aiCtx, acct, cents)
	if aiLost := aiCall.Finish(aiErr, aiV0); aiLost != nil {
		return aiR0, aiLost
	}
	return aiV0, aiErr
}

// TestRedactedValueNeverReachesTheReport: a redacted account number that
// the tool echoes in its result and error, and the agent in its own error
// and panic, shows up nowhere in the JSON report, its text or its HTML
// (issue 12.8: it appeared 8 times).
func TestRedactedValueNeverReachesTheReport(t *testing.T) {
	rep, err := runtime.Run(context.Background(), "pay", func(ctx context.Context) error {
		r, err := payTraced(ctx, account, 50)
		if err != nil {
			return fmt.Errorf("paying with %s: %w", account, err)
		}
		if _, err := payTraced(ctx, account, 500); err != nil {
			return fmt.Errorf("second payment from %s failed: %w (receipt %v)", account, err, r)
		}
		return nil
	}, runtime.Invariant("no leak", func(*runtime.Trace) error {
		return errors.New("invariant sees account " + account)
	}))
	require.NoError(t, err)
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	var html bytes.Buffer
	require.NoError(t, render.HTML(&html, rep))
	outputs := map[string]string{"json": js.String(), "text": render.Text(rep), "html": html.String()}
	for name, out := range outputs {
		assert.Zero(t, strings.Count(out, account), "%s report holds the redacted account %d times", name, strings.Count(out, account))
		assert.Zero(t, strings.Count(out, "4111222233334444"[4:]), "%s report holds the account's digits", name)
	}
	assert.Contains(t, js.String(), `account [redacted] declined for 500 cents`, "the error text keeps its shape")
	assert.Contains(t, js.String(), `paid from [redacted]`)
}

// TestIdentityDigestIsKeyed: the identity of a redacted value is an
// HMAC-SHA256 under a per-process key: equal within the process, and not
// the SHA-256 of the canonical value that a report reader could search by
// hashing candidates (issue 12.9: a 4-digit PIN came back in under 10,000
// hashes).
func TestIdentityDigestIsKeyed(t *testing.T) {
	ids := make([]string, 2)
	for i := range ids {
		tr, err := runtime.RunTraced(context.Background(), "pin", func(ctx context.Context) error {
			_, err := payTraced(ctx, "1234", 10)
			return err
		})
		require.NoError(t, err)
		ids[i] = tr.Ops[0].Identity
	}
	assert.Equal(t, ids[0], ids[1], "equal values must get equal digests within the process")
	assert.True(t, strings.HasPrefix(ids[0], "hmac-sha256:"), ids[0])
	for pin := 0; pin < 10000; pin++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf(`"%04d"`, pin)))
		if strings.Contains(ids[0], hex.EncodeToString(sum[:])) {
			t.Fatalf("the digest of PIN 1234 is the unkeyed SHA-256 of %04d: recoverable by brute force", pin)
		}
	}
}

// TestNumberSecretIsBlankedInItsFloatForms: a redacted uint64 that the tool
// converts to a float64 and prints (fmt's %v, encoding/json) is blanked in
// those forms too, not only as its own digits (red team R1's kin for
// generated wrappers).
func TestNumberSecretIsBlankedInItsFloatForms(t *testing.T) {
	const acct uint64 = 12345678901234567891
	op := &runtime.Op{Name: "charge", Kind: runtime.KindWrite, Params: []string{"acct"}}
	rep, err := runtime.Run(context.Background(), "charge", func(ctx context.Context) error {
		c, _ := runtime.Begin(ctx, op, []any{runtime.Redacted}, []any{"o-1"}, nil)
		c.Redact(acct)
		if err := c.Start(); err != nil {
			return err
		}
		f := float64(acct)
		text, _ := json.Marshal(map[string]any{"account": f})
		return c.Finish(nil, fmt.Sprintf("charged %v (%s)", f, text))
	})
	require.NoError(t, err)
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	for _, form := range []string{"1.2345678901234567e+19", "12345678901234567000", "123456789012345"} {
		if strings.Contains(js.String(), form) {
			t.Errorf("the report holds the redacted account as %s", form)
		}
	}
	if !strings.Contains(js.String(), `charged [redacted] ({\"account\":[redacted]})`) {
		t.Errorf("the result lost its shape or was not recorded")
	}
}
