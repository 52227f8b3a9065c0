package testkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realworld"
)

// orderDesk is a help desk behind an HTTP server: POST ?key=K opens a
// ticket for order K. keyed, it opens none when the order has one (the
// fixed sink); otherwise every request opens one.
type orderDesk struct {
	mu      sync.Mutex
	tickets map[string]int
	keyed   bool
}

func (d *orderDesk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	d.mu.Lock()
	if !d.keyed || d.tickets[key] == 0 {
		d.tickets[key]++
	}
	d.mu.Unlock()
}

func (d *orderDesk) count(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tickets[key]
}

// TestFatalInCallbackChild is a newcomer's suite whose State, Setup or
// Invariant closure captured the test's t and calls t.Fatalf (as
// require.X(t, ...) does): State and Invariant when the world holds two
// tickets for one order, which the unkeyed desk's redeliveries make,
// Setup on its third call. Run by TestFatalInACallbackStopsTheSuiteAndReports
// in a child process, since it fails.
func TestFatalInCallbackChild(t *testing.T) {
	which := os.Getenv("AGENTIDEM_CBEXIT_CHILD")
	if which == "" {
		t.Skip("run by TestFatalInACallbackStopsTheSuiteAndReports")
	}
	var desk *orderDesk
	var srv *httptest.Server
	t.Cleanup(func() {
		if srv != nil {
			srv.Close()
		}
	})
	setups := 0
	opts := []testkit.Option{
		testkit.Setup(func(context.Context) error {
			if setups++; which == "setup" && setups == 3 {
				t.Fatalf("could not seed the desk")
			}
			if srv != nil {
				srv.Close()
			}
			desk = &orderDesk{tickets: map[string]int{}, keyed: os.Getenv("AGENTIDEM_CBEXIT_KEYED") == "1"}
			srv = httptest.NewServer(desk)
			return nil
		}),
		testkit.ReportDir(os.Getenv("AGENTIDEM_CBEXIT_DIR")),
	}
	atMostOne := func() {
		if n := desk.count("o-42"); n > 1 {
			t.Fatalf("want at most 1 ticket for o-42, got %d", n)
		}
	}
	switch which {
	case "state":
		opts = append(opts, testkit.State(func() any { atMostOne(); return desk.count("o-42") }))
	case "invariant":
		opts = append(opts, testkit.State(func() any { return desk.count("o-42") }),
			testkit.Invariant("one ticket per order", func(*runtime.Trace) error { atMostOne(); return nil }))
	}
	testkit.TestAgent(t, func(ctx context.Context) error {
		return realworld.RequestTicketTraced(ctx, srv.URL, "o-42")
	}, opts...)
}

// A t.Fatal in a State, Setup or Invariant closure that captured the
// test's t ended the goroutine that ran it, which is not the test's: go
// test aborted the test ("subtest may have called FailNow on a parent
// test"), with no summary and an empty report directory (red team rtV
// #20). Now the suite stops there and the test fails saying which
// callback called t.FailNow, at which line, in which scenario, and what to
// write instead; the summary is printed, the report written, the
// scenarios not run counted inconclusive. The keyed twin, whose world
// never holds two tickets, passes with the same closures.
func TestFatalInACallbackStopsTheSuiteAndReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, which := range []string{"state", "setup", "invariant"} {
		for _, args := range [][]string{nil, {"-test.v"}} {
			name := fmt.Sprintf("%s%v", which, args)
			dir := t.TempDir()
			run := func(keyed string) string {
				cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFatalInCallbackChild$", "-test.count=1"}, args...)...)
				cmd.Env = append(os.Environ(), "AGENTIDEM_CBEXIT_CHILD="+which, "AGENTIDEM_CBEXIT_DIR="+dir, "AGENTIDEM_CBEXIT_KEYED="+keyed)
				b, _ := cmd.CombinedOutput()
				return string(b)
			}
			out := run("0")
			callback := map[string]string{"state": "State", "setup": "Setup", "invariant": `Invariant "one ticket per order"`}[which]
			assert.Contains(t, out, "--- FAIL: TestFatalInCallbackChild", "%s:\n%s", name, out)
			assert.Contains(t, out, "testkit: "+callback+" called t.FailNow at callbackexit_test.go:", "%s:\n%s", name, out)
			assert.Contains(t, out, "agentidem TestFatalInCallbackChild: ", "%s: no summary:\n%s", name, out)
			assert.NotContains(t, out, ": SAFE", "%s:\n%s", name, out)
			raw, err := os.ReadFile(filepath.Join(dir, "testkit", "TestFatalInCallbackChild.json"))
			require.NoError(t, err, "%s: no report file:\n%s", name, out)
			var rep struct {
				InconclusiveCount int      `json:"inconclusive_count"`
				Notes             []string `json:"notes"`
			}
			require.NoError(t, json.Unmarshal(raw, &rep), name)
			assert.NotZero(t, rep.InconclusiveCount, "%s: the scenarios not run", name)
			assert.Contains(t, strings.Join(rep.Notes, "\n"), callback+" called t.FailNow", name)
			if which == "setup" {
				continue // a Setup's t.Fatal does not depend on the agent
			}
			twin := run("1")
			assert.True(t, strings.HasSuffix(twin, "PASS\n") && !strings.Contains(twin, "FAIL"), "%s, keyed: the twin passes:\n%s", name, twin)
			assert.NotContains(t, twin, "t.FailNow", "%s, keyed:\n%s", name, twin)
		}
	}
}
