package runtime

import (
	"testing"
	"unsafe"
)

// The objects a scenario allocates once per call or once per run stay in
// the size classes their comments name: a field added past them costs the
// ten-write agent's suite kilobytes (BenchmarkSuite/writes=10), which
// -benchmem shows but no test would. Sizes, unlike allocation counts, are
// the same under -race.
func TestPerScenarioObjectsKeepTheirSizeClasses(t *testing.T) {
	for _, c := range []struct {
		what      string
		size, max uintptr
		why       string
	}{
		{"Operation", unsafe.Sizeof(Operation{}), 496, "a trace's []Operation: opMore holds what few calls record"},
		{"Call", unsafe.Sizeof(Call{}), 368, "33 Calls a block of maxCallBlock"},
		// 8 bytes of header before an object above 512 bytes that
		// holds pointers: the 576-byte class.
		{"recorder", unsafe.Sizeof(recorder{}) + 8, 576, "recRare holds what few runs record"},
		{"Trace", unsafe.Sizeof(Trace{}), 416, "traceRare holds what few traces hold"},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d bytes, more than %d (%s)", c.what, c.size, c.max, c.why)
		}
	}
}
