package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

func TestExpectedFromTheTestName(t *testing.T) {
	for name, want := range map[string]string{
		"TestNaiveAgentIsCaught":                                               "buggy",
		"TestDependencyBugIsCaught":                                            "buggy",
		"TestRereadAgentFixesRetriesButNotConcurrentDelivery":                  "buggy",
		"TestRetryingOnlyTheFailedCallFixesPartialBatchesButNotDuplicateLines": "buggy",
		"TestSilentAgentDropsWorkAndSaysItDidNot":                              "buggy",
		"TestKeyedAgentIsSafe":                                                 "fixed",
		"TestDependencyFixedPasses":                                            "fixed",
		"TestKeyedAgentPasses/default-client/package-server":                   "fixed",
		"TestAgentOpensExactlyOneTicket":                                       "fixed",
		"TestVerdictIsTheSameEveryRun":                                         "-",
	} {
		if got := expected(name); got != want {
			t.Errorf("expected(%s) = %s, want %s", name, got, want)
		}
	}
}

// store is a sink that writes once per call: refunding twice is a
// duplicate unless keyed.
type store struct {
	mu   sync.Mutex
	done map[string]int
}

var refundOp = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"id"}}

func (s *store) refund(ctx context.Context, id string, keyed bool) error {
	c, ctx := runtime.Begin(ctx, refundOp, []any{id}, []any{id}, nil)
	if err := c.Start(); err != nil {
		return err
	}
	s.mu.Lock()
	if keyed && s.done[id] > 0 {
		runtime.MarkReplayed(ctx)
	} else {
		s.done[id]++
	}
	s.mu.Unlock()
	return c.Finish(nil)
}

// save runs the real suite on an agent that retries a refund once, keyed
// or not, and saves its report as testkit does.
func save(t *testing.T, dir, example, test string, keyed bool) {
	t.Helper()
	var s *store
	rep, err := runtime.Run(context.Background(), test, func(ctx context.Context) error {
		if err := s.refund(ctx, "p-1", keyed); err != nil {
			return s.refund(ctx, "p-1", keyed)
		}
		return nil
	}, runtime.Setup(func(context.Context) error { s = &store{done: map[string]int{}}; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, example, test+".json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestTableOfRealReports(t *testing.T) {
	dir := t.TempDir()
	save(t, dir, "refund", "TestNaiveAgentIsCaught", false)
	save(t, dir, "refund", "TestKeyedAgentIsSafe", true)
	save(t, dir, "tickets", "TestOtherAgentIsCaught", false)
	if err := os.WriteFile(filepath.Join(dir, "refund", "TestKeyedAgentIsSafe.html"), []byte("<!doctype html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if bad := write(&out, rows); bad != 0 {
		t.Errorf("%d rows not as expected:\n%s", bad, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 { // header, 3 rows, blank, closing line
		t.Fatalf("table has %d lines:\n%s", len(lines), out.String())
	}
	for i, want := range [][]string{
		{"example", "agent", "expected", "verdict", "findings", "report"},
		{"refund", "TestKeyedAgentIsSafe", "fixed", "SAFE", " - ", "TestKeyedAgentIsSafe.html"},
		{"refund", "TestNaiveAgentIsCaught", "buggy", "UNSAFE", "duplicate_write", "TestNaiveAgentIsCaught.json"},
		{"tickets", "TestOtherAgentIsCaught", "buggy", "UNSAFE", "duplicate_write"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	if !strings.Contains(lines[5], "3 agents: 2 meant buggy, 1 meant fixed") || !strings.Contains(lines[5], "every buggy one is caught") {
		t.Errorf("closing line %q", lines[5])
	}
}

// A "fixed" agent reported UNSAFE, or a "buggy" one SAFE, is marked and
// counted: the demo must not hide a broken promise.
func TestBrokenPromiseIsMarked(t *testing.T) {
	dir := t.TempDir()
	save(t, dir, "refund", "TestNaiveAgentPasses", false)  // unsafe, named fixed
	save(t, dir, "refund", "TestKeyedAgentIsCaught", true) // safe, named buggy
	rows, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if bad := write(&out, rows); bad != 2 {
		t.Errorf("%d broken promises counted, want 2:\n%s", bad, out.String())
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "TestNaiveAgentPasses") || strings.Contains(l, "TestKeyedAgentIsCaught") {
			if !strings.HasPrefix(l, "!") {
				t.Errorf("row not marked: %q", l)
			}
		}
	}
	if !strings.Contains(out.String(), "2 not as their test name says") {
		t.Errorf("closing line does not say it:\n%s", out.String())
	}
}

func TestNoReportsIsAnError(t *testing.T) {
	if _, err := load(t.TempDir()); err == nil {
		t.Error("an empty directory loads without error")
	}
}

// The reports of one test that ran its suite again and again (a test that
// shows the verdict is the same every run) are one row that says how many
// runs it stands for; a run that ended otherwise keeps its own row (red
// team rtV, item 13: 29 of the demo's 65 rows were such repeats).
func TestRunsOfOneTestAreOneRow(t *testing.T) {
	dir := t.TempDir()
	save(t, dir, "refund", "TestVerdictIsTheSameEveryRun", false)
	src := filepath.Join(dir, "refund", "TestVerdictIsTheSameEveryRun.json")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"_02", "_03"} {
		if err := os.WriteFile(strings.Replace(src, ".json", n+".json", 1), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	save(t, dir, "refund", "TestVerdictIsTheSameEveryRunKeyed", true)
	// A fourth run of the first test that ended SAFE: a row of its own.
	other, err := os.ReadFile(filepath.Join(dir, "refund", "TestVerdictIsTheSameEveryRunKeyed.json"))
	if err != nil {
		t.Fatal(err)
	}
	other = bytes.ReplaceAll(other, []byte(`"TestVerdictIsTheSameEveryRunKeyed"`), []byte(`"TestVerdictIsTheSameEveryRun"`))
	if err := os.WriteFile(strings.Replace(src, ".json", "_04.json", 1), other, 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	write(&out, rows)
	text := out.String()
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3:\n%s", len(rows), text)
	}
	if !strings.Contains(text, "TestVerdictIsTheSameEveryRun (3 runs)") || !strings.Contains(text, "TestVerdictIsTheSameEveryRun.json (and 2 more)") {
		t.Errorf("the three alike runs are not one row that says so:\n%s", text)
	}
	if !strings.Contains(text, "3 agents:") {
		t.Errorf("closing line:\n%s", text)
	}
}
