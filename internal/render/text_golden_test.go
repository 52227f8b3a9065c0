package render

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// updateText rewrites testdata/text/*.golden from the current Text:
//
//	go test ./internal/render -run TestTextGolden -args -update-text
//
// The goldens were written by Text as of 5510f03, before Text was
// rewritten without fmt for speed; the rewrite must print them byte for
// byte.
var updateText = flag.Bool("update-text", false, "write Text's output to testdata/text/*.golden")

// TestTextGolden renders a variety of reports with every combination of
// options and compares the text with the golden files.
func TestTextGolden(t *testing.T) {
	for _, c := range textCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var got strings.Builder
			for _, o := range []struct {
				name string
				opts []Option
			}{
				{"plain", nil},
				{"color", []Option{Color()}},
				{"fold", []Option{FoldPlainOK()}},
				{"color+fold", []Option{nil, Color(), FoldPlainOK()}},
			} {
				got.WriteString("=== " + o.name + "\n")
				got.WriteString(Text(c.rep, o.opts...))
				got.WriteString("\n")
			}
			path := filepath.Join("testdata", "text", c.name+".golden")
			if *updateText {
				writeFile(t, path, []byte(got.String()))
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("Text differs from %s at %s", path, firstDiff([]byte(got.String()), want))
			}
		})
	}
}

type textCase struct {
	name string
	rep  *runtime.Report
}

// textCases are the reports the package's tests render, stripped of what
// varies from run to run, and reports built to reach every branch of Text:
// schedules and their legends, notes, shards, a baseline failure,
// inconclusive results, control and bidirectional characters, findings
// from before problems.
func textCases(t *testing.T) []textCase {
	fixed := func(rep *runtime.Report) *runtime.Report {
		rep.Duration = 1234567 * time.Nanosecond
		return rep
	}
	brief := func(rep *runtime.Report) *runtime.Report {
		b := *rep
		b.Findings, b.Problems = nil, nil
		return &b
	}
	ungrouped := func(rep *runtime.Report) *runtime.Report {
		b := *rep
		b.Problems = nil
		return &b
	}
	naive := fixed(naiveReport(t))
	ten := fixed(tenWriteReport(t))
	cases := []textCase{
		{"naive", naive},
		{"naive-brief", brief(naive)},
		{"naive-ungrouped", ungrouped(naive)},
		{"naive-roundtrip", fixed(roundTrip(t, naive))},
		{"keyed", fixed(keyedReport(t))},
		{"tenwrite", ten},
		{"tenwrite-brief", brief(ten)},
		{"hostile", hostileReport()},
		{"big", bigReport(50, 3)},
		{"schedules", schedulesOnly()},
		{"absorbed", absorbedReport()},
		{"empty", &runtime.Report{Name: "T"}},
		{"baseline-only", &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true,
			Baseline: &runtime.Result{Scenario: "baseline", Safe: true, Trace: &runtime.Trace{}}}},
	}
	return append(cases, syntheticCases()...)
}

// syntheticCases reach the branches the recorded reports do not.
func syntheticCases() []textCase {
	fired := &runtime.Fault{Kind: runtime.FaultLostAck, Op: "post", Occurrence: 1}
	res := func(name string) *runtime.Result {
		return &runtime.Result{Scenario: name, Kind: strings.SplitN(name, "/", 2)[0], Safe: true, Fault: fired, FaultFired: true,
			Trace: &runtime.Trace{Ops: []runtime.Operation{{Name: "post"}}}, Replay: "go test -run '" + name + "'"}
	}
	legend := "s0 = post#1, s1 = post \u202eb\u202c#1"
	sched := func(s string) *runtime.Result {
		return &runtime.Result{Scenario: "interleaving/" + s, Kind: runtime.ScenarioInterleaving, OperationIndex: -1,
			Schedule: s, Legend: legend, Safe: true, Trace: &runtime.Trace{Ops: make([]runtime.Operation, 2)},
			Replay: "AGENTIDEM_SCHEDULE='" + s + "'"}
	}
	base := &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Safe: true,
		Trace: &runtime.Trace{Ops: []runtime.Operation{{Name: "post"}}, Notes: []string{"baseline note\nsecond line\n"}}}

	// Schedules with findings: one seen in two scenarios, one whose
	// message holds its legend, one whose message does not.
	s1, s2, s3 := sched("s0s1f0f1"), sched("s1s0f1f0"), sched("s1s0f0f1")
	seen := runtime.Finding{Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError, Scenario: s1.Scenario,
		Message: "post executed 2 times\nfor entry-1", Ops: []string{"post"}, Identities: []string{`"entry-1"`, `"entry-2"`},
		Calls: []string{"1:post#1", "1:post#2"}, Replay: s1.Replay,
		SeenIn: []runtime.Occurrence{{Scenario: s1.Scenario, Replay: s1.Replay}, {Scenario: "lost_request/post#1", Replay: "go test x"}, {Scenario: s2.Scenario, Replay: s2.Replay}}}
	holds := runtime.Finding{Code: runtime.CodeInvariantFailed, Severity: runtime.SeverityError, Scenario: s2.Scenario,
		Message: "invariant failed under schedule s1s0f1f0: " + legendLine(s2) + "", Replay: s2.Replay}
	lacks := runtime.Finding{Code: runtime.CodeInvariantFailed, Severity: runtime.SeverityWarning, Scenario: s3.Scenario,
		Message: "invariant \"x\" failed", Replay: s3.Replay, Calls: []string{"1:post#1"}}
	info := runtime.Finding{Code: "some_info_code_longer_than_22", Severity: runtime.SeverityInfo, Scenario: "lost_request/post#1",
		Message: "an info\r\n", Ops: []string{"post", "get"}}
	s1.Findings, s1.Safe = []runtime.Finding{seen}, false
	s2.Findings, s2.Safe = []runtime.Finding{holds}, false
	s3.Findings = []runtime.Finding{lacks}
	lr := res("lost_request/post#1")
	lr.Findings = []runtime.Finding{info}
	lr.Clock = runtime.ClockVirtual
	lr.Failed = true
	unfired := res("crash_restart/post#9")
	unfired.FaultFired, unfired.Inconclusive = false, true
	unfired.Trace.FaultNote = "the agent never called post a ninth time"
	unfiredBare := res("crash_restart/post#10")
	unfiredBare.FaultFired = false
	absorbed := res("duplicate_delivery/sequential")
	absorbed.Fault = nil
	absorbed.Kind = runtime.ScenarioDuplicateSeq
	absorbed.Trace.Ops = []runtime.Operation{{Name: "post"}, {Name: "post", Repeat: runtime.RepeatAbsorbed, JudgedBy: runtime.JudgedByState},
		{Name: "set", Repeat: runtime.RepeatAbsorbed, JudgedBy: runtime.JudgedByDeclaration}, {Name: "x", Repeat: runtime.RepeatAbsorbed, JudgedBy: runtime.JudgedByEndState},
		{Name: "y", Repeat: runtime.RepeatAbsorbed, JudgedBy: runtime.JudgedByState}, {Name: "z", Repeat: runtime.RepeatAbsorbed, JudgedBy: "oracle"}}
	noted := res("crash_restart/post#2")
	noted.Trace.Notes = []string{"note one", "esc \x1b[31m and \u2066isolate\u2069", ""}
	// Padding counts runes of the escaped name, the width bytes of the raw
	// names: a name with a multi-byte rune or a control character shows it.
	noTrace := &runtime.Result{Scenario: "other/café-\x1b-no-trace", Kind: "other", Safe: true}
	odd := runtime.Finding{Code: "ünïcode", Severity: "fatal_severity", Scenario: noTrace.Scenario, Message: "", Replay: "r\x1b"}
	noTrace.Findings = []runtime.Finding{odd}
	plain := []*runtime.Result{res("lost_acknowledgement/post#1"), res("lost_acknowledgement/post#2"), res("crash_restart/post#1"), res("lost_request/post#2")}
	plain[1].Failed = true
	all := append([]*runtime.Result{s1, s2, s3, lr, unfired, unfiredBare, absorbed, noted, noTrace, nil}, plain...)
	problems := []runtime.Finding{seen, holds, lacks, info, odd}
	mixed := &runtime.Report{Name: "TestMixed\x07", BaselineSucceeded: true, UnsafeCount: 2, InconclusiveCount: 1, AgentRuns: 31,
		Duration: 2*time.Second + 345*time.Millisecond, Baseline: base, Results: all, Problems: problems,
		Findings: []runtime.Finding{seen, holds, lacks, info, odd},
		Shard:    &runtime.Shard{Index: 2, Total: 3, Source: "AGENTIDEM_SHARD", Planned: 7, Ran: 3, Diverged: 1}}
	merged := *mixed
	merged.Shard = &runtime.Shard{Total: 3, Planned: 7, Ran: 7, Merged: []int{1, 2, 3}}
	merged.Problems = nil // grouped by Text, as for a report from before problems

	failedBase := &runtime.Result{Scenario: "baseline", Kind: "baseline", OperationIndex: -1, Failed: true, Error: "boom",
		Trace: &runtime.Trace{Ops: []runtime.Operation{{Name: "post"}}},
		Findings: []runtime.Finding{{Code: runtime.CodeBaselineFailed, Severity: runtime.SeverityError, Scenario: "baseline",
			Message: "the agent failed without a fault: boom\nat line 2\n\n", Replay: "go test -run '^T$/^baseline$'"}}}
	baselineFailed := &runtime.Report{Name: "T", BaselineFailure: "boom\r\nat line 2\n\n", Baseline: failedBase, Findings: failedBase.Findings,
		Duration: 900 * time.Nanosecond}
	baselineUnsafe := &runtime.Report{Name: "T", BaselineSucceeded: true, Duration: 450 * time.Microsecond,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", Trace: &runtime.Trace{},
			Findings: []runtime.Finding{{Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError, Scenario: "baseline", Message: "twice"}}}}
	inconclusive := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, InconclusiveCount: 2, Duration: 75 * time.Millisecond,
		Baseline: &runtime.Result{Scenario: "baseline", Kind: "baseline", Safe: true, Inconclusive: true, Trace: &runtime.Trace{}},
		Results:  []*runtime.Result{unfired, unfiredBare, res("lost_request/post#1")}}
	allFailed := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Baseline: base,
		Results: []*runtime.Result{plain[1], plain[1], res("x/y")}}
	allFailed.Results[2].Failed = true
	oneFailed := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Results: []*runtime.Result{plain[1]}}
	oneDelivery := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Results: []*runtime.Result{absorbed, sched("s0f0s1f1")}}
	oneFault := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Results: []*runtime.Result{res("lost_request/post#1")}}
	// More kinds folded than foldedLine counts without a map, some of
	// them escaped.
	var many []*runtime.Result
	for i := range 40 {
		r := res(fmt.Sprintf("kind%02d\x1b/post#%d", i%17, i))
		r.Failed = i%3 == 0
		many = append(many, r)
	}
	manyKinds := &runtime.Report{Name: "T", Safe: true, BaselineSucceeded: true, Baseline: base, Results: many}
	return []textCase{
		{"many-kinds", manyKinds},
		{"mixed", mixed},
		{"merged", &merged},
		{"baseline-failed", baselineFailed},
		{"baseline-unsafe", baselineUnsafe},
		{"inconclusive", inconclusive},
		{"all-failed", allFailed},
		{"one-failed", oneFailed},
		{"one-delivery", oneDelivery},
		{"one-fault", oneFault},
	}
}

// TestHasControlAndBidi checks the byte scans against the rune tests
// they stand for, on every rune up to U+2FFF alone and between other
// bytes, and on random bytes (invalid UTF-8, cut sequences), short and up
// to 96 bytes long.
func TestHasControlAndBidi(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := hasControl(s), strings.ContainsFunc(s, isControl); got != want {
			t.Fatalf("hasControl(%q) = %v, want %v", s, got, want)
		}
		if got, want := hasControl([]byte(s)), strings.ContainsFunc(s, isControl); got != want {
			t.Fatalf("hasControl([]byte(%q)) = %v, want %v", s, got, want)
		}
		if got, want := hasBidi(s), strings.ContainsFunc(s, isBidi); got != want {
			t.Fatalf("hasBidi(%q) = %v, want %v", s, got, want)
		}
	}
	for r := rune(0); r < 0x3000; r++ {
		e := string(r)
		check(e)
		check("a" + e + "b")
		check(e[:len(e)-1])
		check("\xe2" + e)
		check("\xc2" + e)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'a', '\t', 0x1b, 0x7f, 0x80, 0x81, 0x8e, 0x9c, 0x9f, 0xa0, 0xa6, 0xaa, 0xc2, 0xd8, 0xe2, 0xff}
	buf := make([]byte, 8)
	for range 200000 {
		n := rng.IntN(len(buf) + 1)
		for i := range n {
			buf[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(buf[:n]))
	}
	// Longer strings, mostly plain, as a summary is: hasBidi looks for
	// the lead bytes many at a time.
	long := make([]byte, 96)
	for range 20000 {
		n := rng.IntN(len(long) + 1)
		for i := range n {
			long[i] = 'a'
			if rng.IntN(8) == 0 {
				long[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		check(string(long[:n]))
	}
}
