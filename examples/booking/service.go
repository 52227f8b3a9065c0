// Package booking is an agent whose retry looks at the error: it books a
// seat on a flight over HTTP and retries only on the errors a real lost
// answer gives its client, as many HTTP clients do. The agents come from a
// red team's report (rtK): both were reported SAFE, 10 runs of 10, while
// against a real loss they booked twice on every run.
//
//   - TransportRetryAgent retries on a transport failure only (a
//     *url.Error: a timeout, a connection reset), with no key.
//   - StatusRetryAgent retries on a 502, 503 or 504 only (a gateway that
//     timed out after the booking: a *StatusError), with no key.
//   - KeyedAgent retries as either, with an idempotency key derived from
//     the work: the service answers a repeat from the stored booking.
//
// Each checks for an existing booking first, under a process lock, so two
// deliveries of one request never race the check: only the retry can book
// twice. An injected fault is a *runtime.InjectedError, which is neither a
// *url.Error nor a status error, so without testkit.FaultError the naive
// agents never retry under test; the report then says that no injected
// fault was retried (Report.Notes). With FaultError giving the errors they
// look for, the suite catches them and passes the keyed ones.
package booking

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// Booking is a seat booked on a flight.
type Booking struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Flight   string `json:"flight"`
}

// Service is the booking API: POST /bookings books a seat, GET /bookings
// lists a customer's bookings on a flight. A POST with an Idempotency-Key
// header it has seen is answered from the stored booking, marked
// Idempotent-Replayed.
type Service struct {
	mu       sync.Mutex
	bookings []Booking
	keys     map[string]Booking
}

// NewService returns an empty booking API.
func NewService() *Service { return &Service{keys: map[string]Booking{}} }

// Count returns how many seats customer holds on flight.
func (s *Service) Count(customer, flight string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.bookings {
		if b.Customer == customer && b.Flight == flight {
			n++
		}
	}
	return n
}

// ServeHTTP serves the API.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/bookings" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		var b Booking
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		s.mu.Lock()
		if old, ok := s.keys[key]; ok && key != "" {
			s.mu.Unlock()
			w.Header().Set("Idempotent-Replayed", "true")
			json.NewEncoder(w).Encode(old)
			return
		}
		b.ID = "B" + strconv.Itoa(len(s.bookings)+1)
		s.bookings = append(s.bookings, b)
		if key != "" {
			s.keys[key] = b
		}
		s.mu.Unlock()
		json.NewEncoder(w).Encode(b)
	case http.MethodGet:
		customer, flight := r.URL.Query().Get("customer"), r.URL.Query().Get("flight")
		out := []Booking{}
		s.mu.Lock()
		for _, b := range s.bookings {
			if b.Customer == customer && b.Flight == flight {
				out = append(out, b)
			}
		}
		s.mu.Unlock()
		json.NewEncoder(w).Encode(out)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
