package shop

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var prices = map[string]int{"espresso": 350, "croissant": 280}

// shared is a server started once for the package, as many test suites do.
var shared *Service
var sharedURL string

func TestMain(m *testing.M) {
	shared = NewService(prices)
	srv := httptest.NewServer(shared)
	sharedURL = srv.URL
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// clients are the ways agents reach HTTP services: the default client, a
// keep-alive transport of their own, a server started per test.
func clients(t testing.TB) map[string]func(t testing.TB) (*Service, *Client) {
	return map[string]func(t testing.TB) (*Service, *Client){
		"default-client/package-server": func(t testing.TB) (*Service, *Client) {
			return shared, &Client{Base: sharedURL}
		},
		"keep-alive-transport/test-server": func(t testing.TB) (*Service, *Client) {
			svc := NewService(prices)
			srv := httptest.NewServer(svc)
			tr := &http.Transport{MaxIdleConnsPerHost: 4}
			t.Cleanup(func() { tr.CloseIdleConnections(); srv.Close() })
			return svc, &Client{Base: srv.URL, HTTP: &http.Client{Transport: tr}}
		},
		// Through runtime.Transport, the suite sees the requests each
		// tool sends, and loses the answer of placeOrder's POST in a
		// lost_response scenario (the tool's client does not retry:
		// the agent sees the error, as after a lost acknowledgement).
		"runtime-transport/test-server": func(t testing.TB) (*Service, *Client) {
			svc := NewService(prices)
			srv := httptest.NewServer(svc)
			tr := &http.Transport{MaxIdleConnsPerHost: 4}
			t.Cleanup(func() { tr.CloseIdleConnections(); srv.Close() })
			return svc, &Client{Base: srv.URL, HTTP: &http.Client{Transport: runtime.Transport(tr)}}
		},
	}
}

func options(svc *Service) []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(context.Context) error { svc.Reset(); return nil }),
		testkit.Invariant("one order per cart", func(*runtime.Trace) error {
			if n := len(svc.Orders()); n > 1 {
				return fmt.Errorf("%d orders placed for one cart", n)
			}
			return nil
		}),
		testkit.NoSummary(),
	}
}

func buy(a *Agent) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := a.Buy(ctx, "ada", "espresso", "croissant")
		return err
	}
}

func TestNaiveAgentIsCaught(t *testing.T) {
	for name, mk := range clients(t) {
		t.Run(name, func(t *testing.T) {
			svc, c := mk(t)
			rep := testkit.Run(t, buy(&Agent{Tools: c, Retries: 2}), options(svc)...)
			require.True(t, rep.BaselineSucceeded, "%+v", rep.Baseline)
			assert.False(t, rep.Safe)
			got := codesByScenario(rep)
			assert.Contains(t, got["lost_acknowledgement/placeOrder#1"], runtime.CodeDuplicateWrite)
			assert.Contains(t, got["crash_restart/placeOrder#1"], runtime.CodeDuplicateWrite)
			assert.Contains(t, got["duplicate_delivery/concurrent"], runtime.CodeDuplicateWrite)
			assert.Contains(t, got["duplicate_delivery/sequential"], runtime.CodeDuplicateWrite)
			if strings.HasPrefix(name, "runtime-transport/") {
				// The lost response reached the agent, which placed
				// the order again: the lost acknowledgement's duplicate.
				assert.Contains(t, got["lost_response/placeOrder#1"], runtime.CodeDuplicateWrite)
			} else {
				assert.NotContains(t, got, "lost_response/placeOrder#1")
			}
			assertRanEverything(t, rep)
			require.NoError(t, reportschema.Validate(rep))
		})
	}
}

func TestKeyedAgentPasses(t *testing.T) {
	for name, mk := range clients(t) {
		t.Run(name, func(t *testing.T) {
			svc, c := mk(t)
			rep := testkit.TestAgent(t, buy(&Agent{Tools: c, Retries: 2, Keyed: true}), options(svc)...)
			assert.True(t, rep.Safe)
			assertRanEverything(t, rep)
		})
	}
}

// assertRanEverything checks that every scenario and schedule ran to a
// verdict on real time: the two quotes were explored as a parallel round,
// nothing stalled.
func assertRanEverything(t *testing.T, rep *runtime.Report) {
	t.Helper()
	interleavings := 0
	for _, r := range rep.Results {
		assert.Equal(t, runtime.ClockReal, r.Clock, r.Scenario)
		for _, f := range r.Findings {
			assert.NotEqual(t, runtime.CodeStalled, f.Code, "%s: %s", r.Scenario, f.Message)
			assert.NotEqual(t, runtime.CodeFaultNotTriggered, f.Code, "%s: %s", r.Scenario, f.Message)
		}
		if r.Kind == runtime.ScenarioInterleaving {
			interleavings++
		}
	}
	assert.GreaterOrEqual(t, interleavings, 1, "the parallel quotes were scheduled (quotes of different SKUs commute: one schedule)")
}

func codesByScenario(rep *runtime.Report) map[string][]string {
	out := map[string][]string{}
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			out[r.Scenario] = append(out[r.Scenario], f.Code)
		}
	}
	return out
}

// findingSet is what a user reads of one run: each finding's code,
// scenario and ops, in a stable order.
func findingSet(rep *runtime.Report) string {
	var keys []string
	for _, f := range rep.Findings {
		keys = append(keys, f.Code+" "+f.Scenario+" "+strings.Join(f.Ops, ","))
	}
	sort.Strings(keys)
	return strings.Join(keys, "\n")
}

// TestVerdictIsTheSameEveryRun runs the naive agent's whole suite many
// times and counts the distinct finding sets: one, or the verdict depends
// on luck. AGENTIDEM_RUNS sets the count (scripts/bench/determinism.sh
// prints it for 100).
func TestVerdictIsTheSameEveryRun(t *testing.T) {
	runs := 5
	if v := os.Getenv("AGENTIDEM_RUNS"); v != "" {
		fmt.Sscan(v, &runs)
	}
	svc, c := shared, &Client{Base: sharedURL}
	sets := map[string]int{}
	for i := 0; i < runs; i++ {
		rep := testkit.Run(quiet{t}, buy(&Agent{Tools: c, Retries: 2}), options(svc)...)
		sets[findingSet(rep)]++
	}
	t.Logf("shop naive agent: %d runs, %d distinct finding sets", runs, len(sets))
	assert.Len(t, sets, 1, "%v", sets)
}

// quiet is a TB without subtests or logs, for repeated suites.
type quiet struct{ t *testing.T }

func (q quiet) Helper()               {}
func (q quiet) Name() string          { return q.t.Name() }
func (q quiet) Errorf(string, ...any) {}
func (q quiet) Logf(string, ...any)   {}

// VirtualTime asks for a synctest bubble; the baseline shows network I/O,
// which a bubble cannot host, so the suite stays on real time and says so.
func TestVirtualTimeIsRefusedForNetworkIO(t *testing.T) {
	svc, c := clients(t)["keep-alive-transport/test-server"](t)
	rep := testkit.TestAgent(t, buy(&Agent{Tools: c, Retries: 2, Keyed: true}), append(options(svc), testkit.VirtualTime())...)
	assert.True(t, rep.Safe)
	assertRanEverything(t, rep)
	require.NotNil(t, rep.Baseline.Trace)
	require.NotEmpty(t, rep.Baseline.Trace.Notes)
	assert.Contains(t, rep.Baseline.Trace.Notes[0], "virtual time was asked for but the scenarios run on real time")
	assert.Contains(t, rep.Baseline.Trace.Notes[0], "network I/O")
}
