package gosdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// billingService is a billing API over HTTP: POST /invoices issues an
// invoice (one row per request unless it honours the Idempotency-Key),
// POST /attach needs the invoice to exist (404), GET /customers/C reads.
type billingService struct {
	keys     bool
	mu       sync.Mutex
	invoices []string
	attached map[string]string
	seen     map[string]bool
}

func (s *billingService) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := append([]string{}, s.invoices...)
	sort.Strings(inv)
	att := map[string]string{}
	for k, v := range s.attached {
		att[k] = v
	}
	return map[string]any{"invoices": inv, "attached": att}
}

func (s *billingService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in map[string]string
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/invoices":
		if k := r.Header.Get("Idempotency-Key"); s.keys && k != "" {
			if s.seen[k] {
				w.Header().Set("Idempotent-Replayed", "true")
				return
			}
			s.seen[k] = true
		}
		s.invoices = append(s.invoices, in["invoice_id"])
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPost && r.URL.Path == "/attach":
		if !strings.Contains(strings.Join(s.invoices, ","), in["invoice_id"]) {
			http.Error(w, "no such invoice", http.StatusNotFound)
			return
		}
		s.attached[in["order_id"]] = in["invoice_id"]
	case r.Method == http.MethodGet:
		io.WriteString(w, "{}")
	default:
		http.NotFound(w, r)
	}
}

// httpMCPWorld: an MCP server whose tools call the billing service with
// one keep-alive client made on the first call, and one client session
// that Setup connects and every delivery shares, as a long-lived agent
// process has.
type httpMCPWorld struct {
	keys     bool
	detached bool
	svc      *billingService
	srv      *httptest.Server
	once     sync.Once
	hc       *http.Client
	cs       *mcp.ClientSession
	stop     func()
}

func (w *httpMCPWorld) post(ctx context.Context, path string, body map[string]string, key string) error {
	if w.detached {
		ctx = context.WithoutCancel(ctx)
	}
	w.once.Do(func() { w.hc = &http.Client{Transport: &http.Transport{}, Timeout: 2 * time.Second} })
	b, _ := json.Marshal(body)
	method := http.MethodPost
	var rd io.Reader = bytes.NewReader(b)
	if body == nil {
		method, rd = http.MethodGet, nil
	}
	req, err := http.NewRequestWithContext(ctx, method, w.srv.URL+path, rd)
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s: %s %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		runtime.MarkReplayed(ctx)
	}
	return nil
}

type invIn struct {
	InvoiceID string `json:"invoice_id"`
	OrderID   string `json:"order_id,omitempty"`
}

type custIn struct {
	Customer string `json:"customer"`
}

var httpInvoiceTools = agentidemmcp.Tools{
	"create_invoice": agentidemmcp.Write(agentidemmcp.Identity("invoice_id")),
	"attach_invoice": agentidemmcp.Write(agentidemmcp.Identity("order_id"), agentidemmcp.Entity("invoice_id"),
		agentidemmcp.After("create_invoice"), agentidemmcp.Idempotent()),
	"lookup_customer": agentidemmcp.Read(agentidemmcp.Entity("customer")),
}

func (w *httpMCPWorld) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "1.0.0"}, nil)
	// A result of its own for each call: the server annotates it.
	ok := func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "create_invoice"}, func(ctx context.Context, _ *mcp.CallToolRequest, in invIn) (*mcp.CallToolResult, any, error) {
		key := ""
		if w.keys {
			key = "invoice:" + in.InvoiceID
		}
		return ok(), nil, w.post(ctx, "/invoices", map[string]string{"invoice_id": in.InvoiceID}, key)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "attach_invoice"}, func(ctx context.Context, _ *mcp.CallToolRequest, in invIn) (*mcp.CallToolResult, any, error) {
		return ok(), nil, w.post(ctx, "/attach", map[string]string{"invoice_id": in.InvoiceID, "order_id": in.OrderID}, "")
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup_customer"}, func(ctx context.Context, _ *mcp.CallToolRequest, in custIn) (*mcp.CallToolResult, any, error) {
		return ok(), nil, w.post(ctx, "/customers/"+in.Customer, nil, "")
	})
	srv.AddReceivingMiddleware(gosdk.Middleware(httpInvoiceTools))
	return srv
}

func (w *httpMCPWorld) options(state bool) []testkit.Option {
	mcpSrv := w.server()
	opts := []testkit.Option{
		testkit.NoSummary(),
		testkit.StallTimeout(3 * time.Second),
		testkit.Setup(func(ctx context.Context) error {
			w.svc = &billingService{keys: w.keys, attached: map[string]string{}, seen: map[string]bool{}}
			if w.srv == nil {
				w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { w.svc.ServeHTTP(rw, r) }))
			}
			if w.cs == nil {
				st, ct := mcp.NewInMemoryTransports()
				ss, err := mcpSrv.Connect(context.Background(), st, nil)
				if err != nil {
					return err
				}
				client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
				client.AddSendingMiddleware(gosdk.Propagate())
				cs, err := client.Connect(context.Background(), ct, nil)
				if err != nil {
					return err
				}
				w.cs, w.stop = cs, func() { cs.Close(); ss.Wait() }
			}
			return nil
		}),
	}
	if state {
		opts = append(opts, testkit.State(func() any { return w.svc.snapshot() }))
	}
	return opts
}

func (w *httpMCPWorld) call(ctx context.Context, tool string, args map[string]any) error {
	res, err := w.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s failed", tool)
	}
	return nil
}

// agent: oneTurn calls the three tools at once, from goroutines of its
// own; otherwise create and lookup, then attach. A failed call is made
// once more.
func (w *httpMCPWorld) agent(oneTurn bool) func(context.Context) error {
	retry := func(ctx context.Context, tool string, args map[string]any) error {
		if err := w.call(ctx, tool, args); err != nil {
			return w.call(ctx, tool, args)
		}
		return nil
	}
	create := func(ctx context.Context) error {
		return retry(ctx, "create_invoice", map[string]any{"invoice_id": "INV-1"})
	}
	attach := func(ctx context.Context) error {
		return retry(ctx, "attach_invoice", map[string]any{"invoice_id": "INV-1", "order_id": "ORD-9"})
	}
	lookup := func(ctx context.Context) error {
		return retry(ctx, "lookup_customer", map[string]any{"customer": "acme"})
	}
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Go(func() { errs[0] = create(ctx) })
		wg.Go(func() { errs[1] = lookup(ctx) })
		if oneTurn {
			wg.Go(func() { errs[2] = attach(ctx) })
			wg.Wait()
			return errors.Join(errs...)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return attach(ctx)
	}
}

func httpVerdict(rep *runtime.Report) string {
	var lines []string
	for _, r := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		for _, f := range r.Findings {
			lines = append(lines, r.Scenario+" "+f.Code)
		}
		if r.Inconclusive {
			lines = append(lines, r.Scenario+" inconclusive")
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Tools that call a billing service over HTTP (one keep-alive client made
// on the first call, a handler that may detach its request from the
// call's context), served by a go-sdk server over one client session that
// Setup connects and every delivery shares, as a long-lived agent process
// has. In order, the keyed service is safe (with State, or by its replay
// header alone) and the naive one caught, one verdict on every run. The
// one-turn agent (three calls at once) is caught, one verdict on every run
// too: the session's goroutines, older than the scenario, carry a call to
// the server and its answer back while the agent's goroutines only wait on
// channels, and the scheduler took the agent for quiet then, so the calls
// of the turn that had reached their gates played a round without the
// others; which calls were in flight together, whether attach_invoice ran
// before create_invoice's effect existed (and was retried), and so which
// of attach_invoice's planned faults fired (fault_not_triggered), were
// decided by real time: 3 verdicts over 100 suites. Propagate now counts
// the call as in transit until it reaches the server middleware, and the
// answer until the client has it (runtime.Sending). Its crash_restart of
// create_invoice used to end the server's handler goroutine of the
// attach_invoice call held at its gate (invocation.owns took it for the
// invocation's: its parent, go-sdk's short-lived handleAsync goroutine,
// had exited), the request never completed, and closing the session hung
// until the guard below; Resolve's context is runtime.Served now, and the
// crash refuses that call instead.
func TestHTTPToolsOverASharedSession(t *testing.T) {
	for _, c := range []struct {
		name                           string
		oneTurn, keys, detached, state bool
		want                           []string
		verdict                        string // the whole verdict, when given
	}{
		// In the listed order the turn starts attach_invoice before
		// create_invoice's invoice exists: attach_invoice#1 gets a 404
		// (the agent retries it), and neither its lost acknowledgement nor
		// a crash can follow a call that failed by itself. They are not
		// planned on it (the report's notes say so); before, both
		// scenarios proved nothing and were inconclusive on every run
		// (red team rtS #8). Every schedule in which attach_invoice (s0)
		// starts before create_invoice (s1) returned has the finding,
		// s0s2f0f2s1f1 too, which runs attach_invoice to its end first;
		// only s1s2f1f2s0f0 is in order (red team rtV #14: the finding
		// was kept at the first schedule only).
		// Two of those schedules saw a call reach its gate while the
		// round was played, and their eager twins (which start it at
		// once) have the finding too, one of them for both batches that
		// held attach_invoice beside create_invoice.
		{"one turn", true, true, false, true, []string{runtime.CodeDependentCallsConcurrent}, strings.Join([]string{
			"interleaving/eager.s0s2f0f2s1f1 dependent_calls_concurrent",
			"interleaving/eager.s0s2s1f2f0f1 dependent_calls_concurrent",
			"interleaving/eager.s0s2s1f2f0f1 dependent_calls_concurrent",
			"interleaving/s0s2f0f2s1f1 dependent_calls_concurrent",
			"interleaving/s0s2s1f2f0f1 dependent_calls_concurrent",
			"interleaving/s0s2s1f2f1f0 dependent_calls_concurrent",
			"interleaving/s1s2s0f2f0f1 dependent_calls_concurrent",
			"interleaving/s1s2s0f2f1f0 dependent_calls_concurrent",
		}, "\n")},
		{"in order keyed", false, true, false, true, nil, ""},
		{"in order keyed no state", false, true, false, false, nil, ""},
		{"in order keyed detached", false, true, true, true, nil, ""},
		{"in order naive", false, false, false, true, []string{runtime.CodeDuplicateWrite}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &httpMCPWorld{keys: c.keys, detached: c.detached}
			defer func() {
				if w.stop != nil {
					closed := make(chan struct{})
					go func() { w.stop(); close(closed) }()
					select {
					case <-closed:
					case <-time.After(5 * time.Second):
						t.Error("closing the shared MCP session hangs: a request of the server never completed")
					}
				}
				if w.srv != nil {
					w.srv.Close()
				}
			}()
			verdicts := map[string]int{}
			for range 3 {
				rep := testkit.Run(t, w.agent(c.oneTurn), w.options(c.state)...)
				v := httpVerdict(rep)
				verdicts[v]++
				if strings.Contains(v, runtime.CodeStalled) || strings.Contains(v, runtime.CodeBaselineFailed) {
					t.Errorf("stalled or baseline failed:\n%s", v)
				}
				if len(c.want) == 0 && (!rep.Safe || v != "") {
					t.Errorf("safe agent got:\n%s", v)
				}
				for _, code := range c.want {
					if !strings.Contains(v, code) {
						t.Errorf("want %s, got:\n%s", code, v)
					}
				}
				if c.verdict != "" && v != c.verdict {
					t.Errorf("verdict:\n%s\nwant:\n%s", v, c.verdict)
				}
			}
			if len(verdicts) != 1 {
				for v, n := range verdicts {
					t.Logf("%d runs:\n%s", n, v)
				}
				t.Errorf("%d verdicts", len(verdicts))
			}
		})
	}
}
