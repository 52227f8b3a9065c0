package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkoutService charges and mails receipts, each applied once per
// Idempotency-Key, and once per request where a request has none.
type checkoutService struct {
	mu       sync.Mutex
	keys     map[string]bool
	charges  []string
	receipts []string
}

func (s *checkoutService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		if s.keys[k] {
			return
		}
		s.keys[k] = true
	}
	switch r.URL.Path {
	case "/charges":
		s.charges = append(s.charges, r.URL.Query().Get("order"))
	case "/receipts":
		s.receipts = append(s.receipts, r.URL.Query().Get("order"))
	}
}

// A tool that sends two write requests, a keyed charge and then a
// receipt, through a helper that sends a request again when its answer
// times out: lost_response took the answer of the first only, so the
// receipt's retry was never met, and a receipt without a key, mailed
// twice, passed 5 runs of 5, the note saying the retries were met (red
// team rR #6). Each write request of the call now has its scenario: the
// second's, lost_response/checkout#1@2, finds the second receipt; the
// keyed receipt passes.
func TestLostResponseOnEachWriteRequestOfACall(t *testing.T) {
	checkout := &Op{Name: "checkout", Kind: KindWrite, Params: []string{"order"}}
	for _, keyed := range []bool{true, false} {
		svc := &checkoutService{}
		srv := httptest.NewServer(svc)
		hc := &http.Client{Transport: Transport(nil), Timeout: 200 * time.Millisecond}
		send := func(ctx context.Context, path, key string) error {
			var err error
			for range 3 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path+"?order=o-1", nil)
				if key != "" {
					req.Header.Set("Idempotency-Key", key)
				}
				var resp *http.Response
				if resp, err = hc.Do(req); err == nil {
					return resp.Body.Close()
				}
			}
			return err
		}
		agent := func(ctx context.Context) error {
			return traced(ctx, checkout, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
				if err := send(ctx, "/charges", "charge-o-1"); err != nil {
					return err
				}
				key := ""
				if keyed {
					key = "receipt-o-1"
				}
				return send(ctx, "/receipts", key)
			})
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error {
				svc.mu.Lock()
				svc.keys, svc.charges, svc.receipts = map[string]bool{}, nil, nil
				svc.mu.Unlock()
				return nil
			}),
			State(func() any {
				svc.mu.Lock()
				defer svc.mu.Unlock()
				return map[string]any{"charges": slices.Clone(svc.charges), "receipts": slices.Clone(svc.receipts)}
			}))
		srv.Close()
		require.NoError(t, err)
		var names []string
		for _, r := range rep.Results {
			if strings.HasPrefix(r.Scenario, "lost_response/") {
				names = append(names, r.Scenario)
			}
		}
		assert.Equal(t, []string{"lost_response/checkout#1", "lost_response/checkout#1@2"}, names)
		r := resultOf(t, rep, "lost_response/checkout#1@2")
		require.True(t, r.FaultFired, "notes: %v", r.Trace.Notes)
		if keyed {
			for _, r := range rep.Results {
				assert.Empty(t, r.Findings, "%s", r.Scenario)
				assert.False(t, r.Inconclusive, "%s: %q", r.Scenario, r.Trace.Notes)
			}
			continue
		}
		assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "the receipt mailed twice: findings %v; notes %v", r.Findings, r.Trace.Notes)
		assert.Empty(t, resultOf(t, rep, "lost_response/checkout#1").Findings, "the keyed charge")
	}
}
