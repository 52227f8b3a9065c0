package testkit_test

import (
	"context"
	"fmt"
	"os"
	rtrace "runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// measureAgents are the three agents of the comparison with the AgentIdem
// Python SDK: a naive refund with retries, a keyed refund, ten distinct
// writes. Each returns the agent and the option that gives it a fresh
// world per scenario.
func measureAgents() []struct {
	name  string
	agent func() (func(context.Context) error, runtime.Option)
} {
	return []struct {
		name  string
		agent func() (func(context.Context) error, runtime.Option)
	}{
		{"naive refund", func() (func(context.Context) error, runtime.Option) {
			var bank *refund.Bank
			return func(ctx context.Context) error {
					_, err := (&refund.NaiveAgent{Bank: bank}).Run(ctx, "p1")
					return err
				}, runtime.Setup(func(context.Context) error {
					bank = refund.NewBank(100, "p1")
					return nil
				})
		}},
		{"keyed refund", func() (func(context.Context) error, runtime.Option) {
			var bank *refund.Bank
			return func(ctx context.Context) error {
					_, err := (&refund.KeyedAgent{Bank: bank}).Run(ctx, "p1")
					return err
				}, runtime.Setup(func(context.Context) error {
					bank = refund.NewBank(100, "p1")
					return nil
				})
		}},
		{"ten writes", func() (func(context.Context) error, runtime.Option) {
			var l *tools.Ledger
			return func(ctx context.Context) error {
					if _, err := l.CountTraced(ctx); err != nil {
						return err
					}
					for i := range 10 {
						if err := l.PostTraced(ctx, fmt.Sprintf("entry-%d", i), "x"); err != nil {
							return err
						}
					}
					return nil
				}, runtime.Setup(func(context.Context) error {
					l = &tools.Ledger{}
					return nil
				})
		}},
	}
}

// TestMeasureSuite measures the whole suite per agent for
// scripts/bench/suite.sh: testkit.Run under go test (the findings logged,
// the report file), the same without the file, TestAgent (which fails on
// the agents with findings: their scenarios' subtests, the summary) and
// runtime.Run alone, each suite timed by itself, AGENTIDEM_MEASURE_SUITES
// times (default 200). It lives in a test because subtests need a
// *testing.T; it asserts nothing about time, is skipped unless
// AGENTIDEM_MEASURE_SUITE=1, and fails when it runs (TestAgent's findings).
// Each line it prints starts with "measure:": the agent, the harness, the
// scenarios per suite, the median and the fastest suite in microseconds,
// and the median CPU time of the process per suite (suiteClock).
func TestMeasureSuite(t *testing.T) {
	n := measureCount(t, "AGENTIDEM_MEASURE_SUITE", "scripts/bench/suite.sh", 200)
	// The reports go to AGENTIDEM_MEASURE_REPORTS when it is set: a
	// directory the run before wrote to holds the files of the same suites,
	// as a user's second go test finds those of the first.
	dir := os.Getenv("AGENTIDEM_MEASURE_REPORTS")
	if dir == "" {
		dir = t.TempDir()
	}
	// newDir is empty each time the test runs: there, every report file
	// is made anew, as in a first go test or a clean checkout in CI.
	newDir := t.TempDir()
	for _, a := range measureAgents() {
		agent, setup := a.agent()
		var tk, tkNoFile, ta, taNew, rt suiteClock
		scenarios := 0
		// Each agent's subtests have names of their own, so that each
		// report file is its suite's alone: with the same names for the
		// three agents, the keyed refund's and the ten writes' reports were
		// <Test>_02.json and <Test>_03.json, and in the next go test the
		// naive refund's report, written over <Test>.json, read and removed
		// them as an earlier run's (removeStaleNumbered): its rows paid
		// for reading a 390 KB report, and the other two agents' rows
		// "written over" made their files anew each round.
		slug := strings.ReplaceAll(a.name, " ", "-")
		for i := range n {
			// testkit under go test: its own subtest per suite, as a
			// TestAgent function would be; with the report file
			// (AGENTIDEM_REPORT_DIR) and without.
			t.Run(fmt.Sprintf("%s-testkit-%d", slug, i), func(t *testing.T) {
				tk.time(func() {
					rep := testkit.Run(t, agent, testkit.With(setup), testkit.ReportDir(dir))
					scenarios = rep.FaultCount + 1
				})
			})
			t.Run(fmt.Sprintf("%s-testkit-nofile-%d", slug, i), func(t *testing.T) {
				tkNoFile.time(func() { testkit.Run(t, agent, testkit.With(setup)) })
			})
			// TestAgent fails the subtest when the agent has findings
			// (naive refund, ten writes): its failing scenarios get their
			// subtests and the summary is printed, as in a user's failing
			// test. TestMeasureSuite then fails too.
			t.Run(fmt.Sprintf("%s-testagent-%d", slug, i), func(t *testing.T) {
				ta.time(func() { testkit.TestAgent(t, agent, testkit.With(setup), testkit.ReportDir(dir)) })
			})
			t.Run(fmt.Sprintf("%s-testagent-new-%d", slug, i), func(t *testing.T) {
				taNew.time(func() { testkit.TestAgent(t, agent, testkit.With(setup), testkit.ReportDir(newDir)) })
			})
			var err error
			rt.time(func() { _, err = runtime.Run(context.Background(), "measure", agent, setup) })
			if err != nil && a.name == "ten writes" {
				t.Fatal(err)
			}
		}
		for _, m := range []struct {
			harness string
			c       suiteClock
		}{{"testkit", tk}, {"testkit, no report file", tkNoFile}, {"TestAgent", ta}, {"TestAgent, new report file", taNew}, {"runtime.Run", rt}} {
			wall, fastest := median(m.c.wall), slices.Min(m.c.wall)
			fmt.Printf("measure: %s|%s|%d|%.1f|%.1f|%.1f\n", a.name, m.harness, scenarios,
				float64(wall.Nanoseconds())/1e3, float64(fastest.Nanoseconds())/1e3, float64(median(m.c.cpu).Nanoseconds())/1e3)
		}
	}
}

// suiteClock times suites, each by itself: its wall time, and the CPU
// time of the whole process meanwhile (every thread: the suite's
// goroutines, the garbage collector's), which waiting for a CPU on a
// loaded machine does not inflate.
type suiteClock struct{ wall, cpu []time.Duration }

func (c *suiteClock) time(suite func()) {
	wall, cpu := time.Now(), processCPU()
	suite()
	c.wall = append(c.wall, time.Since(wall))
	c.cpu = append(c.cpu, processCPU()-cpu)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestMeasureWakeups runs the ten-write agent's suite under runtime.Run
// AGENTIDEM_MEASURE_SUITES times (default 300) for scripts/bench/wakeups.sh,
// and prints each suite's wall time ("wakeups: suite-us N"). Each suite is
// marked in the execution trace (go test -trace) by a log of category
// agentidem-suite, "start" and "end", so that the script can count what
// the Go scheduler did meanwhile. It asserts nothing about time and is
// skipped unless AGENTIDEM_MEASURE_WAKEUPS=1.
func TestMeasureWakeups(t *testing.T) {
	n := measureCount(t, "AGENTIDEM_MEASURE_WAKEUPS", "scripts/bench/wakeups.sh", 300)
	agent, setup := measureAgents()[2].agent()
	ctx := context.Background()
	for range n {
		rtrace.Log(ctx, "agentidem-suite", "start")
		start := time.Now()
		_, err := runtime.Run(ctx, "measure", agent, setup)
		took := time.Since(start)
		rtrace.Log(ctx, "agentidem-suite", "end")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("wakeups: suite-us %.1f\n", float64(took.Nanoseconds())/1e3)
	}
}

// measureCount skips t unless the environment variable on is set (script
// sets it), and returns how many suites to measure: AGENTIDEM_MEASURE_SUITES,
// or def.
func measureCount(t *testing.T, on, script string, def int) int {
	t.Helper()
	if os.Getenv(on) == "" {
		t.Skipf("set %s=1 (%s does) to measure", on, script)
	}
	n := def
	if v := os.Getenv("AGENTIDEM_MEASURE_SUITES"); v != "" {
		fmt.Sscan(v, &n)
	}
	return n
}
