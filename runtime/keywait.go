package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/internal/keywait"
)

// The idempotency keys that calls of active runs hold pending in an
// idem.Store, and the goroutines waiting for one (internal/keywait, set
// by idem.Store.Do): a goroutine in idem's poll loop waits for the key's
// holder to complete it, a lock as much as a sync.Mutex is, but its stack
// shows a select on a timer and says neither the key nor whose it is. In
// duplicate_delivery/concurrent, one delivery's handler waiting in idem.Do
// for the key the other's holds was taken for busy outside any gate: the
// harness waited aloneAfter (1 s), let the holder go on alone, and noted
// that the other delivery "was on no lock ... so the harness, not the
// agent, may have run them one after the other" (red team rtY #2). The
// wait is now a lock (world.onLock), its handler owes its client the
// answer (owedAnswers), and the note names the key and its holder.
var keyWaits struct {
	mu      sync.Mutex
	holders map[string][]*invocation // key -> the invocations of the calls holding it
	waiters map[uint64]keyWait       // goroutine -> the key it waits for
}

// keyWait is a goroutine's wait for an idempotency key.
type keyWait struct {
	key string
	inv *invocation // the invocation the waiting call is of; nil when its context carries none
}

func init() {
	keywait.Hold = holdKey
	keywait.Wait = waitKey
}

func noop() {}

// invocationIn returns the invocation ctx carries, or nil.
func invocationIn(ctx context.Context) *invocation {
	if ctx == nil {
		return nil
	}
	return invocationOf(ctx) // carry.go
}

// holdKey records that the call carrying ctx holds key pending, until
// the function it returns is called.
func holdKey(ctx context.Context, key string) func() {
	if !Enabled() {
		return noop
	}
	inv := invocationIn(ctx)
	if inv == nil {
		return noop
	}
	keyWaits.mu.Lock()
	if keyWaits.holders == nil {
		keyWaits.holders = map[string][]*invocation{}
	}
	keyWaits.holders[key] = append(keyWaits.holders[key], inv)
	keyWaits.mu.Unlock()
	return func() {
		keyWaits.mu.Lock()
		defer keyWaits.mu.Unlock()
		hs := keyWaits.holders[key]
		for i, h := range hs {
			if h == inv {
				hs = append(hs[:i:i], hs[i+1:]...)
				break
			}
		}
		if len(hs) == 0 {
			delete(keyWaits.holders, key)
		} else {
			keyWaits.holders[key] = hs
		}
	}
}

// waitKey records that the calling goroutine waits, with ctx, for key,
// until the function it returns is called.
func waitKey(ctx context.Context, key string) func() {
	if !Enabled() {
		return noop
	}
	gid := goroutineID()
	keyWaits.mu.Lock()
	if keyWaits.waiters == nil {
		keyWaits.waiters = map[uint64]keyWait{}
	}
	keyWaits.waiters[gid] = keyWait{key: key, inv: invocationIn(ctx)}
	keyWaits.mu.Unlock()
	return func() {
		keyWaits.mu.Lock()
		delete(keyWaits.waiters, gid)
		keyWaits.mu.Unlock()
	}
}

// keyWaitOf returns the key goroutine gid waits for in idem.Store.Do, the
// delivery of w's run the waiting call is of (0: unknown), and the
// deliveries of w's run holding the key; ok is false when gid waits for
// no key.
func (w *world) keyWaitOf(gid uint64) (key string, waiter int, holders []int, ok bool) {
	keyWaits.mu.Lock()
	defer keyWaits.mu.Unlock()
	kw, ok := keyWaits.waiters[gid]
	if !ok {
		return "", 0, nil, false
	}
	if kw.inv != nil && kw.inv.rec != nil && kw.inv.rec.world == w {
		waiter = kw.inv.n
	}
	for _, h := range keyWaits.holders[kw.key] {
		if h.rec != nil && h.rec.world == w && h.n != waiter {
			holders = append(holders, h.n)
		}
	}
	return kw.key, waiter, holders, true
}

// idemWait reports whether g waits in idem.Store.Do's poll loop for a key
// another call holds pending.
func (g *gInfo) idemWait() bool {
	return (g.state == "select" || g.state == "select (durable)") && g.has("agentidem-go/idem.(*waiter).wait")
}

// keyWaitText says what g, waiting in idem.Store.Do, waits for, and
// where idem.Do was called: the key, and which delivery holds it pending
// when the holder's call carried the run.
func (w *world) keyWaitText(g *gInfo) string {
	at := g.where()
	for i := range g.funcs {
		// The caller of idem.Do, not idem's own poll loop.
		if i > 0 && strings.Contains(g.funcs[i-1], "agentidem-go/idem.") && !strings.Contains(g.funcs[i], "agentidem-go/idem.") && i < len(g.files) {
			at = shortSite(g.files[i])
			break
		}
	}
	key, _, holders, ok := w.keyWaitOf(g.id)
	switch {
	case !ok:
		return fmt.Sprintf("waiting in idem.Do at %s for an idempotency key that another call holds pending", at)
	case len(holders) == 0:
		return fmt.Sprintf("waiting in idem.Do at %s for idempotency key %q, which another call holds pending", at, key)
	case len(holders) == 1:
		return fmt.Sprintf("waiting in idem.Do at %s for idempotency key %q, which delivery %d holds pending", at, key, holders[0])
	}
	ds := make([]string, len(holders))
	for i, h := range holders {
		ds[i] = strconv.Itoa(h)
	}
	return fmt.Sprintf("waiting in idem.Do at %s for idempotency key %q, which deliveries %s hold pending", at, key, strings.Join(ds, ", "))
}
