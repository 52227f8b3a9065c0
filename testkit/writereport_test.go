package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// tenWriteReport is the report of the ten-write agent of the comparison
// with the Python SDK (measure_test.go): 43 scenarios, ~480 KB of JSON.
func tenWriteReport(tb testing.TB) *runtime.Report {
	var l *tools.Ledger
	rep, err := runtime.Run(context.Background(), "ten", func(ctx context.Context) error {
		for i := range 10 {
			if err := l.PostTraced(ctx, fmt.Sprintf("entry-%d", i), "x"); err != nil {
				return err
			}
		}
		return nil
	}, runtime.Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }))
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// A report written over a longer one from an earlier run is the new report
// and nothing after it; over a shorter one or one as long, all of it.
func TestWriteReportOverAnEarlierFile(t *testing.T) {
	rep := tenWriteReport(t)
	var want bytes.Buffer
	if err := rep.WriteJSON(&want); err != nil {
		t.Fatal(err)
	}
	for _, old := range []int{2 * want.Len(), want.Len() + 1, want.Len(), want.Len() - 1, want.Len() / 3, 0} {
		dir := t.TempDir()
		test := fmt.Sprintf("TestEarlier%d", old)
		path := filepath.Join(dir, test+".json")
		if err := os.WriteFile(path, bytes.Repeat([]byte("x"), old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := writeReport(dir, test, rep); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("over a file of %d bytes: wrote %d bytes, want the report's %d", old, len(got), want.Len())
		}
		if !json.Valid(got) {
			t.Errorf("over a file of %d bytes: the file is not JSON", old)
		}
	}
}

// The directories of a report that are not there yet are made, and a
// directory that cannot be made is the error, naming the path.
func TestWriteReportMakesItsDirectory(t *testing.T) {
	rep := tenWriteReport(t)
	dir := filepath.Join(t.TempDir(), "reports", "pkg")
	if err := writeReport(dir, "TestMade", rep); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "TestMade.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(got) || len(got) == 0 {
		t.Errorf("the report made with its directory is not JSON (%d bytes)", len(got))
	}
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = writeReport(filepath.Join(blocked, "pkg"), "TestBlocked", rep)
	if err == nil || !strings.Contains(err.Error(), blocked) {
		t.Errorf("writeReport under a file: error %v, want one naming %s", err, blocked)
	}
}

// A report that cannot be written leaves no earlier report behind to be
// read as this run's.
func TestWriteReportFailingLeavesNoEarlierReport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "TestFailing.json")
	if err := os.WriteFile(path, []byte(`{"safe": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &runtime.Report{Results: []*runtime.Result{{Scenario: "x", Trace: &runtime.Trace{
		Ops: []runtime.Operation{{Name: "op", Result: make(chan int)}}, // JSON cannot encode it
	}}}}
	if err := writeReport(dir, "TestFailing", rep); err == nil {
		t.Fatal("writeReport of a report JSON cannot encode returned no error")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("the earlier report is still there: %q", got)
	}
}

// BenchmarkRewriteReport writes the ten-write agent's report where a run
// before left one (the file of a test that is run again), in place as
// writeReport does, and truncated first, as os.Create would.
func BenchmarkRewriteReport(b *testing.B) {
	rep := tenWriteReport(b)
	b.Run("in-place", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			written.Lock()
			written.paths = nil // the same file each time
			written.Unlock()
			if err := writeReport(dir, "TestRewrite", rep); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("truncate-first", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "TestRewrite.json")
		for b.Loop() {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := rep.WriteJSON(f); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
