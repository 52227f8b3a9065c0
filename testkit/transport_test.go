package testkit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// refundsAPI is a payments service over HTTP: each POST /refunds creates a
// refund; with honorKey, one whose Idempotency-Key it has seen creates
// nothing and answers as the first did.
type refundsAPI struct {
	honorKey bool
	mu       sync.Mutex
	refunds  []string
	keys     map[string]bool
}

func (s *refundsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := r.Header.Get("Idempotency-Key"); s.honorKey && k != "" {
		if s.keys[k] {
			return
		}
		s.keys[k] = true
	}
	s.refunds = append(s.refunds, string(body))
}

func (s *refundsAPI) reset() {
	s.mu.Lock()
	s.refunds, s.keys = nil, map[string]bool{}
	s.mu.Unlock()
}

func (s *refundsAPI) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"refunds": append([]string{}, s.refunds...)}
}

var refundHTTPOp = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"order"}}

// refundOverHTTP is the agent: one refund, whose tool sends its POST again
// when the client returns an error (a helper of its own, as an SDK's
// retryer would), with an Idempotency-Key when keyed.
func refundOverHTTP(hc *http.Client, url string, keyed bool) func(context.Context) error {
	return func(ctx context.Context) error {
		return tracedCall(ctx, refundHTTPOp, []any{"o-1"}, []any{"o-1"}, nil, func(ctx context.Context) error {
			var err error
			for range 3 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/refunds", strings.NewReader("o-1"))
				if keyed {
					req.Header.Set("Idempotency-Key", "refund-o-1")
				}
				var resp *http.Response
				if resp, err = hc.Do(req); err == nil {
					return resp.Body.Close()
				}
			}
			return err
		})
	}
}

// A tool whose own helper sends a refund's POST again after an error, to a
// service that refunds once per POST, refunds twice whenever the answer to
// the first is lost in transit. No fault at the tool's boundary meets that
// retry, and the suite was SAFE (red teams rtR #1, rtS #2). With its
// client wrapped in runtime.Transport the suite plans
// lost_response/refund#1: the test FAILS with a duplicate_write that names
// the request; the keyed twin, whose service honors the key, PASSES.
// Without State the suite cannot see the service: INCONCLUSIVE, never
// SAFE, and FailInconclusive fails the test.
func TestRetryInsideAToolCallIsTested(t *testing.T) {
	run := func(ft *fakeT, keyed, state bool, opts ...testkit.Option) *runtime.Report {
		api := &refundsAPI{honorKey: keyed}
		srv := httptest.NewServer(api)
		defer srv.Close()
		hc := &http.Client{Transport: runtime.Transport(nil), Timeout: 10 * time.Second}
		opts = append(opts, testkit.NoSummary(), testkit.Setup(func(context.Context) error { api.reset(); return nil }))
		if state {
			opts = append(opts, testkit.State(api.snapshot))
		}
		rep := testkit.TestAgent(ft, refundOverHTTP(hc, srv.URL, keyed), opts...)
		if err := reportschema.Validate(rep); err != nil {
			t.Errorf("the report does not fit the schema: %v", err)
		}
		return rep
	}
	lost := func(rep *runtime.Report) *runtime.Result {
		for _, r := range rep.Results {
			if r.Scenario == "lost_response/refund#1" {
				return r
			}
		}
		t.Fatalf("no lost_response/refund#1 scenario")
		return nil
	}

	ft := &fakeT{name: "TestRefund"}
	rep := run(ft, false, true)
	r := lost(rep)
	if !ft.failed() || rep.Safe || r.Safe || !hasCode(r, runtime.CodeDuplicateWrite) {
		t.Fatalf("buggy: failed %v, safe %v, scenario safe %v, findings %v; want FAIL with a duplicate_write", ft.failed(), rep.Safe, r.Safe, r.Findings)
	}
	msg := r.Findings[0].Message
	for _, want := range []string{"1:refund#1's HTTP client sent POST ", "/refunds again inside the call after the injected lost response", "the service applied it twice"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the finding does not say %q: %s", want, msg)
		}
	}
	// Printed in full, not "as in" the crash's duplicate of the agent's
	// call: another problem, with another fix.
	if joined := strings.Join(ft.errors, "\n"); !strings.Contains(joined, "again inside the call after the injected lost response") {
		t.Errorf("the test's errors do not print the finding: %s", joined)
	}
	if b, err := rep.MarshalJSON(); err != nil || !strings.Contains(string(b), `"http_requests":[{"method":"POST"`) {
		t.Errorf("the report's operations do not list their requests (err %v)", err)
	}

	ft = &fakeT{name: "TestRefund"}
	rep = run(ft, true, true)
	if r := lost(rep); ft.failed() || !rep.Safe || !r.Safe || r.Inconclusive {
		t.Fatalf("keyed: failed %v, safe %v, scenario safe %v inconclusive %v: %v %v", ft.failed(), rep.Safe, r.Safe, r.Inconclusive, r.Findings, r.Trace.Notes)
	}

	ft = &fakeT{name: "TestRefund"}
	rep = run(ft, false, false, testkit.FailInconclusive())
	r = lost(rep)
	if !r.Inconclusive || r.Safe || hasCode(r, runtime.CodeDuplicateWrite) || !ft.failed() {
		t.Fatalf("no State: inconclusive %v, safe %v, findings %v, failed %v; want INCONCLUSIVE, failed by FailInconclusive", r.Inconclusive, r.Safe, r.Findings, ft.failed())
	}
	if notes := strings.Join(r.Trace.Notes, "\n"); !strings.Contains(notes, "without testkit.State the suite cannot see whether the service applied it more than once") {
		t.Errorf("the note does not say what the suite could not see: %s", notes)
	}
}

func hasCode(r *runtime.Result, code string) bool {
	for _, f := range r.Findings {
		if f.Code == code {
			return true
		}
	}
	return false
}
