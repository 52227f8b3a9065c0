// Package realagents holds tools written the way real agents' tools are, for
// testkit's tests of verdicts: a payment API over HTTP with client
// timeouts, a work queue drained by a background worker, and a fan-out
// of dependent calls.
package realagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// PayServer is a payment API: POST /charge?order=O&cents=N books a charge,
// GET /charges lists them. With Keys it honours an Idempotency-Key header.
// With SlowFirst the first request of each order waits until its client
// gave up, then books the charge all the same: the effect lands after the
// client timed out.
type PayServer struct {
	Keys      bool
	SlowFirst bool

	mu      sync.Mutex
	charges []string
	byKey   map[string]string
	seen    map[string]bool
	keyMu   map[string]*sync.Mutex

	inflight atomic.Int64
}

// Idle waits until no charge request is in flight at the server.
func (s *PayServer) Idle(ctx context.Context) error {
	for s.inflight.Load() != 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// NewPayServer returns an empty server.
func NewPayServer() *PayServer {
	return &PayServer{byKey: map[string]string{}, seen: map[string]bool{}, keyMu: map[string]*sync.Mutex{}}
}

// Charges lists the booked charges, in order.
func (s *PayServer) Charges() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.charges...)
}

// Count is how many charges an order has.
func (s *PayServer) Count(order string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.charges {
		if c == order {
			n++
		}
	}
	return n
}

// ServeHTTP implements the API.
func (s *PayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/charges":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Charges())
	case "/charge":
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		order := r.URL.Query().Get("order")
		key := r.Header.Get("Idempotency-Key")
		s.mu.Lock()
		if s.Keys && key != "" {
			// One request per key at a time: a retry waits for the
			// request it repeats.
			km := s.keyMu[key]
			if km == nil {
				km = &sync.Mutex{}
				s.keyMu[key] = km
			}
			s.mu.Unlock()
			km.Lock()
			defer km.Unlock()
			s.mu.Lock()
		}
		slow := s.SlowFirst && !s.seen[order]
		s.seen[order] = true
		s.mu.Unlock()
		if slow {
			<-r.Context().Done() // the client gave up; the booking goes on
		}
		s.mu.Lock()
		if id, ok := s.byKey[key]; ok && s.Keys && key != "" {
			s.mu.Unlock()
			w.Header().Set("Idempotent-Replayed", "true")
			io.WriteString(w, id)
			return
		}
		s.charges = append(s.charges, order)
		id := "ch_" + strconv.Itoa(len(s.charges))
		if s.Keys && key != "" {
			s.byKey[key] = id
		}
		s.mu.Unlock()
		io.WriteString(w, id)
	default:
		http.NotFound(w, r)
	}
}

// PayClient calls a PayServer.
type PayClient struct {
	Base string
	HTTP *http.Client
}

func (c *PayClient) post(ctx context.Context, order string, cents int, key string) (string, error) {
	u := c.Base + "/charge?order=" + url.QueryEscape(order) + "&cents=" + strconv.Itoa(cents)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return "", err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("charge %s: %s", order, resp.Status)
	}
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		runtime.MarkReplayed(ctx)
	}
	return string(b), nil
}

// Charge books a charge for order, with no key.
//
//agentidem:write name=charge identity=order
func (c *PayClient) Charge(ctx context.Context, order string, cents int) (string, error) {
	return c.post(ctx, order, cents, "")
}

// ChargeKeyed books a charge for order under an Idempotency-Key derived
// from the order.
//
//agentidem:write name=chargeKeyed identity=order
func (c *PayClient) ChargeKeyed(ctx context.Context, order string, cents int) (string, error) {
	return c.post(ctx, order, cents, "charge:"+order)
}

// Ledger is an in-process sink: entries by account.
type Ledger struct {
	mu      sync.Mutex
	entries map[string][]int
	store   *idem.Store
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{entries: map[string][]int{}, store: idem.NewMemory()} }

// Snapshot returns the entries.
func (l *Ledger) Snapshot() map[string][]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]int{}
	for k, v := range l.entries {
		out[k] = append([]int{}, v...)
	}
	return out
}

func (l *Ledger) add(account string, cents int) {
	l.mu.Lock()
	l.entries[account] = append(l.entries[account], cents)
	l.mu.Unlock()
}

// Credit appends an entry to account.
//
//agentidem:write name=credit identity=account
func (l *Ledger) Credit(ctx context.Context, account string, cents int) error {
	l.add(account, cents)
	return nil
}

// CreditOnce appends an entry to account once per key, through idem.
//
//agentidem:write name=creditOnce identity=key
func (l *Ledger) CreditOnce(ctx context.Context, key, account string, cents int) error {
	_, _, err := idem.Do(ctx, l.store, idem.Key("credit", key), cents, func(ctx context.Context) (int, error) {
		l.add(account, cents)
		return cents, nil
	})
	return err
}

// Job is a unit of work for a Queue.
type Job struct {
	Ctx     context.Context
	Account string
	Cents   int
	Done    chan error
}

// Queue hands jobs to a worker that Setup starts.
type Queue struct {
	Jobs chan Job
}

// Submit hands a credit to the worker and waits for its answer.
//
//agentidem:write name=submitCredit identity=account
func (q *Queue) Submit(ctx context.Context, account string, cents int) error {
	j := Job{Ctx: ctx, Account: account, Cents: cents, Done: make(chan error, 1)}
	select {
	case q.Jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-j.Done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Invoices is a billing API where an invoice must exist before it is
// attached to an order.
type Invoices struct {
	mu       sync.Mutex
	invoices map[string]bool
	attached map[string]string
}

// NewInvoices returns an empty billing API.
func NewInvoices() *Invoices {
	return &Invoices{invoices: map[string]bool{}, attached: map[string]string{}}
}

// Snapshot is the billing state.
func (b *Invoices) Snapshot() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	inv := []string{}
	for k := range b.invoices {
		inv = append(inv, k)
	}
	sort.Strings(inv)
	att := map[string]string{}
	for k, v := range b.attached {
		att[k] = v
	}
	return map[string]any{"invoices": inv, "attached": att}
}

// ErrNoInvoice: attach before create.
var ErrNoInvoice = errors.New("no such invoice")

// Create creates invoice inv (a create that skips what exists).
//
//agentidem:write name=createInvoice identity=inv idempotent
func (b *Invoices) Create(ctx context.Context, inv string) error {
	b.mu.Lock()
	b.invoices[inv] = true
	b.mu.Unlock()
	return nil
}

// Attach attaches inv to order.
//
//agentidem:write name=attachInvoice identity=order entity=inv after=createInvoice idempotent
func (b *Invoices) Attach(ctx context.Context, order, inv string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.invoices[inv] {
		return fmt.Errorf("attach %s to %s: %w", order, inv, ErrNoInvoice)
	}
	b.attached[order] = inv
	return nil
}
