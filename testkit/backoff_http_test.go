package testkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// flakyPay books charges; the first request for each order fails with 503
// before booking anything (a cold cache), and with keys it honours an
// Idempotency-Key.
type flakyPay struct {
	keys bool

	mu      sync.Mutex
	charges []string
	tried   map[string]bool
	byKey   map[string]bool
}

func (s *flakyPay) reset() {
	s.mu.Lock()
	s.charges, s.tried, s.byKey = nil, map[string]bool{}, map[string]bool{}
	s.mu.Unlock()
}

func (s *flakyPay) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.charges)
}

func (s *flakyPay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	order := r.URL.Query().Get("order")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tried[order] {
		s.tried[order] = true
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if k := r.Header.Get("Idempotency-Key"); s.keys && k != "" {
		if s.byKey[k] {
			fmt.Fprint(w, "replayed")
			return
		}
		s.byKey[k] = true
	}
	s.charges = append(s.charges, order)
	fmt.Fprint(w, "charged")
}

var chargeOp = &runtime.Op{Name: "charge", Kind: runtime.KindWrite, Params: []string{"order"}}

// chargeWithBackoff posts a charge and retries 503s with exponential
// backoff (time.After, or the context's end), as client libraries do.
func chargeWithBackoff(ctx context.Context, url, order string) error {
	return tracedCall(ctx, chargeOp, []any{order}, []any{order}, nil, func(ctx context.Context) error {
		delay := time.Millisecond
		for attempt := 0; ; attempt++ {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/charge?order="+order, nil)
			if err != nil {
				return err
			}
			req.Header.Set("Idempotency-Key", "charge:"+order)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			if resp.StatusCode != http.StatusServiceUnavailable || attempt == 4 {
				return fmt.Errorf("charge %s: %s", order, resp.Status)
			}
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return ctx.Err()
			}
			delay *= 2
		}
	})
}

// A tool that retries a flaky payment API with backoff inside its body:
// the agent retries the tool on error too. Without the server honouring
// the key every fault that loses the answer charges twice; with it the
// suite finds nothing, on every run.
func TestToolWithInternalBackoffVerdicts(t *testing.T) {
	for _, c := range []struct {
		name string
		keys bool
	}{{"naive", false}, {"keyed", true}} {
		t.Run(c.name, func(t *testing.T) {
			pay := &flakyPay{keys: c.keys}
			srv := httptest.NewServer(pay)
			defer srv.Close()
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, order := range []string{"o1", "o2"} {
					wg.Go(func() {
						if errs[i] = chargeWithBackoff(ctx, srv.URL, order); errs[i] != nil {
							errs[i] = chargeWithBackoff(ctx, srv.URL, order)
						}
					})
				}
				wg.Wait()
				return errorsJoin(errs)
			}
			opts := func() []testkit.Option {
				return []testkit.Option{
					testkit.Setup(func(context.Context) error { pay.reset(); return nil }),
					testkit.State(pay.snapshot),
				}
			}
			var want []string
			if !c.keys {
				want = []string{runtime.CodeDuplicateWrite}
			}
			rep := stable(t, 3, agent, opts, want...)
			if c.keys {
				return
			}
			// Every scenario that loses an answer or delivers twice shows it.
			got := verdictOf(rep)
			for _, sc := range []string{"lost_acknowledgement/charge#1", "crash_restart/charge#1", "duplicate_delivery/sequential", "duplicate_delivery/concurrent"} {
				if !containsLine(got, sc+" "+runtime.CodeDuplicateWrite) {
					t.Errorf("no duplicate_write in %s:\n%s", sc, got)
				}
			}
		})
	}
}

func errorsJoin(errs []error) error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return fmt.Errorf("%v", out)
}

func containsLine(s, line string) bool {
	return slices.Contains(strings.Split(s, "\n"), line)
}
