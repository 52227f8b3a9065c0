package reportschema

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const minimal = `{"schema_version":"2","name":"x","safe":true,"fault_count":0,"unsafe_count":0,"baseline_succeeded":true,"baseline_failure":null,"baseline":null,"baseline_result":null,"results":[],"findings":[],"agent_runs":0,"seed":0,"started_at":"2026-01-01T00:00:00Z","duration_ns":0}`

func TestRejectsABrokenReport(t *testing.T) {
	assert.Error(t, ValidateJSON([]byte(`{"schema_version":"2"}`)), "missing fields must fail")
	assert.Error(t, ValidateJSON([]byte(strings.Replace(minimal, `"2"`, `"3"`, 1))), "another version must fail")
	assert.Error(t, ValidateJSON([]byte(strings.Replace(minimal, `"baseline_failure":null,`, ``, 1))), "baseline_failure is null, not absent")
	assert.NoError(t, ValidateJSON([]byte(minimal)))
}

// TestRealReport validates the report of a real suite, and the same report
// with one AgentIdem field in its version 1 shape.
func TestRealReport(t *testing.T) {
	var bank *refund.Bank
	rep, err := runtime.Run(context.Background(), "naive", func(ctx context.Context) error {
		_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "p")
		return err
	}, runtime.Setup(func(context.Context) error { bank = refund.NewBank(100, "p"); return nil }))
	require.NoError(t, err)
	require.NoError(t, Validate(rep))
	var buf bytes.Buffer
	require.NoError(t, rep.WriteJSON(&buf))
	for _, c := range [][2]string{
		{`"phase": "after_operation"`, `"phase": "after"`},
		{`"operation_index": null`, `"operation_index": -1`},
		{`"kwargs":{}`, `"kwargs":[]`}, // compact: in an operation, a finding or a duplicate
	} {
		broken := strings.Replace(buf.String(), c[0], c[1], 1)
		require.NotEqual(t, broken, buf.String(), c[0])
		assert.Error(t, ValidateJSON([]byte(broken)), c[1])
	}
}
