package cbcops

import (
	"context"
	"errors"

	"billing"

	"golang.org/x/sync/singleflight"

	"github.com/agentidem/agentidem-go/idem"
)

func findThenCreate(ctx context.Context, key string) (*billing.Ticket, error) {
	t, err := billing.FindTicketTraced(ctx, key)
	if errors.Is(err, billing.ErrNotFound) {
		return billing.CreateTicketTraced(ctx, key, "printer on fire") // want `CreateTicket after FindTicket on the same key races: .* enforce a unique idempotency key at the sink`
	}
	return t, err
}

func earlyReturnWhenFound(ctx context.Context, key string) (*billing.Ticket, error) {
	if t, ok := billing.LookupTicketTraced(key); ok {
		return &t, nil
	}
	return billing.CreateTicketTraced(ctx, key, "printer on fire") // want `CreateTicket after LookupTicket on the same key races`
}

func nilMeansAbsent(ctx context.Context, key string) error {
	t, _ := billing.FindTicketTraced(ctx, key)
	if t == nil {
		_, err := billing.CreateTicketTraced(ctx, key, "x") // want `CreateTicket after FindTicket`
		return err
	}
	return nil
}

// The create runs only when the ticket was found: not a check-before-create.
func createWhenFound(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return errors.New("no such ticket")
	}
	_, err := billing.CreateTicketTraced(ctx, key, "follow-up")
	return err
}

// A different key: the check guards nothing about the created ticket.
func otherKey(ctx context.Context, key, other string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		_, err := billing.CreateTicketTraced(ctx, other, "x")
		return err
	}
	return nil
}

// No check: the create relies on its identity alone.
func createOnly(ctx context.Context, key string) error {
	_, err := billing.CreateTicketTraced(ctx, key, "x")
	return err
}

// Subscribe deduplicates at its sink (INSERT ... ON CONFLICT DO NOTHING).
func idempotentSink(ctx context.Context, email string) error {
	if _, ok := billing.LookupTicketTraced(email); !ok {
		return billing.SubscribeTraced(ctx, email)
	}
	return nil
}

// So does SubscribeConst, its query in a constant.
func idempotentSinkConst(ctx context.Context, email string) error {
	if _, ok := billing.LookupTicketTraced(email); !ok {
		return billing.SubscribeConstTraced(ctx, email)
	}
	return nil
}

// SubscribeViaStore's body returns a store's InsertIfAbsent, in another
// package (ON CONFLICT DO NOTHING), and SubscribeViaHelper's a helper of
// its package running a constant query with ON CONFLICT: both idempotent
// at the sink (a red team's false positives). SubscribePlainViaStore's
// store runs a plain INSERT.
func idempotentSinkThroughHelpers(ctx context.Context, email string) error {
	if _, ok := billing.LookupTicketTraced(email); !ok {
		if err := billing.SubscribeViaStoreTraced(ctx, email); err != nil {
			return err
		}
		return billing.SubscribeViaHelperTraced(ctx, email)
	}
	return nil
}

func plainSinkThroughAStore(ctx context.Context, email string) error {
	if _, ok := billing.LookupTicketTraced(email); !ok {
		return billing.SubscribePlainViaStoreTraced(ctx, email) // want `SubscribePlainViaStore after LookupTicket on the same key races`
	}
	return nil
}

// A guard that joins the error check and the presence flag: without an
// error and without the ticket, the create runs (a red team's miss: no
// error was taken for a ticket found). Not where the flag is negated: the
// create runs only on a ticket found.
func joinedGuard(ctx context.Context, key string) error {
	exists, err := billing.TicketExistsTraced(ctx, key)
	if err != nil || exists {
		return err
	}
	_, err = billing.CreateTicketTraced(ctx, key, "x") // want `CreateTicket after TicketExists on the same key races`
	return err
}

func joinedGuardReversed(ctx context.Context, key string) error {
	exists, err := billing.TicketExistsTraced(ctx, key)
	if exists || err != nil {
		return err
	}
	_, err = billing.CreateTicketTraced(ctx, key, "x") // want `CreateTicket after TicketExists on the same key races`
	return err
}

func joinedGuardOnFound(ctx context.Context, key string) error {
	exists, err := billing.TicketExistsTraced(ctx, key)
	if err != nil || !exists {
		return err
	}
	_, err = billing.CreateTicketTraced(ctx, key, "follow-up")
	return err
}

// A channel semaphore held across the check and the create serializes the
// deliveries of the process, as a Lock does, which is not reported either;
// a send of an event before the check is no semaphore.
var sem = make(chan struct{}, 1)

func underASemaphore(ctx context.Context, key string) error {
	sem <- struct{}{}
	defer func() { <-sem }()
	if _, ok := billing.LookupTicketTraced(key); ok {
		return nil
	}
	_, err := billing.CreateTicketTraced(ctx, key, "x")
	return err
}

var events = make(chan string, 16)

func afterAnEventSent(ctx context.Context, key string) error {
	events <- key
	if _, ok := billing.LookupTicketTraced(key); ok {
		return nil
	}
	_, err := billing.CreateTicketTraced(ctx, key, "x") // want `CreateTicket after LookupTicket on the same key races`
	return err
}

// singleflight joins the deliveries of one key in the process to the one
// in flight.
var flights singleflight.Group

func inASingleflight(ctx context.Context, key string) error {
	_, err, _ := flights.Do(key, func() (any, error) {
		if _, ok := billing.LookupTicketTraced(key); ok {
			return nil, nil
		}
		return billing.CreateTicketTraced(ctx, key, "x")
	})
	return err
}

// The ops are methods of a generic type, called on an instance.
func genericMethods(ctx context.Context, b *billing.Box[int], key string) error {
	if _, ok := b.GetTraced(ctx, key); !ok {
		return b.SetTraced(ctx, key, 1) // want `Box.Set after Box.Get on the same key races`
	}
	return nil
}

//agentidem:ignore tickets are created by one worker only
func ignored(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		_, err := billing.CreateTicketTraced(ctx, key, "x")
		return err
	}
	return nil
}

//agentidem:read entity=customer
func listTickets(customer string) []billing.Ticket { return nil }

//agentidem:write identity=req.Customer,req.Title entity=req.Customer
func openTicket(req request) error { return nil }

func openTicketTraced(req request) error { return openTicket(req) }

func listTicketsTraced(customer string) []billing.Ticket { return listTickets(customer) }

type request struct{ Customer, Title string }

func newRequest(customer string) request { return request{Customer: customer, Title: "refund"} }

// The found ticket is returned from the loop: after it, none matched.
func loopThenCreate(customer string) (billing.Ticket, error) {
	for _, t := range listTicketsTraced(customer) {
		if t.Key == "refund" {
			return t, nil
		}
	}
	return billing.Ticket{}, openTicketTraced(newRequest(customer)) // want `openTicket after listTickets on the same key races`
}

// The loop validates and returns an error, not what it found.
func loopValidates(customer string) error {
	for _, t := range listTicketsTraced(customer) {
		if t.ID == "" {
			return errors.New("bad ticket")
		}
	}
	return openTicketTraced(newRequest(customer))
}

// EnsureTicket is declared idempotent: the check before it races nothing.
func declaredIdempotent(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		_, err := billing.EnsureTicketTraced(ctx, key, "x")
		return err
	}
	return nil
}

// Guards that test something other than whether the thing exists.

type account struct {
	ID      string
	Balance int64
}

//agentidem:read
func getAccount(id string) (*account, error) { return nil, nil }

func getAccountTraced(id string) (*account, error) { return getAccount(id) }

//agentidem:write identity=id
func topUp(id string, cents int64) error { return nil }

func topUpTraced(id string, cents int64) error { return topUp(id, cents) }

//agentidem:read
func isBlocked(orderID string) (bool, error) { return false, nil }

func isBlockedTraced(orderID string) (bool, error) { return isBlocked(orderID) }

//agentidem:read
func isKnownCustomer(email string) (bool, error) { return false, nil }

func isKnownCustomerTraced(email string) (bool, error) { return isKnownCustomer(email) }

//agentidem:write identity=orderID
func refund(orderID string, cents int64) error { return nil }

func refundTraced(orderID string, cents int64) error { return refund(orderID, cents) }

//agentidem:write identity=email
func registerCustomer(email string) error { return nil }

func registerCustomerTraced(email string) error { return registerCustomer(email) }

// A balance of zero is a value of the account, not its absence: dropping
// the check would top up every account.
func topUpWhenEmpty(id string) error {
	acct, err := getAccountTraced(id)
	if err != nil {
		return err
	}
	if acct.Balance == 0 {
		return topUpTraced(id, 1000)
	}
	return nil
}

func topUpWhenPositive(id string) error {
	acct, err := getAccountTraced(id)
	if err != nil {
		return err
	}
	if acct.Balance > 0 {
		return nil
	}
	return topUpTraced(id, 1000)
}

// An account read as nil, or with no ID, is absent.
func topUpWhenMissing(id string) error {
	acct, _ := getAccountTraced(id)
	if acct == nil {
		return topUpTraced(id, 1000) // want `topUp after getAccount on the same key races`
	}
	if acct.ID == "" {
		return topUpTraced(id, 1000) // want `topUp after getAccount on the same key races`
	}
	return nil
}

// A fraud flag guards the refund: it is no check that the refund exists.
func refundUnlessBlocked(orderID string) error {
	blocked, err := isBlockedTraced(orderID)
	if err != nil {
		return err
	}
	if !blocked {
		return refundTraced(orderID, 500)
	}
	return nil
}

// A flag whose name says the customer is there: an existence check ("known"
// holds "no", which is no negation).
func registerUnlessKnown(email string) error {
	known, err := isKnownCustomerTraced(email)
	if err != nil {
		return err
	}
	if !known {
		return registerCustomerTraced(email) // want `registerCustomer after isKnownCustomer on the same key races`
	}
	return nil
}

// A flag of a neutral name, from a read whose name says existence.
func registerUnlessKnownByOp(email string) error {
	v, err := isKnownCustomerTraced(email)
	if err != nil {
		return err
	}
	if !v {
		return registerCustomerTraced(email) // want `registerCustomer after isKnownCustomer on the same key races`
	}
	return nil
}

// dedup is the application's own helper around package idem.
type dedup struct{ store *idem.Store }

func (d *dedup) once(ctx context.Context, key string, fn func(context.Context) error) error {
	return idem.Do(ctx, d.store, key, fn)
}

// run calls fn: no deduplication.
func (d *dedup) run(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }

var tickets = &dedup{}

// openDeduped is keyed at its sink through the helper around idem.
//
//agentidem:write identity=key
func openDeduped(ctx context.Context, key string) error {
	return tickets.once(ctx, key, func(context.Context) error { return nil })
}

func openDedupedTraced(ctx context.Context, key string) error { return openDeduped(ctx, key) }

// openPlain goes through a helper that deduplicates nothing.
//
//agentidem:write identity=key
func openPlain(ctx context.Context, key string) error {
	return tickets.run(ctx, func(context.Context) error { return nil })
}

func openPlainTraced(ctx context.Context, key string) error { return openPlain(ctx, key) }

func checkThenDedupedHelper(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openDedupedTraced(ctx, key)
	}
	return nil
}

func checkThenPlainHelper(ctx context.Context, key string) error {
	if _, ok := billing.LookupTicketTraced(key); !ok {
		return openPlainTraced(ctx, key) // want `openPlain after LookupTicket on the same key races`
	}
	return nil
}
