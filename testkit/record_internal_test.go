package testkit

import (
	"runtime/metrics"
	"testing"
)

// A failing group's report is written again under go test's subtests
// after the suite ran: record counts the subtests it will make, which
// flush tells the runtime's census of goroutines, one goroutine each and
// one for the group (runtime.HarnessGoroutines). A count off by one makes
// the next suite's baseline dump the stacks of the process again.
func TestFlushStartsTheGoroutinesRecordCounted(t *testing.T) {
	d := record("group", func(gt TB) {
		for _, name := range []string{"a#1", "a#2", "a#3"} {
			runSubtest(gt, name, func(st TB) { st.Logf("printed") })
		}
	})
	if d.failed || d.subtests != 3 {
		t.Fatalf("record saw failed=%v and %d subtests, want false and 3", d.failed, d.subtests)
	}
	d.failed = true // flushed as a failing group is, without failing this test
	created := func() uint64 {
		s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := created()
	d.flush(t)
	after := created()
	if got := after - before; got != uint64(1+d.subtests) {
		t.Fatalf("flushing the group started %d goroutines, want %d (the group and its subtests)", got, 1+d.subtests)
	}
}
