package testkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

// updating reports whether golden files are to be rewritten: the test
// binary's -update flag, when the test package defines one, or
// AGENTIDEM_UPDATE set to 1, true or yes (for go test ./... over packages
// that do not all define -update). Another value of AGENTIDEM_UPDATE fails
// the suite before it runs (readEnv).
//
// testkit defines no flag of its own: a library that claims the global name
// "update" at init makes every test package importing it panic at start-up
// ("flag redefined: update") when the package keeps golden files of its own
// with the usual var update = flag.Bool("update", ...). So testkit looks the
// flag up when Golden runs, after go test parsed the command line, and reads
// whatever the package defined.
func updating() bool {
	on, _ := envSwitch("AGENTIDEM_UPDATE", "")
	return on || updateFlag()
}

// updateFlag reports whether the test binary has an -update flag and it is
// set: a bool flag, or any flag whose value reads as true.
func updateFlag() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if b, ok := g.Get().(bool); ok {
			return b
		}
	}
	b, err := strconv.ParseBool(f.Value.String())
	return err == nil && b
}

// Golden compares the agent's fault-free behaviour with a golden trace kept
// in path (relative to the test's package, like every testdata file):
//
//	testkit.TestAgent(t, agent, testkit.Golden("testdata/refund.trace.json"))
//
// Run once with AGENTIDEM_UPDATE=1 (AGENTIDEM_UPDATE=1 go test -run
// TestRefund) to record it, or with -update when the test package defines
// that flag itself (var update = flag.Bool("update", ...): testkit reads it
// and defines no flag of its own); afterwards every run
// compares the calls of its baseline with it and the test fails with a diff
// when the agent's behaviour changed: another op, kind or identity, a call
// more or less, or another order within an invocation. Timings, results,
// arguments that are not identities and call ids are not compared.
//
// An agent with parallel calls is compared in the order of the listed
// schedule (each round of parallel calls in canonical order), which is the
// same on every run. A missing golden file fails the test (record it);
// under Run a difference is logged, not failed.
func Golden(path string) Option { return func(s *settings) { s.golden = path } }

// goldenCall is one call of a golden trace.
type goldenCall struct {
	Op       string `json:"op"`
	Kind     string `json:"kind"`
	Identity string `json:"identity,omitempty"`
}

func (c goldenCall) String() string {
	s := fmt.Sprintf("%-5s %s", c.Kind, c.Op)
	if c.Identity != "" {
		s += " " + c.Identity
	}
	return s
}

// goldenTrace is the file Golden writes: per invocation, its calls in order.
type goldenTrace struct {
	// Test is the test that recorded the file, for readers.
	Test string `json:"test"`
	// Ordered is false when no call order was reproducible (a scheduler
	// hazard): the calls of each invocation are then sorted.
	Ordered     bool           `json:"ordered"`
	Invocations [][]goldenCall `json:"invocations"`
}

// goldenOf extracts what Golden compares from a trace.
func goldenOf(test string, tr *runtime.Trace, ordered bool) goldenTrace {
	g := goldenTrace{Test: test, Ordered: ordered, Invocations: [][]goldenCall{}}
	for _, o := range tr.Ops {
		inv := max(o.Invocation, 1)
		for len(g.Invocations) < inv {
			g.Invocations = append(g.Invocations, []goldenCall{})
		}
		c := goldenCall{Op: o.Name, Kind: o.Kind.String()}
		if o.Kind == runtime.KindWrite {
			c.Identity = o.Identity
		}
		g.Invocations[inv-1] = append(g.Invocations[inv-1], c)
	}
	if !ordered {
		g.sort()
	}
	return g
}

func (g *goldenTrace) sort() {
	for _, calls := range g.Invocations {
		sort.SliceStable(calls, func(i, j int) bool { return calls[i].String() < calls[j].String() })
	}
}

// marshal writes the golden file: one call per line, so that a recorded
// change reads well in a code review.
func (g goldenTrace) marshal() []byte {
	var b bytes.Buffer
	test, _ := json.Marshal(g.Test)
	fmt.Fprintf(&b, "{\n  \"test\": %s,\n  \"ordered\": %t,\n  \"invocations\": [", test, g.Ordered)
	for i, calls := range g.Invocations {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    [")
		for j, c := range calls {
			if j > 0 {
				b.WriteByte(',')
			}
			line, _ := json.Marshal(c)
			b.WriteString("\n      ")
			b.Write(line)
		}
		if len(calls) > 0 {
			b.WriteString("\n    ")
		}
		b.WriteByte(']')
	}
	if len(g.Invocations) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	return b.Bytes()
}

// checkGolden records or compares the golden trace of suite s.
func checkGolden(t TB, s *runtime.Suite, path, pkg string, fail bool) {
	t.Helper()
	report := t.Logf
	if fail {
		report = t.Errorf
	}
	if !s.BaselineOK() {
		t.Logf("testkit: golden trace %s: not compared, the baseline failed", path)
		return
	}
	tr, ordered := s.CanonicalTrace()
	got := goldenOf(t.Name(), tr, ordered)
	if updating() {
		if err := writeFileAtomic(path, got.marshal()); err != nil {
			t.Errorf("testkit: writing golden trace: %v", err)
			return
		}
		t.Logf("testkit: recorded the golden trace %s (%d calls)", path, len(tr.Ops))
		return
	}
	rerun := updateLine(pkg, t.Name())
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		report("testkit: no golden trace %s yet: record it with\n    %s", path, rerun)
		return
	}
	if err != nil {
		t.Errorf("testkit: reading golden trace: %v", err)
		return
	}
	var want goldenTrace
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("testkit: golden trace %s is not one Golden wrote (%v): record it again with\n    %s", path, err, rerun)
		return
	}
	if !want.Ordered || !got.Ordered {
		want.sort()
		got.sort()
	}
	if diff := goldenDiff(want, got); diff != "" {
		report("testkit: the agent's fault-free calls differ from the golden trace %s (- recorded, + now):\n%s\nIf the change is intended, record it again with\n    %s", path, diff, rerun)
	}
}

// goldenDiff describes the differences, per invocation, as a line diff of
// the calls; "" when there is none.
func goldenDiff(want, got goldenTrace) string {
	var b strings.Builder
	for i := 0; i < max(len(want.Invocations), len(got.Invocations)); i++ {
		var w, g []string
		if i < len(want.Invocations) {
			w = callLines(want.Invocations[i])
		}
		if i < len(got.Invocations) {
			g = callLines(got.Invocations[i])
		}
		if strings.Join(w, "\n") == strings.Join(g, "\n") {
			continue
		}
		switch {
		case i >= len(want.Invocations):
			fmt.Fprintf(&b, "  invocation %d (new: the agent was not delivered this often when recorded):\n", i+1)
		case i >= len(got.Invocations):
			fmt.Fprintf(&b, "  invocation %d (gone):\n", i+1)
		default:
			fmt.Fprintf(&b, "  invocation %d:\n", i+1)
		}
		for _, l := range lineDiff(w, g) {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func callLines(calls []goldenCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.String()
	}
	return out
}

// lineDiff is a longest-common-subsequence diff: common lines with "  ",
// removed ones with "- ", added ones with "+ ". Traces are short, so the
// quadratic table is fine.
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}

// updateLine is the command that records the golden trace of one test:
// with -update when the test binary defines that flag, else with
// AGENTIDEM_UPDATE=1, which works in every package.
func updateLine(pkg, test string) string {
	return updateCommand(pkg, test, flag.Lookup("update") != nil)
}

// updateCommand is updateLine with the flag's presence given.
func updateCommand(pkg, test string, hasFlag bool) string {
	var parts []string
	for _, p := range strings.Split(test, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	if pkg == "" {
		pkg = "."
	}
	if !hasFlag {
		return fmt.Sprintf("AGENTIDEM_UPDATE=1 go test %s -run '%s'", pkg, strings.Join(parts, "/"))
	}
	return fmt.Sprintf("go test %s -run '%s' -update", pkg, strings.Join(parts, "/"))
}

// writeFileAtomic writes b to path through a temporary file in the same
// directory, creating the directory.
func writeFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
