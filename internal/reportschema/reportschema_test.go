package reportschema

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRejectsABrokenReport(t *testing.T) {
	assert.Error(t, ValidateJSON([]byte(`{"schema_version":"1"}`)), "missing fields must fail")
	assert.Error(t, ValidateJSON([]byte(`{"schema_version":"2","name":"x","safe":true,"fault_count":0,"unsafe_count":0,"baseline_succeeded":true,"baseline":null,"results":[],"findings":[],"agent_runs":0,"seed":0,"started_at":"2026-01-01T00:00:00Z","duration_ns":0}`)))
	assert.NoError(t, ValidateJSON([]byte(`{"schema_version":"1","name":"x","safe":true,"fault_count":0,"unsafe_count":0,"baseline_succeeded":true,"baseline":null,"results":[],"findings":[],"agent_runs":0,"seed":0,"started_at":"2026-01-01T00:00:00Z","duration_ns":0}`)))
}
