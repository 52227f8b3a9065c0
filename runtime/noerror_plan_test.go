package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A write with no error result (tag_ticket returns nothing): no failure
// or lost acknowledgement can be injected into it, and the suite knew,
// yet it planned its lost_acknowledgement, lost_request and
// before_operation_failure, each reported inconclusive with a
// fault_not_triggered warning, three per call (red team rtV #7): under
// FailInconclusive such a suite never passed. Only the crash is planned
// on it now, and one report note says why the rest are not. The write of
// the same agent that has an error result keeps its four.
func TestAWriteWithNoErrorResultIsPlannedOnlyWhatCanFire(t *testing.T) {
	tag := &Op{Name: "tag_ticket", Kind: KindWrite, Params: []string{"id"}, NoError: true, Idempotent: true}
	open := &Op{Name: "open_ticket", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	var mu sync.Mutex
	tags := map[string]bool{}
	agent := func(ctx context.Context) error {
		if err := traced(ctx, open, []any{"t1"}, []any{"t1"}, func(context.Context) error { return nil }); err != nil {
			return err
		}
		return traced(ctx, tag, []any{"t1"}, []any{"t1"}, func(context.Context) error {
			mu.Lock()
			tags["t1"] = true
			mu.Unlock()
			return nil
		})
	}
	rep, err := Run(context.Background(), "noerror", agent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, res := range rep.Results {
		names = append(names, res.Scenario)
		if res.Inconclusive {
			t.Errorf("%s is inconclusive: %v %v", res.Scenario, res.Findings, res.Trace.Notes)
		}
	}
	want := "lost_acknowledgement/open_ticket#1 lost_request/open_ticket#1 before_operation_failure/open_ticket#1 crash_restart/open_ticket#1 crash_restart/tag_ticket#1 duplicate_delivery/sequential duplicate_delivery/concurrent"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("scenarios:\n%s\nwant:\n%s", got, want)
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "lost_acknowledgement, lost_request and before_operation_failure were not planned on tag_ticket: it has no error result") || strings.Count(notes, "were not planned on") != 1 {
		t.Errorf("notes:\n%s", notes)
	}
}
