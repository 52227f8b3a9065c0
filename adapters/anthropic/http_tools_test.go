package agentidemanthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// billingAPI is a billing service over HTTP: POST /invoices issues an
// invoice (a row per request, unless it honours the Idempotency-Key),
// POST /attach attaches an order to an invoice that exists (404
// otherwise), GET /customers/C reads a customer.
type billingAPI struct {
	keys bool

	mu       sync.Mutex
	invoices []string // "INV-1:acme", one per issue
	attached map[string]string
	seen     map[string]bool
}

func newBillingAPI(keys bool) *billingAPI {
	return &billingAPI{keys: keys, attached: map[string]string{}, seen: map[string]bool{}}
}

func (s *billingAPI) snapshot() any {
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

func (s *billingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
				w.WriteHeader(http.StatusOK)
				return
			}
			s.seen[k] = true
		}
		s.invoices = append(s.invoices, in["invoice_id"]+":"+in["customer"])
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPost && r.URL.Path == "/attach":
		found := false
		for _, i := range s.invoices {
			found = found || strings.HasPrefix(i, in["invoice_id"]+":")
		}
		if !found {
			http.Error(w, "no such invoice "+in["invoice_id"], http.StatusNotFound)
			return
		}
		s.attached[in["order_id"]] = in["invoice_id"]
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/customers/"):
		io.WriteString(w, `{"name":"`+strings.TrimPrefix(r.URL.Path, "/customers/")+`"}`)
	default:
		http.NotFound(w, r)
	}
}

// httpWorld is the agent's world: the billing service behind an
// httptest.Server, and the tools' HTTP client, made once, on the first
// tool call (a lazily initialised package client, as many tools have),
// that keeps its connections alive across calls.
type httpWorld struct {
	api      *billingAPI
	srv      *httptest.Server
	once     sync.Once
	client   *http.Client
	detached bool // the tools call the service with context.WithoutCancel(ctx)
	keys     bool
}

func (w *httpWorld) http() *http.Client {
	w.once.Do(func() {
		w.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 2 * time.Second}
	})
	return w.client
}

func (w *httpWorld) call(ctx context.Context, method, path string, body map[string]string, key string) (int, error) {
	if w.detached {
		ctx = context.WithoutCancel(ctx)
	}
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, w.srv.URL+path, rd)
	if err != nil {
		return 0, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := w.http().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		runtime.MarkReplayed(ctx)
	}
	return resp.StatusCode, nil
}

type lookupIn struct {
	Customer string `json:"customer" jsonschema:"required,description=customer"`
}

func (w *httpWorld) tools() []anthropic.BetaTool {
	create, err := toolrunner.NewBetaToolFromJSONSchema("createInvoice", "create an invoice", func(ctx context.Context, in createIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
		key := ""
		if w.keys {
			key = "invoice:" + in.InvoiceID
		}
		if _, err := w.call(ctx, http.MethodPost, "/invoices", map[string]string{"invoice_id": in.InvoiceID, "customer": in.Customer}, key); err != nil {
			return text(""), err
		}
		return text(`{"ok":true}`), nil
	})
	if err != nil {
		panic(err)
	}
	attach, err := toolrunner.NewBetaToolFromJSONSchema("attachInvoice", "attach an order to an invoice", func(ctx context.Context, in attachIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
		if _, err := w.call(ctx, http.MethodPost, "/attach", map[string]string{"invoice_id": in.InvoiceID, "order_id": in.OrderID}, ""); err != nil {
			return text(""), err
		}
		return text("attached"), nil
	})
	if err != nil {
		panic(err)
	}
	lookup, err := toolrunner.NewBetaToolFromJSONSchema("lookupCustomer", "read a customer", func(ctx context.Context, in lookupIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
		if _, err := w.call(ctx, http.MethodGet, "/customers/"+in.Customer, nil, ""); err != nil {
			return text(""), err
		}
		return text("ok"), nil
	})
	if err != nil {
		panic(err)
	}
	return agentidemanthropic.Wrap(httpSpecs, []anthropic.BetaTool{create, attach, lookup})
}

var httpSpecs = agentidemanthropic.Tools{
	"createInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("invoice_id")),
	"attachInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("order_id"),
		agentidemanthropic.Entity("invoice_id"), agentidemanthropic.After("createInvoice"), agentidemanthropic.Idempotent()),
	"lookupCustomer": agentidemanthropic.Read(agentidemanthropic.Entity("customer")),
}

var lookupCall = apiBlock{Name: "lookupCustomer", Input: json.RawMessage(`{"customer":"acme"}`)}

// httpScript: a failed call is asked for again; oneTurn asks for
// createInvoice, attachInvoice and lookupCustomer in one turn (the
// runner's goroutines run the three at once); otherwise createInvoice
// with lookupCustomer, then attachInvoice.
func httpScript(oneTurn bool) func([]apiMessage) ([]apiBlock, string) {
	return func(conv []apiMessage) ([]apiBlock, string) {
		failed, done, turns := readConversation(conv)
		switch {
		case turns >= 6:
			return nil, "Giving up."
		case len(failed) > 0:
			return failed, ""
		case turns == 0 && oneTurn:
			return []apiBlock{createCall, attachCall, lookupCall}, ""
		case !done["createInvoice"]:
			return []apiBlock{createCall, lookupCall}, ""
		case !done["attachInvoice"]:
			return []apiBlock{attachCall}, ""
		}
		return nil, "Invoice INV-1 is filed and order ORD-9 is attached."
	}
}

func (w *httpWorld) agent(oneTurn bool) func(context.Context) error {
	return func(ctx context.Context) error {
		client := anthropic.NewClient(
			option.WithAPIKey("test-key"),
			option.WithBaseURL("http://model.test/"),
			option.WithMaxRetries(0),
			option.WithHTTPClient(&http.Client{Transport: inProcess{&messagesAPI{script: httpScript(oneTurn)}}}),
		)
		runner := client.Beta.Messages.NewToolRunner(w.tools(), anthropic.BetaToolRunnerParams{
			BetaMessageNewParams: anthropic.BetaMessageNewParams{
				Model:     "claude-scripted",
				MaxTokens: 1024,
				Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("File the invoice for order ORD-9."))},
			},
			MaxIterations: 10,
			DisableThread: true,
		})
		return invoiceFiled(runner.RunToCompletion(ctx))
	}
}

func (w *httpWorld) options(state bool) []testkit.Option {
	opts := []testkit.Option{
		testkit.NoSummary(),
		testkit.StallTimeout(3 * time.Second),
		testkit.Setup(func(context.Context) error {
			w.api = newBillingAPI(w.keys)
			if w.srv == nil {
				w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { w.api.ServeHTTP(rw, r) }))
			}
			return nil
		}),
	}
	if state {
		opts = append(opts, testkit.State(func() any { return w.api.snapshot() }))
	}
	return opts
}

func verdict(rep *runtime.Report) string {
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

// Tools that call a billing service over HTTP (an httptest.Server, one
// keep-alive client made on the first call, a handler that may detach its
// request from the call's context), run by the SDK's tool runner, which
// starts a goroutine per tool call of a turn. One turn asking for
// createInvoice, attachInvoice and lookupCustomer at once is caught
// (dependent_calls_concurrent); two turns are safe when the service honours
// the Idempotency-Key (with State, or by the replay header alone), and a
// service that issues an invoice per request is caught; every agent gets
// one verdict on every run, with no stall.
func TestHTTPToolsThroughToolRunner(t *testing.T) {
	for _, c := range []struct {
		name                           string
		oneTurn, keys, detached, state bool
		want                           []string // codes that must be found; none: safe
	}{
		{"one turn", true, true, false, true, []string{runtime.CodeDependentCallsConcurrent}},
		{"two turns keyed", false, true, false, true, nil},
		{"two turns keyed no state", false, true, false, false, nil},
		{"two turns keyed detached", false, true, true, true, nil},
		{"two turns naive", false, false, false, true, []string{runtime.CodeDuplicateWrite}},
		{"two turns naive detached", false, false, true, false, []string{runtime.CodeDuplicateWrite}},
		{"one turn detached", true, true, true, true, []string{runtime.CodeDependentCallsConcurrent}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &httpWorld{keys: c.keys, detached: c.detached}
			defer func() {
				if w.srv != nil {
					w.srv.Close()
				}
			}()
			verdicts := map[string]int{}
			for range 3 {
				rep := testkit.Run(t, w.agent(c.oneTurn), w.options(c.state)...)
				v := verdict(rep)
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
