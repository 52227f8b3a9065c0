package tickets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentidem/agentidem-go/idem"
)

// The ticket-worker story: the helpdesk's newer front end does not open a
// ticket while the agent waits. Submit answers "accepted" at once and a
// background worker opens the ticket later, then announces it on the
// ticket's queue with the session that asked for it. The agent cannot see
// the effect in the tool's answer, only in what arrives later.

// Receipt is what Worker.Submit answers: the request was accepted, not done.
type Receipt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Submission statuses, as Worker.Status reports them.
const (
	StatusAccepted = "accepted"
	StatusOpened   = "opened"
)

// Opened is the worker's announcement that it opened a ticket.
type Opened struct {
	Session   string
	Queue     string
	DisputeID string
	TicketID  string
}

// Worker is an asynchronous helpdesk front: Submit queues a request and a
// background goroutine opens the tickets one at a time, Delay after it
// takes each up, and calls Notify for every ticket it newly opened. A
// keyed request goes through Helpdesk.Create, so a repeat of the key opens
// nothing new and is not announced again; an unkeyed one goes through
// CreateUnkeyed and always opens a ticket. Close stops the worker.
type Worker struct {
	desk   *Helpdesk
	delay  time.Duration
	notify func(Opened)

	jobs chan job
	done chan struct{}
	wg   sync.WaitGroup

	mu        sync.Mutex
	n         int
	status    map[string]string
	announced map[string]bool
}

type job struct {
	receipt string
	session string
	key     string
	req     Request
}

// ErrQueueFull is returned by Submit when the worker's queue is full.
var ErrQueueFull = errors.New("helpdesk queue is full")

const queueSize = 64

// NewWorker starts a worker that opens tickets on desk, delay after taking
// each request up, and announces them to notify (which may be nil).
func NewWorker(desk *Helpdesk, delay time.Duration, notify func(Opened)) *Worker {
	w := &Worker{
		desk:      desk,
		delay:     delay,
		notify:    notify,
		jobs:      make(chan job, queueSize),
		done:      make(chan struct{}),
		status:    map[string]string{},
		announced: map[string]bool{},
	}
	w.wg.Go(w.run)
	return w
}

// Submit queues a ticket request for session and answers at once with an
// accepted receipt. key is the idempotency key; "" uses the unkeyed
// endpoint. Its effect, the ticket, lands later: the fault suite judges it
// by the helpdesk's state once the worker went quiet (testkit.State with
// testkit.SettleOn).
//
//agentidem:write identity=req.DisputeID,req.Queue entity=req.DisputeID name=submitTicket
func (w *Worker) Submit(ctx context.Context, session, key string, req Request) (Receipt, error) {
	if err := ctx.Err(); err != nil {
		return Receipt{}, fmt.Errorf("submitting ticket for %s: %w", req.DisputeID, err)
	}
	w.mu.Lock()
	w.n++
	r := Receipt{ID: fmt.Sprintf("R-%d", w.n), Status: StatusAccepted}
	w.status[r.ID] = StatusAccepted
	w.mu.Unlock()
	select {
	case w.jobs <- job{receipt: r.ID, session: session, key: key, req: req}:
		return r, nil
	default:
		return Receipt{}, fmt.Errorf("submitting ticket for %s: %w", req.DisputeID, ErrQueueFull)
	}
}

// Status reports what became of a receipt: StatusAccepted until the worker
// opened its ticket, then StatusOpened; "" for an unknown receipt.
func (w *Worker) Status(receipt string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status[receipt]
}

// Close stops the worker and waits for it; requests still queued are
// dropped.
func (w *Worker) Close() {
	close(w.done)
	w.wg.Wait()
}

func (w *Worker) run() {
	for {
		select {
		case <-w.done:
			return
		case j := <-w.jobs:
			timer := time.NewTimer(w.delay)
			select {
			case <-w.done:
				timer.Stop()
				return
			case <-timer.C:
			}
			w.open(j)
		}
	}
}

// open opens the job's ticket: the request's context is long gone, so the
// worker works on its own, carrying the session along for attribution.
func (w *Worker) open(j job) {
	ctx := context.Background()
	var t Ticket
	var err error
	if j.key == "" {
		t, err = w.desk.CreateUnkeyed(ctx, j.req)
	} else {
		t, err = w.desk.Create(ctx, j.key, j.req)
	}
	if err != nil {
		return // the receipt stays accepted: the request never became a ticket
	}
	w.mu.Lock()
	w.status[j.receipt] = StatusOpened
	fresh := !w.announced[t.ID]
	w.announced[t.ID] = true
	w.mu.Unlock()
	if fresh && w.notify != nil {
		w.notify(Opened{Session: j.session, Queue: t.Queue, DisputeID: t.DisputeID, TicketID: t.ID})
	}
}

// Patience is how long the async agents wait for their ticket to open
// before they consider the submission timed out, and Every how often they
// look. The worker may well take longer: that is the story.
const (
	Patience = 30 * time.Millisecond
	Every    = 10 * time.Millisecond
)

// awaitOpened polls the receipt until it is opened or Patience ran out.
func awaitOpened(ctx context.Context, w *Worker, receipt string) (bool, error) {
	deadline := time.Now().Add(Patience)
	for {
		if w.Status(receipt) == StatusOpened {
			return true, nil
		}
		if !time.Now().Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(Every):
		}
	}
}

// ResubmitAgent submits the dispute's ticket without a key and, when it is
// not open within Patience, takes that for a lost request and submits it
// again. Both submissions were accepted: two tickets open later.
type ResubmitAgent struct {
	Worker  *Worker
	Session string
}

// Run submits the dispute's ticket and resubmits it once on a timeout.
func (a *ResubmitAgent) Run(ctx context.Context, disputeID string) (Receipt, error) {
	r, err := a.Worker.SubmitTraced(ctx, a.Session, "", request(disputeID))
	if err != nil {
		return Receipt{}, err
	}
	ok, err := awaitOpened(ctx, a.Worker, r.ID)
	if err != nil || ok {
		return r, err
	}
	return a.Worker.SubmitTraced(ctx, a.Session, "", request(disputeID))
}

// MisroutedAgent files the dispute on the general queue, where nobody
// handles disputes: one ticket, on the wrong queue.
type MisroutedAgent struct {
	Worker  *Worker
	Session string
}

// Run submits the dispute's ticket to the general queue.
func (a *MisroutedAgent) Run(ctx context.Context, disputeID string) (Receipt, error) {
	req := request(disputeID)
	req.Queue = "general"
	return a.Worker.SubmitTraced(ctx, a.Session, idem.Key("dispute-ticket", disputeID, req.Queue), req)
}

// AsyncAgent submits the dispute's ticket to the disputes queue under a
// key derived from the work and, on a timeout, submits it again under the
// same key: the helpdesk recognises the repeat, so exactly one ticket
// opens however impatient the agent is.
type AsyncAgent struct {
	Worker  *Worker
	Session string
}

// Run submits the dispute's ticket, resubmitting it under the same key on
// a timeout.
func (a *AsyncAgent) Run(ctx context.Context, disputeID string) (Receipt, error) {
	key := idem.Key("dispute-ticket", disputeID, Queue)
	r, err := a.Worker.SubmitTraced(ctx, a.Session, key, request(disputeID))
	if err != nil {
		return Receipt{}, err
	}
	ok, err := awaitOpened(ctx, a.Worker, r.ID)
	if err != nil || ok {
		return r, err
	}
	return a.Worker.SubmitTraced(ctx, a.Session, key, request(disputeID))
}
