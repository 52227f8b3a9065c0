package options

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testdata/tracecheck"
)

func TestTrace(t *testing.T) {
	card := Card{Number: "4242424242424242", CVV: "123"}
	tr, err := runtime.RunTraced(context.Background(), "options", func(ctx context.Context) error {
		inv, err := createInvoiceTraced(ctx, "c1", 10)
		if err != nil {
			return err
		}
		if err := AttachInvoice(ctx, inv, "n"); err != nil {
			return err
		}
		if err := chargeTraced(ctx, "c1", card, 10); err != nil {
			return err
		}
		if _, err := tokenizeTraced(ctx, card, "0000"); err != nil {
			return err
		}
		if _, err = lookupTraced("c1"); err != nil {
			return err
		}
		if err := setStatusTraced(ctx, "o1", "shipped"); err != nil {
			return err
		}
		return upsertTraced(ctx, "t", "i", "k", []string{"r"}, map[string]any{"k": 5})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The digest is keyed per process (HMAC-SHA256): not the plain SHA-256
	// anyone could compute from a guess.
	digest := tr.Calls("tokenize")[0].Identity
	sum := sha256.Sum256([]byte(`"4242424242424242"`))
	if !strings.HasPrefix(digest, "hmac-sha256:") || strings.Contains(digest, hex.EncodeToString(sum[:])) {
		t.Errorf("tokenize's identity digest = %q; want a keyed hmac-sha256 digest", digest)
	}
	tracecheck.Expect(t, tr,
		`billing.createInvoice write args={"customer":"c1","amount":10} identity="c1" entity="c1" success/received result="inv-c1"`,
		`attachInvoice write args={"invoice":"inv-c1","note":"n"} identity="inv-c1" entity="inv-c1" success/received result=null`,
		`charge write args={"customer":"c1","card":"[redacted]","amount":10} identity=["c1",10] entity=["c1",10] success/received result=null`,
		`tokenize write args={"card":"[redacted]","pin":"[redacted]"} identity=`+digest+` entity=`+digest+` success/received result="tok"`,
		`lookup read args={"id":"c1"} identity= entity="c1" success/received result="c1"`,
		`setStatus write args={"order":"o1","status":"shipped"} identity="o1" entity="o1" success/received result=null`,
		`upsert write args={"tenant":"t","id":"i","kind":"k","rows":["r"],"meta":{"k":5}} identity=[{"Tenant":"t","Parts":["i","k"]},1,"r",5] entity="t/i" success/received result=null`,
	)
	for _, op := range tr.Ops {
		if op.Idempotent != (op.Name == "setStatus") {
			t.Errorf("%s: idempotent=%v; only setStatus is declared idempotent", op.Name, op.Idempotent)
		}
		// The digest is random hex per process: it may spell "123" or
		// "0000" by chance, so it is left out of the search.
		line := strings.ReplaceAll(tracecheck.Line(op), digest, "hmac")
		if strings.Contains(line, card.Number) || strings.Contains(line, card.CVV) || strings.Contains(line, "0000") {
			t.Errorf("a redacted value leaked into the trace: %s", line)
		}
	}
}
