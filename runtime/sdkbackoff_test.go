package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The back-offs of the HTTP clients most used beside the model APIs' SDKs
// wake by themselves, as time.Sleep does: busy for as long as they last.
// Before, only the Stainless SDKs' requestconfig methods were known, and
// aws-sdk-go-v2's retry middleware waiting out a DynamoDB throttle (red
// team rtR #5), openai-go v3's requestconfig.WaitForDelay (rtS #10) and
// go-retryablehttp's Client.Do past timedGrace were taken for blocked. A
// retry loop of no particular client (cenkalti/backoff) stays a timed wait:
// what it retries may wait for a lock a held call holds.
func TestHTTPClientBackoffsAreBusy(t *testing.T) {
	for _, tc := range []struct {
		block string
		why   string
	}{
		{"goroutine 51 [select]:\ngithub.com/aws/aws-sdk-go-v2/internal/sdk.sleepWithContext({0xa1a950, 0xc000300000}, 0x1c9c380)\n\t/root/go/pkg/mod/github.com/aws/aws-sdk-go-v2@v1.48.0/internal/sdk/time.go:36 +0x9d\ngithub.com/aws/aws-sdk-go-v2/aws/retry.(*retryMiddleware).handleAttempt(0xc000180000)\n\t/root/go/pkg/mod/github.com/aws/aws-sdk-go-v2@v1.48.0/aws/retry/middleware.go:317 +0x5a5",
			retryBackoffWhy},
		{"goroutine 52 [select]:\ngithub.com/aws/smithy-go/time.SleepWithContext({0xa1a950, 0xc000300000}, 0x1c9c380)\n\t/root/go/pkg/mod/github.com/aws/smithy-go@v1.28.9/time/time.go:126 +0x9d",
			retryBackoffWhy},
		{"goroutine 53 [select]:\ngithub.com/openai/openai-go/v3/internal/requestconfig.WaitForDelay({0xa1a950, 0xc000300000}, 0x2cb417800)\n\t/root/go/pkg/mod/github.com/openai/openai-go/v3@v3.102.0/internal/requestconfig/requestconfig.go:587 +0x9d\ngithub.com/openai/openai-go/v3/internal/requestconfig.(*RequestConfig).Execute(0xc000180000)",
			retryBackoffWhy},
		{"goroutine 54 [select]:\ngithub.com/hashicorp/go-retryablehttp.(*Client).Do(0xc000180000, 0xc000200000)\n\t/root/go/pkg/mod/github.com/hashicorp/go-retryablehttp@v0.7.7/client.go:760 +0x9d",
			retryBackoffWhy},
		{"goroutine 55 [select]:\ngithub.com/googleapis/gax-go/v2.Sleep({0xa1a950, 0xc000300000}, 0x1c9c380)\n\t/root/go/pkg/mod/github.com/googleapis/gax-go/v2@v2.14.0/call_option.go:253 +0x9d",
			retryBackoffWhy},
		{"goroutine 56 [select]:\ngithub.com/cenkalti/backoff/v4.doRetryNotify[...]({0xa1a950, 0xc000300000}, 0x1c9c380)\n\t/root/go/pkg/mod/github.com/cenkalti/backoff/v4@v4.3.0/retry.go:101 +0x9d",
			timedWaitWhy},
		// A select of the SDK that is not its back-off: an event stream's.
		{"goroutine 57 [select]:\ngithub.com/aws/aws-sdk-go-v2/service/s3.(*eventStream).Events(0xc000180000)\n\t/root/go/pkg/mod/github.com/aws/aws-sdk-go-v2/service/s3@v1.80.0/eventstream.go:150 +0x45",
			""},
	} {
		g, ok := parseGoroutine(tc.block)
		require.True(t, ok, tc.block)
		busy, why := g.busy(time.Time{})
		assert.Equal(t, tc.why != "", busy, "goroutine %d", g.id)
		assert.Equal(t, tc.why, why, "goroutine %d", g.id)
	}
}

// testSleepWithContext is this test's HTTP client's back-off, shaped as
// aws-sdk-go-v2's (a select on a timer and the context), which the test
// adds to retryBackoffs: the core module imports no SDK.
func testSleepWithContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// throttledOrders is an order store over HTTP that throttles every other
// lookup (400, as DynamoDB under a hot partition), as the red team's
// DynamoDB fake did. POST /charge charges the order, once per request
// unless keyed (then once per order).
type throttledOrders struct {
	keyed   bool
	mu      sync.Mutex
	charges map[string]int
	finds   int
}

func (s *throttledOrders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("order")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.URL.Path {
	case "/find":
		s.finds++
		if s.finds%2 == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(s.charges[id] > 0)
	case "/charge":
		if s.keyed && s.charges[id] > 0 {
			return
		}
		s.charges[id]++
	}
}

func (s *throttledOrders) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for k, v := range s.charges {
		m[k] = v
	}
	return m
}

var (
	opOrderExistsThrottled = &Op{Name: "orderExists", Kind: KindRead, Params: []string{"order"}, Pos: "sdkbackoff_test.go:1"}
	opChargeThrottled      = &Op{Name: "chargeOrder", Kind: KindWrite, Params: []string{"order"}, Pos: "sdkbackoff_test.go:2"}
)

// getRetrying is the agent's SDK: a GET answered 400 is sent again after
// a 30 ms back-off, up to three times.
func getRetrying(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusBadRequest || attempt == 3 {
			return resp, err
		}
		resp.Body.Close()
		if err := testSleepWithContext(ctx, 30*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// checkThenCharge charges order o unless the store has it charged: a
// check-then-act, which two deliveries at once both pass.
func checkThenCharge(hc *http.Client, base string) func(context.Context) error {
	return func(ctx context.Context) error {
		var found bool
		err := traced(ctx, opOrderExistsThrottled, []any{"o-1"}, nil, func(ctx context.Context) error {
			resp, err := getRetrying(ctx, hc, base+"/find?order=o-1")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("find: %s", resp.Status)
			}
			return json.NewDecoder(resp.Body).Decode(&found)
		})
		if err != nil || found {
			return err
		}
		return traced(ctx, opChargeThrottled, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
			resp, err := post(ctx, hc, base+"/charge?order=o-1")
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
	}
}

// runThrottled runs checkThenCharge's concurrent duplicate delivery
// against a throttling store (keyed: the store charges an order once).
func runThrottled(t *testing.T, keyed bool) *Result {
	t.Helper()
	svc := &throttledOrders{keyed: keyed}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	rep, err := Run(context.Background(), "throttled", checkThenCharge(hc, srv.URL),
		OnlyScenario(ScenarioDuplicateConcurrent),
		Setup(func(context.Context) error {
			svc.mu.Lock()
			svc.charges, svc.finds = map[string]int{}, 0
			svc.mu.Unlock()
			return nil
		}),
		State(svc.snapshot))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
	require.Len(t, rep.Results, 1)
	return rep.Results[0]
}

// Red team rtR #5: a check-then-act over a store that throttles every
// other lookup, whose client backs off 30 ms and sends it again. The
// delivery in the back-off was taken for blocked, the other went on alone
// ("the other delivery was blocked outside any gate ... blocked in a
// select"), and the scenario was a plain pass: the buggy agent SAFE on 4
// of 4 runs. Now the back-off is waited for: both deliveries find nothing,
// both charge, and the charge is a duplicate_write; the store that
// charges an order once makes the same agent safe.
func TestCheckThenActInAnSDKBackoffIsCaught(t *testing.T) {
	defer func(saved []string) { retryBackoffs = saved }(retryBackoffs)
	retryBackoffs = append(retryBackoffs[:len(retryBackoffs):len(retryBackoffs)], "github.com/agentidem/agentidem-go/runtime.testSleepWithContext")
	for i := range 3 {
		r := runThrottled(t, false)
		notes := strings.Join(r.Trace.Notes, "\n")
		assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "run %d: %v; notes: %s", i, r.Findings, notes)
		assert.NotContains(t, notes, "blocked outside any gate", "run %d", i)
		r = runThrottled(t, true)
		assert.True(t, r.Safe && !r.Inconclusive, "run %d, keyed store: safe %v, inconclusive %v, findings %v; notes: %s", i, r.Safe, r.Inconclusive, r.Findings, strings.Join(r.Trace.Notes, "\n"))
	}
}

// Red team rtS #10: openai-go honouring a 429's Retry-After of 12 s before
// the agent's first tool call. The baseline was abandoned after the stall
// bound with a message that said nothing was asleep and that a longer
// StallTimeout helps only if a goroutine outside the scenario ends the
// wait, and with nothing_traced, which blamed the wrappers. The stall
// stays (a hang must end in bounded time), but its message says the
// goroutine sleeps in its client's back-off, for how long at least, and
// that a StallTimeout above the wait is the remedy; nothing_traced is not
// said of a baseline that stalled before its first call. With the bound
// above the wait, the same agent is safe.
func TestBackoffPastTheStallBoundSaysSo(t *testing.T) {
	defer func(saved []string) { retryBackoffs = saved }(retryBackoffs)
	retryBackoffs = append(retryBackoffs[:len(retryBackoffs):len(retryBackoffs)], "github.com/agentidem/agentidem-go/runtime.testSleepWithContext")
	svc := &throttledOrders{keyed: true}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	charge := checkThenCharge(hc, srv.URL)
	agent := func(ctx context.Context) error {
		// The model API's client, asked to wait 1.5 s before it sends
		// the turn again.
		if err := testSleepWithContext(ctx, 1500*time.Millisecond); err != nil {
			return err
		}
		return charge(ctx)
	}
	run := func(stall time.Duration) *Report {
		rep, err := Run(context.Background(), "retryafter", agent,
			OnlyScenario(ScenarioDuplicateConcurrent),
			StallTimeout(stall),
			Setup(func(context.Context) error {
				svc.mu.Lock()
				svc.charges, svc.finds = map[string]int{}, 0
				svc.mu.Unlock()
				return nil
			}),
			State(svc.snapshot))
		if err != nil && rep == nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run(time.Second)
	require.False(t, rep.BaselineSucceeded)
	codes := resultCodes(rep.Baseline)
	assert.Contains(t, codes, CodeStalled)
	assert.NotContains(t, codes, CodeNothingTraced)
	for _, f := range rep.Baseline.Findings {
		if f.Code != CodeStalled {
			continue
		}
		t.Log(f.Message)
		assert.Contains(t, f.Message, "was not stuck but asleep for ")
		assert.Contains(t, f.Message, "in its API client's retry back-off (runtime.testSleepWithContext, at sdkbackoff_test.go:")
		assert.Contains(t, f.Message, "raise the bound with StallTimeout above that wait")
		assert.NotContains(t, f.Message, "no goroutine of the scenario was running, asleep")
	}
	rep = run(5 * time.Second)
	assert.True(t, rep.BaselineSucceeded && rep.Safe, "baseline %+v, safe %v", rep.BaselineFailure, rep.Safe)
}

// lossyLedger credits an account over HTTP: POST /credit?tx=t adds 500 to
// the balance, and answers the first request 500 after it applied it (the
// answer lost on its way back, as a load balancer's reset does).
type lossyLedger struct {
	mu       sync.Mutex
	balance  int
	requests int
}

func (l *lossyLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.balance += 500
	l.requests++
	if l.requests == 1 {
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// postRetrying is the tool's SDK: a POST answered 5xx is sent again after
// a 30 ms back-off, up to retries times.
func postRetrying(ctx context.Context, hc *http.Client, u string, retries int) error {
	for attempt := 0; ; attempt++ {
		resp, err := post(ctx, hc, u)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 500 {
			return nil
		}
		if attempt == retries {
			return fmt.Errorf("credit: %s", resp.Status)
		}
		if err := testSleepWithContext(ctx, 30*time.Millisecond); err != nil {
			return err
		}
	}
}

var (
	opCreditLossy = &Op{Name: "credit", Kind: KindWrite, Params: []string{"tx"}, Pos: "sdkbackoff_test.go:3"}
	opReadBalance = &Op{Name: "balance", Kind: KindRead, Params: []string{"acct"}, Pos: "sdkbackoff_test.go:4"}
)

// Red team rtR #1 and rtS #2: the write's SDK (the AWS SDK's retryer, a
// tool's own retrying HTTP helper) re-sends a request whose 5xx came after
// it was applied: the account is credited twice on every run, below the
// boundary where the suite injects faults. The suite was SAFE, and its
// note said "An agent that does not retry is safe from these faults". Now
// a scenario whose write was seen in its client's retry back-off notes
// the call and the fix, and the suite's note no longer claims safety. The
// twin whose client does not retry writes gets neither. The back-off is
// seen where the suite looks: here in duplicate_delivery/concurrent, whose
// other delivery waits at its second call's gate meanwhile.
func TestRetryInsideAWriteIsNoted(t *testing.T) {
	defer func(saved, callers []string) { retryBackoffs, retryCallers = saved, callers }(retryBackoffs, retryCallers)
	retryBackoffs = append(retryBackoffs[:len(retryBackoffs):len(retryBackoffs)], "github.com/agentidem/agentidem-go/runtime.testSleepWithContext")
	retryCallers = append(retryCallers[:len(retryCallers):len(retryCallers)], "runtime.postRetrying")
	for _, retries := range []int{3, 0, 3} {
		l := &lossyLedger{}
		srv := httptest.NewServer(l)
		hc := &http.Client{Timeout: 30 * time.Second}
		agent := func(ctx context.Context) error {
			if err := traced(ctx, opCreditLossy, []any{"tx-1"}, []any{"tx-1"}, func(ctx context.Context) error {
				return postRetrying(ctx, hc, srv.URL+"/credit?tx=tx-1", retries)
			}); err != nil {
				return err
			}
			// A second call: the other delivery of the concurrent
			// scenario waits at its gate for this one while its
			// client backs off, and the suite looks at it meanwhile.
			return traced(ctx, opReadBalance, []any{"acct-1"}, nil, func(context.Context) error { return nil })
		}
		rep, err := Run(context.Background(), "lossy", agent,
			Setup(func(context.Context) error {
				l.mu.Lock()
				l.balance, l.requests = 0, 0
				l.mu.Unlock()
				return nil
			}),
			State(func() any { l.mu.Lock(); defer l.mu.Unlock(); return l.balance }))
		srv.Close()
		require.NoError(t, err)
		var notes []string
		for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
			notes = append(notes, r.Trace.Notes...)
		}
		notes = append(notes, rep.Notes...)
		all := strings.Join(notes, "\n")
		assert.NotContains(t, all, "An agent that does not retry is safe from these faults;", "retries %d", retries)
		if retries > 0 {
			assert.Contains(t, all, "a call of credit (a write) was seen in its client's retry back-off inside its tool body (runtime.testSleepWithContext, at sdkbackoff_test.go:", "retries %d", retries)
			assert.Contains(t, all, "A write's tool was seen retrying inside its call all the same", "retries %d", retries)
		} else {
			assert.NotContains(t, all, retriedInsideMark, "retries %d", retries)
		}
	}
}
