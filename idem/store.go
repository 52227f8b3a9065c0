package idem

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentidem/agentidem-go/internal/keywait"
	"github.com/agentidem/agentidem-go/runtime"
)

// Store runs work at most once per idempotency key on a Backend. It is safe
// for concurrent use, in one process or across processes that share the
// backend's database.
type Store struct {
	b   Backend
	cfg config
}

// New returns a Store on b, configured by opts.
func New(b Backend, opts ...Option) *Store {
	if b == nil {
		panic("idem: New with a nil Backend")
	}
	s := &Store{b: b, cfg: defaultConfig()}
	for _, o := range opts {
		o.apply(&s.cfg)
	}
	return s
}

// NewMemory returns a Store on a new in-memory backend: for tests, and for
// one process whose keys need not survive it.
func NewMemory(opts ...Option) *Store { return New(NewMemoryBackend(), opts...) }

// Purge deletes completed keys past their TTL and reports how many.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	n, err := s.b.Purge(ctx)
	if err != nil {
		return n, fmt.Errorf("idem: purge: %w", err)
	}
	return n, nil
}

// Do runs fn at most once for key, and returns the result stored under key.
//
//   - The first call with key claims it, runs fn, stores its result and
//     returns it with replayed false.
//   - A later call with key and equal params returns the stored result with
//     replayed true, without running fn; inside an active agentidem run it
//     calls runtime.MarkReplayed(ctx), so the trace records the call as
//     replayed and the fault suite counts no duplicate.
//   - The same key with different params (compared by their canonical JSON)
//     is ErrKeyConflict.
//   - A call that finds the key held by a running call waits for it, bounded
//     by ctx, or fails with ErrInProgress (see OnInProgress). Inside an
//     agentidem run the harness takes that wait for a lock the holder's
//     delivery holds, as a sync.Mutex is: in duplicate_delivery/concurrent
//     the holder goes on alone at once, and the trace's note names the key
//     and the delivery holding it (when the holder's ctx carries the run).
//   - When fn fails, the key is released so a retry can run, unless the
//     error is stored (see Permanent and StoreErrorsIf); a stored error is
//     replayed as a *StoredError.
//   - When the holder died while fn ran, the next call recovers the key once
//     the lease runs out (see WithRecover); a recovery that fails leaves the
//     key abandoned for the next call to recover, never released to a run
//     that would not ask the sink.
//   - When fn panics (or its goroutine exits), the key is released and the
//     panic goes on.
//   - Inside an agentidem run whose crash_restart scenario crashed the
//     caller's delivery (runtime.Crashed), the key is neither released
//     nor completed, whatever fn returned: it is left pending with its
//     lease ended, as a dead holder leaves it once its lease ran out, and
//     the restart takes it over as abandoned (WithRecover).
//
// fn gets a context that is cancelled, with cause ErrLeaseLost, if the key
// is taken away from it.
//
// What Do makes idempotent is fn as the store sees it: run once, its
// result kept. Where fn's effect is in the store's own database, in the
// transaction that completes the key, that is the effect. Where fn calls
// another service (a payment API over HTTP), an answer lost after the
// service acted is an error of fn, which releases the key (above), and
// the retry runs fn again: the service acts twice unless it deduplicates
// the request itself. Send it a key of its own made from the same work
// (an Idempotency-Key header of idem.Key's value), and test it with the
// tool's HTTP client wrapped in runtime.Transport, whose lost_response
// scenario loses such an answer inside the call (the fault suite's
// lost_acknowledgement comes after fn returned, where Do has stored the
// result and replays it).
func (s *Store) Do(ctx context.Context, key string, params any, fn func(context.Context) ([]byte, error), opts ...Option) ([]byte, bool, error) {
	cfg := s.cfg
	for _, o := range opts {
		o.apply(&cfg)
	}
	if key == "" {
		return nil, false, errors.New("idem: empty key")
	}
	ph, err := Fingerprint(params)
	if err != nil {
		return nil, false, err
	}
	token, err := newToken()
	if err != nil {
		return nil, false, err
	}
	w := waiter{pause: time.Millisecond, max: cfg.poll}
	w.watcher, _ = s.b.(Watcher)
	defer w.stop()
	for waited := false; ; waited = true {
		w.watch(key)
		rec, err := s.b.Claim(ctx, key, Claim{Token: token, Params: ph, Lease: cfg.lease})
		if err != nil {
			if waited && ctx.Err() != nil { // the wait ran out while asking
				return nil, false, keyError("waiting for", key, fmt.Errorf("%w: %w", ErrInProgress, context.Cause(ctx)))
			}
			return nil, false, keyError("claiming", key, err)
		}
		if rec.Owned {
			w.stop()
			if keywait.Hold != nil {
				// The harness tells a wait for this key as a lock this
				// call's delivery holds (internal/keywait).
				defer keywait.Hold(ctx, key)()
			}
			return s.run(ctx, &cfg, key, token, rec.Abandoned, fn)
		}
		if rec.Params != ph {
			return nil, false, keyError("using", key, ErrKeyConflict)
		}
		if rec.State == Done {
			runtime.MarkReplayed(ctx)
			if rec.Failed {
				return nil, true, &StoredError{Message: string(rec.Result)}
			}
			return rec.Result, true, nil
		}
		if cfg.inProgress == Fail {
			return nil, false, keyError("using", key, ErrInProgress)
		}
		done := noWait
		if keywait.Wait != nil {
			done = keywait.Wait(ctx, key)
		}
		err = w.wait(ctx)
		done()
		if err != nil {
			return nil, false, keyError("waiting for", key, fmt.Errorf("%w: %w", ErrInProgress, err))
		}
	}
}

func noWait() {}

// waiter paces the looks of a call at a key that another call holds:
// polling with a growing pause, woken early by a Watcher backend.
type waiter struct {
	pause, max time.Duration
	watcher    Watcher
	changed    <-chan struct{}
	stopWatch  func()
}

// watch subscribes to the next change of key, when the backend can tell.
func (w *waiter) watch(key string) {
	w.stop()
	if w.watcher != nil {
		w.changed, w.stopWatch = w.watcher.Watch(key)
	}
}

func (w *waiter) stop() {
	if w.stopWatch != nil {
		w.stopWatch()
		w.stopWatch, w.changed = nil, nil
	}
}

// wait pauses until the next poll, a change of the key, or the end of ctx
// (then it returns the context's cause).
func (w *waiter) wait(ctx context.Context) error {
	t := time.NewTimer(w.pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
	case <-w.changed:
	}
	if w.pause *= 2; w.pause > w.max {
		w.pause = w.max
	}
	return nil
}

// run executes fn (or the recovery) while holding key, renewing the lease,
// and records the outcome.
func (s *Store) run(ctx context.Context, cfg *config, key, token string, abandoned bool, fn func(context.Context) ([]byte, error)) (res []byte, replayed bool, err error) {
	// Storage calls after fn must happen even when the caller's context is
	// done, or the key would stay pending until its lease ran out.
	bg := context.WithoutCancel(ctx)
	fctx, cancel := context.WithCancelCause(ctx)
	hb := s.heartbeat(bg, cfg.lease, key, token, cancel)
	finished := false
	recovering := abandoned && cfg.recover != nil
	defer func() {
		hb.stop()
		cancel(nil)
		if !finished { // fn or the recovery panicked: free the key, then let the panic go on
			s.giveBack(bg, key, token, recovering)
		}
	}()

	if recovering {
		r, found, rerr := cfg.recover(fctx, key)
		if rerr != nil || found {
			hb.stop() // no renewal once the outcome is stored
		}
		if rerr != nil {
			finished = true
			s.giveBack(bg, key, token, true)
			return nil, false, keyError("recovering", key, rerr)
		}
		recovering = false
		if found {
			finished = true
			if runtime.Crashed(ctx) {
				s.leftByCrash(bg, key, token)
				return r, true, nil
			}
			if cerr := s.b.Complete(bg, key, token, Outcome{Result: r}, cfg.ttl); cerr != nil {
				return r, true, keyError("completing", key, cerr)
			}
			runtime.MarkReplayed(ctx)
			return r, true, nil
		}
	}

	res, err = fn(fctx)
	hb.stop()
	finished = true
	if runtime.Crashed(ctx) {
		s.leftByCrash(bg, key, token)
		return res, false, err
	}
	if err != nil {
		if !cfg.storeError(err) {
			if rerr := s.b.Release(bg, key, token); rerr != nil {
				return nil, false, errors.Join(err, keyError("releasing", key, rerr))
			}
			return nil, false, err
		}
		if cerr := s.b.Complete(bg, key, token, Outcome{Result: []byte(err.Error()), Failed: true}, cfg.ttl); cerr != nil {
			return nil, false, errors.Join(err, keyError("completing", key, cerr))
		}
		return nil, false, err
	}
	if cerr := s.b.Complete(bg, key, token, Outcome{Result: res}, cfg.ttl); cerr != nil {
		return res, false, keyError("completing", key, cerr)
	}
	return res, false, nil
}

// giveBack frees key held by token after a failure. A key taken over from
// a holder that died (abandoned) whose recovery failed (the sink's lookup
// timed out, panicked, or the caller's context ended) is not released:
// released, its record went, the next call claimed the key afresh, not
// abandoned, and ran fn without asking the sink, a second effect (a red
// team's refund made twice). Its lease is ended instead: the next call
// takes it over as abandoned and recovers again.
func (s *Store) giveBack(ctx context.Context, key, token string, abandoned bool) {
	if runtime.Crashed(ctx) {
		s.leftByCrash(ctx, key, token)
		return
	}
	if abandoned {
		_ = s.b.Extend(ctx, key, token, 0)
		return
	}
	_ = s.b.Release(ctx, key, token)
}

// leftByCrash leaves key as its holder's death does, when the fault
// suite crashed the delivery that holds it (runtime.Crashed): pending,
// neither released nor completed, for the restart to take over as
// abandoned and recover (WithRecover), or run fn again without it, as in
// production. The suite's crash is no death: it cancels the delivery's
// context and ends its goroutines at their next traced call, so fn
// returned the crash's error, or its goroutine exited through run's
// deferred give-back, and the key was released; the restart then claimed
// it afresh and ran fn without asking the sink, a second effect no real
// crash makes (a red team's charge made twice through idem.Do with
// WithRecover). Its lease is ended, not left to run out: the suite's
// restart comes after the lease, without waiting it out.
func (s *Store) leftByCrash(ctx context.Context, key, token string) {
	_ = s.b.Extend(ctx, key, token, 0)
}

// heartbeat renews the lease every third of it until stopped; when the
// lease is lost it cancels fn's context with ErrLeaseLost. It runs from a
// timer, not a goroutine of its own: a call that returns before its first
// renewal, as most do, starts no goroutine (nor makes the harness look for
// what one left running). As with a ticker, the next renewal comes a third
// of the lease after the last one began, not after it returned (at once
// when it took longer): a slow renewal does not push the next one back.
func (s *Store) heartbeat(ctx context.Context, lease time.Duration, key, token string, cancel context.CancelCauseFunc) *heartbeat {
	every := max(lease/3, time.Millisecond)
	h := &heartbeat{}
	h.mu.Lock() // the first renewal reads h.t
	defer h.mu.Unlock()
	h.t = time.AfterFunc(every, func() {
		h.mu.Lock()
		if h.stopped {
			h.mu.Unlock()
			return
		}
		renewed := make(chan struct{})
		h.renewing = renewed
		h.mu.Unlock()
		began := time.Now()
		// Not under h.mu: stop waits for the renewal on renewed, which in
		// a testing/synctest bubble is a durable wait (the bubble's clock
		// moves on, and a renewal that waits for it ends), where waiting
		// for a sync.Mutex is not.
		err := s.b.Extend(ctx, key, token, lease)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.renewing = nil
		close(renewed)
		if errors.Is(err, ErrLeaseLost) {
			cancel(ErrLeaseLost)
			return
		}
		if !h.stopped {
			h.t.Reset(max(every-time.Since(began), 0))
		}
	})
	return h
}

// heartbeat is the renewal of one key's lease while fn runs.
type heartbeat struct {
	mu       sync.Mutex
	t        *time.Timer
	stopped  bool
	renewing chan struct{} // closed when the renewal under way ends
}

// stop ends the renewals; a renewal under way finishes first. It is
// called before fn's outcome is stored, so that no renewal follows it
// (before, a tick could renew the lease after Complete), and again, to no
// effect, when run returns.
func (h *heartbeat) stop() {
	h.mu.Lock()
	h.stopped = true
	h.t.Stop()
	renewing := h.renewing
	h.mu.Unlock()
	if renewing != nil {
		<-renewing
	}
}

// Do runs fn at most once for key on s, storing its result as JSON; it is
// Store.Do for a typed result. See Store.Do for the rules.
//
// A tool function becomes idempotent at its sink in one statement:
//
//	func refund(ctx context.Context, orderID string, cents int) (Receipt, error) {
//		key := idem.Key("refund", orderID)
//		r, _, err := idem.Do(ctx, store, key, cents,
//			func(ctx context.Context) (Receipt, error) { return payments.Refund(ctx, orderID, cents, key) })
//		return r, err
//	}
//
// where payments.Refund sends key to the payment service as its
// idempotency key: an answer lost inside fn releases the key (see
// Store.Do), and only the service's own deduplication keeps its retry
// from refunding again.
func Do[T any](ctx context.Context, s *Store, key string, params any, fn func(context.Context) (T, error), opts ...Option) (T, bool, error) {
	var zero, fresh T
	ran := false
	raw, replayed, err := s.Do(ctx, key, params, func(ctx context.Context) ([]byte, error) {
		v, err := fn(ctx)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, Permanent(fmt.Errorf("idem: encoding result of type %T: %w", v, err))
		}
		fresh, ran = v, true
		return b, nil
	}, opts...)
	if raw == nil {
		return zero, replayed, err
	}
	var v T
	if uerr := json.Unmarshal(raw, &v); uerr != nil {
		if ran && !replayed {
			// fn ran here and its effect is done: its caller gets what
			// it returned, where a result that does not decode from
			// its own JSON (an error field) was an error for good (a red
			// team's receipt lost). Its replays cannot decode it.
			return fresh, false, err
		}
		return zero, replayed, errors.Join(err, fmt.Errorf("idem: decoding stored result into %T (a type that does not decode from its own JSON, such as one with an interface field, cannot be replayed): %w", v, uerr))
	}
	return v, replayed, err
}

func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("idem: token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func errorsIsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }
