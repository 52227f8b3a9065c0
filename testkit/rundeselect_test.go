package testkit_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realworld"
)

// TestRunFilterChild is the unkeyed ticket agent: its redeliveries and
// crash open a second ticket (duplicate_write), its other scenarios pass.
// Run by TestScenariosRunLeavesOutAreNotRun with a -run that selects some.
func TestRunFilterChild(t *testing.T) {
	dir := os.Getenv("AGENTIDEM_RUNFILTER_DIR")
	if dir == "" {
		t.Skip("run by TestScenariosRunLeavesOutAreNotRun")
	}
	var srv *httptest.Server
	t.Cleanup(func() { srv.Close() })
	testkit.TestAgent(t, func(ctx context.Context) error {
		return realworld.RequestTicketTraced(ctx, srv.URL, "o-42")
	}, testkit.Setup(func(context.Context) error {
		if srv != nil {
			srv.Close()
		}
		srv = httptest.NewServer(&orderDesk{tickets: map[string]int{}})
		return nil
	}), testkit.ReportDir(dir))
}

// go test -run 'TestX/lost_request' (and every replay line, a -run
// pattern) runs some of the suite's scenarios: the suite read SAFE, its
// report file "safe": true with nothing about the scenarios never run,
// among them the ones that fail (red team rtV #2). The scenarios -run
// leaves out are now counted not run: the suite is INCONCLUSIVE, its
// notes say how many -run selected, and a -run that selects none says so
// and how scenarios are named. They fail nothing (a replay line that
// passes still passes), even under AGENTIDEM_FAIL_INCONCLUSIVE.
func TestScenariosRunLeavesOutAreNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, tc := range []struct {
		run, want string
		notRun    int
	}{
		{"^TestRunFilterChild$/^lost_request$", "-run selected 1 of the suite's 6 scenarios (beyond the baseline); the 5 others did not run", 5},
		{"^TestRunFilterChild$/refund", "-run selected none of the suite's 6 scenarios", 6},
	} {
		for _, args := range [][]string{nil, {"-test.v"}} {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=" + tc.run, "-test.count=1"}, args...)...)
			cmd.Env = append(os.Environ(), "AGENTIDEM_RUNFILTER_DIR="+dir, "AGENTIDEM_FAIL_INCONCLUSIVE=1")
			b, err := cmd.CombinedOutput()
			out := string(b)
			require.NoError(t, err, "%s %v: the scenarios -run selected pass:\n%s", tc.run, args, out)
			assert.NotContains(t, out, ": SAFE", "%s %v:\n%s", tc.run, args, out)
			if args != nil {
				assert.Contains(t, out, "agentidem TestRunFilterChild: INCONCLUSIVE", "%s %v:\n%s", tc.run, args, out)
				assert.Contains(t, out, tc.want, "%s %v:\n%s", tc.run, args, out)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "testkit", "TestRunFilterChild.json"))
			require.NoError(t, err)
			var rep struct {
				InconclusiveCount int      `json:"inconclusive_count"`
				Notes             []string `json:"notes"`
			}
			require.NoError(t, json.Unmarshal(raw, &rep))
			assert.Equal(t, tc.notRun, rep.InconclusiveCount, "%s %v", tc.run, args)
			assert.Contains(t, strings.Join(rep.Notes, "\n"), tc.want, "%s %v", tc.run, args)
			assert.Equal(t, tc.notRun, strings.Count(string(raw), "not run: -run (or -skip) did not select its subtest"), "%s %v", tc.run, args)
		}
	}
}
