// Package shop is an agent of real shape: its tools call an HTTP service.
// Two price quotes are read in parallel, then one order is placed. The
// service (an httptest server in the tests, the shape of any order API)
// honours an Idempotency-Key header: a repeat with a key it has seen is
// answered from the stored order and marked Idempotent-Replayed.
//
//   - NaiveAgent retries the order on any error without a key: a lost
//     acknowledgement, a crash after the order, or a redelivered
//     invocation places a second order (duplicate_write).
//   - KeyedAgent sends a key derived from the work (customer and cart): the
//     service answers a repeat from the stored order, which the tool reports
//     with runtime.MarkReplayed; it is safe under every scenario and
//     schedule.
//
// The tools use net/http with the client they are given: http.DefaultClient
// or a keep-alive transport of their own. Every scenario and schedule runs on
// real time (see testkit.VirtualTime for why a synctest bubble cannot host
// network I/O).
package shop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Order is a placed order as the service stores it.
type Order struct {
	ID       string   `json:"id"`
	Customer string   `json:"customer"`
	Items    []string `json:"items"`
	Total    int      `json:"total"`
}

// Service is the order API: quotes and orders, with idempotency keys.
type Service struct {
	mu     sync.Mutex
	prices map[string]int
	orders []Order
	byKey  map[string]Order
}

// NewService returns a service selling the given SKUs at the given prices
// (in cents).
func NewService(prices map[string]int) *Service {
	s := &Service{prices: map[string]int{}}
	for k, v := range prices {
		s.prices[k] = v
	}
	s.Reset()
	return s
}

// Reset forgets every order and key: a fresh world.
func (s *Service) Reset() {
	s.mu.Lock()
	s.orders = nil
	s.byKey = map[string]Order{}
	s.mu.Unlock()
}

// Orders returns the orders placed so far.
func (s *Service) Orders() []Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Order(nil), s.orders...)
}

// ServeHTTP implements GET /quote?sku=X and POST /orders.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/quote":
		sku := r.URL.Query().Get("sku")
		s.mu.Lock()
		price, ok := s.prices[sku]
		s.mu.Unlock()
		if !ok {
			http.Error(w, "no such sku "+strconv.Quote(sku), http.StatusNotFound)
			return
		}
		writeJSON(w, http.StatusOK, Quote{SKU: sku, Price: price})
	case r.Method == http.MethodPost && r.URL.Path == "/orders":
		var req OrderRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad order: "+err.Error(), http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		s.mu.Lock()
		if o, ok := s.byKey[key]; ok && key != "" {
			s.mu.Unlock()
			w.Header().Set("Idempotent-Replayed", "true")
			writeJSON(w, http.StatusOK, o)
			return
		}
		o := Order{ID: fmt.Sprintf("ord_%d", len(s.orders)+1), Customer: req.Customer, Items: req.Items, Total: req.Total}
		s.orders = append(s.orders, o)
		if key != "" {
			s.byKey[key] = o
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, o)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// cartKey is the idempotency key of one customer's cart: derived from the
// work, so every retry and every redelivery sends the same one.
func cartKey(customer string, items []string) string {
	sorted := append([]string(nil), items...)
	sort.Strings(sorted)
	return "order:" + customer + ":" + strings.Join(sorted, ",")
}
