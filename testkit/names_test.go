package testkit

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// TestReportFileNamesOfManySuitesOfOneTest: every suite of one test gets
// a file of its own, numbered in order, and a name another test took is
// skipped. Before, each name was found by trying every number from 2, so
// the suites of go test -count 1000 cost a quadratic number of tries.
func TestReportFileNamesOfManySuitesOfOneTest(t *testing.T) {
	dir := t.TempDir()
	if got := reportFileName(dir, "TestMany_04"); got != "TestMany_04.json" {
		t.Fatalf("first name %q", got)
	}
	want := []string{"TestMany.json", "TestMany_02.json", "TestMany_03.json", "TestMany_05.json", "TestMany_06.json"}
	for i, w := range want {
		if got := reportFileName(dir, "TestMany"); got != w {
			t.Fatalf("suite %d: %q, want %q", i+1, got, w)
		}
	}
	seen := map[string]bool{}
	for i := range 2000 {
		name := reportFileName(dir, "TestMany")
		if seen[name] {
			t.Fatalf("suite %d got %q twice", i, name)
		}
		seen[name] = true
	}
	if got, want := reportFileName(dir, "TestMany"), fmt.Sprintf("TestMany_%02d.json", 2007); got != want {
		t.Fatalf("after 2,005 suites: %q, want %q", got, want)
	}
	// Another directory numbers on its own.
	if got := reportFileName(t.TempDir(), "TestMany"); got != "TestMany.json" {
		t.Fatalf("in another directory: %q", got)
	}
}

// TestFileBaseAsTheRegexpDid: a report's file name is the test's name with
// each run of other bytes than [A-Za-z0-9._-] written as one '_', as
// regexp.ReplaceAllString did before fileBase, runes outside ASCII and
// bytes that are no UTF-8 included.
func TestFileBaseAsTheRegexpDid(t *testing.T) {
	re := regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	names := []string{"", "TestA", "TestA/b", "TestA/b c/d#01", "Test/ünïcode/名前", "a//b", "/lead", "trail/", "x\xffy\x80\x80z", "__..--", "Test A\tB\nC", "€"}
	names = append(names, randomStrings(rand.New(rand.NewPCG(1, 2)), "aZ09._-/ #\x00\x7f\xc3\xa9\xff", 12, 2000)...)
	for _, n := range names {
		if got, want := fileBase(n), re.ReplaceAllString(n, "_"); got != want {
			t.Fatalf("fileBase(%q) = %q, want %q", n, got, want)
		}
	}
}

// TestReplayLineAsSplit: a replay line quotes each element of the
// scenario's path as the line written from strings.Split did, empty
// elements and characters regexp treats as special included.
func TestReplayLineAsSplit(t *testing.T) {
	r := newReplayLines("example.com/m/agent", "TestAgent/table case#01")
	split := func(scenario string) string {
		var b strings.Builder
		b.WriteString(r.head)
		for i, p := range strings.Split(scenario, "/") {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString("^" + regexp.QuoteMeta(p) + "$")
		}
		return b.String() + r.tail
	}
	paths := []string{"", "baseline", "crash_restart/post#1", "interleaving/s0s1f0f1.s1f1", "a//b", "/a", "a/", "/", "x.y/(z)|[w]{2}*+?^$\\"}
	paths = append(paths, randomStrings(rand.New(rand.NewPCG(3, 4)), "ab/#.*$^\\(_", 10, 2000)...)
	for _, p := range paths {
		if got, want := r.line(p), split(p); got != want {
			t.Fatalf("line(%q) = %s, want %s", p, got, want)
		}
	}
}

// group gathers a plan's scenarios by their first path element, the groups
// in the order the plan names them first and each group's scenarios in plan
// order, whether the plan lists a group's scenarios together or not.
func TestGroupKeepsPlanOrder(t *testing.T) {
	var plan []runtime.Scenario
	for _, name := range []string{"a/x#1", "b/x#1", "a/x#2", "c", "b/x#2", "a/y#1", "c/z"} {
		plan = append(plan, runtime.Scenario{Name: name})
	}
	var got []string
	for _, g := range group(plan) {
		var names []string
		for _, sc := range g.scs {
			names = append(names, sc.Name)
		}
		got = append(got, g.name+": "+strings.Join(names, " "))
	}
	want := []string{"a: a/x#1 a/x#2 a/y#1", "b: b/x#1 b/x#2", "c: c c/z"}
	if !slices.Equal(got, want) {
		t.Errorf("group = %q, want %q", got, want)
	}
	if len(group(nil)) != 0 {
		t.Errorf("group(nil) has groups")
	}
}

// randomStrings returns n strings of fewer than maxLen bytes drawn from
// alphabet, the same ones for the same rng seed.
func randomStrings(rng *rand.Rand, alphabet string, maxLen, n int) []string {
	out := make([]string, n)
	for k := range out {
		b := make([]byte, rng.IntN(maxLen))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		out[k] = string(b)
	}
	return out
}
