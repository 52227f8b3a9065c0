package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// A red team's agent (rtX #5) charges through a tool that gives its
// request 50 ms (context.WithTimeout), against a payment service that
// applies the first charge at once and answers it after 150 ms (a cold
// start), and answers 409 "idempotency_key_in_use" to a request whose key
// is still in flight. The agent retries on a timeout and on 409, after a
// back-off. Whether its second charge meets the first in flight (409) or
// its stored answer depends on the timing, which the gates change: in the
// baseline charge#2 succeeded, in the fault scenarios it got 409 and
// charge#3 succeeded, and lost_acknowledgement/charge#2 and
// crash_restart/charge#2 were inconclusive on every run ("did not fire:
// charge failed by itself (409 conflict)"). A fault that follows a
// success now moves to the first later call of the op with the same
// identity in the delivery that succeeds, and the keyed agent is safe.

var opSlowCharge = &Op{Name: "charge", Kind: KindWrite, Params: []string{"order", "amount"}, Pos: "movedfault_test.go:1"}

var errInFlight = errors.New("409 conflict")

// coldPay is the payment service: the first request after reset answers
// after cold; with an Idempotency-Key, a key answered before gets the
// stored answer, a key in flight gets 409.
type coldPay struct {
	cold     time.Duration
	mu       sync.Mutex
	charges  map[string]int
	keys     map[string][]byte
	inflight map[string]bool
	warm     bool
}

func (s *coldPay) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charges, s.keys, s.inflight, s.warm = map[string]int{}, map[string][]byte{}, map[string]bool{}, false
}

func (s *coldPay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Order  string `json:"order"`
		Amount int    `json:"amount"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	if key != "" {
		if b, ok := s.keys[key]; ok {
			s.mu.Unlock()
			w.Write(b)
			return
		}
		if s.inflight[key] {
			s.mu.Unlock()
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error":"idempotency_key_in_use"}`)
			return
		}
		s.inflight[key] = true
	}
	s.charges[in.Order] += in.Amount
	slow := !s.warm
	s.warm = true
	b := fmt.Appendf(nil, `{"order":%q,"charged":%d}`, in.Order, in.Amount)
	s.mu.Unlock()
	if slow {
		time.Sleep(s.cold)
	}
	s.mu.Lock()
	if key != "" {
		s.keys[key] = b
		delete(s.inflight, key)
	}
	s.mu.Unlock()
	w.Write(b)
}

func (s *coldPay) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for k, v := range s.charges {
		m[k] = v
	}
	return m
}

// coldPayAgent charges order once, retrying a charge that timed out or
// got 409, up to five times; keyed sends an Idempotency-Key.
func coldPayAgent(base *string, keyed bool) func(context.Context) error {
	charge := func(ctx context.Context) error {
		return traced(ctx, opSlowCharge, []any{"ORD-5", 4200}, []any{"ORD-5"}, func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			body, _ := json.Marshal(map[string]any{"order": "ORD-5", "amount": 4200})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, *base+"/charges", bytes.NewReader(body))
			if err != nil {
				return err
			}
			if keyed {
				req.Header.Set("Idempotency-Key", "charge-ORD-5")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			switch {
			case resp.StatusCode == http.StatusConflict:
				return errInFlight
			case resp.StatusCode >= 300:
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		})
	}
	return func(ctx context.Context) error {
		var err error
		for i := range 5 {
			if err = charge(ctx); err == nil {
				return nil
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errInFlight) {
				return err
			}
			time.Sleep(time.Duration(i+1) * 40 * time.Millisecond)
		}
		return err
	}
}

func runColdPay(t *testing.T, keyed bool, only string) *Report {
	t.Helper()
	svc := &coldPay{cold: 150 * time.Millisecond}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	base := srv.URL
	opts := []Option{Setup(func(context.Context) error { svc.reset(); return nil }), State(svc.snapshot)}
	if only != "" {
		opts = append(opts, OnlyScenario(only))
	}
	rep, err := Run(context.Background(), "slow_pay", coldPayAgent(&base, keyed), opts...)
	require.NoError(t, err)
	return rep
}

// The keyed agent is safe: the lost acknowledgement and the crash planned
// on charge#2 fall on the call that succeeds, whichever that is.
func TestFaultAfterSuccessMovesToTheRetryThatSucceeds(t *testing.T) {
	for range 2 {
		rep := runColdPay(t, true, "")
		require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
		for _, r := range rep.Results {
			assert.True(t, r.Safe, "%s: %v", r.Scenario, r.Findings)
			assert.False(t, r.Inconclusive, "%s: %v", r.Scenario, r.Findings)
			assert.NotContains(t, resultCodes(r), CodeFaultNotTriggered, r.Scenario)
			assert.True(t, r.FaultFired || r.Fault == nil, "%s: fired", r.Scenario)
			if r.Fault == nil || (r.Fault.Kind != FaultLostAck && r.Fault.Kind != FaultCrash) {
				continue
			}
			// Where the planned call failed by itself, the trace says
			// which call the fault fell on.
			for _, o := range r.Trace.Ops {
				if o.Fault != FaultNone && o.Occurrence != r.Fault.Occurrence {
					assert.Contains(t, strings.Join(r.Trace.Notes, "\n"), fmt.Sprintf("planned on 1:charge#%d fell on %s", r.Fault.Occurrence, o.ID), r.Scenario)
				}
			}
		}
	}
}

// The twin: without the key the agent charges twice (the first charge
// lands after its 50 ms ran out, and the retry charges again).
func TestFaultAfterSuccessMovedUnkeyedStillUnsafe(t *testing.T) {
	rep := runColdPay(t, false, "")
	assert.False(t, rep.Safe)
	var codes []string
	for _, r := range rep.Results {
		codes = append(codes, resultCodes(r)...)
	}
	assert.Contains(t, codes, CodeDuplicateWrite)
}
