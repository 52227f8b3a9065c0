// Package tickets is the support-ticket story: a customer disputes a
// charge, and the agent must open exactly one ticket for the dispute on the
// "disputes" queue, however often it is retried or redelivered.
//
//   - FreshKeyAgent retries with a new random idempotency key per attempt,
//     so the helpdesk cannot recognise the retry: identity_unstable, and a
//     second ticket.
//   - CheckThenCreateAgent looks for an existing ticket and creates one if
//     there is none, through the unkeyed endpoint: fine one at a time, but
//     two deliveries at once both see none and both create
//     (duplicate_write under duplicate_delivery/concurrent).
//   - Agent derives the key from the work (dispute and queue) and retries
//     with it: exactly one ticket under every scenario.
//
// The ticket-worker story (worker.go) moves the create behind a background
// Worker: Submit answers "accepted" at once and the ticket opens later,
// announced with its queue and session. ResubmitAgent takes a slow worker
// for a lost request and submits again (two tickets arrive, caught by
// testkit.ExactlyOne), MisroutedAgent files on the general queue (caught
// by the OnQueue routing guard), and AsyncAgent resubmits under a derived
// key (one ticket, then testkit.Quiet passes). Its tests run on a
// testing/synctest bubble's virtual clock.
package tickets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

// Queue is where dispute tickets go.
const Queue = "disputes"

const attempts = 3

func request(disputeID string) Request {
	return Request{DisputeID: disputeID, Queue: Queue, Summary: "customer disputes a charge"}
}

// Agent opens the dispute's ticket under a key derived from the work.
type Agent struct{ Desk *Helpdesk }

// Run opens one ticket for the dispute, retrying on timeouts.
func (a *Agent) Run(ctx context.Context, disputeID string) (Ticket, error) {
	key := idem.Key("dispute-ticket", disputeID, Queue)
	return retry(func() (Ticket, error) { return a.Desk.CreateTraced(ctx, key, request(disputeID)) })
}

// FreshKeyAgent makes a new random key for every attempt.
type FreshKeyAgent struct{ Desk *Helpdesk }

// Run opens a ticket, retrying on timeouts with a fresh key each time.
//
//agentidem:ignore seeded bug: the fault suite must catch it (TestFreshKeyAgentIsCaught)
func (a *FreshKeyAgent) Run(ctx context.Context, disputeID string) (Ticket, error) {
	return retry(func() (Ticket, error) {
		return a.Desk.CreateTraced(ctx, randomKey(), request(disputeID))
	})
}

// CheckThenCreateAgent creates a ticket only if it finds none.
type CheckThenCreateAgent struct{ Desk *Helpdesk }

// Run looks for the dispute's ticket and opens one if there is none.
//
//agentidem:ignore seeded bug: the fault suite must catch it (TestCheckThenCreateAgentIsCaughtByConcurrentDelivery)
func (a *CheckThenCreateAgent) Run(ctx context.Context, disputeID string) (Ticket, error) {
	found, err := a.Desk.FindTraced(ctx, disputeID)
	if err != nil {
		return Ticket{}, err
	}
	for _, t := range found {
		if t.Queue == Queue {
			return t, nil
		}
	}
	return a.Desk.CreateUnkeyedTraced(ctx, request(disputeID))
}

func retry(call func() (Ticket, error)) (Ticket, error) {
	var last error
	for i := 0; i < attempts; i++ {
		t, err := call()
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, runtime.ErrInjected) && !errors.Is(err, context.DeadlineExceeded) {
			return Ticket{}, err
		}
		last = err
	}
	return Ticket{}, last
}

func randomKey() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
