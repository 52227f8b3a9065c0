package production

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"go.opentelemetry.io/otel/propagation"
)

// Receipt is the payment provider's answer to a refund.
type Receipt struct {
	ID     string `json:"id"`
	Order  string `json:"order"`
	Cents  int    `json:"cents"`
	Replay bool   `json:"replayed,omitempty"`
}

// Ledger is the payment provider's book of refunds: where the effect
// happens. It deduplicates requests that carry an idempotency key.
type Ledger struct {
	mu      sync.Mutex
	refunds []Receipt
	byKey   map[string]Receipt
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{byKey: map[string]Receipt{}} }

// Apply books a refund of cents for order. A request whose key was seen
// before gets the stored receipt back and books nothing (runtime.MarkReplayed
// tells the span so).
//
//agentidem:write identity=order name=ledger.refund
func (l *Ledger) Apply(ctx context.Context, order string, cents int, key string) (Receipt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.byKey[key]; ok && key != "" {
		runtime.MarkReplayed(ctx)
		r.Replay = true
		return r, nil
	}
	r := Receipt{ID: fmt.Sprintf("re_%d", len(l.refunds)+1), Order: order, Cents: cents}
	l.refunds = append(l.refunds, r)
	if key != "" {
		l.byKey[key] = r
	}
	return r, nil
}

// Refunds returns the refunds booked.
func (l *Ledger) Refunds() []Receipt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Receipt(nil), l.refunds...)
}

// refundRequest is the body of POST /refunds.
type refundRequest struct {
	Order string `json:"order"`
	Cents int    `json:"cents"`
}

// Handler serves POST /refunds. The first request is acknowledged late:
// the refund is booked at once, but the answer comes only after ackDelay
// (or when the client gave up), as when a response is lost on the way.
func (l *Ledger) Handler(ackDelay time.Duration) http.Handler {
	var first sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		var req refundRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec, err := l.ApplyTraced(ctx, req.Order, req.Cents, r.Header.Get("Idempotency-Key"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		first.Do(func() {
			select {
			case <-time.After(ackDelay):
			case <-r.Context().Done(): // the client gave up: its answer is lost
			}
		})
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(rec)
	})
}

// Payments is the agent's client of the payment provider.
type Payments struct {
	URL  string
	HTTP *http.Client
}

// Refund asks the provider to refund cents for order, with an idempotency
// key when key is not empty. An answer that does not arrive before ctx's
// deadline is an error: the refund may or may not have been booked.
//
//agentidem:write identity=order name=refund
func (p *Payments) Refund(ctx context.Context, order string, cents int, key string) (Receipt, error) {
	body, _ := json.Marshal(refundRequest{Order: order, Cents: cents})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/refunds", bytes.NewReader(body))
	if err != nil {
		return Receipt{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return Receipt{}, fmt.Errorf("refund %s: %w", order, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Receipt{}, fmt.Errorf("refund %s: %s", order, resp.Status)
	}
	var r Receipt
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return Receipt{}, fmt.Errorf("refund %s: %w", order, err)
	}
	return r, nil
}
