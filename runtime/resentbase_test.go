package runtime

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team (rtW #1) sent a keyed refund through go-retryablehttp over
// runtime.Transport, to a gateway that books the first refund of a run and
// then answers 502. The baseline's call sent its POST twice (the 502, then
// the replay of the key), so lost_response gave up comparing with it, and
// was inconclusive on every run, saying "the baseline itself applied it
// twice", where State showed the baseline's call, and the scenario's,
// gained exactly one refund.

// gateway books a refund per POST /refunds (a row of order and cents, no
// id); with honorKey, a POST whose Idempotency-Key it has seen books
// nothing more and answers as the first did. The first POST of a run is
// booked, then answered 502.
type gateway struct {
	honorKey bool
	mu       sync.Mutex
	refunds  []map[string]any
	keys     map[string]bool
	failed   bool
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	if k := r.Header.Get("Idempotency-Key"); g.honorKey && k != "" {
		if g.keys[k] {
			io.WriteString(w, `{"status":"succeeded"}`)
			return
		}
		g.keys[k] = true
	}
	g.refunds = append(g.refunds, map[string]any{"order": string(body), "cents": 500})
	if !g.failed {
		g.failed = true
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	io.WriteString(w, `{"status":"succeeded"}`)
}

func (g *gateway) setup(context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refunds, g.keys, g.failed = nil, map[string]bool{}, false
	return nil
}

func (g *gateway) snapshot() any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return map[string]any{"refunds": append([]map[string]any{}, g.refunds...)}
}

// retryingPost is a retrying HTTP client's shape (go-retryablehttp's): it
// sends the POST again on an error or a 5xx, up to four times in all.
func retryingPost(ctx context.Context, hc *http.Client, u, body, key string) error {
	var err error
	for range 4 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		var resp *http.Response
		if resp, err = hc.Do(req); err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 500 {
			return nil
		}
		err = fmt.Errorf("refund: %s", resp.Status)
	}
	return err
}

func runGateway(t *testing.T, keyed bool) *Result {
	t.Helper()
	g := &gateway{honorKey: true}
	srv := httptest.NewServer(g)
	defer srv.Close()
	hc := &http.Client{Transport: Transport(nil), Timeout: 10 * time.Second}
	agent := func(ctx context.Context) error {
		return traced(ctx, opRefundHTTP, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
			key := ""
			if keyed {
				key = "refund-o-1"
			}
			return retryingPost(ctx, hc, srv.URL+"/refunds", "o-1", key)
		})
	}
	rep, err := Run(context.Background(), "gateway", agent, OnlyScenario(lostRefund), Setup(g.setup), State(g.snapshot))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
	sent := rep.Baseline.Trace.Ops[0].sent()
	require.Len(t, sent, 2, "the baseline's call sends its POST again after the 502")
	require.Equal(t, 502, sent[0].Status)
	r := resultOf(t, rep, lostRefund)
	require.True(t, r.FaultFired)
	return r
}

// Keyed: the scenario's call gained one refund, the baseline's too,
// although each sent the POST twice: safe, with no note of the baseline.
func TestLostResponseBaselineResentKeyedIsSafe(t *testing.T) {
	for range 3 {
		r := runGateway(t, true)
		assert.True(t, r.Safe && !r.Inconclusive, "findings %v notes %v", r.Findings, r.Trace.Notes)
		assert.Empty(t, resultCodes(r))
		assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "applied it twice")
	}
}

// Unkeyed: each POST books a refund; the baseline's call gained two
// identical ones for its two requests, as the scenario's did. Not safe:
// inconclusive, with the counts State showed.
func TestLostResponseBaselineResentUnkeyedNamesTheCounts(t *testing.T) {
	for range 3 {
		r := runGateway(t, false)
		assert.False(t, r.Safe, "findings %v notes %v", r.Findings, r.Trace.Notes)
		assert.True(t, r.Inconclusive)
		notes := strings.Join(r.Trace.Notes, "\n")
		assert.Contains(t, notes, "the baseline's 1:refund#1 sent POST ")
		assert.Contains(t, notes, "/refunds again inside the call too, after an answer of 502, and State saw its window gain 2 identical entries in refunds, one for each request it sent: the baseline itself may have applied the request twice")
	}
}

// addedOf tells a change that only added entries from any other, and
// atMostOnce and perRequest read it.
func TestAddedOf(t *testing.T) {
	for _, tc := range []struct {
		a, b       string
		once       bool
		perRequest string // the place where 2 identical entries were added
	}{
		{`{"refunds":[]}`, `{"refunds":[{"o":"1"}]}`, true, ""},
		{`{"refunds":[{"o":"1"}]}`, `{"refunds":[{"o":"1"},{"o":"1"}]}`, true, ""},
		{`{"refunds":[]}`, `{"refunds":[{"o":"1"},{"o":"1"}]}`, false, "refunds"},
		{`{"refunds":[]}`, `{"refunds":[{"id":1},{"id":2}]}`, false, ""},
		{`{"refunds":{}}`, `{"refunds":{"re_1":{"o":"1"}}}`, true, ""},
		{`{"refunds":[],"ledger":[]}`, `{"refunds":[1],"ledger":[1]}`, true, ""},
		{`{"refunds":[],"balance":10}`, `{"refunds":[1],"balance":5}`, false, ""},
		{`{"refunds":[1],"status":"open"}`, `{"refunds":[1,2],"status":"paid"}`, false, ""},
		{`{"refunds":[1,2]}`, `{"refunds":[2,3]}`, false, ""},
		{`{"refunds":{"a":1}}`, `{"b":1,"refunds":{}}`, false, ""},
		{`{}`, `{"refunds":[1]}`, true, ""},
		{`{"refunds":[]}`, `{"refunds":[]}`, false, ""},
		{`{"refunds":null}`, `{"refunds":[1,1]}`, false, "refunds"},
	} {
		ad, ok := addedOf(tc.a, tc.b)
		require.True(t, ok)
		assert.Equal(t, tc.once, ad.atMostOnce(), "%s → %s", tc.a, tc.b)
		got := ad.perRequest(2)
		if got != "" {
			got = placeName(got)
		}
		assert.Equal(t, tc.perRequest, got, "%s → %s", tc.a, tc.b)
	}
}
