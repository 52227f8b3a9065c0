package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// absorbedReport is a scenario whose redelivery repeated a declared
// idempotent write (absorbed) and an appending one (a duplicate the state
// shows).
func absorbedReport() *runtime.Report {
	ops := []runtime.Operation{
		{ID: "1:set#1", Name: "set", Kind: runtime.KindWrite, Identity: `"o1"`, Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived, Invocation: 1, Occurrence: 1, Idempotent: true},
		{ID: "2:set#2", Name: "set", Kind: runtime.KindWrite, Identity: `"o1"`, Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived, Invocation: 2, Occurrence: 2, Seq: 1, Idempotent: true,
			Repeat: runtime.RepeatAbsorbed, JudgedBy: runtime.JudgedByDeclaration},
		{ID: "2:note#1", Name: "note", Kind: runtime.KindWrite, Identity: `"n"`, Status: runtime.StatusSuccess, Observation: runtime.ObservationReceived, Invocation: 2, Occurrence: 1, Seq: 2,
			StateChange: `notes: 1 → 2 entries, added "o9:called customer"`},
	}
	res := &runtime.Result{Scenario: runtime.ScenarioDuplicateSeq, Kind: runtime.ScenarioDuplicateSeq, OperationIndex: -1, Safe: true,
		Trace: &runtime.Trace{Ops: ops, Invocations: 2}}
	base := &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true, Trace: &runtime.Trace{Ops: ops[:1], Invocations: 1}}
	return &runtime.Report{SchemaVersion: runtime.SchemaVersion, Name: "TestEffects", Safe: true, BaselineSucceeded: true,
		Baseline: base, Results: []*runtime.Result{res}, FaultCount: 1}
}

func TestAbsorbedRepeatsAreShown(t *testing.T) {
	rep := absorbedReport()
	text := Text(rep)
	if !strings.Contains(text, "duplicate_delivery/sequential  3 calls, 1 repeat absorbed (declared idempotent)") {
		t.Errorf("text lacks the absorbed repeat:\n%s", text)
	}
	var b bytes.Buffer
	if err := HTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		"≡ absorbed: a repeat with no further effect (declared idempotent)",
		"Δ notes: 1 → 2 entries, added &#34;o9:called customer&#34;",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
