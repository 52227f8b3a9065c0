package tickets

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/agentidem/agentidem-go/idem"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Request asks for a support ticket about a dispute on a queue.
type Request struct {
	DisputeID string `json:"dispute_id"`
	Queue     string `json:"queue"`
	Summary   string `json:"summary"`
}

// Ticket is an open support ticket.
type Ticket struct {
	ID        string `json:"id"`
	DisputeID string `json:"dispute_id"`
	Queue     string `json:"queue"`
}

// Helpdesk is an in-memory ticketing system: the world the agent acts on.
// Create honours idempotency keys (the same key answers with the same
// ticket); CreateUnkeyed, the older endpoint, does not.
type Helpdesk struct {
	mu      sync.Mutex
	tickets []Ticket
	keys    *idem.Store
}

// NewHelpdesk returns an empty helpdesk.
func NewHelpdesk() *Helpdesk { return &Helpdesk{keys: idem.NewMemory()} }

// Tickets returns the open tickets, in creation order.
func (h *Helpdesk) Tickets() []Ticket {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Ticket(nil), h.tickets...)
}

// Count returns how many tickets are open for a dispute on a queue.
func (h *Helpdesk) Count(disputeID, queue string) int {
	n := 0
	for _, t := range h.Tickets() {
		if t.DisputeID == disputeID && t.Queue == queue {
			n++
		}
	}
	return n
}

// Find returns the open tickets of a dispute, sorted by id.
//
//agentidem:read name=findTickets entity=disputeID
func (h *Helpdesk) Find(ctx context.Context, disputeID string) ([]Ticket, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Ticket
	for _, t := range h.tickets {
		if t.DisputeID == disputeID {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Create opens a ticket under an idempotency key: a repeat of the key gets
// the ticket the first request opened. The key is what the helpdesk knows
// the request by, so it is the identity of the effect.
//
//agentidem:write identity=key entity=req.DisputeID name=createTicket
func (h *Helpdesk) Create(ctx context.Context, key string, req Request) (Ticket, error) {
	t, _, err := idem.Do(ctx, h.keys, key, req, func(context.Context) (Ticket, error) {
		return h.open(req), nil
	})
	return t, err
}

// CreateUnkeyed opens a ticket every time it is called.
//
//agentidem:write identity=req.DisputeID,req.Queue name=createTicketUnkeyed
func (h *Helpdesk) CreateUnkeyed(ctx context.Context, req Request) (Ticket, error) {
	return h.open(req), nil
}

// Snapshot is the helpdesk's observable state, for testkit.State: its
// tickets in the order they opened.
func (h *Helpdesk) Snapshot() any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return map[string]any{"tickets": append([]Ticket{}, h.tickets...)}
}

func (h *Helpdesk) open(req Request) Ticket {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := Ticket{ID: fmt.Sprintf("T-%d", len(h.tickets)+1), DisputeID: req.DisputeID, Queue: req.Queue}
	h.tickets = append(h.tickets, t)
	return t
}
