// Package tracecheck prints a runtime trace one line per call, for the
// end-to-end tests of the generator: each golden case's trace_test.go runs
// the generated wrappers under runtime.RunTraced and compares the lines.
package tracecheck

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// Line renders one recorded call: op, kind, args, identity, entity, status,
// observation, result and error.
func Line(op runtime.Operation) string {
	args, err := json.Marshal(op.Args)
	if err != nil {
		args = []byte(err.Error())
	}
	result, err := json.Marshal(op.Result)
	if err != nil {
		result = []byte(err.Error())
	}
	s := fmt.Sprintf("%s %s args=%s identity=%s entity=%s %s/%s result=%s", op.Name, op.Kind, args, op.Identity, op.Entity, op.Status, op.Observation, result)
	if op.Error != "" {
		s += " error=" + op.Error
	}
	return s
}

// Expect fails t unless the trace has exactly the want lines, in order, and
// logs the trace so that go test -v prints it.
func Expect(t *testing.T, tr *runtime.Trace, want ...string) {
	t.Helper()
	var got []string
	for _, op := range tr.Ops {
		got = append(got, Line(op))
		// The runtime takes the agent's call site from the stack, two
		// frames above Begin: the wrapper must call Begin itself.
		if !strings.Contains(op.Site, "_test.go:") {
			t.Errorf("%s: call site %q is not the agent's call in a _test.go file", op.ID, op.Site)
		}
	}
	t.Logf("trace %s:\n\t%s", tr.Name, strings.Join(got, "\n\t"))
	if len(got) != len(want) {
		t.Fatalf("trace has %d calls, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
