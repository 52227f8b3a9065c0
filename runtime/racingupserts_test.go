package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// customerSvc is a CRM behind an httptest server: PUT /customers/{email}
// sets the customer's name, answering at once (an upsert: the last to land
// wins). Setup starts it, so its goroutines are there when the agent runs;
// no worker carries anything out after a call.
type customerSvc struct {
	mu    sync.Mutex
	names map[string]string
	srv   *httptest.Server
}

func newCustomerSvc() *customerSvc {
	c := &customerSvc{names: map[string]string{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.names[strings.TrimPrefix(r.URL.Path, "/customers/")] = string(body)
		c.mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	return c
}

func (c *customerSvc) snapshot() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]any{}
	for k, v := range c.names {
		m[k] = v
	}
	return map[string]any{"customers": m}
}

// runUpserts runs an agent that upserts ops@acme.test twice with two
// names, declared idempotent with the email as identity: in one model
// turn, in parallel (oneTurn), or in two turns.
func runUpserts(t *testing.T, oneTurn bool) *Report {
	t.Helper()
	var c *customerSvc
	upsert := &Op{Name: "upsert_customer", Kind: KindWrite, Params: []string{"email", "name"}, Idempotent: true}
	call := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			return traced(ctx, upsert, []any{"ops@acme.test", name}, []any{"ops@acme.test"}, func(ctx context.Context) error {
				req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.srv.URL+"/customers/ops@acme.test", strings.NewReader(name))
				if err != nil {
					return err
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.Copy(io.Discard, resp.Body)
				return err
			})
		}
	}
	calls := []func(context.Context) error{call("Acme Ops"), call("Acme Operations")}
	agent := parallelTurn(calls, false)
	if !oneTurn {
		agent = func(ctx context.Context) error {
			for _, c := range calls {
				if err := c(ctx); err != nil {
					return err
				}
			}
			return nil
		}
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			if c != nil {
				c.srv.Close()
			}
			c = newCustomerSvc()
			return nil
		}),
		State(func() any { return c.snapshot() }))
	if c != nil {
		c.srv.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Two upserts of one customer with different names in one turn race: the
// concurrent-writes finding says so. The other scenarios are judged: a
// second upsert with other arguments is no repeat of the first, and a
// schedule that ran it after the first (or a restart that ran it again)
// made an update, not "the rest of the first's effect, landed while the
// repeat ran: a worker that Setup started". There was no worker: Setup
// started only the service, which answers at once (red team rtS #3: four
// scenarios inconclusive with that note, the crash_restart one among
// them).
func TestRacingUpsertsWithOtherArgumentsAreNoUnjudgedRepeat(t *testing.T) {
	rep := runUpserts(t, true)
	if !rep.Has(CodeConcurrentWritesEntity) {
		t.Errorf("no %s finding: %v", CodeConcurrentWritesEntity, findings(rep, ""))
	}
	for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
		if r.Inconclusive {
			t.Errorf("%s inconclusive: %q", r.Scenario, r.Trace.Notes)
		}
		for _, n := range r.Trace.Notes {
			if strings.Contains(n, "worker") {
				t.Errorf("%s: note blames a worker: %s", r.Scenario, n)
			}
		}
	}
}

// The same two upserts in two turns: SAFE, every scenario judged.
func TestUpsertsInTwoTurnsAreSafe(t *testing.T) {
	rep := runUpserts(t, false)
	if !rep.Safe || rep.InconclusiveCount != 0 {
		t.Errorf("safe %v, %d inconclusive, findings %v: want safe", rep.Safe, rep.InconclusiveCount, findings(rep, ""))
	}
}
