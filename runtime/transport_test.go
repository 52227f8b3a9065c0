package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refundService creates a refund for each POST /refunds it gets; with
// honorKey, a POST whose Idempotency-Key it has seen creates nothing more
// and answers as the first did. GET /refunds lists them.
type refundService struct {
	honorKey bool
	mu       sync.Mutex
	refunds  []string
	keys     map[string]bool
	posts    int
}

func (s *refundService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/refunds" || r.URL.Query().Get("dry") == "1" {
		fmt.Fprintf(w, "%d", len(s.refunds))
		return
	}
	s.posts++
	body, _ := io.ReadAll(r.Body)
	if k := r.Header.Get("Idempotency-Key"); s.honorKey && k != "" {
		if s.keys[k] {
			w.Header().Set("Idempotent-Replayed", "true")
			io.WriteString(w, "ok")
			return
		}
		s.keys[k] = true
	}
	s.refunds = append(s.refunds, string(body))
	io.WriteString(w, "ok")
}

func (s *refundService) reset() {
	s.mu.Lock()
	s.refunds, s.keys, s.posts = nil, map[string]bool{}, 0
	s.mu.Unlock()
}

func (s *refundService) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"refunds": append([]string{}, s.refunds...)}
}

var opRefundHTTP = &Op{Name: "refund", Kind: KindWrite, Params: []string{"order"}, Pos: "transport_test.go:1"}

// postAgainOnError is a tool's own "retry on error" helper: the POST is sent
// again, up to three times, when the client returns an error.
func postAgainOnError(ctx context.Context, hc *http.Client, u, body, key string) error {
	var err error
	for range 3 {
		var req *http.Request
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
		if err != nil {
			return err
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		var resp *http.Response
		resp, err = hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
	}
	return err
}

// sdkStyle is a client of an SDK's shape: it retries a request on a
// connection error or a 5xx, never on a 4xx, and rewinds the body.
func sdkStyle(ctx context.Context, hc *http.Client, u string, body []byte) error {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		var op *net.OpError
		retry := err != nil && errors.As(err, &op) || err == nil && resp.StatusCode >= 500
		if err == nil && !retry {
			io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
		if err == nil {
			resp.Body.Close()
		}
		if !retry || attempt == 2 {
			if err == nil {
				err = fmt.Errorf("refund: %s", resp.Status)
			}
			return err
		}
	}
}

// postOnTimeout sends the POST again when the client's error is a
// timeout (a net.Error whose Timeout is true), as red team rtS #2's
// DoRetry does.
func postOnTimeout(ctx context.Context, hc *http.Client, u, body string) error {
	var err error
	for range 3 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
		var resp *http.Response
		if resp, err = hc.Do(req); err == nil {
			return resp.Body.Close()
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return err
		}
	}
	return err
}

type refundStyle int

const (
	styleLoop      refundStyle = iota // the tool's own retry loop
	styleLoopKey                      // the same, with an Idempotency-Key
	styleNoRetry                      // one request, its error returned
	styleSDK                          // an SDK-style client (connection errors, 5xx)
	styleGoroutine                    // the loop, run by a goroutine the tool starts, without its ctx
	styleTimeouts                     // a helper that retries timeouts only (red team rtS #2's)
)

// httpRefundAgent refunds each order through an HTTP service.
func httpRefundAgent(hc *http.Client, base string, style refundStyle, orders ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, o := range orders {
			err := traced(ctx, opRefundHTTP, []any{o}, []any{o}, func(ctx context.Context) error {
				u := base + "/refunds"
				switch style {
				case styleLoopKey:
					return postAgainOnError(ctx, hc, u, o, "refund-"+o)
				case styleNoRetry:
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(o))
					resp, err := hc.Do(req)
					if err != nil {
						return err
					}
					return resp.Body.Close()
				case styleSDK:
					return sdkStyle(ctx, hc, u, []byte(o))
				case styleTimeouts:
					return postOnTimeout(ctx, hc, u, o)
				case styleGoroutine:
					done := make(chan error, 1)
					go func() { done <- postAgainOnError(context.Background(), hc, u, o, "") }()
					return <-done
				}
				return postAgainOnError(ctx, hc, u, o, "")
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// runHTTPRefunds runs httpRefundAgent's suite against a fresh refund service,
// with State when withState, and returns the report.
func runHTTPRefunds(t *testing.T, style refundStyle, honorKey, withState bool, opts ...Option) (*Report, *refundService) {
	t.Helper()
	svc := &refundService{honorKey: honorKey}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	all := []Option{Setup(func(context.Context) error { svc.reset(); return nil })}
	if withState {
		all = append(all, State(svc.snapshot))
	}
	rep, err := Run(context.Background(), "refunds", httpRefundAgent(hc, srv.URL, style, "o-1"), append(all, opts...)...)
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
	return rep, svc
}

const lostRefund = "lost_response/refund#1"

// A tool whose own loop sends the refund's POST again after an error, to a
// service that creates a refund per POST, refunds twice whenever the first
// answer is lost in transit; no injected fault at the tool's boundary met
// that retry, and the suite was SAFE (red teams rtR #1, rtS #2). The
// lost_response scenario loses that answer: the loop sends the POST again,
// the service makes a second refund, and State sees the call add two
// where the baseline's added one.
func TestLostResponseRetriedInsideTheCallIsADuplicate(t *testing.T) {
	rep, _ := runHTTPRefunds(t, styleLoop, false, true)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired, "notes: %v", r.Trace.Notes)
	assert.False(t, r.Safe)
	require.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
	msg := r.Findings[0].Message
	assert.Contains(t, msg, "1:refund#1's HTTP client sent POST ")
	assert.Contains(t, msg, "/refunds again inside the call after the injected lost response")
	assert.Contains(t, msg, "the service applied it twice")
	assert.Contains(t, msg, "refunds gained 2 entries where the baseline's call added 1")
	assert.False(t, rep.Safe)
	// The suite's note on faults not retried says the lost responses met
	// the retries inside these calls, not that no fault did.
	require.NotEmpty(t, rep.Notes)
	assert.Contains(t, rep.Notes[0], "The lost_response scenarios met the retries inside the calls of writes whose HTTP clients go through runtime.Transport")
	assert.NotContains(t, rep.Notes[0], "a retry inside a tool call (a retrying HTTP client")
	for _, o := range r.Trace.Ops {
		if o.Name == "refund" {
			assert.Equal(t, FaultLostResponse, o.Fault)
			require.Len(t, o.sent(), 2)
			assert.True(t, o.sent()[0].Lost)
			assert.Equal(t, "POST", o.sent()[1].Method)
		}
	}
}

// The same loop with an Idempotency-Key the service honors: the second
// POST creates nothing, and the scenario is safe.
func TestLostResponseRetriedWithAKeyIsSafe(t *testing.T) {
	rep, svc := runHTTPRefunds(t, styleLoopKey, true, true)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.True(t, r.Safe && !r.Inconclusive, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
	assert.True(t, rep.Safe)
	svc.mu.Lock()
	defer svc.mu.Unlock()
	assert.Len(t, svc.refunds, 1, "the last scenario's world")
}

// Without State the suite cannot see what the service did with the second
// POST: the scenario is inconclusive, and says why; never safe, never a
// finding.
func TestLostResponseRetriedWithoutStateIsInconclusive(t *testing.T) {
	rep, _ := runHTTPRefunds(t, styleLoop, false, false)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.True(t, r.Inconclusive)
	assert.False(t, r.Safe)
	assert.NotContains(t, resultCodes(r), CodeDuplicateWrite)
	notes := strings.Join(r.Trace.Notes, "\n")
	assert.Contains(t, notes, "1:refund#1's HTTP client sent POST ")
	assert.Contains(t, notes, "without testkit.State the suite cannot see whether the service applied it more than once")
}

// A tool that does not retry hands the reset connection to the agent, as
// a lost acknowledgement would: this agent gives up, and no repeat is
// made; the error names the reset.
func TestLostResponseWithoutARetryReachesTheTool(t *testing.T) {
	rep, _ := runHTTPRefunds(t, styleNoRetry, false, true)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.NotContains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v", r.Findings)
	assert.True(t, r.Failed)
	assert.Contains(t, r.Error, "read tcp 127.0.0.1:")
	assert.Contains(t, r.Error, "i/o timeout")
	for _, o := range r.Trace.Ops {
		if o.Name == "refund" {
			assert.Len(t, o.sent(), 1)
			// The service applied it (201), and the tool's error came
			// of the lost answer: a lost acknowledgement's record.
			assert.Equal(t, StatusSuccess, o.Status)
			assert.Equal(t, ObservationLost, o.Observation)
			assert.Contains(t, o.Error, "i/o timeout")
		}
	}
}

// An SDK-style client (retries connection errors and 5xx) meets the reset
// as the tool's own loop does.
func TestLostResponseSDKStyleClient(t *testing.T) {
	rep, _ := runHTTPRefunds(t, styleSDK, false, true)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
}

// A helper that retries timeouts only meets the lost response too: a
// connection reset, no timeout, went past it to the tool (red team rtS
// #2's DoRetry).
func TestLostResponseTimeoutRetryingHelper(t *testing.T) {
	rep, _ := runHTTPRefunds(t, styleTimeouts, false, true)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
}

// A request sent by a goroutine the tool started, with no ctx of the
// call's, is the call's all the same: its goroutine descends from the
// call's.
func TestLostResponseFromAGoroutineOfTheTool(t *testing.T) {
	rep, _ := runHTTPRefunds(t, styleGoroutine, false, true)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired, "notes: %v; findings: %v", r.Trace.Notes, r.Findings)
	assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
}

// Two calls in flight at once, each its own requests: each call's
// lost_response scenario loses its own POST's answer, and the other
// call's requests are not its.
func TestLostResponseTwoCallsInFlight(t *testing.T) {
	svc := &refundService{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, o := range []string{"o-1", "o-2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = traced(ctx, opRefundHTTP, []any{o}, []any{o}, func(ctx context.Context) error {
					return postAgainOnError(ctx, hc, srv.URL+"/refunds", o, "")
				})
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	rep, err := Run(context.Background(), "two", agent, Setup(func(context.Context) error { svc.reset(); return nil }), State(svc.snapshot))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded)
	for _, o := range rep.Baseline.Trace.Ops {
		require.Len(t, o.sent(), 1, "%s", o.ID)
	}
	n := 0
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.Scenario, "lost_response/") {
			continue
		}
		n++
		require.True(t, r.FaultFired, "%s", r.Scenario)
		for _, o := range r.Trace.Ops {
			want := 1
			if o.Fault == FaultLostResponse {
				want = 2
			}
			assert.Len(t, o.sent(), want, "%s %s", r.Scenario, o.ID)
		}
		t.Logf("%s: inconclusive %v findings %v notes %v", r.Scenario, r.Inconclusive, r.Findings, r.Trace.Notes)
		// The calls ran together: neither's window is its own.
		assert.True(t, r.Inconclusive || slicesHas(resultCodes(r), CodeDuplicateWrite), "%s: findings %v notes %v", r.Scenario, r.Findings, r.Trace.Notes)
		assert.False(t, r.Safe, "%s", r.Scenario)
	}
	assert.Equal(t, 2, n)
}

func slicesHas(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Without a run, Transport is its base: the request goes through as is.
func TestTransportWithNoRun(t *testing.T) {
	svc := &refundService{}
	svc.reset()
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil)}
	require.NoError(t, postAgainOnError(context.Background(), hc, srv.URL+"/refunds", "o-9", ""))
	assert.Equal(t, 1, svc.posts)
	assert.Len(t, svc.refunds, 1)
}

// A write whose calls sent no request through Transport gets no
// lost_response scenario: reports of agents that do not use it keep
// their scenarios.
func TestNoLostResponseWithoutTransport(t *testing.T) {
	svc := &refundService{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	rep, err := Run(context.Background(), "plain", httpRefundAgent(&http.Client{}, srv.URL, styleLoop, "o-1"), Setup(func(context.Context) error { svc.reset(); return nil }), State(svc.snapshot))
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.False(t, strings.HasPrefix(r.Scenario, "lost_response"), r.Scenario)
	}
}

// The error the client gets is a read that timed out, as retrying clients
// recognize it: a *net.OpError, Timeout and Temporary (what aws-sdk-go-v2's
// retryer and helpers that retry timeouts look for; openai-go, stripe-go
// and go-retryablehttp retry on any error of the round trip); it matches
// ErrInjected, and is no context.DeadlineExceeded, which clients take for
// their caller's deadline and do not retry.
func TestLostResponseError(t *testing.T) {
	e := &InjectedError{Fault: Fault{Kind: FaultLostResponse, Op: "refund", Occurrence: 1}, Err: lostResponseError("127.0.0.1:80")}
	var op *net.OpError
	require.True(t, errors.As(e, &op))
	assert.True(t, op.Timeout())
	assert.True(t, op.Temporary())
	var ne net.Error
	require.True(t, errors.As(error(&url.Error{Op: "Post", URL: "http://127.0.0.1:80/refunds", Err: e}), &ne))
	assert.True(t, ne.Timeout())
	assert.True(t, errors.Is(e, ErrInjected))
	assert.False(t, errors.Is(e, context.DeadlineExceeded))
	assert.Equal(t, "read tcp 127.0.0.1:80: i/o timeout", e.Error())
}

// State that reads the service through the agent's own client, with
// Transport, reads it as the harness: its requests are no call's, and the
// lost response is the tool's POST's, not State's.
func TestLostResponseStateReadsThroughTheSameClient(t *testing.T) {
	svc := &refundService{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	state := func() any {
		// A query API that takes a POST, as DynamoDB's Scan does.
		resp, err := hc.Post(srv.URL+"/query", "text/plain", nil)
		if err != nil {
			return err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		n, _ := strconv.Atoi(string(b))
		return map[string]any{"refunds": n}
	}
	rep, err := Run(context.Background(), "state via client", httpRefundAgent(hc, srv.URL, styleLoop, "o-1"),
		Setup(func(context.Context) error { svc.reset(); return nil }), State(state))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded)
	for _, o := range rep.Baseline.Trace.Ops {
		require.Len(t, o.sent(), 1, "State's requests are not the call's")
	}
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	require.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
	assert.Contains(t, r.Findings[0].Message, "refunds moved by +2 where the baseline's call moved it by +1")
}

// nopTransport answers every request at once, so that the benchmarks
// below measure the wrapper, not the network.
type nopTransport struct{ resp http.Response }

func (n *nopTransport) RoundTrip(*http.Request) (*http.Response, error) { return &n.resp, nil }

// BenchmarkTransportInactive is the cost of Transport over its base while
// no run is active (one atomic load); BenchmarkTransportBase is the base
// alone.
func BenchmarkTransportInactive(b *testing.B) {
	req, _ := http.NewRequest(http.MethodPost, "http://svc.test/refunds", nil)
	rt := Transport(&nopTransport{})
	b.ReportAllocs()
	for b.Loop() {
		rt.RoundTrip(req)
	}
}

func BenchmarkTransportBase(b *testing.B) {
	req, _ := http.NewRequest(http.MethodPost, "http://svc.test/refunds", nil)
	var rt http.RoundTripper = &nopTransport{}
	b.ReportAllocs()
	for b.Loop() {
		rt.RoundTrip(req)
	}
}

// A tool whose service answers a keyed retry "replayed", and says so
// (MarkReplayed), replayed its own lost request, sent in this run: no
// stale key, and the scenario fired (red team rtS #2's keyed tool).
func TestLostResponseReplayOfItsOwnRequestIsNotStale(t *testing.T) {
	svc := &refundService{honorKey: true}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	agent := func(ctx context.Context) error {
		return traced(ctx, opRefundHTTP, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
			for range 3 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/refunds", strings.NewReader("o-1"))
				req.Header.Set("Idempotency-Key", "refund-o-1")
				resp, err := hc.Do(req)
				if err != nil {
					continue
				}
				if resp.Header.Get("Idempotent-Replayed") == "true" {
					MarkReplayed(ctx)
				}
				return resp.Body.Close()
			}
			return errors.New("refund: no answer")
		})
	}
	rep, err := Run(context.Background(), "replayed", agent, Setup(func(context.Context) error { svc.reset(); return nil }), State(svc.snapshot))
	require.NoError(t, err)
	r := resultOf(t, rep, lostRefund)
	assert.True(t, r.FaultFired, "findings %v; notes %v", r.Findings, r.Trace.Notes)
	assert.True(t, r.Safe && !r.Inconclusive, "findings %v; notes %v", r.Findings, r.Trace.Notes)
}

// A tool that, after its POST failed, asks the service whether it was
// applied through another POST to the same path (an RPC API, as
// DynamoDB's, whose operations are all POST /) sent nothing again: the
// requests differ by body, and the scenario is judged as any lost answer
// the tool checked, with nothing said of a retry.
func TestLostResponseOtherRequestToTheSamePathIsNoRetry(t *testing.T) {
	svc := &refundService{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	agent := func(ctx context.Context) error {
		return traced(ctx, opRefundHTTP, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/refunds", strings.NewReader("o-1"))
			resp, err := hc.Do(req)
			if err == nil {
				return resp.Body.Close()
			}
			// Was it applied? A query, sent as a POST too.
			req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/refunds", strings.NewReader(`{"query":"count"}`))
			req.URL.RawQuery = "dry=1"
			resp, err = hc.Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
	}
	rep, err := Run(context.Background(), "other", agent, Setup(func(context.Context) error { svc.reset(); return nil }))
	require.NoError(t, err)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "again inside the call", "notes: %v", r.Trace.Notes)
	assert.False(t, r.Inconclusive, "notes: %v", r.Trace.Notes)
}

// ledgerService credits an account by each POST /credit it gets, as an
// unconditional DynamoDB ADD does (red team rtR #1's ledger).
type ledgerService struct {
	mu      sync.Mutex
	balance int
	// fail500 answers the first credit of each run 500 after applying
	// it, as the red team's DynamoDB fake did (LoseFirstUpdate).
	fail500, failed bool
}

func (s *ledgerService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance += 500
	if s.fail500 && !s.failed {
		s.failed = true
		w.WriteHeader(http.StatusInternalServerError)
	}
}

var opCreditHTTP = &Op{Name: "credit", Kind: KindWrite, Params: []string{"tx"}, Pos: "transport_test.go:2"}

// A credit whose client sends the POST again after the lost response
// credits twice: with State giving the balance as a number, a
// duplicate_write that says it moved by +1000 where the baseline's moved
// it by +500; with State giving it inside a string, as the red team's
// DynamoDB fake did ("balance={"N":"1000"};"), the suite cannot measure
// it, and the scenario is inconclusive, never safe.
func TestLostResponseCreditedTwice(t *testing.T) {
	for _, asString := range []bool{false, true} {
		svc := &ledgerService{}
		srv := httptest.NewServer(svc)
		hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
		agent := func(ctx context.Context) error {
			return traced(ctx, opCreditHTTP, []any{"pay-7"}, []any{"pay-7"}, func(ctx context.Context) error {
				return sdkStyle(ctx, hc, srv.URL+"/credit", []byte(`{"tx":"pay-7","cents":500}`))
			})
		}
		state := func() any {
			svc.mu.Lock()
			defer svc.mu.Unlock()
			if asString {
				return map[string]any{"balances/acct-1": fmt.Sprintf(`balance={"N":"%d"};`, svc.balance)}
			}
			return map[string]any{"balances": map[string]any{"acct-1": svc.balance}}
		}
		rep, err := Run(context.Background(), "credit", agent, Setup(func(context.Context) error {
			svc.mu.Lock()
			svc.balance = 0
			svc.mu.Unlock()
			return nil
		}), State(state))
		srv.Close()
		require.NoError(t, err)
		r := resultOf(t, rep, "lost_response/credit#1")
		require.True(t, r.FaultFired)
		assert.False(t, r.Safe, "string %v", asString)
		if !asString {
			require.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings %v notes %v", r.Findings, r.Trace.Notes)
			assert.Contains(t, r.Findings[0].Message, "balances.acct-1 moved by +1000 where the baseline's call moved it by +500")
			continue
		}
		assert.True(t, r.Inconclusive)
		assert.NotContains(t, resultCodes(r), CodeDuplicateWrite)
		assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), "another change, and not more entries or a number moved further")
	}
}

// Where the baseline's own call sent its POST again (after a 500 the
// service answered once it had applied it, in every run), its change is
// no one request's: compared with it, the lost response's double credit
// looked like the baseline's. The scenario is inconclusive, and says the
// baseline sent it twice, after an answer of 500 (red team rtR #1's fake,
// LoseFirstUpdate).
func TestLostResponseBaselineSentItTwice(t *testing.T) {
	svc := &ledgerService{fail500: true}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	agent := func(ctx context.Context) error {
		return traced(ctx, opCreditHTTP, []any{"pay-7"}, []any{"pay-7"}, func(ctx context.Context) error {
			return sdkStyle(ctx, hc, srv.URL+"/credit", []byte(`{"tx":"pay-7","cents":500}`))
		})
	}
	rep, err := Run(context.Background(), "credit", agent, Setup(func(context.Context) error {
		svc.mu.Lock()
		svc.balance, svc.failed = 0, false
		svc.mu.Unlock()
		return nil
	}), State(func() any {
		svc.mu.Lock()
		defer svc.mu.Unlock()
		return map[string]any{"balance": svc.balance}
	}))
	require.NoError(t, err)
	sent := rep.Baseline.Trace.Ops[0].sent()
	require.Len(t, sent, 2)
	assert.Equal(t, 500, sent[0].Status)
	assert.Equal(t, 200, sent[1].Status)
	r := resultOf(t, rep, "lost_response/credit#1")
	require.True(t, r.FaultFired)
	assert.True(t, r.Inconclusive && !r.Safe, "findings %v notes %v", r.Findings, r.Trace.Notes)
	assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), "the baseline's 1:credit#1 sent POST ")
	assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), "/credit again inside the call too, after an answer of 500")
}

// exceeds says where a call's change holds more of what the baseline's same
// call's did, and nowhere else.
func TestExceeds(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		before, after        string
		baseBefore, baseAfte string
		want                 string
	}{
		{"two refunds for one", `{"r":[]}`, `{"r":["a","a"]}`, `{"r":[]}`, `{"r":["a"]}`, "r gained 2 entries where the baseline's call added 1"},
		{"keyed: one", `{"r":[]}`, `{"r":["a"]}`, `{"r":[]}`, `{"r":["a"]}`, ""},
		{"credited twice", `{"b":100}`, `{"b":1100}`, `{"b":100}`, `{"b":600}`, "b moved by +1000 where the baseline's call moved it by +500"},
		{"item made by an ADD", `{}`, `{"acct":1000}`, `{}`, `{"acct":500}`, "acct moved by +1000 where the baseline's call moved it by +500"},
		{"an id handed out, no multiple", `{}`, `{"seq":42}`, `{}`, `{"seq":17}`, ""},
		{"a clock", `{"at":1733400000}`, `{"at":1733400009}`, `{"at":1733400000}`, `{"at":1733400003}`, ""},
		{"bookkeeping the baseline did not touch", `{"r":[],"log":[]}`, `{"r":["a"],"log":["x","y"]}`, `{"r":[],"log":[]}`, `{"r":["a"],"log":[]}`, ""},
		{"keys added", `{"t":{}}`, `{"t":{"T-1":{},"T-2":{}}}`, `{"t":{}}`, `{"t":{"T-1":{}}}`, "t gained 2 entries where the baseline's call added 1"},
		{"moved the other way", `{"b":100}`, `{"b":-900}`, `{"b":100}`, `{"b":600}`, ""},
	} {
		got, ok := exceeds(tc.before, tc.after, tc.baseBefore, tc.baseAfte)
		assert.True(t, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, ok := exceeds("not json", "{}", "{}", "{}")
	assert.False(t, ok)
}

// An agent that calls the tool again after the lost response reached it
// (its client does not retry) refunds twice, as after a lost
// acknowledgement: without State the first call counts as an execution
// (the service answered 2xx to the request whose answer was dropped), and
// the repeat is a duplicate_write; with a key the service honors, the
// repeat is answered from the first and the scenario is safe.
func TestLostResponseRetriedByTheAgent(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		svc := &refundService{honorKey: keyed}
		srv := httptest.NewServer(svc)
		hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
		refund := func(ctx context.Context) error {
			return traced(ctx, opRefundHTTP, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/refunds", strings.NewReader("o-1"))
				if keyed {
					req.Header.Set("Idempotency-Key", "refund-o-1")
				}
				resp, err := hc.Do(req)
				if err != nil {
					return err
				}
				if resp.Header.Get("Idempotent-Replayed") == "true" {
					MarkReplayed(ctx)
				}
				return resp.Body.Close()
			})
		}
		agent := func(ctx context.Context) error {
			if err := refund(ctx); err != nil {
				return refund(ctx)
			}
			return nil
		}
		rep, err := Run(context.Background(), "agent retry", agent, Setup(func(context.Context) error { svc.reset(); return nil }))
		srv.Close()
		require.NoError(t, err)
		r := resultOf(t, rep, lostRefund)
		require.True(t, r.FaultFired)
		if keyed {
			assert.True(t, r.Safe && !r.Inconclusive, "keyed: findings %v notes %v", r.Findings, r.Trace.Notes)
			continue
		}
		assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings %v notes %v", r.Findings, r.Trace.Notes)
	}
}

// FaultError gives the lost response's error too, as it gives the faults'
// at the tool's boundary: it was the read timeout's whatever FaultError
// said. net/http's Client wraps it in a *url.Error.
func TestLostResponseTakesFaultErrorsError(t *testing.T) {
	reset := errors.New("connection reset by the test's proxy")
	rep, _ := runHTTPRefunds(t, styleNoRetry, false, true, FaultError(func(op string, kind FaultKind) error {
		if kind == FaultLostResponse {
			return reset
		}
		return nil
	}))
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	assert.Contains(t, r.Error, "connection reset by the test's proxy")
	assert.NotContains(t, r.Error, "i/o timeout")
	// The other faults keep the runtime's errors.
	other := resultOf(t, rep, "lost_acknowledgement/refund#1")
	assert.NotContains(t, other.Error, "connection reset by the test's proxy")
}

// tokenRefundService creates a refund for each POST /refunds, a JSON body
// {"order": ..., "token": ...}; with byOrder, one per order, whatever the
// token.
type tokenRefundService struct {
	byOrder bool
	mu      sync.Mutex
	refunds []string
}

func (s *tokenRefundService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct{ Order, Token string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.byOrder || !slices.Contains(s.refunds, req.Order) {
		s.refunds = append(s.refunds, req.Order)
	}
	io.WriteString(w, "ok")
}

// A client that builds each attempt anew puts a token made per attempt in
// the body ("refund-o-1-2"), as SDKs that stamp a request id or a sent_at
// do: its retry after the lost response was another body, not counted as
// sent again, and a service that refunds per request refunded twice while
// the whole suite read SAFE (red team rW, 10 runs of 10). A request of the
// same method, host, path and body form (the JSON fields, not their
// values) now counts; a service that refunds once per order is safe.
func TestLostResponseRetriedWithAnotherTokenInTheBody(t *testing.T) {
	for _, byOrder := range []bool{false, true} {
		svc := &tokenRefundService{byOrder: byOrder}
		srv := httptest.NewServer(svc)
		hc := &http.Client{Transport: Transport(nil), Timeout: 200 * time.Millisecond}
		agent := func(ctx context.Context) error {
			return traced(ctx, opRefundHTTP, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
				var err error
				for attempt := 1; attempt <= 3; attempt++ {
					body := fmt.Sprintf(`{"order":"o-1","token":"refund-o-1-%d"}`, attempt)
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/refunds", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					var resp *http.Response
					if resp, err = hc.Do(req); err == nil {
						return resp.Body.Close()
					}
				}
				return err
			})
		}
		rep, err := Run(context.Background(), "token", agent,
			Setup(func(context.Context) error { svc.mu.Lock(); svc.refunds = nil; svc.mu.Unlock(); return nil }),
			State(func() any {
				svc.mu.Lock()
				defer svc.mu.Unlock()
				return map[string]any{"refunds": slices.Clone(svc.refunds)}
			}))
		srv.Close()
		require.NoError(t, err)
		r := resultOf(t, rep, lostRefund)
		require.True(t, r.FaultFired, "notes: %v", r.Trace.Notes)
		if byOrder {
			assert.True(t, r.Safe && !r.Inconclusive, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
			continue
		}
		require.Contains(t, resultCodes(r), CodeDuplicateWrite, "findings: %v; notes: %v", r.Findings, r.Trace.Notes)
		assert.Contains(t, r.Findings[0].Message, "with another body of the same form")
		assert.Contains(t, r.Findings[0].Message, "the service applied it twice")
	}
}

// The form of a body that bodyShape takes: a JSON object's keys without
// their values, a multipart body without its boundary; nothing of other
// bodies, nor of another operation's body to the same path.
func TestBodyShape(t *testing.T) {
	json1 := bodyShape("application/json", []byte(`{"order":"o-1","token":"t-1","items":[{"sku":"a"}]}`))
	assert.NotZero(t, json1)
	assert.Equal(t, json1, bodyShape("application/json", []byte(`{"token":"t-2","order":"o-1","items":[{"sku":"b"},{"sku":"c"}]}`)))
	assert.NotEqual(t, json1, bodyShape("application/json", []byte(`{"order":"o-1","items":[{"sku":"a"}]}`)), "a field fewer")
	assert.NotEqual(t, bodyShape("", []byte(`{"TableName":"t","Item":{"id":{"S":"1"}}}`)), bodyShape("", []byte(`{"TableName":"t","KeyConditionExpression":"id = :id"}`)), "a PutItem and a Query")
	assert.Zero(t, bodyShape("text/plain", []byte("o-1")))
	assert.Zero(t, bodyShape("application/json", []byte(`["a","b"]`)))
	part := func(boundary, value string) []byte {
		return []byte("--" + boundary + "\r\nContent-Disposition: form-data; name=\"order\"\r\n\r\n" + value + "\r\n--" + boundary + "--\r\n")
	}
	m1 := bodyShape("multipart/form-data; boundary=abc123", part("abc123", "o-1"))
	assert.NotZero(t, m1)
	assert.Equal(t, m1, bodyShape("multipart/form-data; boundary=zz9", part("zz9", "o-1")), "a new boundary")
	assert.NotEqual(t, m1, bodyShape("multipart/form-data; boundary=zz9", part("zz9", "o-2")), "another value")
}
